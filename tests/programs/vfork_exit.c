// vfork + _exit: the parent is suspended until the child exits, the child
// shares the parent's memory (its store is visible), and the status arrives.
#include "util.h"
#include <sys/wait.h>

static volatile int written_by_child;

int main(void) {
    for (int i = 0; i < 20; i++) {
        pid_t pid = vfork();
        CHECK(pid >= 0);
        if (pid == 0) {
            written_by_child = i + 100;
            _exit(i);
        }
        /* The child has run to _exit before vfork returns here. */
        int seen = written_by_child;
        int st;
        CHECK(waitpid(pid, &st, 0) == pid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == i);
        CHECK(seen == i + 100);
    }
    printf("20 vfork children: shared memory and statuses ok\n");
    return 0;
}
