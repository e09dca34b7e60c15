// The register contract of a system call site, through every site pattern
// the fast path rewrites: after `syscall`, rax holds the result, rcx the
// address of the next instruction, r11 the rflags at the `syscall`; every
// other general register, rflags itself, xmm0-15 (ymm0-15 with AVX; zmm0-31
// and k0-7 with AVX-512: the widest the CPU and kernel enable, probed with
// cpuid/xgetbv), MXCSR, the x87 control word, the 128-byte red zone below rsp
// and the stack above it are unchanged.
//
// Eight getpid sites, each executed 50 times (so a lazily rewritten site goes
// through its trampoline from the second call on), each call under one of
// eight rflags patterns: set with popfq (CF, PF, AF, ZF, SF, DF, OF and ID in
// several combinations, DF=1 included) or with an arithmetic op (cmp setting
// CF, OF and SF). The instruction before each `syscall`:
//   P1   mov $39,%eax                  b8 imm32
//   P1w  mov $39,%rax                  48 c7 c0 imm32
//   P2   mov 0x8(%rsp),%r9             (glibc's syscall(3)), number already in eax
//   P2   mov r9_src(%rip),%r9          RIP-relative load
//   P2   lea 0x12345678(%rbx),%r9      disp32
//   P2   movq $0x7654321,%r9           49 c7 c1 imm32
//   P2   sub $0x12345678,%r9           writes the flags: r11 holds its result
//   P2   movabs $0xdead000000000027,%rax   48 b8 imm64: the kernel takes the
//        number from eax alone, so this is getpid
// The expected state is taken from a dry run of the same instruction(s) just
// before the real site (same flags, registers and stack). Prints one line per
// site; the first call that differs prints every differing field as FAILED
// and exits 1. Optional argv[1] = 0, 1 or 2 caps the vector width (SSE, AVX,
// AVX-512) for testing the narrower paths on a wide machine.
// args:
// args: 1
// args: 0
#define CALLS 50
#define KINDS 8

        .equ NR_getpid, 39             // (gas symbol: used inside macro strings)

// Record layout (one for the input patterns I, the expected state E and the
// actual state A), in qwords:
#define R_GPR   0       // 0..14: rax rbx rcx rdx rsi rdi rbp r8 r9 r10 r11 r12 r13 r14 r15
#define R_RSP   15
#define R_FLAGS 16      // rflags after the call
#define R_MXCSR 17
#define R_FCW   18
#define R_RZ    19      // 19..34: [rsp-128, rsp)
#define R_UP    35      // 35..36: [rsp, rsp+16)
#define R_K     37      // 37..44: k0..k7 (16 bits each)
#define R_V     45      // 45..300: zmm0..31, 8 qwords each
#define R_N     301
#define Q(n) (8 * (n))

        .text
        .globl main
        .type main, @function
main:
        push    %rbx
        push    %rbp
        push    %r12
        push    %r13
        push    %r14
        push    %r15
        sub     $8, %rsp
        mov     %edi, %r12d             // argc
        mov     %rsi, %r13              // argv

        call    getpid@PLT
        mov     %rax, pid(%rip)

        call    probe_vectors
        cmp     $2, %r12d
        jl      1f
        mov     8(%r13), %rax           // argv[1]: cap the vector mode
        movzbl  (%rax), %eax
        sub     $'0', %eax
        cmp     vmode(%rip), %eax
        jae     1f
        mov     %eax, vmode(%rip)
1:
        // I[j] = (j + 1) * golden ratio constant: distinct, nonzero patterns
        lea     rec_i(%rip), %rdi
        xor     %ecx, %ecx
        movabs  $0x9e3779b97f4a7c15, %rdx
2:      lea     1(%rcx), %rax
        imul    %rdx, %rax
        mov     %rax, (%rdi,%rcx,8)
        inc     %ecx
        cmp     $R_N, %ecx
        jne     2b
        movq    $0x7f80, Q(R_MXCSR)(%rdi)       // round toward zero, exceptions masked
        movq    $0x0e7f, Q(R_FCW)(%rdi)         // x87: round toward zero, double precision
        xor     %ecx, %ecx
3:      andq    $0xffff, Q(R_K)(%rdi,%rcx,8)
        inc     %ecx
        cmp     $8, %ecx
        jne     3b

        lea     sites(%rip), %r14
next_site:
        mov     (%r14), %rax
        test    %rax, %rax
        jz      done
        xor     %ebx, %ebx              // call number
one_call:
        mov     %ebx, %eax
        xor     %edx, %edx
        mov     $KINDS, %ecx
        div     %ecx
        mov     %edx, %edi              // flags kind = call % KINDS
        mov     %edx, %ebp
        call    *(%r14)
        cmpl    $0, vmode(%rip)
        je      4f
        vzeroupper
4:
        // compare E and A
        xor     %r15d, %r15d            // field
        xor     %r12d, %r12d            // mismatches
5:      lea     rec_e(%rip), %rax
        mov     (%rax,%r15,8), %rcx
        lea     rec_a(%rip), %rax
        mov     (%rax,%r15,8), %r8
        cmp     %rcx, %r8
        je      6f
        inc     %r12d
        mov     8(%r14), %rdi           // site name
        mov     %ebx, %esi
        mov     %ebp, %edx
        mov     %r15d, %ecx
        mov     (%rax,%r15,8), %r9      // got
        lea     rec_e(%rip), %rax
        mov     (%rax,%r15,8), %r8      // expected
        call    report
6:      inc     %r15d
        cmp     $R_N, %r15d
        jne     5b
        test    %r12d, %r12d
        jnz     failed
        inc     %ebx
        cmp     $CALLS, %ebx
        jne     one_call

        lea     msg_ok(%rip), %rdi
        mov     8(%r14), %rsi
        mov     $CALLS, %edx
        xor     %eax, %eax
        call    printf@PLT
        add     $16, %r14
        jmp     next_site

done:   xor     %eax, %eax
        add     $8, %rsp
        pop     %r15
        pop     %r14
        pop     %r13
        pop     %r12
        pop     %rbp
        pop     %rbx
        ret

failed: mov     $1, %edi
        call    exit@PLT
        .size main, . - main

// report(site name, call, kind, field, expected, got): one FAILED line on stderr
        .type report, @function
report:
        push    %rbx
        push    %rbp
        push    %r12
        push    %r13
        push    %r14
        push    %r15
        sub     $72, %rsp               // 64-byte field description at 0(%rsp)
        mov     %rdi, %r12
        mov     %esi, %r13d
        mov     %edx, %r14d
        mov     %ecx, %ebx
        mov     %r8, %r15
        mov     %r9, %rbp
        mov     %rsp, %rdi
        mov     $64, %esi
        xor     %eax, %eax
        cmp     $R_RSP, %ebx
        jae     1f
        lea     gpr_names(%rip), %rcx
        mov     (%rcx,%rbx,8), %rcx
        lea     fmt_s(%rip), %rdx
        jmp     9f
1:      cmp     $R_RZ, %ebx
        jae     2f
        lea     misc_names(%rip), %rcx
        mov     -Q(R_RSP)(%rcx,%rbx,8), %rcx
        lea     fmt_s(%rip), %rdx
        jmp     9f
2:      cmp     $R_UP, %ebx
        jae     3f
        mov     $R_UP, %ecx
        sub     %ebx, %ecx
        shl     $3, %ecx                // 128 - 8 * (field - R_RZ)
        lea     fmt_rz(%rip), %rdx
        jmp     9f
3:      cmp     $R_K, %ebx
        jae     4f
        lea     -R_UP(%rbx), %ecx
        shl     $3, %ecx
        lea     fmt_up(%rip), %rdx
        jmp     9f
4:      cmp     $R_V, %ebx
        jae     5f
        lea     -R_K(%rbx), %ecx
        lea     fmt_k(%rip), %rdx
        jmp     9f
5:      lea     -R_V(%rbx), %ecx
        mov     %ecx, %r8d
        shr     $3, %ecx                // register
        and     $7, %r8d
        shl     $3, %r8d                // first byte
        lea     7(%r8), %r9d
        lea     fmt_v(%rip), %rdx
9:      call    snprintf@PLT
        mov     $2, %edi
        lea     fmt_fail(%rip), %rsi
        mov     %r12, %rdx
        mov     %r13d, %ecx
        mov     %r14d, %r8d
        mov     %rsp, %r9
        push    %rbp
        push    %r15
        xor     %eax, %eax
        call    dprintf@PLT
        add     $88, %rsp
        pop     %r15
        pop     %r14
        pop     %r13
        pop     %r12
        pop     %rbp
        pop     %rbx
        ret
        .size report, . - report

// vmode = 2 (AVX-512: zmm0-31, k0-7), 1 (AVX: ymm0-15) or 0 (xmm0-15)
        .type probe_vectors, @function
probe_vectors:
        push    %rbx
        movl    $0, vmode(%rip)
        mov     $1, %eax
        cpuid
        bt      $27, %ecx               // OSXSAVE
        jnc     9f
        bt      $28, %ecx               // AVX
        jnc     9f
        xor     %ecx, %ecx
        xgetbv
        and     $6, %eax
        cmp     $6, %eax                // XMM and YMM state enabled
        jne     9f
        movl    $1, vmode(%rip)
        xor     %eax, %eax
        cpuid
        cmp     $7, %eax
        jb      9f
        mov     $7, %eax
        xor     %ecx, %ecx
        cpuid
        bt      $16, %ebx               // AVX512F
        jnc     9f
        xor     %ecx, %ecx
        xgetbv
        and     $0xe6, %eax
        cmp     $0xe6, %eax             // opmask, ZMM_Hi256, Hi16_ZMM enabled
        jne     9f
        movl    $2, vmode(%rip)
9:      pop     %rbx
        ret
        .size probe_vectors, . - probe_vectors

// load_ext(rdi = record): MXCSR, x87 control word, vector and mask registers
        .type load_ext, @function
load_ext:
        ldmxcsr Q(R_MXCSR)(%rdi)
        fldcw   Q(R_FCW)(%rdi)
        cmpl    $1, vmode(%rip)
        je      1f
        ja      2f
        .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        movdqu  Q(R_V)+64*\n(%rdi), %xmm\n
        .endr
        ret
1:
        .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        vmovdqu Q(R_V)+64*\n(%rdi), %ymm\n
        .endr
        ret
2:
        .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        vmovdqu64 Q(R_V)+64*\n(%rdi), %zmm\n
        .endr
        .irp n, 0,1,2,3,4,5,6,7
        kmovw   Q(R_K)+8*\n(%rdi), %k\n
        .endr
        ret
        .size load_ext, . - load_ext

// store_ext(rdi = record): the same, stored
        .type store_ext, @function
store_ext:
        stmxcsr Q(R_MXCSR)(%rdi)
        fnstcw  Q(R_FCW)(%rdi)
        cmpl    $1, vmode(%rip)
        je      1f
        ja      2f
        .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        movdqu  %xmm\n, Q(R_V)+64*\n(%rdi)
        .endr
        ret
1:
        .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        vmovdqu %ymm\n, Q(R_V)+64*\n(%rdi)
        .endr
        ret
2:
        .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        vmovdqu64 %zmm\n, Q(R_V)+64*\n(%rdi)
        .endr
        .irp n, 0,1,2,3,4,5,6,7
        kmovw   %k\n, Q(R_K)+8*\n(%rdi)
        .endr
        ret
        .size store_ext, . - store_ext

// Flags for kind `kind`: popfq of flag_table[kind] (below the red zone), or,
// for the last kind, a cmp that sets CF, OF and SF. Clobbers rax and rdx.
.macro FLAGSET
        mov     kind(%rip), %eax
        cmp     $KINDS - 1, %eax
        je      71f
        lea     flag_table(%rip), %rdx
        lea     -256(%rsp), %rsp
        pushq   (%rdx,%rax,8)
        popfq
        lea     256(%rsp), %rsp
        jmp     72f
71:     cmpl    $-1, int_max(%rip)      // 0x7fffffff - 0xffffffff: CF, OF, SF
72:
.endm

// Neither macro changes the flags.
.macro LOADGPR
        mov     rec_i+Q(0)(%rip), %rax
        mov     rec_i+Q(1)(%rip), %rbx
        mov     rec_i+Q(2)(%rip), %rcx
        mov     rec_i+Q(3)(%rip), %rdx
        mov     rec_i+Q(4)(%rip), %rsi
        mov     rec_i+Q(5)(%rip), %rdi
        mov     rec_i+Q(6)(%rip), %rbp
        mov     rec_i+Q(7)(%rip), %r8
        mov     rec_i+Q(8)(%rip), %r9
        mov     rec_i+Q(9)(%rip), %r10
        mov     rec_i+Q(10)(%rip), %r11
        mov     rec_i+Q(11)(%rip), %r12
        mov     rec_i+Q(12)(%rip), %r13
        mov     rec_i+Q(13)(%rip), %r14
        mov     rec_i+Q(14)(%rip), %r15
.endm

.macro SAVEGPR rec
        mov     %rax, \rec+Q(0)(%rip)
        mov     %rbx, \rec+Q(1)(%rip)
        mov     %rcx, \rec+Q(2)(%rip)
        mov     %rdx, \rec+Q(3)(%rip)
        mov     %rsi, \rec+Q(4)(%rip)
        mov     %rdi, \rec+Q(5)(%rip)
        mov     %rbp, \rec+Q(6)(%rip)
        mov     %r8, \rec+Q(7)(%rip)
        mov     %r9, \rec+Q(8)(%rip)
        mov     %r10, \rec+Q(9)(%rip)
        mov     %r11, \rec+Q(10)(%rip)
        mov     %r12, \rec+Q(11)(%rip)
        mov     %r13, \rec+Q(12)(%rip)
        mov     %r14, \rec+Q(13)(%rip)
        mov     %r15, \rec+Q(14)(%rip)
.endm

// rflags into rec.flags without touching the red zone
.macro SAVEFLAGS rec
        lea     -256(%rsp), %rsp
        pushfq
        popq    \rec+Q(R_FLAGS)(%rip)
        lea     256(%rsp), %rsp
.endm

// run_NAME(kind): one call through the site `pre; insn; syscall`, with every
// register set from rec_i; fills rec_e (expected) and rec_a (actual).
.macro SITE name, pre, insn
        .type run_\name, @function
run_\name:
        mov     %rbx, callee_saved+0(%rip)
        mov     %rbp, callee_saved+8(%rip)
        mov     %r12, callee_saved+16(%rip)
        mov     %r13, callee_saved+24(%rip)
        mov     %r14, callee_saved+32(%rip)
        mov     %r15, callee_saved+40(%rip)
        mov     %edi, kind(%rip)
        sub     $24, %rsp               // S = rsp: [S] and [S+8] hold patterns
        // E starts as I (registers, stack patterns); vector state from the
        // registers as loaded (only what this CPU has)
        lea     rec_i(%rip), %rsi
        lea     rec_e(%rip), %rdi
        xor     %ecx, %ecx
1:      mov     (%rsi,%rcx,8), %rax
        mov     %rax, (%rdi,%rcx,8)
        inc     %ecx
        cmp     $R_K, %ecx
        jne     1b
        lea     rec_i(%rip), %rdi
        call    load_ext
        lea     rec_e(%rip), %rdi
        call    store_ext
        // stack: red zone and the two slots above rsp (no calls from here on)
        lea     rec_i+Q(R_RZ)(%rip), %rsi
        lea     -128(%rsp), %rdi
        xor     %ecx, %ecx
2:      mov     (%rsi,%rcx,8), %rax
        mov     %rax, (%rdi,%rcx,8)
        inc     %ecx
        cmp     $R_K - R_RZ, %ecx
        jne     2b
        mov     %rsp, rec_e+Q(R_RSP)(%rip)
        // dry run: the expected registers and flags
        FLAGSET
        LOADGPR
        \pre
        \insn
        SAVEFLAGS rec_e
        SAVEGPR rec_e
        // the real site
        FLAGSET
        LOADGPR
        \pre
        \insn
        syscall
after_\name:
        SAVEGPR rec_a
        mov     %rsp, rec_a+Q(R_RSP)(%rip)
        SAVEFLAGS rec_a
        lea     -128(%rsp), %rsi
        lea     rec_a+Q(R_RZ)(%rip), %rdi
        xor     %ecx, %ecx
3:      mov     (%rsi,%rcx,8), %rax
        mov     %rax, (%rdi,%rcx,8)
        inc     %ecx
        cmp     $R_K - R_RZ, %ecx
        jne     3b
        cld
        lea     rec_a(%rip), %rdi
        call    store_ext
        ldmxcsr default_mxcsr(%rip)
        fldcw   default_fcw(%rip)
        // what the kernel leaves: rax = result, rcx = next instruction, r11 = rflags
        mov     pid(%rip), %rax
        mov     %rax, rec_e+Q(0)(%rip)
        lea     after_\name(%rip), %rax
        mov     %rax, rec_e+Q(2)(%rip)
        mov     rec_e+Q(R_FLAGS)(%rip), %rax
        mov     %rax, rec_e+Q(10)(%rip)
        add     $24, %rsp
        mov     callee_saved+0(%rip), %rbx
        mov     callee_saved+8(%rip), %rbp
        mov     callee_saved+16(%rip), %r12
        mov     callee_saved+24(%rip), %r13
        mov     callee_saved+32(%rip), %r14
        mov     callee_saved+40(%rip), %r15
        ret
        .size run_\name, . - run_\name
.endm

        SITE p1, , "mov $NR_getpid, %eax"
        // gas would be free to shorten `mov $39,%rax`: spell the bytes out
        SITE p1w, , ".byte 0x48, 0xc7, 0xc0, NR_getpid, 0, 0, 0"
        SITE p2_rsp, "mov $NR_getpid, %eax", "mov 0x8(%rsp), %r9"
        SITE p2_rip, "mov $NR_getpid, %eax", "mov r9_src(%rip), %r9"
        SITE p2_lea, "mov $NR_getpid, %eax", "lea 0x12345678(%rbx), %r9"
        SITE p2_imm, "mov $NR_getpid, %eax", "movq $0x7654321, %r9"
        SITE p2_sub, "mov $NR_getpid, %eax", "sub $0x12345678, %r9"
        // the kernel reads only eax (sign-extended): the upper half is ignored
        SITE p2_abs, , "movabs $0xdead000000000000 + NR_getpid, %rax"

        .section .rodata
        .balign 8
flag_table:
        .quad   0x202                   // none (IF and bit 1 always read as 1)
        .quad   0x202 | 0x001 | 0x800   // CF OF
        .quad   0x202 | 0x040 | 0x004   // ZF PF
        .quad   0x202 | 0x080 | 0x010   // SF AF
        .quad   0x202 | 0x400 | 0x001 | 0x800 | 0x080   // DF CF OF SF
        .quad   0x202 | 0x200000 | 0x040                // ID ZF
        .quad   0x202 | 0x200000 | 0xcd5                // all: CF PF AF ZF SF DF OF ID
        .quad   0                       // (kind 7: cmp)
r9_src: .quad   0x0123456789abcdef
int_max: .long  0x7fffffff
default_mxcsr: .long 0x1f80
default_fcw: .word 0x037f

        .section .data.rel.ro, "aw"
        .balign 8
sites:
        .quad   run_p1, name_p1
        .quad   run_p1w, name_p1w
        .quad   run_p2_rsp, name_p2_rsp
        .quad   run_p2_rip, name_p2_rip
        .quad   run_p2_lea, name_p2_lea
        .quad   run_p2_imm, name_p2_imm
        .quad   run_p2_sub, name_p2_sub
        .quad   run_p2_abs, name_p2_abs
        .quad   0, 0
gpr_names:
        .quad   g_rax, g_rbx, g_rcx, g_rdx, g_rsi, g_rdi, g_rbp, g_r8
        .quad   g_r9, g_r10, g_r11, g_r12, g_r13, g_r14, g_r15
misc_names:
        .quad   g_rsp, g_flags, g_mxcsr, g_fcw

        .section .rodata.str1.1, "aMS", @progbits, 1
name_p1:     .asciz "P1 mov $39,%eax"
name_p1w:    .asciz "P1w mov $39,%rax"
name_p2_rsp: .asciz "P2 mov 0x8(%rsp),%r9"
name_p2_rip: .asciz "P2 mov r9_src(%rip),%r9"
name_p2_lea: .asciz "P2 lea 0x12345678(%rbx),%r9"
name_p2_imm: .asciz "P2 movq $0x7654321,%r9"
name_p2_sub: .asciz "P2 sub $0x12345678,%r9 (writes the flags)"
name_p2_abs: .asciz "P2 movabs $0xdead000000000027,%rax (number in eax, junk above)"
g_rax:  .asciz "rax (the result)"
g_rbx:  .asciz "rbx"
g_rcx:  .asciz "rcx (the return address)"
g_rdx:  .asciz "rdx"
g_rsi:  .asciz "rsi"
g_rdi:  .asciz "rdi"
g_rbp:  .asciz "rbp"
g_r8:   .asciz "r8"
g_r9:   .asciz "r9"
g_r10:  .asciz "r10"
g_r11:  .asciz "r11 (rflags at the syscall)"
g_r12:  .asciz "r12"
g_r13:  .asciz "r13"
g_r14:  .asciz "r14"
g_r15:  .asciz "r15"
g_rsp:  .asciz "rsp"
g_flags: .asciz "rflags after the call"
g_mxcsr: .asciz "MXCSR"
g_fcw:  .asciz "x87 control word"
fmt_s:  .asciz "%s"
fmt_rz: .asciz "red zone at rsp-%d"
fmt_up: .asciz "stack at rsp+%d"
fmt_k:  .asciz "k%d"
fmt_v:  .asciz "zmm%d bytes %d-%d"
fmt_fail: .asciz "FAILED: %s, call %d (flags kind %d): %s: expected %#lx, got %#lx\n"
msg_ok: .asciz "%s: %d calls, registers, flags, vector state and stack ok\n"

        .bss
        .balign 64
rec_i:  .skip   Q(R_N)
        .balign 64
rec_e:  .skip   Q(R_N)
        .balign 64
rec_a:  .skip   Q(R_N)
callee_saved: .skip 48
pid:    .skip   8
kind:   .skip   4
vmode:  .skip   4

        .section .note.GNU-stack, "", @progbits
