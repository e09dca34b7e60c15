// vfork children using rewritten sites: getpid(), gettid(),
// syscall(SYS_getpid), an inline `mov $39,%eax; syscall` site and write()
// are called 1000 times first (rewritten), then five vfork children each call
// them (getpid 100 times), store what they got in shared volatile variables,
// write a line to stdout through write(), and _exit. The parent checks the
// stored pids against vfork's return value, and that its own sites still give
// its own pid afterwards (the child ran in the same memory).
#include "util.h"
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long site_getpid(void) {
    long r;
    asm volatile("mov $39, %%eax\n\tsyscall" : "=a"(r) : : "rcx", "r11", "memory");
    return r;
}

static volatile long c_getpid, c_gettid, c_syscall, c_site, c_ppid;
static volatile int c_same;

int main(void) {
    int devnull = open("/dev/null", O_WRONLY);
    CHECK(devnull >= 0);
    pid_t pid = getpid();
    int warm = 0;
    for (int i = 0; i < 1000; i++)
        warm += getpid() == pid && gettid() == pid && syscall(SYS_getpid) == pid && site_getpid() == pid &&
                write(devnull, "x", 1) == 1;
    printf("before vfork: %d/1000 rounds gave our pid\n", warm);
    CHECK(warm == 1000);
    fflush(stdout);

    for (int k = 0; k < 5; k++) {
        c_getpid = c_gettid = c_syscall = c_site = c_ppid = -1;
        c_same = 0;
        pid_t c = vfork();
        CHECK(c >= 0);
        if (c == 0) {
            long me = getpid();
            int same = 0;
            for (int i = 0; i < 100; i++) same += getpid() == me;
            c_getpid = me;
            c_gettid = gettid();
            c_syscall = syscall(SYS_getpid);
            c_site = site_getpid();
            c_ppid = getppid();
            c_same = same;
            static const char line[] = "vfork child: this line came through write()\n";
            write(1, line, sizeof line - 1);
            _exit(k);
        }
        int ok = c_getpid == c && c_gettid == c && c_syscall == c && c_site == c && c_ppid == pid && c_same == 100;
        int st;
        CHECK(waitpid(c, &st, 0) == c);
        printf("vfork %d: the child's getpid, gettid, syscall(SYS_getpid) and site gave vfork's return value, "
               "getppid ours: %d; status %d\n", k, ok, WEXITSTATUS(st));
        if (!ok)
            fprintf(stderr, "FAILED: vfork returned %ld; child saw getpid %ld gettid %ld syscall %ld site %ld ppid %ld "
                    "(ours %ld) same %d\n", (long)c, c_getpid, c_gettid, c_syscall, c_site, c_ppid, (long)pid, c_same);
        CHECK(ok && WIFEXITED(st) && WEXITSTATUS(st) == k);
        fflush(stdout);
    }

    int after = 0;
    for (int i = 0; i < 1000; i++)
        after += getpid() == pid && gettid() == pid && syscall(SYS_getpid) == pid && site_getpid() == pid;
    printf("after the vfork children: %d/1000 rounds gave our pid\n", after);
    CHECK(after == 1000);
    return 0;
}
