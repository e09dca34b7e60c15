//! `trace`: strace-compatible tracing as a layer of strata's stack.
//!
//! strata catches every system call of a program inside the program
//! (ARCHITECTURE.md) and passes it through a stack of extensions. This one
//! prints each call it is interested in as `strace -f` would, formatted by
//! `strata-decode`, one whole line per call through
//! [`strata_ext::emit`] on the trace channel:
//!
//! ```text
//! openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3
//! [pid  4242] read(3, "root:x:0:0:root:/root:/bin/bash\n"..., 4096) = 1234
//! +++ exited with 0 +++
//! ```
//!
//! or, with `format=json`, one object per line:
//!
//! ```text
//! {"pid":4242,"tid":4242,"syscall":"openat","args":"AT_FDCWD, \"/nonexistent\", O_RDONLY","ret":-1,"error":"ENOENT"}
//! ```
//!
//! The arguments (`trace=openat|%network`, `failed`, `format=json`, `s=N`,
//! `raw`, `ext-calls`) are described in [`config`].
//!
//! # When a call is formatted
//!
//! Calls are printed when they return, whole (strace prints them when they
//! return too, unless another task's line comes in between; strata never
//! interleaves: each line is one record). What the formatter must see
//! earlier is taken earlier:
//!
//! - the few calls that rewrite their inputs (accept's address length,
//!   sendfile's offset, ...): `strata_decode::entry_state` before the call
//!   goes down;
//! - select, pselect6 and ppoll: the entry half (the fd sets and timeout
//!   as they were) is formatted into a stack buffer before the call goes
//!   down, and completed with `format_resumed` after;
//! - exit and exit_group do not return: `exit_group(0) = ?` is printed
//!   before the call goes down;
//! - execve and execveat replace the memory when they succeed: the line is
//!   printed with ` = 0` from [`Extension::exec_commit`] (the old image is
//!   still there and the call can no longer fail), or with the error when
//!   the call comes back.
//!
//! `+++ exited with N +++` / `+++ killed by SIG... +++` ends a process
//! ([`Extension::exit`]). Lines get strace's `[pid  TID] ` prefix once the
//! session has had more than one thread or process ([`strata_ext::multi_task`]).
//!
//! # Filtering
//!
//! The layer's interest is the `trace=` set, so the other calls never reach
//! it. Calls issued by extensions above ([`strata_abi::call_flags::FROM_EXTENSION`])
//! are passed on without a line unless `ext-calls` is given; with `failed`,
//! only calls whose result is an error are printed (decided when the
//! result is known).
//!
//! # Resources
//!
//! `no_std`, no allocation, no `unsafe`. A line is built in an 8 KiB stack
//! buffer ([`line::LINE_CAP`]; longer lines are cut and end with `...` and
//! the result); select-like calls keep a second one for their entry half
//! while the call is below. The ordinary path holds no buffer while the
//! call is below.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
#[macro_use]
extern crate std;

pub mod config;
pub mod line;
#[cfg(test)]
mod tests;

pub use config::{Config, Format};
pub use line::{
    format_entry_half, format_exit, format_line, format_resumed_line, is_err, Line, Record, Task, COLUMN, LINE_CAP,
};

use strata_abi::call_flags;
use strata_decode::{entry_state, inputs_change, EntryState, Memory};
use strata_ext::{channel, Below, Call, Extension, InitError, Interest};

/// Call numbers the layer treats specially (x86-64; a test checks them
/// against the syscall table).
pub(crate) mod nr {
    pub const SELECT: u32 = 23;
    pub const EXECVE: u32 = 59;
    pub const EXIT: u32 = 60;
    pub const EXIT_GROUP: u32 = 231;
    pub const PSELECT6: u32 = 270;
    pub const PPOLL: u32 = 271;
    pub const EXECVEAT: u32 = 322;
    /// For [`strata_ext::raw_syscall`] in [`super::Trace::exit`].
    pub const GETPID: u32 = 39;
    pub const GETTID: u32 = 186;
}

/// The program's memory, read through strata ([`strata_ext::read_mem`]).
pub struct ProgramMemory;

impl Memory for ProgramMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<usize, ()> {
        strata_ext::read_mem(addr, buf).map_err(|_| ())
    }
}

/// The `trace` extension.
pub struct Trace {
    cfg: Config,
    /// Lines kept for reuse: a new one zeroes its 8 KiB (6% of a traced
    /// dd's samples under `perf record -e cpu-clock`). Taken with `try_lock` only (never
    /// waits): a thread that finds them all taken builds its own.
    lines: [spin::Mutex<Line>; SPARE_LINES],
}

const SPARE_LINES: usize = 4;

impl Clone for Trace {
    fn clone(&self) -> Trace {
        Trace::with_config(self.cfg)
    }
}

impl PartialEq for Trace {
    fn eq(&self, o: &Trace) -> bool {
        self.cfg == o.cfg
    }
}

impl Eq for Trace {}

impl core::fmt::Debug for Trace {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Trace").field("cfg", &self.cfg).finish()
    }
}

impl Trace {
    /// The extension with an already parsed configuration.
    pub const fn with_config(cfg: Config) -> Trace {
        Trace {
            cfg,
            lines: [const { spin::Mutex::new(Line::new()) }; SPARE_LINES],
        }
    }

    /// Runs `f` with an empty line.
    fn with_line<R>(&self, f: impl FnOnce(&mut Line) -> R) -> R {
        for l in &self.lines {
            if let Some(mut line) = l.try_lock() {
                line.clear();
                return f(&mut line);
            }
        }
        f(&mut Line::new())
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Whether `c` gets a line (result aside): selected, and from the
    /// program unless `ext-calls`.
    fn shows(&self, c: &Call) -> bool {
        self.cfg.selects(c.nr) && (self.cfg.ext_calls || c.flags & call_flags::FROM_EXTENSION == 0)
    }

    /// A call printed whole after it returns.
    fn whole(&self, c: &mut Call, below: &Below) -> i64 {
        let (nr, args) = (c.nr, c.args);
        let entry = if inputs_change(nr as usize) {
            entry_state(nr as usize, &args, &ProgramMemory)
        } else {
            EntryState::NONE
        };
        let ret = below.call(c);
        // A forked child returns here too (it is a copy of the parent, in
        // the middle of this call): strace shows only the parent's line.
        let child = ret == 0 && matches!(c.op(), strata_abi::Op::ProcessCreate | strata_abi::Op::ThreadCreate);
        if !child && self.cfg.shows_result(ret) {
            self.emit_line(&record(c, nr, args, ret, entry));
        }
        ret
    }

    /// select, pselect6, ppoll: the entry half is kept while the call is
    /// below.
    #[inline(never)]
    fn split(&self, c: &mut Call, below: &Below) -> i64 {
        let (nr, args) = (c.nr, c.args);
        self.with_line(|head| {
            format_entry_half(head, &self.cfg, nr, &args, &ProgramMemory);
            let ret = below.call(c);
            if self.cfg.shows_result(ret) {
                self.emit_resumed(&record(c, nr, args, ret, EntryState::NONE), head);
            }
            ret
        })
    }

    /// exit, exit_group: printed before they go down (they do not return).
    fn no_return(&self, c: &mut Call, below: &Below) -> i64 {
        if !self.cfg.failed_only {
            self.emit_line(&record(c, c.nr, c.args, 0, EntryState::NONE));
        }
        below.call(c)
    }

    /// execve, execveat: a success is printed by `exec_commit`; a call
    /// that comes back failed is printed here.
    fn exec(&self, c: &mut Call, below: &Below) -> i64 {
        let (nr, args) = (c.nr, c.args);
        let ret = below.call(c);
        if is_err(ret) {
            self.emit_line(&record(c, nr, args, ret, EntryState::NONE));
        }
        ret
    }

    #[inline(never)]
    fn emit_line(&self, rec: &Record) {
        self.with_line(|line| {
            format_line(line, &self.cfg, rec, &ProgramMemory);
            strata_ext::emit(channel::TRACE, line.as_bytes());
        })
    }

    #[inline(never)]
    fn emit_resumed(&self, rec: &Record, head: &Line) {
        self.with_line(|line| {
            format_resumed_line(line, &self.cfg, rec, head, &ProgramMemory);
            strata_ext::emit(channel::TRACE, line.as_bytes());
        })
    }
}

/// The record of call `c` (`nr`, `args` as it was passed down).
fn record(c: &Call, nr: u32, args: [u64; 6], ret: i64, entry: EntryState) -> Record {
    Record {
        task: Task {
            pid: c.pid,
            tid: c.tid,
            multi: strata_ext::multi_task(),
        },
        nr,
        args,
        ret,
        entry,
    }
}

impl Extension for Trace {
    const NAME: &'static str = "trace";

    fn new(args: &str) -> Result<Self, InitError> {
        Config::parse(args).map(Trace::with_config)
    }

    fn interest(&self) -> Interest {
        self.cfg.filter
    }

    fn call(&self, c: &mut Call, below: &Below) -> i64 {
        if !self.shows(c) {
            return below.call(c);
        }
        match c.nr {
            nr::EXIT | nr::EXIT_GROUP => self.no_return(c, below),
            nr::EXECVE | nr::EXECVEAT => self.exec(c, below),
            nr::SELECT | nr::PSELECT6 | nr::PPOLL => self.split(c, below),
            _ => self.whole(c, below),
        }
    }

    fn exec_commit(&self, c: &Call) {
        if self.shows(c) && !self.cfg.failed_only && matches!(c.nr, nr::EXECVE | nr::EXECVEAT) {
            self.emit_line(&record(c, c.nr, c.args, 0, EntryState::NONE));
        }
    }

    fn exit(&self, status: i32) {
        let id = |nr| u32::try_from(strata_ext::raw_syscall(nr, [0; 6])).unwrap_or(0);
        let task = Task {
            pid: id(nr::GETPID),
            tid: id(nr::GETTID),
            multi: strata_ext::multi_task(),
        };
        let mut line = Line::new();
        format_exit(&mut line, &self.cfg, &task, status);
        strata_ext::emit(channel::TRACE, line.as_bytes());
    }
}
