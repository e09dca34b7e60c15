//! The table against the `syscalls` crate's x86-64 list, and the checked-in
//! docs against the generator.

use std::collections::{HashMap, HashSet};

use strata_syscall_table::{by_name, count, entry, name, render_markdown, Disposition, COUNT, MAX_NR, TABLE};
use syscalls::Sysno;

/// Well above any x86-64 number (the x32 range starts at 512).
const SCAN: usize = 1024;

#[test]
fn every_known_syscall_has_an_entry() {
    for nr in 0..SCAN {
        let known = Sysno::new(nr).map(|s| s.name());
        assert_eq!(name(nr), known, "syscall {nr}: table and the syscalls crate disagree");
        assert_eq!(entry(nr).is_some(), known.is_some(), "syscall {nr}");
    }
    assert_eq!(COUNT, Sysno::count());
    assert_eq!(TABLE.len(), COUNT);
    assert_eq!(MAX_NR, Sysno::last().id() as usize);
}

#[test]
fn entries_are_indexed_by_their_number() {
    for nr in 0..SCAN {
        if let Some(e) = entry(nr) {
            assert_eq!(e.nr as usize, nr);
            assert_eq!(Sysno::new(nr).map(|s| s.name()), Some(e.name));
        }
    }
    for e in TABLE {
        assert_eq!(entry(e.nr as usize), Some(e));
    }
    assert!(TABLE.windows(2).all(|w| w[0].nr < w[1].nr));
}

#[test]
fn names_are_unique_and_round_trip() {
    let mut seen = HashSet::new();
    for e in TABLE {
        assert!(seen.insert(e.name), "duplicate name {}", e.name);
        assert_eq!(by_name(e.name), Some(e));
        let sysno: Sysno = e.name.parse().expect("name unknown to the syscalls crate");
        assert_eq!(sysno.id() as u32, e.nr, "{}", e.name);
    }
    assert_eq!(by_name("no_such_call"), None);
    assert_eq!(by_name("Read"), None);
}

#[test]
fn notes_are_specific() {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for e in TABLE {
        assert!(e.note.len() >= 8, "{}: note too short", e.name);
        assert!(!e.note.contains('|'), "{}: '|' in note", e.name);
        if let Some(other) = seen.insert(e.note, e.name) {
            panic!("{} and {} share the note {:?}", other, e.name, e.note);
        }
    }
}

#[test]
fn runtime_dispositions() {
    use Disposition::*;
    let expect = [
        ("rt_sigaction", Partial),
        ("rt_sigpending", Partial),
        ("open", Partial),
        ("openat", Partial),
        ("rt_sigprocmask", Emulated),
        ("rt_sigreturn", Emulated),
        ("sigaltstack", Emulated),
        ("rt_sigsuspend", Partial),
        ("ppoll", Partial),
        ("pselect6", Partial),
        ("epoll_pwait", Partial),
        ("epoll_pwait2", Partial),
        ("signalfd", Partial),
        ("signalfd4", Partial),
        ("rt_sigtimedwait", Partial),
        ("clone", Emulated),
        ("clone3", Emulated),
        ("fork", Emulated),
        ("vfork", Emulated),
        ("execve", Emulated),
        ("execveat", Emulated),
        ("brk", Emulated),
        ("prctl", Partial),
        ("readlink", Partial),
        ("readlinkat", Partial),
        ("arch_prctl", Partial),
        ("exit", Emulated),
        ("exit_group", Emulated),
        ("mmap", Partial),
        ("munmap", Partial),
        ("mprotect", Partial),
        ("mremap", Partial),
        ("madvise", Partial),
        ("seccomp", Partial),
        ("chroot", Partial),
    ];
    for (n, d) in expect {
        assert_eq!(by_name(n).unwrap().disposition, d, "{n}");
    }
    // Everything else is re-issued unchanged.
    for e in TABLE {
        if !expect.iter().any(|&(n, _)| n == e.name) {
            assert_eq!(e.disposition, Passthrough, "{}", e.name);
        }
    }
    let listed = |d| expect.iter().filter(|&&(_, x)| x == d).count();
    assert_eq!(count(Emulated), listed(Emulated));
    assert_eq!(count(Partial), listed(Partial));
    assert_eq!(count(Unsupported), 0);
    assert_eq!(count(Passthrough), COUNT - expect.len());

    for n in ["kill", "tgkill", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"] {
        assert_eq!(by_name(n).unwrap().disposition, Passthrough, "{n}");
    }
    let nosys = "not implemented by Linux on x86-64; the kernel answers ENOSYS";
    for n in [
        "uselib",
        "_sysctl",
        "create_module",
        "get_kernel_syms",
        "query_module",
        "nfsservctl",
        "getpmsg",
        "putpmsg",
        "afs_syscall",
        "tuxcall",
        "security",
        "set_thread_area",
        "get_thread_area",
        "lookup_dcookie",
        "epoll_ctl_old",
        "epoll_wait_old",
        "vserver",
    ] {
        let e = by_name(n).unwrap();
        assert_eq!(e.disposition, Passthrough, "{n}");
        assert!(e.note.ends_with(nosys), "{n}: {}", e.note);
        assert!(!e.may_block, "{n}");
    }
    assert_eq!(TABLE.iter().filter(|e| e.note.ends_with(nosys)).count(), 17);
}

#[test]
fn blocking_calls() {
    let blocking = [
        "read",
        "write",
        "readv",
        "writev",
        "pread64",
        "pwrite64",
        "preadv",
        "pwritev",
        "preadv2",
        "pwritev2",
        "recvfrom",
        "sendto",
        "recvmsg",
        "sendmsg",
        "recvmmsg",
        "sendmmsg",
        "accept",
        "accept4",
        "connect",
        "wait4",
        "waitid",
        "nanosleep",
        "clock_nanosleep",
        "pause",
        "poll",
        "ppoll",
        "select",
        "pselect6",
        "epoll_wait",
        "epoll_pwait",
        "epoll_pwait2",
        "futex",
        "futex_waitv",
        "futex_wait",
        "rt_sigsuspend",
        "rt_sigtimedwait",
        "msgrcv",
        "msgsnd",
        "semop",
        "semtimedop",
        "flock",
        "fcntl",
        "open",
        "openat",
        "openat2",
        "creat",
        "io_getevents",
        "io_pgetevents",
        "io_uring_enter",
        "mq_timedreceive",
        "mq_timedsend",
        "splice",
        "tee",
        "vmsplice",
        "sendfile",
        "copy_file_range",
        "ioctl",
        "close",
        "fsync",
        "fdatasync",
        "sync_file_range",
        "msync",
        "restart_syscall",
        "vfork",
    ];
    for n in blocking {
        assert!(by_name(n).unwrap().may_block, "{n} must be may_block");
    }
    let not_blocking = [
        "mmap",
        "munmap",
        "mprotect",
        "brk",
        "rt_sigreturn",
        "rt_sigprocmask",
        "rt_sigaction",
        "getpid",
        "gettid",
        "clock_gettime",
        "exit",
        "exit_group",
        "kill",
        "tgkill",
        "fstat",
        "lseek",
    ];
    for n in not_blocking {
        assert!(!by_name(n).unwrap().may_block, "{n} must not be may_block");
    }
}

#[test]
fn checked_in_docs_match_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/syscalls.md");
    let on_disk = std::fs::read_to_string(path).expect("docs/syscalls.md is missing");
    let mut rendered = String::new();
    render_markdown(&mut rendered).unwrap();
    if on_disk != rendered {
        let first = on_disk
            .lines()
            .zip(rendered.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| on_disk.lines().count().min(rendered.lines().count()));
        panic!(
            "docs/syscalls.md is out of date (first difference at line {}); regenerate with\n  \
             cargo run -q -p strata-syscall-table --bin gen-syscall-docs > docs/syscalls.md",
            first + 1
        );
    }
}

#[test]
fn rendering_lists_every_call() {
    let mut doc = String::new();
    render_markdown(&mut doc).unwrap();
    let rows = doc
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(" | `"))
        .count();
    assert_eq!(rows, COUNT);
    for e in TABLE {
        assert!(doc.contains(&format!("| {} | `{}` |", e.nr, e.name)), "{}", e.name);
    }
}
