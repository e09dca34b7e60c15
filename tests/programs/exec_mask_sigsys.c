// The signal mask across exec, SIGSYS included: the program blocks SIGSYS,
// SIGUSR2 and a real-time signal, makes SIGUSR2 and SIGRTMIN+3 pending (sent
// to itself while blocked), and execs itself. The new image must start with
// the same mask (under strata, SIGSYS is blocked virtually and the exec
// itself runs with every signal blocked: the new runtime puts the program's
// mask back from its launch configuration), with both signals still pending,
// and must receive them once it unblocks them.
// as-nobody
#include "util.h"
#include <signal.h>

static volatile sig_atomic_t got_usr2, got_rt;
static void on_usr2(int sig) {
    (void)sig;
    got_usr2++;
}
static void on_rt(int sig) {
    (void)sig;
    got_rt++;
}

int main(int argc, char **argv) {
    int rt = SIGRTMIN + 3;
    if (argc > 1 && !strcmp(argv[1], "after")) {
        sigset_t cur, pend;
        CHECK(sigprocmask(SIG_BLOCK, NULL, &cur) == 0);
        CHECK(sigpending(&pend) == 0);
        printf("after exec: blocked SIGSYS %d SIGUSR2 %d RT+3 %d SIGUSR1 %d; pending SIGUSR2 %d RT+3 %d\n",
               sigismember(&cur, SIGSYS), sigismember(&cur, SIGUSR2), sigismember(&cur, rt),
               sigismember(&cur, SIGUSR1), sigismember(&pend, SIGUSR2), sigismember(&pend, rt));
        signal(SIGUSR2, on_usr2);
        signal(rt, on_rt);
        sigset_t un;
        sigemptyset(&un);
        sigaddset(&un, SIGUSR2);
        sigaddset(&un, rt);
        CHECK(sigprocmask(SIG_UNBLOCK, &un, NULL) == 0);
        printf("delivered once unblocked: SIGUSR2 %d RT+3 %d\n", (int)got_usr2, (int)got_rt);
        return 0;
    }
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGSYS);
    sigaddset(&m, SIGUSR2);
    sigaddset(&m, rt);
    CHECK(sigprocmask(SIG_BLOCK, &m, NULL) == 0);
    CHECK(kill(getpid(), SIGUSR2) == 0);
    CHECK(kill(getpid(), rt) == 0);
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "after", (char *)NULL);
    perror("execl");
    return 1;
}
