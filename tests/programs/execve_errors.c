// execve failures come back to the caller with the kernel's errno:
// ENOENT (missing file, missing #! interpreter), EACCES (no execute bit, a
// directory), ENOEXEC (text without #!, empty file, truncated ELF header),
// ENOTDIR and EFAULT; EACCES for an ELF program whose interpreter (PT_INTERP)
// is readable but not executable, or a directory, as the kernel opens it for
// execution; the process is unchanged afterwards.
// as-nobody
#include "util.h"
#include <fcntl.h>
#include <sys/stat.h>

extern char **environ;
static char dir[] = "/tmp/strata-eXXXXXX"; /* 19 characters: see main */

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

/* Copies `from` to dir/name with `mode`; in a copy of an ELF program, the
 * interpreter's name `old` becomes `new` (same length). */
static void copy(const char *from, const char *name, mode_t mode, const char *old, const char *new) {
    int in = open(from, O_RDONLY | O_CLOEXEC);
    CHECK(in >= 0);
    struct stat st;
    CHECK(fstat(in, &st) == 0);
    char *buf = malloc(st.st_size);
    CHECK(buf != NULL && read(in, buf, st.st_size) == st.st_size);
    close(in);
    if (old) {
        char *at = memmem(buf, st.st_size, old, strlen(old) + 1);
        CHECK(at != NULL && strlen(new) == strlen(old));
        memcpy(at, new, strlen(new));
    }
    make(name, buf, st.st_size, mode);
    free(buf);
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
    // An interpreter that may be read but not executed: this program's own
    // interpreter, copied without its execute bits under a name of the same
    // length as the one in this program's headers.
    const char *interp = "/lib64/ld-linux-x86-64.so.2";
    char noexec_interp[64];
    snprintf(noexec_interp, sizeof noexec_interp, "%s/%s", dir, "ld.so.2");
    CHECK(strlen(noexec_interp) == strlen(interp));
    copy(interp, "ld.so.2", 0644, NULL, NULL);
    copy("/proc/self/exe", "interp-noexec", 0755, interp, noexec_interp);
    try("interpreter without execute bit", "interp-noexec");
    // An interpreter that is a directory (search permission is not enough).
    char dir_interp[64];
    snprintf(dir_interp, sizeof dir_interp, "%s/%s", dir, "ld.dir2");
    CHECK(mkdir(dir_interp, 0755) == 0);
    copy("/proc/self/exe", "interp-dir", 0755, interp, dir_interp);
    try("interpreter that is a directory", "interp-dir");
    rmdir(dir_interp);

    errno = 0;
    int r = execve(NULL, NULL, NULL);
    printf("%-34s -> %d %s\n", "NULL path", r, strerrorname_np(errno));
    errno = 0;
    r = execve("", (char *[]){"", NULL}, environ);
    printf("%-34s -> %d %s\n", "empty path", r, strerrorname_np(errno));

    const char *names[] = {"text", "empty", "noexec", "badinterp", "shortelf", "ld.so.2", "interp-noexec", "interp-dir"};
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
