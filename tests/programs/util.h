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

#endif
