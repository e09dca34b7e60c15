//! Processes: clone, execve, wait, uname, prctl, arch_prctl, limits,
//! usage, ids, scheduling, getrandom (strace's clone.c, execve.c, wait.c,
//! uname.c, prctl.c, resource.c, uid.c, affinity.c, sched.c, getrandom.c).

use core::fmt::Write as _;

use super::signal::siginfo_at;
use super::Rval;
use crate::out::{le_i32, le_i64, le_u16, le_u32, le_u64, lookup, MemBytes, HEX, P, R};
use crate::xlat;

const CLONE_PIDFD: u64 = 0x1000;
const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x100000;
const CLONE_CHILD_CLEARTID: u64 = 0x200000;
const CLONE_CHILD_SETTID: u64 = 0x1000000;
const CLONE_INTO_CGROUP: u64 = 0x200000000;

/// clone(flags, stack, parent_tid, child_tid, tls).
pub(crate) fn clone(p: &mut P) -> R {
    let flags = p.a[0] & !0xff;
    let sig = (p.a[0] & 0xff) as i32;
    p.s("child_stack=")?;
    p.addr(p.a[1])?;
    p.s(", flags=")?;
    if flags != 0 {
        p.flags64(xlat::CLONE_FLAGS, flags, Some("CLONE_???"))?;
        if sig != 0 {
            p.s("|")?;
            p.signal(sig)?;
        }
    } else {
        p.signal(sig)?;
    }
    if flags & (CLONE_PARENT_SETTID | CLONE_PIDFD | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_SETTLS) == 0 {
        return Ok(());
    }
    p.exiting()?;
    if flags & (CLONE_PARENT_SETTID | CLONE_PIDFD) != 0 {
        p.s(", parent_tid=")?;
        p.num_int(p.a[2])?;
    }
    if flags & CLONE_SETTLS != 0 {
        p.s(", tls=")?;
        p.addr(p.a[4])?;
    }
    if flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID) != 0 {
        p.s(", child_tidptr=")?;
        p.addr(p.a[3])?;
    }
    Ok(())
}

/// clone3(args, size): the struct clone_args, abbreviated as strace does.
pub(crate) fn clone3(p: &mut P) -> R {
    let (addr, size) = (p.a[0], p.a[1]);
    let fetch = size.min(88) as usize;
    let mut b = [0u8; 88];
    if fetch < 64 {
        p.addr(addr)?;
    } else if p.fetch(addr, &mut b[..fetch])? {
        let flags = le_u64(&b[0..]);
        p.s("{flags=")?;
        p.flags_multi(&[xlat::CLONE_FLAGS, xlat::CLONE3_FLAGS], flags, Some("CLONE_???"))?;
        if flags & CLONE_PIDFD != 0 {
            p.s(", pidfd=")?;
            p.addr(le_u64(&b[8..]))?;
        }
        if flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID) != 0 {
            p.s(", child_tid=")?;
            p.addr(le_u64(&b[16..]))?;
        }
        if flags & CLONE_PARENT_SETTID != 0 {
            p.s(", parent_tid=")?;
            p.addr(le_u64(&b[24..]))?;
        }
        let exit_signal = le_u64(&b[32..]);
        p.s(", exit_signal=")?;
        if exit_signal < i32::MAX as u64 {
            p.signal(exit_signal as i32)?;
        } else {
            p.u(exit_signal)?;
        }
        p.s(", stack=")?;
        p.addr(le_u64(&b[40..]))?;
        p.s(", stack_size=")?;
        p.x(le_u64(&b[48..]))?;
        if flags & CLONE_SETTLS != 0 {
            p.s(", tls=")?;
            p.addr(le_u64(&b[56..]))?;
        }
        let (set_tid, set_tid_size) = (le_u64(&b[64..]), le_u64(&b[72..]));
        if set_tid != 0 || set_tid_size != 0 {
            p.s(", set_tid=")?;
            if set_tid == 0 || set_tid_size == 0 || set_tid_size > 32 {
                p.addr(set_tid)?;
            } else {
                p.array::<4>(set_tid, set_tid_size, false, |p, el| p.d(le_i32(el) as i64))?;
            }
            write!(p, ", set_tid_size={set_tid_size}")?;
        }
        let cgroup = le_u64(&b[80..]);
        if fetch > 80 && (cgroup != 0 || flags & CLONE_INTO_CGROUP != 0) {
            write!(p, ", cgroup={cgroup}")?;
        }
        if size > fetch as u64 {
            super::file::nonzero_tail(p, addr, fetch, size.min(4096) as usize)?;
        }
        p.s("}")?;
        if flags & (CLONE_PIDFD | CLONE_PARENT_SETTID) != 0 || size > fetch as u64 {
            p.exiting()?;
            if !p.failed() {
                if !p.read(addr, &mut b[..fetch]) {
                    p.s(" => ")?;
                    p.addr(addr)?;
                } else {
                    let mut opened = false;
                    if flags & CLONE_PIDFD != 0 {
                        p.s(" => {pidfd=")?;
                        opened = true;
                        p.num_int(le_u64(&b[8..]))?;
                    }
                    if flags & CLONE_PARENT_SETTID != 0 {
                        p.s(if opened { ", parent_tid=" } else { " => {parent_tid=" })?;
                        opened = true;
                        p.num_int(le_u64(&b[24..]))?;
                    }
                    if opened {
                        p.s("}")?;
                    }
                }
            }
        }
    }
    p.next()?;
    p.u(size)
}

/// execve(path, argv, envp) and execveat(dirfd, path, argv, envp, flags).
pub(crate) fn execve(p: &mut P, at: bool) -> R {
    let i = usize::from(at);
    if at {
        p.dirfd(p.a[0])?;
        p.next()?;
    }
    p.path(p.a[i])?;
    p.next()?;
    argv(p, p.a[i + 1])?;
    p.next()?;
    argc(p, p.a[i + 2])?;
    if at {
        p.next()?;
        p.flags(xlat::AT_FLAGS, p.a[4], Some("AT_???"))?;
    }
    Ok(())
}

/// `["ls", "-la"]`: at most -s strings of at most -s bytes.
fn argv(p: &mut P, addr: u64) -> R {
    if addr == 0 {
        return p.addr(addr);
    }
    let mut n = 0u64;
    let mut cur = addr;
    loop {
        let mut w = [0u8; 8];
        if cur < addr || !p.read(cur, &mut w) {
            if n == 0 {
                return p.addr(cur);
            }
            write!(p, ", ... /* {cur:#x} */")?;
            break;
        }
        let word = u64::from_le_bytes(w);
        if n == 0 {
            p.s("[")?;
        }
        if word == 0 {
            break;
        }
        if n != 0 {
            p.s(", ")?;
        }
        if n >= p.limit as u64 {
            p.s("...")?;
            break;
        }
        p.cstr(word)?;
        n += 1;
        cur = cur.wrapping_add(8);
    }
    p.s("]")
}

/// `0x7ffd... /* 39 vars */`.
fn argc(p: &mut P, addr: u64) -> R {
    p.addr(addr)?;
    if addr == 0 {
        return Ok(());
    }
    let mut n = 0u64;
    let (mut cur, mut prev) = (addr, 0u64);
    while cur > prev {
        let mut w = [0u8; 8];
        if !p.read(cur, &mut w) {
            if n == 0 {
                return Ok(());
            }
            cur = 0;
            break;
        }
        if u64::from_le_bytes(w) == 0 {
            break;
        }
        prev = cur;
        cur = cur.wrapping_add(8);
        n += 1;
    }
    write!(
        p,
        " /* {n} var{}{} */",
        if n == 1 { "" } else { "s" },
        if cur < prev { ", unterminated" } else { "" }
    )
}

/// wait4(pid, wstatus, options, rusage).
pub(crate) fn wait4(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.exiting()?;
    if p.ret == 0 {
        p.addr(p.a[1])?;
    } else {
        let mut b = [0u8; 4];
        if p.fetch(p.a[1], &mut b)? {
            status(p, le_i32(&b))?;
        }
    }
    p.next()?;
    p.flags(xlat::WAIT4_OPTIONS, p.a[2], Some("W???"))?;
    p.next()?;
    if p.ret > 0 {
        rusage(p, p.a[3])
    } else {
        p.addr(p.a[3])
    }
}

/// strace's printstatus: `[{WIFEXITED(s) && WEXITSTATUS(s) == 0}]`.
fn status(p: &mut P, st: i32) -> R {
    let mut s = st;
    p.s("[")?;
    let sig_name = |p: &mut P, sig: i32| match crate::out::signame(sig) {
        Some(crate::out::Sig::Name(n)) => p.s(n),
        Some(crate::out::Sig::Rt(n)) => write!(p, "SIGRT_{n}"),
        None => write!(p, "{sig}"),
    };
    if s & 0xff == 0x7f {
        let sig = (s >> 8) & 0xff;
        p.s("{WIFSTOPPED(s) && WSTOPSIG(s) == ")?;
        sig_name(p, sig & 0x7f)?;
        if sig & 0x80 != 0 {
            p.s(" | 0x80")?;
        }
        p.s("}")?;
        s &= !((sig << 8) | 0x7f);
    } else if ((((s & 0x7f) + 1) as i8) >> 1) > 0 {
        let sig = s & 0x7f;
        p.s("{WIFSIGNALED(s) && WTERMSIG(s) == ")?;
        sig_name(p, sig)?;
        if s & 0x80 != 0 {
            p.s(" && WCOREDUMP(s)")?;
        }
        p.s("}")?;
        s &= !(sig | 0x80);
    } else if s & 0x7f == 0 {
        let code = (s >> 8) & 0xff;
        write!(p, "{{WIFEXITED(s) && WEXITSTATUS(s) == {code}}}")?;
        s &= !(code << 8);
    } else if s == 0xffff {
        p.s("{WIFCONTINUED(s)}")?;
        s &= !0xffff;
    } else {
        p.x(st as u32 as u64)?;
        return p.s("]");
    }
    if s != 0 {
        let event = (s as u32) >> 16;
        if event != 0 {
            p.s("|")?;
            p.xval(xlat::PTRACE_EVENTS, event as u64, Some("PTRACE_EVENT_???"))?;
            p.s("<<16")?;
            s &= 0xffff;
        }
        if s != 0 {
            p.s("|")?;
            p.x(s as u32 as u64)?;
        }
    }
    p.s("]")
}

/// struct rusage, abbreviated: `{ru_utime={tv_sec=0, tv_usec=0}, ru_stime=..., ...}`.
fn rusage(p: &mut P, addr: u64) -> R {
    super::time::time_pair(p, addr, "ru_utime", "ru_stime", "tv_usec", ", ...")
}

/// waitid(idtype, id, infop, options, rusage).
pub(crate) fn waitid(p: &mut P) -> R {
    let idtype = p.a[0] as u32;
    p.xval(xlat::WAITID_TYPES, idtype as u64, Some("P_???"))?;
    p.next()?;
    p.d(p.a[1] as i32 as i64)?;
    p.next()?;
    p.exiting()?;
    siginfo_at(p, p.a[2])?;
    p.next()?;
    p.flags(xlat::WAIT4_OPTIONS, p.a[3], Some("W???"))?;
    p.next()?;
    rusage(p, p.a[4])
}

/// uname(buf): `{sysname="Linux", nodename="...", ...}`.
pub(crate) fn uname(p: &mut P) -> R {
    p.exiting()?;
    let mut b = [0u8; 390];
    if p.fetch(p.a[0], &mut b)? {
        p.s("{sysname=")?;
        p.cstring_field(&b[0..65])?;
        p.s(", nodename=")?;
        p.cstring_field(&b[65..130])?;
        p.s(", ...}")?;
    }
    Ok(())
}

/// `{rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}`.
fn rlimit(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 16];
    if p.fetch(addr, &mut b)? {
        p.s("{rlim_cur=")?;
        rlim(p, le_u64(&b[0..]))?;
        p.s(", rlim_max=")?;
        rlim(p, le_u64(&b[8..]))?;
        p.s("}")?;
    }
    Ok(())
}

fn rlim(p: &mut P, v: u64) -> R {
    if v == u64::MAX {
        p.s("RLIM64_INFINITY")
    } else if v > 1024 && v % 1024 == 0 {
        write!(p, "{}*1024", v / 1024)
    } else {
        p.u(v)
    }
}

/// prlimit64(pid, resource, new_limit, old_limit).
pub(crate) fn prlimit64(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.xval(xlat::RESOURCES, p.a[1], Some("RLIMIT_???"))?;
    p.next()?;
    rlimit(p, p.a[2])?;
    p.next()?;
    p.exiting()?;
    rlimit(p, p.a[3])
}

/// getrlimit(resource, rlim) and setrlimit.
pub(crate) fn getrlimit(p: &mut P, set: bool) -> R {
    p.xval(xlat::RESOURCES, p.a[0], Some("RLIMIT_???"))?;
    p.next()?;
    if !set {
        p.exiting()?;
    }
    rlimit(p, p.a[1])
}

/// getrusage(who, usage).
pub(crate) fn getrusage(p: &mut P) -> R {
    p.xval(xlat::USAGEWHO, p.a[0], Some("RUSAGE_???"))?;
    p.next()?;
    p.exiting()?;
    rusage(p, p.a[1])
}

/// sysinfo(info), every field.
pub(crate) fn sysinfo(p: &mut P) -> R {
    p.exiting()?;
    let mut b = [0u8; 112];
    if p.fetch(p.a[0], &mut b)? {
        write!(
            p,
            "{{uptime={}, loads=[{}, {}, {}], totalram={}, freeram={}, sharedram={}, bufferram={}, totalswap={}, \
             freeswap={}, procs={}, totalhigh={}, freehigh={}, mem_unit={}}}",
            le_i64(&b[0..]),
            le_u64(&b[8..]),
            le_u64(&b[16..]),
            le_u64(&b[24..]),
            le_u64(&b[32..]),
            le_u64(&b[40..]),
            le_u64(&b[48..]),
            le_u64(&b[56..]),
            le_u64(&b[64..]),
            le_u64(&b[72..]),
            le_u16(&b[80..]),
            le_u64(&b[88..]),
            le_u64(&b[96..]),
            le_u32(&b[104..])
        )?;
    }
    Ok(())
}

/// times(buf).
pub(crate) fn times(p: &mut P) -> R {
    p.exiting()?;
    let mut b = [0u8; 32];
    if p.fetch(p.a[0], &mut b)? {
        p.s("{tms_utime=")?;
        p.clock_t(le_u64(&b[0..]))?;
        p.s(", tms_stime=")?;
        p.clock_t(le_u64(&b[8..]))?;
        p.s(", tms_cutime=")?;
        p.clock_t(le_u64(&b[16..]))?;
        p.s(", tms_cstime=")?;
        p.clock_t(le_u64(&b[24..]))?;
        p.s("}")?;
    }
    Ok(())
}

fn get_id(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 4];
    if p.fetch(addr, &mut b)? {
        p.s("[")?;
        p.id(le_u32(&b) as u64)?;
        p.s("]")?;
    }
    Ok(())
}

/// getresuid/getresgid(r, e, s).
pub(crate) fn getresuid(p: &mut P) -> R {
    p.exiting()?;
    get_id(p, p.a[0])?;
    p.next()?;
    get_id(p, p.a[1])?;
    p.next()?;
    get_id(p, p.a[2])
}

fn groups(p: &mut P, len: u64, addr: u64) -> R {
    if len > 65536 {
        return p.addr(addr);
    }
    p.array::<4>(addr, len, false, |p, el| p.id(le_u32(el) as u64))
}

/// getgroups(size, list).
pub(crate) fn getgroups(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.exiting()?;
    groups(p, p.ret as u32 as u64, p.a[1])
}

/// setgroups(size, list).
pub(crate) fn setgroups(p: &mut P) -> R {
    let len = p.a[0] as i32;
    p.d(len as i64)?;
    p.next()?;
    groups(p, len as u32 as u64, p.a[1])
}

/// personality(persona).
pub(crate) fn personality(p: &mut P) -> R {
    let pers = p.a[0] as u32;
    if pers == u32::MAX {
        return p.x(u32::MAX as u64);
    }
    p.xval(xlat::PERSONALITY_TYPES, (pers & 0xff) as u64, Some("PER_???"))?;
    let rest = pers & !0xff;
    if rest != 0 {
        p.s("|")?;
        p.flags(xlat::PERSONALITY_FLAGS, rest as u64, None)?;
    }
    p.exiting()
}

/// What personality adds after its result: ` (PER_LINUX)`.
pub(crate) fn personality_aux(p: &mut P) -> R {
    let pers = p.ret as u32;
    p.s(" (")?;
    p.xval(xlat::PERSONALITY_TYPES, (pers & 0xff) as u64, Some("PER_???"))?;
    let rest = pers & !0xff;
    if rest != 0 {
        p.s("|")?;
        p.flags(xlat::PERSONALITY_FLAGS, rest as u64, None)?;
    }
    p.s(")")
}

/// A CPU set: `[0 1]`.
fn affinity(p: &mut P, addr: u64, len: u64) -> R {
    if (p.is_exiting() && p.failed()) || addr == 0 {
        return p.addr(addr);
    }
    if len == 0 {
        return p.s("[]");
    }
    let size = len.min(1 << 20) as usize;
    let mut src = MemBytes::new(p.mem, addr);
    if (0..size).any(|i| src.get(i).is_none()) {
        return p.addr(addr);
    }
    p.s("[")?;
    let mut first = true;
    for i in 0..size {
        let byte = src.get(i).unwrap_or(0);
        for bit in 0..8 {
            if byte & (1 << bit) != 0 {
                if !first {
                    p.s(" ")?;
                }
                first = false;
                write!(p, "{}", i * 8 + bit)?;
            }
        }
    }
    p.s("]")
}

/// sched_getaffinity(pid, len, mask).
pub(crate) fn sched_getaffinity(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.u(p.a[1] as u32 as u64)?;
    p.next()?;
    p.exiting()?;
    affinity(p, p.a[2], p.ret as u64)
}

/// sched_setaffinity(pid, len, mask).
pub(crate) fn sched_setaffinity(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    let len = p.a[1] as u32 as u64;
    p.u(len)?;
    p.next()?;
    affinity(p, p.a[2], len)
}

/// sched_setscheduler(pid, policy, param).
pub(crate) fn sched_setscheduler(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.xval(xlat::SCHEDULERS, p.a[1], Some("SCHED_???"))?;
    p.next()?;
    p.num_int(p.a[2])
}

/// sched_getparam(pid, param).
pub(crate) fn sched_getparam(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.exiting()?;
    p.num_int(p.a[1])
}

/// getcpu(cpu, node, tcache).
pub(crate) fn getcpu(p: &mut P) -> R {
    p.exiting()?;
    uint_at(p, p.a[0])?;
    p.next()?;
    uint_at(p, p.a[1])?;
    p.next()?;
    p.addr(p.a[2])
}

fn uint_at(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 4];
    if p.fetch(addr, &mut b)? {
        write!(p, "[{}]", le_u32(&b))?;
    }
    Ok(())
}

/// get_robust_list(pid, head_ptr, len_ptr).
pub(crate) fn get_robust_list(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.exiting()?;
    p.num_ptr(p.a[1])?;
    p.next()?;
    let mut b = [0u8; 8];
    if p.fetch(p.a[2], &mut b)? {
        write!(p, "[{}]", le_u64(&b))?;
    }
    Ok(())
}

/// sethostname/setdomainname(name, len).
pub(crate) fn sethostname(p: &mut P) -> R {
    let len = p.a[1] as u32 as u64;
    if len > 64 {
        p.addr(p.a[0])?;
    } else {
        p.strn(p.a[0], len)?;
    }
    p.next()?;
    p.u(len)
}

/// getrandom(buf, buflen, flags): everything at exit, the bytes in hex.
pub(crate) fn getrandom(p: &mut P) -> R {
    p.exiting()?;
    if p.failed() {
        p.addr(p.a[0])?;
    } else {
        p.printstr_ex(p.a[0], p.ret as u64, HEX)?;
    }
    p.next()?;
    p.u(p.a[1])?;
    p.next()?;
    p.flags(xlat::GETRANDOM_FLAGS, p.a[2], Some("GRND_???"))
}

/// membarrier(cmd, flags, cpu_id).
pub(crate) fn membarrier(p: &mut P) -> R {
    let (cmd, flags) = (p.a[0] as i32, p.a[1] as u32);
    p.xval(xlat::MEMBARRIER_CMDS, cmd as u32 as u64, Some("MEMBARRIER_CMD_???"))?;
    p.next()?;
    p.flags(xlat::MEMBARRIER_FLAGS, flags as u64, Some("MEMBARRIER_CMD_FLAG_???"))?;
    if flags & 1 != 0 {
        p.next()?;
        p.d(p.a[2] as i32 as i64)?;
    }
    Ok(())
}

// ---- prctl ------------------------------------------------------------------

/// Prints arguments `from..5` in hex (strace's print_prctl_args).
fn prctl_args(p: &mut P, from: usize) -> R {
    for i in from..5 {
        p.next()?;
        p.x(p.a[i])?;
    }
    Ok(())
}

/// prctl(option, arg2, arg3, arg4, arg5).
pub(crate) fn prctl(p: &mut P) -> R {
    let option = p.a[0] as u32;
    let (arg2, arg3, arg4, arg5) = (p.a[1], p.a[2], p.a[3], p.a[4]);
    p.xval(xlat::PRCTL_OPTIONS, option as u64, Some("PR_???"))?;
    match option {
        // PR_GET_KEEPCAPS, PR_GET_SECCOMP, PR_GET_TIMERSLACK, PR_GET_TIMING
        7 | 21 | 30 | 13 => Ok(()),
        // PR_GET_CHILD_SUBREAPER, PR_GET_ENDIAN, PR_GET_FPEMU, PR_GET_FPEXC
        37 | 19 | 9 | 11 => {
            p.next()?;
            p.exiting()?;
            uint_at(p, arg2)
        }
        // PR_GET_DUMPABLE, PR_GET_SECUREBITS, PR_GET_FP_MODE
        3 | 27 | 46 => Ok(()),
        16 => {
            // PR_GET_NAME
            p.next()?;
            p.exiting()?;
            if p.failed() {
                p.addr(arg2)
            } else {
                p.printstr_ex(arg2, 16, crate::out::CSTR)
            }
        }
        2 => {
            // PR_GET_PDEATHSIG
            p.next()?;
            p.exiting()?;
            let mut b = [0u8; 4];
            if p.fetch(arg2, &mut b)? {
                p.s("[")?;
                p.signal(le_i32(&b))?;
                p.s("]")?;
            }
            Ok(())
        }
        40 => {
            // PR_GET_TID_ADDRESS
            p.next()?;
            p.exiting()?;
            p.num_ptr(arg2)
        }
        25 => {
            // PR_GET_TSC
            p.next()?;
            p.exiting()?;
            let mut b = [0u8; 4];
            if p.fetch(arg2, &mut b)? {
                p.s("[")?;
                p.xval(xlat::PR_TSC, le_u32(&b) as u64, Some("PR_TSC_???"))?;
                p.s("]")?;
            }
            Ok(())
        }
        5 => {
            // PR_GET_UNALIGN
            p.next()?;
            p.exiting()?;
            let mut b = [0u8; 4];
            if p.fetch(arg2, &mut b)? {
                p.s("[")?;
                p.flags(xlat::PR_UNALIGN_FLAGS, le_u32(&b) as u64, Some("PR_UNALIGN_???"))?;
                p.s("]")?;
            }
            Ok(())
        }
        52 => {
            // PR_GET_SPECULATION_CTRL
            p.next()?;
            p.xval64(xlat::PR_SPEC_CMDS, arg2, Some("PR_SPEC_???"))
        }
        31 | 32 => Ok(()),
        // PR_SET_CHILD_SUBREAPER, PR_SET_ENDIAN, PR_SET_FPEMU, PR_SET_FPEXC,
        // PR_SET_KEEPCAPS, PR_SET_TIMING
        36 | 20 | 10 | 12 | 8 | 14 => {
            p.next()?;
            p.u(arg2)
        }
        4 => {
            // PR_SET_DUMPABLE
            p.next()?;
            p.xval64(xlat::PR_DUMPABLE, arg2, Some("SUID_DUMP_???"))
        }
        23 | 24 => {
            // PR_CAPBSET_READ, PR_CAPBSET_DROP
            p.next()?;
            p.xval64(xlat::CAP, arg2, Some("CAP_???"))
        }
        47 => {
            // PR_CAP_AMBIENT
            p.next()?;
            p.xval64(xlat::PR_CAP_AMBIENT, arg2, Some("PR_CAP_AMBIENT_???"))?;
            if (2..=4).contains(&arg2) {
                p.next()?;
                p.xval64(xlat::CAP, arg3, Some("CAP_???"))?;
                prctl_args(p, 3)
            } else {
                prctl_args(p, 2)
            }
        }
        33 => {
            // PR_MCE_KILL
            p.next()?;
            p.xval64(xlat::PR_MCE_KILL, arg2, Some("PR_MCE_KILL_???"))?;
            p.next()?;
            if arg2 == 1 {
                p.xval64(xlat::PR_MCE_KILL_POLICY, arg3, Some("PR_MCE_KILL_???"))?;
            } else {
                p.x(arg3)?;
            }
            prctl_args(p, 3)
        }
        15 => {
            // PR_SET_NAME
            p.next()?;
            p.printstr_ex(arg2, 15, crate::out::CSTR)
        }
        0x5356_4d41 => {
            // PR_SET_VMA
            p.next()?;
            p.xval64(xlat::PR_SET_VMA, arg2, Some("PR_SET_VMA_???"))?;
            if arg2 == 0 {
                p.next()?;
                p.addr(arg3)?;
                p.next()?;
                p.u(arg4)?;
                p.next()?;
                p.cstr(arg5)
            } else {
                prctl_args(p, 2)
            }
        }
        35 => {
            // PR_SET_MM
            p.next()?;
            p.xval(xlat::PR_SET_MM, arg2, Some("PR_SET_MM_???"))?;
            prctl_args(p, 2)
        }
        1 => {
            // PR_SET_PDEATHSIG
            p.next()?;
            if arg2 > 128 {
                p.u(arg2)
            } else {
                p.signal(arg2 as i32)
            }
        }
        0x5961_6d61 => {
            // PR_SET_PTRACER
            p.next()?;
            if arg2 as i32 == -1 {
                p.s("PR_SET_PTRACER_ANY")
            } else {
                p.d(arg2 as i32 as i64)
            }
        }
        22 => {
            // PR_SET_SECCOMP
            p.next()?;
            p.xval64(xlat::SECCOMP_MODE, arg2, Some("SECCOMP_MODE_???"))?;
            match arg2 {
                1 => Ok(()),
                2 => {
                    p.next()?;
                    seccomp_fprog(p, arg3)
                }
                _ => prctl_args(p, 2),
            }
        }
        28 => {
            // PR_SET_SECUREBITS
            p.next()?;
            p.flags64(xlat::SECBITS, arg2, Some("SECBIT_???"))
        }
        29 => {
            // PR_SET_TIMERSLACK
            p.next()?;
            p.d(arg2 as i64)
        }
        26 => {
            // PR_SET_TSC
            p.next()?;
            p.xval(xlat::PR_TSC, arg2, Some("PR_TSC_???"))
        }
        6 => {
            // PR_SET_UNALIGN
            p.next()?;
            p.flags(xlat::PR_UNALIGN_FLAGS, arg2, Some("PR_UNALIGN_???"))
        }
        // PR_SET_NO_NEW_PRIVS, PR_SET_THP_DISABLE, PR_SET_IO_FLUSHER
        38 | 41 | 57 => {
            p.next()?;
            p.u(arg2)?;
            prctl_args(p, 2)
        }
        34 => prctl_args(p, 1),
        45 => {
            // PR_SET_FP_MODE
            p.next()?;
            p.flags(xlat::PR_FP_MODE, arg2, Some("PR_FP_MODE_???"))
        }
        53 => {
            // PR_SET_SPECULATION_CTRL
            p.next()?;
            p.xval64(xlat::PR_SPEC_CMDS, arg2, Some("PR_SPEC_???"))?;
            p.next()?;
            if arg2 <= 2 {
                p.xval64(xlat::PR_SPEC_SET_STORE_BYPASS_FLAGS, arg3, Some("PR_SPEC_???"))
            } else {
                p.x(arg3)
            }
        }
        59 => {
            // PR_SET_SYSCALL_USER_DISPATCH
            p.next()?;
            p.xval64(xlat::PR_SUD_CMDS, arg2, Some("PR_SYS_DISPATCH_???"))?;
            p.next()?;
            p.x(arg3)?;
            p.next()?;
            p.x(arg4)?;
            p.next()?;
            p.addr(arg5)
        }
        _ => prctl_args(p, 1),
    }
}

/// A classic BPF program for seccomp: `{len=N, filter=0x...}`.
pub(crate) fn seccomp_fprog(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 16];
    if p.fetch(addr, &mut b)? {
        write!(p, "{{len={}, filter=", le_u16(&b[0..]))?;
        p.addr(le_u64(&b[8..]))?;
        p.s("}")?;
    }
    Ok(())
}

/// The form of prctl's result.
pub(crate) fn prctl_rval_hex(option: u32, ret: i64) -> Rval {
    match option {
        27 | 46 if ret != 0 => Rval::Hex,
        _ => Rval::Dec,
    }
}

/// What prctl adds after its result: ` (SUID_DUMP_USER)`.
pub(crate) fn prctl_aux(p: &mut P) -> R {
    let r = p.ret as u64;
    let table = match p.a[0] as u32 {
        3 => xlat::PR_DUMPABLE,
        34 => xlat::PR_MCE_KILL_POLICY,
        27 if r != 0 => {
            return aux_flags(p, xlat::SECBITS, r);
        }
        46 if r != 0 => {
            return aux_flags(p, xlat::PR_FP_MODE, r);
        }
        _ => return Ok(()),
    };
    match lookup(table, r) {
        Some(s) => write!(p, " ({s})"),
        None => Ok(()),
    }
}

/// ` (A|B)` for the known bits of `v` (nothing when none is known).
fn aux_flags(p: &mut P, x: xlat::Xlat, v: u64) -> R {
    if x.iter().any(|(val, _)| val != 0 && v & val == val) {
        p.s(" (")?;
        p.flags64(x, v, None)?;
        p.s(")")?;
    }
    Ok(())
}

/// arch_prctl(option, addr).
pub(crate) fn arch_prctl(p: &mut P) -> R {
    let option = p.a[0] as u32;
    let addr = p.a[1];
    p.xval(xlat::ARCHVALS, option as u64, Some("ARCH_???"))?;
    match option {
        0x1003 | 0x1004 => {
            // ARCH_GET_FS, ARCH_GET_GS
            p.next()?;
            p.exiting()?;
            p.num_ptr(addr)
        }
        0x1011 => Ok(()),
        0x1021 | 0x1022 | 0x1024 => {
            p.next()?;
            p.exiting()?;
            let mut b = [0u8; 8];
            if p.fetch(addr, &mut b)? {
                let v = le_u64(&b);
                p.s("[")?;
                verbose_flags(p, xlat::X86_XFEATURES, v, "XFEATURE_MASK_???")?;
                p.s("]")?;
            }
            Ok(())
        }
        0x1023 | 0x1025 => {
            p.next()?;
            p.x(addr)?;
            match lookup(xlat::X86_XFEATURE_BITS, addr) {
                Some(s) => write!(p, " /* {s} */"),
                None => p.s(" /* XFEATURE_??? */"),
            }
        }
        _ => {
            p.next()?;
            p.x(addr)
        }
    }
}

/// printflags in XLAT_STYLE_VERBOSE: `0x3 /* XFEATURE_MASK_FPSSE */`.
fn verbose_flags(p: &mut P, x: xlat::Xlat, v: u64, dflt: &str) -> R {
    if v == 0 {
        return p.s("0");
    }
    p.x(v)?;
    let known = x.iter().any(|(val, _)| val != 0 && v & val == val);
    p.s(" /* ")?;
    if known {
        p.flags64(x, v, None)?;
    } else {
        p.s(dflt)?;
    }
    p.s(" */")
}

/// What arch_prctl(ARCH_REQ_XCOMP_PERM) adds after its result.
pub(crate) fn arch_prctl_aux(p: &mut P) -> R {
    if matches!(p.a[0] as u32, 0x1023 | 0x1025) && p.ret > 0 {
        return aux_flags(p, xlat::X86_XFEATURES, p.ret as u64);
    }
    Ok(())
}
