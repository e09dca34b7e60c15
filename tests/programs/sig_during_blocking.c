// SIGALRM during a blocking read() of a pipe, and where the handler runs:
// without SA_RESTART read fails with EINTR after one signal; with SA_RESTART
// it is restarted until a child writes a byte 200 ms later; the same with
// SA_RESTART|SA_ONSTACK on an alternate stack. Each time, the SA_SIGINFO
// handler checks that the interrupted PC resolves with dladdr to the program
// or the C library, that the interrupted rsp lies on the main thread's stack
// (within 1 MiB of a local of main), and that the handler's own frame is on
// the main stack (or on the alternate stack when SA_ONSTACK is set): a
// program's handler must run on a frame the kernel built for the program,
// never nested inside an interposer's code or on its stack.
#include "util.h"
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>

static uintptr_t anchor;               /* a local of main */
static void *prog_base, *libc_base;    /* dli_fbase of the program and of libc */
static char altstack[64 * 1024];
static volatile int ticks, pc_ok, sp_ok, frame_on_main, frame_on_alt;

static int near_anchor(uintptr_t a) { return a + (1u << 20) > anchor && a < anchor + (1u << 20); }

static void on_alarm(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    (void)si;
    int saved = errno;
    volatile char here = 0;
    ucontext_t *uc = ucv;
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    Dl_info info;
    int known = dladdr((void *)pc, &info) != 0 && (info.dli_fbase == prog_base || info.dli_fbase == libc_base);
    /* every signal must pass: one bad one clears the flag for good */
    if (ticks == 0) pc_ok = sp_ok = frame_on_main = frame_on_alt = 1;
    pc_ok &= known;
    sp_ok &= near_anchor(sp);
    frame_on_main &= near_anchor((uintptr_t)&here);
    frame_on_alt &= (uintptr_t)&here >= (uintptr_t)altstack && (uintptr_t)&here < (uintptr_t)altstack + sizeof altstack;
    ticks++;
    errno = saved;
}

static void install(int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_alarm;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
}

static void timer(long first_ms, long every_ms) {
    struct itimerval it = {{0, every_ms * 1000}, {0, first_ms * 1000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

static pid_t writer(int fd) {
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        usleep(200000);
        CHECK(write(fd, "!", 1) == 1);
        _exit(0);
    }
    return c;
}

static void reap(pid_t c) {
    int st;
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int failed;

/* Prints the handler's findings; FAILED unless all hold (exit status 1 at the end). */
static void contexts(const char *what, int onstack) {
    int frame = onstack ? frame_on_alt : frame_on_main;
    printf("  %s: interrupted PC in the program or libc: %d, interrupted rsp on the main stack: %d, handler frame on "
           "the %s stack: %d\n", what, pc_ok, sp_ok, onstack ? "alternate" : "main", frame);
    if (!(pc_ok && sp_ok && frame)) {
        fprintf(stderr, "FAILED: %s: the handler did not run on a program context\n", what);
        failed = 1;
    }
}

int main(void) {
    volatile char local = 0;
    anchor = (uintptr_t)&local;
    Dl_info info;
    CHECK(dladdr((void *)main, &info) != 0);
    prog_base = info.dli_fbase;
    CHECK(dladdr((void *)read, &info) != 0);
    libc_base = info.dli_fbase;
    CHECK(prog_base != libc_base);

    int p[2];
    CHECK(pipe(p) == 0);
    char c = 0;

    install(0);
    ticks = 0;
    timer(50, 0);
    errno = 0;
    ssize_t r = read(p[0], &c, 1);
    int e = errno;
    printf("no SA_RESTART: read returned %zd errno %s after %d signal(s)\n", r, strerrorname_np(e), ticks);
    CHECK(r == -1 && e == EINTR && ticks == 1);
    contexts("no SA_RESTART", 0);

    install(SA_RESTART);
    ticks = 0;
    pid_t w = writer(p[1]);
    timer(20, 20);
    r = read(p[0], &c, 1);
    timer(0, 0);
    printf("SA_RESTART: read returned %zd ('%c'), interrupted first: %s\n", r, c, ticks > 0 ? "yes" : "no");
    CHECK(r == 1 && c == '!' && ticks > 0);
    reap(w);
    contexts("SA_RESTART", 0);

    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0);
    install(SA_RESTART | SA_ONSTACK);
    ticks = 0;
    c = 0;
    w = writer(p[1]);
    timer(20, 20);
    r = read(p[0], &c, 1);
    timer(0, 0);
    printf("SA_RESTART|SA_ONSTACK: read returned %zd ('%c'), interrupted first: %s\n", r, c, ticks > 0 ? "yes" : "no");
    CHECK(r == 1 && c == '!' && ticks > 0);
    reap(w);
    contexts("SA_RESTART|SA_ONSTACK", 1);
    return failed;
}
