// What /proc says about the process agrees with what it sees in memory:
// /proc/self/cmdline is argv, /proc/self/environ is the initial environment,
// /proc/self/comm and the Name: line of /proc/self/status are the program's
// file name (15 characters at most), /proc/self/auxv is the auxiliary vector
// that follows envp on the stack, and /proc/self/stat has our ppid.
// args: one 'two three'
#include "util.h"
#include <elf.h>
#include <fcntl.h>
#include <libgen.h>

static size_t slurp(const char *path, char *buf, size_t cap) {
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    size_t n = 0;
    ssize_t r;
    while (n < cap && (r = read(fd, buf + n, cap - n)) > 0) n += (size_t)r;
    close(fd);
    return n;
}

static char buf[1 << 16], want[1 << 16];

int main(int argc, char **argv, char **envp) {
    size_t n = slurp("/proc/self/cmdline", buf, sizeof buf), w = 0;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]) + 1;
        memcpy(want + w, argv[i], l);
        w += l;
    }
    printf("cmdline is argv: %d\n", n == w && memcmp(buf, want, n) == 0);

    n = slurp("/proc/self/environ", buf, sizeof buf);
    w = 0;
    char **e = envp;
    for (; *e; e++) {
        size_t l = strlen(*e) + 1;
        memcpy(want + w, *e, l);
        w += l;
    }
    printf("environ file is envp: %d\n", n == w && memcmp(buf, want, n) == 0);

    char name[16];
    snprintf(name, sizeof name, "%s", basename(argv[0]));
    n = slurp("/proc/self/comm", buf, sizeof buf);
    buf[n] = 0;
    printf("comm: %s", buf);
    printf("comm is the file name: %d\n", strncmp(buf, name, strlen(name)) == 0 && buf[strlen(name)] == '\n');
    n = slurp("/proc/self/status", buf, sizeof buf - 1);
    buf[n] = 0;
    char *line = strstr(buf, "Name:\t");
    CHECK(line != NULL);
    printf("status Name matches: %d\n", strncmp(line + 6, name, strlen(name)) == 0);

    Elf64_auxv_t *stack_auxv = (Elf64_auxv_t *)(e + 1), *a = stack_auxv;
    while (a->a_type != AT_NULL) a++;
    size_t stack_len = (size_t)((char *)(a + 1) - (char *)stack_auxv);
    n = slurp("/proc/self/auxv", buf, sizeof buf);
    printf("auxv file is the stack auxv: %d\n", n == stack_len && memcmp(buf, stack_auxv, n) == 0);

    n = slurp("/proc/self/stat", buf, sizeof buf - 1);
    buf[n] = 0;
    char *close_paren = strrchr(buf, ')');
    CHECK(close_paren != NULL);
    char state;
    int ppid;
    CHECK(sscanf(close_paren + 2, "%c %d", &state, &ppid) == 2);
    printf("stat: state %c, ppid matches: %d\n", state, ppid == getppid());
    return 0;
}
