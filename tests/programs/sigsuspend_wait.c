// sigsuspend with a temporary mask lets a blocked timer signal in (handler
// runs, EINTR, the old mask is back); sigwaitinfo consumes a queued blocked
// signal with its si_value and no handler runs; sigtimedwait times out with
// EAGAIN and also picks up a signal generated while it waits; pause() wakes
// for a handled signal.
#include "util.h"
#include <signal.h>
#include <sys/time.h>

static volatile int handled;
static void handler(int sig) { handled = sig; }

static void oneshot_ms(int ms) {
    struct itimerval it = {{0, 0}, {0, ms * 1000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

int main(void) {
    signal(SIGALRM, handler);
    signal(SIGUSR1, handler);
    sigset_t block, old, waitmask;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigaddset(&block, SIGUSR1);
    CHECK(sigprocmask(SIG_BLOCK, &block, &old) == 0);

    oneshot_ms(20);
    sigfillset(&waitmask);
    sigdelset(&waitmask, SIGALRM);
    errno = 0;
    int r = sigsuspend(&waitmask);
    int e = errno;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("sigsuspend: returned %d %s, handled %s, SIGALRM blocked again=%d\n", r, strerrorname_np(e),
           handled == SIGALRM ? "SIGALRM" : "?", sigismember(&now, SIGALRM));

    handled = 0;
    union sigval v = {.sival_int = 31337};
    CHECK(sigqueue(getpid(), SIGUSR1, v) == 0);
    siginfo_t si;
    sigemptyset(&waitmask);
    sigaddset(&waitmask, SIGUSR1);
    r = sigwaitinfo(&waitmask, &si);
    printf("sigwaitinfo: signal %d, SI_QUEUE=%d, value %d, handler ran=%d\n", r, si.si_code == SI_QUEUE,
           si.si_value.sival_int, handled != 0);

    struct timespec ts = {0, 20 * 1000 * 1000};
    errno = 0;
    r = sigtimedwait(&waitmask, &si, &ts);
    printf("sigtimedwait with nothing pending: %d %s\n", r, strerrorname_np(errno));

    sigaddset(&waitmask, SIGALRM);
    oneshot_ms(20);
    ts.tv_sec = 5;
    r = sigtimedwait(&waitmask, &si, &ts);
    printf("sigtimedwait for the timer: signal %d, SI_KERNEL=%d handler ran=%d\n", r, si.si_code == SI_KERNEL,
           handled != 0);

    CHECK(sigprocmask(SIG_SETMASK, &old, NULL) == 0);
    oneshot_ms(20);
    errno = 0;
    r = pause();
    printf("pause: %d %s, handled %s\n", r, strerrorname_np(errno), handled == SIGALRM ? "SIGALRM" : "?");
    return 0;
}
