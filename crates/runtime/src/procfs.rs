//! The few /proc/self files that would otherwise describe strata-rt rather
//! than the program: `environ` (the launch variable), `auxv` (strata-rt's
//! auxiliary vector), and `exe`. Opening them gives the program's own view:
//! a snapshot in a memory file for environ and auxv (taken at open, as the
//! kernel reads the live memory), the program's file for exe.

use crate::dispatch::passthrough;
use crate::sys::{self, Sysno, UContext};
use core::sync::atomic::{AtomicUsize, Ordering};

static ENV_AT: AtomicUsize = AtomicUsize::new(0);
static ENV_LEN: AtomicUsize = AtomicUsize::new(0);
static AUXV_AT: AtomicUsize = AtomicUsize::new(0);
static AUXV_LEN: AtomicUsize = AtomicUsize::new(0);

pub fn record_environ(at: usize, len: usize) {
    ENV_AT.store(at, Ordering::Relaxed);
    ENV_LEN.store(len, Ordering::Relaxed);
}

pub fn record_auxv(at: usize, len: usize) {
    AUXV_AT.store(at, Ordering::Relaxed);
    AUXV_LEN.store(len, Ordering::Relaxed);
}

enum Which {
    Environ,
    Auxv,
    Exe,
}

/// Parses `/proc/{self,thread-self,PID}/NAME` for our own pid.
fn which(p: &[u8]) -> Option<Which> {
    let rest = p.strip_prefix(b"/proc/")?;
    let slash = rest.iter().position(|&c| c == b'/')?;
    let (who, name) = (&rest[..slash], &rest[slash + 1..]);
    let ours = who == b"self"
        || who == b"thread-self"
        || (!who.is_empty()
            && who.iter().all(u8::is_ascii_digit)
            && who
                .iter()
                .fold(0usize, |v, &c| v.wrapping_mul(10).wrapping_add((c - b'0') as usize))
                == sys::getpid());
    if !ours {
        return None;
    }
    match name {
        b"environ" => Some(Which::Environ),
        b"auxv" => Some(Which::Auxv),
        b"exe" => Some(Which::Exe),
        _ => None,
    }
}

/// Which of the files above the path at `path_p` names (only absolute
/// /proc paths are recognised), if any.
fn special(path_p: u64) -> Option<Which> {
    let mut raw = [0u8; 48];
    let n = sys::read_user_cstr(path_p as usize, &mut raw).ok()?;
    which(&raw[..n])
}

/// Whether open/openat of the path at `path_p` is re-issued unchanged by
/// `open` (dispatch::bottom_passes).
#[inline]
pub fn passes(path_p: u64) -> bool {
    special(path_p).is_none()
}

/// open/openat.
pub fn open(uc: &UContext, nr: usize, path_p: u64, flags: u64, a: [u64; 6]) -> isize {
    let Some(w) = special(path_p) else {
        return passthrough(uc, nr, a);
    };
    let (at, len) = match w {
        Which::Environ => (ENV_AT.load(Ordering::Relaxed), ENV_LEN.load(Ordering::Relaxed)),
        Which::Auxv => (AUXV_AT.load(Ordering::Relaxed), AUXV_LEN.load(Ordering::Relaxed)),
        Which::Exe => {
            let exe = crate::config::exe();
            let mut b = a;
            let i = if nr == Sysno::openat as usize { 1 } else { 0 };
            b[i] = exe.ptr() as u64;
            return passthrough(uc, nr, b);
        }
    };
    const MFD_CLOEXEC: usize = 1;
    const O_CLOEXEC: u64 = 0o2000000;
    let mfd_flags = if flags & O_CLOEXEC != 0 { MFD_CLOEXEC } else { 0 };
    // Not executable (a sandbox policy's seccomp filter refuses memfds that
    // could be: they can be run outside strata); kernels before 6.3 do not
    // know the flag.
    const MFD_NOEXEC_SEAL: usize = 8;
    // SAFETY: memfd_create with a static NUL-terminated name.
    let mut fd = unsafe {
        sys::sc(
            Sysno::memfd_create,
            &[c"strata-proc".as_ptr() as usize, mfd_flags | MFD_NOEXEC_SEAL],
        )
    };
    if fd == -sys::EINVAL {
        // SAFETY: as above.
        fd = unsafe { sys::sc(Sysno::memfd_create, &[c"strata-proc".as_ptr() as usize, mfd_flags]) };
    }
    let Ok(fd) = sys::check(fd) else { return fd };
    let mut off = 0;
    while off < len {
        // SAFETY: the recorded range is the program's own initial stack data.
        let r = unsafe { sys::sc(Sysno::write, &[fd, at + off, len - off]) };
        match sys::check(r) {
            Ok(0) | Err(_) => break,
            Ok(k) => off += k,
        }
    }
    // SAFETY: rewinding our own descriptor.
    unsafe { sys::sc(Sysno::lseek, &[fd, 0, 0]) };
    fd as isize
}

/// One line of /proc/self/maps.
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    /// `rwxp` / `r-xs` ...
    pub perms: [u8; 4],
    /// A kernel-provided region ([vdso], [vvar], [vsyscall], ...).
    pub special: bool,
}

/// Calls `f` for each mapping of the process, in address order, until it
/// returns false. Reads /proc/self/maps in pieces (no allocation).
pub fn for_each_mapping(f: &mut dyn FnMut(&Mapping) -> bool) {
    // SAFETY: a NUL-terminated path constant.
    let fd = unsafe {
        sys::sc(
            sys::Sysno::open,
            &[c"/proc/self/maps".as_ptr() as usize, sys::O_RDONLY | sys::O_CLOEXEC, 0],
        )
    };
    if fd < 0 {
        return;
    }
    let mut buf = [0u8; 4096];
    let mut have = 0usize;
    'read: loop {
        // SAFETY: reading into the free tail of our buffer.
        let r = unsafe {
            sys::sc(
                sys::Sysno::read,
                &[fd as usize, buf[have..].as_mut_ptr() as usize, buf.len() - have],
            )
        };
        if r <= 0 {
            break;
        }
        have += r as usize;
        let mut used = 0;
        while let Some(nl) = buf[used..have].iter().position(|&b| b == b'\n') {
            let line = &buf[used..used + nl];
            used += nl + 1;
            if let Some(m) = parse_mapping(line) {
                if !f(&m) {
                    break 'read;
                }
            }
        }
        buf.copy_within(used..have, 0);
        have -= used;
        if have == buf.len() {
            break; // a line longer than the buffer: give up
        }
    }
    // SAFETY: closing our own descriptor.
    unsafe { sys::sc(sys::Sysno::close, &[fd as usize]) };
}

fn parse_mapping(line: &[u8]) -> Option<Mapping> {
    let hex = |s: &[u8]| -> Option<u64> {
        let mut v = 0u64;
        for &c in s {
            v = v.checked_mul(16)? + (c as char).to_digit(16)? as u64;
        }
        Some(v)
    };
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let range = fields.next()?;
    let dash = range.iter().position(|&b| b == b'-')?;
    let perms = fields.next()?;
    if perms.len() != 4 {
        return None;
    }
    let name = fields.nth(3).unwrap_or(b"");
    Some(Mapping {
        start: hex(&range[..dash])?,
        end: hex(&range[dash + 1..])?,
        perms: [perms[0], perms[1], perms[2], perms[3]],
        special: name.first() == Some(&b'['),
    })
}
