/* spawn_loop N: N times posix_spawn /bin/true and wait for it, with
 * handlers for SIGHUP, SIGINT, SIGTERM and SIGCHLD installed first, as make
 * has them. How make and gcc start programs: glibc's posix_spawn makes a
 * vfork child with a stack of its own (clone3), which blocks every signal
 * and resets each handled signal before the exec. */
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

static void handler(int sig) { (void)sig; }

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    int sigs[] = {SIGHUP, SIGINT, SIGTERM, SIGCHLD};
    for (unsigned i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], handler);
    char *args[] = {"true", NULL};
    for (long i = 0; i < n; i++) {
        pid_t p;
        if (posix_spawn(&p, "/bin/true", NULL, NULL, args, environ) != 0) return 1;
        int st;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    }
    return 0;
}
