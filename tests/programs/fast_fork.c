// Process ids through rewritten sites across fork: getpid(), gettid(),
// syscall(SYS_getpid) and an inline `mov $39,%eax; syscall` site are called
// 1000 times each (and write() to /dev/null as often), so every site is
// rewritten; then fork. The parent sends the pid fork returned through a
// pipe; the child checks that every site now gives that pid (gettid too, and
// getppid the parent's), calls each site 1000 times more, and writes its
// report through the same write() site. The child forks a grandchild the
// same way. The parent's sites still give its own ids afterwards.
#include "util.h"
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define ROUNDS 1000

static long site_getpid(void) {
    long r;
    asm volatile("mov $39, %%eax\n\tsyscall" : "=a"(r) : : "rcx", "r11", "memory");
    return r;
}

static long site_gettid(void) {
    long r;
    asm volatile("mov $186, %%eax\n\tsyscall" : "=a"(r) : : "rcx", "r11", "memory");
    return r;
}

static int devnull;

/* Every site ROUNDS times; 1 if each result was `pid` (and the tid `tid`). */
static int ids_are(pid_t pid, pid_t tid) {
    int ok = 1;
    for (int i = 0; i < ROUNDS; i++) {
        ok &= getpid() == pid;
        ok &= gettid() == tid;
        ok &= syscall(SYS_getpid) == pid;
        ok &= site_getpid() == pid;
        ok &= site_gettid() == tid;
        ok &= write(devnull, "x", 1) == 1;
    }
    return ok;
}

static void child_side(int rfd, pid_t parent, const char *who, int depth);

/* Forks; the child runs child_side, the parent sends it its pid and waits. */
static void fork_and_check(const char *who, int depth) {
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t me = getpid();
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        close(p[1]);
        child_side(p[0], me, who, depth);
        _exit(0);
    }
    close(p[0]);
    CHECK(write(p[1], &c, sizeof c) == sizeof c);
    close(p[1]);
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void child_side(int rfd, pid_t parent, const char *who, int depth) {
    pid_t mine;
    CHECK(read(rfd, &mine, sizeof mine) == sizeof mine);
    close(rfd);
    pid_t got = getpid();
    int first = got == mine && gettid() == mine && syscall(SYS_getpid) == mine && site_getpid() == mine &&
                site_gettid() == mine;
    int all = ids_are(mine, mine);
    int pp = getppid() == parent;
    char line[200];
    snprintf(line, sizeof line, "%s: first calls give the pid fork returned: %d; %d more rounds: %d; getppid is the "
             "parent: %d\n", who, first, ROUNDS, all, pp);
    say(line);
    if (!(first && all && pp)) {
        fprintf(stderr, "FAILED: %s ids (getpid %ld, fork returned %ld)\n", who, (long)got, (long)mine);
        _exit(1);
    }
    if (depth > 0) fork_and_check("grandchild", depth - 1);
}

int main(void) {
    devnull = open("/dev/null", O_WRONLY);
    CHECK(devnull >= 0);
    pid_t pid = getpid();
    int before = ids_are(pid, pid);
    printf("parent before fork: every site gives its ids: %d\n", before);
    CHECK(before);
    fork_and_check("child", 1);
    int after = ids_are(pid, pid);
    printf("parent after fork: every site gives its ids: %d\n", after);
    CHECK(after);
    return 0;
}
