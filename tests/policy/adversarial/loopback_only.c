/* Attack 16: builtin:loopback-only lets the program make IPv4 sockets and
 * talk to 127.0.0.0/8 only. The address is checked by strata's in-process
 * layer; seccomp cannot read a sockaddr and Landlock (ABI 7) filters TCP by
 * port, not by address. So a connect to another address of this very
 * machine, through the strata gadget, is up to the kernel backstop alone.
 * The test listens on 0.0.0.0:PORT (TCP and UDP); ADDR is a non-loopback
 * address of this machine. The connect through libc to 127.0.0.1 is the
 * control (allowed); UDP datagrams are judged by the test, on arrival.
 * Usage: loopback_only PORT ADDR */
#include "attack.h"
#include <arpa/inet.h>
#include <netinet/in.h>

static struct gadget g;

static long tcp_connect(int gadget, struct sockaddr_in *to) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return -errno;
    long r = gadget ? gadget_call(g.addr, SYS_connect, s, (long)to, sizeof *to, 0, 0, 0)
                    : libc_res(connect(s, (void *)to, sizeof *to));
    close(s);
    return r;
}

static long udp_send(int gadget, struct sockaddr_in *to, const char *msg) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0)
        return -errno;
    long r = gadget ? gadget_call(g.addr, SYS_sendto, s, (long)msg, strlen(msg), 0, (long)to, sizeof *to)
                    : libc_res(sendto(s, msg, strlen(msg), 0, (void *)to, sizeof *to));
    close(s);
    return r;
}

int main(int argc, char **argv) {
    if (argc < 3)
        setup_failed("usage: loopback_only PORT ADDR");
    g = find_gadget();
    struct sockaddr_in lo = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
    lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct sockaddr_in far = lo;
    if (inet_pton(AF_INET, argv[2], &far.sin_addr) != 1)
        setup_failed("bad ADDR");
    long c = tcp_connect(0, &lo);
    printf("control: libc connect(127.0.0.1:%s) = %ld%s%s\n", argv[1], c, c < 0 ? " -" : "", c < 0 ? errname(-c) : "");
    if (c < 0)
        setup_failed("the loopback control connect failed");
    int esc = 0;
    char what[160];
    snprintf(what, sizeof what, "libc connect(%s:%s)", argv[2], argv[1]);
    esc |= attempt(what, tcp_connect(0, &far));
    snprintf(what, sizeof what, "gadget connect(%s:%s)", argv[2], argv[1]);
    esc |= attempt(what, tcp_connect(1, &far));
    long r = udp_send(0, &far, "udp-libc");
    printf("udp: libc sendto(%s:%s, \"udp-libc\") = %ld%s%s\n", argv[2], argv[1], r, r < 0 ? " -" : "", r < 0 ? errname(-r) : "");
    r = udp_send(1, &far, "udp-gadget");
    printf("udp: gadget sendto(%s:%s, \"udp-gadget\") = %ld%s%s\n", argv[2], argv[1], r, r < 0 ? " -" : "", r < 0 ? errname(-r) : "");
    return verdict(esc);
}
