// select, pselect, poll and ppoll on pipes: nothing ready with a zero or
// short timeout (select updates the remaining timeval to zero), readability
// after a write, writability of an empty pipe, POLLHUP after the writer
// closes, POLLERR on a write end whose reader is gone, POLLNVAL for a closed
// descriptor, EBADF from select, and readiness caused by a forked child.
#include "util.h"
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/wait.h>

int main(void) {
    int p[2];
    CHECK(pipe(p) == 0);
    fd_set r, w;
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    struct timeval tv = {0, 20000};
    int n = select(p[0] + 1, &r, NULL, NULL, &tv);
    printf("select, empty pipe, 20ms: %d, timeval left %ld.%06ld\n", n, (long)tv.tv_sec, (long)tv.tv_usec);

    FD_ZERO(&w);
    FD_SET(p[1], &w);
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    tv.tv_sec = 0;
    tv.tv_usec = 0;
    n = select(p[1] + 1, &r, &w, NULL, &tv);
    printf("select, read+write sets: %d, readable %d, writable %d\n", n, FD_ISSET(p[0], &r), FD_ISSET(p[1], &w));

    CHECK(write(p[1], "abc", 3) == 3);
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    struct timespec ts = {1, 0};
    sigset_t none;
    sigemptyset(&none);
    n = pselect(p[0] + 1, &r, NULL, NULL, &ts, &none);
    printf("pselect after a write: %d, readable %d\n", n, FD_ISSET(p[0], &r));

    struct pollfd pf[3] = {{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}, {999, POLLIN, 0}};
    n = poll(pf, 3, 0);
    printf("poll: %d, revents in=%#x out=%#x closed-fd=%#x (POLLNVAL=%#x)\n", n, pf[0].revents, pf[1].revents,
           pf[2].revents, POLLNVAL);

    char buf[8];
    CHECK(read(p[0], buf, sizeof buf) == 3);
    pf[0].revents = 0;
    n = poll(pf, 1, 20);
    printf("poll, drained, 20ms: %d\n", n);

    close(p[1]);
    n = poll(pf, 1, 1000);
    printf("poll after writer closed: %d, POLLHUP %d POLLIN %d\n", n, (pf[0].revents & POLLHUP) != 0,
           (pf[0].revents & POLLIN) != 0);
    close(p[0]);

    CHECK(pipe(p) == 0);
    close(p[0]);
    struct pollfd wp = {p[1], POLLOUT, 0};
    n = poll(&wp, 1, 0);
    printf("poll on a write end without reader: %d, POLLERR %d\n", n, (wp.revents & POLLERR) != 0);
    close(p[1]);

    FD_ZERO(&r);
    FD_SET(p[1], &r);
    tv.tv_sec = 0;
    tv.tv_usec = 0;
    errno = 0;
    n = select(p[1] + 1, &r, NULL, NULL, &tv);
    printf("select on a closed descriptor: %d %s\n", n, strerrorname_np(errno));

    CHECK(pipe(p) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        usleep(50000);
        write(p[1], "x", 1);
        _exit(0);
    }
    struct pollfd cp = {p[0], POLLIN, 0};
    ts.tv_sec = 5;
    ts.tv_nsec = 0;
    n = ppoll(&cp, 1, &ts, &none);
    printf("ppoll woken by a child's write: %d, POLLIN %d\n", n, (cp.revents & POLLIN) != 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return 0;
}
