// A blocking read on a pipe interrupted by SIGALRM from setitimer: without
// SA_RESTART it fails with EINTR after the first tick; with SA_RESTART it is
// restarted until the handler (third tick) writes a byte. Also waitpid with
// and without SA_RESTART, and select, which is never restarted (EINTR even
// with SA_RESTART), and a one-shot ualarm() interrupting a read.
#include "util.h"
#include <signal.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/wait.h>

static int p[2];
static volatile int ticks;

static void on_alarm(int sig) {
    (void)sig;
    if (++ticks == 3) write(p[1], "!", 1);
}

static void timer(int ms) {
    struct itimerval it = {{0, ms * 1000}, {0, ms * 1000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

static void stop_timer(void) {
    struct itimerval it = {{0, 0}, {0, 0}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

static void install(int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
}

static void drain(void) {
    char c;
    while (ticks < 3) pause();
    CHECK(read(p[0], &c, 1) == 1);
}

int main(void) {
    CHECK(pipe(p) == 0);
    char c;

    install(0);
    ticks = 0;
    timer(20);
    errno = 0;
    ssize_t r = read(p[0], &c, 1);
    int e = errno, t = ticks;
    printf("no SA_RESTART: read returned %zd errno %s after %d tick(s)\n", r, strerrorname_np(e), t);
    CHECK(r == -1 && e == EINTR && t == 1);
    drain();
    stop_timer();

    install(SA_RESTART);
    ticks = 0;
    timer(20);
    r = read(p[0], &c, 1);
    t = ticks;
    stop_timer();
    printf("SA_RESTART: read returned %zd ('%c') after %d ticks\n", r, c, t);
    CHECK(r == 1 && c == '!' && t == 3);

    /* waitpid on a child that sleeps 200ms. */
    for (int restart = 0; restart < 2; restart++) {
        install(restart ? SA_RESTART : 0);
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            usleep(200000);
            _exit(6);
        }
        ticks = 0;
        timer(20);
        int st;
        errno = 0;
        pid_t w = waitpid(pid, &st, 0);
        e = errno;
        stop_timer();
        if (restart) {
            printf("SA_RESTART: waitpid returned the child, status %d\n", WEXITSTATUS(st));
            CHECK(w == pid);
        } else {
            printf("no SA_RESTART: waitpid failed with %s\n", strerrorname_np(e));
            CHECK(w == -1 && e == EINTR);
            CHECK(waitpid(pid, &st, 0) == pid);
        }
        if (ticks >= 3) CHECK(read(p[0], &c, 1) == 1);
    }

    /* select is not restarted even with SA_RESTART. */
    install(SA_RESTART);
    ticks = 0;
    timer(20);
    fd_set rf;
    FD_ZERO(&rf);
    FD_SET(p[0], &rf);
    struct timeval tv = {5, 0};
    errno = 0;
    int n = select(p[0] + 1, &rf, NULL, NULL, &tv);
    e = errno;
    stop_timer();
    printf("SA_RESTART: select returned %d errno %s\n", n, strerrorname_np(e));
    CHECK(n == -1 && e == EINTR);
    if (ticks >= 3) CHECK(read(p[0], &c, 1) == 1);

    /* A one-shot SIGALRM. */
    install(0);
    ticks = 0;
    ualarm(30000, 0);
    errno = 0;
    r = read(p[0], &c, 1);
    printf("ualarm: read returned %zd errno %s\n", r, strerrorname_np(errno));
    CHECK(r == -1 && ticks == 1);
    return 0;
}
