// A branch into the rest of a rewritten run: h is glibc's thread-exit loop in miniature,
//     mov $39,%edx; xchg %ax,%ax; L: xor %esi,%esi; mov %edx,%eax; syscall; ret
// and h's own code jumps to L with its argument in %edx when it is nonzero. The shortest
// run before the syscall (xchg, xor, mov) would put L inside the site's jump, so the run is
// taken from the mov $39: its jump replaces that mov alone, and L and what follows stay as
// they were. h(0) makes getpid through the site (its trampoline, once rewritten); h(nr)
// enters at L and makes call nr through the intact syscall (a trap under strata). Each is
// compared with the C library's answer, 20 times over.
// as-nobody
#include "util.h"
#include <sys/syscall.h>

long h(long nr);
__asm__(".text\n"
        ".globl h\n"
        ".type h, @function\n"
        "h:\n"
        "    .cfi_startproc\n"
        "    test %rdi, %rdi\n"
        "    jnz 1f\n"
        "    mov $39, %edx\n"
        "    xchg %ax, %ax\n"
        "2:  xor %esi, %esi\n"
        "    mov %edx, %eax\n"
        "    syscall\n"
        "    ret\n"
        "1:  mov %edi, %edx\n"
        "    jmp 2b\n"
        "    .cfi_endproc\n"
        ".size h, . - h\n");

int main(void) {
    long pid = getpid(), ppid = getppid(), tid = syscall(SYS_gettid);
    int same[3] = {0, 0, 0};
    for (int i = 0; i < 20; i++) {
        same[0] += h(0) == pid;
        same[1] += h(SYS_getppid) == ppid;
        same[2] += h(SYS_gettid) == tid;
    }
    printf("through the site: getpid %d/20; entered at L: getppid %d/20, gettid %d/20\n", same[0], same[1],
           same[2]);
    return 0;
}
