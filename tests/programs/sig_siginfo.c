// SA_SIGINFO handlers: sigqueue to self (si_code SI_QUEUE, si_value int and
// pointer), kill (SI_USER, si_pid/si_uid are ours), raise (SI_TKILL); queued
// real-time signals are delivered once each and in order while a standard
// signal sent twice while blocked is delivered once.
// as-nobody
#include "util.h"
#include <signal.h>

static volatile int sig_seen, code_seen, pid_ok, uid_ok, value_int;
static void *volatile value_ptr;
static volatile int rt_values[8], rt_count, usr1_count;

static const char *code_name(int c) {
    switch (c) {
    case SI_USER: return "SI_USER";
    case SI_QUEUE: return "SI_QUEUE";
    case SI_TKILL: return "SI_TKILL";
    default: return "other";
    }
}

static void handler(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    sig_seen = sig;
    code_seen = si->si_code;
    pid_ok = si->si_pid == getpid();
    uid_ok = si->si_uid == getuid();
    value_int = si->si_value.sival_int;
    value_ptr = si->si_value.sival_ptr;
    if (sig == SIGRTMIN && rt_count < 8) rt_values[rt_count++] = si->si_value.sival_int;
    if (sig == SIGUSR1) usr1_count++;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    CHECK(sigaction(SIGRTMIN, &sa, NULL) == 0);

    union sigval v = {.sival_int = 4242};
    CHECK(sigqueue(getpid(), SIGUSR1, v) == 0);
    printf("sigqueue: sig=%d code=%s pid_ok=%d uid_ok=%d value=%d\n", sig_seen, code_name(code_seen), pid_ok, uid_ok,
           value_int);

    static int target;
    v.sival_ptr = &target;
    CHECK(sigqueue(getpid(), SIGUSR2, v) == 0);
    printf("sigqueue pointer: value is &target: %s\n", value_ptr == &target ? "yes" : "no");

    CHECK(kill(getpid(), SIGUSR2) == 0);
    printf("kill: sig=%d code=%s pid_ok=%d uid_ok=%d\n", sig_seen, code_name(code_seen), pid_ok, uid_ok);

    CHECK(raise(SIGUSR1) == 0);
    printf("raise: sig=%d code=%s pid_ok=%d\n", sig_seen, code_name(code_seen), pid_ok);

    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGRTMIN);
    sigaddset(&block, SIGUSR1);
    CHECK(sigprocmask(SIG_BLOCK, &block, &old) == 0);
    for (int i = 1; i <= 3; i++) {
        v.sival_int = i * 10;
        CHECK(sigqueue(getpid(), SIGRTMIN, v) == 0);
    }
    usr1_count = 0;
    CHECK(kill(getpid(), SIGUSR1) == 0);
    CHECK(kill(getpid(), SIGUSR1) == 0);
    CHECK(rt_count == 0 && usr1_count == 0);
    CHECK(sigprocmask(SIG_SETMASK, &old, NULL) == 0);
    printf("queued SIGRTMIN delivered %d times:", rt_count);
    for (int i = 0; i < rt_count; i++) printf(" %d", rt_values[i]);
    printf("\nSIGUSR1 sent twice while blocked delivered %d time(s)\n", usr1_count);
    return 0;
}
