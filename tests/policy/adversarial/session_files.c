/* Attack 17: another strata session's state. Every session keeps a file
 * (counters, the trace ring, and the site cache: which instructions of
 * which libraries the session's processes rewrite, and how) that every
 * process of its tree maps shared, by path, from the temporary directory.
 * A program whose policy lets it write there can open another session's
 * file (same user) and steer the code patching of processes that are not
 * in its sandbox. The program opens the victim's file read-write through
 * libc and the strata gadget; to prove the write without harming the
 * victim it writes the file's first word back unchanged. Then it tries to
 * plant a file among the victim's text images (VICTIM.text: rewritten code
 * the victim's processes map and run), and removes it if that worked.
 * Usage: session_files VICTIM_SESSION_FILE */
#include "attack.h"

int main(int argc, char **argv) {
    if (argc < 2)
        setup_failed("usage: session_files VICTIM_SESSION_FILE");
    struct gadget g = find_gadget();
    const char *victim = argv[1];
    char magic[9] = "";
    int rd = open(victim, O_RDONLY);
    if (rd < 0 || pread(rd, magic, 8, 0) != 8)
        setup_failed("cannot read the victim's session file");
    close(rd);
    printf("victim session file %s (magic %.8s)\n", victim, magic);
    int esc = 0;
    char what[4200];
    for (int via = 0; via < 2; via++) {
        long fd = via ? gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)victim, O_RDWR, 0, 0, 0)
                      : libc_res(open(victim, O_RDWR));
        long w = fd;
        if (fd >= 0) {
            w = via ? gadget_call(g.addr, SYS_pwrite64, fd, (long)magic, 8, 0, 0, 0) : libc_res(pwrite((int)fd, magic, 8, 0));
            close((int)fd);
        }
        snprintf(what, sizeof what, "%s open(O_RDWR) + pwrite of another session's file", via ? "gadget" : "libc");
        esc |= attempt(what, w);
    }
    char plant[4200];
    snprintf(plant, sizeof plant, "%s.text/planted.%d", victim, (int)getpid());
    for (int via = 0; via < 2; via++) {
        long fd = via ? gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)plant, O_WRONLY | O_CREAT | O_EXCL, 0600, 0, 0)
                      : libc_res(open(plant, O_WRONLY | O_CREAT | O_EXCL, 0600));
        if (fd >= 0) {
            close((int)fd);
            unlink(plant);
        }
        snprintf(what, sizeof what, "%s creating a file among another session's text images", via ? "gadget" : "libc");
        esc |= attempt(what, fd);
    }
    return verdict(esc);
}
