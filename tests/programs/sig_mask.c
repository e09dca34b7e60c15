// Signal masks: a blocked signal stays pending (sigpending) until unblocked,
// then is delivered before sigprocmask returns; inside a handler the mask is
// the old mask + sa_mask + the signal; the mask is restored afterwards; a
// handler that edits uc_sigmask in its ucontext changes the mask that
// sigreturn restores; SIGKILL/SIGSTOP cannot be blocked; SIG_SETMASK/SIG_UNBLOCK.
#include "util.h"
#include <signal.h>
#include <ucontext.h>

static volatile int delivered, had_usr1, had_usr2, had_term;

static void handler(int sig, siginfo_t *si, void *ucv) {
    (void)si;
    delivered++;
    sigset_t m;
    sigprocmask(SIG_BLOCK, NULL, &m);
    had_usr1 = sigismember(&m, SIGUSR1);
    had_usr2 = sigismember(&m, SIGUSR2);
    had_term = sigismember(&m, SIGTERM);
    if (sig == SIGHUP) {
        ucontext_t *uc = ucv;
        sigaddset(&uc->uc_sigmask, SIGWINCH);
    }
}

static void show(const char *when) {
    sigset_t m;
    sigprocmask(SIG_BLOCK, NULL, &m);
    printf("%s: blocked USR1=%d USR2=%d TERM=%d WINCH=%d KILL=%d STOP=%d\n", when, sigismember(&m, SIGUSR1),
           sigismember(&m, SIGUSR2), sigismember(&m, SIGTERM), sigismember(&m, SIGWINCH), sigismember(&m, SIGKILL),
           sigismember(&m, SIGSTOP));
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(sigaction(SIGHUP, &sa, NULL) == 0);

    show("start");
    sigset_t b, p;
    sigemptyset(&b);
    sigaddset(&b, SIGUSR1);
    sigaddset(&b, SIGTERM);
    CHECK(sigprocmask(SIG_BLOCK, &b, NULL) == 0);
    show("blocked");
    raise(SIGUSR1);
    sigpending(&p);
    printf("after raise: delivered=%d pending USR1=%d TERM=%d\n", delivered, sigismember(&p, SIGUSR1),
           sigismember(&p, SIGTERM));
    CHECK(delivered == 0 && sigismember(&p, SIGUSR1));

    sigemptyset(&b);
    sigaddset(&b, SIGUSR1);
    CHECK(sigprocmask(SIG_UNBLOCK, &b, NULL) == 0);
    printf("after unblock: delivered=%d; in handler USR1=%d USR2=%d TERM=%d\n", delivered, had_usr1, had_usr2, had_term);
    CHECK(delivered == 1 && had_usr1 && had_usr2 && had_term);
    sigpending(&p);
    printf("pending USR1 now=%d\n", sigismember(&p, SIGUSR1));
    show("restored");

    raise(SIGHUP);
    show("after a handler added WINCH to uc_sigmask");

    sigset_t all;
    sigfillset(&all);
    CHECK(sigprocmask(SIG_SETMASK, &all, NULL) == 0);
    show("fill");
    sigemptyset(&all);
    CHECK(sigprocmask(SIG_SETMASK, &all, NULL) == 0);
    show("empty");

    errno = 0;
    CHECK(sigprocmask(42, &all, NULL) == -1);
    printf("bad how: %s\n", strerrorname_np(errno));
    return 0;
}
