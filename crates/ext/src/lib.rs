//! Writing a strata extension in Rust.
//!
//! An extension is a layer in strata's stack. It implements [`Extension`]:
//! it says which calls it wants ([`Extension::interest`]; the others never
//! reach it) and handles each one in [`Extension::call`], where it may pass
//! the call on ([`Below::call`]), change its arguments (for example a path,
//! [`Below::call_with_paths`]) or its result, serve it without entering the
//! kernel, fail it with an errno, or issue calls of its own downwards
//! ([`Below::issue`]). No `unsafe` is needed: program memory is read and
//! written through [`read_mem`] and [`write_mem`], which fail with `EFAULT`
//! like the kernel would.
//!
//! Built into strata, an extension is registered in the runtime. Built on
//! its own, it is a `cdylib` that enables this crate's `cdylib` feature and
//! calls [`export_extension!`]; strata loads it with `--ext ./libname.so`.
//!
//! # Rules (the extension runs inside the traced program)
//! Extensions run in strata's signal-context handler on strata's stack, in
//! whatever thread made the call, concurrently with other threads. So:
//! no allocation and no blocking locks (state is built in `new` and then
//! only read, or changed through atomics), no libc, no std, bounded stack
//! use (strata's stack is 256 KiB; keep frames to a few tens of KiB).
#![no_std]
// InitError carries its message inline (there is no heap where extensions
// run); it is returned once, at start, so its size costs nothing.
#![allow(clippy::result_large_err)]

pub use strata_abi::{call_flags, class, Call, Interest, Op, PathSlot, NO_ARG, VERSION};

use core::ffi::c_void;
use core::sync::atomic::{AtomicPtr, Ordering};
use strata_abi as abi;

/// Why an extension could not start, shown to the user before the program
/// starts (strata then exits with status 2).
#[derive(Debug, Clone, Copy)]
pub struct InitError {
    buf: [u8; 240],
    len: usize,
}

impl InitError {
    /// An error with message `msg` (truncated to 240 bytes).
    pub fn new(msg: &str) -> InitError {
        let mut e = InitError { buf: [0; 240], len: 0 };
        e.push(msg);
        e
    }

    /// Appends to the message (truncating).
    pub fn push(&mut self, s: &str) -> &mut InitError {
        for &b in s.as_bytes() {
            if self.len < self.buf.len() {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }
        self
    }

    pub fn message(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl core::fmt::Write for InitError {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.push(s);
        Ok(())
    }
}

/// A layer of the stack.
pub trait Extension: Sync + Sized + 'static {
    /// The name users give to `--ext` (and messages show).
    const NAME: &'static str;

    /// Builds the extension from its arguments: the text after `NAME:` on
    /// the command line, or the manifest's `args` text, or its `params`
    /// table as `key=value` items separated by commas (docs/manifest.md).
    /// Runs once per process start (and once in the launcher, to check the
    /// arguments before the program starts), before the program.
    fn new(args: &str) -> Result<Self, InitError>;

    /// Builds the extension in `slot`, where it stays (strata's arena for
    /// built-ins). The default moves what [`Extension::new`] returns into
    /// it; a layer with a large state can build it in place instead, so
    /// that starting a process does not copy it (and fault in the pages of
    /// every copy).
    fn new_in<'a>(slot: &'a mut core::mem::MaybeUninit<Self>, args: &str) -> Result<&'a mut Self, InitError> {
        Ok(slot.write(Self::new(args)?))
    }

    /// The calls this layer sees. Calls outside it go straight past.
    fn interest(&self) -> Interest;

    /// Handles one call. The default passes it on unchanged. Not used when
    /// [`Extension::HOOKS`] is true.
    fn call(&self, c: &mut Call, below: &Below) -> i64 {
        below.call(c)
    }

    /// The layer is written as hooks around the call ([`Extension::before`]
    /// and [`Extension::after`]) instead of [`Extension::call`]: for layers
    /// that never change a call's arguments. strata then runs it in a loop
    /// around the call rather than nested in it, which is cheaper where every
    /// return after a system call mispredicts (abi::ExtDesc::before).
    const HOOKS: bool = false;

    /// With [`Extension::HOOKS`]: whether the layer has an `after` at all.
    /// A layer that only looks at calls on their way down (or serves them
    /// there) says false and costs one call per call instead of two.
    const AFTER: bool = true;

    /// With [`Extension::HOOKS`]: the call on its way down. None passes it
    /// on; Some(result) serves or fails it here (the layers below and the
    /// kernel never see it, and this layer's `after` is not run for it).
    /// `cookie` (zero at first) goes to `after` for the same call.
    fn before(&self, _c: &Call, _cookie: &mut u64) -> Option<i64> {
        None
    }

    /// With [`Extension::HOOKS`]: the result `ret` of a call `before` passed
    /// on, on its way up, with the cookie `before` left; returns the result
    /// for the layer above.
    fn after(&self, _c: &Call, ret: i64, _cookie: u64) -> i64 {
        ret
    }

    /// The process is about to replace its image; `c` is the execve.
    fn exec_commit(&self, _c: &Call) {}

    /// A new process (`thread` false) or thread `tid` starts (called in it).
    fn task_start(&self, _tid: u32, _thread: bool) {}

    /// The process is exiting with wait status `status`.
    fn exit(&self, _status: i32) {}

    /// strata is about to run the program's handler for signal `sig`, which
    /// strata delivers itself (today: SIGSYS, which strata virtualizes);
    /// `info` is the 128-byte siginfo. Return true to suppress the delivery.
    fn signal(&self, _sig: i32, _info: &[u8; 128]) -> bool {
        false
    }
}

/// The rest of the stack, below this layer.
pub struct Below(*const abi::Below);

impl Below {
    /// Passes `c` down; returns the result from below.
    pub fn call(&self, c: &mut Call) -> i64 {
        // SAFETY: `self.0` is the Below strata passed to this layer for this
        // call; it stays valid until the layer returns, and `call` is
        // strata's function for it.
        unsafe { ((*self.0).call)(self.0, c) }
    }

    /// Passes `c` down with path operand `i` replaced by `paths[i]` (when
    /// `Some`).
    pub fn call_with_paths(&self, c: &mut Call, paths: [Option<&PathBuf>; abi::MAX_PATHS]) -> i64 {
        // Layers below get their own copy: this layer's view of the call
        // (which strata also shows it in `exec_commit`) stays as it was.
        let mut below = *c;
        for (slot, p) in c.paths.iter().zip(paths).take(c.npaths as usize) {
            if let Some(p) = p {
                if let Some(a) = below.args.get_mut(slot.arg as usize) {
                    *a = p.as_ptr() as u64;
                    below.flags |= call_flags::CHANGED;
                }
            }
        }
        self.call(&mut below)
    }

    /// Passes down a copy of `c` whose arguments are `args` (for changes
    /// other than paths: the buffers `args` point to must live until this
    /// returns). The layer's own view of the call is unchanged.
    pub fn call_with_args(&self, c: &Call, args: [u64; 6]) -> i64 {
        let mut below = *c;
        if below.args != args {
            below.args = args;
            below.flags |= call_flags::CHANGED;
        }
        self.call(&mut below)
    }

    /// Runs `upper` with a `Below` that hands calls to extension `lower`,
    /// whose own `Below` is this one: two extensions composed inside one
    /// layer (a monolithic extension built from parts).
    pub fn compose<L: Extension>(&self, lower: &L, c: &mut Call, upper: impl FnOnce(&mut Call, &Below) -> i64) -> i64 {
        struct Ctx<'a, L> {
            lower: &'a L,
            rest: &'a Below,
        }
        extern "C" fn tramp<L: Extension>(b: *const abi::Below, c: *mut Call) -> i64 {
            // SAFETY: `b` is the Below built below, whose ctx points at a
            // Ctx<L> that outlives every call made through it (`upper` runs
            // inside `compose`); `c` is the caller's valid Call.
            let (ctx, c) = unsafe { (&*((*b).ctx as *const Ctx<'_, L>), &mut *c) };
            ctx.lower.call(c, ctx.rest)
        }
        let ctx = Ctx { lower, rest: self };
        let b = abi::Below {
            call: tramp::<L>,
            ctx: &ctx as *const Ctx<'_, L> as *const c_void,
            layer: u32::MAX,
            _reserved: 0,
        };
        upper(c, &Below(&b))
    }

    /// Issues Linux call `nr` with `args` to the layers below, as this
    /// extension's own call (flagged [`call_flags::FROM_EXTENSION`]).
    pub fn issue(&self, template: &Call, nr: u32, args: [u64; 6]) -> i64 {
        let mut c = Call::new(nr, args, template.pid, template.tid);
        c.flags |= call_flags::FROM_EXTENSION;
        self.call(&mut c)
    }
}

/// A NUL-terminated path in extension memory (PATH_MAX bytes).
///
/// The buffer is not zeroed when made: only the text and its NUL are ever
/// written or read (`buf[..=len]` is initialised, `buf[len]` is 0). A layer
/// that checks paths makes a few of these per call, on strata's stack, and
/// zeroing 4 KiB each cost the memset and, in a new process, a page fault
/// per page of stack they cover.
pub struct PathBuf {
    buf: [core::mem::MaybeUninit<u8>; PathBuf::CAP + 1],
    len: usize,
}

impl Default for PathBuf {
    fn default() -> Self {
        PathBuf::new()
    }
}

impl PathBuf {
    /// PATH_MAX minus the NUL.
    pub const CAP: usize = 4095;

    pub const fn new() -> PathBuf {
        let mut p = PathBuf {
            buf: [core::mem::MaybeUninit::uninit(); PathBuf::CAP + 1],
            len: 0,
        };
        p.buf[0] = core::mem::MaybeUninit::new(0);
        p
    }

    /// The bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: buf[..len] is initialised (the type's invariant).
        unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.len) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Address of the NUL-terminated text (for a call argument).
    pub fn as_ptr(&self) -> *const u8 {
        self.buf.as_ptr().cast::<u8>()
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.buf[0] = core::mem::MaybeUninit::new(0);
    }

    /// Appends `s`; `Err(ENAMETOOLONG)` when it does not fit.
    pub fn push(&mut self, s: &[u8]) -> Result<(), i64> {
        let end = self.len + s.len();
        if end > PathBuf::CAP {
            return Err(-ENAMETOOLONG);
        }
        for (d, &b) in self.buf[self.len..end].iter_mut().zip(s) {
            *d = core::mem::MaybeUninit::new(b);
        }
        self.len = end;
        self.buf[end] = core::mem::MaybeUninit::new(0);
        Ok(())
    }

    /// Replaces the contents with `s`.
    pub fn set(&mut self, s: &[u8]) -> Result<(), i64> {
        self.clear();
        self.push(s)
    }

    /// Shortens to `n` bytes.
    pub fn truncate(&mut self, n: usize) {
        if n < self.len {
            self.len = n;
            self.buf[n] = core::mem::MaybeUninit::new(0);
        }
    }

    /// Reads the NUL-terminated string at program address `addr`.
    /// `Err(-EFAULT)` for a bad pointer, `Err(-ENAMETOOLONG)` past PATH_MAX.
    pub fn read_from(&mut self, addr: u64) -> Result<(), i64> {
        self.clear();
        if addr == 0 {
            return Err(-EFAULT);
        }
        let mut at = addr;
        loop {
            // Read up to the end of the page, so a string that ends just
            // before an unmapped page reads fine.
            let room = PathBuf::CAP + 1 - self.len;
            let page_left = 4096 - (at as usize & 4095);
            let want = room.min(page_left);
            if want == 0 {
                return Err(-ENAMETOOLONG);
            }
            let start = self.len;
            let n = match read_mem_into(at, &mut self.buf[start..start + want]) {
                Ok(n) => n,
                Err(e) => {
                    // Keep the invariant: a NUL after what was read.
                    self.buf[start] = core::mem::MaybeUninit::new(0);
                    return Err(e);
                }
            };
            // SAFETY: the host wrote the first `n` bytes of that range.
            let got = unsafe { core::slice::from_raw_parts(self.buf[start..].as_ptr().cast::<u8>(), n) };
            if let Some(z) = got.iter().position(|&b| b == 0) {
                self.len = start + z;
                return Ok(());
            }
            self.len = start + n;
            if self.len > PathBuf::CAP {
                self.clear();
                return Err(-ENAMETOOLONG);
            }
            if n < want {
                // Keep the invariant: a NUL after what was read.
                self.buf[self.len] = core::mem::MaybeUninit::new(0);
                return Err(-EFAULT);
            }
            at += n as u64;
        }
    }
}

pub const EPERM: i64 = 1;
pub const ENOENT: i64 = 2;
pub const EIO: i64 = 5;
pub const EBADF: i64 = 9;
pub const EACCES: i64 = 13;
pub const EFAULT: i64 = 14;
pub const EEXIST: i64 = 17;
pub const EXDEV: i64 = 18;
pub const ENOTDIR: i64 = 20;
pub const EISDIR: i64 = 21;
pub const EINVAL: i64 = 22;
pub const EROFS: i64 = 30;
pub const ERANGE: i64 = 34;
pub const ENAMETOOLONG: i64 = 36;
pub const ELOOP: i64 = 40;

static HOST: AtomicPtr<abi::Host> = AtomicPtr::new(core::ptr::null_mut());

/// Connects this copy of the SDK to strata's services. strata (or
/// [`export_extension!`]'s entry point) calls it before any extension code.
pub fn set_host(h: &'static abi::Host) {
    HOST.store(h as *const abi::Host as *mut abi::Host, Ordering::Release);
}

fn host() -> Option<&'static abi::Host> {
    let p = HOST.load(Ordering::Acquire);
    // SAFETY: only set_host stores here, from a &'static Host.
    unsafe { p.as_ref() }
}

/// Reads program memory at `addr` into `buf`: bytes read or `Err(-EFAULT)`.
pub fn read_mem(addr: u64, buf: &mut [u8]) -> Result<usize, i64> {
    read_raw(addr, buf.as_mut_ptr(), buf.len())
}

/// [`read_mem`] into memory not yet initialised: bytes read (the first
/// that many of `buf` are then initialised) or `Err(-EFAULT)`.
fn read_mem_into(addr: u64, buf: &mut [core::mem::MaybeUninit<u8>]) -> Result<usize, i64> {
    read_raw(addr, buf.as_mut_ptr().cast::<u8>(), buf.len())
}

/// The host's read of program memory into the `len` bytes at `buf`.
fn read_raw(addr: u64, buf: *mut u8, len: usize) -> Result<usize, i64> {
    let Some(h) = host() else { return Err(-EFAULT) };
    let r = (h.read_mem)(addr, buf, len);
    if r < 0 {
        Err(r)
    } else {
        Ok((r as usize).min(len))
    }
}

/// Writes `buf` to program memory at `addr`: bytes written or `Err(-EFAULT)`.
pub fn write_mem(addr: u64, buf: &[u8]) -> Result<usize, i64> {
    let Some(h) = host() else { return Err(-EFAULT) };
    let r = (h.write_mem)(addr, buf.as_ptr(), buf.len());
    if r < 0 {
        Err(r)
    } else {
        Ok(r as usize)
    }
}

/// Output channels for [`emit`].
pub mod channel {
    /// The session's trace channel (`-o FILE`, standard error or the ring).
    pub const TRACE: u32 = 0;
    /// strata's standard error.
    pub const STDERR: u32 = 1;
}

/// Appends one record (normally a whole line, with its newline) to an
/// output channel.
pub fn emit(channel: u32, bytes: &[u8]) {
    if let Some(h) = host() {
        (h.emit)(channel, bytes.as_ptr(), bytes.len());
    }
}

/// Issues a Linux call straight to the kernel, past every layer: for the
/// extension's private business only (see [`abi::Host::raw_syscall`]).
pub fn raw_syscall(nr: u32, args: [u64; 6]) -> i64 {
    match host() {
        Some(h) => (h.raw_syscall)(nr as u64, args.as_ptr()),
        None => -38,
    }
}

/// Whether the session has had more than one thread or process.
pub fn multi_task() -> bool {
    host().is_some_and(|h| (h.multi_task)() != 0)
}

/// Stops the program: strata names the extension and the call (fail closed).
pub fn fail(msg: &str) -> ! {
    match host() {
        Some(h) => (h.fail)(msg.as_ptr(), msg.len()),
        None => loop {
            core::hint::spin_loop();
        },
    }
}

/// Fills the C descriptor for extension instance `e`.
pub fn describe<E: Extension>(e: &'static E, name: &'static [u8]) -> abi::ExtDesc {
    abi::ExtDesc {
        abi_version: VERSION,
        size: core::mem::size_of::<abi::ExtDesc>() as u32,
        name: name.as_ptr(),
        state: e as *const E as *mut c_void,
        interest: e.interest(),
        call: if E::HOOKS { None } else { Some(call_tramp::<E>) },
        exec_commit: Some(exec_tramp::<E>),
        task_start: Some(task_tramp::<E>),
        exit: Some(exit_tramp::<E>),
        signal: Some(signal_tramp::<E>),
        before: if E::HOOKS { Some(before_tramp::<E>) } else { None },
        after: if E::HOOKS && E::AFTER {
            Some(after_tramp::<E>)
        } else {
            None
        },
    }
}

extern "C" fn call_tramp<E: Extension>(state: *mut c_void, call: *mut Call, below: *const abi::Below) -> i64 {
    // SAFETY: `state` is the &'static E given to `describe`; strata passes a
    // valid, exclusive Call for the duration of this function.
    let (e, c) = unsafe { (&*(state as *const E), &mut *call) };
    e.call(c, &Below(below))
}

extern "C" fn before_tramp<E: Extension>(state: *mut c_void, call: *const Call, cookie: *mut u64) -> i64 {
    // SAFETY: as in call_tramp (the Call is only read); `cookie` is strata's
    // word for this layer and call.
    let (e, c, k) = unsafe { (&*(state as *const E), &*call, &mut *cookie) };
    e.before(c, k).unwrap_or(abi::CONTINUE)
}

extern "C" fn after_tramp<E: Extension>(state: *mut c_void, call: *const Call, ret: i64, cookie: u64) -> i64 {
    // SAFETY: as in before_tramp.
    let (e, c) = unsafe { (&*(state as *const E), &*call) };
    e.after(c, ret, cookie)
}

extern "C" fn exec_tramp<E: Extension>(state: *mut c_void, call: *const Call) {
    // SAFETY: as in call_tramp.
    let (e, c) = unsafe { (&*(state as *const E), &*call) };
    e.exec_commit(c)
}

extern "C" fn task_tramp<E: Extension>(state: *mut c_void, tid: u32, thread: u32) {
    // SAFETY: as in call_tramp.
    let e = unsafe { &*(state as *const E) };
    e.task_start(tid, thread != 0)
}

extern "C" fn exit_tramp<E: Extension>(state: *mut c_void, status: i32) {
    // SAFETY: as in call_tramp.
    let e = unsafe { &*(state as *const E) };
    e.exit(status)
}

extern "C" fn signal_tramp<E: Extension>(state: *mut c_void, sig: i32, info: *const u8) -> i32 {
    if info.is_null() {
        return 0;
    }
    // SAFETY: as in call_tramp; strata passes a 128-byte siginfo.
    let (e, info) = unsafe { (&*(state as *const E), &*(info as *const [u8; 128])) };
    e.signal(sig, info) as i32
}

/// Storage for the one instance of an extension in a shared object.
pub struct Slot<E> {
    cell: core::cell::UnsafeCell<core::mem::MaybeUninit<E>>,
    state: core::sync::atomic::AtomicU32,
}

// SAFETY: the instance is written once (state 0 -> 1 under a CAS) before any
// reader exists, then only shared; E: Sync.
unsafe impl<E: Sync> Sync for Slot<E> {}

impl<E: Extension> Slot<E> {
    pub const fn new() -> Slot<E> {
        Slot {
            cell: core::cell::UnsafeCell::new(core::mem::MaybeUninit::uninit()),
            state: core::sync::atomic::AtomicU32::new(0),
        }
    }

    /// Builds the instance (once) and returns it.
    pub fn init(&'static self, args: &str) -> Result<&'static E, InitError> {
        if self
            .state
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(InitError::new("extension object loaded twice in one process"));
        }
        let e = match E::new(args) {
            Ok(e) => e,
            Err(err) => {
                self.state.store(0, Ordering::Release);
                return Err(err);
            }
        };
        // SAFETY: state 1 is ours alone (the CAS above); nobody reads the
        // cell before we hand out the reference.
        unsafe {
            (*self.cell.get()).write(e);
            Ok((*self.cell.get()).assume_init_ref())
        }
    }
}

impl<E: Extension> Default for Slot<E> {
    fn default() -> Self {
        Slot::new()
    }
}

/// The body of an extension object's `strata_ext_init` (see
/// [`export_extension!`]).
///
/// # Safety
/// The arguments are as [`abi::InitFn`] describes: valid `host`, `args` of
/// `args_len` bytes, writable `out` and `err` of `err_len` bytes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn init_object<E: Extension>(
    slot: &'static Slot<E>,
    name: &'static [u8],
    host: *const abi::Host,
    args: *const u8,
    args_len: usize,
    out: *mut abi::ExtDesc,
    err: *mut u8,
    err_len: usize,
) -> i32 {
    if host.is_null() || out.is_null() || err.is_null() || (args.is_null() && args_len != 0) {
        return 1;
    }
    // SAFETY: the caller's contract (pointers checked for null above).
    let (h, args) = unsafe {
        (
            &*host,
            if args_len == 0 {
                &[][..]
            } else {
                core::slice::from_raw_parts(args, args_len)
            },
        )
    };
    let report = |m: &[u8]| {
        let n = m.len().min(err_len.saturating_sub(1));
        // SAFETY: err has err_len bytes (caller's contract); n < err_len.
        unsafe {
            core::ptr::copy_nonoverlapping(m.as_ptr(), err, n);
            *err.add(n) = 0;
        }
        1
    };
    if !abi::compatible(h.abi_version) {
        return report(b"strata's ABI version is not the one this extension was built for");
    }
    // SAFETY: h outlives the process (strata's static).
    set_host(unsafe { &*host });
    let Ok(args) = core::str::from_utf8(args) else {
        return report(b"arguments are not UTF-8");
    };
    match slot.init(args) {
        Ok(e) => {
            // SAFETY: out is writable (caller's contract).
            unsafe { out.write(describe(e, name)) };
            0
        }
        Err(e) => report(e.message()),
    }
}

/// Exports `$t` (an [`Extension`]) as an extension object's entry point and
/// version word. Use once, in a `cdylib` crate with the `cdylib` feature.
#[macro_export]
macro_rules! export_extension {
    ($t:ty) => {
        static __STRATA_SLOT: $crate::Slot<$t> = $crate::Slot::new();
        static __STRATA_NAME: &[u8] = $crate::__concat_nul!(<$t as $crate::Extension>::NAME);

        #[no_mangle]
        pub static strata_ext_abi_version: u32 = $crate::VERSION;

        #[no_mangle]
        pub extern "C" fn strata_ext_init(
            host: *const $crate::__abi::Host,
            args: *const u8,
            args_len: usize,
            out: *mut $crate::__abi::ExtDesc,
            err: *mut u8,
            err_len: usize,
        ) -> i32 {
            // SAFETY: strata calls this entry point with the arguments
            // strata_abi::InitFn describes.
            unsafe {
                $crate::init_object(
                    &__STRATA_SLOT,
                    __STRATA_NAME,
                    host,
                    args,
                    args_len,
                    out,
                    err,
                    err_len,
                )
            }
        }
    };
}

#[doc(hidden)]
pub use strata_abi as __abi;

#[doc(hidden)]
#[macro_export]
macro_rules! __concat_nul {
    ($e:expr) => {{
        const N: &str = $e;
        const LEN: usize = N.len() + 1;
        const B: [u8; LEN] = {
            let mut b = [0u8; LEN];
            let s = N.as_bytes();
            let mut i = 0;
            while i < s.len() {
                b[i] = s[i];
                i += 1;
            }
            b
        };
        &B
    }};
}

#[cfg(feature = "cdylib")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let mut msg = InitError::new("panicked: ");
    let _ = core::fmt::Write::write_fmt(&mut msg, format_args!("{}", info.message()));
    match core::str::from_utf8(msg.message()) {
        Ok(s) => fail(s),
        Err(_) => fail("panicked"),
    }
}

// core's precompiled unwind tables name `rust_eh_personality`; with
// panic=abort nothing ever unwinds, so an extension object only needs the
// symbol to exist. Defined hidden: neither imported nor exported.
#[cfg(feature = "cdylib")]
core::arch::global_asm!(
    ".globl rust_eh_personality",
    ".hidden rust_eh_personality",
    ".type rust_eh_personality, @function",
    "rust_eh_personality:",
    "ud2",
);

#[cfg(test)]
mod tests {
    use super::PathBuf;

    /// The text and its NUL, read back through the pointer a call gets.
    fn c_text(p: &PathBuf) -> &[u8] {
        // SAFETY: as_ptr points at len bytes and a NUL (the invariant).
        unsafe { core::slice::from_raw_parts(p.as_ptr(), p.len() + 1) }
    }

    #[test]
    fn path_buf_keeps_its_text_nul_terminated() {
        let mut p = PathBuf::new();
        assert_eq!((p.as_bytes(), c_text(&p)), (&b""[..], &b"\0"[..]));
        p.push(b"/usr").unwrap();
        p.push(b"/lib").unwrap();
        assert_eq!(c_text(&p), b"/usr/lib\0");
        p.truncate(4);
        assert_eq!(c_text(&p), b"/usr\0");
        p.truncate(10);
        assert_eq!(p.as_bytes(), b"/usr");
        p.set(b"x").unwrap();
        assert_eq!(c_text(&p), b"x\0");
        p.clear();
        assert!(p.is_empty() && c_text(&p) == b"\0");
    }

    /// A host whose "program memory" is 4096 bytes of 'a' at 0x10000 and
    /// nothing after: a string that runs off the end of a mapping.
    extern "C" fn read_mem(addr: u64, buf: *mut u8, len: usize) -> i64 {
        let (lo, hi) = (0x10000u64, 0x11000u64);
        if addr < lo || addr >= hi {
            return -super::EFAULT;
        }
        let n = len.min((hi - addr) as usize);
        // SAFETY: the caller's buffer of `len` >= n bytes.
        unsafe { core::ptr::write_bytes(buf, b'a', n) };
        n as i64
    }
    extern "C" fn write_mem(_: u64, _: *const u8, _: usize) -> i64 {
        -super::EFAULT
    }
    extern "C" fn emit(_: u32, _: *const u8, _: usize) {}
    extern "C" fn raw_syscall(_: u64, _: *const u64) -> i64 {
        -38
    }
    extern "C" fn multi_task() -> u32 {
        0
    }
    extern "C" fn fail(_: *const u8, _: usize) -> ! {
        panic!("fail")
    }
    static HOST: strata_abi::Host = strata_abi::Host {
        abi_version: 0,
        size: 0,
        read_mem,
        write_mem,
        emit,
        raw_syscall,
        multi_task,
        fail,
    };

    #[test]
    fn path_buf_stays_terminated_when_a_read_runs_off_the_memory() {
        super::set_host(&HOST);
        let mut p = PathBuf::new();
        // 4095 bytes fit, the 4096th page-end byte does not: too long.
        assert_eq!(p.read_from(0x10000), Err(-super::ENAMETOOLONG));
        assert!(p.is_empty() && c_text(&p) == b"\0");
        // 96 bytes, then unmapped memory: a fault after a partial read
        // leaves the part read, terminated.
        assert_eq!(p.read_from(0x10fa0), Err(-super::EFAULT));
        assert_eq!(p.len(), 96);
        assert_eq!(c_text(&p)[96], 0);
        assert!(p.as_bytes().iter().all(|&b| b == b'a'));
    }

    #[test]
    fn path_buf_refuses_what_does_not_fit() {
        let mut p = PathBuf::new();
        let long = [b'a'; PathBuf::CAP];
        p.push(&long).unwrap();
        assert_eq!(p.push(b"b"), Err(-super::ENAMETOOLONG));
        assert_eq!(p.len(), PathBuf::CAP);
        assert_eq!(c_text(&p)[PathBuf::CAP], 0);
        // Reading memory that is not there (no host, or none at that
        // address: another test may have set one) fails cleanly.
        assert_eq!(p.read_from(0x1000), Err(-super::EFAULT));
        assert!(p.is_empty() && c_text(&p) == b"\0");
    }
}
