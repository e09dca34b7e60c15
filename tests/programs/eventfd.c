// eventfd: writes add to the counter and a read returns and clears it;
// EFD_SEMAPHORE reads decrement by one; EFD_NONBLOCK reads of a zero counter
// give EAGAIN; writing 2^64-1 is EINVAL; an overflowing nonblocking write is
// EAGAIN; a thread blocked in read is woken by a write from main; poll
// reports POLLIN/POLLOUT.
// cflags: -pthread
#include "util.h"
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>

static int efd;
static void *reader(void *arg) {
    (void)arg;
    uint64_t v;
    CHECK(read(efd, &v, sizeof v) == sizeof v);
    return (void *)(uintptr_t)v;
}

int main(void) {
    int fd = eventfd(5, EFD_NONBLOCK | EFD_CLOEXEC);
    CHECK(fd >= 0);
    uint64_t v = 10;
    CHECK(write(fd, &v, sizeof v) == sizeof v);
    CHECK(read(fd, &v, sizeof v) == sizeof v);
    printf("counter read: %llu\n", (unsigned long long)v);
    errno = 0;
    ssize_t r = read(fd, &v, sizeof v);
    printf("read of zero counter: %zd %s\n", r, strerrorname_np(errno));
    v = UINT64_MAX;
    errno = 0;
    r = write(fd, &v, sizeof v);
    printf("write 2^64-1: %zd %s\n", r, strerrorname_np(errno));
    v = UINT64_MAX - 1;
    CHECK(write(fd, &v, sizeof v) == sizeof v);
    v = 1;
    errno = 0;
    r = write(fd, &v, sizeof v);
    printf("overflowing write: %zd %s\n", r, strerrorname_np(errno));
    struct pollfd pf = {fd, POLLIN | POLLOUT, 0};
    int n = poll(&pf, 1, 0);
    printf("poll on a full counter: %d, POLLIN %d POLLOUT %d\n", n, (pf.revents & POLLIN) != 0,
           (pf.revents & POLLOUT) != 0);
    close(fd);

    fd = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
    CHECK(fd >= 0);
    int reads = 0;
    while (read(fd, &v, sizeof v) == sizeof v) {
        CHECK(v == 1);
        reads++;
    }
    printf("semaphore: %d reads of 1, then %s\n", reads, strerrorname_np(errno));
    close(fd);

    efd = eventfd(0, 0);
    CHECK(efd >= 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    usleep(30000);
    v = 77;
    CHECK(write(efd, &v, sizeof v) == sizeof v);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    printf("blocked reader thread got %lu\n", (unsigned long)(uintptr_t)ret);
    return 0;
}
