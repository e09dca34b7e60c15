//! The launch configuration, copied out of the environment at start (the
//! program may later overwrite its initial environment strings).

use crate::load::Path;
use crate::sys::{self, Sysno};
use core::sync::atomic::{AtomicU32, Ordering};
use strata_proto::Config;

static FLAGS: AtomicU32 = AtomicU32::new(0);
static mut COUNT_PATH: Path = Path::new();
static mut RUNTIME: Path = Path::new();

/// Records the configuration and our own path (to re-exec on execve).
///
/// # Safety
/// Called once at start, single-threaded.
pub unsafe fn init(c: &Config) -> Result<(), isize> {
    FLAGS.store(c.flags, Ordering::Relaxed);
    // SAFETY: single-threaded start (contract).
    unsafe {
        (*core::ptr::addr_of_mut!(COUNT_PATH)).set(c.count_path)?;
        let rt = &mut *core::ptr::addr_of_mut!(RUNTIME);
        let r = sys::sc(
            Sysno::readlink,
            &[c"/proc/self/exe".as_ptr() as usize, rt.buf.as_mut_ptr() as usize, 4096],
        );
        let n = sys::check(r)?;
        rt.buf[n] = 0;
        rt.len = n;
    }
    Ok(())
}

pub fn flags() -> u32 {
    FLAGS.load(Ordering::Relaxed)
}

pub fn follow_exec() -> bool {
    flags() & strata_proto::FLAG_FOLLOW_EXEC != 0
}

pub fn count_path() -> &'static [u8] {
    // SAFETY: written once at start, read-only afterwards.
    unsafe { (*core::ptr::addr_of!(COUNT_PATH)).bytes() }
}

/// strata-rt's own path.
pub fn runtime_path() -> &'static Path {
    // SAFETY: written once at start, read-only afterwards.
    unsafe { &*core::ptr::addr_of!(RUNTIME) }
}

/// What /proc/self/exe should name.
pub fn exe() -> &'static Path {
    // SAFETY: written once by the loader at start, read-only afterwards.
    unsafe { &*core::ptr::addr_of!(crate::load::EXE) }
}

const PREFIX: &[u8] = b"STRATA_RT=";

/// Upper bound of `encode_env`'s output for `program`.
pub fn encoded_len(program: &[u8]) -> usize {
    PREFIX.len() + 32 + count_path().len() + program.len()
}

/// Writes `STRATA_RT=<config for program>` into `out`; returns its length.
pub fn encode_env(program: &[u8], out: &mut [u8]) -> Option<usize> {
    out.get_mut(..PREFIX.len())?.copy_from_slice(PREFIX);
    let c = Config {
        flags: flags(),
        count_path: count_path(),
        program,
    };
    let n = c.encode(out.get_mut(PREFIX.len()..)?).ok()?;
    Some(PREFIX.len() + n)
}
