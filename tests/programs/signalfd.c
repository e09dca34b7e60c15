// signalfd: with SIGUSR1/SIGUSR2 blocked, raised signals are read from the
// descriptor as signalfd_siginfo (ssi_signo, ssi_code SI_TKILL/SI_QUEUE,
// ssi_int, ssi_pid is ours) in signal-number order; a nonblocking read with
// nothing pending is EAGAIN; poll wakes when a child sends a signal; the
// mask can be changed with a second signalfd call on the same descriptor;
// no handler ever runs.
#include "util.h"
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

static volatile int handled;
static void handler(int sig) {
    (void)sig;
    handled++;
}

static const char *code(int c) {
    return c == SI_USER ? "SI_USER" : c == SI_TKILL ? "SI_TKILL" : c == SI_QUEUE ? "SI_QUEUE" : "other";
}

int main(void) {
    signal(SIGUSR1, handler);
    signal(SIGUSR2, handler);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    sigaddset(&m, SIGUSR2);
    CHECK(sigprocmask(SIG_BLOCK, &m, NULL) == 0);
    int fd = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK(fd >= 0);

    struct signalfd_siginfo si;
    errno = 0;
    ssize_t r = read(fd, &si, sizeof si);
    printf("nothing pending: %zd %s\n", r, strerrorname_np(errno));

    union sigval v = {.sival_int = 555};
    CHECK(sigqueue(getpid(), SIGUSR2, v) == 0);
    CHECK(raise(SIGUSR1) == 0);
    for (int i = 0; i < 2; i++) {
        CHECK(read(fd, &si, sizeof si) == sizeof si);
        printf("read: signo %u code %s int %d pid ours %d\n", si.ssi_signo, code(si.ssi_code), si.ssi_int,
               si.ssi_pid == (uint32_t)getpid());
    }

    fflush(stdout);
    pid_t parent = getpid();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        usleep(30000);
        kill(parent, SIGUSR1);
        _exit(0);
    }
    struct pollfd pf = {fd, POLLIN, 0};
    int n = poll(&pf, 1, 5000);
    CHECK(read(fd, &si, sizeof si) == sizeof si);
    printf("poll woke: %d; signo %u code %s from the child %d\n", n, si.ssi_signo, code(si.ssi_code),
           si.ssi_pid == (uint32_t)pid);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);

    sigset_t only2;
    sigemptyset(&only2);
    sigaddset(&only2, SIGUSR2);
    CHECK(signalfd(fd, &only2, 0) == fd);
    raise(SIGUSR1);
    errno = 0;
    r = read(fd, &si, sizeof si);
    printf("after narrowing the mask to SIGUSR2, SIGUSR1 is not read: %zd %s\n", r, strerrorname_np(errno));
    sigset_t pend;
    sigpending(&pend);
    printf("SIGUSR1 still pending: %d, handlers run: %d\n", sigismember(&pend, SIGUSR1), handled);
    return 0;
}
