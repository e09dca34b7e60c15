// Nested signals: a SIGUSR1 handler raising SIGUSR2 is interrupted by the
// SIGUSR2 handler at once, unless SIGUSR2 is in SIGUSR1's sa_mask, in which
// case SIGUSR2 runs after SIGUSR1's handler returns; a handler spinning in a
// pure user-space loop is interrupted asynchronously by a timer signal; three
// levels of nesting unwind in order.
// as-nobody
#include "util.h"
#include <signal.h>
#include <sys/time.h>

static char trace[128];
static volatile int tlen;
static volatile int alarm_seen;

static void note(const char *s) {
    while (*s && tlen < (int)sizeof trace - 1) trace[tlen++] = *s++;
    trace[tlen] = 0;
}

static void on_usr2(int sig) {
    (void)sig;
    note("<2");
    raise(SIGHUP);
    note("2>");
}
static void on_hup(int sig) {
    (void)sig;
    note("<H>");
}
static void on_usr1(int sig) {
    (void)sig;
    note("<1");
    raise(SIGUSR2);
    note("1>");
}
static void on_alarm(int sig) {
    (void)sig;
    alarm_seen = 1;
    note("<A>");
}
static void on_spin(int sig) {
    (void)sig;
    note("<S");
    struct itimerval it = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &it, NULL);
    while (!alarm_seen) { /* no system calls */ }
    note("S>");
}

static void install(int sig, void (*h)(int), int masked) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    if (masked) sigaddset(&sa.sa_mask, masked);
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

int main(void) {
    install(SIGUSR2, on_usr2, 0);
    install(SIGHUP, on_hup, 0);
    install(SIGUSR1, on_usr1, 0);
    raise(SIGUSR1);
    printf("nested:   %s\n", trace);
    CHECK(strcmp(trace, "<1<2<H>2>1>") == 0);

    tlen = 0;
    install(SIGUSR1, on_usr1, SIGUSR2);
    raise(SIGUSR1);
    printf("deferred: %s\n", trace);
    CHECK(strcmp(trace, "<11><2<H>2>") == 0);

    tlen = 0;
    install(SIGALRM, on_alarm, 0);
    install(SIGUSR1, on_spin, 0);
    raise(SIGUSR1);
    printf("async:    %s\n", trace);
    CHECK(strcmp(trace, "<S<A>S>") == 0);
    return 0;
}
