// Memory calls for tests/test_trace.py: mmap, mprotect, mremap, madvise, munmap.
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>

int main(void) {
    char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    p[0] = 1;
    mprotect(p + 4096, 4096, PROT_NONE);
    mprotect(p + 1, 4096, PROT_READ);                               /* EINVAL */
    madvise(p, 4096, MADV_DONTNEED);
    mprotect(p + 4096, 4096, PROT_READ | PROT_WRITE);
    char *q = mremap(p, 3 * 4096, 5 * 4096, MREMAP_MAYMOVE);
    mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);    /* EINVAL */
    munmap(q, 5 * 4096);
    munmap((char *)4097, 4096);                                     /* EINVAL */
    printf("mem done\n");
    return 0;
}
