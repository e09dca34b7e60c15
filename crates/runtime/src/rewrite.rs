//! Rewriting syscall sites into direct jumps to strata (the fast path).
//!
//! A site is the instruction right before a `syscall`: `mov $NR,%eax` (or
//! another single instruction of at least 5 bytes, strata-patch decides).
//! It becomes `jmp rel32` to a trampoline in a pool within ±2 GiB, which runs
//! the replaced instruction and enters strata (fast.rs). The `syscall` bytes
//! are never changed: a branch straight to them, a kernel restart and every
//! fallback still trap through Syscall User Dispatch, which stays on as the
//! catch-all.
//!
//! When:
//! - **eagerly**, for code no thread can run yet: the program and its
//!   interpreter as strata loads them, and every private file mapping made
//!   executable by `mmap` (ld.so loading libraries, dlopen). Sites come from
//!   decoding whole functions (bounds from `.eh_frame_hdr`).
//! - **lazily**, at the first trap at a site (JIT code, binaries without
//!   unwind tables): after the trap path served the call. With one thread
//!   the whole instruction is written at once; with several, only a
//!   `mov $NR,%eax` site, in the order that keeps every torn state harmless
//!   (immediate bytes first, a core-serializing membarrier, then the opcode:
//!   a thread that runs the old opcode with a mixed immediate reaches the
//!   intact `syscall` with a number >= 512 and the trap path substitutes
//!   the site's number, see `substitute`).
//!
//! How: code is written through /proc/self/mem, which writes into read-only
//! private pages (copying them) without ever making them writable: no page is
//! ever writable and executable. Pools are private anonymous mappings named
//! nowhere; the program cannot unmap or replace them (EINVAL/ENOMEM, as for
//! strata's own image).

use crate::sys::{self, Sysno};
use core::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use strata_patch::{Pattern, Site};

/// 0: off; bit 0: lazy; bit 1: eager.
static MODE: AtomicU8 = AtomicU8::new(0);
pub const LAZY: u8 = 1;
pub const EAGER: u8 = 2;

/// One lock for every change to code, pools and the site table. Held only
/// inside strata with signals blocked or deferred, for bounded work; across
/// fork (process.rs) so a child never inherits a half-done patch.
static LOCK: AtomicUsize = AtomicUsize::new(0);

pub fn lock() {
    while LOCK
        .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
}

pub fn unlock() {
    LOCK.store(0, Ordering::Release);
}

/// Statistics for `--fast-stats` (per process; summed into the session).
pub static PATCHED: AtomicU64 = AtomicU64::new(0);
pub static DECLINED: AtomicU64 = AtomicU64::new(0);

pub fn init(lazy: bool, eager: bool) {
    let mut m = 0;
    if lazy {
        m |= LAZY;
    }
    if eager {
        m |= EAGER;
    }
    if m != 0 && !crate::fast::init() {
        m = 0;
    }
    if m != 0 {
        // The decoder's tables, built now rather than in a signal handler.
        strata_patch::warm_up();
    }
    MODE.store(m, Ordering::Relaxed);
}

pub fn mode() -> u8 {
    MODE.load(Ordering::Relaxed)
}

// ---- the site table ---------------------------------------------------------

/// Entry states.
const DECLINED_SITE: u8 = 1;
const PATCHED_SITE: u8 = 2;
/// Patched while other threads ran (its `syscall` may see mixed numbers).
const LIVE_SITE: u8 = 3;

const TABLE: usize = 1 << 14;
/// Open addressing by the `syscall`'s address: (addr, nr << 8 | state).
static SITES: [[AtomicU64; 2]; TABLE] = [const { [const { AtomicU64::new(0) }; 2] }; TABLE];
static NSITES: AtomicUsize = AtomicUsize::new(0);
/// Some site was patched live: traps need the mixed-number check.
static ANY_LIVE: AtomicU8 = AtomicU8::new(0);

fn slot_of(addr: u64) -> usize {
    (addr.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 50) as usize & (TABLE - 1)
}

fn lookup(addr: u64) -> Option<u64> {
    let mut i = slot_of(addr);
    for _ in 0..TABLE {
        let a = SITES[i][0].load(Ordering::Acquire);
        if a == addr {
            return Some(SITES[i][1].load(Ordering::Acquire));
        }
        if a == 0 {
            return None;
        }
        i = (i + 1) & (TABLE - 1);
    }
    None
}

/// Records a site (under the lock). A full table just stops rewriting.
fn record(addr: u64, nr: u32, state: u8) -> bool {
    if NSITES.load(Ordering::Relaxed) >= TABLE * 3 / 4 {
        return false;
    }
    let mut i = slot_of(addr);
    loop {
        let a = SITES[i][0].load(Ordering::Acquire);
        if a == addr || a == 0 {
            SITES[i][1].store(((nr as u64) << 8) | state as u64, Ordering::Release);
            if a == 0 {
                SITES[i][0].store(addr, Ordering::Release);
                NSITES.fetch_add(1, Ordering::Relaxed);
            }
            return true;
        }
        i = (i + 1) & (TABLE - 1);
    }
}

/// A trap at `sys_addr` with number `nr`: if that `syscall` belongs to a site
/// patched live and `nr` cannot be a real number, it is a thread that ran the
/// old opcode with a torn immediate: the call is the site's own.
pub fn substitute(sys_addr: u64, nr: usize) -> usize {
    if nr < 512 || ANY_LIVE.load(Ordering::Relaxed) == 0 {
        return nr;
    }
    match lookup(sys_addr) {
        Some(v) if v & 0xff == LIVE_SITE as u64 => (v >> 8) as usize,
        _ => nr,
    }
}

/// The program unmapped or replaced [addr, addr+len): sites there are gone.
pub fn forget(addr: usize, len: usize) {
    if NSITES.load(Ordering::Relaxed) == 0 {
        return;
    }
    let (lo, hi) = (addr as u64, addr.saturating_add(len) as u64);
    lock();
    let mut removed = false;
    for e in SITES.iter() {
        let a = e[0].load(Ordering::Relaxed);
        if a >= lo && a < hi {
            // A tombstone: keeps probe chains intact, matches no address.
            e[0].store(u64::MAX, Ordering::Release);
            removed = true;
        }
    }
    let _ = removed;
    unlock();
}

// ---- pools --------------------------------------------------------------------

const POOL_SIZE: usize = 1 << 20;
const MAX_POOLS: usize = 64;
/// Each pool: base, next free byte.
static POOLS: [[AtomicUsize; 2]; MAX_POOLS] = [const { [const { AtomicUsize::new(0) }; 2] }; MAX_POOLS];
static NPOOLS: AtomicUsize = AtomicUsize::new(0);
/// Offsets of the constants at the start of every pool.
const FAST_SLOT: usize = 0;
const NATIVE_SLOT: usize = 8;
const POOL_HEADER: usize = 64;
const REACH: u64 = (1 << 31) - POOL_SIZE as u64;

/// Lowest and highest addresses of any pool (a quick test for
/// `strata_sig_entry`: a PC between them may be in a trampoline).
#[no_mangle]
static STRATA_POOL_LO: AtomicU64 = AtomicU64::new(u64::MAX);
#[no_mangle]
static STRATA_POOL_HI: AtomicU64 = AtomicU64::new(0);

/// Every trampoline: (its address, site start | len << 56). Pools are
/// filled upwards, so within a pool entries come in address order.
const MAX_TRAMPS: usize = 1 << 14;
static TRAMPS: [[AtomicU64; 2]; MAX_TRAMPS] = [const { [const { AtomicU64::new(0) }; 2] }; MAX_TRAMPS];
static NTRAMPS: AtomicUsize = AtomicUsize::new(0);

/// The site whose trampoline holds `pc`: (site start, replaced length,
/// offset of `pc` in the trampoline). Slow; for signal handling only.
pub fn trampoline_at(pc: u64) -> Option<(u64, u64, u64)> {
    if !in_pool(pc) {
        return None;
    }
    let n = NTRAMPS.load(Ordering::Acquire).min(MAX_TRAMPS);
    let mut best: Option<(u64, u64)> = None;
    for e in TRAMPS.iter().take(n) {
        let t = e[0].load(Ordering::Relaxed);
        if t <= pc && best.is_none_or(|(b, _)| t > b) {
            best = Some((t, e[1].load(Ordering::Relaxed)));
        }
    }
    let (t, v) = best?;
    let (start, len) = (v & ((1 << 56) - 1), v >> 56);
    // len + lea (7) + jmp (6)
    (pc - t < len + 13).then_some((start, len, pc - t))
}

/// Does [addr, addr+len) touch a pool? (The program may not unmap them.)
pub fn overlaps_pool(addr: usize, len: usize) -> bool {
    let end = addr.saturating_add(len.max(1));
    POOLS.iter().take(NPOOLS.load(Ordering::Acquire)).any(|p| {
        let b = p[0].load(Ordering::Relaxed);
        b != 0 && addr < b + POOL_SIZE && b < end
    })
}

pub fn in_pool(addr: u64) -> bool {
    overlaps_pool(addr as usize, 1)
}

fn near(a: u64, b: u64) -> bool {
    a.abs_diff(b) < REACH
}

/// A new pool within reach of `site`: free space just below the object (or
/// above), never in the main stack's range.
fn new_pool(site: u64) -> Option<usize> {
    let n = NPOOLS.load(Ordering::Acquire);
    if n >= MAX_POOLS {
        return None;
    }
    let (slo, shi) = sys::main_stack();
    let base = site & !(POOL_SIZE as u64 - 1);
    for k in 1..2048u64 {
        for cand in [
            base.wrapping_sub(k * POOL_SIZE as u64),
            base.wrapping_add(k * POOL_SIZE as u64),
        ] {
            if !near(cand, site) || !(0x10000..0x7fff_ffff_0000).contains(&cand) {
                continue;
            }
            let c = cand as usize;
            if c < shi && c + POOL_SIZE > slo {
                continue;
            }
            // SAFETY: a fresh private mapping where nothing is mapped
            // (MAP_FIXED_NOREPLACE fails rather than replace anything).
            let r = unsafe {
                sys::sc(
                    Sysno::mmap,
                    &[
                        c,
                        POOL_SIZE,
                        sys::PROT_READ | sys::PROT_WRITE,
                        sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_FIXED_NOREPLACE | sys::MAP_NORESERVE,
                        usize::MAX,
                        0,
                    ],
                )
            };
            if r as usize != c {
                if r >= 0 {
                    // An old kernel placed it elsewhere: give it back.
                    // SAFETY: our own new mapping.
                    unsafe { sys::sc(Sysno::munmap, &[r as usize, POOL_SIZE]) };
                }
                continue;
            }
            // SAFETY: our new writable page: the entry addresses.
            unsafe {
                ((c + FAST_SLOT) as *mut u64).write(crate::fast::strata_fast_entry as *const () as u64);
                ((c + NATIVE_SLOT) as *mut u64).write(crate::fast::strata_native_entry as *const () as u64);
                sys::sc(Sysno::mprotect, &[c, POOL_SIZE, sys::PROT_READ | sys::PROT_EXEC]);
            }
            STRATA_POOL_LO.fetch_min(c as u64, Ordering::AcqRel);
            STRATA_POOL_HI.fetch_max((c + POOL_SIZE) as u64, Ordering::AcqRel);
            POOLS[n][0].store(c, Ordering::Release);
            POOLS[n][1].store(c + POOL_HEADER, Ordering::Release);
            NPOOLS.store(n + 1, Ordering::Release);
            return Some(n);
        }
    }
    None
}

/// Space for a trampoline of `len` bytes for `site` (`live`: at an address
/// whose jump displacement keeps torn immediates harmless). Returns the
/// trampoline's address and the pool's base.
fn alloc(site: &Site, len: usize, live: bool) -> Option<(u64, u64)> {
    let fit = |i: usize| -> Option<u64> {
        let base = POOLS[i][0].load(Ordering::Relaxed) as u64;
        let cur = POOLS[i][1].load(Ordering::Relaxed) as u64;
        if base == 0 || !near(base, site.start) || !near(base + POOL_SIZE as u64, site.start) {
            return None;
        }
        let t = if live {
            strata_patch::next_live_p1_addr(site, cur)?
        } else {
            cur
        };
        (t + len as u64 <= base + POOL_SIZE as u64).then_some(t)
    };
    let n = NPOOLS.load(Ordering::Acquire);
    let (i, t) = match (0..n).find_map(|i| fit(i).map(|t| (i, t))) {
        Some(x) => x,
        None => {
            let i = new_pool(site.start)?;
            (i, fit(i)?)
        }
    };
    POOLS[i][1].store((t + len as u64) as usize, Ordering::Relaxed);
    Some((t, POOLS[i][0].load(Ordering::Relaxed) as u64))
}

// ---- writing code ---------------------------------------------------------------

/// /proc/self/mem, open for one batch of writes.
struct Mem(usize);

impl Mem {
    fn open() -> Option<Mem> {
        // SAFETY: a NUL-terminated path constant.
        let fd = unsafe {
            sys::sc(
                Sysno::open,
                &[c"/proc/self/mem".as_ptr() as usize, sys::O_RDWR | sys::O_CLOEXEC, 0],
            )
        };
        (fd >= 0).then_some(Mem(fd as usize))
    }

    fn write(&self, addr: u64, b: &[u8]) -> bool {
        // SAFETY: `b` is a valid buffer; the kernel writes into our own
        // address space at `addr`, which the caller chose.
        let r = unsafe { sys::sc(Sysno::pwrite64, &[self.0, b.as_ptr() as usize, b.len(), addr as usize]) };
        r == b.len() as isize
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        // SAFETY: closing our own descriptor.
        unsafe { sys::sc(Sysno::close, &[self.0]) };
    }
}

/// Whether a static call number may skip strata entirely (no layer wants
/// it, and strata's bottom does not handle it itself).
fn native_ok(nr: u32) -> bool {
    let nr = nr as usize;
    crate::stack::first(nr) == crate::stack::NO_LAYER && !crate::dispatch::bottom_owns(nr)
}

/// Rewrites one site. `live`: other threads may be running this code.
fn patch(mem: &Mem, site: &Site, live: bool) -> bool {
    if let Some(nr) = site.nr {
        if crate::fast::needs_frame(nr as usize) {
            return false;
        }
    }
    if live && !matches!(site.pattern, Pattern::P1) {
        return false;
    }
    let native = site.nr.is_some_and(native_ok);
    let mut tramp = [0u8; 64];
    // The trampoline's length does not depend on its address.
    let Ok(tlen) = strata_patch::trampoline(site, site.start, site.start, &mut tramp) else {
        return false;
    };
    let Some((t, pool)) = alloc(site, tlen, live) else {
        return false;
    };
    let slot = pool + if native { NATIVE_SLOT } else { FAST_SLOT } as u64;
    if strata_patch::trampoline(site, t, slot, &mut tramp).is_err() {
        return false;
    }
    let mut jump = [0u8; 15];
    let Ok(jlen) = strata_patch::jump_bytes(site, t, &mut jump) else {
        return false;
    };
    let k = NTRAMPS.load(Ordering::Relaxed);
    if k >= MAX_TRAMPS || !mem.write(t, &tramp[..tlen]) {
        return false;
    }
    TRAMPS[k][0].store(t, Ordering::Relaxed);
    TRAMPS[k][1].store(site.start | (site.len as u64) << 56, Ordering::Relaxed);
    NTRAMPS.store(k + 1, Ordering::Release);
    if live {
        if !membarrier_ready() || !mem.write(site.start + 1, &jump[1..5]) {
            return false;
        }
        membarrier();
        if !mem.write(site.start, &jump[..1]) {
            return false;
        }
        ANY_LIVE.store(1, Ordering::Relaxed);
    } else if !mem.write(site.start, &jump[..jlen]) {
        return false;
    }
    PATCHED.fetch_add(1, Ordering::Relaxed);
    true
}

const MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE: usize = 1 << 5;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE: usize = 1 << 6;
/// The process that registered for core-serializing membarriers (a fork
/// child must register again).
static MB_PID: AtomicUsize = AtomicUsize::new(0);

fn membarrier_ready() -> bool {
    let pid = sys::getpid();
    if MB_PID.load(Ordering::Relaxed) == pid {
        return true;
    }
    // SAFETY: no pointers.
    let r = unsafe {
        sys::sc(
            Sysno::membarrier,
            &[MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0],
        )
    };
    if r == 0 {
        MB_PID.store(pid, Ordering::Relaxed);
    }
    r == 0
}

fn membarrier() {
    // SAFETY: no pointers; every thread of ours serializes its instruction
    // stream before it next runs user code.
    unsafe { sys::sc(Sysno::membarrier, &[MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0]) };
}

// ---- lazy: at a trap ------------------------------------------------------------

/// The `syscall` at `sys_addr` trapped with `eax` (and was served): rewrite
/// its site if that is safe.
pub fn after_trap(sys_addr: u64, eax: u32) {
    if mode() & LAZY == 0 || eax >= 512 || crate::fast::needs_frame(eax as usize) {
        return;
    }
    if lookup(sys_addr).is_some() {
        return;
    }
    if crate::image::in_text(sys_addr as usize) || in_pool(sys_addr) {
        return;
    }
    let mut code = [0u8; 17];
    if sys_addr < 15 || sys::copy_from_user(&mut code, sys_addr as usize - 15).is_err() {
        return;
    }
    let (mut before, mut after) = ([0u8; 15], [0u8; 2]);
    before.copy_from_slice(&code[..15]);
    after.copy_from_slice(&code[15..]);
    lock();
    if lookup(sys_addr).is_none() {
        let state = match strata_patch::classify_trap(&before, &after, sys_addr, eax) {
            // Without the function's start, only a `mov $NR` whose number
            // the trap confirmed is certain to be one instruction (a longer
            // instruction found by decoding backwards may straddle a
            // boundary); the others wait for eager scanning.
            Ok(site)
                if matches!(site.pattern, Pattern::P1 | Pattern::P1W) && code_is_private(site.start, sys_addr + 2) =>
            {
                let live = crate::thread::live_count() > 1;
                match Mem::open() {
                    Some(mem) if patch(&mem, &site, live) => {
                        if live {
                            LIVE_SITE
                        } else {
                            PATCHED_SITE
                        }
                    }
                    _ => DECLINED_SITE,
                }
            }
            _ => DECLINED_SITE,
        };
        if state == DECLINED_SITE {
            DECLINED.fetch_add(1, Ordering::Relaxed);
        }
        record(sys_addr, eax, state);
    }
    unlock();
}

/// Is [lo, hi) inside one private, executable, not writable mapping other
/// than the vDSO? (Read from /proc/self/maps.)
fn code_is_private(lo: u64, hi: u64) -> bool {
    let mut ok = false;
    crate::procfs::for_each_mapping(&mut |m| {
        if m.start <= lo && hi <= m.end {
            ok = m.perms[0] == b'r' && m.perms[1] != b'w' && m.perms[2] == b'x' && m.perms[3] == b'p' && !m.special;
            return false;
        }
        true
    });
    ok
}

// ---- eager: code mapped from a file -------------------------------------------

const PT_LOAD: u32 = 1;
const PT_GNU_EH_FRAME: u32 = 0x6474_e550;
const PF_X: u32 = 1;

/// The file mapping [addr, addr+len) at file offset `off` of `fd` was just
/// made (private, executable, readable) and no thread runs it yet: rewrite
/// every site its functions hold.
pub fn scan_mapping(addr: usize, len: usize, fd: usize, off: usize) {
    if mode() & EAGER == 0 {
        return;
    }
    let mut eh = [0u8; 64];
    if pread(fd, &mut eh, 0) != 64 || eh[..4] != *b"\x7fELF" || eh[4] != 2 {
        return;
    }
    let phoff = u64::from_le_bytes(eh[32..40].try_into().unwrap_or_default()) as usize;
    let phnum = u16::from_le_bytes([eh[56], eh[57]]) as usize;
    if phnum == 0 || phnum > 64 {
        return;
    }
    let mut ph = [0u8; 64 * 56];
    let phlen = phnum * 56;
    if pread(fd, &mut ph[..phlen], phoff) != phlen as isize {
        return;
    }
    let field =
        |i: usize, at: usize| u64::from_le_bytes(ph[i * 56 + at..i * 56 + at + 8].try_into().unwrap_or_default());
    let word =
        |i: usize, at: usize| u32::from_le_bytes(ph[i * 56 + at..i * 56 + at + 4].try_into().unwrap_or_default());
    let mut bias = None;
    let mut ehf = None;
    for i in 0..phnum {
        let (ty, flags, offset, vaddr, filesz) = (word(i, 0), word(i, 4), field(i, 8), field(i, 16), field(i, 32));
        if ty == PT_LOAD && flags & PF_X != 0 && offset & !4095 == off as u64 {
            bias = Some((addr as u64).wrapping_sub(vaddr & !4095));
        }
        if ty == PT_GNU_EH_FRAME {
            ehf = Some((offset, vaddr, filesz));
        }
    }
    let (Some(bias), Some((eoff, evaddr, esize))) = (bias, ehf) else {
        return;
    };
    let mut st = [0u64; 18];
    // SAFETY: fstat into a local buffer of the kernel's struct stat size.
    if unsafe { sys::sc(Sysno::fstat, &[fd, st.as_mut_ptr() as usize]) } != 0 {
        return;
    }
    let fsize = st[6] as usize;
    let len = len.min(fsize.saturating_sub(off));
    if esize == 0 || esize > 16 << 20 || len == 0 {
        return;
    }
    let buf_len = (esize as usize + 4095) & !4095;
    let Some(buf) = sys::mmap_anon(buf_len, sys::PROT_READ | sys::PROT_WRITE) else {
        return;
    };
    // SAFETY: our new mapping of buf_len >= esize bytes.
    let hdr = unsafe { core::slice::from_raw_parts_mut(buf as *mut u8, esize as usize) };
    if pread(fd, hdr, eoff as usize) == esize as isize {
        if let Some(table) = strata_patch::EhFrameHdr::parse(hdr, evaddr.wrapping_add(bias)) {
            // SAFETY: the file mapping was just made readable, and `len` is
            // clamped to the file's size (no SIGBUS past its end).
            let text = unsafe { core::slice::from_raw_parts(addr as *const u8, len) };
            scan_text(text, addr as u64, &table);
        }
    }
    // SAFETY: unmapping our scratch buffer.
    unsafe { sys::sc(Sysno::munmap, &[buf, buf_len]) };
}

fn scan_text(text: &[u8], base: u64, table: &strata_patch::EhFrameHdr) {
    let Some(mem) = Mem::open() else {
        return;
    };
    lock();
    let end = base + text.len() as u64;
    let mut last = u64::MAX;
    strata_patch::find_syscall_bytes(text, &mut |off| {
        let Some((start, next)) = table.containing(base + off as u64) else {
            return;
        };
        if start == last || start < base || start >= end {
            return;
        }
        last = start;
        let fend = next.unwrap_or(end).min(end);
        let code = &text[(start - base) as usize..(fend - base) as usize];
        strata_patch::scan_function(code, start, &mut |site| {
            let sys_addr = site.start + site.len as u64;
            if lookup(sys_addr).is_none() {
                let ok = patch(&mem, &site, false);
                record(
                    sys_addr,
                    site.nr.unwrap_or(0),
                    if ok { PATCHED_SITE } else { DECLINED_SITE },
                );
            }
        });
    });
    unlock();
}

fn pread(fd: usize, buf: &mut [u8], off: usize) -> isize {
    // SAFETY: `buf` is a valid writable buffer.
    unsafe { sys::sc(Sysno::pread64, &[fd, buf.as_mut_ptr() as usize, buf.len(), off]) }
}
