// A SIGSEGV handler that repairs the fault and returns: touching 16 pages
// mapped PROT_NONE faults once per page; the handler mprotects the faulting
// page read-write (the page fault error code in the ucontext says "write")
// and the faulting instruction is retried and completes. Also a lazily
// "allocated" region where the handler maps the missing page with MAP_FIXED.
#include "util.h"
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>

#define PAGES 16
static char *region, *lazy;
static volatile int faults, write_faults, lazy_faults;

static void handler(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    char *a = si->si_addr;
    char *page = (char *)((uintptr_t)a & ~(uintptr_t)4095);
    if (a >= region && a < region + PAGES * 4096) {
        faults++;
        if (uc->uc_mcontext.gregs[REG_ERR] & 2) write_faults++;
        if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0) _exit(3);
        return;
    }
    if (a >= lazy && a < lazy + PAGES * 4096) {
        lazy_faults++;
        if (mmap(page, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != page) _exit(4);
        return;
    }
    _exit(5);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);

    region = mmap(NULL, PAGES * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED);
    for (int i = 0; i < PAGES; i++) ((volatile char *)region)[i * 4096 + i] = (char)(i + 1);
    int sum = 0;
    for (int i = 0; i < PAGES; i++) sum += region[i * 4096 + i];
    printf("region: %d faults (%d writes), sum %d\n", faults, write_faults, sum);
    CHECK(faults == PAGES && write_faults == PAGES && sum == PAGES * (PAGES + 1) / 2);

    lazy = mmap(NULL, PAGES * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(lazy != MAP_FAILED);
    CHECK(munmap(lazy, PAGES * 4096) == 0);
    long total = 0;
    for (int i = 0; i < PAGES * 4096; i += 1024) total += ((volatile char *)lazy)[i];
    printf("lazy: %d faults, read sum %ld\n", lazy_faults, total);
    CHECK(lazy_faults == PAGES && total == 0);
    return 0;
}
