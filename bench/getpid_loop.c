/* getpid_loop N: makes N raw getpid system calls (through syscall(2), so glibc's
 * caching, if any, cannot skip the kernel) and prints how many it made.
 * The cheapest possible system call: its cost is almost all entry/exit overhead,
 * which is what an interposer like strata or strace adds to. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    long pid = 0, same = 0;
    for (long i = 0; i < n; i++) {
        long p = syscall(SYS_getpid);
        same += (p == pid || i == 0);
        pid = p;
    }
    printf("getpid_loop: %ld calls, %ld consistent\n", n, same);
    return same == n ? 0 : 1;
}
