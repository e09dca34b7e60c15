//! Results, errors, raw mode, unknown numbers, split lines, and a sweep of
//! every call number with hostile arguments.

use std::string::String;
use std::vec::Vec;

use super::{check, line_opts, Mem, NOMEM};
use crate::nr::*;
use crate::{
    errno_name, format_call, format_result, format_result_with, format_resumed, strerror, EntryState, Options,
};

#[test]
fn errnos() {
    assert_eq!(errno_name(2), Some("ENOENT"));
    assert_eq!(strerror(2), "No such file or directory");
    assert_eq!(errno_name(11), Some("EAGAIN"));
    assert_eq!(strerror(11), "Resource temporarily unavailable");
    assert_eq!(errno_name(133), Some("EHWPOISON"));
    assert_eq!(strerror(133), "Memory page has hardware error");
    assert_eq!(errno_name(41), None);
    assert_eq!(errno_name(512), Some("ERESTARTSYS"));
    assert_eq!(strerror(512), "Unknown error");
    assert_eq!(errno_name(0), None);
    assert_eq!(errno_name(134), None);
    assert_eq!(errno_name(-1), None);
    // Every number 1..=133 except 41 and 58 has a name and a text.
    for e in 1..=133 {
        assert_eq!(errno_name(e).is_some(), e != 41 && e != 58, "{e}");
        assert!(!strerror(e).is_empty());
    }
}

fn result(nr: usize, ret: i64) -> String {
    let mut s = String::new();
    format_result(&mut s, nr, ret).unwrap();
    s
}

/// The forms of a result: strace -f on `sh`, `sleep` and the programs of
/// the other tests.
#[test]
fn results() {
    assert_eq!(result(CLOSE, 0), " = 0");
    assert_eq!(result(OPENAT, -2), " = -1 ENOENT (No such file or directory)");
    assert_eq!(result(MMAP, 0x7f9c_13d7_d000), " = 0x7f9c13d7d000");
    assert_eq!(result(BRK, 0x55b8_3462_1000), " = 0x55b834621000");
    assert_eq!(result(UMASK, 0o22), " = 022");
    assert_eq!(result(EXIT_GROUP, 0), " = ?");
    assert_eq!(result(EXIT, 0), " = ?");
    // Calls interrupted by a signal (ERESTART*), from
    // `alarm(1); pause();`, `alarm(1); syscall(SYS_nanosleep, &ts, &rem);`
    // and `alarm(1); read(p[0], &c, 1);` with a SIGALRM handler:
    assert_eq!(
        result(PAUSE, -514),
        " = ? ERESTARTNOHAND (To be restarted if no handler)"
    );
    assert_eq!(
        result(READ, -512),
        " = ? ERESTARTSYS (To be restarted if SA_RESTART is set)"
    );
    assert_eq!(
        result(NANOSLEEP, -516),
        " = ? ERESTART_RESTARTBLOCK (Interrupted by signal)"
    );
    check(
        PAUSE,
        [0; 6],
        -514,
        NOMEM,
        "pause()                                 = ? ERESTARTNOHAND (To be restarted if no handler)",
    );
    check(
        READ,
        [3, 0x7ffe_8661_39b7, 1, 0, 0, 0],
        -512,
        NOMEM,
        "read(3, 0x7ffe866139b7, 1)              = ? ERESTARTSYS (To be restarted if SA_RESTART is set)",
    );
    // The time left is shown only for an interrupted sleep.
    let m = Mem::new().words(0x7000, &[5, 0]).words(0x7010, &[3, 999_990_926]);
    check(
        NANOSLEEP,
        [0x7000, 0x7010, 0, 0, 0, 0],
        -516,
        &m,
        "nanosleep({tv_sec=5, tv_nsec=0}, {tv_sec=3, tv_nsec=999990926}) = ? ERESTART_RESTARTBLOCK (Interrupted by signal)",
    );
    // strace's own text for the fourth code (src/syscall.c).
    assert_eq!(result(CLONE, -513), " = ? ERESTARTNOINTR (To be restarted)");
    // Numbers without a name.
    assert_eq!(result(READ, -41), " = -1 (errno 41)");
    assert_eq!(result(READ, -515), " = -1 ENOIOCTLCMD (Unknown error 515)");
    // Not errors: -4096 and below are values.
    assert_eq!(result(LSEEK, -4096), " = -4096");
}

/// `strace -e raw=all cat /dev/null`:
/// `openat(0xffffff9c, 0x7ffd779019ff, 0, 0) = 0x3`,
/// `mmap(0, 0x22000, 0x3, 0x22, 0xffffffff, 0) = 0x7f8360ee0000`,
/// `exit_group(0) = ?`, `openat(...) = -1 ENOENT (No such file or directory)`.
#[test]
fn raw() {
    let raw = Options {
        raw: true,
        ..Options::DEFAULT
    };
    assert_eq!(
        line_opts(OPENAT, [0xffff_ff9c, 0x7ffd_7790_19ff, 0, 0, 0, 0], 3, NOMEM, &raw),
        "openat(0xffffff9c, 0x7ffd779019ff, 0, 0) = 0x3"
    );
    assert_eq!(
        line_opts(
            MMAP,
            [0, 0x22000, 3, 0x22, 0xffff_ffff, 0],
            0x7f83_60ee_0000,
            NOMEM,
            &raw
        ),
        "mmap(0, 0x22000, 0x3, 0x22, 0xffffffff, 0) = 0x7f8360ee0000"
    );
    assert_eq!(
        line_opts(READ, [3, 0x1000, 0x20000, 0, 0, 0], 0, NOMEM, &raw),
        "read(0x3, 0x1000, 0x20000) = 0"
    );
    assert_eq!(line_opts(EXIT_GROUP, [0; 6], 0, NOMEM, &raw), "exit_group(0) = ?");
    assert_eq!(
        line_opts(OPENAT, [0xffff_ff9c, 0x55c9_0893_3c90, 0, 0, 0, 0], -2, NOMEM, &raw),
        "openat(0xffffff9c, 0x55c908933c90, 0, 0) = -1 ENOENT (No such file or directory)"
    );
}

/// `syscall(999, 1, 2, 3)`:
/// `syscall_0x3e7(0x1, 0x2, 0x3, 0x80, 0x7ffcf5d1b3c0, 0) = -1 ENOSYS (Function not implemented)`.
#[test]
fn unknown_number() {
    check(
        999,
        [1, 2, 3, 0x80, 0x7ffc_f5d1_b3c0, 0],
        -38,
        NOMEM,
        "syscall_0x3e7(0x1, 0x2, 0x3, 0x80, 0x7ffcf5d1b3c0, 0) = -1 ENOSYS (Function not implemented)",
    );
}

/// Calls strace does not decode print their arguments in hex (strace's
/// printargs), and calls with no arguments print `()`.
#[test]
fn undecoded_and_empty() {
    check(SCHED_YIELD, [0; 6], 0, NOMEM, "sched_yield()                     = 0");
    check(
        GETTID,
        [0; 6],
        21788,
        NOMEM,
        "gettid()                          = 21788",
    );
    check(
        SETSID,
        [0; 6],
        21788,
        NOMEM,
        "setsid()                          = 21788",
    );
    // `epoll_ctl_old` has no decoder in strace: `syscall(214, 1, 2, 0x30, 0)`.
    assert_eq!(
        line_opts(214, [1, 2, 0x30, 0, 0, 0], -38, NOMEM, &Options::DEFAULT),
        "epoll_ctl_old(0x1, 0x2, 0x30, 0) = -1 ENOSYS (Function not implemented)"
    );
}

/// strace -f splits a call another process interrupts:
/// ```text
/// 24986 wait4(-1,  <unfinished ...>
/// 24986 <... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 24987
/// 24988 dup2(3, 0 <unfinished ...>
/// 24988 <... dup2 resumed>)               = 0
/// 4559  exit_group(2 <unfinished ...>
/// 4559  <... exit_group resumed>)         = ?
/// ```
#[test]
fn split_lines() {
    let entry = Options {
        out_args: false,
        ..Options::DEFAULT
    };
    let halves = |nr: usize, args: [u64; 6], ret: i64, m: &Mem| {
        let mut a = String::new();
        format_call(&mut a, nr, &args, ret, m, &entry).unwrap();
        a.push_str(" <unfinished ...>");
        let mut b = String::new();
        format_resumed(&mut b, nr, &args, ret, m, &Options::DEFAULT, &EntryState::NONE).unwrap();
        format_result_with(&mut b, nr, &args, ret, m, &Options::DEFAULT).unwrap();
        (a, b)
    };
    let m = Mem::new().ints(0x7000, &[0]);
    let (a, b) = halves(WAIT4, [u64::MAX, 0x7000, 0, 0, 0, 0], 24987, &m);
    assert_eq!(a, "wait4(-1,  <unfinished ...>");
    assert_eq!(
        b,
        "<... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 24987"
    );
    let (a, b) = halves(DUP2, [3, 0, 0, 0, 0, 0], 0, NOMEM);
    assert_eq!(a, "dup2(3, 0 <unfinished ...>");
    assert_eq!(b, "<... dup2 resumed>) = 0");
    let (a, b) = halves(EXIT_GROUP, [2, 0, 0, 0, 0, 0], 0, NOMEM);
    assert_eq!(a, "exit_group(2 <unfinished ...>");
    assert_eq!(b, "<... exit_group resumed>) = ?");
    // The entry half of a call with outputs does not read them.
    let (a, _) = halves(READ, [3, 0x1234, 4096, 0, 0, 0], 12, NOMEM);
    assert_eq!(a, "read(3,  <unfinished ...>");
}

#[test]
fn calls_whose_inputs_change() {
    for nr in [
        EXECVE,
        EXECVEAT,
        SELECT,
        PSELECT6,
        ACCEPT,
        ACCEPT4,
        GETSOCKNAME,
        RECVFROM,
    ] {
        assert!(crate::inputs_change(nr));
    }
    for nr in [READ, WRITE, OPENAT, CLOSE, MMAP] {
        assert!(!crate::inputs_change(nr));
    }
    assert_eq!(crate::nargs(READ), 3);
    assert_eq!(crate::nargs(MMAP), 6);
    assert_eq!(crate::nargs(GETPID), 0);
    assert_eq!(crate::nargs(100_000), 6);
}

/// The constants in `nr` are the table's numbers.
#[test]
fn numbers_match_the_table() {
    let pairs = [
        (READ, "read"),
        (OPENAT, "openat"),
        (NEWFSTATAT, "newfstatat"),
        (CLONE3, "clone3"),
        (FACCESSAT2, "faccessat2"),
        (PREAD64, "pread64"),
        (EXIT_GROUP, "exit_group"),
    ];
    for (nr, name) in pairs {
        assert_eq!(strata_syscall_table::name(nr), Some(name));
    }
}

/// A tiny deterministic generator for the sweep.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 ^ (self.0 >> 29)
    }
}

/// Every call number (and some that are not calls), with arguments that
/// are zero, all ones, small numbers, or pointers into, across the end of
/// and outside a region of random bytes, and results that are errors,
/// restarts, zero, large or negative: formatting never panics, and the
/// halves always add up to the whole call.
#[test]
fn sweep_never_panics() {
    let mut rng = Lcg(0x5eed);
    let base = 0x4000_0000u64;
    let bytes: Vec<u8> = (0..8192).map(|_| rng.next() as u8).collect();
    let m = Mem::new().put(base, &bytes);
    let rets = [
        0i64,
        1,
        3,
        4096,
        -1,
        -2,
        -14,
        -512,
        -516,
        -4095,
        -4096,
        i64::MAX,
        i64::MIN,
        0x7fff_0000,
    ];
    for nr in 0..480usize {
        for round in 0..40 {
            let mut args = [0u64; 6];
            for a in &mut args {
                *a = match rng.next() % 8 {
                    0 => 0,
                    1 => u64::MAX,
                    2 => rng.next() % 64,
                    3 => base + rng.next() % 8192,
                    4 => base + 8192 - rng.next() % 64,
                    5 => base + (rng.next() % 64) * 8,
                    6 => rng.next(),
                    _ => (rng.next() % 0x1_0000_0000) as u32 as u64,
                };
            }
            let ret = rets[round % rets.len()];
            for limit in [0usize, 1, 32, 4096] {
                let opts = Options {
                    string_limit: limit,
                    ..Options::DEFAULT
                };
                let whole = line_opts(nr, args, ret, &m, &opts);
                assert!(!whole.is_empty());
                let mut call = String::new();
                format_call(&mut call, nr, &args, ret, &m, &opts).unwrap();
                let mut entry = String::new();
                format_call(
                    &mut entry,
                    nr,
                    &args,
                    ret,
                    &m,
                    &Options {
                        out_args: false,
                        ..opts
                    },
                )
                .unwrap();
                let mut resumed = String::new();
                format_resumed(&mut resumed, nr, &args, ret, &m, &opts, &EntryState::NONE).unwrap();
                let rest = resumed.split_once(" resumed>").unwrap().1;
                assert_eq!(std::format!("{entry}{rest}"), call, "nr {nr} args {args:x?} ret {ret}");
            }
        }
    }
}
