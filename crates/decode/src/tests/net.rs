//! Sockets: socket, connect/bind addresses (IPv4, IPv6, Unix, abstract,
//! netlink), accept, sendto/recvfrom, socket options, socketpair.

use std::vec::Vec;

use super::{check, Mem, NOMEM};
use crate::nr::*;

const SA: u64 = 0x7ffc_0000_1000;

fn sin(port: u16, addr: [u8; 4]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&port.to_be_bytes());
    v.extend_from_slice(&addr);
    v.extend_from_slice(&[0; 8]);
    v
}

fn sin6(port: u16, addr: [u8; 16], scope: bool) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&10u16.to_le_bytes());
    v.extend_from_slice(&port.to_be_bytes());
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(&addr);
    if scope {
        v.extend_from_slice(&[0; 4]);
    }
    v
}

/// ```c
/// socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP);
/// socket(AF_UNIX, SOCK_DGRAM, 0);
/// socket(AF_INET6, SOCK_DGRAM|SOCK_NONBLOCK, 0);
/// socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
/// ```
#[test]
fn sockets() {
    check(
        SOCKET,
        [2, 0x80001, 6, 0, 0, 0],
        12,
        NOMEM,
        "socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP) = 12",
    );
    check(
        SOCKET,
        [1, 2, 0, 0, 0, 0],
        13,
        NOMEM,
        "socket(AF_UNIX, SOCK_DGRAM, 0)    = 13",
    );
    check(
        SOCKET,
        [10, 0x802, 0, 0, 0, 0],
        14,
        NOMEM,
        "socket(AF_INET6, SOCK_DGRAM|SOCK_NONBLOCK, IPPROTO_IP) = 14",
    );
    let m = Mem::new().ints(SA, &[16, 17]);
    check(
        SOCKETPAIR,
        [1, 1, 0, SA, 0, 0],
        0,
        &m,
        "socketpair(AF_UNIX, SOCK_STREAM, 0, [16, 17]) = 0",
    );
}

/// ```c
/// sin.sin_family = AF_INET; sin.sin_port = htons(80); sin.sin_addr.s_addr = inet_addr("127.0.0.1");
/// connect(s, (struct sockaddr *)&sin, sizeof sin);
/// sun.sun_family = AF_UNIX; strcpy(sun.sun_path, "/tmp/ex/sock");
/// bind(u, (struct sockaddr *)&sun, sizeof sun);
/// s6a.sin6_port = htons(53); inet_pton(AF_INET6, "::1", &s6a.sin6_addr);
/// connect(s6, (struct sockaddr *)&s6a, sizeof s6a);
/// ```
/// and the addresses of the test program in tests/against_strace.rs.
#[test]
fn addresses() {
    let m = Mem::new().put(SA, &sin(80, [127, 0, 0, 1]));
    check(
        CONNECT,
        [12, SA, 16, 0, 0, 0],
        -111,
        &m,
        r#"connect(12, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 ECONNREFUSED (Connection refused)"#,
    );
    let mut un = std::vec![0u8; 110];
    un[0] = 1;
    un[2..14].copy_from_slice(b"/tmp/ex/sock");
    let m = Mem::new().put(SA, &un);
    check(
        BIND,
        [13, SA, 110, 0, 0, 0],
        0,
        &m,
        r#"bind(13, {sa_family=AF_UNIX, sun_path="/tmp/ex/sock"}, 110) = 0"#,
    );
    let mut abs = std::vec![1u8, 0, 0];
    abs.extend_from_slice(b"strata\n");
    let m = Mem::new().put(SA, &abs);
    check(
        CONNECT,
        [9, SA, 10, 0, 0, 0],
        -111,
        &m,
        r#"connect(9, {sa_family=AF_UNIX, sun_path=@"strata\n"}, 10) = -1 ECONNREFUSED (Connection refused)"#,
    );
    let mut one = [0u8; 16];
    one[15] = 1;
    let m = Mem::new().put(SA, &sin6(53, one, true));
    check(
        CONNECT,
        [14, SA, 28, 0, 0, 0],
        0,
        &m,
        r#"connect(14, {sa_family=AF_INET6, sin6_port=htons(53), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0"#,
    );
    let doc = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0x42, 0x83, 0x29];
    let m = Mem::new().put(SA, &sin6(53, doc, true));
    check(
        CONNECT,
        [11, SA, 28, 0, 0, 0],
        0,
        &m,
        r#"connect(11, {sa_family=AF_INET6, sin6_port=htons(53), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:db8::ff00:42:8329", &sin6_addr), sin6_scope_id=0}, 28) = 0"#,
    );
    let mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3];
    let m = Mem::new().put(SA, &sin6(53, mapped, false));
    check(
        CONNECT,
        [11, SA, 24, 0, 0, 0],
        0,
        &m,
        r#"connect(11, {sa_family=AF_INET6, sin6_port=htons(53), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::ffff:10.1.2.3", &sin6_addr)}, 24) = 0"#,
    );
    // An address that cannot be read: `syscall(SYS_connect, 3, (void *)0x7ffc00001000, 16)`.
    check(
        CONNECT,
        [3, SA, 16, 0, 0, 0],
        -14,
        NOMEM,
        "connect(3, 0x7ffc00001000, 16) = -1 EFAULT (Bad address)",
    );
}

/// ```c
/// bind(l, 127.0.0.1:0); listen(l, 5); getsockname(l, &sin, &sl /* 16 */);
/// accept4(l, NULL, NULL, SOCK_NONBLOCK);
/// int one = 1; setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
/// ```
#[test]
fn server_side() {
    let m = Mem::new().put(SA, &sin(40767, [127, 0, 0, 1])).ints(0x6000, &[16]);
    check(
        GETSOCKNAME,
        [15, SA, 0x6000, 0, 0, 0],
        0,
        &m,
        r#"getsockname(15, {sa_family=AF_INET, sin_port=htons(40767), sin_addr=inet_addr("127.0.0.1")}, [16]) = 0"#,
    );
    check(
        LISTEN,
        [15, 5, 0, 0, 0, 0],
        0,
        NOMEM,
        "listen(15, 5)                     = 0",
    );
    check(
        ACCEPT4,
        [15, 0, 0, 0x800, 0, 0],
        -11,
        NOMEM,
        "accept4(15, NULL, NULL, SOCK_NONBLOCK) = -1 EAGAIN (Resource temporarily unavailable)",
    );
    let m = Mem::new().ints(0x6000, &[1]);
    check(
        SETSOCKOPT,
        [15, 1, 2, 0x6000, 4, 0],
        0,
        &m,
        "setsockopt(15, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0",
    );
    check(
        SHUTDOWN,
        [16, 1, 0, 0, 0, 0],
        0,
        NOMEM,
        "shutdown(16, SHUT_WR)             = 0",
    );
}

/// ```c
/// sendto(u, "ping", 4, MSG_DONTWAIT, (struct sockaddr *)&sun, sizeof sun);
/// recvfrom(u, buf, 100, 0, NULL, NULL);
/// ```
#[test]
fn datagrams() {
    let mut un = std::vec![0u8; 110];
    un[0] = 1;
    un[2..14].copy_from_slice(b"/tmp/ex/sock");
    let m = Mem::new().put(SA, &un).put(0x6000, b"ping");
    check(
        SENDTO,
        [13, 0x6000, 4, 0x40, SA, 110],
        4,
        &m,
        r#"sendto(13, "ping", 4, MSG_DONTWAIT, {sa_family=AF_UNIX, sun_path="/tmp/ex/sock"}, 110) = 4"#,
    );
    check(
        RECVFROM,
        [13, 0x6000, 100, 0, 0, 0],
        4,
        &m,
        r#"recvfrom(13, "ping", 100, 0, NULL, NULL) = 4"#,
    );
}

/// The lengths these calls rewrite, as strace shows them, from an
/// [`crate::EntryState`] taken when the call starts (the test program in
/// tests/against_strace.rs: `*len = 128; accept4(srv, &ss, len, SOCK_CLOEXEC)`,
/// `getsockopt(u1, SOL_SOCKET, SO_TYPE, &v, len /* 8 */)`, and a sendfile
/// from offset 3).
#[test]
fn lengths_rewritten_by_the_call() {
    use crate::{entry_state, format_call_with, format_result_with, EntryState, Options};
    let whole = |nr: usize, args: [u64; 6], ret: i64, before: &Mem, after: &Mem, saved: bool| {
        let entry = if saved {
            entry_state(nr, &args, before)
        } else {
            EntryState::NONE
        };
        let mut s = std::string::String::new();
        format_call_with(&mut s, nr, &args, ret, after, &Options::DEFAULT, &entry).unwrap();
        format_result_with(&mut s, nr, &args, ret, after, &Options::DEFAULT).unwrap();
        s
    };
    let before = Mem::new().ints(0x6000, &[128]);
    let after = Mem::new().put(SA, &sin(37942, [127, 0, 0, 1])).ints(0x6000, &[16]);
    let args = [43, SA, 0x6000, 0x80000, 0, 0];
    assert_eq!(
        whole(ACCEPT4, args, 45, &before, &after, true),
        r#"accept4(43, {sa_family=AF_INET, sin_port=htons(37942), sin_addr=inet_addr("127.0.0.1")}, [128 => 16], SOCK_CLOEXEC) = 45"#
    );
    // Without the saved length only the new one is known.
    assert_eq!(
        whole(ACCEPT4, args, 45, &before, &after, false),
        r#"accept4(43, {sa_family=AF_INET, sin_port=htons(37942), sin_addr=inet_addr("127.0.0.1")}, [16], SOCK_CLOEXEC) = 45"#
    );
    let before = Mem::new().ints(0x6000, &[8]);
    let after = Mem::new().ints(0x6000, &[4]).ints(0x7000, &[2]);
    assert_eq!(
        whole(GETSOCKOPT, [46, 1, 3, 0x7000, 0x6000, 0], 0, &before, &after, true),
        "getsockopt(46, SOL_SOCKET, SO_TYPE, [2], [8 => 4]) = 0"
    );
    let before = Mem::new().words(0x6000, &[3]);
    let after = Mem::new().words(0x6000, &[13]);
    assert_eq!(
        whole(SENDFILE, [15, 48, 0x6000, 10, 0, 0], 10, &before, &after, true),
        "sendfile(15, 48, [3] => [13], 10) = 10"
    );
}
