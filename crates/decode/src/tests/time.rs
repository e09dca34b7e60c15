//! Time and futexes: nanosleep, clock_nanosleep, clock_gettime, clock
//! names, futex operations.

use super::{check, Mem, NOMEM};
use crate::nr::*;

const TS: u64 = 0x7ffc_f5d1_b820;

/// `sleep 0.01` (coreutils), and
/// ```c
/// struct timespec ts = {0, 1000}, rem;
/// nanosleep(&ts, &rem);   /* glibc: clock_nanosleep(CLOCK_REALTIME, 0, ...) */
/// clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
/// syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
/// syscall(SYS_clock_getres, CLOCK_MONOTONIC_RAW, &ts);
/// ```
#[test]
fn sleeping_and_clocks() {
    let m = Mem::new().words(TS, &[0, 10_000_000]);
    check(
        CLOCK_NANOSLEEP,
        [0, 0, TS, 0x7fff_719b_6610, 0, 0],
        0,
        &m,
        "clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=0, tv_nsec=10000000}, 0x7fff719b6610) = 0",
    );
    let m = Mem::new().words(TS, &[0, 1000]);
    check(
        CLOCK_NANOSLEEP,
        [1, 0, TS, 0, 0, 0],
        0,
        &m,
        "clock_nanosleep(CLOCK_MONOTONIC, 0, {tv_sec=0, tv_nsec=1000}, NULL) = 0",
    );
    check(
        NANOSLEEP,
        [TS, 0x55ec_6e31_1f00, 0, 0, 0, 0],
        0,
        &m,
        "nanosleep({tv_sec=0, tv_nsec=1000}, 0x55ec6e311f00) = 0",
    );
    let m = Mem::new().words(TS, &[1795318451, 568927834]);
    check(
        CLOCK_GETTIME,
        [0, TS, 0, 0, 0, 0],
        0,
        &m,
        "clock_gettime(CLOCK_REALTIME, {tv_sec=1795318451, tv_nsec=568927834}) = 0",
    );
    let m = Mem::new().words(TS, &[0, 1]);
    check(
        CLOCK_GETRES,
        [4, TS, 0, 0, 0, 0],
        0,
        &m,
        "clock_getres(CLOCK_MONOTONIC_RAW, {tv_sec=0, tv_nsec=1}) = 0",
    );
    // An unknown clock, and no timespec on failure.
    check(
        CLOCK_GETTIME,
        [1234, 0x55ec_6e31_1ef0, 0, 0, 0, 0],
        -22,
        NOMEM,
        "clock_gettime(0x4d2 /* CLOCK_??? */, 0x55ec6e311ef0) = -1 EINVAL (Invalid argument)",
    );
    let m = Mem::new().words(TS, &[0, 2_000_000_000]);
    check(
        CLOCK_NANOSLEEP,
        [0, 1, TS, 0x55ec_6e31_1f00, 0, 0],
        -22,
        &m,
        "clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, {tv_sec=0, tv_nsec=2000000000}, 0x55ec6e311f00) = -1 EINVAL \
         (Invalid argument)",
    );
}

/// `ls` (glibc's once), and
/// ```c
/// syscall(SYS_futex, &fx, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
/// syscall(SYS_futex, &fx, FUTEX_WAIT_PRIVATE, 1, &ts /* {1, 0} */, NULL, 0);
/// syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 1, ts, 0, FUTEX_BITSET_MATCH_ANY);
/// ```
#[test]
fn futex() {
    check(
        FUTEX,
        [0x7fab_bf70_aa4c, 0x81, 2147483647, 0, 0, 0],
        0,
        NOMEM,
        "futex(0x7fabbf70aa4c, FUTEX_WAKE_PRIVATE, 2147483647) = 0",
    );
    let m = Mem::new().words(TS, &[1, 0]);
    check(
        FUTEX,
        [0x7ffc_f5d1_b81c, 0x80, 1, TS, 0, 0],
        -11,
        &m,
        "futex(0x7ffcf5d1b81c, FUTEX_WAIT_PRIVATE, 1, {tv_sec=1, tv_nsec=0}) = -1 EAGAIN (Resource temporarily unavailable)",
    );
    check(
        FUTEX,
        [0x55ec_6e31_1f10, 0x109, 1, TS, 0, 0xffff_ffff],
        -11,
        &m,
        "futex(0x55ec6e311f10, FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, 1, {tv_sec=1, tv_nsec=0}, FUTEX_BITSET_MATCH_ANY) = \
         -1 EAGAIN (Resource temporarily unavailable)",
    );
}
