//! Command-line syntax of `strata`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

const AFTER_HELP: &str = "\
Extensions (--ext NAME[:ARGS], repeatable; the first given is the top of the stack):
  null    pass every system call through unchanged (measures one layer)
  count   count calls, errors and time per system call over the whole process
          tree and print a summary like `strace -c` when the program ends
  trace   print every call like strace; ARGS: trace=NAME|%CLASS|!NAME...,
          failed, format=json, s=N, raw, ext-calls (comma-separated)
  map     remap paths; ARGS: PROGRAM_PATH=HOST_PATH[:ro|:discard];...
  tracemap  (for tests and benchmarks) trace over map in one layer;
          ARGS: TRACE_ARGS@MAP_ARGS
  ./lib.so  an extension object (built against include/strata.h or strata-ext)

  policy  (from --policy) a sandbox policy, compiled by the launcher

Short forms, stacked where they appear among the --ext options:
  --trace[=FILTER]   same as --ext trace[:trace=FILTER]
  --map P=H[:ro|:discard]  (repeatable) one map layer with every mapping
  --policy FILE|builtin:NAME  (repeatable) one policy layer each, plus the
          kernel backstop (seccomp, Landlock) installed before the program

Exit status:
  the program's own; if it was killed by a signal, strata kills itself with
  the same signal. 2: bad usage, bad manifest or extension, or a map whose host
  side does not exist (before the program starts); 127: program (or strata-rt)
  not found; 126: program found but cannot be executed; 125: an extension
  failed and strata stopped the program.";

/// Run an unmodified Linux x86-64 program under a stack of OS extensions.
/// How syscall sites are rewritten (`--rewrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Rewrite {
    On,
    Lazy,
    Off,
}

#[derive(Debug, Parser)]
#[command(name = "strata", bin_name = "strata", version, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run PROGRAM with ARGS under strata.
    #[command(after_help = AFTER_HELP)]
    Run(Box<RunArgs>),
    /// Check a sandbox policy, or show a ready profile.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Check POLICY (a file or builtin:NAME) and print each rule with what
    /// enforces it: the kernel (seccomp, Landlock, setrlimit), or strata's
    /// layer in-process. Exit status 2 if the policy cannot be used.
    Check {
        #[arg(value_name = "POLICY")]
        policy: String,
    },
    /// Print the TOML of a ready profile (builtin:NAME), or list them.
    Show {
        #[arg(value_name = "builtin:NAME")]
        profile: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Load an extension (repeatable): null, count, trace, map, or the path
    /// of an extension object. NAME:ARGS passes arguments.
    #[arg(long = "ext", value_name = "NAME[:ARGS]")]
    pub ext: Vec<String>,

    /// Load the layers listed in a TOML manifest (see docs/manifest.md).
    #[arg(long = "manifest", value_name = "FILE.toml")]
    pub manifest: Vec<PathBuf>,

    /// Trace system calls like strace (optionally only those FILTER selects:
    /// NAME, %CLASS, !NAME, joined by '|' or ',').
    #[arg(long = "trace", value_name = "FILTER", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub trace: Option<String>,

    /// With --trace: print only calls that failed.
    #[arg(long = "trace-failed")]
    pub trace_failed: bool,

    /// With --trace: one JSON object per line.
    #[arg(long = "trace-json")]
    pub trace_json: bool,

    /// With --trace: keep only the newest trace lines in memory (BYTES,
    /// default 1M) and write them out when the program ends.
    #[arg(long = "trace-ring", value_name = "BYTES", num_args = 0..=1, require_equals = true, default_missing_value = "1M")]
    pub trace_ring: Option<String>,

    /// Remap PROGRAM_PATH to HOST_PATH (repeatable; longest prefix wins;
    /// :ro makes it read-only, :discard throws writes away).
    #[arg(long = "map", value_name = "PROGRAM_PATH=HOST_PATH[:ro|:discard]")]
    pub map: Vec<String>,

    /// Run under a sandbox policy: a TOML file or a ready profile
    /// (builtin:no-network, builtin:read-only-fs, builtin:loopback-only);
    /// repeatable (a call must pass every policy). Enforced in-process and,
    /// where the kernel can express a rule, by seccomp and Landlock
    /// (docs/policy.md).
    #[arg(long = "policy", value_name = "FILE|builtin:NAME")]
    pub policy: Vec<String>,

    /// With --policy: log what the policies would deny, deny nothing, and
    /// install no kernel backstop.
    #[arg(long)]
    pub audit: bool,

    /// Where trace lines and the count summary go instead of standard error.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Do not capture programs started with execve: they run natively.
    #[arg(long)]
    pub no_follow_exec: bool,

    /// Rewrite syscall sites into direct calls into strata (the fast path):
    /// `on` (code as it is loaded, and any other site at its first trap),
    /// `lazy` (only at first traps), `off` (every call traps).
    #[arg(long, value_enum, default_value_t = Rewrite::On, value_name = "on|lazy|off")]
    pub rewrite: Rewrite,

    /// At the end, print how calls reached strata: through rewritten sites
    /// (entering strata, or skipping it) or by trapping, and how many sites
    /// were rewritten.
    #[arg(long)]
    pub fast_stats: bool,

    /// The program (searched in PATH unless it contains '/') and its
    /// arguments.
    #[arg(
        value_name = "PROGRAM [ARGS]",
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        value_parser = clap::value_parser!(OsString)
    )]
    pub command: Vec<OsString>,

    /// The compiled `policy` layer arguments, one per `--policy` (filled
    /// by the launcher after checking the policies).
    #[arg(skip)]
    pub policy_text: Vec<String>,

    /// Where each stacking option appeared (filled from the matches).
    #[arg(skip)]
    pub order: Vec<(usize, LayerSource)>,
}

/// A command-line option that adds layers, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerSource {
    /// `--ext` number i.
    Ext(usize),
    /// `--manifest` number i.
    Manifest(usize),
    /// `--trace` (with its companions).
    Trace,
    /// The first `--map` (all mappings go in one layer).
    Map,
    /// `--policy` number i.
    Policy(usize),
}

impl Cli {
    /// Parses `args`, recording where the stacking options appeared.
    pub fn parse_ordered<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let m = Cli::command().try_get_matches_from(args)?;
        let mut cli = Cli::from_arg_matches(&m)?;
        if let (Command::Run(r), Some(("run", sub))) = (&mut cli.command, m.subcommand()) {
            let r = &mut **r;
            r.order = layer_order(sub);
        }
        Ok(cli)
    }
}

fn layer_order(m: &ArgMatches) -> Vec<(usize, LayerSource)> {
    let mut v = Vec::new();
    let idx = |id: &str| m.indices_of(id).map(|i| i.collect::<Vec<_>>()).unwrap_or_default();
    for (i, at) in idx("ext").into_iter().enumerate() {
        v.push((at, LayerSource::Ext(i)));
    }
    for (i, at) in idx("manifest").into_iter().enumerate() {
        v.push((at, LayerSource::Manifest(i)));
    }
    for (i, at) in idx("policy").into_iter().enumerate() {
        v.push((at, LayerSource::Policy(i)));
    }
    if let Some(&at) = idx("trace").first() {
        v.push((at, LayerSource::Trace));
    }
    if let Some(&at) = idx("map").first() {
        v.push((at, LayerSource::Map));
    }
    v.sort_by_key(|(at, _)| *at);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<RunArgs, clap::Error> {
        let mut v = vec!["strata", "run"];
        v.extend_from_slice(args);
        Cli::parse_ordered(v).map(|c| match c.command {
            Command::Run(r) => *r,
            Command::Policy(_) => panic!("not run"),
        })
    }

    #[test]
    fn program_arguments_are_taken_verbatim() {
        let r = parse(&["--ext", "count", "-o", "f", "ls", "-l", "--ext", "x", "--", "-o"]).unwrap();
        assert_eq!(r.ext, ["count"]);
        assert_eq!(r.output, Some(PathBuf::from("f")));
        assert_eq!(r.command, ["ls", "-l", "--ext", "x", "--", "-o"]);
        let r = parse(&["--no-follow-exec", "--", "-weird", "a"]).unwrap();
        assert!(r.no_follow_exec);
        assert_eq!(r.command, ["-weird", "a"]);
    }

    #[test]
    fn stacking_order_follows_the_command_line() {
        let r = parse(&[
            "--map", "/a=/b", "--ext", "null", "--trace", "--map", "/c=/d", "--ext", "count", "ls",
        ])
        .unwrap();
        let order: Vec<LayerSource> = r.order.into_iter().map(|(_, s)| s).collect();
        assert_eq!(
            order,
            [
                LayerSource::Map,
                LayerSource::Ext(0),
                LayerSource::Trace,
                LayerSource::Ext(1)
            ]
        );
        let r = parse(&["--trace=openat|%net", "--trace-json", "ls"]).unwrap();
        assert_eq!(r.trace.as_deref(), Some("openat|%net"));
        assert!(r.trace_json);
        let r = parse(&["--trace", "ls"]).unwrap();
        assert_eq!(r.trace.as_deref(), Some(""));
        assert_eq!(r.command, ["ls"]);
    }

    #[test]
    fn bad_usage() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["--bogus", "ls"]).is_err());
    }
}
