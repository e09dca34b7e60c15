// Process calls for tests/test_trace.py: fork, wait4, execve of /bin/true.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    int status;
    char *argv[] = {"true", NULL};
    char *envp[] = {"A=1", NULL};

    pid_t p = fork();
    if (p == 0) {
        execve("/bin/true", argv, envp);
        _exit(127);
    }
    waitpid(p, &status, 0);
    p = fork();
    if (p == 0)
        _exit(3);
    waitpid(p, &status, 0);
    execve("/nonexistent/true", argv, envp);          /* ENOENT */
    waitpid(-1, &status, WNOHANG);                    /* ECHILD */
    getppid();
    printf("proc done %d\n", WEXITSTATUS(status));
    return 0;
}
