// SA_NODEFER: a handler that raises its own signal once is re-entered at once
// (maximum nesting depth 2). Without it the second delivery is deferred until
// the handler returns (depth 1, two runs, in sequence). The order of events
// is recorded and printed.
#include "util.h"
#include <signal.h>

static volatile int depth, max_depth, runs;
static char log_buf[128];
static volatile int log_len;

static void note(char c) {
    if (log_len < (int)sizeof log_buf - 1) log_buf[log_len++] = c;
}

static void handler(int sig) {
    depth++;
    if (depth > max_depth) max_depth = depth;
    runs++;
    note('[');
    if (runs == 1) raise(sig);
    note(']');
    depth--;
}

static void test(const char *name, int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    depth = max_depth = runs = log_len = 0;
    raise(SIGUSR1);
    log_buf[log_len] = 0;
    printf("%-12s runs=%d max_depth=%d order=%s\n", name, runs, max_depth, log_buf);
}

int main(void) {
    test("SA_NODEFER", SA_NODEFER);
    CHECK(runs == 2 && max_depth == 2 && strcmp(log_buf, "[[]]") == 0);
    test("default", 0);
    CHECK(runs == 2 && max_depth == 1 && strcmp(log_buf, "[][]") == 0);
    return 0;
}
