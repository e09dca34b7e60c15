// SIGILL from ud2: si_code ILL_ILLOPN and si_addr is the ud2 instruction
// (an exported asm label). One handler leaves with siglongjmp; another
// advances RIP past the 2-byte ud2 and returns, so execution continues with
// the next instruction. Finally an unhandled ud2 kills the program (-4).
// status: -4
#include "util.h"
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

void trap_ud2(void);
extern char ud2_here[];
long after_ud2(void);
__asm__(".text\n"
        ".globl trap_ud2, ud2_here, after_ud2\n"
        "trap_ud2:\n"
        "ud2_here:\n"
        "    ud2\n"
        "    ret\n"
        "after_ud2:\n"
        "    mov $1, %eax\n"
        "    ud2\n"
        "    add $41, %eax\n"
        "    ret\n");

static sigjmp_buf env;
static volatile int code_seen, count;
static void *volatile addr_seen;

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
    count++;
    code_seen = si->si_code;
    unsigned char *ip = (unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
    if (ip[0] == 0x0f && ip[1] == 0x0b) uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static void install(void (*h)(int, siginfo_t *, void *)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGILL, &sa, NULL) == 0);
}

int main(void) {
    install(jump_handler);
    if (sigsetjmp(env, 1) == 0) {
        trap_ud2();
        printf("no fault\n");
    } else {
        printf("ud2: ILL_ILLOPN=%d si_addr is the ud2=%d\n", code_seen == ILL_ILLOPN, addr_seen == (void *)ud2_here);
    }
    install(skip_handler);
    long r = after_ud2();
    printf("skipped ud2: result %ld after %d signal(s)\n", r, count);
    CHECK(r == 42 && count == 1);

    signal(SIGILL, SIG_DFL);
    printf("unhandled ud2 now\n");
    fflush(stdout);
    trap_ud2();
    printf("not reached\n");
    return 0;
}
