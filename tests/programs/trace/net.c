// Socket calls for tests/test_trace.py: UDP and TCP on 127.0.0.1, datagram and
// stream AF_UNIX sockets bound to paths in the working directory.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(void) {
    char buf[64];
    struct sockaddr_in in = {.sin_family = AF_INET}, from;
    socklen_t len;

    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int a = socket(AF_INET, SOCK_DGRAM, 0);
    bind(a, (struct sockaddr *)&in, sizeof in);
    len = sizeof in;
    getsockname(a, (struct sockaddr *)&in, &len);
    int b = socket(AF_INET, SOCK_DGRAM, 0);
    connect(b, (struct sockaddr *)&in, sizeof in);
    send(b, "ping", 4, 0);
    sendto(b, "pong\n", 5, 0, (struct sockaddr *)&in, sizeof in);
    len = sizeof from;
    recvfrom(a, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
    len = sizeof from;
    recvfrom(a, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
    recvfrom(a, buf, sizeof buf, MSG_DONTWAIT, NULL, NULL);      /* EAGAIN */
    close(b);
    close(a);

    /* TCP: nothing listens on port 1 */
    struct sockaddr_in one = {.sin_family = AF_INET, .sin_port = htons(1)};
    one.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int t = socket(AF_INET, SOCK_STREAM, 0);
    connect(t, (struct sockaddr *)&one, sizeof one);             /* ECONNREFUSED */
    close(t);

    struct sockaddr_un un = {.sun_family = AF_UNIX}, ufrom;
    strcpy(un.sun_path, "u.sock");
    unlink(un.sun_path);                                         /* ENOENT */
    int u = socket(AF_UNIX, SOCK_DGRAM, 0);
    bind(u, (struct sockaddr *)&un, sizeof un);
    bind(u, (struct sockaddr *)&un, sizeof un);                  /* EINVAL */
    int c = socket(AF_UNIX, SOCK_DGRAM, 0);
    sendto(c, "unix\0dgram", 10, 0, (struct sockaddr *)&un, sizeof un);
    len = sizeof ufrom;
    recvfrom(u, buf, sizeof buf, 0, (struct sockaddr *)&ufrom, &len);
    close(c);
    close(u);
    unlink(un.sun_path);

    struct sockaddr_un ls = {.sun_family = AF_UNIX};
    strcpy(ls.sun_path, "s.sock");
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    bind(l, (struct sockaddr *)&ls, offsetof(struct sockaddr_un, sun_path) + strlen(ls.sun_path) + 1);
    listen(l, 4);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    connect(s, (struct sockaddr *)&ls, sizeof ls);
    int acc = accept(l, NULL, NULL);
    sendto(s, "stream", 6, 0, NULL, 0);
    recvfrom(acc, buf, sizeof buf, 0, NULL, NULL);
    shutdown(s, SHUT_WR);
    recvfrom(acc, buf, sizeof buf, 0, NULL, NULL);               /* 0: peer shut down */
    close(acc);
    close(s);
    close(l);
    unlink(ls.sun_path);
    struct sockaddr_un none = {.sun_family = AF_UNIX};
    strcpy(none.sun_path, "missing.sock");
    int m = socket(AF_UNIX, SOCK_STREAM, 0);
    connect(m, (struct sockaddr *)&none, sizeof none);           /* ENOENT */
    close(m);
    printf("net done\n");
    return 0;
}
