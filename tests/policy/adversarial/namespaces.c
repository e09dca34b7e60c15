/* Attack 14: new namespaces and mounts. In a new user namespace a process
 * is root over its own namespaces (a new network namespace, its own mounts
 * over the file system); mounting over a directory would swap the files a
 * path-based rule sees. The hardening refuses unshare, clone with namespace
 * flags, clone3 (ENOSYS, so libc falls back to clone) and the mount family.
 * Every attempt runs in a forked child (a successful unshare changes the
 * process). A mount that succeeds is undone at once.
 * Usage: namespaces DIR (an empty directory to mount over) */
#include "attack.h"
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>

static struct gadget g;
static const char *dir;

static int in_child(long (*fn)(void), const char *what) {
    pid_t pid = fork();
    if (pid < 0)
        setup_failed("fork");
    if (pid == 0)
        _exit(attempt(what, fn()));
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

static long unshare_user(void) { return gadget_call(g.addr, SYS_unshare, CLONE_NEWUSER, 0, 0, 0, 0, 0); }
static long unshare_net(void) { return gadget_call(g.addr, SYS_unshare, CLONE_NEWNET, 0, 0, 0, 0, 0); }
static long unshare_libc(void) { return libc_res(unshare(CLONE_NEWUSER | CLONE_NEWNET)); }

static long clone_ns(void) {
    long pid = gadget_call(g.addr, SYS_clone, CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0, 0);
    if (pid == 0)
        gadget_call(g.addr, SYS_exit_group, 0, 0, 0, 0, 0, 0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    return pid;
}

static long clone3_plain(void) {
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.exit_signal = SIGCHLD;
    long pid = gadget_call(g.addr, SYS_clone3, (long)&args, sizeof args, 0, 0, 0, 0);
    if (pid == 0)
        gadget_call(g.addr, SYS_exit_group, 0, 0, 0, 0, 0, 0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    return pid;
}

static long mount_tmpfs(void) {
    /* Natively, keep the host's mount table clean: a private mount namespace if we can. */
    gadget_call(g.addr, SYS_unshare, CLONE_NEWNS, 0, 0, 0, 0, 0);
    gadget_call(g.addr, SYS_mount, (long)"none", (long)"/", 0, MS_REC | MS_PRIVATE, 0, 0);
    long r = gadget_call(g.addr, SYS_mount, (long)"strata-escape", (long)dir, (long)"tmpfs", 0, 0, 0);
    if (r == 0)
        gadget_call(g.addr, SYS_umount2, (long)dir, MNT_DETACH, 0, 0, 0, 0);
    return r;
}

static long fsopen_tmpfs(void) { return gadget_call(g.addr, 430 /* fsopen */, (long)"tmpfs", 0, 0, 0, 0, 0); }

int main(int argc, char **argv) {
    if (argc < 2)
        setup_failed("usage: namespaces DIR");
    dir = argv[1];
    g = find_gadget();
    int esc = 0;
    esc |= in_child(unshare_user, "gadget unshare(CLONE_NEWUSER)");
    esc |= in_child(unshare_net, "gadget unshare(CLONE_NEWNET)");
    esc |= in_child(unshare_libc, "libc unshare(CLONE_NEWUSER|CLONE_NEWNET)");
    esc |= in_child(clone_ns, "gadget clone(CLONE_NEWUSER|CLONE_NEWNET)");
    esc |= in_child(clone3_plain, "gadget clone3(no flags)");
    char what[4200];
    snprintf(what, sizeof what, "gadget mount(tmpfs on %s)", dir);
    esc |= in_child(mount_tmpfs, what);
    esc |= in_child(fsopen_tmpfs, "gadget fsopen(tmpfs)");
    return verdict(esc);
}
