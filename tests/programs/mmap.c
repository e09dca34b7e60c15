// mmap/munmap/mprotect/mremap/madvise: anonymous memory is zeroed; a shared
// file mapping's stores are visible through read() and a private one's are
// not; MAP_FIXED replaces part of a mapping; munmap of a middle page leaves a
// hole (SIGSEGV there, neighbours intact); mremap grows in place or moves
// keeping the contents; MADV_DONTNEED zeroes private anonymous pages;
// MAP_FIXED_NOREPLACE reports EEXIST; argument errors give EINVAL/EBADF.
#include "util.h"
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

static sigjmp_buf env;
static void on_segv(int sig) {
    (void)sig;
    siglongjmp(env, 1);
}
static int readable(volatile char *p) {
    if (sigsetjmp(env, 1) == 0) {
        (void)*p;
        return 1;
    }
    return 0;
}

int main(void) {
    signal(SIGSEGV, on_segv);
    const size_t pg = 4096;
    char *a = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED);
    int nz = 0;
    for (size_t i = 0; i < 8 * pg; i++) nz += a[i] != 0;
    printf("anonymous memory zeroed: %d\n", nz == 0);
    memset(a, 'A', 8 * pg);

    char *b = mmap(a + 2 * pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("MAP_FIXED at the requested address: %d, new page zero: %d, neighbour kept: %d\n", b == a + 2 * pg,
           b[0] == 0, a[pg] == 'A');

    char *c = mmap(a + 3 * pg, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("MAP_FIXED_NOREPLACE over a mapping: %s\n", c == MAP_FAILED ? strerrorname_np(errno) : "mapped");

    CHECK(munmap(a + 4 * pg, pg) == 0);
    printf("hole after munmap: page 3 %d, page 4 %d, page 5 %d\n", readable(a + 3 * pg), readable(a + 4 * pg),
           readable(a + 5 * pg));

    CHECK(mprotect(a, pg, PROT_NONE) == 0);
    printf("PROT_NONE page readable: %d\n", readable(a));
    CHECK(mprotect(a, pg, PROT_READ) == 0);
    printf("PROT_READ again: readable %d, contents kept %d\n", readable(a), a[0] == 'A');

    CHECK(madvise(a + 5 * pg, pg, MADV_DONTNEED) == 0);
    printf("MADV_DONTNEED page reads %d, next page %c\n", a[5 * pg], a[6 * pg]);

    char *r = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED);
    strcpy(r, "moved contents");
    char *r2 = mremap(r, pg, 64 * pg, MREMAP_MAYMOVE);
    CHECK(r2 != MAP_FAILED);
    r2[63 * pg] = 'z';
    printf("mremap grow: contents '%s', last page writable %c\n", r2, r2[63 * pg]);
    char *r3 = mremap(r2, 64 * pg, pg, 0);
    printf("mremap shrink in place: %d\n", r3 == r2);

    FILE *f = tmpfile();
    CHECK(f != NULL);
    int fd = fileno(f);
    CHECK(ftruncate(fd, pg) == 0);
    char *sh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *pr = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(sh != MAP_FAILED && pr != MAP_FAILED);
    memcpy(sh, "shared", 6);
    memcpy(pr + 100, "private", 7);
    char buf[128] = {0};
    CHECK(pread(fd, buf, sizeof buf, 0) == sizeof buf);
    printf("file sees shared store: %.6s, private store: %d, private sees shared: %.6s\n", buf, buf[100] != 0, pr);
    CHECK(munmap(sh, pg) == 0 && munmap(pr, pg) == 0);

    errno = 0;
    void *bad = mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("zero-length mmap: %s\n", bad == MAP_FAILED ? strerrorname_np(errno) : "mapped");
    errno = 0;
    bad = mmap(NULL, pg, PROT_READ, MAP_SHARED, 12345, 0);
    printf("bad fd: %s\n", bad == MAP_FAILED ? strerrorname_np(errno) : "mapped");
    errno = 0;
    int ur = munmap(a + 1, pg);
    printf("unaligned munmap: %d %s\n", ur, strerrorname_np(errno));
    CHECK(munmap(a, 8 * pg) == 0);
    printf("after munmap of the whole range: readable %d\n", readable(a + 7 * pg));
    return 0;
}
