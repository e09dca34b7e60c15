/* Attack 1: a raw `syscall` instruction in code generated at run time.
 * A page holding `mov $41,%eax; syscall; ret` (socket) is written, made
 * executable (RW then RX, and RWX), and called with AF_INET/AF_INET6/AF_PACKET.
 * Under strata the instruction traps (Syscall User Dispatch covers every
 * address outside strata-rt's text) and the policy refuses it in-process. */
#include "attack.h"
#include <linux/if_ether.h>
#include <sys/mman.h>

static const unsigned char stub[] = {0xb8, 41, 0, 0, 0, /* mov $41,%eax */
                                     0x0f, 0x05,         /* syscall */
                                     0xc3};              /* ret */

static int try_page(const char *how, int rwx) {
    int prot = PROT_READ | PROT_WRITE | (rwx ? PROT_EXEC : 0);
    unsigned char *p = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        printf("%s: mmap = -%s (skipped)\n", how, errname(errno));
        return 0;
    }
    memcpy(p, stub, sizeof stub);
    if (!rwx && mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) {
        printf("%s: mprotect RX = -%s (skipped)\n", how, errname(errno));
        return 0;
    }
    long (*sock)(long, long, long) = (long (*)(long, long, long))p;
    char what[128];
    int esc = 0;
    snprintf(what, sizeof what, "%s: socket(AF_INET, SOCK_STREAM)", how);
    esc |= attempt(what, sock(AF_INET, SOCK_STREAM, 0));
    snprintf(what, sizeof what, "%s: socket(AF_INET6, SOCK_DGRAM)", how);
    esc |= attempt(what, sock(AF_INET6, SOCK_DGRAM, 0));
    /* Needs CAP_NET_RAW: natively it fails as an unprivileged user anyway. */
    snprintf(what, sizeof what, "%s: socket(AF_PACKET, SOCK_DGRAM)", how);
    esc |= attempt(what, sock(AF_PACKET, SOCK_DGRAM, __builtin_bswap16(ETH_P_ALL)));
    return esc;
}

int main(void) {
    int esc = 0;
    esc |= try_page("generated code (RW->RX)", 0);
    esc |= try_page("generated code (RWX)", 1);
    return verdict(esc);
}
