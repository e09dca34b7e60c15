//! The extensions built into strata-rt, and where their instances live.
//!
//! A built-in is an ordinary `strata_ext::Extension`, exactly like one in an
//! extension object: strata builds it from its arguments at start and
//! describes it to the stack through the same C descriptor. Instances are
//! placed in a static area of strata-rt, or once one does not fit there, in
//! an arena mapped then ([`reserve`]; no allocator, rule 2).

use crate::stack;
use crate::sys;
use core::sync::atomic::{AtomicUsize, Ordering};
use strata_abi::{Call, ExtDesc, Interest};
use strata_ext::{Below, Extension, InitError};
use strata_proto::counts;

/// Builds built-in `name` with `args`. None: no built-in has that name.
/// Err(n): the message (n bytes) is in `err`.
pub fn make(name: &[u8], args: &[u8], err: &mut [u8; 256]) -> Option<Result<ExtDesc, usize>> {
    let args = match core::str::from_utf8(args) {
        Ok(a) => a,
        Err(_) => return Some(Err(put(err, b"arguments are not UTF-8"))),
    };
    let r = match name {
        b"null" => build::<Null>(args, b"null\0"),
        b"count" => build::<Count>(args, b"count\0"),
        b"trace" => build::<strata_ext_trace::Trace>(args, b"trace\0"),
        b"map" => build::<strata_ext_map::Map>(args, b"map\0"),
        b"tracemap" => build::<TraceMap>(args, b"tracemap\0"),
        b"ids" => build::<Ids>(args, b"ids\0"),
        b"policy" => build::<strata_ext_policy::Sandbox>(args, b"policy\0"),
        _ => return None,
    };
    Some(r.map_err(|e| put(err, e.message())))
}

fn put(err: &mut [u8; 256], m: &[u8]) -> usize {
    let n = m.len().min(err.len());
    err[..n].copy_from_slice(&m[..n]);
    n
}

/// Not inlined: each layer's start has a frame of its own (some build
/// large values on the stack, and every page of a frame is touched at its
/// entry), so starting one layer does not fault in the stack the others
/// would need.
#[inline(never)]
#[allow(clippy::result_large_err)] // start-up only; see strata_ext::InitError
fn build<E: Extension>(args: &str, name: &'static [u8]) -> Result<ExtDesc, InitError> {
    let slot = reserve::<E>().ok_or_else(|| InitError::new("out of memory for extension state"))?;
    let e: &'static E = E::new_in(slot, args)?;
    Ok(strata_ext::describe(e, name))
}

/// Layer states go first in a static area (in `.bss.big`: no mapping to
/// make at every exec, and only the pages a state writes are touched),
/// then, once one does not fit there, in a reserved mapping.
const FIRST_SIZE: usize = 256 << 10;
const ARENA_SIZE: usize = 64 << 20;
#[repr(align(4096))]
struct First(#[allow(dead_code)] [u8; FIRST_SIZE]);
#[link_section = ".bss.big.layers"]
static mut FIRST: First = First([0; FIRST_SIZE]);
/// The mapped arena once states went there (0: they still go in FIRST),
/// and how much of the area in use is used.
static ARENA: AtomicUsize = AtomicUsize::new(0);
static ARENA_USED: AtomicUsize = AtomicUsize::new(0);

/// Room in the arena for a `T`, for the rest of the process's life.
fn reserve<T>() -> Option<&'static mut core::mem::MaybeUninit<T>> {
    let align = core::mem::align_of::<T>().max(16);
    let fit = || {
        let (base, cap) = match ARENA.load(Ordering::Relaxed) {
            0 => (core::ptr::addr_of_mut!(FIRST) as usize, FIRST_SIZE),
            m => (m, ARENA_SIZE),
        };
        let start = (base + ARENA_USED.load(Ordering::Relaxed)).checked_add(align - 1)? & !(align - 1);
        let end = start.checked_add(core::mem::size_of::<T>())?;
        (end <= base + cap).then_some((start, end - base))
    };
    let (start, used) = match fit() {
        Some(x) => x,
        None if ARENA.load(Ordering::Relaxed) == 0 => {
            // Reserved, not committed: untouched pages cost nothing.
            let m = sys::mmap_anon(ARENA_SIZE, sys::PROT_READ | sys::PROT_WRITE)?;
            ARENA.store(m, Ordering::Relaxed);
            ARENA_USED.store(0, Ordering::Relaxed);
            fit()?
        }
        None => return None,
    };
    ARENA_USED.store(used, Ordering::Relaxed);
    // SAFETY: [start, start + size_of T) is inside our arena, aligned for
    // T, and handed out once (single-threaded start-up); MaybeUninit asks
    // nothing of it.
    Some(unsafe { &mut *(start as *mut core::mem::MaybeUninit<T>) })
}

/// `null`: sees every call and passes it on; the cost of one layer.
pub struct Null;

impl Extension for Null {
    const NAME: &'static str = "null";
    fn new(args: &str) -> Result<Self, InitError> {
        if args.is_empty() {
            Ok(Null)
        } else {
            Err(InitError::new("null takes no arguments"))
        }
    }
    fn interest(&self) -> Interest {
        Interest::ALL
    }
    // A layer that sees every call and does nothing with it: a `before`
    // hook that passes the call on (the default), nothing on the way up.
    const HOOKS: bool = true;
    const AFTER: bool = false;
}

/// `ids`: serves getpid and gettid in-process (a short-circuit call, as
/// Pebble's portals and KLOS's service calls): every `Call` carries the
/// caller's process and thread ids, which strata keeps right across fork,
/// clone, vfork and exec. getppid is passed on: it changes behind the
/// process's back when the parent exits and the process is reparented, so no
/// cached value could be trusted.
pub struct Ids;

impl Extension for Ids {
    const NAME: &'static str = "ids";
    fn new(args: &str) -> Result<Self, InitError> {
        if args.is_empty() {
            Ok(Ids)
        } else {
            Err(InitError::new("ids takes no arguments"))
        }
    }
    fn interest(&self) -> Interest {
        let mut i = Interest::NONE;
        i.insert(sys::Sysno::getpid as u32);
        i.insert(sys::Sysno::gettid as u32);
        i
    }
    const HOOKS: bool = true;
    const AFTER: bool = false;
    fn before(&self, c: &Call, _: &mut u64) -> Option<i64> {
        match c.nr as usize {
            n if n == sys::Sysno::getpid as usize => Some(c.pid as i64),
            n if n == sys::Sysno::gettid as usize => Some(c.tid as i64),
            _ => None,
        }
    }
}

/// `count`: calls, errors and time per syscall over the whole process tree,
/// in the session file's counters (the launcher prints the `strace -c`
/// table at the end).
pub struct Count {
    tsc_khz: u64,
}

impl Extension for Count {
    const NAME: &'static str = "count";
    fn new(args: &str) -> Result<Self, InitError> {
        if !args.is_empty() {
            return Err(InitError::new("count takes no arguments"));
        }
        let tsc_khz = stack::counters().map_or(0, |w| w[counts::TSC_KHZ_WORD].load(Ordering::Relaxed));
        Ok(Count { tsc_khz })
    }
    fn interest(&self) -> Interest {
        Interest::ALL
    }
    const HOOKS: bool = true;
    fn before(&self, c: &Call, t0: &mut u64) -> Option<i64> {
        if matches!(
            strata_abi::Call::op(c),
            strata_abi::Op::ThreadExit | strata_abi::Op::ProcessExit
        ) {
            self.add(c.nr as usize, 0, 0);
        }
        *t0 = rdtsc();
        None
    }
    fn after(&self, c: &Call, r: i64, t0: u64) -> i64 {
        self.add(c.nr as usize, r, rdtsc().wrapping_sub(t0));
        r
    }
    fn exec_commit(&self, c: &Call) {
        self.add(c.nr as usize, 0, 0);
    }
}

impl Count {
    fn add(&self, nr: usize, ret: i64, ticks: u64) {
        let t = if self.tsc_khz == 0 {
            ticks
        } else {
            (ticks as u128 * 1_000_000 / self.tsc_khz as u128) as u64
        };
        let Some(w) = stack::counters() else { return };
        w[counts::word(nr, 0)].fetch_add(1, Ordering::Relaxed);
        if (-4095..0).contains(&ret) {
            w[counts::word(nr, 1)].fetch_add(1, Ordering::Relaxed);
        }
        w[counts::word(nr, 2)].fetch_add(t, Ordering::Relaxed);
        w[counts::TRAPPED_WORD].fetch_add(1, Ordering::Relaxed);
    }
}

#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no side effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// `tracemap` (for tests and the composition benchmark): trace over map as
/// ONE layer, built from the two extensions' code. ARGS: `TRACE_ARGS@MAP_ARGS`.
/// It must behave exactly like `--trace ... --map ...` stacked.
pub struct TraceMap {
    trace: strata_ext_trace::Trace,
    map: strata_ext_map::Map,
}

impl Extension for TraceMap {
    const NAME: &'static str = "tracemap";
    fn new(args: &str) -> Result<Self, InitError> {
        let Some((t, m)) = args.split_once('@') else {
            return Err(InitError::new("tracemap takes TRACE_ARGS@MAP_ARGS"));
        };
        Ok(TraceMap {
            trace: strata_ext_trace::Trace::new(t)?,
            map: strata_ext_map::Map::new(m)?,
        })
    }
    fn interest(&self) -> Interest {
        self.trace.interest().union(self.map.interest())
    }
    fn call(&self, c: &mut Call, below: &Below) -> i64 {
        below.compose(&self.map, c, |c, b| self.trace.call(c, b))
    }
    fn exec_commit(&self, c: &Call) {
        self.trace.exec_commit(c);
        self.map.exec_commit(c);
    }
    fn task_start(&self, tid: u32, thread: bool) {
        self.trace.task_start(tid, thread);
        self.map.task_start(tid, thread);
    }
    fn exit(&self, status: i32) {
        self.trace.exit(status);
        self.map.exit(status);
    }
}
