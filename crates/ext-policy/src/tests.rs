use super::*;
use std::string::String;

fn policy(text: &str) -> Sandbox {
    match Sandbox::new(text) {
        Ok(s) => s,
        Err(e) => panic!("{}", String::from_utf8_lossy(e.message())),
    }
}

#[test]
fn parses_and_decides_paths() {
    let s = policy(
        "v=1;name=t;default=allow,13;restrict=rwc,13;path=r,allow,13,/,paths.read[0];path=wc,allow,13,/tmp/out,paths.write[0];path=rwcx,deny,1,/etc/shadow,paths.deny[0]",
    );
    let v = |k, p: &str| s.path_verdict_for(k, p.as_bytes()).0;
    assert_eq!(v(kind::READ, "/etc/passwd"), Act::Allow);
    assert_eq!(v(kind::READ, "/etc/shadow"), Act::Deny);
    assert_eq!(s.path_verdict_for(kind::READ, b"/etc/shadow").1, 1);
    assert_eq!(v(kind::WRITE, "/tmp/out/x"), Act::Allow);
    assert_eq!(v(kind::WRITE, "/tmp/outside"), Act::Deny);
    assert_eq!(v(kind::CREATE, "/tmp/out"), Act::Allow);
    assert_eq!(v(kind::WRITE, "/etc/passwd"), Act::Deny);
    // execute is not restricted.
    assert_eq!(v(kind::EXECUTE, "/bin/sh"), Act::Allow);
    assert_eq!(v(kind::EXECUTE, "/etc/shadow"), Act::Deny);
}

#[test]
fn interest_follows_the_rules() {
    let s = policy("v=1;name=t;default=allow,13;sys=101,deny,1,syscalls.deny");
    let i = s.interest();
    assert!(i.contains(101));
    assert!(!i.contains(0));
    let s = policy("v=1;name=t;default=deny,1");
    assert!(s.interest().contains(0));
    let s = policy("v=1;name=t;default=allow,13;netdefault=deny,13");
    assert!(s.interest().contains(nr::CONNECT) && !s.interest().contains(nr::OPEN));
}

#[test]
fn firewall_first_match_and_families() {
    let s = policy(
        "v=1;name=t;default=allow,13;netdefault=deny,13;net=cbsa,allow,13,1,-,-,any,0,unix;net=ba,allow,13,256,4:7f000000/8,8000-8000,tcp,0,web;net=c,deny,111,2,4:0a000000/8,-,any,1,ten",
    );
    let p = &s.p;
    let peer = |sa: &[u8]| Peer::decode(sa).unwrap();
    let mut v4 = [0u8; 16];
    v4[0] = 2;
    v4[2..4].copy_from_slice(&8000u16.to_be_bytes());
    v4[4..8].copy_from_slice(&[127, 0, 0, 1]);
    let (v, _) = s.net_verdict(op::BIND, AF_INET, Some(Proto::Tcp), &peer(&v4));
    assert_eq!(v.act, Act::Allow);
    // Wrong port, wrong op, wrong protocol: the default.
    let mut other = v4;
    other[2..4].copy_from_slice(&8001u16.to_be_bytes());
    assert_eq!(
        s.net_verdict(op::BIND, AF_INET, Some(Proto::Tcp), &peer(&other)).0.act,
        Act::Deny
    );
    assert_eq!(
        s.net_verdict(op::CONNECT, AF_INET, Some(Proto::Tcp), &peer(&v4)).0.act,
        Act::Deny
    );
    assert_eq!(
        s.net_verdict(op::BIND, AF_INET, Some(Proto::Udp), &peer(&v4)).0.act,
        Act::Deny
    );
    // An IPv4-mapped IPv6 address is the IPv4 host.
    let mut v6 = [0u8; 28];
    v6[0] = 10;
    v6[2..4].copy_from_slice(&8000u16.to_be_bytes());
    v6[18] = 0xff;
    v6[19] = 0xff;
    v6[20..24].copy_from_slice(&[127, 0, 0, 1]);
    assert_eq!(
        s.net_verdict(op::BIND, AF_INET6, Some(Proto::Tcp), &peer(&v6)).0.act,
        Act::Allow
    );
    v6[20] = 10;
    let (v, log) = s.net_verdict(op::CONNECT, AF_INET6, None, &peer(&v6));
    assert_eq!((v.act, v.errno, log), (Act::Deny, 111, true));
    // socket(): unix allowed by its rule; inet because a rule may allow it;
    // inet6 too (family ip); netlink by the default.
    assert_eq!(s.socket_verdict(1, None).0.act, Act::Allow);
    assert_eq!(s.socket_verdict(AF_INET, Some(Proto::Tcp)).0.act, Act::Allow);
    assert_eq!(s.socket_verdict(AF_INET, Some(Proto::Udp)).0.act, Act::Deny);
    assert_eq!(s.socket_verdict(16, None).0.act, Act::Deny);
    assert_eq!(p.nnet, 3);
}

#[test]
fn bad_compiled_text() {
    for t in [
        "",
        "name=x",
        "v=2",
        "v=1;sys=9999,deny,1,x",
        "v=1;sys=1,nope,1,x",
        "v=1;path=q,allow,13,/,x",
        "v=1;path=r,allow,13,rel,x",
        "v=1;net=c,allow,13,2,4:7f/8,-,any,0,x",
        "v=1;net=c,allow,13,2,-,9-x,any,0,x",
        "v=1;default=deny,0",
        "v=1;name=%zz",
        "v=1;bogus=1",
    ] {
        assert!(Sandbox::new(t).is_err(), "{t}");
    }
    let s = policy("v=1;name=a%3bb;default=log,1");
    assert_eq!(s.p.text(s.p.name), b"a;b");
}
