use super::*;

fn ok(text: &str) -> Policy {
    match parse(text, "t.toml", Path::new("/"), false) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn err(text: &str) -> String {
    match parse(text, "t.toml", Path::new("/"), false) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn profiles_parse_and_compile() {
    for (name, _, text) in PROFILES {
        let p = parse(text, &format!("builtin:{name}"), Path::new("/"), false).unwrap();
        let mut s = strata_ext_policy::spec::Policy::empty();
        s.parse_into(&p.compiled()).unwrap();
    }
}

#[test]
fn errors_name_line_and_column() {
    let e = err("[policy]\ndefault = \"maybe\"\n");
    assert!(
        e.contains("line 2, column 11") && e.contains("allow, deny or log"),
        "{e}"
    );
    let e = err("[syscalls]\ndeny = [\"ptrace\", \"nosuchcall\"]\n");
    assert!(
        e.contains("line 2, column 19") && e.contains("unknown system call 'nosuchcall'"),
        "{e}"
    );
    let e = err("[syscalls]\nallow = [\"read\"]\ndeny = [\"read\"]\n");
    assert!(
        e.contains("line 3") && e.contains("contradictory") && e.contains("line 2"),
        "{e}"
    );
    let e = err("[bogus]\n");
    assert!(e.contains("line 1") && e.contains("bogus"), "{e}");
    let e = err("[paths]\nwrite = [\"/no/such/dir\"]\n");
    assert!(e.contains("line 2") && e.contains("/no/such/dir"), "{e}");
    let e = err("[paths]\nwrite = [\"/tmp\"]\ndeny = [\"/tmp\"]\n");
    assert!(e.contains("contradictory"), "{e}");
    let e = err("[network]\n[[network.rule]]\naction = \"allow\"\nfamily = \"inet\"\naddress = \"::1\"\n");
    assert!(e.contains("line 5") && e.contains("family"), "{e}");
    let e = err("[network]\n[[network.rule]]\naction = \"allow\"\nports = \"90-80\"\n");
    assert!(e.contains("line 4"), "{e}");
    let e = err("[syscalls]\ndeny = [\"exit_group\"]\n");
    assert!(e.contains("cannot be denied"), "{e}");
    let e = err("[policy]\nerrno = \"EWHAT\"\n");
    assert!(e.contains("unknown errno"), "{e}");
    let e = err("[syscalls]\ndeny = [\"%nope\"]\n");
    assert!(e.contains("unknown class"), "{e}");
    let e = err("[network]\n[[network.rule]]\naction = \"allow\"\nfamily = \"unix\"\n[[network.rule]]\naction = \"deny\"\nfamily = \"unix\"\n");
    assert!(e.contains("contradictory") && e.contains("line 6"), "{e}");
}

#[test]
fn names_override_their_class() {
    let p = ok("[syscalls]\ndeny = [\"%network\"]\nallow = [\"socket\"]\n");
    let socket = table::by_name("socket").unwrap().nr;
    let connect = table::by_name("connect").unwrap().nr;
    assert_eq!(p.sys[&socket].act, Act::Allow);
    assert_eq!(p.sys[&connect].act, Act::Deny);
}

#[test]
fn default_deny_keeps_the_calls_a_program_needs_to_end() {
    let p = ok("[policy]\ndefault = \"deny\"\n");
    let exit = table::by_name("exit_group").unwrap().nr;
    assert_eq!(p.sys[&exit].act, Act::Allow);
}

#[test]
fn tcp_ports_only_when_every_allowing_rule_names_them() {
    let p = ok("[network]\ndefault = \"deny\"\n[[network.rule]]\naction = \"allow\"\nops = [\"bind\"]\nfamily = \"inet\"\naddress = \"127.0.0.1\"\nports = 8000\n[[network.rule]]\naction = \"allow\"\nfamily = \"unix\"\n");
    let n = p.net.as_ref().unwrap();
    assert_eq!(
        kernel::tcp_ports(n, op::BIND).unwrap().into_iter().collect::<Vec<_>>(),
        [8000]
    );
    assert!(kernel::tcp_ports(n, op::CONNECT).unwrap().is_empty());
    let p = ok("[network]\ndefault = \"deny\"\n[[network.rule]]\naction = \"allow\"\nfamily = \"inet\"\naddress = \"127.0.0.0/8\"\n");
    assert!(kernel::tcp_ports(p.net.as_ref().unwrap(), op::CONNECT).is_none());
}

/// The calls strata-rt's sources name are all in STRATA_NEEDS, so the
/// kernel filters never refuse strata its own calls.
#[test]
fn strata_needs_covers_the_runtime() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src");
    let mut missing = Vec::new();
    for f in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        for piece in text.split("Sysno::").skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if table::by_name(&name).is_some() && !kernel::STRATA_NEEDS.contains(&name.as_str()) {
                missing.push(name);
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "add to STRATA_NEEDS: {missing:?}");
}

#[test]
fn a_kind_allowed_under_the_root_is_not_restricted() {
    // read = ["/"] allows reading everywhere: no restriction for the kernel's
    // Landlock rules or strata to check at every open; the others stay.
    let p = ok("[paths]\nread = [\"/\"]\nwrite = [\"/tmp\"]\ndeny = [\"/etc\"]\n");
    assert_eq!(p.restricted & kind::READ, 0);
    assert_ne!(p.restricted & kind::WRITE, 0);
    assert!(p.paths.iter().all(|r| r.prefix != Path::new("/")), "{:?}", p.paths);
    assert!(p
        .paths
        .iter()
        .any(|r| r.act == Act::Deny && r.prefix == Path::new("/etc")));
    // Still contradictory with a deny of the root itself.
    let e = err("[paths]\nread = [\"/\"]\ndeny = [\"/\"]\n");
    assert!(e.contains("contradictory") && e.contains("paths.read[0]"), "{e}");
}

#[test]
fn reach_rules_default_and_parse() {
    // Signals stay inside by default; abstract sockets when the network
    // denies by default.
    let p = ok("");
    assert_eq!(p.signals, Reach::Inside { explicit: false });
    assert_eq!(p.abstract_unix, Reach::Any);
    let p = ok("[network]\ndefault = \"deny\"\n");
    assert_eq!(p.abstract_unix, Reach::Inside { explicit: false });
    assert!(!p.net.as_ref().unwrap().inherited_allowed);
    let p = ok(
        "[network]\ndefault = \"deny\"\nabstract_unix = \"any\"\ninherited = \"allow\"\n[process]\nsignals = \"any\"\n",
    );
    assert_eq!((p.signals, p.abstract_unix), (Reach::Any, Reach::Any));
    assert!(p.net.as_ref().unwrap().inherited_allowed);
    let p = ok("[network]\nabstract_unix = \"inside\"\n[process]\nsignals = \"inside\"\n");
    assert_eq!(p.signals, Reach::Inside { explicit: true });
    assert_eq!(p.abstract_unix, Reach::Inside { explicit: true });
    let e = err("[process]\nsignals = \"outside\"\n");
    assert!(
        e.contains("line 2, column 11") && e.contains("process.signals must be inside or any"),
        "{e}"
    );
    let e = err("[network]\nabstract_unix = 1\n");
    assert!(e.contains("line 2"), "{e}");
    let e = err("[network]\ninherited = \"keep\"\n");
    assert!(
        e.contains("line 2, column 13") && e.contains("network.inherited must be refuse or allow"),
        "{e}"
    );
}

#[test]
fn calls_named_one_by_one_are_compiled_with_their_places() {
    // Named calls: their places, labels made by the layer; a class: its label.
    let p = ok("[syscalls]\ndeny = [\"ptrace\", \"%ipc\", \"keyctl\"]\nlog = [\"getppid\"]\n");
    let c = p.compiled();
    assert!(c.contains(";sysl=deny,13,101:0+250:2"), "{c}");
    assert!(c.contains(";sysl=log,13,110:0"), "{c}");
    assert!(c.contains("syscalls.deny[1]%20\"%25ipc\""), "{c}");
    let mut s = strata_ext_policy::spec::Policy::empty();
    s.parse_into(&c).unwrap();
    let r = s.sys(101).unwrap();
    assert_eq!((r.act, r.entry), (strata_ext_policy::spec::Act::Deny, 1));
    assert_eq!(r.act.name(), "deny");
    let r = s.sys(250).unwrap();
    assert_eq!(r.entry, 3);
    // A class member keeps its label.
    let ipc = table::by_name("msgget").unwrap().nr as usize;
    assert_eq!(s.text(s.sys(ipc).unwrap().label), b"syscalls.deny[1] \"%ipc\"");
    // Malformed places are refused.
    let mut s = strata_ext_policy::spec::Policy::empty();
    assert!(s.parse_into("v=1;sysl=deny,13,101").is_err());
    let mut s = strata_ext_policy::spec::Policy::empty();
    assert!(s.parse_into("v=1;sysl=deny,13,101:x").is_err());
    let mut s = strata_ext_policy::spec::Policy::empty();
    assert!(s.parse_into("v=1;sysl=deny,13,9999:0").is_err());
    for place in ["4294967295", "65535", "99999999999"] {
        let mut s = strata_ext_policy::spec::Policy::empty();
        let text = format!("v=1;sysl=deny,13,1:{place}");
        assert!(s.parse_into(&text).is_err(), "{text}");
    }
}
