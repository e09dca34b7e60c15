//! The ops of the strata ABI, one row each: number, name, group, the Linux
//! calls the personality decodes into it, and what it means. docs/abi.md and
//! include/strata.h are generated from these rows.

/// The abstraction an op belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Stream,
    Memory,
    Process,
    Sync,
    Time,
    Random,
    Signal,
    Passthrough,
}

impl Group {
    pub const ALL: [Group; 8] = [
        Group::Stream,
        Group::Memory,
        Group::Process,
        Group::Sync,
        Group::Time,
        Group::Random,
        Group::Signal,
        Group::Passthrough,
    ];

    pub const fn title(self) -> &'static str {
        match self {
            Group::Stream => "Streams (named by path or URI, used through handles)",
            Group::Memory => "Virtual memory",
            Group::Process => "Threads and processes",
            Group::Sync => "Waiting and synchronisation",
            Group::Time => "Time",
            Group::Random => "Random bits",
            Group::Signal => "Signals and exceptions",
            Group::Passthrough => "Typed pass-through",
        }
    }
}

/// One row of the op table.
#[derive(Debug, Clone, Copy)]
pub struct OpInfo {
    pub op: Op,
    /// `STRATA_OP_<NAME>` in C, `Op::<Variant>` in Rust.
    pub name: &'static str,
    pub group: Group,
    /// The Linux calls decoded into this op (space separated; a `*` marks
    /// calls decoded into it only for some arguments).
    pub linux: &'static str,
    pub doc: &'static str,
}

macro_rules! ops {
    ($($v:ident = $n:literal, $name:literal, $g:ident, $linux:literal, $doc:literal;)*) => {
        /// An ABI op. Numbers are stable within a major version.
        #[repr(u16)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Op { $($v = $n,)* }

        /// Every op, in number order.
        pub const OPS: &[OpInfo] = &[$(OpInfo { op: Op::$v, name: $name, group: Group::$g, linux: $linux, doc: $doc },)*];

        impl Op {
            pub const fn from_u16(n: u16) -> Option<Op> {
                match n { $($n => Some(Op::$v),)* _ => None }
            }
        }
    };
}

ops! {
    Passthrough = 0, "PASSTHROUGH", Passthrough, "(every call not listed below)",
        "A Linux call the ABI does not model. It carries the whole call (number and six arguments), so an extension can still observe, change, serve or refuse it.";

    StreamOpen = 1, "STREAM_OPEN", Stream, "open creat openat openat2",
        "Opens the stream named by path (relative to a directory handle) and returns a handle. Path operand 0.";
    StreamClose = 2, "STREAM_CLOSE", Stream, "close close_range",
        "Releases handles.";
    StreamRead = 3, "STREAM_READ", Stream, "read readv",
        "Reads from the handle's current position.";
    StreamWrite = 4, "STREAM_WRITE", Stream, "write writev",
        "Writes at the handle's current position.";
    StreamReadAt = 5, "STREAM_READ_AT", Stream, "pread64 preadv preadv2",
        "Positional read.";
    StreamWriteAt = 6, "STREAM_WRITE_AT", Stream, "pwrite64 pwritev pwritev2",
        "Positional write.";
    StreamSeek = 7, "STREAM_SEEK", Stream, "lseek",
        "Moves the handle's position.";
    StreamMap = 8, "STREAM_MAP", Stream, "mmap*",
        "Maps a stream into memory (mmap of a file descriptor).";
    StreamSetLength = 9, "STREAM_SET_LENGTH", Stream, "truncate ftruncate fallocate",
        "Sets the length of a stream, by path (operand 0) or by handle.";
    StreamFlush = 10, "STREAM_FLUSH", Stream, "fsync fdatasync sync syncfs sync_file_range msync",
        "Flushes written data to stable storage.";
    StreamDelete = 11, "STREAM_DELETE", Stream, "unlink unlinkat rmdir",
        "Deletes the name of a stream or an empty directory. Path operand 0.";
    StreamRename = 12, "STREAM_RENAME", Stream, "rename renameat renameat2",
        "Renames: path operand 0 becomes path operand 1.";
    StreamLink = 13, "STREAM_LINK", Stream, "link linkat symlink symlinkat",
        "Makes a new name (operand 1 for link, the only operand for symlink, whose target is data, not a path to resolve).";
    StreamCreateDir = 14, "STREAM_CREATE_DIR", Stream, "mkdir mkdirat mknod mknodat",
        "Creates a directory or a special file. Path operand 0.";
    StreamAttrByName = 15, "STREAM_ATTR_BY_NAME", Stream, "stat lstat newfstatat statx access faccessat faccessat2 statfs getxattr lgetxattr listxattr llistxattr readlink readlinkat",
        "Reads attributes (or the target of a symbolic link) by path. Path operand 0.";
    StreamAttrByHandle = 16, "STREAM_ATTR_BY_HANDLE", Stream, "fstat fstatfs fgetxattr flistxattr newfstatat* statx*",
        "Reads attributes by handle (also the AT_EMPTY_PATH forms).";
    StreamSetAttr = 17, "STREAM_SET_ATTR", Stream, "chmod fchmod fchmodat fchmodat2 chown fchown lchown fchownat utime utimes futimesat utimensat setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr",
        "Changes attributes (mode, owner, times, extended attributes), by path (operand 0) or by handle.";
    StreamEnumerate = 18, "STREAM_ENUMERATE", Stream, "getdents getdents64",
        "Lists the children of a directory handle.";
    StreamChangeDir = 19, "STREAM_CHANGE_DIR", Stream, "chdir fchdir chroot",
        "Changes the directory relative paths start from. Path operand 0 (chdir, chroot).";
    StreamGetDir = 20, "STREAM_GET_DIR", Stream, "getcwd",
        "Names the current directory.";
    StreamDup = 21, "STREAM_DUP", Stream, "dup dup2 dup3",
        "Duplicates a handle.";
    StreamControl = 22, "STREAM_CONTROL", Stream, "ioctl fcntl flock",
        "Device- or handle-specific control.";
    StreamPipe = 23, "STREAM_PIPE", Stream, "pipe pipe2 socketpair",
        "Creates a connected pair of handles.";
    StreamWatch = 24, "STREAM_WATCH", Stream, "inotify_add_watch fanotify_mark",
        "Watches a path for changes. Path operand 0.";
    StreamSocket = 25, "STREAM_SOCKET", Stream, "socket",
        "Creates an unnamed network stream.";
    StreamConnect = 26, "STREAM_CONNECT", Stream, "connect",
        "Connects to a peer (a socket address; for AF_UNIX a path).";
    StreamBind = 27, "STREAM_BIND", Stream, "bind listen",
        "Names a network stream / starts listening.";
    StreamAccept = 28, "STREAM_ACCEPT", Stream, "accept accept4",
        "Accepts a connection.";
    StreamSend = 29, "STREAM_SEND", Stream, "sendto sendmsg sendmmsg",
        "Sends a message (optionally to an address).";
    StreamRecv = 30, "STREAM_RECV", Stream, "recvfrom recvmsg recvmmsg",
        "Receives a message.";
    StreamSockOpt = 31, "STREAM_SOCKOPT", Stream, "getsockopt setsockopt getsockname getpeername shutdown",
        "Network stream attributes.";
    StreamCopy = 32, "STREAM_COPY", Stream, "sendfile copy_file_range splice tee",
        "Copies between handles inside the kernel.";

    MemAlloc = 40, "MEM_ALLOC", Memory, "mmap* brk",
        "Allocates virtual memory (anonymous mappings, the heap break).";
    MemFree = 41, "MEM_FREE", Memory, "munmap",
        "Frees virtual memory.";
    MemProtect = 42, "MEM_PROTECT", Memory, "mprotect pkey_mprotect",
        "Changes the protection of virtual memory.";
    MemRemap = 43, "MEM_REMAP", Memory, "mremap",
        "Moves or resizes a mapping.";
    MemAdvise = 44, "MEM_ADVISE", Memory, "madvise mlock mlock2 munlock mlockall munlockall mincore",
        "Advice and residency.";

    ThreadCreate = 50, "THREAD_CREATE", Process, "clone* clone3*",
        "Creates a thread (CLONE_THREAD).";
    ThreadExit = 51, "THREAD_EXIT", Process, "exit",
        "Ends the calling thread.";
    ProcessCreate = 52, "PROCESS_CREATE", Process, "fork vfork clone* clone3*",
        "Creates a process.";
    ProcessExit = 53, "PROCESS_EXIT", Process, "exit_group",
        "Ends the calling process.";
    ProcessWait = 54, "PROCESS_WAIT", Process, "wait4 waitid",
        "Waits for a child process.";
    ProcessExec = 55, "PROCESS_EXEC", Process, "execve execveat",
        "Replaces the process image with the program named by path operand 0.";
    ProcessInfo = 56, "PROCESS_INFO", Process, "getpid gettid getppid getuid geteuid getgid getegid getpgrp getpgid getsid getgroups getresuid getresgid uname",
        "Identity of the caller.";

    SyncWait = 60, "SYNC_WAIT", Sync, "futex* futex_wait futex_waitv",
        "Waits on a memory word.";
    SyncWake = 61, "SYNC_WAKE", Sync, "futex* futex_wake",
        "Wakes waiters on a memory word.";
    WaitAny = 62, "WAIT_ANY", Sync, "poll ppoll select pselect6 epoll_wait epoll_pwait epoll_pwait2",
        "Waits until one of several handles is ready.";

    TimeGet = 70, "TIME_GET", Time, "clock_gettime gettimeofday time clock_getres",
        "Reads a clock.";
    TimeSleep = 71, "TIME_SLEEP", Time, "nanosleep clock_nanosleep",
        "Sleeps.";

    RandomBits = 80, "RANDOM_BITS", Random, "getrandom",
        "Fills a buffer with random bits.";

    SignalAction = 90, "SIGNAL_ACTION", Signal, "rt_sigaction",
        "Sets what a signal does.";
    SignalMask = 91, "SIGNAL_MASK", Signal, "rt_sigprocmask rt_sigpending",
        "Blocks and unblocks signals; reads the pending set.";
    SignalSend = 92, "SIGNAL_SEND", Signal, "kill tkill tgkill rt_sigqueueinfo rt_tgsigqueueinfo pidfd_send_signal",
        "Sends a signal.";
    SignalWait = 93, "SIGNAL_WAIT", Signal, "pause rt_sigsuspend rt_sigtimedwait",
        "Waits for a signal.";
    SignalReturn = 94, "SIGNAL_RETURN", Signal, "rt_sigreturn",
        "Returns from a signal handler.";
    SignalStack = 95, "SIGNAL_STACK", Signal, "sigaltstack",
        "Sets the signal stack.";
}
