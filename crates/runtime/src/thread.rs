//! Per-thread state, reached through the GS base register.
//!
//! Every thread of the program gets one `Thread`, in a region of its own
//! together with the alternate signal stack strata's SIGSYS handler runs on
//! (strata's own stack, whose top the fast path and the start-up use too)
//! and a boot area used to start the thread: a mapping, or for the main
//! thread a static region of strata-rt's image (`MAIN_REGION`). `%gs:0`
//! points at it; the program does not use GS on x86-64 Linux
//! (arch_prctl(ARCH_SET_GS) is virtualized).
//!
//! States live in a fixed pool and are reused: a thread marks its state dead
//! in the very instruction sequence that exits it (`strata_exit_thread`), so
//! a later clone can take it over. A vfork child's state is freed by its
//! parent instead, when the parent resumes (process.rs `clone`).

use crate::sys::{self, StackT, Sysno};
use core::arch::asm;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// Size of strata's signal stack per thread. Program handlers for signals
/// that arrive while strata waits in a blocking call run nested on it, so it
/// is generous; untouched pages cost nothing.
pub const ALTSTACK_SIZE: usize = 256 * 1024;
/// Bytes for a prepared signal frame (ucontext + xsave area) used to start a
/// thread.
pub const BOOT_SIZE: usize = 16 * 1024;
const GUARD: usize = 4096;
const REGION: usize = GUARD + ALTSTACK_SIZE + BOOT_SIZE + 4096;
/// Most threads alive at once.
pub const MAX_THREADS: usize = 8192;

/// The program's own Syscall User Dispatch settings, which strata emulates.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub struct ProgramSud {
    pub mode: usize,
    pub offset: usize,
    pub len: usize,
    pub selector: usize,
}

#[repr(C)]
pub struct Thread {
    /// `%gs:0`: pointer to itself.
    pub this: *mut Thread,
    /// The Syscall User Dispatch selector byte the kernel reads for this thread.
    pub selector: u8,
    /// The program has SIGSYS blocked (virtually; it is never really blocked).
    pub vsigsys_blocked: u8,
    /// A SIGSYS sent to the program while it had SIGSYS blocked.
    pub vsigsys_pending: u8,
    /// A vfork child: its parent frees this state when it resumes.
    pub vfork_child: u8,
    /// 1 once the thread has exited (or never existed in this process).
    pub dead: AtomicU32,
    /// Stack pointer the boot path starts on.
    pub boot_sp: usize,
    pub tid: usize,
    /// The process (thread group) id this thread belongs to.
    pub pid: usize,
    pub altstack: usize,
    /// End of strata's signal stack.
    pub altstack_hi: usize,
    /// Where strata's handler starts when the kernel delivered SIGSYS on
    /// another stack: the top of strata's stack, or below an activation that
    /// waits in a blocking call (see `dispatch::passthrough`).
    pub handler_sp: usize,
    /// The program's alternate signal stack (virtual), or disabled.
    pub prog_altstack: StackT,
    /// The real alternate signal stack, as strata last set it.
    pub real_alt: StackT,
    pub prog_sud: ProgramSud,
    /// This thread has strata's trap-everything filter (the program turned
    /// on dispatch of its own while strata's seccomp filter catches calls:
    /// seccomp.rs). A fork's child keeps it, as the kernel keeps the filter.
    pub trap_all: u8,
    /// The program's return address while the trap path issues its call
    /// with signals open (`dispatch::passthrough`, `fast::TRAP_BLOCKING`).
    pub trap_ret: usize,
    /// The program's GS base (virtual).
    pub prog_gs: usize,
    /// The pending SIGSYS's siginfo.
    pub pending_info: sys::SigInfo,
    /// Where the prepared start frame lives (inside the region).
    pub boot_frame: usize,
    /// The signal frame of the call the extension stack is handling (for
    /// the bottom layer), or 0.
    pub cur_uc: usize,
    /// Set by the bottom layer when it replaced the whole register state
    /// (rt_sigreturn): the stack's result is not written to rax.
    pub uc_replaced: u8,
    /// The layer running on this thread (for failure messages), or 0xff.
    pub cur_layer: u8,
    /// The Linux number of the call that layer is handling.
    pub cur_nr: u32,
    /// Each layer's view of the call in progress (a `*const Call`), for
    /// `exec_commit`.
    pub views: [usize; crate::stack::MAX_LAYERS],
    /// The call the bottom is issuing comes from an extension (`Below::issue`).
    pub ext_call: u8,
    // ---- the fast path (fast.rs); offsets used by its assembly ----
    /// 1 while a call that entered through a rewritten site runs in strata:
    /// signals arriving then are deferred to its end.
    pub in_fast: u8,
    /// The blocking call `fast::issue` has in progress is the program's own
    /// call (a kernel restart of it becomes ERESTARTSYS, then a restart at
    /// the site's own `syscall`).
    pub fast_sc_prog: u8,
    /// Address of the `syscall` instruction `fast::issue` is running (set
    /// just before it): a signal at that address is at the issued call, not
    /// at a `syscall` of strata's own that a nested handler was making.
    pub issue_pc: u64,
    /// The call must be served by the trap path after all (resume at the
    /// site's `syscall`).
    pub fast_bail: u8,
    /// A signal interrupted the program's call and the kernel chose to
    /// restart it: resume at the site's `syscall` with `restart_nr`.
    pub fast_restart: u8,
    /// Under the program's current mask: 0 not known, 1 faults are
    /// deliverable (its memory may be copied directly), 2 they are blocked.
    pub fault_ok: u8,
    /// Nonzero: leave through the slow exit (deferred signals, bail, restart).
    pub fast_slow: u64,
    /// Signals deferred while in fast mode (blocked until the call ends).
    pub deferred: u64,
    /// The program's stack pointer, flags and return address (S_ret) at entry.
    pub prog_rsp: usize,
    pub prog_flags: u64,
    pub sret: usize,
    /// `strata_fast` left the call for its entry to issue (no layer wants
    /// anything of it after the `before`s): `issue_nr` with `issue_args`.
    pub fast_issue: u8,
    pub issue_nr: u64,
    pub issue_args: [u64; 6],
    /// The call's result, the number it was made with, the restart number.
    pub fast_result: u64,
    pub fast_nr: u64,
    pub restart_nr: u64,
    /// S_ret of the call in `strata_native_entry`.
    pub native_ret: usize,
    /// Calls that took the native, fast and trap paths (flushed at exit).
    pub native_calls: u64,
    pub fast_calls: u64,
    pub trap_calls: u64,
    /// Real-time signals deferred and kept for strata to deliver (signo 0:
    /// free).
    pub saved_rt: [sys::SigInfo; 4],
    /// Stand-in signal frame for calls on the fast path (its `rax` and mask;
    /// complete for a clone whose child starts from a copy of it,
    /// `fast::full_frame`).
    pub fast_uc: sys::UContext,
    /// The program's rbx, rbp, r12-r15 at a fast clone, clone3 or vfork
    /// (saved by the entry for those calls only).
    pub prog_callee: [u64; 6],
    /// `fast_uc` holds the whole program state of the current fast call
    /// (`fast::full_frame`), for the clone it was built for.
    pub fast_full: u8,
    /// A vfork child's stack as clone3 gave it, [lo, hi), or for clone,
    /// which gives only its top, the 16 pages that end at the top (`lo`
    /// rounded down to a page), or empty: the parent that made it waits
    /// until the child execs or exits. A page of
    /// it that one copy reached through process_vm_readv (`seen_r`) or
    /// process_vm_writev (`seen_w`, bit i: page i from `known_lo`) is
    /// copied to and from directly afterwards, even while the program
    /// blocks SIGSEGV and SIGBUS, which a posix_spawn child does (every
    /// signal) while it asks rt_sigaction about each signal: otherwise each
    /// of those copies is a process_vm_readv or process_vm_writev (sys.rs).
    /// A page nothing has reached yet (a guard page, say) still goes
    /// through the kernel, and fails with EFAULT as natively.
    pub known_lo: usize,
    pub known_hi: usize,
    pub seen_r: u64,
    pub seen_w: u64,
    /// The environment and configuration buffer of an exec in progress
    /// (address, length): after a vfork child's exec the parent, which
    /// shares the memory, unmaps it (process.rs `clone`).
    pub exec_buf: [usize; 2],
}

pub const OFF_VSIGSYS: usize = core::mem::offset_of!(Thread, vsigsys_blocked);
pub const OFF_DEAD: usize = core::mem::offset_of!(Thread, dead);
pub const OFF_VFORK_CHILD: usize = core::mem::offset_of!(Thread, vfork_child);
pub const OFF_BOOT_SP: usize = core::mem::offset_of!(Thread, boot_sp);
pub const OFF_ALTSTACK: usize = core::mem::offset_of!(Thread, altstack);
pub const OFF_ALTSTACK_HI: usize = core::mem::offset_of!(Thread, altstack_hi);
pub const OFF_HANDLER_SP: usize = core::mem::offset_of!(Thread, handler_sp);
pub const OFF_SELECTOR: usize = core::mem::offset_of!(Thread, selector);
pub const OFF_IN_FAST: usize = core::mem::offset_of!(Thread, in_fast);
pub const OFF_FAULT_OK: usize = core::mem::offset_of!(Thread, fault_ok);
pub const OFF_FAST_SLOW: usize = core::mem::offset_of!(Thread, fast_slow);
pub const OFF_PROG_RSP: usize = core::mem::offset_of!(Thread, prog_rsp);
pub const OFF_PROG_CALLEE: usize = core::mem::offset_of!(Thread, prog_callee);
pub const OFF_PROG_FLAGS: usize = core::mem::offset_of!(Thread, prog_flags);
pub const OFF_SRET: usize = core::mem::offset_of!(Thread, sret);
pub const OFF_FAST_RESULT: usize = core::mem::offset_of!(Thread, fast_result);
pub const OFF_FAST_ISSUE: usize = core::mem::offset_of!(Thread, fast_issue);
pub const OFF_ISSUE_NR: usize = core::mem::offset_of!(Thread, issue_nr);
pub const OFF_ISSUE_ARGS: usize = core::mem::offset_of!(Thread, issue_args);
pub const OFF_ISSUE_PC: usize = core::mem::offset_of!(Thread, issue_pc);
pub const OFF_FAST_SC_PROG: usize = core::mem::offset_of!(Thread, fast_sc_prog);
pub const OFF_NATIVE_RET: usize = core::mem::offset_of!(Thread, native_ret);
pub const OFF_NATIVE_CALLS: usize = core::mem::offset_of!(Thread, native_calls);
const _: () = assert!(core::mem::offset_of!(Thread, this) == 0);
const _: () = assert!(core::mem::size_of::<Thread>() <= 4096);

#[link_section = ".bss.big.pool"]
static POOL: [AtomicPtr<Thread>; MAX_THREADS] = [const { AtomicPtr::new(core::ptr::null_mut()) }; MAX_THREADS];
static POOL_LEN: AtomicUsize = AtomicUsize::new(0);

/// The current thread's state.
#[inline(always)]
pub fn current() -> &'static mut Thread {
    let p: *mut Thread;
    // SAFETY: reads %gs:0, which strata set to this thread's state before the
    // thread ran any program code.
    unsafe { asm!("mov %gs:0, {}", out(reg) p, options(att_syntax, nostack, readonly, preserves_flags)) };
    // SAFETY: the state outlives the thread and only this thread mutates it
    // (other threads only read `dead`).
    unsafe { &mut *p }
}

/// What the calling thread knows of [addr, addr + len) of the program's
/// memory ([`Thread::known_lo`]).
pub enum Known {
    /// Nothing: copy through the kernel.
    No,
    /// Pages of its vfork stack that an earlier copy reached (a write, for a
    /// write): a plain copy.
    Reached,
    /// Pages of its vfork stack not reached yet: copy through the kernel,
    /// then [`Known::reached`].
    Unreached(&'static mut Thread, u64),
}

/// [`Known`] of [addr, addr + len), for a copy that writes there or not.
pub fn known(addr: usize, len: usize, write: bool) -> Known {
    let Some(t) = try_current() else {
        return Known::No;
    };
    let Some(end) = addr.checked_add(len) else {
        return Known::No;
    };
    if len == 0 || addr < t.known_lo || end > t.known_hi {
        return Known::No;
    }
    let (first, last) = ((addr - t.known_lo) / 4096, (end - 1 - t.known_lo) / 4096);
    if last >= 64 {
        return Known::No;
    }
    let bits = (u64::MAX >> (63 - (last - first))) << first;
    let seen = if write { t.seen_w } else { t.seen_r | t.seen_w };
    if bits & !seen == 0 {
        Known::Reached
    } else {
        Known::Unreached(t, bits)
    }
}

impl Known {
    /// A copy through the kernel reached the pages.
    pub fn reached(self, write: bool) {
        if let Known::Unreached(t, bits) = self {
            if write {
                t.seen_w |= bits;
            } else {
                t.seen_r |= bits;
            }
        }
    }
}

impl Thread {
    /// Forgets the vfork stack ([`Thread::known_lo`]): a state made anew, or
    /// the child of a fork, which has no waiting parent.
    pub fn forget_vfork_stack(&mut self) {
        (self.known_lo, self.known_hi, self.seen_r, self.seen_w) = (0, 0, 0, 0);
    }
}

/// Makes `t` the state of the calling thread.
/// This thread's state, or None before strata installed one (start-up).
pub fn try_current() -> Option<&'static mut Thread> {
    let base: usize;
    // SAFETY: reads GS base (FSGSBASE, as `install` writes it).
    unsafe { asm!("rdgsbase {}", out(reg) base, options(nomem, nostack, preserves_flags)) };
    if base == 0 {
        None
    } else {
        Some(current())
    }
}

pub fn install(t: *mut Thread) {
    // SAFETY: writing GS base with the FSGSBASE instruction (enabled by
    // Linux >= 5.9 for user space). Nothing of the program depends on it.
    unsafe { asm!("wrgsbase {}", in(reg) t as usize, options(nostack, preserves_flags)) };
}

/// Takes a free state from the pool or makes a new one. `None` if the pool
/// is full or memory is exhausted.
pub fn claim() -> Option<*mut Thread> {
    let n = POOL_LEN.load(Ordering::Acquire);
    for slot in POOL.iter().take(n) {
        let p = slot.load(Ordering::Acquire);
        if p.is_null() {
            continue;
        }
        // SAFETY: pool entries are never freed.
        let dead = unsafe { &(*p).dead };
        if dead.compare_exchange(1, 0, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            // SAFETY: we now own this state exclusively.
            unsafe { reset(p) };
            return Some(p);
        }
    }
    let base = sys::mmap_anon(REGION, sys::PROT_READ | sys::PROT_WRITE)?;
    // SAFETY: our own new mapping, zeroed, which nothing else has seen.
    let t = unsafe { region_state(base) };
    let i = POOL_LEN.fetch_add(1, Ordering::AcqRel);
    if i >= MAX_THREADS {
        POOL_LEN.fetch_sub(1, Ordering::AcqRel);
        // SAFETY: unmapping the region we just made and nobody else saw.
        unsafe { sys::sc(Sysno::munmap, &[base, REGION]) };
        return None;
    }
    POOL[i].store(t, Ordering::Release);
    Some(t)
}

/// Makes the zeroed region at `base` (REGION bytes) a thread's: its guard
/// page under the signal stack, and the state in its last page.
///
/// # Safety
/// `base` is a zeroed, writable region of REGION bytes that nothing uses.
unsafe fn region_state(base: usize) -> *mut Thread {
    // SAFETY: changing the protection of the region's first page (contract).
    unsafe { sys::sc(Sysno::mprotect, &[base, GUARD, 0]) };
    let t = (base + REGION - 4096) as *mut Thread;
    // SAFETY: the region is ours and zeroed (contract); Thread fits in its
    // last page.
    unsafe {
        (*t).altstack = base + GUARD;
        (*t).altstack_hi = base + GUARD + ALTSTACK_SIZE;
        (*t).boot_frame = base + GUARD + ALTSTACK_SIZE;
        reset(t);
    }
    t
}

/// The main thread's region, in strata-rt's image rather than a mapping of
/// its own (one call and one mapping fewer at every start). Its section
/// sorts first in .bss.big (big-bss.ld), whose pages begin the kernel's
/// zero-filled mapping: protecting the guard page splits that mapping in
/// two, not three.
#[repr(C, align(4096))]
struct Region([u8; REGION]);
#[link_section = ".bss.big.0main_thread"]
static mut MAIN_REGION: Region = Region([0; REGION]);

/// The main thread's state, claimed by `claim_main` at the process entry.
static MAIN: AtomicPtr<Thread> = AtomicPtr::new(core::ptr::null_mut());

/// Claims the main thread's state before anything else runs, and returns
/// the top of its strata stack (16-byte aligned), on which the start-up
/// then runs (asm.rs `_start`). Cannot fail: the region is strata-rt's own.
pub fn claim_main() -> usize {
    // SAFETY: the process's first claim, before anything else runs: the
    // region is zeroed and unused, and the pool empty.
    let t = unsafe { region_state(core::ptr::addr_of_mut!(MAIN_REGION) as usize) };
    POOL_LEN.store(1, Ordering::Release);
    POOL[0].store(t, Ordering::Release);
    MAIN.store(t, Ordering::Relaxed);
    // SAFETY: just claimed, ours alone.
    unsafe { (*t).boot_sp }
}

/// The state `claim_main` claimed.
pub fn main_state() -> *mut Thread {
    MAIN.load(Ordering::Relaxed)
}

/// How many thread states are in use (threads of this process, and vfork
/// children sharing its memory).
pub fn live_count() -> usize {
    let n = POOL_LEN.load(Ordering::Acquire);
    POOL.iter()
        .take(n)
        .filter(|slot| {
            let p = slot.load(Ordering::Acquire);
            // SAFETY: pool entries are never freed.
            !p.is_null() && unsafe { (*p).dead.load(Ordering::Acquire) } == 0
        })
        .count()
}

/// Calls `f` with every thread state in use.
pub fn for_each_live(f: &mut dyn FnMut(&mut Thread)) {
    let n = POOL_LEN.load(Ordering::Acquire);
    for slot in POOL.iter().take(n) {
        let p = slot.load(Ordering::Acquire);
        // SAFETY: pool entries are never freed.
        if !p.is_null() && unsafe { (*p).dead.load(Ordering::Acquire) } == 0 {
            // SAFETY: as above; callers touch only plain counter words,
            // which their threads only ever increment.
            f(unsafe { &mut *p });
        }
    }
}

/// Puts a state back without it having run (a failed clone).
pub fn release(t: *mut Thread) {
    // SAFETY: `t` came from `claim` and no thread runs on it.
    unsafe { (*t).dead.store(1, Ordering::Release) };
}

/// # Safety
/// The caller owns `t` exclusively.
unsafe fn reset(t: *mut Thread) {
    // SAFETY: exclusive ownership per the contract.
    unsafe {
        (*t).this = t;
        (*t).selector = sys::SYSCALL_DISPATCH_FILTER_BLOCK;
        (*t).vsigsys_blocked = 0;
        (*t).vsigsys_pending = 0;
        (*t).vfork_child = 0;
        (*t).boot_sp = ((*t).altstack + ALTSTACK_SIZE) & !15;
        (*t).handler_sp = (*t).boot_sp;
        (*t).tid = 0;
        (*t).prog_altstack = StackT::DISABLED;
        (*t).real_alt = StackT::DISABLED;
        (*t).prog_sud = ProgramSud::default();
        (*t).prog_gs = 0;
        (*t).cur_uc = 0;
        (*t).uc_replaced = 0;
        (*t).cur_layer = crate::stack::NO_LAYER;
        (*t).cur_nr = 0;
        (*t).views = [0; crate::stack::MAX_LAYERS];
        (*t).ext_call = 0;
        (*t).in_fast = 0;
        (*t).fast_sc_prog = 0;
        (*t).fast_issue = 0;
        (*t).fast_bail = 0;
        (*t).fast_restart = 0;
        (*t).fault_ok = 0;
        (*t).forget_vfork_stack();
        (*t).exec_buf = [0, 0];
        (*t).fast_slow = 0;
        (*t).deferred = 0;
        for s in (*t).saved_rt.iter_mut() {
            s.signo = 0;
        }
        (*t).native_calls = 0;
        (*t).fast_calls = 0;
        (*t).trap_calls = 0;
    }
}

const _: () = assert!(core::mem::size_of::<Thread>() <= 4096);

/// In a forked child: only the calling thread exists, free every other state.
pub fn after_fork(me: *mut Thread) {
    let n = POOL_LEN.load(Ordering::Acquire);
    for slot in POOL.iter().take(n) {
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() && p != me {
            // SAFETY: pool entries are never freed; no other thread runs.
            unsafe { (*p).dead.store(1, Ordering::Release) };
        }
    }
}

/// The real alternate stack strata wants when the program has none.
pub fn own_altstack(t: &Thread) -> StackT {
    StackT {
        sp: t.altstack as u64,
        flags: 0,
        _pad: 0,
        size: ALTSTACK_SIZE as u64,
    }
}

/// Turns on Syscall User Dispatch for the calling thread: every syscall
/// outside strata's text traps into strata (nothing to do when strata's
/// seccomp filter catches calls instead: seccomp.rs).
pub fn enable_capture(t: &mut Thread) -> Result<(), isize> {
    t.selector = sys::SYSCALL_DISPATCH_FILTER_BLOCK;
    if crate::seccomp::active() {
        // Caught by strata's filter, which every thread inherits.
        return Ok(());
    }
    let (lo, len) = crate::image::text_range();
    // SAFETY: the selector lives as long as the thread's state (forever).
    let r = unsafe {
        sys::sc(
            Sysno::prctl,
            &[
                sys::PR_SET_SYSCALL_USER_DISPATCH,
                sys::PR_SYS_DISPATCH_ON,
                lo,
                len,
                &t.selector as *const u8 as usize,
            ],
        )
    };
    sys::check(r).map(|_| ())
}

/// Sets the real alternate signal stack of the calling thread, even while
/// strata runs on the current one. The thread's state must be installed.
pub fn set_altstack(ss: &StackT) -> isize {
    // SAFETY: `ss` is a valid stack_t; the stack it names is ours or the
    // program's, given by the program for this purpose. Called with all
    // signals blocked (strata's handler, or start-up before any handler).
    let r = unsafe { crate::asm::strata_sigaltstack_offstack(ss, core::ptr::null_mut()) };
    if r == 0 {
        current().real_alt = *ss;
    }
    r
}
