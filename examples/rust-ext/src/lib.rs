//! upper: a strata extension object in safe Rust. Everything the program
//! writes to one file descriptor (standard output unless `fd=N` is given)
//! with write(2) reaches the kernel in upper case.
//!
//! ```text
//! cargo build --release --manifest-path examples/rust-ext/Cargo.toml
//! strata run --ext ./examples/rust-ext/target/release/libupper.so -- echo hello
//! strata run --ext ./examples/rust-ext/target/release/libupper.so:fd=2 -- ls /nonexistent
//! ```
//!
//! Only write(2) is changed, and only for buffers of up to 4096 bytes (the
//! copy lives on strata's stack); writev, pwrite and larger writes go down
//! as they are.
#![no_std]
#![forbid(unsafe_code)]

use strata_ext::{read_mem, Below, Call, Extension, InitError, Interest};

/// Linux x86-64 write(2).
const WRITE: u32 = 1;
/// The largest write that is changed.
const MAX: usize = 4096;

pub struct Upper {
    fd: u32,
}

impl Extension for Upper {
    const NAME: &'static str = "upper";

    fn new(args: &str) -> Result<Self, InitError> {
        let args = args.trim();
        if args.is_empty() {
            return Ok(Upper { fd: 1 });
        }
        match args.strip_prefix("fd=").map(str::parse::<u32>) {
            Some(Ok(fd)) => Ok(Upper { fd }),
            _ => {
                let mut e = InitError::new("upper: expected no arguments or fd=N, got '");
                e.push(args).push("'");
                Err(e)
            }
        }
    }

    fn interest(&self) -> Interest {
        let mut i = Interest::NONE;
        i.insert(WRITE);
        i
    }

    fn call(&self, c: &mut Call, below: &Below) -> i64 {
        // write(fd, buf, count): the kernel takes fd as an unsigned int.
        let [fd, addr, count, ..] = c.args;
        if c.nr != WRITE || fd as u32 != self.fd || count == 0 || count > MAX as u64 {
            return below.call(c);
        }
        let mut buf = [0u8; MAX];
        let Some(want) = buf.get_mut(..count as usize) else {
            return below.call(c);
        };
        // A buffer the program cannot read goes down as it is, so that the
        // kernel fails it (EFAULT) as it would without strata. A buffer
        // that is readable only in part is written in part, which write(2)
        // allows.
        let data = match read_mem(addr, want) {
            Ok(n) if n > 0 => match want.get_mut(..n) {
                Some(data) => data,
                None => return below.call(c),
            },
            _ => return below.call(c),
        };
        data.make_ascii_uppercase();
        let mut args = c.args;
        args[1] = data.as_ptr() as u64;
        args[2] = data.len() as u64;
        // Layers below see the copy; `buf` lives until they return.
        below.call_with_args(c, args)
    }
}

strata_ext::export_extension!(Upper);
