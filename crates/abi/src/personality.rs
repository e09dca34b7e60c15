//! The Linux personality: which ABI op a Linux call is, and where its path
//! operands are. Pure and allocation-free; it never reads program memory
//! (ops are decided from numbers and argument registers only).

use crate::ops::Op;

/// "No such argument" in a [`PathSlot`].
pub const NO_ARG: u8 = 0xff;

/// Where one path operand of a call is.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathSlot {
    /// Index of the argument register holding the pointer to the
    /// NUL-terminated path.
    pub arg: u8,
    /// Index of the argument holding the directory handle a relative path
    /// starts from, or [`NO_ARG`] (the current directory).
    pub dirfd_arg: u8,
    /// 1 when the kernel follows a symbolic link in the last component.
    pub follow: u8,
    /// 1 when the call may create the last component (or its link).
    pub create: u8,
}

/// The ABI view of one Linux call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    pub op: Op,
    /// [`crate::class`] bits.
    pub class: u16,
    pub npaths: usize,
    pub paths: [PathSlot; crate::MAX_PATHS],
}

// How the last component's symbolic link is treated.
#[derive(Clone, Copy)]
#[allow(clippy::enum_variant_names)]
enum Follow {
    Yes,
    No,
    /// Followed unless AT_SYMLINK_NOFOLLOW (0x100) is set in argument i.
    UnlessNoFollow(u8),
    /// Followed only if AT_SYMLINK_FOLLOW (0x400) is set in argument i.
    IfFollow(u8),
    /// open flags in argument i: not followed with O_NOFOLLOW or O_CREAT|O_EXCL.
    OpenFlags(u8),
}

#[derive(Clone, Copy)]
struct Spec {
    arg: u8,
    dirfd: u8,
    follow: Follow,
    create: Create,
}

#[derive(Clone, Copy)]
enum Create {
    No,
    Yes,
    /// O_CREAT in open flags argument i.
    OpenFlags(u8),
}

const N: u8 = NO_ARG;
const fn p(arg: u8, dirfd: u8, follow: Follow, create: Create) -> Spec {
    Spec {
        arg,
        dirfd,
        follow,
        create,
    }
}
use Create::{No as KEEP, Yes as MAKE};
use Follow::{No as NOFOLLOW, Yes as FOLLOW};

// One row per Linux call the ABI models: (nr, name, op, path operands).
// `name` is checked against the syscall table by a test.
type Row = (u32, &'static str, Op, &'static [Spec]);

#[rustfmt::skip]
const ROWS: &[Row] = &[
    (0, "read", Op::StreamRead, &[]),
    (1, "write", Op::StreamWrite, &[]),
    (2, "open", Op::StreamOpen, &[p(0, N, Follow::OpenFlags(1), Create::OpenFlags(1))]),
    (3, "close", Op::StreamClose, &[]),
    (4, "stat", Op::StreamAttrByName, &[p(0, N, FOLLOW, KEEP)]),
    (5, "fstat", Op::StreamAttrByHandle, &[]),
    (6, "lstat", Op::StreamAttrByName, &[p(0, N, NOFOLLOW, KEEP)]),
    (7, "poll", Op::WaitAny, &[]),
    (8, "lseek", Op::StreamSeek, &[]),
    (9, "mmap", Op::MemAlloc, &[]),
    (10, "mprotect", Op::MemProtect, &[]),
    (11, "munmap", Op::MemFree, &[]),
    (12, "brk", Op::MemAlloc, &[]),
    (13, "rt_sigaction", Op::SignalAction, &[]),
    (14, "rt_sigprocmask", Op::SignalMask, &[]),
    (15, "rt_sigreturn", Op::SignalReturn, &[]),
    (16, "ioctl", Op::StreamControl, &[]),
    (17, "pread64", Op::StreamReadAt, &[]),
    (18, "pwrite64", Op::StreamWriteAt, &[]),
    (19, "readv", Op::StreamRead, &[]),
    (20, "writev", Op::StreamWrite, &[]),
    (21, "access", Op::StreamAttrByName, &[p(0, N, FOLLOW, KEEP)]),
    (22, "pipe", Op::StreamPipe, &[]),
    (23, "select", Op::WaitAny, &[]),
    (25, "mremap", Op::MemRemap, &[]),
    (26, "msync", Op::StreamFlush, &[]),
    (27, "mincore", Op::MemAdvise, &[]),
    (28, "madvise", Op::MemAdvise, &[]),
    (32, "dup", Op::StreamDup, &[]),
    (33, "dup2", Op::StreamDup, &[]),
    (34, "pause", Op::SignalWait, &[]),
    (35, "nanosleep", Op::TimeSleep, &[]),
    (39, "getpid", Op::ProcessInfo, &[]),
    (40, "sendfile", Op::StreamCopy, &[]),
    (41, "socket", Op::StreamSocket, &[]),
    (42, "connect", Op::StreamConnect, &[]),
    (43, "accept", Op::StreamAccept, &[]),
    (44, "sendto", Op::StreamSend, &[]),
    (45, "recvfrom", Op::StreamRecv, &[]),
    (46, "sendmsg", Op::StreamSend, &[]),
    (47, "recvmsg", Op::StreamRecv, &[]),
    (48, "shutdown", Op::StreamSockOpt, &[]),
    (49, "bind", Op::StreamBind, &[]),
    (50, "listen", Op::StreamBind, &[]),
    (51, "getsockname", Op::StreamSockOpt, &[]),
    (52, "getpeername", Op::StreamSockOpt, &[]),
    (53, "socketpair", Op::StreamPipe, &[]),
    (54, "setsockopt", Op::StreamSockOpt, &[]),
    (55, "getsockopt", Op::StreamSockOpt, &[]),
    (56, "clone", Op::ProcessCreate, &[]),
    (57, "fork", Op::ProcessCreate, &[]),
    (58, "vfork", Op::ProcessCreate, &[]),
    (59, "execve", Op::ProcessExec, &[p(0, N, FOLLOW, KEEP)]),
    (60, "exit", Op::ThreadExit, &[]),
    (61, "wait4", Op::ProcessWait, &[]),
    (62, "kill", Op::SignalSend, &[]),
    (63, "uname", Op::ProcessInfo, &[]),
    (72, "fcntl", Op::StreamControl, &[]),
    (73, "flock", Op::StreamControl, &[]),
    (74, "fsync", Op::StreamFlush, &[]),
    (75, "fdatasync", Op::StreamFlush, &[]),
    (76, "truncate", Op::StreamSetLength, &[p(0, N, FOLLOW, KEEP)]),
    (77, "ftruncate", Op::StreamSetLength, &[]),
    (78, "getdents", Op::StreamEnumerate, &[]),
    (79, "getcwd", Op::StreamGetDir, &[]),
    (80, "chdir", Op::StreamChangeDir, &[p(0, N, FOLLOW, KEEP)]),
    (81, "fchdir", Op::StreamChangeDir, &[]),
    (82, "rename", Op::StreamRename, &[p(0, N, NOFOLLOW, KEEP), p(1, N, NOFOLLOW, MAKE)]),
    (83, "mkdir", Op::StreamCreateDir, &[p(0, N, NOFOLLOW, MAKE)]),
    (84, "rmdir", Op::StreamDelete, &[p(0, N, NOFOLLOW, KEEP)]),
    (85, "creat", Op::StreamOpen, &[p(0, N, FOLLOW, MAKE)]),
    (86, "link", Op::StreamLink, &[p(0, N, NOFOLLOW, KEEP), p(1, N, NOFOLLOW, MAKE)]),
    (87, "unlink", Op::StreamDelete, &[p(0, N, NOFOLLOW, KEEP)]),
    (88, "symlink", Op::StreamLink, &[p(1, N, NOFOLLOW, MAKE)]),
    (89, "readlink", Op::StreamAttrByName, &[p(0, N, NOFOLLOW, KEEP)]),
    (90, "chmod", Op::StreamSetAttr, &[p(0, N, FOLLOW, KEEP)]),
    (91, "fchmod", Op::StreamSetAttr, &[]),
    (92, "chown", Op::StreamSetAttr, &[p(0, N, FOLLOW, KEEP)]),
    (93, "fchown", Op::StreamSetAttr, &[]),
    (94, "lchown", Op::StreamSetAttr, &[p(0, N, NOFOLLOW, KEEP)]),
    (96, "gettimeofday", Op::TimeGet, &[]),
    (102, "getuid", Op::ProcessInfo, &[]),
    (104, "getgid", Op::ProcessInfo, &[]),
    (107, "geteuid", Op::ProcessInfo, &[]),
    (108, "getegid", Op::ProcessInfo, &[]),
    (110, "getppid", Op::ProcessInfo, &[]),
    (111, "getpgrp", Op::ProcessInfo, &[]),
    (115, "getgroups", Op::ProcessInfo, &[]),
    (118, "getresuid", Op::ProcessInfo, &[]),
    (120, "getresgid", Op::ProcessInfo, &[]),
    (121, "getpgid", Op::ProcessInfo, &[]),
    (124, "getsid", Op::ProcessInfo, &[]),
    (127, "rt_sigpending", Op::SignalMask, &[]),
    (128, "rt_sigtimedwait", Op::SignalWait, &[]),
    (129, "rt_sigqueueinfo", Op::SignalSend, &[]),
    (130, "rt_sigsuspend", Op::SignalWait, &[]),
    (131, "sigaltstack", Op::SignalStack, &[]),
    (132, "utime", Op::StreamSetAttr, &[p(0, N, FOLLOW, KEEP)]),
    (133, "mknod", Op::StreamCreateDir, &[p(0, N, NOFOLLOW, MAKE)]),
    (137, "statfs", Op::StreamAttrByName, &[p(0, N, FOLLOW, KEEP)]),
    (138, "fstatfs", Op::StreamAttrByHandle, &[]),
    (149, "mlock", Op::MemAdvise, &[]),
    (150, "munlock", Op::MemAdvise, &[]),
    (151, "mlockall", Op::MemAdvise, &[]),
    (152, "munlockall", Op::MemAdvise, &[]),
    (161, "chroot", Op::StreamChangeDir, &[p(0, N, FOLLOW, KEEP)]),
    (162, "sync", Op::StreamFlush, &[]),
    (186, "gettid", Op::ProcessInfo, &[]),
    (188, "setxattr", Op::StreamSetAttr, &[p(0, N, FOLLOW, KEEP)]),
    (189, "lsetxattr", Op::StreamSetAttr, &[p(0, N, NOFOLLOW, KEEP)]),
    (190, "fsetxattr", Op::StreamSetAttr, &[]),
    (191, "getxattr", Op::StreamAttrByName, &[p(0, N, FOLLOW, KEEP)]),
    (192, "lgetxattr", Op::StreamAttrByName, &[p(0, N, NOFOLLOW, KEEP)]),
    (193, "fgetxattr", Op::StreamAttrByHandle, &[]),
    (194, "listxattr", Op::StreamAttrByName, &[p(0, N, FOLLOW, KEEP)]),
    (195, "llistxattr", Op::StreamAttrByName, &[p(0, N, NOFOLLOW, KEEP)]),
    (196, "flistxattr", Op::StreamAttrByHandle, &[]),
    (197, "removexattr", Op::StreamSetAttr, &[p(0, N, FOLLOW, KEEP)]),
    (198, "lremovexattr", Op::StreamSetAttr, &[p(0, N, NOFOLLOW, KEEP)]),
    (199, "fremovexattr", Op::StreamSetAttr, &[]),
    (200, "tkill", Op::SignalSend, &[]),
    (201, "time", Op::TimeGet, &[]),
    (202, "futex", Op::SyncWait, &[]),
    (217, "getdents64", Op::StreamEnumerate, &[]),
    (228, "clock_gettime", Op::TimeGet, &[]),
    (229, "clock_getres", Op::TimeGet, &[]),
    (230, "clock_nanosleep", Op::TimeSleep, &[]),
    (231, "exit_group", Op::ProcessExit, &[]),
    (232, "epoll_wait", Op::WaitAny, &[]),
    (234, "tgkill", Op::SignalSend, &[]),
    (235, "utimes", Op::StreamSetAttr, &[p(0, N, FOLLOW, KEEP)]),
    (247, "waitid", Op::ProcessWait, &[]),
    (254, "inotify_add_watch", Op::StreamWatch, &[p(1, N, Follow::UnlessNoFollow(2), KEEP)]),
    (257, "openat", Op::StreamOpen, &[p(1, 0, Follow::OpenFlags(2), Create::OpenFlags(2))]),
    (258, "mkdirat", Op::StreamCreateDir, &[p(1, 0, NOFOLLOW, MAKE)]),
    (259, "mknodat", Op::StreamCreateDir, &[p(1, 0, NOFOLLOW, MAKE)]),
    (260, "fchownat", Op::StreamSetAttr, &[p(1, 0, Follow::UnlessNoFollow(4), KEEP)]),
    (261, "futimesat", Op::StreamSetAttr, &[p(1, 0, FOLLOW, KEEP)]),
    (262, "newfstatat", Op::StreamAttrByName, &[p(1, 0, Follow::UnlessNoFollow(3), KEEP)]),
    (263, "unlinkat", Op::StreamDelete, &[p(1, 0, NOFOLLOW, KEEP)]),
    (264, "renameat", Op::StreamRename, &[p(1, 0, NOFOLLOW, KEEP), p(3, 2, NOFOLLOW, MAKE)]),
    (265, "linkat", Op::StreamLink, &[p(1, 0, Follow::IfFollow(4), KEEP), p(3, 2, NOFOLLOW, MAKE)]),
    (266, "symlinkat", Op::StreamLink, &[p(2, 1, NOFOLLOW, MAKE)]),
    (267, "readlinkat", Op::StreamAttrByName, &[p(1, 0, NOFOLLOW, KEEP)]),
    (268, "fchmodat", Op::StreamSetAttr, &[p(1, 0, FOLLOW, KEEP)]),
    (269, "faccessat", Op::StreamAttrByName, &[p(1, 0, FOLLOW, KEEP)]),
    (270, "pselect6", Op::WaitAny, &[]),
    (271, "ppoll", Op::WaitAny, &[]),
    (275, "splice", Op::StreamCopy, &[]),
    (276, "tee", Op::StreamCopy, &[]),
    (277, "sync_file_range", Op::StreamFlush, &[]),
    (280, "utimensat", Op::StreamSetAttr, &[p(1, 0, Follow::UnlessNoFollow(3), KEEP)]),
    (281, "epoll_pwait", Op::WaitAny, &[]),
    (285, "fallocate", Op::StreamSetLength, &[]),
    (288, "accept4", Op::StreamAccept, &[]),
    (292, "dup3", Op::StreamDup, &[]),
    (293, "pipe2", Op::StreamPipe, &[]),
    (295, "preadv", Op::StreamReadAt, &[]),
    (296, "pwritev", Op::StreamWriteAt, &[]),
    (297, "rt_tgsigqueueinfo", Op::SignalSend, &[]),
    (299, "recvmmsg", Op::StreamRecv, &[]),
    (301, "fanotify_mark", Op::StreamWatch, &[p(4, 3, FOLLOW, KEEP)]),
    (306, "syncfs", Op::StreamFlush, &[]),
    (307, "sendmmsg", Op::StreamSend, &[]),
    (316, "renameat2", Op::StreamRename, &[p(1, 0, NOFOLLOW, KEEP), p(3, 2, NOFOLLOW, MAKE)]),
    (318, "getrandom", Op::RandomBits, &[]),
    (322, "execveat", Op::ProcessExec, &[p(1, 0, Follow::UnlessNoFollow(4), KEEP)]),
    (325, "mlock2", Op::MemAdvise, &[]),
    (326, "copy_file_range", Op::StreamCopy, &[]),
    (327, "preadv2", Op::StreamReadAt, &[]),
    (328, "pwritev2", Op::StreamWriteAt, &[]),
    (329, "pkey_mprotect", Op::MemProtect, &[]),
    (332, "statx", Op::StreamAttrByName, &[p(1, 0, Follow::UnlessNoFollow(2), KEEP)]),
    (424, "pidfd_send_signal", Op::SignalSend, &[]),
    (435, "clone3", Op::ProcessCreate, &[]),
    (436, "close_range", Op::StreamClose, &[]),
    (437, "openat2", Op::StreamOpen, &[p(1, 0, FOLLOW, Create::OpenFlags(NO_ARG))]),
    (439, "faccessat2", Op::StreamAttrByName, &[p(1, 0, Follow::UnlessNoFollow(3), KEEP)]),
    (441, "epoll_pwait2", Op::WaitAny, &[]),
    (449, "futex_waitv", Op::SyncWait, &[]),
    (452, "fchmodat2", Op::StreamSetAttr, &[p(1, 0, Follow::UnlessNoFollow(3), KEEP)]),
    (454, "futex_wake", Op::SyncWake, &[]),
    (455, "futex_wait", Op::SyncWait, &[]),
];

const LIMIT: usize = crate::MAX_NR;
const NONE: u16 = u16::MAX;

// ROW_OF[nr] = index into ROWS, or NONE. Built at compile time.
const ROW_OF: [u16; LIMIT] = {
    let mut t = [NONE; LIMIT];
    let mut i = 0;
    while i < ROWS.len() {
        t[ROWS[i].0 as usize] = i as u16;
        i += 1;
    }
    t
};

fn row(nr: u32) -> Option<&'static Row> {
    match ROW_OF.get(nr as usize) {
        Some(&i) if i != NONE => ROWS.get(i as usize),
        _ => None,
    }
}

const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
const AT_SYMLINK_FOLLOW: u64 = 0x400;
const AT_EMPTY_PATH: u64 = 0x1000;
const O_CREAT: u64 = 0o100;
const O_EXCL: u64 = 0o200;
const O_NOFOLLOW: u64 = 0o400000;
const MAP_ANONYMOUS: u64 = 0x20;
const CLONE_THREAD: u64 = 0x10000;

fn arg(args: &[u64; 6], i: u8) -> u64 {
    args.get(i as usize).copied().unwrap_or(0)
}

/// What [`decode`] gives a call from its number alone: its op and class,
/// and `args` when the op depends on the arguments or the call has path
/// operands (then the row is read). Built at compile time, so that the
/// common call (no paths, one op) is one load.
#[derive(Clone, Copy)]
struct Quick {
    op: Op,
    class: u16,
    args: bool,
}

/// Numbers whose op depends on the arguments (see [`decode`]'s match).
const BY_ARGS: [u32; 5] = [9, 56, 202, 262, 332];

/// A number no row names and the syscall table does not know (every number
/// past the table too).
const UNKNOWN: Quick = Quick {
    op: Op::Passthrough,
    class: crate::class::OTHER,
    args: false,
};

static QUICK: [Quick; LIMIT] = {
    let mut t = [UNKNOWN; LIMIT];
    let mut nr = 0;
    while nr < LIMIT {
        if let Some(e) = strata_syscall_table::entry_const(nr) {
            t[nr].class = crate::class::of(e.class);
        }
        if ROW_OF[nr] != NONE {
            let (_, _, op, specs) = ROWS[ROW_OF[nr] as usize];
            t[nr].op = op;
            t[nr].args = !specs.is_empty();
        }
        nr += 1;
    }
    let mut i = 0;
    while i < BY_ARGS.len() {
        t[BY_ARGS[i] as usize].args = true;
        i += 1;
    }
    t
};

/// The ABI view of Linux call `nr` with arguments `args`.
pub fn decode(nr: u32, args: &[u64; 6]) -> Decoded {
    decode_quick(nr, quick(nr), args)
}

/// `decode`, with the number's [`Quick`] in hand.
fn decode_quick(nr: u32, q: Quick, args: &[u64; 6]) -> Decoded {
    let d = Decoded {
        op: q.op,
        class: q.class,
        npaths: 0,
        paths: [PathSlot::default(); crate::MAX_PATHS],
    };
    if !q.args {
        return d;
    }
    decode_row(nr, args, d)
}

/// `decode`, into `c` (its op, class and path slots, from its number and
/// arguments). Inlined: the number-only part is a load from a static; the
/// row part ([`decode_row`]) is not (ROWS is a constant, and each crate
/// that inlined it would carry its own copy of the table). Writes the
/// fields in place: a `Decoded` returned and copied field by field costs a
/// store-forwarding stall on every call.
#[inline]
pub(crate) fn decode_into(c: &mut crate::Call) {
    let q = quick(c.nr);
    c.op = q.op as u16;
    c.class = q.class;
    if q.args {
        let d = decode_quick(c.nr, q, &c.args);
        c.op = d.op as u16;
        c.npaths = d.npaths as u32;
        c.paths = d.paths;
    }
}

#[inline]
fn quick(nr: u32) -> Quick {
    QUICK.get(nr as usize).copied().unwrap_or(UNKNOWN)
}

/// [`decode`] from the row: the op from the arguments, and the path slots.
/// `d` holds the number's op and class.
#[inline(never)]
fn decode_row(nr: u32, args: &[u64; 6], mut d: Decoded) -> Decoded {
    let Some(&(_, _, op, specs)) = row(nr) else {
        return d;
    };
    // (Numbers, not names: this runs for every call a layer sees.)
    d.op = match nr {
        9 if args[3] & MAP_ANONYMOUS == 0 => Op::StreamMap, // mmap of a file
        56 if args[0] & CLONE_THREAD != 0 => Op::ThreadCreate, // clone
        202 if matches!(args[1] & 0x7f, 1 | 3 | 4 | 5 | 11) => Op::SyncWake, // futex wake ops
        262 if args[3] & AT_EMPTY_PATH != 0 => Op::StreamAttrByHandle, // newfstatat(fd, "")
        332 if args[2] & AT_EMPTY_PATH != 0 => Op::StreamAttrByHandle, // statx(fd, "")
        _ => op,
    };
    for (slot, s) in d.paths.iter_mut().zip(specs) {
        let follow = match s.follow {
            Follow::Yes => true,
            Follow::No => false,
            Follow::UnlessNoFollow(i) => arg(args, i) & AT_SYMLINK_NOFOLLOW == 0,
            Follow::IfFollow(i) => arg(args, i) & AT_SYMLINK_FOLLOW != 0,
            Follow::OpenFlags(i) => {
                let f = arg(args, i);
                f & O_NOFOLLOW == 0 && f & (O_CREAT | O_EXCL) != O_CREAT | O_EXCL
            }
        };
        let create = match s.create {
            Create::No => false,
            Create::Yes => true,
            Create::OpenFlags(NO_ARG) => true,
            Create::OpenFlags(i) => arg(args, i) & O_CREAT != 0,
        };
        *slot = PathSlot {
            arg: s.arg,
            dirfd_arg: s.dirfd,
            follow: follow as u8,
            create: create as u8,
        };
    }
    d.npaths = specs.len().min(crate::MAX_PATHS);
    d
}

/// Whether call `nr` is decoded into `op` for some arguments.
pub(crate) fn may_be(nr: u32, op: Op) -> bool {
    let Some(&(_, name, base, _)) = row(nr) else {
        return op == Op::Passthrough;
    };
    base == op
        || matches!(
            (op, name),
            (Op::StreamMap, "mmap")
                | (Op::ThreadCreate, "clone" | "clone3")
                | (Op::SyncWake, "futex")
                | (Op::StreamAttrByHandle, "newfstatat" | "statx")
        )
}

/// Every modelled call with a path operand: (nr, op). A layer's interest
/// is built from these at each process start (walking the rows, not every
/// number).
pub(crate) fn path_calls() -> impl Iterator<Item = (u32, Op)> {
    ROWS.iter().filter(|r| !r.3.is_empty()).map(|r| (r.0, r.2))
}

/// Every modelled Linux call: (nr, name, op). For docs and tests.
pub fn modelled() -> impl Iterator<Item = (u32, &'static str, Op)> {
    ROWS.iter().map(|r| (r.0, r.1, r.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The number-only table agrees with reading every row: for each
    /// number (and some past the table), with arguments that take each
    /// argument-dependent arm and that take none.
    #[test]
    fn the_quick_table_agrees_with_the_rows() {
        let argsets: [[u64; 6]; 5] = [
            [0; 6],
            [!0; 6],
            [CLONE_THREAD, 1, AT_EMPTY_PATH, AT_EMPTY_PATH, 0, 0],
            [0, 11, 0, MAP_ANONYMOUS, 0, 0],
            [0, 0x80, AT_SYMLINK_NOFOLLOW, O_CREAT, 0, 0],
        ];
        for nr in 0..(LIMIT as u32 + 8) {
            for a in &argsets {
                let class = match strata_syscall_table::class(nr as usize) {
                    Some(c) => crate::class::of(c),
                    None => crate::class::OTHER,
                };
                let base = Decoded {
                    op: row(nr).map_or(Op::Passthrough, |r| r.2),
                    class,
                    npaths: 0,
                    paths: [PathSlot::default(); crate::MAX_PATHS],
                };
                let d = decode(nr, a);
                assert_eq!(d, decode_row(nr, a, base), "call {nr}, arguments {a:x?}");
                let c = crate::Call::new(nr, *a, 1, 2);
                let slots = &d.paths[..d.npaths];
                assert_eq!(
                    (c.op, c.class, c.path_slots()),
                    (d.op as u16, d.class, slots),
                    "call {nr}, {a:x?}"
                );
            }
        }
    }

    #[test]
    fn names_match_the_syscall_table() {
        for &(nr, name, _, _) in ROWS {
            assert_eq!(strata_syscall_table::name(nr as usize), Some(name), "row {nr}");
        }
    }

    #[test]
    fn every_op_named_in_its_row_lists_the_call() {
        for &(_, name, op, _) in ROWS {
            let info = crate::OPS.iter().find(|i| i.op == op).unwrap();
            assert!(
                info.linux.split(' ').any(|w| w.trim_end_matches('*') == name),
                "{name} missing from the Linux list of {}",
                info.name
            );
        }
    }

    #[test]
    fn openat_slots() {
        let d = decode(257, &[(-100i64) as u64, 0x1000, 0o100 | 0o200, 0o644, 0, 0]);
        assert_eq!(d.op, Op::StreamOpen);
        assert_eq!(d.npaths, 1);
        assert_eq!(
            d.paths[0],
            PathSlot {
                arg: 1,
                dirfd_arg: 0,
                follow: 0,
                create: 1
            }
        );
        let d = decode(257, &[3, 0x1000, 0, 0, 0, 0]);
        assert_eq!(
            d.paths[0],
            PathSlot {
                arg: 1,
                dirfd_arg: 0,
                follow: 1,
                create: 0
            }
        );
    }

    #[test]
    fn dynamic_ops() {
        assert_eq!(decode(9, &[0, 4096, 3, 0x22, !0, 0]).op, Op::MemAlloc);
        assert_eq!(decode(9, &[0, 4096, 1, 0x2, 3, 0]).op, Op::StreamMap);
        assert_eq!(decode(56, &[0x10000 | 0x100, 0, 0, 0, 0, 0]).op, Op::ThreadCreate);
        assert_eq!(decode(56, &[17, 0, 0, 0, 0, 0]).op, Op::ProcessCreate);
        assert_eq!(decode(202, &[0, 0x81, 1, 0, 0, 0]).op, Op::SyncWake);
        assert_eq!(decode(202, &[0, 0x80, 1, 0, 0, 0]).op, Op::SyncWait);
        assert_eq!(decode(262, &[3, 0, 0, 0x1000, 0, 0]).op, Op::StreamAttrByHandle);
        assert_eq!(decode(262, &[3, 0, 0, 0x100, 0, 0]).paths[0].follow, 0);
        assert_eq!(decode(999, &[0; 6]).op, Op::Passthrough);
        assert_eq!(decode(165, &[0; 6]).op, Op::Passthrough); // mount: not modelled
    }

    #[test]
    fn rename_has_two_operands() {
        let d = decode(316, &[1, 2, 3, 4, 0, 0]);
        assert_eq!(d.npaths, 2);
        assert_eq!((d.paths[0].arg, d.paths[0].dirfd_arg), (1, 0));
        assert_eq!((d.paths[1].arg, d.paths[1].dirfd_arg), (3, 2));
    }
}
