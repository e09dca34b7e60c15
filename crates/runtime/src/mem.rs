//! The memory functions the compiler expects (there is no libc to provide
//! them). Written with `rep movsb`/`rep stosb` so the compiler cannot turn
//! them back into calls to themselves.

use core::arch::asm;

/// # Safety
/// Standard memcpy contract: non-overlapping valid ranges of `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // Short copies (most of them: a formatter's pieces of text, small
    // structs) with two overlapping loads and stores: `rep movsb` has a
    // start-up cost of tens of cycles that a 2-byte copy would pay in full.
    if n <= 16 {
        // SAFETY: per the memcpy contract, [src, src+n) and [dst, dst+n) are
        // valid; each access below lies inside them (the pairs overlap when
        // n is not twice the access size). Unaligned accesses are allowed.
        unsafe {
            if n >= 8 {
                let (a, b) = (
                    (src as *const u64).read_unaligned(),
                    (src.add(n - 8) as *const u64).read_unaligned(),
                );
                (dst as *mut u64).write_unaligned(a);
                (dst.add(n - 8) as *mut u64).write_unaligned(b);
            } else if n >= 4 {
                let (a, b) = (
                    (src as *const u32).read_unaligned(),
                    (src.add(n - 4) as *const u32).read_unaligned(),
                );
                (dst as *mut u32).write_unaligned(a);
                (dst.add(n - 4) as *mut u32).write_unaligned(b);
            } else if n > 0 {
                let (a, b, c) = (src.read(), src.add(n / 2).read(), src.add(n - 1).read());
                dst.write(a);
                dst.add(n / 2).write(b);
                dst.add(n - 1).write(c);
            }
        }
        return dst;
    }
    // SAFETY: per the memcpy contract.
    unsafe {
        asm!("rep movsb", inout("rcx") n => _, inout("rdi") dst => _, inout("rsi") src => _, options(nostack, preserves_flags));
    }
    dst
}

/// # Safety
/// Standard memmove contract: valid ranges of `n` bytes, may overlap.
#[no_mangle]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize) <= (src as usize) || (dst as usize) >= (src as usize).wrapping_add(n) {
        // SAFETY: forward copy is safe when dst is below src or disjoint.
        return unsafe { memcpy(dst, src, n) };
    }
    // SAFETY: backward copy with the direction flag, restored after.
    unsafe {
        asm!("std", "rep movsb", "cld",
            inout("rcx") n => _, inout("rdi") dst.add(n - 1) => _, inout("rsi") src.add(n - 1) => _,
            options(nostack));
    }
    dst
}

/// # Safety
/// Standard memset contract: a valid range of `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    // Short fills with overlapping stores, as in memcpy.
    if n <= 32 {
        let w = u64::from(c as u8) * 0x0101_0101_0101_0101;
        // SAFETY: per the memset contract, [dst, dst+n) is valid; each store
        // below lies inside it. Unaligned stores are allowed.
        unsafe {
            if n >= 16 {
                (dst as *mut u64).write_unaligned(w);
                (dst.add(8) as *mut u64).write_unaligned(w);
                (dst.add(n - 16) as *mut u64).write_unaligned(w);
                (dst.add(n - 8) as *mut u64).write_unaligned(w);
            } else if n >= 8 {
                (dst as *mut u64).write_unaligned(w);
                (dst.add(n - 8) as *mut u64).write_unaligned(w);
            } else if n >= 4 {
                (dst as *mut u32).write_unaligned(w as u32);
                (dst.add(n - 4) as *mut u32).write_unaligned(w as u32);
            } else if n > 0 {
                dst.write(c as u8);
                dst.add(n / 2).write(c as u8);
                dst.add(n - 1).write(c as u8);
            }
        }
        return dst;
    }
    // SAFETY: per the memset contract.
    unsafe {
        asm!("rep stosb", inout("rcx") n => _, inout("rdi") dst => _, in("al") c as u8, options(nostack, preserves_flags));
    }
    dst
}

/// # Safety
/// Standard memcmp contract.
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: within the `n` valid bytes of both ranges.
        let (x, y) = unsafe { (core::ptr::read_volatile(a.add(i)), core::ptr::read_volatile(b.add(i))) };
        if x != y {
            return x as i32 - y as i32;
        }
        i += 1;
    }
    0
}

/// # Safety
/// As memcmp.
#[no_mangle]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { memcmp(a, b, n) }
}

/// # Safety
/// `s` points at a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn strlen(s: *const u8) -> usize {
    let mut n = 0;
    // SAFETY: per contract; volatile so the loop is not turned into a call
    // to strlen itself.
    while unsafe { core::ptr::read_volatile(s.add(n)) } != 0 {
        n += 1;
    }
    n
}

/// The precompiled `alloc` library references the unwinding personality
/// routine; with panic = "abort" nothing unwinds, so it is never called.
#[no_mangle]
pub extern "C" fn rust_eh_personality() {}
