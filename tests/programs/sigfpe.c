// SIGFPE from integer division by zero (FPE_INTDIV) and from INT_MIN / -1
// (also reported as FPE_INTDIV on x86); si_addr is the faulting instruction,
// which lies inside the dividing function. The handler leaves with
// siglongjmp; then a handler that skips the idiv instruction (by decoding
// its length) and returns.
#include "util.h"
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

static sigjmp_buf env;
static volatile int code_seen;
static void *volatile addr_seen;

__attribute__((noinline)) int divide(int a, int b) { return a / b; }
/* idivl %esi (2 bytes: f7 fe), with the result preset to -1 in eax. */
int divide_or_minus1(int a, int b);
__asm__(".text\n.globl divide_or_minus1\ndivide_or_minus1:\n"
        "    mov %edi, %eax\n"
        "    cltd\n"
        "    idivl %esi\n"
        "    ret\n");

static void jump_handler(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    code_seen = si->si_code;
    addr_seen = si->si_addr;
    siglongjmp(env, 1);
}

static void skip_handler(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    code_seen = si->si_code;
    unsigned char *ip = (unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
    if (ip[0] == 0xf7 && ip[1] == 0xfe) {
        uc->uc_mcontext.gregs[REG_RIP] += 2;
        uc->uc_mcontext.gregs[REG_RAX] = -1;
    } else {
        _exit(9);
    }
}

static void install(void (*h)(int, siginfo_t *, void *)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGFPE, &sa, NULL) == 0);
}

int main(void) {
    install(jump_handler);
    volatile int zero = 0, minus1 = -1;
    for (int i = 0; i < 3; i++) {
        if (sigsetjmp(env, 1) == 0) {
            printf("no fault: %d\n", divide(10, zero));
        } else {
            uintptr_t a = (uintptr_t)addr_seen, f = (uintptr_t)divide;
            printf("10/0: FPE_INTDIV=%d si_addr in divide()=%d\n", code_seen == FPE_INTDIV, a >= f && a < f + 64);
        }
    }
    if (sigsetjmp(env, 1) == 0) {
        printf("no fault: %d\n", divide(INT_MIN, minus1));
    } else {
        printf("INT_MIN/-1: FPE_INTDIV=%d\n", code_seen == FPE_INTDIV);
    }
    install(skip_handler);
    int r = divide_or_minus1(7, zero);
    printf("skipped idiv: result %d, FPE_INTDIV=%d\n", r, code_seen == FPE_INTDIV);
    printf("7/2 = %d\n", divide_or_minus1(7, 2));
    return 0;
}
