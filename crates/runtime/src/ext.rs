//! The hook point: every system call the program makes passes through
//! `before` and `after` here, whatever strata does with it in between.
//!
//! Issue #3 replaces this with the extension stack over the strata ABI. For
//! now two built-in extensions exist: `null` (nothing at all: the cost of the
//! hook itself) and `count` (calls, errors and time per syscall, summed over
//! the whole process tree in a file shared with the launcher, like `strace -c`).

use crate::sys::{self, Sysno};
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use strata_proto::counts;

static COUNTS: AtomicPtr<AtomicU64> = AtomicPtr::new(core::ptr::null_mut());
static TSC_KHZ: AtomicU64 = AtomicU64::new(0);

/// Maps the shared counter file. A file that cannot be mapped disables
/// counting with a message rather than stopping the program.
pub fn init(flags: u32, count_path: &[u8]) {
    if flags & strata_proto::FLAG_EXT_COUNT == 0 {
        return;
    }
    let mut path = crate::load::Path::new();
    if path.set(count_path).is_err() {
        return;
    }
    // SAFETY: NUL-terminated path.
    let fd = unsafe {
        sys::sc(
            Sysno::openat,
            &[sys::AT_FDCWD as usize, path.ptr(), sys::O_RDWR | sys::O_CLOEXEC, 0],
        )
    };
    let Ok(fd) = sys::check(fd) else {
        crate::out::file_error(count_path, "count: cannot open the counter file; counting is off");
        return;
    };
    // SAFETY: a shared mapping of the counter file at a kernel-chosen address.
    let m = unsafe {
        sys::sc(
            Sysno::mmap,
            &[
                0,
                counts::FILE_SIZE,
                sys::PROT_READ | sys::PROT_WRITE,
                sys::MAP_SHARED,
                fd,
                0,
            ],
        )
    };
    // SAFETY: closing our own descriptor; the mapping stays.
    unsafe { sys::sc(Sysno::close, &[fd]) };
    if let Ok(m) = sys::check(m) {
        // SAFETY: the file has MAGIC in its first 8 bytes if the launcher made it.
        let magic = unsafe { *(m as *const [u8; 8]) };
        if magic != counts::MAGIC {
            crate::out::file_error(count_path, "count: not a strata counter file; counting is off");
            return;
        }
        let p = m as *mut AtomicU64;
        // SAFETY: the word lies inside the mapping.
        TSC_KHZ.store(
            unsafe { (*p.add(counts::TSC_KHZ_WORD)).load(Ordering::Relaxed) },
            Ordering::Relaxed,
        );
        COUNTS.store(p, Ordering::Release);
    }
}

#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no side effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Called before strata acts on a call. Returns a token for `after`.
#[inline(always)]
pub fn before(_nr: usize) -> u64 {
    if COUNTS.load(Ordering::Relaxed).is_null() {
        0
    } else {
        rdtsc()
    }
}

/// Called once the call's result is known.
#[inline(always)]
pub fn after(nr: usize, ret: isize, token: u64) {
    let p = COUNTS.load(Ordering::Relaxed);
    if p.is_null() {
        return;
    }
    let ticks = rdtsc().wrapping_sub(token);
    let khz = TSC_KHZ.load(Ordering::Relaxed);
    let t = if khz == 0 {
        ticks
    } else {
        (ticks as u128 * 1_000_000 / khz as u128) as u64
    };
    // SAFETY: word() stays inside the mapped file.
    unsafe {
        (*p.add(counts::word(nr, 0))).fetch_add(1, Ordering::Relaxed);
        if (-4095..0).contains(&ret) {
            (*p.add(counts::word(nr, 1))).fetch_add(1, Ordering::Relaxed);
        }
        (*p.add(counts::word(nr, 2))).fetch_add(t, Ordering::Relaxed);
        (*p.add(counts::TRAPPED_WORD)).fetch_add(1, Ordering::Relaxed);
    }
}

/// A call that never returns (exit, exit_group, a successful execve) is
/// counted before it is made.
pub fn noreturn(nr: usize) {
    after(nr, 0, before(nr));
}
