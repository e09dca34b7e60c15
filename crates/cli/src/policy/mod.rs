//! `--policy`: the sandbox policy (docs/policy.md).
//!
//! A policy is a TOML file or a ready profile (`builtin:no-network`,
//! `builtin:read-only-fs`, `builtin:loopback-only`). It is read and checked
//! here, before anything runs (a bad policy is exit status 2 with the line
//! and column), then compiled twice:
//!
//! - into the `policy` layer's argument text ([`Policy::compiled`], parsed
//!   by crates/ext-policy inside the program): every rule, decided
//!   in-process with its name and errno, one log line per decision;
//! - into the kernel backstop ([`kernel`]): seccomp rules and a Landlock
//!   ruleset per policy, and resource limits, installed in the child before
//!   strata-rt starts, so they hold even against a program that attacks
//!   strata itself. [`Policy::enforcement`] says, rule by rule, which half
//!   enforces what.
//!
//! Several `--policy` options stack: each is its own layer, its own seccomp
//! rules and its own Landlock ruleset, and a call must pass all of them
//! (the rules of all of them are one seccomp program, `kernel::merge`; the
//! kernel composes rulesets the same way).

pub mod kernel;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use strata_ext_policy::spec::{kind, op, FAMILY_IP};
use strata_syscall_table as table;
use toml::Spanned;

use crate::layers::position;

/// The ready profiles: name, what it is, its TOML.
pub const PROFILES: [(&str, &str, &str); 3] = [
    (
        "no-network",
        "no network: only AF_UNIX and AF_NETLINK sockets",
        include_str!("profiles/no-network.toml"),
    ),
    (
        "read-only-fs",
        "read anything, write only to terminals and /dev/null-like devices, create nothing",
        include_str!("profiles/read-only-fs.toml"),
    ),
    (
        "loopback-only",
        "network only with 127.0.0.0/8 and ::1 (and AF_UNIX, AF_NETLINK)",
        include_str!("profiles/loopback-only.toml"),
    ),
];

/// Calls always allowed, whatever the policy says: a program must be able
/// to end and to return from a signal handler.
pub const ALWAYS_ALLOWED: [&str; 4] = ["exit", "exit_group", "rt_sigreturn", "restart_syscall"];

/// What a rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Allow,
    Deny,
    Log,
}

impl Act {
    fn as_str(self) -> &'static str {
        match self {
            Act::Allow => "allow",
            Act::Deny => "deny",
            Act::Log => "log",
        }
    }
}

/// How much of the policy the kernel must enforce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backstop {
    /// Every rule the kernel can express is installed (the default).
    Required,
    /// Every rule must be enforced by the kernel, whole; otherwise exit 2.
    Strict,
    /// No kernel half (in-process only; for trying a policy out).
    None,
}

/// One call's rule.
#[derive(Debug, Clone)]
pub struct SysRule {
    pub act: Act,
    pub errno: i32,
    pub label: String,
    /// The call's place in its `syscalls` list when it is named there one
    /// by one (not by a class): its label is then `syscalls.LIST[I] "NAME"`,
    /// which the layer makes itself (`sysl=` in [`Policy::compiled`]).
    pub entry: Option<usize>,
}

/// One path rule.
#[derive(Debug, Clone)]
pub struct PathRule {
    pub kinds: u8,
    pub act: Act,
    pub errno: i32,
    /// Canonical absolute prefix.
    pub prefix: PathBuf,
    pub label: String,
}

/// One network rule.
#[derive(Debug, Clone)]
pub struct NetRule {
    pub ops: u8,
    pub act: Act,
    pub errno: i32,
    pub family: u16,
    pub net: Option<(IpAddr, u8)>,
    pub ports: Option<(u16, u16)>,
    pub proto: &'static str,
    pub log: bool,
    pub label: String,
}

/// The network section.
#[derive(Debug, Clone)]
pub struct Network {
    pub default: Act,
    pub errno: i32,
    pub rules: Vec<NetRule>,
    /// `network.inherited = "allow"`: sockets the program inherits are let
    /// in even when the kernel could not hold the rules on them
    /// (kernel::check_inherited); by default such a socket stops the start.
    pub inherited_allowed: bool,
}

/// Whom the program may reach beyond the processes of its own run, for
/// what Landlock's scopes hold (signals, abstract UNIX sockets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Only processes of this run (the kernel's Landlock domain of the
    /// sandbox). `explicit` when the file says so: then a kernel without
    /// Landlock's scopes is an error; a default holds where the kernel has
    /// them.
    Inside {
        explicit: bool,
    },
    Any,
}

/// A checked policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The file as given, or `builtin:NAME`.
    pub name: String,
    pub default: Act,
    pub errno: i32,
    pub backstop: Backstop,
    pub sys: BTreeMap<u32, SysRule>,
    pub paths: Vec<PathRule>,
    /// Kinds allowed only where a path rule allows them.
    pub restricted: u8,
    pub net: Option<Network>,
    pub max_threads: u32,
    pub max_children: u32,
    /// `process.signals`: signals to processes outside this run.
    pub signals: Reach,
    /// `network.abstract_unix`: connecting to abstract UNIX sockets made
    /// outside this run.
    pub abstract_unix: Reach,
    /// (RLIMIT_*, value, label).
    pub rlimits: Vec<(i32, u64, String)>,
    pub audit: bool,
}

/// A policy that cannot be used; exit status 2.
#[derive(Debug, thiserror::Error)]
#[error("policy {policy}: {msg}")]
pub struct PolicyError {
    pub policy: String,
    pub msg: String,
}

// ---- the TOML -----------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    policy: Option<HeaderToml>,
    syscalls: Option<SysToml>,
    paths: Option<PathsToml>,
    network: Option<NetToml>,
    process: Option<ProcToml>,
    resources: Option<ResToml>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderToml {
    default: Option<Spanned<String>>,
    errno: Option<Spanned<String>>,
    backstop: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SysToml {
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
    #[serde(default)]
    log: Vec<Spanned<String>>,
    errno: Option<BTreeMap<String, Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathsToml {
    read: Option<Vec<Spanned<String>>>,
    write: Option<Vec<Spanned<String>>>,
    create: Option<Vec<Spanned<String>>>,
    execute: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
    errno: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetToml {
    default: Option<Spanned<String>>,
    errno: Option<Spanned<String>>,
    abstract_unix: Option<Spanned<String>>,
    inherited: Option<Spanned<String>>,
    #[serde(default)]
    rule: Vec<NetRuleToml>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetRuleToml {
    action: Spanned<String>,
    ops: Option<Vec<Spanned<String>>>,
    family: Option<Spanned<String>>,
    address: Option<Spanned<String>>,
    ports: Option<Spanned<toml::Value>>,
    protocol: Option<Spanned<String>>,
    log: Option<bool>,
    errno: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcToml {
    max_threads: Option<Spanned<i64>>,
    max_children: Option<Spanned<i64>>,
    signals: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResToml {
    max_open_files: Option<Spanned<toml::Value>>,
    max_file_size: Option<Spanned<toml::Value>>,
    max_memory: Option<Spanned<toml::Value>>,
    max_cpu_seconds: Option<Spanned<toml::Value>>,
    max_core_size: Option<Spanned<toml::Value>>,
}

/// Errno names a policy may use.
const ERRNOS: [(&str, i32); 16] = [
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("EIO", libc::EIO),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EINVAL", libc::EINVAL),
    ("EROFS", libc::EROFS),
    ("ENOSYS", libc::ENOSYS),
    ("ENOTSUP", libc::ENOTSUP),
    ("EAFNOSUPPORT", libc::EAFNOSUPPORT),
    ("EADDRNOTAVAIL", libc::EADDRNOTAVAIL),
    ("ENETUNREACH", libc::ENETUNREACH),
    ("ECONNREFUSED", libc::ECONNREFUSED),
    ("EHOSTUNREACH", libc::EHOSTUNREACH),
    ("ECONNRESET", libc::ECONNRESET),
];

/// Socket families a rule may name.
const FAMILIES: [(&str, u16); 7] = [
    ("any", 0),
    ("unix", 1),
    ("inet", 2),
    ("inet6", 10),
    ("ip", FAMILY_IP),
    ("netlink", 16),
    ("packet", 17),
];

struct Ctx<'a> {
    text: &'a str,
    source: &'a str,
    base: &'a Path,
}

impl Ctx<'_> {
    fn err<T>(&self, at: Option<usize>, msg: impl std::fmt::Display) -> Result<T, PolicyError> {
        let msg = match at {
            Some(at) => format!("{}: {msg}", position(self.text, at)),
            None => msg.to_string(),
        };
        Err(PolicyError {
            policy: self.source.to_string(),
            msg,
        })
    }

    fn errno(&self, s: &Spanned<String>) -> Result<i32, PolicyError> {
        let v = s.get_ref();
        if let Some((_, n)) = ERRNOS.iter().find(|(n, _)| n == v) {
            return Ok(*n);
        }
        match v.parse::<i32>() {
            Ok(n) if (1..4096).contains(&n) => Ok(n),
            _ => self.err(
                Some(s.span().start),
                format!(
                    "unknown errno '{v}' (one of {} or a number 1..4095)",
                    ERRNOS.map(|(n, _)| n).join(", ")
                ),
            ),
        }
    }

    /// `inside` or `any`.
    fn reach(&self, s: &Spanned<String>, what: &str) -> Result<Reach, PolicyError> {
        match s.get_ref().as_str() {
            "inside" => Ok(Reach::Inside { explicit: true }),
            "any" => Ok(Reach::Any),
            v => self.err(
                Some(s.span().start),
                format!("{what} must be inside or any (got '{v}')"),
            ),
        }
    }

    fn act(&self, s: &Spanned<String>, what: &str) -> Result<Act, PolicyError> {
        match s.get_ref().as_str() {
            "allow" => Ok(Act::Allow),
            "deny" => Ok(Act::Deny),
            "log" => Ok(Act::Log),
            v => self.err(
                Some(s.span().start),
                format!("{what} must be allow, deny or log (got '{v}')"),
            ),
        }
    }

    /// A prefix: absolute or relative to where strata runs, canonical, existing.
    fn prefix(&self, s: &Spanned<String>) -> Result<PathBuf, PolicyError> {
        let v = s.get_ref();
        if v.is_empty() || v.contains('\0') {
            return self.err(Some(s.span().start), "an empty path");
        }
        let p = self.base.join(v);
        match std::fs::canonicalize(&p) {
            Ok(c) => Ok(c),
            Err(e) => self.err(
                Some(s.span().start),
                format!(
                    "{}: {} (path rules name existing files: the kernel's Landlock rules are made from them)",
                    p.display(),
                    crate::preflight::io_text(&e)
                ),
            ),
        }
    }
}

/// Reads `--policy ARG`: a file, or `builtin:NAME`.
pub fn load(arg: &str, audit: bool) -> Result<Policy, PolicyError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    if let Some(name) = arg.strip_prefix("builtin:") {
        let Some((_, _, text)) = PROFILES.iter().find(|(n, _, _)| *n == name) else {
            return Err(PolicyError {
                policy: arg.to_string(),
                msg: format!(
                    "no such profile (built in: {})",
                    PROFILES.map(|(n, _, _)| format!("builtin:{n}")).join(", ")
                ),
            });
        };
        return parse(text, arg, &cwd, audit);
    }
    let text = std::fs::read_to_string(arg).map_err(|e| PolicyError {
        policy: arg.to_string(),
        msg: crate::preflight::io_text(&e),
    })?;
    parse(&text, arg, &cwd, audit)
}

/// Parses and checks policy `text` (named `source`; relative prefixes from `base`).
pub fn parse(text: &str, source: &str, base: &Path, audit: bool) -> Result<Policy, PolicyError> {
    let cx = Ctx { text, source, base };
    let f: FileToml = match toml::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            let msg = e.message().lines().next().unwrap_or("").trim_end().to_string();
            return cx.err(e.span().map(|s| s.start), msg);
        }
    };
    let mut p = Policy {
        name: source.to_string(),
        default: Act::Allow,
        errno: libc::EACCES,
        backstop: Backstop::Required,
        sys: BTreeMap::new(),
        paths: Vec::new(),
        restricted: 0,
        net: None,
        max_threads: 0,
        max_children: 0,
        signals: Reach::Inside { explicit: false },
        abstract_unix: Reach::Any,
        rlimits: Vec::new(),
        audit,
    };
    if let Some(h) = &f.policy {
        if let Some(d) = &h.default {
            p.default = cx.act(d, "policy.default")?;
        }
        if let Some(e) = &h.errno {
            p.errno = cx.errno(e)?;
        }
        if let Some(b) = &h.backstop {
            p.backstop = match b.get_ref().as_str() {
                "required" => Backstop::Required,
                "strict" => Backstop::Strict,
                "none" => Backstop::None,
                v => {
                    return cx.err(
                        Some(b.span().start),
                        format!("policy.backstop must be required, strict or none (got '{v}')"),
                    )
                }
            };
        }
    }
    if let Some(s) = &f.syscalls {
        syscalls(&cx, s, &mut p)?;
    }
    for name in ALWAYS_ALLOWED {
        if let Some(e) = table::by_name(name) {
            match p.sys.get(&e.nr) {
                Some(r) if r.act == Act::Deny => {
                    return cx.err(None, format!("'{name}' cannot be denied: a program must be able to end and to return from its signal handlers"));
                }
                Some(_) => {}
                None if p.default != Act::Allow => {
                    p.sys.insert(
                        e.nr,
                        SysRule {
                            act: Act::Allow,
                            errno: p.errno,
                            label: "always allowed".into(),
                            entry: None,
                        },
                    );
                }
                None => {}
            }
        }
    }
    if let Some(s) = &f.paths {
        paths(&cx, s, &mut p)?;
    }
    if let Some(n) = &f.network {
        let net = network(&cx, n, p.errno)?;
        p.abstract_unix = match &n.abstract_unix {
            Some(s) => cx.reach(s, "network.abstract_unix")?,
            // A network that denies by default is closed to the abstract
            // sockets of the machine too, as a network namespace of its own
            // would be (bubblewrap's --unshare-net).
            None if net.default == Act::Deny => Reach::Inside { explicit: false },
            None => Reach::Any,
        };
        p.net = Some(net);
    }
    if let Some(pr) = &f.process {
        let lim = |v: &Option<Spanned<i64>>, what: &str| -> Result<u32, PolicyError> {
            match v {
                None => Ok(0),
                Some(s) => match u32::try_from(*s.get_ref()) {
                    Ok(n) if n > 0 => Ok(n),
                    _ => cx.err(Some(s.span().start), format!("process.{what} must be a number from 1")),
                },
            }
        };
        p.max_threads = lim(&pr.max_threads, "max_threads")?;
        p.max_children = lim(&pr.max_children, "max_children")?;
        if let Some(s) = &pr.signals {
            p.signals = cx.reach(s, "process.signals")?;
        }
    }
    if let Some(r) = &f.resources {
        let mut add = |v: &Option<Spanned<toml::Value>>, res: libc::__rlimit_resource_t, name: &str, sized: bool| {
            if let Some(s) = v {
                let n = match (s.get_ref(), sized) {
                    (toml::Value::Integer(n), _) if *n >= 0 => Some(*n as u64),
                    (toml::Value::String(t), true) => size(t),
                    _ => None,
                };
                match n {
                    Some(n) => {
                        p.rlimits.push((res as i32, n, format!("resources.{name}")));
                        Ok(())
                    }
                    None => cx.err(
                        Some(s.span().start),
                        format!(
                            "resources.{name} must be {}",
                            if sized {
                                "a size like 4096, \"64M\" or \"2G\""
                            } else {
                                "a number"
                            }
                        ),
                    ),
                }
            } else {
                Ok(())
            }
        };
        add(&r.max_open_files, libc::RLIMIT_NOFILE, "max_open_files", false)?;
        add(&r.max_file_size, libc::RLIMIT_FSIZE, "max_file_size", true)?;
        add(&r.max_memory, libc::RLIMIT_AS, "max_memory", true)?;
        add(&r.max_cpu_seconds, libc::RLIMIT_CPU, "max_cpu_seconds", false)?;
        add(&r.max_core_size, libc::RLIMIT_CORE, "max_core_size", true)?;
    }
    if audit && p.backstop == Backstop::Strict {
        return cx.err(
            None,
            "--audit cannot be honoured with backstop = \"strict\": audit mode installs no kernel backstop",
        );
    }
    Ok(p)
}

/// `64M` -> 67108864.
fn size(t: &str) -> Option<u64> {
    let (num, mult) = match t.as_bytes().last()? {
        b'K' | b'k' => (&t[..t.len() - 1], 1u64 << 10),
        b'M' | b'm' => (&t[..t.len() - 1], 1 << 20),
        b'G' | b'g' => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

fn syscalls(cx: &Ctx, s: &SysToml, p: &mut Policy) -> Result<(), PolicyError> {
    // Where each call was named, to report contradictions.
    let mut seen: BTreeMap<u32, (Act, usize, bool)> = BTreeMap::new();
    let errnos: BTreeMap<String, i32> = match &s.errno {
        Some(m) => {
            let mut out = BTreeMap::new();
            for (k, v) in m {
                if table::by_name(k).is_none() {
                    return cx.err(
                        Some(v.span().start),
                        format!("syscalls.errno: unknown system call '{k}'"),
                    );
                }
                out.insert(k.clone(), cx.errno(v)?);
            }
            out
        }
        None => BTreeMap::new(),
    };
    for (list, act) in [(&s.allow, Act::Allow), (&s.deny, Act::Deny), (&s.log, Act::Log)] {
        for (i, w) in list.iter().enumerate() {
            let name = w.get_ref();
            let at = w.span().start;
            let label = format!("syscalls.{}[{i}] \"{name}\"", act.as_str());
            let (nrs, is_class): (Vec<u32>, bool) = if let Some(class) = name.strip_prefix('%') {
                let Some(c) = table::Class::ALL.iter().find(|c| c.as_str() == class) else {
                    return cx.err(
                        Some(at),
                        format!(
                            "unknown class '%{class}' (one of {})",
                            table::Class::ALL.map(|c| format!("%{}", c.as_str())).join(" ")
                        ),
                    );
                };
                (
                    table::entries()
                        .iter()
                        .filter(|e| e.class == *c)
                        .map(|e| e.nr)
                        .collect(),
                    true,
                )
            } else {
                match table::by_name(name) {
                    Some(e) => (vec![e.nr], false),
                    None => {
                        return cx.err(
                            Some(at),
                            format!("unknown system call '{name}' (names as in docs/syscalls.md, or a %class)"),
                        )
                    }
                }
            };
            for nr in nrs {
                if let Some(&(prev, prev_at, prev_class)) = seen.get(&nr) {
                    if prev_class == is_class && prev != act {
                        let sc = table::name(nr as usize).unwrap_or("?");
                        return cx.err(
                            Some(at),
                            format!(
                                "contradictory rules: '{sc}' is already {} at {}",
                                match prev {
                                    Act::Allow => "allowed",
                                    Act::Deny => "denied",
                                    Act::Log => "logged",
                                },
                                position(cx.text, prev_at)
                            ),
                        );
                    }
                    // A name overrides its class.
                    if prev_class == is_class || is_class {
                        continue;
                    }
                }
                seen.insert(nr, (act, at, is_class));
                let sc = table::name(nr as usize).unwrap_or("?");
                p.sys.insert(
                    nr,
                    SysRule {
                        act,
                        errno: errnos.get(sc).copied().unwrap_or(p.errno),
                        label: label.clone(),
                        entry: (!is_class).then_some(i),
                    },
                );
            }
        }
    }
    Ok(())
}

fn paths(cx: &Ctx, s: &PathsToml, p: &mut Policy) -> Result<(), PolicyError> {
    let errno = match &s.errno {
        Some(e) => cx.errno(e)?,
        None => p.errno,
    };
    let mut everywhere: Vec<PathRule> = Vec::new();
    for (list, k, name) in [
        (&s.read, kind::READ, "read"),
        (&s.write, kind::WRITE, "write"),
        (&s.create, kind::CREATE, "create"),
        (&s.execute, kind::EXECUTE, "execute"),
    ] {
        let Some(list) = list else { continue };
        let rules = list
            .iter()
            .enumerate()
            .map(|(i, w)| {
                Ok(PathRule {
                    kinds: k,
                    act: Act::Allow,
                    errno,
                    prefix: cx.prefix(w)?,
                    label: format!("paths.{name}[{i}] \"{}\"", w.get_ref()),
                })
            })
            .collect::<Result<Vec<_>, PolicyError>>()?;
        if let Some(all) = rules.iter().find(|r| r.prefix == Path::new("/")) {
            // Allowed under / is allowed everywhere: the kind is not
            // restricted at all, so neither Landlock nor strata checks it at
            // every open (a deny rule still does, in-process).
            everywhere.push(all.clone());
            continue;
        }
        p.restricted |= k;
        p.paths.extend(rules);
    }
    for (i, w) in s.deny.iter().enumerate() {
        let prefix = cx.prefix(w)?;
        if let Some(allow) = p.paths.iter().chain(&everywhere).find(|r| r.prefix == prefix) {
            return cx.err(
                Some(w.span().start),
                format!(
                    "contradictory rules: {} is both denied and allowed by {}",
                    prefix.display(),
                    allow.label
                ),
            );
        }
        p.paths.push(PathRule {
            kinds: kind::ALL,
            act: Act::Deny,
            errno,
            prefix,
            label: format!("paths.deny[{i}] \"{}\"", w.get_ref()),
        });
    }
    Ok(())
}

fn network(cx: &Ctx, n: &NetToml, errno: i32) -> Result<Network, PolicyError> {
    let mut net = Network {
        default: Act::Allow,
        errno,
        rules: Vec::new(),
        inherited_allowed: false,
    };
    if let Some(i) = &n.inherited {
        net.inherited_allowed = match i.get_ref().as_str() {
            "refuse" => false,
            "allow" => true,
            v => {
                return cx.err(
                    Some(i.span().start),
                    format!("network.inherited must be refuse or allow (got '{v}')"),
                )
            }
        };
    }
    if let Some(e) = &n.errno {
        net.errno = cx.errno(e)?;
    }
    if let Some(d) = &n.default {
        net.default = cx.act(d, "network.default")?;
        if net.default == Act::Log {
            return cx.err(Some(d.span().start), "network.default must be allow or deny");
        }
    }
    for (i, r) in n.rule.iter().enumerate() {
        let act = cx.act(&r.action, "action")?;
        let mut ops = 0;
        match &r.ops {
            None => ops = op::ALL,
            Some(list) => {
                for o in list {
                    ops |= match o.get_ref().as_str() {
                        "connect" => op::CONNECT,
                        "bind" => op::BIND,
                        "send" => op::SEND,
                        "accept" => op::ACCEPT,
                        v => {
                            return cx.err(
                                Some(o.span().start),
                                format!("unknown operation '{v}' (connect, bind, send, accept)"),
                            )
                        }
                    };
                }
                if ops == 0 {
                    return cx.err(Some(r.action.span().start), "ops is empty");
                }
            }
        }
        let mut family = 0;
        if let Some(f) = &r.family {
            family = match FAMILIES.iter().find(|(n, _)| n == f.get_ref()) {
                Some((_, v)) => *v,
                None => {
                    return cx.err(
                        Some(f.span().start),
                        format!(
                            "unknown family '{}' (one of {})",
                            f.get_ref(),
                            FAMILIES.map(|(n, _)| n).join(", ")
                        ),
                    )
                }
            };
        }
        let mut netaddr = None;
        if let Some(a) = &r.address {
            let text = a.get_ref();
            let (addr, len) = text
                .split_once('/')
                .map_or((text.as_str(), None), |(x, l)| (x, Some(l)));
            let ip: IpAddr = match addr.parse() {
                Ok(ip) => ip,
                Err(_) => return cx.err(Some(a.span().start), format!("'{text}' is not an IP address or CIDR")),
            };
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let len = match len.map(str::parse::<u8>) {
                None => max,
                Some(Ok(l)) if l <= max => l,
                _ => {
                    return cx.err(
                        Some(a.span().start),
                        format!("bad prefix length in '{text}' (0..{max})"),
                    )
                }
            };
            let fam_ok = match (family, ip.is_ipv4()) {
                (0, _) | (FAMILY_IP, _) => true,
                (2, true) | (10, false) => true,
                // An IPv4 rule also covers IPv4-mapped IPv6 addresses.
                (10, true) => true,
                _ => false,
            };
            if !fam_ok {
                return cx.err(
                    Some(a.span().start),
                    format!("address '{text}' does not belong to this rule's family"),
                );
            }
            if family == 0 {
                family = FAMILY_IP;
            }
            netaddr = Some((ip, len));
        }
        let mut ports = None;
        if let Some(pv) = &r.ports {
            let bad = || {
                cx.err(
                    Some(pv.span().start),
                    "ports must be a port (80) or a range (\"8000-8100\")",
                )
            };
            let range = match pv.get_ref() {
                toml::Value::Integer(n) => u16::try_from(*n).ok().map(|p| (p, p)),
                toml::Value::String(s) => {
                    let (lo, hi) = s.split_once('-').unwrap_or((s, s));
                    match (lo.trim().parse::<u16>(), hi.trim().parse::<u16>()) {
                        (Ok(lo), Ok(hi)) if lo <= hi => Some((lo, hi)),
                        _ => None,
                    }
                }
                _ => None,
            };
            match range {
                Some(r) => ports = Some(r),
                None => return bad(),
            }
            if family == 0 {
                family = FAMILY_IP;
            }
            if !matches!(family, 2 | 10 | FAMILY_IP) {
                return cx.err(Some(pv.span().start), "ports go with the inet, inet6 or ip families");
            }
        }
        let proto = match r.protocol.as_ref().map(|p| p.get_ref().as_str()) {
            None | Some("any") => "any",
            Some("tcp") => "tcp",
            Some("udp") => "udp",
            Some(v) => {
                return cx.err(
                    r.protocol.as_ref().map(|p| p.span().start),
                    format!("protocol must be tcp, udp or any (got '{v}')"),
                )
            }
        };
        net.rules.push(NetRule {
            ops,
            act,
            errno: match &r.errno {
                Some(e) => cx.errno(e)?,
                None => net.errno,
            },
            family,
            net: netaddr,
            ports,
            proto,
            log: r.log.unwrap_or(act == Act::Log),
            label: format!("network.rule[{i}]"),
        });
    }
    // Two rules that match exactly the same and decide differently.
    for (i, a) in net.rules.iter().enumerate() {
        for b in &net.rules[..i] {
            if a.ops == b.ops
                && a.family == b.family
                && a.net == b.net
                && a.ports == b.ports
                && a.proto == b.proto
                && (a.act == Act::Deny) != (b.act == Act::Deny)
            {
                return cx.err(
                    n.rule.get(i).map(|r| r.action.span().start),
                    format!(
                        "contradictory rules: {} matches exactly what {} matches and decides otherwise",
                        a.label, b.label
                    ),
                );
            }
        }
    }
    Ok(net)
}

/// Refuses a policy that lets the program write or create where strata
/// sessions keep their state (`dirs`): the program could change other
/// sessions' trace rings and site caches (the site cache tells their
/// processes which code to rewrite).
pub fn check_session_dirs(p: &Policy, dirs: &[PathBuf]) -> Result<(), PolicyError> {
    for r in p
        .paths
        .iter()
        .filter(|r| r.act != Act::Deny && r.kinds & (kind::WRITE | kind::CREATE) != 0)
    {
        // Compare canonical paths (a prefix is canonical; the directory may
        // not exist yet, then its parent is).
        for d in dirs {
            let canon = std::fs::canonicalize(d)
                .or_else(|_| {
                    let parent = d.parent().unwrap_or(Path::new("/"));
                    std::fs::canonicalize(parent).map(|c| c.join(d.file_name().unwrap_or_default()))
                })
                .unwrap_or_else(|_| d.clone());
            if canon.starts_with(&r.prefix) {
                return Err(PolicyError {
                    policy: p.name.clone(),
                    msg: format!(
                        "{} would let the program write {}, where this user's strata sessions keep their state (trace rings, site caches); allow a directory below it instead (e.g. {}/build), and point TMPDIR there",
                        r.label,
                        canon.display(),
                        r.prefix.display()
                    ),
                });
            }
        }
    }
    Ok(())
}

// ---- the compiled form ---------------------------------------------------------

/// Percent-encodes `b` for the compiled form.
fn pct(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        if (0x21..=0x7e).contains(&c) && !b"%;,=".contains(&c) {
            s.push(c as char);
        } else {
            let _ = write!(s, "%{c:02x}");
        }
    }
    s
}

fn kinds_text(k: u8) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (kind::READ, 'r'),
        (kind::WRITE, 'w'),
        (kind::CREATE, 'c'),
        (kind::EXECUTE, 'x'),
    ] {
        if k & bit != 0 {
            s.push(c);
        }
    }
    s
}

impl Policy {
    /// Whether the kernel half is installed for this policy (not
    /// `backstop = "none"`, not `--audit`).
    pub fn kernel_enforced(&self) -> bool {
        self.backstop != Backstop::None && !self.audit
    }

    /// The `policy` layer's arguments (crates/ext-policy/src/spec.rs).
    pub fn compiled(&self) -> String {
        let mut s = format!(
            "v=1;name={};default={},{}",
            pct(self.name.as_bytes()),
            self.default.as_str(),
            self.errno
        );
        if self.audit {
            s.push_str(";audit");
        } else if self.backstop != Backstop::None {
            s.push_str(";kernel");
        }
        // Calls with the same rule go in one item; calls named one by one
        // in a list, with their places (the layer makes their labels: the
        // configuration is handled byte by byte at every exec).
        let mut groups: BTreeMap<(&str, i32, &str), Vec<String>> = BTreeMap::new();
        let mut listed: BTreeMap<(&str, i32), Vec<String>> = BTreeMap::new();
        for (nr, r) in &self.sys {
            match r.entry {
                Some(i) => listed
                    .entry((r.act.as_str(), r.errno))
                    .or_default()
                    .push(format!("{nr}:{i}")),
                None => groups
                    .entry((r.act.as_str(), r.errno, r.label.as_str()))
                    .or_default()
                    .push(nr.to_string()),
            }
        }
        for ((act, errno, label), nrs) in groups {
            let _ = write!(s, ";sys={},{act},{errno},{}", nrs.join("+"), pct(label.as_bytes()));
        }
        for ((act, errno), nrs) in listed {
            // (The list is the action's: syscalls.allow, .deny, .log.)
            let _ = write!(s, ";sysl={act},{errno},{}", nrs.join("+"));
        }
        if self.restricted != 0 {
            let _ = write!(s, ";restrict={},{}", kinds_text(self.restricted), self.errno);
        }
        use std::os::unix::ffi::OsStrExt;
        for r in &self.paths {
            let _ = write!(
                s,
                ";path={},{},{},{},{}",
                kinds_text(r.kinds),
                r.act.as_str(),
                r.errno,
                pct(r.prefix.as_os_str().as_bytes()),
                pct(r.label.as_bytes())
            );
        }
        if let Some(n) = &self.net {
            let _ = write!(s, ";netdefault={},{}", n.default.as_str(), n.errno);
            for r in &n.rules {
                let addr = match r.net {
                    None => "-".to_string(),
                    Some((IpAddr::V4(a), l)) => {
                        format!(
                            "4:{}/{l}",
                            a.octets().iter().map(|b| format!("{b:02x}")).collect::<String>()
                        )
                    }
                    Some((IpAddr::V6(a), l)) => {
                        format!(
                            "6:{}/{l}",
                            a.octets().iter().map(|b| format!("{b:02x}")).collect::<String>()
                        )
                    }
                };
                let ports = r.ports.map_or("-".to_string(), |(lo, hi)| format!("{lo}-{hi}"));
                let ops = [(op::CONNECT, 'c'), (op::BIND, 'b'), (op::SEND, 's'), (op::ACCEPT, 'a')]
                    .iter()
                    .filter(|(b, _)| r.ops & b != 0)
                    .map(|(_, c)| *c)
                    .collect::<String>();
                let _ = write!(
                    s,
                    ";net={ops},{},{},{},{addr},{ports},{},{},{}",
                    r.act.as_str(),
                    r.errno,
                    r.family,
                    r.proto,
                    u8::from(r.log),
                    pct(r.label.as_bytes())
                );
            }
        }
        if self.max_threads > 0 {
            let _ = write!(s, ";threads={}", self.max_threads);
        }
        if self.max_children > 0 {
            let _ = write!(s, ";children={}", self.max_children);
        }
        s
    }
}

#[cfg(test)]
mod tests;
