// rt_sigreturn through the program's own restorer: a raw rt_sigaction with
// SA_RESTORER pointing at `restorer` (counts its calls, then `mov $15,%eax;
// syscall`). The handler rewrites the saved RAX of a raw kill syscall, and
// the rewritten value is what the syscall appears to return. sigaction()
// reports the restorer back. Without SA_RESTORER the kernel cannot build the
// frame and the process dies of SIGSEGV (checked in a child).
#include "util.h"
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

volatile int restorer_calls;
void restorer(void);
__asm__(".text\n"
        ".globl restorer\n"
        "restorer:\n"
        "    incl restorer_calls(%rip)\n"
        "    mov $15, %eax\n"
        "    syscall\n"
        "    hlt\n");

struct kernel_sigaction {
    void (*handler)(int, siginfo_t *, void *);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

static long raw_kill(int pid, int sig) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "0"(62L), "D"((long)pid), "S"((long)sig) : "rcx", "r11", "memory");
    return ret;
}

static volatile int handled;
static volatile long seen_rax;

static void handler(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    (void)si;
    ucontext_t *uc = ucv;
    handled++;
    seen_rax = uc->uc_mcontext.gregs[REG_RAX];
    uc->uc_mcontext.gregs[REG_RAX] = 777;
}

int main(void) {
    struct kernel_sigaction ksa = {handler, SA_SIGINFO | SA_RESTORER, restorer, 0};
    CHECK(syscall(SYS_rt_sigaction, SIGUSR1, &ksa, NULL, 8) == 0);

    struct kernel_sigaction back;
    CHECK(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &back, 8) == 0);
    printf("raw query: restorer is ours=%d SA_RESTORER=%d SA_SIGINFO=%d\n", back.restorer == restorer,
           (back.flags & SA_RESTORER) != 0, (back.flags & SA_SIGINFO) != 0);
    struct sigaction libc;
    CHECK(sigaction(SIGUSR1, NULL, &libc) == 0);
    printf("libc query: handler is ours=%d restorer is ours=%d\n", libc.sa_sigaction == handler,
           (void *)libc.sa_restorer == (void *)restorer);

    long r = raw_kill(getpid(), SIGUSR1);
    printf("raw kill returned %ld (saved rax was %ld), handled=%d, restorer calls=%d\n", r, seen_rax, handled,
           restorer_calls);
    CHECK(r == 777 && seen_rax == 0 && handled == 1 && restorer_calls == 1);

    for (int i = 0; i < 10; i++) raw_kill(getpid(), SIGUSR1);
    printf("after 10 more: handled=%d restorer calls=%d\n", handled, restorer_calls);
    CHECK(handled == 11 && restorer_calls == 11);

    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct kernel_sigaction bad = {handler, SA_SIGINFO, NULL, 0};
        syscall(SYS_rt_sigaction, SIGUSR2, &bad, NULL, 8);
        raw_kill(getpid(), SIGUSR2);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("handler without SA_RESTORER: child signaled=%d sig=%d\n", WIFSIGNALED(st), WTERMSIG(st));
    return 0;
}
