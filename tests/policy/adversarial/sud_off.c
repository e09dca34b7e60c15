/* Attack 4: turn Syscall User Dispatch off, then make a raw syscall
 * (jit_call: one strata has not rewritten, which traps while dispatch is on).
 * Through libc the prctl is strata's to answer (it virtualizes it); through
 * the strata gadget it reaches the kernel, where the seccomp backstop must
 * refuse PR_SYS_DISPATCH_OFF. Re-arming dispatch with an exempt range that
 * covers the whole address space (or an empty inclusive range, on kernels
 * that have one) would switch interception off just as well: whatever the
 * prctl results, the socket(AF_INET) that follows each must fail. */
#include "attack.h"
#include <sys/prctl.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#endif
#define DISPATCH_OFF 0
#define DISPATCH_EXCLUSIVE_ON 1 /* PR_SYS_DISPATCH_ON */
#define DISPATCH_INCLUSIVE_ON 2 /* Linux 6.17+ */

static int sockets_after(const char *how) {
    char what[200];
    int esc = 0;
    snprintf(what, sizeof what, "after %s: trapping syscall socket(AF_INET)", how);
    esc |= attempt(what, jit_call(SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0));
    int s = socket(AF_INET, SOCK_STREAM, 0);
    snprintf(what, sizeof what, "after %s: libc socket(AF_INET)", how);
    esc |= attempt(what, s < 0 ? -(long)errno : s);
    return esc;
}

static void note(const char *what, long res) {
    if (res < 0)
        printf("%s = -%s\n", what, errname(-res));
    else
        printf("%s = %ld (accepted)\n", what, res);
}

int main(void) {
    struct gadget g = find_gadget();
    jit_call(SYS_getpid, 0, 0, 0, 0, 0, 0); /* (its page is made while dispatch is on) */
    int esc = 0;
    note("libc prctl(SYSCALL_USER_DISPATCH, OFF)", libc_res(prctl(PR_SET_SYSCALL_USER_DISPATCH, DISPATCH_OFF, 0, 0, 0)));
    esc |= sockets_after("libc prctl(OFF)");
    /* The hardening list says the kernel refuses this one. */
    esc |= attempt("gadget prctl(SYSCALL_USER_DISPATCH, OFF)",
                   gadget_call(g.addr, SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, DISPATCH_OFF, 0, 0, 0, 0));
    esc |= sockets_after("gadget prctl(OFF)");
    note("gadget prctl(SYSCALL_USER_DISPATCH, ON, exempt 0..2^47)",
         gadget_call(g.addr, SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, DISPATCH_EXCLUSIVE_ON, 0, 1L << 47, 0, 0));
    esc |= sockets_after("gadget prctl(ON, exempt everything)");
    note("gadget prctl(SYSCALL_USER_DISPATCH, INCLUSIVE_ON, empty range)",
         gadget_call(g.addr, SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, DISPATCH_INCLUSIVE_ON, 4096, 1, 0, 0));
    esc |= sockets_after("gadget prctl(INCLUSIVE_ON, empty)");
    esc |= attempt("gadget socket(AF_INET)", gadget_call(g.addr, SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0));
    return verdict(esc);
}
