// Signals landing anywhere around rewritten sites. A tight loop of 1 million
// calls (getpid() and syscall(SYS_getppid) in turn, every result checked)
// runs under two timers at once: ITIMER_PROF at the minimum interval (SIGPROF)
// and ITIMER_REAL every 100 us (SIGALRM), both with SA_SIGINFO|SA_RESTART
// handlers. Every handler checks that the interrupted PC lies in the program
// or the C library (or ld.so), never in an interposer's code, that the
// interrupted rsp lies on the main thread's stack, and calls getpid() itself
// (the same site it may have interrupted). Then blocking reads of a pipe (a
// site called 1000 times first): SIGALRM without SA_RESTART makes read fail
// with EINTR; with SA_RESTART read resumes and returns the byte a child writes
// after 200 ms. Counts of signals vary from run to run; only "more than zero"
// is printed.
#include "util.h"
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>

#define CALLS 1000000

struct range {
    unsigned long lo, hi;
};
static struct range code[64];
static int ncode;
static unsigned long stack_anchor;
static long pid, ppid;
static volatile long nsig[NSIG], bad_pc, bad_sp, bad_pid, first_bad_pc, first_bad_sp;

/* The executable mappings of the program, the C library and ld.so. */
static void load_code_ranges(void) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0);
    exe[n] = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[4096 + 256];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        int off = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &off) < 3 || off == 0) continue;
        char *path = line + off;
        path[strcspn(path, "\n")] = 0;
        if (perms[2] != 'x') continue;
        if (strcmp(path, exe) == 0 || strstr(path, "/libc.so") || strstr(path, "/ld-linux")) {
            CHECK(ncode < 64);
            code[ncode].lo = lo;
            code[ncode].hi = hi;
            ncode++;
        }
    }
    fclose(f);
    CHECK(ncode >= 2);
}

static int in_code(unsigned long pc) {
    for (int i = 0; i < ncode; i++)
        if (pc >= code[i].lo && pc < code[i].hi) return 1;
    return 0;
}

/* The /proc/self/maps line holding addr (for a failure message). */
static void describe(const char *what, unsigned long addr) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096 + 256];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
            fprintf(stderr, "  %s %#lx is in: %s", what, addr, line);
            fclose(f);
            return;
        }
    }
    fprintf(stderr, "  %s %#lx is in no mapping\n", what, addr);
    if (f) fclose(f);
}

static void on_signal(int sig, siginfo_t *si, void *ucv) {
    (void)si;
    int saved = errno;
    ucontext_t *uc = ucv;
    unsigned long pc = (unsigned long)uc->uc_mcontext.gregs[REG_RIP];
    unsigned long sp = (unsigned long)uc->uc_mcontext.gregs[REG_RSP];
    nsig[sig]++;
    if (!in_code(pc) && bad_pc++ == 0) first_bad_pc = pc;
    long d = (long)(sp - stack_anchor);
    if ((d < -(1L << 20) || d > (1L << 20)) && bad_sp++ == 0) first_bad_sp = sp;
    if (getpid() != pid) bad_pid++;
    errno = saved;
}

static void install(int sig, int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

static void timer(int which, long first_us, long every_us) {
    struct itimerval it = {{every_us / 1000000, every_us % 1000000}, {first_us / 1000000, first_us % 1000000}};
    CHECK(setitimer(which, &it, NULL) == 0);
}

/* Prints whether every handler so far saw a program PC and stack; FAILED otherwise. */
static void report_contexts(const char *part) {
    printf("%s: every interrupted PC in the program or libc: %s; every interrupted rsp on the main stack: %s; "
           "getpid in the handler right: %s\n",
           part, bad_pc ? "no" : "yes", bad_sp ? "no" : "yes", bad_pid ? "no" : "yes");
    if (bad_pc || bad_sp || bad_pid) {
        fprintf(stderr, "FAILED: %s: %ld PCs outside the program and libc, %ld rsp off the stack (anchor %#lx), "
                "%ld wrong getpid in the handler\n", part, bad_pc, bad_sp, stack_anchor, bad_pid);
        if (bad_pc) describe("first PC", (unsigned long)first_bad_pc);
        if (bad_sp) describe("first rsp", (unsigned long)first_bad_sp);
        exit(1);
    }
}

int main(void) {
    volatile char anchor = 0;
    stack_anchor = (unsigned long)&anchor;
    pid = getpid();
    ppid = syscall(SYS_getppid);
    load_code_ranges();

    /* Part 1: the tight loop under SIGPROF and SIGALRM. */
    install(SIGPROF, SA_RESTART);
    install(SIGALRM, SA_RESTART);
    timer(ITIMER_PROF, 1, 1);
    timer(ITIMER_REAL, 100, 100);
    long wrong = 0;
    for (long i = 0; i < CALLS; i += 2) {
        wrong += getpid() != pid;
        wrong += syscall(SYS_getppid) != ppid;
    }
    timer(ITIMER_REAL, 0, 0);
    timer(ITIMER_PROF, 0, 0);
    printf("%d calls (getpid, syscall(SYS_getppid)) under SIGPROF and SIGALRM: every result right: %s\n", CALLS,
           wrong ? "no" : "ok");
    printf("signals delivered during the loop: SIGPROF: %s, SIGALRM: %s\n", nsig[SIGPROF] > 0 ? "some" : "none",
           nsig[SIGALRM] > 0 ? "some" : "none");
    CHECK(wrong == 0);
    CHECK(nsig[SIGPROF] > 0 && nsig[SIGALRM] > 0);
    report_contexts("loop");

    /* Part 2: blocking reads; the read site is used 1000 times first. */
    int p[2];
    CHECK(pipe(p) == 0);
    char c, buf[1000];
    memset(buf, 'x', sizeof buf);
    CHECK(write(p[1], buf, sizeof buf) == sizeof buf);
    int warm = 0;
    for (int i = 0; i < 1000; i++) warm += read(p[0], &c, 1) == 1 && c == 'x';
    CHECK(warm == 1000);

    install(SIGALRM, 0);
    nsig[SIGALRM] = 0;
    timer(ITIMER_REAL, 50000, 0);
    errno = 0;
    ssize_t r = read(p[0], &c, 1);
    int e = errno;
    printf("without SA_RESTART: read returned %zd, errno %s, after %ld SIGALRM\n", r, strerrorname_np(e),
           nsig[SIGALRM]);
    CHECK(r == -1 && e == EINTR && nsig[SIGALRM] == 1);

    install(SIGALRM, SA_RESTART);
    nsig[SIGALRM] = 0;
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        usleep(200000);
        CHECK(write(p[1], "!", 1) == 1);
        _exit(0);
    }
    timer(ITIMER_REAL, 20000, 20000);
    c = 0;
    r = read(p[0], &c, 1);
    timer(ITIMER_REAL, 0, 0);
    printf("with SA_RESTART: read returned %zd ('%c') after the child wrote, interrupted by SIGALRM first: %s\n", r,
           c, nsig[SIGALRM] > 0 ? "yes" : "no");
    CHECK(r == 1 && c == '!' && nsig[SIGALRM] > 0);
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    report_contexts("blocking read");
    printf("ok\n");
    return 0;
}
