//! `policy`: the sandbox as a strata layer (Dune's sandbox and firewall,
//! in-process).
//!
//! The launcher reads a TOML policy (`strata run --policy FILE` or
//! `builtin:NAME`; docs/policy.md), checks it, and hands this layer a
//! compiled form ([`spec`]). The same policy is compiled by the launcher
//! into a seccomp filter and a Landlock ruleset, installed before strata-rt
//! starts: this layer decides with the rule's name and errno and logs the
//! decision; the kernel holds the line against a program that attacks
//! strata itself (docs/policy.md says which rules have a kernel half).
//!
//! What the layer checks, in order, for each call the program makes:
//!
//! 1. **The call**: its `sys=` rule, or the default (`allow`, `deny`,
//!    `log`).
//! 2. **Paths** of calls with path operands: each operand is resolved as
//!    the kernel would (current directory or the `*at` handle, `..`,
//!    symbolic links: strata-ext-map's resolver over an empty table) and
//!    checked for the kinds of access the call needs: `read` (open for
//!    reading), `write` (open for writing or truncating, change attributes
//!    or length), `create` (create a name that does not exist yet, remove,
//!    rename, link, make directories and nodes), `execute` (execve). The
//!    longest matching prefix among the rules for that kind decides; a kind
//!    some rule allows is denied where none does.
//! 3. **Network** (the firewall): `socket` by family and type; `connect`,
//!    `bind`, `sendto`/`sendmsg`/`sendmmsg` with an address, by the decoded
//!    address (family, address in a CIDR, port range, tcp/udp); `accept`
//!    after the kernel accepted, by the peer address and the local port it
//!    came in on (a refused connection is closed before the program sees
//!    it). The first matching rule
//!    decides, else the network default.
//! 4. **Limits**: threads alive in the process, child processes alive
//!    (`EAGAIN` past them, as the kernel's own limits answer).
//!
//! A denied call returns the rule's errno before anything was done (accept
//! excepted, whose connection is closed). Every denial writes one line to
//! the session's output (standard error, or `-o FILE`) naming the rule;
//! `log` rules and network rules with `log` write one line per allowed
//! call. In audit mode every denial is logged as `audit` and the call goes
//! on. Calls other layers issue for their own business
//! (`call_flags::FROM_EXTENSION`) pass unchecked.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
extern crate std;

pub mod net;
pub mod spec;

use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};
use net::{Peer, AF_INET, AF_INET6, AF_UNSPEC};
use spec::{kind, op, Act, Policy, Proto, Span};
use strata_ext::{call_flags, emit, read_mem, Below, Call, Extension, InitError, Interest, Op, PathBuf};
use strata_ext_map::policy::{open_flags, OpenFlags};
use strata_ext_map::resolve::{Resolver, Start};
use strata_ext_map::stack::StackFs;
use strata_ext_map::Table;

/// Linux call numbers the layer looks at.
pub mod nr {
    pub const OPEN: u32 = 2;
    pub const CLOSE: u32 = 3;
    pub const SOCKET: u32 = 41;
    pub const CONNECT: u32 = 42;
    pub const ACCEPT: u32 = 43;
    pub const SENDTO: u32 = 44;
    pub const SENDMSG: u32 = 46;
    pub const BIND: u32 = 49;
    pub const GETSOCKNAME: u32 = 51;
    pub const GETPEERNAME: u32 = 52;
    pub const SOCKETPAIR: u32 = 53;
    pub const GETSOCKOPT: u32 = 55;
    pub const CLONE: u32 = 56;
    pub const FORK: u32 = 57;
    pub const VFORK: u32 = 58;
    pub const EXECVE: u32 = 59;
    pub const NEWFSTATAT: u32 = 262;
    pub const ACCEPT4: u32 = 288;
    pub const SENDMMSG: u32 = 307;
    pub const EXECVEAT: u32 = 322;
    pub const OPENAT2: u32 = 437;
    pub const OPENAT: u32 = 257;
    pub const TRUNCATE: u32 = 76;
    pub const FTRUNCATE: u32 = 77;
    pub const MEMFD_CREATE: u32 = 319;
    pub const CLONE3: u32 = 435;
    pub const READ: u32 = 0;
    pub const GETDENTS64: u32 = 217;
}

const EAGAIN: u16 = 11;
const O_ACCMODE: u64 = 3;
const O_WRONLY: u64 = 1;
const O_CREAT: u64 = 0o100;
const O_NOCTTY: u64 = 0o400;
const O_TRUNC: u64 = 0o1000;
const O_PATH: u64 = 0o10000000;
const O_TMPFILE_BIT: u64 = 0o20000000;
const O_CLOEXEC: u64 = 0o2000000;
const CLONE_THREAD: u64 = 0x10000;
const AT_FDCWD: u64 = -100i64 as u64;
const AT_SYMLINK_NOFOLLOW: u64 = 0x100;

/// An empty mapping table: the resolver then canonicalises host paths.
static NO_MAPPINGS: Table = Table::empty();

/// The `policy` layer. `repr(C)`, the small fields first, as in [`Policy`]:
/// a process start writes only the first pages of it.
#[repr(C)]
pub struct Sandbox {
    /// Upper bounds of this process's live children and threads, for the
    /// process limits (`limits`): counting them reads /proc, several
    /// lookups per fork, so it is done only when the bound reaches the
    /// limit. A fork or clone this layer lets through raises its bound by
    /// one; exits only lower the real number. Each word holds the pid it
    /// is about (high half) and the bound (low half): a bound left by
    /// another process (copied by fork, or written by a vfork child, which
    /// shares this memory) or none yet (a process start: an exec keeps the
    /// children of the old image) means counting. Children this process
    /// gains without forking (a child's CLONE_PARENT, orphans of a
    /// subreaper) are seen at the next count.
    children: AtomicU64,
    threads: AtomicU64,
    p: Policy,
}

/// A bound for no process.
const UNKNOWN: u64 = u64::MAX;

/// Why a call is refused (or would be, in audit mode), for the log line.
#[derive(Clone, Copy)]
enum Rule {
    /// A rule with a label.
    Named(Span),
    /// Call `nr`, named at place `i` of the file's `syscalls` list of the
    /// verdict's action.
    Listed { i: u16, nr: u32 },
    /// Text of our own.
    Text(&'static str),
}

/// The decision on one call.
#[derive(Clone, Copy)]
struct Verdict {
    act: Act,
    errno: u16,
    rule: Rule,
}

impl Sandbox {
    /// The layer for an already parsed policy.
    pub fn from_policy(p: Policy) -> Sandbox {
        Sandbox {
            p,
            children: AtomicU64::new(UNKNOWN),
            threads: AtomicU64::new(UNKNOWN),
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.p
    }
}

impl Extension for Sandbox {
    const NAME: &'static str = "policy";

    fn new(args: &str) -> Result<Sandbox, InitError> {
        let mut s = Sandbox::from_policy(Policy::empty());
        s.p.parse_into(args)?;
        Ok(s)
    }

    /// In place: the policy's tables are some 17 KiB, built at every
    /// process start.
    fn new_in<'a>(slot: &'a mut core::mem::MaybeUninit<Sandbox>, args: &str) -> Result<&'a mut Sandbox, InitError> {
        let s = slot.write(Sandbox::from_policy(Policy::empty()));
        s.p.parse_into(args)?;
        Ok(s)
    }

    fn interest(&self) -> Interest {
        let p = &self.p;
        if p.default != Act::Allow {
            return Interest::ALL;
        }
        let mut i = Interest::NONE;
        for (n, r) in p.listed() {
            if r.act != Act::Allow {
                i.insert(n as u32);
            }
        }
        if !p.paths.is_empty() || p.restricted != 0 {
            // Only ops that can need a kind some rule speaks about: with
            // writes restricted, stat, access and readlink (a build makes
            // tens of thousands) do not enter the layer.
            i = i.with_paths_where(|o| op_kinds(o) & p.relevant != 0);
            i.insert(nr::EXECVE);
            i.insert(nr::EXECVEAT);
        }
        if p.net_on {
            for n in [
                nr::SOCKET,
                nr::SOCKETPAIR,
                nr::CONNECT,
                nr::BIND,
                nr::SENDTO,
                nr::SENDMSG,
                nr::SENDMMSG,
                nr::ACCEPT,
                nr::ACCEPT4,
            ] {
                i.insert(n);
            }
        }
        if p.max_threads > 0 || p.max_children > 0 {
            for n in [nr::CLONE, nr::CLONE3, nr::FORK, nr::VFORK] {
                i.insert(n);
            }
        }
        if p.kernel {
            i.insert(nr::MEMFD_CREATE);
        }
        i
    }

    /// Every check's scratch (a path, its resolver, a log line: kilobytes)
    /// is in the check that needs it, not inlined here: a frame of this
    /// size on every call would be a stack probe on each of its pages, and
    /// after a fork a copy-on-write fault on each of them.
    fn call(&self, c: &mut Call, below: &Below) -> i64 {
        if c.flags & call_flags::FROM_EXTENSION != 0 {
            return below.call(c);
        }
        let v = self.sys_verdict(c.nr);
        if let Some(r) = self.enforce(c, v, &[]) {
            return r;
        }
        if c.npaths > 0 && (!self.p.paths.is_empty() || self.p.restricted != 0) {
            if let Some(r) = self.paths(c, below) {
                return r;
            }
        }
        if self.p.kernel && self.p.restricted & kind::WRITE != 0 {
            if let Some(r) = self.truncation(c, below) {
                return r;
            }
        }
        if self.p.net_on {
            match c.nr {
                nr::ACCEPT | nr::ACCEPT4 => return self.accept(c, below),
                _ => {
                    if let Some(r) = self.network(c, below) {
                        return r;
                    }
                }
            }
        }
        if self.p.max_threads > 0 || self.p.max_children > 0 {
            if let Some(r) = self.limits(c) {
                return r;
            }
        }
        if self.p.kernel && c.nr == nr::MEMFD_CREATE {
            return self.memfd(c, below);
        }
        below.call(c)
    }
}

// ---- decisions ----------------------------------------------------------------

/// Every access kind a call of op `o` can need for a path operand
/// ([`Sandbox::kinds_of`] gives one call's, a subset of these; an open
/// with O_CREAT may also need CREATE).
fn op_kinds(o: Op) -> u8 {
    match o {
        Op::StreamOpen => kind::READ | kind::WRITE | kind::CREATE,
        Op::StreamDelete | Op::StreamRename | Op::StreamLink | Op::StreamCreateDir => kind::CREATE,
        Op::StreamSetAttr | Op::StreamSetLength => kind::WRITE,
        Op::ProcessExec => kind::EXECUTE,
        _ => 0,
    }
}

impl Sandbox {
    fn sys_verdict(&self, n: u32) -> Verdict {
        match self.p.sys(n as usize) {
            Some(r) => Verdict {
                act: r.act,
                errno: r.errno,
                rule: match r.entry {
                    0 => Rule::Named(r.label),
                    e => Rule::Listed { i: e - 1, nr: n },
                },
            },
            _ => Verdict {
                act: self.p.default,
                errno: self.p.default_errno,
                rule: Rule::Text("policy.default"),
            },
        }
    }

    /// Logs `v` when it says so; Some(-errno) when the call must not go on.
    fn enforce(&self, c: &Call, v: Verdict, detail: &[u8]) -> Option<i64> {
        match v.act {
            Act::Allow => None,
            Act::Log => {
                self.log(c, "log", v, detail);
                None
            }
            Act::Deny if self.p.audit => {
                self.log(c, "audit: would deny", v, detail);
                None
            }
            Act::Deny => {
                self.log(c, "deny", v, detail);
                Some(-(v.errno as i64))
            }
        }
    }

    /// The verdict for access `k` to canonical path `path`.
    pub fn path_verdict_for(&self, k: u8, path: &[u8]) -> (Act, u16, Option<Span>) {
        let v = self.path_verdict(k, path);
        let label = match v.rule {
            Rule::Named(s) => Some(s),
            Rule::Listed { .. } | Rule::Text(_) => None,
        };
        (v.act, v.errno, label)
    }

    /// Whether `socket(family, type)` is allowed (the launcher compiles the
    /// answer into the seccomp filter).
    pub fn socket_allowed(&self, family: u16, ty: u64) -> bool {
        let proto = match family {
            AF_INET | AF_INET6 => net::proto_of_type(ty),
            _ => None,
        };
        !self.p.net_on || self.socket_verdict(family, proto).0.act != Act::Deny
    }

    fn path_verdict(&self, k: u8, path: &[u8]) -> Verdict {
        let p = &self.p;
        let mut best: Option<(&spec::PathRule, usize)> = None;
        for r in p.paths.iter() {
            if r.kinds & k == 0 {
                continue;
            }
            let pre = p.text(r.prefix);
            if !strata_ext_map::path::is_under(path, pre) {
                continue;
            }
            // Longest prefix wins; at equal length, a denial.
            let better = match best {
                None => true,
                Some((b, n)) => pre.len() > n || (pre.len() == n && r.act == Act::Deny && b.act != Act::Deny),
            };
            if better {
                best = Some((r, pre.len()));
            }
        }
        let best = best.map(|(r, _)| r);
        match best {
            Some(r) => Verdict {
                act: r.act,
                errno: r.errno,
                rule: Rule::Named(r.label),
            },
            None if p.restricted & k != 0 => Verdict {
                act: Act::Deny,
                errno: p.restrict_errno,
                rule: Rule::Text(match k {
                    kind::READ => "paths.read (not under any prefix it lists)",
                    kind::WRITE => "paths.write (not under any prefix it lists)",
                    kind::CREATE => "paths.create (not under any prefix it lists)",
                    _ => "paths.execute (not under any prefix it lists)",
                }),
            },
            None => Verdict {
                act: Act::Allow,
                errno: 0,
                rule: Rule::Text(""),
            },
        }
    }

    /// The access kinds operand `slot` of `c` needs (before the O_CREAT
    /// existence check): some of [`op_kinds`] of its op.
    fn kinds_of(&self, c: &Call, slot: &strata_ext::PathSlot) -> Result<(u8, bool), i64> {
        let op = c.op();
        Ok(match op {
            Op::StreamOpen => {
                let flags = match open_flags(c.nr) {
                    OpenFlags::Arg(i) => c.args.get(i).copied().unwrap_or(0),
                    OpenFlags::How => {
                        let mut b = [0u8; 8];
                        match read_mem(c.args[2], &mut b) {
                            Ok(8) => u64::from_ne_bytes(b),
                            // The kernel answers EFAULT.
                            _ => return Ok((0, false)),
                        }
                    }
                    OpenFlags::Creat => 0o1101, // O_WRONLY|O_CREAT|O_TRUNC
                };
                if flags & O_PATH != 0 {
                    return Ok((0, false));
                }
                let mut k = match flags & O_ACCMODE {
                    0 => kind::READ,
                    1 => kind::WRITE,
                    _ => kind::READ | kind::WRITE,
                };
                if flags & O_TRUNC != 0 {
                    k |= kind::WRITE;
                }
                if flags & O_TMPFILE_BIT != 0 {
                    k |= kind::CREATE | kind::WRITE;
                }
                (k, flags & O_CREAT != 0)
            }
            Op::StreamDelete | Op::StreamRename => (kind::CREATE, false),
            Op::StreamLink | Op::StreamCreateDir if slot.create != 0 => (kind::CREATE, false),
            Op::StreamSetAttr | Op::StreamSetLength => (kind::WRITE, false),
            Op::ProcessExec => (kind::EXECUTE, false),
            _ => (0, false),
        })
    }

    /// Checks every path operand of `c`. The resolver's 12 KiB of scratch
    /// and a normalised copy's 4 KiB are in frames of their own, entered
    /// only for an operand that needs them: every page of a frame is
    /// touched at its entry (stack probes), and this runs at most of a
    /// program's opens, the first at each exec.
    #[inline(never)]
    fn paths(&self, c: &Call, below: &Below) -> Option<i64> {
        // 4 KiB, zeroed when made: made for the first operand a rule
        // speaks about.
        let mut path_buf: Option<PathBuf> = None;
        for slot in c.path_slots() {
            let addr = c.args.get(slot.arg as usize).copied().unwrap_or(0);
            if addr == 0 {
                continue;
            }
            let (k, creat) = match self.kinds_of(c, slot) {
                Ok(x) => x,
                Err(e) => return Some(e),
            };
            // Only kinds some rule speaks about need the path resolved (a
            // read-only-fs policy leaves reads alone: most opens).
            let relevant = self.p.relevant;
            if k & relevant == 0 && !(creat && relevant & kind::CREATE != 0) {
                continue;
            }
            // An unreadable or empty path: the kernel answers (EFAULT,
            // ENAMETOOLONG, ENOENT, or the handle itself for AT_EMPTY_PATH).
            let buf = path_buf.get_or_insert_with(PathBuf::new);
            if buf.read_from(addr).is_err() || buf.is_empty() {
                continue;
            }
            // The quick look: an absolute path without `..`, normalised
            // lexically. When every kind it needs is allowed there and no
            // denying prefix exists for those kinds, the call goes on without
            // resolving links: a link that leads out of the allowed prefixes
            // is refused by Landlock, which resolves for real. Otherwise
            // (no kernel backstop, a denial to confirm, a denying prefix a
            // link could hide behind, or execve, whose file strata maps
            // itself, out of Landlock's sight) the path is resolved as the
            // kernel would.
            //
            // O_CREAT counts as creating here: allowed to create at the path,
            // the open is allowed whether the file exists or not, and
            // Landlock holds the creation where a link leads (a build's
            // temporary and output files: no walk of their directories).
            let quick = if creat { k | kind::CREATE } else { k };
            if self.p.kernel && quick & (self.p.denied | kind::EXECUTE) == 0 {
                // Most paths are normal already (`/usr/include/stdio.h`):
                // no copy of 4 KiB to make.
                let ok = if strata_ext_map::path::is_normal(buf.as_bytes()) {
                    self.quick_allowed(quick, buf.as_bytes())
                } else {
                    self.normalised_allowed(quick, buf.as_bytes())
                };
                if ok {
                    continue;
                }
            }
            // A program that is not there: whatever the rules say, the
            // check lets the call go on (a file that does not exist cannot
            // be run; the kernel's or strata's exec answers ENOENT), so one
            // stat saves the walk. A shell's or execvp's PATH search tries
            // every directory in turn (a dozen walks for `as` here).
            if k & kind::EXECUTE != 0 && missing(c, below, slot.dirfd_arg, buf) {
                continue;
            }
            if let Some(r) = self.resolved(c, below, slot, buf, (k, creat)) {
                return Some(r);
            }
        }
        None
    }

    /// Whether every kind in `quick` is allowed at `path` by the rules alone.
    fn quick_allowed(&self, quick: u8, path: &[u8]) -> bool {
        [kind::READ, kind::WRITE, kind::CREATE]
            .iter()
            .all(|&bit| quick & bit == 0 || self.path_verdict(bit, path).act != Act::Deny)
    }

    /// [`Sandbox::quick_allowed`] of `path` normalised lexically.
    #[inline(never)]
    fn normalised_allowed(&self, quick: u8, path: &[u8]) -> bool {
        let mut lex = strata_ext_map::path::Buf::new();
        strata_ext_map::path::normalize(path, &mut lex).is_ok() && self.quick_allowed(quick, lex.as_bytes())
    }

    /// Checks the operand `buf` of `c` (at `slot`, its kinds and whether it
    /// may create) on the path resolved as the kernel would.
    #[inline(never)]
    fn resolved(
        &self,
        c: &Call,
        below: &Below,
        slot: &strata_ext::PathSlot,
        buf: &mut PathBuf,
        kinds: (u8, bool),
    ) -> Option<i64> {
        let (mut k, creat) = kinds;
        let fs = StackFs { template: c, below };
        let start = match slot.dirfd_arg {
            strata_ext::NO_ARG => Start::Cwd,
            i => Start::from_dirfd(c.args.get(i as usize).copied().unwrap_or(0)),
        };
        let mut res = Resolver::new();
        if res.resolve(&fs, &NO_MAPPINGS, buf, start, slot.follow != 0).is_err() {
            return None;
        }
        let path = res.program_path();
        if creat {
            let v = self.path_verdict(kind::CREATE, path);
            if v.act == Act::Deny && !exists(c, below, path) {
                k |= kind::CREATE;
            }
        }
        for bit in [kind::READ, kind::WRITE, kind::CREATE, kind::EXECUTE] {
            if k & bit == 0 {
                continue;
            }
            let v = self.path_verdict(bit, path);
            // A file that does not exist cannot be read, written or run:
            // the kernel answers (ENOENT), as it does under Landlock, and
            // a shell's PATH search goes on as natively.
            if v.act == Act::Deny && bit != kind::CREATE && !exists(c, below, path) {
                continue;
            }
            let mut d = Detail::new();
            let _ = write!(d, " [{} ", kind::name(bit));
            d.bytes(path);
            let _ = d.write_str("]");
            if let Some(r) = self.enforce(c, v, d.as_bytes()) {
                return Some(r);
            }
        }
        None
    }

    /// The verdict on network operation `o` with `peer`.
    fn net_verdict(&self, o: u8, family: u16, proto: Option<Proto>, peer: &Peer) -> (Verdict, bool) {
        let p = &self.p;
        for r in p.net.iter() {
            if net::matches(r, o, family, proto, peer) {
                let v = Verdict {
                    act: r.act,
                    errno: r.errno,
                    rule: Rule::Named(r.label),
                };
                return (v, r.log);
            }
        }
        (
            Verdict {
                act: p.net_default,
                errno: p.net_errno,
                rule: Rule::Text("network.default"),
            },
            false,
        )
    }

    /// Whether a socket of `family` and `proto` may be made: some rule
    /// could allow something on it.
    fn socket_verdict(&self, family: u16, proto: Option<Proto>) -> (Verdict, bool) {
        let p = &self.p;
        for r in p.net.iter() {
            if !net::family_matches(r, family) || !net::proto_matches(r, proto) {
                continue;
            }
            let unconditional = r.ops == op::ALL && r.plen.is_none() && r.ports.is_none();
            if r.act != Act::Deny || unconditional {
                let v = Verdict {
                    act: r.act,
                    errno: r.errno,
                    rule: Rule::Named(r.label),
                };
                return (v, r.log && unconditional);
            }
        }
        (
            Verdict {
                act: p.net_default,
                errno: p.net_errno,
                rule: Rule::Text("network.default"),
            },
            false,
        )
    }

    /// Applies a network verdict: allowed calls are logged only when their
    /// rule says so.
    fn net_enforce(&self, c: &Call, (v, log): (Verdict, bool), peer: Option<&Peer>) -> Option<i64> {
        let v = match (v.act, log) {
            (Act::Allow, true) => Verdict { act: Act::Log, ..v },
            _ => v,
        };
        let mut d = Detail::new();
        if let Some(p) = peer.filter(|p| p.ip) {
            let _ = d.write_str(" [");
            let _ = net::write_peer(&mut d, p);
            let _ = d.write_str("]");
        }
        self.enforce(c, v, d.as_bytes())
    }

    /// The protocol of socket `fd` when a rule needs it.
    fn proto_of(&self, c: &Call, below: &Below, fd: u64) -> Option<Proto> {
        let p = &self.p;
        if p.net.iter().all(|r| r.proto == Proto::Any) {
            return None;
        }
        let mut ty = 0u32;
        let mut len = 4u32;
        let args = [
            fd,
            1, // SOL_SOCKET
            3, // SO_TYPE
            &mut ty as *mut u32 as u64,
            &mut len as *mut u32 as u64,
            0,
        ];
        if below.issue(c, nr::GETSOCKOPT, args) < 0 {
            return None;
        }
        net::proto_of_type(ty as u64)
    }

    /// socket, socketpair, connect, bind, sendto, sendmsg, sendmmsg.
    #[inline(never)]
    fn network(&self, c: &Call, below: &Below) -> Option<i64> {
        let a = c.args;
        match c.nr {
            nr::SOCKET | nr::SOCKETPAIR => {
                let family = a[0] as u16;
                let proto = match family {
                    AF_INET | AF_INET6 => net::proto_of_type(a[1]),
                    _ => None,
                };
                self.net_enforce(c, self.socket_verdict(family, proto), None)
            }
            nr::CONNECT | nr::BIND => {
                let o = if c.nr == nr::CONNECT { op::CONNECT } else { op::BIND };
                self.addressed(c, below, o, a[0], a[1], a[2] as u32 as usize)
            }
            nr::SENDTO if a[4] != 0 => self.addressed(c, below, op::SEND, a[0], a[4], a[5] as u32 as usize),
            nr::SENDMSG => {
                let (name, len) = msg_name(a[1])?;
                self.addressed(c, below, op::SEND, a[0], name, len)
            }
            nr::SENDMMSG => {
                let n = (a[2] as u32).min(1024) as u64;
                for i in 0..n {
                    let (name, len) = msg_name(a[1].wrapping_add(i * 64))?;
                    if let Some(r) = self.addressed(c, below, op::SEND, a[0], name, len) {
                        return Some(r);
                    }
                }
                None
            }
            _ => None,
        }
    }

    /// A call on socket `fd` naming address `addr` (`len` bytes).
    fn addressed(&self, c: &Call, below: &Below, o: u8, fd: u64, addr: u64, len: usize) -> Option<i64> {
        if addr == 0 || len < 2 {
            return None;
        }
        let mut sa = [0u8; 128];
        let want = sa.get_mut(..len.min(128))?;
        match read_mem(addr, want) {
            Ok(n) if n == want.len() => {}
            // The kernel answers EFAULT.
            _ => return None,
        }
        let peer = Peer::decode(sa.get(..len.min(128))?)?;
        if peer.family == AF_UNSPEC {
            return None;
        }
        let proto = self.proto_of(c, below, fd);
        self.net_enforce(c, self.net_verdict(o, peer.family, proto, &peer), Some(&peer))
    }

    /// accept, accept4: the kernel accepts, then the peer is judged; a
    /// refused connection is closed.
    #[inline(never)]
    fn accept(&self, c: &mut Call, below: &Below) -> i64 {
        let r = below.call(c);
        if r < 0 {
            return r;
        }
        let tmpl = *c;
        let mut sa = [0u8; 128];
        let mut len = 128u32;
        let g = below.issue(
            &tmpl,
            nr::GETPEERNAME,
            [r as u64, sa.as_mut_ptr() as u64, &mut len as *mut u32 as u64, 0, 0, 0],
        );
        if g < 0 {
            return r;
        }
        let Some(mut peer) = sa.get(..(len as usize).min(128)).and_then(Peer::decode) else {
            return r;
        };
        // Ports of an accept rule are the local port the connection came
        // in on (the server's), not the client's ephemeral one.
        let mut local = [0u8; 128];
        let mut llen = 128u32;
        let g = below.issue(
            &tmpl,
            nr::GETSOCKNAME,
            [
                r as u64,
                local.as_mut_ptr() as u64,
                &mut llen as *mut u32 as u64,
                0,
                0,
                0,
            ],
        );
        if let Some(l) = local
            .get(..(llen as usize).min(128))
            .filter(|_| g >= 0)
            .and_then(Peer::decode)
        {
            peer.port = l.port;
        }
        let proto = match peer.family {
            AF_INET | AF_INET6 => Some(Proto::Tcp),
            _ => None,
        };
        match self.net_enforce(
            &tmpl,
            self.net_verdict(op::ACCEPT, peer.family, proto, &peer),
            Some(&peer),
        ) {
            Some(e) => {
                below.issue(&tmpl, nr::CLOSE, [r as u64, 0, 0, 0, 0, 0]);
                e
            }
            None => r,
        }
    }

    /// memfd_create under a kernel backstop: a memfd could be executed
    /// with execveat outside strata (Landlock does not see memfds), so it is
    /// made not executable (MFD_NOEXEC_SEAL), and one asked for as
    /// executable (MFD_EXEC) is refused. The seccomp filter refuses
    /// memfd_create without the flag.
    #[inline(never)]
    fn memfd(&self, c: &mut Call, below: &Below) -> i64 {
        const MFD_NOEXEC_SEAL: u64 = 8;
        const MFD_EXEC: u64 = 0x10;
        let flags = c.args[1];
        if flags & MFD_EXEC != 0 {
            let v = Verdict {
                act: Act::Deny,
                errno: 13,
                rule: Rule::Text("the kernel backstop (an executable memfd could run outside strata)"),
            };
            if let Some(r) = self.enforce(c, v, &[]) {
                return r;
            }
            return below.call(c);
        }
        let mut args = c.args;
        args[1] = flags | MFD_NOEXEC_SEAL;
        below.call_with_args(c, args)
    }

    /// Truncating under a kernel backstop that restricts writing (cli
    /// policy/kernel.rs, `truncation`): seccomp refuses truncate(2) and an
    /// open that truncates without writing, since Landlock's ruleset does not
    /// handle truncation (handling it would walk the path of every file
    /// opened). A truncate(2) the rules allow is served here as what the
    /// kernel lets through: an open for writing (which Landlock's write right
    /// holds) and ftruncate, passed down as calls of their own so that the
    /// layers below check them too. Such an open is refused with a line
    /// naming the backstop. None: not one of these calls.
    #[inline(never)]
    fn truncation(&self, c: &mut Call, below: &Below) -> Option<i64> {
        let flags_arg = match c.nr {
            nr::TRUNCATE => return Some(self.truncate(c, below)),
            nr::OPEN => 1,
            nr::OPENAT => 2,
            _ => return None,
        };
        let flags = c.args[flags_arg];
        if flags & O_TRUNC == 0 || flags & O_PATH != 0 || matches!(flags & O_ACCMODE, 1 | 2) {
            return None;
        }
        let v = Verdict {
            act: Act::Deny,
            errno: self.p.restrict_errno,
            rule: Rule::Text("the kernel backstop (an open that truncates must open for writing)"),
        };
        self.enforce(c, v, &[])
    }

    /// truncate(path, length) as open(path, O_WRONLY), ftruncate, close.
    /// Only a regular file is opened (truncate(2) answers EISDIR or EINVAL
    /// for the rest; opening a device or a FIFO could do something), and
    /// the length is checked first, as the kernel does. Not O_NONBLOCK: a
    /// lease another process holds is waited for, as truncate(2) waits.
    /// What differs from the kernel's own (docs/policy.md): the close
    /// releases the process's POSIX record locks on the file, inotify sees
    /// an open and a close, a full descriptor table answers EMFILE, and a
    /// path swapped between the stat and the open is opened as it then is
    /// (Landlock still holds).
    fn truncate(&self, c: &Call, below: &Below) -> i64 {
        const EISDIR: i64 = 21;
        const EINVAL: i64 = 22;
        const S_IFMT: u64 = 0o170000;
        const S_IFDIR: u64 = 0o040000;
        const S_IFREG: u64 = 0o100000;
        let (path, len) = (c.args[0], c.args[1]);
        if (len as i64) < 0 {
            return -EINVAL;
        }
        let mut st = Stat::default();
        let r = stat_at(c, below, AT_FDCWD, path, 0, &mut st);
        if r < 0 {
            return r;
        }
        match st.mode() & S_IFMT {
            S_IFREG => {}
            S_IFDIR => return -EISDIR,
            _ => return -EINVAL,
        }
        let mut open = Call::new(
            nr::OPENAT,
            [AT_FDCWD, path, O_WRONLY | O_NOCTTY | O_CLOEXEC, 0, 0, 0],
            c.pid,
            c.tid,
        );
        let fd = below.call(&mut open);
        if fd < 0 {
            return fd;
        }
        let mut cut = Call::new(nr::FTRUNCATE, [fd as u64, len, 0, 0, 0, 0], c.pid, c.tid);
        let r = below.call(&mut cut);
        below.issue(c, nr::CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
        r
    }

    /// clone, clone3, fork, vfork against the thread and child limits.
    fn limits(&self, c: &Call) -> Option<i64> {
        let flags = match c.nr {
            nr::CLONE => c.args[0],
            nr::CLONE3 => {
                let mut b = [0u8; 8];
                match read_mem(c.args[0], &mut b) {
                    Ok(8) => u64::from_ne_bytes(b),
                    _ => return None,
                }
            }
            nr::FORK | nr::VFORK => 0,
            _ => return None,
        };
        let (max, bound, count, label): (_, _, fn() -> usize, _) = if flags & CLONE_THREAD != 0 {
            (self.p.max_threads, &self.threads, count_threads, "process.max_threads")
        } else {
            (
                self.p.max_children,
                &self.children,
                count_children,
                "process.max_children",
            )
        };
        let max = max as usize;
        if max == 0 {
            return None;
        }
        // Below the limit by this process's bound: no need to count.
        // Otherwise count, and start the bound again from the real number
        // (unless another thread moved it meanwhile: its word stands).
        // UNKNOWN's high half is no pid.
        let owner = u64::from(c.pid) << 32;
        let v = bound.load(Ordering::Relaxed);
        if v & !0xffff_ffff == owner
            && ((v & 0xffff_ffff) as usize) < max
            && bound
                .compare_exchange(v, v + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return None;
        }
        let now = count();
        let allowed = now < max;
        let next = owner | ((now + usize::from(allowed)) as u64).min(0xffff_fffe);
        let _ = bound.compare_exchange(v, next, Ordering::Relaxed, Ordering::Relaxed);
        if allowed {
            return None;
        }
        let v = Verdict {
            act: Act::Deny,
            errno: EAGAIN,
            rule: Rule::Text(label),
        };
        let mut d = Detail::new();
        let _ = write!(d, " [{now} alive, at most {max}]");
        self.enforce(c, v, d.as_bytes())
    }
}

// ---- helpers ------------------------------------------------------------------

/// msg_name and msg_namelen of the msghdr at `addr`.
fn msg_name(addr: u64) -> Option<(u64, usize)> {
    let mut b = [0u8; 12];
    match read_mem(addr, &mut b) {
        Ok(12) => {}
        _ => return None,
    }
    let name = u64::from_ne_bytes(b[..8].try_into().ok()?);
    let len = u32::from_ne_bytes(b[8..12].try_into().ok()?) as usize;
    Some((name, len))
}

/// A `struct stat` (144 bytes on x86-64) for [`stat_at`].
#[derive(Default)]
struct Stat([u64; 18]);

impl Stat {
    fn mode(&self) -> u64 {
        self.0[3] & 0xffff_ffff // st_mode, after st_dev, st_ino, st_nlink
    }
}

/// newfstatat(dirfd, path, st, flags), issued below this layer as
/// strata's own call; the kernel's result.
fn stat_at(c: &Call, below: &Below, dirfd: u64, path: u64, flags: u64, st: &mut Stat) -> i64 {
    below.issue(c, nr::NEWFSTATAT, [dirfd, path, st.0.as_mut_ptr() as u64, flags, 0, 0])
}

/// Whether `path` (relative to the call's directory argument `dirfd_arg`,
/// following links as exec does) names nothing: ENOENT or ENOTDIR.
fn missing(c: &Call, below: &Below, dirfd_arg: u8, path: &PathBuf) -> bool {
    const ENOENT: i64 = 2;
    const ENOTDIR: i64 = 20;
    let dirfd = match dirfd_arg {
        strata_ext::NO_ARG => AT_FDCWD,
        i => c.args.get(i as usize).copied().unwrap_or(AT_FDCWD),
    };
    let r = stat_at(c, below, dirfd, path.as_ptr() as u64, 0, &mut Stat::default());
    r == -ENOENT || r == -ENOTDIR
}

/// Whether canonical `path` names something (not following a last link).
fn exists(c: &Call, below: &Below, path: &[u8]) -> bool {
    let mut p = PathBuf::new();
    if p.set(path).is_err() {
        return true;
    }
    stat_at(
        c,
        below,
        AT_FDCWD,
        p.as_ptr() as u64,
        AT_SYMLINK_NOFOLLOW,
        &mut Stat::default(),
    ) == 0
}

/// Reads a small /proc file (straight to the kernel: strata's own business)
/// into `buf`; the bytes read.
fn read_small(path: &'static core::ffi::CStr, buf: &mut [u8]) -> usize {
    let fd = strata_ext::raw_syscall(nr::OPEN, [path.as_ptr() as u64, 0o2000000, 0, 0, 0, 0]);
    if fd < 0 {
        return 0;
    }
    let mut have = 0;
    while have < buf.len() {
        let rest = buf.get_mut(have..).unwrap_or(&mut []);
        let r = strata_ext::raw_syscall(
            nr::READ,
            [fd as u64, rest.as_mut_ptr() as u64, rest.len() as u64, 0, 0, 0],
        );
        if r <= 0 {
            break;
        }
        have += r as usize;
    }
    strata_ext::raw_syscall(nr::CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
    have
}

/// Threads alive in this process (`Threads:` of /proc/self/status).
fn count_threads() -> usize {
    let mut buf = [0u8; 2048];
    let n = read_small(c"/proc/self/status", &mut buf);
    let text = buf.get(..n).unwrap_or(&[]);
    let key = b"\nThreads:";
    let Some(at) = text.windows(key.len()).position(|w| w == key) else {
        return 0;
    };
    text.get(at + key.len()..)
        .unwrap_or(&[])
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take_while(|b| b.is_ascii_digit())
        .fold(0usize, |v, b| v * 10 + (b - b'0') as usize)
}

/// Child processes alive: the pids in /proc/self/task/*/children.
fn count_children() -> usize {
    let fd = strata_ext::raw_syscall(
        nr::OPEN,
        [c"/proc/self/task".as_ptr() as u64, 0o2200000, 0, 0, 0, 0], // O_DIRECTORY|O_CLOEXEC
    );
    if fd < 0 {
        return 0;
    }
    let mut total = 0;
    let mut d = [0u8; 2048];
    loop {
        let r = strata_ext::raw_syscall(
            nr::GETDENTS64,
            [fd as u64, d.as_mut_ptr() as u64, d.len() as u64, 0, 0, 0],
        );
        if r <= 0 {
            break;
        }
        let mut at = 0usize;
        while at + 19 < r as usize {
            let reclen = u16::from_ne_bytes([d[at + 16], d[at + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            let name = d.get(at + 19..at + reclen).unwrap_or(&[]);
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if !name.is_empty() && name.iter().all(u8::is_ascii_digit) {
                total += children_of(name);
            }
            at += reclen;
        }
    }
    strata_ext::raw_syscall(nr::CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
    total
}

/// Pids listed in /proc/self/task/TID/children.
fn children_of(tid: &[u8]) -> usize {
    let mut path = [0u8; 64];
    let pre = b"/proc/self/task/";
    let post = b"/children\0";
    let n = pre.len() + tid.len() + post.len();
    let Some(dst) = path.get_mut(..n) else {
        return 0;
    };
    dst[..pre.len()].copy_from_slice(pre);
    dst[pre.len()..pre.len() + tid.len()].copy_from_slice(tid);
    dst[pre.len() + tid.len()..].copy_from_slice(post);
    let fd = strata_ext::raw_syscall(nr::OPEN, [path.as_ptr() as u64, 0o2000000, 0, 0, 0, 0]);
    if fd < 0 {
        return 0;
    }
    let mut buf = [0u8; 4096];
    let mut count = 0;
    let mut in_num = false;
    loop {
        let r = strata_ext::raw_syscall(
            nr::READ,
            [fd as u64, buf.as_mut_ptr() as u64, buf.len() as u64, 0, 0, 0],
        );
        if r <= 0 {
            break;
        }
        for &b in buf.get(..r as usize).unwrap_or(&[]) {
            let digit = b.is_ascii_digit();
            if digit && !in_num {
                count += 1;
            }
            in_num = digit;
        }
    }
    strata_ext::raw_syscall(nr::CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
    count
}

/// A short piece of text for a log line.
struct Detail {
    buf: [u8; 320],
    len: usize,
}

impl Detail {
    fn new() -> Detail {
        Detail { buf: [0; 320], len: 0 }
    }
    fn bytes(&mut self, b: &[u8]) {
        for &c in b {
            let _ = match c {
                0x20..=0x7e => self.write_char(c as char),
                _ => write!(self, "\\x{c:02x}"),
            };
        }
    }
    fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}

impl Write for Detail {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            match self.buf.get_mut(self.len) {
                Some(slot) => {
                    *slot = b;
                    self.len += 1;
                }
                None => return Err(core::fmt::Error),
            }
        }
        Ok(())
    }
}

/// One log line, cut at 1 KiB.
struct Line {
    buf: [u8; 1024],
    len: usize,
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.buf.len().saturating_sub(self.len + 1); // keep one for '\n'
        let take = s.len().min(room);
        if let Some(dst) = self.buf.get_mut(self.len..self.len + take) {
            dst.copy_from_slice(s.as_bytes().get(..take).unwrap_or(&[]));
            self.len += take;
        }
        Ok(())
    }
}

struct ProgramMemory;

impl strata_decode::Memory for ProgramMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<usize, ()> {
        read_mem(addr, buf).map_err(|_| ())
    }
}

impl Sandbox {
    /// `strata: policy NAME: deny openat(AT_FDCWD, "/etc/x", O_RDONLY) = -1
    /// EACCES (Permission denied) [read /etc/x] by paths.deny "/etc"`.
    #[inline(never)]
    fn log(&self, c: &Call, what: &str, v: Verdict, detail: &[u8]) {
        let mut l = Line { buf: [0; 1024], len: 0 };
        let _ = write!(l, "strata: policy ");
        let _ = l.write_str(core::str::from_utf8(self.p.text(self.p.name)).unwrap_or("?"));
        let _ = write!(l, ": [pid {}] {what} ", c.pid);
        let opts = strata_decode::Options {
            string_limit: 64,
            raw: false,
            out_args: false,
        };
        let _ = strata_decode::format_call(&mut l, c.nr as usize, &c.args, 0, &ProgramMemory, &opts);
        let _ = l.write_str(")");
        if v.act == Act::Deny && !self.p.audit {
            let _ = strata_decode::format_result(&mut l, c.nr as usize, -(v.errno as i64));
        }
        let _ = l.write_str(core::str::from_utf8(detail).unwrap_or(""));
        let _ = l.write_str(" by ");
        match v.rule {
            Rule::Named(s) => {
                let _ = l.write_str(core::str::from_utf8(self.p.text(s)).unwrap_or("?"));
            }
            Rule::Listed { i, nr } => {
                let name = strata_syscall_table::name(nr as usize).unwrap_or("?");
                let _ = write!(l, "syscalls.{}[{i}] \"{name}\"", v.act.name());
            }
            Rule::Text(t) => {
                let _ = l.write_str(t);
            }
        }
        if let Some(slot) = l.buf.get_mut(l.len) {
            *slot = b'\n';
            l.len += 1;
        }
        emit(strata_ext::channel::TRACE, l.buf.get(..l.len).unwrap_or(&[]));
    }
}

#[cfg(test)]
mod tests;
