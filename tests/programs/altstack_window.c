// A program with its own alternate signal stack and SA_ONSTACK handlers
// (CPython with faulthandler, Go, Rust): signals that arrive while a blocking
// call waits run their handler on that stack, and the handler makes system
// calls of its own. Under strata the blocking call is being performed by
// strata's handler, whose frame also sits on that stack: nothing may be
// overwritten, and the call must end with EINTR as natively.
// as-nobody
#include "util.h"
#include <signal.h>
#include <sys/time.h>
#include <time.h>

static char *alt;
static size_t alt_size = 64 * 1024;
static int wake[2];
static volatile int handled, on_alt;

static void on_alarm(int sig) {
    char here;
    (void)sig;
    on_alt += (&here >= alt && &here < alt + alt_size);
    /* system calls inside the handler: a write and a mask query */
    CHECK(write(wake[1], "x", 1) == 1);
    sigset_t cur;
    CHECK(sigprocmask(SIG_BLOCK, NULL, &cur) == 0);
    CHECK(sigismember(&cur, SIGALRM));
    handled++;
}

int main(void) {
    alt = malloc(alt_size);
    stack_t ss = {.ss_sp = alt, .ss_size = alt_size};
    CHECK(sigaltstack(&ss, NULL) == 0);
    CHECK(pipe(wake) == 0);
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_ONSTACK; /* no SA_RESTART: the blocking call sees EINTR */
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    int eintr_read = 0, eintr_sleep = 0;
    for (int i = 0; i < 20; i++) {
        struct itimerval it = {.it_value = {.tv_usec = 2000}};
        CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
        int idle[2];
        CHECK(pipe(idle) == 0);
        char c;
        ssize_t r = read(idle[0], &c, 1); /* blocks until the alarm */
        eintr_read += (r == -1 && errno == EINTR);
        close(idle[0]);
        close(idle[1]);
        CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
        struct timespec t = {.tv_sec = 5};
        eintr_sleep += (nanosleep(&t, &t) == -1 && errno == EINTR);
    }
    char buf[64];
    ssize_t n = read(wake[0], buf, sizeof buf);
    printf("handled %d, on the alternate stack %d, wake bytes %zd\n", handled, on_alt, n);
    printf("read interrupted %d times, nanosleep interrupted %d times\n", eintr_read, eintr_sleep);
    return 0;
}
