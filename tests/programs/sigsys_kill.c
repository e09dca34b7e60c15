// The program owns SIGSYS: its SA_SIGINFO handler runs for kill(getpid(),
// SIGSYS) with si_code SI_USER and our pid, for raise (SI_TKILL) and for
// sigqueue (SI_QUEUE with the value); sigaction reports the handler back;
// system calls work inside the handler. With SIG_IGN a SIGSYS is ignored;
// with SIG_DFL the last kill terminates the program (exit status -31).
// status: -31
#include "util.h"
#include <signal.h>

static volatile int count, sig_seen, code_seen, pid_ok, value_seen, getpid_ok;

static void handler(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    count++;
    sig_seen = sig;
    code_seen = si->si_code;
    pid_ok = si->si_pid == getpid();
    value_seen = si->si_value.sival_int;
    getpid_ok = getppid() > 0 && getpid() > 0;
}

static const char *code(int c) {
    return c == SI_USER ? "SI_USER" : c == SI_TKILL ? "SI_TKILL" : c == SI_QUEUE ? "SI_QUEUE" : "other";
}

int main(void) {
    struct sigaction sa, back;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
    CHECK(sigaction(SIGSYS, NULL, &back) == 0);
    printf("sigaction reports our handler: %d, SA_SIGINFO: %d\n", back.sa_sigaction == handler,
           (back.sa_flags & SA_SIGINFO) != 0);

    CHECK(kill(getpid(), SIGSYS) == 0);
    printf("kill: count=%d sig=%d code=%s pid_ok=%d syscalls in handler ok=%d\n", count, sig_seen, code(code_seen),
           pid_ok, getpid_ok);
    CHECK(count == 1 && sig_seen == SIGSYS && code_seen == SI_USER && pid_ok);

    CHECK(raise(SIGSYS) == 0);
    printf("raise: count=%d code=%s\n", count, code(code_seen));

    union sigval v = {.sival_int = 99};
    CHECK(sigqueue(getpid(), SIGSYS, v) == 0);
    printf("sigqueue: count=%d code=%s value=%d\n", count, code(code_seen), value_seen);

    signal(SIGSYS, SIG_IGN);
    CHECK(kill(getpid(), SIGSYS) == 0);
    printf("SIG_IGN: still alive, count=%d\n", count);

    signal(SIGSYS, SIG_DFL);
    printf("SIG_DFL: kill(getpid(), SIGSYS) terminates\n");
    fflush(stdout);
    kill(getpid(), SIGSYS);
    printf("not reached\n");
    return 0;
}
