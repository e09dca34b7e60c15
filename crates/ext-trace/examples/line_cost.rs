//! Formats a few typical trace lines many times, for counting the
//! instructions one line costs:
//!
//! ```text
//! cargo build --release -p strata-ext-trace --example line_cost
//! valgrind --tool=callgrind target/release/examples/line_cost 100000
//! ```
//!
//! Divide the total by the number of lines it prints. No timing here: the
//! count is what is repeatable on a noisy machine.

use strata_decode::{EntryState, Memory};
use strata_ext_trace::{format_line, Config, Line, Record, Task};

/// One page of program memory at `BASE`.
struct Page([u8; 4096]);

const BASE: u64 = 0x7f00_0000_0000;

impl Memory for Page {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<usize, ()> {
        let off = addr.checked_sub(BASE).ok_or(())? as usize;
        let src = self.0.get(off..).ok_or(())?;
        let n = buf.len().min(src.len());
        buf[..n].copy_from_slice(&src[..n]);
        Ok(n)
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let mut page = Page([0; 4096]);
    page.0[256..256 + 16].copy_from_slice(b"/etc/ld.so.cache");
    page.0[512..512 + 40].copy_from_slice(b"hello, world: a line of text to print.\n\n");
    let task = Task {
        pid: 4242,
        tid: 4242,
        multi: false,
    };
    let rec = |nr: u32, args: [u64; 6], ret: i64| Record {
        task,
        nr,
        args,
        ret,
        entry: EntryState::NONE,
    };
    let recs = [
        // dd bs=1: read(0, "\0", 1) = 1 and write(1, "\0", 1) = 1
        rec(0, [0, BASE, 1, 0, 0, 0], 1),
        rec(1, [1, BASE, 1, 0, 0, 0], 1),
        // a text write, an openat, a failed close, an mmap
        rec(1, [1, BASE + 512, 40, 0, 0, 0], 40),
        rec(257, [(-100i64) as u64, BASE + 256, 0o2000000, 0, 0, 0], 3),
        rec(3, [99, 0, 0, 0, 0, 0], -9),
        rec(9, [0, 8192, 3, 0x22, u64::MAX, 0], 0x7f12_3456_7000),
    ];
    let which: Option<usize> = std::env::args().nth(2).and_then(|a| a.parse().ok());
    let cfg = Config::DEFAULT;
    let mut line = Line::new();
    let mut bytes = 0usize;
    for i in 0..n {
        let r = match which {
            Some(w) => &recs[w % recs.len()],
            None => &recs[i % recs.len()],
        };
        format_line(&mut line, &cfg, r, &page);
        bytes += line.len();
    }
    println!("{n} lines, {bytes} bytes; last: {}", line.as_str().trim_end());
}
