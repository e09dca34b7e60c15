// Raw futex(2) calls: value mismatch (EAGAIN), timeouts (relative and
// absolute bitset), wake of a sleeping waiter, waking several waiters one at
// a time, requeue, and a futex-based lock shared by four threads.
// cflags: -pthread
// as-nobody
#include "util.h"
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

static long futex(atomic_int *uaddr, int op, int val, const struct timespec *ts, atomic_int *uaddr2, int val3) {
    return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

static atomic_int word;
static atomic_int returned;

static void *waiter(void *arg) {
    (void)arg;
    long r = futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    if (r == 0) atomic_fetch_add(&returned, 1);
    return NULL;
}

/* Drepper's "futexes are tricky" mutex 2. */
static atomic_int lockword;
static void lock(void) {
    int c = 0;
    if (atomic_compare_exchange_strong(&lockword, &c, 1)) return;
    if (c != 2) c = atomic_exchange(&lockword, 2);
    while (c != 0) {
        futex(&lockword, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange(&lockword, 2);
    }
}
static void unlock(void) {
    if (atomic_fetch_sub(&lockword, 1) != 1) {
        atomic_store(&lockword, 0);
        futex(&lockword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}
static long counter;
static void *incrementer(void *arg) {
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        lock();
        counter++;
        unlock();
    }
    return NULL;
}

int main(void) {
    atomic_int v = 5;
    long r = futex(&v, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0);
    CHECK(r == -1 && errno == EAGAIN);
    printf("wait on mismatched value: EAGAIN\n");

    struct timespec ts = {0, 20 * 1000 * 1000};
    r = futex(&v, FUTEX_WAIT_PRIVATE, 5, &ts, NULL, 0);
    CHECK(r == -1 && errno == ETIMEDOUT);
    printf("relative timeout: ETIMEDOUT\n");

    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    now.tv_nsec += 20 * 1000 * 1000;
    if (now.tv_nsec >= 1000000000) { now.tv_sec++; now.tv_nsec -= 1000000000; }
    r = futex(&v, FUTEX_WAIT_BITSET_PRIVATE, 5, &now, NULL, FUTEX_BITSET_MATCH_ANY);
    CHECK(r == -1 && errno == ETIMEDOUT);
    printf("absolute bitset timeout: ETIMEDOUT\n");

    r = futex(&v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    CHECK(r == 0);
    printf("wake with no waiters: %ld\n", r);

    /* One waiter: keep waking until the kernel reports it woke someone. */
    pthread_t t[4];
    CHECK(pthread_create(&t[0], NULL, waiter, NULL) == 0);
    long woken = 0;
    while ((woken = futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0)) == 0) usleep(1000);
    CHECK(pthread_join(t[0], NULL) == 0);
    printf("woke one waiter: woken=%ld returned=%d\n", woken, atomic_load(&returned));

    /* Four waiters, woken one at a time. */
    atomic_store(&returned, 0);
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, waiter, NULL) == 0);
    long total = 0;
    while (total < 4) {
        r = futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        CHECK(r == 0 || r == 1);
        total += r;
        if (r == 0) usleep(1000);
    }
    for (int i = 0; i < 4; i++) CHECK(pthread_join(t[i], NULL) == 0);
    printf("woke four waiters one by one: total=%ld returned=%d\n", total, atomic_load(&returned));

    /* Requeue: two waiters on `word`, move them to `other`, wake them there. */
    static atomic_int other;
    atomic_store(&returned, 0);
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, waiter, NULL) == 0);
    long moved = 0;
    while (moved < 2) {
        r = futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)(uintptr_t)INT_MAX, &other, 0);
        CHECK(r >= 0);
        moved += r;
        if (moved < 2) usleep(1000);
    }
    r = futex(&other, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    for (int i = 0; i < 2; i++) CHECK(pthread_join(t[i], NULL) == 0);
    printf("requeued %ld waiters, woke %ld from the second word, returned=%d\n", moved, r, atomic_load(&returned));

    for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, incrementer, NULL) == 0);
    for (int i = 0; i < 4; i++) CHECK(pthread_join(t[i], NULL) == 0);
    printf("futex lock counter: %ld\n", counter);
    CHECK(counter == 80000);
    return 0;
}
