// Code made executable after start and changed later, as a JIT does: a page
// gets `mov $39,%eax; syscall; ret` (getpid) and is made read-execute, then
// called 1000 times (a lazily rewritten site). Then mprotect back to
// read-write, the whole site rewritten as getppid (`b8 6e 00 00 00 0f 05
// c3`), read-execute again: 1000 calls must give getppid. Then, in place,
// only the immediate byte is changed (to gettid) the same way: 1000 calls
// must give gettid (a program may rely on reading its own bytes back once the
// page is writable again). The program never prints its code bytes: under a
// rewriting interposer a site may read differently while it is executable.
#include "util.h"
#include <sys/mman.h>
#include <sys/syscall.h>

static unsigned char *page;

static void protect(int prot) { CHECK(mprotect(page, 4096, prot) == 0); }

static int calls_giving(long expected) {
    long (*fn)(void) = (long (*)(void))page;
    int n = 0;
    for (int i = 0; i < 1000; i++) n += fn() == expected;
    return n;
}

int main(void) {
    long pid = getpid(), ppid = getppid(), tid = gettid();
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    static const unsigned char getpid_site[] = {0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3};
    static const unsigned char getppid_site[] = {0xb8, 0x6e, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3};

    memcpy(page, getpid_site, sizeof getpid_site);
    protect(PROT_READ | PROT_EXEC);
    int n = calls_giving(pid);
    printf("page made executable after start: getpid %d/1000\n", n);
    CHECK(n == 1000);

    protect(PROT_READ | PROT_WRITE);
    memcpy(page, getppid_site, sizeof getppid_site);
    protect(PROT_READ | PROT_EXEC);
    n = calls_giving(ppid);
    printf("site rewritten whole (read-write, getppid, read-execute): getppid %d/1000\n", n);
    CHECK(n == 1000);

    protect(PROT_READ | PROT_WRITE);
    page[1] = SYS_gettid;
    protect(PROT_READ | PROT_EXEC);
    n = calls_giving(tid);
    printf("immediate byte changed in place (read-write, gettid, read-execute): gettid %d/1000\n", n);
    CHECK(n == 1000);

    CHECK(munmap(page, 4096) == 0);
    return 0;
}
