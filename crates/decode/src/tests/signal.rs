//! Signals: rt_sigaction, rt_sigprocmask, signal sets, siginfo.

use super::{check, Mem, NOMEM};
use crate::nr::*;

const ACT: u64 = 0x7ffc_0000_1000;
const OLD: u64 = 0x7ffc_0000_2000;

fn sigaction(handler: u64, flags: u64, restorer: u64, mask: u64) -> [u64; 4] {
    [handler, flags, restorer, mask]
}

fn bit(sig: u32) -> u64 {
    1 << (sig - 1)
}

/// From `sh -c 'echo hi | cat'` and:
/// ```c
/// sa.sa_handler = h; sigaddset(&sa.sa_mask, SIGINT); sigaddset(&sa.sa_mask, SIGTERM);
/// sa.sa_flags = SA_RESTART; sigaction(SIGUSR1, &sa, NULL);
/// sa.sa_sigaction = h2; sa.sa_flags = SA_SIGINFO | SA_ONSTACK; sigfillset(&sa.sa_mask);
/// sigaction(SIGUSR2, &sa, &old);
/// signal(SIGPIPE, SIG_IGN);
/// ```
#[test]
fn rt_sigaction() {
    let m = Mem::new().words(
        ACT,
        &sigaction(
            0x55b8_32d5_e7a9,
            0x0400_0000 | 0x1000_0000,
            0x7f9c_13bd_0050,
            bit(2) | bit(15),
        ),
    );
    check(
        RT_SIGACTION,
        [10, ACT, 0, 8, 0, 0],
        0,
        &m,
        "rt_sigaction(SIGUSR1, {sa_handler=0x55b832d5e7a9, sa_mask=[INT TERM], sa_flags=SA_RESTORER|SA_RESTART, \
         sa_restorer=0x7f9c13bd0050}, NULL, 8) = 0",
    );
    // glibc's sigfillset leaves out the two signals it reserves (32, 33).
    let full = !(bit(32) | bit(33));
    let m = Mem::new()
        .words(
            ACT,
            &sigaction(0x55b8_32d5_e7b3, 0x0400_0000 | 0x0800_0000 | 4, 0x7f9c_13bd_0050, full),
        )
        .words(OLD, &sigaction(0, 0, 0, 0));
    check(
        RT_SIGACTION,
        [12, ACT, OLD, 8, 0, 0],
        0,
        &m,
        "rt_sigaction(SIGUSR2, {sa_handler=0x55b832d5e7b3, sa_mask=~[RTMIN RT_1], sa_flags=SA_RESTORER|SA_ONSTACK|\
         SA_SIGINFO, sa_restorer=0x7f9c13bd0050}, {sa_handler=SIG_DFL, sa_mask=[], sa_flags=0}, 8) = 0",
    );
    let m = Mem::new()
        .words(ACT, &sigaction(1, 0x0400_0000 | 0x1000_0000, 0x7f9c_13bd_0050, bit(13)))
        .words(OLD, &sigaction(0, 0, 0, 0));
    check(
        RT_SIGACTION,
        [13, ACT, OLD, 8, 0, 0],
        0,
        &m,
        "rt_sigaction(SIGPIPE, {sa_handler=SIG_IGN, sa_mask=[PIPE], sa_flags=SA_RESTORER|SA_RESTART, \
         sa_restorer=0x7f9c13bd0050}, {sa_handler=SIG_DFL, sa_mask=[], sa_flags=0}, 8) = 0",
    );
    // The old action is not printed when the call failed:
    // `unsigned long act[4] = {1, 0x04000000, 0x1234, ~0ul}, old[4];
    //  syscall(SYS_rt_sigaction, SIGKILL, act, old, 8);`
    let old = 0x7fff_3be5_2bb0;
    let m = Mem::new()
        .words(ACT, &sigaction(1, 0x0400_0000, 0x1234, u64::MAX))
        .words(old, &[0; 4]);
    check(
        RT_SIGACTION,
        [9, ACT, old, 8, 0, 0],
        -22,
        &m,
        "rt_sigaction(SIGKILL, {sa_handler=SIG_IGN, sa_mask=~[], sa_flags=SA_RESTORER, sa_restorer=0x1234}, \
         0x7fff3be52bb0, 8) = -1 EINVAL (Invalid argument)",
    );
}

/// ```c
/// sigemptyset(&ss); sigaddset(&ss, SIGINT); sigaddset(&ss, SIGTERM); sigaddset(&ss, SIGRTMIN+2);
/// sigprocmask(SIG_BLOCK, &ss, &os); sigprocmask(SIG_UNBLOCK, &ss, NULL);
/// sigfillset(&ss); sigprocmask(SIG_SETMASK, &ss, &os);
/// ```
/// and bash's `rt_sigprocmask(SIG_SETMASK, [], ~[KILL STOP RTMIN RT_1], 8)`.
#[test]
fn rt_sigprocmask() {
    let set = bit(2) | bit(15) | bit(36);
    let m = Mem::new().words(ACT, &[set]).words(OLD, &[0]);
    check(
        RT_SIGPROCMASK,
        [0, ACT, OLD, 8, 0, 0],
        0,
        &m,
        "rt_sigprocmask(SIG_BLOCK, [INT TERM RT_4], [], 8) = 0",
    );
    check(
        RT_SIGPROCMASK,
        [1, ACT, 0, 8, 0, 0],
        0,
        &m,
        "rt_sigprocmask(SIG_UNBLOCK, [INT TERM RT_4], NULL, 8) = 0",
    );
    let m = Mem::new().words(ACT, &[!(bit(32) | bit(33))]).words(OLD, &[0]);
    check(
        RT_SIGPROCMASK,
        [2, ACT, OLD, 8, 0, 0],
        0,
        &m,
        "rt_sigprocmask(SIG_SETMASK, ~[RTMIN RT_1], [], 8) = 0",
    );
    let m = Mem::new()
        .words(ACT, &[0])
        .words(OLD, &[!(bit(9) | bit(19) | bit(32) | bit(33))]);
    check(
        RT_SIGPROCMASK,
        [2, ACT, OLD, 8, 0, 0],
        0,
        &m,
        "rt_sigprocmask(SIG_SETMASK, [], ~[KILL STOP RTMIN RT_1], 8) = 0",
    );
    // A set size other than 8: the address.
    check(
        RT_SIGPROCMASK,
        [0, 0x55ec_6e31_1ed0, 0, 4, 0, 0],
        -22,
        NOMEM,
        "rt_sigprocmask(SIG_BLOCK, 0x55ec6e311ed0, NULL, 4) = -1 EINVAL (Invalid argument)",
    );
}

/// `rt_sigqueueinfo(getpid(), SIGUSR1, &si)` with `si_code = SI_QUEUE`,
/// then `rt_sigtimedwait(&usr1, &got, &zero, 8)` (the test program in
/// tests/against_strace.rs).
#[test]
fn siginfo() {
    let mut si = [0u8; 128];
    si[0..4].copy_from_slice(&10i32.to_le_bytes());
    si[8..12].copy_from_slice(&(-1i32).to_le_bytes());
    si[16..20].copy_from_slice(&4300i32.to_le_bytes());
    si[24..28].copy_from_slice(&42i32.to_le_bytes());
    let m = Mem::new().put(0x5000, &si).words(ACT, &[bit(10)]).words(OLD, &[0, 0]);
    check(
        RT_SIGQUEUEINFO,
        [4300, 10, 0x5000, 0, 0, 0],
        0,
        &m,
        "rt_sigqueueinfo(4300, SIGUSR1, {si_signo=SIGUSR1, si_code=SI_QUEUE, si_pid=4300, si_uid=0, si_int=42, \
         si_ptr=0x2a}) = 0",
    );
    check(
        RT_SIGTIMEDWAIT,
        [ACT, 0x5000, OLD, 8, 0, 0],
        10,
        &m,
        "rt_sigtimedwait([USR1], {si_signo=SIGUSR1, si_code=SI_QUEUE, si_pid=4300, si_uid=0, si_int=42, si_ptr=0x2a}, \
         {tv_sec=0, tv_nsec=0}, 8) = 10 (SIGUSR1)",
    );
}

/// `pid_t c = fork(); if (c == 0) _exit(7);
///  syscall(SYS_waitid, P_PID, c, &si, WEXITED, NULL);`
#[test]
fn sigchld_info() {
    let mut si = [0u8; 128];
    si[0..4].copy_from_slice(&17i32.to_le_bytes());
    si[8..12].copy_from_slice(&1i32.to_le_bytes());
    si[16..20].copy_from_slice(&4932i32.to_le_bytes());
    si[24..28].copy_from_slice(&7i32.to_le_bytes());
    let m = Mem::new().put(0x5000, &si);
    check(
        WAITID,
        [1, 4932, 0x5000, 4, 0, 0],
        0,
        &m,
        "waitid(P_PID, 4932, {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=4932, si_uid=0, si_status=7, si_utime=0, \
         si_stime=0}, WEXITED, NULL) = 0",
    );
}

/// From the test program in tests/against_strace.rs.
#[test]
fn sigaltstack() {
    let m = Mem::new().words(ACT, &[0x5555_0000, 0, 16384]).words(OLD, &[0, 2, 0]);
    check(
        SIGALTSTACK,
        [ACT, OLD, 0, 0, 0, 0],
        0,
        &m,
        "sigaltstack({ss_sp=0x55550000, ss_flags=0, ss_size=16384}, {ss_sp=NULL, ss_flags=SS_DISABLE, ss_size=0}) = 0",
    );
    let _ = NOMEM;
}

/// `sh -c 'echo hi | cat'`: the shell's SIGCHLD handler returns,
/// `rt_sigreturn({mask=[]}) = 24987` (the value the frame restores into rax).
/// The stack pointer is passed as the first argument.
#[test]
fn rt_sigreturn() {
    let sp = 0x7ffd_9832_3000;
    let m = Mem::new().words(sp + 296, &[0]);
    check(
        RT_SIGRETURN,
        [sp, 0, 0, 0, 0, 0],
        24987,
        &m,
        "rt_sigreturn({mask=[]})           = 24987",
    );
    let m = Mem::new().words(sp + 296, &[bit(2) | bit(15)]);
    check(
        RT_SIGRETURN,
        [sp, 0, 0, 0, 0, 0],
        0,
        &m,
        "rt_sigreturn({mask=[INT TERM]}) = 0",
    );
    check(RT_SIGRETURN, [0; 6], 0, NOMEM, "rt_sigreturn() = 0");
}
