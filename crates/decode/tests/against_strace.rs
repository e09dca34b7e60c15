//! strata-decode against the real strace, on the same calls.
//!
//! A C program (below) makes about 380 system calls with raw `syscall`
//! instructions. Every pointer argument points into one static arena, and
//! for each call the program appends a record to a log: the call number,
//! the six arguments, the raw result, and copies of the arena as it was
//! before and after the call. The program runs under
//! `strace -f -o FILE -s 32 -e trace=...`; the test then formats every
//! record with strata-decode (a `Memory` that reads an arena copy) and
//! compares it, exactly (apart from strace's padding before ` = `), with the
//! line strace printed for the same call, three ways:
//!
//! - in two halves, as the trace extension can: the entry half from the
//!   memory before the call, the rest (with an `entry_state` taken before
//!   the call) from the memory after it;
//! - where strace split the line (another process's output came between),
//!   each half against strace's `<unfinished ...>` and `resumed` lines;
//! - as one line formatted after the call, for every call whose inputs are
//!   still there then (all but execve, select, pselect6 and ppoll).
//!
//! So the arguments, the results and the memory are real, and so is the
//! expected output. Calls whose decoding needs memory outside the arena are
//! not made. The log is written with pwrite64, which is not traced.
//!
//! The test is skipped, with the reason printed, only when strace is not
//! installed (or there is no C compiler to build the program, or the
//! machine is not x86-64).

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use strata_decode::{
    entry_state, format_call, format_call_with, format_result_with, format_resumed, inputs_change, Memory, Options,
};

/// The calls strace traces; every call the program logs is one of them.
const TRACE: &str = "openat,read,write,close,fstat,newfstatat,statx,mmap,mprotect,munmap,brk,pipe2,dup2,fcntl,\
                     ioctl,poll,socket,socketpair,connect,bind,getsockname,setsockopt,getsockopt,sendto,recvfrom,\
                     clone,wait4,execve,rt_sigaction,rt_sigprocmask,nanosleep,clock_nanosleep,clock_gettime,\
                     getrandom,prlimit64,uname,getcwd,lseek,pread64,readv,writev,access,faccessat2,umask,\
                     getdents64,readlink,mkdirat,unlinkat,futex,kill,arch_prctl,sched_getaffinity,getuid,\
                     sysinfo,dup3,chdir,fchmod,ftruncate,set_robust_list,madvise,mremap,sendmsg,recvmsg,\
                     exit_group,fsync,fdatasync,fallocate,fadvise64,flock,sync_file_range,link,rename,\
                     symlink,linkat,renameat2,renameat,chmod,fchmodat,chown,lchown,fchown,fchownat,utimensat,utimes,\
                     truncate,mknod,mknodat,statfs,fstatfs,setxattr,getxattr,lgetxattr,fgetxattr,listxattr,\
                     flistxattr,removexattr,readlinkat,symlinkat,unlink,rmdir,getdents,memfd_create,sendfile,\
                     copy_file_range,readahead,close_range,epoll_create1,epoll_create,epoll_ctl,epoll_wait,\
                     epoll_pwait,eventfd2,timerfd_create,timerfd_settime,timerfd_gettime,signalfd4,inotify_init1,\
                     inotify_add_watch,inotify_rm_watch,getppid,geteuid,getgid,getegid,getpgrp,getpgid,getsid,\
                     getresuid,getresgid,getgroups,getpriority,sched_getscheduler,sched_getparam,\
                     sched_get_priority_max,sched_yield,getcpu,getrusage,times,personality,getrlimit,alarm,\
                     membarrier,pidfd_open,get_robust_list,prctl,rt_sigqueueinfo,rt_sigpending,rt_sigtimedwait,\
                     sigaltstack,tgkill,tkill,setitimer,getitimer,timer_create,timer_settime,timer_gettime,\
                     timer_getoverrun,timer_delete,gettimeofday,time,clock_getres,mincore,msync,mlock,munlock,\
                     mlock2,listen,accept4,getpeername,shutdown,ppoll,sendmmsg,recvmmsg,capget,capset,shmget,\
                     shmat,shmdt,semget,msgget,syslog,ioprio_get,ioprio_set,seccomp,process_vm_readv,kcmp,\
                     pidfd_send_signal,process_mrelease,sched_rr_get_interval,vmsplice,fsopen,open_tree,\
                     memfd_secret,userfaultfd,fanotify_init,io_setup,io_destroy,mq_timedsend,mq_timedreceive,\
                     mq_notify,delete_module,finit_module,ioperm,remap_file_pages,select,pselect6";

const PROGRAM: &str = r##"
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <asm/prctl.h>
#include <linux/capability.h>
#include <linux/prctl.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/sysmacros.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/xattr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/membarrier.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/sem.h>
#include <sys/msg.h>
#include <linux/ioprio.h>
#include <linux/seccomp.h>
#include <linux/kcmp.h>
#include <linux/mount.h>
#include <sys/fanotify.h>
#include <mqueue.h>
#include <linux/aio_abi.h>

#define ARENA (1 << 16)
static unsigned char arena[ARENA] __attribute__((aligned(4096)));
static unsigned long used;
static long logoff;

static long raw(long n, long a, long b, long c, long d, long e, long f) {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

/* The arena as it was before the call being made. */
static unsigned char before[ARENA];
static void snapshot(void) { memcpy(before, arena, used); }

/* Logs a call: nr, args, ret, arena address and size, the arena before
   and after the call. */
static void logrec(long n, long a, long b, long c, long d, long e, long f, long ret) {
    uint64_t h[11] = {0x5354524154414c47ull, n, a, b, c, d, e, f, ret, (uint64_t)arena, used};
    raw(SYS_pwrite64, 1000, (long)h, sizeof h, logoff, 0, 0);
    logoff += sizeof h;
    raw(SYS_pwrite64, 1000, (long)before, used, logoff, 0, 0);
    logoff += used;
    raw(SYS_pwrite64, 1000, (long)arena, used, logoff, 0, 0);
    logoff += used;
}

/* Makes the call and logs it. */
static long sc(long n, long a, long b, long c, long d, long e, long f) {
    snapshot();
    long ret = raw(n, a, b, c, d, e, f);
    logrec(n, a, b, c, d, e, f, ret);
    return ret;
}

/* clone(SIGCHLD): the child runs `fn` (its calls are not logged) and exits 7. */
static long fork_child(void (*fn)(void)) {
    snapshot();
    long ret = raw(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
    if (ret == 0) {
        if (fn)
            fn();
        raw(SYS_exit_group, 7, 0, 0, 0, 0, 0);
    }
    logrec(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0, ret);
    return ret;
}

/* The child that makes its parent's read wait: strace splits that line. */
static int late_fd;
static void late_writer(void) {
    struct timespec t = {0, 100000000};
    raw(SYS_nanosleep, (long)&t, 0, 0, 0, 0, 0);
    raw(SYS_write, late_fd, (long)"late", 4, 0, 0, 0);
}
#define C0(n) sc(n, 0, 0, 0, 0, 0, 0)
#define C1(n, a) sc(n, (long)(a), 0, 0, 0, 0, 0)
#define C2(n, a, b) sc(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define C3(n, a, b, c) sc(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define C4(n, a, b, c, d) sc(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define C5(n, a, b, c, d, e) sc(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)
#define C6(n, a, b, c, d, e, f) sc(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

static void *A(unsigned long n) {
    void *p = arena + used;
    memset(p, 0, n);
    used = (used + n + 15) & ~15ul;
    return p;
}
static char *S(const char *s) {
    unsigned long n = strlen(s) + 1;
    char *p = A(n);
    memcpy(p, s, n);
    return p;
}

static char *B(const char *s, unsigned long n) {
    char *p = A(n);
    memcpy(p, s, n);
    return p;
}

static char *P(const char *dir, const char *name) {
    char *p = A(strlen(dir) + strlen(name) + 2);
    strcpy(p, dir);
    strcat(p, "/");
    strcat(p, name);
    return p;
}

static void handler(int s) { (void)s; }

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int lfd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (lfd < 0 || dup2(lfd, 1000) != 1000) return 3;
    const char *tmp = argv[2];

    /* marker: everything before this is the C runtime's */
    C4(SYS_faccessat2, AT_FDCWD, S("/strata-decode-test/start"), F_OK, 0);

    /* files */
    char *buf = A(4096);
    long fd = C4(SYS_openat, AT_FDCWD, S("/etc/passwd"), O_RDONLY | O_CLOEXEC, 0);
    C3(SYS_read, fd, buf, 20);
    C3(SYS_read, fd, buf, 4096);
    C3(SYS_read, fd, buf, 4096);
    C3(SYS_lseek, fd, 0, SEEK_SET);
    C3(SYS_lseek, fd, 5, SEEK_CUR);
    C3(SYS_lseek, fd, -3, SEEK_END);
    C4(SYS_pread64, fd, buf, 10, 3);
    void *st = A(144);
    C2(SYS_fstat, fd, st);
    C4(SYS_newfstatat, fd, S(""), st, AT_EMPTY_PATH);
    C4(SYS_newfstatat, AT_FDCWD, S("/etc/passwd"), st, 0);
    C4(SYS_newfstatat, AT_FDCWD, S("/dev/null"), st, AT_SYMLINK_NOFOLLOW);
    C4(SYS_newfstatat, AT_FDCWD, S("/nonexistent/x"), st, 0);
    C4(SYS_newfstatat, AT_FDCWD, S("/tmp"), st, 0);
    void *stx = A(256);
    C5(SYS_statx, AT_FDCWD, S("/etc/passwd"), AT_STATX_SYNC_AS_STAT, 0x7ff, stx);
    C5(SYS_statx, AT_FDCWD, S("/etc"), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, 0xfff, stx);
    C1(SYS_close, fd);
    C1(SYS_close, 999);
    C4(SYS_openat, AT_FDCWD, S("/nonexistent/file"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    C4(SYS_openat, AT_FDCWD, S(tmp), O_RDONLY | O_DIRECTORY | O_NONBLOCK, 0);
    long tfd = C4(SYS_openat, AT_FDCWD, S(tmp), O_RDWR | O_TMPFILE, 0600);
    if (tfd >= 0) {
        C2(SYS_fchmod, tfd, 0640);
        C2(SYS_ftruncate, tfd, 12345);
        C2(SYS_fstat, tfd, st);
        C1(SYS_close, tfd);
    }
    C2(SYS_access, S("/etc/passwd"), R_OK);
    C2(SYS_access, S("/nonexistent"), F_OK);
    C2(SYS_access, S("/etc/passwd"), R_OK | W_OK | X_OK);
    C4(SYS_faccessat2, AT_FDCWD, S("/etc"), X_OK, AT_EACCESS);
    C4(SYS_faccessat2, AT_FDCWD, S("/etc"), R_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW);
    C1(SYS_umask, 022);
    C1(SYS_umask, 077);
    C1(SYS_umask, 022);
    char *cwd = A(256);
    C2(SYS_getcwd, cwd, 256);
    C2(SYS_getcwd, cwd, 1);
    char *lnk = A(256);
    C3(SYS_readlink, S("/proc/self/exe"), lnk, 256);
    C3(SYS_readlink, S("/proc/self/exe"), lnk, 4);
    C3(SYS_readlink, S("/etc/passwd"), lnk, 256);
    char *dir = A(strlen(tmp) + 16);
    strcpy(dir, tmp);
    strcat(dir, "/d");
    C3(SYS_mkdirat, AT_FDCWD, dir, 0755);
    C3(SYS_mkdirat, AT_FDCWD, dir, 0700);
    long dfd = C4(SYS_openat, AT_FDCWD, dir, O_RDONLY | O_DIRECTORY, 0);
    void *dents = A(512);
    C3(SYS_getdents64, dfd, dents, 512);
    C3(SYS_getdents64, dfd, dents, 512);
    C1(SYS_close, dfd);
    C3(SYS_unlinkat, AT_FDCWD, dir, AT_REMOVEDIR);
    C3(SYS_unlinkat, AT_FDCWD, dir, 0);
    C1(SYS_chdir, S("/"));
    C1(SYS_chdir, S(tmp));

    /* pipes, descriptors, fcntl, ioctl, poll */
    int *fds = A(8);
    C2(SYS_pipe2, fds, O_CLOEXEC);
    C3(SYS_write, fds[1], B("hello\n\t\"x\\\001\0012\377 end", 17), 17);
    C3(SYS_write, fds[1], S("0123456789abcdefghijklmnopqrstuvwxyz"), 36);
    C3(SYS_read, fds[0], buf, 64);
    char *b1 = A(8), *b2 = A(8);
    struct iovec *iov = A(2 * sizeof *iov);
    memcpy(b1, "ab", 2); memcpy(b2, "cde", 3);
    iov[0].iov_base = b1; iov[0].iov_len = 2;
    iov[1].iov_base = b2; iov[1].iov_len = 3;
    C3(SYS_writev, fds[1], iov, 2);
    iov[1].iov_len = 8;
    C3(SYS_readv, fds[0], iov, 2);
    struct pollfd *pfd = A(2 * sizeof *pfd);
    pfd[0].fd = fds[0]; pfd[0].events = POLLIN;
    pfd[1].fd = fds[1]; pfd[1].events = POLLOUT | POLLERR;
    C3(SYS_poll, pfd, 2, 0);
    C3(SYS_poll, pfd, 1, 0);
    C2(SYS_dup2, fds[0], 100);
    C3(SYS_dup3, fds[1], 101, O_CLOEXEC);
    C2(SYS_fcntl, 100, F_GETFD);
    C3(SYS_fcntl, 100, F_SETFD, FD_CLOEXEC);
    C2(SYS_fcntl, 100, F_GETFD);
    C2(SYS_fcntl, 100, F_GETFL);
    C2(SYS_fcntl, 101, F_GETFL);
    C3(SYS_fcntl, 101, F_SETFL, O_NONBLOCK);
    C2(SYS_fcntl, 101, F_GETFL);
    C3(SYS_fcntl, 100, F_DUPFD_CLOEXEC, 200);
    C2(SYS_fcntl, 999, F_GETFL);
    void *tio = A(64);
    C3(SYS_ioctl, fds[0], TCGETS, tio);
    int *cnt = A(4);
    C3(SYS_write, fds[1], S("xyz"), 3);
    C3(SYS_ioctl, fds[0], FIONREAD, cnt);
    C3(SYS_ioctl, fds[0], 0x1234, 5);
    C3(SYS_ioctl, fds[0], TIOCGWINSZ, tio);

    /* memory */
    long p = C6(SYS_mmap, 0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    C3(SYS_mprotect, p, 4096, PROT_NONE);
    C3(SYS_mprotect, p, 4096, PROT_READ | PROT_EXEC);
    C3(SYS_madvise, p, 4096, MADV_DONTNEED);
    C3(SYS_mprotect, p, 4096, PROT_READ | PROT_WRITE);
    long q = C5(SYS_mremap, p, 8192, 16384, MREMAP_MAYMOVE, 0);
    C2(SYS_munmap, q, 16384);
    C6(SYS_mmap, 0, 4096, PROT_READ, MAP_SHARED | MAP_POPULATE | MAP_STACK, 999, 0x1000);
    C6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_GROWSDOWN, -1, 0);
    C1(SYS_brk, 0);

    /* sockets */
    long s = C3(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    struct sockaddr_in *sin = A(sizeof *sin);
    sin->sin_family = AF_INET; sin->sin_port = htons(1); sin->sin_addr.s_addr = htonl(0x7f000001);
    C3(SYS_connect, s, sin, sizeof *sin);
    long l = C3(SYS_socket, AF_INET, SOCK_STREAM, 0);
    int *one = A(4); *one = 1;
    C5(SYS_setsockopt, l, SOL_SOCKET, SO_REUSEADDR, one, 4);
    sin->sin_port = 0;
    C3(SYS_bind, l, sin, sizeof *sin);
    socklen_t *slen = A(4); *slen = sizeof *sin;
    C3(SYS_getsockname, l, sin, slen);
    int *optv = A(4); socklen_t *optl = A(4); *optl = 4;
    C5(SYS_getsockopt, l, SOL_SOCKET, SO_TYPE, optv, optl);
    C5(SYS_getsockopt, l, SOL_SOCKET, SO_ERROR, optv, optl);
    long u = C3(SYS_socket, AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un *sun = A(sizeof *sun);
    sun->sun_family = AF_UNIX; strcpy(sun->sun_path, "/nonexistent/sock");
    C3(SYS_connect, u, sun, sizeof *sun);
    C3(SYS_connect, u, sun, 2 + strlen(sun->sun_path) + 1);
    struct sockaddr_un *abs = A(sizeof *abs);
    abs->sun_family = AF_UNIX; memcpy(abs->sun_path, "\0strata\n", 8);
    C3(SYS_connect, u, abs, 2 + 8);
    long s6 = C3(SYS_socket, AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, IPPROTO_UDP);
    struct sockaddr_in6 *sin6 = A(sizeof *sin6);
    sin6->sin6_family = AF_INET6; sin6->sin6_port = htons(53);
    inet_pton(AF_INET6, "::1", &sin6->sin6_addr);
    C3(SYS_connect, s6, sin6, sizeof *sin6);
    inet_pton(AF_INET6, "2001:db8::ff00:42:8329", &sin6->sin6_addr);
    C3(SYS_connect, s6, sin6, sizeof *sin6);
    inet_pton(AF_INET6, "::ffff:10.1.2.3", &sin6->sin6_addr);
    C3(SYS_connect, s6, sin6, 24);
    int *sv = A(8);
    C4(SYS_socketpair, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv);
    C6(SYS_sendto, sv[0], B("ping\0pong", 9), 9, MSG_DONTWAIT, 0, 0);
    C6(SYS_recvfrom, sv[1], buf, 100, 0, 0, 0);
    C6(SYS_recvfrom, sv[1], buf, 100, MSG_DONTWAIT, 0, 0);
    struct msghdr *mh = A(sizeof *mh);
    struct iovec *miov = A(sizeof *miov);
    miov->iov_base = S("message"); miov->iov_len = 7;
    mh->msg_iov = miov; mh->msg_iovlen = 1;
    C3(SYS_sendmsg, sv[0], mh, 0);
    char *rbuf = A(64);
    miov->iov_base = rbuf; miov->iov_len = 64;
    C3(SYS_recvmsg, sv[1], mh, 0);

    /* processes */
    long pid = fork_child(0);
    int *status = A(4);
    C4(SYS_wait4, pid, status, 0, 0);
    C4(SYS_wait4, -1, status, WNOHANG, 0);
    int *lp = A(8);
    C2(SYS_pipe2, lp, 0);
    late_fd = lp[1];
    pid = fork_child(late_writer);
    C3(SYS_read, lp[0], buf, 64);
    C4(SYS_wait4, pid, status, 0, 0);
    char **av = A(4 * sizeof(char *));
    av[0] = S("prog"); av[1] = S("-x"); av[2] = S("a b\tc");
    char **ev = A(3 * sizeof(char *));
    ev[0] = S("A=1"); ev[1] = S("B=2");
    C3(SYS_execve, S("/nonexistent/prog"), av, ev);
    C3(SYS_execve, S("/nonexistent/prog"), 0, 0);
    long self = raw(SYS_getpid, 0, 0, 0, 0, 0, 0);
    C2(SYS_kill, self, 0);
    C2(SYS_kill, -self, SIGCONT);
    C0(SYS_getuid);
    void *rl = A(16);
    C4(SYS_prlimit64, 0, RLIMIT_STACK, 0, rl);
    C4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, rl);
    C4(SYS_prlimit64, 0, RLIMIT_CORE, rl, 0);
    void *uts = A(390);
    C1(SYS_uname, uts);
    unsigned long *fsbase = A(8);
    C2(SYS_arch_prctl, ARCH_GET_FS, fsbase);
    void *mask = A(128);
    C3(SYS_sched_getaffinity, 0, 128, mask);
    void *si = A(112);
    C1(SYS_sysinfo, si);
    void *rnd = A(64);
    C3(SYS_getrandom, rnd, 8, GRND_NONBLOCK);
    C3(SYS_getrandom, rnd, 40, 0);

    /* signals */
    struct {
        unsigned long handler, flags, restorer, mask;
    } *act = A(32), *old = A(32);
    act->handler = (unsigned long)handler;
    act->flags = 0x04000000 | SA_RESTART;
    act->restorer = 0x1234;
    act->mask = (1ul << (SIGINT - 1)) | (1ul << (SIGTERM - 1));
    C4(SYS_rt_sigaction, SIGUSR1, act, 0, 8);
    C4(SYS_rt_sigaction, SIGUSR1, 0, old, 8);
    act->handler = (unsigned long)SIG_IGN;
    act->flags = 0x04000000 | SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    act->mask = ~0ul;
    C4(SYS_rt_sigaction, SIGUSR2, act, old, 8);
    C4(SYS_rt_sigaction, SIGUSR2, 0, old, 8);
    C4(SYS_rt_sigaction, SIGKILL, act, 0, 8);
    unsigned long *set = A(8), *oset = A(8);
    *set = (1ul << (SIGINT - 1)) | (1ul << (SIGTERM - 1)) | (1ul << 35) | (1ul << 63);
    C4(SYS_rt_sigprocmask, SIG_BLOCK, set, oset, 8);
    C4(SYS_rt_sigprocmask, SIG_SETMASK, oset, 0, 8);
    C4(SYS_rt_sigprocmask, SIG_BLOCK, 0, oset, 8);
    C4(SYS_rt_sigprocmask, SIG_BLOCK, set, 0, 4);

    /* time, futex */
    struct timespec *ts = A(sizeof *ts), *rem = A(sizeof *rem);
    ts->tv_sec = 0; ts->tv_nsec = 1000;
    C2(SYS_nanosleep, ts, rem);
    C4(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, ts, 0);
    ts->tv_nsec = 2000000000;
    C4(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, ts, rem);
    C2(SYS_clock_gettime, CLOCK_REALTIME, ts);
    C2(SYS_clock_gettime, CLOCK_BOOTTIME, ts);
    C2(SYS_clock_gettime, 1234, ts);
    int *word = A(4);
    ts->tv_sec = 1; ts->tv_nsec = 0;
    C6(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
    C6(SYS_futex, word, FUTEX_WAIT_PRIVATE, 1, ts, 0, 0);
    C6(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 1, ts, 0, FUTEX_BITSET_MATCH_ANY);


    /* more files */
    char *f1 = P(tmp, "f1"), *f2 = P(tmp, "f2"), *f3 = P(tmp, "f3"), *f4 = P(tmp, "f4");
    long wfd = C4(SYS_openat, AT_FDCWD, f1, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0640);
    C3(SYS_write, wfd, S("0123456789"), 10);
    C1(SYS_fsync, wfd);
    C1(SYS_fdatasync, wfd);
    C4(SYS_fallocate, wfd, 0, 0, 4096);
    C4(SYS_fallocate, wfd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, 0, 10);
    C4(SYS_fadvise64, wfd, 0, 100, POSIX_FADV_SEQUENTIAL);
    C2(SYS_flock, wfd, LOCK_EX | LOCK_NB);
    C2(SYS_flock, wfd, LOCK_UN);
    C4(SYS_sync_file_range, wfd, 0, 10, SYNC_FILE_RANGE_WRITE);
    C2(SYS_link, f1, f2);
    C2(SYS_rename, f2, f3);
    C2(SYS_symlink, S("f1"), f2);
    C5(SYS_linkat, AT_FDCWD, f1, AT_FDCWD, f4, 0);
    C5(SYS_renameat2, AT_FDCWD, f3, AT_FDCWD, f1, RENAME_NOREPLACE);
    C4(SYS_renameat, AT_FDCWD, f4, AT_FDCWD, f3);
    C2(SYS_chmod, f1, 04755);
    C3(SYS_fchmodat, AT_FDCWD, f1, 0644);
    C3(SYS_chown, f1, -1, -1);
    C3(SYS_lchown, f2, 0, 0);
    C3(SYS_fchown, wfd, -1, 1234);
    C5(SYS_fchownat, AT_FDCWD, f1, -1, -1, AT_SYMLINK_NOFOLLOW);
    struct timespec *tms = A(2 * sizeof *tms);
    tms[0].tv_nsec = UTIME_NOW; tms[1].tv_sec = 5; tms[1].tv_nsec = UTIME_OMIT;
    C4(SYS_utimensat, AT_FDCWD, f1, tms, 0);
    tms[0].tv_sec = 1700000000; tms[0].tv_nsec = 123;
    tms[1].tv_sec = 1700000001; tms[1].tv_nsec = 0;
    C4(SYS_utimensat, AT_FDCWD, f1, tms, 0);
    C4(SYS_utimensat, AT_FDCWD, f2, 0, AT_SYMLINK_NOFOLLOW);
    struct timeval *tvs = A(2 * sizeof *tvs);
    tvs[0].tv_sec = 1600000000; tvs[0].tv_usec = 5; tvs[1].tv_sec = 1600000000;
    C2(SYS_utimes, f1, tvs);
    C2(SYS_truncate, f1, 50);
    C3(SYS_mknod, P(tmp, "fifo"), S_IFIFO | 0600, 0);
    C4(SYS_mknodat, AT_FDCWD, P(tmp, "chr"), S_IFCHR | 0600, makedev(1, 3));
    void *sfs = A(120);
    C2(SYS_statfs, S(tmp), sfs);
    C2(SYS_fstatfs, wfd, sfs);
    C5(SYS_setxattr, f1, S("user.strata"), S("value\001"), 6, XATTR_CREATE);
    char *xv = A(64);
    C4(SYS_getxattr, f1, S("user.strata"), xv, 64);
    C4(SYS_lgetxattr, f1, S("user.none"), xv, 64);
    C4(SYS_fgetxattr, wfd, S("user.strata"), 0, 0);
    C3(SYS_listxattr, f1, xv, 64);
    C3(SYS_flistxattr, wfd, 0, 0);
    C2(SYS_removexattr, f1, S("user.strata"));
    char *rl2 = A(64);
    C4(SYS_readlinkat, AT_FDCWD, f2, rl2, 64);
    C3(SYS_symlinkat, S("../f1"), AT_FDCWD, P(tmp, "f5"));
    C1(SYS_unlink, f2);
    C1(SYS_rmdir, f3);
    long tmpd = C4(SYS_openat, AT_FDCWD, S(tmp), O_RDONLY | O_DIRECTORY, 0);
    C3(SYS_getdents64, tmpd, dents, 512);
    C3(SYS_getdents, tmpd, dents, 512);
    C2(SYS_memfd_create, S("strata"), MFD_CLOEXEC | MFD_ALLOW_SEALING);
    long mfd = C2(SYS_memfd_create, S("strata-decode-memfd-name-longer-than-32"), 0);
    C3(SYS_fcntl, mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
    C2(SYS_fcntl, mfd, F_GET_SEALS);
    struct flock *fl = A(sizeof *fl);
    fl->l_type = F_WRLCK; fl->l_whence = SEEK_SET; fl->l_start = 0; fl->l_len = 10;
    C3(SYS_fcntl, wfd, F_SETLK, fl);
    C3(SYS_fcntl, wfd, F_GETLK, fl);
    C3(SYS_fcntl, wfd, F_OFD_GETLK, fl);
    C3(SYS_fcntl, wfd, F_SETOWN, 1234);
    C2(SYS_fcntl, wfd, F_GETOWN);
    C3(SYS_fcntl, wfd, F_SETSIG, SIGIO);
    C2(SYS_fcntl, wfd, F_GETSIG);
    C3(SYS_fcntl, lp[0], F_SETPIPE_SZ, 65536);
    C2(SYS_fcntl, lp[0], F_GETPIPE_SZ);
    C2(SYS_fcntl, wfd, F_GETLEASE);
    C3(SYS_fcntl, wfd, 12345, 6789);
    long pfd2 = C4(SYS_openat, AT_FDCWD, S("/etc/passwd"), O_RDONLY, 0);
    C4(SYS_sendfile, wfd, pfd2, 0, 10);
    C6(SYS_copy_file_range, pfd2, 0, wfd, 0, 10, 0);
    C3(SYS_readahead, pfd2, 0, 4096);
    C3(SYS_close_range, 200, 300, 0);

    /* epoll, eventfd, timerfd, signalfd, inotify */
    long ep = C1(SYS_epoll_create1, EPOLL_CLOEXEC);
    C1(SYS_epoll_create, 5);
    struct epoll_event *ev1 = A(sizeof *ev1 * 4);
    ev1->events = EPOLLIN | EPOLLET; ev1->data.u64 = 0x1234567890ull;
    C4(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, lp[0], ev1);
    C3(SYS_write, lp[1], S("ev"), 2);
    C4(SYS_epoll_wait, ep, ev1, 4, 0);
    C6(SYS_epoll_pwait, ep, ev1, 4, 0, 0, 8);
    C4(SYS_epoll_ctl, ep, EPOLL_CTL_DEL, lp[0], 0);
    C4(SYS_epoll_wait, ep, ev1, 4, 0);
    C2(SYS_eventfd2, 5, EFD_CLOEXEC | EFD_NONBLOCK);
    long tfd2 = C2(SYS_timerfd_create, CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec *its = A(sizeof *its), *oits = A(sizeof *oits);
    its->it_value.tv_sec = 100;
    C4(SYS_timerfd_settime, tfd2, 0, its, oits);
    C2(SYS_timerfd_gettime, tfd2, oits);
    unsigned long *sfmask = A(8);
    *sfmask = 1ul << (SIGUSR2 - 1);
    C4(SYS_signalfd4, -1, sfmask, 8, SFD_CLOEXEC);
    long ifd = C1(SYS_inotify_init1, IN_CLOEXEC);
    long wd = C3(SYS_inotify_add_watch, ifd, S(tmp), IN_CREATE | IN_DELETE);
    C2(SYS_inotify_rm_watch, ifd, wd);

    /* ids, scheduling, limits, usage */
    C0(SYS_getppid);
    C0(SYS_geteuid);
    C0(SYS_getgid);
    C0(SYS_getegid);
    C0(SYS_getpgrp);
    C1(SYS_getpgid, 0);
    C1(SYS_getsid, 0);
    unsigned *ids = A(12);
    C3(SYS_getresuid, ids, ids + 1, ids + 2);
    C3(SYS_getresgid, ids, ids + 1, ids + 2);
    C2(SYS_getgroups, 0, 0);
    unsigned *grps = A(4 * 64);
    C2(SYS_getgroups, 64, grps);
    C2(SYS_getpriority, PRIO_PROCESS, 0);
    C1(SYS_sched_getscheduler, 0);
    int *prm = A(4);
    C2(SYS_sched_getparam, 0, prm);
    C1(SYS_sched_get_priority_max, SCHED_FIFO);
    C0(SYS_sched_yield);
    unsigned *cpu = A(8);
    C3(SYS_getcpu, cpu, cpu + 1, 0);
    void *ru = A(144);
    C2(SYS_getrusage, RUSAGE_SELF, ru);
    C2(SYS_getrusage, RUSAGE_CHILDREN, ru);
    void *tmsb = A(32);
    C1(SYS_times, tmsb);
    C1(SYS_personality, 0xffffffff);
    C2(SYS_getrlimit, RLIMIT_AS, rl);
    C4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, rl);
    C4(SYS_prlimit64, 0, RLIMIT_NOFILE, rl, rl);
    C1(SYS_alarm, 0);
    C2(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    C2(SYS_pidfd_open, self, 0);
    unsigned long *head = A(8), *hlen = A(8);
    C3(SYS_get_robust_list, 0, head, hlen);

    /* prctl, arch_prctl */
    C2(SYS_prctl, PR_SET_NAME, S("strata-test"));
    char *nm = A(16);
    C2(SYS_prctl, PR_GET_NAME, nm);
    C1(SYS_prctl, PR_GET_DUMPABLE);
    C2(SYS_prctl, PR_SET_PDEATHSIG, SIGTERM);
    int *pds = A(4);
    C2(SYS_prctl, PR_GET_PDEATHSIG, pds);
    C2(SYS_prctl, PR_SET_PDEATHSIG, 0);
    C1(SYS_prctl, PR_GET_TIMERSLACK);
    C2(SYS_prctl, PR_CAPBSET_READ, CAP_SYS_ADMIN);
    C1(SYS_prctl, PR_GET_SECUREBITS);
    C5(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
    unsigned long *tida = A(8);
    C2(SYS_prctl, PR_GET_TID_ADDRESS, tida);
    C5(SYS_prctl, PR_MCE_KILL_GET, 0, 0, 0, 0);
    C5(SYS_prctl, 12345, 1, 2, 3, 4);
    C2(SYS_arch_prctl, ARCH_GET_GS, fsbase);
    C2(SYS_arch_prctl, 0x1021, fsbase);
    C2(SYS_arch_prctl, 0x7777, 1);

    /* signals */
    unsigned long *um = A(8);
    *um = 1ul << (SIGUSR1 - 1);
    C4(SYS_rt_sigprocmask, SIG_BLOCK, um, 0, 8);
    siginfo_t *sinf = A(sizeof *sinf);
    sinf->si_signo = SIGUSR1; sinf->si_code = SI_QUEUE; sinf->si_pid = self; sinf->si_uid = 0;
    sinf->si_value.sival_int = 42;
    C3(SYS_rt_sigqueueinfo, self, SIGUSR1, sinf);
    unsigned long *pend = A(8);
    C2(SYS_rt_sigpending, pend, 8);
    siginfo_t *got = A(sizeof *got);
    struct timespec *zero = A(sizeof *zero);
    C4(SYS_rt_sigtimedwait, um, got, zero, 8);
    C4(SYS_rt_sigtimedwait, um, got, zero, 8);
    C4(SYS_rt_sigtimedwait, um, 0, zero, 8);
    stack_t *ss = A(sizeof *ss), *oss = A(sizeof *oss);
    ss->ss_sp = A(16384); ss->ss_size = 16384;
    C2(SYS_sigaltstack, ss, oss);
    C2(SYS_sigaltstack, 0, oss);
    C3(SYS_tgkill, self, self, 0);
    C2(SYS_tkill, self, 0);

    /* time */
    struct itimerval *itv = A(sizeof *itv), *oitv = A(sizeof *oitv);
    C3(SYS_setitimer, ITIMER_REAL, itv, oitv);
    C2(SYS_getitimer, ITIMER_VIRTUAL, oitv);
    struct sigevent *sev = A(64);
    sev->sigev_notify = SIGEV_NONE;
    int *tid = A(4);
    C3(SYS_timer_create, CLOCK_MONOTONIC, sev, tid);
    C4(SYS_timer_settime, *tid, 0, its, oits);
    C2(SYS_timer_gettime, *tid, oits);
    C1(SYS_timer_getoverrun, *tid);
    C1(SYS_timer_delete, *tid);
    sev->sigev_notify = SIGEV_SIGNAL; sev->sigev_signo = SIGALRM; sev->sigev_value.sival_int = 7;
    C3(SYS_timer_create, CLOCK_REALTIME, sev, tid);
    struct timeval *tv = A(sizeof *tv);
    C2(SYS_gettimeofday, tv, 0);
    long *tt = A(8);
    C1(SYS_time, tt);
    C2(SYS_clock_getres, CLOCK_MONOTONIC, ts);

    /* memory */
    long m = C6(SYS_mmap, 0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *vec = A(2);
    C3(SYS_mincore, m, 8192, vec);
    C3(SYS_msync, m, 4096, MS_ASYNC | MS_INVALIDATE);
    C2(SYS_mlock, m, 4096);
    C2(SYS_munlock, m, 4096);
    C3(SYS_mlock2, m, 4096, MLOCK_ONFAULT);
    C2(SYS_munlock, m, 4096);

    /* more sockets */
    long ls = C3(SYS_socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct linger *lg = A(sizeof *lg);
    lg->l_onoff = 1; lg->l_linger = 5;
    C5(SYS_setsockopt, ls, SOL_SOCKET, SO_LINGER, lg, sizeof *lg);
    *optl = 8;
    C5(SYS_getsockopt, ls, SOL_SOCKET, SO_LINGER, lg, optl);
    *optl = 4;
    C5(SYS_getsockopt, ls, SOL_SOCKET, SO_RCVBUF, optv, optl);
    C5(SYS_setsockopt, ls, IPPROTO_TCP, 1, one, 4);
    C5(SYS_setsockopt, ls, SOL_IP, IP_TOS, one, 4);
    sin->sin_port = 0;
    C3(SYS_bind, ls, sin, sizeof *sin);
    C2(SYS_listen, ls, 5);
    C4(SYS_accept4, ls, 0, 0, SOCK_CLOEXEC);
    *slen = sizeof *sin;
    C4(SYS_accept4, ls, sin, slen, 0);
    *slen = sizeof *sin;
    C3(SYS_getpeername, ls, sin, slen);
    C2(SYS_shutdown, sv[0], SHUT_WR);
    C3(SYS_ioctl, ls, FIONBIO, one);
    C2(SYS_ioctl, ls, FIOCLEX);
    long nl = C3(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    struct sockaddr_nl *snl = A(sizeof *snl);
    snl->nl_family = AF_NETLINK;
    C3(SYS_bind, nl, snl, sizeof *snl);
    *slen = sizeof *snl;
    C3(SYS_getsockname, nl, snl, slen);
    int *sv2 = A(8);
    C4(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv2);
    struct msghdr *cm = A(sizeof *cm);
    struct iovec *civ = A(sizeof *civ);
    civ->iov_base = S("x"); civ->iov_len = 1;
    union { char buf[CMSG_SPACE(2 * sizeof(int))]; struct cmsghdr align; } *cbuf = A(sizeof *cbuf);
    cm->msg_iov = civ; cm->msg_iovlen = 1;
    cm->msg_control = cbuf->buf; cm->msg_controllen = sizeof cbuf->buf;
    struct cmsghdr *ch = CMSG_FIRSTHDR(cm);
    ch->cmsg_level = SOL_SOCKET; ch->cmsg_type = SCM_RIGHTS; ch->cmsg_len = CMSG_LEN(2 * sizeof(int));
    ((int *)CMSG_DATA(ch))[0] = 0; ((int *)CMSG_DATA(ch))[1] = 1;
    C3(SYS_sendmsg, sv2[0], cm, MSG_NOSIGNAL);
    civ->iov_base = A(16); civ->iov_len = 16;
    C3(SYS_recvmsg, sv2[1], cm, MSG_CMSG_CLOEXEC);
    struct pollfd *pp = A(sizeof *pp);
    pp->fd = sv2[1]; pp->events = POLLIN | POLLRDHUP;
    C5(SYS_ppoll, pp, 1, zero, 0, 8);
    C5(SYS_ppoll, pp, 1, zero, um, 8);

    /* less common calls */
    struct mmsghdr *mm = A(2 * sizeof *mm);
    struct iovec *mmiov = A(2 * sizeof *mmiov);
    mmiov[0].iov_base = S("first"); mmiov[0].iov_len = 5;
    mmiov[1].iov_base = S("second"); mmiov[1].iov_len = 6;
    mm[0].msg_hdr.msg_iov = &mmiov[0]; mm[0].msg_hdr.msg_iovlen = 1;
    mm[1].msg_hdr.msg_iov = &mmiov[1]; mm[1].msg_hdr.msg_iovlen = 1;
    int *sv3 = A(8);
    C4(SYS_socketpair, AF_UNIX, SOCK_DGRAM, 0, sv3);
    C4(SYS_sendmmsg, sv3[0], mm, 2, MSG_DONTWAIT);
    mmiov[0].iov_base = A(16); mmiov[0].iov_len = 16;
    mmiov[1].iov_base = A(16); mmiov[1].iov_len = 16;
    C5(SYS_recvmmsg, sv3[1], mm, 2, MSG_DONTWAIT, 0);
    struct { unsigned version; int pid; } *ch2 = A(8);
    ch2->version = 0x20080522;
    unsigned *cd = A(24);
    C2(SYS_capget, ch2, cd);
    C2(SYS_capset, ch2, cd);
    ch2->version = 0x19980330;
    C2(SYS_capget, ch2, cd);
    long shm = C3(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    long shaddr = C3(SYS_shmat, shm, 0, SHM_RDONLY);
    C1(SYS_shmdt, shaddr);
    raw(SYS_shmctl, shm, IPC_RMID, 0, 0, 0, 0);
    long sem = C3(SYS_semget, IPC_PRIVATE, 1, IPC_CREAT | IPC_EXCL | 0600);
    raw(SYS_semctl, sem, 0, IPC_RMID, 0, 0, 0);
    long msq = C2(SYS_msgget, IPC_PRIVATE, IPC_CREAT | 0644);
    raw(SYS_msgctl, msq, IPC_RMID, 0, 0, 0, 0);
    C3(SYS_syslog, 10, 0, 0);
    long prio = C2(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
    if (prio >= 0)
        C3(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio);
    unsigned *act2 = A(4);
    *act2 = SECCOMP_RET_KILL_PROCESS;
    C3(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, act2);
    struct iovec *lv = A(sizeof *lv), *rv = A(sizeof *rv);
    char *src = S("remote bytes"), *dst = A(16);
    lv->iov_base = dst; lv->iov_len = 12;
    rv->iov_base = src; rv->iov_len = 12;
    C6(SYS_process_vm_readv, self, lv, 1, rv, 1, 0);
    C5(SYS_kcmp, self, self, KCMP_FILE, 0, 1);
    C5(SYS_kcmp, self, self, KCMP_VM, 0, 0);
    long pidfd = C2(SYS_pidfd_open, self, 0);
    C4(SYS_pidfd_send_signal, pidfd, 0, 0, 0);
    C2(SYS_process_mrelease, pidfd, 0);
    C2(SYS_sched_rr_get_interval, 0, ts);
    struct iovec *vsi = A(sizeof *vsi);
    vsi->iov_base = S("spliced"); vsi->iov_len = 7;
    C4(SYS_vmsplice, lp[1], vsi, 1, SPLICE_F_NONBLOCK);
    C2(SYS_fsopen, S("tmpfs"), FSOPEN_CLOEXEC);
    C3(SYS_open_tree, AT_FDCWD, S(tmp), OPEN_TREE_CLOEXEC);
    C1(SYS_memfd_secret, 0);
    C1(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    C2(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);

    /* aio, message queues, modules, remap_file_pages */
    aio_context_t *ctx = A(8);
    C2(SYS_io_setup, 4, ctx);
    C1(SYS_io_destroy, *ctx);
    struct mq_attr *mqa = A(sizeof *mqa);
    mqa->mq_maxmsg = 4; mqa->mq_msgsize = 64;
    long mq = raw(SYS_mq_open, (long)S("strata-decode-test"), O_RDWR | O_CREAT | O_EXCL, 0600, (long)mqa, 0, 0);
    raw(SYS_mq_unlink, (long)S("strata-decode-test"), 0, 0, 0, 0, 0);
    C5(SYS_mq_timedsend, mq, S("queued"), 6, 3, 0);
    char *mqbuf = A(64);
    unsigned *mqprio = A(4);
    C5(SYS_mq_timedreceive, mq, mqbuf, 64, mqprio, 0);
    C5(SYS_mq_timedreceive, mq, mqbuf, 64, mqprio, zero);
    C2(SYS_mq_notify, mq, 0);
    C2(SYS_delete_module, S("strata_no_such_module"), O_NONBLOCK);
    C3(SYS_finit_module, -1, S(""), 0);
    C3(SYS_ioperm, 0x3f8, 8, 0);
    long shp = C6(SYS_mmap, 0, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    C5(SYS_remap_file_pages, shp, 4096, 0, 1, 0);

    /* calls that rewrite their inputs */
    long srv = C3(SYS_socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sin->sin_port = 0;
    C3(SYS_bind, srv, sin, sizeof *sin);
    C2(SYS_listen, srv, 5);
    struct sockaddr_storage *ss2 = A(sizeof *ss2);
    socklen_t *l128 = A(4);
    *l128 = 128;
    C3(SYS_getsockname, srv, ss2, l128);
    long cli = C3(SYS_socket, AF_INET, SOCK_STREAM, 0);
    C3(SYS_connect, cli, ss2, 16);
    *l128 = 128;
    C4(SYS_accept4, srv, ss2, l128, SOCK_CLOEXEC);
    long u1 = C3(SYS_socket, AF_INET, SOCK_DGRAM, 0), u2 = C3(SYS_socket, AF_INET, SOCK_DGRAM, 0);
    sin->sin_port = 0;
    C3(SYS_bind, u1, sin, sizeof *sin);
    *l128 = 128;
    C3(SYS_getsockname, u1, ss2, l128);
    C6(SYS_sendto, u2, S("udp"), 3, 0, ss2, 16);
    C6(SYS_sendto, u2, S("udp2"), 4, 0, ss2, 16);
    *l128 = 128;
    C6(SYS_recvfrom, u1, buf, 64, 0, ss2, l128);
    struct msghdr *rm = A(sizeof *rm);
    struct iovec *riov = A(sizeof *riov);
    riov->iov_base = A(16); riov->iov_len = 16;
    rm->msg_name = ss2; rm->msg_namelen = 128; rm->msg_iov = riov; rm->msg_iovlen = 1;
    C3(SYS_recvmsg, u1, rm, 0);
    socklen_t *ol = A(4);
    *ol = 8;
    C5(SYS_getsockopt, u1, SOL_SOCKET, SO_TYPE, optv, ol);
    long off_fd = C4(SYS_openat, AT_FDCWD, S("/etc/passwd"), O_RDONLY, 0);
    int64_t *offp = A(8);
    *offp = 3;
    C4(SYS_sendfile, lp[1], off_fd, offp, 10);
    fd_set *rs = A(sizeof *rs);
    FD_SET(lp[0], rs); FD_SET(0, rs);
    struct timeval *stv = A(sizeof *stv);
    stv->tv_usec = 5000;
    C5(SYS_select, lp[0] + 1, rs, 0, 0, stv);
    FD_ZERO(rs); FD_SET(lp[0], rs);
    struct timespec *sts = A(sizeof *sts);
    sts->tv_nsec = 5000000;
    C6(SYS_pselect6, lp[0] + 1, rs, 0, 0, sts, 0);
    struct pollfd *pp2 = A(sizeof *pp2);
    pp2->fd = lp[0]; pp2->events = POLLIN;
    sts->tv_nsec = 5000000;
    C5(SYS_ppoll, pp2, 1, sts, 0, 8);

    C1(SYS_exit_group, 0);
    return 0;
}
"##;

/// A copy of the traced program's arena.
struct Arena {
    addr: u64,
    bytes: Vec<u8>,
}

impl Memory for Arena {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<usize, ()> {
        if addr < self.addr || addr >= self.addr + self.bytes.len() as u64 {
            return Err(());
        }
        let off = (addr - self.addr) as usize;
        let n = buf.len().min(self.bytes.len() - off);
        buf[..n].copy_from_slice(&self.bytes[off..off + n]);
        Ok(n)
    }
}

struct Record {
    nr: usize,
    args: [u64; 6],
    ret: i64,
    /// The arena before the call.
    before: Arena,
    /// The arena after the call.
    arena: Arena,
}

fn records(log: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let mut off = 0;
    let word = |at: usize| u64::from_le_bytes(log[at..at + 8].try_into().unwrap());
    while off + 88 <= log.len() {
        assert_eq!(word(off), 0x5354524154414c47, "bad record at {off}");
        let nr = word(off + 8) as usize;
        let mut args = [0; 6];
        for (i, a) in args.iter_mut().enumerate() {
            *a = word(off + 16 + 8 * i);
        }
        let ret = word(off + 64) as i64;
        let addr = word(off + 72);
        let len = word(off + 80) as usize;
        let before = log[off + 88..off + 88 + len].to_vec();
        let after = log[off + 88 + len..off + 88 + 2 * len].to_vec();
        off += 88 + 2 * len;
        out.push(Record {
            nr,
            args,
            ret,
            before: Arena { addr, bytes: before },
            arena: Arena { addr, bytes: after },
        });
    }
    out
}

/// A call as strace printed it: the whole line, and its two halves when
/// strace split it (`read(3,  <unfinished ...>` / `<... read resumed>...`).
struct Line {
    whole: String,
    split: Option<(String, String)>,
}

/// strace's lines of the traced program's main process from the marker on,
/// split lines joined.
fn calls_of(trace: &str) -> Vec<Line> {
    let mut pending: HashMap<String, String> = HashMap::new();
    let mut lines: Vec<(String, Line)> = Vec::new();
    for l in trace.lines() {
        let Some((pid, rest)) = l.split_once(' ') else { continue };
        let rest = rest.trim_start();
        if rest.starts_with("---") || rest.starts_with("+++") {
            continue;
        }
        if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid.into(), head.into());
            continue;
        }
        if let Some(tail) = rest.strip_prefix("<... ") {
            let (_, after) = tail.split_once(" resumed>").expect("resumed line");
            let head = pending.remove(pid).expect("unfinished line before resumed");
            let whole = format!("{head}{after}");
            lines.push((
                pid.into(),
                Line {
                    whole,
                    split: Some((format!("{head} <unfinished ...>"), rest.into())),
                },
            ));
            continue;
        }
        lines.push((
            pid.into(),
            Line {
                whole: rest.into(),
                split: None,
            },
        ));
    }
    let start = lines
        .iter()
        .position(|(_, l)| l.whole.contains("\"/strata-decode-test/start\""))
        .expect("the marker call in strace's output");
    let pid = lines[start].0.clone();
    lines.drain(..start);
    lines.into_iter().filter(|(p, _)| *p == pid).map(|(_, l)| l).collect()
}

/// `call` + padding + `result` == `line`, the padding being spaces only.
fn padded(line: &str, call: &str, result: &str) -> bool {
    line.starts_with(call)
        && line.ends_with(result)
        && line.len() >= call.len() + result.len()
        && line[call.len()..line.len() - result.len()].bytes().all(|b| b == b' ')
}

fn have(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn same_lines_as_strace() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("SKIPPED same_lines_as_strace: the traced program and the tables are x86-64 only");
        return;
    }
    if !have("strace", "-V") {
        eprintln!("SKIPPED same_lines_as_strace: strace is not installed");
        return;
    }
    let cc = if have("cc", "--version") { "cc" } else { "gcc" };
    if !have(cc, "--version") {
        eprintln!("SKIPPED same_lines_as_strace: no C compiler (cc/gcc) to build the traced program");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("against_strace");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let src = dir.join("prog.c");
    let prog = dir.join("prog");
    std::fs::write(&src, PROGRAM).unwrap();
    let built = Command::new(cc)
        .arg("-O0")
        .arg("-o")
        .arg(&prog)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "compiling the test program: {}",
        String::from_utf8_lossy(&built.stderr)
    );

    let (log, trace) = (dir.join("log.bin"), dir.join("trace.txt"));
    let mut child = Command::new("strace")
        .env("TZ", "UTC")
        .args(["-f", "-o"])
        .arg(&trace)
        .args(["-s", "32", "-e"])
        .arg(format!("trace={TRACE}"))
        .arg(&prog)
        .arg(&log)
        .arg(dir.join("tmp"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The program takes well under a second; a call that blocks forever is a bug in it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the traced program did not finish in 60 s; see {}", trace.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let run = child.wait_with_output().unwrap();
    assert!(
        run.status.success(),
        "strace failed ({}): {}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );

    let recs = records(&std::fs::read(&log).unwrap());
    let lines = calls_of(&std::fs::read_to_string(&trace).unwrap());
    assert!(recs.len() > 100, "only {} calls logged", recs.len());

    let mut failures = Vec::new();
    let (mut checked, mut split) = (0, 0);
    for (i, rec) in recs.iter().enumerate() {
        let Some(expected) = lines.get(i) else {
            failures.push(format!("call #{i} ({}) missing from strace's output", rec.nr));
            break;
        };
        let opts = Options::DEFAULT;
        // What the trace extension keeps when a call starts.
        let saved = entry_state(rec.nr, &rec.args, &rec.before);
        let mut result = String::new();
        format_result_with(&mut result, rec.nr, &rec.args, rec.ret, &rec.arena, &opts).unwrap();
        // The line in two halves: the entry half formatted when the call
        // starts (from the memory before it), the rest when it returns.
        let entry_opts = Options {
            out_args: false,
            ..opts
        };
        let mut entry = String::new();
        format_call(&mut entry, rec.nr, &rec.args, rec.ret, &rec.before, &entry_opts).unwrap();
        let mut resumed = String::new();
        format_resumed(&mut resumed, rec.nr, &rec.args, rec.ret, &rec.arena, &opts, &saved).unwrap();
        let rest = resumed.split_once(" resumed>").unwrap().1;
        let halves = format!("{entry}{rest}");
        let mut ok = padded(&expected.whole, &halves, &result);
        if !ok {
            failures.push(format!("strace: {}\n halves: {halves}{result}", expected.whole));
        }
        // strace's own split lines, half by half.
        if let Some((head, tail)) = &expected.split {
            split += 1;
            if *head != format!("{entry} <unfinished ...>") || !padded(tail, &resumed, &result) {
                ok = false;
                failures.push(format!(
                    "strace: {head}\n        {tail}\n   ours: {entry} <unfinished ...>\n        {resumed}{result}"
                ));
            }
        }
        // The whole line formatted when the call returns, with what was
        // saved when it started: the same, except for the calls whose
        // inputs are gone by then (select, pselect6, ppoll, execve).
        if !matches!(rec.nr, 7 | 23 | 59 | 270 | 271 | 322) {
            let mut call = String::new();
            format_call_with(&mut call, rec.nr, &rec.args, rec.ret, &rec.arena, &opts, &saved).unwrap();
            if !padded(&expected.whole, &call, &result) {
                ok = false;
                failures.push(format!("strace: {}\n  whole: {call}{result}", expected.whole));
            }
        } else {
            assert!(inputs_change(rec.nr) || rec.nr == 7);
        }
        if ok {
            checked += 1;
        }
    }
    assert!(
        split > 0,
        "no split line to check (the late writer should have caused one)"
    );
    // exit_group is the last call; strace prints it as `exit_group(0) = ?`.
    assert!(
        failures.is_empty(),
        "{} of {} lines differ:\n{}",
        failures.len(),
        recs.len(),
        failures.join("\n")
    );
    assert_eq!(
        lines.len(),
        recs.len() + 1,
        "strace printed calls the program did not log"
    );
    eprintln!("{checked} calls formatted exactly as strace did, {split} of them also as split lines");
}
