/* sud_floor N: the cheapest possible trap path, for comparison with strata's.
 *
 * A SIGSYS handler in a few instructions of assembly, placed in the only range
 * Syscall User Dispatch lets through: it re-issues the trapped call and puts
 * the result in the saved rax. No state, no checks, no extension hook. Every
 * getpid of the loop traps into it. Prints nanoseconds per call.
 * (Measured side by side with strata in bench/capture.py.) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* uc_mcontext starts at offset 40 of the kernel's ucontext; rax is greg 13. */
asm(".pushsection .text.allowed,\"ax\"\n"
    ".balign 4096\n"
    "allowed_start:\n"
    "floor_handler: mov 0x90(%rdx), %rax\n"
    "    syscall\n"
    "    mov %rax, 0x90(%rdx)\n"
    "    ret\n"
    "floor_restorer: mov $15, %eax\n"
    "    syscall\n"
    "    .fill 64, 1, 0xcc\n"
    "allowed_end:\n"
    ".popsection\n");
extern char allowed_start[], allowed_end[], floor_handler[], floor_restorer[];

struct ksigaction { void *handler; unsigned long flags; void *restorer; unsigned long mask; };
static volatile char selector = 0;

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
    static char alt[256 * 1024];
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt };
    struct ksigaction sa = { floor_handler, SA_SIGINFO | SA_ONSTACK | 0x04000000 /* SA_RESTORER */,
                             floor_restorer, ~0UL };
    if (sigaltstack(&ss, NULL) || syscall(SYS_rt_sigaction, SIGSYS, &sa, NULL, 8) ||
        prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, (unsigned long)allowed_start,
              (unsigned long)(allowed_end - allowed_start), &selector)) {
        perror("sud_floor: set-up");
        return 1;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a); /* vDSO: no system call */
    selector = SYSCALL_DISPATCH_FILTER_BLOCK;
    for (long i = 0; i < n; i++)
        syscall(SYS_getpid);
    selector = SYSCALL_DISPATCH_FILTER_ALLOW;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
    return 0;
}
