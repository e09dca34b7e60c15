// Generated code that changes: a RWX page whose syscall number is patched in
// place between calls (getpid, then getppid, then gettid); a W^X page
// rewritten through mprotect; and a memfd mapped twice (a writable view and
// an executable view at different addresses, as JIT engines do), patched
// through the writable view. Every result is checked against the C library.
#include "util.h"
#include <sys/mman.h>
#include <sys/syscall.h>

static const unsigned char tmpl[] = {0xb8, 0x27, 0x00, 0x00, 0x00, /* mov $NR, %eax */
                                     0x0f, 0x05,                   /* syscall */
                                     0xc3};                        /* ret */

static void emit(unsigned char *p, int nr) {
    memcpy(p, tmpl, sizeof tmpl);
    p[1] = (unsigned char)nr;
}

int main(void) {
    long pid = getpid(), ppid = getppid(), tid = syscall(SYS_gettid);

    unsigned char *rwx = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(rwx != MAP_FAILED);
    long (*f)(void) = (long (*)(void))rwx;
    emit(rwx, SYS_getpid);
    long a = f();
    rwx[1] = SYS_getppid;
    long b = f();
    rwx[1] = SYS_gettid;
    long c = f();
    printf("RWX page patched in place: getpid %d, getppid %d, gettid %d\n", a == pid, b == ppid, c == tid);

    unsigned char *wx = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(wx != MAP_FAILED);
    int ok = 0;
    for (int round = 0; round < 4; round++) {
        int nr = round % 2 ? SYS_getppid : SYS_getpid;
        CHECK(mprotect(wx, 4096, PROT_READ | PROT_WRITE) == 0);
        emit(wx + 64 * round, nr);
        CHECK(mprotect(wx, 4096, PROT_READ | PROT_EXEC) == 0);
        long r = ((long (*)(void))(wx + 64 * round))();
        ok += r == (round % 2 ? ppid : pid);
    }
    printf("W^X page rewritten 4 times: %d/4 correct\n", ok);

    int fd = memfd_create("jit", MFD_CLOEXEC);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, 4096) == 0);
    unsigned char *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    unsigned char *x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    CHECK(w != MAP_FAILED && x != MAP_FAILED && w != x);
    emit(w, SYS_getppid);
    long d = ((long (*)(void))x)();
    w[1] = SYS_getpid;
    long e = ((long (*)(void))x)();
    printf("double-mapped memfd: getppid %d, then getpid %d\n", d == ppid, e == pid);
    return 0;
}
