// timerfd: a nonblocking timer reads EAGAIN before expiry; a 10 ms periodic
// timer read after ~35 ms reports at least 3 expirations; timerfd_gettime
// shows the interval; disarming makes gettime zero; an absolute
// CLOCK_REALTIME timer in the past fires at once; poll wakes on expiry;
// reads with a short buffer fail with EINVAL.
#include "util.h"
#include <poll.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>

int main(void) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    CHECK(fd >= 0);
    uint64_t exp;
    errno = 0;
    ssize_t r = read(fd, &exp, sizeof exp);
    printf("unarmed read: %zd %s\n", r, strerrorname_np(errno));

    struct itimerspec its = {{0, 10 * 1000 * 1000}, {0, 10 * 1000 * 1000}}, cur;
    CHECK(timerfd_settime(fd, 0, &its, NULL) == 0);
    CHECK(timerfd_gettime(fd, &cur) == 0);
    printf("gettime: interval %ld ns, value set: %d\n", cur.it_interval.tv_nsec,
           cur.it_value.tv_sec > 0 || cur.it_value.tv_nsec > 0);
    struct timespec t = {0, 35 * 1000 * 1000};
    nanosleep(&t, NULL);
    CHECK(read(fd, &exp, sizeof exp) == sizeof exp);
    printf("expirations after 35 ms: at least 3: %d\n", exp >= 3);

    struct pollfd pf = {fd, POLLIN, 0};
    int n = poll(&pf, 1, 1000);
    CHECK(read(fd, &exp, sizeof exp) == sizeof exp);
    printf("poll woke: %d, expirations >= 1: %d\n", n, exp >= 1);

    char small[4];
    errno = 0;
    r = read(fd, small, sizeof small);
    printf("short read buffer: %zd %s\n", r, strerrorname_np(errno));

    struct itimerspec off = {{0, 0}, {0, 0}};
    CHECK(timerfd_settime(fd, 0, &off, NULL) == 0);
    CHECK(timerfd_gettime(fd, &cur) == 0);
    printf("disarmed: value %ld.%09ld\n", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);
    close(fd);

    fd = timerfd_create(CLOCK_REALTIME, 0);
    CHECK(fd >= 0);
    struct itimerspec past = {{0, 0}, {1, 0}};
    CHECK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &past, NULL) == 0);
    CHECK(read(fd, &exp, sizeof exp) == sizeof exp);
    printf("absolute time in the past: %llu expiration\n", (unsigned long long)exp);
    close(fd);
    printf("bad clock: %s\n", RESULT(timerfd_create(12345, 0)));
    return 0;
}
