/* Shared helpers for strata's test programs (header only).
 *
 * Programs print deterministic lines to stdout and report failures with
 * CHECK(), which names the failed condition on stderr and exits with 1.  */
#ifndef STRATA_TEST_UTIL_H
#define STRATA_TEST_UTIL_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            int e_ = errno;                                                           \
            fprintf(stderr, "FAILED %s:%d: %s (errno %d: %s)\n", __FILE__, __LINE__, \
                    #cond, e_, strerror(e_));                                         \
            fflush(stdout);                                                           \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* Evaluates a call returning a negative value on failure; yields "ok" or the
   errno's name (e.g. "EBADF"). */
#define RESULT(expr)                                                \
    ({                                                              \
        errno = 0;                                                  \
        long r_ = (long)(expr);                                     \
        r_ < 0 ? (errno ? strerrorname_np(errno) : "-1, no errno") : "ok"; \
    })

/* Installs `h` as the SA_SIGINFO handler of `sig`, with `flags` besides and
   nothing else blocked while it runs. */
static inline void on_signal_info(int sig, void (*h)(int, siginfo_t *, void *), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

/* Async-signal-safe write of a NUL-terminated string to stdout. */
static inline void say(const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(1, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* A system call of four arguments made right here, not through libc (whose
   wrappers may touch memory: a vfork child with its own small stack). */
static inline long raw_syscall4(long nr, long a, long b, long c, long d) {
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return r;
}

/* The end of an assembly clone wrapper whose call number and arguments are
   in place and fn in %r12 (pushed on entry): after the `syscall`, the child
   calls fn on its new stack (fn never returns), the parent returns the
   child's pid. */
#define CLONE_RUN_TAIL            \
    "    syscall\n"               \
    "    test %rax, %rax\n"       \
    "    jnz 1f\n"                \
    "    and $-16, %rsp\n"        \
    "    call *%r12\n"            \
    "    ud2\n"                   \
    "1:  pop %r12\n"              \
    "    ret\n"

#endif
