//! Command-line syntax of `strata`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const AFTER_HELP: &str = "\
Extensions:
  null    pass every system call through unchanged (measures strata itself)
  count   count calls, errors and time per system call over the whole process
          tree and print a summary like `strace -c` when the program ends

Exit status:
  the program's own; if it was killed by a signal, strata kills itself with
  the same signal. 2: bad usage; 127: program (or strata-rt) not found;
  126: program found but cannot be executed.";

/// Run an unmodified Linux x86-64 program with every system call captured
/// in-process.
#[derive(Debug, Parser)]
#[command(name = "strata", bin_name = "strata", version, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run PROGRAM with ARGS under strata.
    Run(RunArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Load an extension (repeatable): null, count. NAME:ARGS passes
    /// arguments to extensions that take them.
    #[arg(long = "ext", value_name = "NAME[:ARGS]", value_parser = parse_extension)]
    pub ext: Vec<Extension>,

    /// Write the count summary to FILE instead of standard error.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Do not capture programs started with execve: they run natively.
    #[arg(long)]
    pub no_follow_exec: bool,

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
}

/// The extensions strata knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extension {
    Null,
    Count,
}

impl Extension {
    pub const ALL: [(&'static str, Extension); 2] = [("null", Extension::Null), ("count", Extension::Count)];

    pub fn name(self) -> &'static str {
        match self {
            Extension::Null => "null",
            Extension::Count => "count",
        }
    }
}

/// Parses `NAME` or `NAME:ARGS`.
pub fn parse_extension(s: &str) -> Result<Extension, String> {
    let (name, args) = match s.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (s, None),
    };
    let Some(&(_, ext)) = Extension::ALL.iter().find(|(n, _)| *n == name) else {
        let known: Vec<&str> = Extension::ALL.iter().map(|(n, _)| *n).collect();
        return Err(format!("unknown extension '{name}' (known: {})", known.join(", ")));
    };
    match args {
        Some(a) if !a.is_empty() => Err(format!("extension '{name}' takes no arguments (got '{a}')")),
        _ => Ok(ext),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<RunArgs, clap::Error> {
        let mut v = vec!["strata", "run"];
        v.extend_from_slice(args);
        Cli::try_parse_from(v).map(|c| match c.command {
            Command::Run(r) => r,
        })
    }

    #[test]
    fn extensions() {
        assert_eq!(parse_extension("null"), Ok(Extension::Null));
        assert_eq!(parse_extension("count"), Ok(Extension::Count));
        assert_eq!(parse_extension("count:"), Ok(Extension::Count));
        assert_eq!(
            parse_extension("count:x=1").unwrap_err(),
            "extension 'count' takes no arguments (got 'x=1')"
        );
        assert_eq!(
            parse_extension("bogus:1").unwrap_err(),
            "unknown extension 'bogus' (known: null, count)"
        );
    }

    #[test]
    fn program_arguments_are_taken_verbatim() {
        let r = parse(&["--ext", "count", "-o", "f", "ls", "-l", "--ext", "x", "--", "-o"]).unwrap();
        assert_eq!(r.ext, [Extension::Count]);
        assert_eq!(r.output, Some(PathBuf::from("f")));
        assert_eq!(r.command, ["ls", "-l", "--ext", "x", "--", "-o"]);
        let r = parse(&["--no-follow-exec", "--", "-weird", "a"]).unwrap();
        assert!(r.no_follow_exec);
        assert_eq!(r.command, ["-weird", "a"]);
    }

    #[test]
    fn bad_usage() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["--bogus", "ls"]).is_err());
        assert!(parse(&["--ext", "nope", "ls"]).is_err());
        assert!(parse(&["--ext", "null:a", "ls"]).is_err());
    }
}
