use super::*;
use crate::testutil::{mini_elf, TempDir};
use std::os::unix::ffi::OsStrExt;

fn fails(path: &Path) -> Failure {
    match check(path) {
        Ok(()) => panic!("{} passed the checks", path.display()),
        Err(f) => {
            assert_eq!(f.file, path.as_os_str(), "the message names the file");
            f
        }
    }
}

fn b(p: &Path) -> &[u8] {
    p.as_os_str().as_bytes()
}

fn script(interp: &Path) -> Vec<u8> {
    let mut s = b"#!".to_vec();
    s.extend_from_slice(b(interp));
    s.extend_from_slice(b"\necho hi\n");
    s
}

#[test]
fn missing_file_is_127() {
    let d = TempDir::new("missing");
    let f = fails(&d.path().join("nope"));
    assert_eq!((f.status, f.reason.as_str()), (127, "No such file or directory"));
    assert!(f.to_string().ends_with("/nope: No such file or directory"));
}

#[test]
fn file_below_a_non_directory_is_126() {
    let d = TempDir::new("notdir");
    let t = d.file("text", b"x", 0o755);
    let f = fails(&t.join("x"));
    assert_eq!((f.status, f.reason.as_str()), (126, "Not a directory"));
}

#[test]
fn no_execute_permission_is_126() {
    let d = TempDir::new("noexec");
    let p = d.file("prog", &mini_elf(None), 0o644);
    let f = fails(&p);
    assert_eq!((f.status, f.reason.as_str()), (126, "Permission denied"));
}

#[test]
fn directory_is_126() {
    let d = TempDir::new("dir");
    let f = fails(d.path());
    assert_eq!((f.status, f.reason.as_str()), (126, "Is a directory"));
}

#[test]
fn device_is_126() {
    let f = fails(Path::new("/dev/null"));
    assert_eq!((f.status, f.reason.as_str()), (126, "Permission denied"));
}

#[test]
fn neither_elf_nor_script_is_126() {
    let d = TempDir::new("text");
    for (name, body) in [("text", &b"echo hello\n"[..]), ("empty", b"")] {
        let f = fails(&d.file(name, body, 0o755));
        assert_eq!(f.status, 126);
        assert_eq!(f.reason, LoadError::NotExecutableFormat.message());
    }
    let f = fails(&d.file("emptybang", b"#!\n", 0o755));
    assert_eq!((f.status, f.reason.as_str()), (126, LoadError::BadShebang.message()));
}

#[test]
fn foreign_or_malformed_elf_is_126() {
    let d = TempDir::new("elf");
    let good = mini_elf(None);
    let mut e32 = good.clone();
    e32[4] = 1;
    let mut arm = good.clone();
    arm[18..20].copy_from_slice(&183u16.to_le_bytes());
    let mut bad_phentsize = good.clone();
    bad_phentsize[54..56].copy_from_slice(&7u16.to_le_bytes());
    let cases: [(&str, &[u8], LoadError); 5] = [
        ("elf32", &e32, LoadError::Elf32),
        ("arm", &arm, LoadError::WrongMachine(183)),
        ("short", &good[..40], LoadError::Truncated),
        ("cut", &good[..good.len() - 8], LoadError::Truncated),
        ("phentsize", &bad_phentsize, LoadError::BadHeader("")),
    ];
    for (name, body, want) in cases {
        let f = fails(&d.file(name, body, 0o755));
        assert_eq!(f.status, 126, "{name}");
        if let LoadError::BadHeader(_) = want {
            assert!(f.reason.contains("Exec format error"), "{name}: {}", f.reason);
        } else {
            assert_eq!(f.reason, want.message(), "{name}");
        }
    }
}

#[test]
fn good_elf_passes() {
    let d = TempDir::new("good");
    let stat = d.file("static", &mini_elf(None), 0o755);
    check(&stat).unwrap();
    let ld = d.file("ld.so", &mini_elf(None), 0o755);
    let dynamic = d.file("dynamic", &mini_elf(Some(b(&ld))), 0o755);
    check(&dynamic).unwrap();
}

#[test]
fn system_programs_pass() {
    for p in ["/bin/true", "/bin/sh", "/usr/bin/env"] {
        if Path::new(p).exists() {
            check(Path::new(p)).unwrap();
        }
    }
}

#[test]
fn missing_elf_interpreter_is_127() {
    let d = TempDir::new("elfinterp");
    let ld = d.path().join("ld-missing.so");
    let p = d.file("prog", &mini_elf(Some(b(&ld))), 0o755);
    let f = fails(&p);
    assert_eq!(f.status, 127);
    assert_eq!(
        f.reason,
        format!("{}: bad ELF interpreter: No such file or directory", ld.display())
    );
}

#[test]
fn unusable_elf_interpreter_is_126() {
    let d = TempDir::new("elfinterp2");
    let text = d.file("ld-text.so", b"not an ELF file", 0o755);
    let f = fails(&d.file("prog", &mini_elf(Some(b(&text))), 0o755));
    assert_eq!(f.status, 126);
    assert!(
        f.reason
            .starts_with(&format!("{}: bad ELF interpreter: ", text.display())),
        "{}",
        f.reason
    );
    let f = fails(&d.file("prog2", &mini_elf(Some(b(d.path()))), 0o755));
    assert_eq!(f.status, 126);
    assert!(
        f.reason.ends_with("bad ELF interpreter: Permission denied"),
        "{}",
        f.reason
    );
    // The kernel opens the interpreter for execution.
    let ld = d.file("ld.so", &mini_elf(None), 0o644);
    let f = fails(&d.file("prog3", &mini_elf(Some(b(&ld))), 0o755));
    assert_eq!(
        (f.status, f.reason),
        (126, format!("{}: bad ELF interpreter: Permission denied", ld.display()))
    );
}

#[test]
fn script_with_missing_interpreter_is_127() {
    let d = TempDir::new("badint");
    let interp = d.path().join("no-such-interp");
    let f = fails(&d.file("s", &script(&interp), 0o755));
    assert_eq!(f.status, 127);
    assert_eq!(
        f.reason,
        format!("{}: bad interpreter: No such file or directory", interp.display())
    );
}

#[test]
fn script_with_unusable_interpreter_is_126() {
    let d = TempDir::new("badint2");
    let noexec = d.file("noexec", &mini_elf(None), 0o644);
    let f = fails(&d.file("s1", &script(&noexec), 0o755));
    assert_eq!(f.status, 126);
    assert_eq!(
        f.reason,
        format!("{}: bad interpreter: Permission denied", noexec.display())
    );
    let f = fails(&d.file("s2", &script(d.path()), 0o755));
    assert_eq!(f.status, 126);
    assert!(f.reason.ends_with(": bad interpreter: Permission denied"));
    let text = d.file("text", b"echo hi\n", 0o755);
    let f = fails(&d.file("s3", &script(&text), 0o755));
    assert_eq!(f.status, 126);
    assert_eq!(
        f.reason,
        format!(
            "{}: bad interpreter: {}",
            text.display(),
            LoadError::NotExecutableFormat.message()
        )
    );
}

#[test]
fn script_chains_are_checked_to_the_end() {
    let d = TempDir::new("chain");
    let elf = d.file("elf", &mini_elf(None), 0o755);
    let mut prev = elf;
    for i in 1..=MAX_SCRIPT_DEPTH {
        prev = d.file(&format!("s{i}"), &script(&prev), 0o755);
    }
    check(&prev).unwrap();
    let too_deep = d.file("deep", &script(&prev), 0o755);
    let f = fails(&too_deep);
    assert_eq!(f.status, 126);
    assert_eq!(
        f.reason,
        format!("{}: bad interpreter: Too many levels of symbolic links", prev.display())
    );

    // A missing interpreter two levels down.
    let missing = d.path().join("missing");
    let inner = d.file("inner", &script(&missing), 0o755);
    let outer = d.file("outer", &script(&inner), 0o755);
    let f = fails(&outer);
    assert_eq!(f.status, 127);
    assert_eq!(
        f.reason,
        format!(
            "{}: bad interpreter: {}: bad interpreter: No such file or directory",
            inner.display(),
            missing.display()
        )
    );
}

#[test]
fn script_to_elf_with_missing_interpreter() {
    let d = TempDir::new("chain2");
    let ld = d.path().join("ld-gone.so");
    let elf = d.file("elf", &mini_elf(Some(b(&ld))), 0o755);
    let f = fails(&d.file("s", &script(&elf), 0o755));
    assert_eq!(f.status, 127);
    assert!(f.reason.ends_with(&format!(
        "{}: bad ELF interpreter: No such file or directory",
        ld.display()
    )));
}

#[test]
fn program_with_a_slash_is_used_as_is() {
    assert_eq!(find_program(OsStr::new("./x/y"), None).unwrap(), PathBuf::from("./x/y"));
    assert_eq!(
        find_program(OsStr::new("/no/such"), Some(OsStr::new(""))).unwrap(),
        PathBuf::from("/no/such")
    );
}

#[test]
fn path_search_takes_the_first_executable_file() {
    let d = TempDir::new("path");
    for sub in ["a", "b", "c"] {
        fs::create_dir(d.path().join(sub)).unwrap();
    }
    let a = d.file("a/tool", b"#!/bin/sh\n", 0o644);
    let b_tool = d.file("b/tool", b"#!/bin/sh\n", 0o755);
    fs::create_dir(d.path().join("c/tool")).unwrap();
    let c = d.path().join("c");
    let join = |dirs: &[&Path]| {
        let v: Vec<&[u8]> = dirs.iter().map(|p| b(p)).collect();
        OsString::from_vec(v.join(&b':'))
    };
    use std::os::unix::ffi::OsStringExt;
    let (da, db) = (d.path().join("a"), d.path().join("b"));
    let tool = OsStr::new("tool");

    let path = join(&[&c, &da, &db]);
    assert_eq!(find_program(tool, Some(&path)).unwrap(), b_tool);

    let path = join(&[&c, &da]);
    let f = find_program(tool, Some(&path)).unwrap_err();
    assert_eq!(
        (f.file.as_os_str(), f.status, f.reason.as_str()),
        (a.as_os_str(), 126, "Permission denied")
    );

    let path = join(&[&c]);
    let f = find_program(tool, Some(&path)).unwrap_err();
    assert_eq!(f.to_string(), "tool: command not found");
    assert_eq!(f.status, 127);

    let f = find_program(OsStr::new(""), None).unwrap_err();
    assert_eq!(f.status, 127);
}

#[test]
fn empty_path_entry_is_the_current_directory() {
    // Nothing called this exists in the working directory of the tests.
    let name = OsStr::new("strata-no-such-program-x9");
    assert_eq!(find_program(name, Some(OsStr::new(":"))).unwrap_err().status, 127);
    // The default PATH is used when PATH is unset.
    if Path::new("/bin/sh").exists() || Path::new("/usr/bin/sh").exists() {
        let p = find_program(OsStr::new("sh"), None).unwrap();
        assert!(p.ends_with("sh") && p.is_absolute());
    }
}

#[test]
fn errno_texts_have_no_rust_suffix() {
    assert_eq!(errno_text(libc::ENOENT), "No such file or directory");
    assert_eq!(errno_text(libc::EACCES), "Permission denied");
}
