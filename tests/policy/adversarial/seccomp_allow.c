/* Attack 8a: stack a seccomp filter of one's own that allows everything,
 * and fiddle with the process flags the backstop relies on, then call
 * socket(AF_INET) through the strata gadget. Seccomp filters only ever add
 * restrictions (the most restrictive verdict of all filters wins), and
 * no_new_privs cannot be unset: the backstop's verdict must stand. */
#include "attack.h"
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/personality.h>
#include <sys/prctl.h>

int main(void) {
    struct gadget g = find_gadget();
    int esc = 0;
    struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog prog = {.len = 1, .filter = allow};
    long r;
    r = gadget_call(g.addr, SYS_prctl, PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0, 0);
    printf("gadget prctl(PR_SET_NO_NEW_PRIVS, 0) = %ld%s%s\n", r, r < 0 ? " -" : "", r < 0 ? errname(-r) : "");
    r = gadget_call(g.addr, SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0, 0);
    printf("no_new_privs is %ld\n", r);
    r = gadget_call(g.addr, SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
    r = gadget_call(g.addr, SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)&prog, 0, 0, 0);
    printf("gadget seccomp(SET_MODE_FILTER, allow-all) = %ld%s%s\n", r, r < 0 ? " -" : "", r < 0 ? errname(-r) : "");
    r = libc_res(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0));
    printf("libc prctl(PR_SET_SECCOMP, allow-all) = %ld%s%s\n", r, r < 0 ? " -" : "", r < 0 ? errname(-r) : "");
    esc |= attempt("after allow-all filters: gadget socket(AF_INET)",
                   gadget_call(g.addr, SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0));
    r = gadget_call(g.addr, SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0, 0);
    printf("gadget prctl(PR_SET_DUMPABLE, 1) = %ld\n", r);
    r = gadget_call(g.addr, SYS_personality, READ_IMPLIES_EXEC | ADDR_NO_RANDOMIZE, 0, 0, 0, 0, 0);
    printf("gadget personality(READ_IMPLIES_EXEC|ADDR_NO_RANDOMIZE) = %ld\n", r);
    r = gadget_call(g.addr, SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_DISABLED, 0, 0, 0, 0);
    printf("gadget prctl(PR_SET_SECCOMP, SECCOMP_MODE_DISABLED) = %ld%s%s\n", r, r < 0 ? " -" : "", r < 0 ? errname(-r) : "");
    esc |= attempt("after prctl tricks: gadget socket(AF_INET)",
                   gadget_call(g.addr, SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0));
    esc |= attempt("after prctl tricks: trapping syscall socket(AF_INET6)",
                   jit_call(SYS_socket, AF_INET6, SOCK_STREAM, 0, 0, 0, 0));
    return verdict(esc);
}
