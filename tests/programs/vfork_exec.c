// vfork + execve of /bin/echo (output through the inherited stdout), of a
// missing file (the child reports the errno through shared memory) and of
// /bin/sh -c 'exit 9'.
// as-nobody
#include "util.h"
#include <sys/wait.h>

extern char **environ;
static volatile int child_errno;

static int run(const char *path, char *const argv[]) {
    fflush(stdout);
    child_errno = 0;
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execve(path, argv, environ);
        child_errno = errno;
        _exit(127);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st));
    return WEXITSTATUS(st);
}

int main(void) {
    char *echo[] = {"echo", "from", "vforked", "echo", NULL};
    int st = run("/bin/echo", echo);
    printf("echo status %d\n", st);

    char *missing[] = {"missing", NULL};
    st = run("/nonexistent/program", missing);
    printf("missing program: status %d, errno %s\n", st, strerror(child_errno));

    char *sh[] = {"sh", "-c", "echo shell says hi; exit 9", NULL};
    st = run("/bin/sh", sh);
    printf("sh status %d\n", st);
    return 0;
}
