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
use crate::textimage::Found;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
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
/// Text mappings scanned, and those whose sites came from the site cache.
pub static SCANNED: AtomicU64 = AtomicU64::new(0);
pub static CACHED: AtomicU64 = AtomicU64::new(0);
/// Text mappings taken from a text image, and images written.
pub static IMAGED: AtomicU64 = AtomicU64::new(0);
pub static IMAGES: AtomicU64 = AtomicU64::new(0);
/// The per-process site counters and the session words they are summed into.
static SITE_COUNTERS: [(&AtomicU64, usize); 6] = [
    (&PATCHED, strata_proto::counts::PATCHED_WORD),
    (&DECLINED, strata_proto::counts::DECLINED_WORD),
    (&SCANNED, strata_proto::counts::SCANNED_WORD),
    (&CACHED, strata_proto::counts::CACHED_WORD),
    (&IMAGED, strata_proto::counts::IMAGED_WORD),
    (&IMAGES, strata_proto::counts::IMAGES_WORD),
];

/// Adds the fast-path counters of thread `t` (all live threads with
/// `all`, plus this process's site counts) to the session file, and zeroes
/// them: at a thread's exit, the process's exit, and before an exec.
pub fn flush_stats(t: &mut crate::thread::Thread, all: bool) {
    use strata_proto::counts;
    let Some(w) = crate::stack::counters() else {
        return;
    };
    let mut add = |t: &mut crate::thread::Thread| {
        w[counts::FAST_WORD].fetch_add(core::mem::take(&mut t.fast_calls), Ordering::Relaxed);
        w[counts::NATIVE_WORD].fetch_add(core::mem::take(&mut t.native_calls), Ordering::Relaxed);
        w[counts::TRAP_WORD].fetch_add(core::mem::take(&mut t.trap_calls), Ordering::Relaxed);
    };
    if all {
        crate::thread::for_each_live(&mut add);
        for (c, word) in SITE_COUNTERS {
            w[word].fetch_add(c.swap(0, Ordering::Relaxed), Ordering::Relaxed);
        }
    } else {
        add(t);
    }
}

/// In a fork child: the counts so far are the parent's.
pub fn after_fork(t: &mut crate::thread::Thread) {
    t.fast_calls = 0;
    t.native_calls = 0;
    t.trap_calls = 0;
    for (c, _) in SITE_COUNTERS {
        c.store(0, Ordering::Relaxed);
    }
}

pub fn init(lazy: bool, eager: bool) {
    let mut m = 0;
    if lazy {
        m |= LAZY;
    }
    if eager {
        m |= EAGER;
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
/// Restored to its original bytes because the program made its page
/// writable; may be rewritten again at its next trap (and may still see
/// mixed numbers from threads that ran it meanwhile).
const RETIRED_SITE: u8 = 4;

/// Open addressing by the `syscall`'s address: (addr, nr << 8 | state), in
/// tiers of growing size, each filled to 3/4 before the next is used. A
/// process's few hundred sites stay in the first tier's few pages: a single
/// table of the whole capacity spread them over all of its 64 pages, and each
/// page first touched costs a fault (two: a read maps the zero page, the
/// write copies it) at every exec.
/// Entries are never moved or removed (`forget` leaves tombstones), so an
/// address lives in one tier for good and readers need no lock.
const TIERS: [usize; 3] = [1 << 10, 1 << 12, 1 << 14];
#[link_section = ".bss.big.sites0"]
static SITES0: [[AtomicU64; 2]; TIERS[0]] = [const { [const { AtomicU64::new(0) }; 2] }; TIERS[0]];
#[link_section = ".bss.big.sites1"]
static SITES1: [[AtomicU64; 2]; TIERS[1]] = [const { [const { AtomicU64::new(0) }; 2] }; TIERS[1]];
#[link_section = ".bss.big.sites2"]
static SITES2: [[AtomicU64; 2]; TIERS[2]] = [const { [const { AtomicU64::new(0) }; 2] }; TIERS[2]];
/// Entries (tombstones included) per tier.
static NSITES: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];
/// Regions that hold every `syscall` address ever recorded, [lo, hi) each
/// (`note_region`): `forget` and `before_write` scan the whole table,
/// thousands of entries, and skip it for a range that meets none of them
/// (most munmaps and mprotects). The lowest and highest
/// site alone would not do: anonymous memory between two libraries, which
/// allocators and JITs unmap and re-protect often, lies between them.
const REGIONS: usize = 32;
static REGION: [[AtomicU64; 2]; REGIONS] = [const { [AtomicU64::new(0), AtomicU64::new(0)] }; REGIONS];
static NREGIONS: AtomicUsize = AtomicUsize::new(0);
/// Sites this close to a region join it.
const REGION_SLACK: u64 = 1 << 21;

/// Widens the regions to cover [lo, hi) (under the lock): the region it
/// is near, a new one, or, when all are taken, the nearest.
fn note_region(lo: u64, hi: u64) {
    let n = NREGIONS.load(Ordering::Relaxed).min(REGIONS);
    let gap = |r: &[AtomicU64; 2]| {
        let (a, b) = (r[0].load(Ordering::Relaxed), r[1].load(Ordering::Relaxed));
        a.saturating_sub(hi).max(lo.saturating_sub(b))
    };
    let near = REGION[..n].iter().enumerate().min_by_key(|(_, r)| gap(r));
    let r = match near {
        Some((_, r)) if gap(r) <= REGION_SLACK || n == REGIONS => r,
        _ => {
            let r = &REGION[n];
            r[0].store(lo, Ordering::Relaxed);
            r[1].store(hi, Ordering::Relaxed);
            NREGIONS.store(n + 1, Ordering::Release);
            return;
        }
    };
    r[0].fetch_min(lo, Ordering::Relaxed);
    r[1].fetch_max(hi, Ordering::Relaxed);
}

/// Whether [lo, hi) meets a region that may hold sites.
fn may_hold_sites(lo: u64, hi: u64) -> bool {
    let n = NREGIONS.load(Ordering::Acquire).min(REGIONS);
    REGION[..n]
        .iter()
        .any(|r| lo < r[1].load(Ordering::Relaxed) && hi > r[0].load(Ordering::Relaxed))
}

/// Some site was patched live: traps need the mixed-number check.
static ANY_LIVE: AtomicU8 = AtomicU8::new(0);

fn tier(k: usize) -> &'static [[AtomicU64; 2]] {
    match k {
        0 => &SITES0,
        1 => &SITES1,
        _ => &SITES2,
    }
}

/// The tiers that hold any entry (untouched ones are never read: a read
/// would fault their pages in).
fn used_tiers() -> impl Iterator<Item = &'static [[AtomicU64; 2]]> {
    (0..TIERS.len())
        .filter(|&k| NSITES[k].load(Ordering::Acquire) != 0)
        .map(tier)
}

/// Fibonacci hashing: the product's top bits (`size` is a power of two).
fn slot_of(addr: u64, size: usize) -> usize {
    (addr.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - size.trailing_zeros())) as usize
}

/// Where `addr` is in table `t`: Ok(slot) if there, Err(the empty slot that
/// ends its probe chain) if not, Err(None) if the table is full.
fn probe(t: &[[AtomicU64; 2]], addr: u64) -> Result<usize, Option<usize>> {
    let mut i = slot_of(addr, t.len());
    for _ in 0..t.len() {
        let a = t[i][0].load(Ordering::Acquire);
        if a == addr {
            return Ok(i);
        }
        if a == 0 {
            return Err(Some(i));
        }
        i = (i + 1) & (t.len() - 1);
    }
    Err(None)
}

fn lookup(addr: u64) -> Option<u64> {
    if let Some((p, i)) = overlay_find(addr) {
        // SAFETY: a live overlay's table, mapped for good (`adopt_image`).
        let e = unsafe { &overlay_sites(p)[i] };
        return Some(((e[3] as u32 as u64) << 8) | (e[0] >> 40) & 0xff);
    }
    used_tiers().find_map(|t| probe(t, addr).ok().map(|i| t[i][1].load(Ordering::Acquire)))
}

/// Records a site (under the lock). Full tables just stop rewriting.
fn record(addr: u64, nr: u32, state: u8) -> bool {
    if !insert(addr, ((nr as u64) << 8) | state as u64) {
        return false;
    }
    note_region(addr, addr + 1);
    true
}

/// Sets the entry for `addr` to `v` (under the lock): the one it has in any
/// tier, or a new one in the first tier with room, found by the same probe
/// (tiers fill in order, so the first unused one ends the search). Leaves
/// the regions (`note_region`) to the caller.
fn insert(addr: u64, v: u64) -> bool {
    if let Some((p, _)) = overlay_find(addr) {
        materialize(p);
    }
    insert_in_table(addr, v)
}

/// [`insert`] into the table alone.
fn insert_in_table(addr: u64, v: u64) -> bool {
    if NSITES[0].load(Ordering::Relaxed) == 0 {
        // The first tier's pages are written before anything reads them:
        // the first access to a page of it would otherwise be `probe`'s
        // read, which maps the shared zero page, and the write after it a
        // second fault.
        for e in SITES0.iter().step_by(4096 / 16) {
            e[1].store(0, Ordering::Relaxed);
        }
    }
    let mut free: Option<(usize, usize)> = None;
    for (k, &size) in TIERS.iter().enumerate() {
        let n = NSITES[k].load(Ordering::Relaxed);
        let t = tier(k);
        if n == 0 {
            if free.is_none() {
                free = Some((k, slot_of(addr, size)));
            }
            break;
        }
        match probe(t, addr) {
            Ok(i) => {
                t[i][1].store(v, Ordering::Release);
                return true;
            }
            Err(Some(i)) if free.is_none() && n < size * 3 / 4 => free = Some((k, i)),
            Err(_) => {}
        }
    }
    let Some((k, i)) = free else {
        return false;
    };
    let t = tier(k);
    t[i][1].store(v, Ordering::Release);
    t[i][0].store(addr, Ordering::Release);
    // Writers hold the lock: no read-modify-write needed.
    NSITES[k].store(NSITES[k].load(Ordering::Relaxed) + 1, Ordering::Release);
    true
}

/// What adopting an image needs to know of its site table, worked out when
/// the image is written and kept in its header (`textimage`), so that a
/// process mapping the image reads no page of the table: the counts of
/// patched and declined sites, the lowest and highest site offset, and
/// whether the table is sorted by offset.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Summary {
    pub patched: u64,
    pub declined: u64,
    pub lo: u64,
    pub hi: u64,
    pub sorted: bool,
}

impl Summary {
    pub(crate) fn of(sites: &[crate::textimage::Entry]) -> Summary {
        let mut s = Summary {
            patched: 0,
            declined: 0,
            lo: u64::MAX,
            hi: 0,
            sorted: true,
        };
        for (k, e) in sites.iter().enumerate() {
            match (e[0] >> 40) as u8 {
                PATCHED_SITE => s.patched += 1,
                DECLINED_SITE => s.declined += 1,
                _ => s.sorted = false,
            }
            s.sorted &= k == 0 || sites[k - 1][1] < e[1];
            (s.lo, s.hi) = (s.lo.min(e[1]), s.hi.max(e[1]));
        }
        s
    }
}

/// The text mapped at `text` and the pool `pool` came from a text image
/// whose site table is `sites` (under the lock), summed up by `sum`. The
/// table, sorted by address as `rewrite_text` writes it, stands for the
/// image's sites (an **overlay**, `overlay_find`): nothing is copied into
/// the site table, whose pages would each be a fault at every exec, until
/// an entry of the image must change or part of its text goes
/// (`materialize`). A table that is not sorted is copied at once.
pub(crate) fn adopt_image(pool: usize, text: u64, sites: &'static [crate::textimage::Entry], sum: &Summary) {
    if sites.is_empty() {
        return;
    }
    POOL_META[pool][1].store(sites.len(), Ordering::Relaxed);
    POOL_META[pool][2].store(text as usize, Ordering::Relaxed);
    POOL_META[pool][0].store(sites.as_ptr() as usize, Ordering::Release);
    if sum.sorted {
        OVERLAY[pool].store(1, Ordering::Release);
    } else {
        copy_sites(text, sites);
    }
    note_region(text + sum.lo, text + sum.hi + 1);
    PATCHED.fetch_add(sum.patched, Ordering::Relaxed);
    DECLINED.fetch_add(sum.declined, Ordering::Relaxed);
    IMAGED.fetch_add(1, Ordering::Relaxed);
}

/// Records an image's sites in the table (under the lock; the caller keeps
/// the regions).
fn copy_sites(text: u64, sites: &[crate::textimage::Entry]) {
    for e in sites {
        if !insert_in_table(text + e[1], ((e[3] as u32 as u64) << 8) | (e[0] >> 40) & 0xff) {
            break;
        }
    }
}

/// Per pool: 1 while its text image's own site table stands for the
/// image's sites (`adopt_image`), 0 otherwise.
static OVERLAY: [AtomicU8; MAX_POOLS] = [const { AtomicU8::new(0) }; MAX_POOLS];

/// The site table of pool `p`'s image.
///
/// # Safety
/// `POOL_META[p]` is set (`adopt_image`).
unsafe fn overlay_sites(p: usize) -> &'static [crate::textimage::Entry] {
    let (meta, n) = (
        POOL_META[p][0].load(Ordering::Acquire),
        POOL_META[p][1].load(Ordering::Relaxed),
    );
    // SAFETY: per contract, the image's entries, mapped for good.
    unsafe { core::slice::from_raw_parts(meta as *const crate::textimage::Entry, n) }
}

/// The live overlays: (pool, text address, its table).
fn overlays() -> impl Iterator<Item = (usize, u64, &'static [crate::textimage::Entry])> {
    (0..NPOOLS.load(Ordering::Acquire).min(MAX_POOLS))
        .filter(|&p| OVERLAY[p].load(Ordering::Acquire) != 0)
        .map(|p| {
            // SAFETY: an overlay is live only once its pool's table is set.
            let sites = unsafe { overlay_sites(p) };
            (p, POOL_META[p][2].load(Ordering::Relaxed) as u64, sites)
        })
}

/// The live overlay that has a site at `addr`, and the site's index there.
fn overlay_find(addr: u64) -> Option<(usize, usize)> {
    overlays().find_map(|(p, text, sites)| {
        let off = addr.checked_sub(text)?;
        sites.binary_search_by_key(&off, |e| e[1]).ok().map(|i| (p, i))
    })
}

/// Whether a live overlay's sites are all in [lo, hi), or some: (pool, all).
fn overlays_in(lo: u64, hi: u64) -> impl Iterator<Item = (usize, bool)> {
    overlays().filter_map(move |(p, text, sites)| {
        let (a, b) = (text + sites.first()?[1], text + sites.last()?[1]);
        (a < hi && b >= lo).then_some((p, a >= lo && b < hi))
    })
}

/// Moves overlay `p`'s sites into the table (under the lock), where they can
/// change; the overlay stops answering only once they are there.
fn materialize(p: usize) {
    // SAFETY: live overlays have their table set.
    copy_sites(POOL_META[p][2].load(Ordering::Relaxed) as u64, unsafe {
        overlay_sites(p)
    });
    OVERLAY[p].store(0, Ordering::Release);
}

/// A trap at `sys_addr` with number `nr`: if that `syscall` belongs to a site
/// patched live and `nr` cannot be a real number, it is a thread that ran the
/// old opcode with a torn immediate: the call is the site's own.
pub fn substitute(sys_addr: u64, nr: usize) -> usize {
    if nr < 512 || ANY_LIVE.load(Ordering::Relaxed) == 0 {
        return nr;
    }
    match lookup(sys_addr) {
        Some(v) if matches!((v & 0xff) as u8, LIVE_SITE | RETIRED_SITE) => (v >> 8) as usize,
        _ => nr,
    }
}

/// The program unmapped or replaced [addr, addr+len): sites there are gone.
pub fn forget(addr: usize, len: usize) {
    let (lo, hi) = (addr as u64, addr.saturating_add(len) as u64);
    if !may_hold_sites(lo, hi) {
        return;
    }
    lock();
    for (p, all) in overlays_in(lo, hi) {
        if all {
            OVERLAY[p].store(0, Ordering::Release); // the whole image's text is gone
        } else {
            materialize(p);
        }
    }
    for e in used_tiers().flatten() {
        let a = e[0].load(Ordering::Relaxed);
        if a >= lo && a < hi {
            // A tombstone: keeps probe chains intact, matches no address.
            e[0].store(u64::MAX, Ordering::Release);
        }
    }
    unlock();
}

/// The program is about to make [addr, addr+len) writable (a JIT changing
/// its code): put the original bytes of the `mov $NR,%eax` sites there back,
/// so that it reads and changes its own code. The opcode goes first (a
/// thread running the site meanwhile traps with a torn number, which
/// `substitute` maps back), then, after a membarrier, the immediate.
pub fn before_write(addr: usize, len: usize) {
    let (lo, hi) = (addr as u64, addr.saturating_add(len) as u64);
    if !may_hold_sites(lo.saturating_sub(5), hi + 5) {
        return; // no site there (or none at all)
    }
    lock();
    for (p, _) in overlays_in(lo.saturating_sub(5), hi + 5) {
        materialize(p);
    }
    let mut mem = None;
    for e in used_tiers().flatten() {
        let a = e[0].load(Ordering::Relaxed);
        let v = e[1].load(Ordering::Relaxed);
        if a < lo + 5 || a >= hi + 5 || !matches!((v & 0xff) as u8, PATCHED_SITE | LIVE_SITE) {
            continue;
        }
        let start = a - 5;
        let mut cur = [0u8; 5];
        if sys::copy_from_user(&mut cur, start as usize).is_err() || cur[0] != 0xe9 {
            continue; // not a rewritten `mov $NR,%eax` (or already replaced)
        }
        let nr = (v >> 8) as u32;
        let orig = [0xb8, nr as u8, (nr >> 8) as u8, (nr >> 16) as u8, (nr >> 24) as u8];
        if mem.is_none() {
            mem = Mem::open();
        }
        let Some(m) = mem.as_ref() else {
            break;
        };
        if membarrier_ready() && m.write(start, &orig[..1]) {
            membarrier();
            m.write(start + 1, &orig[1..]);
            ANY_LIVE.store(1, Ordering::Relaxed);
            e[1].store((v & !0xff) | RETIRED_SITE as u64, Ordering::Release);
        }
    }
    unlock();
}

// ---- pools --------------------------------------------------------------------

pub(crate) const POOL_SIZE: usize = 1 << 20;
const MAX_POOLS: usize = 64;
/// Each pool: base, next free byte, end (`POOL_SIZE` after its base, but
/// for the pool of a text image, which is as long as its trampolines need).
static POOLS: [[AtomicUsize; 3]; MAX_POOLS] = [const { [const { AtomicUsize::new(0) }; 3] }; MAX_POOLS];
static NPOOLS: AtomicUsize = AtomicUsize::new(0);
/// The batch each pool was last claimed by (writers without /proc/self/mem
/// start a batch's trampolines on a fresh page of the pool).
static POOL_BATCH: [AtomicUsize; MAX_POOLS] = [const { AtomicUsize::new(0) }; MAX_POOLS];
/// The current batch of rewrites (one per Writer, under LOCK).
static BATCH: AtomicUsize = AtomicUsize::new(0);
/// Pools mapped from a text image: the image's site table (a read-only
/// mapping of `textimage::Entry`s), its length and the text's address, for
/// `trampoline_at`.
static POOL_META: [[AtomicUsize; 3]; MAX_POOLS] = [const { [const { AtomicUsize::new(0) }; 3] }; MAX_POOLS];
/// 1 + the index of the only pool trampolines may go to (the pool of a text
/// image being made, see textimage.rs); 0: any. Used under LOCK.
static ONLY_POOL: AtomicUsize = AtomicUsize::new(0);
/// Offsets of the constants at the start of every pool.
const FAST_SLOT: usize = 0;
const NATIVE_SLOT: usize = 8;
pub(crate) const POOL_HEADER: usize = 64;
const REACH: u64 = (1 << 31) - POOL_SIZE as u64;

/// Lowest and highest addresses of any pool (a quick test for
/// `strata_sig_entry`: a PC between them may be in a trampoline); both 0
/// (an empty range) until the first pool. Zero-initialised, so they share
/// .bss's pages instead of making a start copy a page of .data.
#[no_mangle]
static STRATA_POOL_LO: AtomicU64 = AtomicU64::new(0);
#[no_mangle]
static STRATA_POOL_HI: AtomicU64 = AtomicU64::new(0);

/// Every trampoline: (its address, site start | len << 56, the lengths of
/// its instructions, `Site::lens`).
const MAX_TRAMPS: usize = 1 << 14;
#[link_section = ".bss.big.tramps"]
static TRAMPS: [[AtomicU64; 3]; MAX_TRAMPS] = [const { [const { AtomicU64::new(0) }; 3] }; MAX_TRAMPS];
static NTRAMPS: AtomicUsize = AtomicUsize::new(0);

/// Where the program would be if a signal interrupted its trampoline at
/// `pc`: the address of the original instruction the trampoline was about
/// to run (the site's `syscall` once they all ran). Slow; for signal
/// handling only.
pub fn trampoline_at(pc: u64) -> Option<u64> {
    if !in_pool(pc) {
        return None;
    }
    for (p, m) in POOLS.iter().zip(&POOL_META).take(NPOOLS.load(Ordering::Acquire)) {
        let (base, meta, n) = (
            p[0].load(Ordering::Relaxed) as u64,
            m[0].load(Ordering::Acquire),
            m[1].load(Ordering::Relaxed),
        );
        if meta == 0 || pc < base || pc >= p[2].load(Ordering::Relaxed) as u64 {
            continue;
        }
        // SAFETY: the image's site table, mapped for good by `adopt_image`.
        let sites = unsafe { core::slice::from_raw_parts(meta as *const crate::textimage::Entry, n) };
        let text = m[2].load(Ordering::Relaxed) as u64;
        let e = sites
            .iter()
            .filter(|e| (e[0] >> 40) as u8 == PATCHED_SITE && base + (e[0] & 0xffff_ffff) <= pc)
            .max_by_key(|e| e[0] & 0xffff_ffff)?;
        let start = text + e[1] - (e[0] >> 32 & 0xff);
        return strata_patch::site_offset(e[2], pc - base - (e[0] & 0xffff_ffff)).map(|off| start + off);
    }
    let n = NTRAMPS.load(Ordering::Acquire).min(MAX_TRAMPS);
    let mut best: Option<usize> = None;
    for (i, e) in TRAMPS.iter().enumerate().take(n) {
        let t = e[0].load(Ordering::Relaxed);
        if t <= pc && best.is_none_or(|b| t > TRAMPS[b][0].load(Ordering::Relaxed)) {
            best = Some(i);
        }
    }
    let e = &TRAMPS[best?];
    let (t, v, lens) = (
        e[0].load(Ordering::Relaxed),
        e[1].load(Ordering::Relaxed),
        e[2].load(Ordering::Relaxed),
    );
    let start = v & ((1 << 56) - 1);
    strata_patch::site_offset(lens, pc - t).map(|off| start + off)
}

/// Does [addr, addr+len) touch a pool? (The program may not unmap them.)
pub fn overlaps_pool(addr: usize, len: usize) -> bool {
    let end = addr.saturating_add(len.max(1));
    POOLS.iter().take(NPOOLS.load(Ordering::Acquire)).any(|p| {
        let b = p[0].load(Ordering::Relaxed);
        b != 0 && addr < p[2].load(Ordering::Relaxed) && b < end
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
    let base = site & !(POOL_SIZE as u64 - 1);
    for k in 1..2048u64 {
        for cand in [
            base.wrapping_sub(k * POOL_SIZE as u64),
            base.wrapping_add(k * POOL_SIZE as u64),
        ] {
            if !near(cand, site) {
                continue;
            }
            if let Some(i) = pool_at(cand as usize, POOL_SIZE, POOL_HEADER) {
                return Some(i);
            }
        }
    }
    None
}

/// Maps a pool of `size` bytes at exactly `c` (only where nothing is mapped
/// and not in the main stack's range) and registers it with its first free
/// byte at `c + first`.
pub(crate) fn pool_at(c: usize, size: usize, first: usize) -> Option<usize> {
    let flags = sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_NORESERVE;
    map_pool(c, size, sys::PROT_READ | sys::PROT_WRITE, flags, usize::MAX, 0)?;
    // SAFETY: our new writable page: the entry addresses.
    unsafe {
        for (&at, v) in POOL_SLOTS.iter().zip(pool_constants()) {
            ((c + at) as *mut u64).write(v);
        }
        sys::sc(Sysno::mprotect, &[c, size, sys::PROT_READ | sys::PROT_EXEC]);
    }
    Some(add_pool(c, size, first))
}

/// Maps [c, c+size) for a pool where nothing is mapped (MAP_FIXED_NOREPLACE
/// fails rather than replace anything), if a pool may go there.
fn map_pool(c: usize, size: usize, prot: usize, flags: usize, fd: usize, off: usize) -> Option<()> {
    if !pool_place_ok(c, size) {
        return None;
    }
    // SAFETY: a fresh private mapping (anonymous, or of a text image's
    // pool) where nothing is mapped.
    let r = unsafe { sys::sc(Sysno::mmap, &[c, size, prot, flags | sys::MAP_FIXED_NOREPLACE, fd, off]) };
    if r as usize != c {
        if r >= 0 {
            // An old kernel placed it elsewhere: give it back.
            // SAFETY: our own new mapping.
            unsafe { sys::sc(Sysno::munmap, &[r as usize, size]) };
        }
        return None;
    }
    Some(())
}

/// Whether a pool may go at [c, c+size): in the user range, clear of the
/// main thread's stack, and there is a slot for it.
fn pool_place_ok(c: usize, size: usize) -> bool {
    let (slo, shi) = sys::main_stack();
    NPOOLS.load(Ordering::Acquire) < MAX_POOLS
        && (0x10000..0x7fff_ffff_0000).contains(&c)
        && !(c < shi && c + size > slo)
}

/// Where `pool_constants` lie in every pool.
const POOL_SLOTS: [usize; 2] = [FAST_SLOT, NATIVE_SLOT];

/// What every pool's first words hold: the addresses of strata's fast and
/// native entries (at POOL_SLOTS).
fn pool_constants() -> [u64; 2] {
    [
        crate::fast::strata_fast_entry as *const () as u64,
        crate::fast::strata_native_entry as *const () as u64,
    ]
}

/// Whether `words`, a text image's pool's first words, are the constants this
/// strata-rt puts there.
pub(crate) fn pool_constants_are_ours(words: &[u64]) -> bool {
    POOL_SLOTS
        .iter()
        .zip(pool_constants())
        .all(|(&at, c)| words.get(at / 8) == Some(&c))
}

/// A text image's pool at `c`, `size` bytes mapped whole from offset `off`
/// of its image file `fd` (under the lock): its index, full (nothing more
/// goes there).
pub(crate) fn pool_from_file(c: usize, size: usize, fd: usize, off: usize) -> Option<usize> {
    map_pool(c, size, sys::PROT_READ | sys::PROT_EXEC, sys::MAP_PRIVATE, fd, off)?;
    Some(add_pool(c, size, size))
}

/// Records the pool [c, c+size) whose free space starts at `c + first`
/// (under the lock; `pool_place_ok` said there is a slot).
fn add_pool(c: usize, size: usize, first: usize) -> usize {
    let n = NPOOLS.load(Ordering::Acquire);
    let _ = STRATA_POOL_LO.fetch_update(Ordering::AcqRel, Ordering::Acquire, |lo| {
        (lo == 0 || (c as u64) < lo).then_some(c as u64)
    });
    STRATA_POOL_HI.fetch_max((c + size) as u64, Ordering::AcqRel);
    POOLS[n][0].store(c, Ordering::Release);
    POOLS[n][1].store(c + first, Ordering::Release);
    POOLS[n][2].store(c + size, Ordering::Release);
    NPOOLS.store(n + 1, Ordering::Release);
    n
}

/// Pool `i`, made for a text image that could not be mapped, becomes an
/// ordinary pool (under the lock).
pub(crate) fn release_pool(i: usize) {
    let base = POOLS[i][0].load(Ordering::Relaxed);
    POOLS[i][1].store(base + 4096, Ordering::Release);
}

/// Space for a trampoline of `len` bytes for `site` (`live`: at an address
/// whose jump displacement keeps torn immediates harmless). Returns the
/// trampoline's address and the pool's base.
fn alloc(site: &Site, len: usize, live: bool, fresh: bool) -> Option<(u64, u64)> {
    let batch = BATCH.load(Ordering::Relaxed);
    let fit = |i: usize| -> Option<u64> {
        let base = POOLS[i][0].load(Ordering::Relaxed) as u64;
        let mut cur = POOLS[i][1].load(Ordering::Relaxed) as u64;
        // The first trampoline of this batch in this pool: on a page no
        // earlier trampoline shares.
        if fresh && POOL_BATCH[i].load(Ordering::Relaxed) != batch && cur > base + POOL_HEADER as u64 {
            cur = (cur + 4095) & !4095;
        }
        let end = POOLS[i][2].load(Ordering::Relaxed) as u64;
        if base == 0 || !near(base, site.start) || !near(end, site.start) {
            return None;
        }
        let t = if live {
            strata_patch::next_live_p1_addr(site, cur)?
        } else {
            cur
        };
        (t + len as u64 <= end).then_some(t)
    };
    let n = NPOOLS.load(Ordering::Acquire);
    let only = ONLY_POOL.load(Ordering::Relaxed);
    let (i, t) = if only != 0 {
        (only - 1, fit(only - 1)?)
    } else {
        match (0..n).find_map(|i| fit(i).map(|t| (i, t))) {
            Some(x) => x,
            None => {
                let i = new_pool(site.start)?;
                (i, fit(i)?)
            }
        }
    };
    POOLS[i][1].store((t + len as u64) as usize, Ordering::Relaxed);
    POOL_BATCH[i].store(batch, Ordering::Relaxed);
    Some((t, POOLS[i][0].load(Ordering::Relaxed) as u64))
}

// ---- writing code ---------------------------------------------------------------

/// /proc/self/mem, open for one batch of writes.
struct Mem(usize);

/// /proc/self/mem was refused (a sandbox policy's Landlock domain, which
/// lasts as long as the process): not asked again at every batch.
static MEM_REFUSED: AtomicBool = AtomicBool::new(false);

impl Mem {
    fn open() -> Option<Mem> {
        if MEM_REFUSED.load(Ordering::Relaxed) {
            return None;
        }
        // SAFETY: a NUL-terminated path constant.
        let fd = unsafe {
            sys::sc(
                Sysno::open,
                &[c"/proc/self/mem".as_ptr() as usize, sys::O_RDWR | sys::O_CLOEXEC, 0],
            )
        };
        if fd == -sys::EACCES || fd == -sys::EPERM {
            MEM_REFUSED.store(true, Ordering::Relaxed);
        }
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
pub fn native_ok(nr: u32) -> bool {
    let nr = nr as usize;
    crate::stack::first(nr) == crate::stack::NO_LAYER && !crate::dispatch::bottom_owns(nr)
}

/// Where code is written during one batch of rewrites. Trampolines are
/// staged and written to their pool in one piece; site bytes go either
/// straight into text strata made writable (and not executable) for the
/// batch, or through /proc/self/mem.
struct Writer {
    /// None: /proc/self/mem cannot be opened (a sandbox policy that
    /// restricts writing: Landlock cannot allow /proc/self per process).
    /// Then only batches whose text is writable (`direct`) are done, and
    /// trampolines go to pool pages no thread runs yet, made writable (not
    /// executable) for the copy.
    mem: Option<Mem>,
    /// The site's text is writable for this batch (a fresh mapping).
    direct: bool,
    stage_at: u64,
    stage_len: usize,
    /// Direct site writes since the last flush (undone if it fails).
    npending: usize,
}

const STAGE: usize = 1 << 16;
/// Staged trampolines (used under LOCK only).
#[link_section = ".bss.big.stage_buf"]
static mut STAGE_BUF: [u8; STAGE] = [0; STAGE];

/// A site write of a direct batch whose trampoline is still staged: where,
/// and the bytes it replaced.
#[derive(Clone, Copy)]
struct Pending {
    at: u64,
    len: u8,
    orig: [u8; 16],
}

const MAX_PENDING: usize = 256;
/// (used under LOCK only)
#[link_section = ".bss.big.pending"]
static mut PENDING: [Pending; MAX_PENDING] = [Pending {
    at: 0,
    len: 0,
    orig: [0; 16],
}; MAX_PENDING];

impl Writer {
    fn new(direct: bool) -> Option<Writer> {
        let mem = Mem::open();
        if mem.is_none() && !direct {
            return None;
        }
        // A new batch: pools are claimed afresh (see `alloc`).
        BATCH.fetch_add(1, Ordering::Relaxed);
        Some(Writer {
            mem,
            direct,
            stage_at: 0,
            stage_len: 0,
            npending: 0,
        })
    }

    /// Trampolines must start on pool pages no thread runs yet.
    fn fresh_pages(&self) -> bool {
        self.mem.is_none()
    }

    fn tramp(&mut self, at: u64, b: &[u8]) -> bool {
        let contiguous = at == self.stage_at + self.stage_len as u64 && self.stage_len + b.len() <= STAGE;
        if self.stage_len != 0 && !contiguous && !self.flush() {
            return false;
        }
        if self.stage_len == 0 {
            self.stage_at = at;
        }
        // SAFETY: the stage is only used with LOCK held, by this writer.
        let stage = unsafe { &mut *core::ptr::addr_of_mut!(STAGE_BUF) };
        stage[self.stage_len..self.stage_len + b.len()].copy_from_slice(b);
        self.stage_len += b.len();
        true
    }

    fn flush(&mut self) -> bool {
        if self.stage_len == 0 {
            return true;
        }
        // SAFETY: as in `tramp`.
        let stage = unsafe { &*core::ptr::addr_of!(STAGE_BUF) };
        let ok = match &self.mem {
            Some(m) => m.write(self.stage_at, &stage[..self.stage_len]),
            None => write_fresh(self.stage_at, &stage[..self.stage_len]),
        };
        self.stage_len = 0;
        if !ok {
            // The sites written since the last flush lead to trampolines
            // that are not there: give them their bytes back.
            // SAFETY: under LOCK; the text is still writable (direct
            // batch) and run by no one.
            let pending = unsafe { &*core::ptr::addr_of!(PENDING) };
            for p in pending[..self.npending].iter().rev() {
                // SAFETY: as above.
                unsafe { core::ptr::copy_nonoverlapping(p.orig.as_ptr(), p.at as *mut u8, p.len as usize) };
            }
        }
        self.npending = 0;
        ok
    }

    /// Writes site bytes. A direct batch's text runs nowhere until the
    /// batch ends, so its sites are written at once and its trampolines
    /// copied in bulk (a flush every MAX_PENDING sites, or at the end:
    /// one pwrite or mprotect pair per flush, not per site); otherwise
    /// every staged trampoline is put in place first.
    fn site(&mut self, at: u64, b: &[u8]) -> bool {
        if self.direct && b.len() <= 16 {
            if self.npending == MAX_PENDING && !self.flush() {
                return false;
            }
            // SAFETY: under LOCK; the caller made this text writable for
            // the batch and no thread can run it yet.
            unsafe {
                let p = &mut (*core::ptr::addr_of_mut!(PENDING))[self.npending];
                p.at = at;
                p.len = b.len() as u8;
                core::ptr::copy_nonoverlapping(at as *const u8, p.orig.as_mut_ptr(), b.len());
                core::ptr::copy_nonoverlapping(b.as_ptr(), at as *mut u8, b.len());
            }
            self.npending += 1;
            return true;
        }
        if !self.flush() {
            return false;
        }
        if self.direct {
            // SAFETY: the caller made this text writable for the batch and
            // no thread can run it yet.
            unsafe { core::ptr::copy_nonoverlapping(b.as_ptr(), at as *mut u8, b.len()) };
            true
        } else {
            self.mem.as_ref().is_some_and(|m| m.write(at, b))
        }
    }
}

/// Copies trampolines `b` to `at` in a pool, on pages that hold no
/// trampoline a thread could be running (`alloc` starts each batch on a
/// fresh page when there is no /proc/self/mem): the pages are made
/// read-write (not executable) for the copy, then read-execute again.
fn write_fresh(at: u64, b: &[u8]) -> bool {
    let lo = at as usize & !4095;
    let hi = (at as usize + b.len() + 4095) & !4095;
    // SAFETY: pages of our own pool, which no thread runs (see above).
    unsafe {
        if sys::sc(Sysno::mprotect, &[lo, hi - lo, sys::PROT_READ | sys::PROT_WRITE]) != 0 {
            return false;
        }
        core::ptr::copy_nonoverlapping(b.as_ptr(), at as *mut u8, b.len());
        sys::sc(Sysno::mprotect, &[lo, hi - lo, sys::PROT_READ | sys::PROT_EXEC]) == 0
    }
}

/// Rewrites one site. `live`: other threads may be running this code.
/// `riprel`: the site's `strata_patch::relocation`, when known (else the
/// site is decoded here).
fn patch(w: &mut Writer, site: &Site, live: bool, riprel: Option<u64>) -> bool {
    if let Some(nr) = site.nr {
        if crate::fast::needs_frame(nr as usize) {
            return false;
        }
    }
    if live && (!matches!(site.pattern, Pattern::P1) || w.fresh_pages()) {
        return false;
    }
    let native = site.nr.is_some_and(native_ok);
    let Ok(riprel) = riprel.map_or_else(|| strata_patch::relocation(site), Ok) else {
        return false;
    };
    let mut tramp = [0u8; 64];
    // The trampoline's length does not depend on its address.
    let Ok(tlen) = strata_patch::trampoline_with(site, riprel, site.start, site.start, &mut tramp) else {
        return false;
    };
    let Some((t, pool)) = alloc(site, tlen, live, w.fresh_pages()) else {
        return false;
    };
    let slot = pool + if native { NATIVE_SLOT } else { FAST_SLOT } as u64;
    if strata_patch::trampoline_with(site, riprel, t, slot, &mut tramp).is_err() {
        return false;
    }
    let mut jump = [0u8; 15];
    let Ok(jlen) = strata_patch::jump_bytes(site, t, &mut jump) else {
        return false;
    };
    let k = NTRAMPS.load(Ordering::Relaxed);
    if k >= MAX_TRAMPS || !w.tramp(t, &tramp[..tlen]) {
        return false;
    }
    TRAMPS[k][0].store(t, Ordering::Relaxed);
    TRAMPS[k][1].store(site.start | (site.len as u64) << 56, Ordering::Relaxed);
    TRAMPS[k][2].store(site.lens, Ordering::Relaxed);
    NTRAMPS.store(k + 1, Ordering::Release);
    if live {
        if !membarrier_ready() || !w.site(site.start + 1, &jump[1..5]) {
            return false;
        }
        membarrier();
        if !w.site(site.start, &jump[..1]) {
            return false;
        }
        ANY_LIVE.store(1, Ordering::Relaxed);
    } else {
        if site.pattern == Pattern::P4 {
            // The padding's jump first: the short jump at the site leads to it.
            let Ok(pad) = strata_patch::pad_jump_bytes(site, t) else {
                return false;
            };
            if !w.site(site.pad, &pad) {
                return false;
            }
        }
        if !w.site(site.start, &jump[..jlen]) {
            return false;
        }
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
    let known = |a| lookup(a).is_some_and(|v| v & 0xff != RETIRED_SITE as u64);
    if known(sys_addr) {
        return;
    }
    if crate::image::overlaps_image(sys_addr as usize, 2) || in_pool(sys_addr) {
        return;
    }
    let mut code = [0u8; 17];
    if sys_addr < 15 || sys::copy_from_user(&mut code, sys_addr as usize - 15).is_err() {
        // The site may start its page (JIT code often does), with nothing
        // readable before it: read from the page start. Nothing can be a
        // prefix of an instruction that starts a page after unreadable
        // memory, so the filler is a byte that is no prefix (int3).
        let page = sys_addr as usize & !4095;
        let skip = 15 - (sys_addr as usize - page).min(15);
        code = [0xcc; 17];
        if sys::copy_from_user(&mut code[skip..], sys_addr as usize - (15 - skip)).is_err() {
            return;
        }
    }
    let (mut before, mut after) = ([0u8; 15], [0u8; 2]);
    before.copy_from_slice(&code[..15]);
    after.copy_from_slice(&code[15..]);
    if before[10] != 0xb8 && before[8..11] != [0x48, 0xc7, 0xc0] {
        // Only `mov $NR` sites are rewritten lazily (below); nothing to
        // decode. Remembered, so the next trap here costs no more.
        lock();
        if !known(sys_addr) {
            DECLINED.fetch_add(1, Ordering::Relaxed);
            record(sys_addr, eax, DECLINED_SITE);
        }
        unlock();
        return;
    }
    lock();
    if !known(sys_addr) {
        let state = match strata_patch::classify_trap(&before, &after, sys_addr, eax) {
            // Without the function's start, only a `mov $NR` whose number
            // the trap confirmed is certain to be one instruction (a longer
            // instruction found by decoding backwards may straddle a
            // boundary); the others wait for eager scanning.
            Ok(site)
                if matches!(site.pattern, Pattern::P1 | Pattern::P1W) && code_is_private(site.start, sys_addr + 2) =>
            {
                let live = crate::thread::live_count() > 1;
                if live {
                    // Before the first byte changes: a thread that runs the
                    // site meanwhile and traps with a torn number must find
                    // it (`substitute`).
                    ANY_LIVE.store(1, Ordering::Relaxed);
                    record(sys_addr, eax, RETIRED_SITE);
                }
                let ok = Writer::new(false).is_some_and(|mut w| patch(&mut w, &site, live, None));
                match (ok, live) {
                    // Live: kept for substitution even if the rewrite failed
                    // half-way (never tried again).
                    (_, true) => LIVE_SITE,
                    (false, false) => DECLINED_SITE,
                    (true, false) => PATCHED_SITE,
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

/// A mapping's file as the site cache knows it: its struct stat, the
/// mapping's length clamped to the file's end, and the cache's key: dev,
/// ino, size, mtime (s, ns), and which part of the file.
#[derive(Clone, Copy)]
pub struct MapKey {
    st: [u64; 18],
    len: usize,
    key: [u64; 7],
}

impl MapKey {
    /// From the file's struct stat; None if nothing of the file is mapped.
    pub fn of(st: &[u64; 18], off: usize, len: usize) -> Option<MapKey> {
        let len = len.min((st[6] as usize).saturating_sub(off));
        let key = [st[0], st[1], st[6], st[11], st[12], off as u64, len as u64];
        (len > 0).then_some(MapKey { st: *st, len, key })
    }

    /// From `fd`; None if it cannot be asked or nothing of it is mapped.
    fn of_fd(fd: usize, off: usize, len: usize) -> Option<MapKey> {
        let mut st = [0u64; 18];
        // SAFETY: fstat into a local buffer of the kernel's struct stat size.
        if unsafe { sys::sc(Sysno::fstat, &[fd, st.as_mut_ptr() as usize]) } != 0 {
            return None;
        }
        MapKey::of(&st, off, len)
    }
}

/// What `map_image_in_place` found, for `scan_mapping` to go on from: the
/// mapping's key, and the image (None: not asked, the cache did not know
/// the file).
#[derive(Clone, Copy)]
pub struct Tried {
    mk: MapKey,
    found: Option<Found>,
}

impl Tried {
    pub fn mapped(&self) -> bool {
        matches!(self.found, Some(Found::Mapped))
    }
}

/// The program asks for a private MAP_FIXED mapping of `fd` (file offset
/// `off`) at [addr, addr+len), readable and executable, which no thread
/// can run yet (`st`: the file's struct stat, given by strata's loader with
/// its own descriptor; None: the descriptor is the program's).
/// When the session's cache knows the file's sites and the session has the
/// file's text image, the image is mapped there instead (with its pool),
/// and the program's mapping is never made: one mapping rather than the
/// file's and then the image over it ([`Tried::mapped`]). Otherwise nothing
/// was mapped, the caller makes the mapping, and passes what this found to
/// `scan_mapping`, which goes on from there.
pub fn map_image_in_place(
    addr: usize,
    len: usize,
    prot: usize,
    fd: usize,
    off: usize,
    st: Option<&[u64; 18]>,
) -> Option<Tried> {
    if mode() & EAGER == 0 {
        return None;
    }
    use crate::textimage::Place;
    let (mk, place) = match st {
        Some(st) => (MapKey::of(st, off, len)?, Place::InsteadOfLoader),
        None => (MapKey::of_fd(fd, off, len)?, Place::InsteadOfProgram),
    };
    let found = matches!(cache_find(&mk.key), Some((_, _, n)) if n > 0).then(|| {
        let ikey = crate::textimage::key(&mk.key, &mk.st);
        crate::textimage::map(addr, len, prot, fd, off, &ikey, place)
    });
    Some(Tried { mk, found })
}

/// The file mapping [addr, addr+len) at file offset `off` of `fd` was just
/// made (private, executable and readable, protection `prot`) and no thread
/// runs it yet: rewrite every site its functions hold, or map the session's
/// text image of it over it. The sites come from
/// the session's site cache when another process of the tree already
/// scanned the same file, else from decoding the functions that hold a
/// `syscall` (bounds from `.eh_frame_hdr`), and then go to the cache.
/// `tried`: what `map_image_in_place` found for it (the image is not asked
/// for again when the cache knew the file then).
pub fn scan_mapping(addr: usize, len: usize, prot: usize, fd: usize, off: usize, tried: Option<Tried>) {
    if mode() & EAGER == 0 {
        return;
    }
    let map_len = len;
    let Some(MapKey { st, len, key }) = tried.map(|t| t.mk).or_else(|| MapKey::of_fd(fd, off, len)) else {
        return;
    };
    let mut cached = cache_find(&key);
    let from_cache = cached.is_some();
    // A file the session's cache does not know is scanned first, and its
    // sites go to the cache, even when an image of it exists (images are
    // kept across runs apart from the cache: a run under a sandbox policy
    // uses the cache but not those images). Then the scan's buffer is
    // gone before an image's pool needs the place below the library, where
    // the kernel may have put the buffer.
    let mut own: Option<(Recs, usize)> = None;
    if !from_cache {
        let Some(recs) = Recs::new() else {
            return;
        };
        let n = match find_sites(addr, len, fd, off, recs.buf()) {
            Scan::Sites(n) => n,
            // Code without unwind tables (a static binary, say) is
            // rewritten at its first traps; the cache says so, and later
            // processes neither scan it nor take the scan's buffer again.
            Scan::NoTables => 0,
            Scan::Failed => return,
        };
        SCANNED.fetch_add(1, Ordering::Relaxed);
        cache_put(&key, &recs.buf()[..n]);
        cached = cache_find(&key);
        if cached.is_none() {
            // (The cache is full: rewrite from the scan's own records.)
            own = Some((recs, n));
        }
    }
    if let Some((_, _, 0)) = cached {
        // Nothing to rewrite (most programs' own text: their calls go
        // through libc).
        if from_cache {
            CACHED.fetch_add(1, Ordering::Relaxed);
        }
        return;
    }
    if matches!(own, Some((_, 0))) {
        return;
    }
    let ikey = crate::textimage::key(&key, &st);
    let found = match tried.and_then(|t| t.found) {
        Some(f) if from_cache => f,
        _ => crate::textimage::map(addr, map_len, prot, fd, off, &ikey, crate::textimage::Place::Over),
    };
    let may_make = match found {
        Found::Mapped => return,
        // No image is ever made of a file in memory, so none is found for
        // one: asking only now spares a call at every exec.
        Found::Absent => !crate::textimage::in_memory(fd),
        Found::Unusable => false,
    };
    let ikey = may_make.then_some(&ikey);
    let text = (addr as u64, len, prot, off as u64);
    if let Some((c, at, n)) = cached {
        // Straight from the session's cache (its complete entries never
        // change): no scratch copy, whose pages each process would fault in.
        if from_cache {
            CACHED.fetch_add(1, Ordering::Relaxed);
        }
        let rec = |j: usize| {
            let base = at + j * REC_WORDS;
            Rec::from_words(core::array::from_fn(|k| c[base + k].load(Ordering::Relaxed)))
        };
        rewrite_recs(text, (0..n).map(rec), n, fd, ikey);
    } else if let Some((recs, n)) = own {
        rewrite_recs(text, recs.buf()[..n].iter().copied(), n, fd, ikey);
    }
}

/// Rewrites the `n` sites `recs` of the mapping `text`, and makes its image
/// (keyed `ikey`, of `fd`) when one may be made and is wanted.
fn rewrite_recs(
    text: (u64, usize, usize, u64),
    recs: impl Iterator<Item = Rec> + Clone,
    n: usize,
    fd: usize,
    ikey: Option<&crate::textimage::Key>,
) {
    let pages = if ikey.is_some() {
        distinct_pages(recs.clone())
    } else {
        0
    };
    rewrite_text(
        text,
        recs,
        ikey.filter(|_| crate::textimage::wanted(pages)).map(|k| (fd, k, n)),
    );
}

/// The number of distinct pages the sites `recs` write.
fn distinct_pages(recs: impl Iterator<Item = Rec>) -> usize {
    let (mut n, mut last) = (0, u64::MAX);
    // Records are in address order: a page's sites are consecutive.
    for r in recs {
        if r.file_off >> 12 != last {
            last = r.file_off >> 12;
            n += 1;
        }
    }
    n
}

/// Rewrites the sites `recs` of `text` (address, length, protection, file
/// offset). With `image` (the file's descriptor, its key and the number of
/// sites), into a pool of their own at the text image's place, and then
/// writes the image.
fn rewrite_text(
    text: (u64, usize, usize, u64),
    recs: impl Iterator<Item = Rec>,
    image: Option<(usize, &crate::textimage::Key, usize)>,
) {
    let (addr, len, prot, off) = text;
    let made = image.and_then(|(fd, key, n)| {
        let size = crate::textimage::pool_size(n);
        let base = crate::textimage::pool_base(addr as usize, off as usize, size)?;
        lock();
        let pool = pool_at(base, size, 4096);
        unlock();
        Some((fd, key, base, size, pool?))
    });
    let Some((fd, key, base, size, pool)) = made else {
        patch_all(addr, len, prot, off, recs, None);
        return;
    };
    let Some(scratch) = Scratch::<crate::textimage::Entry, { crate::textimage::MAX_ENTRIES }>::new() else {
        patch_all(addr, len, prot, off, recs, None);
        return;
    };
    let sites = scratch.buf();
    let mut n = 0;
    let mut note = |site: &Site, state: u8, tramp: u64| {
        if let Some(e) = sites.get_mut(n) {
            let t = if state == PATCHED_SITE { tramp - base as u64 } else { 0 };
            *e = [
                t | (site.len as u64) << 32 | (state as u64) << 40,
                site.start + site.len as u64 - addr,
                site.lens,
                site.nr.unwrap_or(0) as u64,
            ];
            n += 1;
        }
    };
    patch_all(addr, len, prot, off, recs, Some((pool, &mut note)));
    // By address: a process that maps the image searches the table there
    // (`adopt_image`).
    let k = n.min(sites.len());
    sites[..k].sort_unstable_by_key(|e| e[1]);
    let end = POOLS[pool][1].load(Ordering::Acquire);
    if n > 0
        && n < sites.len()
        && crate::textimage::write(
            addr as usize,
            len,
            fd,
            off as usize,
            key,
            (base, end, size),
            &sites[..n],
        )
    {
        IMAGES.fetch_add(1, Ordering::Relaxed);
    }
}

/// A site as the cache keeps it: relative to the file, not to an address.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Rec {
    /// The site's start, as an offset in the file.
    file_off: u64,
    /// pattern | len << 8 | has_nr << 16 | nr << 32.
    meta: u64,
    insn: [u8; 16],
    lens: u64,
    /// P4: where the 5-byte jump goes (in the padding before the function),
    /// as an offset in the file; else 0.
    pad_off: u64,
    /// `strata_patch::relocation` of the site, found when the file was
    /// scanned ([`RELOC_BAD`]: it refused the site): the trampoline is then
    /// built without decoding, so a process whose sites all come from the
    /// cache never builds the decoder's tables.
    riprel: u64,
}

/// [`Rec::riprel`] of a site `strata_patch::relocation` refused.
const RELOC_BAD: u64 = u64::MAX;

const MAX_RECS: usize = 8192;
const REC_WORDS: usize = strata_proto::counts::SITE_REC_WORDS;
const _: () = assert!(core::mem::size_of::<Rec>() == REC_WORDS * 8);

impl Rec {
    /// The record as the site cache holds it.
    fn to_words(self) -> [u64; REC_WORDS] {
        let half = |h: &[u8]| u64::from_le_bytes(h.try_into().unwrap_or_default());
        [
            self.file_off,
            self.meta,
            half(&self.insn[..8]),
            half(&self.insn[8..]),
            self.lens,
            self.pad_off,
            self.riprel,
        ]
    }

    fn from_words(w: [u64; REC_WORDS]) -> Rec {
        let mut insn = [0u8; 16];
        insn[..8].copy_from_slice(&w[2].to_le_bytes());
        insn[8..].copy_from_slice(&w[3].to_le_bytes());
        Rec {
            file_off: w[0],
            meta: w[1],
            insn,
            lens: w[4],
            pad_off: w[5],
            riprel: w[6],
        }
    }

    fn of(site: &Site, addr: u64, off: u64, riprel: u64) -> Rec {
        let pattern = match site.pattern {
            Pattern::P1 => 0,
            Pattern::P1W => 1,
            Pattern::P2 => 2,
            Pattern::P3 => 3,
            Pattern::P4 => 4,
        };
        let mut insn = [0u8; 16];
        insn[..15].copy_from_slice(&site.insn);
        Rec {
            file_off: site.start - addr + off,
            meta: pattern
                | (site.len as u64) << 8
                | (site.nr.is_some() as u64) << 16
                | (site.nr.unwrap_or(0) as u64) << 32,
            insn,
            lens: site.lens,
            pad_off: if site.pad != 0 { site.pad - addr + off } else { 0 },
            riprel,
        }
    }

    fn site(&self, addr: u64, off: u64) -> Option<Site> {
        let pattern = match self.meta & 0xff {
            0 => Pattern::P1,
            1 => Pattern::P1W,
            2 => Pattern::P2,
            3 => Pattern::P3,
            4 => Pattern::P4,
            _ => return None,
        };
        let mut insn = [0u8; 15];
        insn.copy_from_slice(&self.insn[..15]);
        Some(Site {
            pattern,
            start: (self.file_off.checked_sub(off)?).checked_add(addr)?,
            len: (self.meta >> 8) as u8,
            nr: (self.meta >> 16 & 1 != 0).then_some((self.meta >> 32) as u32),
            insn,
            lens: self.lens,
            pad: match self.pad_off {
                0 => 0,
                p => (p.checked_sub(off)?).checked_add(addr)?,
            },
        })
    }
}

/// A scratch array of `N` `T`s (zeroed: all-zero must be a valid `T`), in
/// a mapping of its own, used by one call at a time.
struct Scratch<T, const N: usize>(usize, core::marker::PhantomData<T>);

/// The records of one scan.
type Recs = Scratch<Rec, MAX_RECS>;

impl<T, const N: usize> Scratch<T, N> {
    const BYTES: usize = N * core::mem::size_of::<T>();

    fn new() -> Option<Self> {
        sys::mmap_anon(Self::BYTES, sys::PROT_READ | sys::PROT_WRITE).map(|m| Scratch(m, core::marker::PhantomData))
    }

    fn buf(&self) -> &'static mut [T] {
        // SAFETY: our own zeroed mapping of N `T`s (for which zero bytes
        // are valid: plain integers), used by one call (under no lock: each
        // call makes its own).
        unsafe { core::slice::from_raw_parts_mut(self.0 as *mut T, N) }
    }
}

impl<T, const N: usize> Drop for Scratch<T, N> {
    fn drop(&mut self) {
        // SAFETY: unmapping our own scratch mapping.
        unsafe { sys::sc(Sysno::munmap, &[self.0, Self::BYTES]) };
    }
}

/// The site cache: entries of (state, key (7 words), record count) and
/// the records, appended by whichever process scans a file first; `state`
/// becomes 1 once the entry is complete.
fn cache() -> Option<(&'static [AtomicU64], &'static AtomicU64, usize, usize)> {
    use strata_proto::counts;
    let w = crate::stack::session_words()?;
    let (at, size) = (
        w[counts::SITE_CACHE_WORD].load(Ordering::Relaxed) as usize,
        w[counts::SITE_CACHE_SIZE_WORD].load(Ordering::Relaxed) as usize,
    );
    if at == 0 || at % 8 != 0 || at.checked_add(size)? > w.len() * 8 {
        return None;
    }
    Some((&w[at / 8..(at + size) / 8], &w[counts::SITE_CACHE_USED_WORD], at, size))
}

const ENTRY_HEAD: usize = strata_proto::counts::SITE_ENTRY_HEAD;

/// The complete entry for `key` in the session's cache: the cache's words,
/// the index of its first record and its record count.
fn cache_find(key: &[u64; 7]) -> Option<(&'static [AtomicU64], usize, usize)> {
    let (c, used, _, _) = cache()?;
    let used = (used.load(Ordering::Acquire) as usize / 8).min(c.len());
    let mut i = 0;
    while i + ENTRY_HEAD <= used {
        let n = c[i + 8].load(Ordering::Acquire) as usize;
        let state = c[i].load(Ordering::Acquire);
        if state == 0 && n == 0 {
            return None; // being written: its size is not known yet
        }
        let end = i.checked_add(n.checked_mul(REC_WORDS)?)?.checked_add(ENTRY_HEAD)?;
        if end > used || n > MAX_RECS {
            return None;
        }
        if state == 1 && (0..7).all(|k| c[i + 1 + k].load(Ordering::Relaxed) == key[k]) {
            return Some((c, i + ENTRY_HEAD, n));
        }
        i = end;
    }
    None
}

fn cache_put(key: &[u64; 7], recs: &[Rec]) {
    let Some((c, used, _, size)) = cache() else {
        return;
    };
    let words = ENTRY_HEAD + recs.len() * REC_WORDS;
    let at = used.fetch_add((words * 8) as u64, Ordering::AcqRel) as usize / 8;
    if (at + words) * 8 > size {
        return; // full: later processes scan for themselves
    }
    c[at + 8].store(recs.len() as u64, Ordering::Release);
    for (k, &v) in key.iter().enumerate() {
        c[at + 1 + k].store(v, Ordering::Relaxed);
    }
    for (j, r) in recs.iter().enumerate() {
        let base = at + ENTRY_HEAD + j * REC_WORDS;
        for (k, v) in r.to_words().into_iter().enumerate() {
            c[base + k].store(v, Ordering::Relaxed);
        }
    }
    c[at].store(1, Ordering::Release);
}

/// What [`find_sites`] found in a mapping.
enum Scan {
    /// This many sites, written to `out`.
    Sites(usize),
    /// The file is no 64-bit ELF file with unwind tables for this mapping:
    /// nothing can be found in it (it never changes while its key is the same).
    NoTables,
    /// The file could not be read, or the scan's buffer mapped.
    Failed,
}

/// Decodes the functions of the text mapping [addr, addr+len) (file offset
/// `off` of `fd`) that hold a `syscall`; their sites go to `out`
/// ([`Scan::NoTables`] if the file has no `.eh_frame_hdr`). Not inlined: its program
/// header buffer (3.5 KiB) would be in `scan_mapping`'s frame, whose every
/// page is touched at each mapping of a library (stack probes), scanned or
/// not.
#[inline(never)]
fn find_sites(addr: usize, len: usize, fd: usize, off: usize, out: &mut [Rec]) -> Scan {
    let mut eh = [0u8; 64];
    match pread(fd, &mut eh, 0) {
        64 if eh[..4] == *b"\x7fELF" && eh[4] == 2 => {}
        r if r >= 0 => return Scan::NoTables,
        _ => return Scan::Failed,
    }
    let phoff = u64::from_le_bytes(eh[32..40].try_into().unwrap_or_default()) as usize;
    let phnum = u16::from_le_bytes([eh[56], eh[57]]) as usize;
    if phnum == 0 || phnum > 64 {
        return Scan::NoTables;
    }
    let mut ph = [0u8; 64 * 56];
    let phlen = phnum * 56;
    if pread(fd, &mut ph[..phlen], phoff) != phlen as isize {
        return Scan::Failed;
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
        return Scan::NoTables;
    };
    if esize == 0 || esize > 16 << 20 {
        return Scan::NoTables;
    }
    let buf_len = (esize as usize + 4095) & !4095;
    let Some(buf) = sys::mmap_anon(buf_len, sys::PROT_READ | sys::PROT_WRITE) else {
        return Scan::Failed;
    };
    // SAFETY: our new mapping of buf_len >= esize bytes.
    let hdr = unsafe { core::slice::from_raw_parts_mut(buf as *mut u8, esize as usize) };
    let mut n = None;
    if pread(fd, hdr, eoff as usize) == esize as isize {
        if let Some(table) = strata_patch::EhFrameHdr::parse(hdr, evaddr.wrapping_add(bias)) {
            // SAFETY: the file mapping was just made readable, and `len` is
            // clamped to the file's size (no SIGBUS past its end).
            let text = unsafe { core::slice::from_raw_parts(addr as *const u8, len) };
            n = Some(decode_sites(text, addr as u64, off as u64, &table, out));
        }
    }
    // SAFETY: unmapping our scratch buffer.
    unsafe { sys::sc(Sysno::munmap, &[buf, buf_len]) };
    n.map_or(Scan::Failed, Scan::Sites)
}

/// The sites of `text` (mapped at `base` from file offset `off`), found by
/// decoding each function that holds a `0f 05` pair from its start.
fn decode_sites(text: &[u8], base: u64, off: u64, table: &strata_patch::EhFrameHdr, out: &mut [Rec]) -> usize {
    strata_patch::warm_up();
    let end = base + text.len() as u64;
    let mut last = u64::MAX;
    let mut n = 0;
    find_syscalls(text, &mut |at| {
        let Some((start, next)) = table.containing(base + at as u64) else {
            return;
        };
        if start == last || start < base || start >= end {
            return;
        }
        last = start;
        let fend = next.unwrap_or(end).min(end);
        let code = &text[(start - base) as usize..(fend - base) as usize];
        // The function before it, whose padding may hold a P4 site's jump.
        let prev = table
            .containing(start.wrapping_sub(1))
            .filter(|&(p, _)| p >= base && p < start)
            .map(|(p, _)| (&text[(p - base) as usize..(start - base) as usize], p));
        strata_patch::scan_function_padded(code, start, prev, &mut |site| {
            if let Some(r) = out.get_mut(n) {
                *r = Rec::of(&site, base, off, strata_patch::relocation(&site).unwrap_or(RELOC_BAD));
                n += 1;
            }
        });
    });
    n
}

/// A pool and the function `patch_all` tells each site to.
type Note<'a> = (usize, &'a mut dyn FnMut(&Site, u8, u64));

/// Rewrites the sites `recs` of the text mapping [base, base+len) (file
/// offset `off`, protection `prot`), which no thread runs yet: the text is
/// made writable but not executable for the batch, then given `prot` back.
/// With `only`, every trampoline goes to that pool, and every site is told
/// to its function (the site, its state, its trampoline).
fn patch_all(base: u64, len: usize, prot: usize, off: u64, recs: impl Iterator<Item = Rec>, mut only: Option<Note>) {
    let lo = base as usize & !4095;
    let hi = (base as usize + len + 4095) & !4095;
    // SAFETY: our own process's fresh mapping, made read-write (never
    // writable and executable at once).
    let direct = unsafe { sys::sc(Sysno::mprotect, &[lo, hi - lo, sys::PROT_READ | sys::PROT_WRITE]) } == 0;
    lock();
    ONLY_POOL.store(only.as_ref().map_or(0, |o| o.0 + 1), Ordering::Relaxed);
    if let Some(mut w) = Writer::new(direct) {
        for r in recs {
            let Some(site) = r.site(base, off) else {
                continue;
            };
            let sys_addr = site.start + site.len as u64;
            if site.start < base || sys_addr + 2 > base + len as u64 || lookup(sys_addr).is_some() {
                continue;
            }
            if site.pattern == Pattern::P4 && (site.pad < base || site.pad + 5 > site.start) {
                continue;
            }
            // The code must hold what the record says (a file changed in
            // place without a new mtime gets no stale patch).
            // SAFETY: [start, sys_addr + 2) lies inside the text mapping,
            // readable and not yet run by anyone.
            let code = unsafe { core::slice::from_raw_parts(site.start as *const u8, site.len as usize + 2) };
            if code[..site.len as usize] != *site.bytes() || code[site.len as usize..] != [0x0f, 0x05] {
                continue;
            }
            let ok = r.riprel != RELOC_BAD && patch(&mut w, &site, false, Some(r.riprel));
            if !ok {
                DECLINED.fetch_add(1, Ordering::Relaxed);
            }
            let state = if ok { PATCHED_SITE } else { DECLINED_SITE };
            record(sys_addr, site.nr.unwrap_or(0), state);
            if let Some((_, note)) = only.as_mut() {
                let k = NTRAMPS.load(Ordering::Relaxed);
                note(
                    &site,
                    state,
                    if ok && k > 0 {
                        TRAMPS[k - 1][0].load(Ordering::Relaxed)
                    } else {
                        0
                    },
                );
            }
        }
        w.flush();
    }
    ONLY_POOL.store(0, Ordering::Relaxed);
    unlock();
    if direct {
        // SAFETY: as above: back to the protection the mapping was made with.
        unsafe { sys::sc(Sysno::mprotect, &[lo, hi - lo, prot]) };
    }
}

/// Calls `f` with the offset of every `0f 05` pair in `code`, eight bytes at
/// a time (the byte-wise search dominated start-up).
fn find_syscalls(code: &[u8], f: &mut dyn FnMut(usize)) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut i = 0;
    while i + 9 <= code.len() {
        let v = u64::from_le_bytes(code[i..i + 8].try_into().unwrap_or_default());
        let w = u64::from_le_bytes(code[i + 1..i + 9].try_into().unwrap_or_default());
        let mut m = zero_bytes(v ^ (0x0f * ONES)) & zero_bytes(w ^ (0x05 * ONES));
        while m != 0 {
            let k = (m.trailing_zeros() / 8) as usize;
            if code[i + k] == 0x0f && code[i + k + 1] == 0x05 {
                f(i + k);
            }
            m &= m - 1;
        }
        i += 8;
    }
    while i + 1 < code.len() {
        if code[i] == 0x0f && code[i + 1] == 0x05 {
            f(i);
        }
        i += 1;
    }
}

fn pread(fd: usize, buf: &mut [u8], off: usize) -> isize {
    // SAFETY: `buf` is a valid writable buffer.
    unsafe { sys::sc(Sysno::pread64, &[fd, buf.as_mut_ptr() as usize, buf.len(), off]) }
}
