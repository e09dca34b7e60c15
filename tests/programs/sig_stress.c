// Many signals while the main thread is busy making system calls: a second
// thread queues 2000 real-time signals (each with its index as si_value) to
// the main thread with pthread_sigqueue, and main, looping over getppid and
// write-to-a-pipe syscalls, must receive every one exactly once and in order.
// A burst of 2000 SIGUSR1 to a busy thread also arrives at least once.
// cflags: -pthread
#include "util.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#define COUNT 2000
static pthread_t main_thread;
static volatile int received, in_order = 1, usr1;
static atomic_int sender_done;

static void rt_handler(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    if (si->si_value.sival_int != received) in_order = 0;
    received++;
}
static void usr1_handler(int sig) {
    (void)sig;
    usr1++;
}

static void *sender(void *arg) {
    (void)arg;
    for (int i = 0; i < COUNT; i++) {
        union sigval v = {.sival_int = i};
        while (pthread_sigqueue(main_thread, SIGRTMIN + 1, v) != 0) {
            CHECK(errno == EAGAIN); /* queue full: let the receiver drain */
            usleep(100);
        }
    }
    for (int i = 0; i < COUNT; i++) pthread_kill(main_thread, SIGUSR1);
    atomic_store(&sender_done, 1);
    return NULL;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = rt_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGRTMIN + 1, &sa, NULL) == 0);
    signal(SIGUSR1, usr1_handler);
    main_thread = pthread_self();
    int p[2];
    CHECK(pipe(p) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, sender, NULL) == 0);
    long calls = 0;
    char buf[16];
    while (!atomic_load(&sender_done) || received < COUNT) {
        CHECK(getppid() > 0);
        CHECK(write(p[1], "x", 1) == 1);
        CHECK(read(p[0], buf, 1) == 1);
        calls++;
    }
    CHECK(pthread_join(t, NULL) == 0);
    printf("received %d real-time signals, in order %d; SIGUSR1 arrived: %d\n", received, in_order, usr1 > 0);
    CHECK(received == COUNT && in_order);
    return 0;
}
