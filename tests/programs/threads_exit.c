// Process lifetime with threads: the main thread calls pthread_exit while
// two workers keep running; the process lives on until a worker calls
// exit(3), which ends the other worker (blocked in a read) too. The exit
// status is 3.
// cflags: -pthread
// status: 3
#include "util.h"
#include <pthread.h>

static int p[2];

static void *blocked(void *arg) {
    (void)arg;
    char c;
    read(p[0], &c, 1);
    printf("blocked reader woke up (unexpected)\n");
    return NULL;
}

static void *finisher(void *arg) {
    (void)arg;
    usleep(50000);
    printf("worker: main thread is gone, exiting the process with 3\n");
    exit(3);
}

int main(void) {
    CHECK(pipe(p) == 0);
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, blocked, NULL) == 0);
    CHECK(pthread_create(&b, NULL, finisher, NULL) == 0);
    printf("main: pthread_exit\n");
    fflush(stdout);
    pthread_exit(NULL);
}
