//! The runtime calls strata-patch in a signal handler, where it must not allocate. iced-x86
//! allocates its decoder tables once, on first use ([`warm_up`]); after that nothing may.
//! A counting global allocator checks it. (Test-only `unsafe`: the `GlobalAlloc` impl.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use strata_patch::*;

struct Counting;

thread_local! {
    /// Allocations made by this thread: other test threads do not disturb the count.
    static ALLOCS: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

// SAFETY: every request goes to the system allocator unchanged; only counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set((c.get().0 + 1, c.get().1 + layout.size())));
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from System.alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn take() -> (usize, usize) {
    ALLOCS.with(|c| c.replace((0, 0)))
}

#[test]
fn nothing_allocates_after_warm_up() {
    // Everything built up front: only the calls under test run between the two counts.
    let mut code = vec![
        0x48, 0x8b, 0x05, 0, 1, 0, 0, 0x0f, 0x05, 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05,
    ];
    code.extend_from_slice(&[0x74, 0xf7, 0xc3]); // je 9: the second site's start, allowed
    let mut hdr = vec![1, 0x1b, 0x03, 0x3b, 0, 0, 0, 0, 1, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0];
    hdr.extend_from_slice(&[0; 8]);
    let before = [
        0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0x4c, 0x8b, 0x4c, 0x24, 0x08,
    ];
    let p1 = [
        0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xb8, 0x27, 0, 0, 0,
    ];
    let read = [
        0x80, 0x3d, 0xd4, 0x6e, 0x0f, 0, 0, 0x74, 0x15, 0x31, 0xc0, 0x0f, 0x05, 0xc3,
    ];
    // P4: `call; nopl` before __read_nocancel (`xor %eax,%eax; syscall; ret`).
    let prev = [0xe8, 0, 1, 0, 0, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0];
    let nocancel = [0x31, 0xc0, 0x0f, 0x05, 0xc3];
    take();
    warm_up();
    let (n, bytes) = take();

    let mut sites = 0;
    scan_function(&code, 0x40_0000, &mut |site| {
        let mut out = [0; 64];
        let mut jmp = [0; 15];
        sites += trampoline(&site, 0x50_0000, 0x50_0000, &mut out).is_ok() as usize;
        sites += jump_bytes(&site, 0x50_0000, &mut jmp).is_ok() as usize;
    });
    let mut declines = 0;
    scan_function_with_declines(&code, 0x40_0000, &mut |_, r| declines += r.is_err() as usize);
    let p2 = classify_trap(&before, &[0x0f, 0x05], 0x40_1000, 1);
    let p1 = classify_trap(&p1, &[0x0f, 0x05], 0x40_1000, 0x27);
    let eager = classify_in_function(&code, 0x40_0000, 0x40_0007);
    let mut found = 0;
    find_syscall_bytes(&code, &mut |_| found += 1);
    let h = EhFrameHdr::parse(&hdr, 0x1000).map(|h| h.containing(0x1010));
    let live = p1.map(|s| next_live_p1_addr(&s, 0x40_0000));
    // P3: glibc's read (cmpb $0,x(%rip); je; xor %eax,%eax; syscall), scanned and relocated.
    let mut p3 = None;
    scan_function(&read, 0x40_0000, &mut |site| {
        let mut out = [0; 64];
        let n = trampoline(&site, 0x50_0000, 0x50_0000, &mut out);
        let offsets = n.map(|n| (0..n as u64).filter_map(|o| site_offset(site.lens, o)).count());
        p3 = Some((site.pattern, site.nr, offsets));
    });
    let mut p4 = None;
    scan_function_padded(
        &nocancel,
        0x40_0000 + prev.len() as u64,
        Some((&prev, 0x40_0000)),
        &mut |site| {
            let mut out = [0; 64];
            let mut jmp = [0; 15];
            let n = trampoline(&site, 0x50_0000, 0x50_0000, &mut out);
            let short = jump_bytes(&site, 0x50_0000, &mut jmp);
            let pad = pad_jump_bytes(&site, 0x50_0000);
            p4 = Some((site.pattern, site.pad, n.is_ok() && short.is_ok() && pad.is_ok()));
        },
    );
    let mut p4_declines = 0;
    scan_function_padded_with_declines(&nocancel, 0x40_0000, Some((&prev, 0x3f_0000)), &mut |_, r| {
        p4_declines += (r == Err(Decline::Padding)) as usize
    });
    assert_eq!(take(), (0, 0), "allocated after warm_up");
    // (Printing only now: the test harness's output capture allocates.)
    println!("warm_up: {n} allocations, {bytes} bytes (iced's decoder tables)");

    assert_eq!((sites, declines, found), (4, 0, 2));
    assert!(p2.is_ok() && p1.is_ok() && eager.is_ok());
    assert_eq!(h, Some(Some((0x1010, None))));
    assert!(live.unwrap().is_some());
    assert_eq!(p3, Some((Pattern::P3, Some(0), Ok(5))));
    assert_eq!(p4, Some((Pattern::P4, 0x40_0005, true)));
    assert_eq!(p4_declines, 1);
}
