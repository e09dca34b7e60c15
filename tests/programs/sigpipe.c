// Writing to a pipe whose reader is gone: with SIG_IGN the write fails with
// EPIPE, with a handler the handler runs and the write fails with EPIPE, in a
// forked child with the default action the child is killed by SIGPIPE, and
// finally the program itself dies of SIGPIPE (exit status -13).
// status: -13
#include "util.h"
#include <signal.h>
#include <sys/wait.h>

static volatile sig_atomic_t handled;
static void on_pipe(int sig) { handled = sig; }

static int broken_pipe(void) {
    int p[2];
    CHECK(pipe(p) == 0);
    close(p[0]);
    return p[1];
}

int main(void) {
    int fd = broken_pipe();
    signal(SIGPIPE, SIG_IGN);
    errno = 0;
    ssize_t r = write(fd, "x", 1);
    printf("SIG_IGN: write returned %zd, errno %s\n", r, strerrorname_np(errno));
    CHECK(r == -1 && errno == EPIPE);

    signal(SIGPIPE, on_pipe);
    errno = 0;
    r = write(fd, "x", 1);
    printf("handler: write returned %zd, errno %s, handler saw signal %d\n", r, strerrorname_np(errno), (int)handled);
    CHECK(r == -1 && errno == EPIPE && handled == SIGPIPE);

    signal(SIGPIPE, SIG_DFL);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        write(fd, "x", 1);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("default action in child: signaled=%d sig=%d\n", WIFSIGNALED(st), WTERMSIG(st));

    printf("now dying of SIGPIPE\n");
    fflush(stdout);
    write(fd, "x", 1);
    printf("not reached\n");
    return 0;
}
