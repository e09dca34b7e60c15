// Sleeps interrupted by a signal: clock_nanosleep (relative, 1 s) returns
// EINTR directly after a 50 ms timer signal with the remaining time between
// 0.5 and 1 s; nanosleep fails with errno EINTR (never restarted, even with
// SA_RESTART) and fills rem; an absolute TIMER_ABSTIME sleep is interrupted
// once and, repeated with the same deadline, ends at that deadline;
// uninterrupted short sleeps return 0; invalid arguments give EINVAL.
#include "util.h"
#include <signal.h>
#include <sys/time.h>
#include <time.h>

static volatile int ticks;
static void handler(int sig) {
    (void)sig;
    ticks++;
}

static void oneshot_ms(int ms) {
    struct itimerval it = {{0, 0}, {0, ms * 1000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

static double secs(struct timespec t) { return (double)t.tv_sec + (double)t.tv_nsec / 1e9; }

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);

    struct timespec req = {1, 0}, rem = {0, 0};
    oneshot_ms(50);
    int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
    printf("clock_nanosleep: %s, ticks %d, remaining in (0.5, 1): %d\n", r ? strerrorname_np(r) : "0", ticks,
           secs(rem) > 0.5 && secs(rem) < 1.0);

    rem.tv_sec = rem.tv_nsec = 0;
    oneshot_ms(50);
    errno = 0;
    r = nanosleep(&req, &rem);
    printf("nanosleep: %d %s, ticks %d, remaining in (0.5, 1): %d\n", r, strerrorname_np(errno), ticks,
           secs(rem) > 0.5 && secs(rem) < 1.0);

    struct timespec now, deadline;
    clock_gettime(CLOCK_MONOTONIC, &now);
    deadline = now;
    deadline.tv_nsec += 150 * 1000 * 1000;
    if (deadline.tv_nsec >= 1000000000) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000; }
    oneshot_ms(30);
    int tries = 0;
    while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) == EINTR) tries++;
    clock_gettime(CLOCK_MONOTONIC, &now);
    printf("absolute sleep: %d after %d EINTR, reached the deadline: %d\n", r, tries, secs(now) >= secs(deadline));

    struct timespec shortreq = {0, 5 * 1000 * 1000};
    printf("short uninterrupted nanosleep: %d\n", nanosleep(&shortreq, NULL));
    struct timespec bad = {0, 1000000000};
    r = clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL);
    printf("tv_nsec = 1e9: %s\n", strerrorname_np(r));
    r = clock_nanosleep(12345, 0, &shortreq, NULL);
    printf("bad clock: %s\n", strerrorname_np(r));
    return 0;
}
