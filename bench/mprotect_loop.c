/* mprotect_loop N: N mprotect() calls flipping one anonymous page between read-write and read-only.
 * A call strata's bottom handles itself (it checks that the range spares strata's image and puts
 * back code a JIT makes writable), so under strata it is never let through by number: with a policy,
 * strata's seccomp filter decides it by address and every filter runs (bench/capture-cost.sh).
 * Prints "mprotect_loop: N calls". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    char *p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    for (long i = 0; i < n; i++)
        if (mprotect(p, 4096, (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE)) { perror("mprotect"); return 1; }
    printf("mprotect_loop: %ld calls\n", n);
    return 0;
}
