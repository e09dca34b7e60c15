//! Descriptors and I/O: read/write and friends, ioctl, fcntl, pipes,
//! poll/select, directory reading, epoll (strace's io.c, ioctl.c, term.c,
//! fcntl.c, net.c pipe, poll.c, desc.c, xgetdents.c, epoll.c).

use core::fmt::Write as _;

use crate::ioctls::{self, IOCTLS};
use crate::out::{le_i32, le_i64, le_u16, le_u32, le_u64, lookup, MemBytes, P, R};
use crate::xlat;

/// read(fd, buf, count): the buffer at exit, as many bytes as were read.
pub(crate) fn read(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.exiting()?;
    if p.failed() {
        p.addr(p.a[1])?;
    } else {
        p.strn(p.a[1], p.ret as u64)?;
    }
    p.next()?;
    p.u(p.a[2])
}

/// write(fd, buf, count).
pub(crate) fn write(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.strn(p.a[1], p.a[2])?;
    p.next()?;
    p.u(p.a[2])
}

/// pread64(fd, buf, count, offset).
pub(crate) fn pread(p: &mut P) -> R {
    read(p)?;
    p.next()?;
    p.d(p.a[3] as i64)
}

/// pwrite64(fd, buf, count, offset).
pub(crate) fn pwrite(p: &mut P) -> R {
    write(p)?;
    p.next()?;
    p.d(p.a[3] as i64)
}

/// An iovec array: `[{iov_base="...", iov_len=N}, ...]`, at most
/// `data` bytes in all (u64::MAX: no limit), addresses only if `addrs`.
pub(crate) fn iov_array(p: &mut P, addr: u64, n: u64, mut data: u64, addrs: bool) -> R {
    p.array::<16>(addr, n, true, |p, el| {
        let (base, len) = (le_u64(&el[0..]), le_u64(&el[8..]));
        let shown = len.min(data);
        if data != u64::MAX {
            data -= shown;
        }
        p.s("{iov_base=")?;
        if addrs {
            p.addr(base)?;
        } else {
            p.strn(base, shown)?;
        }
        write!(p, ", iov_len={len}}}")
    })
}

/// readv(fd, iov, iovcnt), and preadv/preadv2 (`pos`: Some(flags argument)).
pub(crate) fn readv(p: &mut P, pos: Option<Option<usize>>) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.exiting()?;
    let failed = p.failed();
    iov_array(p, p.a[1], p.a[2], p.ret as u64, failed)?;
    p.next()?;
    p.u(p.a[2])?;
    iov_tail(p, pos)
}

/// writev(fd, iov, iovcnt), and pwritev/pwritev2.
pub(crate) fn writev(p: &mut P, pos: Option<Option<usize>>) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    iov_array(p, p.a[1], p.a[2], u64::MAX, false)?;
    p.next()?;
    p.u(p.a[2])?;
    iov_tail(p, pos)
}

fn iov_tail(p: &mut P, pos: Option<Option<usize>>) -> R {
    if let Some(flags) = pos {
        p.next()?;
        p.d(p.a[3] as i64)?;
        if let Some(i) = flags {
            p.next()?;
            p.flags(xlat::RWF_FLAGS, p.a[i], Some("RWF_???"))?;
        }
    }
    Ok(())
}

// ---- ioctl ----------------------------------------------------------------

/// ioctl(fd, request, arg): the request by name (all names sharing the
/// code, joined by " or "), `_IOC(...)` when unknown; terminal requests
/// decoded as strace's term.c does, other arguments in hex.
pub(crate) fn ioctl(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    let code = p.a[1] as u32;
    let start = IOCTLS.partition_point(|&(c, _)| c < code);
    let mut any = false;
    for &e in IOCTLS[start..].iter().take_while(|&&(c, _)| c == code) {
        if any {
            p.s(" or ")?;
        }
        p.s(ioctls::name(e))?;
        any = true;
    }
    if !any {
        p.s("_IOC(")?;
        p.flags64(xlat::IOCTL_DIRS, (code >> 30) as u64, Some("_IOC_???"))?;
        write!(p, ", ")?;
        p.x(((code >> 8) & 0xff) as u64)?;
        p.s(", ")?;
        p.x((code & 0xff) as u64)?;
        p.s(", ")?;
        p.x(((code >> 16) & 0x3fff) as u64)?;
        p.s(")")?;
    }
    if (code >> 8) & 0xff == b'T' as u32 && term_ioctl(p, code)? {
        return Ok(());
    }
    p.next()?;
    p.x(p.a[2])
}

const TCGETS: u32 = 0x5401;
const TCSETS: u32 = 0x5402;
const TCSETSW: u32 = 0x5403;
const TCSETSF: u32 = 0x5404;
const TCSBRK: u32 = 0x5409;
const TCXONC: u32 = 0x540a;
const TCFLSH: u32 = 0x540b;
const TIOCSCTTY: u32 = 0x540e;
const TIOCGPGRP: u32 = 0x540f;
const TIOCSPGRP: u32 = 0x5410;
const TIOCOUTQ: u32 = 0x5411;
const TIOCSTI: u32 = 0x5412;
const TIOCGWINSZ: u32 = 0x5413;
const TIOCSWINSZ: u32 = 0x5414;
const TIOCMGET: u32 = 0x5415;
const TIOCMBIS: u32 = 0x5416;
const TIOCMBIC: u32 = 0x5417;
const TIOCMSET: u32 = 0x5418;
const TIOCGSOFTCAR: u32 = 0x5419;
const TIOCSSOFTCAR: u32 = 0x541a;
const FIONREAD: u32 = 0x541b;
const TIOCCONS: u32 = 0x541d;
const TIOCPKT: u32 = 0x5420;
const FIONBIO: u32 = 0x5421;
const TIOCNOTTY: u32 = 0x5422;
const TIOCSETD: u32 = 0x5423;
const TIOCGETD: u32 = 0x5424;
const TCSBRKP: u32 = 0x5425;
const TIOCSBRK: u32 = 0x5427;
const TIOCCBRK: u32 = 0x5428;
const TIOCGSID: u32 = 0x5429;
const TIOCGPTN: u32 = 0x8004_5430;
const TIOCSPTLCK: u32 = 0x4004_5431;
const TIOCGDEV: u32 = 0x8004_5432;
const TIOCVHANGUP: u32 = 0x5437;
const TIOCGEXCL: u32 = 0x8004_5440;
const TIOCEXCL: u32 = 0x540c;
const TIOCNXCL: u32 = 0x540d;
const FIONCLEX: u32 = 0x5450;
const FIOCLEX: u32 = 0x5451;
const FIOASYNC: u32 = 0x5452;
const TIOCSSERIAL: u32 = 0x541f;
const TIOCGLCKTRMIOS: u32 = 0x5456;
const TIOCSLCKTRMIOS: u32 = 0x5457;

/// strace's term_ioctl: Ok(true) when it printed the argument (or there is
/// none), Ok(false) when the argument prints in hex.
fn term_ioctl(p: &mut P, code: u32) -> Result<bool, core::fmt::Error> {
    let arg = p.a[2];
    match code {
        TCGETS | TIOCGLCKTRMIOS | TCSETS | TCSETSW | TCSETSF | TIOCSLCKTRMIOS => {
            if matches!(code, TCGETS | TIOCGLCKTRMIOS) {
                p.exiting()?;
            }
            p.next()?;
            termios(p, arg)?;
        }
        TIOCGWINSZ | TIOCSWINSZ => {
            if code == TIOCGWINSZ {
                p.exiting()?;
            }
            p.next()?;
            let mut b = [0u8; 8];
            if p.fetch(arg, &mut b)? {
                write!(
                    p,
                    "{{ws_row={}, ws_col={}, ws_xpixel={}, ws_ypixel={}}}",
                    le_u16(&b[0..]),
                    le_u16(&b[2..]),
                    le_u16(&b[4..]),
                    le_u16(&b[6..])
                )?;
            }
        }
        TCXONC => {
            p.next()?;
            p.xval64(xlat::TCXONC_OPTIONS, arg, Some("TC???"))?;
        }
        TCFLSH => {
            p.next()?;
            p.xval64(xlat::TCFLSH_OPTIONS, arg, Some("TC???"))?;
        }
        TCSBRK | TCSBRKP | TIOCSCTTY => {
            p.next()?;
            p.d(arg as i32 as i64)?;
        }
        TIOCMGET | TIOCMBIS | TIOCMBIC | TIOCMSET => {
            if code == TIOCMGET {
                p.exiting()?;
            }
            p.next()?;
            let mut b = [0u8; 4];
            if p.fetch(arg, &mut b)? {
                p.s("[")?;
                p.flags(xlat::MODEM_FLAGS, le_u32(&b) as u64, Some("TIOCM_???"))?;
                p.s("]")?;
            }
        }
        TIOCGPGRP | TIOCGSID | TIOCGETD | TIOCGSOFTCAR | TIOCGPTN | FIONREAD | TIOCOUTQ | TIOCGEXCL | TIOCGDEV
        | TIOCSPGRP | TIOCSETD | FIONBIO | FIOASYNC | TIOCPKT | TIOCSSOFTCAR | TIOCSPTLCK => {
            if matches!(
                code,
                TIOCGPGRP | TIOCGSID | TIOCGETD | TIOCGSOFTCAR | TIOCGPTN | FIONREAD | TIOCOUTQ | TIOCGEXCL | TIOCGDEV
            ) {
                p.exiting()?;
            }
            p.next()?;
            p.num_int(arg)?;
        }
        TIOCSTI => {
            p.next()?;
            p.strn(arg, 1)?;
        }
        TIOCSBRK | TIOCCBRK | TIOCCONS | TIOCNOTTY | TIOCEXCL | TIOCNXCL | FIOCLEX | FIONCLEX | TIOCVHANGUP
        | TIOCSSERIAL => {}
        _ => return Ok(false),
    }
    Ok(true)
}

/// `{c_iflag=..., c_oflag=..., c_cflag=..., c_lflag=..., ...}`.
fn termios(p: &mut P, addr: u64) -> R {
    // struct termios (kernel): four tcflag_t, c_line, c_cc[19].
    let mut b = [0u8; 36];
    if !p.fetch(addr, &mut b)? {
        return Ok(());
    }
    let (i, o, c, l) = (
        le_u32(&b[0..]) as u64,
        le_u32(&b[4..]) as u64,
        le_u32(&b[8..]) as u64,
        le_u32(&b[12..]) as u64,
    );
    p.s("{c_iflag=")?;
    p.flags64(xlat::TERM_IFLAGS, i, None)?;
    p.s(", c_oflag=")?;
    let mut o = o;
    for (x, mask, d) in [
        (xlat::TERM_OFLAGS_NLDLY, 0o400u64, "NL?"),
        (xlat::TERM_OFLAGS_CRDLY, 0o3000, "CR?"),
        (xlat::TERM_OFLAGS_TABDLY, 0o14000, "TAB?"),
        (xlat::TERM_OFLAGS_BSDLY, 0o20000, "BS?"),
        (xlat::TERM_OFLAGS_VTDLY, 0o40000, "VT?"),
        (xlat::TERM_OFLAGS_FFDLY, 0o100000, "FF?"),
    ] {
        p.xval64(x, o & mask, Some(d))?;
        p.s("|")?;
        o &= !mask;
    }
    p.flags64(xlat::TERM_OFLAGS, o, None)?;
    p.s(", c_cflag=")?;
    const CBAUD: u64 = 0o10017;
    const CIBAUD: u64 = 0o2003600000;
    const CSIZE: u64 = 0o60;
    p.xval64(xlat::BAUD_OPTIONS, c & CBAUD, Some("B???"))?;
    p.s("|")?;
    if c & CIBAUD != 0 {
        p.xval64(xlat::BAUD_OPTIONS, (c & CIBAUD) >> 16, Some("B???"))?;
        p.s("<<IBSHIFT|")?;
    }
    p.xval64(xlat::TERM_CFLAGS_CSIZE, c & CSIZE, Some("CS?"))?;
    p.s("|")?;
    p.flags64(xlat::TERM_CFLAGS, c & !(CBAUD | CIBAUD | CSIZE), None)?;
    p.s(", c_lflag=")?;
    p.flags64(xlat::TERM_LFLAGS, l, None)?;
    p.s(", ...}")
}

// ---- fcntl ----------------------------------------------------------------

/// fcntl(fd, cmd, arg): strace's print_fcntl.
pub(crate) fn fcntl(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.xval(xlat::FCNTLCMDS, p.a[1], Some("F_???"))?;
    let arg = p.a[2];
    match p.a[1] as u32 {
        2 => {
            // F_SETFD
            p.next()?;
            p.flags(xlat::FDFLAGS, arg, Some("FD_???"))
        }
        8 | 0x407 | 0 | 0x406 => {
            // F_SETOWN, F_SETPIPE_SZ, F_DUPFD, F_DUPFD_CLOEXEC
            p.next()?;
            p.d(arg as i32 as i64)
        }
        4 => {
            // F_SETFL
            p.next()?;
            open_modes(p, arg)
        }
        6 | 7 | 0x25 | 0x26 => {
            // F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW
            p.next()?;
            flock(p, arg, false)
        }
        15 => {
            // F_SETOWN_EX
            p.next()?;
            f_owner_ex(p, arg)
        }
        0x402 => {
            // F_NOTIFY
            p.next()?;
            p.flags64(xlat::NOTIFYFLAGS, arg, Some("DN_???"))
        }
        0x400 => {
            // F_SETLEASE
            p.next()?;
            p.xval64(xlat::LOCKFCMDS, arg, Some("F_???"))
        }
        0x409 => {
            // F_ADD_SEALS
            p.next()?;
            p.flags64(xlat::F_SEALS, arg, Some("F_SEAL_???"))
        }
        10 => {
            // F_SETSIG
            p.next()?;
            p.signal(arg as i32)
        }
        9 | 0x408 | 1 | 3 | 0x401 | 0x40a | 11 => Ok(()),
        5 | 0x24 => {
            // F_GETLK, F_OFD_GETLK
            p.exiting()?;
            p.next()?;
            flock(p, arg, true)
        }
        16 => {
            // F_GETOWN_EX
            p.exiting()?;
            p.next()?;
            f_owner_ex(p, arg)
        }
        _ => {
            p.next()?;
            p.x(arg)
        }
    }
}

/// What fcntl adds after its result: `(flags O_RDWR|O_LARGEFILE)`.
pub(crate) fn fcntl_aux(p: &mut P) -> R {
    let r = p.ret as u64;
    match p.a[1] as u32 {
        1 if r != 0 => {
            p.s(" (flags ")?;
            p.flags64(xlat::FDFLAGS, r, None)?;
            p.s(")")
        }
        3 => {
            p.s(" (flags ")?;
            open_modes(p, r)?;
            p.s(")")
        }
        0x401 => match lookup(xlat::LOCKFCMDS, r) {
            Some(s) => write!(p, " ({s})"),
            None => Ok(()),
        },
        0x40a if r != 0 => {
            p.s(" (seals ")?;
            p.flags64(xlat::F_SEALS, r, None)?;
            p.s(")")
        }
        11 if r != 0 => match crate::out::signame(r as i32) {
            Some(crate::out::Sig::Name(s)) => write!(p, " ({s})"),
            Some(crate::out::Sig::Rt(n)) => write!(p, " (SIGRT_{n})"),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `tprint_open_modes`: the access mode and the flags, `O_RDONLY|O_CLOEXEC`.
pub(crate) fn open_modes(p: &mut P, v: u64) -> R {
    let mut flags = v;
    if let Some(acc) = lookup(xlat::OPEN_ACCESS_MODES, v & 3) {
        p.s(acc)?;
        flags &= !3;
        if flags == 0 {
            return Ok(());
        }
        p.s("|")?;
    }
    p.flags64(xlat::OPEN_MODE_FLAGS, flags, None)
}

/// struct flock: `{l_type=F_RDLCK, l_whence=SEEK_SET, l_start=0, l_len=0}`.
fn flock(p: &mut P, addr: u64, getlk: bool) -> R {
    let mut b = [0u8; 32];
    if !p.fetch(addr, &mut b)? {
        return Ok(());
    }
    p.s("{l_type=")?;
    p.xval64(xlat::LOCKFCMDS, le_u16(&b[0..]) as u64, Some("F_???"))?;
    p.s(", l_whence=")?;
    p.xval64(xlat::WHENCE_CODES, le_u16(&b[2..]) as u64, Some("SEEK_???"))?;
    write!(p, ", l_start={}, l_len={}", le_i64(&b[8..]), le_i64(&b[16..]))?;
    if getlk {
        write!(p, ", l_pid={}", le_i32(&b[24..]))?;
    }
    p.s("}")
}

fn f_owner_ex(p: &mut P, addr: u64) -> R {
    let mut b = [0u8; 8];
    if p.fetch(addr, &mut b)? {
        p.s("{type=")?;
        p.xval64(xlat::F_OWNER_TYPES, le_u32(&b[0..]) as u64, Some("F_OWNER_???"))?;
        write!(p, ", pid={}}}", le_i32(&b[4..]))?;
    }
    Ok(())
}

// ---- pipes ----------------------------------------------------------------

/// pipe(fds) and pipe2(fds, flags): everything at exit.
pub(crate) fn pipe(p: &mut P, flags: Option<usize>) -> R {
    p.exiting()?;
    int_pair(p, p.a[0])?;
    if let Some(i) = flags {
        p.next()?;
        p.flags(xlat::OPEN_MODE_FLAGS, p.a[i], Some("O_???"))?;
    }
    Ok(())
}

/// Two descriptors: `[3, 4]` (strace's decode_pair_fd).
pub(crate) fn int_pair(p: &mut P, addr: u64) -> R {
    p.array::<4>(addr, 2, false, |p, el| p.d(le_i32(el) as i64))
}

// ---- poll and select --------------------------------------------------------

fn pollfds(p: &mut P) -> R {
    let nfds = p.a[1] as u32 as u64;
    p.array::<8>(p.a[0], nfds, false, |p, el| {
        let fd = le_i32(&el[0..]);
        write!(p, "{{fd={fd}")?;
        if fd >= 0 {
            p.s(", events=")?;
            p.flags(xlat::POLLFLAGS, le_u16(&el[4..]) as u64, Some("POLL???"))?;
        }
        p.s("}")
    })?;
    p.next()?;
    p.u(nfds)?;
    p.next()
}

/// poll(fds, nfds, timeout).
pub(crate) fn poll(p: &mut P) -> R {
    pollfds(p)?;
    p.d(p.a[2] as i32 as i64)
}

/// ppoll(fds, nfds, tmo_p, sigmask, sigsetsize).
pub(crate) fn ppoll(p: &mut P) -> R {
    pollfds(p)?;
    p.timespec(p.a[2])?;
    p.next()?;
    p.sigset_addr_len(p.a[3], p.a[4])?;
    p.next()?;
    p.u(p.a[4])
}

/// `sprint_timespec`: the timespec at `addr`, or its address.
fn sprint_timespec(p: &mut P, addr: u64) -> R {
    if addr == 0 {
        return p.s("NULL");
    }
    let mut b = [0u8; 16];
    if p.failed() || !p.read(addr, &mut b) {
        return write!(p, "{addr:#x}");
    }
    write!(p, "{{tv_sec={}, tv_nsec={}}}", le_i64(&b[0..]), le_u64(&b[8..]))
}

/// What poll/ppoll add after the result: ` ([{fd=3, revents=POLLIN}])`,
/// ` (Timeout)`.
pub(crate) fn poll_aux(p: &mut P, ppoll: bool) -> R {
    if p.ret == 0 {
        return p.s(" (Timeout)");
    }
    let nfds = p.a[1] as u32 as u64;
    let start = p.a[0];
    let end = start.wrapping_add(8 * nfds);
    let mut opened = false;
    if start != 0 && nfds != 0 && end >= start {
        let mut printed = 0;
        let mut cur = start;
        while cur < end {
            let mut b = [0u8; 8];
            if !p.read(cur, &mut b) {
                p.s(if opened { ", " } else { " ([" })?;
                opened = true;
                write!(p, "{cur:#x}")?;
                break;
            }
            cur += 8;
            let revents = le_u16(&b[6..]);
            if revents == 0 {
                continue;
            }
            p.s(if opened { ", " } else { " ([" })?;
            opened = true;
            if printed >= p.limit {
                p.s("...")?;
                break;
            }
            write!(p, "{{fd={}, revents=", le_i32(&b[0..]))?;
            p.flags(xlat::POLLFLAGS, revents as u64, None)?;
            p.s("}")?;
            printed += 1;
        }
        if opened {
            p.s("]")?;
        }
    }
    if ppoll && p.a[2] != 0 {
        p.s(if opened { ", left " } else { " (left " })?;
        opened = true;
        sprint_timespec(p, p.a[2])?;
    }
    if opened {
        p.s(")")?;
    }
    Ok(())
}

fn fdsize(nfds: i32) -> usize {
    let nfds = nfds.clamp(0, 1024 * 1024) as usize;
    (nfds.div_ceil(8) + 7) & !7
}

/// select(nfds, readfds, writefds, exceptfds, timeout) and pselect6 (with
/// the sigmask argument).
pub(crate) fn select(p: &mut P, pselect6: bool) -> R {
    let nfds = p.a[0] as i32;
    p.d(nfds as i64)?;
    let size = fdsize(nfds);
    for i in 0..3 {
        p.next()?;
        let addr = p.a[i + 1];
        if size == 0 {
            p.addr(addr)?;
            continue;
        }
        if !fd_set_readable(p, addr, size)? {
            continue;
        }
        p.s("[")?;
        let mut first = true;
        for_each_fd(p.mem, addr, nfds, |fd| {
            let r = if first { write!(p, "{fd}") } else { write!(p, " {fd}") };
            first = false;
            r
        })?;
        p.s("]")?;
    }
    p.next()?;
    if pselect6 {
        p.timespec(p.a[4])?;
        p.next()?;
        // struct { sigset_t *ss; size_t ss_len; }
        let mut b = [0u8; 16];
        if p.fetch(p.a[5], &mut b)? {
            p.s("{sigmask=")?;
            p.sigset_addr_len(le_u64(&b[0..]), le_u64(&b[8..]))?;
            write!(p, ", sigsetsize={}}}", le_u64(&b[8..]))?;
        }
        Ok(())
    } else {
        p.timeval(p.a[4])
    }
}

/// umoven_or_printaddr for an fd_set of `size` bytes.
fn fd_set_readable(p: &mut P, addr: u64, size: usize) -> Result<bool, core::fmt::Error> {
    if addr == 0 {
        p.s("NULL")?;
        return Ok(false);
    }
    let mut src = MemBytes::new(p.mem, addr);
    for i in 0..size {
        if src.get(i).is_none() {
            p.addr(addr)?;
            return Ok(false);
        }
    }
    Ok(true)
}

/// Calls `f` for each descriptor below `nfds` set in the fd_set at `addr`.
fn for_each_fd(mem: &dyn crate::Memory, addr: u64, nfds: i32, mut f: impl FnMut(i32) -> R) -> R {
    let mut src = MemBytes::new(mem, addr);
    for fd in 0..nfds.max(0) {
        let byte = src.get((fd / 8) as usize).unwrap_or(0);
        if byte & (1 << (fd % 8)) != 0 {
            f(fd)?;
        }
    }
    Ok(())
}

/// What select adds after the result: ` (in [3], left {tv_sec=0, tv_usec=5})`.
pub(crate) fn select_aux(p: &mut P, pselect6: bool) -> R {
    if p.ret == 0 {
        return p.s(" (Timeout)");
    }
    let nfds = p.a[0] as i32;
    let size = fdsize(nfds);
    let mut ready = p.ret;
    let mut any = false;
    p.s(" (")?;
    for i in 0..3 {
        if ready <= 0 {
            break;
        }
        let addr = p.a[i + 1];
        if addr == 0 || !readable(p.mem, addr, size) {
            continue;
        }
        let mut first = true;
        let name = ["in", "out", "except"][i];
        let mut src = MemBytes::new(p.mem, addr);
        for fd in 0..nfds.max(0) {
            let byte = src.get((fd / 8) as usize).unwrap_or(0);
            if byte & (1 << (fd % 8)) == 0 {
                continue;
            }
            if first {
                write!(p, "{}{name} [{fd}", if any { ", " } else { "" })?;
                first = false;
                any = true;
            } else {
                write!(p, " {fd}")?;
            }
            ready -= 1;
            if ready == 0 {
                break;
            }
        }
        if any {
            p.s("]")?;
        }
    }
    if p.a[4] != 0 {
        write!(p, "{}left ", if any { ", " } else { "" })?;
        if pselect6 {
            sprint_timespec(p, p.a[4])?;
        } else {
            let mut b = [0u8; 16];
            if p.read(p.a[4], &mut b) {
                write!(p, "{{tv_sec={}, tv_usec={}}}", le_i64(&b[0..]), le_u64(&b[8..]))?;
            } else {
                let a4 = p.a[4];
                write!(p, "{a4:#x}")?;
            }
        }
    }
    p.s(")")
}

fn readable(mem: &dyn crate::Memory, addr: u64, size: usize) -> bool {
    let mut src = MemBytes::new(mem, addr);
    (0..size).all(|i| src.get(i).is_some())
}

// ---- directories ------------------------------------------------------------

/// getdents64(fd, dirp, count) and getdents: `0x... /* 7 entries */`.
pub(crate) fn getdents(p: &mut P, is64: bool) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.exiting()?;
    let count = p.a[2] as u32 as u64;
    if p.failed() || p.ret as u64 > count {
        p.addr(p.a[1])?;
    } else {
        let header = if is64 { 19 } else { 18 };
        let mut addr = p.a[1];
        let mut len = p.ret as u64;
        let mut n = 0u32;
        p.addr(addr)?;
        loop {
            if len < header {
                break;
            }
            let mut h = [0u8; 19];
            if !p.read(addr, &mut h[..header as usize]) {
                break;
            }
            n += 1;
            let reclen = le_u16(&h[16..]) as u64;
            let mut next_addr = 0;
            let mut next_len = 0;
            if reclen > len {
                write!(p, " /* d_reclen {} bytes overflow */", reclen - len)?;
            } else if reclen < header {
                write!(p, " /* d_reclen {} bytes underflow */", header - reclen)?;
                next_len = len - header;
            } else {
                next_len = len - reclen;
                if next_len != 0 {
                    next_addr = addr.wrapping_add(reclen);
                }
            }
            len = next_len;
            if next_addr == 0 {
                break;
            }
            addr = next_addr;
        }
        write!(p, " /* {n}{} entries */", if len != 0 { "+" } else { "" })?;
    }
    p.next()?;
    p.u(count)
}

// ---- sendfile, splice, copy_file_range ----------------------------------------

/// `[N]`, an int64 at `addr`; false when it printed the address instead.
fn num_i64(p: &mut P, addr: u64, signed: bool) -> Result<bool, core::fmt::Error> {
    let mut b = [0u8; 8];
    if !p.fetch(addr, &mut b)? {
        return Ok(false);
    }
    if signed {
        write!(p, "[{}]", le_i64(&b))?;
    } else {
        write!(p, "[{}]", le_u64(&b))?;
    }
    Ok(true)
}

/// sendfile(out_fd, in_fd, offset, count): `[0] => [100]` when the
/// offset moved.
pub(crate) fn sendfile(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.fd(p.a[1])?;
    p.next()?;
    // The offset as it was when the call started, if the caller saved it.
    match p.entry.word(0) {
        Some(old) if p.a[2] != 0 => write!(p, "[{old}]")?,
        _ => {
            if !num_i64(p, p.a[2], false)? {
                p.next()?;
                return p.u(p.a[3]);
            }
        }
    }
    p.exiting()?;
    if !p.failed() && p.ret != 0 {
        p.s(" => ")?;
        num_i64(p, p.a[2], false)?;
    }
    p.next()?;
    p.u(p.a[3])
}

/// splice(fd_in, off_in, fd_out, off_out, len, flags).
pub(crate) fn splice(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    num_i64(p, p.a[1], true)?;
    p.next()?;
    p.fd(p.a[2])?;
    p.next()?;
    num_i64(p, p.a[3], true)?;
    p.next()?;
    p.u(p.a[4])?;
    p.next()?;
    p.flags(xlat::SPLICE_FLAGS, p.a[5], Some("SPLICE_F_???"))
}

/// copy_file_range(fd_in, off_in, fd_out, off_out, len, flags).
pub(crate) fn copy_file_range(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    num_i64(p, p.a[1], true)?;
    p.next()?;
    p.fd(p.a[2])?;
    p.next()?;
    num_i64(p, p.a[3], true)?;
    p.next()?;
    p.u(p.a[4])?;
    p.next()?;
    p.u(p.a[5] as u32 as u64)
}

// ---- epoll ------------------------------------------------------------------

fn epoll_event(p: &mut P, el: &[u8; 12]) -> R {
    p.s("{events=")?;
    p.flags(xlat::EPOLLEVENTS, le_u32(&el[0..]) as u64, Some("EPOLL???"))?;
    let data = le_u64(&el[4..]);
    write!(p, ", data={{u32={}, u64={data}}}}}", data as u32)
}

/// epoll_ctl(epfd, op, fd, event).
pub(crate) fn epoll_ctl(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.xval(xlat::EPOLLCTLS, p.a[1] as u32 as u64, Some("EPOLL_CTL_???"))?;
    p.next()?;
    p.fd(p.a[2])?;
    p.next()?;
    if p.a[1] as u32 == 2 {
        // EPOLL_CTL_DEL
        return p.addr(p.a[3]);
    }
    let mut b = [0u8; 12];
    if p.fetch(p.a[3], &mut b)? {
        epoll_event(p, &b)?;
    }
    Ok(())
}

/// epoll_wait(epfd, events, maxevents, timeout), epoll_pwait (sigmask,
/// sigsetsize) and epoll_pwait2 (timespec timeout).
pub(crate) fn epoll_wait(p: &mut P, nr: usize) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.exiting()?;
    let n = if p.failed() { u64::MAX } else { p.ret as u64 };
    if n == u64::MAX {
        p.addr(p.a[1])?;
    } else {
        p.array::<12>(p.a[1], n, false, epoll_event)?;
    }
    p.next()?;
    p.d(p.a[2] as i32 as i64)?;
    p.next()?;
    if nr == crate::nr::EPOLL_PWAIT2 {
        p.timespec(p.a[3])?;
    } else {
        p.d(p.a[3] as i32 as i64)?;
    }
    if nr != crate::nr::EPOLL_WAIT {
        p.next()?;
        p.sigset_addr_len(p.a[4], p.a[5])?;
        p.next()?;
        p.u(p.a[5])?;
    }
    Ok(())
}

/// io_uring_enter(fd, to_submit, min_complete, flags, sig, sigsz).
pub(crate) fn io_uring_enter(p: &mut P) -> R {
    p.fd(p.a[0])?;
    write!(p, ", {}, {}, ", p.a[1] as u32, p.a[2] as u32)?;
    p.flags(xlat::URING_ENTER_FLAGS, p.a[3] as u32 as u64, Some("IORING_ENTER_???"))?;
    p.next()?;
    p.sigset_addr_len(p.a[4], p.a[5])?;
    p.next()?;
    p.u(p.a[5])
}
