// A program with no C library at all (static, -nostdlib): _start writes to
// stdout with raw syscalls, reads its argc from the initial stack, installs
// a SIGUSR1 handler through rt_sigaction with its own SA_RESTORER
// trampoline, signals itself with kill, and exits with exit_group(42).
// cflags: -nostdlib -static
// args: a b
// status: 42
#include <asm/unistd.h>

#define SIGUSR1 10
#define SA_RESTORER 0x04000000

        .text
        .globl _start
_start:
        mov     (%rsp), %rbx            // argc
        lea     msg_start(%rip), %rsi
        mov     $msg_start_len, %edx
        call    say
        add     $'0', %bl               // print argc as one digit
        mov     %bl, argc_digit(%rip)
        lea     msg_argc(%rip), %rsi
        mov     $msg_argc_len, %edx
        call    say

        mov     $__NR_rt_sigaction, %eax
        mov     $SIGUSR1, %edi
        lea     sigact(%rip), %rsi
        xor     %edx, %edx
        mov     $8, %r10d
        syscall
        test    %rax, %rax
        jnz     fail

        mov     $__NR_getpid, %eax
        syscall
        mov     %eax, %edi
        mov     $__NR_kill, %eax
        mov     $SIGUSR1, %esi
        syscall
        test    %rax, %rax
        jnz     fail
        cmpl    $1, handled(%rip)
        jne     fail

        lea     msg_end(%rip), %rsi
        mov     $msg_end_len, %edx
        call    say
        mov     $__NR_exit_group, %eax
        mov     $42, %edi
        syscall
        hlt

fail:
        mov     $__NR_exit_group, %eax
        mov     $1, %edi
        syscall
        hlt

// say(rsi = buffer, rdx = length)
say:
        mov     $__NR_write, %eax
        mov     $1, %edi
        syscall
        ret

handler:
        incl    handled(%rip)
        lea     msg_handler(%rip), %rsi
        mov     $msg_handler_len, %edx
        jmp     say

restorer:
        mov     $__NR_rt_sigreturn, %eax
        syscall
        hlt

        .data
handled: .long 0
sigact:
        .quad   handler
        .quad   SA_RESTORER
        .quad   restorer
        .quad   0
msg_start: .ascii "no libc here\n"
        .set msg_start_len, . - msg_start
msg_argc: .ascii "argc="
argc_digit: .ascii "?\n"
        .set msg_argc_len, . - msg_argc
msg_handler: .ascii "SIGUSR1 handler ran\n"
        .set msg_handler_len, . - msg_handler
msg_end: .ascii "exiting with 42\n"
        .set msg_end_len, . - msg_end
        .section .note.GNU-stack,"",@progbits
