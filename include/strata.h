/* The strata ABI, for extensions written in C.
 *
 * Generated from crates/abi (lib.rs, ops.rs, render.rs); do not edit by hand.
 * Regenerate with:
 *   cargo run -q -p strata-abi --bin gen-abi -- header > include/strata.h
 * docs/abi.md explains every structure, op and rule. An extension object
 * includes this header and nothing from libc, and exports:
 *
 *   uint32_t strata_ext_abi_version = STRATA_ABI_VERSION;
 *   int32_t strata_ext_init(const strata_host *host, const uint8_t *args,
 *                           size_t args_len, strata_ext_desc *out,
 *                           uint8_t *err, size_t err_len);
 */
#ifndef STRATA_H
#define STRATA_H

#include <stddef.h>
#include <stdint.h>

#define STRATA_ABI_VERSION_MAJOR 1u
#define STRATA_ABI_VERSION_MINOR 1u
#define STRATA_ABI_VERSION ((STRATA_ABI_VERSION_MAJOR << 16) | STRATA_ABI_VERSION_MINOR)

/* Class bits (strata_call.class). */
#define STRATA_CLASS_FILE 0x0001u
#define STRATA_CLASS_DESC 0x0002u
#define STRATA_CLASS_NETWORK 0x0004u
#define STRATA_CLASS_PROCESS 0x0008u
#define STRATA_CLASS_MEMORY 0x0010u
#define STRATA_CLASS_SIGNAL 0x0020u
#define STRATA_CLASS_IPC 0x0040u
#define STRATA_CLASS_TIME 0x0080u
#define STRATA_CLASS_OTHER 0x0100u

/* Call flags (strata_call.flags). */
/* The call was issued by an extension (downwards), not by the program. */
#define STRATA_CALL_FROM_EXTENSION 0x1u
/* An extension above changed the arguments on the way down. */
#define STRATA_CALL_CHANGED 0x2u

/* "No such argument" in a strata_path_slot. */
#define STRATA_NO_ARG 0xff
/* Path operands a call can have. */
#define STRATA_MAX_PATHS 2
/* The largest Linux call number an interest set can name (exclusive). */
#define STRATA_MAX_NR 512
/* What a `before` hook returns to pass the call on. */
#define STRATA_CONTINUE INT64_MIN

/* The ops (strata_call.op). Numbers are stable within a major version. */
enum strata_op {
    /* Typed pass-through */
    /* A Linux call the ABI does not model. It carries the whole call
     * (number and six arguments), so an extension can still observe,
     * change, serve or refuse it. Linux: (every call not listed below) */
    STRATA_OP_PASSTHROUGH = 0,

    /* Streams (named by path or URI, used through handles) */
    /* Opens the stream named by path (relative to a directory handle) and
     * returns a handle. Path operand 0. Linux: open creat openat openat2. */
    STRATA_OP_STREAM_OPEN = 1,
    /* Releases handles. Linux: close close_range. */
    STRATA_OP_STREAM_CLOSE = 2,
    /* Reads from the handle's current position. Linux: read readv. */
    STRATA_OP_STREAM_READ = 3,
    /* Writes at the handle's current position. Linux: write writev. */
    STRATA_OP_STREAM_WRITE = 4,
    /* Positional read. Linux: pread64 preadv preadv2. */
    STRATA_OP_STREAM_READ_AT = 5,
    /* Positional write. Linux: pwrite64 pwritev pwritev2. */
    STRATA_OP_STREAM_WRITE_AT = 6,
    /* Moves the handle's position. Linux: lseek. */
    STRATA_OP_STREAM_SEEK = 7,
    /* Maps a stream into memory (mmap of a file descriptor). Linux: mmap*. */
    STRATA_OP_STREAM_MAP = 8,
    /* Sets the length of a stream, by path (operand 0) or by handle. Linux:
     * truncate ftruncate fallocate. */
    STRATA_OP_STREAM_SET_LENGTH = 9,
    /* Flushes written data to stable storage. Linux: fsync fdatasync sync
     * syncfs sync_file_range msync. */
    STRATA_OP_STREAM_FLUSH = 10,
    /* Deletes the name of a stream or an empty directory. Path operand 0.
     * Linux: unlink unlinkat rmdir. */
    STRATA_OP_STREAM_DELETE = 11,
    /* Renames: path operand 0 becomes path operand 1. Linux: rename
     * renameat renameat2. */
    STRATA_OP_STREAM_RENAME = 12,
    /* Makes a new name (operand 1 for link, the only operand for symlink,
     * whose target is data, not a path to resolve). Linux: link linkat
     * symlink symlinkat. */
    STRATA_OP_STREAM_LINK = 13,
    /* Creates a directory or a special file. Path operand 0. Linux: mkdir
     * mkdirat mknod mknodat. */
    STRATA_OP_STREAM_CREATE_DIR = 14,
    /* Reads attributes (or the target of a symbolic link) by path. Path
     * operand 0. Linux: stat lstat newfstatat statx access faccessat
     * faccessat2 statfs getxattr lgetxattr listxattr llistxattr readlink
     * readlinkat. */
    STRATA_OP_STREAM_ATTR_BY_NAME = 15,
    /* Reads attributes by handle (also the AT_EMPTY_PATH forms). Linux:
     * fstat fstatfs fgetxattr flistxattr newfstatat* statx*. */
    STRATA_OP_STREAM_ATTR_BY_HANDLE = 16,
    /* Changes attributes (mode, owner, times, extended attributes), by path
     * (operand 0) or by handle. Linux: chmod fchmod fchmodat fchmodat2
     * chown fchown lchown fchownat utime utimes futimesat utimensat
     * setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr. */
    STRATA_OP_STREAM_SET_ATTR = 17,
    /* Lists the children of a directory handle. Linux: getdents getdents64. */
    STRATA_OP_STREAM_ENUMERATE = 18,
    /* Changes the directory relative paths start from. Path operand 0
     * (chdir, chroot). Linux: chdir fchdir chroot. */
    STRATA_OP_STREAM_CHANGE_DIR = 19,
    /* Names the current directory. Linux: getcwd. */
    STRATA_OP_STREAM_GET_DIR = 20,
    /* Duplicates a handle. Linux: dup dup2 dup3. */
    STRATA_OP_STREAM_DUP = 21,
    /* Device- or handle-specific control. Linux: ioctl fcntl flock. */
    STRATA_OP_STREAM_CONTROL = 22,
    /* Creates a connected pair of handles. Linux: pipe pipe2 socketpair. */
    STRATA_OP_STREAM_PIPE = 23,
    /* Watches a path for changes. Path operand 0. Linux: inotify_add_watch
     * fanotify_mark. */
    STRATA_OP_STREAM_WATCH = 24,
    /* Creates an unnamed network stream. Linux: socket. */
    STRATA_OP_STREAM_SOCKET = 25,
    /* Connects to a peer (a socket address; for AF_UNIX a path). Linux:
     * connect. */
    STRATA_OP_STREAM_CONNECT = 26,
    /* Names a network stream / starts listening. Linux: bind listen. */
    STRATA_OP_STREAM_BIND = 27,
    /* Accepts a connection. Linux: accept accept4. */
    STRATA_OP_STREAM_ACCEPT = 28,
    /* Sends a message (optionally to an address). Linux: sendto sendmsg
     * sendmmsg. */
    STRATA_OP_STREAM_SEND = 29,
    /* Receives a message. Linux: recvfrom recvmsg recvmmsg. */
    STRATA_OP_STREAM_RECV = 30,
    /* Network stream attributes. Linux: getsockopt setsockopt getsockname
     * getpeername shutdown. */
    STRATA_OP_STREAM_SOCKOPT = 31,
    /* Copies between handles inside the kernel. Linux: sendfile
     * copy_file_range splice tee. */
    STRATA_OP_STREAM_COPY = 32,

    /* Virtual memory */
    /* Allocates virtual memory (anonymous mappings, the heap break). Linux:
     * mmap* brk. */
    STRATA_OP_MEM_ALLOC = 40,
    /* Frees virtual memory. Linux: munmap. */
    STRATA_OP_MEM_FREE = 41,
    /* Changes the protection of virtual memory. Linux: mprotect
     * pkey_mprotect. */
    STRATA_OP_MEM_PROTECT = 42,
    /* Moves or resizes a mapping. Linux: mremap. */
    STRATA_OP_MEM_REMAP = 43,
    /* Advice and residency. Linux: madvise mlock mlock2 munlock mlockall
     * munlockall mincore. */
    STRATA_OP_MEM_ADVISE = 44,

    /* Threads and processes */
    /* Creates a thread (CLONE_THREAD). Linux: clone* clone3*. */
    STRATA_OP_THREAD_CREATE = 50,
    /* Ends the calling thread. Linux: exit. */
    STRATA_OP_THREAD_EXIT = 51,
    /* Creates a process. Linux: fork vfork clone* clone3*. */
    STRATA_OP_PROCESS_CREATE = 52,
    /* Ends the calling process. Linux: exit_group. */
    STRATA_OP_PROCESS_EXIT = 53,
    /* Waits for a child process. Linux: wait4 waitid. */
    STRATA_OP_PROCESS_WAIT = 54,
    /* Replaces the process image with the program named by path operand 0.
     * Linux: execve execveat. */
    STRATA_OP_PROCESS_EXEC = 55,
    /* Identity of the caller. Linux: getpid gettid getppid getuid geteuid
     * getgid getegid getpgrp getpgid getsid getgroups getresuid getresgid
     * uname. */
    STRATA_OP_PROCESS_INFO = 56,

    /* Waiting and synchronisation */
    /* Waits on a memory word. Linux: futex* futex_wait futex_waitv. */
    STRATA_OP_SYNC_WAIT = 60,
    /* Wakes waiters on a memory word. Linux: futex* futex_wake. */
    STRATA_OP_SYNC_WAKE = 61,
    /* Waits until one of several handles is ready. Linux: poll ppoll select
     * pselect6 epoll_wait epoll_pwait epoll_pwait2. */
    STRATA_OP_WAIT_ANY = 62,

    /* Time */
    /* Reads a clock. Linux: clock_gettime gettimeofday time clock_getres. */
    STRATA_OP_TIME_GET = 70,
    /* Sleeps. Linux: nanosleep clock_nanosleep. */
    STRATA_OP_TIME_SLEEP = 71,

    /* Random bits */
    /* Fills a buffer with random bits. Linux: getrandom. */
    STRATA_OP_RANDOM_BITS = 80,

    /* Signals and exceptions */
    /* Sets what a signal does. Linux: rt_sigaction. */
    STRATA_OP_SIGNAL_ACTION = 90,
    /* Blocks and unblocks signals; reads the pending set. Linux:
     * rt_sigprocmask rt_sigpending. */
    STRATA_OP_SIGNAL_MASK = 91,
    /* Sends a signal. Linux: kill tkill tgkill rt_sigqueueinfo
     * rt_tgsigqueueinfo pidfd_send_signal. */
    STRATA_OP_SIGNAL_SEND = 92,
    /* Waits for a signal. Linux: pause rt_sigsuspend rt_sigtimedwait. */
    STRATA_OP_SIGNAL_WAIT = 93,
    /* Returns from a signal handler. Linux: rt_sigreturn. */
    STRATA_OP_SIGNAL_RETURN = 94,
    /* Sets the signal stack. Linux: sigaltstack. */
    STRATA_OP_SIGNAL_STACK = 95,
};

typedef struct strata_path_slot strata_path_slot;
typedef struct strata_call strata_call;
typedef struct strata_interest strata_interest;
typedef struct strata_below strata_below;
typedef struct strata_host strata_host;
typedef struct strata_ext_desc strata_ext_desc;

/* Where one path operand of a call is. */
struct strata_path_slot {
    /* Index of the argument register holding the pointer to the
     * NUL-terminated path. */
    uint8_t arg;
    /* Index of the argument holding the directory handle a relative path
     * starts from, or `STRATA_NO_ARG` (the current directory). */
    uint8_t dirfd_arg;
    /* 1 when the kernel follows a symbolic link in the last component. */
    uint8_t follow;
    /* 1 when the call may create the last component (or its link). */
    uint8_t create;
};

/* One call on the way down the stack. `nr` and `args` are the Linux call
 * (the personality's origin); `op`, `class` and `paths` are the ABI view of
 * it. Layers may change `args`; the bottom layer issues `nr` with `args`. */
struct strata_call {
    /* `STRATA_ABI_VERSION` of the strata that made this call. */
    uint32_t abi_version;
    /* `sizeof(strata_call)` in the strata that made it. */
    uint32_t size;
    /* The op (`enum strata_op`). */
    uint16_t op;
    /* `STRATA_CLASS_*` bits. */
    uint16_t class;
    /* The Linux call number. */
    uint32_t nr;
    /* The six argument registers (rdi, rsi, rdx, r10, r8, r9). */
    uint64_t args[6];
    /* Process id of the caller (as the program sees it). */
    uint32_t pid;
    /* Thread id of the caller (as the program sees it). */
    uint32_t tid;
    /* `STRATA_CALL_*` bits. */
    uint32_t flags;
    /* How many of `paths` are used. */
    uint32_t npaths;
    /* Where the path operands are. */
    strata_path_slot paths[STRATA_MAX_PATHS];
};

/* A set of Linux call numbers below `STRATA_MAX_NR`: the calls a layer
 * interposes on. */
struct strata_interest {
    /* Bit `nr % 64` of word `nr / 64` is set for call number `nr`
     * (`strata_interest_add`). */
    uint64_t bits[STRATA_MAX_NR / 64];
};

/* The layer below, as an extension sees it: one function that carries a
 * call further down (to the next interested layer, or to the kernel). */
struct strata_below {
    /* Passes `call` down; returns the result (a value, or `-errno`). */
    int64_t (*call)(const strata_below *below, strata_call *call);
    /* Opaque to extensions. */
    const void *ctx;
    /* Index of the layer this `strata_below` belongs to (0 = top). */
    uint32_t layer;
    /* Reserved. */
    uint32_t _reserved;
};

/* What strata offers every extension, whatever its position in the stack. */
struct strata_host {
    /* `STRATA_ABI_VERSION` of the running strata. */
    uint32_t abi_version;
    /* `sizeof(strata_host)` in the running strata. */
    uint32_t size;
    /* Reads program memory at `addr`: bytes read, or `-EFAULT`. */
    int64_t (*read_mem)(uint64_t addr, uint8_t *buf, size_t len);
    /* Writes program memory at `addr`: bytes written, or `-EFAULT`. */
    int64_t (*write_mem)(uint64_t addr, const uint8_t *buf, size_t len);
    /* Appends one record (a whole line) to the session's output channel
     * (`channel` 0: the trace channel, drained by the launcher to its
     * destination), or writes it to strata's standard error (`channel` 1). */
    void (*emit)(uint32_t channel, const uint8_t *buf, size_t len);
    /* Issues a Linux call (six arguments at `args`) directly to the kernel
     * from strata's text, bypassing every layer: for an extension's private
     * needs, e.g. reading its own configuration files. Calls on the
     * program's behalf go to `strata_below` instead. */
    int64_t (*raw_syscall)(uint64_t nr, const uint64_t *args);
    /* Nonzero once the session has had more than one thread or process. */
    uint32_t (*multi_task)(void);
    /* The extension cannot go on (a panic, a broken invariant): strata
     * prints `msg` with the extension's name and the call it was handling,
     * and stops the program (fail closed). Does not return. */
    void (*fail)(const uint8_t *msg, size_t len); /* does not return */
};

/* What an extension provides for the layer above, filled by its
 * `strata_ext_init`. */
struct strata_ext_desc {
    /* `STRATA_ABI_VERSION` the extension was built for. */
    uint32_t abi_version;
    /* `sizeof(strata_ext_desc)` in the extension. */
    uint32_t size;
    /* NUL-terminated name, for messages. */
    const uint8_t *name;
    /* Passed back to every function below. */
    void *state;
    /* The calls this layer wants to see; all others skip it. */
    strata_interest interest;
    /* Handles one call: pass it on with `below->call(below, call)`, change
     * it, serve it or fail it. Returns the result for the layer above. */
    int64_t (*call)(void *state, strata_call *call, const strata_below *below);
    /* Optional (may be NULL). The calling process is about to replace its
     * image (execve or execveat passed every check and will not return);
     * `call` is that call. */
    void (*exec_commit)(void *state, const strata_call *call);
    /* Optional. A new process (`thread` = 0) or thread (`thread` = 1) `tid`
     * exists; called in the child as it starts. */
    void (*task_start)(void *state, uint32_t tid, uint32_t thread);
    /* Optional. The calling process is exiting with a wait status
     * (exit_group, or the last thread's exit). */
    void (*exit)(void *state, int32_t status);
    /* Optional. Signal upcall: strata is about to deliver signal `sig` to a
     * program handler (currently: the signals strata itself delivers, e.g.
     * a virtual SIGSYS). Return 0 to deliver, 1 to suppress it. */
    int32_t (*signal)(void *state, int32_t sig, const uint8_t *info);
    /* (1.1) The hook form of a layer, used when `call` is NULL: sees the
     * call on its way down; returns `STRATA_CONTINUE` to pass it on
     * unchanged, or a result to serve or fail it (the layers below and the
     * kernel then never see it). It may leave a word in `*cookie` (zero at
     * first) for its `after`. For layers that do not change a call's
     * arguments: strata runs hook layers in a loop around the call instead
     * of nesting them, which costs less where every return after a system
     * call mispredicts. Optional. */
    int64_t (*before)(void *state, const strata_call *call, uint64_t *cookie);
    /* (1.1) Sees the result `ret` of a call this layer's `before` passed on
     * (or of every call, without `before`), on its way up, with the cookie
     * `before` left; returns the result for the layer above. Optional. */
    int64_t (*after)(void *state, const strata_call *call, int64_t ret, uint64_t cookie);
};

/* Signature of an extension object's `strata_ext_init`: fill `out` from
 * `args` (the text after `NAME:` on the command line, or the manifest's
 * parameters as `key=value` text; not NUL-terminated) and return 0, or
 * write a NUL-terminated message of at most `err_len` bytes into `err` and
 * return nonzero. */
typedef int32_t (*strata_ext_init_fn)(const strata_host *host,
                                      const uint8_t *args, size_t args_len,
                                      strata_ext_desc *out,
                                      uint8_t *err, size_t err_len);

/* The layout is x86-64 Linux's (LP64), the one strata is built with. */
_Static_assert(sizeof(strata_path_slot) == 4 && _Alignof(strata_path_slot) == 1, "strata_path_slot: not the layout strata uses");
_Static_assert(sizeof(strata_call) == 88 && _Alignof(strata_call) == 8, "strata_call: not the layout strata uses");
_Static_assert(sizeof(strata_interest) == 64 && _Alignof(strata_interest) == 8, "strata_interest: not the layout strata uses");
_Static_assert(sizeof(strata_below) == 24 && _Alignof(strata_below) == 8, "strata_below: not the layout strata uses");
_Static_assert(sizeof(strata_host) == 56 && _Alignof(strata_host) == 8, "strata_host: not the layout strata uses");
_Static_assert(sizeof(strata_ext_desc) == 144 && _Alignof(strata_ext_desc) == 8, "strata_ext_desc: not the layout strata uses");

/* Adds Linux call number nr to an interest set (numbers from STRATA_MAX_NR
 * up are ignored). */
static inline void strata_interest_add(strata_interest *set, uint32_t nr)
{
    if (nr < STRATA_MAX_NR)
        set->bits[nr / 64] |= (uint64_t)1 << (nr % 64);
}

/* Whether Linux call number nr is in an interest set. */
static inline int strata_interest_has(const strata_interest *set, uint32_t nr)
{
    return nr < STRATA_MAX_NR && ((set->bits[nr / 64] >> (nr % 64)) & 1) != 0;
}

#endif /* STRATA_H */
