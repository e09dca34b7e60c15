// abort() raises SIGABRT: the program dies with exit status -6 after its
// flushed output; a SIGABRT handler that returns does not prevent it.
// status: -6
#include "util.h"
#include <signal.h>

static volatile int handled;
static void handler(int sig) {
    (void)sig;
    handled++;
    say("SIGABRT handler ran and returns\n");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGABRT, handler);
    printf("calling abort()\n");
    abort();
}
