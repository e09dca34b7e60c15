//! The table itself: one row per x86-64 system call, in number order.
//!
//! Row format: `number name class disposition may_block note;`
//!
//! * `name` is the kernel's name (as in `arch/x86/entry/syscalls/syscall_64.tbl`
//!   and the `syscalls` crate),
//! * `class` is a [`Class`] variant, `disposition` a [`Disposition`] variant,
//! * `may_block` is `true` when the call can sleep for an unbounded time
//!   waiting for something outside the process (see [`Entry::may_block`]),
//! * `note` says what the call is and, when strata does anything but re-issue
//!   it, exactly what strata does.
//!
//! Compile-time checks in `lib.rs` reject unsorted or duplicate numbers,
//! duplicate names and empty notes.

use crate::{Class, Disposition, Entry};

/// Builds `ENTRIES` from the rows below.
macro_rules! syscall_table {
    ($($nr:literal $name:ident $class:ident $disposition:ident $may_block:literal $note:expr;)*) => {
        /// Every x86-64 system call, sorted by number.
        pub(crate) const ENTRIES: &[Entry] = &[$(
            Entry {
                nr: $nr,
                name: stringify!($name),
                class: Class::$class,
                disposition: Disposition::$disposition,
                may_block: $may_block,
                note: $note,
            },
        )*];
        /// Every name, one after another in number order (with `NAME_AT`,
        /// in lib.rs: names without a pointer per row to relocate).
        pub(crate) const NAMES: &str = concat!($(stringify!($name)),*);
    };
}

// Facts shared by several rows (each row still says what the call is).
macro_rules! own_memory {
    () => {
        "refused with ENOMEM/EINVAL when it would touch strata's own memory"
    };
}
macro_rules! no_sigsys_in_mask {
    () => {
        "SIGSYS is removed from the mask argument"
    };
}
macro_rules! child_by_strata {
    () => {
        "the child is started by strata so capture is on before it runs program code"
    };
}
macro_rules! exec_by_strata {
    () => {
        "checked as the kernel would, then strata-rt is exec'd to load the new image \
         (capture continues); --no-follow-exec passes it through"
    };
}
macro_rules! exe_link {
    () => {
        "/proc/self/exe and /proc/<pid>/exe name the program, not strata-rt"
    };
}
macro_rules! enosys {
    ($what:literal) => {
        concat!($what, "; not implemented by Linux on x86-64; the kernel answers ENOSYS")
    };
}

#[rustfmt::skip]
syscall_table! {
    // number, name, class, disposition, may_block, note
    0   read                    Desc    Passthrough true  "read from a descriptor";
    1   write                   Desc    Passthrough true  "write to a descriptor";
    2   open                    File    Partial     true  "open a path (waits on FIFOs, ttys and lease breaks); /proc/self/environ, auxv and exe give the program's view, not strata-rt's";
    3   close                   Desc    Passthrough true  "close a descriptor (a lingering socket waits for its peer)";
    4   stat                    File    Passthrough false "file status by path, following symlinks";
    5   fstat                   Desc    Passthrough false "file status of a descriptor";
    6   lstat                   File    Passthrough false "file status by path, not following a final symlink";
    7   poll                    Desc    Passthrough true  "wait for events on descriptors";
    8   lseek                   Desc    Passthrough false "move a descriptor's file offset";
    9   mmap                    Memory  Partial     false concat!("map memory or a file; ", own_memory!());
    10  mprotect                Memory  Partial     false concat!("change page protections; ", own_memory!());
    11  munmap                  Memory  Partial     false concat!("unmap a memory range; ", own_memory!());
    12  brk                     Memory  Emulated    false "move the program break; the program break is kept by strata right after the loaded program";
    13  rt_sigaction            Signal  Partial     false "examine or set a signal's action; installed as given, minus SIGSYS in the handler's mask; SIGSYS's own action is virtualized (kept by strata, delivered by strata)";
    14  rt_sigprocmask          Signal  Emulated    false "examine or change the blocked-signal mask; the mask is kept in the signal frame strata returns through; SIGSYS is never really blocked";
    15  rt_sigreturn            Signal  Emulated    false "return from a signal handler; issued by the program's own restorer, it traps, and strata restores that frame (registers, FPU state, mask, alternate stack)";
    16  ioctl                   Desc    Passthrough true  "device-specific control of a descriptor (tty drains and device waits block)";
    17  pread64                 Desc    Passthrough true  "read at an offset without moving the file offset";
    18  pwrite64                Desc    Passthrough true  "write at an offset without moving the file offset";
    19  readv                   Desc    Passthrough true  "scatter read into several buffers";
    20  writev                  Desc    Passthrough true  "gather write from several buffers";
    21  access                  File    Passthrough false "check the real user's permissions on a path";
    22  pipe                    Desc    Passthrough false "create a pipe";
    23  select                  Desc    Passthrough true  "wait for descriptors to become ready (fd_set interface, timeval timeout)";
    24  sched_yield             Process Passthrough false "give up the CPU";
    25  mremap                  Memory  Partial     false concat!("grow, shrink or move a mapping; ", own_memory!());
    26  msync                   Memory  Passthrough true  "write a shared file mapping back to storage";
    27  mincore                 Memory  Passthrough false "which pages of a range are resident";
    28  madvise                 Memory  Partial     false concat!("advise the kernel about a memory range (MADV_DONTNEED discards it); ", own_memory!());
    29  shmget                  Ipc     Passthrough false "create or look up a System V shared memory segment";
    30  shmat                   Ipc     Passthrough false "attach a System V shared memory segment (SHM_REMAP is not checked against strata's own memory)";
    31  shmctl                  Ipc     Passthrough false "control a System V shared memory segment";
    32  dup                     Desc    Passthrough false "duplicate a descriptor to the lowest free number";
    33  dup2                    Desc    Passthrough true  "duplicate a descriptor onto a given number, closing what was there";
    34  pause                   Signal  Passthrough true  "sleep until a signal is handled";
    35  nanosleep               Time    Passthrough true  "sleep for a relative time";
    36  getitimer               Time    Passthrough false "read an interval timer";
    37  alarm                   Time    Passthrough false "arm the SIGALRM timer in seconds";
    38  setitimer               Time    Passthrough false "arm or disarm an interval timer";
    39  getpid                  Process Passthrough false "process (thread group) ID";
    40  sendfile                Desc    Passthrough true  "copy data from a file to a descriptor in the kernel";
    41  socket                  Network Passthrough false "create a socket";
    42  connect                 Network Passthrough true  "connect a socket to an address";
    43  accept                  Network Passthrough true  "accept a connection on a listening socket";
    44  sendto                  Network Passthrough true  "send a message, optionally to an address";
    45  recvfrom                Network Passthrough true  "receive a message and its source address";
    46  sendmsg                 Network Passthrough true  "send a message with ancillary data";
    47  recvmsg                 Network Passthrough true  "receive a message with ancillary data";
    48  shutdown                Network Passthrough false "shut down one or both directions of a connection";
    49  bind                    Network Passthrough false "bind a socket to an address";
    50  listen                  Network Passthrough false "mark a socket as accepting connections";
    51  getsockname             Network Passthrough false "local address of a socket";
    52  getpeername             Network Passthrough false "peer address of a connected socket";
    53  socketpair              Network Passthrough false "create a pair of connected sockets";
    54  setsockopt              Network Passthrough false "set a socket option";
    55  getsockopt              Network Passthrough false "read a socket option";
    56  clone                   Process Emulated    true  concat!("create a thread or process (CLONE_VFORK makes the parent wait); ", child_by_strata!());
    57  fork                    Process Emulated    false concat!("create a child process; ", child_by_strata!());
    58  vfork                   Process Emulated    true  concat!("create a child that borrows the parent's memory while the parent waits; ", child_by_strata!());
    59  execve                  Process Emulated    true  concat!("run a new program; ", exec_by_strata!());
    60  exit                    Process Emulated    false "end the calling thread; strata frees the thread's state, then exits the thread";
    61  wait4                   Process Passthrough true  "wait for a child to change state, with its resource usage";
    62  kill                    Signal  Passthrough false "send a signal to a process or process group";
    63  uname                   Other   Passthrough false "kernel name, release, version and machine";
    64  semget                  Ipc     Passthrough false "create or look up a System V semaphore set";
    65  semop                   Ipc     Passthrough true  "operate on System V semaphores";
    66  semctl                  Ipc     Passthrough false "control a System V semaphore set";
    67  shmdt                   Ipc     Passthrough false "detach a System V shared memory segment";
    68  msgget                  Ipc     Passthrough false "create or look up a System V message queue";
    69  msgsnd                  Ipc     Passthrough true  "send to a System V message queue (waits while it is full)";
    70  msgrcv                  Ipc     Passthrough true  "receive from a System V message queue";
    71  msgctl                  Ipc     Passthrough false "control a System V message queue";
    72  fcntl                   Desc    Passthrough true  "descriptor control (F_SETLKW and F_OFD_SETLKW wait for a record lock)";
    73  flock                   Desc    Passthrough true  "apply or remove an advisory whole-file lock";
    74  fsync                   Desc    Passthrough true  "flush a file's data and metadata to storage";
    75  fdatasync               Desc    Passthrough true  "flush a file's data to storage";
    76  truncate                File    Passthrough true  "set a file's length by path (waits for a conflicting lease to break)";
    77  ftruncate               Desc    Passthrough false "set a file's length by descriptor";
    78  getdents                Desc    Passthrough false "read directory entries (old struct linux_dirent)";
    79  getcwd                  File    Passthrough false "current working directory";
    80  chdir                   File    Passthrough false "change the working directory by path";
    81  fchdir                  Desc    Passthrough false "change the working directory to an open directory";
    82  rename                  File    Passthrough false "rename a path";
    83  mkdir                   File    Passthrough false "create a directory";
    84  rmdir                   File    Passthrough false "remove an empty directory";
    85  creat                   File    Passthrough true  "create or truncate a file and open it for writing (waits on FIFOs and lease breaks)";
    86  link                    File    Passthrough false "make a hard link";
    87  unlink                  File    Passthrough false "remove a name from the file system";
    88  symlink                 File    Passthrough false "make a symbolic link";
    89  readlink                File    Partial     false concat!("read a symbolic link's target; ", exe_link!());
    90  chmod                   File    Passthrough false "change a path's mode bits";
    91  fchmod                  Desc    Passthrough false "change an open file's mode bits";
    92  chown                   File    Passthrough false "change a path's owner, following symlinks";
    93  fchown                  Desc    Passthrough false "change an open file's owner";
    94  lchown                  File    Passthrough false "change a path's owner, not following a final symlink";
    95  umask                   Process Passthrough false "set the file-creation mode mask";
    96  gettimeofday            Time    Passthrough false "wall-clock time as a timeval (usually answered by the vDSO, without a syscall)";
    97  getrlimit               Process Passthrough false "read a resource limit";
    98  getrusage               Process Passthrough false "resource usage of the process, its children or the thread";
    99  sysinfo                 Other   Passthrough false "uptime, memory, swap and load statistics";
    100 times                   Time    Passthrough false "process and children CPU times in clock ticks";
    101 ptrace                  Process Passthrough false "trace and control another process";
    102 getuid                  Process Passthrough false "real user ID";
    103 syslog                  Other   Passthrough true  "read or control the kernel log (SYSLOG_ACTION_READ waits for messages)";
    104 getgid                  Process Passthrough false "real group ID";
    105 setuid                  Process Passthrough false "set the user IDs";
    106 setgid                  Process Passthrough false "set the group IDs";
    107 geteuid                 Process Passthrough false "effective user ID";
    108 getegid                 Process Passthrough false "effective group ID";
    109 setpgid                 Process Passthrough false "move a process into a process group";
    110 getppid                 Process Passthrough false "parent process ID";
    111 getpgrp                 Process Passthrough false "process group of the caller";
    112 setsid                  Process Passthrough false "start a new session";
    113 setreuid                Process Passthrough false "set real and effective user IDs";
    114 setregid                Process Passthrough false "set real and effective group IDs";
    115 getgroups               Process Passthrough false "supplementary group list";
    116 setgroups               Process Passthrough false "set the supplementary group list";
    117 setresuid               Process Passthrough false "set real, effective and saved user IDs";
    118 getresuid               Process Passthrough false "real, effective and saved user IDs";
    119 setresgid               Process Passthrough false "set real, effective and saved group IDs";
    120 getresgid               Process Passthrough false "real, effective and saved group IDs";
    121 getpgid                 Process Passthrough false "process group of a given process";
    122 setfsuid                Process Passthrough false "set the user ID used for file-system checks";
    123 setfsgid                Process Passthrough false "set the group ID used for file-system checks";
    124 getsid                  Process Passthrough false "session ID of a process";
    125 capget                  Process Passthrough false "read a thread's capability sets";
    126 capset                  Process Passthrough false "set the caller's capability sets";
    127 rt_sigpending           Signal  Partial     false "signals pending for the thread or the process; a SIGSYS strata holds for the program is added";
    128 rt_sigtimedwait         Signal  Partial     true  concat!("wait for one of a set of signals, with a timeout; ", no_sigsys_in_mask!());
    129 rt_sigqueueinfo         Signal  Passthrough false "queue a signal with data to a process";
    130 rt_sigsuspend           Signal  Partial     true  concat!("wait for a signal with a temporary mask; ", no_sigsys_in_mask!());
    131 sigaltstack             Signal  Emulated    false "set or query the alternate signal stack; set through the frame strata returns through (the kernel refuses changes while on the stack)";
    132 utime                   File    Passthrough false "set a path's access and modification times (seconds)";
    133 mknod                   File    Passthrough false "create a device node, FIFO or socket file";
    134 uselib                  File    Passthrough false enosys!("was: load an a.out shared library");
    135 personality             Process Passthrough false "set the execution domain (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ...)";
    136 ustat                   File    Passthrough false "file system statistics by device number (obsolete)";
    137 statfs                  File    Passthrough false "file system statistics by path";
    138 fstatfs                 Desc    Passthrough false "file system statistics by descriptor";
    139 sysfs                   Other   Passthrough false "file system type index and names (obsolete)";
    140 getpriority             Process Passthrough false "read a nice value";
    141 setpriority             Process Passthrough false "set a nice value";
    142 sched_setparam          Process Passthrough false "set a real-time scheduling priority";
    143 sched_getparam          Process Passthrough false "read a real-time scheduling priority";
    144 sched_setscheduler      Process Passthrough false "set a scheduling policy and priority";
    145 sched_getscheduler      Process Passthrough false "read a scheduling policy";
    146 sched_get_priority_max  Process Passthrough false "highest priority of a scheduling policy";
    147 sched_get_priority_min  Process Passthrough false "lowest priority of a scheduling policy";
    148 sched_rr_get_interval   Process Passthrough false "SCHED_RR time quantum of a process";
    149 mlock                   Memory  Passthrough false "lock a range's pages in RAM";
    150 munlock                 Memory  Passthrough false "unlock a range's pages";
    151 mlockall                Memory  Passthrough false "lock the whole address space in RAM";
    152 munlockall              Memory  Passthrough false "unlock the whole address space";
    153 vhangup                 Other   Passthrough false "hang up the controlling terminal";
    154 modify_ldt              Other   Passthrough false "read or write the local descriptor table";
    155 pivot_root              File    Passthrough false "change the root mount";
    156 _sysctl                 Other   Passthrough false enosys!("binary sysctl interface, removed in Linux 5.5");
    157 prctl                   Process Partial     false "process controls; PR_SET_SYSCALL_USER_DISPATCH is virtualized; before PR_SET_SECCOMP strata works out the program's /proc/self/exe name (as for seccomp); other options pass through";
    158 arch_prctl              Process Partial     false "x86-64 thread state (FS/GS base, CPUID faulting, ...); ARCH_SET_GS/ARCH_GET_GS are virtualized (strata keeps its per-thread state in GS base)";
    159 adjtimex                Time    Passthrough false "read or tune the kernel clock";
    160 setrlimit               Process Passthrough false "set a resource limit";
    161 chroot                  File    Partial     false "change the root directory; strata works out the program's /proc/self/exe name first (its path may not resolve under the new root)";
    162 sync                    Other   Passthrough true  "flush all file systems to storage";
    163 acct                    File    Passthrough false "turn process accounting on or off";
    164 settimeofday            Time    Passthrough false "set the wall-clock time";
    165 mount                   File    Passthrough true  "mount a file system (a network file system waits for its server)";
    166 umount2                 File    Passthrough true  "unmount a file system (flushing it first)";
    167 swapon                  File    Passthrough false "enable a swap area";
    168 swapoff                 File    Passthrough true  "disable a swap area, paging its contents back in";
    169 reboot                  Other   Passthrough false "reboot, halt or set Ctrl-Alt-Del behaviour";
    170 sethostname             Other   Passthrough false "set the host name (UTS namespace)";
    171 setdomainname           Other   Passthrough false "set the NIS domain name (UTS namespace)";
    172 iopl                    Other   Passthrough false "change the I/O privilege level";
    173 ioperm                  Other   Passthrough false "allow access to I/O ports";
    174 create_module           Other   Passthrough false enosys!("was: allocate a module (Linux 2.4)");
    175 init_module             Other   Passthrough true  "load a kernel module from memory (its init may wait on devices or firmware)";
    176 delete_module           Other   Passthrough false "unload a kernel module";
    177 get_kernel_syms         Other   Passthrough false enosys!("was: list exported kernel symbols (Linux 2.4)");
    178 query_module            Other   Passthrough false enosys!("was: query loaded modules (Linux 2.4)");
    179 quotactl                File    Passthrough false "manipulate disk quotas by block device path";
    180 nfsservctl              Other   Passthrough false enosys!("was: control the kernel NFS server, removed in Linux 3.1");
    181 getpmsg                 Other   Passthrough false enosys!("reserved for STREAMS getpmsg, never implemented");
    182 putpmsg                 Other   Passthrough false enosys!("reserved for STREAMS putpmsg, never implemented");
    183 afs_syscall             Other   Passthrough false enosys!("reserved for the Andrew File System, never implemented");
    184 tuxcall                 Other   Passthrough false enosys!("reserved for the TUX in-kernel web server, never merged");
    185 security                Other   Passthrough false enosys!("reserved for security modules, never used");
    186 gettid                  Process Passthrough false "thread ID";
    187 readahead               Desc    Passthrough false "start reading a file range into the page cache";
    188 setxattr                File    Passthrough false "set an extended attribute by path";
    189 lsetxattr               File    Passthrough false "set an extended attribute of a symlink itself";
    190 fsetxattr               Desc    Passthrough false "set an extended attribute by descriptor";
    191 getxattr                File    Passthrough false "read an extended attribute by path";
    192 lgetxattr               File    Passthrough false "read an extended attribute of a symlink itself";
    193 fgetxattr               Desc    Passthrough false "read an extended attribute by descriptor";
    194 listxattr               File    Passthrough false "list extended attribute names by path";
    195 llistxattr              File    Passthrough false "list extended attribute names of a symlink itself";
    196 flistxattr              Desc    Passthrough false "list extended attribute names by descriptor";
    197 removexattr             File    Passthrough false "remove an extended attribute by path";
    198 lremovexattr            File    Passthrough false "remove an extended attribute of a symlink itself";
    199 fremovexattr            Desc    Passthrough false "remove an extended attribute by descriptor";
    200 tkill                   Signal  Passthrough false "send a signal to a thread by ID alone (superseded by tgkill)";
    201 time                    Time    Passthrough false "wall-clock seconds (usually answered by the vDSO, without a syscall)";
    202 futex                   Ipc     Passthrough true  "wait on or wake a user-space lock word";
    203 sched_setaffinity       Process Passthrough false "set a thread's CPU affinity";
    204 sched_getaffinity       Process Passthrough false "read a thread's CPU affinity";
    205 set_thread_area         Process Passthrough false enosys!("i386 TLS descriptor call (x86-64 code uses arch_prctl)");
    206 io_setup                Desc    Passthrough false "create a Linux AIO context";
    207 io_destroy              Desc    Passthrough true  "destroy an AIO context, waiting for its outstanding requests";
    208 io_getevents            Desc    Passthrough true  "wait for AIO completions";
    209 io_submit               Desc    Passthrough true  "submit AIO requests (buffered and socket I/O runs synchronously)";
    210 io_cancel               Desc    Passthrough false "cancel an AIO request";
    211 get_thread_area         Process Passthrough false enosys!("i386 TLS descriptor query (x86-64 code uses arch_prctl)");
    212 lookup_dcookie          Other   Passthrough false enosys!("oprofile's dcookie lookup, removed in Linux 5.12");
    213 epoll_create            Desc    Passthrough false "create an epoll instance";
    214 epoll_ctl_old           Desc    Passthrough false enosys!("pre-release epoll_ctl");
    215 epoll_wait_old          Desc    Passthrough false enosys!("pre-release epoll_wait");
    216 remap_file_pages        Memory  Passthrough false "rearrange the pages of a shared file mapping (deprecated, emulated by the kernel)";
    217 getdents64              Desc    Passthrough false "read directory entries (struct linux_dirent64)";
    218 set_tid_address         Process Passthrough false "set the word cleared and futex-woken when the thread exits";
    219 restart_syscall         Signal  Passthrough true  "resume a sleep interrupted by a signal that ran no handler (issued by the kernel's restart path)";
    220 semtimedop              Ipc     Passthrough true  "operate on System V semaphores, with a timeout";
    221 fadvise64               Desc    Passthrough false "declare an access pattern for file data";
    222 timer_create            Time    Passthrough false "create a POSIX per-process timer";
    223 timer_settime           Time    Passthrough false "arm or disarm a POSIX timer";
    224 timer_gettime           Time    Passthrough false "time left on a POSIX timer";
    225 timer_getoverrun        Time    Passthrough false "overrun count of a POSIX timer";
    226 timer_delete            Time    Passthrough false "delete a POSIX timer";
    227 clock_settime           Time    Passthrough false "set a clock";
    228 clock_gettime           Time    Passthrough false "read a clock (usually answered by the vDSO, without a syscall)";
    229 clock_getres            Time    Passthrough false "resolution of a clock";
    230 clock_nanosleep         Time    Passthrough true  "sleep on a chosen clock, relative or until an absolute time";
    231 exit_group              Process Emulated    false "end every thread of the process; strata frees the caller's state first (a vfork or CLONE_VM child shares strata's pool with its parent)";
    232 epoll_wait              Desc    Passthrough true  "wait for events on an epoll instance";
    233 epoll_ctl               Desc    Passthrough false "add, change or remove an epoll watch";
    234 tgkill                  Signal  Passthrough false "send a signal to a thread of a given thread group";
    235 utimes                  File    Passthrough false "set a path's access and modification times (microseconds)";
    236 vserver                 Other   Passthrough false enosys!("reserved for Linux-VServer, never merged");
    237 mbind                   Memory  Passthrough false "set the NUMA policy of a memory range";
    238 set_mempolicy           Memory  Passthrough false "set the thread's default NUMA policy";
    239 get_mempolicy           Memory  Passthrough false "read a NUMA policy";
    240 mq_open                 Ipc     Passthrough false "open or create a POSIX message queue";
    241 mq_unlink               Ipc     Passthrough false "remove a POSIX message queue";
    242 mq_timedsend            Ipc     Passthrough true  "send to a POSIX message queue (waits while it is full)";
    243 mq_timedreceive         Ipc     Passthrough true  "receive from a POSIX message queue";
    244 mq_notify               Ipc     Passthrough false "ask to be notified when a POSIX message queue becomes non-empty";
    245 mq_getsetattr           Ipc     Passthrough false "get or set POSIX message queue attributes";
    246 kexec_load              Other   Passthrough false "load a new kernel to boot into, from memory";
    247 waitid                  Process Passthrough true  "wait for a child (or pidfd) to change state";
    248 add_key                 Other   Passthrough false "add a key to a kernel keyring";
    249 request_key             Other   Passthrough true  "find a key, possibly waiting for user space to construct it";
    250 keyctl                  Other   Passthrough true  "keyring control (some operations wait for key construction)";
    251 ioprio_set              Process Passthrough false "set an I/O scheduling class and priority";
    252 ioprio_get              Process Passthrough false "read an I/O scheduling class and priority";
    253 inotify_init            Desc    Passthrough false "create an inotify instance";
    254 inotify_add_watch       File    Passthrough false "watch a path for file-system events";
    255 inotify_rm_watch        Desc    Passthrough false "remove an inotify watch";
    256 migrate_pages           Memory  Passthrough false "move a process's pages between NUMA nodes";
    257 openat                  File    Partial     true  "open a path relative to a directory descriptor (waits on FIFOs, ttys and lease breaks); absolute /proc/self/environ, auxv and exe give the program's view";
    258 mkdirat                 File    Passthrough false "create a directory relative to a directory descriptor";
    259 mknodat                 File    Passthrough false "create a special file relative to a directory descriptor";
    260 fchownat                File    Passthrough false "change an owner relative to a directory descriptor";
    261 futimesat               File    Passthrough false "set timestamps relative to a directory descriptor (obsolete)";
    262 newfstatat              File    Passthrough false "file status relative to a directory descriptor";
    263 unlinkat                File    Passthrough false "remove a name or directory relative to a directory descriptor";
    264 renameat                File    Passthrough false "rename relative to directory descriptors";
    265 linkat                  File    Passthrough false "make a hard link relative to directory descriptors";
    266 symlinkat               File    Passthrough false "make a symbolic link relative to a directory descriptor";
    267 readlinkat              File    Partial     false concat!("read a symbolic link's target relative to a directory descriptor; ", exe_link!());
    268 fchmodat                File    Passthrough false "change mode bits relative to a directory descriptor";
    269 faccessat               File    Passthrough false "check permissions relative to a directory descriptor";
    270 pselect6                Desc    Partial     true  concat!("select with a timespec and a temporary signal mask; ", no_sigsys_in_mask!());
    271 ppoll                   Desc    Partial     true  concat!("poll with a timespec and a temporary signal mask; ", no_sigsys_in_mask!());
    272 unshare                 Process Passthrough false "move the caller into new namespaces or unshare its file table";
    273 set_robust_list         Process Passthrough false "register the thread's robust futex list";
    274 get_robust_list         Process Passthrough false "read a thread's robust futex list";
    275 splice                  Desc    Passthrough true  "move data between a pipe and another descriptor";
    276 tee                     Desc    Passthrough true  "duplicate data from one pipe into another";
    277 sync_file_range         Desc    Passthrough true  "start or wait for writeback of a file range";
    278 vmsplice                Desc    Passthrough true  "splice user memory into or out of a pipe";
    279 move_pages              Memory  Passthrough false "move individual pages to NUMA nodes, or query where they are";
    280 utimensat               File    Passthrough false "set timestamps (nanoseconds) relative to a directory descriptor";
    281 epoll_pwait             Desc    Partial     true  concat!("epoll_wait with a temporary signal mask; ", no_sigsys_in_mask!());
    282 signalfd                Signal  Partial     false concat!("create or update a descriptor that reads signals; ", no_sigsys_in_mask!());
    283 timerfd_create          Time    Passthrough false "create a timer descriptor";
    284 eventfd                 Desc    Passthrough false "create an event-counter descriptor";
    285 fallocate               Desc    Passthrough true  "allocate, punch or collapse space in a file";
    286 timerfd_settime         Time    Passthrough false "arm or disarm a timer descriptor";
    287 timerfd_gettime         Time    Passthrough false "time left on a timer descriptor";
    288 accept4                 Network Passthrough true  "accept a connection, with SOCK_NONBLOCK/SOCK_CLOEXEC";
    289 signalfd4               Signal  Partial     false concat!("signalfd with flags; ", no_sigsys_in_mask!());
    290 eventfd2                Desc    Passthrough false "create an event-counter descriptor, with flags";
    291 epoll_create1           Desc    Passthrough false "create an epoll instance, with flags";
    292 dup3                    Desc    Passthrough true  "duplicate a descriptor onto a given number with flags, closing what was there";
    293 pipe2                   Desc    Passthrough false "create a pipe, with flags";
    294 inotify_init1           Desc    Passthrough false "create an inotify instance, with flags";
    295 preadv                  Desc    Passthrough true  "scatter read at an offset";
    296 pwritev                 Desc    Passthrough true  "gather write at an offset";
    297 rt_tgsigqueueinfo       Signal  Passthrough false "queue a signal with data to a thread";
    298 perf_event_open         Desc    Passthrough false "open a performance-monitoring event";
    299 recvmmsg                Network Passthrough true  "receive several messages";
    300 fanotify_init           Desc    Passthrough false "create a fanotify group";
    301 fanotify_mark           File    Passthrough false "add, remove or change a fanotify mark";
    302 prlimit64               Process Passthrough false "read and set resource limits of any process";
    303 name_to_handle_at       File    Passthrough false "get a persistent handle for a path";
    304 open_by_handle_at       File    Passthrough true  "open a file by handle (waits as open does)";
    305 clock_adjtime           Time    Passthrough false "read or tune a clock";
    306 syncfs                  Desc    Passthrough true  "flush the file system holding a descriptor to storage";
    307 sendmmsg                Network Passthrough true  "send several messages";
    308 setns                   Process Passthrough false "join the namespaces a descriptor refers to";
    309 getcpu                  Process Passthrough false "CPU and NUMA node of the caller (usually answered by the vDSO, without a syscall)";
    310 process_vm_readv        Memory  Passthrough false "read another process's memory";
    311 process_vm_writev       Memory  Passthrough false "write another process's memory";
    312 kcmp                    Process Passthrough false "compare kernel resources of two processes";
    313 finit_module            Other   Passthrough true  "load a kernel module from a descriptor (its init may wait on devices or firmware)";
    314 sched_setattr           Process Passthrough false "set a scheduling policy and its attributes";
    315 sched_getattr           Process Passthrough false "read a scheduling policy and its attributes";
    316 renameat2               File    Passthrough false "rename with flags (RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT)";
    317 seccomp                 Process Partial     false "install a seccomp filter or mode; filters also apply to strata's own calls, as they should, so strata works out the program's /proc/self/exe name first (a filter could refuse the calls that find it); afterwards a SECCOMP_RET_TRAP on a call strata issues for the program reaches the program as its own trap, at its own site";
    318 getrandom               Other   Passthrough true  "random bytes (waits until the kernel's pool is initialized)";
    319 memfd_create            Desc    Passthrough false "create an anonymous memory-backed file";
    320 kexec_file_load         Other   Passthrough false "load a new kernel to boot into, from descriptors";
    321 bpf                     Other   Passthrough false "load and operate on eBPF programs and maps";
    322 execveat                Process Emulated    true  concat!("run a new program named relative to a directory descriptor; ", exec_by_strata!());
    323 userfaultfd             Desc    Passthrough false "create a descriptor that resolves page faults in user space";
    324 membarrier              Other   Passthrough false "issue memory barriers on the CPUs running other threads";
    325 mlock2                  Memory  Passthrough false "lock a range's pages in RAM, optionally on first fault";
    326 copy_file_range         Desc    Passthrough true  "copy a range between files in the kernel";
    327 preadv2                 Desc    Passthrough true  "scatter read at an offset, with RWF_* flags";
    328 pwritev2                Desc    Passthrough true  "gather write at an offset, with RWF_* flags";
    329 pkey_mprotect           Memory  Passthrough false "change page protections and protection key (not checked against strata's own memory)";
    330 pkey_alloc              Memory  Passthrough false "allocate a memory protection key";
    331 pkey_free               Memory  Passthrough false "free a memory protection key";
    332 statx                   File    Passthrough false "extended file status relative to a directory descriptor";
    333 io_pgetevents           Desc    Passthrough true  "wait for AIO completions with a temporary signal mask (the mask is passed as given: SIGSYS is not removed)";
    334 rseq                    Process Passthrough false "register the thread's restartable-sequence area";
    424 pidfd_send_signal       Signal  Passthrough false "send a signal through a process descriptor";
    425 io_uring_setup          Desc    Passthrough false "create an io_uring (operations run from the ring are not captured one by one)";
    426 io_uring_enter          Desc    Passthrough true  "submit to and wait on an io_uring";
    427 io_uring_register       Desc    Passthrough true  "register buffers, files or settings with an io_uring (some wait for the ring to go idle)";
    428 open_tree               File    Passthrough false "open or clone a mount tree";
    429 move_mount              File    Passthrough false "attach or move a mount";
    430 fsopen                  Desc    Passthrough false "start a file system context";
    431 fsconfig                Desc    Passthrough true  "configure a file system context (FSCONFIG_CMD_CREATE may wait for a server)";
    432 fsmount                 Desc    Passthrough false "turn a configured file system context into a detached mount";
    433 fspick                  File    Passthrough false "open the configuration context of an existing mount";
    434 pidfd_open              Process Passthrough false "get a descriptor for a process";
    435 clone3                  Process Emulated    true  concat!("create a thread or process from struct clone_args (CLONE_VFORK makes the parent wait); ", child_by_strata!());
    436 close_range             Desc    Passthrough true  "close or unshare a range of descriptors (a lingering socket waits for its peer)";
    437 openat2                 File    Passthrough true  "open a path with struct open_how and RESOLVE_* restrictions (waits as openat does)";
    438 pidfd_getfd             Process Passthrough false "copy a descriptor out of another process";
    439 faccessat2              File    Passthrough false "check permissions relative to a directory descriptor, with flags";
    440 process_madvise         Memory  Passthrough false "give memory advice for another process through a pidfd";
    441 epoll_pwait2            Desc    Partial     true  concat!("epoll_pwait with a timespec timeout; ", no_sigsys_in_mask!());
    442 mount_setattr           File    Passthrough false "change the properties of a mount tree";
    443 quotactl_fd             Desc    Passthrough false "manipulate disk quotas of the file system holding a descriptor";
    444 landlock_create_ruleset Desc    Passthrough false "create a Landlock ruleset";
    445 landlock_add_rule       Desc    Passthrough false "add a rule to a Landlock ruleset";
    446 landlock_restrict_self  Process Passthrough false "enforce a Landlock ruleset on the calling thread";
    447 memfd_secret            Memory  Passthrough false "create a descriptor for memory hidden from the kernel's direct map";
    448 process_mrelease        Memory  Passthrough false "reap the memory of a dying process";
    449 futex_waitv             Ipc     Passthrough true  "wait on several futexes at once";
    450 set_mempolicy_home_node Memory  Passthrough false "set the home NUMA node of a memory range";
    451 cachestat               Desc    Passthrough false "page cache statistics of a file range";
    452 fchmodat2               File    Passthrough false "change mode bits relative to a directory descriptor, with flags";
    453 map_shadow_stack        Memory  Passthrough false "allocate a CET shadow stack";
    454 futex_wake              Ipc     Passthrough false "wake futex waiters (futex2 interface)";
    455 futex_wait              Ipc     Passthrough true  "wait on a futex (futex2 interface)";
    456 futex_requeue           Ipc     Passthrough false "move futex waiters to another futex (futex2 interface)";
    457 statmount               File    Passthrough false "information about a mount, by mount ID";
    458 listmount               File    Passthrough false "list the mounts under a mount, by mount ID";
    459 lsm_get_self_attr       Process Passthrough false "read the caller's security module attributes";
    460 lsm_set_self_attr       Process Passthrough false "set one of the caller's security module attributes";
    461 lsm_list_modules        Other   Passthrough false "list the active Linux security modules";
}
