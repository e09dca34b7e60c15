//! Files and paths: open, stat, statx, statfs, getcwd, readlink, times,
//! mknod, xattrs, mount (strace's open.c, stat.c, print_struct_stat.c,
//! statx.c, statfs.c, getcwd.c, readlink.c, utimes.c, mknod.c, xattr.c,
//! mount.c, memfd_create.c).

use core::fmt::Write as _;

use super::io::open_modes;
use crate::out::{le_i64, le_u16, le_u32, le_u64, OMIT_TRAILING_0, P, R};
use crate::xlat;

const O_CREAT: u64 = 0o100;
const O_TMPFILE_BIT: u64 = 0o20000000;

/// open(path, flags[, mode]) from argument `off` (openat: 1).
pub(crate) fn open(p: &mut P, off: usize) -> R {
    p.path(p.a[off])?;
    p.next()?;
    let flags = p.a[off + 1];
    open_modes(p, flags as u32 as u64)?;
    if flags & (O_CREAT | O_TMPFILE_BIT) != 0 {
        p.next()?;
        p.umode(p.a[off + 2])?;
    }
    Ok(())
}

/// openat2(dirfd, path, how, size).
pub(crate) fn openat2(p: &mut P) -> R {
    p.dirfd(p.a[0])?;
    p.next()?;
    p.path(p.a[1])?;
    p.next()?;
    let (addr, size) = (p.a[2], p.a[3]);
    if size < 24 {
        p.addr(addr)?;
    } else {
        let mut b = [0u8; 24];
        if p.fetch(addr, &mut b)? {
            let (flags, mode, resolve) = (le_u64(&b[0..]), le_u64(&b[8..]), le_u64(&b[16..]));
            p.s("{flags=")?;
            open_modes(p, flags)?;
            if flags & (O_CREAT | O_TMPFILE_BIT) != 0 || mode != 0 {
                p.s(", mode=")?;
                p.oct(mode)?;
            }
            p.s(", resolve=")?;
            p.flags64(xlat::OPEN_RESOLVE_FLAGS, resolve, Some("RESOLVE_???"))?;
            if size > 24 {
                nonzero_tail(p, addr, 24, size.min(4096) as usize)?;
            }
            p.s("}")?;
        }
    }
    p.next()?;
    p.u(size)
}

/// strace's print_nonzero_bytes: `, /* bytes 24..31 */ "\x01..."` when
/// the tail of an extensible struct is not all zero.
pub(crate) fn nonzero_tail(p: &mut P, addr: u64, start: usize, total: usize) -> R {
    let mut src = crate::out::MemBytes::new(p.mem, addr.wrapping_add(start as u64));
    let len = total - start;
    let mut zero = true;
    for i in 0..len {
        match src.get(i) {
            None => return p.s(", ???"),
            Some(0) => {}
            Some(_) => zero = false,
        }
    }
    if zero {
        return Ok(());
    }
    write!(p, ", /* bytes {}..{} */ ", start, total - 1)?;
    let size = len.min(p.limit);
    p.quote(&mut src, size, crate::out::HEX)?;
    if size < len {
        p.s("...")?;
    }
    Ok(())
}

/// stat/lstat(path, buf) and fstat(fd, buf).
pub(crate) fn stat(p: &mut P, fd: bool) -> R {
    if fd {
        p.fd(p.a[0])?;
    } else {
        p.path(p.a[0])?;
    }
    p.next()?;
    p.exiting()?;
    struct_stat(p, p.a[1])
}

/// newfstatat(dirfd, path, buf, flags).
pub(crate) fn newfstatat(p: &mut P) -> R {
    p.dirfd(p.a[0])?;
    p.next()?;
    p.path(p.a[1])?;
    p.next()?;
    p.exiting()?;
    struct_stat(p, p.a[2])?;
    p.next()?;
    p.flags(xlat::AT_FLAGS, p.a[3], Some("AT_???"))
}

/// `makedev(0x1, 0x3)`.
pub(crate) fn dev(p: &mut P, dev: u64) -> R {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    p.s("makedev(")?;
    p.x(major as u32 as u64)?;
    p.s(", ")?;
    p.x(minor as u32 as u64)?;
    p.s(")")
}

/// struct stat, abbreviated as strace prints it by default:
/// `{st_mode=S_IFREG|0644, st_size=1234, ...}`.
fn struct_stat(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 144];
    if !p.fetch(addr, &mut b)? {
        return Ok(());
    }
    let mode = le_u32(&b[24..]);
    p.s("{st_mode=")?;
    p.symbolic_mode(mode)?;
    match mode & 0o170000 {
        0o020000 | 0o060000 => {
            p.s(", st_rdev=")?;
            dev(p, le_u64(&b[40..]))?;
        }
        _ => write!(p, ", st_size={}", le_i64(&b[48..]) as u64)?,
    }
    p.s(", ...}")
}

const STATX_TYPE: u32 = 1;
const STATX_MODE: u32 = 2;
const STATX_SIZE: u32 = 0x200;
const AT_STATX_SYNC_TYPE: u64 = 0x6000;

/// statx(dirfd, path, flags, mask, buf), abbreviated:
/// `{stx_mask=..., stx_attributes=0, stx_mode=S_IFREG|0644, stx_size=1234, ...}`.
pub(crate) fn statx(p: &mut P) -> R {
    p.dirfd(p.a[0])?;
    p.next()?;
    p.path(p.a[1])?;
    p.next()?;
    let flags = p.a[2] as u32 as u64;
    p.flags(xlat::AT_STATX_SYNC_TYPES, flags & AT_STATX_SYNC_TYPE, None)?;
    let rest = flags & !AT_STATX_SYNC_TYPE;
    if rest != 0 {
        p.s("|")?;
        p.flags(xlat::AT_FLAGS, rest, None)?;
    }
    p.next()?;
    p.flags(xlat::STATX_MASKS, p.a[3] as u32 as u64, Some("STATX_???"))?;
    p.next()?;
    p.exiting()?;
    let mut b = [0u8; 256];
    if !p.fetch(p.a[4], &mut b)? {
        return Ok(());
    }
    let mask = le_u32(&b[0..]);
    p.s("{stx_mask=")?;
    p.flags(xlat::STATX_MASKS, mask as u64, Some("STATX_???"))?;
    p.s(", stx_attributes=")?;
    p.flags64(xlat::STATX_ATTRS, le_u64(&b[8..]), Some("STATX_ATTR_???"))?;
    if mask & (STATX_TYPE | STATX_MODE) != 0 {
        p.s(", stx_mode=")?;
        p.symbolic_mode(le_u16(&b[28..]) as u32)?;
    }
    if mask & STATX_SIZE != 0 {
        write!(p, ", stx_size={}", le_u64(&b[40..]))?;
    }
    p.s(", ...}")
}

/// statfs(path, buf) and fstatfs(fd, buf).
pub(crate) fn statfs(p: &mut P, fd: bool) -> R {
    if fd {
        p.fd(p.a[0])?;
    } else {
        p.path(p.a[0])?;
    }
    p.next()?;
    p.exiting()?;
    let mut b = [0u8; 120];
    if !p.fetch(p.a[1], &mut b)? {
        return Ok(());
    }
    p.s("{f_type=")?;
    p.xval64(xlat::FSMAGIC, le_u64(&b[0..]), None)?;
    write!(
        p,
        ", f_bsize={}, f_blocks={}, f_bfree={}, f_bavail={}, f_files={}, f_ffree={}, f_fsid={{val=[",
        le_u64(&b[8..]),
        le_u64(&b[16..]),
        le_u64(&b[24..]),
        le_u64(&b[32..]),
        le_u64(&b[40..]),
        le_u64(&b[48..])
    )?;
    p.x(le_u32(&b[56..]) as u64)?;
    p.s(", ")?;
    p.x(le_u32(&b[60..]) as u64)?;
    write!(p, "]}}, f_namelen={}, f_frsize={}", le_u64(&b[64..]), le_u64(&b[72..]))?;
    let flags = le_u64(&b[80..]);
    if flags & 0x20 != 0 {
        p.s(", f_flags=")?;
        p.flags64(xlat::STATFS_FLAGS, flags, Some("ST_???"))?;
    }
    p.s("}")
}

/// getcwd(buf, size): the path at exit (ret is its length with the NUL).
pub(crate) fn getcwd(p: &mut P) -> R {
    p.exiting()?;
    if p.failed() {
        p.addr(p.a[0])?;
    } else {
        p.pathn(p.a[0], (p.ret as u64).saturating_sub(1) as usize)?;
    }
    p.next()?;
    p.u(p.a[1])
}

/// readlink(path, buf, size) from argument `off` (readlinkat: 1).
pub(crate) fn readlink(p: &mut P, off: usize) -> R {
    p.path(p.a[off])?;
    p.next()?;
    p.exiting()?;
    if p.failed() {
        p.addr(p.a[off + 1])?;
    } else {
        p.strn(p.a[off + 1], p.ret as u64)?;
    }
    p.next()?;
    p.u(p.a[off + 2])
}

const UTIME_NOW: u64 = (1 << 30) - 1;
const UTIME_OMIT: u64 = (1 << 30) - 2;

/// utimensat(dirfd, path, times, flags): `[UTIME_NOW, {tv_sec=5, tv_nsec=0} /* ... */]`.
pub(crate) fn utimensat(p: &mut P) -> R {
    p.dirfd(p.a[0])?;
    p.next()?;
    p.path(p.a[1])?;
    p.next()?;
    let mut b = [0u8; 32];
    if p.fetch(p.a[2], &mut b)? {
        p.s("[")?;
        for i in 0..2 {
            if i > 0 {
                p.s(", ")?;
            }
            let (sec, nsec) = (le_i64(&b[16 * i..]), le_u64(&b[16 * i + 8..]));
            match nsec {
                UTIME_NOW => p.s("UTIME_NOW")?,
                UTIME_OMIT => p.s("UTIME_OMIT")?,
                _ => {
                    write!(p, "{{tv_sec={sec}, tv_nsec={nsec}}}")?;
                    p.time_comment(sec, nsec, 999_999_999, 9)?;
                }
            }
        }
        p.s("]")?;
    }
    p.next()?;
    p.flags(xlat::AT_FLAGS, p.a[3], Some("AT_???"))
}

/// utimes(path, times) and futimesat(dirfd, path, times).
pub(crate) fn utimes(p: &mut P, at: bool) -> R {
    let mut i = 0;
    if at {
        p.dirfd(p.a[0])?;
        p.next()?;
        i = 1;
    }
    p.path(p.a[i])?;
    p.next()?;
    let mut b = [0u8; 32];
    if p.fetch(p.a[i + 1], &mut b)? {
        p.s("[")?;
        for j in 0..2 {
            if j > 0 {
                p.s(", ")?;
            }
            let (sec, usec) = (le_i64(&b[16 * j..]), le_u64(&b[16 * j + 8..]));
            write!(p, "{{tv_sec={sec}, tv_usec={usec}}}")?;
            p.time_comment(sec, usec, 999_999, 6)?;
        }
        p.s("]")?;
    }
    Ok(())
}

/// utime(path, times): `{actime=1 /* ... */, modtime=2 /* ... */}`.
pub(crate) fn utime(p: &mut P) -> R {
    p.path(p.a[0])?;
    p.next()?;
    let mut b = [0u8; 16];
    if p.fetch(p.a[1], &mut b)? {
        let (a, m) = (le_i64(&b[0..]), le_i64(&b[8..]));
        write!(p, "{{actime={a}")?;
        p.time_comment(a, 0, 0, 0)?;
        write!(p, ", modtime={m}")?;
        p.time_comment(m, 0, 0, 0)?;
        p.s("}")?;
    }
    Ok(())
}

/// mknod(path, mode, dev) from argument `off` (mknodat: 1).
pub(crate) fn mknod(p: &mut P, off: usize) -> R {
    p.path(p.a[off])?;
    p.next()?;
    let mode = p.a[off + 1] as u16 as u32;
    p.symbolic_mode(mode)?;
    if matches!(mode & 0o170000, 0o020000 | 0o060000) {
        p.next()?;
        dev(p, p.a[off + 2] as u32 as u64)?;
    }
    Ok(())
}

fn xattr_val(p: &mut P, addr: u64, insize: u64, size: u64) -> R {
    if size > 65536 {
        p.addr(addr)?;
    } else {
        p.printstr_ex(addr, size, OMIT_TRAILING_0)?;
    }
    p.next()?;
    p.u(insize)
}

/// getxattr/lgetxattr(path, name, value, size), fgetxattr(fd, ...).
pub(crate) fn getxattr(p: &mut P, fd: bool) -> R {
    if fd {
        p.fd(p.a[0])?;
    } else {
        p.path(p.a[0])?;
    }
    p.next()?;
    p.cstr(p.a[1])?;
    p.next()?;
    p.exiting()?;
    xattr_val(p, p.a[2], p.a[3], p.ret as u64)
}

/// setxattr/lsetxattr(path, name, value, size, flags), fsetxattr(fd, ...).
pub(crate) fn setxattr(p: &mut P, fd: bool) -> R {
    if fd {
        p.fd(p.a[0])?;
    } else {
        p.path(p.a[0])?;
    }
    p.next()?;
    p.cstr(p.a[1])?;
    p.next()?;
    xattr_val(p, p.a[2], p.a[3], p.a[3])?;
    p.next()?;
    p.flags(xlat::XATTRFLAGS, p.a[4], Some("XATTR_???"))
}

/// listxattr/llistxattr(path, list, size), flistxattr(fd, ...).
pub(crate) fn listxattr(p: &mut P, fd: bool) -> R {
    if fd {
        p.fd(p.a[0])?;
    } else {
        p.path(p.a[0])?;
    }
    p.next()?;
    p.exiting()?;
    if p.a[2] == 0 || p.failed() {
        p.addr(p.a[1])?;
    } else {
        p.strn(p.a[1], p.ret as u64)?;
    }
    p.next()?;
    p.u(p.a[2])
}

const MS_MGC_MSK: u64 = 0xffff0000;
const MS_MGC_VAL: u64 = 0xc0ed0000;
const MS_REMOUNT: u64 = 32;
const MS_BIND: u64 = 4096;
const MS_MOVE: u64 = 8192;
const MS_UNBINDABLE: u64 = 1 << 17;
const MS_PRIVATE: u64 = 1 << 18;
const MS_SLAVE: u64 = 1 << 19;
const MS_SHARED: u64 = 1 << 20;

/// mount(source, target, type, flags, data).
pub(crate) fn mount(p: &mut P) -> R {
    let mut flags = p.a[3];
    let old_magic = flags & MS_MGC_MSK == MS_MGC_VAL;
    if old_magic {
        flags &= !MS_MGC_MSK;
    }
    let (mut ignore_type, mut ignore_data) = (false, false);
    if flags & MS_REMOUNT != 0 {
        ignore_type = true;
    } else if flags & (MS_BIND | MS_MOVE | MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE) != 0 {
        ignore_type = true;
        ignore_data = true;
    }
    p.path(p.a[0])?;
    p.next()?;
    p.path(p.a[1])?;
    p.next()?;
    if ignore_type {
        p.addr(p.a[2])?;
    } else {
        p.cstr(p.a[2])?;
    }
    p.next()?;
    if old_magic {
        p.s("MS_MGC_VAL")?;
        if flags != 0 {
            p.s("|")?;
        }
    }
    if flags != 0 || !old_magic {
        p.flags64(xlat::MOUNT_FLAGS, flags, Some("MS_???"))?;
    }
    p.next()?;
    if ignore_data {
        p.addr(p.a[4])
    } else {
        p.cstr(p.a[4])
    }
}

/// memfd_create(name, flags).
pub(crate) fn memfd_create(p: &mut P) -> R {
    p.printstr_ex(p.a[0], 255 - 6 + 1, crate::out::CSTR)?;
    p.next()?;
    let mut flags = p.a[1] as u32 as u64;
    if flags == 0 {
        return p.x(0);
    }
    const MFD_HUGE_MASK: u64 = 0x3f << 26;
    let huge = flags & MFD_HUGE_MASK;
    flags &= !MFD_HUGE_MASK;
    if flags != 0 || huge == 0 {
        p.flags(xlat::MEMFD_CREATE_FLAGS, flags, Some("MFD_???"))?;
    }
    if huge != 0 {
        if flags != 0 {
            p.s("|")?;
        }
        write!(p, "{}<<MFD_HUGE_SHIFT", huge >> 26)?;
    }
    Ok(())
}
