// No mapping is ever writable and executable, with or without strata's fast
// path (which rewrites code through /proc/self/mem and keeps its trampolines
// read-only): after many syscalls through libc's rewritten sites, a thread,
// a fork and a dlopen'ed library, /proc/self/maps has no w+x mapping.
// cflags: -pthread -ldl
#include "util.h"
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>

static int wx_mappings(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512], perms[8];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%*s %7s", perms) == 1 && perms[1] == 'w' && perms[2] == 'x') n++;
    }
    fclose(f);
    return n;
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) CHECK(getppid() > 0);
    return NULL;
}

int main(void) {
    for (int i = 0; i < 1000; i++) CHECK(getpid() > 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    void *h = dlopen("libm.so.6", RTLD_NOW);
    CHECK(h != NULL);
    double (*cosine)(double) = (double (*)(double))dlsym(h, "cos");
    CHECK(cosine != NULL && cosine(0.0) == 1.0);
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) _exit(wx_mappings() == 0 ? 0 : 1);
    int st;
    CHECK(waitpid(p, &st, 0) == p);
    printf("w+x mappings: parent %d, child %s\n", wx_mappings(), WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "none" : "some");
    return 0;
}
