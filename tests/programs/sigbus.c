// SIGBUS from touching a page of a shared file mapping that lies beyond the
// end of the (truncated) file: si_code BUS_ADRERR, exact si_addr; the bytes
// after EOF inside the last page read as zero; growing the file again makes
// the page accessible. Recovery is by siglongjmp.
#include "util.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

static sigjmp_buf env;
static volatile int sig_seen, code_seen;
static void *volatile addr_seen;

static void handler(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    sig_seen = sig;
    code_seen = si->si_code;
    addr_seen = si->si_addr;
    siglongjmp(env, 1);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGBUS, &sa, NULL) == 0);

    FILE *f = tmpfile();
    CHECK(f != NULL);
    int fd = fileno(f);
    CHECK(ftruncate(fd, 3 * 4096) == 0);
    char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    memset(m, 'a', 3 * 4096);
    CHECK(ftruncate(fd, 4096 + 100) == 0);

    printf("inside the file: %c\n", m[4096 + 99]);
    printf("after EOF in the last page: %d\n", m[4096 + 100]);
    for (int off = 2 * 4096; off <= 2 * 4096 + 300; off += 300) {
        if (sigsetjmp(env, 1) == 0) {
            char c = ((volatile char *)m)[off];
            printf("read page 3: no fault (%d)\n", c);
        } else {
            printf("read beyond EOF page: sig=%d BUS_ADRERR=%d addr_ok=%d\n", sig_seen, code_seen == BUS_ADRERR,
                   addr_seen == m + off);
        }
    }
    if (sigsetjmp(env, 1) == 0) {
        ((volatile char *)m)[2 * 4096 + 5] = 1;
        printf("write page 3: no fault\n");
    } else {
        printf("write beyond EOF page: sig=%d BUS_ADRERR=%d addr_ok=%d\n", sig_seen, code_seen == BUS_ADRERR,
               addr_seen == m + 2 * 4096 + 5);
    }
    CHECK(ftruncate(fd, 3 * 4096) == 0);
    printf("after growing the file: page 3 reads %d\n", ((volatile char *)m)[2 * 4096 + 5]);
    return 0;
}
