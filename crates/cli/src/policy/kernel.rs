//! The kernel half of the policies: seccomp filters (one program for all of
//! them, [`merge`]; seccompiler installs it), Landlock rulesets (landlock)
//! and resource limits, built in the launcher and
//! installed in the child between fork and exec of strata-rt, so that
//! strata-rt and the program start under them and cannot take them off.
//!
//! What is compiled (docs/policy.md has the table):
//!
//! - **Hardening**, with any policy: seccomp refuses ptrace, io_uring, bpf,
//!   perf_event_open, kexec, modules, mounts, namespaces (unshare, setns,
//!   clone with CLONE_NEW*), keyrings, userfaultfd-free ways around strata
//!   (`prctl(PR_SET_SYSCALL_USER_DISPATCH, OFF)`), TIOCSTI/TIOCLINUX
//!   terminal injection; clone3 answers ENOSYS (its flags are behind a
//!   pointer seccomp cannot read; libc falls back to clone), and so does
//!   every call of the x32 ABI ([`x32_guard`]). Landlock
//!   allows the kernel's execve of strata-rt only: strata loads every
//!   program itself, so a raw execve of anything else (a static binary, a
//!   memfd) is refused.
//! - **Denied calls**: a seccomp rule per errno; **default deny**: an
//!   allow-list filter. Calls strata-rt itself makes ([`STRATA_NEEDS`])
//!   stay open in the kernel filter (the layer still refuses them to the
//!   program).
//! - **Paths**: a Landlock ruleset handling the kinds the policy
//!   restricts, with a rule per allowed prefix (plus what strata-rt needs:
//!   its session file, extension objects, the program and its interpreter,
//!   /proc for reading).
//! - **Network**: seccomp refuses `socket`/`socketpair` of families (and
//!   inet types) no rule can allow; Landlock refuses TCP bind/connect to
//!   ports no rule allows, when every rule that allows them names ports.
//! - **Resources**: setrlimit, soft and hard.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Cmp, SeccompCondition as Cond, SeccompFilter,
    SeccompRule, TargetArch,
};
use strata_ext_policy::spec::{kind, op, FAMILY_IP};
use strata_syscall_table as table;

use super::{Act, Network, Policy, PolicyError, Reach, ALWAYS_ALLOWED};

/// Calls strata-rt makes for itself (or issues in the program's name with
/// other arguments: execve of strata-rt, its own fork/clone handling). A
/// kernel filter that refused them would stop strata, so they stay open in
/// the kernel filters; the `policy` layer still refuses them to the
/// program. A unit test checks the runtime's sources name no other call.
pub const STRATA_NEEDS: [&str; 65] = [
    "read",
    "write",
    "open",
    "close",
    "fstat",
    "lseek",
    "mmap",
    "mprotect",
    "munmap",
    "brk",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "pread64",
    "pwrite64",
    "mremap",
    "madvise",
    "getpid",
    "clone",
    "fork",
    "vfork",
    "execve",
    "exit",
    "readlink",
    "getrlimit",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigsuspend",
    "sigaltstack",
    "personality",
    "prctl",
    "arch_prctl",
    "gettid",
    "futex",
    "exit_group",
    "tgkill",
    "openat",
    "newfstatat",
    "readlinkat",
    "faccessat",
    "pselect6",
    "ppoll",
    "signalfd",
    "signalfd4",
    "rt_tgsigqueueinfo",
    "process_vm_readv",
    "process_vm_writev",
    "getrandom",
    "memfd_create",
    "execveat",
    "membarrier",
    "epoll_pwait",
    "epoll_pwait2",
    "clone3",
    "getdents64",
    "getsockopt",
    // Text images (runtime/src/textimage.rs): copied and published in the
    // session's own directory (none of files in memory: fstatfs).
    "sendfile",
    "mkdir",
    "symlink",
    "fstatfs",
    // (and an unpublished copy removed: another process published the same
    // image first)
    "unlink",
    "rmdir",
    // An image mapped in place of a program's mapping: whether the
    // program's descriptor could be mapped so (textimage::mappable_exec).
    "fcntl",
    // The absolute path of a program started by a relative one, for
    // /proc/self/exe (runtime/src/load.rs, note_exe).
    "getcwd",
    // strata's own filter, which catches calls instead of Syscall User
    // Dispatch under a backstop (runtime/src/seccomp.rs).
    "seccomp",
];

/// Also issued by the `policy` layer itself (accept's peer and port).
const LAYER_NEEDS: [&str; 2] = ["getpeername", "getsockname"];

/// Always refused (EPERM) while a policy is on.
const HARDENING: [&str; 35] = [
    "ptrace",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "bpf",
    "perf_event_open",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "unshare",
    "setns",
    "add_key",
    "request_key",
    "keyctl",
    "iopl",
    "ioperm",
    "quotactl",
    "lookup_dcookie",
    "open_tree_attr",
];

/// Namespace flags clone may not carry.
const CLONE_NEW: [u64; 8] = [
    0x0002_0000, // CLONE_NEWNS
    0x0200_0000, // CLONE_NEWCGROUP
    0x0400_0000, // CLONE_NEWUTS
    0x0800_0000, // CLONE_NEWIPC
    0x1000_0000, // CLONE_NEWUSER
    0x2000_0000, // CLONE_NEWPID
    0x4000_0000, // CLONE_NEWNET
    0x0000_0080, // CLONE_NEWTIME
];

/// Calls that change a file's attributes.
pub const SETATTR: [&str; 20] = [
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "setxattrat",
    "removexattrat",
];

/// Whether the policy restricts writing and allows it only on device
/// files and under /dev/pts: then attribute changes are refused by seccomp.
pub fn metadata_locked(p: &Policy) -> bool {
    use std::os::unix::fs::FileTypeExt;
    p.restricted & kind::WRITE != 0
        && p.paths
            .iter()
            .filter(|r| r.act != Act::Deny && r.kinds & kind::WRITE != 0)
            .all(|r| {
                r.prefix == Path::new("/dev/pts")
                    || std::fs::metadata(&r.prefix).is_ok_and(|m| m.file_type().is_char_device())
            })
}

/// What strata-rt needs to reach under a policy.
pub struct Needs<'a> {
    pub runtime: &'a Path,
    pub session: Option<&'a Path>,
    /// The session's directory of text images.
    pub text_dir: Option<PathBuf>,
    /// Files strata-rt reads: the program, its interpreter, extension objects.
    pub read_files: Vec<PathBuf>,
}

/// Everything to install in the child.
pub struct Kernel {
    filters: Vec<BpfProgram>,
    rulesets: Vec<OwnedFd>,
    rlimits: Vec<(i32, u64)>,
}

fn nr(name: &str) -> Option<i64> {
    table::by_name(name).map(|e| e.nr as i64)
}

fn needs(n: u32) -> bool {
    let name = table::name(n as usize).unwrap_or("");
    STRATA_NEEDS.contains(&name) || LAYER_NEEDS.contains(&name) || ALWAYS_ALLOWED.contains(&name)
}

fn bad(p: &str, msg: impl std::fmt::Display) -> PolicyError {
    PolicyError {
        policy: p.to_string(),
        msg: msg.to_string(),
    }
}

/// One condition on an argument: `(arg & mask) == val`, over the argument's
/// low 32 bits (`dword`) or all 64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct C {
    arg: u8,
    dword: bool,
    mask: u64,
    val: u64,
}

fn cond(arg: u8, len: Len, cmp: Cmp, v: u64) -> Result<C, PolicyError> {
    let dword = matches!(len, Len::Dword);
    let mask = match cmp {
        Cmp::Eq => u64::MAX,
        Cmp::MaskedEq(m) => m,
        _ => return Err(bad("(seccomp)", "only Eq and MaskedEq are compiled")),
    };
    if arg > 5 {
        return Err(bad("(seccomp)", "argument index past 5"));
    }
    Ok(C {
        arg,
        dword,
        mask,
        val: v,
    })
}

/// A rule: all of its conditions hold.
fn rule(c: Vec<C>) -> Result<Vec<C>, PolicyError> {
    if c.is_empty() {
        return Err(bad("(seccomp)", "a rule without conditions"));
    }
    Ok(c)
}

/// One filter as written: per number, its rules (a number with no rule
/// matches by itself); `hit` when a rule matches, `mismatch` otherwise and
/// for every number it does not name.
#[derive(Debug, Clone)]
struct Spec {
    rules: BTreeMap<i64, Vec<Vec<C>>>,
    mismatch: SeccompAction,
    hit: SeccompAction,
}

fn compile(rules: BTreeMap<i64, Vec<Vec<C>>>, mismatch: SeccompAction, hit: SeccompAction) -> Spec {
    Spec { rules, mismatch, hit }
}

impl Spec {
    /// The filter on its own, compiled by seccompiler (the reference the
    /// merged program is tested against, and what is installed when one
    /// cannot be merged).
    fn to_bpf(&self) -> Result<BpfProgram, PolicyError> {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        for (&n, rs) in &self.rules {
            let mut out = Vec::new();
            for r in rs {
                let conds = r
                    .iter()
                    .map(|c| {
                        let len = if c.dword { Len::Dword } else { Len::Qword };
                        let cmp = if c.mask == u64::MAX {
                            Cmp::Eq
                        } else {
                            Cmp::MaskedEq(c.mask)
                        };
                        Cond::new(c.arg, len, cmp, c.val).map_err(|e| bad("(seccomp)", e))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                out.push(SeccompRule::new(conds).map_err(|e| bad("(seccomp)", e))?);
            }
            rules.insert(n, out);
        }
        let f = SeccompFilter::new(rules, self.mismatch.clone(), self.hit.clone(), TargetArch::x86_64)
            .map_err(|e| bad("(seccomp)", e))?;
        BpfProgram::try_from(f).map_err(|e| bad("(seccomp)", e))
    }
}

/// What gets installed for `specs`: one program for all of them
/// ([`merge`]), or each its own when they cannot be merged.
fn programs(specs: &[Spec]) -> Result<Vec<BpfProgram>, PolicyError> {
    match merge(specs) {
        Some(p) => Ok(vec![p]),
        None => {
            let mut v = specs.iter().map(Spec::to_bpf).collect::<Result<Vec<_>, _>>()?;
            v.push(x32_guard());
            Ok(v)
        }
    }
}

/// The first number of the x32 ABI's calls (x86-64's arch, bit 30 set).
const X32_BIT: u32 = 0x4000_0000;

/// ENOSYS for a call of the x32 ABI, as on a kernel without it: the
/// filters name x86-64's numbers only, and a kernel built with x32 would
/// run `0x4000_0000 | n` as call n (its truncate, ptrace, mount ...).
/// [`merge`] puts this in its one program; on its own it is installed
/// after the others, whose verdicts it never weakens.
fn x32_guard() -> BpfProgram {
    use strata_proto::bpf::{AUDIT_ARCH_X86_64, JEQ_K, JGE_K, LD_W_ABS, OFF_ARCH, OFF_NR, RET_ALLOW, RET_K};
    vec![
        ins(LD_W_ABS, 0, 0, OFF_ARCH),
        ins(JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        ins(LD_W_ABS, 0, 0, OFF_NR),
        ins(JGE_K, 0, 1, X32_BIT),
        ins(RET_K, 0, 0, x32_verdict()),
        ins(RET_K, 0, 0, RET_ALLOW),
    ]
}

/// One classic BPF instruction.
fn ins(code: u16, jt: u8, jf: u8, k: u32) -> seccompiler::sock_filter {
    seccompiler::sock_filter { code, jt, jf, k }
}

fn x32_verdict() -> u32 {
    u32::from(SeccompAction::Errno(libc::ENOSYS as u32))
}

/// All of `specs` in one classic BPF program, with the verdict the kernel
/// would give with each installed as a filter of its own, in order.
///
/// Why: the kernel runs every filter on a call its action cache cannot
/// answer, each a separate program it enters in turn; under a policy that is every call strata's own filter decides by
/// address (runtime seccomp.rs) and every call whose verdict looks at
/// arguments. And seccompiler compares the number with each number a
/// filter names in turn. Here a binary search over the numbers comes first:
/// a number whose verdict needs no argument returns at once; the few that
/// do (clone, prctl, ioctl, memfd_create, socket, ...) jump to a block that
/// runs the filters' rules for that number, newest filter first.
///
/// The verdicts are ERRNO or ALLOW (a call of another architecture is
/// killed, as seccompiler's filters do): with several filters the kernel
/// returns the newest filter's ERRNO, which is the first non-ALLOW verdict
/// met newest first. None when some action is another kind, or the program
/// would be too long; a unit test runs it against the separate filters on
/// many calls.
fn merge(specs: &[Spec]) -> Option<BpfProgram> {
    use seccompiler::sock_filter;
    use strata_proto::bpf::{
        self, Emit, ALU_AND_K, AUDIT_ARCH_X86_64, JA, JEQ_K, LD_W_ABS, OFF_ARCH, OFF_ARGS, OFF_NR, RET_ALLOW as ALLOW,
        RET_K, RET_KILL_PROCESS,
    };
    /// The program being written, for [`bpf::search`].
    struct Out<'a>(&'a mut Vec<sock_filter>);
    impl Emit for Out<'_> {
        fn push(&mut self, code: u16, jt: u8, jf: u8, k: u32) -> Option<usize> {
            self.0.push(sock_filter { code, jt, jf, k });
            Some(self.0.len() - 1)
        }
        fn next_at(&self) -> usize {
            self.0.len()
        }
        fn set_k(&mut self, at: usize, k: u32) -> Option<()> {
            self.0.get_mut(at)?.k = k;
            Some(())
        }
    }
    let act = |a: &SeccompAction| match a {
        SeccompAction::Allow | SeccompAction::Errno(_) => Some(u32::from(a.clone())),
        _ => None,
    };
    let acts: Vec<(u32, u32)> = specs
        .iter()
        .map(|s| Some((act(&s.mismatch)?, act(&s.hit)?)))
        .collect::<Option<_>>()?;
    let named: BTreeSet<i64> = specs.iter().flat_map(|s| s.rules.keys().copied()).collect();
    if named.iter().any(|&n| !(0..4096).contains(&n)) {
        return None;
    }
    // A number's verdict when no argument matters (None: a block).
    let constant = |n: i64| -> Option<u32> {
        for (s, &(mismatch, hit)) in specs.iter().zip(&acts).rev() {
            let v = match s.rules.get(&n) {
                None => mismatch,
                Some(r) if r.is_empty() => hit,
                Some(_) => return None,
            };
            if v != ALLOW {
                return Some(v);
            }
        }
        Some(ALLOW)
    };
    #[derive(Clone, Copy, PartialEq)]
    enum Leaf {
        Ret(u32),
        Block(i64),
    }
    let top = named.iter().next_back().copied().unwrap_or(0);
    let mut runs: Vec<(u32, Leaf)> = Vec::new();
    for n in 0..=top + 1 {
        let leaf = constant(n).map_or(Leaf::Block(n), Leaf::Ret);
        if runs
            .last()
            .is_none_or(|&(_, l)| l != leaf || matches!(l, Leaf::Block(_)))
        {
            runs.push((n as u32, leaf));
        }
    }
    // The x32 ABI's numbers ([`x32_guard`]): a verdict of their own, which
    // takes precedence over every ALLOW and, among ERRNOs, is the newest.
    runs.push((X32_BIT, Leaf::Ret(x32_verdict())));
    let mut out = vec![
        ins(LD_W_ABS, 0, 0, OFF_ARCH),
        ins(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        ins(RET_K, 0, 0, RET_KILL_PROCESS),
        ins(LD_W_ABS, 0, 0, OFF_NR),
    ];
    // Jumps to patch: (position of a `ja`, label); labels: positions.
    let mut jumps: Vec<(usize, usize)> = Vec::new();
    let mut labels: Vec<usize> = Vec::new();
    let mut blocks: Vec<(i64, usize)> = Vec::new();
    bpf::search(
        &mut Out(&mut out),
        runs.len(),
        &|i| runs[i].0,
        &mut |e: &mut Out, i| match runs[i].1 {
            Leaf::Ret(v) => e.push(RET_K, 0, 0, v).map(|_| ()),
            Leaf::Block(n) => {
                labels.push(usize::MAX);
                blocks.push((n, labels.len() - 1));
                jumps.push((e.next_at(), labels.len() - 1));
                e.push(JA, 0, 0, 0).map(|_| ())
            }
        },
    )?;
    for (n, label) in blocks {
        labels[label] = out.len();
        for (s, &(mismatch, hit)) in specs.iter().zip(&acts).rev() {
            let rules = match s.rules.get(&n) {
                None => {
                    if mismatch != ALLOW {
                        out.push(ins(RET_K, 0, 0, mismatch));
                        break;
                    }
                    continue;
                }
                Some(r) if r.is_empty() => {
                    if hit != ALLOW {
                        out.push(ins(RET_K, 0, 0, hit));
                        break;
                    }
                    continue;
                }
                Some(r) => r,
            };
            // After this filter: the next one (older), when it allows.
            labels.push(usize::MAX);
            let next_filter = labels.len() - 1;
            for r in rules {
                labels.push(usize::MAX);
                let next_rule = labels.len() - 1;
                for c in r {
                    let at = OFF_ARGS + 8 * u32::from(c.arg);
                    let words: &[(u32, u32, u32)] = &[
                        (at, c.mask as u32, (c.val & c.mask) as u32),
                        (at + 4, (c.mask >> 32) as u32, ((c.val & c.mask) >> 32) as u32),
                    ];
                    let words = if c.dword { &words[..1] } else { words };
                    for &(off, mask, val) in words {
                        out.push(ins(LD_W_ABS, 0, 0, off));
                        if mask != u32::MAX {
                            out.push(ins(ALU_AND_K, 0, 0, mask));
                        }
                        out.push(ins(JEQ_K, 1, 0, val));
                        jumps.push((out.len(), next_rule));
                        out.push(ins(JA, 0, 0, 0));
                    }
                }
                // Every condition held.
                if hit != ALLOW {
                    out.push(ins(RET_K, 0, 0, hit));
                } else {
                    jumps.push((out.len(), next_filter));
                    out.push(ins(JA, 0, 0, 0));
                }
                labels[next_rule] = out.len();
            }
            // No rule matched.
            if mismatch != ALLOW {
                out.push(ins(RET_K, 0, 0, mismatch));
            }
            labels[next_filter] = out.len();
        }
        out.push(ins(RET_K, 0, 0, ALLOW));
    }
    for (at, label) in jumps {
        out[at].k = (labels[label] - at - 1) as u32;
    }
    (out.len() <= 4096).then_some(out)
}

/// The hardening filters.
fn hardening() -> Result<Vec<Spec>, PolicyError> {
    let mut rules: BTreeMap<i64, Vec<Vec<C>>> = BTreeMap::new();
    for name in HARDENING {
        if let Some(n) = nr(name) {
            rules.insert(n, vec![]);
        }
    }
    // clone with a namespace flag.
    let mut clone = Vec::new();
    for f in CLONE_NEW {
        clone.push(rule(vec![cond(0, Len::Qword, Cmp::MaskedEq(f), f)?])?);
    }
    rules.insert(libc::SYS_clone, clone);
    // prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF).
    rules.insert(
        libc::SYS_prctl,
        vec![rule(vec![
            cond(0, Len::Dword, Cmp::Eq, 59)?,
            cond(1, Len::Qword, Cmp::Eq, 0)?,
        ])?],
    );
    // A memfd that could be executed: execveat would run it outside strata
    // (Landlock does not see memfds); the layer adds MFD_NOEXEC_SEAL.
    rules.insert(
        libc::SYS_memfd_create,
        vec![rule(vec![cond(1, Len::Dword, Cmp::MaskedEq(8), 0)?])?],
    );
    // Terminal input injection.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Len::Dword, Cmp::Eq, 0x5412)?])?, // TIOCSTI
            rule(vec![cond(1, Len::Dword, Cmp::Eq, 0x541c)?])?, // TIOCLINUX
        ],
    );
    let eperm = compile(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32));
    let mut c3 = BTreeMap::new();
    c3.insert(libc::SYS_clone3, vec![]);
    let enosys = compile(c3, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32));
    Ok(vec![eperm, enosys])
}

/// The seccomp filters of one policy.
fn filters(p: &Policy) -> Result<Vec<Spec>, PolicyError> {
    let mut out = Vec::new();
    // Denied calls, one filter per errno.
    let mut by_errno: BTreeMap<i32, BTreeMap<i64, Vec<Vec<C>>>> = BTreeMap::new();
    for (&n, r) in &p.sys {
        if r.act == Act::Deny && !needs(n) {
            by_errno.entry(r.errno).or_default().insert(n as i64, vec![]);
        }
    }
    for (e, rules) in by_errno {
        out.push(compile(rules, SeccompAction::Allow, SeccompAction::Errno(e as u32)));
    }
    // Default deny: an allow-list.
    if p.default == Act::Deny {
        let mut allow: BTreeMap<i64, Vec<Vec<C>>> = BTreeMap::new();
        for e in table::entries() {
            let listed = p.sys.get(&e.nr).map(|r| r.act != Act::Deny);
            if listed == Some(true) || needs(e.nr) {
                allow.insert(e.nr as i64, vec![]);
            }
        }
        out.push(compile(
            allow,
            SeccompAction::Errno(p.errno as u32),
            SeccompAction::Allow,
        ));
    }
    // Attribute changes (chmod, chown, utimes, xattrs): no Landlock right
    // covers them. When the policy lets nothing but device files be
    // written, seccomp refuses them outright; otherwise they are checked
    // in-process only.
    if metadata_locked(p) {
        let mut rules: BTreeMap<i64, Vec<Vec<C>>> = BTreeMap::new();
        for name in SETATTR {
            if let Some(n) = nr(name) {
                rules.insert(n, vec![]);
            }
        }
        out.push(compile(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(p.errno as u32),
        ));
    }
    if p.restricted & kind::WRITE != 0 {
        out.extend(truncation(p.errno)?);
    }
    // Socket families and types no rule can allow.
    if let Some(n) = &p.net {
        let layer = strata_ext_policy::Sandbox::from_policy(parse_compiled(p)?);
        let mut rules: BTreeMap<i64, Vec<Vec<C>>> = BTreeMap::new();
        let mut sock = Vec::new();
        for fam in 0u16..46 {
            let types = [1u64, 2, 3, 5];
            let denied: Vec<u64> = types
                .iter()
                .copied()
                .filter(|&t| !layer.socket_allowed(fam, t))
                .collect();
            if denied.len() == types.len() {
                sock.push(rule(vec![cond(0, Len::Dword, Cmp::Eq, fam as u64)?])?);
            } else {
                for t in denied {
                    sock.push(rule(vec![
                        cond(0, Len::Dword, Cmp::Eq, fam as u64)?,
                        cond(1, Len::Dword, Cmp::MaskedEq(0xf), t)?,
                    ])?);
                }
            }
        }
        if !sock.is_empty() {
            rules.insert(libc::SYS_socketpair, sock.clone());
            rules.insert(libc::SYS_socket, sock);
            out.push(compile(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(n.errno as u32),
            ));
        }
    }
    Ok(out)
}

/// Truncating, under a policy that restricts writing. Landlock's ruleset
/// does not handle its truncate right (see [`fs_rights`]), so a file could
/// be truncated without Landlock's write right through truncate(2) and
/// through an open with O_TRUNC that does not ask for writing (O_RDONLY or
/// the access mode 3; not with O_PATH, which drops O_TRUNC): seccomp
/// refuses both, and openat2 (whose flags are behind a pointer) answers
/// ENOSYS, as on a kernel without it, so libc and runtimes fall back to
/// openat. ftruncate needs a descriptor open for writing, which Landlock's
/// write right already holds. The `policy` layer serves the program's
/// truncate(2) as an open for writing and ftruncate (ext-policy
/// `truncate`), and refuses such opens of open and openat with a log line
/// (open_by_handle_at has no path: the layer does not see it).
fn truncation(errno: i32) -> Result<Vec<Spec>, PolicyError> {
    let (accmode, trunc, path) = (libc::O_ACCMODE as u64, libc::O_TRUNC as u64, libc::O_PATH as u64);
    let mut rules: BTreeMap<i64, Vec<Vec<C>>> = BTreeMap::new();
    rules.insert(libc::SYS_truncate, vec![]);
    for (n, flags_arg) in [
        (libc::SYS_open, 1),
        (libc::SYS_openat, 2),
        (libc::SYS_open_by_handle_at, 2),
    ] {
        let mut rs = Vec::new();
        for mode in [0, accmode] {
            rs.push(rule(vec![cond(
                flags_arg,
                Len::Dword,
                Cmp::MaskedEq(accmode | trunc | path),
                trunc | mode,
            )?])?);
        }
        rules.insert(n, rs);
    }
    let refuse = compile(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32));
    let mut o2 = BTreeMap::new();
    o2.insert(libc::SYS_openat2, vec![]);
    let enosys = compile(o2, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32));
    Ok(vec![refuse, enosys])
}

fn parse_compiled(p: &Policy) -> Result<strata_ext_policy::spec::Policy, PolicyError> {
    let mut out = strata_ext_policy::spec::Policy::empty();
    out.parse_into(&p.compiled())
        .map_err(|e| bad(&p.name, String::from_utf8_lossy(e.message())))?;
    Ok(out)
}

const ABI_USED: ABI = ABI::V5;

fn fs_rights(k: u8) -> BitFlags<AccessFs> {
    let mut r = BitFlags::empty();
    if k & kind::READ != 0 {
        r |= AccessFs::ReadFile | AccessFs::ReadDir;
    }
    if k & kind::WRITE != 0 {
        // Not Truncate: a ruleset that handles it walks the path of every
        // file opened, for reading too (bench/results/2026-11-23-policy-open.md).
        // Truncating is held by seccomp instead ([`truncation`]).
        r |= AccessFs::WriteFile;
    }
    if k & kind::CREATE != 0 {
        r |= AccessFs::MakeChar
            | AccessFs::MakeDir
            | AccessFs::MakeReg
            | AccessFs::MakeSock
            | AccessFs::MakeFifo
            | AccessFs::MakeBlock
            | AccessFs::MakeSym
            | AccessFs::RemoveDir
            | AccessFs::RemoveFile
            | AccessFs::Refer;
    }
    if k & kind::EXECUTE != 0 {
        r |= AccessFs::Execute;
    }
    r
}

/// TCP ports operation `o` may use, when the kernel can hold it to them:
/// the network default denies, and every rule that may allow `o` on an
/// inet socket names ports (4096 at most in all).
pub fn tcp_ports(n: &Network, o: u8) -> Option<BTreeSet<u16>> {
    if n.default != Act::Deny {
        return None;
    }
    let mut ports = BTreeSet::new();
    for r in &n.rules {
        let inet = matches!(r.family, 0 | 2 | 10 | FAMILY_IP);
        if r.act == Act::Deny || r.ops & o == 0 || !inet || r.proto == "udp" {
            continue;
        }
        let (lo, hi) = r.ports?;
        if ports.len() + (hi - lo) as usize >= 4096 {
            return None;
        }
        ports.extend(lo..=hi);
    }
    Some(ports)
}

/// The Landlock ABI this kernel has (0: none).
fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and size 0, this flag only asks for
    // the ABI version; nothing is read or written.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    v.max(0)
}

/// The first Landlock ABI with scopes (Linux 6.12).
const SCOPES_ABI: i64 = 6;

/// `p`'s rules that Landlock's scopes hold: each with its scope, its
/// label, and what the kernel does.
fn reach_rules(p: &Policy) -> [(Reach, Scope, &'static str, &'static str); 2] {
    [
        (
            p.signals,
            Scope::Signal,
            "process.signals = \"inside\"",
            "Landlock scope: a signal to a process outside this run is refused (EPERM)",
        ),
        (
            p.abstract_unix,
            Scope::AbstractUnixSocket,
            "network.abstract_unix = \"inside\"",
            "Landlock scope: connecting or sending to an abstract UNIX socket made outside this run is refused (EPERM)",
        ),
    ]
}

/// The Landlock scopes of `p`'s ruleset: what its `Reach` rules keep inside
/// the run, where this kernel has scopes (a rule the file names explicitly
/// is an error without them; a default is left out). With the rule's label
/// for an error.
fn scopes(p: &Policy) -> Result<BitFlags<Scope>, PolicyError> {
    let abi = landlock_abi();
    let mut out = BitFlags::empty();
    for (reach, scope, label, _) in reach_rules(p) {
        match reach {
            Reach::Inside { .. } if abi >= SCOPES_ABI => out |= scope,
            Reach::Inside { explicit: true } => {
                return Err(bad(
                    &p.name,
                    format!(
                        "the kernel cannot enforce {label}: it needs Landlock's scopes (ABI {SCOPES_ABI}, Linux 6.12), and this kernel has ABI {abi}; the rule has no in-process half (\"any\" lifts it)"
                    ),
                ))
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The Landlock ruleset of one policy.
fn landlock(p: &Policy, needs: &Needs) -> Result<OwnedFd, PolicyError> {
    let err = |e: &dyn std::fmt::Display| {
        bad(
            &p.name,
            format!("the kernel cannot enforce this policy's Landlock rules: {e} (backstop = \"none\" runs it in-process only)"),
        )
    };
    // Refer always: a ruleset that does not handle it refuses every link
    // and rename across directories (EXDEV), Landlock's rule for rulesets
    // of its first ABI; Execute is always handled (only strata-rt may be
    // exec'd), so that would hold under every policy.
    let handled_fs = fs_rights(p.restricted | kind::EXECUTE) | AccessFs::Refer;
    let mut handled_net = BitFlags::<AccessNet>::empty();
    let (mut bind, mut connect) = (None, None);
    if let Some(n) = &p.net {
        bind = tcp_ports(n, op::BIND);
        connect = tcp_ports(n, op::CONNECT);
        if bind.is_some() {
            handled_net |= AccessNet::BindTcp;
        }
        if connect.is_some() {
            handled_net |= AccessNet::ConnectTcp;
        }
    }
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(handled_fs)
        .map_err(|e| err(&e))?;
    if !handled_net.is_empty() {
        rs = rs.handle_access(handled_net).map_err(|e| err(&e))?;
    }
    let scoped = scopes(p)?;
    if !scoped.is_empty() {
        rs = rs.scope(scoped).map_err(|e| err(&e))?;
    }
    let mut c = rs.create().map_err(|e| err(&e))?;
    let file_rights = AccessFs::from_file(ABI_USED);
    let add = |c: landlock::RulesetCreated, path: &Path, rights: BitFlags<AccessFs>| {
        let rights = rights & handled_fs;
        let rights = match std::fs::metadata(path) {
            Ok(m) if !m.is_dir() => rights & file_rights,
            Ok(_) => rights,
            Err(e) => return Err(err(&format!("{}: {}", path.display(), crate::preflight::io_text(&e)))),
        };
        if rights.is_empty() {
            return Ok(c);
        }
        let fd = PathFd::new(path).map_err(|e| err(&e))?;
        c.add_rule(PathBeneath::new(fd, rights)).map_err(|e| err(&e))
    };
    for r in p.paths.iter().filter(|r| r.act != Act::Deny) {
        c = add(c, &r.prefix, fs_rights(r.kinds))?;
    }
    // What strata-rt itself needs.
    c = add(c, needs.runtime, AccessFs::Execute | AccessFs::ReadFile)?;
    if let Some(s) = needs.session {
        c = add(c, s, AccessFs::ReadFile | AccessFs::WriteFile)?;
    }
    if let Some(d) = &needs.text_dir {
        // The session's text images: made and read by its own processes
        // only (what a sandboxed program writes there reaches its sibling
        // processes, under the same rules, but no other session and no
        // later run: docs/policy.md, Limits).
        c = add(
            c,
            d,
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::MakeReg | AccessFs::MakeDir | AccessFs::MakeSym,
        )?;
    }
    for f in &needs.read_files {
        c = add(c, f, AccessFs::ReadFile.into())?;
    }
    c = add(c, Path::new("/proc"), AccessFs::ReadFile | AccessFs::ReadDir)?;
    if p.restricted & kind::CREATE == 0 {
        // Links and renames anywhere: creating is not restricted (when it
        // is, Refer comes with the prefixes that allow it).
        c = add(c, Path::new("/"), AccessFs::Refer.into())?;
    }
    for (set, access) in [(bind, AccessNet::BindTcp), (connect, AccessNet::ConnectTcp)] {
        for port in set.into_iter().flatten() {
            c = c.add_rule(NetPort::new(port, access)).map_err(|e| err(&e))?;
        }
    }
    let fd: Option<OwnedFd> = c.into();
    fd.ok_or_else(|| err(&"Landlock is not available"))
}

impl Kernel {
    /// Builds the kernel half of `policies` (those whose backstop is not
    /// `none`, and none in audit mode).
    pub fn build(policies: &[Policy], needs: &Needs) -> Result<Option<Kernel>, PolicyError> {
        let active: Vec<&Policy> = policies.iter().filter(|p| p.kernel_enforced()).collect();
        if active.is_empty() {
            return Ok(None);
        }
        let mut specs = hardening()?;
        let mut k = Kernel {
            filters: Vec::new(),
            rulesets: Vec::new(),
            rlimits: Vec::new(),
        };
        let mut limits: BTreeMap<i32, u64> = BTreeMap::new();
        for p in active {
            specs.extend(filters(p)?);
            k.rulesets.push(landlock(p, needs)?);
            for (res, v, _) in &p.rlimits {
                let e = limits.entry(*res).or_insert(*v);
                *e = (*e).min(*v);
            }
        }
        for (res, v) in limits {
            let mut cur = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: `cur` is a valid rlimit for getrlimit to fill.
            unsafe { libc::getrlimit(res as libc::__rlimit_resource_t, &mut cur) };
            k.rlimits.push((res, v.min(cur.rlim_max)));
        }
        k.filters = programs(&specs)?;
        Ok(Some(k))
    }

    /// Installs everything in the calling process. Runs in the child
    /// between fork and exec: system calls only, no allocation.
    pub fn install(&self) -> io::Result<()> {
        for &(res, v) in &self.rlimits {
            let l = libc::rlimit {
                rlim_cur: v,
                rlim_max: v,
            };
            // SAFETY: `l` is a valid rlimit for the duration of the call.
            if unsafe { libc::setrlimit(res as libc::__rlimit_resource_t, &l) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        // SAFETY: prctl with integer arguments.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        for fd in &self.rulesets {
            // SAFETY: landlock_restrict_self with a ruleset descriptor we own.
            if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        for f in &self.filters {
            // The errors carry the errno; none is formatted here (no
            // allocation between fork and exec).
            seccompiler::apply_filter(f).map_err(|e| match e {
                seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
                _ => io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    }
}

/// What a socket the program would inherit is: (family, type), or None for
/// a descriptor that is not a socket.
fn socket_of(fd: i32) -> Option<(u16, u64)> {
    let get = |opt: libc::c_int| -> Option<libc::c_int> {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `v` and `len` are valid for getsockopt to fill; a
        // descriptor that is not a socket answers ENOTSOCK.
        let r = unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, opt, (&mut v as *mut libc::c_int).cast(), &mut len) };
        (r == 0).then_some(v)
    };
    Some((get(libc::SO_DOMAIN)? as u16, get(libc::SO_TYPE)? as u64))
}

fn socket_text(family: u16, ty: u64) -> String {
    let fam = match family {
        1 => "AF_UNIX".to_string(),
        2 => "IPv4".to_string(),
        10 => "IPv6".to_string(),
        16 => "AF_NETLINK".to_string(),
        17 => "AF_PACKET".to_string(),
        f => format!("family {f}"),
    };
    let ty = match ty {
        1 => "stream",
        2 => "datagram",
        3 => "raw",
        5 => "seqpacket",
        _ => "other",
    };
    format!("{fam} {ty} socket")
}

/// Refuses to start when the program would inherit a socket that a
/// kernel-enforced policy's seccomp rule would not let it make
/// (`socket()` of that family and type is refused), unless the policy says
/// `network.inherited = "allow"`: seccomp cannot read where a send goes, so
/// on such a socket the policy's network rules would hold in-process only.
/// An IPv4 or IPv6 stream socket is let in where Landlock holds TCP bind
/// and connect (its accepted and established connections are channels the
/// parent gave). Looks at the launcher's own descriptors that are not
/// close-on-exec: those the program gets.
pub fn check_inherited(policies: &[Policy]) -> Result<(), PolicyError> {
    // Each policy's layer answers which sockets its seccomp rule lets the
    // program make (as for the filter itself, [`filters`]).
    let mut active = Vec::new();
    for p in policies.iter().filter(|p| p.kernel_enforced()) {
        if let Some(n) = p.net.as_ref().filter(|n| !n.inherited_allowed) {
            active.push((p, n, strata_ext_policy::Sandbox::from_policy(parse_compiled(p)?)));
        }
    }
    if active.is_empty() {
        return Ok(());
    }
    let mut fds: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect(),
        // Without /proc: every number up to the descriptor limit (at most
        // 2^16 of them), F_GETFD telling which are open.
        Err(_) => {
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: `lim` is a valid rlimit for getrlimit to fill.
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
            (0..lim.rlim_cur.min(1 << 16) as i32).collect()
        }
    };
    fds.sort_unstable();
    for fd in fds {
        // SAFETY: F_GETFD on a descriptor number only reads its flags (the
        // directory's own descriptor, gone by now, answers EBADF).
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags < 0 || flags & libc::FD_CLOEXEC != 0 {
            continue;
        }
        let Some((family, ty)) = socket_of(fd) else {
            continue;
        };
        for (p, n, layer) in &active {
            if layer.socket_allowed(family, ty & 0xf) {
                continue;
            }
            let tcp_held = matches!(family, 2 | 10)
                && ty & 0xf == 1
                && tcp_ports(n, op::BIND).is_some()
                && tcp_ports(n, op::CONNECT).is_some();
            if tcp_held {
                continue;
            }
            return Err(bad(
                &p.name,
                format!(
                    "descriptor {fd} is an inherited {}, which this policy does not let the program make; the kernel could not hold the network rules on it (seccomp cannot read where a send goes): close it before starting strata (e.g. `{fd}>&-`), or set network.inherited = \"allow\" to let it in, checked in-process only",
                    socket_text(family, ty & 0xf)
                ),
            ));
        }
    }
    Ok(())
}

/// How one rule is enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// Whole, by the kernel (and by the layer, which names the rule).
    Kernel(&'static str),
    /// Partly by the kernel; the rest in-process.
    Partial(String),
    /// In-process only.
    InProcess(String),
}

/// Every rule of `p` and how it is enforced (`strata policy check`).
pub fn enforcement(p: &Policy) -> Vec<(String, How)> {
    let mut out = Vec::new();
    if p.default == Act::Deny {
        out.push((
            "policy.default = \"deny\"".to_string(),
            How::Partial(format!(
                "seccomp allow-list; the {} calls strata-rt itself makes stay open in the kernel filter",
                STRATA_NEEDS.len()
            )),
        ));
    }
    for (&n, r) in &p.sys {
        let name = table::name(n as usize).unwrap_or("?");
        let how = match r.act {
            Act::Deny if needs(n) => How::InProcess(format!("strata-rt itself makes {name}")),
            Act::Deny => How::Kernel("seccomp"),
            Act::Log => How::InProcess("logging".into()),
            Act::Allow => continue,
        };
        out.push((format!("{} ({name})", r.label), how));
    }
    for k in [kind::READ, kind::WRITE, kind::CREATE, kind::EXECUTE] {
        if p.restricted & k == 0 {
            continue;
        }
        let n = p
            .paths
            .iter()
            .filter(|r| r.act != Act::Deny && r.kinds & k != 0)
            .count();
        let how = match k {
            kind::EXECUTE => How::Partial("checked in-process; the kernel refuses every execve but strata-rt's".into()),
            kind::WRITE if metadata_locked(p) => How::Kernel(
                "Landlock handles opening for writing; seccomp refuses truncating without it (truncate(2), which strata serves as an open for writing, and O_TRUNC opens that do not write) and attribute changes (only devices are writable)",
            ),
            kind::WRITE => How::Partial(
                "Landlock handles opening for writing; seccomp refuses truncating without it (truncate(2), which strata serves as an open for writing, and O_TRUNC opens that do not write); attribute changes are checked in-process only"
                    .into(),
            ),
            _ => How::Kernel("Landlock handles this access"),
        };
        out.push((format!("paths.{} (only under its {n} prefixes)", kind::name(k)), how));
    }
    for r in &p.paths {
        let how = if r.act != Act::Deny {
            if r.kinds & kind::WRITE != 0 && !metadata_locked(p) {
                How::Partial(
                    "Landlock holds opening for writing (and seccomp truncating without it); changing attributes (chmod, chown, utimes, xattrs) is checked in-process only (no Landlock right covers it)".into(),
                )
            } else if r.kinds & kind::EXECUTE != 0 {
                How::Partial(
                    "strata loads programs itself, so the check is in-process; the kernel refuses every execve but strata-rt's".into(),
                )
            } else {
                How::Kernel("Landlock")
            }
        } else {
            // Landlock only allows: a denial holds in the kernel where no
            // allowing prefix covers it.
            let covered: Vec<&str> = [kind::READ, kind::WRITE, kind::CREATE]
                .into_iter()
                .filter(|&k| {
                    p.restricted & k == 0
                        || p.paths
                            .iter()
                            .any(|a| a.act != Act::Deny && a.kinds & k != 0 && r.prefix.starts_with(&a.prefix))
                })
                .map(kind::name)
                .collect();
            if covered.is_empty() {
                How::Kernel("Landlock (no allowing prefix covers it)")
            } else {
                How::Partial(format!(
                    "in-process for {} (Landlock rules can only allow, and an allowing prefix or an unrestricted kind covers it)",
                    covered.join(", ")
                ))
            }
        };
        out.push((r.label.clone(), how));
    }
    if let Some(n) = &p.net {
        let (bind, connect) = (tcp_ports(n, op::BIND).is_some(), tcp_ports(n, op::CONNECT).is_some());
        out.push((
            format!("network.default = \"{}\"", n.default.as_str()),
            match (n.default, bind && connect) {
                (Act::Allow, _) => How::Kernel("nothing to enforce"),
                (_, true) => How::Partial("seccomp refuses socket families no rule allows; Landlock holds TCP bind and connect to the allowed ports; UDP and addresses in-process".into()),
                _ => How::Partial("seccomp refuses socket families no rule allows; addresses and ports in-process".into()),
            },
        ));
        for r in &n.rules {
            let how = if r.net.is_none() && r.ports.is_none() && r.ops == op::ALL {
                How::Kernel("seccomp (socket family and type)")
            } else if r.net.is_none()
                && r.ports.is_some()
                && r.proto != "udp"
                && r.act != Act::Deny
                && (bind || connect)
            {
                How::Partial("Landlock holds the TCP ports; other checks in-process".into())
            } else {
                How::InProcess("addresses, ports of UDP, and per-operation rules are decided in-process".into())
            };
            out.push((r.label.clone(), how));
        }
    }
    // (An explicit rule this kernel cannot hold: `scopes` is an error, and
    // the rule is listed as not enforced.)
    let (scoped, unheld) = match scopes(p) {
        Ok(s) => (s, false),
        Err(_) => (BitFlags::empty(), true),
    };
    for (reach, scope, label, what) in reach_rules(p) {
        if let Reach::Inside { explicit } = reach {
            if scoped.contains(scope) {
                let label = if explicit {
                    label.to_string()
                } else {
                    format!("{label} (the default)")
                };
                out.push((label, How::Kernel(what)));
            } else if explicit && unheld {
                out.push((
                    label.to_string(),
                    How::InProcess(
                        "not enforced: this kernel has no Landlock scopes (ABI 6, Linux 6.12), and the rule has no in-process half; strata run refuses the policy".into(),
                    ),
                ));
            }
        }
    }
    if p.max_threads > 0 {
        out.push((
            "process.max_threads".into(),
            How::InProcess("counted in-process from /proc".into()),
        ));
    }
    if p.max_children > 0 {
        out.push((
            "process.max_children".into(),
            How::InProcess("counted in-process from /proc".into()),
        ));
    }
    for (_, _, label) in &p.rlimits {
        out.push((label.clone(), How::Kernel("setrlimit")));
    }
    out
}

#[cfg(test)]
mod merge_tests {
    use super::*;
    use seccompiler::sock_filter;

    /// Runs classic BPF `prog` on a seccomp_data (nr, arch, args): the
    /// verdict and the instructions executed.
    fn run(prog: &[sock_filter], nr: u32, arch: u32, args: [u64; 6]) -> (u32, usize) {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut a, mut pc, mut steps) = (0u32, 0usize, 0usize);
        loop {
            let i = &prog[pc];
            pc += 1;
            steps += 1;
            let k = i.k as usize;
            let cond = |c: bool| if c { i.jt as usize } else { i.jf as usize };
            match i.code {
                0x20 => a = u32::from_le_bytes(data[k..k + 4].try_into().unwrap()),
                0x05 => pc += k,
                0x15 => pc += cond(a == i.k),
                0x25 => pc += cond(a > i.k),
                0x35 => pc += cond(a >= i.k),
                0x45 => pc += cond(a & i.k != 0),
                0x54 => a &= i.k,
                0x06 => return (i.k, steps),
                c => panic!("opcode {c:#x} at {}", pc - 1),
            }
        }
    }

    /// What the kernel returns with `filters` installed in order: the
    /// verdict of the highest precedence, the newest filter's among equals.
    fn kernel(filters: &[BpfProgram], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let rank = |v: u32| match v & 0xffff_0000 {
            0x8000_0000 => 7, // KILL_PROCESS
            0 => 6,           // KILL_THREAD
            0x0003_0000 => 5, // TRAP
            0x0005_0000 => 4, // ERRNO
            0x7fc0_0000 => 3, // USER_NOTIF
            0x7ff0_0000 => 2, // TRACE
            0x7ffc_0000 => 1, // LOG
            _ => 0,           // ALLOW
        };
        let mut best: Option<u32> = None;
        for f in filters.iter().rev() {
            let v = run(f, nr, arch, args).0;
            if best.is_none_or(|b| rank(v) > rank(b)) {
                best = Some(v);
            }
        }
        best.unwrap_or(0x7fff_0000)
    }

    /// The one merged program gives, on calls of every number (and past
    /// them, x32 and i386 ones) with arguments that hit each argument rule,
    /// what the kernel gives with each filter installed on its own, for the
    /// hardening and several policies; and a call no rule looks at runs a
    /// few instructions.
    #[test]
    fn merged_filter_keeps_every_verdict() {
        let policies = [
            "[syscalls]\ndeny = [\"ptrace\", \"keyctl\", \"mount\"]\n[network]\ndefault = \"deny\"\n",
            "[policy]\ndefault = \"deny\"\nerrno = \"EPERM\"\n[syscalls]\nallow = [\"read\", \"write\", \"openat\", \"close\"]\ndeny = [\"mkdir\"]\n",
            "[paths]\nwrite = [\"/dev/null\"]\n[network]\ndefault = \"deny\"\n[[network.rule]]\naction = \"allow\"\nfamily = \"unix\"\n",
            // An older filter's errno under a newer one's argument rules.
            "[policy]\nerrno = \"EPERM\"\n[syscalls]\ndeny = [\"socket\", \"socketpair\", \"clone\"]\n[network]\ndefault = \"deny\"\nerrno = \"EACCES\"\n[[network.rule]]\naction = \"allow\"\nfamily = \"unix\"\n",
        ];
        let mut sets: Vec<Vec<Spec>> = vec![hardening().unwrap()];
        for text in policies {
            let p = super::super::parse(text, "t.toml", Path::new("/"), false).unwrap();
            let mut specs = hardening().unwrap();
            specs.extend(filters(&p).unwrap());
            sets.push(specs);
        }
        for (_, _, text) in super::super::PROFILES {
            let p = super::super::parse(text, "builtin", Path::new("/"), false).unwrap();
            let mut specs = hardening().unwrap();
            specs.extend(filters(&p).unwrap());
            sets.push(specs);
        }
        let vals: Vec<u64> = [
            0u64,
            1,
            2,
            3,
            5,
            8,
            10,
            17,
            59,
            0x5412,
            0x541c,
            u64::MAX,
            1 << 63,
            0x8_0000_0001,
            0o1000, // O_TRUNC: with each access mode (open's flags are argument 1, openat's 2)
            0o1001,
            0o1002,
            0o1003,
        ]
        .into_iter()
        .chain(CLONE_NEW)
        .chain(CLONE_NEW.map(|f| f | 0x11))
        .collect();
        let mut nrs: Vec<u32> = (0..480).collect();
        nrs.extend([
            1000,
            4095,
            4096,
            0x3fff_ffff,
            0x4000_0000,
            0x4000_004c,
            0x4000_0101,
            u32::MAX,
        ]);
        for specs in &sets {
            let mut separate: Vec<BpfProgram> = specs.iter().map(|s| s.to_bpf().unwrap()).collect();
            separate.push(x32_guard());
            let merged = merge(specs).expect("merged");
            assert!(merged.len() < separate.iter().map(Vec::len).sum::<usize>());
            for &n in &nrs {
                for arch in [0xc000_003e, 0x4000_0003] {
                    for &a0 in &vals {
                        for &a1 in &vals {
                            let args = [a0, a1, a1, 0, 0, 0];
                            assert_eq!(
                                kernel(&separate, n, arch, args),
                                run(&merged, n, arch, args).0,
                                "nr {n} arch {arch:#x} args {args:x?}"
                            );
                        }
                    }
                }
            }
            // mmap (9) is named by no filter: a short search, one program.
            let (_, steps) = run(&merged, 9, 0xc000_003e, [0; 6]);
            assert!(steps <= 20, "{steps} instructions for mmap");
        }
    }

    /// Under a policy that restricts writing, the kernel refuses truncating
    /// without write access (Landlock's ruleset leaves it alone): truncate(2)
    /// and opens with O_TRUNC whose access mode does not write; openat2
    /// answers ENOSYS. Opening for writing with O_TRUNC, and reading, stay
    /// allowed; without a write restriction nothing of this is refused.
    #[test]
    fn truncating_without_write_access_is_refused() {
        const ALLOW: u32 = 0x7fff_0000;
        const X86_64: u32 = 0xc000_003e;
        let eacces = 0x0005_0000 | libc::EACCES as u32;
        let enosys = 0x0005_0000 | libc::ENOSYS as u32;
        let program = |text: &str| {
            let p = super::super::parse(text, "t.toml", Path::new("/"), false).unwrap();
            let mut specs = hardening().unwrap();
            specs.extend(filters(&p).unwrap());
            merge(&specs).expect("merged")
        };
        let at = libc::AT_FDCWD as u64;
        let verdict = |f: &BpfProgram, n: i64, args: [u64; 6]| run(f, n as u32, X86_64, args).0;
        let f = program("[paths]\nwrite = [\"/tmp\"]\n");
        assert_eq!(verdict(&f, libc::SYS_truncate, [0; 6]), eacces);
        assert_eq!(verdict(&f, libc::SYS_ftruncate, [0; 6]), ALLOW);
        assert_eq!(verdict(&f, libc::SYS_openat2, [at, 0, 0, 24, 0, 0]), enosys);
        // x32's truncate: ENOSYS, as on a kernel without the x32 ABI.
        assert_eq!(verdict(&f, libc::SYS_truncate | 0x4000_0000, [0; 6]), enosys);
        for (flags, want) in [
            (0o1000, eacces), // O_RDONLY|O_TRUNC
            (0o1003, eacces), // access mode 3
            (0o1000 | 0o100 | 0o2000000, eacces),
            (0o1000 | 0o10000000, ALLOW), // O_PATH drops O_TRUNC
            (0o1001, ALLOW),              // O_WRONLY|O_TRUNC
            (0o1002, ALLOW),              // O_RDWR|O_TRUNC
            (0, ALLOW),
            (0o100 | 0o1, ALLOW),
        ] {
            assert_eq!(
                verdict(&f, libc::SYS_openat, [at, 0, flags, 0, 0, 0]),
                want,
                "openat {flags:#o}"
            );
            assert_eq!(
                verdict(&f, libc::SYS_open, [0, flags, 0, 0, 0, 0]),
                want,
                "open {flags:#o}"
            );
            assert_eq!(
                verdict(&f, libc::SYS_open_by_handle_at, [3, 0, flags, 0, 0, 0]),
                want,
                "open_by_handle_at {flags:#o}"
            );
        }
        // A denied ftruncate stays denied in the kernel (the layer's served
        // truncate(2) then fails with its errno).
        let no_ft = program("[paths]\nwrite = [\"/tmp\"]\n[syscalls]\ndeny = [\"ftruncate\"]\n");
        assert_eq!(verdict(&no_ft, libc::SYS_ftruncate, [0; 6]), eacces);
        let free = program("[paths]\ncreate = [\"/tmp\"]\n");
        assert_eq!(verdict(&free, libc::SYS_truncate, [0; 6]), ALLOW);
        assert_eq!(verdict(&free, libc::SYS_openat, [at, 0, 0o1000, 0, 0, 0]), ALLOW);
        assert_eq!(verdict(&free, libc::SYS_openat2, [at, 0, 0, 24, 0, 0]), ALLOW);
    }
}
