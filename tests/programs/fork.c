// fork: output from parent and child, waitpid statuses for a normal exit, a
// signal death and a stopped/continued child, getppid in the child, a
// grandchild, and memory copy-on-write separation.
// as-nobody
#include "util.h"
#include <signal.h>
#include <sys/wait.h>

static int shared_counter = 10;

int main(void) {
    printf("parent before fork\n");
    fflush(stdout);
    pid_t parent = getpid();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        shared_counter++;
        printf("child: getppid matches parent: %s, counter %d\n", getppid() == parent ? "yes" : "no", shared_counter);
        exit(3);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("parent: child exited=%d status=%d, counter %d\n", WIFEXITED(st), WEXITSTATUS(st), shared_counter);

    /* A child killed by a signal. */
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        raise(SIGTERM);
        _exit(99);
    }
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("parent: child signaled=%d sig=%d\n", WIFSIGNALED(st), WTERMSIG(st));

    /* Stopped, continued, then exits once told to through a pipe (so that
       the continue and exit events cannot merge). */
    int go[2];
    CHECK(pipe(go) == 0);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char c;
        close(go[1]);
        raise(SIGSTOP);
        _exit(read(go[0], &c, 1) == 1 ? 5 : 6);
    }
    close(go[0]);
    CHECK(waitpid(pid, &st, WUNTRACED) == pid);
    printf("parent: child stopped=%d sig=%d\n", WIFSTOPPED(st), WSTOPSIG(st));
    CHECK(kill(pid, SIGCONT) == 0);
    CHECK(waitpid(pid, &st, WCONTINUED) == pid);
    printf("parent: child continued=%d\n", WIFCONTINUED(st));
    CHECK(write(go[1], "g", 1) == 1);
    close(go[1]);
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("parent: child exited=%d status=%d\n", WIFEXITED(st), WEXITSTATUS(st));

    /* A grandchild: the child forks and waits for it. */
    fflush(stdout);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        pid_t g = fork();
        CHECK(g >= 0);
        if (g == 0) {
            printf("grandchild running\n");
            exit(7);
        }
        int gst;
        CHECK(waitpid(g, &gst, 0) == g);
        printf("child: grandchild status %d\n", WEXITSTATUS(gst));
        exit(WEXITSTATUS(gst) + 1);
    }
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("parent: child status %d\n", WEXITSTATUS(st));

    /* No children left. */
    CHECK(waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD);
    printf("parent: no children left (ECHILD)\n");
    return 0;
}
