//! Raw system calls and the kernel's x86-64 structures strata-rt touches.
//!
//! This is the only module of the runtime that contains the `syscall`
//! instruction in Rust code (the other instances are the assembly stubs in
//! `asm.rs`). Every instance lies inside strata-rt's text, which is the range
//! Syscall User Dispatch lets through, so these calls go straight to the
//! kernel. Numbers come from the `syscalls` crate; the invocation is written
//! here because strata must re-issue *any* number a program uses, including
//! ones no crate knows about.

use crate::thread::Known;
use core::arch::asm;
pub use syscalls::Sysno;

/// Issues system call `nr` with six arguments; returns the raw kernel result
/// (a negative errno on failure).
///
/// # Safety
/// The call may do anything the kernel allows with the given arguments:
/// the caller vouches for every pointer it passes.
#[inline(always)]
pub unsafe fn raw6(nr: usize, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the caller upholds the syscall's contract; the asm clobbers
    // exactly what the `syscall` instruction does (rax, rcx, r11, memory).
    unsafe {
        asm!("syscall",
            inlateout("rax") nr => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
            in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    ret
}

/// Shorthand for [`raw6`] with a known syscall and fewer arguments.
///
/// # Safety
/// As for [`raw6`].
#[inline(always)]
pub unsafe fn sc(nr: Sysno, args: &[usize]) -> isize {
    let mut a = [0usize; 6];
    a[..args.len()].copy_from_slice(args);
    // SAFETY: forwarded contract.
    unsafe { raw6(nr as usize, a) }
}

pub const EPERM: isize = 1;
pub const ENOENT: isize = 2;
pub const EINTR: isize = 4;
pub const EFAULT: isize = 14;
pub const ENOMEM: isize = 12;
pub const EACCES: isize = 13;
pub const EAGAIN: isize = 11;
pub const EINVAL: isize = 22;
pub const ENOTDIR: isize = 20;
pub const ENAMETOOLONG: isize = 36;

pub const SIGKILL: usize = 9;
pub const SIGSEGV: usize = 11;
pub const SIGSTOP: usize = 19;
pub const SIGSYS: usize = 31;
/// Bit of SIGSYS in a kernel sigset.
pub const SIGSYS_BIT: u64 = 1 << (SIGSYS - 1);

pub const SA_SIGINFO: u64 = 0x4;
pub const SA_ONSTACK: u64 = 0x0800_0000;
pub const SA_NODEFER: u64 = 0x4000_0000;
pub const SA_RESETHAND: u64 = 0x8000_0000;
pub const SA_RESTORER: u64 = 0x0400_0000;
pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

pub const SIG_BLOCK: usize = 0;
pub const SIG_UNBLOCK: usize = 1;
pub const SIG_SETMASK: usize = 2;

pub const SS_ONSTACK: i32 = 1;
pub const SS_DISABLE: i32 = 2;
pub const SS_AUTODISARM: i32 = 1 << 31;
pub const MINSIGSTKSZ: usize = 2048;

pub const PROT_READ: usize = 1;
pub const PROT_WRITE: usize = 2;
pub const PROT_EXEC: usize = 4;
pub const MAP_SHARED: usize = 0x01;
pub const MAP_PRIVATE: usize = 0x02;
pub const MAP_FIXED: usize = 0x10;
pub const MAP_ANONYMOUS: usize = 0x20;
pub const MAP_DENYWRITE: usize = 0x0800;
pub const MAP_EXECUTABLE: usize = 0x1000;
pub const MAP_NORESERVE: usize = 0x4000;
pub const MAP_FIXED_NOREPLACE: usize = 0x10_0000;

pub const O_RDONLY: usize = 0;
pub const O_RDWR: usize = 2;
pub const O_CLOEXEC: usize = 0o2000000;
pub const AT_FDCWD: isize = -100;

pub const CLONE_VM: u64 = 0x100;
pub const CLONE_VFORK: u64 = 0x4000;

pub const PR_SET_NAME: usize = 15;
pub const PR_SET_SYSCALL_USER_DISPATCH: usize = 59;
pub const PR_SYS_DISPATCH_OFF: usize = 0;
pub const PR_SYS_DISPATCH_ON: usize = 1;
pub const PR_SYS_DISPATCH_INCLUSIVE_ON: usize = 2;
pub const SYSCALL_DISPATCH_FILTER_ALLOW: u8 = 0;
pub const SYSCALL_DISPATCH_FILTER_BLOCK: u8 = 1;
/// si_code of a SIGSYS raised by Syscall User Dispatch.
pub const SYS_USER_DISPATCH: i32 = 2;
/// SIGSYS si_code of a seccomp filter's SECCOMP_RET_TRAP.
pub const SYS_SECCOMP: i32 = 1;

pub const ARCH_SET_GS: usize = 0x1001;
pub const ARCH_GET_GS: usize = 0x1004;

/// The kernel's `struct sigaction` on x86-64 (not glibc's).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct KSigaction {
    pub handler: u64,
    pub flags: u64,
    pub restorer: u64,
    pub mask: u64,
}

/// `stack_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct StackT {
    pub sp: u64,
    pub flags: i32,
    pub _pad: i32,
    pub size: u64,
}

impl StackT {
    pub const DISABLED: StackT = StackT {
        sp: 0,
        flags: SS_DISABLE,
        _pad: 0,
        size: 0,
    };
}

/// Register indices in `mcontext.gregs` (the kernel's `struct sigcontext`).
pub mod reg {
    pub const R8: usize = 0;
    pub const R9: usize = 1;
    pub const R10: usize = 2;
    pub const RDI: usize = 8;
    pub const RSI: usize = 9;
    pub const RDX: usize = 12;
    pub const RAX: usize = 13;
    pub const RSP: usize = 15;
    pub const RIP: usize = 16;
    pub const EFL: usize = 17;
}

/// The kernel's `struct ucontext` on x86-64 (304 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UContext {
    pub flags: u64,
    pub link: u64,
    pub stack: StackT,
    pub gregs: [u64; 23],
    pub fpstate: u64,
    pub reserved1: [u64; 8],
    pub sigmask: u64,
}

/// Layout of the kernel's `siginfo_t` for the fields strata uses (128 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SigInfo {
    pub signo: i32,
    pub errno: i32,
    pub code: i32,
    pub _pad: i32,
    /// For SIGSYS: si_call_addr. For kill: pid (low) and uid (high).
    pub f0: u64,
    /// For SIGSYS: si_syscall (low 32 bits) and si_arch (high 32 bits).
    pub f1: u64,
    pub rest: [u64; 12],
}

/// The frame the kernel (or strata) builds for a signal handler: the
/// handler returns to `pretcode`, and rt_sigreturn finds `uc` at the stack
/// pointer. The FPU/xsave area sits above it, pointed to by `uc.fpstate`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RtSigframe {
    pub pretcode: u64,
    pub uc: UContext,
    pub info: SigInfo,
}

/// Offset of `fpx_sw_bytes` inside an fxsave/xsave area.
const FPX_SW_OFFSET: usize = 464;
const FP_XSTATE_MAGIC1: u32 = 0x4650_5853;

/// Size in bytes of the FPU state saved at `fpstate` in a signal frame
/// (including the trailing magic), as the kernel describes it there.
///
/// # Safety
/// `fpstate` must point at a signal frame's FPU area.
pub unsafe fn fpstate_size(fpstate: u64) -> usize {
    // SAFETY: the area is at least 512 bytes (fxsave), the software bytes
    // live inside it.
    unsafe {
        let sw = (fpstate as usize + FPX_SW_OFFSET) as *const u32;
        if sw.read() == FP_XSTATE_MAGIC1 {
            sw.add(1).read() as usize
        } else {
            512
        }
    }
}

/// Typed errors from a raw result.
#[inline]
pub fn check(r: isize) -> Result<usize, isize> {
    if (-4095..0).contains(&r) {
        Err(-r)
    } else {
        Ok(r as usize)
    }
}

/// write(2) of a whole buffer to `fd`, ignoring errors (for diagnostics).
pub fn write_all(fd: usize, mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: `b` is a valid readable buffer of the given length.
        let r = unsafe { sc(Sysno::write, &[fd, b.as_ptr() as usize, b.len()]) };
        if r == -EINTR {
            continue;
        }
        if r <= 0 {
            return;
        }
        b = &b[r as usize..];
    }
}

/// Ends the whole process with `code`.
pub fn exit_group(code: i32) -> ! {
    loop {
        // SAFETY: exit_group takes no pointers.
        unsafe { sc(Sysno::exit_group, &[code as usize]) };
    }
}

pub fn gettid() -> usize {
    // SAFETY: no arguments.
    unsafe { sc(Sysno::gettid, &[]) as usize }
}

/// Our process id: kept in the thread's state (set when the thread starts
/// and in every fork child), so that it costs no system call.
pub fn getpid() -> usize {
    crate::thread::current().pid
}

/// Asks the kernel for the process id.
pub fn getpid_now() -> usize {
    // SAFETY: no arguments.
    unsafe { sc(Sysno::getpid, &[]) as usize }
}

/// Anonymous private mapping; `None` on failure.
pub fn mmap_anon(len: usize, prot: usize) -> Option<usize> {
    // SAFETY: a fresh anonymous mapping at a kernel-chosen address touches no
    // existing memory.
    let r = unsafe {
        sc(
            Sysno::mmap,
            &[0, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, usize::MAX, 0],
        )
    };
    check(r).ok()
}

/// Sets the real signal mask, returning nothing (errors are impossible with a
/// valid pointer).
pub fn set_sigmask(mask: u64) {
    // SAFETY: `mask` is a valid 8-byte sigset on our stack.
    unsafe {
        sc(
            Sysno::rt_sigprocmask,
            &[SIG_SETMASK, &mask as *const u64 as usize, 0, 8],
        )
    };
}

/// The real signal mask.
pub fn sigmask() -> u64 {
    let mut cur = 0u64;
    // SAFETY: the old mask goes into a local; nothing is changed.
    unsafe { sc(Sysno::rt_sigprocmask, &[SIG_BLOCK, 0, &mut cur as *mut u64 as usize, 8]) };
    cur
}

/// Sets the real signal mask to `mask` and returns the one it replaces.
pub fn swap_sigmask(mask: u64) -> u64 {
    let mut old = 0u64;
    // SAFETY: `mask` and the old mask are 8-byte sigsets on our stack.
    unsafe {
        sc(
            Sysno::rt_sigprocmask,
            &[
                SIG_SETMASK,
                &mask as *const u64 as usize,
                &mut old as *mut u64 as usize,
                8,
            ],
        )
    };
    old
}

/// Bounds of the main thread's stack: [lowest address it may grow to, top).
static STACK_LO: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);
static STACK_HI: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Records the main thread's stack: `top` is its highest address in use,
/// `limit` RLIMIT_STACK.
pub fn set_main_stack(top: usize, limit: usize) {
    STACK_HI.store(top, core::sync::atomic::Ordering::Relaxed);
    STACK_LO.store(top.saturating_sub(limit), core::sync::atomic::Ordering::Relaxed);
}

/// The main thread's stack range: (lowest address it may grow to, top).
pub fn main_stack() -> (usize, usize) {
    (
        STACK_LO.load(core::sync::atomic::Ordering::Relaxed),
        STACK_HI.load(core::sync::atomic::Ordering::Relaxed),
    )
}

/// process_vm_readv/writev do not grow the main stack (since Linux 6.5),
/// but the kernel's own copy to a program buffer in not-yet-touched stack
/// pages would. If `addr` is such a page, touch it (a read: the fault
/// extends the stack mapping, exactly as the program's own access would)
/// and say so.
fn grow_stack_to(addr: usize) -> bool {
    let lo = STACK_LO.load(core::sync::atomic::Ordering::Relaxed);
    let hi = STACK_HI.load(core::sync::atomic::Ordering::Relaxed);
    if addr < lo || addr >= hi {
        return false;
    }
    // SAFETY: `addr` lies in the main stack's growth range below its top,
    // where an access extends the stack mapping instead of faulting.
    unsafe { core::ptr::read_volatile(addr as *const u8) };
    true
}

/// Copies `dst.len()` bytes from the program's address `src` without
/// faulting: a bad address gives EFAULT, as the kernel would.
pub fn copy_from_user(dst: &mut [u8], src: usize) -> Result<(), isize> {
    // SAFETY: `dst` is a valid, writable slice.
    unsafe { copy_from_user_raw(dst.as_mut_ptr(), dst.len(), src) }
}

/// [`copy_from_user`] into `len` bytes at `dst`, which need not be
/// initialised (an extension's `PathBuf`).
///
/// # Safety
/// `dst` is valid for writes of `len` bytes.
pub unsafe fn copy_from_user_raw(dst: *mut u8, len: usize, src: usize) -> Result<(), isize> {
    // SAFETY: forwarded contract.
    match unsafe { copy_from_user_once(dst, len, src) } {
        // SAFETY: as above.
        Err(EFAULT) if grow_stack_to(src) => unsafe { copy_from_user_once(dst, len, src) },
        r => r,
    }
}

/// # Safety
/// As [`copy_from_user_raw`].
unsafe fn copy_from_user_once(dst: *mut u8, len: usize, src: usize) -> Result<(), isize> {
    if len == 0 {
        return Ok(());
    }
    if crate::fast::direct_copy_ok() {
        // SAFETY: writes only the `len` bytes at `dst` (contract).
        return unsafe { copy_direct(dst, src as *const u8, len) };
    }
    let known = crate::thread::known(src, len, false);
    if let Known::Reached = known {
        // SAFETY: writes only the `len` bytes at `dst` (contract), from
        // pages of this vfork child's stack an earlier copy reached.
        unsafe { core::ptr::copy_nonoverlapping(src as *const u8, dst, len) };
        return Ok(());
    }
    let local = [dst as usize, len];
    let remote = [src, len];
    // SAFETY: process_vm_readv on our own pid writes only into `dst`, whose
    // bounds we pass; a bad `src` yields an error, never a fault.
    let r = unsafe {
        sc(
            Sysno::process_vm_readv,
            &[getpid(), local.as_ptr() as usize, 1, remote.as_ptr() as usize, 1, 0],
        )
    };
    match check(r) {
        Ok(n) if n == len => {
            known.reached(false);
            Ok(())
        }
        Ok(_) => Err(EFAULT),
        Err(e) if e == EPERM || e == 38 /* ENOSYS */ => Err(EFAULT),
        Err(e) => Err(e),
    }
}

/// The target of the symbolic link `link`, NUL-terminated in `buf` (at most
/// `buf.len() - 1` bytes of it); its length.
pub fn read_link(link: &core::ffi::CStr, buf: &mut [u8]) -> Result<usize, isize> {
    let room = buf.len().saturating_sub(1);
    // SAFETY: `link` is NUL-terminated; readlink writes at most `room`
    // bytes of `buf`.
    let r = unsafe {
        sc(
            Sysno::readlink,
            &[link.as_ptr() as usize, buf.as_mut_ptr() as usize, room],
        )
    };
    let len = check(r)?;
    if let Some(b) = buf.get_mut(len) {
        *b = 0;
    }
    Ok(len)
}

/// Copies `n` bytes from `src` to `dst` directly (`strata_safe_copy`): a
/// fault on the program's side is recovered by the fault guard into
/// EFAULT. Only where SIGSEGV and SIGBUS are deliverable (a blocked fault
/// signal kills the process).
///
/// # Safety
/// strata's side of the copy is valid for `n` bytes.
pub unsafe fn copy_direct(dst: *mut u8, src: *const u8, n: usize) -> Result<(), isize> {
    // SAFETY: per contract; a fault is recovered into 1.
    match unsafe { crate::fast::strata_safe_copy(dst, src, n) } {
        0 => Ok(()),
        _ => Err(EFAULT),
    }
}

/// Copies `src` to the program's address `dst` without faulting.
pub fn copy_to_user(dst: usize, src: &[u8]) -> Result<(), isize> {
    match copy_to_user_once(dst, src) {
        Err(EFAULT) if grow_stack_to(dst) => copy_to_user_once(dst, src),
        r => r,
    }
}

fn copy_to_user_once(dst: usize, src: &[u8]) -> Result<(), isize> {
    if src.is_empty() {
        return Ok(());
    }
    let outside = !crate::image::overlaps_image(dst, src.len());
    if crate::fast::direct_copy_ok() && outside {
        // SAFETY: reads only `src`; the program's `dst` is checked to lie
        // outside strata's image.
        return unsafe { copy_direct(dst as *mut u8, src.as_ptr(), src.len()) };
    }
    let known = if outside {
        crate::thread::known(dst, src.len(), true)
    } else {
        Known::No
    };
    if let Known::Reached = known {
        // SAFETY: reads only `src`; `dst` is on pages of this vfork child's
        // stack an earlier write reached, outside strata's image.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        return Ok(());
    }
    let local = [src.as_ptr() as usize, src.len()];
    let remote = [dst, src.len()];
    // SAFETY: process_vm_writev on our own pid reads only `src`; a bad `dst`
    // yields an error, never a fault.
    let r = unsafe {
        sc(
            Sysno::process_vm_writev,
            &[getpid(), local.as_ptr() as usize, 1, remote.as_ptr() as usize, 1, 0],
        )
    };
    match check(r) {
        Ok(n) if n == src.len() => {
            known.reached(true);
            Ok(())
        }
        _ => Err(EFAULT),
    }
}

/// Plain data: any bit pattern is a valid value.
///
/// # Safety
/// Implement only for types made of integers (and arrays/structs of them).
pub unsafe trait Pod: Copy {}
// SAFETY: integers and arrays and repr(C) structs of integers.
unsafe impl Pod for u8 {}
// SAFETY: as above.
unsafe impl Pod for u64 {}
// SAFETY: as above.
unsafe impl Pod for usize {}
// SAFETY: as above.
unsafe impl<const N: usize> Pod for [u64; N] {}
// SAFETY: as above.
unsafe impl Pod for KSigaction {}
// SAFETY: as above.
unsafe impl Pod for StackT {}
// SAFETY: as above.
unsafe impl Pod for SigInfo {}
// SAFETY: as above.
unsafe impl Pod for RtSigframe {}

/// Reads a plain-old-data value from the program's memory.
pub fn read_user<T: Pod>(addr: usize) -> Result<T, isize> {
    // SAFETY: T is Pod, so all-zero bytes are a valid T.
    let mut v: T = unsafe { core::mem::zeroed() };
    // SAFETY: T is Pod; we view it as bytes to fill it.
    let bytes = unsafe { core::slice::from_raw_parts_mut(&mut v as *mut T as *mut u8, core::mem::size_of::<T>()) };
    copy_from_user(bytes, addr)?;
    Ok(v)
}

/// Writes a plain-old-data value into the program's memory.
pub fn write_user<T: Pod>(addr: usize, v: &T) -> Result<(), isize> {
    // SAFETY: viewing a Copy value as its bytes for the duration of the call.
    let bytes = unsafe { core::slice::from_raw_parts(v as *const T as *const u8, core::mem::size_of::<T>()) };
    copy_to_user(addr, bytes)
}

/// Reads a NUL-terminated string from the program into `buf`; returns its
/// length without the NUL. ENAMETOOLONG if it does not fit.
pub fn read_user_cstr(addr: usize, buf: &mut [u8]) -> Result<usize, isize> {
    if addr == 0 {
        return Err(EFAULT);
    }
    let mut got = 0;
    while got < buf.len() {
        // Read up to the end of the current page so a string that ends just
        // before an unmapped page is still read.
        let a = addr + got;
        let chunk = (4096 - (a & 4095)).min(buf.len() - got);
        copy_from_user(&mut buf[got..got + chunk], a)?;
        if let Some(n) = buf[got..got + chunk].iter().position(|&c| c == 0) {
            return Ok(got + n);
        }
        got += chunk;
    }
    Err(36) // ENAMETOOLONG
}
