//! Per-call decoders: which decoder prints which call, the argument kinds
//! of the calls that are a plain list of arguments, and the form of each
//! call's result.

mod file;
mod io;
mod mem;
mod misc;
mod net;
mod process;
mod signal;
mod time;

use crate::nr::*;
use crate::out::{P, R};
use crate::xlat::{self, Xlat};

/// How one argument prints, for calls whose arguments are all inputs.
#[derive(Clone, Copy)]
pub(crate) enum K {
    /// A descriptor (int).
    Fd,
    /// A directory descriptor: AT_FDCWD or a descriptor.
    Dirfd,
    /// A path (not limited by -s).
    Path,
    /// A NUL-terminated string (limited by -s).
    Str,
    /// A pointer: NULL or hex.
    Addr,
    /// Hex (`%#lx`).
    X,
    /// int.
    D,
    /// long.
    Ld,
    /// unsigned int.
    U,
    /// unsigned long.
    Lu,
    /// A mode in octal (umode_t).
    Mode,
    /// A uid or gid (-1 for "unchanged").
    Id,
    /// A signal.
    Sig,
    /// Flags from a table, with the default shown for unknown bits (and
    /// `0` for none).
    F(Xlat, &'static str),
    /// A constant from a table, hex with a comment when unknown.
    V(Xlat, &'static str),
    /// Flags from a table, all 64 bits (printflags64).
    F64(Xlat, &'static str),
    /// A clock id.
    Clock,
}

/// Prints `args[i]` as `kinds[i]`, comma-separated (strace decoders that
/// print every argument on entry and return RVAL_DECODED).
pub(crate) fn seq(p: &mut P, kinds: &[K]) -> R {
    for (i, k) in kinds.iter().enumerate() {
        if i > 0 {
            p.next()?;
        }
        one(p, *k, p.a[i])?;
    }
    Ok(())
}

pub(crate) fn one(p: &mut P, k: K, v: u64) -> R {
    match k {
        K::Fd => p.fd(v),
        K::Dirfd => p.dirfd(v),
        K::Path => p.path(v),
        K::Str => p.cstr(v),
        K::Addr => p.addr(v),
        K::X => p.x(v),
        K::D => p.d(v as i32 as i64),
        K::Ld => p.d(v as i64),
        K::U => p.u(v as u32 as u64),
        K::Lu => p.u(v),
        K::Mode => p.umode(v),
        K::Id => p.id(v),
        K::Sig => p.signal(v as i32),
        K::F(x, d) => p.flags(x, v, Some(d)),
        K::V(x, d) => p.xval(x, v, Some(d)),
        K::F64(x, d) => p.flags64(x, v, Some(d)),
        K::Clock => time::clockname(p, v as i32),
    }
}

/// strace's `printargs`: every argument in hex.
fn printargs(p: &mut P, nr: usize) -> R {
    p.hex_args(0, crate::nargs(nr))
}

/// strace's `printargs_d`: every argument as a signed long.
fn printargs_d(p: &mut P, nr: usize) -> R {
    for i in 0..crate::nargs(nr) {
        if i > 0 {
            p.next()?;
        }
        p.d(p.a[i] as i64)?;
    }
    Ok(())
}

/// strace's `printargs_u`: every argument as an unsigned long.
fn printargs_u(p: &mut P, nr: usize) -> R {
    for i in 0..crate::nargs(nr) {
        if i > 0 {
            p.next()?;
        }
        p.u(p.a[i])?;
    }
    Ok(())
}

use K::*;

/// Prints the arguments of call `nr` as strace does.
pub(crate) fn decode(p: &mut P, nr: usize) -> R {
    match nr {
        // ---- descriptors and I/O ------------------------------------------------
        READ => io::read(p),
        WRITE => io::write(p),
        PREAD64 => io::pread(p),
        PWRITE64 => io::pwrite(p),
        READV => io::readv(p, None),
        WRITEV => io::writev(p, None),
        PREADV => io::readv(p, Some(None)),
        PWRITEV => io::writev(p, Some(None)),
        PREADV2 => io::readv(p, Some(Some(5))),
        PWRITEV2 => io::writev(p, Some(Some(5))),
        CLOSE | FSYNC | FDATASYNC | SYNCFS | FCHDIR => seq(p, &[Fd]),
        LSEEK => seq(p, &[Fd, Ld, V(xlat::WHENCE_CODES, "SEEK_???")]),
        IOCTL => io::ioctl(p),
        FCNTL => io::fcntl(p),
        DUP => seq(p, &[Fd]),
        DUP2 => seq(p, &[Fd, Fd]),
        DUP3 => seq(p, &[Fd, Fd, F(xlat::OPEN_MODE_FLAGS, "O_???")]),
        PIPE => io::pipe(p, None),
        PIPE2 => io::pipe(p, Some(1)),
        POLL => io::poll(p),
        PPOLL => io::ppoll(p),
        SELECT => io::select(p, false),
        PSELECT6 => io::select(p, true),
        GETDENTS64 | GETDENTS => io::getdents(p, nr == GETDENTS64),
        SENDFILE => io::sendfile(p),
        SPLICE => io::splice(p),
        TEE => seq(p, &[Fd, Fd, Lu, F(xlat::SPLICE_FLAGS, "SPLICE_F_???")]),
        COPY_FILE_RANGE => io::copy_file_range(p),
        READAHEAD => seq(p, &[Fd, Ld, Lu]),
        FLOCK => seq(p, &[Fd, F(xlat::FLOCKCMDS, "LOCK_???")]),
        FADVISE64 => seq(p, &[Fd, Ld, Lu, V(xlat::ADVISE, "POSIX_FADV_???")]),
        FALLOCATE => seq(p, &[Fd, F(xlat::FALLOC_FLAGS, "FALLOC_FL_???"), Ld, Ld]),
        SYNC_FILE_RANGE => seq(p, &[Fd, Ld, Ld, F(xlat::SYNC_FILE_RANGE_FLAGS, "SYNC_FILE_RANGE_???")]),
        FTRUNCATE => seq(p, &[Fd, Lu]),
        EPOLL_CREATE => seq(p, &[D]),
        EPOLL_CREATE1 => seq(p, &[F(xlat::EPOLLFLAGS, "EPOLL_???")]),
        EPOLL_CTL => io::epoll_ctl(p),
        EPOLL_WAIT | EPOLL_PWAIT | EPOLL_PWAIT2 => io::epoll_wait(p, nr),
        EVENTFD => seq(p, &[U]),
        EVENTFD2 => seq(p, &[U, F(xlat::EFD_FLAGS, "EFD_???")]),
        INOTIFY_INIT => Ok(()),
        INOTIFY_INIT1 => seq(p, &[F(xlat::INOTIFY_INIT_FLAGS, "IN_???")]),
        INOTIFY_ADD_WATCH => seq(p, &[Fd, Path, F(xlat::INOTIFY_FLAGS, "IN_???")]),
        INOTIFY_RM_WATCH => seq(p, &[Fd, D]),
        SIGNALFD | SIGNALFD4 => signal::signalfd(p, nr == SIGNALFD4),
        TIMERFD_CREATE => seq(p, &[Clock, F(xlat::TIMERFDFLAGS, "TFD_???")]),
        TIMERFD_SETTIME => time::timerfd_settime(p),
        TIMERFD_GETTIME => time::timerfd_gettime(p),
        MEMFD_CREATE => file::memfd_create(p),
        CLOSE_RANGE => seq(p, &[U, U, F(xlat::CLOSE_RANGE_FLAGS, "CLOSE_RANGE_???")]),
        IO_URING_ENTER => io::io_uring_enter(p),

        // ---- files ----------------------------------------------------------
        OPEN => file::open(p, 0),
        OPENAT => {
            p.dirfd(p.a[0])?;
            p.next()?;
            file::open(p, 1)
        }
        OPENAT2 => file::openat2(p),
        CREAT => seq(p, &[Path, Mode]),
        ACCESS => seq(p, &[Path, F(xlat::ACCESS_MODES, "?_OK")]),
        FACCESSAT => seq(p, &[Dirfd, Path, F(xlat::ACCESS_MODES, "?_OK")]),
        FACCESSAT2 => seq(
            p,
            &[
                Dirfd,
                Path,
                F(xlat::ACCESS_MODES, "?_OK"),
                F(xlat::FACCESSAT_FLAGS, "AT_???"),
            ],
        ),
        STAT | LSTAT => file::stat(p, false),
        FSTAT => file::stat(p, true),
        NEWFSTATAT => file::newfstatat(p),
        STATX => file::statx(p),
        STATFS | FSTATFS => file::statfs(p, nr == FSTATFS),
        GETCWD => file::getcwd(p),
        CHDIR | RMDIR | UNLINK | CHROOT | ACCT | SWAPOFF | USELIB => seq(p, &[Path]),
        UNLINKAT => seq(p, &[Dirfd, Path, F(xlat::AT_FLAGS, "AT_???")]),
        MKDIR | CHMOD => seq(p, &[Path, Mode]),
        MKDIRAT | FCHMODAT => seq(p, &[Dirfd, Path, Mode]),
        FCHMODAT2 => seq(p, &[Dirfd, Path, Mode, F(xlat::AT_FLAGS, "AT_???")]),
        FCHMOD => seq(p, &[Fd, Mode]),
        RENAME | LINK | SYMLINK | PIVOT_ROOT => seq(p, &[Path, Path]),
        RENAMEAT => seq(p, &[Dirfd, Path, Dirfd, Path]),
        RENAMEAT2 => seq(p, &[Dirfd, Path, Dirfd, Path, F(xlat::RENAME_FLAGS, "RENAME_??")]),
        LINKAT => seq(p, &[Dirfd, Path, Dirfd, Path, F(xlat::AT_FLAGS, "AT_???")]),
        SYMLINKAT => seq(p, &[Path, Dirfd, Path]),
        READLINK => file::readlink(p, 0),
        READLINKAT => {
            p.dirfd(p.a[0])?;
            p.next()?;
            file::readlink(p, 1)
        }
        CHOWN | LCHOWN => seq(p, &[Path, Id, Id]),
        FCHOWN => seq(p, &[Fd, Id, Id]),
        FCHOWNAT => seq(p, &[Dirfd, Path, Id, Id, F(xlat::AT_FLAGS, "AT_???")]),
        UTIMENSAT => file::utimensat(p),
        UTIMES => file::utimes(p, false),
        FUTIMESAT => file::utimes(p, true),
        UTIME => file::utime(p),
        UMASK => seq(p, &[Mode]),
        TRUNCATE => seq(p, &[Path, Lu]),
        MKNOD => file::mknod(p, 0),
        MKNODAT => {
            p.dirfd(p.a[0])?;
            p.next()?;
            file::mknod(p, 1)
        }
        GETXATTR | LGETXATTR | FGETXATTR => file::getxattr(p, nr == FGETXATTR),
        SETXATTR | LSETXATTR | FSETXATTR => file::setxattr(p, nr == FSETXATTR),
        LISTXATTR | LLISTXATTR | FLISTXATTR => file::listxattr(p, nr == FLISTXATTR),
        REMOVEXATTR | LREMOVEXATTR => seq(p, &[Path, Str]),
        FREMOVEXATTR => seq(p, &[Fd, Str]),
        UMOUNT2 => seq(p, &[Path, F(xlat::UMOUNT_FLAGS, "MNT_???")]),
        MOUNT => file::mount(p),
        SWAPON => seq(p, &[Path, F(xlat::SWAP_FLAGS, "SWAP_FLAG_???")]),
        SYNC | VHANGUP | MUNLOCKALL => Ok(()),

        // ---- memory ---------------------------------------------------------
        MMAP => mem::mmap(p),
        MPROTECT => seq(p, &[Addr, Lu, F64(xlat::MMAP_PROT, "PROT_???")]),
        PKEY_MPROTECT => seq(p, &[Addr, Lu, F64(xlat::MMAP_PROT, "PROT_???"), D]),
        MUNMAP | MLOCK | MUNLOCK => seq(p, &[Addr, Lu]),
        BRK => seq(p, &[Addr]),
        MREMAP => mem::mremap(p),
        MADVISE => seq(p, &[Addr, Lu, V(xlat::MADVISE_CMDS, "MADV_???")]),
        MSYNC => seq(p, &[Addr, Lu, F(xlat::MCTL_SYNC, "MS_???")]),
        MLOCK2 => seq(p, &[Addr, Lu, F(xlat::MLOCK_FLAGS, "MLOCK_???")]),
        MLOCKALL => seq(p, &[F(xlat::MLOCKALL_FLAGS, "MCL_???")]),
        MINCORE => mem::mincore(p),
        PKEY_ALLOC => seq(p, &[X, X]),
        PKEY_FREE => printargs_d(p, nr),
        MEMBARRIER => process::membarrier(p),

        // ---- network --------------------------------------------------------
        SOCKET => net::socket(p),
        SOCKETPAIR => net::socketpair(p),
        CONNECT | BIND => net::connect(p),
        ACCEPT => net::accept(p, false),
        ACCEPT4 => net::accept(p, true),
        GETSOCKNAME | GETPEERNAME => net::getsockname(p),
        LISTEN => seq(p, &[Fd, D]),
        SHUTDOWN => seq(p, &[Fd, V(xlat::SHUTDOWN_MODES, "SHUT_???")]),
        SENDTO => net::sendto(p),
        RECVFROM => net::recvfrom(p),
        SENDMSG => net::sendmsg(p),
        RECVMSG => net::recvmsg(p),
        SETSOCKOPT => net::setsockopt(p),
        GETSOCKOPT => net::getsockopt(p),

        // ---- processes ------------------------------------------------------
        CLONE => process::clone(p),
        CLONE3 => process::clone3(p),
        FORK | VFORK | GETPID | GETPPID | GETTID | GETUID | GETEUID | GETGID | GETEGID | GETPGRP | SETSID
        | SCHED_YIELD | PAUSE => Ok(()),
        RT_SIGRETURN => signal::rt_sigreturn(p),
        RESTART_SYSCALL => p.s("<... resuming interrupted system call ...>"),
        EXECVE => process::execve(p, false),
        EXECVEAT => process::execve(p, true),
        EXIT | EXIT_GROUP => printargs_d(p, nr),
        WAIT4 => process::wait4(p),
        WAITID => process::waitid(p),
        KILL => seq(p, &[D, Sig]),
        TKILL => seq(p, &[D, Sig]),
        TGKILL => seq(p, &[D, D, Sig]),
        UNAME => process::uname(p),
        PRCTL => process::prctl(p),
        ARCH_PRCTL => process::arch_prctl(p),
        SET_TID_ADDRESS | RSEQ => printargs(p, nr),
        SET_ROBUST_LIST => seq(p, &[Addr, Lu]),
        GET_ROBUST_LIST => process::get_robust_list(p),
        PRLIMIT64 => process::prlimit64(p),
        GETRLIMIT => process::getrlimit(p, false),
        SETRLIMIT => process::getrlimit(p, true),
        GETRUSAGE => process::getrusage(p),
        SYSINFO => process::sysinfo(p),
        TIMES => process::times(p),
        SETUID | SETGID | SETFSUID | SETFSGID => seq(p, &[Id]),
        SETREUID | SETREGID => seq(p, &[Id, Id]),
        SETRESUID | SETRESGID => seq(p, &[Id, Id, Id]),
        GETRESUID | GETRESGID => process::getresuid(p),
        GETGROUPS => process::getgroups(p),
        SETGROUPS => process::setgroups(p),
        SETPGID => seq(p, &[D, D]),
        GETPGID | GETSID => seq(p, &[D]),
        GETPRIORITY => seq(p, &[V(xlat::PRIORITIES, "PRIO_???"), D]),
        SETPRIORITY => seq(p, &[V(xlat::PRIORITIES, "PRIO_???"), D, D]),
        PERSONALITY => process::personality(p),
        SCHED_GETAFFINITY => process::sched_getaffinity(p),
        SCHED_SETAFFINITY => process::sched_setaffinity(p),
        SCHED_GETSCHEDULER => seq(p, &[D]),
        SCHED_SETSCHEDULER => process::sched_setscheduler(p),
        SCHED_GETPARAM => process::sched_getparam(p),
        SCHED_SETPARAM => {
            seq(p, &[D])?;
            p.next()?;
            p.num_int(p.a[1])
        }
        SCHED_GET_PRIORITY_MAX | SCHED_GET_PRIORITY_MIN => seq(p, &[V(xlat::SCHEDULERS, "SCHED_???")]),
        GETCPU => process::getcpu(p),
        UNSHARE => seq(p, &[F64(xlat::UNSHARE_FLAGS, "CLONE_???")]),
        SETNS => seq(p, &[Fd, F(xlat::SETNS_TYPES, "CLONE_NEW???")]),
        PIDFD_OPEN => seq(p, &[D, F(xlat::PIDFD_OPEN_FLAGS, "PIDFD_???")]),
        PIDFD_GETFD => seq(p, &[Fd, D, X]),
        SETHOSTNAME | SETDOMAINNAME => process::sethostname(p),
        ALARM => printargs_u(p, nr),
        IOPL => printargs_d(p, nr),

        // ---- signals --------------------------------------------------------
        RT_SIGACTION => signal::rt_sigaction(p),
        RT_SIGPROCMASK => signal::rt_sigprocmask(p),
        RT_SIGSUSPEND => {
            p.sigset_addr_len(p.a[0], p.a[1])?;
            p.next()?;
            p.u(p.a[1])
        }
        RT_SIGPENDING => signal::rt_sigpending(p),
        RT_SIGTIMEDWAIT => signal::rt_sigtimedwait(p),
        RT_SIGQUEUEINFO => signal::rt_sigqueueinfo(p, false),
        RT_TGSIGQUEUEINFO => signal::rt_sigqueueinfo(p, true),
        SIGALTSTACK => signal::sigaltstack(p),

        // ---- time -----------------------------------------------------------
        NANOSLEEP => time::nanosleep(p),
        CLOCK_NANOSLEEP => time::clock_nanosleep(p),
        CLOCK_GETTIME | CLOCK_GETRES => time::clock_gettime(p),
        CLOCK_SETTIME => seq(p, &[Clock]).and_then(|()| {
            p.next()?;
            p.timespec(p.a[1])
        }),
        GETTIMEOFDAY => time::gettimeofday(p),
        SETTIMEOFDAY => time::settimeofday(p),
        TIME => time::time(p),
        GETITIMER => time::getitimer(p),
        SETITIMER => time::setitimer(p),
        FUTEX => time::futex(p),
        TIMER_CREATE => time::timer_create(p),
        TIMER_SETTIME => time::timer_settime(p),
        TIMER_GETTIME => time::timer_gettime(p),
        TIMER_DELETE | TIMER_GETOVERRUN => printargs_d(p, nr),

        // ---- everything else ------------------------------------------------
        GETRANDOM => process::getrandom(p),
        SENDMMSG => misc::sendmmsg(p),
        RECVMMSG => misc::recvmmsg(p),
        CAPGET => misc::capget(p),
        CAPSET => misc::capset(p),
        SHMGET => misc::shmget(p),
        SHMAT => misc::shmat(p),
        SHMDT => seq(p, &[Addr]),
        SEMGET => misc::ipc_get(p, true),
        MSGGET => misc::ipc_get(p, false),
        SYSLOG => misc::syslog(p),
        IOPRIO_GET => misc::ioprio_getset(p, false),
        IOPRIO_SET => misc::ioprio_getset(p, true),
        SECCOMP => misc::seccomp(p),
        PROCESS_VM_READV => misc::process_vm(p, true),
        PROCESS_VM_WRITEV => misc::process_vm(p, false),
        KCMP => misc::kcmp(p),
        REBOOT => misc::reboot(p),
        FANOTIFY_INIT => misc::fanotify_init(p),
        PIDFD_SEND_SIGNAL => misc::pidfd_send_signal(p),
        PROCESS_MADVISE => misc::process_madvise(p),
        SCHED_RR_GET_INTERVAL => misc::sched_rr_get_interval(p),
        VMSPLICE => {
            p.fd(p.a[0])?;
            p.next()?;
            io::iov_array(p, p.a[1], p.a[2], u64::MAX, false)?;
            p.next()?;
            p.u(p.a[2])?;
            p.next()?;
            p.flags(xlat::SPLICE_FLAGS, p.a[3], Some("SPLICE_F_???"))
        }
        FSOPEN => seq(p, &[Str, F(xlat::FSOPEN_FLAGS, "FSOPEN_???")]),
        FSMOUNT => seq(
            p,
            &[
                Fd,
                F(xlat::FSMOUNT_FLAGS, "FSMOUNT_???"),
                F(xlat::FSMOUNT_ATTR_FLAGS, "MOUNT_ATTR_???"),
            ],
        ),
        FSPICK => seq(p, &[Dirfd, Path, F(xlat::FSPICK_FLAGS, "FSPICK_???")]),
        OPEN_TREE => seq(p, &[Dirfd, Path, F(xlat::OPEN_TREE_FLAGS, "OPEN_TREE_???")]),
        MOVE_MOUNT => seq(
            p,
            &[Dirfd, Path, Dirfd, Path, F(xlat::MOVE_MOUNT_FLAGS, "MOVE_MOUNT_???")],
        ),
        MEMFD_SECRET => seq(p, &[F(xlat::MEMFD_SECRET_FLAGS, "")]),
        PROCESS_MRELEASE | LANDLOCK_RESTRICT_SELF => {
            p.fd(p.a[0])?;
            p.next()?;
            p.x(p.a[1] as u32 as u64)
        }
        MQ_UNLINK => seq(p, &[Path]),
        USERFAULTFD => seq(p, &[F(xlat::UFFD_FLAGS, "UFFD_???")]),
        IOPERM => seq(p, &[X, X, D]),
        DELETE_MODULE => seq(p, &[Str, F(xlat::DELETE_MODULE_FLAGS, "O_???")]),
        INIT_MODULE => seq(p, &[Addr, Lu, Str]),
        FINIT_MODULE => seq(p, &[Fd, Str, F(xlat::MODULE_INIT_FLAGS, "MODULE_INIT_???")]),
        IO_SETUP => misc::io_setup(p),
        IO_DESTROY => seq(p, &[Addr]),
        REMAP_FILE_PAGES => mem::remap_file_pages(p),
        MQ_TIMEDSEND => misc::mq_timedsend(p),
        MQ_TIMEDRECEIVE => misc::mq_timedreceive(p),
        MQ_NOTIFY => {
            p.fd(p.a[0])?;
            p.next()?;
            time::sigevent(p, p.a[1])
        }
        _ => printargs(p, nr),
    }
}

/// The form strace gives a successful result.
pub(crate) enum Rval {
    Dec,
    Udec,
    Hex,
    Oct,
}

/// Writes ` = <result>` for a call that did not fail, and what strace
/// adds after it (`aux`: fcntl's flags, poll's ready descriptors, ...).
pub(crate) fn result(p: &mut P, nr: usize, aux: bool) -> R {
    let (a, ret) = (p.a, p.ret);
    let form = match nr {
        MMAP | BRK | MREMAP | SHMAT => Rval::Hex,
        UMASK => Rval::Oct,
        GETUID | GETEUID | GETGID | GETEGID => Rval::Udec,
        FCNTL => match a[1] as u32 {
            F_GETFL | F_GETLEASE => Rval::Hex,
            F_GETFD | F_GET_SEALS if ret != 0 => Rval::Hex,
            _ => Rval::Dec,
        },
        PRCTL => process::prctl_rval_hex(a[0] as u32, ret),
        ARCH_PRCTL if matches!(a[0], 0x1023 | 0x1025) && ret > 0 => Rval::Hex,
        PERSONALITY => Rval::Hex,
        MEMBARRIER if a[0] == 0 && ret != 0 => Rval::Hex,
        _ => Rval::Dec,
    };
    p.s(" = ")?;
    match form {
        Rval::Dec => p.d(ret)?,
        Rval::Udec => p.u(ret as u64)?,
        Rval::Hex => p.x(ret as u64)?,
        Rval::Oct => p.oct(ret as u64)?,
    }
    if !aux {
        return Ok(());
    }
    match nr {
        FCNTL => io::fcntl_aux(p),
        POLL | PPOLL => io::poll_aux(p, nr == PPOLL),
        SELECT | PSELECT6 => io::select_aux(p, nr == PSELECT6),
        PRCTL => process::prctl_aux(p),
        ARCH_PRCTL => process::arch_prctl_aux(p),
        PERSONALITY => process::personality_aux(p),
        SCHED_GETSCHEDULER => match crate::out::lookup(xlat::SCHEDULERS, ret as u64) {
            Some(s) => write!(p, " ({s})"),
            None => Ok(()),
        },
        TIME if ret != 0 => {
            p.s(" (")?;
            p.time_text(ret, 0, 0, 0)?;
            p.s(")")
        }
        IOPRIO_GET => misc::ioprio_aux(p),
        RECVMMSG => misc::recvmmsg_aux(p),
        RT_SIGTIMEDWAIT if ret > 0 => match crate::out::signame(ret as i32) {
            Some(crate::out::Sig::Name(s)) => write!(p, " ({s})"),
            Some(crate::out::Sig::Rt(n)) => write!(p, " (SIGRT_{n})"),
            None => Ok(()),
        },
        MEMBARRIER if a[0] == 0 && ret != 0 => {
            p.s(" (")?;
            p.flags64(xlat::MEMBARRIER_CMDS, ret as u64, None)?;
            p.s(")")
        }
        _ => Ok(()),
    }
}

use core::fmt::Write as _;

const F_GETFD: u32 = 1;
const F_GETFL: u32 = 3;
const F_GETLEASE: u32 = 0x401;
const F_GET_SEALS: u32 = 0x40a;
