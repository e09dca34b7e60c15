// A SIGSEGV handler that recovers with siglongjmp: a NULL read (SEGV_MAPERR,
// si_addr 0), a write to a PROT_NONE page and to a read-only page
// (SEGV_ACCERR, exact si_addr), a jump into a non-executable page (si_addr is
// the page), an unmapped page after munmap; the signal mask saved by
// sigsetjmp is restored each time so later faults are delivered too.
// cflags: -fno-delete-null-pointer-checks
#include "util.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

static sigjmp_buf env;
static volatile int sig_seen, code_seen;
static void *volatile addr_seen;

static void handler(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    sig_seen = sig;
    code_seen = si->si_code;
    addr_seen = si->si_addr;
    siglongjmp(env, 1);
}

static const char *code(int c) {
    return c == SEGV_MAPERR ? "SEGV_MAPERR" : c == SEGV_ACCERR ? "SEGV_ACCERR" : "other";
}

static int faults;
#define EXPECT_FAULT(what, expr, expected_addr)                                                              \
    do {                                                                                                     \
        sig_seen = 0;                                                                                        \
        if (sigsetjmp(env, 1) == 0) {                                                                        \
            expr;                                                                                            \
            printf("%s: no fault\n", what);                                                                  \
        } else {                                                                                             \
            faults++;                                                                                        \
            printf("%-26s sig=%d code=%s addr_ok=%d\n", what, sig_seen, code(code_seen),                     \
                   addr_seen == (void *)(expected_addr));                                                    \
        }                                                                                                    \
    } while (0)

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);

    volatile int *null = NULL;
    EXPECT_FAULT("NULL read", (void)*null, 0);

    char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    EXPECT_FAULT("write to PROT_NONE", ((volatile char *)page)[123] = 1, page + 123);
    CHECK(mprotect(page, 4096, PROT_READ) == 0);
    EXPECT_FAULT("write to PROT_READ", ((volatile char *)page)[7] = 1, page + 7);
    EXPECT_FAULT("call into non-exec page", ((void (*)(void))page)(), page);
    CHECK(munmap(page, 4096) == 0);
    EXPECT_FAULT("read after munmap", (void)((volatile char *)page)[5], page + 5);

    sigset_t m;
    sigprocmask(SIG_BLOCK, NULL, &m);
    printf("%d faults recovered, SIGSEGV blocked now=%d\n", faults, sigismember(&m, SIGSEGV));
    CHECK(faults == 5);
    return 0;
}
