// The program installs a seccomp filter of its own, as browser and service
// sandboxes do: getppid traps (SECCOMP_RET_TRAP with data 0x42) into its own
// SIGSYS handler, which sees si_code SYS_SECCOMP, si_errno 0x42 and
// si_syscall 110 and supplies the result; uname fails with EPERM; other
// calls pass. Through libc's wrapper and a raw syscall, twice each. Under a
// sandbox policy strata catches calls with a filter of its own too: the
// program's traps must still reach the program, and strata's must not.
// as-nobody
#include "util.h"
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <ucontext.h>

static volatile int traps, code_seen, errno_seen, nr_seen;

static void handler(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    traps++;
    code_seen = si->si_code;
    errno_seen = si->si_errno;
    nr_seen = si->si_syscall;
    uc->uc_mcontext.gregs[REG_RAX] = 4242;
}

int main(void) {
    on_signal_info(SIGSYS, handler, 0);
    long ppid = getppid();
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 0x42),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_uname, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof *f, f};
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
    CHECK(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0);
    printf("filter installed\n");

    for (int round = 0; round < 2; round++) {
        long a = getppid();
        printf("libc getppid: %ld, traps %d, si_code SYS_SECCOMP=%d, si_errno %#x, si_syscall %d\n", a, traps,
               code_seen == 1, errno_seen, nr_seen);
        CHECK(a == 4242 && traps == 2 * round + 1 && code_seen == 1 && errno_seen == 0x42 && nr_seen == 110);
        long b = syscall(SYS_getppid);
        printf("raw getppid: %ld, traps %d\n", b, traps);
        CHECK(b == 4242 && traps == 2 * round + 2);
        struct utsname u;
        errno = 0;
        int r = uname(&u);
        printf("uname: %d %s\n", r, strerrorname_np(errno));
        CHECK(r == -1 && errno == EPERM);
        CHECK(getpid() > 0 && ppid > 0);
    }
    printf("getpid passes: %d\n", getpid() > 0);
    return 0;
}
