//! Checks made before anything starts: find the program as a shell would,
//! and refuse what the kernel's execve would refuse, with the exit status
//! bash gives for the same case.
//!
//! | case                                             | status | reason                                   |
//! |--------------------------------------------------|--------|------------------------------------------|
//! | name without `/` not found in `PATH`             | 127    | `command not found`                      |
//! | file missing                                     | 127    | `No such file or directory`              |
//! | no execute permission (or not a regular file)    | 126    | `Permission denied`                      |
//! | a directory                                      | 126    | `Is a directory`                         |
//! | neither ELF nor `#!`, bad ELF, bad `#!` line     | 126    | [`LoadError::message`]                   |
//! | `#!` interpreter missing                         | 127    | `INTERP: bad interpreter: No such file…` |
//! | `#!` interpreter not executable / a directory    | 126    | `INTERP: bad interpreter: Permission…`   |
//! | `#!` chain deeper than [`MAX_SCRIPT_DEPTH`]      | 126    | `INTERP: bad interpreter: Too many…`     |
//! | ELF `PT_INTERP` missing                          | 127    | `INTERP: bad ELF interpreter: No such…`  |
//! | ELF `PT_INTERP` not executable / unloadable      | 126    | `INTERP: bad ELF interpreter: REASON`    |
//!
//! bash 5.2 runs a file that is neither ELF nor `#!` (and an empty `#!` line)
//! as a shell script itself; strata cannot capture that, so it refuses the
//! file with status 126 like `env` and `execvp`-based launchers do.

use std::ffi::{CString, OsStr, OsString};
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use strata_loader::{classify, plan, Kind, LoadError, MAX_SCRIPT_DEPTH, PROBE_LEN};

/// `PATH` used when the variable is unset.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Most bytes read from the start of a file to judge it.
pub const MAX_HEAD: usize = 64 * 1024;

/// Exit status for a program that was not found (bash's).
pub const STATUS_NOT_FOUND: u8 = 127;
/// Exit status for a program that was found but cannot be executed (bash's).
pub const STATUS_CANNOT_EXECUTE: u8 = 126;

/// Why the program cannot run; displayed as `FILE: REASON`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", file.to_string_lossy())]
pub struct Failure {
    /// The file named in the message: the program as typed, or the path it
    /// was found at.
    pub file: OsString,
    pub reason: String,
    /// The exit status strata ends with (bash's for the same case).
    pub status: u8,
}

/// A problem found somewhere in the chain below the program.
#[derive(Debug)]
struct Problem {
    reason: String,
    status: u8,
    /// Too many `#!` levels: reported against the program's own interpreter
    /// only, as bash does, not wrapped at every level.
    too_deep: bool,
}

impl Problem {
    fn new(reason: impl Into<String>, status: u8) -> Problem {
        Problem {
            reason: reason.into(),
            status,
            too_deep: false,
        }
    }
    fn load(e: LoadError) -> Problem {
        Problem::new(e.message(), STATUS_CANNOT_EXECUTE)
    }
    fn denied() -> Problem {
        Problem::new(errno_text(libc::EACCES), STATUS_CANNOT_EXECUTE)
    }
    fn io(e: &io::Error) -> Problem {
        let status = if e.kind() == io::ErrorKind::NotFound {
            STATUS_NOT_FOUND
        } else {
            STATUS_CANNOT_EXECUTE
        };
        Problem::new(io_text(e), status)
    }
    /// `INTERP: WHAT: REASON`, keeping the status of the inner problem.
    fn wrap(self, interp: &Path, what: &str) -> Problem {
        Problem {
            reason: format!("{}: {what}: {}", interp.to_string_lossy(), self.reason),
            status: self.status,
            too_deep: false,
        }
    }
}

/// The C library's text for an errno value, without Rust's "(os error N)".
pub fn errno_text(errno: i32) -> String {
    io_text(&io::Error::from_raw_os_error(errno))
}

/// An I/O error's text without Rust's "(os error N)" suffix.
pub fn io_text(e: &io::Error) -> String {
    let s = e.to_string();
    match (e.raw_os_error(), s.rfind(" (os error ")) {
        (Some(_), Some(i)) => s[..i].to_string(),
        _ => s,
    }
}

/// Whether the calling user may execute `path` (effective ids, as execve
/// checks; root needs at least one execute bit).
pub fn executable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call;
    // faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::X_OK, libc::AT_EACCESS) == 0 }
}

/// Finds `name` as a shell's execvp would. A name containing `/` is used as
/// is; otherwise each entry of `path_var` (default [`DEFAULT_PATH`]; an empty
/// entry is the current directory) is tried and the first executable regular
/// file wins. A regular file found without execute permission is reported
/// as `Permission denied` (126) if nothing executable is found.
pub fn find_program(name: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf, Failure> {
    let bytes = name.as_bytes();
    if bytes.contains(&b'/') {
        return Ok(PathBuf::from(name));
    }
    let not_found = || Failure {
        file: name.to_os_string(),
        reason: "command not found".to_string(),
        status: STATUS_NOT_FOUND,
    };
    if bytes.is_empty() {
        return Err(not_found());
    }
    let path_var = path_var.unwrap_or(OsStr::new(DEFAULT_PATH));
    let mut denied: Option<PathBuf> = None;
    for dir in path_var.as_bytes().split(|&b| b == b':') {
        let dir = if dir.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(dir))
        };
        let candidate = dir.join(name);
        match fs::metadata(&candidate) {
            Ok(m) if m.is_file() => {
                if executable(&candidate) {
                    return Ok(candidate);
                }
                denied.get_or_insert(candidate);
            }
            _ => continue,
        }
    }
    match denied {
        Some(file) => Err(Failure {
            file: file.into_os_string(),
            reason: errno_text(libc::EACCES),
            status: STATUS_CANNOT_EXECUTE,
        }),
        None => Err(not_found()),
    }
}

/// Checks that `file` (as found by [`find_program`]) is something strata can
/// run: an executable x86-64 ELF file whose interpreter exists, or a `#!`
/// script whose interpreter chain ends in one.
pub fn check(file: &Path) -> Result<(), Failure> {
    check_program(file).map_err(|p| Failure {
        file: file.as_os_str().to_os_string(),
        reason: p.reason,
        status: p.status,
    })
}

fn check_program(file: &Path) -> Result<(), Problem> {
    let meta = fs::metadata(file).map_err(|e| Problem::io(&e))?;
    if meta.is_dir() {
        return Err(Problem::new(errno_text(libc::EISDIR), STATUS_CANNOT_EXECUTE));
    }
    if !meta.is_file() || !executable(file) {
        return Err(Problem::denied());
    }
    check_image(file, meta.len(), 0)
}

/// Checks a `#!` interpreter named by a script: it is opened like a program
/// by execve (a directory or a device gives EACCES).
fn check_script_interp(interp: &Path, scripts: usize) -> Result<(), Problem> {
    let meta = fs::metadata(interp).map_err(|e| Problem::io(&e))?;
    if !meta.is_file() || !executable(interp) {
        return Err(Problem::denied());
    }
    check_image(interp, meta.len(), scripts)
}

/// Checks the contents of an executable file; `scripts` is the number of
/// `#!` files already seen above it in the chain.
fn check_image(file: &Path, size: u64, scripts: usize) -> Result<(), Problem> {
    let head = read_head(file, size)?;
    match classify(&head).map_err(Problem::load)? {
        Kind::Elf => check_elf(&head, size),
        Kind::Script { interp, .. } => {
            let scripts = scripts + 1;
            if scripts > MAX_SCRIPT_DEPTH {
                let mut p = Problem::new(errno_text(libc::ELOOP), STATUS_CANNOT_EXECUTE);
                p.too_deep = true;
                return Err(p);
            }
            let interp = Path::new(OsStr::from_bytes(interp));
            match check_script_interp(interp, scripts) {
                Ok(()) => Ok(()),
                // Only the program's own interpreter is named for a chain
                // that is too deep (bash: "FILE: INTERP: bad interpreter:
                // Too many levels of symbolic links").
                Err(p) if p.too_deep && scripts > 1 => Err(p),
                Err(p) => Err(p.wrap(interp, "bad interpreter")),
            }
        }
    }
}

fn check_elf(head: &[u8], size: u64) -> Result<(), Problem> {
    let p = plan(head, size).map_err(Problem::load)?;
    match p.interp {
        None => Ok(()),
        Some(interp) => {
            let interp = Path::new(OsStr::from_bytes(interp));
            check_elf_interp(interp).map_err(|p| p.wrap(interp, "bad ELF interpreter"))
        }
    }
}

/// The kernel opens PT_INTERP like a program (it must be an executable
/// regular file) and loads it as an ELF image (its own PT_INTERP is ignored).
fn check_elf_interp(interp: &Path) -> Result<(), Problem> {
    let meta = fs::metadata(interp).map_err(|e| Problem::io(&e))?;
    if !meta.is_file() || !executable(interp) {
        return Err(Problem::denied());
    }
    let head = read_head(interp, meta.len())?;
    plan(&head, meta.len()).map(|_| ()).map_err(Problem::load)
}

/// Reads the start of `file`: enough for [`classify`] and [`plan`] (the ELF
/// header, the program headers and the interpreter path), at most
/// [`MAX_HEAD`] bytes.
fn read_head(file: &Path, size: u64) -> Result<Vec<u8>, Problem> {
    let f = fs::File::open(file).map_err(|e| Problem::io(&e))?;
    let limit = usize::try_from(size).unwrap_or(usize::MAX).min(MAX_HEAD);
    let mut head = Vec::with_capacity(limit.max(PROBE_LEN));
    f.take(limit as u64)
        .read_to_end(&mut head)
        .map_err(|e| Problem::io(&e))?;
    // This is at least head_needed(&head) bytes unless the file is shorter
    // (plan() reports it truncated) or its program headers or interpreter
    // path lie beyond MAX_HEAD (plan() reports that too).
    Ok(head)
}

#[cfg(test)]
mod tests;
