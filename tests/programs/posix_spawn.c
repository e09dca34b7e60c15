// posix_spawn (glibc clones with CLONE_VM|CLONE_VFORK): spawn /bin/echo,
// posix_spawnp via PATH, file actions redirecting the child's stdout into a
// pipe, a signal mask/default set through attributes, and a spawn failure
// (ENOENT reported by posix_spawn's return value).
// as-nobody
#include "util.h"
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int main(void) {
    pid_t pid;
    int st;
    char *argv1[] = {"echo", "spawned", "echo", NULL};
    fflush(stdout);
    CHECK(posix_spawn(&pid, "/bin/echo", NULL, NULL, argv1, environ) == 0);
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("posix_spawn echo: status %d\n", WEXITSTATUS(st));

    char *argv2[] = {"sh", "-c", "exit 4", NULL};
    CHECK(posix_spawnp(&pid, "sh", NULL, NULL, argv2, environ) == 0);
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("posix_spawnp sh: status %d\n", WEXITSTATUS(st));

    int p[2];
    CHECK(pipe(p) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    posix_spawn_file_actions_addclose(&fa, p[1]);
    char *argv3[] = {"echo", "through", "a", "pipe", NULL};
    CHECK(posix_spawn(&pid, "/bin/echo", &fa, NULL, argv3, environ) == 0);
    close(p[1]);
    char buf[256];
    size_t n = 0;
    ssize_t r;
    while ((r = read(p[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
    buf[n] = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("captured from child: %s", buf);
    posix_spawn_file_actions_destroy(&fa);

    /* The child starts with SIGUSR1 blocked (attribute), which grep finds in
       its own /proc/self/status SigBlk mask. */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    posix_spawnattr_setsigmask(&attr, &mask);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    char *argv4[] = {"grep", "SigBlk", "/proc/self/status", NULL};
    fflush(stdout);
    CHECK(posix_spawnp(&pid, "grep", NULL, &attr, argv4, environ) == 0);
    CHECK(waitpid(pid, &st, 0) == pid);
    posix_spawnattr_destroy(&attr);

    char *argv5[] = {"nope", NULL};
    int err = posix_spawn(&pid, "/nonexistent/nope", NULL, NULL, argv5, environ);
    printf("spawn of a missing file: %s\n", strerror(err));
    CHECK(err == ENOENT);
    return 0;
}
