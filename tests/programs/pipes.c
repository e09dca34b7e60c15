// pipe2 flags (O_CLOEXEC, O_NONBLOCK), EAGAIN on an empty/full nonblocking
// pipe, the default capacity, 1 MiB streamed from a forked child with a
// checksum, EOF once every writer is closed, and a pipe shared by two writers.
#include "util.h"
#include <fcntl.h>
#include <sys/wait.h>

static unsigned sum(const unsigned char *b, size_t n, unsigned s) {
    for (size_t i = 0; i < n; i++) s = s * 31 + b[i];
    return s;
}

int main(void) {
    int p[2];
    CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
    printf("pipe2 flags: cloexec=%d nonblock=%d\n", (fcntl(p[0], F_GETFD) & FD_CLOEXEC) != 0,
           (fcntl(p[0], F_GETFL) & O_NONBLOCK) != 0);
    char buf[65536];
    CHECK(read(p[0], buf, 1) == -1 && errno == EAGAIN);
    printf("empty nonblocking read: EAGAIN\n");
    printf("default capacity: %d\n", fcntl(p[1], F_GETPIPE_SZ));
    memset(buf, 'x', sizeof buf);
    size_t filled = 0;
    for (;;) {
        ssize_t w = write(p[1], buf, 4096);
        if (w < 0) {
            CHECK(errno == EAGAIN);
            break;
        }
        filled += (size_t)w;
    }
    printf("filled %zu bytes before EAGAIN\n", filled);
    close(p[0]);
    close(p[1]);

    CHECK(pipe2(p, 0) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        unsigned s = 0;
        unsigned char chunk[1000];
        for (int i = 0; i < 1048576 / 1000 + 1; i++) {
            size_t n = i == 1048576 / 1000 ? 1048576 % 1000 : 1000;
            for (size_t j = 0; j < n; j++) chunk[j] = (unsigned char)(i * 7 + j);
            s = sum(chunk, n, s);
            size_t off = 0;
            while (off < n) {
                ssize_t w = write(p[1], chunk + off, n - off);
                CHECK(w > 0);
                off += (size_t)w;
            }
        }
        printf("child wrote 1048576 bytes, checksum %08x\n", s);
        exit(0);
    }
    close(p[1]);
    size_t total = 0;
    unsigned s = 0;
    ssize_t r;
    while ((r = read(p[0], buf, sizeof buf)) > 0) {
        s = sum((unsigned char *)buf, (size_t)r, s);
        total += (size_t)r;
    }
    CHECK(r == 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    printf("parent read %zu bytes, checksum %08x, then EOF\n", total, s);
    close(p[0]);

    /* Two writers; EOF only after both close. */
    CHECK(pipe(p) == 0);
    fflush(stdout);
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        CHECK(kids[k] >= 0);
        if (kids[k] == 0) {
            close(p[0]);
            if (k == 1) usleep(50000);
            char msg[] = "writer0\n";
            msg[6] = (char)('0' + k);
            CHECK(write(p[1], msg, 8) == 8);
            _exit(0);
        }
    }
    close(p[1]);
    total = 0;
    while ((r = read(p[0], buf + total, sizeof buf - total)) > 0) total += (size_t)r;
    buf[total] = 0;
    printf("two writers:\n%s", buf);
    for (int k = 0; k < 2; k++) CHECK(waitpid(kids[k], &st, 0) == kids[k]);
    return 0;
}
