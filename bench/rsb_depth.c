/* rsb_depth [N]: getpid issued at call depth 0, 4 and 8, in ns per call (N calls each,
 * default 2*10^6, median of 3 runs).
 *
 * Depth d means the `syscall` instruction sits d nested (non-inlined) calls below the loop,
 * so d `ret`s follow each system call. If the kernel flushes (or the hypervisor clobbers)
 * the return stack buffer on entry, every one of those returns mispredicts, and a system
 * call issued deep in a call chain costs more than one issued inline — which is where a
 * fast path that runs an extension stack before issuing the call issues it. The control
 * row runs the same depth-8 chain without the system call (the calls and returns alone).
 * Run pinned (bench/run-fast.sh uses `taskset -c 1`). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* vDSO: no system call */
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static inline long raw_getpid(void) {
    long r = 39;
    __asm__ volatile("syscall" : "+a"(r) : : "rcx", "r11", "memory");
    return r;
}

static long nop_leaf(void) {
    long r = 39;
    __asm__ volatile("" : "+r"(r) : : "memory");
    return r;
}

/* chain(d, leaf): d nested calls, then leaf(); no tail calls (the result is used after
 * each call), no inlining. */
typedef long (*leaf_fn)(void);
__attribute__((noinline)) static long chain(int d, leaf_fn leaf) {
    long r = d ? chain(d - 1, leaf) : leaf();
    __asm__ volatile("" : "+r"(r) : : "memory");
    return r + 1;
}
__attribute__((noinline)) static long getpid_leaf(void) { return raw_getpid(); }

static volatile long sink;

static double run(int depth, int with_syscall, long n) {
    double t0 = now();
    long s = 0;
    if (depth == 0 && with_syscall) {
        for (long i = 0; i < n; i++) s += raw_getpid();
    } else {
        /* depth d: chain(d-1) calls d-1 more levels, then the leaf is the d-th call */
        leaf_fn leaf = with_syscall ? getpid_leaf : nop_leaf;
        for (long i = 0; i < n; i++) s += chain(depth - 1, leaf);
    }
    sink = s;
    return (now() - t0) / n;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median3(int depth, int sc, long n) {
    double v[3];
    for (int i = 0; i < 3; i++) v[i] = run(depth, sc, n);
    qsort(v, 3, sizeof v[0], cmp);
    return v[1];
}

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000000;
    run(0, 1, n / 10); /* warm up */
    double d0 = median3(0, 1, n), d4 = median3(4, 1, n), d8 = median3(8, 1, n), c8 = median3(8, 0, n);
    printf("depth 0: %.1f ns\n", d0);
    printf("depth 4: %.1f ns\n", d4);
    printf("depth 8: %.1f ns\n", d8);
    printf("depth 8 without the syscall: %.1f ns\n", c8);
    return 0;
}
