// The program break: raw brk(0) agrees with sbrk(0); sbrk grows the heap by
// 4 MiB in steps (each returning the old break), the memory is writable and
// new pages are zero; shrinking releases it (touching beyond the new break
// faults), growing again gives zeroed pages; a raw brk below the start of
// the heap leaves the break where it is.
#include "util.h"
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>

static sigjmp_buf env;
static void on_segv(int sig) {
    (void)sig;
    siglongjmp(env, 1);
}

static char outbuf[8192];

int main(void) {
    /* A static stdio buffer, so that printf never moves the break. */
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    signal(SIGSEGV, on_segv);
    char *start = sbrk(0);
    long raw = syscall(SYS_brk, 0);
    printf("raw brk(0) == sbrk(0): %d\n", (char *)raw == start);

    const intptr_t step = 256 * 1024;
    char *prev = start;
    for (int i = 0; i < 16; i++) {
        char *old = sbrk(step);
        CHECK(old != (char *)-1);
        CHECK(old == prev);
        prev = old + step;
    }
    char *top = sbrk(0);
    printf("grew by %ld bytes\n", (long)(top - start));
    size_t nonzero = 0;
    for (char *p = start; p < top; p += 4096) nonzero += *p != 0;
    printf("non-zero bytes among fresh pages: %zu\n", nonzero);
    memset(start, 0x5a, (size_t)(top - start));
    long sum = 0;
    for (char *p = start; p < top; p += 4096) sum += *p;
    printf("written and read back: %ld\n", sum);

    /* Shrink to one page past the page-aligned start. */
    char *aligned = (char *)(((uintptr_t)start + 4095) & ~(uintptr_t)4095);
    CHECK(brk(aligned + 4096) == 0);
    printf("shrunk to one page past the start: %d\n", (char *)sbrk(0) == aligned + 4096);
    if (sigsetjmp(env, 1) == 0) {
        (void)*(volatile char *)(aligned + 64 * 4096);
        printf("beyond the break: readable\n");
    } else {
        printf("beyond the break: SIGSEGV\n");
    }
    CHECK(sbrk(64 * 4096) != (void *)-1);
    printf("regrown page reads %d\n", *(volatile char *)(aligned + 32 * 4096));

    char *before = sbrk(0);
    long low = syscall(SYS_brk, 4096);
    printf("raw brk(4096), below the heap: break unchanged %d\n", (char *)low == before && sbrk(0) == before);
    CHECK(brk(start) == 0);
    printf("back to the start: %d\n", sbrk(0) == start);
    return 0;
}
