//! The extension stack: the layers between the program's calls and the
//! bottom (dispatch.rs: strata's own emulation, then the kernel).
//!
//! At start the runtime reads the stack specification from the session file
//! (the launcher wrote it: one layer per line, top first), builds each layer
//! (a built-in extension, or an extension object loaded by dso.rs) and
//! compiles the dispatch once: `mask[nr]` has a bit for each layer
//! interested in call `nr` (the top-most one is its lowest bit, the next
//! one below layer `i` its lowest bit above `i`).
//! A call no layer wants goes straight to the bottom; a layer's `Below`
//! skips the layers below it that do not want the call (Pebble's
//! demultiplexing compiled away).
//!
//! The session file is shared by the whole process tree and the launcher:
//! counters for `count`, the trace ring (`emit` channel 0), and header flags
//! (several tasks exist; an extension failed).

use crate::sys::{self, Sysno, UContext};
use crate::thread::{self, Thread};
use crate::{dispatch, out};
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use strata_abi::{self as abi, Call, ExtDesc};
use strata_proto::counts;

/// Most layers in one stack.
pub const MAX_LAYERS: usize = 16;
/// "No layer".
pub const NO_LAYER: u8 = 0xff;
pub const NRS: usize = abi::MAX_NR;

struct Stack {
    n: usize,
    layers: [core::mem::MaybeUninit<ExtDesc>; MAX_LAYERS],
    below: [core::mem::MaybeUninit<abi::Below>; MAX_LAYERS],
    /// Per call number, the layers that see it, one bit each (bit i: layer
    /// i); [`descend`] walks them in order, top first. `all`: the mask for
    /// numbers past the table (every layer below sees them).
    mask: [u16; NRS],
    all: u16,
    /// The hook layers with no `after` (bit i: layer i): a call that only
    /// such layers want needs nothing of strata once it is issued
    /// ([`before_only`]).
    before_only: u16,
    /// Per layer, what [`descend`] calls, in one cache line for a stack of
    /// a few layers: a hook layer's `before` and `after` and its state, or
    /// `hook` false for a nesting layer (or one that takes no calls).
    hooks: [Hook; MAX_LAYERS],
}

type BeforeFn = extern "C" fn(*mut core::ffi::c_void, *const Call, *mut u64) -> i64;
type AfterFn = extern "C" fn(*mut core::ffi::c_void, *const Call, i64, u64) -> i64;

#[derive(Clone, Copy)]
struct Hook {
    before: Option<BeforeFn>,
    after: Option<AfterFn>,
    state: *mut core::ffi::c_void,
    hook: bool,
}

const NO_HOOK: Hook = Hook {
    before: None,
    after: None,
    state: core::ptr::null_mut(),
    hook: false,
};

// Written once by `init`, single-threaded, before the program runs; only read
// afterwards (fork copies it, exec rebuilds it).
static mut STACK: Stack = Stack {
    n: 0,
    layers: [const { core::mem::MaybeUninit::uninit() }; MAX_LAYERS],
    below: [const { core::mem::MaybeUninit::uninit() }; MAX_LAYERS],
    mask: [0; NRS],
    all: 0,
    before_only: 0,
    hooks: [NO_HOOK; MAX_LAYERS],
};

fn stack() -> &'static Stack {
    // SAFETY: STACK is only written by `init` before any reader exists.
    unsafe { &*core::ptr::addr_of!(STACK) }
}

/// The session file's words, or null when there is no session.
static SESSION: AtomicPtr<AtomicU64> = AtomicPtr::new(core::ptr::null_mut());
/// Its length in bytes.
static SESSION_LEN: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

fn session_word(w: usize) -> Option<&'static AtomicU64> {
    let p = SESSION.load(Ordering::Relaxed);
    // SAFETY: the mapping is at least FILE_SIZE bytes and lives for the
    // whole run; callers pass header or counter word indices inside it.
    (!p.is_null()).then(|| unsafe { &*p.add(w) })
}

/// The session file's header and counter words (see
/// `strata_proto::counts`), if a session exists.
pub fn counters() -> Option<&'static [AtomicU64]> {
    let p = SESSION.load(Ordering::Relaxed);
    // SAFETY: the mapping is at least FILE_SIZE bytes, 8-aligned, and lives
    // for the whole run.
    (!p.is_null()).then(|| unsafe { core::slice::from_raw_parts(p as *const AtomicU64, counts::FILE_SIZE / 8) })
}

/// The layers interested in `nr`, one bit each (numbers past the table:
/// every layer).
#[inline(always)]
fn layers(nr: usize) -> u32 {
    let st = stack();
    u32::from(st.mask.get(nr).copied().unwrap_or(st.all))
}

/// The lowest layer of `m` (NO_LAYER: none).
#[inline(always)]
fn lowest(m: u32) -> u8 {
    if m == 0 {
        NO_LAYER
    } else {
        m.trailing_zeros() as u8
    }
}

/// The top-most layer interested in `nr`.
#[inline(always)]
pub fn first(nr: usize) -> u8 {
    lowest(layers(nr))
}

/// A digest of which calls some layer wants (the rest may skip strata:
/// native trampolines). Text images are named by it besides their
/// library's key: their trampolines' targets depend on it.
pub fn wants_digest() -> u64 {
    static DIGEST: AtomicU64 = AtomicU64::new(0);
    let d = DIGEST.load(Ordering::Relaxed);
    if d != 0 {
        return d;
    }
    let st = stack();
    if st.all == 0 {
        // No layer: no call wanted. (Without reading `mask`, whose pages a
        // process with no layer never touches otherwise.)
        DIGEST.store(1, Ordering::Relaxed);
        return 1;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for chunk in st.mask.chunks(8) {
        let byte = chunk
            .iter()
            .enumerate()
            .fold(0u64, |b, (i, &m)| b | u64::from(m != 0) << i);
        h = (h ^ byte).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let h = h.max(2);
    DIGEST.store(h, Ordering::Relaxed);
    h
}

/// Whether every layer interested in `nr` is a hook layer with no `after`:
/// then once their `before`s have passed the call on, nothing of strata
/// runs after it ([`run_befores`]).
#[inline(always)]
pub fn before_only(nr: usize) -> bool {
    layers(nr) & !u32::from(stack().before_only) == 0
}

fn desc(i: usize) -> &'static ExtDesc {
    // SAFETY: layers 0..n were written by init.
    unsafe { stack().layers[i].assume_init_ref() }
}

/// A layer's name, for messages.
pub fn layer_name(i: usize) -> &'static [u8] {
    if i >= stack().n {
        return b"?";
    }
    let p = desc(i).name;
    if p.is_null() {
        return b"?";
    }
    // SAFETY: extensions give a NUL-terminated name that lives as long as
    // the extension (static data of a built-in or a loaded object).
    unsafe { crate::cstr(p) }
}

/// Runs the stack from layer `first` (or the bottom, for NO_LAYER) on `c`.
/// Hook layers (`ExtDesc::before`/`after`, no `call`) run in a loop around
/// the rest: their `before` on the way down, then a nesting layer's `call`
/// or the bottom, then their `after` on the way up, so that none of them
/// is a return level after the system call (see `fast::passthrough`).
/// The layers that see the call are the bits of its mask from `first` on,
/// so a layer costs a bit scan and its entry in `hooks`, not a walk of the
/// descriptors. Inlined for the same reason.
///
/// With `BEFORES` (a call [`before_only`] says yes to), the walk stops
/// where the bottom would be called and returns [`abi::CONTINUE`] if every
/// layer passed the call on: the caller issues it.
#[inline(always)]
fn descend<const BEFORES: bool>(first: u8, c: &mut Call) -> i64 {
    let nr = c.nr as usize;
    let st = stack();
    let mut m: u32 = if first == NO_LAYER {
        0
    } else {
        layers(nr) & (!0u32 << first)
    };
    // The hook layers passed on the way down, one bit each: their `after`
    // runs on the way up, highest bit first. Their cookies and (execve only)
    // the views they replaced, by layer, written only for a layer that
    // passes: zero-filling the arrays cost a null layer more than its walk.
    let mut passed: u32 = 0;
    let mut cookies = [core::mem::MaybeUninit::<u64>::uninit(); MAX_LAYERS];
    let mut outer_views = [core::mem::MaybeUninit::<usize>::uninit(); MAX_LAYERS];
    let mut scratch: u64;
    // What a hook sets: the layer running (a panic or fault names it), once
    // per hook; the call, once; its view of the call only for execve (what
    // `exec_commit` shows it); all put back at the end.
    let t = thread::current();
    let (outer_layer, outer_nr) = (t.cur_layer, t.cur_nr);
    let exec = !BEFORES && (nr == Sysno::execve as usize || nr == Sysno::execveat as usize);
    t.cur_nr = c.nr;
    let mut r = loop {
        if m == 0 {
            thread::current().cur_layer = outer_layer;
            if BEFORES {
                break abi::CONTINUE;
            }
            break bottom(c);
        }
        let i = m.trailing_zeros() as usize % MAX_LAYERS;
        let h = &st.hooks[i];
        if !h.hook {
            thread::current().cur_layer = outer_layer;
            break call_layer(i as u8, c);
        }
        let t = thread::current();
        t.cur_layer = i as u8;
        if exec {
            outer_views[i].write(t.views[i]);
            t.views[i] = c as *const Call as usize;
        }
        if let Some(f) = h.before {
            // With BEFORES no `after` reads a cookie: one scratch word
            // serves every layer.
            let cookie = if BEFORES {
                scratch = 0;
                &mut scratch
            } else {
                cookies[i].write(0)
            };
            let x = f(h.state, c, cookie);
            if x != abi::CONTINUE {
                // Served here: this layer's `after` does not run.
                if exec {
                    // SAFETY: written above, for this layer.
                    thread::current().views[i] = unsafe { outer_views[i].assume_init() };
                }
                break x;
            }
        } else if !BEFORES {
            cookies[i].write(0);
        }
        if !BEFORES {
            passed |= 1 << i;
        }
        m &= m - 1;
    };
    // (With BEFORES no layer that passed has an `after`, and execve is not
    // among such calls: nothing to do on the way up.)
    while !BEFORES && passed != 0 {
        let i = (31 - passed.leading_zeros()) as usize % MAX_LAYERS;
        passed &= !(1u32 << i);
        let h = &st.hooks[i];
        thread::current().cur_layer = i as u8;
        if let Some(f) = h.after {
            // SAFETY: layer i's cookie was written before its bit was set.
            r = f(h.state, c, r, unsafe { cookies[i].assume_init() });
        }
        if exec {
            // SAFETY: as for the cookie (written whenever `exec`).
            thread::current().views[i] = unsafe { outer_views[i].assume_init() };
        }
    }
    let t = thread::current();
    t.cur_layer = outer_layer;
    t.cur_nr = outer_nr;
    r
}

/// Runs nesting layer `i` on `c`: as the layer running (what a panic or
/// fault names) with `c` as its view of the call (for `exec_commit`), both
/// put back after.
#[inline(always)]
fn call_layer(i: u8, c: &mut Call) -> i64 {
    let iu = i as usize;
    let d = desc(iu);
    let Some(f) = d.call else {
        return below_of(iu, c);
    };
    // SAFETY: below[i] was written by init and is static.
    let below = unsafe { stack().below[iu].assume_init_ref() };
    let t = thread::current();
    let (saved_layer, saved_nr, saved_view) = (t.cur_layer, t.cur_nr, t.views[iu]);
    t.cur_layer = i;
    t.cur_nr = c.nr;
    t.views[iu] = c as *const Call as usize;
    let r = f(d.state, c, below);
    let t = thread::current();
    t.cur_layer = saved_layer;
    t.cur_nr = saved_nr;
    t.views[iu] = saved_view;
    r
}

/// Whether layer `d` sees calls at all (in either form).
fn takes_calls(d: &ExtDesc) -> bool {
    d.call.is_some() || d.before.is_some() || d.after.is_some()
}

/// Whether layer `d` is a hook layer (run around the call, not nested).
#[inline(always)]
fn is_hook(d: &ExtDesc) -> bool {
    d.call.is_none() && (d.before.is_some() || d.after.is_some())
}

/// The next layer below `i` interested in `nr` (NO_LAYER: the bottom).
#[inline(always)]
fn next_of(i: usize, nr: usize) -> u8 {
    lowest(layers(nr) & (!1u32 << i))
}

/// What layer `i`'s `Below` does: the rest of the stack below it.
#[inline(always)]
fn below_of(i: usize, c: &mut Call) -> i64 {
    descend::<false>(next_of(i, c.nr as usize), c)
}

extern "C" fn below_call(b: *const abi::Below, c: *mut Call) -> i64 {
    if b.is_null() || c.is_null() {
        return -(sys::EFAULT as i64);
    }
    // SAFETY: extensions pass back the Below strata gave them and a valid
    // Call (their own or the one they were given) for the call's duration.
    let (layer, c) = unsafe { ((*b).layer as usize, &mut *c) };
    if layer >= stack().n {
        return -(sys::EINVAL as i64);
    }
    below_of(layer, c)
}

/// The bottom of the stack: strata's own handling of the Linux call.
#[inline(always)]
fn bottom(c: &mut Call) -> i64 {
    let t = thread::current();
    let nr = c.nr as usize;
    if t.in_fast == 1 && c.flags & abi::call_flags::FROM_EXTENSION == 0 && !dispatch::bottom_owns(nr) {
        // The program's call, on the fast path, that strata re-issues
        // unchanged (`dispatch::bottom`'s last arm): issued from here, one
        // return level above the layer that asked (see `fast::passthrough`).
        return crate::fast::issue(t, nr, c.args, true) as i64;
    }
    let uc = t.cur_uc as *mut UContext;
    if uc.is_null() {
        return -(sys::EINVAL as i64);
    }
    if c.flags & abi::call_flags::FROM_EXTENSION != 0 && dispatch::owns_control_flow(nr) {
        // An extension's own call may not fork, exec, exit or sigreturn the
        // program behind the layers' backs.
        return -(sys::EPERM as i64);
    }
    // SAFETY: cur_uc is the live signal frame of this thread's call (set by
    // `dispatch::syscall` for exactly this activation).
    let uc = unsafe { &mut *uc };
    let saved_ext = t.ext_call;
    t.ext_call = u8::from(c.flags & abi::call_flags::FROM_EXTENSION != 0);
    let r = dispatch::bottom(t, uc, nr, c.args);
    thread::current().ext_call = saved_ext;
    match r {
        Some(r) => r as i64,
        None => {
            // rt_sigreturn: what the restored registers hold in rax is what
            // the program sees "returned" (strace shows it too).
            t.uc_replaced = 1;
            uc.gregs[crate::sys::reg::RAX] as i64
        }
    }
}

/// The exec of the current call will happen: every layer's `exec_commit`,
/// top first, with that layer's own view of the call.
pub fn exec_commit(nr: usize, args: [u64; 6]) {
    let t = thread::current();
    let fallback = Call::new(nr as u32, args, t.pid as u32, t.tid as u32);
    for i in 0..stack().n {
        if let Some(f) = desc(i).exec_commit {
            let v = thread::current().views[i] as *const Call;
            let c = if v.is_null() { &fallback as *const Call } else { v };
            f(desc(i).state, c);
        }
    }
}

/// A new task runs: every layer's `task_start`.
pub fn task_start(tid: usize, is_thread: bool) {
    for i in 0..stack().n {
        if let Some(f) = desc(i).task_start {
            f(desc(i).state, tid as u32, is_thread as u32);
        }
    }
}

/// The process ends with wait status `status`: every layer's `exit`.
pub fn exit(status: i32) {
    for i in 0..stack().n {
        if let Some(f) = desc(i).exit {
            f(desc(i).state, status);
        }
    }
}

/// strata is about to run a program handler for a signal it delivers itself
/// (the virtual SIGSYS): every layer's `signal` upcall, top first; true
/// when one of them suppresses the delivery.
pub fn signal(info: &crate::sys::SigInfo) -> bool {
    for i in 0..stack().n {
        if let Some(f) = desc(i).signal {
            let p = info as *const crate::sys::SigInfo as *const u8;
            if f(desc(i).state, info.signo, p) == 1 {
                return true;
            }
        }
    }
    false
}

/// Records how this image catches calls (`counts::CAPTURE_WORD`).
pub fn note_capture(bit: u64) {
    if let Some(w) = session_word(counts::CAPTURE_WORD) {
        w.fetch_or(bit, Ordering::Relaxed);
    }
}

/// A clone is about to make a second task.
pub fn note_multi_task() {
    if let Some(w) = session_word(counts::MULTI_TASK_WORD) {
        if w.load(Ordering::Relaxed) == 0 {
            w.store(1, Ordering::Relaxed);
        }
    }
}

// ---- host services -------------------------------------------------------

extern "C" fn host_read_mem(addr: u64, buf: *mut u8, len: usize) -> i64 {
    if buf.is_null() {
        return -(sys::EFAULT as i64);
    }
    let mut done = 0;
    // Page by page, so a read that runs into an unmapped page returns what
    // came before it.
    while done < len {
        let at = addr as usize + done;
        let chunk = (4096 - (at & 4095)).min(len - done);
        // SAFETY: the extension passes its own buffer of `len` bytes, which
        // may not be initialised yet (strata_ext::PathBuf): written through
        // the raw pointer, never read.
        if unsafe { sys::copy_from_user_raw(buf.add(done), chunk, at) }.is_err() {
            break;
        }
        done += chunk;
    }
    if done == 0 && len != 0 {
        -(sys::EFAULT as i64)
    } else {
        done as i64
    }
}

extern "C" fn host_write_mem(addr: u64, buf: *const u8, len: usize) -> i64 {
    if buf.is_null() {
        return -(sys::EFAULT as i64);
    }
    // SAFETY: the extension passes its own buffer of `len` bytes.
    let src = unsafe { core::slice::from_raw_parts(buf, len) };
    match sys::copy_to_user(addr as usize, src) {
        Ok(()) => len as i64,
        Err(e) => -(e as i64),
    }
}

extern "C" fn host_emit(channel: u32, buf: *const u8, len: usize) {
    if buf.is_null() {
        return;
    }
    // SAFETY: the extension passes its own buffer of `len` bytes.
    let b = unsafe { core::slice::from_raw_parts(buf, len) };
    if channel == 0 && ring_emit(b) {
        return;
    }
    sys::write_all(2, b);
}

extern "C" fn host_raw_syscall(nr: u64, args: *const u64) -> i64 {
    if args.is_null() {
        return -(sys::EFAULT as i64);
    }
    // SAFETY: the extension passes six argument words.
    let a = unsafe { core::slice::from_raw_parts(args, 6) };
    let a = [a[0], a[1], a[2], a[3], a[4], a[5]].map(|x| x as usize);
    // SAFETY: the extension's own call, issued as it asks (documented as
    // bypassing the stack; strata's image is guarded like the program's).
    unsafe { sys::raw6(nr as usize, a) as i64 }
}

extern "C" fn host_multi_task() -> u32 {
    session_word(counts::MULTI_TASK_WORD).is_some_and(|w| w.load(Ordering::Relaxed) != 0) as u32
}

extern "C" fn host_fail(msg: *const u8, len: usize) -> ! {
    let m = if msg.is_null() {
        &b"failed"[..]
    } else {
        // SAFETY: the extension passes its own message of `len` bytes.
        unsafe { core::slice::from_raw_parts(msg, len.min(512)) }
    };
    fail(m)
}

/// An extension cannot go on: name it and the call, mark the session and
/// stop the program (fail closed: the call is never passed on).
pub fn fail(msg: &[u8]) -> ! {
    let (layer, nr) = match thread::try_current() {
        Some(t) => (t.cur_layer, t.cur_nr as usize),
        None => (NO_LAYER, usize::MAX),
    };
    let mut l = out::Line::new();
    l.str("strata: extension '");
    if layer != NO_LAYER {
        l.bytes(layer_name(layer as usize));
    } else {
        l.str("?");
    }
    l.str("' failed in ")
        .str(strata_syscall_table::name(nr).unwrap_or("its set-up"))
        .str(": ")
        .bytes(msg)
        .str("; stopping the program\n")
        .emit();
    if let Some(w) = session_word(counts::FAILED_WORD) {
        w.store(1, Ordering::Relaxed);
    }
    sys::exit_group(125)
}

/// A fault inside a layer (from the signal guard): name the layer and the
/// call, and stop the program.
pub fn fault(sig: i32, addr: u64, pc: u64) -> ! {
    let mut l = out::Line::new();
    l.str("faulted: ");
    let _ = strata_decode::write_signal_name(&mut l, sig);
    let _ = core::fmt::Write::write_fmt(&mut l, format_args!(" at pc {pc:#x} (address {addr:#x})"));
    fail(l.as_bytes())
}

/// Whether a layer is running on this thread (the panic handler asks).
pub fn in_layer() -> bool {
    thread::try_current().is_some_and(|t| t.cur_layer != NO_LAYER)
}

pub static HOST: abi::Host = abi::Host {
    abi_version: abi::VERSION,
    size: core::mem::size_of::<abi::Host>() as u32,
    read_mem: host_read_mem,
    write_mem: host_write_mem,
    emit: host_emit,
    raw_syscall: host_raw_syscall,
    multi_task: host_multi_task,
    fail: host_fail,
};

// ---- the trace ring ------------------------------------------------------

/// Appends one record to the session ring; false when there is no ring.
fn ring_emit(b: &[u8]) -> bool {
    let (Some(head), Some(tail), Some(size), Some(waiting)) = (
        session_word(counts::RING_HEAD_WORD),
        session_word(counts::RING_TAIL_WORD),
        session_word(counts::RING_SIZE_WORD),
        session_word(counts::RING_WAITING_WORD),
    ) else {
        return false;
    };
    let size = size.load(Ordering::Relaxed) as usize;
    if size < counts::RING_MIN || !size.is_power_of_two() {
        return false;
    }
    let b = &b[..b.len().min(counts::RECORD_MAX)];
    let need = counts::record_size(b.len()) as u64;
    let p = SESSION.load(Ordering::Relaxed);
    // (No gettid call per line: the thread's state knows its id.)
    let tid = thread::try_current().map_or(0, |t| t.tid as u32);
    // SAFETY: the ring is `size` bytes at RING_OFFSET inside the mapping.
    let ring = unsafe { (p as *mut u8).add(counts::RING_OFFSET) };
    // The header slot of ring position `pos` (8-aligned, inside the ring).
    // SAFETY: as above; header words are 8-aligned and never straddle the end.
    let slot = |pos: u64| unsafe { &*(ring.add(pos as usize & (size - 1)) as *const AtomicU64) };
    let mut waits = 0u32;
    let mut last_tail = u64::MAX;
    // Reserve: header first, then the head (see `counts::RECORD_COMMITTED`),
    // so that this process may be killed at any instruction without
    // stopping the reader.
    let pos = loop {
        let h = head.load(Ordering::Acquire);
        let tl = tail.load(Ordering::Acquire);
        if h.wrapping_sub(tl) + need > size as u64 {
            // Nobody has drained for ~2 s (the launcher is gone: this
            // process outlived it): drop the record rather than hang.
            if tl != last_tail {
                last_tail = tl;
                waits = 0;
            }
            waits += 1;
            if waits > 400 {
                return true;
            }
            // Full: wait for the launcher to drain (it wakes the tail word).
            let ts: [i64; 2] = [0, 5_000_000];
            // SAFETY: FUTEX_WAIT (shared) on the low half of the tail word
            // with a timeout; spurious returns are handled by the loop.
            unsafe {
                sys::sc(
                    Sysno::futex,
                    &[
                        tail as *const AtomicU64 as usize,
                        0,
                        tl as u32 as usize,
                        &ts as *const _ as usize,
                        0,
                        0,
                    ],
                )
            };
            continue;
        }
        let lap = counts::ring_lap(h, size);
        let at = slot(h);
        let cur = at.load(Ordering::Acquire);
        if cur != 0 {
            let (len, _, _, their_lap) = counts::record_parts(cur);
            if their_lap == lap {
                // Another writer's reservation at the head: move the head
                // past it for them.
                let _ = head.compare_exchange(
                    h,
                    h + counts::record_size(len.min(counts::RECORD_MAX)) as u64,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            } else {
                // Left from an earlier lap by a writer that died: clear it.
                let _ = at.compare_exchange(cur, 0, Ordering::AcqRel, Ordering::Relaxed);
            }
            continue;
        }
        let mine = counts::record_header(b.len(), tid, false, lap);
        if at
            .compare_exchange(0, mine, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            continue;
        }
        // SeqCst: `wake_reader`'s look at the waiting word must not be
        // ordered before this (a locked instruction either way on x86).
        match head.compare_exchange(h, h + need, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => break h,
            // Moved past our reservation by another writer: ours, as long
            // as the reader has not passed it (it cannot have: the record
            // is not committed, and we are alive).
            Err(now)
                if now.wrapping_sub(h) as i64 > 0
                    && h.wrapping_sub(tail.load(Ordering::Acquire)) as i64 >= 0
                    && at.load(Ordering::Acquire) == mine =>
            {
                break h
            }
            // The head had left `h` before we reserved (the slot was free
            // again, behind the reader): undo and retry.
            Err(_) => {
                let _ = at.compare_exchange(mine, 0, Ordering::AcqRel, Ordering::Relaxed);
            }
        }
    };
    // SAFETY: [pos, pos+need) is ours alone until we commit it.
    unsafe {
        // The bytes, in at most two copies (the record may wrap).
        let off = (pos as usize + 8) & (size - 1);
        let first = b.len().min(size - off);
        core::ptr::copy_nonoverlapping(b.as_ptr(), ring.add(off), first);
        core::ptr::copy_nonoverlapping(b.as_ptr().add(first), ring, b.len() - first);
    }
    slot(pos).store(
        counts::record_header(b.len(), tid, true, counts::ring_lap(pos, size)),
        Ordering::Release,
    );
    wake_reader(waiting);
    true
}

/// Wakes the launcher's reader if it sleeps until a record comes (`w`:
/// `counts::RING_WAITING_WORD`): the record just committed is one.
fn wake_reader(w: &AtomicU64) {
    // The reader sets the word, then (both SeqCst) waits only if the
    // head has not moved; this record moved the head (a SeqCst exchange)
    // before this SeqCst look. So either the reader saw the head move and
    // does not wait, or this sees the word set. No fence per record: a
    // traced program emits one per call.
    if w.load(Ordering::SeqCst) != 0 && w.swap(0, Ordering::AcqRel) != 0 {
        // SAFETY: FUTEX_WAKE (shared) of one waiter on the word's low half.
        unsafe { sys::sc(Sysno::futex, &[w as *const AtomicU64 as usize, 1, 1, 0, 0, 0]) };
    }
}

// ---- construction --------------------------------------------------------

/// Builds the stack from its specification and maps the session file.
/// A layer that cannot be built ends the process with status 2 (the
/// launcher has checked the specification, so this means a broken
/// installation). A session file that is gone (this process outlived the
/// launcher) only turns the shared services off: counters and the trace
/// ring (trace lines then go to standard error); the layers stay.
pub fn init(session_path: &core::ffi::CStr, spec: &[u8]) {
    if let Some((m, len)) = map_session(session_path) {
        SESSION_LEN.store(len, Ordering::Relaxed);
        SESSION.store(m as *mut AtomicU64, Ordering::Release);
    }
    if spec.is_empty() {
        return;
    }
    strata_ext::set_host(&HOST);
    // SAFETY: single-threaded start; nothing reads STACK yet.
    let st = unsafe { &mut *core::ptr::addr_of_mut!(STACK) };
    for (name, args) in strata_proto::spec::layers(spec) {
        let i = st.n;
        if i >= MAX_LAYERS {
            die(name, b"too many layers (at most 16)");
        }
        let Some(args) = args else {
            die(name, b"malformed stack specification")
        };
        let mut err = [0u8; 256];
        let mut d = match crate::builtin::make(name, args, &mut err) {
            Some(Ok(d)) => d,
            Some(Err(n)) => die(name, &err[..n]),
            None if name.contains(&b'/') => {
                // SAFETY: ExtDesc is plain data; the loader fills it.
                let mut d: ExtDesc = unsafe { core::mem::zeroed() };
                match crate::dso::load(name, &HOST, args, &mut d, &mut err) {
                    Ok(()) => d,
                    Err(n) => die(name, &err[..n.min(err.len())]),
                }
            }
            None => die(name, b"no such extension"),
        };
        if (d.size as usize) < core::mem::offset_of!(ExtDesc, after) + 8 {
            // Built for ABI 1.0: no hooks (whatever lies past its size).
            d.before = None;
            d.after = None;
        }
        if !abi::compatible(d.abi_version) || !takes_calls(&d) && d.exec_commit.is_none() && d.exit.is_none() {
            die(
                name,
                b"the extension's descriptor is incomplete or from another ABI version",
            );
        }
        st.layers[i].write(d);
        st.below[i].write(abi::Below {
            call: below_call,
            ctx: core::ptr::null(),
            layer: i as u32,
            _reserved: 0,
        });
        st.n += 1;
    }
    // Compile the dispatch: each call number's layers, and each hook
    // layer's entry points.
    for i in 0..st.n {
        // SAFETY: written above.
        let d = unsafe { st.layers[i].assume_init_ref() };
        st.hooks[i] = Hook {
            before: d.before,
            after: d.after,
            state: d.state,
            hook: is_hook(d),
        };
        st.all |= 1 << i;
        if is_hook(d) && d.after.is_none() {
            st.before_only |= 1 << i;
        }
        if takes_calls(d) {
            for (nr, m) in st.mask.iter_mut().enumerate() {
                if d.interest.contains(nr as u32) {
                    *m |= 1 << i;
                }
            }
        }
    }
}

fn die(name: &[u8], why: &[u8]) -> ! {
    out::Line::new()
        .str("strata: extension ")
        .bytes(name)
        .str(": ")
        .bytes(why)
        .str("\n")
        .emit();
    sys::exit_group(2)
}

fn map_session(path: &core::ffi::CStr) -> Option<(usize, usize)> {
    if path.is_empty() {
        return None;
    }
    // SAFETY: NUL-terminated path.
    let fd = sys::check(unsafe {
        sys::sc(
            Sysno::openat,
            &[
                sys::AT_FDCWD as usize,
                path.as_ptr() as usize,
                sys::O_RDWR | sys::O_CLOEXEC,
                0,
            ],
        )
    })
    .ok()?;
    let mut st = [0u64; 18];
    // SAFETY: fstat into a buffer of struct stat's size (144 bytes).
    let r = unsafe { sys::sc(Sysno::fstat, &[fd, st.as_mut_ptr() as usize]) };
    let size = st[6] as usize; // st_size
    let m = if r == 0 && size >= counts::FILE_SIZE {
        // SAFETY: a shared mapping of the session file at a kernel-chosen address.
        sys::check(unsafe {
            sys::sc(
                Sysno::mmap,
                &[0, size, sys::PROT_READ | sys::PROT_WRITE, sys::MAP_SHARED, fd, 0],
            )
        })
        .ok()
    } else {
        None
    };
    // SAFETY: closing our own descriptor; the mapping stays.
    unsafe { sys::sc(Sysno::close, &[fd]) };
    let m = m?;
    // SAFETY: the mapping has at least 8 bytes.
    let magic = unsafe { *(m as *const [u8; 8]) };
    if magic != counts::MAGIC {
        return None;
    }
    let ring = size - counts::RING_OFFSET;
    // SAFETY: header word inside the mapping.
    let declared = unsafe { (*(m as *const AtomicU64).add(counts::RING_SIZE_WORD)).load(Ordering::Relaxed) } as usize;
    if declared > ring {
        return None;
    }
    // Pages are touched one at a time, mostly holes of a sparse file: no
    // read-ahead (it would fill the page cache with zeroes on every fault).
    // SAFETY: advice on our own mapping.
    unsafe { sys::sc(Sysno::madvise, &[m, size, 1]) }; // MADV_RANDOM
    Some((m, size))
}

/// The whole session mapping as words, if a session exists.
pub fn session_words() -> Option<&'static [AtomicU64]> {
    let p = SESSION.load(Ordering::Acquire);
    let len = SESSION_LEN.load(Ordering::Relaxed);
    // SAFETY: the mapping is `len` bytes, 8-aligned, shared, and lives for
    // the whole run.
    (!p.is_null()).then(|| unsafe { core::slice::from_raw_parts(p as *const AtomicU64, len / 8) })
}

/// Per-call entry from dispatch.rs: runs the stack for call `nr` and
/// returns what to put in rax, or None when the bottom replaced the whole
/// register state. Inlined (see `fast::passthrough`).
#[inline(always)]
pub fn run(t: &mut Thread, uc: &mut UContext, first: u8, nr: usize, a: [u64; 6]) -> Option<i64> {
    let mut a = a;
    if nr == Sysno::rt_sigreturn as usize {
        // rt_sigreturn has no arguments: its frame is at the stack pointer,
        // which layers get as argument 0 (strace decodes the mask from it).
        a[0] = uc.gregs[crate::sys::reg::RSP];
    }
    let mut c = Call::new(nr as u32, a, t.pid as u32, t.tid as u32);
    run_call(t, uc, first, &mut c)
}

/// `run`, for a call the caller made (`Call::undecoded`, then its
/// arguments, then `Call::decode`).
#[inline(always)]
pub fn run_call(t: &mut Thread, uc: &mut UContext, first: u8, c: &mut Call) -> Option<i64> {
    let saved_uc = t.cur_uc;
    let saved_rep = t.uc_replaced;
    t.cur_uc = uc as *mut UContext as usize;
    t.uc_replaced = 0;
    let r = descend::<false>(first, c);
    let t = thread::current();
    let replaced = t.uc_replaced != 0;
    t.cur_uc = saved_uc;
    t.uc_replaced = saved_rep;
    (!replaced).then_some(r)
}

/// The `before`s of the layers that want `c` (every one a hook with no
/// `after`: [`before_only`]), from `first` down: the result of the layer
/// that served the call, or [`abi::CONTINUE`] when all passed it on and it
/// is to be issued as `c` now says.
#[inline(always)]
pub fn run_befores(t: &mut Thread, uc: &mut UContext, first: u8, c: &mut Call) -> i64 {
    let saved_uc = t.cur_uc;
    t.cur_uc = uc as *mut UContext as usize;
    let r = descend::<true>(first, c);
    thread::current().cur_uc = saved_uc;
    r
}
