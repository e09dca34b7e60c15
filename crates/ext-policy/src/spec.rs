//! The compiled policy: what the launcher hands the layer as its argument
//! text, parsed once into fixed arrays.
//!
//! The launcher (crates/cli/src/policy) reads the TOML policy, checks it,
//! resolves relative prefixes and class names, and writes this form; users
//! never type it. Items are separated by `;`, fields by `,`; text fields
//! (names, prefixes, labels) are percent-encoded (`%XX` for `%`, `;`, `,`,
//! `=`, bytes outside 0x21..0x7e).
//!
//! ```text
//! v=1                                 format version
//! name=TEXT                           the policy's name (file or builtin:NAME)
//! default=ACT,ERRNO                   calls no sys= item names
//! audit                               log instead of denying
//! sys=NR[+NR...],ACT,ERRNO,LABEL     calls' rule
//! sysl=ACT,ERRNO,NR:I[+NR:I...]      calls named one by one in the file's
//!                                     syscalls.ACT list: each call's label is
//!                                     `syscalls.ACT[I] "NAME"`, made when a line
//!                                     is logged (the launch configuration is
//!                                     handled byte by byte at every exec)
//! path=KINDS,ACT,ERRNO,PREFIX,LABEL   KINDS: letters r w c x
//! restrict=KINDS,ERRNO                kinds allowed only where a path= allows them
//! net=OPS,ACT,ERRNO,FAMILY,ADDR,PORTS,PROTO,LOG,LABEL
//!                                     OPS: letters c(onnect) b(ind) s(end) a(ccept)
//!                                     FAMILY: a number (AF_*), 0 any, 256 inet or inet6
//!                                     ADDR: - | 4:HEX8/LEN | 6:HEX32/LEN
//!                                     PORTS: - | LO-HI; PROTO: any|tcp|udp; LOG: 0|1
//! netdefault=ACT,ERRNO                network calls no net= item matches
//! threads=N                           threads alive in one process, at most
//! children=N                          child processes alive per process, at most
//! kernel                              the kernel backstop is installed: memfds are
//!                                     made not executable (the filter refuses the
//!                                     others); allowed paths may be judged lexically
//! ```
//! ACT is `allow`, `deny` or `log` (allow, with a log line).

use arrayvec::ArrayVec;
use strata_ext::InitError;
use strata_proto::Unescape;

/// Most `path=` items.
pub const MAX_PATH_RULES: usize = 64;
/// Most `net=` items.
pub const MAX_NET_RULES: usize = 32;
/// Bytes for names, prefixes and labels.
pub const TEXT_CAP: usize = 8192;
/// Call numbers a `sys=` item may name.
pub const NR_MAX: usize = 512;

/// What a rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Act {
    #[default]
    Allow,
    Deny,
    /// Allow, with a log line.
    Log,
}

/// Access kinds of path rules.
pub mod kind {
    pub const READ: u8 = 1;
    pub const WRITE: u8 = 2;
    pub const CREATE: u8 = 4;
    pub const EXECUTE: u8 = 8;
    pub const ALL: u8 = READ | WRITE | CREATE | EXECUTE;
    /// The kinds in `k` as the TOML names them (`read`, ...), first one.
    pub fn name(k: u8) -> &'static str {
        match k {
            _ if k & READ != 0 => "read",
            _ if k & WRITE != 0 => "write",
            _ if k & CREATE != 0 => "create",
            _ => "execute",
        }
    }
}

/// Network operations of `net=` rules.
pub mod op {
    pub const CONNECT: u8 = 1;
    pub const BIND: u8 = 2;
    pub const SEND: u8 = 4;
    pub const ACCEPT: u8 = 8;
    pub const ALL: u8 = CONNECT | BIND | SEND | ACCEPT;
}

/// `FAMILY` value meaning AF_INET or AF_INET6.
pub const FAMILY_IP: u16 = 256;

/// Socket protocol of a `net=` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Proto {
    #[default]
    Any,
    Tcp,
    Udp,
}

/// A piece of [`Policy::text`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    at: u16,
    len: u16,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SysRule {
    pub act: Act,
    pub errno: u16,
    /// Empty: the call is not listed (the default applies), or it is a
    /// `sysl=` item's.
    pub label: Span,
    /// 1 + the call's place in its list, for a `sysl=` item; 0 otherwise.
    pub entry: u16,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct PathRule {
    pub kinds: u8,
    pub act: Act,
    pub errno: u16,
    pub prefix: Span,
    pub label: Span,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct NetRule {
    pub ops: u8,
    pub act: Act,
    pub errno: u16,
    /// AF_* number, 0 for any, [`FAMILY_IP`] for inet or inet6.
    pub family: u16,
    /// Network address (IPv4 in the first 4 bytes when `v4`).
    pub addr: [u8; 16],
    /// Prefix length; `None`: any address.
    pub plen: Option<u8>,
    pub v4: bool,
    pub ports: Option<(u16, u16)>,
    pub proto: Proto,
    pub log: bool,
    pub label: Span,
}

/// A parsed policy, built at every process start into strata's arena.
/// Only its call index is initialized whole (1 KiB); the rules and the
/// text take the room they fill (`ArrayVec`), so a start writes, and
/// faults in, little more than the rules it has.
#[repr(C)]
pub struct Policy {
    pub name: Span,
    pub default: Act,
    pub default_errno: u16,
    pub audit: bool,
    /// Kinds allowed only where a rule allows them.
    pub restricted: u8,
    /// Kinds a path rule or a restriction speaks about (derived at parse).
    pub relevant: u8,
    /// Kinds some denying path rule speaks about (derived at parse).
    pub denied: u8,
    pub restrict_errno: u16,
    /// A `netdefault=` item was given: network calls are checked.
    pub net_on: bool,
    pub net_default: Act,
    pub net_errno: u16,
    pub max_threads: u32,
    pub max_children: u32,
    /// The kernel backstop is installed (`kernel`): add MFD_NOEXEC_SEAL to
    /// memfd_create and refuse MFD_EXEC; Landlock resolves allowed paths.
    pub kernel: bool,
    /// Per call number: 0 when no `sys=` item names it, else 1 + the index
    /// of its rule in `sys_rules`.
    sys_at: [u16; NR_MAX],
    // The rest is mostly room, each filled from its start.
    pub paths: ArrayVec<PathRule, MAX_PATH_RULES>,
    pub net: ArrayVec<NetRule, MAX_NET_RULES>,
    sys_rules: ArrayVec<SysRule, NR_MAX>,
    text: ArrayVec<u8, TEXT_CAP>,
}

/// Why the compiled form was refused: small, so that the parse's many
/// error paths do not each reserve an [`InitError`] (248 bytes) in its
/// frame, every page of which a process start would touch (stack probes);
/// the message is written once, by [`Bad::message`].
#[derive(Debug, Clone, Copy)]
enum Bad<'a> {
    /// A malformed item: what was wrong, and the item.
    Item(&'static str, &'a str),
    Msg(&'static str),
}

impl Bad<'_> {
    #[cold]
    fn message(self) -> InitError {
        match self {
            Bad::Item(what, item) => {
                let mut e = InitError::new("policy: bad compiled item (");
                e.push(what);
                e.push("): ");
                e.push(item.get(..item.len().min(120)).unwrap_or(""));
                e
            }
            Bad::Msg(m) => InitError::new(m),
        }
    }
}

fn bad<'a>(what: &'static str, item: &'a str) -> Bad<'a> {
    Bad::Item(what, item)
}

impl Act {
    /// As the policy file says it (and names the `syscalls` list).
    pub fn name(self) -> &'static str {
        match self {
            Act::Allow => "allow",
            Act::Deny => "deny",
            Act::Log => "log",
        }
    }
}

fn act(s: &str) -> Option<Act> {
    match s {
        "allow" => Some(Act::Allow),
        "deny" => Some(Act::Deny),
        "log" => Some(Act::Log),
        _ => None,
    }
}

fn hexval(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The letters of access kinds in the compiled form.
const KIND_LETTERS: [(u8, u8); 4] = [
    (b'r', kind::READ),
    (b'w', kind::WRITE),
    (b'c', kind::CREATE),
    (b'x', kind::EXECUTE),
];

fn letters(s: &str, set: &[(u8, u8)]) -> Option<u8> {
    let mut v = 0;
    for c in s.bytes() {
        v |= set.iter().find(|(l, _)| *l == c)?.1;
    }
    Some(v)
}

impl Policy {
    /// An empty policy: everything allowed.
    pub fn empty() -> Policy {
        Policy {
            name: Span { at: 0, len: 0 },
            default: Act::Allow,
            default_errno: 13,
            audit: false,
            sys_at: [0; NR_MAX],
            sys_rules: ArrayVec::new(),
            paths: ArrayVec::new(),
            restricted: 0,
            relevant: 0,
            denied: 0,
            restrict_errno: 13,
            net: ArrayVec::new(),
            net_on: false,
            net_default: Act::Allow,
            net_errno: 13,
            max_threads: 0,
            max_children: 0,
            kernel: false,
            text: ArrayVec::new(),
        }
    }

    /// The `sys=` rule naming call `nr`, if one does.
    pub fn sys(&self, nr: usize) -> Option<&SysRule> {
        let at = *self.sys_at.get(nr)?;
        self.sys_rules.get(usize::from(at).checked_sub(1)?)
    }

    /// The call numbers some `sys=` item names, with their rules.
    pub fn listed(&self) -> impl Iterator<Item = (usize, &SysRule)> {
        (0..NR_MAX).filter_map(|n| Some((n, self.sys(n)?)))
    }

    /// The bytes of `s`.
    pub fn text(&self, s: Span) -> &[u8] {
        self.text
            .get(s.at as usize..s.at as usize + s.len as usize)
            .unwrap_or(&[])
    }

    /// Percent-decodes `s` into the text pool.
    fn put<'a>(&mut self, s: &'a str) -> Result<Span, Bad<'a>> {
        let at = self.text.len();
        let text = &mut self.text;
        strata_proto::unescape_to(s.as_bytes(), hexval, |piece| {
            text.try_extend_from_slice(piece).map_err(|_| Unescape::TooLong)
        })
        .map_err(|e| match e {
            Unescape::TooLong => Bad::Msg("policy: the rules' text is too long"),
            Unescape::Malformed => bad("escape", s),
        })?;
        Ok(Span {
            at: at as u16,
            len: (self.text.len() - at) as u16,
        })
    }

    /// Parses the compiled form (see the module docs) into `self`, which
    /// starts [`Policy::empty`].
    #[allow(clippy::result_large_err)] // start-up only; see strata_ext::InitError
    pub fn parse_into(&mut self, args: &str) -> Result<(), InitError> {
        self.parse(args).map_err(Bad::message)
    }

    fn parse<'a>(&mut self, args: &'a str) -> Result<(), Bad<'a>> {
        let mut version = false;
        for item in args.split(';').filter(|i| !i.is_empty()) {
            let (key, val) = item.split_once('=').unwrap_or((item, ""));
            let f: [&str; 9] = {
                let mut f = [""; 9];
                for (slot, v) in f.iter_mut().zip(val.split(',')) {
                    *slot = v;
                }
                f
            };
            let num = |s: &str, what: &'static str| s.parse::<u32>().map_err(|_| bad(what, item));
            let errno = |s: &str| match s.parse::<u16>() {
                Ok(e) if (1..4096).contains(&e) => Ok(e),
                _ => Err(bad("errno", item)),
            };
            let act_of = |s: &str| act(s).ok_or_else(|| bad("action", item));
            match key {
                "v" if val == "1" => version = true,
                "v" => return Err(bad("version", item)),
                "name" => self.name = self.put(val)?,
                "audit" => self.audit = true,
                "kernel" => self.kernel = true,
                "default" => {
                    self.default = act_of(f[0])?;
                    self.default_errno = errno(f[1])?;
                }
                "sys" => {
                    let rule = SysRule {
                        act: act_of(f[1])?,
                        errno: errno(f[2])?,
                        label: self.put(f[3])?,
                        entry: 0,
                    };
                    self.sys_rules
                        .try_push(rule)
                        .map_err(|_| Bad::Msg("policy: too many call rules"))?;
                    let at = self.sys_rules.len() as u16; // 1 + its index
                    for n in f[0].split('+') {
                        let nr = num(n, "number")? as usize;
                        *self.sys_at.get_mut(nr).ok_or_else(|| bad("number", item))? = at;
                    }
                }
                "sysl" => {
                    let (a, e) = (act_of(f[0])?, errno(f[1])?);
                    for n in f[2].split('+') {
                        let (nr, i) = n.split_once(':').ok_or_else(|| bad("number", item))?;
                        let (nr, i) = (num(nr, "number")? as usize, num(i, "place")?);
                        let entry = i
                            .checked_add(1)
                            .and_then(|e| u16::try_from(e).ok())
                            .ok_or_else(|| bad("place", item))?;
                        self.sys_rules
                            .try_push(SysRule {
                                act: a,
                                errno: e,
                                label: Span::default(),
                                entry,
                            })
                            .map_err(|_| Bad::Msg("policy: too many call rules"))?;
                        let at = self.sys_rules.len() as u16; // 1 + its index
                        *self.sys_at.get_mut(nr).ok_or_else(|| bad("number", item))? = at;
                    }
                }
                "path" => {
                    let kinds = letters(f[0], &KIND_LETTERS)
                        .filter(|&k| k != 0)
                        .ok_or_else(|| bad("kinds", item))?;
                    let (a, e) = (act_of(f[1])?, errno(f[2])?);
                    let prefix = self.put(f[3])?;
                    if self.text(prefix).first() != Some(&b'/') {
                        return Err(bad("prefix", item));
                    }
                    let label = self.put(f[4])?;
                    self.paths
                        .try_push(PathRule {
                            kinds,
                            act: a,
                            errno: e,
                            prefix,
                            label,
                        })
                        .map_err(|_| Bad::Msg("policy: too many path rules"))?;
                }
                "restrict" => {
                    self.restricted = letters(f[0], &KIND_LETTERS).ok_or_else(|| bad("kinds", item))?;
                    self.restrict_errno = errno(f[1])?;
                }
                "net" => {
                    let mut r = NetRule {
                        ops: letters(
                            f[0],
                            &[
                                (b'c', op::CONNECT),
                                (b'b', op::BIND),
                                (b's', op::SEND),
                                (b'a', op::ACCEPT),
                            ],
                        )
                        .filter(|&o| o != 0)
                        .ok_or_else(|| bad("ops", item))?,
                        act: act_of(f[1])?,
                        errno: errno(f[2])?,
                        family: u16::try_from(num(f[3], "family")?).map_err(|_| bad("family", item))?,
                        ..NetRule::default()
                    };
                    if f[4] != "-" {
                        parse_addr(f[4], &mut r).ok_or_else(|| bad("address", item))?;
                    }
                    if f[5] != "-" {
                        let (lo, hi) = f[5].split_once('-').ok_or_else(|| bad("ports", item))?;
                        let p = |s: &str| s.parse::<u16>().map_err(|_| bad("ports", item));
                        r.ports = Some((p(lo)?, p(hi)?));
                    }
                    r.proto = match f[6] {
                        "any" => Proto::Any,
                        "tcp" => Proto::Tcp,
                        "udp" => Proto::Udp,
                        _ => return Err(bad("protocol", item)),
                    };
                    r.log = f[7] == "1";
                    r.label = self.put(f[8])?;
                    self.net
                        .try_push(r)
                        .map_err(|_| Bad::Msg("policy: too many network rules"))?;
                }
                "netdefault" => {
                    self.net_on = true;
                    self.net_default = act_of(f[0])?;
                    self.net_errno = errno(f[1])?;
                }
                "threads" => self.max_threads = num(f[0], "threads")?,
                "children" => self.max_children = num(f[0], "children")?,
                _ => return Err(bad("unknown item", item)),
            }
        }
        let rules = self.paths.iter();
        self.relevant = rules.clone().fold(self.restricted, |k, r| k | r.kinds);
        self.denied = rules.filter(|r| r.act == Act::Deny).fold(0, |k, r| k | r.kinds);
        if !version {
            return Err(Bad::Msg(
                "policy: no compiled policy (use strata run --policy FILE; the layer's arguments are written by the launcher)",
            ));
        }
        Ok(())
    }
}

/// `4:HEX8/LEN` or `6:HEX32/LEN`.
fn parse_addr(s: &str, r: &mut NetRule) -> Option<()> {
    let (fam, rest) = s.split_once(':')?;
    let (hex, len) = rest.split_once('/')?;
    let n = match fam {
        "4" => 4,
        "6" => 16,
        _ => return None,
    };
    let hb = hex.as_bytes();
    if hb.len() != 2 * n {
        return None;
    }
    for (i, slot) in r.addr.iter_mut().take(n).enumerate() {
        *slot = hexval(hb[2 * i])? << 4 | hexval(hb[2 * i + 1])?;
    }
    let len: u8 = len.parse().ok()?;
    if len as usize > 8 * n {
        return None;
    }
    r.plen = Some(len);
    r.v4 = n == 4;
    Some(())
}
