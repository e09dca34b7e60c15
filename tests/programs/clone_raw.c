// Raw clone without the C library: a thread created with CLONE_VM|
// CLONE_THREAD|... on a stack of our own (the child starts on that stack in
// assembly, makes raw getpid/gettid syscalls and exits with exit(2)), its
// tid reported through CLONE_PARENT_SETTID and cleared with a futex wake by
// CLONE_CHILD_CLEARTID; a fork-like clone(SIGCHLD); and clone3 with
// CLONE_PIDFD, whose pidfd polls readable once the child exits and works
// with waitid(P_PIDFD).
// as-nobody
#include "util.h"
#include <linux/futex.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>

long raw_clone_thread(unsigned long flags, void *stack, int *ptid, int *ctid, unsigned long tls);
__asm__(".text\n"
        ".globl raw_clone_thread\n"
        "raw_clone_thread:\n"
        "    mov %rcx, %r10\n"
        "    mov $56, %eax\n"
        "    syscall\n"
        "    test %rax, %rax\n"
        "    jnz 1f\n"
        "    pop %rax\n" /* fn */
        "    pop %rdi\n" /* arg */
        "    call *%rax\n"
        "    mov %eax, %edi\n"
        "    mov $60, %eax\n"
        "    syscall\n"
        "    hlt\n"
        "1:  ret\n");

static long raw0(long nr) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "0"(nr) : "rcx", "r11", "memory");
    return r;
}

static volatile long child_pid, child_tid, child_arg;

static int thread_fn(void *arg) {
    child_arg = (long)arg;
    child_pid = raw0(SYS_getpid);
    child_tid = raw0(SYS_gettid);
    return 0;
}

static int ptid, ctid;

int main(void) {
    size_t size = 256 * 1024;
    char *stack = malloc(size);
    CHECK(stack != NULL);
    uintptr_t *top = (uintptr_t *)(((uintptr_t)stack + size) & ~(uintptr_t)15);
    top -= 2;
    top[0] = (uintptr_t)thread_fn;
    top[1] = 12345;
    unsigned long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                          CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    ctid = -1;
    long tid = raw_clone_thread(flags, top, &ptid, &ctid, 0);
    CHECK(tid > 0);
    while (1) {
        int v = __atomic_load_n(&ctid, __ATOMIC_SEQ_CST);
        if (v == 0) break;
        syscall(SYS_futex, &ctid, FUTEX_WAIT, v, NULL, NULL, 0);
    }
    printf("raw thread: ptid is the tid %d, same pid %d, own tid %d, arg %ld, ctid cleared %d\n", ptid == tid,
           child_pid == getpid(), child_tid == tid, child_arg, ctid == 0);

    fflush(stdout);
    long pid = syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
    CHECK(pid >= 0);
    if (pid == 0) _exit(7);
    int st;
    CHECK(waitpid((pid_t)pid, &st, 0) == pid);
    printf("clone(SIGCHLD): exited %d status %d\n", WIFEXITED(st), WEXITSTATUS(st));

    int pidfd = -1;
    struct clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = CLONE_PIDFD;
    ca.pidfd = (uintptr_t)&pidfd;
    ca.exit_signal = SIGCHLD;
    pid = syscall(SYS_clone3, &ca, sizeof ca);
    CHECK(pid >= 0);
    if (pid == 0) {
        usleep(20000);
        _exit(9);
    }
    struct pollfd pf = {pidfd, POLLIN, 0};
    int n = poll(&pf, 1, 5000);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CHECK(waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) == 0);
    printf("clone3 with CLONE_PIDFD: pidfd valid %d, poll %d, waitid pid matches %d, CLD_EXITED %d, status %d\n",
           pidfd >= 0, n, si.si_pid == pid, si.si_code == CLD_EXITED, si.si_status);
    return 0;
}
