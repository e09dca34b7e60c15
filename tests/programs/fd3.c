// The harness opens a file on descriptor 3 before starting the program: it
// is readable and read-only, and it is the only descriptor above stderr; the
// next open() returns 4 and the descriptor table holds no extra entries
// (counted through /proc/self/fd and by probing 4..63).
// fd3: contents of the file passed on fd 3
// as-nobody
#include "util.h"
#include <dirent.h>
#include <fcntl.h>

int main(void) {
    char buf[256];
    ssize_t n = read(3, buf, sizeof buf - 1);
    CHECK(n >= 0);
    buf[n] = 0;
    printf("fd 3 says: %s", buf);
    int fl = fcntl(3, F_GETFL);
    printf("fd 3 access mode O_RDONLY: %d\n", (fl & O_ACCMODE) == O_RDONLY);
    int open_above = 0;
    for (int fd = 4; fd < 64; fd++) open_above += fcntl(fd, F_GETFD) != -1;
    printf("descriptors open in 4..63: %d\n", open_above);
    int fd = open("/dev/null", O_RDONLY);
    printf("next open() returns %d\n", fd);
    close(fd);
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    int entries = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.') entries++;
    closedir(d);
    printf("/proc/self/fd entries (including the directory's own): %d\n", entries);
    return 0;
}
