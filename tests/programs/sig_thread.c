// Thread-directed signals: pthread_kill and raw tgkill to each of 4 worker
// threads run the handler in exactly that thread (the handler records its
// gettid); a process-directed kill() while only one thread leaves SIGUSR2
// unblocked is handled by that thread; a thread's signal mask is its own.
// cflags: -pthread
#include "util.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#define N 4
static pid_t tids[N];
static pthread_t threads[N];
static atomic_int ready, stop;
static volatile pid_t handled_by;
static atomic_int handled_count;

static void handler(int sig) {
    (void)sig;
    handled_by = (pid_t)syscall(SYS_gettid);
    atomic_fetch_add(&handled_count, 1);
}

static void *worker(void *arg) {
    long i = (long)arg;
    tids[i] = (pid_t)syscall(SYS_gettid);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    /* Only worker 2 accepts SIGUSR2. */
    pthread_sigmask(i == 2 ? SIG_UNBLOCK : SIG_BLOCK, &m, NULL);
    atomic_fetch_add(&ready, 1);
    while (!atomic_load(&stop)) usleep(1000);
    return NULL;
}

static int index_of(pid_t tid) {
    for (int i = 0; i < N; i++)
        if (tids[i] == tid) return i;
    return tid == getpid() ? -1 : -2;
}

static void wait_for(int n) {
    for (int spins = 0; atomic_load(&handled_count) < n; spins++) {
        CHECK(spins < 5000);
        usleep(1000);
    }
}

int main(void) {
    signal(SIGUSR1, handler);
    signal(SIGUSR2, handler);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &m, NULL);
    for (long i = 0; i < N; i++) CHECK(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
    while (atomic_load(&ready) < N) usleep(1000);

    int n = 0;
    for (int i = N - 1; i >= 0; i--) {
        CHECK(pthread_kill(threads[i], SIGUSR1) == 0);
        wait_for(++n);
        printf("pthread_kill to worker %d: handled by worker %d\n", i, index_of(handled_by));
        CHECK(handled_by == tids[i]);
    }
    for (int i = 0; i < N; i++) {
        CHECK(syscall(SYS_tgkill, getpid(), tids[i], SIGUSR1) == 0);
        wait_for(++n);
        printf("tgkill to worker %d: handled by worker %d\n", i, index_of(handled_by));
        CHECK(handled_by == tids[i]);
    }
    CHECK(kill(getpid(), SIGUSR2) == 0);
    wait_for(++n);
    printf("kill(SIGUSR2) with only worker 2 unblocked: handled by worker %d\n", index_of(handled_by));
    CHECK(handled_by == tids[2]);

    raise(SIGUSR1);
    printf("raise in main: handled by %s\n", index_of(handled_by) == -1 ? "main" : "another thread");
    atomic_store(&stop, 1);
    for (int i = 0; i < N; i++) CHECK(pthread_join(threads[i], NULL) == 0);
    return 0;
}
