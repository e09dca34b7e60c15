/* open_loop N [PATH]: N times open PATH read-only and close it (default: the
 * program's own file, argv[0]). What a call that a policy's layer and its
 * Landlock ruleset look at costs (bench/capture-cost.sh). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    const char *path = argc > 2 ? argv[2] : argv[0];
    for (long i = 0; i < n; i++) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return 1;
        close(fd);
    }
    return 0;
}
