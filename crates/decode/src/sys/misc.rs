//! Less common calls: sendmmsg/recvmmsg, capabilities, System V IPC,
//! syslog, I/O priorities, seccomp, process_vm_*, kcmp, reboot, the mount
//! API, and a few small ones (strace's mmsghdr.c, capability.c, ipc_*.c,
//! syslog.c, ioprio.c, seccomp.c, process_vm.c, kcmp.c, reboot.c,
//! fanotify.c, fs*.c, open_tree.c, move_mount.c).

use core::fmt::Write as _;

use crate::out::{le_u32, P, R};
use crate::xlat;

/// sendmmsg(fd, msgvec, vlen, flags): the messages at exit, with msg_len
/// for those that were sent.
pub(crate) fn sendmmsg(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.exiting()?;
    let sent = if p.failed() { 0 } else { p.ret as u64 };
    mmsgvec(p, p.a[1], p.a[2] as u32 as u64, sent, false)?;
    p.next()?;
    p.u(p.a[2] as u32 as u64)?;
    p.next()?;
    p.flags(xlat::MSG_FLAGS, p.a[3], Some("MSG_???"))
}

/// recvmmsg(fd, msgvec, vlen, flags, timeout).
pub(crate) fn recvmmsg(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.exiting()?;
    if p.failed() {
        p.addr(p.a[1])?;
    } else {
        let n = p.ret as u64;
        mmsgvec(p, p.a[1], n, n, true)?;
    }
    p.next()?;
    p.u(p.a[2] as u32 as u64)?;
    p.next()?;
    p.flags(xlat::MSG_FLAGS, p.a[3], Some("MSG_???"))?;
    p.next()?;
    // The timeout as it was when the call started, if the caller saved it.
    match (p.entry.word(0), p.entry.word(1)) {
        (Some(sec), Some(nsec)) if p.a[4] != 0 => write!(p, "{{tv_sec={}, tv_nsec={nsec}}}", sec as i64),
        _ => p.timespec_any(p.a[4]),
    }
}

/// What recvmmsg adds after its result: ` (Timeout)`, ` (left {...})`.
pub(crate) fn recvmmsg_aux(p: &mut P) -> R {
    if p.ret == 0 {
        return p.s(" (Timeout)");
    }
    if p.a[4] == 0 {
        return Ok(());
    }
    p.s(" (left ")?;
    p.timespec_any(p.a[4])?;
    p.s(")")
}

/// An array of struct mmsghdr.
fn mmsgvec(p: &mut P, addr: u64, vlen: u64, mut with_len: u64, use_len: bool) -> R {
    let mut count = 1024u32;
    p.array::<64>(addr, vlen, true, |p, el| {
        if count == 0 {
            return p.s("...");
        }
        count -= 1;
        let msg_len = le_u32(&el[56..]) as u64;
        p.s("{msg_hdr=")?;
        super::net::msghdr_bytes(
            p,
            el[..56].try_into().unwrap(),
            None,
            if use_len { msg_len } else { u64::MAX },
        )?;
        if with_len > 0 {
            write!(p, ", msg_len={msg_len}")?;
            with_len -= 1;
        }
        p.s("}")
    })
}

fn cap_bits(p: &mut P, lo: u32, hi: u32) -> R {
    if lo != 0 || hi == 0 {
        p.flags(xlat::CAP_MASK0, lo as u64, Some("CAP_???"))?;
    }
    if hi != 0 {
        if lo != 0 {
            p.s("|")?;
        }
        p.flags(xlat::CAP_MASK1, hi as u64, Some("CAP_???"))?;
    }
    Ok(())
}

/// The capability header, if readable: (version, pid).
fn cap_header(p: &P, addr: u64) -> Option<(u32, i32)> {
    let mut b = [0u8; 8];
    (addr != 0 && p.read(addr, &mut b)).then(|| (le_u32(&b[0..]), le_u32(&b[4..]) as i32))
}

fn print_cap_header(p: &mut P, addr: u64, h: Option<(u32, i32)>) -> R {
    match h {
        Some((version, pid)) => {
            p.s("{version=")?;
            p.xval64(xlat::CAP_VERSION, version as u64, Some("_LINUX_CAPABILITY_VERSION_???"))?;
            write!(p, ", pid={pid}}}")
        }
        None => p.addr(addr),
    }
}

fn print_cap_data(p: &mut P, addr: u64, h: Option<(u32, i32)>) -> R {
    let Some((version, _)) = h.filter(|_| addr != 0) else {
        return p.addr(addr);
    };
    let len = if version == 0x2007_1026 || version == 0x2008_0522 {
        2
    } else {
        1
    };
    let mut b = [0u8; 24];
    if !p.fetch(addr, &mut b[..12 * len])? {
        return Ok(());
    }
    let word = |i: usize, f: usize| if i < len { le_u32(&b[12 * i + 4 * f..]) } else { 0 };
    p.s("{effective=")?;
    cap_bits(p, word(0, 0), word(1, 0))?;
    p.s(", permitted=")?;
    cap_bits(p, word(0, 1), word(1, 1))?;
    p.s(", inheritable=")?;
    cap_bits(p, word(0, 2), word(1, 2))?;
    p.s("}")
}

/// capget(hdrp, datap).
pub(crate) fn capget(p: &mut P) -> R {
    let h = cap_header(p, p.a[0]);
    print_cap_header(p, p.a[0], h)?;
    p.next()?;
    p.exiting()?;
    let h = if p.failed() { None } else { cap_header(p, p.a[0]) };
    print_cap_data(p, p.a[1], h)
}

/// capset(hdrp, datap).
pub(crate) fn capset(p: &mut P) -> R {
    let h = cap_header(p, p.a[0]);
    print_cap_header(p, p.a[0], h)?;
    p.next()?;
    print_cap_data(p, p.a[1], h)
}

/// shmget(key, size, shmflg).
pub(crate) fn shmget(p: &mut P) -> R {
    p.xval(xlat::IPC_PRIVATE, p.a[0] as u32 as u64, None)?;
    p.next()?;
    p.u(p.a[1])?;
    p.next()?;
    let mut flags = p.a[2] as u32 & !0o777;
    let mask = 0x3f << 26;
    let huge = flags & mask;
    flags &= !mask;
    if flags != 0 || huge == 0 {
        p.flags(xlat::SHM_RESOURCE_FLAGS, flags as u64, None)?;
    }
    if huge != 0 {
        if flags != 0 {
            p.s("|")?;
        }
        write!(p, "{}<<SHM_HUGE_SHIFT", huge >> 26)?;
    }
    if flags != 0 || huge != 0 {
        p.s("|")?;
    }
    p.umode(p.a[2] & 0o777)
}

/// shmat(shmid, shmaddr, shmflg).
pub(crate) fn shmat(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.addr(p.a[1])?;
    p.next()?;
    p.flags(xlat::SHM_FLAGS, p.a[2], Some("SHM_???"))
}

/// semget(key, nsems, semflg) and msgget(key, msgflg).
pub(crate) fn ipc_get(p: &mut P, sem: bool) -> R {
    p.xval(xlat::IPC_PRIVATE, p.a[0] as u32 as u64, None)?;
    p.next()?;
    let mut i = 1;
    if sem {
        p.d(p.a[1] as i32 as i64)?;
        p.next()?;
        i = 2;
    }
    if p.flags_n(&[xlat::RESOURCE_FLAGS], (p.a[i] & !0o777) as u32 as u64, None)? != 0 {
        p.s("|")?;
    }
    p.umode(p.a[i] & 0o777)
}

/// syslog(type, buf, len).
pub(crate) fn syslog(p: &mut P) -> R {
    let typ = p.a[0] as i32;
    let len = p.a[2] as i32;
    // XLAT_STYLE_VERBOSE | XLAT_STYLE_FMT_D: `2 /* SYSLOG_ACTION_READ */`.
    p.d(typ as i64)?;
    match crate::out::lookup(xlat::SYSLOG_ACTION_TYPE, typ as u32 as u64) {
        Some(s) => write!(p, " /* {s} */")?,
        None => p.s(" /* SYSLOG_ACTION_??? */")?,
    }
    match typ {
        0 | 1 | 5 | 6 | 7 | 9 | 10 => Ok(()),
        2..=4 => {
            p.next()?;
            p.exiting()?;
            if p.failed() {
                p.addr(p.a[1])?;
            } else {
                p.strn(p.a[1], p.ret as u64)?;
            }
            p.next()?;
            p.d(len as i64)
        }
        8 => {
            p.next()?;
            p.addr(p.a[1])?;
            p.next()?;
            p.d(len as i64)?;
            match crate::out::lookup(xlat::SYSLOG_CONSOLE_LEVELS, len as u32 as u64) {
                Some(s) => write!(p, " /* {s} */"),
                None => p.s(" /* LOGLEVEL_??? */"),
            }
        }
        _ => {
            p.next()?;
            p.addr(p.a[1])?;
            p.next()?;
            p.d(len as i64)
        }
    }
}

/// `IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 4)`.
fn ioprio(p: &mut P, v: u32) -> R {
    p.s("IOPRIO_PRIO_VALUE(")?;
    p.xval(xlat::IOPRIO_CLASS, (v >> 13) as u64, Some("IOPRIO_CLASS_???"))?;
    write!(p, ", {})", v & 0x1fff)
}

/// ioprio_get(which, who) and ioprio_set(which, who, ioprio).
pub(crate) fn ioprio_getset(p: &mut P, set: bool) -> R {
    p.xval(xlat::IOPRIO_WHO, p.a[0], Some("IOPRIO_WHO_???"))?;
    p.next()?;
    p.d(p.a[1] as i32 as i64)?;
    if set {
        p.next()?;
        ioprio(p, p.a[2] as u32)?;
    }
    Ok(())
}

/// What ioprio_get adds after its result.
pub(crate) fn ioprio_aux(p: &mut P) -> R {
    p.s(" (")?;
    ioprio(p, p.ret as u32)?;
    p.s(")")
}

/// seccomp(op, flags, args).
pub(crate) fn seccomp(p: &mut P) -> R {
    let (op, flags) = (p.a[0] as u32, p.a[1] as u32);
    p.xval(xlat::SECCOMP_OPS, op as u64, Some("SECCOMP_SET_MODE_???"))?;
    p.next()?;
    match op {
        1 => {
            // SECCOMP_SET_MODE_FILTER
            p.flags(
                xlat::SECCOMP_FILTER_FLAGS,
                flags as u64,
                Some("SECCOMP_FILTER_FLAG_???"),
            )?;
            p.next()?;
            super::process::seccomp_fprog(p, p.a[2])
        }
        2 => {
            // SECCOMP_GET_ACTION_AVAIL
            p.x(flags as u64)?;
            p.next()?;
            let mut b = [0u8; 4];
            if p.fetch(p.a[2], &mut b)? {
                p.s("[")?;
                p.xval(xlat::SECCOMP_RET_ACTION, le_u32(&b) as u64, Some("SECCOMP_RET_???"))?;
                p.s("]")?;
            }
            Ok(())
        }
        3 => {
            // SECCOMP_GET_NOTIF_SIZES
            p.x(flags as u64)?;
            p.next()?;
            p.exiting()?;
            let mut b = [0u8; 6];
            if p.fetch(p.a[2], &mut b)? {
                write!(
                    p,
                    "{{seccomp_notif={}, seccomp_notif_resp={}, seccomp_data={}}}",
                    u16::from_le_bytes([b[0], b[1]]),
                    u16::from_le_bytes([b[2], b[3]]),
                    u16::from_le_bytes([b[4], b[5]])
                )?;
            }
            Ok(())
        }
        _ => {
            p.x(flags as u64)?;
            p.next()?;
            p.addr(p.a[2])
        }
    }
}

/// process_vm_readv/writev(pid, local_iov, liovcnt, remote_iov, riovcnt, flags).
pub(crate) fn process_vm(p: &mut P, read: bool) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    if read {
        p.exiting()?;
    }
    let failed = p.failed();
    let data = if read { p.ret as u64 } else { u64::MAX };
    super::io::iov_array(p, p.a[1], p.a[2], data, read && failed)?;
    p.next()?;
    p.u(p.a[2])?;
    p.next()?;
    super::io::iov_array(p, p.a[3], p.a[4], u64::MAX, true)?;
    p.next()?;
    p.u(p.a[4])?;
    p.next()?;
    p.u(p.a[5])
}

/// kcmp(pid1, pid2, type, idx1, idx2).
pub(crate) fn kcmp(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.d(p.a[1] as i32 as i64)?;
    p.next()?;
    let typ = p.a[2] as i32;
    p.xval(xlat::KCMP_TYPES, typ as u32 as u64, Some("KCMP_???"))?;
    match typ {
        0 => {
            // KCMP_FILE
            p.next()?;
            p.fd(p.a[3])?;
            p.next()?;
            p.fd(p.a[4])
        }
        7 => {
            // KCMP_EPOLL_TFD
            p.next()?;
            p.fd(p.a[3])?;
            p.next()?;
            let mut b = [0u8; 12];
            if p.fetch(p.a[4], &mut b)? {
                write!(
                    p,
                    "{{efd={}, tfd={}, toff={}}}",
                    le_u32(&b[0..]) as i32,
                    le_u32(&b[4..]) as i32,
                    le_u32(&b[8..])
                )?;
            }
            Ok(())
        }
        1..=6 => Ok(()),
        _ => {
            p.next()?;
            p.x(p.a[3])?;
            p.next()?;
            p.x(p.a[4])
        }
    }
}

/// reboot(magic1, magic2, cmd, arg).
pub(crate) fn reboot(p: &mut P) -> R {
    p.xval(xlat::BOOTFLAGS1, p.a[0], Some("LINUX_REBOOT_MAGIC_???"))?;
    p.next()?;
    p.xval(xlat::BOOTFLAGS2, p.a[1], Some("LINUX_REBOOT_MAGIC_???"))?;
    p.next()?;
    p.xval(xlat::BOOTFLAGS3, p.a[2], Some("LINUX_REBOOT_CMD_???"))?;
    if p.a[2] as u32 == 0xa1b2_c3d4 {
        p.next()?;
        p.printstr_ex(p.a[3], 255, crate::out::CSTR)?;
    }
    Ok(())
}

/// fanotify_init(flags, event_f_flags).
pub(crate) fn fanotify_init(p: &mut P) -> R {
    let flags = p.a[0] as u32;
    p.xval(xlat::FAN_CLASSES, (flags & 0xc) as u64, Some("FAN_CLASS_???"))?;
    let rest = flags & !0xc;
    if rest != 0 {
        p.s("|")?;
        p.flags(xlat::FAN_INIT_FLAGS, rest as u64, Some("FAN_???"))?;
    }
    p.next()?;
    super::io::open_modes(p, p.a[1] as u32 as u64)
}

/// pidfd_send_signal(pidfd, sig, info, flags).
pub(crate) fn pidfd_send_signal(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.signal(p.a[1] as i32)?;
    p.next()?;
    super::signal::siginfo_at(p, p.a[2])?;
    p.next()?;
    p.x(p.a[3] as u32 as u64)
}

/// process_madvise(pidfd, iovec, vlen, advice, flags).
pub(crate) fn process_madvise(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    super::io::iov_array(p, p.a[1], p.a[2], u64::MAX, true)?;
    p.next()?;
    p.u(p.a[2])?;
    p.next()?;
    p.xval(xlat::MADVISE_CMDS, p.a[3], Some("MADV_???"))?;
    p.next()?;
    p.x(p.a[4] as u32 as u64)
}

/// sched_rr_get_interval(pid, tp).
pub(crate) fn sched_rr_get_interval(p: &mut P) -> R {
    p.d(p.a[0] as i32 as i64)?;
    p.next()?;
    p.exiting()?;
    if p.failed() {
        p.addr(p.a[1])
    } else {
        p.timespec(p.a[1])
    }
}

/// mq_timedsend(mqdes, msg, len, prio, abs_timeout).
pub(crate) fn mq_timedsend(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.strn(p.a[1], p.a[2])?;
    let (len, prio) = (p.a[2], p.a[3] as u32);
    write!(p, ", {len}, {prio}, ")?;
    p.timespec(p.a[4])
}

/// mq_timedreceive(mqdes, msg, len, prio, abs_timeout).
pub(crate) fn mq_timedreceive(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.exiting()?;
    if p.failed() {
        p.addr(p.a[1])?;
    } else {
        p.strn(p.a[1], p.ret as u64)?;
    }
    let len = p.a[2];
    write!(p, ", {len}, ")?;
    let mut b = [0u8; 4];
    if p.fetch(p.a[3], &mut b)? {
        write!(p, "[{}]", le_u32(&b))?;
    }
    p.next()?;
    p.timespec_any(p.a[4])
}

/// io_setup(nr_events, ctxp).
pub(crate) fn io_setup(p: &mut P) -> R {
    p.u(p.a[0] as u32 as u64)?;
    p.next()?;
    p.exiting()?;
    p.num_ptr(p.a[1])
}
