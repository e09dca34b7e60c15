// SA_RESETHAND: the first SIGUSR1 runs the handler, which finds its
// disposition already reset to SIG_DFL (the signal itself is still blocked
// while the handler runs); the second SIGUSR1 kills the program (exit status
// -10).
// status: -10
#include "util.h"
#include <signal.h>

static volatile int runs, was_default, blocked_inside;

static void handler(int sig) {
    runs++;
    struct sigaction cur;
    sigaction(sig, NULL, &cur);
    was_default = cur.sa_handler == SIG_DFL;
    sigset_t m;
    sigprocmask(SIG_BLOCK, NULL, &m);
    blocked_inside = sigismember(&m, sig);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    raise(SIGUSR1);
    printf("first raise: runs=%d disposition reset=%d blocked inside=%d\n", runs, was_default, blocked_inside);
    struct sigaction cur;
    sigaction(SIGUSR1, NULL, &cur);
    printf("after: handler is SIG_DFL=%d, SA_RESETHAND flag kept=%d\n", cur.sa_handler == SIG_DFL,
           (cur.sa_flags & SA_RESETHAND) != 0);
    printf("second raise kills\n");
    fflush(stdout);
    raise(SIGUSR1);
    printf("not reached\n");
    return 0;
}
