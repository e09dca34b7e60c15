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
pub mod launch;
pub mod preflight;
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
use clap::Parser;

use args::{Cli, Extension, RunArgs};
use counter::{CounterError, CounterFile};
use launch::LaunchError;
use preflight::{io_text, Failure};
use strata_proto::{Config, ENV_VAR, FLAG_EXT_COUNT, FLAG_EXT_NULL, FLAG_FOLLOW_EXEC};

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
}

impl Error {
    /// The exit status the launcher ends with.
    pub fn status(&self) -> u8 {
        match self {
            Error::Usage(_) | Error::Output { .. } => STATUS_USAGE,
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
    let cli = match Cli::try_parse_from(args) {
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
    let args::Command::Run(run_args) = cli.command;
    match run(run_args) {
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

/// The launch-configuration flags for these options.
pub fn flags(exts: &[Extension], follow_exec: bool) -> u32 {
    let mut f = 0;
    if follow_exec {
        f |= FLAG_FOLLOW_EXEC;
    }
    if exts.contains(&Extension::Count) {
        f |= FLAG_EXT_COUNT;
    }
    if exts.contains(&Extension::Null) {
        f |= FLAG_EXT_NULL;
    }
    f
}

/// Encodes the value of [`ENV_VAR`].
pub fn encode_config(flags: u32, count_path: &[u8], program: &[u8]) -> Result<Vec<u8>, Error> {
    let cfg = Config {
        flags,
        count_path,
        program,
    };
    let mut buf = vec![0u8; count_path.len() + program.len() + 64];
    let n = cfg.encode(&mut buf).map_err(|e| Error::Config(e.message()))?;
    buf.truncate(n);
    Ok(buf)
}

/// `strata run`.
pub fn run(a: RunArgs) -> Result<Outcome, Error> {
    let count = a.ext.contains(&Extension::Count);
    if a.output.is_some() && !count {
        return Err(Error::Usage(
            "-o FILE is where the count extension writes; add --ext count".to_string(),
        ));
    }
    let Some((program, program_args)) = a.command.split_first() else {
        return Err(Error::Usage("missing PROGRAM; try 'strata --help'".to_string()));
    };

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
    let counter = match count {
        true => Some(CounterFile::create(&counter::temp_dir(std::env::var_os("TMPDIR")))?),
        false => None,
    };
    let count_path = counter.as_ref().map_or(&b""[..], |c| c.path().as_os_str().as_bytes());
    let config = encode_config(
        flags(&a.ext, !a.no_follow_exec),
        count_path,
        resolved.as_os_str().as_bytes(),
    )?;

    // The program must see its environment in the order the launcher got
    // it. `Command::env` would capture and sort it, so the variable is added
    // to the launcher's own environment instead (glibc appends a new
    // variable at the end) and the child inherits `environ` unchanged. The
    // runtime removes it before the program starts.
    std::env::remove_var(OsStr::from_bytes(ENV_VAR));
    std::env::set_var(OsStr::from_bytes(ENV_VAR), OsStr::from_bytes(&config));
    let mut cmd = Command::new(&rt);
    cmd.arg0(program).args(program_args);
    let status = launch::spawn_and_wait(cmd).map_err(|e| match e {
        LaunchError::Spawn(io) => Error::Spawn {
            path: rt.clone(),
            reason: io_text(&io),
        },
        other => Error::Launch(other),
    })?;

    if let Some(counter) = counter {
        if let Err(e) = report_counts(&counter, output.as_mut()) {
            let to = a
                .output
                .as_deref()
                .map_or("standard error".into(), |p| p.display().to_string());
            eprintln!("strata: count: cannot write the summary to {to}: {e}");
        }
    }
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => Outcome::Exit(code as u8),
        (None, Some(sig)) => Outcome::Signal(sig),
        (None, None) => Outcome::Exit(1),
    })
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
        let f = flags(&[Extension::Count], true);
        assert_eq!(f, FLAG_FOLLOW_EXEC | FLAG_EXT_COUNT);
        assert_eq!(flags(&[Extension::Null], false), FLAG_EXT_NULL);
        let enc = encode_config(f, b"/tmp/c", b"./prog|x").unwrap();
        let c = Config::decode(&enc).unwrap();
        assert_eq!(
            (c.flags, c.count_path, c.program),
            (f, &b"/tmp/c"[..], &b"./prog|x"[..])
        );
        assert!(matches!(encode_config(0, b"/tmp/a|b", b"p"), Err(Error::Config(_))));
    }

    #[test]
    fn usage_errors_are_one_line() {
        for args in [
            &["strata", "run", "--bogus", "ls"][..],
            &["strata", "run"],
            &["strata"],
            &["strata", "walk"],
        ] {
            let e = Cli::try_parse_from(args).unwrap_err();
            let line = usage_line(&e);
            assert!(!line.contains('\n') && !line.starts_with("error"), "{line}");
        }
    }
}
