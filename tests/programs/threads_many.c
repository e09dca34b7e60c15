// Creates and joins 200 threads one after another, then 16 at once (twice),
// then 64 detached threads; every thread's return value and TLS are checked.
// cflags: -pthread
// as-nobody
#include "util.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

static __thread long tls_value = 7;
static atomic_long detached_done;

static void *work(void *arg) {
    long n = (long)arg;
    CHECK(tls_value == 7);
    tls_value = n;
    long sum = 0;
    for (long i = 0; i <= n; i++) sum += i;
    CHECK(tls_value == n);
    CHECK(syscall(SYS_gettid) != getpid());
    return (void *)sum;
}

static void *detached(void *arg) {
    (void)arg;
    atomic_fetch_add(&detached_done, 1);
    return NULL;
}

int main(void) {
    long total = 0;
    for (long i = 0; i < 200; i++) {
        pthread_t t;
        void *ret;
        CHECK(pthread_create(&t, NULL, work, (void *)i) == 0);
        CHECK(pthread_join(t, &ret) == 0);
        CHECK((long)ret == i * (i + 1) / 2);
        total += (long)ret;
    }
    printf("200 sequential threads: sum %ld\n", total);

    for (int round = 0; round < 2; round++) {
        pthread_t t[16];
        total = 0;
        for (long i = 0; i < 16; i++) CHECK(pthread_create(&t[i], NULL, work, (void *)(i + 1000)) == 0);
        for (int i = 0; i < 16; i++) {
            void *ret;
            CHECK(pthread_join(t[i], &ret) == 0);
            total += (long)ret;
        }
        printf("16 concurrent threads (round %d): sum %ld\n", round, total);
    }

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < 64; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, &attr, detached, NULL) == 0);
    }
    while (atomic_load(&detached_done) < 64) usleep(1000);
    printf("64 detached threads ran\n");
    CHECK(tls_value == 7);
    return 0;
}
