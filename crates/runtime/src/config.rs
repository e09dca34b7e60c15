//! The launch configuration, copied out of the environment at start (the
//! program may later overwrite its initial environment strings).

use crate::load::{Path, PATH_MAX};
use crate::sys;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use strata_proto::Config;

static FLAGS: AtomicU32 = AtomicU32::new(0);
/// The program's signal mask from the configuration (`HAS_MASK` set).
static MASK: AtomicU64 = AtomicU64::new(0);
static HAS_MASK: AtomicU32 = AtomicU32::new(0);
/// Our own path, the session file's and the stack specification, one after
/// the other (the paths NUL-terminated): in most runs all three lie in the
/// buffer's first page, one page fault at each exec rather than one per
/// string.
const STRINGS_MAX: usize = 2 * (PATH_MAX + 1) + strata_proto::SPEC_MAX;
#[link_section = ".bss.big.config"]
static mut STRINGS: [u8; STRINGS_MAX] = [0; STRINGS_MAX];
/// Lengths in STRINGS: our own path, the session's, the specification's.
static RUNTIME_LEN: AtomicUsize = AtomicUsize::new(0);
static SESSION_LEN: AtomicUsize = AtomicUsize::new(0);
static SPEC_LEN: AtomicUsize = AtomicUsize::new(0);

/// Records the configuration and our own path (to re-exec on execve):
/// `execfn`, the path the kernel was given to exec strata-rt (AT_EXECFN),
/// when it is absolute (the launcher and strata-rt itself exec it by its
/// absolute path); otherwise what /proc/self/exe names (a lookup in /proc,
/// whose entries for a new process the kernel builds on demand).
///
/// # Safety
/// Called once at start, single-threaded.
pub unsafe fn init(c: &Config, execfn: Option<&[u8]>) -> Result<(), isize> {
    FLAGS.store(c.flags, Ordering::Relaxed);
    if let Some(m) = c.mask {
        MASK.store(m, Ordering::Relaxed);
        HAS_MASK.store(1, Ordering::Relaxed);
    }
    // SAFETY: single-threaded start (contract): nothing else uses STRINGS yet.
    let buf = unsafe { &mut *core::ptr::addr_of_mut!(STRINGS) };
    let rl = match execfn {
        // Not a descriptor's name (an execveat start): it may be
        // closed by the time strata-rt execs itself again.
        Some(p) if p.first() == Some(&b'/') && !p.starts_with(b"/dev/fd/") && !p.starts_with(b"/proc/") => {
            if p.len() > PATH_MAX {
                return Err(sys::ENAMETOOLONG);
            }
            buf[..p.len()].copy_from_slice(p);
            p.len()
        }
        _ => match sys::read_link(c"/proc/self/exe", &mut buf[..PATH_MAX + 1])? {
            n if n >= PATH_MAX => return Err(sys::ENAMETOOLONG),
            n => n,
        },
    };
    buf[rl] = 0;
    let s = c.session;
    if s.len() > PATH_MAX {
        return Err(sys::ENAMETOOLONG);
    }
    buf[rl + 1..rl + 1 + s.len()].copy_from_slice(s);
    buf[rl + 1 + s.len()] = 0;
    let spec = c.spec(&mut buf[rl + s.len() + 2..]).map_err(|_| sys::EINVAL)?.len();
    RUNTIME_LEN.store(rl, Ordering::Relaxed);
    SESSION_LEN.store(s.len(), Ordering::Relaxed);
    SPEC_LEN.store(spec, Ordering::Relaxed);
    Ok(())
}

/// STRINGS once `init` has written it.
fn strings() -> &'static [u8] {
    // SAFETY: written once at start, read-only afterwards.
    unsafe { &*core::ptr::addr_of!(STRINGS) }
}

pub fn flags() -> u32 {
    FLAGS.load(Ordering::Relaxed)
}

/// The program's signal mask as the runtime that exec'd us handed it over
/// (it execs with every signal blocked); None: the inherited mask is the
/// program's.
pub fn program_mask() -> Option<u64> {
    (HAS_MASK.load(Ordering::Relaxed) != 0).then(|| MASK.load(Ordering::Relaxed))
}

pub fn follow_exec() -> bool {
    flags() & strata_proto::FLAG_FOLLOW_EXEC != 0
}

/// The session file's path (empty: no extension is loaded).
pub fn session() -> &'static [u8] {
    session_cstr().to_bytes()
}

/// The session file's path, with its NUL (`init` writes one after it).
pub fn session_cstr() -> &'static core::ffi::CStr {
    let at = RUNTIME_LEN.load(Ordering::Relaxed) + 1;
    let with_nul = strings()
        .get(at..=at + SESSION_LEN.load(Ordering::Relaxed))
        .unwrap_or_default();
    core::ffi::CStr::from_bytes_with_nul(with_nul).unwrap_or(c"")
}

/// The stack specification.
pub fn spec() -> &'static [u8] {
    let at = RUNTIME_LEN.load(Ordering::Relaxed) + SESSION_LEN.load(Ordering::Relaxed) + 2;
    &strings()[at..at + SPEC_LEN.load(Ordering::Relaxed)]
}

/// strata-rt's own path, NUL-terminated.
pub fn runtime_path() -> *const u8 {
    strings().as_ptr()
}

/// What /proc/self/exe should name.
pub fn exe() -> &'static Path {
    crate::load::exe()
}

const PREFIX: &[u8] = b"STRATA_RT=";

/// Upper bound of `encode_env`'s output for `program` (exact for the
/// specification, which can be kilobytes: an exec's buffer is on the stack
/// when it fits).
pub fn encoded_len(program: &[u8]) -> usize {
    PREFIX.len() + 48 + session().len() + strata_proto::escaped_len(spec()) + program.len()
}

/// Writes `STRATA_RT=<config for program>` into `out`, with the program's
/// signal mask `mask` for the new image; returns its length.
pub fn encode_env(program: &[u8], mask: u64, interp_checked: bool, out: &mut [u8]) -> Option<usize> {
    out.get_mut(..PREFIX.len())?.copy_from_slice(PREFIX);
    // What the new image must know of this one; the launcher's flags pass
    // on as they are.
    let flag = |on: bool, f: u32| if on { f } else { 0 };
    let own = strata_proto::FLAG_SIGSYS_IGNORED
        | strata_proto::FLAG_SECCOMP_INSTALLED
        | strata_proto::FLAG_PROGRAM_FILTERS
        | strata_proto::FLAG_INTERP_CHECKED;
    let state = flag(crate::signals::sigsys_ignored(), strata_proto::FLAG_SIGSYS_IGNORED)
        | flag(crate::seccomp::active(), strata_proto::FLAG_SECCOMP_INSTALLED)
        | flag(crate::signals::program_filters(), strata_proto::FLAG_PROGRAM_FILTERS)
        | flag(interp_checked, strata_proto::FLAG_INTERP_CHECKED);
    let c = Config {
        flags: flags() & !own | state,
        mask: Some(mask),
        session: session(),
        spec_esc: b"",
        program,
    };
    let n = c.encode_with_spec(spec(), out.get_mut(PREFIX.len()..)?).ok()?;
    Some(PREFIX.len() + n)
}
