/* Attack 16: signal a process outside the sandbox (one of the same user:
 * the test starts it, in a session of its own). With signal 0 (the kernel's
 * permission check, nothing delivered) through libc, raw, the gadget,
 * tgkill and a pidfd; then SIGTERM through the gadget, which natively ends
 * the victim: the test judges that one by whether the victim survives.
 * Usage: signal_outside PID */
#include "attack.h"
#include <signal.h>

int main(int argc, char **argv) {
    if (argc < 2)
        setup_failed("usage: signal_outside PID");
    long pid = atol(argv[1]);
    struct gadget g = find_gadget();
    int esc = 0;
    char what[128];
    snprintf(what, sizeof what, "libc kill(%ld, 0)", pid);
    esc |= attempt(what, libc_res(kill(pid, 0)));
    snprintf(what, sizeof what, "raw kill(%ld, 0)", pid);
    esc |= attempt(what, raw_call(SYS_kill, pid, 0, 0, 0, 0, 0));
    snprintf(what, sizeof what, "gadget kill(%ld, 0)", pid);
    esc |= attempt(what, gadget_call(g.addr, SYS_kill, pid, 0, 0, 0, 0, 0));
    snprintf(what, sizeof what, "gadget tgkill(%ld, %ld, 0)", pid, pid);
    esc |= attempt(what, gadget_call(g.addr, SYS_tgkill, pid, pid, 0, 0, 0, 0));
    long pidfd = gadget_call(g.addr, SYS_pidfd_open, pid, 0, 0, 0, 0, 0);
    if (pidfd >= 0) {
        snprintf(what, sizeof what, "gadget pidfd_send_signal(pidfd of %ld, 0)", pid);
        esc |= attempt(what, gadget_call(g.addr, SYS_pidfd_send_signal, pidfd, 0, 0, 0, 0, 0));
    } else {
        printf("pidfd_open(%ld) = %ld %s (no pidfd to try)\n", pid, pidfd, errname(-pidfd));
    }
    snprintf(what, sizeof what, "gadget kill(%ld, SIGTERM)", pid);
    esc |= attempt(what, gadget_call(g.addr, SYS_kill, pid, SIGTERM, 0, 0, 0, 0));
    /* Inside the sandbox signals still work: a child of its own. */
    pid_t c = fork();
    if (c == 0) {
        pause();
        _exit(0);
    }
    long r = libc_res(kill(c, SIGKILL));
    int st = 0;
    waitpid(c, &st, 0);
    printf("control: kill(own child %d, SIGKILL) = %ld, %s\n", (int)c, r,
           WIFSIGNALED(st) ? "it was killed, as it should be" : "it was NOT killed");
    return verdict(esc);
}
