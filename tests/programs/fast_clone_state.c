// A thread made by a raw clone(CLONE_VM|CLONE_THREAD|...) on a stack of its own starts
// with the program's whole state at the `syscall`, as the kernel gives it: rax = 0,
// rcx = the address after the `syscall`, r11 = rflags there, and every other general
// register, rflags (DF and the arithmetic flags), xmm0-15, MXCSR and the x87 control word
// as the parent set them. The site (`mov $56,%eax; syscall`) is run five times, so a
// lazily rewritten site creates threads through its trampoline too, and five times more
// with CLONE_VFORK (the parent waits until the child exits). The child checks everything
// before it touches anything, records a bit per field that differs and exits; the parent
// prints one line per clone.
// as-nobody
#include "util.h"
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

// What the child found wrong (a bit per field), its rax, rcx and r11, and its rflags.
volatile uint64_t child_bad, child_rax, child_rcx, child_r11, child_flags;
// Patterns: xmm0-15 (16 bytes each), then rbx, rbp, rdx, r8, r9, r12, r13, r14, r15.
uint8_t xmm_pat[256] __attribute__((aligned(16)));
uint64_t gpr_pat[9];
// MXCSR (round up, all exceptions masked) and x87 control word (round down, 53-bit).
uint32_t mxcsr_pat = 0x5f80;
uint16_t fcw_pat = 0x067f;
// rflags at the syscall: CF, PF, ZF, SF, OF and DF set (bit 1 is always set).
uint64_t flags_pat = 0x0cc7;

// clone_state(flags, stack, ctid): issues clone with every register set from the
// patterns; returns the child's tid in the parent. The child never returns.
long clone_state(unsigned long flags, void *stack, int *ctid);
__asm__(".text\n"
        ".globl clone_state\n"
        "clone_state:\n"
        "    push %rbx\n    push %rbp\n    push %r12\n    push %r13\n    push %r14\n    push %r15\n"
        "    sub $24, %rsp\n"
        "    stmxcsr 0(%rsp)\n"
        "    fnstcw 8(%rsp)\n"
        "    ldmxcsr mxcsr_pat(%rip)\n"
        "    fldcw fcw_pat(%rip)\n"
        "    lea xmm_pat(%rip), %rax\n"
        "    movdqa 0(%rax), %xmm0\n    movdqa 16(%rax), %xmm1\n    movdqa 32(%rax), %xmm2\n"
        "    movdqa 48(%rax), %xmm3\n    movdqa 64(%rax), %xmm4\n    movdqa 80(%rax), %xmm5\n"
        "    movdqa 96(%rax), %xmm6\n    movdqa 112(%rax), %xmm7\n    movdqa 128(%rax), %xmm8\n"
        "    movdqa 144(%rax), %xmm9\n    movdqa 160(%rax), %xmm10\n    movdqa 176(%rax), %xmm11\n"
        "    movdqa 192(%rax), %xmm12\n    movdqa 208(%rax), %xmm13\n    movdqa 224(%rax), %xmm14\n"
        "    movdqa 240(%rax), %xmm15\n"
        "    mov %rdx, %r10\n"
        "    lea gpr_pat(%rip), %rax\n"
        "    mov 0(%rax), %rbx\n    mov 8(%rax), %rbp\n    mov 16(%rax), %rdx\n"
        "    mov 24(%rax), %r8\n    mov 32(%rax), %r9\n    mov 40(%rax), %r12\n"
        "    mov 48(%rax), %r13\n    mov 56(%rax), %r14\n    mov 64(%rax), %r15\n"
        "    pushq flags_pat(%rip)\n"
        "    popfq\n"
        "    mov $56, %eax\n"
        "    syscall\n"
        ".globl clone_state_ret\n"
        "clone_state_ret:\n"
        "    test %rax, %rax\n" // flags change from here: rflags is checked through r11
        "    jz 1f\n"
        "    cld\n"
        "    ldmxcsr 0(%rsp)\n"
        "    fldcw 8(%rsp)\n"
        "    add $24, %rsp\n"
        "    pop %r15\n    pop %r14\n    pop %r13\n    pop %r12\n    pop %rbp\n    pop %rbx\n"
        "    ret\n"
        // The child, on its own stack: rax, rcx and r11 first (r11 must be the flags at
        // the syscall; the live rflags are only compared for DF: `test` set the others).
        "1:  mov %rax, child_rax(%rip)\n"
        "    mov %rcx, child_rcx(%rip)\n"
        "    mov %r11, child_r11(%rip)\n"
        "    pushfq\n"
        "    pop %rax\n"
        "    mov %rax, child_flags(%rip)\n"
        "    xor %r11d, %r11d\n"
        "    mov child_r11(%rip), %rcx\n"
        "    xor flags_pat(%rip), %rcx\n"
        "    and $0xcd5, %rcx\n"
        "    jz 2f\n"
        "    or $1, %r11\n"
        "2:  lea clone_state_ret(%rip), %rcx\n"
        "    cmp child_rcx(%rip), %rcx\n"
        "    je 2f\n"
        "    or $8192, %r11\n"
        "2:  lea gpr_pat(%rip), %rcx\n"
        "    cmp 0(%rcx), %rbx\n    je 3f\n    or $2, %r11\n"
        "3:  cmp 8(%rcx), %rbp\n   je 3f\n    or $4, %r11\n"
        "3:  cmp 16(%rcx), %rdx\n  je 3f\n    or $8, %r11\n"
        "3:  cmp 24(%rcx), %r8\n   je 3f\n    or $16, %r11\n"
        "3:  cmp 32(%rcx), %r9\n   je 3f\n    or $32, %r11\n"
        "3:  cmp 40(%rcx), %r12\n  je 3f\n    or $64, %r11\n"
        "3:  cmp 48(%rcx), %r13\n  je 3f\n    or $128, %r11\n"
        "3:  cmp 56(%rcx), %r14\n  je 3f\n    or $256, %r11\n"
        "3:  cmp 64(%rcx), %r15\n  je 3f\n    or $512, %r11\n"
        "3:  lea xmm_pat(%rip), %rcx\n"
        "    pcmpeqb 0(%rcx), %xmm0\n    pcmpeqb 16(%rcx), %xmm1\n    pcmpeqb 32(%rcx), %xmm2\n"
        "    pcmpeqb 48(%rcx), %xmm3\n    pcmpeqb 64(%rcx), %xmm4\n    pcmpeqb 80(%rcx), %xmm5\n"
        "    pcmpeqb 96(%rcx), %xmm6\n    pcmpeqb 112(%rcx), %xmm7\n    pcmpeqb 128(%rcx), %xmm8\n"
        "    pcmpeqb 144(%rcx), %xmm9\n    pcmpeqb 160(%rcx), %xmm10\n    pcmpeqb 176(%rcx), %xmm11\n"
        "    pcmpeqb 192(%rcx), %xmm12\n    pcmpeqb 208(%rcx), %xmm13\n    pcmpeqb 224(%rcx), %xmm14\n"
        "    pcmpeqb 240(%rcx), %xmm15\n"
        "    pand %xmm1, %xmm0\n    pand %xmm2, %xmm0\n    pand %xmm3, %xmm0\n    pand %xmm4, %xmm0\n"
        "    pand %xmm5, %xmm0\n    pand %xmm6, %xmm0\n    pand %xmm7, %xmm0\n    pand %xmm8, %xmm0\n"
        "    pand %xmm9, %xmm0\n    pand %xmm10, %xmm0\n    pand %xmm11, %xmm0\n    pand %xmm12, %xmm0\n"
        "    pand %xmm13, %xmm0\n    pand %xmm14, %xmm0\n    pand %xmm15, %xmm0\n"
        "    pmovmskb %xmm0, %ecx\n"
        "    cmp $0xffff, %ecx\n    je 3f\n    or $1024, %r11\n"
        "3:  sub $16, %rsp\n"
        "    stmxcsr 0(%rsp)\n"
        "    mov 0(%rsp), %ecx\n"
        "    cmp mxcsr_pat(%rip), %ecx\n    je 3f\n    or $2048, %r11\n"
        "3:  fnstcw 0(%rsp)\n"
        "    movzwl 0(%rsp), %ecx\n"
        "    cmpw fcw_pat(%rip), %cx\n    je 3f\n    or $4096, %r11\n"
        "3:  mov %r11, child_bad(%rip)\n"
        "    cld\n"
        "    xor %edi, %edi\n"
        "    mov $60, %eax\n"
        "    syscall\n"
        "    hlt\n");
extern char clone_state_ret[];

int main(void) {
    for (int i = 0; i < 256; i++) xmm_pat[i] = (uint8_t)(i * 7 + 3);
    for (int i = 0; i < 9; i++) gpr_pat[i] = 0x1111111111111111ull * (uint64_t)(i + 1) ^ 0x0123456789abcdefull;
    size_t size = 64 * 1024;
    char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(stack != MAP_FAILED);
    unsigned long thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                           CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
    for (int i = 0; i < 10; i++) {
        static int ctid;
        unsigned long flags = i < 5 ? thread : thread | CLONE_VFORK;
        child_bad = ~0ull;
        child_rax = ~0ull;
        __atomic_store_n(&ctid, -1, __ATOMIC_SEQ_CST);
        long tid = clone_state(flags, stack + size, &ctid);
        CHECK(tid > 0);
        while (1) {
            int v = __atomic_load_n(&ctid, __ATOMIC_SEQ_CST);
            if (v == 0) break;
            syscall(SYS_futex, &ctid, FUTEX_WAIT, v, NULL, NULL, 0);
        }
        printf("%s %d: rax %llu, DF %d, differing fields %#llx\n", i < 5 ? "thread" : "vfork thread", i % 5,
               (unsigned long long)child_rax, (int)(child_flags >> 10 & 1), (unsigned long long)child_bad);
    }
    return 0;
}
