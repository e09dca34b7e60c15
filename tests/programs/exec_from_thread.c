// A secondary thread calls execve while other threads are blocked; the kernel
// destroys the other threads and the new image runs with the original pid
// (checked through a variable carried in argv).
// cflags: -pthread
#include "util.h"
#include <pthread.h>
#include <sys/syscall.h>

extern char **environ;
static char *self;

static void *sleeper(void *arg) {
    (void)arg;
    for (;;) pause();
    return NULL;
}

static void *execer(void *arg) {
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    CHECK(syscall(SYS_gettid) != getpid());
    char *args[] = {self, "child", pid, NULL};
    (void)arg;
    execve(self, args, environ);
    CHECK(!"execve failed");
    return NULL;
}

int main(int argc, char **argv) {
    self = argv[0];
    if (argc == 3) {
        int same = atoi(argv[2]) == getpid();
        printf("after exec from a thread: same pid %s, tid == pid %s\n", same ? "yes" : "no",
               syscall(SYS_gettid) == getpid() ? "yes" : "no");
        /* Only one thread is left. */
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "Threads:", 8) == 0) printf("%s", line);
        return same ? 0 : 1;
    }
    printf("starting threads\n");
    fflush(stdout);
    pthread_t t;
    for (int i = 0; i < 3; i++) CHECK(pthread_create(&t, NULL, sleeper, NULL) == 0);
    CHECK(pthread_create(&t, NULL, execer, NULL) == 0);
    for (;;) pause();
}
