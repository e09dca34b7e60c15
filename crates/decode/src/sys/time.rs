//! Clocks, timers, sleeping and futexes (strace's time.c, print_timespec.h,
//! print_timeval.c, print_sigevent.c, futex.c).

use core::fmt::Write as _;

use crate::out::{le_i32, le_i64, le_u64, P, R};
use crate::xlat;

/// `printclockname`: CLOCK_MONOTONIC, or a CPU clock of a process/thread.
pub(crate) fn clockname(p: &mut P, id: i32) -> R {
    if id < 0 {
        if id & 7 == 3 {
            // CLOCKFD
            return write!(p, "FD_TO_CLOCKID({})", !(id >> 3));
        }
        let pid = !(id >> 3);
        let which = if id & 4 != 0 {
            "MAKE_THREAD_CPUCLOCK"
        } else {
            "MAKE_PROCESS_CPUCLOCK"
        };
        write!(p, "{which}({pid}, ")?;
        // strace masks with CLOCKFD_MASK (7), so thread clocks show as unknown.
        match id & 7 {
            0 => p.s("CPUCLOCK_PROF")?,
            1 => p.s("CPUCLOCK_VIRT")?,
            2 => p.s("CPUCLOCK_SCHED")?,
            n => write!(p, "{n:#x} /* CPUCLOCK_??? */")?,
        }
        return p.s(")");
    }
    p.xval(xlat::CLOCKNAMES, id as u64, Some("CLOCK_???"))
}

fn is_erestart(ret: i64) -> bool {
    matches!(ret, -512 | -513 | -514 | -516)
}

/// The remaining time of an interrupted sleep: shown only when the call
/// was interrupted (ERESTART*), the address otherwise.
fn remain(p: &mut P, addr: u64, show: bool) -> R {
    if show {
        p.timespec_any(addr)
    } else {
        p.addr(addr)
    }
}

/// nanosleep(req, rem).
pub(crate) fn nanosleep(p: &mut P) -> R {
    p.timespec(p.a[0])?;
    p.next()?;
    p.exiting()?;
    let show = is_erestart(p.ret);
    remain(p, p.a[1], show)
}

/// clock_nanosleep(clockid, flags, request, remain).
pub(crate) fn clock_nanosleep(p: &mut P) -> R {
    clockname(p, p.a[0] as i32)?;
    p.next()?;
    p.flags(xlat::CLOCKFLAGS, p.a[1], Some("TIMER_???"))?;
    p.next()?;
    p.timespec(p.a[2])?;
    p.next()?;
    p.exiting()?;
    let show = p.a[1] == 0 && is_erestart(p.ret);
    remain(p, p.a[3], show)
}

/// clock_gettime/clock_getres(clockid, tp).
pub(crate) fn clock_gettime(p: &mut P) -> R {
    clockname(p, p.a[0] as i32)?;
    p.next()?;
    p.exiting()?;
    p.timespec(p.a[1])
}

fn timezone(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 8];
    if p.fetch(addr, &mut b)? {
        write!(
            p,
            "{{tz_minuteswest={}, tz_dsttime={}}}",
            le_i32(&b[0..]),
            le_i32(&b[4..])
        )?;
    }
    Ok(())
}

/// gettimeofday(tv, tz).
pub(crate) fn gettimeofday(p: &mut P) -> R {
    p.exiting()?;
    p.timeval(p.a[0])?;
    p.next()?;
    timezone(p, p.a[1])
}

/// settimeofday(tv, tz).
pub(crate) fn settimeofday(p: &mut P) -> R {
    p.timeval(p.a[0])?;
    p.next()?;
    timezone(p, p.a[1])
}

/// time(tloc): `[1700000000 /* 2023-11-14T22:13:20+0000 */]`.
pub(crate) fn time(p: &mut P) -> R {
    p.exiting()?;
    let mut b = [0u8; 8];
    if p.fetch(p.a[0], &mut b)? {
        let t = le_i64(&b);
        write!(p, "[{t}")?;
        p.time_comment(t, 0, 0, 0)?;
        p.s("]")?;
    }
    Ok(())
}

/// Two consecutive time values at `addr`, each `{tv_sec=S, SUB=N}`, printed
/// as `{first=..., second=...TAIL}` (itimerval, itimerspec, rusage's head).
pub(crate) fn time_pair(p: &mut P, addr: u64, first: &str, second: &str, sub: &str, tail: &str) -> R {
    let mut b = [0u8; 32];
    if p.fetch(addr, &mut b)? {
        write!(
            p,
            "{{{first}={{tv_sec={}, {sub}={}}}, {second}={{tv_sec={}, {sub}={}}}{tail}}}",
            le_i64(&b[0..]),
            le_u64(&b[8..]),
            le_i64(&b[16..]),
            le_u64(&b[24..])
        )?;
    }
    Ok(())
}

fn itimerval(p: &mut P, addr: u64) -> R {
    time_pair(p, addr, "it_interval", "it_value", "tv_usec", "")
}

fn itimerspec(p: &mut P, addr: u64) -> R {
    time_pair(p, addr, "it_interval", "it_value", "tv_nsec", "")
}

/// getitimer(which, curr_value).
pub(crate) fn getitimer(p: &mut P) -> R {
    p.xval(xlat::ITIMER_WHICH, p.a[0], Some("ITIMER_???"))?;
    p.next()?;
    p.exiting()?;
    itimerval(p, p.a[1])
}

/// setitimer(which, new_value, old_value).
pub(crate) fn setitimer(p: &mut P) -> R {
    p.xval(xlat::ITIMER_WHICH, p.a[0], Some("ITIMER_???"))?;
    p.next()?;
    itimerval(p, p.a[1])?;
    p.next()?;
    p.exiting()?;
    itimerval(p, p.a[2])
}

/// timer_create(clockid, sevp, timerid).
pub(crate) fn timer_create(p: &mut P) -> R {
    clockname(p, p.a[0] as i32)?;
    p.next()?;
    sigevent(p, p.a[1])?;
    p.next()?;
    p.exiting()?;
    p.num_int(p.a[2])
}

/// struct sigevent: `{sigev_signo=SIGALRM, sigev_notify=SIGEV_SIGNAL}`.
pub(crate) fn sigevent(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 64];
    if p.fetch(addr, &mut b)? {
        let (value, signo, notify) = (le_u64(&b[0..]), le_i32(&b[8..]), le_i32(&b[12..]));
        p.s("{")?;
        if value != 0 {
            write!(p, "sigev_value={{sival_int={}, sival_ptr=", value as i32)?;
            p.addr(value)?;
            p.s("}, ")?;
        }
        p.s("sigev_signo=")?;
        match notify {
            0 | 2 | 4 => p.signal(signo)?,
            _ => p.u(signo as u32 as u64)?,
        }
        p.s(", sigev_notify=")?;
        p.xval(xlat::SIGEV_VALUE, notify as u32 as u64, Some("SIGEV_???"))?;
        match notify {
            4 => write!(p, ", sigev_notify_thread_id={}", le_i32(&b[16..]))?,
            2 => {
                p.s(", sigev_notify_function=")?;
                p.addr(le_u64(&b[16..]))?;
                p.s(", sigev_notify_attributes=")?;
                p.addr(le_u64(&b[24..]))?;
            }
            _ => {}
        }
        p.s("}")?;
    }
    Ok(())
}

/// timer_settime(timerid, flags, new_value, old_value).
pub(crate) fn timer_settime(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.flags(xlat::CLOCKFLAGS, p.a[1], Some("TIMER_???"))?;
    p.next()?;
    itimerspec(p, p.a[2])?;
    p.next()?;
    p.exiting()?;
    itimerspec(p, p.a[3])
}

/// timer_gettime(timerid, curr_value).
pub(crate) fn timer_gettime(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.exiting()?;
    itimerspec(p, p.a[1])
}

/// timerfd_settime(fd, flags, new_value, old_value).
pub(crate) fn timerfd_settime(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.flags(xlat::TIMERFDFLAGS, p.a[1], Some("TFD_???"))?;
    p.next()?;
    itimerspec(p, p.a[2])?;
    p.next()?;
    p.exiting()?;
    itimerspec(p, p.a[3])
}

/// timerfd_gettime(fd, curr_value).
pub(crate) fn timerfd_gettime(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.exiting()?;
    itimerspec(p, p.a[1])
}

/// futex(uaddr, op, val, timeout/val2, uaddr2, val3): strace's do_futex.
pub(crate) fn futex(p: &mut P) -> R {
    let (uaddr, op) = (p.a[0], p.a[1] as i32);
    let (val, timeout, uaddr2) = (p.a[2] as u32 as u64, p.a[3], p.a[4]);
    let (val2, val3) = (p.a[3] as u32 as u64, p.a[5] as u32);
    p.addr(uaddr)?;
    p.next()?;
    p.xval(xlat::FUTEXOPS, op as u32 as u64, Some("FUTEX_???"))?;
    match op & 127 {
        0 => {
            // FUTEX_WAIT
            write!(p, ", {val}, ")?;
            p.timespec(timeout)
        }
        6 | 13 => {
            // FUTEX_LOCK_PI, FUTEX_LOCK_PI2
            p.next()?;
            p.timespec(timeout)
        }
        9 => {
            // FUTEX_WAIT_BITSET
            write!(p, ", {val}, ")?;
            p.timespec(timeout)?;
            p.next()?;
            p.xval(xlat::FUTEXBITSET, val3 as u64, None)
        }
        10 => {
            // FUTEX_WAKE_BITSET
            write!(p, ", {val}, ")?;
            p.xval(xlat::FUTEXBITSET, val3 as u64, None)
        }
        3 => {
            // FUTEX_REQUEUE
            write!(p, ", {val}, {val2}, ")?;
            p.addr(uaddr2)
        }
        4 | 12 => {
            // FUTEX_CMP_REQUEUE, FUTEX_CMP_REQUEUE_PI
            write!(p, ", {val}, {val2}, ")?;
            p.addr(uaddr2)?;
            write!(p, ", {val3}")
        }
        5 => {
            // FUTEX_WAKE_OP
            write!(p, ", {val}, {val2}, ")?;
            p.addr(uaddr2)?;
            p.next()?;
            if (val3 >> 28) & 8 != 0 {
                p.s("FUTEX_OP_OPARG_SHIFT<<28|")?;
            }
            let known = crate::out::lookup(xlat::FUTEXWAKEOPS, ((val3 >> 28) & 7) as u64);
            match known {
                Some(s) => p.s(s)?,
                None => p.x(((val3 >> 28) & 7) as u64)?,
            }
            p.s("<<28")?;
            if known.is_none() {
                p.s(" /* FUTEX_OP_??? */")?;
            }
            p.s("|")?;
            p.x(((val3 >> 12) & 0xfff) as u64)?;
            p.s("<<12|")?;
            let cmp = crate::out::lookup(xlat::FUTEXWAKECMPS, ((val3 >> 24) & 0xf) as u64);
            match cmp {
                Some(s) => p.s(s)?,
                None => p.x(((val3 >> 24) & 0xf) as u64)?,
            }
            p.s("<<24")?;
            if cmp.is_none() {
                p.s(" /* FUTEX_OP_CMP_??? */")?;
            }
            p.s("|")?;
            p.x((val3 & 0xfff) as u64)
        }
        11 => {
            // FUTEX_WAIT_REQUEUE_PI
            write!(p, ", {val}, ")?;
            p.timespec(timeout)?;
            p.next()?;
            p.addr(uaddr2)
        }
        2 | 1 => write!(p, ", {val}"),
        7 | 8 => Ok(()),
        _ => {
            write!(p, ", {val}, ")?;
            p.addr(timeout)?;
            p.next()?;
            p.addr(uaddr2)?;
            p.next()?;
            p.x(val3 as u64)
        }
    }
}
