//! The `strata` launcher: parses the command line, checks the program as the
//! kernel's execve would, starts `strata-rt` (the in-process runtime, found
//! next to the `strata` executable) with the launch configuration, and ends
//! the way the program ended.
//!
//! Exit statuses of the launcher itself:
//!
//! | status | when                                                              |
//! |--------|-------------------------------------------------------------------|
//! | 2      | bad usage: unknown option or extension, `-o` unusable             |
//! | 127    | program not found ([`preflight`]), or `strata-rt` missing         |
//! | 126    | program found but not executable ([`preflight`]), runtime unstartable |
//! | 1      | the counter file or the launch configuration could not be made    |
//!
//! Otherwise the program's own status; if it was killed by a signal the
//! launcher kills itself with the same signal.

pub mod args;
pub mod counter;
pub mod extobj;
pub mod hostcheck;
pub mod images;
pub mod launch;
pub mod layers;
pub mod policy;
pub mod preflight;
pub mod ring;
pub mod sitecache;
pub mod summary;

#[cfg(test)]
mod testutil;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::error::ErrorKind;

use args::{Cli, RunArgs};
use counter::{CounterError, CounterFile};
use launch::LaunchError;
use layers::{Layer, LayerError};
use preflight::{io_text, Failure};
use strata_proto::{counts, Config, ENV_VAR, FLAG_FOLLOW_EXEC, FLAG_REWRITE_EAGER, FLAG_REWRITE_LAZY};

/// Name of the runtime binary, looked for next to the `strata` executable.
pub const RUNTIME_NAME: &str = "strata-rt";

/// Exit status for bad usage.
pub const STATUS_USAGE: u8 = 2;

/// Everything that stops the launcher; displayed after `strata: `.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Preflight(#[from] Failure),
    #[error("cannot find the runtime {}: {reason} (strata-rt must be installed next to strata)", path.display())]
    RuntimeMissing { path: PathBuf, reason: String },
    #[error("cannot start the runtime {}: {reason}", path.display())]
    Spawn { path: PathBuf, reason: String },
    #[error("cannot create {}: {reason}", path.display())]
    Output { path: PathBuf, reason: String },
    #[error(transparent)]
    Counter(#[from] CounterError),
    #[error("cannot pass the paths to the runtime: {0}")]
    Config(&'static str),
    #[error(transparent)]
    Launch(LaunchError),
    #[error(transparent)]
    Layers(#[from] LayerError),
    #[error(transparent)]
    Policy(#[from] policy::PolicyError),
}

impl Error {
    /// The exit status the launcher ends with.
    pub fn status(&self) -> u8 {
        match self {
            Error::Usage(_) | Error::Output { .. } | Error::Layers(_) | Error::Policy(_) => STATUS_USAGE,
            Error::Preflight(f) => f.status,
            Error::RuntimeMissing { .. } => preflight::STATUS_NOT_FOUND,
            Error::Spawn { .. } => preflight::STATUS_CANNOT_EXECUTE,
            Error::Counter(_) | Error::Config(_) | Error::Launch(_) => 1,
        }
    }
}

/// How the launcher ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Exit(u8),
    /// Killed by this signal (mirrored with [`launch::die_by_signal`]).
    Signal(i32),
}

/// Ends the process with `outcome`.
pub fn finish(outcome: Outcome) -> ! {
    let _ = io::stdout().flush();
    match outcome {
        Outcome::Exit(n) => std::process::exit(n.into()),
        Outcome::Signal(s) => launch::die_by_signal(s),
    }
}

/// Turns a clap error into one line without the "error: " prefix.
fn usage_line(e: &clap::Error) -> String {
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        return "missing command; try 'strata --help'".to_string();
    }
    let text = e.render().to_string();
    let first: Vec<&str> = text.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
    let line = first.join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    format!("{line}; try 'strata --help'")
}

/// Runs the launcher with `args` (including argv[0]) and says how to end.
pub fn main_with<I, T>(args: I) -> Outcome
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::parse_ordered(args) {
        Ok(c) => c,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return Outcome::Exit(0);
        }
        Err(e) => {
            eprintln!("strata: {}", usage_line(&e));
            return Outcome::Exit(STATUS_USAGE);
        }
    };
    let result = match cli.command {
        args::Command::Run(run_args) => run(*run_args),
        args::Command::Policy(c) => policy_command(c),
    };
    match result {
        Ok(o) => o,
        Err(e) => {
            eprintln!("strata: {e}");
            Outcome::Exit(e.status())
        }
    }
}

/// `strata-rt` next to the running `strata`.
pub fn runtime_path() -> Result<PathBuf, Error> {
    let exe = std::env::current_exe().map_err(|e| Error::RuntimeMissing {
        path: PathBuf::from(RUNTIME_NAME),
        reason: format!("cannot locate the strata executable: {}", io_text(&e)),
    })?;
    let rt = exe.parent().unwrap_or(Path::new("/")).join(RUNTIME_NAME);
    match std::fs::metadata(&rt) {
        Ok(m) if m.is_file() => Ok(rt),
        Ok(_) => Err(Error::RuntimeMissing {
            path: rt,
            reason: "not a regular file".to_string(),
        }),
        Err(e) => Err(Error::RuntimeMissing {
            path: rt,
            reason: io_text(&e),
        }),
    }
}

/// The launch-configuration flags for these options. No rewriting on a CPU
/// without LAHF/SAHF in 64-bit mode: the fast path's exit restores the
/// program's flags with sahf (every call then takes the trap path).
pub fn flags(follow_exec: bool, rewrite: args::Rewrite) -> u32 {
    let mut f = if follow_exec { FLAG_FOLLOW_EXEC } else { 0 };
    f |= match rewrite {
        _ if !lahf_in_long_mode() => 0,
        args::Rewrite::On => FLAG_REWRITE_LAZY | FLAG_REWRITE_EAGER,
        args::Rewrite::Lazy => FLAG_REWRITE_LAZY,
        args::Rewrite::Off => 0,
    };
    f
}

/// Whether this CPU has LAHF/SAHF in 64-bit mode (CPUID 0x80000001, ECX
/// bit 0): every x86-64 CPU since about 2006, not the very first. Asked
/// here, once per run: in a virtual machine each CPUID is a trap to the
/// hypervisor, too dear for every process start.
fn lahf_in_long_mode() -> bool {
    use std::arch::x86_64::__cpuid;
    let max = __cpuid(0x8000_0000).eax;
    max >= 0x8000_0001 && __cpuid(0x8000_0001).ecx & 1 != 0
}

/// Encodes the value of [`ENV_VAR`].
pub fn encode_config(flags: u32, session: &[u8], spec: &[u8], program: &[u8]) -> Result<Vec<u8>, Error> {
    let cfg = Config {
        flags,
        mask: None,
        session,
        spec_esc: b"",
        program,
    };
    let mut buf = vec![0u8; session.len() + strata_proto::escaped_len_max(spec.len()) + program.len() + 64];
    let n = cfg
        .encode_with_spec(spec, &mut buf)
        .map_err(|e| Error::Config(e.message()))?;
    buf.truncate(n);
    Ok(buf)
}

/// The stack specification text the runtime reads (see strata_proto::spec).
pub fn spec_text(layers: &[Layer]) -> Vec<u8> {
    let mut s = Vec::new();
    for l in layers {
        s.extend_from_slice(l.name.as_bytes());
        s.push(b'\t');
        s.extend_from_slice(l.args.as_bytes());
        s.push(b'\n');
    }
    s
}

/// Parses a size like 65536, 64K, 4M or 1G into a power of two within the
/// ring's limits (rounded up).
pub fn ring_size(s: &str) -> Result<usize, Error> {
    let bad = || Error::Usage(format!("--trace-ring: '{s}' is not a size like 64K, 4M or 1G"));
    let (num, mult) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1usize << 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: usize = num.parse().map_err(|_| bad())?;
    let n = n.checked_mul(mult).ok_or_else(bad)?;
    if !(counts::RING_MIN..=counts::RING_MAX).contains(&n) {
        return Err(Error::Usage(format!(
            "--trace-ring: {s} is outside {}K..{}G",
            counts::RING_MIN >> 10,
            counts::RING_MAX >> 30
        )));
    }
    Ok(n.next_power_of_two().min(counts::RING_MAX))
}

/// `strata policy check|show`.
pub fn policy_command(c: args::PolicyCommand) -> Result<Outcome, Error> {
    use policy::kernel::How;
    match c {
        args::PolicyCommand::Show { profile: None } => {
            for (name, what, _) in policy::PROFILES {
                println!("builtin:{name:<15} {what}");
            }
            Ok(Outcome::Exit(0))
        }
        args::PolicyCommand::Show { profile: Some(p) } => {
            let name = p.strip_prefix("builtin:").unwrap_or(&p);
            match policy::PROFILES.iter().find(|(n, _, _)| *n == name) {
                Some((_, _, text)) => {
                    print!("{text}");
                    Ok(Outcome::Exit(0))
                }
                None => Err(Error::Usage(format!(
                    "no profile '{p}'; 'strata policy show' lists them"
                ))),
            }
        }
        args::PolicyCommand::Check { policy: arg } => {
            let p = policy::load(&arg, false)?;
            let rules = policy::kernel::enforcement(&p);
            println!("policy {}: {} rules", p.name, rules.len());
            let mut weak = Vec::new();
            for (label, how) in &rules {
                let text = match how {
                    How::Kernel(by) => format!("kernel: {by}"),
                    How::Partial(why) => format!("kernel in part: {why}"),
                    How::InProcess(why) => format!("in-process only: {why}"),
                };
                if !matches!(how, How::Kernel(_)) {
                    weak.push(label.clone());
                }
                println!("  {label}: {text}");
            }
            println!(
                "  always, with any policy: kernel: seccomp refuses ptrace, io_uring, bpf, perf_event_open, kexec, modules, mounts, namespaces, keyrings, turning Syscall User Dispatch off, TIOCSTI; Landlock refuses execve of anything but strata-rt"
            );
            strict_check(&p, &weak)?;
            Ok(Outcome::Exit(0))
        }
    }
}

/// A `backstop = "strict"` policy whose rules are not all kernel-enforced.
fn strict_check(p: &policy::Policy, weak: &[String]) -> Result<(), Error> {
    if p.backstop == policy::Backstop::Strict && !weak.is_empty() {
        return Err(Error::Policy(policy::PolicyError {
            policy: p.name.clone(),
            msg: format!(
                "backstop = \"strict\" but the kernel cannot enforce these rules whole: {} (see 'strata policy check')",
                weak.join("; ")
            ),
        }));
    }
    Ok(())
}

/// Loads and checks the `--policy` options; fills `a.policy_text`.
fn load_policies(a: &mut RunArgs) -> Result<Vec<policy::Policy>, Error> {
    if a.audit && a.policy.is_empty() {
        return Err(Error::Usage("--audit goes with --policy".into()));
    }
    let mut out = Vec::new();
    for arg in &a.policy {
        let p = policy::load(arg, a.audit)?;
        let weak: Vec<String> = policy::kernel::enforcement(&p)
            .into_iter()
            .filter(|(_, h)| !matches!(h, policy::kernel::How::Kernel(_)))
            .map(|(l, _)| l)
            .collect();
        strict_check(&p, &weak)?;
        if a.no_follow_exec && p.backstop != policy::Backstop::None && !a.audit {
            return Err(Error::Policy(policy::PolicyError {
                policy: p.name.clone(),
                msg: "cannot be honoured with --no-follow-exec: programs started with execve would leave strata, and the kernel backstop allows execve of strata-rt only".into(),
            }));
        }
        a.policy_text.push(p.compiled());
        out.push(p);
    }
    if a.audit {
        eprintln!(
            "strata: policy: audit mode: denials are logged, nothing is denied, and no kernel backstop is installed"
        );
    }
    Ok(out)
}

/// `strata run`.
pub fn run(mut a: RunArgs) -> Result<Outcome, Error> {
    if a.command.is_empty() {
        return Err(Error::Usage("missing PROGRAM; try 'strata --help'".to_string()));
    }
    let policies = load_policies(&mut a)?;
    let Some((program, program_args)) = a.command.split_first() else {
        return Err(Error::Usage("missing PROGRAM; try 'strata --help'".to_string()));
    };
    let stack = layers::from_args(&a)?;
    // The program may not write where this user's other strata sessions
    // keep their state by default (/tmp/strata-UID). (This run's own
    // directory may be writable when TMPDIR points into the sandbox's
    // writable tree: the program can then disturb only its own session.)
    let session_dirs = [counter::session_dir_path(&counter::temp_dir(None))];
    for p in policies.iter().filter(|p| !p.audit) {
        policy::check_session_dirs(p, &session_dirs)?;
    }
    let count = stack.iter().any(|l| l.is_builtin("count"));
    let logs = stack.iter().any(|l| l.is_builtin("policy"));
    let trace = stack.iter().any(|l| {
        !["count", "null", "map", "ids", "policy"]
            .iter()
            .any(|b| l.is_builtin(b))
    });
    if a.output.is_some() && !count && !trace && !logs {
        return Err(Error::Usage(
            "-o FILE is where trace lines, policy log lines and the count summary go; add --trace, --policy or --ext count".to_string(),
        ));
    }
    let keep = a.trace_ring.as_deref().map(ring_size).transpose()?;

    let resolved = preflight::find_program(program, std::env::var_os("PATH").as_deref())?;
    preflight::check(&resolved)?;
    let rt = runtime_path()?;

    let mut output = match &a.output {
        Some(p) => Some(File::create(p).map_err(|e| Error::Output {
            path: p.clone(),
            reason: io_text(&e),
        })?),
        None => None,
    };
    let spec = spec_text(&stack);
    if spec.len() > strata_proto::SPEC_MAX {
        return Err(Error::Usage(format!(
            "the stack's arguments are too long ({} bytes; at most {})",
            spec.len(),
            strata_proto::SPEC_MAX
        )));
    }
    // The session file: the layers' shared services (counters, trace ring)
    // and the fast path's site cache, so that the processes of the tree scan
    // each library once.
    let rewrite = a.rewrite != args::Rewrite::Off;
    let session_dir = match stack.is_empty() && !a.fast_stats && !rewrite {
        true => None,
        false => Some(counter::session_dir(&counter::temp_dir(std::env::var_os("TMPDIR")))?),
    };
    // What a run without a policy keeps for later runs (a sandboxed program
    // must not influence a later run): the site cache (below) and text
    // images (images.rs).
    let keep_sites = policies.is_empty();
    let kept_images = match (&session_dir, rewrite && keep_sites) {
        (Some(dir), true) => images::path_for(dir, &rt).and_then(|p| images::prepare(&p)),
        _ => None,
    };
    let session = match &session_dir {
        None => None,
        Some(dir) => Some(CounterFile::create_session(
            dir,
            if stack.is_empty() { 0 } else { counts::RING_DEFAULT },
            if rewrite { counts::SITE_CACHE_DEFAULT } else { 0 },
            kept_images.as_ref().map(images::Kept::link_target).as_deref(),
        )?),
    };
    // The site cache of earlier runs. A sandboxed run reads it (what
    // unsandboxed runs of the user's programs wrote) but never writes it: a
    // sandboxed program, which can write its session's cache, must not
    // influence a later run.
    let saved_sites = match (&session, &session_dir) {
        (Some(s), Some(dir)) if rewrite => sitecache::path_for(dir, &rt).map(|f| (sitecache::load(s, &f), f)),
        _ => None,
    };
    let drain = match &session {
        Some(s) if !stack.is_empty() => {
            let to: Box<dyn Write + Send> = match &output {
                Some(f) => Box::new(f.try_clone().map_err(|e| Error::Output {
                    path: a.output.clone().unwrap_or_default(),
                    reason: io_text(&e),
                })?),
                None => Box::new(io::stderr()),
            };
            let sink = match keep {
                Some(keep) => ring::Sink::Newest { keep, to },
                None => ring::Sink::Stream(to),
            };
            Some(ring::Drain::start(s.path(), sink).map_err(|e| {
                Error::Counter(CounterError {
                    dir: s.path().to_path_buf(),
                    reason: io_text(&e),
                })
            })?)
        }
        _ => None,
    };
    let session_path = session.as_ref().map_or(&b""[..], |c| c.path().as_os_str().as_bytes());
    // A kernel backstop sets no_new_privs and installs seccomp filters, so
    // the runtime may catch calls with a filter of its own instead of
    // Syscall User Dispatch, whose cost would come on top of the filters'
    // (runtime seccomp.rs). A backstop always has exec followed (refused
    // above otherwise). Not with extension objects: their code runs
    // outside strata's text.
    let backstop = policies.iter().any(policy::Policy::kernel_enforced);
    let objects = stack.iter().any(|l| l.name.starts_with('/'));
    let seccomp_dispatch = if backstop && !objects {
        strata_proto::FLAG_SECCOMP_DISPATCH
    } else {
        0
    };
    let config = encode_config(
        flags(!a.no_follow_exec, a.rewrite) | seccomp_dispatch,
        session_path,
        &spec,
        resolved.as_os_str().as_bytes(),
    )?;

    // The program must see its environment in the order the launcher got
    // it. `Command::env` would capture and sort it, so the variable is added
    // to the launcher's own environment instead (glibc appends a new
    // variable at the end) and the child inherits `environ` unchanged. The
    // runtime removes it before the program starts.
    std::env::remove_var(OsStr::from_bytes(ENV_VAR));
    std::env::set_var(OsStr::from_bytes(ENV_VAR), OsStr::from_bytes(&config));
    let needs = policy::kernel::Needs {
        runtime: &rt,
        session: session.as_ref().map(|s| s.path()),
        text_dir: session.as_ref().map(|s| s.text_dir()).filter(|d| d.is_dir()),
        read_files: std::iter::once(resolved.clone())
            .chain(
                stack
                    .iter()
                    .filter(|l| l.name.starts_with('/'))
                    .map(|l| PathBuf::from(&l.name)),
            )
            .collect(),
    };
    policy::kernel::check_inherited(&policies)?;
    let kernel = policy::kernel::Kernel::build(&policies, &needs)?;
    let mut cmd = Command::new(&rt);
    cmd.arg0(program).args(program_args);
    if let Some(k) = kernel {
        // SAFETY: the closure runs in the child between fork and exec; it
        // makes system calls only (setrlimit, prctl, landlock_restrict_self,
        // seccomp) on data built before the fork, and allocates nothing.
        unsafe {
            cmd.pre_exec(move || k.install());
        }
    }
    let mut child_pid = 0;
    let status = launch::spawn_and_wait(cmd, &mut child_pid).map_err(|e| match e {
        LaunchError::Spawn(io) => Error::Spawn {
            path: rt.clone(),
            reason: io_text(&io),
        },
        other => Error::Launch(other),
    })?;

    if let (Some(s), Some((loaded, file)), true) = (&session, &saved_sites, keep_sites) {
        // A cache that cannot be saved only costs the next run a scan.
        let _ = sitecache::save(s, file, *loaded);
    }
    if let Some(d) = drain {
        // strace's last line for a process killed by a signal.
        let mut extra = Vec::new();
        if let (true, Some(sig)) = (trace, status.signal()) {
            let multi = session.as_ref().is_some_and(|s| s.word(counts::MULTI_TASK_WORD) != 0);
            if multi {
                extra.extend_from_slice(format!("[pid {child_pid}] ").as_bytes());
            }
            let core = if status.core_dumped() { " (core dumped)" } else { "" };
            extra.extend_from_slice(format!("+++ killed by {}{core} +++\n", signal_name(sig)).as_bytes());
        }
        if let Err(e) = d.finish(&extra) {
            eprintln!("strata: trace: cannot write the trace: {}", io_text(&e));
        }
    }
    if let (true, Some(counter)) = (count, &session) {
        if let Err(e) = report_counts(counter, output.as_mut()) {
            let to = a
                .output
                .as_deref()
                .map_or("standard error".into(), |p| p.display().to_string());
            eprintln!("strata: count: cannot write the summary to {to}: {e}");
        }
    }
    if let (true, Some(s)) = (a.fast_stats, &session) {
        eprintln!("{}", fast_stats_line(|w| s.word(w)));
    }
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => Outcome::Exit(code as u8),
        (None, Some(sig)) => Outcome::Signal(sig),
        (None, None) => Outcome::Exit(1),
    })
}

/// The `--fast-stats` line, from the session's header words.
pub fn fast_stats_line(word: impl Fn(usize) -> u64) -> String {
    let (fast, native, trap) = (
        word(counts::FAST_WORD),
        word(counts::NATIVE_WORD),
        word(counts::TRAP_WORD),
    );
    let total = fast + native + trap;
    let share = if total == 0 {
        0.0
    } else {
        100.0 * trap as f64 / total as f64
    };
    let caught = match word(counts::CAPTURE_WORD) & (counts::CAPTURE_DISPATCH | counts::CAPTURE_SECCOMP) {
        counts::CAPTURE_DISPATCH => "Syscall User Dispatch",
        counts::CAPTURE_SECCOMP => "strata's seccomp filter",
        0 => "nothing",
        _ => "Syscall User Dispatch and strata's seccomp filter",
    };
    format!(
        "strata: fast path: {fast} calls entered strata directly, {native} skipped it, {trap} trapped ({share:.2}% of {total}); {} sites rewritten, {} declined; code scanned in {} mappings, taken from the site cache in {}; text images: {} mappings, {} written; calls caught by {caught}",
        word(counts::PATCHED_WORD),
        word(counts::DECLINED_WORD),
        word(counts::SCANNED_WORD),
        word(counts::CACHED_WORD),
        word(counts::IMAGED_WORD),
        word(counts::IMAGES_WORD)
    )
}

/// A signal's name as strace prints it (SIGSEGV), or its number.
pub fn signal_name(sig: i32) -> String {
    let mut s = String::new();
    let _ = strata_decode::write_signal_name(&mut s, sig);
    s
}

/// Why the summary could not be produced.
#[derive(Debug, thiserror::Error)]
enum ReportError {
    #[error("cannot read the counter file: {}", io_text(.0))]
    Read(io::Error),
    #[error(transparent)]
    Parse(#[from] summary::SummaryError),
    #[error("{}", io_text(.0))]
    Write(io::Error),
}

fn report_counts(counter: &CounterFile, output: Option<&mut File>) -> Result<(), ReportError> {
    let buf = counter.read().map_err(ReportError::Read)?;
    let text = summary::render(&summary::Counts::parse(&buf)?);
    match output {
        Some(f) => f.write_all(text.as_bytes()).and_then(|()| f.flush()),
        None => io::stderr().lock().write_all(text.as_bytes()),
    }
    .map_err(ReportError::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_round_trips() {
        let f = flags(true, args::Rewrite::Off);
        assert_eq!(f, FLAG_FOLLOW_EXEC);
        assert_eq!(flags(false, args::Rewrite::On), FLAG_REWRITE_LAZY | FLAG_REWRITE_EAGER);
        let enc = encode_config(f, b"/tmp/c", b"null\t\n", b"./prog|x").unwrap();
        let c = Config::decode(&enc).unwrap();
        assert_eq!((c.flags, c.session, c.program), (f, &b"/tmp/c"[..], &b"./prog|x"[..]));
        assert_eq!(c.spec(&mut [0u8; 16]).unwrap(), b"null\t\n");
        assert!(matches!(
            encode_config(0, b"/tmp/a|b", b"", b"p"),
            Err(Error::Config(_))
        ));
    }

    #[test]
    fn ring_sizes() {
        assert_eq!(ring_size("64K").unwrap(), 65536);
        assert_eq!(ring_size("100000").unwrap(), 131072);
        assert_eq!(ring_size("1G").unwrap(), 1 << 30);
        assert!(ring_size("1k").is_err());
        assert!(ring_size("2G").is_err());
        assert!(ring_size("x").is_err());
    }

    #[test]
    fn spec_lines() {
        let l = [
            Layer {
                name: "trace".into(),
                args: "failed".into(),
            },
            Layer {
                name: "null".into(),
                args: String::new(),
            },
        ];
        assert_eq!(spec_text(&l), b"trace\tfailed\nnull\t\n");
    }

    #[test]
    fn usage_errors_are_one_line() {
        for args in [
            &["strata", "run", "--bogus", "ls"][..],
            &["strata", "run"],
            &["strata"],
            &["strata", "walk"],
        ] {
            let e = Cli::parse_ordered(args).unwrap_err();
            let line = usage_line(&e);
            assert!(!line.contains('\n') && !line.starts_with("error"), "{line}");
        }
    }
}
