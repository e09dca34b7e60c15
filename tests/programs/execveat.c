// execveat: a name relative to a directory descriptor, a descriptor of the
// program itself with AT_EMPTY_PATH (what fexecve does), and the errors:
// an empty name without AT_EMPTY_PATH (ENOENT), a bad descriptor (EBADF), a
// relative name through a descriptor that is not a directory (ENOTDIR), a
// missing name (ENOENT). Each successful exec runs this program again with
// the step in argv[1]; the last step prints its argv and exits.
// as-nobody
#include "util.h"
#include <fcntl.h>
#include <libgen.h>
#include <sys/syscall.h>

extern char **environ;

static int xat(int dirfd, const char *name, char *const argv[], int flags) {
    return (int)syscall(SYS_execveat, dirfd, name, argv, environ, flags);
}

static void fails(const char *what, int dirfd, const char *name, int flags) {
    char *args[] = {"never", NULL};
    errno = 0;
    int r = xat(dirfd, name, args, flags);
    printf("%-40s -> %d %s\n", what, r, strerrorname_np(errno));
}

int main(int argc, char **argv) {
    if (argc > 1) {
        printf("step %s: argv[0]=%s argc=%d\n", argv[1], basename(argv[0]), argc);
        if (strcmp(argv[1], "2") == 0)
            return 0;
        // Step 1 goes on to step 2: the program through its own descriptor.
        int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        CHECK(self >= 0);
        char *next[] = {"by-fd", "2", NULL};
        fflush(stdout);
        xat(self, "", next, AT_EMPTY_PATH);
        printf("execveat AT_EMPTY_PATH failed: %s\n", strerrorname_np(errno));
        return 1;
    }
    // Errors first: the process goes on after each.
    int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    fails("empty name without AT_EMPTY_PATH", fd, "", 0);
    fails("bad descriptor", 9999, "x", 0);
    fails("relative name through a file", fd, "x", 0);
    char *copy = strdup(argv[0]);
    int dir = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(dir >= 0);
    fails("missing name in a directory", dir, "no-such-program", 0);
    fflush(stdout);
    // Step 1: this program by its name relative to its directory.
    char *copy2 = strdup(argv[0]);
    char *next[] = {"by-dirfd", "1", NULL};
    xat(dir, basename(copy2), next, 0);
    printf("execveat by dirfd failed: %s\n", strerrorname_np(errno));
    return 1;
}
