//! Which calls modify, what a discarded open becomes, which links name
//! host paths, and AF_UNIX socket addresses. Pure: decisions from numbers,
//! arguments and bytes already read.

use strata_abi::Op;
use strata_ext::ENAMETOOLONG;

pub const NR_OPEN: u32 = 2;
pub const NR_ACCESS: u32 = 21;
pub const NR_CONNECT: u32 = 42;
pub const NR_BIND: u32 = 49;
pub const NR_GETCWD: u32 = 79;
pub const NR_CREAT: u32 = 85;
pub const NR_READLINK: u32 = 89;
pub const NR_OPENAT: u32 = 257;
pub const NR_NEWFSTATAT: u32 = 262;
pub const NR_READLINKAT: u32 = 267;
pub const NR_FACCESSAT: u32 = 269;
pub const NR_OPENAT2: u32 = 437;
pub const NR_FACCESSAT2: u32 = 439;

pub const O_ACCMODE: u64 = 0o3;
pub const O_WRONLY: u64 = 0o1;
pub const O_RDWR: u64 = 0o2;
pub const O_CREAT: u64 = 0o100;
pub const O_EXCL: u64 = 0o200;
pub const O_TRUNC: u64 = 0o1000;
pub const O_DIRECTORY: u64 = 0o200000;
/// `O_TMPFILE` (which includes `O_DIRECTORY`).
pub const O_TMPFILE: u64 = 0o20200000;
const W_OK: u64 = 2;

/// Whether open flags `flags` may write: write access, `O_CREAT`,
/// `O_TRUNC` or `O_TMPFILE`.
pub fn open_writes(flags: u64) -> bool {
    matches!(flags & O_ACCMODE, O_WRONLY | O_RDWR) || flags & (O_CREAT | O_TRUNC | (O_TMPFILE & !O_DIRECTORY)) != 0
}

/// The flags of an open for writing redirected to `/dev/null` by a
/// discarding mapping: same access, nothing that creates, truncates or
/// demands a directory.
pub fn discard_flags(flags: u64) -> u64 {
    flags & !(O_CREAT | O_EXCL | O_TRUNC | O_DIRECTORY | O_TMPFILE)
}

/// Where the open flags of a `StreamOpen` call are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenFlags {
    /// In argument register `i`.
    Arg(usize),
    /// In the `struct open_how` argument 2 points to (openat2).
    How,
    /// creat: always `O_CREAT|O_WRONLY|O_TRUNC`.
    Creat,
}

pub fn open_flags(nr: u32) -> OpenFlags {
    match nr {
        NR_OPEN => OpenFlags::Arg(1),
        NR_OPENAT => OpenFlags::Arg(2),
        NR_OPENAT2 => OpenFlags::How,
        _ => OpenFlags::Creat,
    }
}

/// Whether call `nr`, decoded as `op`, would modify what its path operands
/// name. `how_flags` reads openat2's flags (only called for openat2).
pub fn modifies(op: Op, nr: u32, args: &[u64; 6], how_flags: impl FnOnce() -> Result<u64, i64>) -> Result<bool, i64> {
    Ok(match op {
        Op::StreamDelete
        | Op::StreamRename
        | Op::StreamLink
        | Op::StreamCreateDir
        | Op::StreamSetAttr
        | Op::StreamSetLength => true,
        Op::StreamOpen => match open_flags(nr) {
            OpenFlags::Arg(i) => open_writes(args.get(i).copied().unwrap_or(0)),
            OpenFlags::How => open_writes(how_flags()?),
            OpenFlags::Creat => true,
        },
        _ => false,
    })
}

/// Whether call `nr` is an access check asking for write permission
/// (access, faccessat, faccessat2 with `W_OK`): a read-only file system
/// answers `EROFS`.
pub fn asks_write_access(nr: u32, args: &[u64; 6]) -> bool {
    let mode = match nr {
        NR_ACCESS => args[1],
        NR_FACCESSAT | NR_FACCESSAT2 => args[2],
        _ => return false,
    };
    mode & W_OK != 0
}

fn is_number(c: &[u8]) -> bool {
    !c.is_empty() && c.iter().all(u8::is_ascii_digit)
}

/// Whether canonical program path `p` is a link of `/proc` whose target
/// the kernel writes as a host path: `/proc/PID/{cwd,exe,root}`,
/// `/proc/PID/fd/N` and the same under `/proc/PID/task/TID/` (`PID` may
/// also be `self` or `thread-self`, in case they were not resolved).
pub fn is_proc_link(p: &[u8]) -> bool {
    let mut it = crate::path::components(p);
    if it.next() != Some(b"proc") {
        return false;
    }
    let mut task = false;
    match it.next() {
        Some(b"self") => {}
        Some(b"thread-self") => task = true,
        Some(pid) if is_number(pid) => {}
        _ => return false,
    }
    let mut next = it.next();
    if !task && next == Some(b"task") {
        match it.next() {
            Some(tid) if is_number(tid) => next = it.next(),
            _ => return false,
        }
    }
    let tail_ok = match next {
        Some(b"cwd" | b"exe" | b"root") => true,
        Some(b"fd") => it.next().is_some_and(is_number),
        _ => false,
    };
    tail_ok && it.next().is_none()
}

/// `sizeof(struct sockaddr_un)`.
pub const SOCKADDR_UN_LEN: usize = 110;
const AF_UNIX: u16 = 1;
/// The longest host path a translated `sun_path` takes (its NUL must fit).
pub const SUN_PATH_MAX: usize = 107;

/// The path of AF_UNIX socket address `addr` (the `addrlen` bytes given):
/// `sun_path` up to its NUL. None for another family, an unnamed socket
/// or an abstract one (`sun_path[0]` is NUL).
pub fn unix_path(addr: &[u8]) -> Option<&[u8]> {
    let fam = u16::from_ne_bytes([*addr.first()?, *addr.get(1)?]);
    if fam != AF_UNIX || addr.len() > SOCKADDR_UN_LEN {
        return None;
    }
    let path = addr.get(2..)?;
    let path = path.split(|&b| b == 0).next()?;
    (!path.is_empty()).then_some(path)
}

/// Writes an AF_UNIX socket address for `path` into `out`; returns its
/// length (family, path, NUL), or `-ENAMETOOLONG` when the path has more
/// than [`SUN_PATH_MAX`] bytes.
pub fn unix_sockaddr(path: &[u8], out: &mut [u8; SOCKADDR_UN_LEN]) -> Result<usize, i64> {
    if path.len() > SUN_PATH_MAX {
        return Err(-ENAMETOOLONG);
    }
    *out = [0; SOCKADDR_UN_LEN];
    let [a, b] = AF_UNIX.to_ne_bytes();
    out[0] = a;
    out[1] = b;
    let dst = out.get_mut(2..2 + path.len()).ok_or(-ENAMETOOLONG)?;
    dst.copy_from_slice(path);
    Ok(2 + path.len() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_how() -> Result<u64, i64> {
        panic!("open_how read for a call that has none")
    }

    #[test]
    fn modifying_calls() {
        let a = |x: u64, y: u64| [0, x, y, 0, 0, 0];
        for op in [
            Op::StreamDelete,
            Op::StreamRename,
            Op::StreamLink,
            Op::StreamCreateDir,
            Op::StreamSetAttr,
            Op::StreamSetLength,
        ] {
            assert_eq!(modifies(op, 0, &a(0, 0), no_how), Ok(true), "{op:?}");
        }
        for op in [
            Op::StreamAttrByName,
            Op::ProcessExec,
            Op::StreamChangeDir,
            Op::StreamWatch,
        ] {
            assert_eq!(modifies(op, 0, &a(0, 0), no_how), Ok(false), "{op:?}");
        }
        let open = |nr, args: &[u64; 6]| modifies(Op::StreamOpen, nr, args, no_how).unwrap();
        assert!(!open(NR_OPEN, &a(0, 0)));
        assert!(!open(NR_OPEN, &a(O_DIRECTORY | 0o2000000, 0)));
        assert!(open(NR_OPEN, &a(O_WRONLY, 0)));
        assert!(open(NR_OPEN, &a(O_RDWR, 0)));
        assert!(open(NR_OPEN, &a(O_CREAT, 0)));
        assert!(open(NR_OPEN, &a(O_TRUNC, 0)));
        assert!(!open(NR_OPENAT, &a(O_WRONLY, 0)));
        assert!(open(NR_OPENAT, &a(0, O_WRONLY)));
        assert!(open(NR_OPENAT, &a(0, O_TMPFILE | O_RDWR)));
        assert!(open(NR_CREAT, &a(0, 0)));
        assert_eq!(modifies(Op::StreamOpen, NR_OPENAT2, &a(0, 0), || Ok(O_RDWR)), Ok(true));
        assert_eq!(modifies(Op::StreamOpen, NR_OPENAT2, &a(0, 0), || Ok(0)), Ok(false));
        assert_eq!(modifies(Op::StreamOpen, NR_OPENAT2, &a(0, 0), || Err(-14)), Err(-14));
    }

    #[test]
    fn write_access_checks() {
        assert!(asks_write_access(NR_ACCESS, &[0, 2, 0, 0, 0, 0]));
        assert!(!asks_write_access(NR_ACCESS, &[0, 4, 0, 0, 0, 0]));
        assert!(asks_write_access(NR_FACCESSAT, &[0, 0, 6, 0, 0, 0]));
        assert!(asks_write_access(NR_FACCESSAT2, &[0, 0, 2, 0, 0, 0]));
        assert!(!asks_write_access(NR_OPEN, &[0, 2, 2, 0, 0, 0]));
    }

    #[test]
    fn discarded_opens() {
        let f = O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | 0o2000 | 0o2000000;
        assert_eq!(discard_flags(f), O_WRONLY | 0o2000 | 0o2000000);
        assert_eq!(discard_flags(O_RDWR | O_TMPFILE), O_RDWR);
        assert_eq!(discard_flags(O_RDWR | O_DIRECTORY), O_RDWR);
        assert_eq!(open_flags(NR_OPEN), OpenFlags::Arg(1));
        assert_eq!(open_flags(NR_OPENAT), OpenFlags::Arg(2));
        assert_eq!(open_flags(NR_OPENAT2), OpenFlags::How);
        assert_eq!(open_flags(NR_CREAT), OpenFlags::Creat);
    }

    #[test]
    fn proc_links() {
        for p in [
            "/proc/self/cwd",
            "/proc/self/exe",
            "/proc/self/root",
            "/proc/self/fd/3",
            "/proc/thread-self/cwd",
            "/proc/1234/cwd",
            "/proc/1234/fd/10",
            "/proc/1234/task/1240/exe",
            "/proc/1234/task/1240/fd/0",
        ] {
            assert!(is_proc_link(p.as_bytes()), "{p}");
        }
        for p in [
            "/proc",
            "/proc/self",
            "/proc/self/fd",
            "/proc/self/fd/x",
            "/proc/self/fd/3/x",
            "/proc/self/status",
            "/proc/abc/cwd",
            "/proc/1234/task/x/cwd",
            "/proc/thread-self/task/1/cwd",
            "/prc/self/cwd",
            "/data/proc/self/cwd",
        ] {
            assert!(!is_proc_link(p.as_bytes()), "{p}");
        }
    }

    #[test]
    fn unix_addresses() {
        let mut a = std::vec![1u8, 0];
        a.extend_from_slice(b"/run/x.sock\0junk");
        assert_eq!(unix_path(&a), Some(&b"/run/x.sock"[..]));
        assert_eq!(unix_path(&a[..13]), Some(&b"/run/x.sock"[..]));
        assert_eq!(unix_path(&[1, 0, 0, b'a', b'b']), None); // abstract
        assert_eq!(unix_path(&[1, 0]), None); // unnamed
        assert_eq!(unix_path(&[2, 0, b'/', b'x']), None); // AF_INET
        assert_eq!(unix_path(&[1]), None);
        assert_eq!(unix_path(&[1; 111]), None);

        let mut out = [0xffu8; SOCKADDR_UN_LEN];
        assert_eq!(unix_sockaddr(b"/tmp/x/s", &mut out), Ok(11));
        assert_eq!(&out[..11], b"\x01\x00/tmp/x/s\0");
        let p107 = [b'a'; 107];
        assert_eq!(unix_sockaddr(&p107, &mut out), Ok(110));
        assert_eq!(out[109], 0);
        assert_eq!(unix_sockaddr(&[b'a'; 108], &mut out), Err(-ENAMETOOLONG));
    }
}
