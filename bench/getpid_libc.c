/* getpid_libc N: makes N getpid() calls through the C library and prints how
 * many it made. glibc's getpid is `mov $39,%eax; syscall; ret` (no caching since
 * glibc 2.25): one P1 site, the pattern strata's fast path rewrites in place,
 * and one of the two calls it can serve without entering the kernel
 * (docs/design/fast-path.md §2, §9). bench/getpid_loop.c is the same loop
 * through syscall(3) (a site whose number arrives in a register). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    long pid = 0, same = 0;
    for (long i = 0; i < n; i++) {
        long p = getpid();
        same += (p == pid || i == 0);
        pid = p;
    }
    printf("getpid_libc: %ld calls, %ld consistent\n", n, same);
    return same == n ? 0 : 1;
}
