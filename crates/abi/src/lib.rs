//! The strata ABI: what an extension sees of a program's system calls.
//!
//! strata catches every system call a program makes (ARCHITECTURE.md). Before
//! extensions see one, the *personality* ([`decode`]) turns it into a call on
//! this interface: an [`Op`] on one of a few primitive abstractions (streams
//! named by path, virtual memory, threads and processes, waiting and
//! synchronisation, time, random bits, signals), with its path operands
//! located ([`PathSlot`]) and its class known. In the spirit of Bascule's ABI
//! and Gramine's PAL the op set is small; everything it does not model is an
//! [`Op::Passthrough`] that still carries the whole call.
//!
//! # Lossless by construction
//!
//! A [`Call`] keeps the Linux call it came from: the number and the six
//! argument registers. An op is a *view* of that call, never a replacement,
//! so a call that no extension changed reaches the kernel exactly as the
//! program made it (same number, same flags, same pointers). An extension
//! that changes a call changes its arguments (typically a path operand, which
//! then points into the extension's memory for the duration of the call) or
//! serves it and returns a result of its own.
//!
//! # Layout and versions
//!
//! Everything an extension and strata exchange is `#[repr(C)]` and mirrored
//! in `include/strata.h`, which `gen-abi` writes from this crate (a test keeps
//! them equal), with `docs/abi.md`. [`VERSION`] is `major << 16 | minor`; an
//! extension built for another major version is refused at launch, one built
//! for an older minor of the same major is accepted (minor versions only
//! append ops and fields at the end of structures, which carry their size).
#![no_std]
#![forbid(unsafe_code)]

mod ops;
mod personality;
pub mod render;

pub use ops::{Group, Op, OpInfo, OPS};
pub use personality::{decode, modelled, Decoded, PathSlot, NO_ARG};

use core::ffi::c_void;

/// ABI major version: changes when a structure or an op changes meaning.
pub const VERSION_MAJOR: u32 = 1;
/// ABI minor version: changes when ops or trailing fields are added.
pub const VERSION_MINOR: u32 = 1;
/// `major << 16 | minor`, as carried in every structure and exported by
/// every extension object as `strata_ext_abi_version`.
pub const VERSION: u32 = VERSION_MAJOR << 16 | VERSION_MINOR;

/// Whether an extension built for ABI `v` can be loaded by this strata.
pub const fn compatible(v: u32) -> bool {
    v >> 16 == VERSION_MAJOR && v & 0xffff <= VERSION_MINOR
}

/// The only undefined symbols an extension object may have: strata's
/// loader resolves them to strata's own implementations (there is no libc).
pub const HOST_SYMBOLS: [&str; 6] = ["memcpy", "memmove", "memset", "memcmp", "bcmp", "strlen"];

/// The entry point every extension object exports (C: `strata_ext_init`).
pub const ENTRY_SYMBOL: &str = "strata_ext_init";
/// The version word every extension object exports (C: `uint32_t
/// strata_ext_abi_version`).
pub const VERSION_SYMBOL: &str = "strata_ext_abi_version";

/// Class bits of a call (the strace classes, `%file` and friends).
pub mod class {
    pub const FILE: u16 = 1 << 0;
    pub const DESC: u16 = 1 << 1;
    pub const NETWORK: u16 = 1 << 2;
    pub const PROCESS: u16 = 1 << 3;
    pub const MEMORY: u16 = 1 << 4;
    pub const SIGNAL: u16 = 1 << 5;
    pub const IPC: u16 = 1 << 6;
    pub const TIME: u16 = 1 << 7;
    pub const OTHER: u16 = 1 << 8;

    /// The bit of a syscall-table class.
    pub const fn of(c: strata_syscall_table::Class) -> u16 {
        use strata_syscall_table::Class as C;
        match c {
            C::File => FILE,
            C::Desc => DESC,
            C::Network => NETWORK,
            C::Process => PROCESS,
            C::Memory => MEMORY,
            C::Signal => SIGNAL,
            C::Ipc => IPC,
            C::Time => TIME,
            C::Other => OTHER,
        }
    }

    /// The bit named `name` (`file`, `desc`, `network`, ...).
    pub fn by_name(name: &str) -> Option<u16> {
        strata_syscall_table::Class::ALL
            .iter()
            .find(|c| c.as_str() == name)
            .map(|c| of(*c))
    }
}

/// [`Call::flags`] bits.
pub mod call_flags {
    /// The call was issued by an extension (downwards), not by the program.
    pub const FROM_EXTENSION: u32 = 1 << 0;
    /// An extension above changed the arguments on the way down.
    pub const CHANGED: u32 = 1 << 1;
}

/// Limits of the ABI.
pub const MAX_PATHS: usize = 2;
/// The largest Linux call number an interest set can name (exclusive).
pub const MAX_NR: usize = 512;

/// One call on the way down the stack.
///
/// `nr` and `args` are the Linux call (the personality's origin); `op`,
/// `class` and `paths` are the ABI view of it, filled by [`decode`]. Layers
/// may change `args`; the bottom layer issues `nr` with `args`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// [`VERSION`] of the strata that made this call.
    pub abi_version: u32,
    /// `size_of::<Call>()` in the strata that made it.
    pub size: u32,
    /// [`Op`] as a number.
    pub op: u16,
    /// [`class`] bits.
    pub class: u16,
    /// The Linux call number.
    pub nr: u32,
    /// The six argument registers (rdi, rsi, rdx, r10, r8, r9).
    pub args: [u64; 6],
    /// Process and thread id of the caller (as the program sees them).
    pub pid: u32,
    pub tid: u32,
    /// [`call_flags`] bits.
    pub flags: u32,
    /// How many of `paths` are used.
    pub npaths: u32,
    /// Where the path operands are.
    pub paths: [PathSlot; MAX_PATHS],
}

impl Call {
    /// The ABI view of Linux call `nr` with `args`, made by the caller
    /// `pid`/`tid`.
    #[inline]
    pub fn new(nr: u32, args: [u64; 6], pid: u32, tid: u32) -> Call {
        let mut c = Call::undecoded(nr, pid, tid);
        c.args = args;
        c.decode();
        c
    }

    /// Call `nr` by `pid`/`tid` with every argument 0 and nothing decoded:
    /// for a caller that fills `args` itself, then calls [`Call::decode`].
    #[inline]
    pub fn undecoded(nr: u32, pid: u32, tid: u32) -> Call {
        Call {
            abi_version: VERSION,
            size: core::mem::size_of::<Call>() as u32,
            op: Op::Passthrough as u16,
            class: 0,
            nr,
            args: [0; 6],
            pid,
            tid,
            flags: 0,
            npaths: 0,
            paths: [PathSlot::default(); MAX_PATHS],
        }
    }

    /// Sets the op, class and path slots from `nr` and `args` (what `new`
    /// does after filling them).
    #[inline]
    pub fn decode(&mut self) {
        personality::decode_into(self);
    }

    /// The op, or `Passthrough` for a number this version does not know.
    pub fn op(&self) -> Op {
        Op::from_u16(self.op).unwrap_or(Op::Passthrough)
    }

    /// The path slots in use.
    pub fn path_slots(&self) -> &[PathSlot] {
        &self.paths[..(self.npaths as usize).min(MAX_PATHS)]
    }
}

/// A set of Linux call numbers (512 bits): what a layer interposes on.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Interest {
    pub bits: [u64; MAX_NR / 64],
}

impl Interest {
    pub const NONE: Interest = Interest { bits: [0; MAX_NR / 64] };
    pub const ALL: Interest = Interest {
        bits: [!0; MAX_NR / 64],
    };

    pub fn contains(&self, nr: u32) -> bool {
        let nr = nr as usize;
        nr < MAX_NR && self.bits[nr / 64] & (1 << (nr % 64)) != 0
    }

    pub fn insert(&mut self, nr: u32) {
        let nr = nr as usize;
        if nr < MAX_NR {
            self.bits[nr / 64] |= 1 << (nr % 64);
        }
    }

    /// Every call whose op is `op` (for any arguments).
    pub fn with_op(mut self, op: Op) -> Interest {
        for nr in 0..MAX_NR as u32 {
            if personality::may_be(nr, op) {
                self.insert(nr);
            }
        }
        self
    }

    /// Every call in one of the [`class`] bits.
    pub fn with_class(mut self, bits: u16) -> Interest {
        for nr in 0..=strata_syscall_table::MAX_NR {
            if strata_syscall_table::class(nr).is_some_and(|c| class::of(c) & bits != 0) {
                self.insert(nr as u32);
            }
        }
        self
    }

    /// Every call with at least one path operand.
    pub fn with_paths(self) -> Interest {
        self.with_paths_where(|_| true)
    }

    /// Every call with at least one path operand whose op `keep` accepts (a
    /// layer that checks only what some ops do to a path, such as a policy
    /// restricting writes, need not see `stat` or `readlink`).
    pub fn with_paths_where(mut self, keep: impl Fn(Op) -> bool) -> Interest {
        for (nr, op) in personality::path_calls() {
            if keep(op) {
                self.insert(nr);
            }
        }
        self
    }

    pub fn union(mut self, o: Interest) -> Interest {
        for (a, b) in self.bits.iter_mut().zip(o.bits) {
            *a |= b;
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }
}

/// The layer below, as an extension sees it: one function that carries a
/// call further down (to the next interested layer, or to the kernel).
#[repr(C)]
pub struct Below {
    /// Passes `call` down; returns the result (a value, or `-errno`).
    pub call: extern "C" fn(below: *const Below, call: *mut Call) -> i64,
    /// Opaque to extensions.
    pub ctx: *const c_void,
    /// Index of the layer this `Below` belongs to (0 = top).
    pub layer: u32,
    pub _reserved: u32,
}

/// What strata offers every extension, whatever its position in the stack.
#[repr(C)]
pub struct Host {
    pub abi_version: u32,
    pub size: u32,
    /// Reads program memory at `addr`: bytes read, or `-EFAULT`.
    pub read_mem: extern "C" fn(addr: u64, buf: *mut u8, len: usize) -> i64,
    /// Writes program memory at `addr`: bytes written, or `-EFAULT`.
    pub write_mem: extern "C" fn(addr: u64, buf: *const u8, len: usize) -> i64,
    /// Appends one record (a whole line) to the session's output channel
    /// (`channel` 0: the trace channel, drained by the launcher to its
    /// destination), or writes it to strata's standard error (`channel` 1).
    pub emit: extern "C" fn(channel: u32, buf: *const u8, len: usize),
    /// Issues a Linux call directly to the kernel from strata's text,
    /// bypassing every layer (for an extension's private needs, e.g. reading
    /// its own configuration files; calls on the program's behalf go to
    /// `Below` instead).
    pub raw_syscall: extern "C" fn(nr: u64, args: *const u64) -> i64,
    /// Nonzero once the session has had more than one thread or process.
    pub multi_task: extern "C" fn() -> u32,
    /// The extension cannot go on (a panic, a broken invariant): strata
    /// prints `msg` with the extension's name and the call it was handling,
    /// and stops the program (fail closed). Does not return.
    pub fail: extern "C" fn(msg: *const u8, len: usize) -> !,
}

/// What an extension provides for the layer above (filled by its init).
#[repr(C)]
pub struct ExtDesc {
    pub abi_version: u32,
    pub size: u32,
    /// NUL-terminated name, for messages.
    pub name: *const u8,
    /// Passed back to every function below.
    pub state: *mut c_void,
    /// The calls this layer wants to see; all others skip it.
    pub interest: Interest,
    /// Handles one call: pass it on with `below.call`, change it, serve it
    /// or fail it. Returns the result for the layer above.
    pub call: Option<extern "C" fn(state: *mut c_void, call: *mut Call, below: *const Below) -> i64>,
    /// The calling process is about to replace its image (execve/execveat
    /// passed every check and will not return); `call` is that call.
    pub exec_commit: Option<extern "C" fn(state: *mut c_void, call: *const Call)>,
    /// A new process (`thread` = 0) or thread (`thread` = 1) `tid` exists;
    /// called in the child as it starts.
    pub task_start: Option<extern "C" fn(state: *mut c_void, tid: u32, thread: u32)>,
    /// The calling process is exiting with a wait status (exit_group, or the
    /// last thread's exit).
    pub exit: Option<extern "C" fn(state: *mut c_void, status: i32)>,
    /// Signal upcall: strata is about to deliver signal `sig` to a program
    /// handler (currently: the signals strata itself delivers, e.g. a
    /// virtual SIGSYS). Return 0 to deliver, 1 to suppress it.
    pub signal: Option<extern "C" fn(state: *mut c_void, sig: i32, info: *const u8) -> i32>,
    /// (1.1) The hook form of a layer, used when `call` is None: `before`
    /// sees the call on its way down and returns [`CONTINUE`] to pass it on
    /// unchanged, or a result to serve or fail it (the layers below and the
    /// kernel then never see it); `after` sees the result on its way up and
    /// returns the result for the layer above. For layers that do not change
    /// a call's arguments (observers, counters, policies): strata runs them
    /// in a loop around the call instead of nesting them, which on machines
    /// where every return after a system call mispredicts is most of a
    /// layer's cost. `before` may leave a word in `*cookie` (zero at first),
    /// which `after` gets for the same call (e.g. a start time). Either may
    /// be None.
    pub before: Option<extern "C" fn(state: *mut c_void, call: *const Call, cookie: *mut u64) -> i64>,
    pub after: Option<extern "C" fn(state: *mut c_void, call: *const Call, ret: i64, cookie: u64) -> i64>,
}

/// What a `before` hook returns to pass the call on.
pub const CONTINUE: i64 = i64::MIN;

/// Signature of an extension object's `strata_ext_init`: fill `out` from
/// `args` (the text after `NAME:` or the manifest's parameters as
/// `key=value` lines) and return 0, or write a message into `err` and return
/// nonzero.
pub type InitFn = extern "C" fn(
    host: *const Host,
    args: *const u8,
    args_len: usize,
    out: *mut ExtDesc,
    err: *mut u8,
    err_len: usize,
) -> i32;
