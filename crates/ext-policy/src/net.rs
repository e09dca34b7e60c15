//! The firewall's view of a socket address: decoded from the program's
//! `struct sockaddr`, matched against `net=` rules.

use crate::spec::{NetRule, Proto, FAMILY_IP};

pub const AF_UNSPEC: u16 = 0;
pub const AF_UNIX: u16 = 1;
pub const AF_INET: u16 = 2;
pub const AF_INET6: u16 = 10;
pub const AF_NETLINK: u16 = 16;

/// A decoded peer or local address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub family: u16,
    /// IPv4 in the first 4 bytes when `v4` (also for an IPv4-mapped IPv6
    /// address, `::ffff:a.b.c.d`, which reaches the IPv4 host).
    pub addr: [u8; 16],
    pub v4: bool,
    /// For AF_INET6 holding an IPv4-mapped address: the 16 bytes as given.
    pub raw6: [u8; 16],
    pub port: u16,
    /// The address has an IP and a port (AF_INET, AF_INET6).
    pub ip: bool,
}

impl Peer {
    /// Decodes the first `len` bytes of a sockaddr. None: too short for its
    /// family (the kernel answers EINVAL itself).
    pub fn decode(sa: &[u8]) -> Option<Peer> {
        let family = u16::from_ne_bytes([*sa.first()?, *sa.get(1)?]);
        let mut p = Peer {
            family,
            addr: [0; 16],
            v4: false,
            raw6: [0; 16],
            port: 0,
            ip: false,
        };
        match family {
            AF_INET => {
                let b = sa.get(..16)?;
                p.port = u16::from_be_bytes([b[2], b[3]]);
                p.addr[..4].copy_from_slice(&b[4..8]);
                p.v4 = true;
                p.ip = true;
            }
            AF_INET6 => {
                let b = sa.get(..24)?;
                p.port = u16::from_be_bytes([b[2], b[3]]);
                p.raw6.copy_from_slice(&b[8..24]);
                let mapped = b[8..18].iter().all(|&x| x == 0) && b[18] == 0xff && b[19] == 0xff;
                if mapped {
                    p.addr[..4].copy_from_slice(&b[20..24]);
                    p.v4 = true;
                } else {
                    p.addr.copy_from_slice(&b[8..24]);
                }
                p.ip = true;
            }
            _ => {}
        }
        Some(p)
    }
}

/// Whether the first `bits` bits of `a` and `b` agree.
fn prefix_eq(a: &[u8], b: &[u8], bits: u8) -> bool {
    let full = (bits / 8) as usize;
    let rest = bits % 8;
    if a.get(..full) != b.get(..full) {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    match (a.get(full), b.get(full)) {
        (Some(x), Some(y)) => x & mask == y & mask,
        _ => false,
    }
}

/// Whether rule `r` covers socket family `family`.
pub fn family_matches(r: &NetRule, family: u16) -> bool {
    match r.family {
        0 => true,
        FAMILY_IP => family == AF_INET || family == AF_INET6,
        f => f == family,
    }
}

/// Whether rule `r` covers a socket of type `proto` (None: unknown, only
/// `any` rules match).
pub fn proto_matches(r: &NetRule, proto: Option<Proto>) -> bool {
    r.proto == Proto::Any || proto == Some(r.proto)
}

/// Whether rule `r` matches operation `op` on a socket of family `family`
/// and protocol `proto` with address `peer`.
pub fn matches(r: &NetRule, op: u8, family: u16, proto: Option<Proto>, peer: &Peer) -> bool {
    // An IPv4-mapped address on an AF_INET6 socket reaches an IPv4 host:
    // inet rules cover it too.
    let fam_ok = family_matches(r, family) || (peer.ip && peer.v4 && family_matches(r, AF_INET));
    if r.ops & op == 0 || !fam_ok || !proto_matches(r, proto) {
        return false;
    }
    if let Some(plen) = r.plen {
        if !peer.ip {
            return false;
        }
        let ok = match (r.v4, peer.v4) {
            (true, true) => prefix_eq(&r.addr[..4], &peer.addr[..4], plen),
            (false, false) => prefix_eq(&r.addr, &peer.addr, plen),
            // An IPv6 rule against an IPv4-mapped address: the 16 bytes.
            (false, true) if family == AF_INET6 => prefix_eq(&r.addr, &peer.raw6, plen),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    if let Some((lo, hi)) = r.ports {
        if !peer.ip || peer.port < lo || peer.port > hi {
            return false;
        }
    }
    true
}

/// `SOCK_STREAM` -> tcp, `SOCK_DGRAM` -> udp (for inet sockets).
pub fn proto_of_type(ty: u64) -> Option<Proto> {
    match ty & 0xf {
        1 => Some(Proto::Tcp),
        2 => Some(Proto::Udp),
        _ => None,
    }
}

/// Writes `p`'s address as `127.0.0.1:80` or `[::1]:80` (no allocation).
pub fn write_peer(out: &mut dyn core::fmt::Write, p: &Peer) -> core::fmt::Result {
    if !p.ip {
        return Ok(());
    }
    if p.v4 {
        let a = &p.addr;
        if p.family == AF_INET6 {
            write!(out, "[::ffff:{}.{}.{}.{}]:{}", a[0], a[1], a[2], a[3], p.port)
        } else {
            write!(out, "{}.{}.{}.{}:{}", a[0], a[1], a[2], a[3], p.port)
        }
    } else {
        out.write_str("[")?;
        for i in 0..8 {
            if i > 0 {
                out.write_str(":")?;
            }
            write!(out, "{:x}", u16::from_be_bytes([p.addr[2 * i], p.addr[2 * i + 1]]))?;
        }
        write!(out, "]:{}", p.port)
    }
}
