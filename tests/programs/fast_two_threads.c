// Two threads racing on one fresh site: a page made at run time (mmap
// read-write, `mov $NR,%eax; syscall; ret` written, mprotect read-execute) is
// called by two threads released together by a barrier, 100000 times each,
// every result checked: the first calls race with the lazy rewriting of the
// site by the other thread. Four fresh pages in turn: getpid, getppid, gettid
// (each thread compares with its own tid) and getpid again.
// cflags: -pthread
#include "util.h"
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define CALLS 100000

static pthread_barrier_t barrier;
static long (*site)(void);
static int site_nr;
static long expect_pid, expect_ppid;

struct result {
    long bad, first_bad_value, first_bad_at;
};

static void *racer(void *arg) {
    struct result *res = arg;
    long want = site_nr == SYS_getpid ? expect_pid : site_nr == SYS_getppid ? expect_ppid : gettid();
    res->bad = 0;
    res->first_bad_at = -1;
    pthread_barrier_wait(&barrier);
    for (long i = 0; i < CALLS; i++) {
        long r = site();
        if (r != want && res->bad++ == 0) {
            res->first_bad_value = r;
            res->first_bad_at = i;
        }
    }
    return NULL;
}

static void *make_site(int nr) {
    unsigned char code[] = {0xb8, (unsigned char)nr, 0x00, 0x00, 0x00, /* mov $nr, %eax */
                            0x0f, 0x05,                                /* syscall */
                            0xc3};                                     /* ret */
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    memcpy(page, code, sizeof code);
    CHECK(mprotect(page, 4096, PROT_READ | PROT_EXEC) == 0);
    return page;
}

static void race(const char *name, int nr) {
    void *page = make_site(nr);
    site = (long (*)(void))page;
    site_nr = nr;
    pthread_t t[2];
    struct result res[2];
    CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, racer, &res[i]) == 0);
    for (int i = 0; i < 2; i++) CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(pthread_barrier_destroy(&barrier) == 0);
    int ok = res[0].bad == 0 && res[1].bad == 0;
    printf("fresh %s page, 2 threads x %d calls: every result right: %s\n", name, CALLS, ok ? "ok" : "no");
    for (int i = 0; i < 2; i++)
        if (res[i].bad)
            fprintf(stderr, "FAILED: %s, thread %d: %ld wrong results, the first (call %ld) %ld\n", name, i,
                    res[i].bad, res[i].first_bad_at, res[i].first_bad_value);
    CHECK(ok);
    CHECK(munmap(page, 4096) == 0);
}

int main(void) {
    expect_pid = getpid();
    expect_ppid = getppid();
    race("getpid", SYS_getpid);
    race("getppid", SYS_getppid);
    race("gettid", SYS_gettid);
    race("getpid", SYS_getpid);
    printf("ok\n");
    return 0;
}
