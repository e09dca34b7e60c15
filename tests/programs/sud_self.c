// The program uses Syscall User Dispatch itself: prctl(PR_SET_SYSCALL_USER_
// DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &selector) with its own SIGSYS handler.
// With the selector at BLOCK a raw getppid raises SIGSYS (si_code
// SYS_USER_DISPATCH, si_syscall 110, si_arch x86-64, si_call_addr just after
// the syscall instruction, RAX holding the number); the handler switches the
// selector to ALLOW and supplies the return value. With the selector at ALLOW
// nothing traps; an excluded code range never traps; arguments reach the
// handler in the ucontext; after PR_SYS_DISPATCH_OFF a BLOCK selector has no
// effect. Bad prctl arguments fail with EINVAL.
// as-nobody
#include "util.h"
#include <linux/audit.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <ucontext.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#define SYSCALL_DISPATCH_FILTER_ALLOW 0
#define SYSCALL_DISPATCH_FILTER_BLOCK 1
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif

static volatile char selector = SYSCALL_DISPATCH_FILTER_ALLOW;
static volatile int traps, code_seen, nr_seen, call_addr_ok;
static volatile unsigned arch_seen;
static volatile long rax_seen, args_seen[6];

/* Raw syscalls with labels right after the syscall instruction. */
long raw6(long nr, long a, long b, long c, long d, long e, long f);
extern char raw6_after[];
long excluded_getppid(void);
extern char excluded_start[], excluded_end[];
__asm__(".text\n"
        ".globl raw6, raw6_after, excluded_getppid, excluded_start, excluded_end\n"
        "raw6:\n"
        "    mov %rdi, %rax\n"
        "    mov %rsi, %rdi\n"
        "    mov %rdx, %rsi\n"
        "    mov %rcx, %rdx\n"
        "    mov %r8, %r10\n"
        "    mov %r9, %r8\n"
        "    mov 8(%rsp), %r9\n"
        "    syscall\n"
        "raw6_after:\n"
        "    ret\n"
        "excluded_start:\n"
        "excluded_getppid:\n"
        "    mov $110, %eax\n"
        "    syscall\n"
        "    ret\n"
        "excluded_end:\n");

static void handler(int sig, siginfo_t *si, void *ucv) {
    selector = SYSCALL_DISPATCH_FILTER_ALLOW; /* before anything else */
    (void)sig;
    ucontext_t *uc = ucv;
    traps++;
    code_seen = si->si_code;
    nr_seen = si->si_syscall;
    arch_seen = si->si_arch;
    call_addr_ok = si->si_call_addr == (void *)raw6_after;
    rax_seen = uc->uc_mcontext.gregs[REG_RAX];
    args_seen[0] = uc->uc_mcontext.gregs[REG_RDI];
    args_seen[1] = uc->uc_mcontext.gregs[REG_RSI];
    args_seen[2] = uc->uc_mcontext.gregs[REG_RDX];
    args_seen[3] = uc->uc_mcontext.gregs[REG_R10];
    args_seen[4] = uc->uc_mcontext.gregs[REG_R8];
    args_seen[5] = uc->uc_mcontext.gregs[REG_R9];
    uc->uc_mcontext.gregs[REG_RAX] = 4242;
}

int main(void) {
    on_signal_info(SIGSYS, handler, 0);
    long ppid = getppid();

    errno = 0;
    CHECK(prctl(PR_SET_SYSCALL_USER_DISPATCH, 7, 0, 0, 0) == -1);
    printf("bad mode: %s\n", strerrorname_np(errno));
    errno = 0;
    CHECK(prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 1, 0, 0) == -1);
    printf("OFF with an offset: %s\n", strerrorname_np(errno));

    int r = prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, (unsigned long)excluded_start,
                  (unsigned long)(excluded_end - excluded_start), &selector);
    printf("dispatch on: %d\n", r);
    CHECK(r == 0);

    selector = SYSCALL_DISPATCH_FILTER_BLOCK;
    long got = raw6(110, 0, 0, 0, 0, 0, 0);
    int sel_after = selector;
    printf("blocked getppid: returned %ld, traps %d, si_code SYS_USER_DISPATCH=%d, si_syscall %d, "
           "AUDIT_ARCH_X86_64=%d, si_call_addr ok=%d, rax=%ld, selector now %d\n",
           got, traps, code_seen == SYS_USER_DISPATCH, nr_seen, arch_seen == AUDIT_ARCH_X86_64, call_addr_ok,
           rax_seen, sel_after);
    CHECK(got == 4242 && traps == 1 && code_seen == SYS_USER_DISPATCH && nr_seen == 110);

    selector = SYSCALL_DISPATCH_FILTER_BLOCK;
    got = raw6(500, 11, 22, 33, 44, 55, 66);
    printf("blocked syscall 500: returned %ld, traps %d, args %ld %ld %ld %ld %ld %ld\n", got, traps, args_seen[0],
           args_seen[1], args_seen[2], args_seen[3], args_seen[4], args_seen[5]);
    CHECK(traps == 2 && args_seen[5] == 66);

    selector = SYSCALL_DISPATCH_FILTER_BLOCK;
    got = excluded_getppid();
    selector = SYSCALL_DISPATCH_FILTER_ALLOW;
    printf("excluded range with BLOCK: real result %d, traps %d\n", got == ppid, traps);
    CHECK(got == ppid && traps == 2);

    got = raw6(110, 0, 0, 0, 0, 0, 0);
    printf("ALLOW: real result %d, traps %d\n", got == ppid, traps);
    CHECK(got == ppid && traps == 2);

    r = prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
    printf("dispatch off: %d\n", r);
    CHECK(r == 0);
    selector = SYSCALL_DISPATCH_FILTER_BLOCK;
    got = raw6(110, 0, 0, 0, 0, 0, 0);
    selector = SYSCALL_DISPATCH_FILTER_ALLOW;
    printf("after OFF with BLOCK: real result %d, traps %d\n", got == ppid, traps);
    CHECK(got == ppid && traps == 2);

    /* Turn it on again with no excluded range and trap once more. */
    CHECK(prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &selector) == 0);
    selector = SYSCALL_DISPATCH_FILTER_BLOCK;
    got = raw6(39, 0, 0, 0, 0, 0, 0);
    printf("on again, blocked getpid: returned %ld, traps %d, si_syscall %d\n", got, traps, nr_seen);
    CHECK(prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0) == 0);
    return 0;
}
