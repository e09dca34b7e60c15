//! Calls that create, replace or end threads and processes, and the few
//! per-process facts strata keeps for the program (its break, its exe).

use crate::config;
use crate::dispatch::passthrough;
use crate::load::{self, Path};
use crate::sys::{self, reg, RtSigframe, Sysno, UContext};
use crate::thread::{self, Thread};
use core::sync::atomic::{AtomicUsize, Ordering};

/// clone, clone3, fork, vfork.
///
/// Without CLONE_VM the child is a copy of us, sitting in this very handler:
/// it turns capture back on (the kernel does not inherit it) and returns 0.
/// With CLONE_VM (threads, vfork, posix_spawn) the child gets its own state
/// and signal stack, starts in `strata_thread_boot`, and resumes the program
/// from a copy of the parent's frame with rax = 0 and its new stack.
pub fn clone(t: &mut Thread, uc: &mut UContext, nr: usize, a: [u64; 6]) -> isize {
    // The new stack's range, when clone3 gives it whole; for clone, which
    // gives only its top, the 16 pages that end at it (`Thread::known_lo`: a
    // page is copied to directly only once the kernel reached it; glibc's
    // posix_spawn gives a stack of at least 16 pages, so they are its own).
    let mut stack = (0u64, 0u64);
    let (flags, newsp) = if nr == Sysno::fork as usize {
        (17u64, 0u64)
    } else if nr == Sysno::vfork as usize {
        (sys::CLONE_VM | sys::CLONE_VFORK | 17, 0)
    } else if nr == Sysno::clone as usize {
        if a[1] != 0 {
            stack = ((a[1].wrapping_sub(1) & !4095).saturating_sub(15 * 4096), a[1]);
        }
        (a[0], a[1])
    } else {
        // clone3(struct clone_args *, size): flags at 0, stack at 40, size at 48.
        if a[1] < 64 {
            return -sys::EINVAL;
        }
        match sys::read_user::<[u64; 8]>(a[0] as usize) {
            Ok(ca) => {
                if ca[5] != 0 {
                    stack = (ca[5], ca[5].wrapping_add(ca[6]));
                }
                (ca[0], stack.1)
            }
            Err(e) => return -e,
        }
    };
    crate::stack::note_multi_task();
    if flags & sys::CLONE_VM == 0 {
        // No child may inherit a half-done rewrite (or a held lock). With
        // no other thread there is none (and the parent does not write the
        // lock's page after the fork: a copy-on-write fault fewer).
        let others = thread::live_count() > 1;
        if others {
            crate::rewrite::lock();
        }
        // SAFETY: the program's own fork-like call.
        let r = unsafe { sys::raw6(nr, a.map(|x| x as usize)) };
        if others {
            crate::rewrite::unlock();
        }
        if r == 0 {
            t.tid = sys::gettid();
            t.pid = sys::getpid_now();
            // Pending signals are not inherited (nor those strata held
            // for the parent during a fast call).
            t.vsigsys_pending = 0;
            for s in t.saved_rt.iter_mut() {
                s.signo = 0;
            }
            thread::after_fork(t);
            t.forget_vfork_stack();
            crate::rewrite::after_fork(t);
            crate::load::after_fork();
            if thread::enable_capture(t).is_err() {
                sys::exit_group(126);
            }
            if newsp != 0 {
                uc.gregs[reg::RSP] = newsp;
            }
            crate::stack::task_start(t.tid, false);
        }
        return r;
    }
    // On the fast path the child starts from the frame `fast::full_frame`
    // built for this call; none was built if the arguments changed under us
    // (clone3's flags re-read with CLONE_VM): refused rather than started
    // from a stale state.
    if t.in_fast != 0 && core::mem::take(&mut t.fast_full) == 0 {
        return -sys::EINVAL;
    }
    let Some(c) = thread::claim() else {
        return -sys::EAGAIN;
    };
    // SAFETY: we own `c` until the child starts.
    let child = unsafe { &mut *c };
    // SAFETY: the boot area of `c` is BOOT_SIZE bytes, page-aligned, unused.
    unsafe { prepare_boot_frame(child, uc, newsp) };
    child.prog_altstack = if flags & sys::CLONE_VFORK != 0 {
        t.prog_altstack
    } else {
        sys::StackT::DISABLED
    };
    child.vsigsys_blocked = t.vsigsys_blocked;
    child.prog_gs = t.prog_gs;
    child.vfork_child = u8::from(flags & sys::CLONE_VFORK != 0);
    if flags & sys::CLONE_VFORK != 0 && stack.0 < stack.1 {
        // Its own stack while the parent waits (Thread::known_lo).
        (child.known_lo, child.known_hi) = (stack.0 as usize & !4095, stack.1 as usize);
    }
    // On the fast path the program's mask is the real one: the child must
    // start with every signal blocked (it has no state of its own until
    // strata_thread_boot sets it up; its frame's mask then becomes real).
    let fast_mask = (t.in_fast != 0).then(|| sys::swap_sigmask(!0));
    // SAFETY: strata_clone_vm issues the program's clone; the child never
    // returns into this function (it starts in strata_thread_boot).
    let r = unsafe {
        crate::asm::strata_clone_vm(
            nr,
            a[0] as usize,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as usize,
            c,
        )
    };
    if let Some(old) = fast_mask {
        sys::set_sigmask(old);
    }
    if r < 0 || (r > 0 && flags & sys::CLONE_VFORK != 0) {
        // A vfork child has exec'd or exited by the time we resume: its
        // state is free again, and the buffer of its exec (in our memory,
        // which it shared) is ours to unmap.
        let [buf, len] = core::mem::take(&mut child.exec_buf);
        if buf != 0 {
            // SAFETY: the child's exec buffer, which nothing uses any more.
            unsafe { sys::sc(Sysno::munmap, &[buf, len]) };
        }
        thread::release(c);
    }
    r
}

/// Copies the parent's signal frame into the child's boot area, as the frame
/// the child will rt_sigreturn through.
///
/// # Safety
/// `c.boot_frame` points at BOOT_SIZE bytes owned by `c`.
unsafe fn prepare_boot_frame(c: &mut Thread, uc: &UContext, newsp: u64) {
    const FP_OFF: usize = crate::fast::BOOT_FP_OFF;
    let frame = c.boot_frame as *mut RtSigframe;
    // SAFETY: per contract; the parent's frame is valid.
    unsafe {
        let fsize = if uc.fpstate != 0 {
            sys::fpstate_size(uc.fpstate)
        } else {
            0
        };
        let fsize = fsize.min(thread::BOOT_SIZE - FP_OFF);
        if fsize != 0 {
            core::ptr::copy_nonoverlapping(uc.fpstate as *const u8, (c.boot_frame + FP_OFF) as *mut u8, fsize);
        }
        core::ptr::copy_nonoverlapping(uc as *const UContext, core::ptr::addr_of_mut!((*frame).uc), 1);
        let cu = &mut (*frame).uc;
        cu.gregs[reg::RAX] = 0;
        if newsp != 0 {
            cu.gregs[reg::RSP] = newsp;
        }
        cu.fpstate = if fsize != 0 { (c.boot_frame + FP_OFF) as u64 } else { 0 };
        cu.stack = thread::own_altstack(c);
        cu.flags &= !(crate::signals::UC_STRATA_FRAME as u64);
    }
}

/// exit(2) of one thread, or exit_group(2): free the state as it goes.
pub fn exit_thread(t: &mut Thread, code: usize, nr: usize) -> ! {
    // The process's own counts go with its last thread, whichever call
    // ends it (a program may end with exit: its only thread's).
    let last = nr == Sysno::exit_group as usize || crate::thread::live_count() <= 1;
    crate::rewrite::flush_stats(t, last);
    // Nothing more for this thread (on the fast path the program's mask is
    // the real one: a signal for the process stays for another thread).
    sys::set_sigmask(!0);
    // SAFETY: the state is ours; nothing runs on it after the exit.
    unsafe { crate::asm::strata_exit_thread(t, code, nr) }
}

/// execve and execveat: the kernel's checks first, so that a bad target
/// fails here with the kernel's errno; then strata-rt itself is exec'd with
/// the program's argv and environment plus the launch configuration, and
/// loads the new image with capture on from its first instruction.
pub fn execve(t: &Thread, uc: &UContext, nr: usize, a: [u64; 6]) -> isize {
    if !config::follow_exec() {
        // Not followed: strata cannot know whether the kernel's exec will
        // succeed, so the layers hear of it as it is issued.
        crate::stack::exec_commit(nr, a);
        return passthrough(uc, nr, a);
    }
    let is_at = nr == Sysno::execveat as usize;
    let (dirfd, path_p, argv, envp, flags) = if is_at {
        (a[0] as i64 as isize, a[1], a[2], a[3], a[4])
    } else {
        (sys::AT_FDCWD, a[0], a[1], a[2], 0)
    };
    let mut path = Path::new();
    if let Err(e) = resolve_path(dirfd, path_p as usize, flags, &mut path) {
        return -e;
    }
    let interp_checked = match load::check_exec(&path, 0) {
        Ok(c) => c,
        Err(e) => return -e,
    };
    // Count the program's environment.
    let mut nenv = 0usize;
    if envp != 0 {
        loop {
            match sys::read_user::<u64>(envp as usize + nenv * 8) {
                Ok(0) => break,
                Ok(_) => nenv += 1,
                Err(e) => return -e,
            }
            if nenv > 1 << 20 {
                return -7; // E2BIG
            }
        }
    }
    let cfg_len = config::encoded_len(path.bytes());
    let env_bytes = (nenv + 2) * 8;
    let total = env_bytes + cfg_len + 1;
    // The environment array and the configuration: on this stack when they
    // fit (a vfork child's stack is the parent's memory, already touched by
    // the children before it), else in a mapping of their own (`mapped`),
    // which a vfork child's parent unmaps once the exec has replaced it.
    let mut small = [0u64; EXEC_BUF_WORDS];
    let mapped = if total <= EXEC_BUF_WORDS * 8 {
        None
    } else {
        let Some(b) = sys::mmap_anon(total, sys::PROT_READ | sys::PROT_WRITE) else {
            return -sys::ENOMEM;
        };
        Some(b)
    };
    let unmap = || {
        if let Some(b) = mapped {
            // SAFETY: unmapping our own buffer.
            unsafe { sys::sc(Sysno::munmap, &[b, total]) };
        }
    };
    let buf = mapped.unwrap_or(small.as_mut_ptr() as usize);
    // SAFETY: `buf` is `total` bytes of our own: the fresh mapping, or
    // `small`, which is at least that long and unused otherwise.
    let mem = unsafe { core::slice::from_raw_parts_mut(buf as *mut u8, total) };
    let (envs, cfg) = mem.split_at_mut(env_bytes);
    // The new image's mask goes in its configuration: the exec itself runs
    // with every signal blocked (as strata's handler does; on the fast path
    // a signal arriving meanwhile is deferred, blocked), so that a signal
    // arriving while strata prepares it stays pending for the new image,
    // which the new runtime unblocks to the program's mask (with SIGSYS
    // really blocked if the program blocked it: the new runtime turns that
    // back into a virtual block).
    let vsys = if t.vsigsys_blocked != 0 { sys::SIGSYS_BIT } else { 0 };
    let Some(n) = config::encode_env(path.bytes(), uc.sigmask | vsys, interp_checked, cfg) else {
        unmap();
        return -36;
    };
    cfg[n] = 0;
    let envs = envs.as_mut_ptr() as *mut u64;
    if envp != 0 {
        // SAFETY: `envs` has room for nenv + 2 pointers.
        let dst = unsafe { core::slice::from_raw_parts_mut(envs as *mut u8, nenv * 8) };
        if let Err(e) = sys::copy_from_user(dst, envp as usize) {
            unmap();
            return -e;
        }
    }
    // SAFETY: inside the buffer.
    unsafe {
        *envs.add(nenv) = cfg.as_ptr() as u64;
        *envs.add(nenv + 1) = 0;
    }
    crate::stack::exec_commit(nr, a);
    let rt = config::runtime_path();
    let old = sys::swap_sigmask(!0);
    crate::fast::requeue_saved(crate::thread::current(), !0);
    crate::rewrite::flush_stats(crate::thread::current(), true);
    if let Some(b) = mapped {
        // A vfork child's parent unmaps it once the exec has replaced the child.
        crate::thread::current().exec_buf = [b, total];
    }
    // SAFETY: execve of strata-rt with the program's argv and our env array.
    let r = unsafe { sys::sc(Sysno::execve, &[rt as usize, argv as usize, envs as usize]) };
    sys::set_sigmask(old);
    unmap();
    crate::thread::current().exec_buf = [0, 0];
    r
}

/// Words of an exec's environment array and configuration kept on the
/// stack: a build's environment (a few dozen variables) and a policy's
/// configuration fit; a larger one gets a mapping.
const EXEC_BUF_WORDS: usize = 512;

/// The file an execve/execveat names, as a path strata-rt can open after the
/// exec (descriptors may be close-on-exec). The name is read straight into
/// `out`: this runs at every exec, and every page of a frame is touched at
/// its entry (stack probes).
fn resolve_path(dirfd: isize, path_p: usize, flags: u64, out: &mut Path) -> Result<(), isize> {
    // PATH_MAX bytes and the NUL, or ENAMETOOLONG.
    let n = sys::read_user_cstr(path_p, &mut out.buf)?;
    out.len = n;
    if is_own_exe_link(out.bytes()) {
        // /proc/self/exe is strata-rt; the program means its own file.
        return out.set(config::exe().bytes());
    }
    if out.bytes().first() == Some(&b'/') || dirfd == sys::AT_FDCWD {
        return if n == 0 { Err(sys::ENOENT) } else { Ok(()) };
    }
    resolve_at(dirfd, flags, out)
}

/// `out`, a relative name (or none), made a path through the directory
/// descriptor `dirfd` (or naming the descriptor itself).
#[inline(never)]
fn resolve_at(dirfd: isize, flags: u64, out: &mut Path) -> Result<(), isize> {
    const AT_EMPTY_PATH: u64 = 0x1000;
    let mut link = Path::new();
    let len = load::fd_name(dirfd as usize, &mut link).map_err(|_| 9isize /* EBADF */)?;
    if out.len == 0 {
        if flags & AT_EMPTY_PATH == 0 {
            return Err(sys::ENOENT);
        }
        return out.set(&link.buf[..len]);
    }
    link.join(out.bytes())?;
    out.set(link.bytes())
}

static BRK_LOCK: AtomicUsize = AtomicUsize::new(0);

/// brk(addr): the program break, kept by strata after the loaded program.
pub fn brk(addr: usize) -> usize {
    while BRK_LOCK
        .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
    // SAFETY: guarded by BRK_LOCK; set once by the loader before.
    let (start, cur) = unsafe { (load::BRK_START, load::BRK_CUR) };
    let mut result = cur;
    if addr >= start {
        let old_end = strata_loader::page_up(cur as u64) as usize;
        let new_end = strata_loader::page_up(addr as u64) as usize;
        let ok = if new_end > old_end {
            // SAFETY: a fresh anonymous mapping that may not replace anything.
            let r = unsafe {
                sys::sc(
                    Sysno::mmap,
                    &[
                        old_end,
                        new_end - old_end,
                        sys::PROT_READ | sys::PROT_WRITE,
                        sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_FIXED_NOREPLACE,
                        usize::MAX,
                        0,
                    ],
                )
            };
            match sys::check(r) {
                Ok(p) if p == old_end => true,
                Ok(p) => {
                    // SAFETY: an old kernel placed it elsewhere: undo.
                    unsafe { sys::sc(Sysno::munmap, &[p, new_end - old_end]) };
                    false
                }
                Err(_) => false,
            }
        } else {
            if new_end < old_end {
                // SAFETY: returning the top of the break area.
                unsafe { sys::sc(Sysno::munmap, &[new_end, old_end - new_end]) };
            }
            true
        };
        if ok {
            // SAFETY: guarded by BRK_LOCK.
            unsafe { load::BRK_CUR = addr };
            result = addr;
        }
    }
    BRK_LOCK.store(0, Ordering::Release);
    result
}

/// readlink/readlinkat: /proc/self/exe names the program, not strata-rt.
pub fn readlink(uc: &UContext, nr: usize, dirfd: u64, path_p: u64, buf: u64, size: u64, a: [u64; 6]) -> isize {
    if !names_own_exe(dirfd, path_p) {
        return passthrough(uc, nr, a);
    }
    if size as i64 <= 0 {
        return -sys::EINVAL;
    }
    let exe = config::exe();
    let len = exe.len.min(size as usize);
    match sys::copy_to_user(buf as usize, &exe.buf[..len]) {
        Ok(()) => len as isize,
        Err(e) => -e,
    }
}

/// Whether readlinkat(dirfd, path at `path_p`) asks for the process's own
/// exe link (an absolute /proc path; anything else `readlink` re-issues
/// unchanged, dispatch::bottom_passes).
#[inline]
pub fn names_own_exe(dirfd: u64, path_p: u64) -> bool {
    let mut raw = [0u8; 64];
    let Ok(n) = sys::read_user_cstr(path_p as usize, &mut raw) else {
        return false;
    };
    let p = &raw[..n];
    let absolute = p.first() == Some(&b'/');
    (absolute || dirfd as i64 == sys::AT_FDCWD as i64) && is_own_exe_link(p)
}

fn is_own_exe_link(p: &[u8]) -> bool {
    if p == b"/proc/self/exe" || p == b"/proc/thread-self/exe" {
        return true;
    }
    let Some(rest) = p.strip_prefix(b"/proc/") else {
        return false;
    };
    let Some(num) = rest.strip_suffix(b"/exe") else {
        return false;
    };
    let mut v = 0usize;
    for &c in num {
        if !c.is_ascii_digit() {
            return false;
        }
        v = v.wrapping_mul(10).wrapping_add((c - b'0') as usize);
    }
    !num.is_empty() && v == sys::getpid()
}
