/* seccomp_on MODE N: N getpid() calls (checked, as bench/getpid_libc.c) after setting up MODE, for
 * timing from outside (bench/capture-cost.sh): what the kernel's slow entry paths cost a call that
 * nothing traps.
 *   off      nothing
 *   filter   a seccomp filter like a policy's hardening: an arch check and 24 denied numbers
 *   dispatch Syscall User Dispatch on, every call from the exempt range (as strata issues its calls)
 *   both     the filter and dispatch: what a policy's filter and strata's dispatch cost together
 *   ip       the filter plus strata's kind of check: getpid's verdict depends on the calling
 *            address (so the kernel's per-number action cache cannot answer it)
 * Prints "seccomp_on MODE: N calls, N consistent". */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_ON 1
#endif

static volatile char selector = 0;

static int filter(int ip_check) {
    static const int deny[] = {101, 310, 311, 165, 166, 155, 161, 167, 168, 169, 175, 313,
                               176, 246, 320, 248, 249, 250, 272, 308, 321, 298, 323, 304};
    struct sock_filter f[80];
    int k = 0;
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (size_t i = 0; i < sizeof deny / sizeof *deny; i++) {
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, deny[i], 0, 1);
        f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
    }
    if (ip_check) { /* getpid: allowed from an address whose high word is 0x5500 only, else allowed too */
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 3);
        f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4);
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x5500, 0, 0);
        f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    }
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog p = {(unsigned short)k, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p);
}

static int dispatch(void) {
    return prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 4096UL, (1UL << 47) - 8192, &selector);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: seccomp_on off|filter|dispatch|both|ip N\n");
        return 2;
    }
    const char *m = argv[1];
    long n = atol(argv[2]);
    int r = 0;
    if (!strcmp(m, "filter")) r = filter(0);
    else if (!strcmp(m, "ip")) r = filter(1);
    else if (!strcmp(m, "dispatch")) r = dispatch();
    else if (!strcmp(m, "both")) r = filter(0) || dispatch();
    else if (strcmp(m, "off")) { fprintf(stderr, "seccomp_on: unknown mode %s\n", m); return 2; }
    if (r) { perror("seccomp_on"); return 1; }
    long pid = 0, same = 0;
    for (long i = 0; i < n; i++) {
        long p = getpid();
        same += (p == pid || i == 0);
        pid = p;
    }
    printf("seccomp_on %s: %ld calls, %ld consistent\n", m, n, same);
    return same == n ? 0 : 1;
}
