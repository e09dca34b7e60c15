// System calls given bad pointers fail with EFAULT instead of crashing:
// write from and read into an unmapped address, a raw clock_gettime and
// uname into unmapped memory, open with an unmapped path, and a partially
// valid buffer (a pipe write fails with EFAULT, a file write stops at the
// first bad page and returns the count).
#include "util.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

int main(void) {
    void *volatile bad = (void *)16;
    int p[2];
    CHECK(pipe(p) == 0);
    printf("write from a bad buffer: %s\n", RESULT(write(p[1], bad, 10)));
    CHECK(write(p[1], "abc", 3) == 3);
    printf("read into a bad buffer: %s\n", RESULT(read(p[0], bad, 3)));
    printf("raw clock_gettime to a bad pointer: %s\n", RESULT(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, bad)));
    printf("raw uname to a bad pointer: %s\n", RESULT(syscall(SYS_uname, bad)));
    printf("open with a bad path: %s\n", RESULT(open((const char *)bad, O_RDONLY)));
    printf("raw rt_sigaction with a bad action: %s\n", RESULT(syscall(SYS_rt_sigaction, 10, bad, NULL, 8)));
    printf("raw rt_sigprocmask with a bad set: %s\n", RESULT(syscall(SYS_rt_sigprocmask, 0, bad, NULL, 8)));

    char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(two != MAP_FAILED);
    memset(two, 'z', 8192);
    CHECK(munmap(two + 4096, 4096) == 0);
    int q[2];
    CHECK(pipe(q) == 0);
    printf("pipe write running into an unmapped page: %s\n", RESULT(write(q[1], two + 4000, 200)));
    FILE *f = tmpfile();
    CHECK(f != NULL);
    ssize_t w = write(fileno(f), two + 4000, 200);
    printf("file write running into an unmapped page: %zd bytes written\n", w);
    return 0;
}
