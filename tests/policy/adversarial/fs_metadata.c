/* Attack 10b: change a file without writing its data. Landlock has no
 * access right for chmod, chown, utimes or extended attributes, so under
 * builtin:read-only-fs these rest on strata's in-process layer and on
 * whatever the seccomp backstop adds; through the strata gadget only the
 * kernel's rules apply. DIR/meta was created by the test (mode 0644).
 * Each change is tried through libc (strata's layer sees it), then through
 * the gadget, and judged by stat/getxattr against the state just before it,
 * not by return values.
 * Usage: fs_metadata DIR */
#include "attack.h"
#include <sys/xattr.h>

static struct gadget g;
static char path[4096];

static void look(struct stat *st) {
    if (stat(path, st) != 0)
        setup_failed("stat DIR/meta");
}

/* The value of user.strata ('-' when there is none). */
static char xattr_value(void) {
    char v[8];
    return getxattr(path, "user.strata", v, sizeof v) == 1 ? v[0] : '-';
}

static int try_mode(const char *how, long (*fn)(mode_t), mode_t mode) {
    struct stat a, b;
    look(&a);
    long r = fn(mode);
    look(&b);
    char what[4300];
    snprintf(what, sizeof what, "%s(%s, %o) [mode %o -> %o]", how, path, mode, a.st_mode & 07777, b.st_mode & 07777);
    return outcome(what, r, (a.st_mode & 07777) != (b.st_mode & 07777));
}
static long chmod_libc(mode_t m) { return libc_res(chmod(path, m)); }
static long chmod_gadget(mode_t m) { return gadget_call(g.addr, SYS_chmod, (long)path, m, 0, 0, 0, 0); }
static long fchmod_gadget(mode_t m) {
    int fd = open(path, O_RDONLY); /* reading is allowed */
    long r = fd < 0 ? -errno : gadget_call(g.addr, SYS_fchmod, fd, m, 0, 0, 0, 0);
    close(fd);
    return r;
}

static int try_time(const char *how, long (*fn)(const struct timespec *), time_t t) {
    struct stat a, b;
    look(&a);
    struct timespec ts[2] = {{t, 0}, {t, 0}};
    long r = fn(ts);
    look(&b);
    char what[4300];
    snprintf(what, sizeof what, "%s(%s, mtime=%ld) [mtime %ld -> %ld]", how, path, (long)t, (long)a.st_mtime,
             (long)b.st_mtime);
    return outcome(what, r, a.st_mtime != b.st_mtime);
}
static long utimens_libc(const struct timespec *ts) { return libc_res(utimensat(AT_FDCWD, path, ts, 0)); }
static long utimens_gadget(const struct timespec *ts) {
    return gadget_call(g.addr, SYS_utimensat, AT_FDCWD, (long)path, (long)ts, 0, 0, 0);
}

static int try_group(const char *how, long (*fn)(gid_t)) {
    struct stat a, b;
    look(&a);
    /* root may give the file any group; an unprivileged owner only one of its own. */
    gid_t gid = a.st_gid == 0 ? 1 : 0;
    long r = fn(gid);
    look(&b);
    char what[4300];
    snprintf(what, sizeof what, "%s(%s, -1, %d) [gid %d -> %d]", how, path, gid, a.st_gid, b.st_gid);
    return outcome(what, r, a.st_gid != b.st_gid);
}
static long chown_libc(gid_t gid) { return libc_res(chown(path, -1, gid)); }
static long chown_gadget(gid_t gid) { return gadget_call(g.addr, SYS_chown, (long)path, -1, gid, 0, 0, 0); }

static int try_xattr(const char *how, long (*fn)(const char *), const char *value) {
    char before = xattr_value();
    long r = fn(value);
    char after = xattr_value();
    char what[4300];
    snprintf(what, sizeof what, "%s(%s, user.strata=%s) [value %c -> %c]", how, path, value, before, after);
    return outcome(what, r, before != after);
}
static long setxattr_libc(const char *v) { return libc_res(setxattr(path, "user.strata", v, 1, 0)); }
static long setxattr_gadget(const char *v) {
    return gadget_call(g.addr, SYS_setxattr, (long)path, (long)"user.strata", (long)v, 1, 0, 0);
}

int main(int argc, char **argv) {
    if (argc < 2)
        setup_failed("usage: fs_metadata DIR");
    g = find_gadget();
    snprintf(path, sizeof path, "%s/meta", argv[1]);
    int esc = 0;
    esc |= try_mode("libc chmod", chmod_libc, 0600);
    esc |= try_mode("gadget chmod", chmod_gadget, 0604);
    esc |= try_mode("gadget fchmod (fd opened O_RDONLY)", fchmod_gadget, 0640);
    esc |= try_time("libc utimensat", utimens_libc, 1);
    esc |= try_time("gadget utimensat", utimens_gadget, 2);
    esc |= try_group("libc chown", chown_libc);
    esc |= try_group("gadget chown", chown_gadget);
    esc |= try_xattr("libc setxattr", setxattr_libc, "L");
    esc |= try_xattr("gadget setxattr", setxattr_gadget, "G");
    return verdict(esc);
}
