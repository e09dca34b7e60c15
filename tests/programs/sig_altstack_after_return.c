// What sigaltstack reports once a handler has returned: no alternate stack
// when the program never set one (strata runs its own handlers on a stack of
// its own, which the program must never see as its own), then the program's
// own stack after it set one, and none again after SS_DISABLE, each time after
// a signal handled on the normal stack and one handled on the alternate stack.
// as-nobody
#include "util.h"
#include <signal.h>

static char *alt;
static const size_t alt_size = 1 << 16;
static volatile int handled;

static void handler(int sig) {
    (void)sig;
    handled++;
}

static void report(const char *when) {
    stack_t cur;
    CHECK(sigaltstack(NULL, &cur) == 0);
    const char *where = cur.ss_flags & SS_DISABLE ? "none"
                        : cur.ss_sp == alt && cur.ss_size == alt_size ? "the program's"
                                                                       : "another";
    printf("%s: alternate stack %s, flags %d, handled %d\n", when, where, cur.ss_flags, handled);
}

static void handle_both(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    sa.sa_flags = SA_ONSTACK;
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    CHECK(raise(SIGUSR1) == 0);
    CHECK(raise(SIGUSR2) == 0);
}

int main(void) {
    alt = malloc(alt_size);
    CHECK(alt != NULL);
    report("at start");
    handle_both();
    report("never set");
    stack_t ss = {.ss_sp = alt, .ss_size = alt_size, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0);
    handle_both();
    report("set");
    ss.ss_flags = SS_DISABLE;
    CHECK(sigaltstack(&ss, NULL) == 0);
    handle_both();
    report("disabled");
    return 0;
}
