//! The shortcut (quick.rs) against the general formatter: on every call it
//! takes, both must print the same line.

use std::string::String;

use super::{line_opts, Mem};
use crate::{quick_call, quick_result, Options, QUICK_MAX_LIMIT};

/// The line the shortcut prints, or None when it declines.
fn quick_line(nr: usize, args: [u64; 6], ret: i64, mem: &Mem, opts: &Options) -> Option<String> {
    let mut buf = [0u8; 512];
    let n = quick_call(&mut buf, nr, &args, ret, mem, opts)?;
    let m = quick_result(&mut buf[n..], ret).expect("room for the result");
    Some(String::from_utf8(buf[..n + m].to_vec()).expect("text"))
}

/// xorshift64*: repeatable inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Bytes that exercise every branch of the quoting: escapes, octal digits
/// after an escaped byte, the ends of the printable range.
const BYTES: &[u8] = b"\0\x01\x07\x08\t\n\x0b\x0c\r\x1f !\"\\'0178a~\x7f\x80\xfe\xff";

#[test]
fn the_shortcut_prints_what_the_general_formatter_prints() {
    const BASE: u64 = 0x7f00_0000_1000;
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let (mut taken, mut declined) = (0, 0);
    for round in 0..20_000 {
        let n = rng.below(100) as usize;
        let bytes: std::vec::Vec<u8> = (0..n)
            .map(|_| match rng.below(3) {
                0 => BYTES[rng.below(BYTES.len() as u64) as usize],
                _ => b' ' + rng.below(95) as u8,
            })
            .collect();
        // Sometimes the memory ends before the buffer does.
        let mapped = if rng.below(8) == 0 {
            rng.below(n as u64 + 1) as usize
        } else {
            n
        };
        let mem = Mem::new().put(BASE, &bytes[..mapped]);
        let nr = [0usize, 1, 17, 18, 3, 19][rng.below(6) as usize];
        let count = match rng.below(4) {
            0 => u64::MAX - rng.below(3),
            _ => n as u64,
        };
        let ret = match rng.below(10) {
            0 => -(rng.below(140) as i64 + 1),
            1 => i64::MAX,
            _ => rng.below(n as u64 + 1) as i64,
        };
        let fd = [0u64, 1, 7, u64::MAX, 0xffff_ffff, 1 << 40][rng.below(6) as usize];
        let addr = if rng.below(20) == 0 { 0 } else { BASE };
        let off = [0u64, 4096, u64::MAX, 1 << 63][rng.below(4) as usize];
        let limit = [0usize, 1, 4, 31, 32, 33, 64, 65, 200][rng.below(9) as usize];
        let opts = Options {
            string_limit: limit,
            ..Options::DEFAULT
        };
        let args = [fd, addr, count, off, 0, 0];
        let general = line_opts(nr, args, ret, &mem, &opts);
        match quick_line(nr, args, ret, &mem, &opts) {
            Some(q) => {
                taken += 1;
                assert_eq!(
                    q, general,
                    "round {round}: nr {nr}, args {args:x?}, ret {ret}, -s {limit}, bytes {bytes:?}"
                );
            }
            None => declined += 1,
        }
    }
    // Both sides of the comparison ran often.
    assert!(taken > 5_000 && declined > 5_000, "taken {taken}, declined {declined}");
}

#[test]
fn the_shortcut_takes_dd_lines_and_declines_the_rest() {
    let mem = Mem::new().put(0x1000, b"\0");
    let o = Options::DEFAULT;
    assert_eq!(
        quick_line(0, [0, 0x1000, 1, 0, 0, 0], 1, &mem, &o).as_deref(),
        Some("read(0, \"\\0\", 1) = 1")
    );
    assert_eq!(
        quick_line(1, [1, 0x1000, 1, 0, 0, 0], 1, &mem, &o).as_deref(),
        Some("write(1, \"\\0\", 1) = 1")
    );
    // A failed call, an unreadable buffer, raw mode, a large -s, another call.
    assert_eq!(quick_line(0, [0, 0x1000, 1, 0, 0, 0], -11, &mem, &o), None);
    assert_eq!(quick_line(1, [1, 0x9000, 1, 0, 0, 0], 1, &mem, &o), None);
    let raw = Options { raw: true, ..o };
    assert_eq!(quick_line(1, [1, 0x1000, 1, 0, 0, 0], 1, &mem, &raw), None);
    let big = Options {
        string_limit: QUICK_MAX_LIMIT + 1,
        ..o
    };
    assert_eq!(quick_line(1, [1, 0x1000, 1, 0, 0, 0], 1, &mem, &big), None);
    assert_eq!(quick_line(3, [1, 0, 0, 0, 0, 0], 0, &mem, &o), None);
}
