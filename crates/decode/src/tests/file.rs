//! Files and paths: open flags and modes, stat family, statx, access,
//! readlink, getcwd, umask, chmod/chown, utimensat, directory calls.

use std::vec;
use std::vec::Vec;

use super::{check, Mem, NOMEM};
use crate::nr::*;

const P: u64 = 0x5000;
const ST: u64 = 0x7ffc_f5d1_bb70;
const AT_FDCWD: u64 = -100i64 as u64;

/// A struct stat with the fields strace's abbreviated form shows.
fn stat(mode: u32, size: u64, rdev: u64) -> Vec<u8> {
    let mut b = vec![0u8; 144];
    b[24..28].copy_from_slice(&mode.to_le_bytes());
    b[40..48].copy_from_slice(&rdev.to_le_bytes());
    b[48..56].copy_from_slice(&size.to_le_bytes());
    b
}

/// `strace ls` and:
/// ```c
/// open("/etc/passwd", O_RDONLY|O_CLOEXEC);
/// open("/tmp/ex/out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0644);
/// openat(AT_FDCWD, "/tmp/ex/out.txt", O_RDWR|O_APPEND|O_NONBLOCK|O_NOFOLLOW);
/// openat(3, "x", O_WRONLY|O_CREAT|O_EXCL|O_DIRECTORY, 0755);
/// open("/tmp/ex/t", O_RDWR|O_CREAT|O_TMPFILE, 0600);
/// ```
/// (glibc's open() is openat(AT_FDCWD, ...)).
#[test]
fn open_flags_and_modes() {
    let m = Mem::new().str(P, "/etc/ld.so.cache");
    check(
        OPENAT,
        [AT_FDCWD, P, 0x80000, 0, 0, 0],
        3,
        &m,
        r#"openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3"#,
    );
    let m = Mem::new().str(P, "/tmp/ex/out.txt");
    check(
        OPENAT,
        [AT_FDCWD, P, 0o1101, 0o644, 0, 0],
        3,
        &m,
        r#"openat(AT_FDCWD, "/tmp/ex/out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3"#,
    );
    check(
        OPENAT,
        [AT_FDCWD, P, 0o2 | 0o2000 | 0o4000 | 0o400000, 0, 0, 0],
        3,
        &m,
        r#"openat(AT_FDCWD, "/tmp/ex/out.txt", O_RDWR|O_APPEND|O_NONBLOCK|O_NOFOLLOW) = 3"#,
    );
    let m = Mem::new().str(P, "x");
    check(
        OPENAT,
        [3, P, 0o1 | 0o100 | 0o200 | 0o200000, 0o755, 0, 0],
        -22,
        &m,
        r#"openat(3, "x", O_WRONLY|O_CREAT|O_EXCL|O_DIRECTORY, 0755) = -1 EINVAL (Invalid argument)"#,
    );
    let m = Mem::new().str(P, "/tmp/ex/t");
    check(
        OPENAT,
        [AT_FDCWD, P, 0o2 | 0o100 | 0o20200000, 0o600, 0, 0],
        -22,
        &m,
        r#"openat(AT_FDCWD, "/tmp/ex/t", O_RDWR|O_CREAT|O_TMPFILE, 0600) = -1 EINVAL (Invalid argument)"#,
    );
    // The old open(2): `syscall(SYS_open, "/etc/passwd", O_RDONLY | O_CLOEXEC)`.
    let m = Mem::new().str(P, "/etc/passwd");
    check(
        OPEN,
        [P, 0x80000, 0, 0, 0, 0],
        6,
        &m,
        r#"open("/etc/passwd", O_RDONLY|O_CLOEXEC) = 6"#,
    );
}

/// `openat2(AT_FDCWD, "/etc/passwd", &how, sizeof how)` with
/// `how = {.flags = O_RDONLY|O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS}`.
#[test]
fn openat2() {
    let m = Mem::new().str(P, "/etc/passwd").words(0x6000, &[0x80000, 0, 4]);
    check(
        OPENAT2,
        [AT_FDCWD, P, 0x6000, 24, 0, 0],
        19,
        &m,
        r#"openat2(AT_FDCWD, "/etc/passwd", {flags=O_RDONLY|O_CLOEXEC, resolve=RESOLVE_NO_SYMLINKS}, 24) = 19"#,
    );
}

/// `strace ls` (ld.so's fstat), and
/// ```c
/// stat("/etc/passwd", &st); lstat("/etc", &st); stat("/nonexistent", &st);
/// fstatat(AT_FDCWD, "/dev/null", &st, AT_SYMLINK_NOFOLLOW);
/// ```
/// (glibc's stat() is newfstatat).
#[test]
fn stat_family() {
    let m = Mem::new().str(P, "").put(ST, &stat(0o100644, 33763, 0));
    check(
        NEWFSTATAT,
        [3, P, ST, 0x1000, 0, 0],
        0,
        &m,
        r#"newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=33763, ...}, AT_EMPTY_PATH) = 0"#,
    );
    let m = Mem::new().str(P, "/etc").put(ST, &stat(0o40755, 4096, 0));
    check(
        NEWFSTATAT,
        [AT_FDCWD, P, ST, 0x100, 0, 0],
        0,
        &m,
        r#"newfstatat(AT_FDCWD, "/etc", {st_mode=S_IFDIR|0755, st_size=4096, ...}, AT_SYMLINK_NOFOLLOW) = 0"#,
    );
    let m = Mem::new().str(P, "/nonexistent").put(ST, &stat(0, 0, 0));
    check(
        NEWFSTATAT,
        [AT_FDCWD, P, ST, 0, 0, 0],
        -2,
        &m,
        r#"newfstatat(AT_FDCWD, "/nonexistent", 0x7ffcf5d1bb70, 0) = -1 ENOENT (No such file or directory)"#,
    );
    let m = Mem::new().str(P, "/dev/null").put(ST, &stat(0o20666, 0, 0x103));
    check(
        NEWFSTATAT,
        [AT_FDCWD, P, ST, 0x100, 0, 0],
        0,
        &m,
        r#"newfstatat(AT_FDCWD, "/dev/null", {st_mode=S_IFCHR|0666, st_rdev=makedev(0x1, 0x3), ...}, AT_SYMLINK_NOFOLLOW) = 0"#,
    );
    let m = Mem::new().str(P, "/tmp").put(ST, &stat(0o41777, 4096, 0));
    check(
        NEWFSTATAT,
        [AT_FDCWD, P, ST, 0, 0, 0],
        0,
        &m,
        r#"newfstatat(AT_FDCWD, "/tmp", {st_mode=S_IFDIR|S_ISVTX|0777, st_size=4096, ...}, 0) = 0"#,
    );
    let m = Mem::new().put(ST, &stat(0o100640, 12345, 0));
    check(
        FSTAT,
        [5, ST, 0, 0, 0, 0],
        0,
        &m,
        "fstat(5, {st_mode=S_IFREG|0640, st_size=12345, ...}) = 0",
    );
    // `syscall(SYS_stat, "/etc/passwd", &st)`
    let m = Mem::new().str(P, "/etc/passwd").put(ST, &stat(0o100644, 1221, 0));
    check(
        STAT,
        [P, ST, 0, 0, 0, 0],
        0,
        &m,
        r#"stat("/etc/passwd", {st_mode=S_IFREG|0644, st_size=1221, ...}) = 0"#,
    );
}

/// ```c
/// statx(AT_FDCWD, "/etc/passwd", AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS, &stx);
/// statx(AT_FDCWD, "/etc", AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_ALL, &stx);
/// ```
#[test]
fn statx() {
    let mut stx = vec![0u8; 256];
    stx[0..4].copy_from_slice(&0x17ffu32.to_le_bytes());
    stx[28..30].copy_from_slice(&0o100644u16.to_le_bytes());
    stx[40..48].copy_from_slice(&1221u64.to_le_bytes());
    let m = Mem::new().str(P, "/etc/passwd").put(ST, &stx);
    check(
        STATX,
        [AT_FDCWD, P, 0, 0x7ff, ST, 0],
        0,
        &m,
        r#"statx(AT_FDCWD, "/etc/passwd", AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS, {stx_mask=STATX_BASIC_STATS|STATX_MNT_ID, stx_attributes=0, stx_mode=S_IFREG|0644, stx_size=1221, ...}) = 0"#,
    );
    stx[0..4].copy_from_slice(&0x1fffu32.to_le_bytes());
    stx[28..30].copy_from_slice(&0o40755u16.to_le_bytes());
    stx[40..48].copy_from_slice(&4096u64.to_le_bytes());
    let m = Mem::new().str(P, "/etc").put(ST, &stx);
    check(
        STATX,
        [AT_FDCWD, P, 0x4100, 0xfff, ST, 0],
        0,
        &m,
        r#"statx(AT_FDCWD, "/etc", AT_STATX_DONT_SYNC|AT_SYMLINK_NOFOLLOW, STATX_ALL, {stx_mask=STATX_ALL|STATX_MNT_ID, stx_attributes=0, stx_mode=S_IFDIR|0755, stx_size=4096, ...}) = 0"#,
    );
}

/// ```c
/// access("/etc/passwd", F_OK); access("/etc/passwd", R_OK|W_OK|X_OK);
/// faccessat(AT_FDCWD, "/etc", X_OK, AT_EACCESS);     /* glibc: faccessat2 */
/// syscall(SYS_faccessat2, AT_FDCWD, "/etc", R_OK, AT_EACCESS|AT_SYMLINK_NOFOLLOW);
/// ```
#[test]
fn access() {
    let m = Mem::new().str(P, "/etc/passwd");
    check(
        ACCESS,
        [P, 0, 0, 0, 0, 0],
        0,
        &m,
        r#"access("/etc/passwd", F_OK)       = 0"#,
    );
    check(
        ACCESS,
        [P, 7, 0, 0, 0, 0],
        -13,
        &m,
        r#"access("/etc/passwd", R_OK|W_OK|X_OK) = -1 EACCES (Permission denied)"#,
    );
    let m = Mem::new().str(P, "/etc");
    check(
        FACCESSAT2,
        [AT_FDCWD, P, 1, 0x200, 0, 0],
        0,
        &m,
        r#"faccessat2(AT_FDCWD, "/etc", X_OK, AT_EACCESS) = 0"#,
    );
    check(
        FACCESSAT2,
        [AT_FDCWD, P, 4, 0x300, 0, 0],
        0,
        &m,
        r#"faccessat2(AT_FDCWD, "/etc", R_OK, AT_SYMLINK_NOFOLLOW|AT_EACCESS) = 0"#,
    );
}

/// ```c
/// getcwd(buf, sizeof buf); chdir("/tmp"); mkdir("/tmp/ex/d", 0755);
/// mkdirat(AT_FDCWD, "/tmp/ex/d2", 0700); rename("/tmp/ex/d", "/tmp/ex/d3");
/// renameat2(AT_FDCWD, "/tmp/ex/d2", AT_FDCWD, "/tmp/ex/d4", RENAME_NOREPLACE);
/// rmdir("/tmp/ex/d3"); unlinkat(AT_FDCWD, "/tmp/ex/d4", AT_REMOVEDIR);
/// symlink("out.txt", "/tmp/ex/ln"); readlink("/tmp/ex/ln", buf, sizeof buf);
/// readlinkat(AT_FDCWD, "/tmp/ex/ln", buf, 3); link("/tmp/ex/out.txt", "/tmp/ex/hl");
/// ```
#[test]
fn directories_and_links() {
    let m = Mem::new().str(P, "/tmp/ex");
    check(
        GETCWD,
        [P, 256, 0, 0, 0, 0],
        8,
        &m,
        r#"getcwd("/tmp/ex", 256)            = 8"#,
    );
    check(
        GETCWD,
        [P, 1, 0, 0, 0, 0],
        -34,
        &m,
        "getcwd(0x5000, 1) = -1 ERANGE (Numerical result out of range)",
    );
    let m = Mem::new().str(P, "/tmp");
    check(
        CHDIR,
        [P, 0, 0, 0, 0, 0],
        0,
        &m,
        r#"chdir("/tmp")                     = 0"#,
    );
    let m = Mem::new().str(P, "/tmp/ex/d").str(0x6000, "/tmp/ex/d3");
    check(
        MKDIR,
        [P, 0o755, 0, 0, 0, 0],
        0,
        &m,
        r#"mkdir("/tmp/ex/d", 0755)          = 0"#,
    );
    check(
        RENAME,
        [P, 0x6000, 0, 0, 0, 0],
        0,
        &m,
        r#"rename("/tmp/ex/d", "/tmp/ex/d3") = 0"#,
    );
    let m = Mem::new().str(P, "/tmp/ex/d2").str(0x6000, "/tmp/ex/d4");
    check(
        MKDIRAT,
        [AT_FDCWD, P, 0o700, 0, 0, 0],
        0,
        &m,
        r#"mkdirat(AT_FDCWD, "/tmp/ex/d2", 0700) = 0"#,
    );
    check(
        RENAMEAT2,
        [AT_FDCWD, P, AT_FDCWD, 0x6000, 1, 0],
        0,
        &m,
        r#"renameat2(AT_FDCWD, "/tmp/ex/d2", AT_FDCWD, "/tmp/ex/d4", RENAME_NOREPLACE) = 0"#,
    );
    check(
        UNLINKAT,
        [AT_FDCWD, 0x6000, 0x200, 0, 0, 0],
        0,
        &m,
        r#"unlinkat(AT_FDCWD, "/tmp/ex/d4", AT_REMOVEDIR) = 0"#,
    );
    let m = Mem::new()
        .str(P, "out.txt")
        .str(0x6000, "/tmp/ex/ln")
        .put(0x7000, b"out.txt");
    check(
        SYMLINK,
        [P, 0x6000, 0, 0, 0, 0],
        0,
        &m,
        r#"symlink("out.txt", "/tmp/ex/ln")  = 0"#,
    );
    check(
        READLINK,
        [0x6000, 0x7000, 256, 0, 0, 0],
        7,
        &m,
        r#"readlink("/tmp/ex/ln", "out.txt", 256) = 7"#,
    );
    check(
        READLINKAT,
        [AT_FDCWD, 0x6000, 0x7000, 3, 0, 0],
        3,
        &m,
        r#"readlinkat(AT_FDCWD, "/tmp/ex/ln", "out", 3) = 3"#,
    );
    let m = Mem::new().str(P, "/tmp/ex/out.txt").str(0x6000, "/tmp/ex/hl");
    check(
        LINK,
        [P, 0x6000, 0, 0, 0, 0],
        0,
        &m,
        r#"link("/tmp/ex/out.txt", "/tmp/ex/hl") = 0"#,
    );
    check(
        UNLINK,
        [0x6000, 0, 0, 0, 0, 0],
        0,
        &m,
        r#"unlink("/tmp/ex/hl")              = 0"#,
    );
}

/// ```c
/// chmod("/tmp/ex/out.txt", 04755); fchmodat(AT_FDCWD, "/tmp/ex/out.txt", 0644, 0);
/// chown("/tmp/ex/out.txt", -1, -1); fchownat(AT_FDCWD, "/tmp/ex/out.txt", 1, 2, AT_SYMLINK_NOFOLLOW);
/// struct timespec tms[2] = {{0, UTIME_NOW}, {5, UTIME_OMIT}};
/// utimensat(AT_FDCWD, "/tmp/ex/out.txt", tms, 0); utimensat(AT_FDCWD, "/tmp/ex/out.txt", NULL, AT_SYMLINK_NOFOLLOW);
/// umask(022); umask(077); fchmod(3, 0600);
/// ```
#[test]
fn modes_owners_times() {
    let m = Mem::new()
        .str(P, "/tmp/ex/out.txt")
        .words(0x6000, &[0, (1 << 30) - 1, 5, (1 << 30) - 2]);
    check(
        CHMOD,
        [P, 0o4755, 0, 0, 0, 0],
        0,
        &m,
        r#"chmod("/tmp/ex/out.txt", 04755)   = 0"#,
    );
    check(
        FCHMODAT,
        [AT_FDCWD, P, 0o644, 0, 0, 0],
        0,
        &m,
        r#"fchmodat(AT_FDCWD, "/tmp/ex/out.txt", 0644) = 0"#,
    );
    check(
        CHOWN,
        [P, u32::MAX as u64, u32::MAX as u64, 0, 0, 0],
        0,
        &m,
        r#"chown("/tmp/ex/out.txt", -1, -1)  = 0"#,
    );
    check(
        FCHOWNAT,
        [AT_FDCWD, P, 1, 2, 0x100, 0],
        0,
        &m,
        r#"fchownat(AT_FDCWD, "/tmp/ex/out.txt", 1, 2, AT_SYMLINK_NOFOLLOW) = 0"#,
    );
    check(
        UTIMENSAT,
        [AT_FDCWD, P, 0x6000, 0, 0, 0],
        0,
        &m,
        r#"utimensat(AT_FDCWD, "/tmp/ex/out.txt", [UTIME_NOW, UTIME_OMIT], 0) = 0"#,
    );
    check(
        UTIMENSAT,
        [AT_FDCWD, P, 0, 0x100, 0, 0],
        0,
        &m,
        r#"utimensat(AT_FDCWD, "/tmp/ex/out.txt", NULL, AT_SYMLINK_NOFOLLOW) = 0"#,
    );
    check(
        UMASK,
        [0o22, 0, 0, 0, 0, 0],
        0o22,
        NOMEM,
        "umask(022)                        = 022",
    );
    check(
        UMASK,
        [0o77, 0, 0, 0, 0, 0],
        0o22,
        NOMEM,
        "umask(077)                        = 022",
    );
    check(
        FCHMOD,
        [3, 0o600, 0, 0, 0, 0],
        0,
        NOMEM,
        "fchmod(3, 0600)                   = 0",
    );
}
