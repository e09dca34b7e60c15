/* The payload of the exec attacks (exec_static.c, reexec_rt.c): a static
 * binary, so a raw kernel execve of it runs without strata. It tries
 * socket(AF_INET) and, when given a directory, to create a file in it.
 * Exit 1 when either worked (the exec escaped the policy), 0 when both failed.
 * Built with gcc -static; it does not use attack.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *via = argc > 1 ? argv[1] : "?";
    int escaped = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0) {
        printf("static probe (run by %s): socket(AF_INET) = %d -> ESCAPED\n", via, fd);
        escaped = 1;
    } else {
        printf("static probe (run by %s): socket(AF_INET) = -%s -> blocked\n", via, strerrorname_np(errno));
    }
    if (argc > 2) {
        char path[4096];
        snprintf(path, sizeof path, "%s/created-by-static-probe", argv[2]);
        int f = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (f >= 0) {
            printf("static probe (run by %s): create %s = %d -> ESCAPED\n", via, path, f);
            escaped = 1;
        } else {
            printf("static probe (run by %s): create %s = -%s -> blocked\n", via, path, strerrorname_np(errno));
        }
    }
    fflush(stdout);
    return escaped;
}
