//! Capture through a seccomp filter, for runs that have one anyway.
//!
//! strata catches calls with Syscall User Dispatch (capture.rs): with
//! dispatch on, the kernel takes its slow entry path for every call of the
//! thread, about 30 ns here. A run under a sandbox policy also has the
//! policy's seccomp filter (the kernel backstop, installed by the launcher),
//! and each of the two costs its own share of that path: dispatch and a
//! filter together add about 52 ns to every call, a filter alone 31 to 34
//! (bench/results/2026-11-23-seccomp-dispatch.md). So when the launcher
//! says a filter is there (`FLAG_SECCOMP_DISPATCH`: the backstop set
//! no_new_privs, exec is followed, no extension object is loaded), strata
//! installs one more filter and leaves dispatch off:
//!
//! - a call that no layer wants and strata's bottom does not handle (what
//!   a native trampoline would issue, `rewrite::native_ok`) is allowed
//!   whoever makes it. Its verdict depends on the number alone, so the
//!   kernel's action cache answers it without running the filter;
//! - any other call, and every call of another architecture, is allowed
//!   only from strata's text (`image::text_range`, the range dispatch lets
//!   through) and trapped elsewhere: `SECCOMP_RET_TRAP` with [`MAGIC`] as
//!   its data, a SIGSYS that strata's handler takes as it takes dispatch's
//!   (same frame: the kernel rolls the call back in both cases). The fast
//!   path's slow exit issues a number past the table from a page outside
//!   the text, so it traps as under dispatch.
//!
//! The filter cannot be removed and is inherited by every thread, child and
//! exec'd image: a new thread or child needs no set-up (dispatch must be
//! turned on in each), and a runtime exec'd by one that installed it is
//! told so (`FLAG_SECCOMP_INSTALLED`) and installs none. strata-rt is
//! linked at a fixed address (build.rs), so its text is where the filter
//! expects it in every image. A program that turns on Syscall User Dispatch
//! itself (strata virtualises it) gets a second filter on that thread that
//! traps every call outside strata's text, since its dispatch must see
//! calls strata would otherwise let through.
//!
//! Whatever cannot be done this way (no room for the filter in a classic
//! BPF program, text straddling a 4 GiB boundary, the kernel refusing the
//! filter) leaves dispatch on as before.

use core::sync::atomic::{AtomicBool, Ordering};

use strata_proto::bpf::{self, Emit, JA, JEQ_K, JGE_K, LD_W_ABS, RET_ALLOW, RET_K};

use crate::sys::{self, Sysno};

/// The data of strata's trap (the SIGSYS's si_errno), telling it from a
/// trap of the program's own filters.
pub const MAGIC: u16 = 0x5354;

/// The call the fast path's slow exit issues: past every table, so it is
/// trapped by number whatever the stack wants.
pub const SLOW_EXIT_NR: u32 = 0x3fff_0000;

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Capture is by strata's filter (dispatch stays off).
#[inline(always)]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// Whether SIGSYS `code`/`errno` is strata's filter trapping a call.
#[inline(always)]
pub fn is_ours(code: i32, errno: i32) -> bool {
    code == sys::SYS_SECCOMP && errno == i32::from(MAGIC) && active()
}

/// Decides, at the start of an image, how calls are caught: true when by
/// strata's filter (already installed by the image that exec'd this one,
/// or installed now). Single-threaded, before the program runs.
pub fn init(flags: u32) -> bool {
    if flags & strata_proto::FLAG_SECCOMP_INSTALLED != 0 {
        ACTIVE.store(true, Ordering::Relaxed);
        return true;
    }
    if flags & strata_proto::FLAG_SECCOMP_DISPATCH == 0 || !install_own() {
        return false;
    }
    ACTIVE.store(true, Ordering::Relaxed);
    true
}

/// Builds and installs strata's filter. Not inlined: the program under
/// construction takes some 8 KiB of stack, and every page of a frame is
/// touched at its entry (stack probes), so its caller, on the path of every
/// process start, would fault in two more pages even when no filter is
/// made.
#[inline(never)]
fn install_own() -> bool {
    let mut b = Builder::new();
    build(&mut b, false).is_some() && install(&b).is_ok()
}

/// The program turned on dispatch of its own on this thread: from now on
/// every call outside strata's text traps on this thread, so that its
/// dispatch sees them. Errors are the kernel's.
pub fn trap_all(t: &mut crate::thread::Thread) -> Result<(), isize> {
    if !active() || t.trap_all != 0 {
        return Ok(());
    }
    let mut b = Builder::new();
    build(&mut b, true).ok_or(sys::ENOMEM)?;
    install(&b)?;
    t.trap_all = 1;
    Ok(())
}

// ---- classic BPF ---------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct Prog {
    len: u16,
    filter: *const Insn,
}

const RET_TRAP: u32 = bpf::RET_TRAP | MAGIC as u32;
const SECCOMP_SET_MODE_FILTER: usize = 1;

/// The kernel's limit is 4096 instructions; strata's filter needs a few
/// hundred at most.
const CAP: usize = 1024;

struct Builder {
    insns: [Insn; CAP],
    n: usize,
    /// Positions of the jumps to the text check (patched at the end).
    to_check: [u16; CAP / 2],
    nchecks: usize,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            insns: [Insn::default(); CAP],
            n: 0,
            to_check: [0; CAP / 2],
            nchecks: 0,
        }
    }

    /// A jump to the text check (its offset is set at the end of `build`).
    fn jump_to_check(&mut self) -> Option<()> {
        let at = self.push(JA, 0, 0, 0)?;
        *self.to_check.get_mut(self.nchecks)? = at as u16;
        self.nchecks += 1;
        Some(())
    }
}

impl Emit for Builder {
    fn push(&mut self, code: u16, jt: u8, jf: u8, k: u32) -> Option<usize> {
        let at = self.n;
        *self.insns.get_mut(at)? = Insn { code, jt, jf, k };
        self.n += 1;
        Some(at)
    }

    fn next_at(&self) -> usize {
        self.n
    }

    fn set_k(&mut self, at: usize, k: u32) -> Option<()> {
        self.insns.get_mut(at)?.k = k;
        Some(())
    }
}

/// Numbers `0..NRS` in runs with one verdict: `starts[i]` begins run `i`,
/// whose calls are trapped outside strata's text when `trap[i]`. The last
/// run goes on past the table (trapped).
struct Runs {
    starts: [u16; crate::stack::NRS + 1],
    trap: [bool; crate::stack::NRS + 1],
    n: usize,
}

fn runs() -> Runs {
    let mut r = Runs {
        starts: [0; crate::stack::NRS + 1],
        trap: [false; crate::stack::NRS + 1],
        n: 0,
    };
    for nr in 0..=crate::stack::NRS {
        let t = nr == crate::stack::NRS || !crate::rewrite::native_ok(nr as u32);
        if r.n == 0 || r.trap[r.n - 1] != t {
            r.starts[r.n] = nr as u16;
            r.trap[r.n] = t;
            r.n += 1;
        }
    }
    r
}

/// The whole filter: by number and text (`all` false), or every call by
/// text (`all`).
fn build(b: &mut Builder, all: bool) -> Option<()> {
    let (lo, len) = crate::image::text_range();
    let end = lo.checked_add(len)?;
    // One 4 GiB window (compared a word at a time).
    if len == 0 || lo >> 32 != end >> 32 {
        return None;
    }
    if !all {
        b.push(LD_W_ABS, 0, 0, bpf::OFF_ARCH)?;
        b.push(JEQ_K, 1, 0, bpf::AUDIT_ARCH_X86_64)?;
        b.jump_to_check()?;
        b.push(LD_W_ABS, 0, 0, bpf::OFF_NR)?;
        let r = runs();
        bpf::search(b, r.n, &|i| u32::from(r.starts[i]), &mut |b: &mut Builder, i| {
            if r.trap[i] {
                b.jump_to_check()
            } else {
                b.push(RET_K, 0, 0, RET_ALLOW).map(|_| ())
            }
        })?;
    }
    // The text check: allowed from [lo, end), trapped elsewhere.
    let check = b.n;
    b.push(LD_W_ABS, 0, 0, bpf::OFF_IP_HI)?;
    b.push(JEQ_K, 0, 4, (lo >> 32) as u32)?;
    b.push(LD_W_ABS, 0, 0, bpf::OFF_IP_LO)?;
    b.push(JGE_K, 0, 2, lo as u32)?;
    b.push(JGE_K, 1, 0, end as u32)?;
    b.push(RET_K, 0, 0, RET_ALLOW)?;
    b.push(RET_K, 0, 0, RET_TRAP)?;
    for i in 0..b.nchecks {
        let at = usize::from(*b.to_check.get(i)?);
        b.insns.get_mut(at)?.k = (check - at - 1) as u32;
    }
    Some(())
}

fn install(b: &Builder) -> Result<(), isize> {
    let prog = Prog {
        len: b.n as u16,
        filter: b.insns.as_ptr(),
    };
    // SAFETY: seccomp(SET_MODE_FILTER) reads `prog` and the `len`
    // instructions it points to, both alive for the call.
    let r = unsafe {
        sys::sc(
            Sysno::seccomp,
            &[SECCOMP_SET_MODE_FILTER, 0, &prog as *const Prog as usize],
        )
    };
    sys::check(r).map(|_| ())
}
