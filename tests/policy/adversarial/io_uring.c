/* Attack 5: io_uring performs operations in the kernel on the program's
 * behalf, without a system call per operation: no interposer sees them, and
 * seccomp only sees io_uring_enter. The hardening refuses io_uring_setup
 * (raw syscalls, rewritten and trapping, through libc, and through the strata gadget). Should a
 * ring come into being anyway, an IORING_OP_SOCKET(AF_INET) submitted on it
 * shows what it buys. */
#include "attack.h"
#include <linux/io_uring.h>
#include <sys/mman.h>

#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#define SYS_io_uring_enter 426
#endif

/* Submits one IORING_OP_SOCKET(AF_INET, SOCK_STREAM) on `fd`; returns its result. */
static long ring_socket(struct gadget g, int fd, struct io_uring_params *p) {
    size_t sq_size = p->sq_off.array + p->sq_entries * sizeof(unsigned);
    size_t cq_size = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
    if (p->features & IORING_FEAT_SINGLE_MMAP)
        sq_size = cq_size = sq_size > cq_size ? sq_size : cq_size;
    char *sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
    char *cq = (p->features & IORING_FEAT_SINGLE_MMAP)
                   ? sq
                   : mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes = mmap(NULL, p->sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                                     MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
        return -1000;
    unsigned *tail = (unsigned *)(sq + p->sq_off.tail), mask = *(unsigned *)(sq + p->sq_off.ring_mask);
    unsigned *array = (unsigned *)(sq + p->sq_off.array);
    unsigned t = *tail, idx = t & mask;
    struct io_uring_sqe *sqe = &sqes[idx];
    memset(sqe, 0, sizeof *sqe);
    sqe->opcode = IORING_OP_SOCKET;
    sqe->fd = AF_INET;
    sqe->off = SOCK_STREAM;
    sqe->len = 0;
    array[idx] = idx;
    __atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
    long r = gadget_call(g.addr, SYS_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, 0, 0);
    if (r < 0)
        return r;
    unsigned *chead = (unsigned *)(cq + p->cq_off.head);
    unsigned ctail = __atomic_load_n((unsigned *)(cq + p->cq_off.tail), __ATOMIC_ACQUIRE);
    if (ctail == *chead)
        return -1001;
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
    return cqes[*chead & *(unsigned *)(cq + p->cq_off.ring_mask)].res;
}

static int try_setup(struct gadget g, const char *how, long res, struct io_uring_params *p) {
    int esc = attempt(how, res);
    if (res >= 0) {
        char what[160];
        snprintf(what, sizeof what, "  on that ring: IORING_OP_SOCKET(AF_INET)");
        long s = ring_socket(g, (int)res, p);
        if (s <= -1000)
            printf("%s: could not drive the ring (%ld)\n", what, s);
        else
            attempt(what, s);
    }
    return esc;
}

int main(void) {
    struct gadget g = find_gadget();
    int esc = 0;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    esc |= try_setup(g, "raw syscall (rewritten site) io_uring_setup(8)", raw_call(SYS_io_uring_setup, 8, (long)&p, 0, 0, 0, 0), &p);
    memset(&p, 0, sizeof p);
    esc |= try_setup(g, "trapping syscall io_uring_setup(8)", jit_call(SYS_io_uring_setup, 8, (long)&p, 0, 0, 0, 0), &p);
    memset(&p, 0, sizeof p);
    esc |= try_setup(g, "libc syscall(io_uring_setup, 8)", libc_res(syscall(SYS_io_uring_setup, 8, &p)), &p);
    memset(&p, 0, sizeof p);
    esc |= try_setup(g, "gadget io_uring_setup(8)", gadget_call(g.addr, SYS_io_uring_setup, 8, (long)&p, 0, 0, 0, 0), &p);
    /* io_uring_register / io_uring_enter on a bogus fd: EBADF natively, refused by seccomp under a policy. */
    long r = gadget_call(g.addr, SYS_io_uring_enter, 1000, 0, 0, 0, 0, 0);
    printf("gadget io_uring_enter(fd 1000) = -%s (EBADF natively; the hardening refuses the call itself)\n", errname(-r));
    return verdict(esc);
}
