// Re-executes itself through /proc/self/exe (as runc, Go programs and many
// test suites do) and checks that /proc/self/exe names the same file in the
// new image.
#include "util.h"
#include <limits.h>

extern char **environ;

int main(int argc, char **argv) {
    char exe[PATH_MAX], real[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0);
    exe[n] = 0;
    CHECK(realpath(argv[0], real) != NULL);
    int same = strcmp(exe, real) == 0;
    int gen = argc > 1 ? atoi(argv[1]) : 0;
    printf("generation %d: /proc/self/exe is argv[0]: %s\n", gen, same ? "yes" : "no");
    CHECK(same);
    if (gen < 3) {
        char num[16];
        snprintf(num, sizeof num, "%d", gen + 1);
        char *args[] = {argv[0], num, NULL};
        fflush(stdout);
        execve("/proc/self/exe", args, environ);
        CHECK(!"execve /proc/self/exe failed");
    }
    return 0;
}
