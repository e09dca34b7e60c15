//! Runs the built `strata` for its usage and for every bad-input case. None
//! of these needs `strata-rt`: they all stop before anything starts.

mod common;

use common::{mini_elf, TempDir, STRATA};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output};

fn strata<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = Command::new(STRATA);
    c.args(args);
    c
}

fn run(mut c: Command) -> (i32, String, String) {
    let Output { status, stdout, stderr } = c.output().unwrap();
    let code = status.code().unwrap_or_else(|| panic!("strata died: {status:?}"));
    (
        code,
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// Runs `strata run PROGRAM` and checks for a one-line `strata: PROGRAM: …`
/// message and the exit status; returns the message.
fn bad(program: &Path, status: i32) -> String {
    bad_with(
        strata([OsStr::new("run"), program.as_os_str()]),
        &program.to_string_lossy(),
        status,
    )
}

fn bad_with(c: Command, named: &str, status: i32) -> String {
    let (code, out, err) = run(c);
    assert_eq!(code, status, "stderr: {err}");
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with(&format!("strata: {named}: ")), "{err:?} names {named}");
    err
}

#[test]
fn help_and_version() {
    let (code, out, err) = run(strata(["--help"]));
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        out.contains("Usage: strata") && out.contains("run") && out.contains("count"),
        "{out}"
    );
    let (code, out, _) = run(strata(["run", "--help"]));
    assert_eq!(code, 0);
    for opt in ["--ext", "-o", "--no-follow-exec", "PROGRAM"] {
        assert!(out.contains(opt), "{opt} in {out}");
    }
    let (code, out, _) = run(strata(["--version"]));
    assert_eq!((code, out.trim()), (0, concat!("strata ", env!("CARGO_PKG_VERSION"))));
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    let cases: [(&[&str], &str); 7] = [
        (&["run", "--ext", "nope", "true"], "unknown extension 'nope'"),
        (
            &["run", "--ext", "count:x", "true"],
            "extension count: count takes no arguments",
        ),
        (
            &["run", "--ext", "null:x=1", "true"],
            "extension null: null takes no arguments",
        ),
        (&["run", "--bogus", "true"], "'--bogus'"),
        (&["run"], "PROGRAM"),
        (&[], "missing command"),
        (&["run", "-o", "/dev/null", "true"], "--ext count"),
    ];
    for (args, want) in cases {
        let (code, out, err) = run(strata(args));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(out, "");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
        assert!(err.starts_with("strata: ") && err.contains(want), "{args:?}: {err:?}");
    }
}

#[test]
fn unknown_extension_stops_before_the_program_is_looked_at() {
    let (code, _, err) = run(strata(["run", "--ext", "bogus", "/no/such/program"]));
    assert_eq!(code, 2);
    assert!(!err.contains("/no/such/program"), "{err}");
}

#[test]
fn missing_file() {
    let d = TempDir::new("cli-missing");
    let err = bad(&d.path().join("missing"), 127);
    assert!(err.ends_with(": No such file or directory\n"));
}

#[test]
fn command_not_found_in_path() {
    let d = TempDir::new("cli-path");
    let mut c = strata(["run", "strata-no-such-command"]);
    c.env("PATH", d.path());
    let err = bad_with(c, "strata-no-such-command", 127);
    assert_eq!(err, "strata: strata-no-such-command: command not found\n");

    // Found but not executable: Permission denied, naming the path found.
    let p = d.file("tool", b"#!/bin/sh\n", 0o644);
    let mut c = strata(["run", "tool"]);
    c.env("PATH", d.path());
    let err = bad_with(c, &p.to_string_lossy(), 126);
    assert!(err.ends_with(": Permission denied\n"));
}

#[test]
fn not_executable() {
    let d = TempDir::new("cli-noexec");
    let err = bad(&d.file("prog", &mini_elf(None), 0o644), 126);
    assert!(err.ends_with(": Permission denied\n"));
}

#[test]
fn directory() {
    let d = TempDir::new("cli-dir");
    let err = bad(d.path(), 126);
    assert!(err.ends_with(": Is a directory\n"));
}

#[test]
fn neither_elf_nor_script() {
    let d = TempDir::new("cli-text");
    let err = bad(&d.file("text", b"echo hello\n", 0o755), 126);
    assert!(err.contains("not an ELF executable or #! script"), "{err}");
    bad(&d.file("empty", b"", 0o755), 126);
}

#[test]
fn foreign_truncated_and_malformed_elf() {
    let d = TempDir::new("cli-elf");
    let good = mini_elf(None);
    let mut e32 = good.clone();
    e32[4] = 1;
    let mut arm = good.clone();
    arm[18..20].copy_from_slice(&183u16.to_le_bytes());
    let mut bad_hdr = good.clone();
    bad_hdr[54..56].copy_from_slice(&7u16.to_le_bytes());
    let cases: [(&str, &[u8], &str); 5] = [
        ("elf32", &e32, "32-bit"),
        ("arm", &arm, "aarch64"),
        ("short", &good[..40], "truncated"),
        ("cut", &good[..good.len() - 8], "truncated"),
        ("badhdr", &bad_hdr, "Exec format error"),
    ];
    for (name, body, want) in cases {
        let err = bad(&d.file(name, body, 0o755), 126);
        assert!(err.contains(want), "{name}: {err}");
    }
}

#[test]
fn missing_elf_interpreter() {
    let d = TempDir::new("cli-interp");
    let ld = d.path().join("ld-gone.so");
    let p = d.file("prog", &mini_elf(Some(ld.as_os_str().as_bytes())), 0o755);
    let err = bad(&p, 127);
    assert!(
        err.ends_with(&format!(
            "{}: bad ELF interpreter: No such file or directory\n",
            ld.display()
        )),
        "{err}"
    );
}

#[test]
fn script_with_missing_interpreter() {
    let d = TempDir::new("cli-script");
    let p = d.file("s", b"#!/no/such/interpreter -x\necho hi\n", 0o755);
    let err = bad(&p, 127);
    assert!(
        err.ends_with(": /no/such/interpreter: bad interpreter: No such file or directory\n"),
        "{err}"
    );
    let p = d.file("s2", format!("#!{}\n", d.path().display()).as_bytes(), 0o755);
    let err = bad(&p, 126);
    assert!(err.ends_with(": bad interpreter: Permission denied\n"), "{err}");
}

#[test]
fn bad_input_leaves_no_files_behind() {
    let d = TempDir::new("cli-count");
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = d.path().join("summary.txt");
    let mut c = strata([
        OsStr::new("run"),
        OsStr::new("--ext"),
        OsStr::new("count"),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    c.arg(d.path().join("missing")).env("TMPDIR", &tmp);
    let (code, _, _) = run(c);
    assert_eq!(code, 127);
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}
