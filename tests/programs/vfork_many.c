// More vfork children and short-lived threads than strata keeps thread states
// for (8192): each state must be freed when the child or thread ends, or the
// later ones fail with EAGAIN.
// cflags: -pthread
#include "util.h"
#include <pthread.h>
#include <sys/wait.h>

static void *noop(void *arg) { return arg; }

int main(void) {
    int n = 0;
    for (int i = 0; i < 9000; i++) {
        pid_t pid = vfork();
        CHECK(pid >= 0);
        if (pid == 0)
            _exit(i & 0x7f);
        int st;
        CHECK(waitpid(pid, &st, 0) == pid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == (i & 0x7f));
        n++;
    }
    printf("vfork children: %d\n", n);
    n = 0;
    for (int i = 0; i < 9000; i++) {
        pthread_t t;
        void *r;
        CHECK(pthread_create(&t, NULL, noop, (void *)(long)i) == 0);
        CHECK(pthread_join(t, &r) == 0);
        CHECK((long)r == i);
        n++;
    }
    printf("threads: %d\n", n);
    return 0;
}
