//! The runtime's assembly: the process entry, the signal restorer, and the
//! entry paths of new threads. Each stub is tiny and documented at its label;
//! everything else is Rust.
//!
//! Offsets into `Thread` used here are checked against the struct in
//! `thread.rs` by const assertions.

use core::arch::global_asm;

global_asm!(
    // Process entry. The kernel leaves argc/argv/envp/auxv at %rsp. The main
    // thread's state is claimed first (`strata_rt_stack`), and the start-up
    // runs on its strata stack: the fast path and the signal entries use the
    // same top pages later, so the start-up's deep frames fault in no page
    // of their own, and the program's stack can start right under the
    // kernel's vectors, in the pages the kernel already touched. Then pass
    // the kernel's stack pointer and our ELF header to Rust (strata-rt is
    // linked at a fixed address: there is nothing to relocate, build.rs).
    ".globl _start",
    ".type _start,@function",
    "_start:",
    "    xor %ebp, %ebp",
    "    mov %rsp, %rbx",
    "    and $-16, %rsp",
    "    call strata_rt_stack",
    "    mov %rax, %rsp",
    "    mov %rbx, %rdi",
    "    lea __ehdr_start(%rip), %rsi",
    "    call strata_rt_start",
    "    ud2",
    // Signal restorer for every handler strata installs or builds a frame
    // for. On entry %rsp points at the frame's ucontext. Frames that strata
    // built carry a marker in uc_flags and the program's virtual SIGSYS mask
    // bit in uc_sigmask: move that bit to the thread's state (SIGSYS is never
    // really blocked) before the real rt_sigreturn, which is allowed because
    // it is issued from strata's own text.
    ".globl strata_restorer",
    ".type strata_restorer,@function",
    "strata_restorer:",
    "    testl ${marker}, (%rsp)",
    "    jz 1f",
    "    btrq $30, 296(%rsp)",
    "    setc %gs:{vsigsys}",
    "    andl ${notmarker}, (%rsp)",
    "1:  mov $15, %eax",
    "    syscall",
    "    ud2",
    // strata_sigsys_entry(sig, info, uc): the SIGSYS handler as installed.
    // The kernel put the frame on the current alternate stack, which is the
    // program's when the program set one; that stack may be small (Rust
    // programs use 8 KiB). strata's handler must run on strata's own stack:
    // if we are not on it, move to `handler_sp` (the top of strata's stack,
    // or just below an activation waiting in a blocking call), or below the
    // interrupted program code if that code was itself running on strata's
    // stack (a program handler nested in such a call).
    ".globl strata_sigsys_entry",
    ".type strata_sigsys_entry,@function",
    "strata_sigsys_entry:",
    "    mov %gs:{stack_lo}, %r8",
    "    mov %gs:{stack_hi}, %r9",
    "    cmp %r8, %rsp",
    "    jb 3f",
    "    cmp %r9, %rsp",
    "    jae 3f",
    "    jmp {on_sigsys}",
    "3:  mov %gs:{handler_sp}, %rcx",
    "    mov 160(%rdx), %rax",
    "    cmp %r8, %rax",
    "    jb 4f",
    "    cmp %r9, %rax",
    "    jae 4f",
    "    sub $512, %rax",
    "    cmp %rcx, %rax",
    "    jae 4f",
    "    mov %rax, %rcx",
    "4:  and $-16, %rcx",
    "    mov %rsp, %rax",
    "    mov %rcx, %rsp",
    "    push %rax",
    "    sub $8, %rsp",
    "    call {on_sigsys}",
    "    add $8, %rsp",
    "    pop %rsp",
    "    ret",
    // clone/clone3/vfork for a child that shares our memory.
    // strata_clone_vm(nr, a1, a2, a3, a4, a5, thread) with the 7th argument
    // on the stack. In the child the kernel has switched to the program's new
    // stack (or kept ours for vfork): touch neither, move to the child's own
    // boot stack and enter Rust with its Thread.
    ".globl strata_clone_vm",
    ".type strata_clone_vm,@function",
    "strata_clone_vm:",
    "    push %r12",
    "    mov 16(%rsp), %r12",
    "    mov %rdi, %rax",
    "    mov %rsi, %rdi",
    "    mov %rdx, %rsi",
    "    mov %rcx, %rdx",
    "    mov %r8, %r10",
    "    mov %r9, %r8",
    "    syscall",
    "    test %rax, %rax",
    "    jz 2f",
    "    pop %r12",
    "    ret",
    "2:  mov {boot_sp}(%r12), %rsp",
    "    mov %r12, %rdi",
    "    call strata_thread_boot",
    "    ud2",
    // strata_sigreturn_to(uc): load a prepared frame and let the kernel
    // restore every register, the FPU state, the mask and the alt stack.
    ".globl strata_sigreturn_to",
    ".type strata_sigreturn_to,@function",
    "strata_sigreturn_to:",
    "    mov %rdi, %rsp",
    "    mov $15, %eax",
    "    syscall",
    "    ud2",
    // strata_sigaltstack_offstack(ss, old): sigaltstack with the stack
    // pointer moved off every stack. strata's handler runs on the current
    // alternate stack, and the kernel refuses to change it while the stack
    // pointer is on it. All signals are blocked here and the call touches no
    // user stack, so %rsp may point anywhere for its duration.
    ".globl strata_sigaltstack_offstack",
    ".type strata_sigaltstack_offstack,@function",
    "strata_sigaltstack_offstack:",
    "    mov %rsp, %rdx",
    "    xor %esp, %esp",
    "    mov $131, %eax",
    "    syscall",
    "    mov %rdx, %rsp",
    "    ret",
    // strata_exit_thread(thread, code, nr): mark the thread's state free and
    // exit (nr = exit or exit_group) without touching memory in between (we
    // are running on the stack that the state owns). exit_group frees the
    // state too: a CLONE_VM child shares the pool with its parent. Not a
    // vfork child's: its parent frees it when it resumes (process.rs
    // `clone`); freed here too, another thread of the parent could take it
    // in between, and the parent's release would then free a state in use.
    ".globl strata_exit_thread",
    ".type strata_exit_thread,@function",
    "strata_exit_thread:",
    "    mov %rdx, %rax",
    "    cmpb $0, {vfork}(%rdi)",
    "    jne 1f",
    "    movl $1, {dead}(%rdi)",
    "1:  mov %rsi, %rdi",
    "    syscall",
    "    ud2",
    // strata_enter_program(sp, entry): the program's first instruction, with
    // the registers the kernel's ELF loader leaves (all zero, %rdx = 0: no
    // atexit hook).
    ".globl strata_enter_program",
    ".type strata_enter_program,@function",
    "strata_enter_program:",
    "    mov %rdi, %rsp",
    "    mov %rsi, %r11",
    "    xor %eax, %eax",
    "    xor %ebx, %ebx",
    "    xor %ecx, %ecx",
    "    xor %edx, %edx",
    "    xor %esi, %esi",
    "    xor %edi, %edi",
    "    xor %ebp, %ebp",
    "    xor %r8d, %r8d",
    "    xor %r9d, %r9d",
    "    xor %r10d, %r10d",
    "    xor %r12d, %r12d",
    "    xor %r13d, %r13d",
    "    xor %r14d, %r14d",
    "    xor %r15d, %r15d",
    "    jmp *%r11",
    // Padding so that no syscall instruction is the last bytes of strata's
    // text (Syscall User Dispatch checks the address after the instruction).
    ".globl strata_text_pad",
    "strata_text_pad:",
    "    .fill 16, 1, 0xcc",
    marker = const crate::signals::UC_STRATA_FRAME,
    notmarker = const !crate::signals::UC_STRATA_FRAME,
    vsigsys = const crate::thread::OFF_VSIGSYS,
    boot_sp = const crate::thread::OFF_BOOT_SP,
    dead = const crate::thread::OFF_DEAD,
    vfork = const crate::thread::OFF_VFORK_CHILD,
    stack_lo = const crate::thread::OFF_ALTSTACK,
    stack_hi = const crate::thread::OFF_ALTSTACK_HI,
    handler_sp = const crate::thread::OFF_HANDLER_SP,
    on_sigsys = sym crate::capture::strata_on_sigsys,
    options(att_syntax)
);

extern "C" {
    pub fn strata_restorer();
    pub fn strata_sigsys_entry();
    pub fn strata_clone_vm(
        nr: usize,
        a1: usize,
        a2: usize,
        a3: usize,
        a4: usize,
        a5: usize,
        thread: *mut crate::thread::Thread,
    ) -> isize;
    pub fn strata_sigreturn_to(uc: *mut crate::sys::UContext) -> !;
    pub fn strata_sigaltstack_offstack(ss: *const crate::sys::StackT, old: *mut crate::sys::StackT) -> isize;
    pub fn strata_exit_thread(thread: *mut crate::thread::Thread, code: usize, nr: usize) -> !;
    pub fn strata_enter_program(sp: usize, entry: usize) -> !;
}
