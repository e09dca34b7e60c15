// A program that makes the C library's own text writable reads its original
// code, and its calls keep working once the text is executable again.
// strata has rewritten libc's getpid (`mov $39,%eax; syscall`) into a jump;
// making the page writable puts the original bytes back (ARCHITECTURE.md,
// known differences). Run twice, the second time in a child that execs this
// program again: in a strata session that child maps libc's shared text image
// (textimage.rs), whose sites strata keeps in the image's own table until one
// must change (rewrite.rs, `materialize`). The mprotect calls are raw
// syscalls from this program's text: nothing runs in libc's page meanwhile.
#include "util.h"
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long raw_mprotect(void *addr, size_t len, int prot) {
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"((long)SYS_mprotect), "D"(addr), "S"(len), "d"((long)prot)
                     : "rcx", "r11", "memory");
    return r;
}

static void check_text(void) {
    pid_t pid = getpid();
    for (int i = 0; i < 100; i++) CHECK(getpid() == pid);
    const unsigned char want[] = {0xb8, SYS_getpid, 0, 0, 0, 0x0f, 0x05};
    unsigned char *f = (unsigned char *)getpid;
    // This libc's getpid must be the plain form, or the test says nothing.
    unsigned char *page = (unsigned char *)((unsigned long)f & ~4095ul);
    CHECK(raw_mprotect(page, 4096, PROT_READ | PROT_WRITE) == 0);
    int same = 1;
    for (unsigned i = 0; i < sizeof want; i++) same &= f[i] == want[i];
    CHECK(raw_mprotect(page, 4096, PROT_READ | PROT_EXEC) == 0);
    printf("getpid's code as written: %s\n", same ? "yes" : "no");
    for (int i = 0; i < 100; i++) CHECK(getpid() == pid);
    printf("getpid after: ok\n");
}

int main(int argc, char **argv) {
    if (argc > 1) {
        check_text();
        return 0;
    }
    check_text();
    // A first child (which, under strata, writes the session's text images),
    // then this program again in a second one (which maps them).
    for (int k = 0; k < 2; k++) {
        fflush(stdout);
        pid_t p = fork();
        CHECK(p >= 0);
        if (p == 0) {
            if (k == 0) execl("/bin/true", "true", (char *)NULL);
            else execl("/proc/self/exe", argv[0], "again", (char *)NULL);
            _exit(127);
        }
        int st;
        CHECK(waitpid(p, &st, 0) == p);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    return 0;
}
