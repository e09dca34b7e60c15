/* Attack 15: the rest of the kernel attack surface the hardening closes:
 * bpf, perf_event_open, kexec_load, init_module/finit_module, ioctl(TIOCSTI)
 * (pushing input into the terminal, for whoever reads it next), all through
 * the strata gadget. Only a success counts as an escape; several of these
 * fail natively for lack of privilege, so the native run escapes through
 * bpf/perf only where those are allowed. */
#include "attack.h"
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <termios.h>

int main(void) {
    struct gadget g = find_gadget();
    int esc = 0;
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.map_type = BPF_MAP_TYPE_ARRAY;
    attr.key_size = 4;
    attr.value_size = 4;
    attr.max_entries = 1;
    esc |= attempt("gadget bpf(BPF_MAP_CREATE)", gadget_call(g.addr, SYS_bpf, BPF_MAP_CREATE, (long)&attr, sizeof attr, 0, 0, 0));
    struct perf_event_attr pe;
    memset(&pe, 0, sizeof pe);
    pe.type = PERF_TYPE_SOFTWARE;
    pe.size = sizeof pe;
    pe.config = PERF_COUNT_SW_TASK_CLOCK;
    pe.exclude_kernel = 1;
    pe.exclude_hv = 1;
    esc |= attempt("gadget perf_event_open(task clock, self)",
                   gadget_call(g.addr, SYS_perf_event_open, (long)&pe, 0, -1, -1, 0, 0));
    esc |= attempt("gadget kexec_load(0 segments)", gadget_call(g.addr, SYS_kexec_load, 0, 0, 0, 0, 0, 0));
    esc |= attempt("gadget init_module(empty)", gadget_call(g.addr, SYS_init_module, (long)"", 0, (long)"", 0, 0, 0));
    esc |= attempt("gadget finit_module(fd 0)", gadget_call(g.addr, SYS_finit_module, 0, (long)"", 0, 0, 0, 0));
    long tty = gadget_call(g.addr, SYS_openat, AT_FDCWD, (long)"/dev/tty", O_RDWR | O_NOCTTY, 0, 0, 0);
    if (tty >= 0) {
        char c = '#';
        esc |= attempt("gadget ioctl(/dev/tty, TIOCSTI)", gadget_call(g.addr, SYS_ioctl, tty, TIOCSTI, (long)&c, 0, 0, 0));
    } else {
        printf("no terminal (/dev/tty: -%s): TIOCSTI not tried\n", errname(-tty));
    }
    return verdict(esc);
}
