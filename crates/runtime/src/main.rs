//! strata-rt: strata's in-process runtime.
//!
//! The launcher execs this binary with the program's argv and environment
//! (plus the launch configuration). It loads the program itself, turns on
//! Syscall User Dispatch with its own text as the only exempt range, and
//! jumps to the program. From then on every system call the program makes
//! traps into `capture::strata_on_sigsys`, in this same process.
//!
//! # Rules for code in this crate
//!
//! This code runs inside the traced program, often in a signal handler that
//! interrupted it at an arbitrary instruction. Therefore:
//!
//! 1. **No libc.** The program's libc may be in the middle of a call, holding
//!    its locks; strata never calls into it. System calls are raw (`sys.rs`).
//! 2. **No allocation and no blocking lock in signal context.** The only
//!    allocator is a fixed, lock-free bump arena for the tables iced-x86
//!    builds once, on first use; state lives in statics, in the per-thread `Thread`, or in
//!    mappings strata makes with mmap. The only lock (brk)
//!    is a short spin lock that never waits on another thread's signal.
//! 3. **Own stacks.** strata's handler runs on its own alternate signal stack
//!    per thread (or the program's, when the program set one), never deeper
//!    into the program's stack than the kernel itself would go.
//! 4. **Per-thread state through GS base**, which x86-64 Linux programs do
//!    not use; the program's arch_prctl(ARCH_SET_GS) is virtualized.
//! 5. **Program memory is read and written with process_vm_readv/writev**
//!    (`sys::copy_from_user`), so a bad pointer from the program yields
//!    EFAULT, as from the kernel, instead of crashing strata.
//! 6. **Every `unsafe` block says why it is sound** (`// SAFETY:`), and
//!    panics abort the process with a message: there is no unwinding here.
#![no_std]
#![no_main]
#![deny(clippy::undocumented_unsafe_blocks)]

mod asm;
mod builtin;
mod capture;
mod config;
mod dispatch;
mod dso;
mod fast;
mod image;
mod load;
mod mem;
mod out;
mod process;
mod procfs;
mod rewrite;
mod seccomp;
mod signals;
mod stack;
mod sys;
mod textimage;
mod thread;

use core::fmt::Write;

/// The runtime has no heap in signal context (rule 2). Two dependencies
/// link `alloc`: the `object` crate (the ELF parsing strata does never
/// allocates) and iced-x86, whose decoder builds its tables once, on first
/// use: the first scan of loaded code (`rewrite::decode_sites`) or the first
/// site rewritten after a trap (`rewrite::after_trap`, in strata's SIGSYS
/// handler, where every signal but a fault is blocked, so no strata code it
/// interrupted can be mid-allocation). A process whose sites all come from
/// the session's site cache never builds them.
/// The arena is bumped with a compare-and-swap, no lock.
/// This allocator hands out memory from a fixed arena by bumping a pointer
/// (no lock, nothing is freed) and fails when it is used up, so a stray
/// allocation can never take a lock or grow without bound.
struct Arena;

const ARENA_SIZE: usize = 1 << 20;
#[repr(align(4096))]
struct ArenaBytes(#[allow(dead_code)] [u8; ARENA_SIZE]);
#[link_section = ".bss.big.arena"]
static mut ARENA: ArenaBytes = ArenaBytes([0; ARENA_SIZE]);
static ARENA_USED: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

// SAFETY: hands out disjoint, suitably aligned ranges of the arena; returning
// null is the documented failure.
unsafe impl core::alloc::GlobalAlloc for Arena {
    unsafe fn alloc(&self, l: core::alloc::Layout) -> *mut u8 {
        use core::sync::atomic::Ordering;
        let base = core::ptr::addr_of_mut!(ARENA) as usize;
        let mut cur = ARENA_USED.load(Ordering::Relaxed);
        loop {
            let start = (base + cur).next_multiple_of(l.align()) - base;
            let Some(end) = start.checked_add(l.size()).filter(|&e| e <= ARENA_SIZE) else {
                return core::ptr::null_mut();
            };
            match ARENA_USED.compare_exchange_weak(cur, end, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return (base + start) as *mut u8,
                Err(now) => cur = now,
            }
        }
    }
    unsafe fn dealloc(&self, _: *mut u8, _: core::alloc::Layout) {}
}

#[global_allocator]
static HEAP: Arena = Arena;

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    if stack::in_layer() {
        // A built-in extension panicked: name it and the call, fail closed.
        let mut m = out::Line::new();
        let _ = write!(m, "panicked: {}", info.message());
        stack::fail(m.as_bytes());
    }
    let mut l = out::Line::new();
    let _ = writeln!(l, "strata-rt: internal error: {}", info.message());
    if let Some(loc) = info.location() {
        let _ = writeln!(l, "  at {}:{}", loc.file(), loc.line());
    }
    l.emit();
    sys::exit_group(125)
}

/// First Rust code to run, on the kernel's stack: claims the main thread's
/// state and returns the top of its strata stack, where `_start` moves for
/// the rest of the start-up (asm.rs).
#[no_mangle]
pub extern "C" fn strata_rt_stack() -> usize {
    touch_small_bss();
    thread::claim_main()
}

extern "C" {
    /// The bounds of our small statics' section, `.bss` (big-bss.ld).
    static strata_small_bss_lo: u8;
    static strata_small_bss_hi: u8;
}

/// Writes a zero into every page of `.bss` before anything reads it: they
/// are all used at each start, and a page first read maps the shared zero
/// page, then faults again at its first write.
fn touch_small_bss() {
    // Addresses of linker-defined symbols, not reads.
    let lo = core::ptr::addr_of!(strata_small_bss_lo) as usize;
    let hi = core::ptr::addr_of!(strata_small_bss_hi) as usize;
    let mut page = lo & !4095;
    while page < hi {
        let at = page.max(lo);
        // SAFETY: a byte of .bss, still zero, which nothing else uses yet
        // (single-threaded, the first code to run): writing a zero there
        // changes nothing but the page's mapping. Volatile: an idempotent
        // store or atomic add of zero may be optimized into a read.
        unsafe { core::ptr::write_volatile(at as *mut u8, 0) };
        page += 4096;
    }
}

/// Notes where our image lies, then starts the program: called by `_start`
/// on the main thread's strata stack.
///
/// # Safety
/// Called once by `_start` with the kernel's initial stack pointer and our
/// ELF header.
#[no_mangle]
pub unsafe extern "C" fn strata_rt_start(sp: *const usize, base: usize) -> ! {
    // SAFETY: per contract.
    unsafe {
        image::init(base);
        rt_main(sp)
    }
}

/// # Safety
/// `sp` is the kernel's initial stack pointer.
unsafe fn rt_main(sp: *const usize) -> ! {
    // SAFETY: the kernel's initial stack layout: argc, argv[], NULL, envp[], NULL, auxv.
    let (argc, argv, envp) = unsafe {
        let argc = *sp;
        let argv = sp.add(1);
        (argc, argv, argv.add(argc + 1))
    };
    let mut nenv = 0;
    // SAFETY: envp is NULL-terminated.
    while unsafe { *envp.add(nenv) } != 0 {
        nenv += 1;
    }
    // SAFETY: auxv follows the envp terminator.
    let auxv = unsafe { envp.add(nenv + 1) } as *const u64;
    let mut found = None;
    for i in 0..nenv {
        // SAFETY: each env pointer is a NUL-terminated string: compared
        // byte by byte up to the first difference (a NUL differs), measured
        // only when it is ours.
        let p = unsafe { *envp.add(i) } as *const u8;
        let name = strata_proto::ENV_VAR.iter().chain(b"=");
        // SAFETY: as above; no byte past a NUL is read.
        if name.enumerate().all(|(k, &c)| unsafe { *p.add(k) } == c) {
            let skip = strata_proto::ENV_VAR.len() + 1;
            // SAFETY: as above.
            found = Some((i, unsafe { cstr(p.add(skip)) }));
            break;
        }
    }
    let Some((idx, value)) = found else {
        out::Line::new()
            .str("strata-rt: this is strata's in-process runtime; run programs with `strata run -- PROGRAM`\n")
            .emit();
        sys::exit_group(2);
    };
    let cfg = match strata_proto::Config::decode(value) {
        Ok(c) => c,
        Err(e) => {
            out::Line::new().str("strata-rt: ").str(e.message()).str("\n").emit();
            sys::exit_group(2);
        }
    };
    // SAFETY: single-threaded start.
    if let Err(e) = unsafe { config::init(&cfg, auxv_string(auxv, load::AT_EXECFN)) } {
        out::Line::new()
            .str("strata-rt: cannot read the launch configuration: ")
            .str(out::strerror(e))
            .str("\n")
            .emit();
        sys::exit_group(2);
    }
    stack::init(config::session_cstr(), config::spec());
    rewrite::init(
        cfg.flags & strata_proto::FLAG_REWRITE_LAZY != 0,
        cfg.flags & strata_proto::FLAG_REWRITE_EAGER != 0,
    );
    let si = load::StartInfo {
        kernel_sp: sp as usize,
        argc,
        argv,
        envp,
        auxv,
        skip_env: Some(idx),
        program: cfg.program,
    };
    // SAFETY: single-threaded start with the kernel's stack intact.
    unsafe { load::start(&si) }
}

/// The string auxiliary vector entry `ty` points at, if the kernel gave one.
fn auxv_string(auxv: *const u64, ty: u64) -> Option<&'static [u8]> {
    let mut i = 0;
    loop {
        // SAFETY: the kernel's auxv is (type, value) pairs ending with AT_NULL.
        let (t, v) = unsafe { (*auxv.add(2 * i), *auxv.add(2 * i + 1)) };
        match t {
            0 => return None,
            // SAFETY: the kernel's strings on the initial stack, which the
            // loader leaves in place.
            t if t == ty && v != 0 => return Some(unsafe { cstr(v as *const u8) }),
            _ => i += 1,
        }
    }
}

/// # Safety
/// `p` points at a NUL-terminated string that lives for the whole run.
pub(crate) unsafe fn cstr(p: *const u8) -> &'static [u8] {
    let mut n = 0;
    // SAFETY: per contract.
    unsafe {
        while *p.add(n) != 0 {
            n += 1;
        }
        core::slice::from_raw_parts(p, n)
    }
}
