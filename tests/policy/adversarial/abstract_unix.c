/* Attack 17: reach a service outside the sandbox through an abstract UNIX
 * socket (how X11 and D-Bus listen on many systems: an AF_UNIX socket is
 * local IPC, which no-network allows, but an abstract name is not a file,
 * so no path rule covers it). The test listens on the abstract name NAME
 * (stream) and NAME-dgram (datagram). Connect through libc and the gadget,
 * and send a datagram; then, inside, a socket of the program's own, which
 * must still work.
 * Usage: abstract_unix NAME */
#include "attack.h"
#include <stddef.h>
#include <sys/un.h>

static socklen_t abstract(struct sockaddr_un *a, const char *name) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strlen(name);
    if (n > sizeof a->sun_path - 2)
        n = sizeof a->sun_path - 2;
    memcpy(a->sun_path + 1, name, n); /* sun_path[0] = 0: abstract */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int main(int argc, char **argv) {
    if (argc < 2)
        setup_failed("usage: abstract_unix NAME");
    struct gadget g = find_gadget();
    struct sockaddr_un a, d;
    socklen_t alen = abstract(&a, argv[1]);
    char dname[100];
    snprintf(dname, sizeof dname, "%s-dgram", argv[1]);
    socklen_t dlen = abstract(&d, dname);
    int esc = 0;
    char what[160];
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0)
        setup_failed("socket(AF_UNIX)");
    snprintf(what, sizeof what, "libc connect(AF_UNIX, @%s)", argv[1]);
    esc |= attempt(what, libc_res(connect(s, (void *)&a, alen)));
    close(s);
    s = socket(AF_UNIX, SOCK_STREAM, 0);
    snprintf(what, sizeof what, "gadget connect(AF_UNIX, @%s)", argv[1]);
    esc |= attempt(what, gadget_call(g.addr, SYS_connect, s, (long)&a, alen, 0, 0, 0));
    close(s);
    int u = socket(AF_UNIX, SOCK_DGRAM, 0);
    snprintf(what, sizeof what, "gadget sendto(AF_UNIX datagram, @%s)", dname);
    esc |= attempt(what, gadget_call(g.addr, SYS_sendto, u, (long)"escaped", 7, 0, (long)&d, dlen));
    close(u);
    /* Control: an abstract socket the program makes itself is reachable. */
    struct sockaddr_un own;
    char oname[100];
    snprintf(oname, sizeof oname, "%s-own-%d", argv[1], (int)getpid());
    socklen_t olen = abstract(&own, oname);
    int l = socket(AF_UNIX, SOCK_STREAM, 0), c = socket(AF_UNIX, SOCK_STREAM, 0);
    long r = libc_res(bind(l, (void *)&own, olen));
    if (r == 0)
        r = libc_res(listen(l, 1));
    if (r == 0)
        r = libc_res(connect(c, (void *)&own, olen));
    printf("control: connect to an abstract socket of its own = %ld%s\n", r, r == 0 ? " (works, as it should)" : "");
    return verdict(esc);
}
