// kill(getpid(), SIGKILL) ends the program at once (exit status -9) even
// with every signal blocked; nothing after it runs.
// status: -9
#include "util.h"
#include <signal.h>

int main(void) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    printf("sending SIGKILL to myself\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    printf("not reached\n");
    return 0;
}
