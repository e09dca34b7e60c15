//! Starts the built `strata` with a stand-in for `strata-rt` and checks what
//! the runtime is given (argv, environment, descriptors, signal state) and
//! how the launcher mirrors its end.
//!
//! This test binary is its own stand-in: copied next to a copy of `strata` as
//! `strata-rt`, it finds the launch configuration in its environment and
//! acts on its first argument instead of running the tests. A `/bin/sh`
//! stand-in reports the signal state, which a Rust program cannot observe
//! for SIGPIPE (Rust's runtime ignores SIGPIPE before `main`).

mod common;

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{TempDir, STRATA};
use strata_proto::{counts, Config, FLAG_FOLLOW_EXEC, FLAG_REWRITE_EAGER, FLAG_REWRITE_LAZY};

fn main() {
    if let Some(cfg) = std::env::var_os("STRATA_RT") {
        fake_runtime(cfg);
    }
    let tests: &[(&str, fn())] = &[
        ("runtime_gets_argv0_args_and_config", runtime_gets_argv0_args_and_config),
        ("flags_follow_the_options", flags_follow_the_options),
        ("descriptors_are_the_programs_own", descriptors_are_the_programs_own),
        ("signal_state_is_what_a_shell_gives", signal_state_is_what_a_shell_gives),
        ("exit_status_is_mirrored", exit_status_is_mirrored),
        ("death_by_signal_is_mirrored", death_by_signal_is_mirrored),
        (
            "sigint_is_ignored_and_others_forwarded",
            sigint_is_ignored_and_others_forwarded,
        ),
        ("count_summary_to_stderr", count_summary_to_stderr),
        ("count_summary_to_file", count_summary_to_file),
        ("missing_runtime", missing_runtime),
        (
            "unstartable_runtime_removes_the_counter_file",
            unstartable_runtime_removes_the_counter_file,
        ),
    ];
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in tests {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match std::panic::catch_unwind(test) {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok");
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------------------
// The stand-in runtime.

fn fake_runtime(cfg: OsString) -> ! {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let config = Config::decode(cfg.as_bytes()).unwrap();
    let cmd = argv.get(1).and_then(|a| a.to_str()).unwrap_or("");
    let arg = argv.get(2).and_then(|a| a.to_str()).unwrap_or("0");
    let mut out = std::io::stdout();
    match cmd {
        "report" => {
            writeln!(out, "argv0={}", argv[0].to_string_lossy()).unwrap();
            let rest: Vec<String> = argv[1..].iter().map(|a| a.to_string_lossy().into_owned()).collect();
            writeln!(out, "args={}", rest.join("\u{1f}")).unwrap();
            writeln!(out, "flags={:x}", config.flags).unwrap();
            writeln!(out, "count_path={}", String::from_utf8_lossy(config.session)).unwrap();
            writeln!(out, "program={}", String::from_utf8_lossy(config.program)).unwrap();
            writeln!(out, "fds={}", fds()).unwrap();
            std::process::exit(0)
        }
        "exit" => std::process::exit(arg.parse().unwrap()),
        "kill" => {
            let sig: i32 = arg.parse().unwrap();
            // SAFETY: plain libc calls on this process with a valid signal.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            std::process::exit(100)
        }
        "sleep" => {
            writeln!(out, "ready").unwrap();
            out.flush().unwrap();
            std::thread::sleep(Duration::from_secs(20));
            std::process::exit(0)
        }
        "count" => {
            let path = Path::new(OsStr::from_bytes(config.session));
            let f = fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
            let add = |word: usize, v: u64| {
                let mut b = [0u8; 8];
                f.read_exact_at(&mut b, word as u64 * 8).unwrap();
                let n = u64::from_le_bytes(b) + v;
                f.write_all_at(&n.to_le_bytes(), word as u64 * 8).unwrap();
            };
            // write: 5 calls, 1 error, 2 ms; read: 2 calls, 1 ms; 4 trapped.
            add(counts::word(1, 0), 5);
            add(counts::word(1, 1), 1);
            add(counts::word(1, 2), 2_000_000);
            add(counts::word(0, 0), 2);
            add(counts::word(0, 2), 1_000_000);
            add(counts::TRAPPED_WORD, 4);
            writeln!(out, "{}", path.display()).unwrap();
            std::process::exit(3)
        }
        _ => std::process::exit(99),
    }
}

/// This process's open descriptors (excluding the one used to list them).
fn fds() -> String {
    let mut v: Vec<u32> = fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    v.sort();
    // The highest-numbered descriptor opened last is the directory being
    // read; it shows in the direct run too, so the lists stay comparable.
    v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(",")
}

// ---------------------------------------------------------------------------
// Fixtures.

/// A directory with a copy of `strata` and a stand-in `strata-rt`.
struct Install {
    dir: TempDir,
}

impl Install {
    /// `rt`: None = no runtime; Some(None) = this test binary; Some(Some(b))
    /// = a file with contents `b` and mode 0755.
    fn new(tag: &str, rt: Option<Option<&[u8]>>) -> Install {
        let dir = TempDir::new(tag);
        let strata = dir.path().join("strata");
        if fs::hard_link(STRATA, &strata).is_err() {
            fs::copy(STRATA, &strata).unwrap();
        }
        let rt_path = dir.path().join("strata-rt");
        match rt {
            None => {}
            Some(None) => {
                let me = std::env::current_exe().unwrap();
                if fs::hard_link(&me, &rt_path).is_err() {
                    fs::copy(&me, &rt_path).unwrap();
                }
            }
            Some(Some(body)) => {
                dir.file("strata-rt", body, 0o755);
            }
        }
        Install { dir }
    }
    fn strata(&self) -> PathBuf {
        self.dir.path().join("strata")
    }
    fn cmd<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut c = Command::new(self.strata());
        c.arg("run").args(args);
        c
    }
}

fn output(mut c: Command) -> (ExitStatus, String, String) {
    let o = c.output().unwrap();
    (
        o.status,
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn field<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("{key} in {out}"))
}

/// Where a shell finds `name` with the current PATH.
fn which(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let p = if dir.as_os_str().is_empty() {
            Path::new(".").join(name)
        } else {
            dir.join(name)
        };
        if p.is_file() {
            return p;
        }
    }
    panic!("{name} not in PATH")
}

// ---------------------------------------------------------------------------
// Tests.

fn runtime_gets_argv0_args_and_config() {
    let i = Install::new("launch-argv", Some(None));
    let (st, out, err) = output(i.cmd(&["true", "report", "a b", "", "-x", "--", "ü"]));
    assert!(st.success(), "{err}");
    assert_eq!(field(&out, "argv0"), "true");
    assert_eq!(field(&out, "args"), "report\u{1f}a b\u{1f}\u{1f}-x\u{1f}--\u{1f}ü");
    assert_eq!(field(&out, "program"), which("true").to_str().unwrap());
    // The session file carries the fast path's site cache; without rewriting
    // and without layers there is none.
    assert!(field(&out, "count_path").contains("strata-count."), "{out}");
    let (st, out, err) = output(i.cmd(&["--rewrite=off", "true", "report"]));
    assert!(st.success(), "{err}");
    assert_eq!(field(&out, "count_path"), "");
    let t = which("true");
    let (st, out, _) = output(i.cmd(&[t.as_os_str(), OsStr::new("report")]));
    assert!(st.success());
    assert_eq!(field(&out, "argv0"), t.to_str().unwrap());
    assert_eq!(field(&out, "program"), t.to_str().unwrap());
}

fn flags_follow_the_options() {
    let i = Install::new("launch-flags", Some(None));
    let flags = |args: &[&str]| {
        let mut v = args.to_vec();
        v.extend(["true", "report"]);
        let (st, out, err) = output(i.cmd(&v));
        assert!(st.success(), "{err}");
        u32::from_str_radix(field(&out, "flags"), 16).unwrap()
    };
    let rewrite = FLAG_REWRITE_LAZY | FLAG_REWRITE_EAGER;
    assert_eq!(flags(&[]), FLAG_FOLLOW_EXEC | rewrite);
    assert_eq!(flags(&["--no-follow-exec"]), rewrite);
    assert_eq!(flags(&["--rewrite=lazy"]), FLAG_FOLLOW_EXEC | FLAG_REWRITE_LAZY);
    assert_eq!(flags(&["--rewrite=off", "--no-follow-exec"]), 0);
    // Layers travel in the session file, not in the flags.
    assert_eq!(flags(&["--ext", "null"]), FLAG_FOLLOW_EXEC | rewrite);
    assert_eq!(
        flags(&["--ext", "null", "--ext", "count", "--no-follow-exec", "--rewrite=off"]),
        0
    );
    let (st, out, err) = output(i.cmd(&["--ext", "null", "true", "report"]));
    assert!(st.success(), "{err}");
    assert!(field(&out, "count_path").contains("strata-count."), "{out}");
}

fn descriptors_are_the_programs_own() {
    let i = Install::new("launch-fds", Some(None));
    let (st, out, _) = output(i.cmd(&["true", "report"]));
    assert!(st.success());
    let direct = Command::new(i.dir.path().join("strata-rt"))
        .arg("report")
        .env("STRATA_RT", format!("{}|0||||/bin/true", strata_proto::VERSION))
        .output()
        .unwrap();
    let direct = String::from_utf8_lossy(&direct.stdout).into_owned();
    assert_eq!(field(&out, "fds"), field(&direct, "fds"));
    // The -o file and the counter file do not leak into the program either.
    let summary = i.dir.path().join("summary.txt");
    let mut c = i.cmd(&[
        OsStr::new("--ext"),
        OsStr::new("count"),
        OsStr::new("-o"),
        summary.as_os_str(),
    ]);
    c.args(["true", "report"]).env("TMPDIR", i.dir.path());
    let (st, out, err) = output(c);
    assert!(st.success(), "{err}");
    assert_eq!(field(&out, "fds"), field(&direct, "fds"));
    assert!(fs::read_to_string(&summary).unwrap().contains(" total\n"));
}

fn signal_state_is_what_a_shell_gives() {
    // exec: grep reports the exact state the shell was started with.
    let script = b"#!/bin/sh\nexec grep -E '^Sig(Ign|Blk)' /proc/self/status\n";
    let i = Install::new("launch-sig", Some(Some(script)));
    let rt = i.dir.path().join("strata-rt");
    // Start both from an unusual state: SIGHUP ignored (as under nohup),
    // SIGUSR2 blocked, SIGINT ignored (as for a background job).
    let set = |hup: libc::sighandler_t, int: libc::sighandler_t, how: i32| {
        // SAFETY: single-threaded test process; valid signals and set.
        unsafe {
            libc::signal(libc::SIGHUP, hup);
            libc::signal(libc::SIGINT, int);
            let mut s: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut s);
            libc::sigaddset(&mut s, libc::SIGUSR2);
            libc::pthread_sigmask(how, &s, std::ptr::null_mut());
        }
    };
    for (hup, int, how) in [
        (libc::SIG_DFL, libc::SIG_DFL, libc::SIG_UNBLOCK),
        (libc::SIG_IGN, libc::SIG_IGN, libc::SIG_BLOCK),
    ] {
        set(hup, int, how);
        let (st, through, err) = output(i.cmd(&["true"]));
        let direct = Command::new(&rt).output().unwrap();
        set(libc::SIG_DFL, libc::SIG_DFL, libc::SIG_UNBLOCK);
        assert!(st.success(), "{err}");
        let direct = String::from_utf8_lossy(&direct.stdout).into_owned();
        assert_eq!(through, direct);
        let ign = u64::from_str_radix(field(&through.replace(":\t", "="), "SigIgn"), 16).unwrap();
        let blk = u64::from_str_radix(field(&through.replace(":\t", "="), "SigBlk"), 16).unwrap();
        let bit = |s: i32| 1u64 << (s - 1);
        assert_eq!(ign & bit(libc::SIGPIPE), 0, "SIGPIPE is default");
        assert_eq!(ign & bit(libc::SIGQUIT), 0, "SIGQUIT is default");
        assert_eq!(ign & bit(libc::SIGHUP) != 0, hup == libc::SIG_IGN);
        assert_eq!(ign & bit(libc::SIGINT) != 0, int == libc::SIG_IGN);
        assert_eq!(blk & bit(libc::SIGUSR2) != 0, how == libc::SIG_BLOCK);
        assert_eq!(blk & bit(libc::SIGTERM), 0);
    }
}

fn exit_status_is_mirrored() {
    let i = Install::new("launch-exit", Some(None));
    for n in [0, 1, 7, 255] {
        let (st, _, _) = output(i.cmd(&["true", "exit", &n.to_string()]));
        assert_eq!(st.code(), Some(n));
    }
}

fn death_by_signal_is_mirrored() {
    let i = Install::new("launch-kill", Some(None));
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGPIPE, libc::SIGUSR1, libc::SIGQUIT] {
        let (st, _, err) = output(i.cmd(&["true", "kill", &sig.to_string()]));
        assert_eq!(st.signal(), Some(sig), "{err}");
        assert!(!st.core_dumped());
    }
}

fn sigint_is_ignored_and_others_forwarded() {
    let i = Install::new("launch-fwd", Some(None));
    // strata forwards only signals its parent did not ignore or block
    // (cargo may run under nohup): give it default ones.
    // SAFETY: single-threaded test process; valid signals and set.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in [
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGINT,
            libc::SIGQUIT,
        ] {
            libc::signal(sig, libc::SIG_DFL);
            libc::sigaddset(&mut s, sig);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &s, std::ptr::null_mut());
    }
    for (sig, name) in [
        (libc::SIGUSR1, "USR1"),
        (libc::SIGTERM, "TERM"),
        (libc::SIGHUP, "HUP"),
        (libc::SIGUSR2, "USR2"),
    ] {
        let mut c = i.cmd(&["true", "sleep"]);
        let mut child = c.stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "ready\n");
        let pid = child.id() as i32;
        // SAFETY: signalling our own child process.
        unsafe {
            libc::kill(pid, libc::SIGINT);
            libc::kill(pid, libc::SIGQUIT);
        }
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            child.try_wait().unwrap().is_none(),
            "SIGINT/SIGQUIT must not end strata"
        );
        let start = Instant::now();
        // SAFETY: as above.
        unsafe { libc::kill(pid, sig) };
        let st = child.wait().unwrap();
        assert_eq!(st.signal(), Some(sig), "SIG{name} forwarded and mirrored");
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}

fn count_run(i: &Install, tmp: &Path, extra: &[&OsStr]) -> (ExitStatus, String, String) {
    let mut args: Vec<&OsStr> = vec![OsStr::new("--ext"), OsStr::new("count")];
    args.extend_from_slice(extra);
    args.extend([OsStr::new("true"), OsStr::new("count")]);
    let mut c = i.cmd(&args);
    c.env("TMPDIR", tmp);
    output(c)
}

const WANT_TABLE: &str = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 66.67    0.002000         400         5         1 write
 33.33    0.001000         500         2           read
------ ----------- ----------- --------- --------- ----------------
100.00    0.003000         428         7         1 total
strata: 4 of these calls came through the trap path
";

/// Files left in `tmp`: the session directory (strata-UID) stays, empty.
fn leftovers(tmp: &std::path::Path) -> usize {
    let mut n = 0;
    for e in fs::read_dir(tmp).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with("strata-") && e.path().is_dir() {
            n += fs::read_dir(e.path()).unwrap().count();
        } else {
            n += 1;
        }
    }
    n
}

fn count_summary_to_stderr() {
    let i = Install::new("launch-count", Some(None));
    let tmp = i.dir.path().join("tmp");
    fs::create_dir(&tmp).unwrap();
    let (st, out, err) = count_run(&i, &tmp, &[]);
    assert_eq!(st.code(), Some(3), "{err}");
    let counter = PathBuf::from(out.trim());
    assert!(counter.starts_with(&tmp), "{}", counter.display());
    assert!(!counter.exists(), "counter file removed");
    assert_eq!(leftovers(&tmp), 0);
    assert_eq!(err, WANT_TABLE);
}

fn count_summary_to_file() {
    let i = Install::new("launch-count-o", Some(None));
    let tmp = i.dir.path().join("tmp");
    fs::create_dir(&tmp).unwrap();
    let file = i.dir.path().join("summary.txt");
    let (st, _, err) = count_run(&i, &tmp, &[OsStr::new("-o"), file.as_os_str()]);
    assert_eq!(st.code(), Some(3));
    assert_eq!(err, "");
    assert_eq!(fs::read_to_string(&file).unwrap(), WANT_TABLE);
    assert_eq!(leftovers(&tmp), 0);
    // An -o file that cannot be created: usage error, nothing started.
    let bad = i.dir.path().join("no/such/dir/summary.txt");
    let (st, out, err) = count_run(&i, &tmp, &[OsStr::new("-o"), bad.as_os_str()]);
    assert_eq!(st.code(), Some(2), "{err}");
    assert_eq!(out, "");
    assert!(
        err.starts_with("strata: cannot create ") && err.contains("summary.txt"),
        "{err}"
    );
    assert_eq!(leftovers(&tmp), 0);
}

fn missing_runtime() {
    let i = Install::new("launch-nort", None);
    let (st, out, err) = output(i.cmd(&["true"]));
    assert_eq!(st.code(), Some(127));
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1);
    assert!(
        err.starts_with("strata: cannot find the runtime ") && err.contains("strata-rt"),
        "{err}"
    );
}

fn unstartable_runtime_removes_the_counter_file() {
    // A runtime without execute permission: exec fails (EACCES).
    let i = Install::new("launch-badrt", Some(Some(b"#!/bin/sh\n")));
    fs::set_permissions(
        i.dir.path().join("strata-rt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let tmp = i.dir.path().join("tmp");
    fs::create_dir(&tmp).unwrap();
    let (st, _, err) = count_run(&i, &tmp, &[]);
    assert_eq!(st.code(), Some(126), "{err}");
    assert!(
        err.starts_with("strata: cannot start the runtime ") && err.contains("strata-rt"),
        "{err}"
    );
    assert_eq!(leftovers(&tmp), 0);
}
