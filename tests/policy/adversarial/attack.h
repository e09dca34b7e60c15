/* Shared helpers for the adversarial policy programs (tests/test_policy_adversarial.py).
 *
 * Every program attempts one escape from a strata sandbox policy and exits
 *   0  BLOCKED: every attempt failed (or did nothing it must not do),
 *   1  ESCAPED: at least one attempt did what the policy forbids,
 *   2  SETUP:   the attack could not even be set up (no gadget, ...).
 * Each attempt prints one line ending in "-> blocked (...)" or "-> ESCAPED (...)",
 * and the last line is "verdict: blocked" / "verdict: ESCAPED".
 *
 * Ways to make a system call without libc, and one that strata never sees:
 *   raw_call()     a `syscall` instruction in the program's own text (under
 *                  strata it is rewritten into a jump to strata: the fast path);
 *   jit_call()     the same code copied into an anonymous page at run time
 *                  (under strata it traps: Syscall User Dispatch sends it to strata);
 *   gadget_call()  a jump to a `syscall; ret` (0f 05 c3) inside strata-rt's own
 *                  text, which Syscall User Dispatch lets through to the kernel
 *                  untouched. Natively there is no strata-rt: the gadget comes
 *                  from libc, so the same attack "escapes" and the test can fail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* long raw_call(long nr, long a1, long a2, long a3, long a4, long a5, long a6) */
long raw_call(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
/* long gadget_call(void *gadget, long nr, long a1, long a2, long a3, long a4, long a5, long a6) */
long gadget_call(void *gadget, long nr, long a1, long a2, long a3, long a4, long a5, long a6);

/* Plain functions without unwind tables: nothing rewrites them ahead of time,
 * and the `call` into the gadget uses the stack below the return address only
 * as `call` itself does. */
__asm__(".text\n"
        ".globl raw_call\n"
        ".type raw_call,@function\n"
        "raw_call:\n"
        "  mov %rdi, %rax\n"
        "  mov %rsi, %rdi\n"
        "  mov %rdx, %rsi\n"
        "  mov %rcx, %rdx\n"
        "  mov %r8, %r10\n"
        "  mov %r9, %r8\n"
        "  mov 8(%rsp), %r9\n"
        "  syscall\n"
        "  ret\n"
        ".size raw_call, .-raw_call\n"
        ".globl gadget_call\n"
        ".type gadget_call,@function\n"
        "gadget_call:\n"
        "  mov %rdi, %r11\n" /* the gadget (r11 is clobbered by syscall anyway) */
        "  mov %rsi, %rax\n"
        "  mov %rdx, %rdi\n"
        "  mov %rcx, %rsi\n"
        "  mov %r8, %rdx\n"
        "  mov %r9, %r10\n"
        "  mov 8(%rsp), %r8\n"
        "  mov 16(%rsp), %r9\n"
        "  call *%r11\n" /* syscall; ret -> back here */
        "  ret\n"
        ".size gadget_call, .-gadget_call\n");

/* long jit_call(long nr, long a1, long a2, long a3, long a4, long a5, long a6):
 * raw_call's code, copied at run time into an anonymous executable page.
 * Under strata, raw_call's own `syscall` (in the program's file-backed text)
 * is rewritten into a jump to strata before the program starts (the fast
 * path), so it never traps; this copy is code strata has never seen, whose
 * `syscall` does trap through Syscall User Dispatch (strata rewrites JIT
 * code lazily only at `mov $NR,%eax; syscall`, which this is not). */
#include <sys/mman.h>
static long (*jit_fn)(long, long, long, long, long, long, long);
static inline long jit_call(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
    if (!jit_fn) {
        static const unsigned char code[] = {
            0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6, 0x48, 0x89, 0xca, /* rdi->rax, rsi->rdi, ... */
            0x4d, 0x89, 0xc2, 0x4d, 0x89, 0xc8, 0x4c, 0x8b, 0x4c, 0x24, 0x08,       /* r8->r10, r9->r8, 8(%rsp)->r9 */
            0x0f, 0x05, 0xc3};                                                      /* syscall; ret */
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return -ENOMEM;
        memcpy(p, code, sizeof code);
        if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0)
            return -ENOMEM;
        jit_fn = (long (*)(long, long, long, long, long, long, long))p;
    }
    return jit_fn(nr, a1, a2, a3, a4, a5, a6);
}

/* Output goes straight out (no stdio buffer to lose in a crash, an exec or a fork). */
__attribute__((constructor)) static void attack_unbuffered(void) { setvbuf(stdout, NULL, _IONBF, 0); }

static inline const char *errname(long e) {
    const char *n = strerrorname_np((int)e);
    return n ? n : "?";
}

/* One attempt's outcome: `res` is a raw kernel-style result (negative errno on
 * failure). `escaped` says whether this outcome breaks the policy. Returns it. */
static inline int outcome(const char *what, long res, int escaped) {
    if (escaped)
        printf("%s = %ld -> ESCAPED\n", what, res);
    else if (res < 0 && res > -4096)
        printf("%s = -%s -> blocked\n", what, errname(-res));
    else
        printf("%s = %ld -> blocked\n", what, res);
    return escaped;
}

/* The common case: any non-negative result is an escape. */
static inline int attempt(const char *what, long res) { return outcome(what, res, res >= 0); }

/* Same for a libc call returning -1/errno. */
static inline long libc_res(long r) { return r < 0 ? -(long)errno : r; }

static inline int verdict(int escapes) {
    printf("verdict: %s\n", escapes ? "ESCAPED" : "blocked");
    return escapes ? 1 : 0;
}

static inline void setup_failed(const char *why) {
    printf("setup failed: %s\n", why);
    exit(2);
}

/* ------------------------------------------------------------ mappings */

struct mapping {
    uintptr_t start, end;
    char perms[5];
    char path[256];
};

/* Reads /proc/self/maps into `out` (up to `max` entries); returns the count. */
static inline int read_maps(struct mapping *out, int max) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[512];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        struct mapping *m = &out[n];
        unsigned long s, e;
        char perms[8] = "", path[256] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255[^\n]", &s, &e, perms, path) < 3)
            continue;
        m->start = s;
        m->end = e;
        memcpy(m->perms, perms, 4);
        m->perms[4] = 0;
        char *p = path;
        while (*p == ' ')
            p++;
        snprintf(m->path, sizeof m->path, "%s", p);
        n++;
    }
    fclose(f);
    return n;
}

static inline int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* (a binary replaced on disk while it runs shows as "PATH (deleted)") */
static inline int is_strata_rt(const struct mapping *m) {
    return ends_with(m->path, "strata-rt") || ends_with(m->path, "strata-rt (deleted)");
}

static inline int is_libc(const struct mapping *m) { return strstr(m->path, "/libc.so") != NULL || strstr(m->path, "/libc-") != NULL; }

struct gadget {
    void *addr;        /* a `syscall; ret` */
    const char *where; /* "strata-rt" or "libc" */
    char path[256];    /* the file it is in */
};

/* Finds `syscall; ret` in strata-rt's text or, when there is no strata-rt
 * (natively), in libc's. Exits with status 2 when there is none. */
static inline struct gadget find_gadget(void) {
    static struct mapping maps[512];
    int n = read_maps(maps, 512);
    struct gadget g = {0};
    for (int pass = 0; pass < 2 && !g.addr; pass++) {
        for (int i = 0; i < n && !g.addr; i++) {
            struct mapping *m = &maps[i];
            if (strcmp(m->perms, "r-xp") != 0 || !(pass == 0 ? is_strata_rt(m) : is_libc(m)))
                continue;
            void *hit = memmem((void *)m->start, m->end - m->start, "\x0f\x05\xc3", 3);
            if (hit) {
                g.addr = hit;
                g.where = pass == 0 ? "strata-rt" : "libc";
                snprintf(g.path, sizeof g.path, "%s", m->path);
            }
        }
    }
    if (!g.addr)
        setup_failed("no `syscall; ret` gadget in strata-rt or libc");
    printf("gadget: syscall;ret at %p in %s (%s)\n", g.addr, g.where, g.path);
    return g;
}

/* Path of the strata-rt binary mapped in this process, or NULL natively. */
static inline const char *strata_rt_path(void) {
    static struct mapping maps[512];
    int n = read_maps(maps, 512);
    for (int i = 0; i < n; i++)
        if (is_strata_rt(&maps[i])) {
            char *deleted = strstr(maps[i].path, " (deleted)");
            if (deleted)
                *deleted = 0; /* the file now at that path is strata-rt too */
            return maps[i].path;
        }
    return NULL;
}

/* The static probe (static_probe.c) lives next to the attack binaries
 * (the tests run them by absolute path). */
static inline void probe_path(const char *argv0, char *out, size_t size) {
    char self[512];
    snprintf(self, sizeof self, "%s", argv0);
    char *slash = strrchr(self, '/');
    if (!slash)
        setup_failed("run this program by its path");
    *slash = 0;
    snprintf(out, size, "%s/static_probe", self);
    if (access(out, X_OK) != 0)
        setup_failed("static_probe is missing next to this binary");
}
