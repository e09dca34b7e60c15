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
//! except for calls that change or destroy their own inputs
//! ([`inputs_change`]). For most of them (the length behind accept's
//! length pointer, `[128 => 16]`, sendfile's offset, recvmmsg's timeout)
//! take an [`EntryState`] with [`entry_state`] when the call starts and
//! pass it to [`format_call_with`] when it returns. execve and execveat (a
//! successful call replaces the memory) and select, pselect6 and ppoll
//! (the kernel rewrites the fd sets and the timeout) must instead be
//! formatted in two halves: [`format_call`] with [`Options::out_args`]
//! false when the call starts, [`format_resumed`] when it returns. The same
//! two functions print strace's split lines (`read(3,  <unfinished ...>` /
//! `<... read resumed>"...", 4096) = 12`).
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
#[macro_use]
extern crate std;

mod errno;
mod ioctls;
mod nr;
mod out;
mod quick;
mod sys;
#[cfg(test)]
mod tests;
mod xlat;

use core::fmt::{self, Write};

pub use errno::{errno_name, strerror};
pub use quick::{quick_call, quick_result, quick_takes, MAX_LIMIT as QUICK_MAX_LIMIT};

/// Writes strace's name for signal `sig`: `SIGSEGV`, `SIGRT_3` (33..=64),
/// or the number.
pub fn write_signal_name(out: &mut dyn Write, sig: i32) -> fmt::Result {
    match out::signame(sig) {
        Some(out::Sig::Name(n)) => out.write_str(n),
        Some(out::Sig::Rt(n)) => write!(out, "SIGRT_{n}"),
        None => write!(out, "{sig}"),
    }
}

/// Reads the traced program's memory.
pub trait Memory {
    /// Reads up to `buf.len()` bytes at `addr`; returns how many bytes were
    /// read (may be fewer, at an unmapped page), `Err` on a fault at `addr`.
    /// (A fault is all the formatter needs to know: it prints the address.)
    #[allow(clippy::result_unit_err)]
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
    pub const DEFAULT: Options = Options {
        string_limit: 32,
        raw: false,
        out_args: true,
    };
}

impl Default for Options {
    fn default() -> Self {
        Options::DEFAULT
    }
}

/// What strace reads when a call starts and shows when it returns, for the
/// few calls whose inputs the call rewrites in place: the length behind
/// accept's, getsockname's, recvfrom's, recvmsg's and getsockopt's length
/// pointer (`[128 => 16]`), sendfile's offset (`[0] => [100]`) and
/// recvmmsg's timeout. Take it with [`entry_state`] when the call starts
/// and pass it to [`format_call_with`] or [`format_resumed`]; 16 bytes,
/// `Copy`, nothing to free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EntryState {
    words: [u64; 2],
    valid: bool,
}

impl EntryState {
    /// Nothing saved: inputs are read when formatting.
    pub const NONE: EntryState = EntryState {
        words: [0; 2],
        valid: false,
    };

    pub(crate) fn word(&self, i: usize) -> Option<u64> {
        self.valid.then_some(self.words[i])
    }
}

/// Reads, when call `nr` starts, what [`EntryState`] keeps for it
/// ([`EntryState::NONE`] for the other calls). Cheap: at most one small
/// read through `mem`.
pub fn entry_state(nr: usize, args: &[u64; 6], mem: &dyn Memory) -> EntryState {
    let int_at = |addr: u64| {
        let mut b = [0u8; 4];
        (addr != 0 && out::read_exact(mem, addr, &mut b)).then(|| i32::from_le_bytes(b) as i64 as u64)
    };
    let words = match nr {
        nr::ACCEPT | nr::ACCEPT4 | nr::GETSOCKNAME | nr::GETPEERNAME if args[1] != 0 => int_at(args[2]).map(|v| [v, 0]),
        nr::RECVFROM if args[4] != 0 => int_at(args[5]).map(|v| [v, 0]),
        nr::GETSOCKOPT => int_at(args[4]).map(|v| [v, 0]),
        nr::RECVMSG if args[1] != 0 => int_at(args[1].wrapping_add(8)).map(|v| [v, 0]),
        nr::SENDFILE if args[2] != 0 => {
            let mut b = [0u8; 8];
            out::read_exact(mem, args[2], &mut b).then(|| [u64::from_le_bytes(b), 0])
        }
        nr::RECVMMSG if args[4] != 0 => {
            let mut b = [0u8; 16];
            out::read_exact(mem, args[4], &mut b).then(|| [out::le_u64(&b[0..]), out::le_u64(&b[8..])])
        }
        _ => None,
    };
    match words {
        Some(words) => EntryState { words, valid: true },
        None => EntryState::NONE,
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
///
/// One call needs more than its arguments: `rt_sigreturn` has none, and
/// strace shows the signal mask its frame restores (`rt_sigreturn({mask=[]})`),
/// found from the stack pointer. Pass the stack pointer at the `syscall`
/// instruction as `args[0]` for it (0 prints `rt_sigreturn()`).
pub fn format_call(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
) -> fmt::Result {
    format_call_with(out, nr, args, ret, mem, opts, &EntryState::NONE)
}

/// [`format_call`] with what [`entry_state`] saved when the call started,
/// for the calls that rewrite their inputs (see [`EntryState`]).
pub fn format_call_with(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
    entry: &EntryState,
) -> fmt::Result {
    let phase = if opts.out_args {
        out::Phase::Whole
    } else {
        out::Phase::Entry
    };
    write_name(out, nr)?;
    out.write_str("(")?;
    run(out, nr, args, ret, mem, opts, phase, entry)
}

/// Writes the exit half of a split line: `<... read resumed>` and what
/// [`format_call`] with `out_args` false left out (`"data", 4096)`), up to
/// and including the closing parenthesis. `entry` is what [`entry_state`]
/// saved when the call started, or [`EntryState::NONE`].
pub fn format_resumed(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
    entry: &EntryState,
) -> fmt::Result {
    out.write_str("<... ")?;
    write_name(out, nr)?;
    out.write_str(" resumed>")?;
    run(out, nr, args, ret, mem, opts, out::Phase::Exit, entry)
}

#[allow(clippy::too_many_arguments)]
fn run(
    out: &mut dyn Write,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
    phase: out::Phase,
    entry: &EntryState,
) -> fmt::Result {
    // On entry the result is not known yet: decode as if the call succeeded.
    let ret = if phase == out::Phase::Entry { 0 } else { ret };
    let mut p = out::P::new(out, mem, *args, ret, opts.string_limit, phase);
    p.entry = *entry;
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
        return if ret == 0 {
            out.write_str("0")
        } else {
            write!(out, "{:#x}", ret as u64)
        };
    }
    let mut p = out::P::new(out, mem, *args, ret, opts.string_limit, out::Phase::Whole);
    sys::result(&mut p, nr, aux)
}

/// True for the calls whose inputs the call itself rewrites or destroys,
/// so that formatting them when they return, from their arguments alone,
/// cannot show what strace shows. For accept, accept4, getsockname,
/// getpeername, recvfrom, recvmsg, getsockopt (the length: `[128 => 16]`),
/// sendfile (the offset: `[0] => [100]`) and recvmmsg (the timeout), an
/// [`entry_state`] taken when the call starts is enough. execve, execveat
/// (a successful call replaces the memory), select, pselect6 and ppoll (the
/// fd sets and the timeout are rewritten) need their entry half formatted
/// when they start ([`Options::out_args`] false, then [`format_resumed`]).
pub fn inputs_change(nr: usize) -> bool {
    matches!(
        nr,
        nr::EXECVE
            | nr::EXECVEAT
            | nr::SELECT
            | nr::PSELECT6
            | nr::PPOLL
            | nr::RECVMMSG
            | nr::SENDFILE
            | nr::ACCEPT
            | nr::ACCEPT4
            | nr::GETSOCKNAME
            | nr::GETPEERNAME
            | nr::RECVFROM
            | nr::RECVMSG
            | nr::GETSOCKOPT
    )
}
