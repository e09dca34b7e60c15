//! strata-rt's own image: where it lies (linked at a fixed address, build.rs).

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
            // Absolute addresses: build.rs links us at a fixed one.
            let lo = vaddr & !4095;
            let hi = (vaddr + memsz + 4095) & !4095;
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
        // The slow exit's page, after the text, must trap (fast.rs).
        let stub = crate::fast::strata_slow_stub as *const () as usize;
        if (tlo..thi).contains(&stub) {
            thi = stub;
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
