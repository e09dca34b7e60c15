//! Formats one x86-64 system call the way strace 6.x prints it.
//!
//! strata sees every system call of a program from inside the program
//! (ARCHITECTURE.md); its `trace` extension prints them as strace would.
//! This crate is the formatter: given the call number, the six argument
//! registers, the result and a way to read the program's memory, it writes
//! `openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC)` and ` = 3`.
//!
//! It runs inside the traced process, in strata's SIGSYS handler, so it is
//! `no_std`, has no `unsafe`, never allocates (it writes into a
//! `&mut dyn core::fmt::Write` and uses small stack buffers) and never
//! panics on any input (a bad pointer prints as its address, as in strace).
//!
//! # A line
//!
//! strace prints `pid name(args) = result`, with the ` = ` moved to column 40
//! when the call is short. [`format_call`] writes `name(args)`,
//! [`format_result_with`] (or [`format_result`]) writes ` = result`; the
//! caller writes the pid prefix, pads (so that `=` lands at column 40, i.e.
//! spaces up to 39 characters before ` = `) and ends the line.
//!
//! ```
//! use strata_decode::{format_call, format_result, Memory, Options};
//! struct NoMemory;
//! impl Memory for NoMemory {
//!     fn read(&self, _addr: u64, _buf: &mut [u8]) -> Result<usize, ()> { Err(()) }
//! }
//! let mut line = String::new();
//! format_call(&mut line, 3, &[4, 0, 0, 0, 0, 0], 0, &NoMemory, &Options::DEFAULT).unwrap();
//! format_result(&mut line, 3, 0).unwrap();
//! assert_eq!(line, "close(4) = 0");
//! ```
//!
//! # When to format
//!
//! strace decodes inputs when the call starts and outputs when it returns;
//! [`format_call`] does both after the call returned, which is the same
//! except for calls that change or destroy their own inputs (the kernel
//! rewrites `select`'s fd sets, a successful `execve` replaces the memory
//! holding its arguments). [`inputs_change`] names those calls: format them
//! at entry with [`Options::out_args`] false, then finish the line with
//! [`format_resumed`]. The same two functions print strace's split lines
//! (`read(3,  <unfinished ...>` / `<... read resumed>"...", 4096) = 12`).
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
#[macro_use]
extern crate std;

mod errno;
mod ioctls;
mod nr;
mod out;
mod sys;
#[cfg(test)]
mod tests;
mod xlat;

use core::fmt::{self, Write};

pub use errno::{errno_name, strerror};

/// Reads the traced program's memory.
pub trait Memory {
    /// Reads up to `buf.len()` bytes at `addr`; returns how many bytes were
    /// read (may be fewer, at an unmapped page), `Err` on a fault at `addr`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<usize, ()>;
}

/// How to format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// strace -s: how many bytes of a string or buffer to print (default 32),
    /// and how many elements of an array.
    pub string_limit: usize,
    /// strace -e raw=all: no decoding, every argument and the result in hex.
    pub raw: bool,
    /// true: the whole call. false: only what strace prints when the call
    /// starts (the entry half of a split line: the inputs, without the
    /// closing parenthesis); [`format_resumed`] prints the rest.
    pub out_args: bool,
}

impl Options {
    /// strace's defaults: `-s 32`, decoded, whole calls.
    pub const DEFAULT: Options = Options { string_limit: 32, raw: false, out_args: true };
}

impl Default for Options {
    fn default() -> Self {
        Options::DEFAULT
    }
}

/// Writes `name(args...)` as strace prints call `nr` with arguments `args`
/// that returned `ret` (the raw rax value: -4095..-1 is an error). With
/// `opts.out_args` false, writes only the entry half (`read(3, `,
/// `close(3`), which strace follows with ` <unfinished ...>`.
///
/// Output buffers (read's data, fstat's struct, pipe's descriptors, ...)
/// are read through `mem` and printed only when the call succeeded, as
/// strace does; inputs are read through `mem` too, so call this before the
/// program can change them. Unknown numbers print as strace prints them:
/// `syscall_0x1c8(0x1, ...)`.
pub fn format_call(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
) -> fmt::Result {
    let phase = if opts.out_args { out::Phase::Whole } else { out::Phase::Entry };
    write_name(out, nr)?;
    out.write_str("(")?;
    run(out, nr, args, ret, mem, opts, phase)
}

/// Writes the exit half of a split line: `<... read resumed>` and what
/// [`format_call`] with `out_args` false left out (`"data", 4096)`), up to
/// and including the closing parenthesis.
pub fn format_resumed(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
) -> fmt::Result {
    out.write_str("<... ")?;
    write_name(out, nr)?;
    out.write_str(" resumed>")?;
    run(out, nr, args, ret, mem, opts, out::Phase::Exit)
}

fn run(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
    phase: out::Phase,
) -> fmt::Result {
    // On entry the result is not known yet: decode as if the call succeeded.
    let ret = if phase == out::Phase::Entry { 0 } else { ret };
    let mut p = out::P::new(out, mem, *args, ret, opts.string_limit, phase);
    let r = if opts.raw || strata_syscall_table::name(nr).is_none() {
        p.hex_args(0, nargs(nr))
    } else {
        sys::decode(&mut p, nr)
    };
    match r {
        Err(_) if p.stopped => return Ok(()),
        r => r?,
    }
    match p.exiting() {
        Err(_) if p.stopped => return Ok(()),
        r => r?,
    }
    p.s(")")
}

fn write_name(out: &mut dyn Write, nr: usize) -> fmt::Result {
    match strata_syscall_table::name(nr) {
        Some(name) => out.write_str(name),
        None => write!(out, "syscall_{nr:#x}"),
    }
}

/// How many arguments call `nr` takes (what strace prints when it does not
/// decode the call); 6 for numbers with no call.
pub fn nargs(nr: usize) -> usize {
    nr::NARGS.get(nr).map_or(6, |&n| n as usize)
}

/// Writes ` = 3`, ` = -1 ENOENT (No such file or directory)`, ` = 0x7f...`
/// (mmap, brk, ...), ` = 022` (umask), ` = ?` (exit, exit_group).
///
/// Without the arguments and memory, results whose form depends on them
/// (fcntl's `= 0x8002 (flags O_RDWR|O_LARGEFILE)`, poll's
/// `= 1 ([{fd=3, revents=POLLIN}])`) print as plain numbers; use
/// [`format_result_with`] for those.
pub fn format_result(out: &mut dyn Write, nr: usize, ret: i64) -> fmt::Result {
    struct NoMemory;
    impl Memory for NoMemory {
        fn read(&self, _addr: u64, _buf: &mut [u8]) -> Result<usize, ()> {
            Err(())
        }
    }
    let args = match nr {
        // No command: plain numbers.
        nr::FCNTL | nr::PRCTL | nr::ARCH_PRCTL => [0, u64::MAX, 0, 0, 0, 0],
        _ => [0; 6],
    };
    format_result_inner(out, nr, &args, ret, &NoMemory, &Options::DEFAULT, false)
}

/// Writes the result as strace does, including what strace adds after it
/// for some calls: fcntl's `= 0x8002 (flags O_RDWR|O_LARGEFILE)`, poll's
/// and select's ready descriptors, prctl's `= 1 (SUID_DUMP_USER)`,
/// `= 0 (Timeout)`.
pub fn format_result_with(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
) -> fmt::Result {
    format_result_inner(out, nr, args, ret, mem, opts, true)
}

fn format_result_inner(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
    aux: bool,
) -> fmt::Result {
    if nr == nr::EXIT || nr == nr::EXIT_GROUP {
        return out.write_str(" = ?");
    }
    if out::is_err(ret) {
        let e = (-ret) as i32;
        let restart = match e {
            512 => Some(("ERESTARTSYS", "To be restarted if SA_RESTART is set")),
            513 => Some(("ERESTARTNOINTR", "To be restarted")),
            514 => Some(("ERESTARTNOHAND", "To be restarted if no handler")),
            516 => Some(("ERESTART_RESTARTBLOCK", "Interrupted by signal")),
            _ => None,
        };
        return match (restart, errno_name(e)) {
            (Some((name, text)), _) if !opts.raw => write!(out, " = ? {name} ({text})"),
            (_, Some(name)) => {
                write!(out, " = -1 {name} (")?;
                errno::write_strerror(out, e)?;
                out.write_str(")")
            }
            (_, None) => write!(out, " = -1 (errno {e})"),
        };
    }
    if opts.raw {
        out.write_str(" = ")?;
        return if ret == 0 { out.write_str("0") } else { write!(out, "{:#x}", ret as u64) };
    }
    let mut p = out::P::new(out, mem, *args, ret, opts.string_limit, out::Phase::Whole);
    sys::result(&mut p, nr, aux)
}

/// True for the calls whose inputs the call itself changes or destroys, so
/// that formatting them after they return cannot show what strace shows:
/// the caller should format them when they start (`out_args` false) and
/// finish with [`format_resumed`]. These are execve and execveat (a
/// successful call replaces the memory), select and pselect6 (the fd sets
/// and the timeout are rewritten), and the calls whose length argument is
/// rewritten (accept, accept4, getsockname, getpeername, recvfrom,
/// recvmsg, getsockopt), where strace shows the old and the new value
/// (`[128 => 16]`) and a formatter called after the call only sees the new one.
pub fn inputs_change(nr: usize) -> bool {
    matches!(
        nr,
        nr::EXECVE
            | nr::EXECVEAT
            | nr::SELECT
            | nr::PSELECT6
            | nr::ACCEPT
            | nr::ACCEPT4
            | nr::GETSOCKNAME
            | nr::GETPEERNAME
            | nr::RECVFROM
            | nr::RECVMSG
            | nr::GETSOCKOPT
    )
}
