//! Processes: clone, clone3, wait4, execve, exit, kill, limits, uname,
//! arch_prctl, prctl and the calls strace prints as plain numbers.

use std::vec;

use super::{check, Mem, NOMEM};
use crate::nr::*;

/// `pthread_create(&t, 0, f, 0)` under `strace -f -e trace=clone3`
/// (glibc 2.36):
/// `clone3({flags=CLONE_VM|...}, child_tid=..., ...} => {parent_tid=[4556]}, 88) = 4556`.
#[test]
fn clone3_thread() {
    let addr = 0x7f8f_c247_d000;
    let mut args = vec![0u8; 88];
    let flags: u64 = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000 | 0x80000 | 0x100000 | 0x200000;
    let put = |a: &mut [u8], off: usize, v: u64| a[off..off + 8].copy_from_slice(&v.to_le_bytes());
    put(&mut args, 0, flags);
    put(&mut args, 16, 0x7f8f_c247_d990);
    put(&mut args, 24, 0x7f8f_c247_d990);
    put(&mut args, 40, 0x7f8f_c1c7_d000);
    put(&mut args, 48, 0x7fff80);
    put(&mut args, 56, 0x7f8f_c247_d6c0);
    let m = Mem::new().put(addr, &args).ints(0x7f8f_c247_d990, &[4556]);
    check(
        CLONE3,
        [addr, 88, 0, 0, 0, 0],
        4556,
        &m,
        "clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|\
         CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x7f8fc247d990, parent_tid=0x7f8fc247d990, exit_signal=0, \
         stack=0x7f8fc1c7d000, stack_size=0x7fff80, tls=0x7f8fc247d6c0} => {parent_tid=[4556]}, 88) = 4556",
    );
}

/// `clone(cf, stack + sizeof stack, CLONE_VM | CLONE_FS | CLONE_FILES |
/// CLONE_PARENT_SETTID | SIGCHLD, 0, &ptid, 0, &ctid)` and `fork()`.
#[test]
fn clone_flags() {
    let m = Mem::new().ints(0x7ffd_0000_0000, &[4557]);
    check(
        CLONE,
        [
            0x100 | 0x200 | 0x400 | 0x100000 | 17,
            0x55f8_2053_7070,
            0x7ffd_0000_0000,
            0,
            0,
            0,
        ],
        4557,
        &m,
        "clone(child_stack=0x55f820537070, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_PARENT_SETTID|SIGCHLD, \
         parent_tid=[4557]) = 4557",
    );
    // glibc's fork()
    check(
        CLONE,
        [0x0120_0011, 0, 0, 0x7f8f_c247_ea10, 0, 0],
        4558,
        NOMEM,
        "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f8fc247ea10) = 4558",
    );
    // raw clone(SIGCHLD, 0, 0, 0, 0)
    check(
        CLONE,
        [17, 0, 0, 0, 0, 0],
        9912,
        NOMEM,
        "clone(child_stack=NULL, flags=SIGCHLD) = 9912",
    );
}

/// wait4 statuses, from `waitpid` after `_exit(3)`, `raise(SIGSEGV)` with
/// a core, `raise(SIGSTOP)` (WUNTRACED), SIGCONT (WCONTINUED), and
/// `wait4(-1, &st, WNOHANG, NULL)` with no child.
#[test]
fn wait4_status() {
    let st = 0x7ffc_f5d1_b48c;
    let cases: [(u32, u64, &str); 5] = [
        (
            0x300,
            0,
            "wait4(21789, [{WIFEXITED(s) && WEXITSTATUS(s) == 3}], 0, NULL) = 21789",
        ),
        (
            0x8b,
            0,
            "wait4(21789, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGSEGV && WCOREDUMP(s)}], 0, NULL) = 21789",
        ),
        (
            0x9,
            0,
            "wait4(21789, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL}], 0, NULL) = 21789",
        ),
        (
            0x137f,
            2,
            "wait4(21789, [{WIFSTOPPED(s) && WSTOPSIG(s) == SIGSTOP}], WSTOPPED, NULL) = 21789",
        ),
        (0xffff, 8, "wait4(21789, [{WIFCONTINUED(s)}], WCONTINUED, NULL) = 21789"),
    ];
    for (status, options, expect) in cases {
        let m = Mem::new().ints(st, &[status]);
        check(WAIT4, [21789, st, options, 0, 0, 0], 21789, &m, expect);
    }
    check(
        WAIT4,
        [u64::MAX, st, 1, 0, 0, 0],
        -10,
        NOMEM,
        "wait4(-1, 0x7ffcf5d1b48c, WNOHANG, NULL) = -1 ECHILD (No child processes)",
    );
}

/// `execve("/bin/true", av, ev)` with `av = {"/bin/true", "-la", "x y", NULL}`,
/// `ev = {"A=1", "B=2", NULL}`.
#[test]
fn execve() {
    let m = Mem::new()
        .str(0x1000, "/bin/true")
        .str(0x1010, "-la")
        .str(0x1020, "x y")
        .words(0x7ffc_f5d1_b400, &[0x1000, 0x1010, 0x1020, 0])
        .words(0x7ffc_f5d1_b440, &[0x1030, 0x1040, 0]);
    check(
        EXECVE,
        [0x1000, 0x7ffc_f5d1_b400, 0x7ffc_f5d1_b440, 0, 0, 0],
        0,
        &m,
        r#"execve("/bin/true", ["/bin/true", "-la", "x y"], 0x7ffcf5d1b440 /* 2 vars */) = 0"#,
    );
    check(
        EXECVE,
        [0x1000, 0, 0, 0, 0, 0],
        -2,
        &m,
        r#"execve("/bin/true", NULL, NULL) = -1 ENOENT (No such file or directory)"#,
    );
}

/// `_exit(3)`, `kill(getpid(), 0)`, `kill(c, SIGCONT)`,
/// `syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1)`, `kill(c, SIGKILL)`.
#[test]
fn exit_and_signals() {
    check(
        EXIT_GROUP,
        [3, 0, 0, 0, 0, 0],
        0,
        NOMEM,
        "exit_group(3)                     = ?",
    );
    check(
        KILL,
        [21788, 0, 0, 0, 0, 0],
        0,
        NOMEM,
        "kill(21788, 0)                    = 0",
    );
    check(
        KILL,
        [4559, 18, 0, 0, 0, 0],
        0,
        NOMEM,
        "kill(4559, SIGCONT)               = 0",
    );
    check(
        TGKILL,
        [21788, 21788, 10, 0, 0, 0],
        0,
        NOMEM,
        "tgkill(21788, 21788, SIGUSR1)     = 0",
    );
    check(
        KILL,
        [(-9911i64) as u64, 18, 0, 0, 0, 0],
        -3,
        NOMEM,
        "kill(-9911, SIGCONT)              = -1 ESRCH (No such process)",
    );
    // Real-time signals past SIGRTMIN: `signal(34, SIG_IGN); kill(getpid(), 34);`
    check(
        KILL,
        [4931, 34, 0, 0, 0, 0],
        0,
        NOMEM,
        "kill(4931, SIGRT_2)               = 0",
    );
}

/// The C runtime's start-up calls (`strace ls`): set_tid_address,
/// set_robust_list, rseq, arch_prctl, prlimit64, getuid.
#[test]
fn startup() {
    check(
        SET_TID_ADDRESS,
        [0x7fab_bf49_9ad0, 0, 0, 0, 0, 0],
        23929,
        NOMEM,
        "set_tid_address(0x7fabbf499ad0)   = 23929",
    );
    check(
        SET_ROBUST_LIST,
        [0x7fab_bf49_9ae0, 24, 0, 0, 0, 0],
        0,
        NOMEM,
        "set_robust_list(0x7fabbf499ae0, 24) = 0",
    );
    check(
        RSEQ,
        [0x7fab_bf49_a120, 0x20, 0, 0x5305_3053, 0, 0],
        0,
        NOMEM,
        "rseq(0x7fabbf49a120, 0x20, 0, 0x53053053) = 0",
    );
    check(
        ARCH_PRCTL,
        [0x1002, 0x7fab_bf49_9800, 0, 0, 0, 0],
        0,
        NOMEM,
        "arch_prctl(ARCH_SET_FS, 0x7fabbf499800) = 0",
    );
    let m = Mem::new().words(0x7ffd_0000_0100, &[0x7f9c_13b9_1740]);
    check(
        ARCH_PRCTL,
        [0x1003, 0x7ffd_0000_0100, 0, 0, 0, 0],
        0,
        &m,
        "arch_prctl(ARCH_GET_FS, [0x7f9c13b91740]) = 0",
    );
    let m = Mem::new().words(0x7ffd_0000_0200, &[8192 * 1024, u64::MAX]);
    check(
        PRLIMIT64,
        [0, 3, 0, 0x7ffd_0000_0200, 0, 0],
        0,
        &m,
        "prlimit64(0, RLIMIT_STACK, NULL, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}) = 0",
    );
    let m = Mem::new().words(0x7ffd_0000_0200, &[20000, 20000]);
    check(
        PRLIMIT64,
        [0, 4, 0x7ffd_0000_0200, 0, 0, 0],
        0,
        &m,
        "prlimit64(0, RLIMIT_CORE, {rlim_cur=20000, rlim_max=20000}, NULL) = 0",
    );
    check(GETUID, [0; 6], 0, NOMEM, "getuid()                          = 0");
    check(
        GETPID,
        [0; 6],
        24986,
        NOMEM,
        "getpid()                          = 24986",
    );
}

/// `uname(&un)` on a machine called "vm".
#[test]
fn uname() {
    let mut u = vec![0u8; 390];
    u[..5].copy_from_slice(b"Linux");
    u[65..67].copy_from_slice(b"vm");
    u[130..136].copy_from_slice(b"6.1.0-");
    let m = Mem::new().put(0x7ffd_0000_0000, &u);
    check(
        UNAME,
        [0x7ffd_0000_0000, 0, 0, 0, 0, 0],
        0,
        &m,
        r#"uname({sysname="Linux", nodename="vm", ...}) = 0"#,
    );
}

/// `prctl(PR_SET_NAME, "exname")`, `prctl(PR_GET_DUMPABLE)`,
/// `prctl(PR_SET_PDEATHSIG, SIGKILL)`, `prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)`.
#[test]
fn prctl() {
    let m = Mem::new().str(0x5000, "exname");
    check(
        PRCTL,
        [15, 0x5000, 0, 0, 0, 0],
        0,
        &m,
        r#"prctl(PR_SET_NAME, "exname")      = 0"#,
    );
    check(
        PRCTL,
        [3, 0, 0, 0, 0, 0],
        1,
        NOMEM,
        "prctl(PR_GET_DUMPABLE)            = 1 (SUID_DUMP_USER)",
    );
    check(
        PRCTL,
        [1, 9, 0, 0, 0, 0],
        0,
        NOMEM,
        "prctl(PR_SET_PDEATHSIG, SIGKILL)  = 0",
    );
    check(
        PRCTL,
        [38, 1, 0, 0, 0, 0],
        0,
        NOMEM,
        "prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) = 0",
    );
}

/// `sched_getaffinity(0, sizeof cs, &cs)` on two CPUs, and
/// `getrusage(RUSAGE_SELF, &ru)`.
#[test]
fn affinity_and_usage() {
    let mut mask = [0u8; 32];
    mask[0] = 3;
    let m = Mem::new().put(0x7ffd_0000_0000, &mask);
    check(
        SCHED_GETAFFINITY,
        [0, 128, 0x7ffd_0000_0000, 0, 0, 0],
        32,
        &m,
        "sched_getaffinity(0, 128, [0 1])  = 32",
    );
    let mut ru = [0u8; 144];
    ru[24..32].copy_from_slice(&2575u64.to_le_bytes());
    let m = Mem::new().put(0x7ffd_0000_0000, &ru);
    check(
        GETRUSAGE,
        [0, 0x7ffd_0000_0000, 0, 0, 0, 0],
        0,
        &m,
        "getrusage(RUSAGE_SELF, {ru_utime={tv_sec=0, tv_usec=0}, ru_stime={tv_sec=0, tv_usec=2575}, ...}) = 0",
    );
}
