// A branch into the middle of a rewritten site: f is `mov $39,%eax; L:
// syscall; ret`, called 20 times (a lazily rewritten site is patched after
// the first), then entered at L with the number set by the caller
// (`mov $110,%eax; jmp L`): the intact `syscall` must make the caller's call
// (getppid; also gettid and getpid), not the site's. f is called again after
// each, and the same is done with a P2 site, g: `mov %edi,%eax; lea
// 0x12345678(%rdi),%r9; L2: syscall; ret` entered at L2 with r9 holding a
// sentinel, which the skipped lea must not have changed.
        .equ NR_getpid, 39
        .equ NR_getppid, 110
        .equ NR_gettid, 186

        .text
        .type f, @function
f:      mov     $NR_getpid, %eax
f_sys:  syscall
        ret
        .size f, . - f

// f_at_sys(nr): enters f at its syscall
        .type f_at_sys, @function
f_at_sys:
        mov     %edi, %eax
        jmp     f_sys
        .size f_at_sys, . - f_at_sys

// g(nr): a P2 site; r9 afterwards goes to g_r9
        .type g, @function
g:      mov     %edi, %eax
        lea     0x12345678(%rdi), %r9
g_sys:  syscall
        mov     %r9, g_r9(%rip)
        ret
        .size g, . - g

// g_at_sys(nr): enters g at its syscall with r9 = sentinel
        .type g_at_sys, @function
g_at_sys:
        mov     %edi, %eax
        movabs  $0x5e17e15e17e15e17, %r9
        jmp     g_sys
        .size g_at_sys, . - g_at_sys

// repeat(fn, arg, n, expected): how many of n calls fn(arg) returned expected
        .type repeat, @function
repeat:
        push    %rbx
        push    %rbp
        push    %r12
        push    %r13
        push    %r14
        mov     %rdi, %rbx
        mov     %esi, %ebp
        mov     %edx, %r12d
        mov     %rcx, %r13
        xor     %r14d, %r14d
1:      mov     %ebp, %edi
        call    *%rbx
        cmp     %r13, %rax
        jne     2f
        inc     %r14d
2:      dec     %r12d
        jnz     1b
        mov     %r14d, %eax
        pop     %r14
        pop     %r13
        pop     %r12
        pop     %rbp
        pop     %rbx
        ret
        .size repeat, . - repeat

// step(fn, arg, n, expected, message): runs repeat, prints message with the
// count, exits 1 after a FAILED line unless all n matched
        .type step, @function
step:
        push    %rbx
        push    %rbp
        push    %r12
        mov     %edx, %ebx
        mov     %r8, %rbp
        call    repeat
        mov     %eax, %r12d
        mov     %rbp, %rdi
        mov     %r12d, %esi
        mov     %ebx, %edx
        xor     %eax, %eax
        call    printf@PLT
        cmp     %ebx, %r12d
        jne     1f
        pop     %r12
        pop     %rbp
        pop     %rbx
        ret
1:      mov     $2, %edi
        lea     msg_failed(%rip), %rsi
        xor     %eax, %eax
        call    dprintf@PLT
        mov     $2, %edi
        mov     %rbp, %rsi
        mov     %r12d, %edx
        mov     %ebx, %ecx
        xor     %eax, %eax
        call    dprintf@PLT
        mov     $1, %edi
        call    exit@PLT
        .size step, . - step

.macro STEP fn, nr, n, expected, msg
        lea     \fn(%rip), %rdi
        mov     $\nr, %esi
        mov     $\n, %edx
        mov     \expected(%rip), %rcx
        lea     \msg(%rip), %r8
        call    step
.endm

.macro CHECK_R9 expected, msg
        mov     g_r9(%rip), %rax
        movabs  $\expected, %rcx
        cmp     %rcx, %rax
        sete    %sil
        movzbl  %sil, %esi
        lea     \msg(%rip), %rdi
        call    check_flag
.endm

// check_flag(msg, ok): prints msg with ok (0/1); FAILED and exit 1 unless ok
        .type check_flag, @function
check_flag:
        push    %rbx
        push    %rbp
        sub     $8, %rsp
        mov     %rdi, %rbx
        mov     %esi, %ebp
        xor     %eax, %eax
        call    printf@PLT
        test    %ebp, %ebp
        jz      1f
        add     $8, %rsp
        pop     %rbp
        pop     %rbx
        ret
1:      mov     $2, %edi
        lea     msg_failed(%rip), %rsi
        xor     %eax, %eax
        call    dprintf@PLT
        mov     $2, %edi
        mov     %rbx, %rsi
        mov     %ebp, %edx
        xor     %eax, %eax
        call    dprintf@PLT
        mov     $1, %edi
        call    exit@PLT
        .size check_flag, . - check_flag

        .globl main
        .type main, @function
main:
        sub     $8, %rsp
        call    getpid@PLT
        mov     %rax, pid(%rip)
        call    getppid@PLT
        mov     %rax, ppid(%rip)
        call    gettid@PLT
        mov     %rax, tid(%rip)

        STEP    f, 0, 20, pid, msg_f
        STEP    f_at_sys, NR_getppid, 5, ppid, msg_mid_ppid
        STEP    f, 0, 20, pid, msg_f_again
        STEP    f_at_sys, NR_gettid, 5, tid, msg_mid_tid
        STEP    f_at_sys, NR_getpid, 5, pid, msg_mid_pid
        STEP    f, 0, 20, pid, msg_f_again
        STEP    f_at_sys, NR_getppid, 5, ppid, msg_mid_ppid

        STEP    g, NR_getpid, 20, pid, msg_g
        CHECK_R9 0x12345678 + NR_getpid, msg_g_r9
        STEP    g_at_sys, NR_getppid, 5, ppid, msg_g_mid_ppid
        CHECK_R9 0x5e17e15e17e15e17, msg_g_mid_r9
        STEP    g, NR_getpid, 20, pid, msg_g_again
        STEP    g_at_sys, NR_gettid, 5, tid, msg_g_mid_tid
        STEP    g, NR_getppid, 5, ppid, msg_g_ppid

        xor     %eax, %eax
        add     $8, %rsp
        ret
        .size main, . - main

        .section .rodata.str1.1, "aMS", @progbits, 1
msg_f:          .asciz "f (mov $39,%%eax; syscall): getpid %d/%d\n"
msg_f_again:    .asciz "f again: getpid %d/%d\n"
msg_mid_ppid:   .asciz "entered at f's syscall with eax=110: getppid %d/%d\n"
msg_mid_tid:    .asciz "entered at f's syscall with eax=186: gettid %d/%d\n"
msg_mid_pid:    .asciz "entered at f's syscall with eax=39: getpid %d/%d\n"
msg_g:          .asciz "g (mov %%edi,%%eax; lea 0x12345678(%%rdi),%%r9; syscall) with 39: getpid %d/%d\n"
msg_g_r9:       .asciz "g: r9 set by the lea: %d\n"
msg_g_mid_ppid: .asciz "entered at g's syscall with eax=110: getppid %d/%d\n"
msg_g_mid_r9:   .asciz "entered at g's syscall: the lea was skipped (r9 is the caller's): %d\n"
msg_g_again:    .asciz "g again with 39: getpid %d/%d\n"
msg_g_mid_tid:  .asciz "entered at g's syscall with eax=186: gettid %d/%d\n"
msg_g_ppid:     .asciz "g with 110: getppid %d/%d\n"
msg_failed:     .asciz "FAILED: "

        .bss
        .balign 8
pid:    .skip   8
ppid:   .skip   8
tid:    .skip   8
g_r9:   .skip   8

        .section .note.GNU-stack, "", @progbits
