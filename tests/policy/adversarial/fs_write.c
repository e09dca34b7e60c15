/* Attack 10 (and 2's file half): write to the file system under a policy
 * that forbids it (builtin:read-only-fs, or a policy file that allows one
 * directory only). DIR holds `existing` (content "original"), `victim`,
 * `victim2` and `victim3`, which the test created. Tried: creating files through libc, a raw
 * syscall (rewritten and trapping) and the strata gadget, opening `existing` for writing,
 * truncating it, linking it, renaming `victim2` and `victim3`, unlinking
 * `victim`, mkdir, symlink,
 * mknod(FIFO), an O_TMPFILE linked into place. The program checks the
 * file system afterwards (and so does the test).
 * With ALLOWED (a directory the policy lets the program write), creating a
 * file there through libc and the gadget is a control: it must work.
 * Usage: fs_write DIR [ALLOWED] */
#include "attack.h"

static struct gadget g;
static const char *dir;

static char *at(const char *name) {
    static char bufs[8][4096];
    static int k;
    char *b = bufs[k++ & 7];
    snprintf(b, 4096, "%s/%s", dir, name);
    return b;
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* An attempt whose success is judged by the file system: `made` must not exist after it. */
static int create_attempt(const char *what, long res, const char *made) {
    int esc = res >= 0 || exists(made);
    if (res >= 0 && res < 4096 && strstr(what, "open"))
        close((int)res);
    return outcome(what, res, esc);
}

int main(int argc, char **argv) {
    if (argc < 2)
        setup_failed("usage: fs_write DIR [ALLOWED]");
    dir = argv[1];
    g = find_gadget();
    static const char *victims[] = {"victim", "victim2", "victim3"};
    if (!exists(at("existing")) || !exists(at("victim")) || !exists(at("victim2")) || !exists(at("victim3")))
        setup_failed("DIR/existing and DIR/victim{,2,3} must exist");
    int esc = 0;
    char what[4200];
    const int cflags = O_WRONLY | O_CREAT | O_EXCL;

    snprintf(what, sizeof what, "libc open(%s, O_CREAT)", at("new-libc"));
    esc |= create_attempt(what, libc_res(open(at("new-libc"), cflags, 0644)), at("new-libc"));
    snprintf(what, sizeof what, "raw syscall (rewritten site) openat(%s, O_CREAT)", at("new-raw"));
    esc |= create_attempt(what, raw_call(SYS_openat, AT_FDCWD, (long)at("new-raw"), cflags, 0644, 0, 0), at("new-raw"));
    snprintf(what, sizeof what, "trapping syscall openat(%s, O_CREAT)", at("new-jit"));
    esc |= create_attempt(what, jit_call(SYS_openat, AT_FDCWD, (long)at("new-jit"), cflags, 0644, 0, 0), at("new-jit"));
    snprintf(what, sizeof what, "gadget openat(%s, O_CREAT)", at("new-gadget"));
    esc |= create_attempt(what, gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)at("new-gadget"), cflags, 0644, 0, 0),
                          at("new-gadget"));
    snprintf(what, sizeof what, "gadget creat(%s)", at("new-creat"));
    esc |= create_attempt(what, gadget_call(g.addr, SYS_creat, (long)at("new-creat"), 0644, 0, 0, 0, 0), at("new-creat"));

    long fd = gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)at("existing"), O_WRONLY, 0, 0, 0);
    snprintf(what, sizeof what, "gadget openat(%s, O_WRONLY)", at("existing"));
    if (fd >= 0) {
        gadget_call(g.addr, SYS_write, fd, (long)"pwned\n", 6, 0, 0, 0);
        close((int)fd);
    }
    esc |= attempt(what, fd);
    snprintf(what, sizeof what, "libc open(%s, O_RDWR|O_APPEND)", at("existing"));
    fd = libc_res(open(at("existing"), O_RDWR | O_APPEND));
    if (fd >= 0) {
        if (write((int)fd, "pwned\n", 6) < 0) {
        }
        close((int)fd);
    }
    esc |= attempt(what, fd);
    snprintf(what, sizeof what, "gadget truncate(%s, 0)", at("existing"));
    esc |= attempt(what, gadget_call(g.addr, SYS_truncate, (long)at("existing"), 0, 0, 0, 0, 0));
    /* Truncating by opening without asking to write (O_RDONLY, or the access
     * mode 3): Landlock's write right does not cover it, seccomp must. */
    static const struct {
        const char *how;
        long flags;
    } truncs[] = {{"O_RDONLY|O_TRUNC", O_RDONLY | O_TRUNC},
                  {"3|O_TRUNC", 3 | O_TRUNC},
                  {"O_RDONLY|O_CREAT|O_TRUNC", O_RDONLY | O_CREAT | O_TRUNC}};
    for (unsigned i = 0; i < sizeof truncs / sizeof truncs[0]; i++) {
        snprintf(what, sizeof what, "gadget openat(%s, %s)", at("existing"), truncs[i].how);
        fd = gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)at("existing"), truncs[i].flags, 0, 0, 0);
        if (fd >= 0)
            close((int)fd);
        esc |= attempt(what, fd);
        snprintf(what, sizeof what, "gadget open(%s, %s)", at("existing"), truncs[i].how);
        fd = gadget_call(g.addr, SYS_open, (long)at("existing"), truncs[i].flags, 0, 0, 0, 0);
        if (fd >= 0)
            close((int)fd);
        esc |= attempt(what, fd);
    }
    snprintf(what, sizeof what, "raw syscall (rewritten site) openat(%s, O_RDONLY|O_TRUNC)", at("existing"));
    fd = raw_call(SYS_openat, AT_FDCWD, (long)at("existing"), O_RDONLY | O_TRUNC, 0, 0, 0);
    if (fd >= 0)
        close((int)fd);
    esc |= attempt(what, fd);
    struct {
        unsigned long long flags, mode, resolve;
    } how = {O_RDONLY | O_TRUNC, 0, 0};
    /* By handle (needs CAP_DAC_READ_SEARCH: as root it truncates natively). */
    struct {
        unsigned int bytes;
        int type;
        unsigned char f[128];
    } fh = {.bytes = 128};
    int mount_id, dirfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dirfd >= 0 && name_to_handle_at(AT_FDCWD, at("existing"), (struct file_handle *)&fh, &mount_id, 0) == 0) {
        snprintf(what, sizeof what, "gadget open_by_handle_at(%s, O_RDONLY|O_TRUNC)", at("existing"));
        fd = gadget_call(g.addr, SYS_open_by_handle_at, dirfd, (long)&fh, O_RDONLY | O_TRUNC, 0, 0, 0);
        if (fd >= 0)
            close((int)fd);
        esc |= attempt(what, fd);
    }
    if (dirfd >= 0)
        close(dirfd);
    snprintf(what, sizeof what, "gadget openat2(%s, O_RDONLY|O_TRUNC)", at("existing"));
    fd = gadget_call(g.addr, 437 /* openat2 */, AT_FDCWD, (long)at("existing"), (long)&how, sizeof how, 0, 0);
    if (fd >= 0)
        close((int)fd);
    esc |= attempt(what, fd);
    snprintf(what, sizeof what, "gadget link(%s, %s)", at("existing"), at("hardlink"));
    esc |= create_attempt(what, gadget_call(g.addr, SYS_link, (long)at("existing"), (long)at("hardlink"), 0, 0, 0, 0),
                          at("hardlink"));
    snprintf(what, sizeof what, "gadget rename(%s, %s)", at("victim2"), at("renamed"));
    esc |= attempt(what, gadget_call(g.addr, SYS_rename, (long)at("victim2"), (long)at("renamed"), 0, 0, 0, 0));
    snprintf(what, sizeof what, "gadget renameat2(%s, %s, RENAME_NOREPLACE)", at("victim3"), at("renamed2"));
    esc |= attempt(what, gadget_call(g.addr, SYS_renameat2, AT_FDCWD, (long)at("victim3"), AT_FDCWD, (long)at("renamed2"),
                                     1 /* RENAME_NOREPLACE */, 0));
    snprintf(what, sizeof what, "gadget unlink(%s)", at("victim"));
    esc |= attempt(what, gadget_call(g.addr, SYS_unlink, (long)at("victim"), 0, 0, 0, 0, 0));
    snprintf(what, sizeof what, "libc unlink(%s)", at("victim"));
    esc |= attempt(what, libc_res(unlink(at("victim"))));
    snprintf(what, sizeof what, "gadget mkdir(%s)", at("newdir"));
    esc |= create_attempt(what, gadget_call(g.addr, SYS_mkdir, (long)at("newdir"), 0755, 0, 0, 0, 0), at("newdir"));
    snprintf(what, sizeof what, "gadget symlink(/etc/passwd, %s)", at("symlink"));
    esc |= create_attempt(what, gadget_call(g.addr, SYS_symlink, (long)"/etc/passwd", (long)at("symlink"), 0, 0, 0, 0),
                          at("symlink"));
    snprintf(what, sizeof what, "gadget mknod(%s, S_IFIFO)", at("fifo"));
    esc |= create_attempt(what, gadget_call(g.addr, SYS_mknod, (long)at("fifo"), S_IFIFO | 0644, 0, 0, 0, 0), at("fifo"));
    fd = gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)dir, O_TMPFILE | O_WRONLY, 0644, 0, 0);
    snprintf(what, sizeof what, "gadget openat(%s, O_TMPFILE|O_WRONLY)", dir);
    esc |= attempt(what, fd);
    if (fd >= 0) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%ld", fd);
        snprintf(what, sizeof what, "  then gadget linkat(that tmpfile, %s)", at("tmpfile"));
        create_attempt(what, gadget_call(g.addr, SYS_linkat, AT_FDCWD, (long)proc, AT_FDCWD, (long)at("tmpfile"),
                                         AT_SYMLINK_FOLLOW, 0),
                       at("tmpfile"));
    }

    /* What the file system says. */
    char buf[64] = "";
    int in = open(at("existing"), O_RDONLY);
    ssize_t k = in >= 0 ? read(in, buf, sizeof buf - 1) : -1;
    if (k >= 0)
        buf[k] = 0;
    int intact = in >= 0 && strcmp(buf, "original\n") == 0;
    int gone = 0;
    for (int i = 0; i < 3; i++)
        gone += !exists(at(victims[i]));
    printf("afterwards: existing %s, %d of victim{,2,3} gone\n", intact ? "intact" : "CHANGED OR GONE", gone);
    esc |= !intact || gone;

    if (argc > 2) {
        char ok[4096];
        snprintf(ok, sizeof ok, "%s/control-libc", argv[2]);
        long c1 = libc_res(open(ok, cflags, 0644));
        snprintf(ok, sizeof ok, "%s/control-gadget", argv[2]);
        long c2 = gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)ok, cflags, 0644, 0, 0);
        printf("control: creating files in the allowed %s: libc %s, gadget %s\n", argv[2],
               c1 >= 0 ? "ok" : errname(-c1), c2 >= 0 ? "ok" : errname(-c2));
        if (c1 >= 0) {
            if (write((int)c1, "control\n", 8) < 0) {
            }
            close((int)c1);
        }
        if (c2 >= 0)
            close((int)c2);
        /* truncate(2) through libc, of a file the policy lets the program
         * write: strata serves it (the kernel refuses truncate(2) itself). */
        snprintf(ok, sizeof ok, "%s/control-libc", argv[2]);
        long t = libc_res(truncate(ok, 3));
        printf("control: truncate in the allowed %s: %s\n", argv[2], t >= 0 ? "ok" : errname(-t));
    }
    return verdict(esc);
}
