// A small alternate signal stack, as every Rust program's threads have
// (SIGSTKSZ, for stack-overflow detection): strata's SIGSYS frames land on
// it, and strata must still run its own code on its own stack, including
// the heavy paths (execve, clone, long paths).
// as-nobody
// cflags: -pthread
#include "util.h"
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/auxv.h>
#include <sys/wait.h>

extern char **environ;

static void set_small_altstack(void) {
    size_t size = SIGSTKSZ;
    size_t min = getauxval(AT_MINSIGSTKSZ);
    if (min > size)
        size = min;
    stack_t ss = {.ss_sp = malloc(size), .ss_size = size};
    CHECK(ss.ss_sp && sigaltstack(&ss, NULL) == 0);
}

static void work(const char *who) {
    char buf[PATH_MAX];
    CHECK(readlink("/proc/self/exe", buf, sizeof buf) > 0);
    pid_t pid;
    char *argv[] = {"true", NULL};
    CHECK(posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) == 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "exit 5", (char *)NULL);
        _exit(99);
    }
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 5);
    printf("%s: spawn, fork+exec and readlink on a %s alternate stack: ok\n", who, "small");
}

static void *thread_main(void *arg) {
    set_small_altstack();
    work(arg);
    return NULL;
}

int main(void) {
    set_small_altstack();
    work("main thread");
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_main, "second thread") == 0);
    CHECK(pthread_join(t, NULL) == 0);
    return 0;
}
