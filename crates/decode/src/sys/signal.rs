//! Signals (strace's signal.c, printsiginfo.c, sigaltstack.c, signalfd.c).

use core::fmt::Write as _;

use crate::out::{le_i32, le_i64, le_u32, le_u64, lookup, P, R};
use crate::xlat::{self, Xlat};

/// struct kernel sigaction: `{sa_handler=SIG_DFL, sa_mask=[], sa_flags=0}`.
fn sigaction(p: &mut P, addr: u64) -> R {
    // handler, flags, restorer, mask (x86-64 kernel layout).
    let mut b = [0u8; 32];
    if !p.fetch(addr, &mut b)? {
        return Ok(());
    }
    let (handler, flags, restorer) = (le_u64(&b[0..]), le_u64(&b[8..]), le_u64(&b[16..]));
    p.s("{sa_handler=")?;
    match lookup(xlat::SA_HANDLER_VALUES, handler) {
        Some(s) => p.s(s)?,
        None => p.addr(handler)?,
    }
    p.s(", sa_mask=")?;
    p.sigmask(&b[24..32])?;
    p.s(", sa_flags=")?;
    p.flags64(xlat::SIGACT_FLAGS, flags, Some("SA_???"))?;
    if flags & 0x0400_0000 != 0 {
        p.s(", sa_restorer=")?;
        p.addr(restorer)?;
    }
    p.s("}")
}

/// rt_sigaction(signum, act, oldact, sigsetsize).
pub(crate) fn rt_sigaction(p: &mut P) -> R {
    p.signal(p.a[0] as i32)?;
    p.next()?;
    sigaction(p, p.a[1])?;
    p.next()?;
    p.exiting()?;
    sigaction(p, p.a[2])?;
    p.next()?;
    p.u(p.a[3])
}

/// rt_sigreturn(): it has no arguments; strace shows the signal mask the
/// frame restores, found from the stack pointer. The caller passes the
/// stack pointer at the `syscall` instruction as `args[0]` (0: unknown).
pub(crate) fn rt_sigreturn(p: &mut P) -> R {
    let sp = p.a[0];
    if sp == 0 {
        return Ok(());
    }
    // The frame starts one word below (the restorer's return address was
    // popped); uc_sigmask is 296 bytes into the ucontext that follows it.
    p.s("{mask=")?;
    let mut b = [0u8; 8];
    if p.fetch_any(sp.wrapping_add(296), &mut b)? {
        p.sigmask(&b)?;
    }
    p.s("}")
}

/// rt_sigprocmask(how, set, oldset, sigsetsize).
pub(crate) fn rt_sigprocmask(p: &mut P) -> R {
    p.xval(xlat::SIGPROCMASKCMDS, p.a[0], Some("SIG_???"))?;
    p.next()?;
    p.sigset_addr_len(p.a[1], p.a[3])?;
    p.next()?;
    p.exiting()?;
    p.sigset_addr_len(p.a[2], p.a[3])?;
    p.next()?;
    p.u(p.a[3])
}

/// rt_sigpending(set, sigsetsize): the set may be shorter than 8 bytes.
pub(crate) fn rt_sigpending(p: &mut P) -> R {
    p.exiting()?;
    let (addr, len) = (p.a[0], p.a[1]);
    if !(1..=8).contains(&len) {
        p.addr(addr)?;
    } else {
        let mut b = [0u8; 8];
        if p.fetch(addr, &mut b[..len as usize])? {
            p.sigmask(&b[..len as usize])?;
        }
    }
    p.next()?;
    p.u(len)
}

/// rt_sigtimedwait(set, info, timeout, sigsetsize).
pub(crate) fn rt_sigtimedwait(p: &mut P) -> R {
    p.sigset_addr_len(p.a[0], p.a[3])?;
    p.next()?;
    if p.a[1] == 0 {
        p.addr(p.a[1])?;
        p.next()?;
        p.timespec(p.a[2])?;
        p.next()?;
        return p.u(p.a[3]);
    }
    p.exiting()?;
    siginfo_at(p, p.a[1])?;
    p.next()?;
    // The timeout as read on entry.
    p.timespec_any(p.a[2])?;
    p.next()?;
    p.u(p.a[3])
}

/// rt_sigqueueinfo(tgid, sig, info), rt_tgsigqueueinfo(tgid, tid, sig, info).
pub(crate) fn rt_sigqueueinfo(p: &mut P, tg: bool) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    let mut i = 1;
    if tg {
        p.d(p.a[1] as i32 as i64)?;
        p.next()?;
        i = 2;
    }
    p.signal(p.a[i] as i32)?;
    p.next()?;
    siginfo_at(p, p.a[i + 1])
}

/// `printsiginfo_at`: `{si_signo=SIGCHLD, si_code=CLD_EXITED, ...}`.
pub(crate) fn siginfo_at(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 48];
    if p.fetch(addr, &mut b)? {
        siginfo(p, &b)?;
    }
    Ok(())
}

const SIGILL: i32 = 4;
const SIGTRAP: i32 = 5;
const SIGBUS: i32 = 7;
const SIGFPE: i32 = 8;
const SIGSEGV: i32 = 11;
const SIGCHLD: i32 = 17;
const SIGIO: i32 = 29;
const SIGPROF: i32 = 27;
const SIGSYS: i32 = 31;

fn si_codes(sig: i32) -> Option<Xlat> {
    Some(match sig {
        SIGTRAP => xlat::SIGTRAP_CODES,
        SIGCHLD => xlat::SIGCHLD_CODES,
        SIGIO => xlat::SIGPOLL_CODES,
        SIGPROF => xlat::SIGPROF_CODES,
        SIGILL => xlat::SIGILL_CODES,
        SIGFPE => xlat::SIGFPE_CODES,
        SIGSEGV => xlat::SIGSEGV_CODES,
        SIGBUS => xlat::SIGBUS_CODES,
        SIGSYS => xlat::SIGSYS_CODES,
        _ => return None,
    })
}

fn source(p: &mut P, b: &[u8]) -> R {
    write!(p, ", si_pid={}, si_uid=", le_i32(&b[16..]))?;
    p.id(le_u32(&b[20..]) as u64)
}

fn sigval(p: &mut P, b: &[u8]) -> R {
    write!(p, ", si_int={}, si_ptr=", le_i32(&b[24..]))?;
    p.addr(le_u64(&b[24..]))
}

/// strace's printsiginfo over the first 48 bytes of a siginfo_t.
pub(crate) fn siginfo(p: &mut P, b: &[u8; 48]) -> R {
    let (signo, errno, code) = (le_i32(&b[0..]), le_i32(&b[4..]), le_i32(&b[8..]));
    p.s("{")?;
    if signo != 0 {
        p.s("si_signo=")?;
        p.signal(signo)?;
        p.s(", si_code=")?;
        let name = lookup(xlat::SIGINFO_CODES, code as u32 as u64)
            .or_else(|| si_codes(signo).and_then(|x| lookup(x, code as u32 as u64)));
        match name {
            Some(s) => p.s(s)?,
            None => p.d(code as i64)?,
        }
        if errno != 0 {
            p.s(", si_errno=")?;
            match crate::errno_name(errno) {
                Some(n) => p.s(n)?,
                None => p.u(errno as u32 as u64)?,
            }
        }
        if code <= 0 {
            match code {
                0 | -6 => source(p, b)?,
                -2 => {
                    write!(
                        p,
                        ", si_timerid={:#x}, si_overrun={}",
                        le_i32(&b[16..]),
                        le_i32(&b[20..])
                    )?;
                    sigval(p, b)?;
                }
                -5 => write!(p, ", si_band={}, si_fd={}", le_i64(&b[16..]), le_i32(&b[24..]))?,
                _ => {
                    source(p, b)?;
                    if le_u64(&b[24..]) != 0 {
                        sigval(p, b)?;
                    }
                }
            }
        } else {
            match signo {
                SIGCHLD => {
                    source(p, b)?;
                    p.s(", si_status=")?;
                    if code == 1 {
                        p.d(le_i32(&b[24..]) as i64)?;
                    } else {
                        p.signal(le_i32(&b[24..]))?;
                    }
                    p.s(", si_utime=")?;
                    p.clock_t(le_u64(&b[32..]))?;
                    p.s(", si_stime=")?;
                    p.clock_t(le_u64(&b[40..]))?;
                }
                SIGILL | SIGFPE | SIGBUS | SIGSEGV | SIGTRAP => {
                    p.s(", si_addr=")?;
                    p.addr(le_u64(&b[16..]))?;
                }
                SIGIO => {
                    if (1..=6).contains(&code) {
                        write!(p, ", si_band={}, si_fd={}", le_i64(&b[16..]), le_i32(&b[24..]))?;
                    }
                }
                SIGSYS => {
                    p.s(", si_call_addr=")?;
                    p.addr(le_u64(&b[16..]))?;
                    let (call, arch) = (le_i32(&b[24..]), le_u32(&b[28..]));
                    p.s(", si_syscall=")?;
                    match (arch, strata_syscall_table::name(call as u32 as usize)) {
                        (0xc000_003e, Some(n)) => write!(p, "__NR_{n}")?,
                        _ => p.d(call as i64)?,
                    }
                    p.s(", si_arch=")?;
                    match arch {
                        0xc000_003e => p.s("AUDIT_ARCH_X86_64")?,
                        0x4000_0003 => p.s("AUDIT_ARCH_I386")?,
                        _ => {
                            p.x(arch as u64)?;
                            p.s(" /* AUDIT_ARCH_??? */")?;
                        }
                    }
                }
                _ => {
                    if le_i32(&b[16..]) != 0 || le_u32(&b[20..]) != 0 {
                        source(p, b)?;
                    }
                    if le_u64(&b[24..]) != 0 {
                        sigval(p, b)?;
                    }
                }
            }
        }
    }
    p.s("}")
}

/// stack_t: `{ss_sp=0x..., ss_flags=0, ss_size=8192}`.
fn stack_t(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 24];
    if p.fetch(addr, &mut b)? {
        p.s("{ss_sp=")?;
        p.addr(le_u64(&b[0..]))?;
        p.s(", ss_flags=")?;
        p.flags64(xlat::SIGALTSTACK_FLAGS, le_u32(&b[8..]) as u64, Some("SS_???"))?;
        write!(p, ", ss_size={}}}", le_u64(&b[16..]))?;
    }
    Ok(())
}

/// sigaltstack(ss, old_ss).
pub(crate) fn sigaltstack(p: &mut P) -> R {
    stack_t(p, p.a[0])?;
    p.next()?;
    p.exiting()?;
    stack_t(p, p.a[1])
}

/// signalfd(fd, mask, sizemask) and signalfd4(..., flags).
pub(crate) fn signalfd(p: &mut P, four: bool) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.sigset_addr_len(p.a[1], p.a[2])?;
    p.next()?;
    p.u(p.a[2])?;
    if four {
        p.next()?;
        p.flags(xlat::SFD_FLAGS, p.a[3], Some("SFD_???"))?;
    }
    Ok(())
}
