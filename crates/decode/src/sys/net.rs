//! Sockets (strace's net.c, sockaddr.c, msghdr.c, bind.c).

use core::fmt::Write as _;

use super::io::int_pair;
use crate::out::{le_i32, le_u16, le_u32, le_u64, lookup, MemBytes, CSTR, HEX, P, PLAIN, R};
use crate::xlat::{self, Xlat};

const AF_UNIX: u16 = 1;
const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;
const AF_NETLINK: u16 = 16;
const AF_PACKET: u64 = 17;

/// `SOCK_STREAM|SOCK_CLOEXEC`.
fn sock_type(p: &mut P, v: u32) -> R {
    let mut flags = v as u64;
    if let Some(s) = lookup(xlat::SOCKTYPES, flags & 0xf) {
        p.s(s)?;
        flags &= !0xf;
        if flags == 0 {
            return Ok(());
        }
        p.s("|")?;
    }
    p.flags(xlat::SOCK_TYPE_FLAGS, flags, Some("SOCK_???"))
}

/// socket(domain, type, protocol).
pub(crate) fn socket(p: &mut P) -> R {
    p.xval(xlat::ADDRFAMS, p.a[0], Some("AF_???"))?;
    p.next()?;
    sock_type(p, p.a[1] as u32)?;
    p.next()?;
    match p.a[0] {
        2 | 10 => p.xval(xlat::INET_PROTOCOLS, p.a[2], Some("IPPROTO_???")),
        16 => p.xval(xlat::NETLINK_PROTOCOLS, p.a[2], Some("NETLINK_???")),
        AF_PACKET => {
            p.s("htons(")?;
            p.x((p.a[2] as u16).swap_bytes() as u64)?;
            p.s(")")
        }
        _ => p.u(p.a[2]),
    }
}

/// socketpair(domain, type, protocol, sv).
pub(crate) fn socketpair(p: &mut P) -> R {
    p.xval(xlat::ADDRFAMS, p.a[0], Some("AF_???"))?;
    p.next()?;
    sock_type(p, p.a[1] as u32)?;
    p.next()?;
    p.u(p.a[2])?;
    p.next()?;
    p.exiting()?;
    int_pair(p, p.a[3])
}

/// connect/bind(fd, addr, addrlen).
pub(crate) fn connect(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    let len = p.a[2] as i32;
    sockaddr(p, p.a[1], len)?;
    p.next()?;
    p.d(len as i64)
}

/// strace's decode_sockaddr: `{sa_family=AF_INET, sin_port=htons(80), ...}`;
/// returns the family (None if not printed as a structure).
pub(crate) fn sockaddr(p: &mut P, addr: u64, len: i32) -> Result<Option<u16>, core::fmt::Error> {
    if len < 2 {
        p.addr(addr)?;
        return Ok(None);
    }
    let len = (len as usize).min(128);
    // One byte more than sockaddr_storage, zero-filled past `len`.
    let mut b = [0u8; 129];
    if !p.fetch(addr, &mut b[..len])? {
        return Ok(None);
    }
    let family = le_u16(&b);
    p.s("{sa_family=")?;
    p.xval(xlat::ADDRFAMS, family as u64, Some("AF_???"))?;
    if len > 2 {
        p.s(", ")?;
        match family {
            AF_UNIX if len >= 3 => {
                let un_len = len.min(110);
                let path_len = un_len - 2;
                p.s("sun_path=")?;
                if b[2] != 0 {
                    // print_quoted_string(sun_path, path_len + 1, QUOTE_0_TERMINATED)
                    p.quote(&mut &b[2..2 + path_len], path_len, CSTR)?;
                } else {
                    p.s("@")?;
                    p.quote(&mut &b[3..2 + path_len], path_len - 1, PLAIN)?;
                }
            }
            AF_INET if len >= 16 => {
                let port = u16::from_be_bytes([b[2], b[3]]);
                write!(
                    p,
                    "sin_port=htons({port}), sin_addr=inet_addr(\"{}.{}.{}.{}\")",
                    b[4], b[5], b[6], b[7]
                )?;
            }
            AF_INET6 if len >= 24 => {
                let port = u16::from_be_bytes([b[2], b[3]]);
                let flow = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                write!(
                    p,
                    "sin6_port=htons({port}), sin6_flowinfo=htonl({flow}), inet_pton(AF_INET6, \""
                )?;
                let mut a = [0u8; 16];
                a.copy_from_slice(&b[8..24]);
                inet6(p, &a)?;
                p.s("\", &sin6_addr)")?;
                if len > 24 {
                    write!(p, ", sin6_scope_id={}", le_u32(&b[24..]))?;
                }
            }
            AF_NETLINK if len >= 12 => {
                let pad = le_u16(&b[2..]);
                if pad != 0 {
                    p.s("nl_pad=")?;
                    p.x(pad as u64)?;
                    p.s(", ")?;
                }
                let groups = le_u32(&b[8..]);
                write!(p, "nl_pid={}, nl_groups=", le_i32(&b[4..]))?;
                if groups == 0 {
                    p.s("00000000")?;
                } else {
                    write!(p, "{groups:#08x}")?;
                }
            }
            _ => {
                p.s("sa_data=")?;
                p.quote(&mut &b[2..len], len - 2, PLAIN)?;
            }
        }
    }
    p.s("}")?;
    Ok(Some(family))
}

/// An IPv6 address as glibc's inet_ntop writes it.
fn inet6(p: &mut P, a: &[u8; 16]) -> R {
    let mut w = [0u16; 8];
    for (i, x) in w.iter_mut().enumerate() {
        *x = u16::from_be_bytes([a[2 * i], a[2 * i + 1]]);
    }
    // The longest run (of 2 or more) of zero words, the first on a tie.
    let (mut best, mut best_len, mut cur, mut cur_len) = (usize::MAX, 0, 0, 0);
    for (i, &x) in w.iter().enumerate() {
        if x == 0 {
            if cur_len == 0 {
                cur = i;
            }
            cur_len += 1;
            if cur_len > best_len {
                best = cur;
                best_len = cur_len;
            }
        } else {
            cur_len = 0;
        }
    }
    if best_len < 2 {
        best = usize::MAX;
    }
    let mut i = 0;
    while i < 8 {
        if i == best {
            p.s(":")?;
            if best + best_len == 8 {
                p.s(":")?;
            }
            i += best_len;
            continue;
        }
        if i != 0 {
            p.s(":")?;
        }
        if i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)) {
            write!(p, "{}.{}.{}.{}", a[12], a[13], a[14], a[15])?;
            break;
        }
        write!(p, "{:x}", w[i])?;
        i += 1;
    }
    Ok(())
}

/// The int the caller saved when the call started ([`crate::EntryState`]).
fn saved_int(p: &P) -> Option<i32> {
    p.entry.word(0).map(|v| v as i32)
}

/// `[16]` or `[128 => 16]`: an addrlen that was `ulen` and became `rlen`.
fn changed_len(p: &mut P, ulen: i32, rlen: i32) -> R {
    if ulen != rlen {
        write!(p, "[{ulen} => {rlen}]")
    } else {
        write!(p, "[{rlen}]")
    }
}

fn read_int(p: &P, addr: u64) -> Option<i32> {
    let mut b = [0u8; 4];
    if addr != 0 && p.read(addr, &mut b) {
        Some(i32::from_le_bytes(b))
    } else {
        None
    }
}

/// accept(fd, addr, addrlen), accept4 (flags), getsockname, getpeername.
/// The length before the call is not known after it: printed as unchanged.
pub(crate) fn accept(p: &mut P, flags4: bool) -> R {
    getsockname(p)?;
    if flags4 {
        p.next()?;
        p.flags(xlat::SOCK_TYPE_FLAGS, p.a[3], Some("SOCK_???"))?;
    }
    Ok(())
}

/// getsockname/getpeername(fd, addr, addrlen): strace's decode_sockname.
pub(crate) fn getsockname(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    let ulen = if p.a[1] != 0 {
        saved_int(p).or_else(|| read_int(p, p.a[2]))
    } else {
        None
    };
    let Some(ulen) = ulen else {
        p.addr(p.a[1])?;
        p.next()?;
        return p.addr(p.a[2]);
    };
    p.exiting()?;
    match read_int(p, p.a[2]) {
        Some(rlen) if !p.failed() => {
            sockaddr(p, p.a[1], ulen.min(rlen))?;
            p.next()?;
            changed_len(p, ulen, rlen)
        }
        _ => {
            p.addr(p.a[1])?;
            p.next()?;
            write!(p, "[{ulen}]")
        }
    }
}

/// sendto(fd, buf, len, flags, addr, addrlen).
pub(crate) fn sendto(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.strn(p.a[1], p.a[2])?;
    p.next()?;
    p.u(p.a[2])?;
    p.next()?;
    p.flags(xlat::MSG_FLAGS, p.a[3], Some("MSG_???"))?;
    p.next()?;
    let len = p.a[5] as i32;
    sockaddr(p, p.a[4], len)?;
    p.next()?;
    p.d(len as i64)
}

/// recvfrom(fd, buf, len, flags, addr, addrlen).
pub(crate) fn recvfrom(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    let ulen = if p.a[4] != 0 {
        saved_int(p).or_else(|| read_int(p, p.a[5]))
    } else {
        None
    };
    p.exiting()?;
    if p.failed() {
        p.addr(p.a[1])?;
    } else {
        p.strn(p.a[1], (p.ret as u64).min(p.a[2]))?;
    }
    p.next()?;
    p.u(p.a[2])?;
    p.next()?;
    p.flags(xlat::MSG_FLAGS, p.a[3], Some("MSG_???"))?;
    p.next()?;
    let rlen = if p.a[4] != 0 { read_int(p, p.a[5]) } else { None };
    let (Some(rlen), Some(ulen)) = (rlen, ulen.or(rlen)) else {
        p.addr(p.a[4])?;
        p.next()?;
        return p.addr(p.a[5]);
    };
    if p.failed() {
        p.addr(p.a[4])?;
        p.next()?;
        return write!(p, "[{ulen}]");
    }
    sockaddr(p, p.a[4], ulen.min(rlen))?;
    p.next()?;
    changed_len(p, ulen, rlen)
}

/// sendmsg(fd, msg, flags).
pub(crate) fn sendmsg(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    msghdr(p, p.a[1], None, u64::MAX)?;
    p.next()?;
    p.flags(xlat::MSG_FLAGS, p.a[2], Some("MSG_???"))
}

/// recvmsg(fd, msg, flags).
pub(crate) fn recvmsg(p: &mut P) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    let mut h = [0u8; 56];
    if p.a[1] == 0 || !p.read(p.a[1], &mut h) {
        p.addr(p.a[1])?;
    } else {
        let namelen = saved_int(p).unwrap_or(le_i32(&h[8..]));
        p.exiting()?;
        if p.failed() {
            write!(p, "{{msg_namelen={namelen}}}")?;
        } else {
            msghdr(p, p.a[1], Some(namelen), p.ret as u64)?;
        }
    }
    p.next()?;
    p.flags(xlat::MSG_FLAGS, p.a[2], Some("MSG_???"))
}

/// struct msghdr, with at most `data` bytes of the iovecs.
fn msghdr(p: &mut P, addr: u64, user_namelen: Option<i32>, data: u64) -> R {
    let mut h = [0u8; 56];
    if addr == 0 || !p.read(addr, &mut h) {
        return p.addr(addr);
    }
    msghdr_bytes(p, &h, user_namelen, data)
}

/// strace's print_struct_msghdr over the 56 bytes of a struct msghdr.
pub(crate) fn msghdr_bytes(p: &mut P, h: &[u8; 56], user_namelen: Option<i32>, data: u64) -> R {
    let (name, namelen) = (le_u64(&h[0..]), le_u32(&h[8..]) as i32);
    let (iov, iovlen) = (le_u64(&h[16..]), le_u64(&h[24..]));
    let (control, controllen) = (le_u64(&h[32..]), le_u64(&h[40..]));
    let flags = le_u32(&h[48..]);
    let shown = match user_namelen {
        Some(u) if namelen > u => u,
        _ => namelen,
    };
    p.s("{msg_name=")?;
    sockaddr(p, name, shown)?;
    p.s(", msg_namelen=")?;
    if let Some(u) = user_namelen {
        if u != namelen {
            write!(p, "{u} => ")?;
        }
    }
    write!(p, "{namelen}, msg_iov=")?;
    let mut left = data;
    p.array::<16>(iov, iovlen, true, |p, el| {
        let (base, len) = (le_u64(&el[0..]), le_u64(&el[8..]));
        let n = len.min(left);
        if left != u64::MAX {
            left -= n;
        }
        p.s("{iov_base=")?;
        p.strn(base, n)?;
        write!(p, ", iov_len={len}}}")
    })?;
    write!(p, ", msg_iovlen={iovlen}")?;
    if controllen != 0 {
        p.s(", msg_control=")?;
        msg_control(p, control, controllen)?;
    }
    write!(p, ", msg_controllen={controllen}, msg_flags=")?;
    p.flags(xlat::MSG_FLAGS, flags as u64, Some("MSG_???"))?;
    p.s("}")
}

/// The control messages: `[{cmsg_len=20, cmsg_level=SOL_SOCKET, cmsg_type=SCM_RIGHTS, cmsg_data=[3]}]`.
fn msg_control(p: &mut P, addr: u64, in_len: u64) -> R {
    const OPTMEM_MAX: u64 = 20480;
    let control_len = in_len.min(OPTMEM_MAX);
    let mut src = MemBytes::new(p.mem, addr);
    if control_len < 16 || (0..control_len as usize).any(|i| src.get(i).is_none()) {
        return p.addr(addr);
    }
    let mut off = 0u64;
    let mut buf_len = control_len;
    p.s("[")?;
    while buf_len >= 16 {
        let mut h = [0u8; 16];
        if !p.read(addr.wrapping_add(off), &mut h) {
            break;
        }
        let cmsg_len = le_u64(&h[0..]);
        let (level, typ) = (le_i32(&h[8..]), le_i32(&h[12..]));
        if off != 0 {
            p.s(", ")?;
        }
        write!(p, "{{cmsg_len={cmsg_len}, cmsg_level=")?;
        p.xval(xlat::SOCKETLAYERS, level as u32 as u64, Some("SOL_???"))?;
        p.s(", cmsg_type=")?;
        let len = cmsg_len.min(buf_len);
        let data_len = len.saturating_sub(16);
        let data = addr.wrapping_add(off + 16);
        match level {
            1 => {
                p.xval(xlat::SCMVALS, typ as u32 as u64, Some("SCM_???"))?;
                match typ {
                    1 if data_len >= 4 => {
                        // SCM_RIGHTS
                        p.s(", cmsg_data=")?;
                        p.array::<4>(data, data_len / 4, true, |p, el| p.d(le_i32(el) as i64))?;
                    }
                    2 if data_len >= 12 => {
                        // SCM_CREDENTIALS
                        let mut c = [0u8; 12];
                        p.read(data, &mut c);
                        write!(p, ", cmsg_data={{pid={}, uid=", le_i32(&c[0..]))?;
                        p.id(le_u32(&c[4..]) as u64)?;
                        p.s(", gid=")?;
                        p.id(le_u32(&c[8..]) as u64)?;
                        p.s("}")?;
                    }
                    3 => {
                        // SCM_SECURITY
                        p.s(", cmsg_data=")?;
                        let mut s = MemBytes::new(p.mem, data);
                        p.quote(&mut s, data_len as usize, PLAIN)?;
                    }
                    _ => {}
                }
            }
            0 => p.xval(xlat::IP_CMSG_TYPES, typ as u32 as u64, Some("IP_???"))?,
            _ => p.x(typ as u32 as u64)?,
        }
        p.s("}")?;
        if len < 16 {
            buf_len -= 16;
            break;
        }
        let step = (cmsg_len + 7) & !7;
        if step >= buf_len {
            buf_len = 0;
            break;
        }
        off += step;
        buf_len -= step;
    }
    if buf_len != 0 {
        write!(p, ", ... /* {:#x} */", addr.wrapping_add(control_len - buf_len))?;
    } else if control_len < in_len {
        p.s(", ...")?;
    }
    p.s("]")
}

fn sockopt_name(p: &mut P, level: u32, name: u32, get: bool) -> R {
    p.fd(p.a[0])?;
    p.next()?;
    p.xval(xlat::SOCKETLAYERS, level as u64, Some("SOL_??"))?;
    p.next()?;
    let tables: (&[Xlat], &str) = match level {
        1 => (
            if get {
                &[xlat::SOCK_OPTIONS, xlat::GETSOCK_OPTIONS]
            } else {
                &[xlat::SOCK_OPTIONS, xlat::SETSOCK_OPTIONS]
            },
            "SO_???",
        ),
        0 => (
            if get {
                &[xlat::SOCK_IP_OPTIONS, xlat::GETSOCK_IP_OPTIONS]
            } else {
                &[xlat::SOCK_IP_OPTIONS, xlat::SETSOCK_IP_OPTIONS]
            },
            "IP_???",
        ),
        41 => (
            if get {
                &[xlat::SOCK_IPV6_OPTIONS, xlat::GETSOCK_IPV6_OPTIONS]
            } else {
                &[xlat::SOCK_IPV6_OPTIONS, xlat::SETSOCK_IPV6_OPTIONS]
            },
            "IPV6_???",
        ),
        6 => (&[xlat::SOCK_TCP_OPTIONS], "TCP_???"),
        17 => (&[xlat::SOCK_UDP_OPTIONS], "UDP_???"),
        255 => (&[xlat::SOCK_RAW_OPTIONS], "RAW_???"),
        263 => (&[xlat::SOCK_PACKET_OPTIONS], "PACKET_???"),
        270 => (&[xlat::SOCK_NETLINK_OPTIONS], "NETLINK_???"),
        _ => return p.u(name as u64),
    };
    for x in tables.0 {
        if let Some(s) = lookup(x, name as u64) {
            return p.s(s);
        }
    }
    p.x(name as u64)?;
    p.comment(Some(tables.1))
}

/// SOL_SOCKET options whose value is an int.
fn int_like(name: u32) -> bool {
    matches!(
        name,
        1 | 2 | 5..=12 | 14..=16 | 18 | 19 | 27 | 29 | 30 | 32..=37 | 40..=46 | 49 | 53 | 56 | 60 | 63..=65 | 68..=70 | 73 | 75
    )
}

/// setsockopt(fd, level, name, value, len).
pub(crate) fn setsockopt(p: &mut P) -> R {
    let (level, name, addr, len) = (p.a[1] as u32, p.a[2] as u32, p.a[3], p.a[4] as i32);
    sockopt_name(p, level, name, false)?;
    p.next()?;
    let done = addr != 0
        && match (level, name) {
            (1, 13) => {
                // SO_LINGER
                let mut b = [0u8; 8];
                if len < 8 {
                    p.addr(addr)?;
                } else if p.fetch(addr, &mut b)? {
                    write!(p, "{{l_onoff={}, l_linger={}}}", le_i32(&b[0..]), le_i32(&b[4..]))?;
                }
                true
            }
            (1, n) if int_like(n) => {
                if len < 4 {
                    p.addr(addr)?;
                } else {
                    p.num_int(addr)?;
                }
                true
            }
            (270, _) => {
                if len < 4 {
                    p.addr(addr)?;
                } else {
                    p.num_int(addr)?;
                }
                true
            }
            _ => false,
        };
    if !done {
        if len == 4 {
            p.num_int(addr)?;
        } else {
            p.strn(addr, len as i64 as u64)?;
        }
    }
    p.next()?;
    p.d(len as i64)
}

/// getsockopt(fd, level, name, value, len).
pub(crate) fn getsockopt(p: &mut P) -> R {
    let (level, name, addr) = (p.a[1] as u32, p.a[2] as u32, p.a[3]);
    sockopt_name(p, level, name, true)?;
    p.next()?;
    let Some(ulen) = (if p.a[4] != 0 {
        saved_int(p).or_else(|| read_int(p, p.a[4]))
    } else {
        None
    }) else {
        p.addr(addr)?;
        p.next()?;
        return p.addr(p.a[4]);
    };
    p.exiting()?;
    let rlen = read_int(p, p.a[4]);
    let Some(rlen) = rlen.filter(|_| !p.failed()) else {
        p.addr(addr)?;
        p.next()?;
        return write!(p, "[{ulen}]");
    };
    if ulen <= 0 || rlen <= 0 {
        p.addr(addr)?;
    } else {
        let done = addr != 0
            && match (level, name) {
                (1, 4) => {
                    // SO_ERROR
                    if rlen < 4 {
                        p.printstr_ex(addr, rlen as u64, HEX)?;
                    } else {
                        let mut b = [0u8; 4];
                        if p.fetch(addr, &mut b)? {
                            let e = le_u32(&b);
                            match crate::errno_name(e as i32) {
                                Some(n) => write!(p, "[{n}]")?,
                                None => write!(p, "[{e}]")?,
                            }
                        }
                    }
                    true
                }
                (1, 17) => {
                    // SO_PEERCRED
                    let mut b = [0u8; 12];
                    let n = (rlen as usize).min(12);
                    if p.fetch(addr, &mut b[..n])? {
                        let mut sep = "{";
                        if n >= 4 {
                            write!(p, "{sep}pid={}", le_i32(&b[0..]))?;
                            sep = ", ";
                        }
                        if n >= 8 {
                            write!(p, "{sep}uid=")?;
                            p.id(le_u32(&b[4..]) as u64)?;
                        }
                        if n >= 12 {
                            p.s(", gid=")?;
                            p.id(le_u32(&b[8..]) as u64)?;
                        }
                        p.s("}")?;
                    }
                    true
                }
                (1, 13) => {
                    // SO_LINGER
                    let mut b = [0u8; 8];
                    let n = (rlen as usize).min(8);
                    if p.fetch(addr, &mut b[..n])? {
                        if n >= 4 {
                            write!(p, "{{l_onoff={}", le_i32(&b[0..]))?;
                        }
                        if n >= 8 {
                            write!(p, ", l_linger={}", le_i32(&b[4..]))?;
                        }
                        p.s("}")?;
                    }
                    true
                }
                (1, n) if int_like(n) => {
                    if rlen >= 4 {
                        p.num_int(addr)?;
                    } else {
                        p.printstr_ex(addr, rlen as u64, HEX)?;
                    }
                    true
                }
                (270, _) => {
                    p.num_int(addr)?;
                    true
                }
                _ => false,
            };
        if !done {
            if rlen == 4 {
                p.num_int(addr)?;
            } else {
                p.strn(addr, rlen as u64)?;
            }
        }
    }
    p.next()?;
    changed_len(p, ulen, rlen)
}
