// epoll on pipes: level-triggered readiness repeats, edge-triggered reports
// once per new write, EPOLLONESHOT disarms until EPOLL_CTL_MOD re-arms,
// event data is returned as registered, EPOLLHUP after the writer closes,
// ctl errors (EEXIST, ENOENT, EBADF), a timeout with nothing ready, a wakeup
// from another thread, and epoll_pwait with a signal mask.
// cflags: -pthread
#include "util.h"
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>

static int tp[2];
static void *writer(void *arg) {
    (void)arg;
    usleep(30000);
    CHECK(write(tp[1], "t", 1) == 1);
    return NULL;
}

int main(void) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK(ep >= 0);
    int p[2];
    CHECK(pipe(p) == 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x1122334455667788ULL}, out[4];
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
    printf("add twice: %s\n", RESULT(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev)));

    int n = epoll_wait(ep, out, 4, 20);
    printf("nothing ready, 20ms: %d\n", n);

    CHECK(write(p[1], "ab", 2) == 2);
    n = epoll_wait(ep, out, 4, 1000);
    printf("level-triggered: %d events, EPOLLIN %d, data %llx\n", n, (out[0].events & EPOLLIN) != 0,
           (unsigned long long)out[0].data.u64);
    n = epoll_wait(ep, out, 4, 0);
    printf("level-triggered again without reading: %d\n", n);

    ev.events = EPOLLIN | EPOLLET;
    ev.data.u32 = 7;
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev) == 0);
    n = epoll_wait(ep, out, 4, 0);
    int n2 = epoll_wait(ep, out, 4, 0);
    CHECK(write(p[1], "c", 1) == 1);
    int n3 = epoll_wait(ep, out, 4, 0);
    printf("edge-triggered: after MOD %d, again %d, after a new write %d (data %u)\n", n, n2, n3, out[0].data.u32);

    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.u32 = 8;
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev) == 0);
    n = epoll_wait(ep, out, 4, 0);
    n2 = epoll_wait(ep, out, 4, 0);
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev) == 0);
    n3 = epoll_wait(ep, out, 4, 0);
    printf("oneshot: %d, then %d, re-armed %d\n", n, n2, n3);

    char buf[8];
    CHECK(read(p[0], buf, sizeof buf) == 3);
    ev.events = EPOLLIN;
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev) == 0);
    close(p[1]);
    n = epoll_wait(ep, out, 4, 1000);
    printf("writer closed: %d, EPOLLHUP %d\n", n, (out[0].events & EPOLLHUP) != 0);
    CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL) == 0);
    printf("delete twice: %s\n", RESULT(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL)));
    close(p[0]);
    printf("add a closed fd: %s\n", RESULT(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev)));

    CHECK(pipe(tp) == 0);
    ev.events = EPOLLIN;
    ev.data.fd = 1234;
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, tp[0], &ev) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, writer, NULL) == 0);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    n = epoll_pwait(ep, out, 4, 5000, &mask);
    printf("epoll_pwait woken by a thread: %d, data %d\n", n, out[0].data.fd);
    CHECK(pthread_join(t, NULL) == 0);
    return 0;
}
