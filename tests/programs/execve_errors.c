// execve failures come back to the caller with the kernel's errno:
// ENOENT (missing file, missing #! interpreter), EACCES (no execute bit, a
// directory), ENOEXEC (text without #!, empty file, truncated ELF header),
// ENOTDIR and EFAULT; the process is unchanged afterwards.
// as-nobody
#include "util.h"
#include <fcntl.h>
#include <sys/stat.h>

extern char **environ;
static char dir[] = "/tmp/strata-execve-XXXXXX";

static void make(const char *name, const char *content, size_t len, mode_t mode) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, content, len) == (ssize_t)len);
    CHECK(close(fd) == 0);
    CHECK(chmod(path, mode) == 0);
}

static void try(const char *what, const char *name) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *args[] = {path, NULL};
    errno = 0;
    int r = execve(path, args, environ);
    printf("%-34s -> %d %s (%s)\n", what, r, strerrorname_np(errno), strerror(errno));
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL);
    make("text", "echo this is not a script\n", 26, 0755);
    make("empty", "", 0, 0755);
    make("noexec", "#!/bin/sh\necho hi\n", 18, 0644);
    make("badinterp", "#!/nonexistent/interpreter\n", 27, 0755);
    make("shortelf", "\177ELF\002\001\001", 7, 0755);
    char sub[256];
    snprintf(sub, sizeof sub, "%s/subdir", dir);
    CHECK(mkdir(sub, 0755) == 0);

    try("missing file", "does-not-exist");
    try("text file without #!", "text");
    try("empty file", "empty");
    try("script without execute bit", "noexec");
    try("#! naming a missing interpreter", "badinterp");
    try("truncated ELF header", "shortelf");
    try("a directory", "subdir");
    try("path through a regular file", "text/x");

    errno = 0;
    int r = execve(NULL, NULL, NULL);
    printf("%-34s -> %d %s\n", "NULL path", r, strerrorname_np(errno));
    errno = 0;
    r = execve("", (char *[]){"", NULL}, environ);
    printf("%-34s -> %d %s\n", "empty path", r, strerrorname_np(errno));

    const char *names[] = {"text", "empty", "noexec", "badinterp", "shortelf"};
    char path[256];
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(sub);
    rmdir(dir);
    printf("still running after failed execs\n");
    return 0;
}
