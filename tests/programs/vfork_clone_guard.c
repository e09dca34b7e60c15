// A vfork child made by clone (CLONE_VM|CLONE_VFORK and the top of a stack
// of its own: glibc's posix_spawn falls back to it where clone3 is refused,
// as a sandbox policy's backstop refuses it) with every signal blocked asks
// rt_sigaction for an old action into its stack: a page below the top that
// is not accessible (a guard page) gives EFAULT, the stack's own page
// works, again once it has been reached, and the child exits. Then posix_spawn's own child, which takes the
// same path under a policy, runs many times over.
// as-nobody
#include "util.h"
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

// clone_run(flags, top, fn): the child calls fn on the stack below `top`
// (fn never returns); the parent returns the child's pid.
long clone_run(long flags, void *top, void (*fn)(void));
__asm__(".globl clone_run\n"
        "clone_run:\n"
        "    push %r12\n"
        "    mov %rdx, %r12\n"
        "    xor %edx, %edx\n"
        "    xor %r10d, %r10d\n"
        "    xor %r8d, %r8d\n"
        "    mov $56, %eax\n"
        CLONE_RUN_TAIL);

static char *stack;         // its first page is PROT_NONE
static long on_guard, on_stack, on_stack_again, on_guard_again;


static void child(void) {
    uint64_t all = ~0ull, old[4];
    raw_syscall4(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, 8);
    on_stack = raw_syscall4(SYS_rt_sigaction, SIGINT, 0, (long)old, 8);
    on_guard = raw_syscall4(SYS_rt_sigaction, SIGINT, 0, (long)(stack + 64), 8);
    // The stack's page reached (under strata: copied to directly now), the
    // guard page still refused.
    on_stack_again = raw_syscall4(SYS_rt_sigaction, SIGINT, 0, (long)old, 8);
    on_guard_again = raw_syscall4(SYS_rt_sigaction, SIGINT, 0, (long)(stack + 4000), 8);
    raw_syscall4(SYS_exit, 0, 0, 0, 0);
}

int main(void) {
    size_t size = 16 * 4096;
    stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    CHECK(stack != MAP_FAILED);
    CHECK(mprotect(stack, 4096, PROT_NONE) == 0);
    on_guard = on_stack = on_stack_again = on_guard_again = 1;
    long pid = clone_run(CLONE_VM | CLONE_VFORK | SIGCHLD, stack + size, child);
    CHECK(pid > 0);
    int st;
    CHECK(waitpid((pid_t)pid, &st, 0) == pid);
    printf("child exited %d; old action into its stack: %ld, %ld; into its guard page: %ld, %ld\n",
           WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), on_stack, on_stack_again, on_guard, on_guard_again);
    for (int i = 0; i < 20; i++) {
        pid_t p;
        char *args[] = {"true", NULL};
        CHECK(posix_spawn(&p, "/bin/true", NULL, NULL, args, environ) == 0);
        CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    printf("20 posix_spawns of /bin/true: ok\n");
    return 0;
}
