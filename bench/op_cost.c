/* op_cost: what the operations a process start is made of cost on this
 * machine, natively, each in a loop (ns per operation, the mean of the
 * loop). Guides where strata's start-up work should go: run pinned, e.g.
 * `gcc -O2 -o /tmp/op_cost bench/op_cost.c && taskset -c 1 /tmp/op_cost`.
 * A fresh anonymous page's first write is timed as it comes and with the
 * pages prefaulted by MADV_POPULATE_WRITE first, to tell the page's own
 * cost from the fault's. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

#define TIME(name, n, ...)                                                  \
    do {                                                                    \
        double t0 = now();                                                  \
        for (int i = 0; i < (n); i++) { __VA_ARGS__; }                      \
        printf("%-48s %8.0f ns\n", name, (now() - t0) / (n));               \
    } while (0)

int main(void) {
    long x = 0, y = 0;
    char buf[4096];
    struct stat st;
    TIME("getppid", 200000, syscall(SYS_getppid));
    TIME("process_vm_readv, 8 bytes of this process", 20000, {
        struct iovec l = {&y, 8}, r = {&x, 8};
        process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    });
    TIME("open + close of /bin/true", 20000, close(open("/bin/true", O_RDONLY | O_CLOEXEC)));
    TIME("faccessat of /bin/true", 20000, faccessat(AT_FDCWD, "/bin/true", X_OK, 0));
    int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
    TIME("fstat", 50000, fstat(fd, &st));
    TIME("pread of 4 KiB", 50000, pread(fd, buf, sizeof buf, 0));
    TIME("mmap + munmap, anonymous 280 KiB", 20000, munmap(mmap(NULL, 286720, PROT_READ | PROT_WRITE,
                                                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
                                                           286720));
    TIME("mmap + munmap, 16 KiB of a file", 20000,
         munmap(mmap(NULL, 16384, PROT_READ, MAP_PRIVATE, fd, 0), 16384));
    /* A page's first write: (the second line - the first) / 8. */
    TIME("mmap 64 KiB + munmap", 3000,
         munmap(mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 65536));
    TIME("the same with 8 pages written", 3000, {
        char *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (int j = 0; j < 8; j++) p[j * 4096] = 1;
        munmap(p, 65536);
    });
    TIME("the same, MADV_POPULATE_WRITE before the writes", 3000, {
        char *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        madvise(p, 8 * 4096, MADV_POPULATE_WRITE);
        for (int j = 0; j < 8; j++) p[j * 4096] = 1;
        munmap(p, 65536);
    });
    unsigned a, b, c, d;
    TIME("cpuid, leaf 0xd", 3000, __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(0)));
    return 0;
}
