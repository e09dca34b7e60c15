// SIGCHLD: an SA_SIGINFO handler sees CLD_EXITED with the child's pid and
// status, CLD_KILLED with the signal, and CLD_STOPPED/CLD_CONTINUED unless
// SA_NOCLDSTOP; with SA_NOCLDWAIT (or SIGCHLD ignored) children are reaped
// automatically and wait fails with ECHILD.
#include "util.h"
#include <signal.h>
#include <sys/wait.h>

static volatile int got, code_seen, status_seen, pid_seen;

static void handler(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    got++;
    code_seen = si->si_code;
    status_seen = si->si_status;
    pid_seen = si->si_pid;
}

static void exit_4(int sig) {
    (void)sig;
    _exit(4);
}

static const char *code(int c) {
    switch (c) {
    case CLD_EXITED: return "CLD_EXITED";
    case CLD_KILLED: return "CLD_KILLED";
    case CLD_DUMPED: return "CLD_DUMPED";
    case CLD_STOPPED: return "CLD_STOPPED";
    case CLD_CONTINUED: return "CLD_CONTINUED";
    default: return "other";
    }
}

static void install(int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
}

static void wait_for_signal(int n) {
    sigset_t none;
    sigemptyset(&none);
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    while (got < n) sigsuspend(&none);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

int main(void) {
    install(0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(33);
    wait_for_signal(1);
    printf("exit: %s status %d pid matches %d\n", code(code_seen), status_seen, pid_seen == pid);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);

    got = 0;
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    CHECK(kill(pid, SIGTERM) == 0);
    wait_for_signal(1);
    printf("kill: %s status %d\n", code(code_seen), status_seen);
    CHECK(waitpid(pid, &st, 0) == pid);

    got = 0;
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGUSR1, exit_4);
        raise(SIGSTOP);
        for (;;) pause();
    }
    wait_for_signal(1);
    printf("stop: %s status %d\n", code(code_seen), status_seen);
    CHECK(waitpid(pid, &st, WUNTRACED) == pid);
    CHECK(kill(pid, SIGCONT) == 0);
    wait_for_signal(2);
    printf("continue: %s status %d\n", code(code_seen), status_seen);
    CHECK(kill(pid, SIGUSR1) == 0);
    wait_for_signal(3);
    printf("then exit: %s status %d\n", code(code_seen), status_seen);
    CHECK(waitpid(pid, &st, 0) == pid);

    install(SA_NOCLDSTOP);
    got = 0;
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        raise(SIGSTOP);
        _exit(5);
    }
    CHECK(waitpid(pid, &st, WUNTRACED) == pid);
    printf("SA_NOCLDSTOP: stopped child, %d signals\n", got);
    CHECK(kill(pid, SIGCONT) == 0);
    wait_for_signal(1);
    printf("SA_NOCLDSTOP: %s status %d\n", code(code_seen), status_seen);
    CHECK(waitpid(pid, &st, 0) == pid);

    install(SA_NOCLDWAIT);
    got = 0;
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(6);
    errno = 0;
    pid_t w = waitpid(pid, &st, 0);
    printf("SA_NOCLDWAIT: waitpid %d %s\n", w, strerrorname_np(errno));

    signal(SIGCHLD, SIG_IGN);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(6);
    errno = 0;
    w = waitpid(pid, &st, 0);
    printf("SIG_IGN: waitpid %d %s\n", w, strerrorname_np(errno));
    return 0;
}
