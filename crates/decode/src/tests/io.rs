//! Descriptors and I/O: read/write, lseek, ioctl, fcntl, dup, pipes,
//! poll/select (with their additions to the result), getdents64, readv.

use std::string::String;
use std::vec::Vec;

use super::{check, line, Mem, NOMEM};
use crate::nr::*;
use crate::{format_call, format_result_with, format_resumed, EntryState, Options};

const BUF: u64 = 0x7ffd_2f64_d000;

/// `strace ls`: ld.so reading libc, and a short read at the end of a file.
#[test]
fn read_write() {
    let elf = b"\x7fELF\x02\x01\x01\x03\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0\x10t\x02\0\0\0\0\0\0\0\0\0";
    let mut buf = elf.to_vec();
    buf.resize(832, 0);
    let m = Mem::new().put(BUF, &buf);
    check(
        READ,
        [3, BUF, 832, 0, 0, 0],
        832,
        &m,
        r#"read(3, "\177ELF\2\1\1\3\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0\20t\2\0\0\0\0\0"..., 832) = 832"#,
    );
    check(
        READ,
        [3, BUF, 4096, 0, 0, 0],
        0,
        &m,
        r#"read(3, "", 4096)                 = 0"#,
    );
    // The buffer is not read when the call failed: `read(open("/tmp", O_RDONLY), buf, 4096)`.
    check(
        READ,
        [3, 0x7fff_3be5_1b30, 4096, 0, 0, 0],
        -21,
        NOMEM,
        "read(3, 0x7fff3be51b30, 4096)     = -1 EISDIR (Is a directory)",
    );
    let m = Mem::new().put(BUF, b"hi\n");
    check(
        WRITE,
        [1, BUF, 3, 0, 0, 0],
        3,
        &m,
        r#"write(1, "hi\n", 3)               = 3"#,
    );
    let m = Mem::new().put(BUF, b"x:0:0:root");
    check(
        PREAD64,
        [3, BUF, 10, 5, 0, 0],
        10,
        &m,
        r#"pread64(3, "x:0:0:root", 10, 5)   = 10"#,
    );
}

/// ```c
/// lseek(fd, 0, SEEK_SET); lseek(fd, 10, SEEK_END); lseek(fd, 3, SEEK_CUR);
/// close(3); dup(0); dup2(1, 100); dup3(1, 101, O_CLOEXEC);
/// ```
#[test]
fn seek_close_dup() {
    check(
        LSEEK,
        [3, 0, 0, 0, 0, 0],
        0,
        NOMEM,
        "lseek(3, 0, SEEK_SET)             = 0",
    );
    check(
        LSEEK,
        [3, 10, 2, 0, 0, 0],
        1231,
        NOMEM,
        "lseek(3, 10, SEEK_END)            = 1231",
    );
    check(
        LSEEK,
        [4, (-3i64) as u64, 2, 0, 0, 0],
        1218,
        NOMEM,
        "lseek(4, -3, SEEK_END)            = 1218",
    );
    check(
        CLOSE,
        [3, 0, 0, 0, 0, 0],
        0,
        NOMEM,
        "close(3)                          = 0",
    );
    check(
        CLOSE,
        [999, 0, 0, 0, 0, 0],
        -9,
        NOMEM,
        "close(999)                        = -1 EBADF (Bad file descriptor)",
    );
    check(DUP, [0; 6], 9, NOMEM, "dup(0)                            = 9");
    check(
        DUP2,
        [1, 100, 0, 0, 0, 0],
        100,
        NOMEM,
        "dup2(1, 100)                      = 100",
    );
    check(
        DUP3,
        [1, 101, 0x80000, 0, 0, 0],
        101,
        NOMEM,
        "dup3(1, 101, O_CLOEXEC)           = 101",
    );
}

/// `sh -c 'echo hi | cat'`, `pipe2(pf, O_CLOEXEC|O_NONBLOCK)`,
/// `syscall(SYS_pipe, p)` and `syscall(SYS_pipe2, (void *)1, 0)`.
#[test]
fn pipes() {
    let m = Mem::new().ints(BUF, &[3, 4]);
    check(
        PIPE2,
        [BUF, 0, 0, 0, 0, 0],
        0,
        &m,
        "pipe2([3, 4], 0)                  = 0",
    );
    let m = Mem::new().ints(BUF, &[7, 8]);
    check(
        PIPE2,
        [BUF, 0x80800, 0, 0, 0, 0],
        0,
        &m,
        "pipe2([7, 8], O_NONBLOCK|O_CLOEXEC) = 0",
    );
    let m = Mem::new().ints(BUF, &[4, 5]);
    check(
        PIPE,
        [BUF, 0, 0, 0, 0, 0],
        0,
        &m,
        "pipe([4, 5])                      = 0",
    );
    check(
        PIPE2,
        [1, 0, 0, 0, 0, 0],
        -14,
        &m,
        "pipe2(0x1, 0)                     = -1 EFAULT (Bad address)",
    );
}

/// ```c
/// fcntl(0, F_GETFL); fcntl(0, F_GETFD); fcntl(100, F_SETFD, FD_CLOEXEC);
/// fcntl(1, F_DUPFD_CLOEXEC, 3); fcntl(100, F_SETFL, O_NONBLOCK|O_APPEND);
/// ```
/// and the flag results of the test program in tests/against_strace.rs.
#[test]
fn fcntl() {
    check(
        FCNTL,
        [0, 3, 0, 0, 0, 0],
        0x8000,
        NOMEM,
        "fcntl(0, F_GETFL)                 = 0x8000 (flags O_RDONLY|O_LARGEFILE)",
    );
    check(
        FCNTL,
        [0, 1, 0, 0, 0, 0],
        0,
        NOMEM,
        "fcntl(0, F_GETFD)                 = 0",
    );
    check(
        FCNTL,
        [100, 1, 0, 0, 0, 0],
        1,
        NOMEM,
        "fcntl(100, F_GETFD)               = 0x1 (flags FD_CLOEXEC)",
    );
    check(
        FCNTL,
        [100, 2, 1, 0, 0, 0],
        0,
        NOMEM,
        "fcntl(100, F_SETFD, FD_CLOEXEC)   = 0",
    );
    check(
        FCNTL,
        [1, 0x406, 3, 0, 0, 0],
        11,
        NOMEM,
        "fcntl(1, F_DUPFD_CLOEXEC, 3)      = 11",
    );
    check(
        FCNTL,
        [1, 0, 10, 0, 0, 0],
        11,
        NOMEM,
        "fcntl(1, F_DUPFD, 10)             = 11",
    );
    check(
        FCNTL,
        [100, 4, 0x0c00, 0, 0, 0],
        0,
        NOMEM,
        "fcntl(100, F_SETFL, O_RDONLY|O_APPEND|O_NONBLOCK) = 0",
    );
    check(
        FCNTL,
        [100, 3, 0, 0, 0, 0],
        0,
        NOMEM,
        "fcntl(100, F_GETFL)               = 0 (flags O_RDONLY)",
    );
    check(
        FCNTL,
        [101, 3, 0, 0, 0, 0],
        0x801,
        NOMEM,
        "fcntl(101, F_GETFL)               = 0x801 (flags O_WRONLY|O_NONBLOCK)",
    );
    check(
        FCNTL,
        [999, 3, 0, 0, 0, 0],
        -9,
        NOMEM,
        "fcntl(999, F_GETFL)               = -1 EBADF (Bad file descriptor)",
    );
    // Without the arguments the result is a plain number.
    let mut s = String::new();
    crate::format_result(&mut s, FCNTL, 0x8000).unwrap();
    assert_eq!(s, " = 32768");
}

/// `stty size` on a terminal (`script -qec "strace -e ioctl stty size"`),
/// and ioctls on a pipe.
#[test]
fn ioctl() {
    let mut tio = [0u8; 36];
    for (i, v) in [0x500u32, 5, 0xbf, 0x8a3b].iter().enumerate() {
        tio[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    let m = Mem::new().put(BUF, &tio);
    check(
        IOCTL,
        [0, 0x5401, BUF, 0, 0, 0],
        0,
        &m,
        "ioctl(0, TCGETS, {c_iflag=ICRNL|IXON, c_oflag=NL0|CR0|TAB0|BS0|VT0|FF0|OPOST|ONLCR, c_cflag=B38400|CS8|CREAD, \
         c_lflag=ISIG|ICANON|ECHO|ECHOE|ECHOK|IEXTEN|ECHOCTL|ECHOKE, ...}) = 0",
    );
    let m = Mem::new().put(BUF, &[0; 8]);
    check(
        IOCTL,
        [1, 0x5413, BUF, 0, 0, 0],
        0,
        &m,
        "ioctl(1, TIOCGWINSZ, {ws_row=0, ws_col=0, ws_xpixel=0, ws_ypixel=0}) = 0",
    );
    check(
        IOCTL,
        [1, 0x5401, 0x7ffc_f5d1_bc00, 0, 0, 0],
        -25,
        NOMEM,
        "ioctl(1, TCGETS, 0x7ffcf5d1bc00)  = -1 ENOTTY (Inappropriate ioctl for device)",
    );
    let m = Mem::new().ints(BUF, &[3]);
    check(
        IOCTL,
        [5, 0x541b, BUF, 0, 0, 0],
        0,
        &m,
        "ioctl(5, FIONREAD, [3])           = 0",
    );
    check(
        IOCTL,
        [0, 0x1234, 5, 0, 0, 0],
        -25,
        NOMEM,
        "ioctl(0, _IOC(_IOC_NONE, 0x12, 0x34, 0), 0x5) = -1 ENOTTY (Inappropriate ioctl for device)",
    );
}

/// `poll(pfd, 2, 0)` with `pfd = {{0, POLLIN}, {1, POLLOUT|POLLERR}}`, both
/// ready, and a timeout.
#[test]
fn poll() {
    let fds = |r0: u16, r1: u16| {
        let mut v = Vec::new();
        v.extend_from_slice(&0i32.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes());
        v.extend_from_slice(&r0.to_le_bytes());
        v.extend_from_slice(&1i32.to_le_bytes());
        v.extend_from_slice(&0xcu16.to_le_bytes());
        v.extend_from_slice(&r1.to_le_bytes());
        v
    };
    let m = Mem::new().put(BUF, &fds(1, 4));
    check(
        POLL,
        [BUF, 2, 0, 0, 0, 0],
        2,
        &m,
        "poll([{fd=0, events=POLLIN}, {fd=1, events=POLLOUT|POLLERR}], 2, 0) = 2 ([{fd=0, revents=POLLIN}, {fd=1, \
         revents=POLLOUT}])",
    );
    let m = Mem::new().put(BUF, &fds(0, 0));
    check(
        POLL,
        [BUF, 1, 0, 0, 0, 0],
        0,
        &m,
        "poll([{fd=0, events=POLLIN}], 1, 0) = 0 (Timeout)",
    );
}

/// ```c
/// fd_set rf; FD_ZERO(&rf); FD_SET(0, &rf); FD_SET(3, &rf);
/// struct timeval tv = {0, 0}; select(4, &rf, NULL, NULL, &tv);  /* glibc: pselect6 */
/// ```
/// strace: `pselect6(4, [0 3], NULL, NULL, {tv_sec=0, tv_nsec=0}, NULL) = 2 (in [0 3], left {tv_sec=0, tv_nsec=0})`.
/// The call rewrites the sets, so it is formatted in two halves.
#[test]
fn select_in_two_halves() {
    const TSP: u64 = BUF + 0x100;
    let args = [4, BUF, 0, 0, TSP, 0];
    let before = Mem::new().put(BUF, &[0b1001, 0, 0, 0, 0, 0, 0, 0]).words(TSP, &[0, 0]);
    let mut entry = String::new();
    let opts = Options {
        out_args: false,
        ..Options::DEFAULT
    };
    format_call(&mut entry, PSELECT6, &args, 0, &before, &opts).unwrap();
    assert_eq!(entry, "pselect6(4, [0 3], NULL, NULL, {tv_sec=0, tv_nsec=0}, NULL");
    let after = Mem::new().put(BUF, &[0b1001, 0, 0, 0, 0, 0, 0, 0]).words(TSP, &[0, 0]);
    let mut exit = String::new();
    format_resumed(
        &mut exit,
        PSELECT6,
        &args,
        2,
        &after,
        &Options::DEFAULT,
        &EntryState::NONE,
    )
    .unwrap();
    format_result_with(&mut exit, PSELECT6, &args, 2, &after, &Options::DEFAULT).unwrap();
    assert_eq!(
        exit,
        "<... pselect6 resumed>) = 2 (in [0 3], left {tv_sec=0, tv_nsec=0})"
    );
    assert!(crate::inputs_change(PSELECT6));
}

/// `getdents64(fd, buf, 256)` on a directory of 5 files (7 entries with
/// `.` and `..`), then at its end.
#[test]
fn getdents64() {
    let mut d = Vec::new();
    for reclen in [24u16, 24, 24, 24, 24, 24, 48] {
        let mut e = std::vec![0u8; reclen as usize];
        e[16..18].copy_from_slice(&reclen.to_le_bytes());
        d.extend_from_slice(&e);
    }
    let m = Mem::new().put(0x7ffc_f5d1_bc00, &d);
    check(
        GETDENTS64,
        [18, 0x7ffc_f5d1_bc00, 256, 0, 0, 0],
        192,
        &m,
        "getdents64(18, 0x7ffcf5d1bc00 /* 7 entries */, 256) = 192",
    );
    check(
        GETDENTS64,
        [5, 0x55ec_6e31_1570, 512, 0, 0, 0],
        0,
        NOMEM,
        "getdents64(5, 0x55ec6e311570 /* 0 entries */, 512) = 0",
    );
}

/// `writev(3, iov, 2)` with `iov = {{"ab", 2}, {"cde", 3}}`, and a readv
/// of 5 bytes into `{{2}, {8}}` (the test program in tests/against_strace.rs).
#[test]
fn vectors() {
    let m = Mem::new()
        .words(BUF, &[0x1000, 2, 0x2000, 3])
        .put(0x1000, b"ab")
        .put(0x2000, b"cde");
    check(
        WRITEV,
        [3, BUF, 2, 0, 0, 0],
        5,
        &m,
        r#"writev(3, [{iov_base="ab", iov_len=2}, {iov_base="cde", iov_len=3}], 2) = 5"#,
    );
    let m = Mem::new()
        .words(BUF, &[0x1000, 2, 0x2000, 8])
        .put(0x1000, b"ab")
        .put(0x2000, b"cde\0\0\0\0\0");
    assert_eq!(
        line(READV, [5, BUF, 2, 0, 0, 0], 5, &m),
        r#"readv(5, [{iov_base="ab", iov_len=2}, {iov_base="cde", iov_len=8}], 2) = 5"#
    );
}
