//! The launch configuration, copied out of the environment at start (the
//! program may later overwrite its initial environment strings).

use crate::load::Path;
use crate::sys;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use strata_proto::Config;

static FLAGS: AtomicU32 = AtomicU32::new(0);
/// The program's signal mask from the configuration (`HAS_MASK` set).
static MASK: AtomicU64 = AtomicU64::new(0);
static HAS_MASK: AtomicU32 = AtomicU32::new(0);
static mut SESSION: Path = Path::new();
#[link_section = ".bss.big.spec"]
static mut SPEC: [u8; strata_proto::SPEC_MAX] = [0; strata_proto::SPEC_MAX];
static mut SPEC_LEN: usize = 0;
static mut RUNTIME: Path = Path::new();

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
    // SAFETY: single-threaded start (contract).
    unsafe {
        (*core::ptr::addr_of_mut!(SESSION)).set(c.session)?;
        let spec = c.spec(&mut *core::ptr::addr_of_mut!(SPEC)).map_err(|_| sys::EINVAL)?;
        SPEC_LEN = spec.len();
        let rt = &mut *core::ptr::addr_of_mut!(RUNTIME);
        match execfn {
            // Not a descriptor's name (an execveat start): it may be
            // closed by the time strata-rt execs itself again.
            Some(p) if p.first() == Some(&b'/') && !p.starts_with(b"/dev/fd/") && !p.starts_with(b"/proc/") => {
                rt.set(p)?
            }
            _ => {
                rt.read_link(c"/proc/self/exe".as_ptr().cast())?;
            }
        }
    }
    Ok(())
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
    // SAFETY: written once at start, read-only afterwards.
    unsafe { (*core::ptr::addr_of!(SESSION)).bytes() }
}

/// The stack specification.
pub fn spec() -> &'static [u8] {
    // SAFETY: written once at start, read-only afterwards.
    unsafe { (&*core::ptr::addr_of!(SPEC)).get(..SPEC_LEN).unwrap_or(&[]) }
}

/// strata-rt's own path.
pub fn runtime_path() -> &'static Path {
    // SAFETY: written once at start, read-only afterwards.
    unsafe { &*core::ptr::addr_of!(RUNTIME) }
}

/// What /proc/self/exe should name.
pub fn exe() -> &'static Path {
    crate::load::exe()
}

const PREFIX: &[u8] = b"STRATA_RT=";

/// Upper bound of `encode_env`'s output for `program`.
pub fn encoded_len(program: &[u8]) -> usize {
    PREFIX.len() + 48 + session().len() + 2 * spec().len() + program.len()
}

/// Writes `STRATA_RT=<config for program>` into `out`, with the program's
/// signal mask `mask` for the new image; returns its length.
pub fn encode_env(program: &[u8], mask: u64, out: &mut [u8]) -> Option<usize> {
    out.get_mut(..PREFIX.len())?.copy_from_slice(PREFIX);
    let ignored = if crate::signals::sigsys_ignored() {
        strata_proto::FLAG_SIGSYS_IGNORED
    } else {
        0
    };
    let c = Config {
        flags: flags() & !strata_proto::FLAG_SIGSYS_IGNORED | ignored,
        mask: Some(mask),
        session: session(),
        spec_hex: b"",
        program,
    };
    let n = c.encode_with_spec(spec(), out.get_mut(PREFIX.len()..)?).ok()?;
    Some(PREFIX.len() + n)
}
