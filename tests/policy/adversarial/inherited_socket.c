/* Attack 13: use IPv4 sockets the program did not create. The test opens
 * them before starting the program (two unbound TCP sockets and a UDP
 * socket) and listens on 127.0.0.1:PORT (TCP and UDP). socket() is never
 * called, so only Landlock's network rules (TCP bind and connect) can stop
 * the first one's bind and the second one's connect. UDP is outside
 * Landlock (ABI 7) and seccomp cannot tell a UDP sendto from an AF_UNIX
 * one: the datagrams sent on the third (through libc, then the gadget) are
 * judged by the test, by whether they arrive.
 * Usage: inherited_socket PORT TCP_FD TCP_FD UDP_FD */
#include "attack.h"
#include <arpa/inet.h>
#include <netinet/in.h>

int main(int argc, char **argv) {
    if (argc < 5)
        setup_failed("usage: inherited_socket PORT TCP_FD TCP_FD UDP_FD");
    int b = atoi(argv[2]), c = atoi(argv[3]), u = atoi(argv[4]);
    struct gadget g = find_gadget();
    int port = atoi(argv[1]);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in to = any;
    to.sin_port = htons(port);
    int esc = 0;
    char what[128];
    snprintf(what, sizeof what, "gadget bind(inherited TCP fd %d, 127.0.0.1:0)", b);
    esc |= attempt(what, gadget_call(g.addr, SYS_bind, b, (long)&any, sizeof any, 0, 0, 0));
    snprintf(what, sizeof what, "libc bind(inherited TCP fd %d, 127.0.0.1:0)", b);
    esc |= attempt(what, libc_res(bind(b, (void *)&any, sizeof any)));
    snprintf(what, sizeof what, "gadget connect(inherited TCP fd %d, 127.0.0.1:%d)", c, port);
    esc |= attempt(what, gadget_call(g.addr, SYS_connect, c, (long)&to, sizeof to, 0, 0, 0));
    snprintf(what, sizeof what, "libc connect(inherited TCP fd %d, 127.0.0.1:%d)", c, port);
    esc |= attempt(what, libc_res(connect(c, (void *)&to, sizeof to)));
    /* UDP: judged by the test, by which datagrams arrive. */
    long r = libc_res(sendto(u, "udp-libc", 8, 0, (void *)&to, sizeof to));
    printf("udp: libc sendto(inherited UDP fd %d, 127.0.0.1:%d, \"udp-libc\") = %ld%s%s\n", u, port, r,
           r < 0 ? " -" : "", r < 0 ? errname(-r) : "");
    r = gadget_call(g.addr, SYS_sendto, u, (long)"udp-gadget", 10, 0, (long)&to, sizeof to);
    printf("udp: gadget sendto(inherited UDP fd %d, 127.0.0.1:%d, \"udp-gadget\") = %ld%s%s\n", u, port, r,
           r < 0 ? " -" : "", r < 0 ? errname(-r) : "");
    return verdict(esc);
}
