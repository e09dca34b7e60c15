// A vfork child (clone3 with CLONE_VM|CLONE_VFORK and a stack of its own,
// as glibc's posix_spawn makes it) with every signal blocked asks
// rt_sigaction for an old action into its stack: a page of that stack
// that is not accessible (a guard page inside the range clone3 was given)
// gives EFAULT, the rest works, and the child exits; then posix_spawn's
// own child, many times over, leaves the parent's mapped size as it was
// (an exec from a vfork child maps its new environment in the memory it
// shares with the parent).
// as-nobody
#include "util.h"
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>

extern char **environ;

// clone3_run(args, size, fn): the child calls fn on its new stack (fn
// never returns); the parent returns the child's pid.
long clone3_run(struct clone_args *args, size_t size, void (*fn)(void));
__asm__(".globl clone3_run\n"
        "clone3_run:\n"
        "    push %r12\n"
        "    mov %rdx, %r12\n"
        "    mov $435, %eax\n"
        CLONE_RUN_TAIL);

static char *stack;         // its first page is PROT_NONE
static long on_guard, on_stack;


static void child(void) {
    uint64_t all = ~0ull, old[4];
    raw_syscall4(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, 8);
    on_guard = raw_syscall4(SYS_rt_sigaction, SIGINT, 0, (long)(stack + 64), 8);
    on_stack = raw_syscall4(SYS_rt_sigaction, SIGINT, 0, (long)old, 8);
    raw_syscall4(SYS_exit, 0, 0, 0, 0);
}

/* The process's mapped size (VmSize, kB). */
static long vm_size(void) {
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kb) == 1) break;
    fclose(f);
    CHECK(kb > 0);
    return kb;
}

static void spawn_true(void) {
    pid_t p;
    char *args[] = {"true", NULL};
    CHECK(posix_spawn(&p, "/bin/true", NULL, NULL, args, environ) == 0);
    int st;
    CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void) {
    size_t size = 16 * 4096;
    stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    CHECK(stack != MAP_FAILED);
    CHECK(mprotect(stack, 4096, PROT_NONE) == 0);
    struct clone_args ca = {
        .flags = CLONE_VM | CLONE_VFORK,
        .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)stack,
        .stack_size = size,
    };
    on_guard = on_stack = 1;
    long pid = clone3_run(&ca, sizeof ca, child);
    CHECK(pid > 0);
    int st;
    CHECK(waitpid((pid_t)pid, &st, 0) == pid);
    printf("child exited %d; old action into its guard page: %ld; into its stack: %ld\n",
           WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), on_guard, on_stack);

    spawn_true();
    long before = vm_size();
    for (int i = 0; i < 100; i++) spawn_true();
    long grew = vm_size() - before;
    printf("mapped size after 100 posix_spawns: %s\n", grew > 64 ? "grew" : "as it was");
    return 0;
}
