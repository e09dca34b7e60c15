// Time calls for tests/test_trace.py. clock_gettime goes through syscall():
// glibc answers it from the vDSO, which strace does not see.
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    struct timespec ts, rem;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
    syscall(SYS_clock_gettime, 12345, &ts);                          /* EINVAL */
    syscall(SYS_clock_getres, CLOCK_MONOTONIC, &ts);
    struct timespec req = {0, 1000000};
    nanosleep(&req, &rem);
    req.tv_nsec = 2000000000L;
    nanosleep(&req, &rem);                                           /* EINVAL */
    req.tv_nsec = 500000;
    clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
    printf("time done\n");
    return 0;
}
