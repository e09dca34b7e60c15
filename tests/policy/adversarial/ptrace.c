/* Attack 6: ptrace. A tracer can make its tracee do anything (rewrite its
 * registers at a syscall stop, inject code), and a traced process's syscalls
 * are under the tracer's control rather than strata's. The hardening refuses
 * ptrace altogether: PTRACE_TRACEME (libc and gadget), and attaching to a
 * sibling (PTRACE_ATTACH, PTRACE_SEIZE) or to one's own child. Each attempt
 * runs in a fresh child process, whose exit status carries the outcome. */
#include "attack.h"
#include <signal.h>
#include <sys/ptrace.h>

static struct gadget g;

/* Runs fn(arg) in a child; the child prints its line and exits 1 on escape. */
static int in_child(long (*fn)(long), long arg, const char *what) {
    pid_t pid = fork();
    if (pid < 0)
        setup_failed("fork");
    if (pid == 0)
        _exit(attempt(what, fn(arg)));
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        printf("(%s: child died of signal %d)\n", what, WTERMSIG(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

static long traceme_libc(long unused) { return libc_res(ptrace(PTRACE_TRACEME, 0, 0, 0)); }
static long traceme_gadget(long unused) { return gadget_call(g.addr, SYS_ptrace, PTRACE_TRACEME, 0, 0, 0, 0, 0); }
static long attach_gadget(long victim) {
    long r = gadget_call(g.addr, SYS_ptrace, PTRACE_ATTACH, victim, 0, 0, 0, 0);
    if (r >= 0)
        waitpid(victim, NULL, __WALL);
    return r;
}
static long seize_gadget(long victim) { return gadget_call(g.addr, SYS_ptrace, PTRACE_SEIZE, victim, 0, 0, 0, 0); }
static long seize_libc(long victim) { return libc_res(ptrace(PTRACE_SEIZE, (pid_t)victim, 0, 0)); }

int main(void) {
    g = find_gadget();
    int esc = 0;
    esc |= in_child(traceme_libc, 0, "libc ptrace(PTRACE_TRACEME)");
    esc |= in_child(traceme_gadget, 0, "gadget ptrace(PTRACE_TRACEME)");
    pid_t victim = fork();
    if (victim < 0)
        setup_failed("fork");
    if (victim == 0) {
        for (;;)
            pause();
    }
    char what[120];
    snprintf(what, sizeof what, "sibling: gadget ptrace(PTRACE_ATTACH, %d)", victim);
    esc |= in_child(attach_gadget, victim, what);
    snprintf(what, sizeof what, "sibling: gadget ptrace(PTRACE_SEIZE, %d)", victim);
    esc |= in_child(seize_gadget, victim, what);
    snprintf(what, sizeof what, "sibling: libc ptrace(PTRACE_SEIZE, %d)", victim);
    esc |= in_child(seize_libc, victim, what);
    snprintf(what, sizeof what, "parent: gadget ptrace(PTRACE_SEIZE, own child %d)", victim);
    esc |= attempt(what, seize_gadget(victim));
    kill(victim, SIGKILL);
    waitpid(victim, NULL, __WALL);
    return verdict(esc);
}
