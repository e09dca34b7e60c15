// Environments of every size through exec: strata passes an exec's
// environment array and its own configuration on its stack when they fit in
// 4 KiB, else in a mapping of its own (process.rs execve). The program
// re-executes itself with 0 to 700 extra variables (the array alone
// crossing 4 KiB near 500) and with one 100 KB variable, by execve and by
// posix_spawn (a vfork child, whose parent then frees any mapping), and
// each child reports what it received.
// as-nobody
#include "util.h"
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

static int count_env(long *bytes) {
    int n = 0;
    *bytes = 0;
    for (char **e = environ; *e; e++, n++)
        *bytes += (long)strlen(*e);
    return n;
}

/* The parent's environment plus `extra` variables, or one of `big` bytes. */
static char **make_env(int extra, int big) {
    int n = 0;
    while (environ[n])
        n++;
    char **env = calloc((size_t)(n + extra + 2), sizeof *env);
    CHECK(env != NULL);
    for (int i = 0; i < n; i++)
        env[i] = environ[i];
    for (int i = 0; i < extra; i++) {
        env[n + i] = malloc(32);
        CHECK(env[n + i] != NULL);
        snprintf(env[n + i], 32, "ENV_SIZES_%d=%d", i, i * 7);
    }
    if (big) {
        char *v = malloc((size_t)big + 16);
        CHECK(v != NULL);
        strcpy(v, "ENV_SIZES_BIG=");
        memset(v + 14, 'b', (size_t)big);
        v[14 + big] = 0;
        env[n + extra] = v;
    }
    return env;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        long bytes;
        int n = count_env(&bytes);
        const char *last = getenv("ENV_SIZES_699");
        const char *big = getenv("ENV_SIZES_BIG");
        printf("child %s: %d variables added, last %s, big %zu\n", argv[1], n - atoi(argv[2]),
               last ? last : "-", big ? strlen(big) : (size_t)0);
        return 0;
    }
    long bytes;
    int base = count_env(&bytes);
    char basestr[16];
    snprintf(basestr, sizeof basestr, "%d", base);
    int sizes[] = {0, 1, 100, 400, 480, 500, 520, 700};
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (int big = 0; big <= 1; big++) {
            char **env = make_env(sizes[i], big ? 100000 : 0);
            char tag[32];
            snprintf(tag, sizeof tag, "%d%s", sizes[i], big ? "+big" : "");
            char *args[] = {argv[0], tag, basestr, NULL};
            pid_t pid;
            int st;
            fflush(stdout);
            CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, env) == 0);
            CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
            pid = fork();
            CHECK(pid >= 0);
            if (pid == 0) {
                execve(argv[0], args, env);
                _exit(127);
            }
            CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
    }
    return 0;
}
