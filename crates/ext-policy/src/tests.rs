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
    assert_eq!(p.net.len(), 3);
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
        "v=1;name=ab%2",
        "v=1;name=ab%",
        "v=1;name=%25%",
        "v=1;bogus=1",
    ] {
        assert!(Sandbox::new(t).is_err(), "{t}");
    }
    let s = policy("v=1;name=a%3bb;default=log,1");
    assert_eq!(s.p.text(s.p.name), b"a;b");
    let s = policy("v=1;name=%25%2c%3b;default=log,1;path=w,allow,13,/a%2cb%25,x%3b");
    assert_eq!(s.p.text(s.p.name), b"%,;");
    assert_eq!(s.p.text(s.p.paths[0].prefix), b"/a,b%");
    assert_eq!(s.p.text(s.p.paths[0].label), b"x;");
    // The text pool's end: what fits is taken whole, one byte more is refused.
    let fill = |n: usize| std::format!("v=1;name={}", "n".repeat(n));
    assert!(Sandbox::new(&fill(spec::TEXT_CAP)).is_ok());
    assert!(Sandbox::new(&fill(spec::TEXT_CAP + 1)).is_err());
    assert!(Sandbox::new(&std::format!("v=1;name={}%41", "n".repeat(spec::TEXT_CAP))).is_err());
    // Call rules: one per `sys=` item (an item may name several numbers,
    // the last item naming a number decides it), at most NR_MAX of them.
    let s = policy("v=1;sys=1+2,deny,5,a;sys=2,log,13,b");
    assert_eq!((s.sys_verdict(1).act, s.sys_verdict(1).errno), (Act::Deny, 5));
    assert_eq!(s.sys_verdict(2).act, Act::Log);
    assert!(matches!(s.sys_verdict(2).rule, Rule::Named(l) if s.p.text(l) == b"b"));
    assert!(matches!(s.sys_verdict(3).rule, Rule::Text("policy.default")));
    let items = |n: usize| std::format!("v=1{}", ";sys=7,deny,1,x".repeat(n));
    assert!(Sandbox::new(&items(spec::NR_MAX)).is_ok());
    assert!(Sandbox::new(&items(spec::NR_MAX + 1)).is_err());
}

/// What a call of each modelled number can need is within what its op can
/// need, so the narrowed interest drops no call a rule speaks about; and
/// the calls that only look at a path stay out of it.
#[test]
fn path_interest_covers_every_kind_a_call_needs() {
    let s = policy("v=1;name=t;default=allow,13;kernel;restrict=wc,13;path=wc,allow,13,/tmp/out,paths.write[0]");
    let i = s.interest();
    for flags in [0u64, 1, 2, 0o100, 0o1001, 0o20200000, 0o10000000, 0x100, 0x400, 0x1000] {
        for (nr, name, op) in strata_abi::modelled() {
            let mut args = [0u64; 6];
            for a in args.iter_mut() {
                *a = flags;
            }
            let c = Call::new(nr, args, 1, 1);
            for slot in c.path_slots() {
                // openat2's how is read from memory: flags 0 there (EFAULT).
                let Ok((k, creat)) = s.kinds_of(&c, slot) else { continue };
                let need = k | if creat { kind::CREATE } else { 0 };
                assert_eq!(need & !op_kinds(op), 0, "{name} with {flags:o} needs {need:b}");
                if need & s.p.relevant != 0 {
                    assert!(i.contains(nr), "{name} with {flags:o} is not seen");
                }
            }
        }
    }
    for nr in [
        257, /* openat */
        nr::OPEN,
        87, /* unlink */
        76, /* truncate */
        90, /* chmod */
        nr::EXECVE,
    ] {
        assert!(i.contains(nr), "{nr}");
    }
    for nr in [
        4,   /* stat */
        21,  /* access */
        89,  /* readlink */
        262, /* newfstatat */
        332, /* statx */
    ] {
        assert!(!i.contains(nr), "{nr}");
    }
    // Only execution restricted: opens stay out too.
    let s = policy("v=1;name=t;default=allow,13;restrict=x,13;path=x,allow,13,/usr,paths.execute[0]");
    assert!(!s.interest().contains(257) && s.interest().contains(nr::EXECVE));
}
