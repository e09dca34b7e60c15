//! Strings, buffers, paths and argv arrays: escaping, -s truncation,
//! NULL, unreadable and partly readable memory.
//!
//! Every expected line comes from this program, run as
//! `strace -e trace=write,access,execve ./strings` (and with `-s 8`):
//!
//! ```c
//! char *m = mmap((void *)0x10000000, 8192, PROT_READ | PROT_WRITE,
//!                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
//! munmap(m + 4096, 4096);                      /* m's second page is unmapped */
//! int fd = open("/dev/null", O_WRONLY);        /* 3 */
//! memcpy(m, "\0\1\2abc", 6);            syscall(SYS_write, fd, m, 6);
//! memcpy(m, "\033[0m", 4);             syscall(SYS_write, fd, m, 4);
//! memcpy(m, "\001" "0\001" "9", 4);   syscall(SYS_write, fd, m, 4);
//! memcpy(m, "\177\200\377", 3);        syscall(SYS_write, fd, m, 3);
//! memcpy(m, "\r\v\f\"\\'", 6);         syscall(SYS_write, fd, m, 6);
//! memcpy(m, "0123456789abcdefghijklmnopqrstuv", 32); syscall(SYS_write, fd, m, 32);
//! memcpy(m, "0123456789abcdefghijklmnopqrstuvw", 33); syscall(SYS_write, fd, m, 33);
//! syscall(SYS_write, fd, m, 0);
//! syscall(SYS_write, fd, (void *)0x1000, 5);
//! syscall(SYS_write, fd, m + 4096 - 3, 6);
//! strcpy(m + 4096 - 4, "abc");         syscall(SYS_access, m + 4096 - 4, F_OK);
//! memcpy(m + 4096 - 3, "abc", 3);      syscall(SYS_access, m + 4096 - 3, F_OK);
//! syscall(SYS_access, NULL, F_OK);
//! memset(m, 'a', 100); m[100] = 0;     syscall(SYS_access, m, F_OK);
//! memset(m, 'b', 4095); m[4095] = 0;   syscall(SYS_access, m, R_OK);
//! memset(m, 'c', 4096);                syscall(SYS_access, m, W_OK);
//! char **av = (char **)(m + 2048);
//! for (int i = 0; i < 40; i++) av[i] = m + 100;
//! av[40] = 0;
//! strcpy(m + 100, "0123456789abcdefghijklmnopqrstuvwxyz");
//! av[0] = m + 200; strcpy(m + 200, "short");
//! syscall(SYS_execve, "/nonexistent", av, av + 39);
//! av[2] = 0;                           syscall(SYS_execve, "/nonexistent", av, NULL);
//! av[1] = (char *)0x1000;              syscall(SYS_execve, "/nonexistent", av, av + 2);
//! char **edge = (char **)(m + 4096 - 16);
//! edge[0] = m + 200; edge[1] = m + 200;  syscall(SYS_execve, "/nonexistent", edge, edge);
//! ```
//!
//! The fake memory maps only the first page at 0x10000000, as the program
//! left it at each call.

use std::string::String;
use std::vec;
use std::vec::Vec;

use super::{check, line_opts, unpad, Mem};
use crate::nr::{ACCESS, EXECVE, WRITE};
use crate::Options;

const M: u64 = 0x1000_0000;
const ENOENT: i64 = -2;
const EFAULT: i64 = -14;
const ENAMETOOLONG: i64 = -36;

fn page(bytes: &[(usize, &[u8])]) -> Mem {
    let mut p = vec![0u8; 4096];
    for (off, b) in bytes {
        p[*off..*off + b.len()].copy_from_slice(b);
    }
    Mem::new().put(M, &p)
}

fn write_line(content: &[u8], len: u64, opts: &Options) -> String {
    line_opts(WRITE, [3, M, len, 0, 0, 0], len as i64, &page(&[(0, content)]), opts)
}

const S8: Options = Options {
    string_limit: 8,
    ..Options::DEFAULT
};

#[test]
fn escapes() {
    let d = Options::DEFAULT;
    assert_eq!(write_line(b"\0\x01\x02abc", 6, &d), r#"write(3, "\0\1\2abc", 6) = 6"#);
    assert_eq!(write_line(b"\x1b[0m", 4, &d), r#"write(3, "\33[0m", 4) = 4"#);
    // A full three-digit escape when the next byte is an octal digit.
    assert_eq!(write_line(b"\x010\x019", 4, &d), r#"write(3, "\0010\19", 4) = 4"#);
    assert_eq!(write_line(b"\x7f\x80\xff", 3, &d), r#"write(3, "\177\200\377", 3) = 3"#);
    assert_eq!(
        write_line(b"\r\x0b\x0c\"\\'", 6, &d),
        r#"write(3, "\r\v\f\"\\'", 6) = 6"#
    );
    assert_eq!(write_line(b"", 0, &d), r#"write(3, "", 0) = 0"#);
    // -s 8 does not change short strings.
    assert_eq!(
        write_line(b"\x7f\x80\xff", 3, &S8),
        r#"write(3, "\177\200\377", 3) = 3"#
    );
}

#[test]
fn truncation() {
    let d = Options::DEFAULT;
    let s = b"0123456789abcdefghijklmnopqrstuvw";
    assert_eq!(
        write_line(&s[..32], 32, &d),
        unpad(r#"write(3, "0123456789abcdefghijklmnopqrstuv", 32) = 32"#)
    );
    assert_eq!(
        write_line(s, 33, &d),
        unpad(r#"write(3, "0123456789abcdefghijklmnopqrstuv"..., 33) = 33"#)
    );
    assert_eq!(
        write_line(&s[..32], 32, &S8),
        unpad(r#"write(3, "01234567"..., 32)             = 32"#)
    );
    assert_eq!(
        write_line(s, 33, &S8),
        unpad(r#"write(3, "01234567"..., 33)             = 33"#)
    );
}

#[test]
fn unreadable_buffers() {
    let m = page(&[]);
    // Nothing mapped at 0x1000.
    check(
        WRITE,
        [3, 0x1000, 5, 0, 0, 0],
        5,
        &m,
        "write(3, 0x1000, 5)                     = 5",
    );
    // 3 readable bytes, then the unmapped page: the address, not a partial string.
    check(
        WRITE,
        [3, M + 4093, 6, 0, 0, 0],
        6,
        &m,
        "write(3, 0x10000ffd, 6)                 = 6",
    );
}

#[test]
fn paths() {
    // The NUL is just before the unmapped page: fine.
    let m = page(&[(4092, b"abc\0")]);
    check(
        ACCESS,
        [M + 4092, 0, 0, 0, 0, 0],
        ENOENT,
        &m,
        r#"access("abc", F_OK)                     = -1 ENOENT (No such file or directory)"#,
    );
    // No NUL before the unmapped page: the address.
    let m = page(&[(4093, b"abc")]);
    check(
        ACCESS,
        [M + 4093, 0, 0, 0, 0, 0],
        EFAULT,
        &m,
        "access(0x10000ffd, F_OK)                = -1 EFAULT (Bad address)",
    );
    check(
        ACCESS,
        [0, 0, 0, 0, 0, 0],
        EFAULT,
        &m,
        "access(NULL, F_OK)                      = -1 EFAULT (Bad address)",
    );
}

#[test]
fn long_paths_are_not_cut_at_the_string_limit() {
    let a = [b'a'; 100];
    let m = page(&[(0, &a)]);
    let expect = format!(
        "access(\"{}\", F_OK) = -1 ENOENT (No such file or directory)",
        "a".repeat(100)
    );
    assert_eq!(super::line(ACCESS, [M, 0, 0, 0, 0, 0], ENOENT, &m), expect);
    assert_eq!(line_opts(ACCESS, [M, 0, 0, 0, 0, 0], ENOENT, &m, &S8), expect);

    // 4095 bytes and a NUL: printed whole.
    let b = [b'b'; 4095];
    let m = page(&[(0, &b)]);
    let expect = format!(
        "access(\"{}\", R_OK) = -1 ENAMETOOLONG (File name too long)",
        "b".repeat(4095)
    );
    assert_eq!(super::line(ACCESS, [M, 4, 0, 0, 0, 0], ENAMETOOLONG, &m), expect);

    // 4096 bytes, no NUL: 4095 of them and "...".
    let c = [b'c'; 4096];
    let m = page(&[(0, &c)]);
    let expect = format!(
        "access(\"{}\"..., W_OK) = -1 ENAMETOOLONG (File name too long)",
        "c".repeat(4095)
    );
    assert_eq!(super::line(ACCESS, [M, 2, 0, 0, 0, 0], ENAMETOOLONG, &m), expect);
}

/// The page of the execve calls: 40 pointers at +2048, strings at +100
/// and +200.
fn argv_page(av: &[u64]) -> Mem {
    let mut p = vec![0u8; 4096];
    p[100..136].copy_from_slice(b"0123456789abcdefghijklmnopqrstuvwxyz");
    p[200..205].copy_from_slice(b"short");
    for (i, w) in av.iter().enumerate() {
        p[2048 + 8 * i..2056 + 8 * i].copy_from_slice(&w.to_le_bytes());
    }
    Mem::new().str(0x2000_0000, "/nonexistent").put(M, &p)
}

#[test]
fn argv() {
    const PATH: u64 = 0x2000_0000;
    let mut av: Vec<u64> = vec![M + 100; 40];
    av[0] = M + 200;
    av.push(0);
    let m = argv_page(&av);
    let long = r#""0123456789abcdefghijklmnopqrstuv"..."#;
    let mut expect = String::from(r#"execve("/nonexistent", ["short""#);
    for _ in 0..31 {
        expect.push_str(", ");
        expect.push_str(long);
    }
    expect.push_str(r#", ...], 0x10000938 /* 1 var */) = -1 ENOENT (No such file or directory)"#);
    assert_eq!(
        super::line(EXECVE, [PATH, M + 2048, M + 2048 + 39 * 8, 0, 0, 0], ENOENT, &m),
        expect
    );

    // -s 8: 8 strings of 8 bytes.
    let mut expect = String::from(r#"execve("/nonexistent", ["short""#);
    for _ in 0..7 {
        expect.push_str(r#", "01234567"..."#);
    }
    expect.push_str(r#", ...], 0x10000938 /* 1 var */) = -1 ENOENT (No such file or directory)"#);
    assert_eq!(
        line_opts(EXECVE, [PATH, M + 2048, M + 2048 + 39 * 8, 0, 0, 0], ENOENT, &m, &S8),
        expect
    );

    av[2] = 0;
    let m = argv_page(&av);
    check(
        EXECVE,
        [PATH, M + 2048, 0, 0, 0, 0],
        ENOENT,
        &m,
        r#"execve("/nonexistent", ["short", "0123456789abcdefghijklmnopqrstuv"...], NULL) = -1 ENOENT (No such file or directory)"#,
    );
    av[1] = 0x1000;
    let m = argv_page(&av);
    check(
        EXECVE,
        [PATH, M + 2048, M + 2048 + 16, 0, 0, 0],
        ENOENT,
        &m,
        r#"execve("/nonexistent", ["short", 0x1000], 0x10000810 /* 0 vars */) = -1 ENOENT (No such file or directory)"#,
    );
}

#[test]
fn argv_running_into_an_unmapped_page() {
    let mut p = vec![0u8; 4096];
    p[200..205].copy_from_slice(b"short");
    p[4080..4088].copy_from_slice(&(M + 200).to_le_bytes());
    p[4088..4096].copy_from_slice(&(M + 200).to_le_bytes());
    let m = Mem::new().str(0x2000_0000, "/nonexistent").put(M, &p);
    check(
        EXECVE,
        [0x2000_0000, M + 4080, M + 4080, 0, 0, 0],
        ENOENT,
        &m,
        r#"execve("/nonexistent", ["short", "short", ... /* 0x10001000 */], 0x10000ff0 /* 2 vars, unterminated */) = -1 ENOENT (No such file or directory)"#,
    );
}
