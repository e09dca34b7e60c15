/* fork_loop N: N times fork a child that exits at once (exit_group, no libc
 * atexit work), and wait for it. What starting a process without exec costs:
 * bash runs every external command and subshell this way. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    for (long i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0) return 1;
        if (p == 0) syscall(SYS_exit_group, 0);
        int st;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    }
    return 0;
}
