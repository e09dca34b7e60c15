/* compile_driver FILE: runs the commands of FILE (one per line, words
 * separated by single spaces, no quoting) on request, one at a time, for
 * bench/build-interleaved.py. Reads a command's number (0-based) from stdin,
 * runs it with posix_spawnp (how make starts a recipe; its standard output
 * goes to the driver's standard error), waits for it and writes
 * "NUMBER STATUS CPU_NS WALL_NS" to stdout: CPU is the user + system
 * time of the command and everything it waited for (wait4's rusage), wall
 * from the spawn to the wait's return. Runs until stdin ends.
 *
 * The point: one driver per configuration (natively, under strata, inside
 * bubblewrap...) stays alive while the benchmark hands each compile to every
 * configuration in turn, so the configurations' runs of one compile are
 * milliseconds apart and the machine's drift, which spreads whole builds by
 * 20-45% here, falls on all of them alike. */
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

enum { MAX_CMDS = 4096, MAX_WORDS = 256 };

static char **cmds[MAX_CMDS];
static int ncmds;

static long long ns(struct timeval tv) { return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL; }

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int load(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n') line[--n] = 0;
        if (n == 0) continue;
        if (ncmds == MAX_CMDS) {
            fprintf(stderr, "%s: more than %d commands\n", path, MAX_CMDS);
            return -1;
        }
        char **argv = calloc(MAX_WORDS + 1, sizeof *argv);
        char *copy = strdup(line);
        if (!argv || !copy) return -1;
        int w = 0;
        for (char *s = strtok(copy, " "); s; s = strtok(NULL, " ")) {
            if (w == MAX_WORDS) {
                fprintf(stderr, "%s: a command of more than %d words\n", path, MAX_WORDS);
                return -1;
            }
            argv[w++] = s;
        }
        cmds[ncmds++] = argv;
    }
    free(line);
    fclose(f);
    return ncmds > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: compile_driver FILE\n");
        return 2;
    }
    if (load(argv[1]) != 0) return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0 || posix_spawn_file_actions_adddup2(&fa, 2, 1) != 0) return 2;
    int i;
    while (scanf("%d", &i) == 1) {
        if (i < 0 || i >= ncmds) {
            printf("%d -1 0 0\n", i);
            continue;
        }
        long long t0 = now();
        pid_t p;
        int st = 0;
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        if (posix_spawnp(&p, cmds[i][0], &fa, NULL, cmds[i], environ) != 0) {
            st = -1;
        } else if (wait4(p, &st, 0, &ru) != p) {
            st = -1;
        }
        long long wall = now() - t0;
        printf("%d %d %lld %lld\n", i, st, ns(ru.ru_utime) + ns(ru.ru_stime), wall);
    }
    return 0;
}
