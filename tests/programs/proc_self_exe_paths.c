// What /proc/self/exe names for a program started by a relative path, by a
// symbolic link, after the program's file was removed, and after the
// program installed a seccomp filter that refuses openat: the canonical
// path of the file (the link resolved), followed by " (deleted)" in the
// third case. strata works the name out the first time the program asks
// (so the removal here comes before the first ask), or before a seccomp
// filter or a chroot could stop it.
#include "util.h"
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

// openat answers EPERM; everything else is allowed.
static void refuse_openat(void) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
    CHECK(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0);
}

static void exe(char *out) {
    ssize_t n = readlink("/proc/self/exe", out, PATH_MAX - 1);
    CHECK(n > 0);
    out[n] = 0;
}

static void copy_self(const char *to) {
    int in = open("/proc/self/exe", O_RDONLY);
    CHECK(in >= 0);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CHECK(out >= 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        CHECK(write(out, buf, n) == n);
    CHECK(n == 0);
    close(in);
    close(out);
}

static int run(const char *dir, const char *path, const char *mode) {
    fflush(stdout);
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) {
        CHECK(chdir(dir) == 0);
        execl(path, path, mode, dir, (char *)NULL);
        _exit(127);
    }
    int st;
    CHECK(waitpid(p, &st, 0) == p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv) {
    char me[PATH_MAX], want[PATH_MAX + 16];
    if (argc == 3) {
        // A child: argv[1] says how it was started, argv[2] is the directory.
        char dir[PATH_MAX];
        CHECK(realpath(argv[2], dir) != NULL);
        snprintf(want, sizeof want, "%s/copy", dir);
        if (strcmp(argv[1], "deleted") == 0) {
            CHECK(unlink("copy") == 0);
            strcat(want, " (deleted)");
        }
        if (strcmp(argv[1], "seccomp") == 0)
            refuse_openat();
        exe(me);
        printf("%s: /proc/self/exe %s\n", argv[1], strcmp(me, want) == 0 ? "as natively" : me);
        return 0;
    }
    exe(me);
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s", me);
    snprintf(dir, sizeof dir, "%s/exe-XXXXXX", dirname(dir));
    CHECK(mkdtemp(dir) != NULL);
    char copy[PATH_MAX + 32], link[PATH_MAX + 32];
    snprintf(copy, sizeof copy, "%s/copy", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    copy_self(copy);
    CHECK(symlink("copy", link) == 0);
    CHECK(run(dir, "./copy", "relative") == 0);
    CHECK(run(dir, link, "link") == 0);
    CHECK(run(dir, link, "seccomp") == 0);
    CHECK(run(dir, "./copy", "deleted") == 0);
    CHECK(access(copy, F_OK) != 0);
    CHECK(unlink(link) == 0);
    CHECK(rmdir(dir) == 0);
    return 0;
}
