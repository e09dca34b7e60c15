//! strata-rt's own image: relocating it at start, and where it lies.

use crate::sys;
use core::sync::atomic::{AtomicUsize, Ordering};

static TEXT_LO: AtomicUsize = AtomicUsize::new(0);
static TEXT_HI: AtomicUsize = AtomicUsize::new(0);
static IMAGE_LO: AtomicUsize = AtomicUsize::new(0);
static IMAGE_HI: AtomicUsize = AtomicUsize::new(0);
/// Our PT_LOAD segments, page-rounded: the image range can have holes
/// between them (a segment starting on a new page), where the kernel may
/// place the program's mappings.
const MAX_SEGS: usize = 8;
static SEGS: [[AtomicUsize; 2]; MAX_SEGS] = [const { [const { AtomicUsize::new(0) }; 2] }; MAX_SEGS];

const DT_NULL: u64 = 0;
const DT_RELA: u64 = 7;
const DT_RELASZ: u64 = 8;
const DT_RELR: u64 = 36;
const R_X86_64_NONE: u64 = 0;
const R_X86_64_RELATIVE: u64 = 8;

/// Applies our own R_X86_64_RELATIVE relocations (we are a static PIE and
/// nobody else will). Runs before any global data is read, so it uses only
/// its arguments and locals, and cannot panic.
///
/// # Safety
/// `dynamic` is our _DYNAMIC and `base` our load address; called once,
/// first thing, single-threaded.
#[inline(never)]
pub unsafe fn relocate(dynamic: *const u64, base: usize) {
    let mut rela = 0usize;
    let mut relasz = 0usize;
    let mut d = dynamic;
    // SAFETY: the dynamic array is terminated by DT_NULL; entries are
    // (tag, value) pairs of u64.
    unsafe {
        loop {
            let tag = *d;
            let val = *d.add(1);
            if tag == DT_NULL {
                break;
            }
            if tag == DT_RELA {
                rela = base + val as usize;
            } else if tag == DT_RELASZ {
                relasz = val as usize;
            } else if tag == DT_RELR {
                // Packed relocations are not produced by our link flags.
                sys::exit_group(127);
            }
            d = d.add(2);
        }
        let mut off = 0;
        while off + 24 <= relasz {
            let r = (rela + off) as *const u64;
            let where_ = *r as usize;
            let ty = *r.add(1) & 0xffff_ffff;
            let addend = *r.add(2) as usize;
            if ty == R_X86_64_RELATIVE {
                *((base + where_) as *mut usize) = base.wrapping_add(addend);
            } else if ty != R_X86_64_NONE {
                sys::exit_group(127);
            }
            off += 24;
        }
    }
}

/// Records where our image and its text lie, from our own program headers.
///
/// # Safety
/// `base` points at our ELF header (mapped by the kernel).
pub unsafe fn init(base: usize) {
    // SAFETY: reading our own ELF and program headers, mapped read-only.
    unsafe {
        let phoff = *((base + 32) as *const u64) as usize;
        let phnum = *((base + 56) as *const u16) as usize;
        let (mut tlo, mut thi, mut ilo, mut ihi) = (usize::MAX, 0, usize::MAX, 0);
        let mut nseg = 0usize;
        for i in 0..phnum {
            let ph = (base + phoff + i * 56) as *const u32;
            if *ph != 1 {
                continue; // not PT_LOAD
            }
            let flags = *ph.add(1);
            let vaddr = *(ph.add(4) as *const u64) as usize;
            let memsz = *(ph.add(10) as *const u64) as usize;
            let lo = (base + vaddr) & !4095;
            let hi = (base + vaddr + memsz + 4095) & !4095;
            ilo = ilo.min(lo);
            ihi = ihi.max(hi);
            if let Some(seg) = SEGS.get(nseg.min(MAX_SEGS - 1)) {
                // (More than MAX_SEGS segments: the last slot covers the rest.)
                let l = seg[0].load(Ordering::Relaxed);
                seg[0].store(if l == 0 { lo } else { l.min(lo) }, Ordering::Relaxed);
                seg[1].store(seg[1].load(Ordering::Relaxed).max(hi), Ordering::Relaxed);
            }
            nseg += 1;
            if flags & 1 != 0 {
                tlo = tlo.min(lo);
                thi = thi.max(hi);
            }
        }
        TEXT_LO.store(tlo, Ordering::Relaxed);
        TEXT_HI.store(thi, Ordering::Relaxed);
        IMAGE_LO.store(ilo, Ordering::Relaxed);
        IMAGE_HI.store(ihi, Ordering::Relaxed);
    }
}

/// Start and length of strata's executable text: the range Syscall User
/// Dispatch lets through.
pub fn text_range() -> (usize, usize) {
    let lo = TEXT_LO.load(Ordering::Relaxed);
    (lo, TEXT_HI.load(Ordering::Relaxed) - lo)
}

/// Is `addr` inside strata's text?
pub fn in_text(addr: usize) -> bool {
    let (lo, len) = text_range();
    addr.wrapping_sub(lo) < len
}

/// Does [addr, addr+len) touch strata's image?
pub fn overlaps_image(addr: usize, len: usize) -> bool {
    let lo = IMAGE_LO.load(Ordering::Relaxed);
    let hi = IMAGE_HI.load(Ordering::Relaxed);
    let end = addr.saturating_add(len.max(1));
    if !(addr < hi && end > lo) {
        return false;
    }
    // Inside the range: a segment, or a hole between two.
    SEGS.iter().any(|s| {
        let (l, h) = (s[0].load(Ordering::Relaxed), s[1].load(Ordering::Relaxed));
        h != 0 && addr < h && end > l
    })
}
