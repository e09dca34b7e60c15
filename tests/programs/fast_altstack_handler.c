// A handler running on the alternate stack makes system calls and raises a
// second signal that also runs on the alternate stack (as Python's
// faulthandler does when it chains): the nested frame must go below the
// running handler, never over it. The first handler keeps a canary array on
// its stack and checks it after each call and after the nested signal.
#include "util.h"
#include <signal.h>

static volatile int nested, outer;

static void on_usr2(int sig) {
    (void)sig;
    char buf[256];
    memset(buf, 0x5a, sizeof buf);
    CHECK(write(1, "", 0) == 0);
    nested++;
}

static void on_usr1(int sig) {
    (void)sig;
    volatile unsigned char canary[1024];
    for (int i = 0; i < 1024; i++) canary[i] = (unsigned char)(i * 7 + 3);
    for (int round = 0; round < 20; round++) {
        CHECK(getpid() > 0);
        CHECK(write(1, "", 0) == 0);
        CHECK(raise(SIGUSR2) == 0);
        for (int i = 0; i < 1024; i++) CHECK(canary[i] == (unsigned char)(i * 7 + 3));
    }
    outer++;
}

int main(void) {
    static char stack[64 * 1024];
    stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_ONSTACK | SA_NODEFER;
    sa.sa_handler = on_usr1;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    sa.sa_handler = on_usr2;
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    for (int i = 0; i < 50; i++) CHECK(kill(getpid(), SIGUSR1) == 0);
    printf("outer handler ran %d times, nested %d times, canaries intact\n", outer, nested);
    return 0;
}
