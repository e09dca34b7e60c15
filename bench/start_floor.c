/* start_floor PROGRAM: the least any in-process runtime does at a start,
 * for a static, non-PIE PROGRAM: it is itself exec'd instead of the program
 * (a static binary of its own), maps the program's segments from the file,
 * installs a SIGSYS handler on an alternate stack, turns Syscall User
 * Dispatch on for everything outside its own text, and jumps to the
 * program's entry with the program's argv. The program's first system call
 * traps; the handler makes it (exit and exit_group only: enough for a
 * program that only exits). No libc: built with
 *   gcc -O2 -static -nostdlib -fno-stack-protector -Wl,-Ttext-segment=0x10000000
 * bench/starts-in-turn.py times `start_floor exit_only` natively beside
 * exit_only alone and under strata: what strata's start adds over this floor
 * is what its own start-up could still save. */
#include <elf.h>

typedef unsigned long u64;

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}

enum { SYS_read_at = 17, SYS_open_ = 2, SYS_close_ = 3, SYS_mmap_ = 9, SYS_sigaction_ = 13,
       SYS_sigreturn_ = 15, SYS_sigaltstack_ = 131, SYS_prctl_ = 157, SYS_exit_group_ = 231 };

extern char __executable_start[], etext[];
static char altstack[16384];
/* Syscall User Dispatch's selector: block (trap) calls outside our text. */
static char selector = 1;

/* ucontext_t: uc_mcontext.gregs starts 40 bytes in; REG_RDI is 8, REG_RAX 13. */
static void on_sigsys(int sig, void *info, void *uc) {
    (void)sig, (void)info;
    long *gregs = (long *)((char *)uc + 40);
    sys6(SYS_exit_group_, gregs[8], 0, 0, 0, 0, 0);
}

static void restorer(void) { sys6(SYS_sigreturn_, 0, 0, 0, 0, 0, 0); }

struct kaction {
    void *handler;
    u64 flags;
    void *restorer;
    u64 mask;
};

static void fail(void) { sys6(SYS_exit_group_, 127, 0, 0, 0, 0, 0); }

void floor_main(long *sp) {
    if (sp[0] < 2)
        fail();
    int fd = (int)sys6(SYS_open_, sp[2], 0, 0, 0, 0, 0);
    Elf64_Ehdr eh;
    Elf64_Phdr ph[16];
    if (fd < 0 || sys6(SYS_read_at, fd, (long)&eh, sizeof eh, 0, 0, 0) != sizeof eh || eh.e_phnum > 16 ||
        sys6(SYS_read_at, fd, (long)ph, (long)sizeof *ph * eh.e_phnum, (long)eh.e_phoff, 0, 0) !=
            (long)sizeof *ph * eh.e_phnum)
        fail();
    for (int i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        u64 at = ph[i].p_vaddr & ~4095UL, off = ph[i].p_offset & ~4095UL;
        long prot = (ph[i].p_flags & PF_R ? 1 : 0) | (ph[i].p_flags & PF_W ? 2 : 0) | (ph[i].p_flags & PF_X ? 4 : 0);
        /* MAP_PRIVATE | MAP_FIXED; bss beyond the file is not handled (exit_only has none). */
        if (sys6(SYS_mmap_, (long)at, (long)(ph[i].p_filesz + ph[i].p_vaddr - at), prot, 0x12, fd, (long)off) != (long)at)
            fail();
    }
    sys6(SYS_close_, fd, 0, 0, 0, 0, 0);
    struct { void *sp; int flags; u64 size; } ss = {altstack, 0, sizeof altstack};
    sys6(SYS_sigaltstack_, (long)&ss, 0, 0, 0, 0, 0);
    /* SA_SIGINFO | SA_ONSTACK | SA_RESTORER, every signal blocked in the handler. */
    struct kaction sa = {(void *)on_sigsys, 0x4 | 0x08000000 | 0x04000000, (void *)restorer, ~0UL};
    sys6(SYS_sigaction_, 31, (long)&sa, 0, 8, 0, 0);
    /* PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, our text, the selector. */
    if (sys6(SYS_prctl_, 59, 1, (long)__executable_start, etext - __executable_start, (long)&selector, 0) != 0)
        fail();
    /* The program's argv: ours without our own name. */
    sp[1] = sp[0] - 1;
    __asm__ volatile("mov %0, %%rsp; xor %%edx, %%edx; jmp *%1" ::"r"(sp + 1), "r"(eh.e_entry) : "memory");
    __builtin_unreachable();
}

__asm__(".globl _start\n_start:\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call floor_main\n");
