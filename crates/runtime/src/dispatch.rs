//! What happens to one system call once it reached strata.
//!
//! `syscall` hands the call to the extension stack (stack.rs) when a layer
//! wants it, or straight to `bottom` when none does. `bottom` either
//! emulates the call (the few that strata must own to keep capture on and
//! the program unaware: signals, clone, execve, brk, ...) or re-issues it
//! unchanged from strata's text.
//! Which calls are emulated is listed, with the reason, in the one syscall
//! table (crates/syscall-table, docs/syscalls.md).

use crate::sys::{self, reg, StackT, Sysno, UContext};
use crate::thread::Thread;
use crate::{process, procfs, signals, stack};

const S: fn(Sysno) -> usize = |s| s as usize;

/// Handles call `nr` and leaves its result in `uc` (rax, or a whole new
/// register state for rt_sigreturn). (The fast path's `strata_fast` does
/// the same its own way.)
#[inline]
pub fn syscall(t: &mut Thread, uc: &mut UContext, nr: usize, a: [u64; 6]) {
    let first = stack::first(nr);
    let ret = if first == stack::NO_LAYER {
        bottom(t, uc, nr, a).map(|r| r as i64)
    } else {
        stack::run(t, uc, first, nr, a)
    };
    if let Some(r) = ret {
        uc.gregs[reg::RAX] = r as u64;
    }
}

/// Calls an extension may not issue on its own: they change the program's
/// control flow (new tasks, a new image, its end, a signal return).
pub fn owns_control_flow(nr: usize) -> bool {
    [
        Sysno::rt_sigreturn,
        Sysno::clone,
        Sysno::clone3,
        Sysno::fork,
        Sysno::vfork,
        Sysno::execve,
        Sysno::execveat,
        Sysno::exit,
        Sysno::exit_group,
    ]
    .iter()
    .any(|&s| S(s) == nr)
}

/// prctl's option that installs a seccomp filter or mode.
const PR_SET_SECCOMP: u64 = 22;
/// seccomp and chroot by number, not `Sysno`: strata never makes these
/// calls for itself (the program's own pass through, where a policy's
/// kernel filter still judges them), so they stay out of STRATA_NEEDS,
/// which a unit test fills from the `Sysno` names in these sources.
const NR_SECCOMP: usize = 317;
const NR_CHROOT: usize = 161;

/// Calls `bottom` handles itself rather than re-issuing them unchanged
/// (every arm of its match but the last): those the syscall table marks
/// emulated or partial. Any other call no layer wants can skip strata
/// entirely (rewrite.rs: native trampolines).
#[inline(always)]
pub fn bottom_owns(nr: usize) -> bool {
    kind(nr) & kind::BOTTOM != 0
}

/// What the fast path (fast.rs) and `bottom` look at first for a call
/// number, one bit each, in one table built at compile time: most calls
/// have none, and one load tells so.
pub mod kind {
    /// Needs the trap path's signal frame (`fast::needs_frame`); every
    /// number past the table too.
    pub const FRAME: u8 = 1;
    /// Installs a temporary signal mask when its argument is not null
    /// (`temporary_mask_arg`).
    pub const TMASK: u8 = 2;
    /// clone, clone3 or vfork (`fast::clone_kind`).
    pub const CLONE: u8 = 4;
    /// Edits the program's mask or hands it to a new image: rt_sigprocmask,
    /// execve, execveat.
    pub const MASKING: u8 = 8;
    /// `bottom_owns`.
    pub const BOTTOM: u8 = 16;
}

static KIND: [u8; crate::stack::NRS] = kinds();

/// The `kind` bits of call `nr`.
#[inline(always)]
pub fn kind(nr: usize) -> u8 {
    KIND.get(nr).copied().unwrap_or(kind::FRAME)
}

const fn kinds() -> [u8; crate::stack::NRS] {
    let mut t = [0u8; crate::stack::NRS];
    let mut nr = 0;
    while nr < t.len() {
        let mut k = 0;
        if crate::fast::needs_frame_const(nr) {
            k |= kind::FRAME;
        }
        if temporary_mask_arg(nr).is_some() {
            k |= kind::TMASK;
        }
        if nr == Sysno::clone as usize || nr == Sysno::clone3 as usize || nr == Sysno::vfork as usize {
            k |= kind::CLONE;
        }
        if nr == Sysno::rt_sigprocmask as usize || nr == Sysno::execve as usize || nr == Sysno::execveat as usize {
            k |= kind::MASKING;
        }
        if let Some(e) = strata_syscall_table::entry_const(nr) {
            if !strata_syscall_table::is_passthrough(e.disposition) {
                k |= kind::BOTTOM;
            }
        }
        t[nr] = k;
        nr += 1;
    }
    t
}

/// Whether `bottom` would re-issue call `nr` (arguments `a(0..6)`)
/// unchanged and do nothing after it, told before the call: the fast path
/// then issues it from its entry, as it does a call the bottom does not
/// own (fast.rs). The opens and readlinks of a build (a compile makes a
/// thousand readlinks) are looked at for the few /proc/self files strata
/// answers, and are almost never one.
#[inline]
pub fn bottom_passes(nr: usize, a: impl Fn(usize) -> u64) -> bool {
    match nr {
        n if n == S(Sysno::readlink) => !process::names_own_exe(sys::AT_FDCWD as u64, a(0)),
        n if n == S(Sysno::readlinkat) => !process::names_own_exe(a(0), a(1)),
        n if n == S(Sysno::open) => procfs::passes(a(0)),
        n if n == S(Sysno::openat) => procfs::passes(a(1)),
        _ => false,
    }
}

/// The bottom of the stack: strata's own handling of call `nr`. Returns the
/// result, or None when it replaced the whole register state in `uc`.
pub fn bottom(t: &mut Thread, uc: &mut UContext, nr: usize, a: [u64; 6]) -> Option<isize> {
    let ret: isize = match nr {
        n if n == S(Sysno::rt_sigreturn) => {
            signals::sigreturn(t, uc);
            return None;
        }
        n if n == S(Sysno::rt_sigaction) => signals::sigaction(a),
        n if n == S(Sysno::rt_sigprocmask) => signals::sigprocmask(t, uc, a),
        n if n == S(Sysno::rt_sigpending) => signals::sigpending(t, a),
        n if n == S(Sysno::sigaltstack) => signals::sigaltstack(t, uc, a),
        n if n == S(Sysno::rt_sigsuspend) => with_mask_arg(uc, nr, a, 0),
        n if n == S(Sysno::rt_sigtimedwait) => signals::sigtimedwait(t, uc, a),
        n if n == S(Sysno::signalfd) || n == S(Sysno::signalfd4) => with_mask_arg(uc, nr, a, 1),
        // Without a mask, these wait like poll and epoll_wait.
        n if temporary_mask_arg(n).is_some_and(|i| a[i] == 0) => passthrough(uc, nr, a),
        n if n == S(Sysno::ppoll) => with_mask_arg(uc, nr, a, 3),
        n if n == S(Sysno::epoll_pwait) || n == S(Sysno::epoll_pwait2) => with_mask_arg(uc, nr, a, 4),
        n if n == S(Sysno::pselect6) => pselect6(uc, a),
        n if n == S(Sysno::prctl) && a[0] as usize == sys::PR_SET_SYSCALL_USER_DISPATCH => signals::program_sud(t, a),
        // After these, the lookup behind /proc/self/exe (load::exe) could be
        // refused (a filter) or resolve elsewhere (a new root): do it now.
        n if n == NR_SECCOMP || n == NR_CHROOT || (n == S(Sysno::prctl) && a[0] == PR_SET_SECCOMP) => {
            let _ = crate::load::exe();
            let r = passthrough(uc, nr, a);
            if n != NR_CHROOT && r >= 0 {
                // (A mode or filter now may trap the calls strata issues.)
                signals::note_program_filters();
            }
            r
        }
        n if n == S(Sysno::arch_prctl) => arch_prctl(t, uc, a),
        n if n == S(Sysno::clone) || n == S(Sysno::clone3) || n == S(Sysno::fork) || n == S(Sysno::vfork) => {
            process::clone(t, uc, nr, a)
        }
        n if n == S(Sysno::execve) || n == S(Sysno::execveat) => process::execve(t, uc, nr, a),
        n if n == S(Sysno::exit) => process::exit_thread(t, a[0] as usize, nr),
        n if n == S(Sysno::exit_group) => {
            stack::exit(((a[0] & 0xff) << 8) as i32);
            if t.vfork_child != 0 {
                // The parent frees a vfork child's state when it resumes.
                passthrough(uc, nr, a)
            } else {
                process::exit_thread(t, a[0] as usize, nr)
            }
        }
        n if n == S(Sysno::open) => procfs::open(uc, nr, a[0], a[1], a),
        n if n == S(Sysno::openat) => procfs::open(uc, nr, a[1], a[2], a),
        n if n == S(Sysno::brk) => process::brk(a[0] as usize) as isize,
        n if n == S(Sysno::readlink) => process::readlink(uc, nr, sys::AT_FDCWD as u64, a[0], a[1], a[2], a),
        n if n == S(Sysno::readlinkat) => process::readlink(uc, nr, a[0], a[1], a[2], a[3], a),
        n if n == S(Sysno::mmap) => mmap(uc, a),
        n if n == S(Sysno::munmap) => {
            let r = guard_mem(uc, nr, a, -sys::EINVAL);
            if r == 0 {
                crate::rewrite::forget(a[0] as usize, a[1] as usize);
            }
            r
        }
        n if n == S(Sysno::madvise) => guard_mem(uc, nr, a, -sys::EINVAL),
        n if n == S(Sysno::mprotect) => {
            if a[2] as usize & sys::PROT_WRITE != 0 && !protected(a[0] as usize, a[1] as usize) {
                crate::rewrite::before_write(a[0] as usize, a[1] as usize);
            }
            guard_mem(uc, nr, a, -sys::EACCES)
        }
        n if n == S(Sysno::mremap) => {
            let fixed = a[3] & 2 != 0; // MREMAP_FIXED
            if protected(a[0] as usize, a[1] as usize) || (fixed && protected(a[4] as usize, a[2] as usize)) {
                -sys::EINVAL
            } else {
                passthrough(uc, nr, a)
            }
        }
        _ => passthrough(uc, nr, a),
    };
    Some(ret)
}

/// Re-issues the call unchanged. A call that may block runs with the
/// program's own signal mask so that signals interrupt it (and restart it,
/// under SA_RESTART) exactly as natively; everything else runs with all
/// signals blocked, as the rest of strata's handler does. A signal that
/// interrupts the call is deferred (fast.rs): the kernel delivers it again
/// once strata's handler has returned, at the program's own instruction,
/// and a call the kernel would restart after the handler is restarted from
/// the program's `syscall` (`capture.rs`).
#[inline]
pub fn passthrough(uc: &UContext, nr: usize, a: [u64; 6]) -> isize {
    let t = crate::thread::current();
    if t.in_fast != 0 {
        return crate::fast::passthrough(t, nr, a);
    }
    // Also every call once the program has seccomp filters of its own: one
    // may trap the call strata issues for it (SECCOMP_RET_TRAP), which must
    // reach the program as its own trap (signals::real_sigsys), not find
    // SIGSYS blocked in strata's handler (the kernel would kill).
    if strata_syscall_table::may_block(nr).unwrap_or(true) || signals::program_filters() {
        t.trap_ret = uc.gregs[crate::sys::reg::RIP] as usize;
        t.in_fast = crate::fast::TRAP_BLOCKING;
        let shrunk = shrink_altstack(t, uc);
        sys::set_sigmask(uc.sigmask);
        let r = crate::fast::passthrough(t, nr, a);
        sys::set_sigmask(!0);
        let t = crate::thread::current();
        if let Some(alt) = shrunk {
            crate::thread::set_altstack(&alt);
        }
        t.in_fast = 0;
        r
    } else {
        // SAFETY: the program's own call, re-issued as it made it.
        unsafe { sys::raw6(nr, a.map(|x| x as usize)) }
    }
}

/// Re-issues a call that installs a temporary signal mask (sigsuspend,
/// ppoll, ...): a signal it lets in must run the program's handler under
/// that mask, so the handler runs nested in strata's, on the program's
/// stack as the kernel chooses (strata's handler moves below it meanwhile).
pub fn passthrough_nested(uc: &UContext, nr: usize, a: [u64; 6]) -> isize {
    let args = a.map(|x| x as usize);
    // While this activation waits, a SIGSYS from a program handler that
    // the kernel delivers on another stack must start below it.
    let t = crate::thread::current();
    let saved = t.handler_sp;
    let sp: usize;
    // SAFETY: reads the stack pointer.
    unsafe { core::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    if sp > t.altstack && sp <= t.altstack_hi {
        t.handler_sp = t.handler_sp.min(sp - 512);
    }
    let shrunk = shrink_altstack(t, uc);
    sys::set_sigmask(uc.sigmask);
    // SAFETY: the program's own call, re-issued as it made it.
    let r = unsafe { sys::raw6(nr, args) };
    sys::set_sigmask(!0);
    if let Some(alt) = shrunk {
        crate::thread::set_altstack(&alt);
    }
    crate::thread::current().handler_sp = saved;
    r
}

/// If the kernel put strata's signal frame `uc` on the program's alternate
/// stack (strata then moved to its own stack), a signal during a blocking
/// call would be delivered at the top of that stack, over the frame. Shrinks
/// the real alternate stack to the part below the frame, as if we were still
/// running on it; returns the stack to put back afterwards.
fn shrink_altstack(t: &crate::thread::Thread, uc: &UContext) -> Option<StackT> {
    let alt = t.real_alt;
    let frame = uc as *const UContext as u64;
    if alt.flags & sys::SS_DISABLE == 0 && alt.sp != t.altstack as u64 && frame.wrapping_sub(alt.sp) < alt.size {
        let end = (frame - 8 - 128) & !15;
        let below = StackT {
            sp: alt.sp,
            flags: 0,
            _pad: 0,
            size: end.saturating_sub(alt.sp),
        };
        if below.size as usize >= sys::MINSIGSTKSZ && crate::thread::set_altstack(&below) == 0 {
            return Some(alt);
        }
    }
    None
}

/// A call that installs a temporary signal mask from argument `i`: the
/// program's mask minus SIGSYS, which must stay deliverable.
fn with_mask_arg(uc: &UContext, nr: usize, mut a: [u64; 6], i: usize) -> isize {
    let mut local = 0u64;
    match signals::strip_sigsys(a[i] as usize, &mut local) {
        Ok(p) => a[i] = p as u64,
        Err(e) => return -e,
    }
    passthrough_nested(uc, nr, a)
}

/// Which argument of a waiting call holds the signal mask it installs for
/// its duration (pselect6: the pointer to its { mask, size } pair).
pub const fn temporary_mask_arg(nr: usize) -> Option<usize> {
    if nr == Sysno::ppoll as usize {
        Some(3)
    } else if nr == Sysno::epoll_pwait as usize || nr == Sysno::epoll_pwait2 as usize {
        Some(4)
    } else if nr == Sysno::pselect6 as usize {
        Some(5)
    } else {
        None
    }
}

/// pselect6's sixth argument points at { const sigset_t *ss; size_t len }.
fn pselect6(uc: &UContext, mut a: [u64; 6]) -> isize {
    if a[5] == 0 {
        return passthrough_nested(uc, S(Sysno::pselect6), a);
    }
    let Ok(mut data) = sys::read_user::<[u64; 2]>(a[5] as usize) else {
        return -sys::EFAULT;
    };
    let mut local = 0u64;
    match signals::strip_sigsys(data[0] as usize, &mut local) {
        Ok(p) => data[0] = p as u64,
        Err(e) => return -e,
    }
    a[5] = &data as *const [u64; 2] as u64;
    passthrough_nested(uc, S(Sysno::pselect6), a)
}

/// GS base belongs to strata; the program's value is kept virtually.
fn arch_prctl(t: &mut Thread, uc: &UContext, a: [u64; 6]) -> isize {
    match a[0] as usize {
        sys::ARCH_SET_GS => {
            t.prog_gs = a[1] as usize;
            0
        }
        sys::ARCH_GET_GS => match sys::write_user(a[1] as usize, &t.prog_gs) {
            Ok(()) => 0,
            Err(e) => -e,
        },
        _ => passthrough(uc, S(Sysno::arch_prctl), a),
    }
}

/// strata's own image and its trampoline pools.
fn protected(addr: usize, len: usize) -> bool {
    crate::image::overlaps_image(addr, len) || crate::rewrite::overlaps_pool(addr, len)
}

/// mmap: never over strata's memory; a private file mapping made executable
/// has its syscall sites rewritten before anyone can run it. A MAP_FIXED one
/// (how ld.so maps a library's text) whose file the session has a text
/// image of gets the image in its place, in one mapping.
fn mmap(uc: &UContext, a: [u64; 6]) -> isize {
    let (flags, prot) = (a[3] as usize, a[2] as usize);
    let fixed = flags & (sys::MAP_FIXED | sys::MAP_FIXED_NOREPLACE) != 0;
    let want = sys::PROT_EXEC | sys::PROT_READ;
    let exec_file = prot & want == want && flags & sys::MAP_PRIVATE != 0 && flags & sys::MAP_ANONYMOUS == 0;
    // Flags an image's mapping honours as well (the kernel ignores the
    // last two); others (MAP_POPULATE, MAP_LOCKED, ...) take the usual way.
    let plain = sys::MAP_PRIVATE | sys::MAP_FIXED | sys::MAP_DENYWRITE | sys::MAP_EXECUTABLE;
    if fixed && protected(a[0] as usize, a[1] as usize) {
        return -sys::ENOMEM;
    }
    let mut tried = None;
    if exec_file && flags & sys::MAP_FIXED != 0 && flags & !plain == 0 {
        tried =
            crate::rewrite::map_image_in_place(a[0] as usize, a[1] as usize, prot, a[4] as usize, a[5] as usize, None);
        if tried.is_some_and(|t| t.mapped()) {
            return a[0] as isize;
        }
    }
    let r = passthrough(uc, S(Sysno::mmap), a);
    if r >= 0 {
        if fixed {
            crate::rewrite::forget(r as usize, a[1] as usize);
        }
        if exec_file {
            crate::rewrite::scan_mapping(r as usize, a[1] as usize, prot, a[4] as usize, a[5] as usize, tried);
        }
    }
    r
}

/// Refuses memory calls that would change strata's own image or pools.
fn guard_mem(uc: &UContext, nr: usize, a: [u64; 6], err: isize) -> isize {
    if protected(a[0] as usize, a[1] as usize) {
        return err;
    }
    passthrough(uc, nr, a)
}
