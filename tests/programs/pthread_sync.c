// pthread mutex, condition variables, barrier and rwlock with several
// threads: a bounded queue fed by 4 producers and drained by 4 consumers.
// cflags: -pthread
#include "util.h"
#include <pthread.h>

#define PRODUCERS 4
#define CONSUMERS 4
#define ITEMS 5000
#define QSIZE 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static long queue[QSIZE];
static int head, count, producers_left = PRODUCERS;
static long consumed_sum[CONSUMERS];
static long consumed_n[CONSUMERS];
static pthread_barrier_t barrier;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long shared_value;

static void *producer(void *arg) {
    long id = (long)arg;
    pthread_barrier_wait(&barrier);
    for (long i = 0; i < ITEMS; i++) {
        pthread_mutex_lock(&mu);
        while (count == QSIZE) pthread_cond_wait(&not_full, &mu);
        queue[(head + count) % QSIZE] = id * ITEMS + i + 1;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_lock(&mu);
    producers_left--;
    pthread_cond_broadcast(&not_empty);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *consumer(void *arg) {
    long id = (long)arg;
    pthread_barrier_wait(&barrier);
    for (;;) {
        pthread_mutex_lock(&mu);
        while (count == 0 && producers_left > 0) pthread_cond_wait(&not_empty, &mu);
        if (count == 0) {
            pthread_mutex_unlock(&mu);
            break;
        }
        long v = queue[head];
        head = (head + 1) % QSIZE;
        count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&mu);
        consumed_sum[id] += v;
        consumed_n[id]++;
    }
    for (int i = 0; i < 100; i++) {
        pthread_rwlock_rdlock(&rw);
        long v = shared_value;
        pthread_rwlock_unlock(&rw);
        (void)v;
        pthread_rwlock_wrlock(&rw);
        shared_value++;
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

int main(void) {
    pthread_t p[PRODUCERS], c[CONSUMERS];
    CHECK(pthread_barrier_init(&barrier, NULL, PRODUCERS + CONSUMERS) == 0);
    for (long i = 0; i < CONSUMERS; i++) CHECK(pthread_create(&c[i], NULL, consumer, (void *)i) == 0);
    for (long i = 0; i < PRODUCERS; i++) CHECK(pthread_create(&p[i], NULL, producer, (void *)i) == 0);
    for (int i = 0; i < PRODUCERS; i++) CHECK(pthread_join(p[i], NULL) == 0);
    for (int i = 0; i < CONSUMERS; i++) CHECK(pthread_join(c[i], NULL) == 0);
    long n = 0, sum = 0;
    for (int i = 0; i < CONSUMERS; i++) {
        n += consumed_n[i];
        sum += consumed_sum[i];
    }
    long total = (long)PRODUCERS * ITEMS;
    printf("consumed %ld items, sum %ld (expected %ld)\n", n, sum, total * (total + 1) / 2);
    CHECK(n == total && sum == total * (total + 1) / 2);
    printf("rwlock counter %ld\n", shared_value);
    CHECK(shared_value == CONSUMERS * 100);

    /* A timed wait that times out. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 10 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
    pthread_mutex_lock(&mu);
    int r = pthread_cond_timedwait(&not_empty, &mu, &ts);
    pthread_mutex_unlock(&mu);
    printf("timedwait: %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : strerror(r));
    CHECK(r == ETIMEDOUT);
    return 0;
}
