// The program's own Syscall User Dispatch with its SIGSYS handler on an
// alternate stack (SA_ONSTACK, SA_NODEFER, every other signal blocked), as
// interposers built on dispatch install it: a trapped call shows the
// handler its registers as they were at the call (RAX the number, RDI and
// RSI its arguments), the handler runs on the alternate stack, and the
// value it leaves in RAX is the call's result. A call the handler itself
// makes while the selector still blocks traps again, nested on the same
// alternate stack below the first frame, and both return in order. (strata
// runs its own handler on the program's alternate stack; its frame there
// must not be where it builds the program's.)
// as-nobody
#include "util.h"
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <ucontext.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif

static volatile char selector; /* 0 ALLOW, 1 BLOCK */
static char alt[64 * 1024];
static volatile int depth, traps, nested_ok;
static volatile long seen[4][3];
static volatile int on_alt[4];

static long raw3(long nr, long a, long b) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return r;
}

static void handler(int sig, siginfo_t *si, void *ucv) {
    (void)sig, (void)si;
    ucontext_t *uc = ucv;
    int d = depth++;
    int i = traps++;
    char here;
    if (i < 4) {
        seen[i][0] = uc->uc_mcontext.gregs[REG_RAX];
        seen[i][1] = uc->uc_mcontext.gregs[REG_RDI];
        seen[i][2] = uc->uc_mcontext.gregs[REG_RSI];
        on_alt[i] = (uintptr_t)&here - (uintptr_t)alt < sizeof alt;
    }
    if (d == 0 && uc->uc_mcontext.gregs[REG_RDI] == 7) {
        /* Still blocked: this call traps too, into a nested frame. */
        nested_ok = raw3(39, 11, 12) == 5000;
    }
    /* The return goes through libc's rt_sigreturn, which must not trap. */
    selector = 0;
    uc->uc_mcontext.gregs[REG_RAX] = d == 0 ? 1000 + i : 5000;
    depth--;
}

int main(void) {
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigfillset(&sa.sa_mask);
    sigdelset(&sa.sa_mask, SIGSYS);
    CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
    CHECK(prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &selector) == 0);

    selector = 1;
    long r = raw3(39, 7, 8);
    printf("first trap: returned %ld, traps %d, nested call returned the inner handler's value %d\n", r, traps,
           nested_ok);
    for (int i = 0; i < traps && i < 4; i++)
        printf("  trap %d: rax %ld rdi %ld rsi %ld, handler on the alternate stack %d\n", i, seen[i][0], seen[i][1],
               seen[i][2], on_alt[i]);
    CHECK(r == 1000 && traps == 2 && nested_ok);

    selector = 1;
    r = raw3(110, 21, 22);
    printf("second trap: returned %ld, rax %ld rdi %ld rsi %ld, on the alternate stack %d\n", r, seen[2][0],
           seen[2][1], seen[2][2], on_alt[2]);
    CHECK(r == 1002 && traps == 3);

    CHECK(prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0) == 0);
    printf("getppid after OFF is real: %d\n", raw3(110, 0, 0) == getppid());
    return 0;
}
