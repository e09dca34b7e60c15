/* fast_floor [N]: the micro-benchmarks behind the estimate table at the top of
 * docs/design/fast-path.md: what the pieces of a fast-path trampoline cost on this
 * machine, in ns per operation, each over N iterations (default 10^7) of a loop whose
 * body is the operation and nothing else, minus the same loop with an empty body.
 * Each figure is the median of 3 such runs. Run pinned (bench/run-fast.sh uses
 * `taskset -c 1`). Prints one `name: X ns` line per operation.
 *
 *   raw getpid            `mov $39,%eax; syscall` (the call the fast path must not slow down)
 *   pushfq; popfq         save and restore the flags through the stack (popfq is slow)
 *   pushfq; pop %r11      save the flags only (what the trampoline does on entry)
 *   seto/lahf + add/sahf  the flags saved and restored without popfq
 *   movups xmm0-15        store xmm0..15 to memory and load them back (256 bytes)
 *   fxsave64; fxrstor64   x87 + SSE state to a 512-byte area and back
 *   xsaveopt; xrstor      x87 + SSE + AVX (XCR0 & 7), when the CPU and kernel enable XSAVE
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* vDSO: no system call */
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint8_t xmm_area[256] __attribute__((aligned(64)));
static uint8_t fx_area[512] __attribute__((aligned(64)));
static uint8_t *xs_area;
static uint32_t xs_lo, xs_hi; /* xsave component mask */

#define LOOP(body, ...)                                                                \
    static double body##_run(long n) {                                                \
        double t0 = now();                                                             \
        for (long i = 0; i < n; i++) {                                                 \
            __VA_ARGS__;                                                               \
        }                                                                              \
        return (now() - t0) / n;                                                       \
    }

LOOP(empty, __asm__ volatile("" ::: "memory"))
LOOP(getpid_raw, {
    long r = 39;
    __asm__ volatile("syscall" : "+a"(r) : : "rcx", "r11", "memory");
})
LOOP(pushf_popf, __asm__ volatile("pushfq\n\tpopfq" ::: "memory", "cc"))
LOOP(pushf_pop, __asm__ volatile("pushfq\n\tpop %%r11" ::: "r11", "memory"))
LOOP(lahf_sahf, __asm__ volatile("seto %%al\n\tlahf\n\tadd $0x7f, %%al\n\tsahf" ::: "rax", "memory", "cc"))
LOOP(movups16, __asm__ volatile(
    "movups %%xmm0, 0(%0)\n\tmovups %%xmm1, 16(%0)\n\tmovups %%xmm2, 32(%0)\n\tmovups %%xmm3, 48(%0)\n\t"
    "movups %%xmm4, 64(%0)\n\tmovups %%xmm5, 80(%0)\n\tmovups %%xmm6, 96(%0)\n\tmovups %%xmm7, 112(%0)\n\t"
    "movups %%xmm8, 128(%0)\n\tmovups %%xmm9, 144(%0)\n\tmovups %%xmm10, 160(%0)\n\tmovups %%xmm11, 176(%0)\n\t"
    "movups %%xmm12, 192(%0)\n\tmovups %%xmm13, 208(%0)\n\tmovups %%xmm14, 224(%0)\n\tmovups %%xmm15, 240(%0)\n\t"
    "movups 0(%0), %%xmm0\n\tmovups 16(%0), %%xmm1\n\tmovups 32(%0), %%xmm2\n\tmovups 48(%0), %%xmm3\n\t"
    "movups 64(%0), %%xmm4\n\tmovups 80(%0), %%xmm5\n\tmovups 96(%0), %%xmm6\n\tmovups 112(%0), %%xmm7\n\t"
    "movups 128(%0), %%xmm8\n\tmovups 144(%0), %%xmm9\n\tmovups 160(%0), %%xmm10\n\tmovups 176(%0), %%xmm11\n\t"
    "movups 192(%0), %%xmm12\n\tmovups 208(%0), %%xmm13\n\tmovups 224(%0), %%xmm14\n\tmovups 240(%0), %%xmm15"
    : : "r"(xmm_area) : "memory"))
LOOP(fxsave, __asm__ volatile("fxsave64 (%0)\n\tfxrstor64 (%0)" : : "r"(fx_area) : "memory"))
LOOP(xsave, __asm__ volatile("xsaveopt (%0)\n\txrstor (%0)" : : "r"(xs_area), "a"(xs_lo), "d"(xs_hi) : "memory"))

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median3(double (*f)(long), long n) {
    double v[3];
    for (int i = 0; i < 3; i++) v[i] = f(n);
    qsort(v, 3, sizeof v[0], cmp);
    return v[1];
}

static int xsave_usable(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
        return 0;
    if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & 1)) /* XSAVEOPT */
        return 0;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xs_lo = lo & 7; /* x87, SSE, AVX: what the design table measured */
    xs_hi = 0;
    __get_cpuid_count(0xd, 0, &a, &b, &c, &d); /* ebx: size for the enabled features */
    if (posix_memalign((void **)&xs_area, 64, b + 64))
        return 0;
    memset(xs_area, 0, b + 64);
    return 1;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000000;
    __asm__ volatile("fxsave64 (%0)" : : "r"(fx_area) : "memory"); /* a valid image for fxrstor */
    int xs = xsave_usable();
    if (xs) /* a valid header for xrstor */
        __asm__ volatile("xsave (%0)" : : "r"(xs_area), "a"(xs_lo), "d"(xs_hi) : "memory");
    empty_run(n / 10); /* warm up */
    double base = median3(empty_run, n);
    struct { const char *name; double (*f)(long); } t[] = {
        {"raw getpid (mov $39,%eax; syscall)", getpid_raw_run},
        {"pushfq; popfq", pushf_popf_run},
        {"pushfq; pop %r11", pushf_pop_run},
        {"seto+lahf; add+sahf (flags without popfq)", lahf_sahf_run},
        {"movups xmm0-15 store + load", movups16_run},
        {"fxsave64 + fxrstor64", fxsave_run},
        {"xsaveopt + xrstor (x87, SSE, AVX)", xs ? xsave_run : NULL},
    };
    printf("empty loop: %.2f ns per iteration (subtracted below); %ld iterations, median of 3\n", base, n);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (!t[i].f) {
            printf("%s: n/a (XSAVEOPT not available)\n", t[i].name);
            continue;
        }
        printf("%s: %.2f ns\n", t[i].name, median3(t[i].f, n) - base);
        fflush(stdout);
    }
    return 0;
}
