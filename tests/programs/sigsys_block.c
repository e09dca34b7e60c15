// Blocking SIGSYS is the program's business: after sigprocmask(SIG_BLOCK,
// {SIGSYS}) the mask reads back with SIGSYS blocked (also from a full
// sigfillset mask and from pthread_sigmask); raise leaves it pending
// (sigpending), the handler does not run until SIGSYS is unblocked, then it
// runs before sigprocmask returns. A blocked SIGSYS can also be consumed
// with sigwaitinfo, and a fork child inherits the blocked mask.
// as-nobody
#include "util.h"
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

static volatile int handled;
static void handler(int sig) { handled += sig == SIGSYS; }

static int sigsys_blocked(void) {
    sigset_t m;
    CHECK(sigprocmask(SIG_BLOCK, NULL, &m) == 0);
    return sigismember(&m, SIGSYS);
}

int main(void) {
    signal(SIGSYS, handler);
    printf("initially blocked: %d\n", sigsys_blocked());

    sigset_t s, p;
    sigemptyset(&s);
    sigaddset(&s, SIGSYS);
    CHECK(sigprocmask(SIG_BLOCK, &s, NULL) == 0);
    printf("after SIG_BLOCK: blocked %d\n", sigsys_blocked());
    sigset_t pm;
    CHECK(pthread_sigmask(SIG_BLOCK, NULL, &pm) == 0);
    printf("pthread_sigmask agrees: %d\n", sigismember(&pm, SIGSYS));

    CHECK(raise(SIGSYS) == 0);
    CHECK(getpid() > 0);
    CHECK(sigpending(&p) == 0);
    printf("after raise: pending %d, handled %d\n", sigismember(&p, SIGSYS), handled);
    CHECK(sigismember(&p, SIGSYS) && handled == 0);

    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        sigset_t cp;
        sigpending(&cp);
        printf("child: blocked %d, pending %d (pending signals are not inherited)\n", sigsys_blocked(),
               sigismember(&cp, SIGSYS));
        exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);

    CHECK(sigprocmask(SIG_UNBLOCK, &s, NULL) == 0);
    printf("after SIG_UNBLOCK: handled %d, blocked %d\n", handled, sigsys_blocked());
    CHECK(handled == 1);

    sigset_t all;
    sigfillset(&all);
    CHECK(sigprocmask(SIG_SETMASK, &all, NULL) == 0);
    printf("sigfillset mask: SIGSYS blocked %d\n", sigsys_blocked());
    CHECK(kill(getpid(), SIGSYS) == 0);
    siginfo_t si;
    int r = sigwaitinfo(&s, &si);
    printf("sigwaitinfo took signal %d (SI_USER=%d), handled %d\n", r, si.si_code == SI_USER, handled);
    sigemptyset(&all);
    CHECK(sigprocmask(SIG_SETMASK, &all, NULL) == 0);
    CHECK(sigpending(&p) == 0);
    printf("finally: pending %d, handled %d\n", sigismember(&p, SIGSYS), handled);
    return 0;
}
