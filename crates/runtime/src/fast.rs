//! The fast path: how a call from a rewritten site reaches strata without a
//! trap, and how signals are kept out of strata while it runs.
//!
//! A rewritten site (rewrite.rs) jumps to a trampoline that runs the
//! replaced instruction, loads `S_ret` (the address after the site's intact
//! `syscall`) into %rcx, as the kernel would, and jumps here:
//!
//! - `strata_native_entry` for a call no layer and no part of strata wants:
//!   issued from strata's text (which dispatch lets through), then straight
//!   back. Nothing is saved; it runs on the program's stack.
//! - `strata_fast_entry` for every other call: switch to the thread's strata
//!   stack, save what the Rust code may clobber (argument registers, flags,
//!   xmm0-15), set the dispatch selector to ALLOW (strata's own calls pass
//!   wherever they are issued), run `strata_fast` (the same extension stack
//!   and bottom as the trap path), and return to S_ret with exactly the
//!   registers a real `syscall` leaves: rax the result, rcx = S_ret, r11 =
//!   rflags, everything else as it was. When nothing of strata runs after
//!   the call (no layer wants it, or only `before` hooks), `strata_fast`
//!   leaves it in the thread state (`fast_issue`) and the entry issues it
//!   after `strata_fast` returned: a return after a `syscall` mispredicts
//!   here.
//!
//! Signals. strata installs its own entry (`strata_sig_entry`) for every
//! signal the program handles and forwards to the program's handler on the
//! kernel's own frame, unchanged, whenever the interrupted code is the
//! program's. While a fast call runs in strata (`Thread::in_fast`), a signal
//! is deferred instead: re-queued to this thread and blocked until the call
//! ends; the call then leaves through the slow exit, a real trap at a
//! `syscall` outside strata's text, whose handler puts the program state at
//! S_ret and unblocks the deferred signals, which the kernel then delivers
//! at the program's own PC as it would have natively. A blocking call the
//! kernel would restart after the handler is restarted at the site's own
//! `syscall`. The few instructions between the end of the call and the
//! return to the program are rolled forward instead (the program state is
//! complete there). Calls that need a real signal frame (temporary signal
//! masks, sigreturn, exit) bail out to the trap path; a clone whose child
//! starts from a copy of the program's state gets one built here
//! (`full_frame`).

use crate::dispatch::kind;
use crate::sys::{self, reg, SigInfo, Sysno, UContext};
use crate::thread::{self, Thread};
use core::arch::global_asm;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use strata_abi::Call;

/// The program's handler per signal (strata's entry is what the kernel has).
pub static ACT_HANDLER: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];
/// The program's flags, mask and restorer per signal, as it set them.
pub static ACT_FLAGS: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];
pub static ACT_MASK: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];
pub static ACT_RESTORER: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];

// The slow exit's `syscall`: in a page of strata-rt's image of its own, after
// its text (runtime/big-bss.ld) and outside the range Syscall User Dispatch
// lets through (image.rs), so that it traps.
core::arch::global_asm!(
    ".pushsection .strata_stub,\"ax\",@progbits",
    ".balign 4096",
    ".globl strata_slow_stub",
    "strata_slow_stub:",
    "    syscall",
    "    ud2",
    ".popsection",
    options(att_syntax)
);

/// `Thread::in_fast` while the trap path waits in a blocking call: signals
/// are deferred as in a fast call, until strata's handler returns.
pub const TRAP_BLOCKING: u8 = 2;

const ALLOW: u8 = sys::SYSCALL_DISPATCH_FILTER_ALLOW;
const BLOCK: u8 = sys::SYSCALL_DISPATCH_FILTER_BLOCK;
/// What the layers see for a call the kernel will restart after a handler.
const ERESTARTSYS: u64 = (-512i64) as u64;
const R11: usize = 3;
const RCX: usize = 14;

global_asm!(
    ".globl strata_windows_start",
    "strata_windows_start:",
    // strata_native_entry: rax = nr, rcx = S_ret, every other register the
    // program's. The `syscall` here is in strata's text: it goes straight to
    // the kernel, which sets rcx and r11 itself; r11 = the program's flags.
    ".globl strata_native_entry",
    "strata_native_entry:",
    "    mov %rcx, %gs:{native_ret}",
    ".globl strata_native_sc",
    "strata_native_sc:",
    "    syscall",
    "    mov %gs:{native_calls}, %rcx",
    "    lea 1(%rcx), %rcx",
    "    mov %rcx, %gs:{native_calls}",
    "    mov %gs:{native_ret}, %rcx",
    "    jmp *%rcx",
    ".globl strata_native_end",
    "strata_native_end:",
    // strata_fast_entry: rax = nr, rcx = S_ret. From the first store on,
    // signals are deferred (`in_fast`); nothing is pushed on the program's
    // stack (red zones stay intact).
    ".globl strata_fast_entry",
    "strata_fast_entry:",
    "    movb $1, %gs:{in_fast}",
    "    mov %rsp, %gs:{prog_rsp}",
    "    mov %gs:{handler_sp}, %rsp",
    "    movb ${allow}, %gs:{selector}",
    "    pushfq",
    "    pop %r11",
    "    and $-16, %rsp",
    "    mov %r11, %gs:{prog_flags}",
    "    mov %rcx, %gs:{sret}",
    "    push %r9",
    "    push %r8",
    "    push %r10",
    "    push %rdx",
    "    push %rsi",
    "    push %rdi",
    "    sub $256, %rsp",
    "    movups %xmm0, 0(%rsp)",
    "    movups %xmm1, 16(%rsp)",
    "    movups %xmm2, 32(%rsp)",
    "    movups %xmm3, 48(%rsp)",
    "    movups %xmm4, 64(%rsp)",
    "    movups %xmm5, 80(%rsp)",
    "    movups %xmm6, 96(%rsp)",
    "    movups %xmm7, 112(%rsp)",
    "    movups %xmm8, 128(%rsp)",
    "    movups %xmm9, 144(%rsp)",
    "    movups %xmm10, 160(%rsp)",
    "    movups %xmm11, 176(%rsp)",
    "    movups %xmm12, 192(%rsp)",
    "    movups %xmm13, 208(%rsp)",
    "    movups %xmm14, 224(%rsp)",
    "    movups %xmm15, 240(%rsp)",
    // clone, vfork, clone3: the child may start from a copy of the whole
    // program state (`full_frame`), callee-saved registers included.
    "    cmp $56, %eax",
    "    je 7f",
    "    cmp $58, %eax",
    "    je 7f",
    "    cmp $435, %eax",
    "    je 7f",
    "8:  lea 256(%rsp), %rdi",
    "    mov %rax, %rsi",
    "    cld",
    "    call {strata_fast}",
    "    cmpb $0, %gs:{fast_issue}",
    "    jne 9f",
    "10: mov %rax, %gs:{result}",
    "    movups 0(%rsp), %xmm0",
    "    movups 16(%rsp), %xmm1",
    "    movups 32(%rsp), %xmm2",
    "    movups 48(%rsp), %xmm3",
    "    movups 64(%rsp), %xmm4",
    "    movups 80(%rsp), %xmm5",
    "    movups 96(%rsp), %xmm6",
    "    movups 112(%rsp), %xmm7",
    "    movups 128(%rsp), %xmm8",
    "    movups 144(%rsp), %xmm9",
    "    movups 160(%rsp), %xmm10",
    "    movups 176(%rsp), %xmm11",
    "    movups 192(%rsp), %xmm12",
    "    movups 208(%rsp), %xmm13",
    "    movups 224(%rsp), %xmm14",
    "    movups 240(%rsp), %xmm15",
    "    add $256, %rsp",
    "    pop %rdi",
    "    pop %rsi",
    "    pop %rdx",
    "    pop %r10",
    "    pop %r8",
    "    pop %r9",
    // A signal before this load is deferred and seen by it; from the next
    // instruction to the end of the window, one is rolled forward.
    "    cmpq $0, %gs:{slow}",
    ".globl strata_fast_window",
    "strata_fast_window:",
    "    jne 2f",
    // The program's flags back without popfq (microcoded, the dearest
    // instruction here): strata's code changes only the arithmetic flags
    // and DF (cld above). DF first; then OF, by adding 0x80000000 to itself
    // or 0 to 0; then SF, ZF, AF, PF and CF from AH with sahf, which leaves
    // OF. rax is free until the result is loaded back (the roll-forward
    // takes it from `result` too). On a CPU without sahf in 64-bit mode
    // the launcher turns rewriting off (cli `flags`), so this never runs.
    "    mov %gs:{prog_flags}, %r11",
    "    bt $10, %r11",
    "    jnc 3f",
    "    std",
    "3:  mov %r11d, %ecx",
    "    and $0x800, %ecx",
    "    shl $20, %ecx",
    "    mov %r11d, %eax",
    "    shl $8, %eax",
    "    add %ecx, %ecx",
    "    sahf",
    "    mov %gs:{result}, %rax",
    "    movb ${block}, %gs:{selector}",
    "    mov %gs:{sret}, %rcx",
    "    mov %gs:{prog_rsp}, %rsp",
    "    movb $0, %gs:{in_fast}",
    ".globl strata_fast_window_end",
    "strata_fast_window_end:",
    "    jmp *%rcx",
    // The slow exit: a trap at a `syscall` outside strata's text; its
    // handler (`roll_forward`) completes the return. Registers are the
    // program's but rax, rcx, r11 and flags, which it sets.
    // On the program's stack: the trap's frame must go where a trap of the
    // program's own would (below its red zone, on its alternate stack when
    // it runs on it).
    "2:  movb ${block}, %gs:{selector}",
    "    mov %gs:{prog_rsp}, %rsp",
    "    mov ${slow_nr}, %eax",
    "    jmp strata_slow_stub",
    // The call as `strata_fast` left it (`fast_issue`), issued here: the
    // program's own call, marked as `issue` marks it (`defer` restarts it
    // from the site if the kernel would restart it after a handler).
    "9:  movb $0, %gs:{fast_issue}",
    "    mov %gs:{issue_nr}, %rax",
    "    mov %gs:{issue_args}, %rdi",
    "    mov %gs:{issue_args}+8, %rsi",
    "    mov %gs:{issue_args}+16, %rdx",
    "    mov %gs:{issue_args}+24, %r10",
    "    mov %gs:{issue_args}+32, %r8",
    "    mov %gs:{issue_args}+40, %r9",
    "    lea 11f(%rip), %rcx",
    "    mov %rcx, %gs:{issue_pc}",
    "    movb $1, %gs:{sc_prog}",
    ".globl strata_fast_issue_sc",
    "strata_fast_issue_sc:",
    "11: syscall",
    "    movb $0, %gs:{sc_prog}",
    "    jmp 10b",
    "7:  mov %rbx, %gs:{callee}",
    "    mov %rbp, %gs:{callee}+8",
    "    mov %r12, %gs:{callee}+16",
    "    mov %r13, %gs:{callee}+24",
    "    mov %r14, %gs:{callee}+32",
    "    mov %r15, %gs:{callee}+40",
    "    jmp 8b",
    // strata_safe_copy(dst, src, n) -> 0, or 1 if the copy faulted: a
    // SIGSEGV or SIGBUS at `strata_safe_copy_insn` resumes at its fault
    // label (`recover_copy`). Used on the fast path to read and write the
    // program's memory without a system call.
    ".globl strata_safe_copy",
    "strata_safe_copy:",
    "    mov %rdx, %rcx",
    ".globl strata_safe_copy_insn",
    "strata_safe_copy_insn:",
    "    rep movsb",
    "    xor %eax, %eax",
    "    ret",
    ".globl strata_safe_copy_fault",
    "strata_safe_copy_fault:",
    "    mov $1, %eax",
    "    ret",
    // strata_sig_entry(sig, info, uc): the real handler of every signal the
    // program handles. Interrupted program code: jump to the program's
    // handler on this very frame (the kernel built it as it would have for
    // the program's own action). Otherwise decide in Rust, on a strata
    // stack, with every signal blocked. The arguments stay in r12-r14 all
    // along (a handler owns every register), so that a signal landing in
    // this code can be forwarded as if it had hit the program's handler
    // (`fixup`).
    ".globl strata_sig_entry",
    "strata_sig_entry:",
    "    mov %rdi, %r12",
    "    mov %rsi, %r13",
    "    mov %rdx, %r14",
    ".globl strata_sig_entry_saved",
    "strata_sig_entry_saved:",
    "    cmpb $0, %gs:{in_fast}",
    "    jne 1f",
    "    mov 168(%rdx), %rax",
    "    lea strata_windows_start(%rip), %r11",
    "    cmp %r11, %rax",
    "    jb 5f",
    "    lea strata_windows_end(%rip), %r11",
    "    cmp %r11, %rax",
    "    jb 1f",
    "5:  cmp STRATA_POOL_LO(%rip), %rax",
    "    jb 3f",
    "    cmp STRATA_POOL_HI(%rip), %rax",
    "    jb 1f",
    "3:  movb $0, %gs:{fault_ok}",
    "    mov %r12, %rdi",
    "    mov %r13, %rsi",
    "    mov %r14, %rdx",
    "    lea {act}(%rip), %r11",
    "    xor %eax, %eax",
    "    jmp *(%r11,%rdi,8)",
    // Block every signal (old mask to r15), move to a strata stack.
    "1:  sub $16, %rsp",
    "    movq $-1, (%rsp)",
    "    mov $14, %eax",
    "    mov $2, %edi",
    "    mov %rsp, %rsi",
    "    lea 8(%rsp), %rdx",
    "    mov $8, %r10d",
    "    syscall",
    "    mov 8(%rsp), %r15",
    "    add $16, %rsp",
    "    mov %gs:{stack_lo}, %r8",
    "    mov %gs:{stack_hi}, %r9",
    "    mov %rsp, %rcx",
    "    cmp %r8, %rsp",
    "    jb 4f",
    "    cmp %r9, %rsp",
    "    jb 6f",
    "4:  mov %gs:{handler_sp}, %rcx",
    "    mov 160(%r14), %rax",
    "    cmp %r8, %rax",
    "    jb 6f",
    "    cmp %r9, %rax",
    "    jae 6f",
    "    sub $512, %rax",
    "    cmp %rcx, %rax",
    "    jae 6f",
    "    mov %rax, %rcx",
    "6:  and $-16, %rcx",
    "    mov %rsp, %rax",
    "    mov %rcx, %rsp",
    "    push %rax",
    "    push %r15",
    "    mov %r12, %rdi",
    "    mov %r13, %rsi",
    "    mov %r14, %rdx",
    "    call {on_signal}",
    "    pop %r15",
    "    pop %rsp",
    // Forward: the handler's mask back, then the program's handler.
    "    push %r15",
    "    mov $14, %eax",
    "    mov $2, %edi",
    "    mov %rsp, %rsi",
    "    xor %edx, %edx",
    "    mov $8, %r10d",
    "    syscall",
    "    add $8, %rsp",
    "    jmp 3b",
    ".globl strata_sig_entry_end",
    "strata_sig_entry_end:",
    ".globl strata_windows_end",
    "strata_windows_end:",
    in_fast = const thread::OFF_IN_FAST,
    fault_ok = const thread::OFF_FAULT_OK,
    native_ret = const thread::OFF_NATIVE_RET,
    native_calls = const thread::OFF_NATIVE_CALLS,
    prog_rsp = const thread::OFF_PROG_RSP,
    callee = const thread::OFF_PROG_CALLEE,
    prog_flags = const thread::OFF_PROG_FLAGS,
    handler_sp = const thread::OFF_HANDLER_SP,
    selector = const thread::OFF_SELECTOR,
    slow_nr = const crate::seccomp::SLOW_EXIT_NR,
    sret = const thread::OFF_SRET,
    result = const thread::OFF_FAST_RESULT,
    fast_issue = const thread::OFF_FAST_ISSUE,
    issue_nr = const thread::OFF_ISSUE_NR,
    issue_args = const thread::OFF_ISSUE_ARGS,
    issue_pc = const thread::OFF_ISSUE_PC,
    sc_prog = const thread::OFF_FAST_SC_PROG,
    slow = const thread::OFF_FAST_SLOW,
    stack_lo = const thread::OFF_ALTSTACK,
    stack_hi = const thread::OFF_ALTSTACK_HI,
    allow = const ALLOW,
    block = const BLOCK,
    act = sym ACT_HANDLER,
    strata_fast = sym strata_fast,
    on_signal = sym strata_on_signal,
    options(att_syntax)
);

extern "C" {
    pub fn strata_native_entry();
    fn strata_native_sc();
    fn strata_native_end();
    pub fn strata_fast_entry();
    fn strata_fast_window();
    fn strata_fast_window_end();
    pub fn strata_safe_copy(dst: *mut u8, src: *const u8, n: usize) -> u64;
    fn strata_safe_copy_insn();
    fn strata_safe_copy_fault();
    pub fn strata_sig_entry();
    fn strata_sig_entry_saved();
    fn strata_sig_entry_end();
    pub fn strata_slow_stub();
}

fn addr(f: unsafe extern "C" fn()) -> u64 {
    f as usize as u64
}

/// Calls that need the trap path's real signal frame (those that change the
/// program's control flow, `dispatch::owns_control_flow`), or that install a
/// temporary mask: never served on the fast path. Exceptions, whose
/// sites are rewritten: ppoll, pselect6 and epoll_pwait(2) without a mask
/// (decided per call, `fast_needs_frame`); fork, clone, clone3 and vfork
/// (a fork's child is a copy of this very call and returns through it as
/// the parent does; a thread or vfork child starts from the frame
/// `full_frame` builds); execve/execveat (the image is replaced; a failed
/// one returns like any call; a signal deferred while strata prepares it
/// stays pending for the new image, which gets the program's mask through
/// its launch configuration rather than the blocked one it execs with:
/// tests/programs/exec_signal_race.c); exit and exit_group (they never
/// return). A fork onto a new stack is sent to the trap path
/// (`fast_needs_frame`).
#[inline(always)]
pub fn needs_frame(nr: usize) -> bool {
    nr < crate::stack::NRS && crate::dispatch::kind(nr) & crate::dispatch::kind::FRAME != 0
}

/// `needs_frame`, at compile time (`dispatch::kind`'s table).
pub const fn needs_frame_const(nr: usize) -> bool {
    let no_frame = [
        Sysno::fork,
        Sysno::vfork,
        Sysno::clone,
        Sysno::clone3,
        Sysno::execve,
        Sysno::execveat,
        Sysno::exit,
        Sysno::exit_group,
    ];
    let mut i = 0;
    while i < no_frame.len() {
        if no_frame[i] as usize == nr {
            return false;
        }
        i += 1;
    }
    if crate::dispatch::temporary_mask_arg(nr).is_some() {
        return false;
    }
    // What owns the control flow (dispatch::owns_control_flow) and is not
    // above, and the calls that read or set the frame's mask or stack.
    let frame = [
        Sysno::rt_sigreturn,
        Sysno::rt_sigsuspend,
        Sysno::rt_sigtimedwait,
        Sysno::sigaltstack,
        Sysno::signalfd,
        Sysno::signalfd4,
    ];
    let mut i = 0;
    while i < frame.len() {
        if frame[i] as usize == nr {
            return true;
        }
        i += 1;
    }
    false
}

/// The Rust half of `strata_fast_entry`: runs call `nr` with the arguments
/// the entry saved, returns its result.
///
/// # Safety
/// Called only by `strata_fast_entry`, with `args` pointing at the six saved
/// argument registers.
unsafe extern "C" fn strata_fast(args: *const u64, nr: usize) -> u64 {
    let t = thread::current();
    t.fast_nr = nr as u64;
    let k = crate::dispatch::kind(nr);
    // What most calls need not look at, in one test of `k`.
    let mut clone = None;
    if k & (kind::FRAME | kind::TMASK | kind::CLONE) != 0 {
        // SAFETY: per contract, `args` is the six saved argument registers.
        clone = unsafe { clone_kind(nr, args) };
        // SAFETY: as above.
        if unsafe { fast_needs_frame(nr, k, args, clone) } {
            t.fast_bail = 1;
            t.fast_slow = 1;
            return 0;
        }
    }
    if t.prog_sud.mode != 0 || on_program_altstack(t) {
        t.fast_bail = 1;
        t.fast_slow = 1;
        return 0;
    }
    if let Some((vm, _)) = clone {
        t.fast_full = 0;
        let uc = &mut t.fast_uc as *mut UContext;
        // SAFETY: `fast_uc` is this thread's (see below); the entry saved
        // `prog_callee` for this call.
        if vm && !unsafe { full_frame(t, args, nr, &mut *uc) } {
            t.fast_bail = 1;
            t.fast_slow = 1;
            return 0;
        }
    }
    t.fast_calls += 1;
    // The arguments are read one register at a time: the entry pushed them
    // one by one, and a wider load of two fresh 8-byte stores (a copy of the
    // array) cannot be forwarded from them; it waits for both to reach the
    // cache.
    // SAFETY: per contract, six u64 in a row (rdi, rsi, rdx, r10, r8, r9).
    let arg = |i: usize| unsafe { core::ptr::read_volatile(args.add(i)) };
    let first = crate::stack::first(nr);
    // (A call the bottom owns but would only re-issue, no layer wanting it,
    // is issued the same way.)
    if (k & (kind::BOTTOM | kind::MASKING) == 0 && crate::stack::before_only(nr))
        || (k & kind::MASKING == 0 && first == crate::stack::NO_LAYER && crate::dispatch::bottom_passes(nr, arg))
    {
        // Nothing of strata runs after this call (nobody wants it, or only
        // `before` hooks, which may serve it): the entry issues it, so that
        // no return from a function entered before it follows the
        // `syscall` (returns after a syscall mispredict on some machines,
        // 7 to 9 ns each here: bench/rsb_depth.c in
        // bench/results/2026-11-23-fastpath-3.md).
        t.issue_nr = nr as u64;
        if first == crate::stack::NO_LAYER {
            for (i, v) in t.issue_args.iter_mut().enumerate() {
                *v = arg(i);
            }
        } else {
            let mut c = Call::undecoded(nr as u32, t.pid as u32, t.tid as u32);
            fill_view(&mut c, arg);
            let uc = &mut t.fast_uc as *mut UContext;
            // SAFETY: `fast_uc` is this thread's, and only this activation
            // uses it (see below).
            let r = crate::stack::run_befores(t, unsafe { &mut *uc }, first, &mut c);
            if r != strata_abi::CONTINUE {
                return r as u64;
            }
            let t = thread::current();
            t.issue_nr = u64::from(c.nr);
            t.issue_args = c.args;
        }
        thread::current().fast_issue = 1;
        return 0;
    }
    let uc = &mut t.fast_uc as *mut UContext;
    // SAFETY: `fast_uc` lives in the thread state; only this activation uses
    // it (fast calls never nest: signals are deferred meanwhile).
    let uc = unsafe { &mut *uc };
    // rt_sigprocmask edits the stand-in frame's mask; execve hands that mask
    // to the new image (and, failing, returns here): the real mask is put
    // back after both.
    let masking = k & kind::MASKING != 0;
    if masking {
        uc.sigmask = program_mask(t);
    }
    // `dispatch::syscall`, with the layers' view of the call written in
    // place (numbers past the table have bailed, and rt_sigreturn with
    // them).
    let t = thread::current();
    let ret = if first == crate::stack::NO_LAYER {
        crate::dispatch::bottom(t, uc, nr, core::array::from_fn(arg)).map(|r| r as i64)
    } else {
        let mut c = Call::undecoded(nr as u32, t.pid as u32, t.tid as u32);
        fill_view(&mut c, arg);
        crate::stack::run_call(t, uc, first, &mut c)
    };
    if let Some(r) = ret {
        uc.gregs[reg::RAX] = r as u64;
    }
    if masking {
        let t = thread::current();
        set_mask(t, uc.sigmask);
        if t.vsigsys_pending != 0 && t.vsigsys_blocked == 0 {
            // A SIGSYS strata holds is unblocked: the slow exit delivers it.
            t.fast_slow = 1;
        }
    }
    uc.gregs[reg::RAX]
}

/// Completes the layers' view `c` in place: its arguments from `arg`, one
/// register at a time (see `strata_fast`), then decoded. (In place: a
/// `Call` returned by value is copied whole, and stalls as the arguments
/// would.)
#[inline(always)]
fn fill_view(c: &mut Call, arg: impl Fn(usize) -> u64) {
    for (i, v) in c.args.iter_mut().enumerate() {
        *v = arg(i);
    }
    c.decode();
}

/// `needs_frame`, with the arguments (`k`: the call's `dispatch::kind`;
/// `clone`: its `clone_kind`): a `clone` that makes a thread or a
/// vfork child (CLONE_VM), or gives the child a new stack, starts the child
/// from a copy of the program's frame, which only the trap path has; a
/// ppoll, pselect6 or epoll_pwait(2) that installs a mask needs the frame's
/// mask (without one, it waits on the fast path).
///
/// # Safety
/// `args` points at the six saved argument registers.
unsafe fn fast_needs_frame(nr: usize, k: u8, args: *const u64, clone: Option<(bool, bool)>) -> bool {
    if let Some((vm, stack)) = clone {
        // A fork goes as it is; a child that starts from a copy of the
        // program's state gets one built here (`full_frame`), unless it
        // would not share our memory (a fork onto a new stack).
        return !vm && stack;
    }
    if let Some(i) = crate::dispatch::temporary_mask_arg(nr) {
        // Without a mask to install, a wait like any other.
        // SAFETY: per contract, i < 6.
        return unsafe { *args.add(i) } != 0;
    }
    // (Numbers past the table have FRAME.)
    k & kind::FRAME != 0
}

/// For clone, clone3 and vfork: (CLONE_VM, a new stack for the child). None
/// for any other call, or a clone3 whose arguments cannot be read (the
/// kernel's EFAULT or EINVAL is for the trap path to return).
///
/// # Safety
/// `args` points at the six saved argument registers.
unsafe fn clone_kind(nr: usize, args: *const u64) -> Option<(bool, bool)> {
    // SAFETY: per contract.
    let a = |i: usize| unsafe { *args.add(i) };
    if nr == Sysno::clone as usize {
        Some((a(0) & sys::CLONE_VM != 0, a(1) != 0))
    } else if nr == Sysno::vfork as usize {
        Some((true, false))
    } else if nr == Sysno::clone3 as usize {
        // struct clone_args: flags at 0, stack at 40.
        let ca = sys::read_user::<[u64; 6]>(a(0) as usize).ok().filter(|_| a(1) >= 64)?;
        Some((ca[0] & sys::CLONE_VM != 0, ca[5] != 0))
    } else {
        None
    }
}

/// The byte offset, in a thread's boot area, of the FPU state of the frame a
/// new thread starts from (below it, the frame itself).
pub const BOOT_FP_OFF: usize = 1024;
const FP_XSTATE_MAGIC1: u32 = 0x4650_5853;
const FP_XSTATE_MAGIC2: u32 = 0x4650_5845;
const UC_FP_XSTATE: u64 = 1;
const UC_SIGCONTEXT_SS: u64 = 2;
const UC_STRICT_RESTORE_SS: u64 = 4;
/// %cs and %ss of 64-bit user mode, in the frame's csgsfs word.
const USER_CS_SS: u64 = 0x33 | 0x2b << 48;

/// Puts in `uc` the whole program state at a fast call's `syscall`, as the
/// kernel's signal frame for a trap there would hold it: every register as
/// the program left it (the argument registers and xmm0-15 from the entry's
/// save area, rbx, rbp, r12-r15 from `prog_callee`, the rest still live:
/// strata's code uses no other vector state), rax = nr, rcx and r11 as the
/// kernel sets them, the program's mask, and the FPU and vector state
/// (xsave, in the kernel's frame format) in this thread's boot area, unused
/// once the thread has started. For a clone whose child starts from a copy
/// of it (`process::clone`). False if the state does not fit there.
///
/// # Safety
/// Called from `strata_fast` for one of the calls the entry saved
/// `prog_callee` for; `args` as `strata_fast`'s.
unsafe fn full_frame(t: &mut Thread, args: *const u64, nr: usize, uc: &mut UContext) -> bool {
    let size = xsave_size();
    if !(576..=crate::thread::BOOT_SIZE - BOOT_FP_OFF - 4).contains(&size) {
        return false;
    }
    let fp = t.boot_frame + BOOT_FP_OFF;
    let (lo, hi): (u32, u32);
    // SAFETY: xgetbv(0) reads XCR0.
    unsafe { core::arch::asm!("xgetbv", in("ecx") 0, out("eax") lo, out("edx") hi, options(nomem, nostack)) };
    // SAFETY: [fp, fp + size + 4) lies in this thread's boot area (checked
    // above), 64-byte aligned, which nothing uses after the thread started;
    // the header must be zero but for what xsave writes.
    unsafe {
        core::ptr::write_bytes((fp + 512) as *mut u8, 0, 64);
        core::arch::asm!("xsave64 [{p}]", p = in(reg) fp, in("eax") lo, in("edx") hi, options(nostack));
        // xmm0-15 as the program left them (strata's code has used them).
        core::ptr::copy_nonoverlapping((args as *const u8).sub(256), (fp + 160) as *mut u8, 256);
        let sw = (fp + 464) as *mut u32;
        sw.write(FP_XSTATE_MAGIC1);
        sw.add(1).write(size as u32 + 4);
        (sw.add(2) as *mut u64).write_unaligned(u64::from(hi) << 32 | u64::from(lo));
        sw.add(4).write(size as u32);
        core::ptr::write_bytes(sw.add(5), 0, 7);
        ((fp + size) as *mut u32).write_unaligned(FP_XSTATE_MAGIC2);
    }
    // SAFETY: per contract, six u64: rdi, rsi, rdx, r10, r8, r9.
    let a = unsafe { core::ptr::read(args as *const [u64; 6]) };
    let [rbx, rbp, r12, r13, r14, r15] = t.prog_callee;
    let sret = t.sret as u64;
    uc.gregs = [
        a[4],
        a[5],
        a[3],
        t.prog_flags,
        r12,
        r13,
        r14,
        r15,
        a[0],
        a[1],
        rbp,
        rbx,
        a[2],
        nr as u64,
        sret,
        t.prog_rsp as u64,
        sret,
        t.prog_flags,
        USER_CS_SS,
        0,
        0,
        0,
        0,
    ];
    uc.flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
    uc.link = 0;
    uc.fpstate = fp as u64;
    uc.sigmask = program_mask(t);
    t.fast_full = 1;
    true
}

/// The size of the xsave area for the features XCR0 enables: cpuid leaf 0xd
/// (it exists where xsave does; the kernel's own frames use it), asked once
/// per image and kept, since a cpuid leaves the guest under a hypervisor
/// (about 3.5 µs here, bench/op_cost.c; at every posix_spawn otherwise). XCR0 does not change
/// for the life of a process.
fn xsave_size() -> usize {
    static SIZE: AtomicU32 = AtomicU32::new(0);
    match SIZE.load(Ordering::Relaxed) {
        0 => {
            let size = core::arch::x86_64::__cpuid_count(0xd, 0).ebx;
            SIZE.store(size, Ordering::Relaxed);
            size as usize
        }
        size => size as usize,
    }
}

/// The program's signal mask during a fast call: the real one, but for the
/// signals strata deferred (blocked until the call ends).
fn program_mask(t: &Thread) -> u64 {
    sys::sigmask() & !t.deferred
}

/// The thread's mask will be `mask`: whether faults are deliverable.
pub fn note_mask(t: &mut Thread, mask: u64) {
    let faults = (1u64 << (7 - 1)) | (1 << (11 - 1));
    t.fault_ok = if mask & faults == 0 { 1 } else { 2 };
}

/// Makes `mask` the program's signal mask during a fast call (sigprocmask
/// edits the stand-in frame's mask; here it becomes real at once, as the
/// kernel's would). Signals strata deferred stay blocked until the call
/// ends, unless the program now blocks them itself: then they stay pending,
/// blocked, as natively.
fn set_mask(t: &mut Thread, mask: u64) {
    t.deferred &= !mask;
    requeue_saved(t, mask);
    sys::set_sigmask(mask | t.deferred);
    note_mask(t, mask | t.deferred);
}

/// Is the program running on its own alternate signal stack (in a handler)?
/// Its calls then take the trap path: while strata runs on its own stack,
/// the kernel would put the frame of a signal for an SA_ONSTACK handler at
/// the top of that alternate stack, over the running handler.
fn on_program_altstack(t: &Thread) -> bool {
    let alt = t.real_alt;
    alt.flags & sys::SS_DISABLE == 0
        && alt.sp != t.altstack as u64
        && (t.prog_rsp as u64).wrapping_sub(alt.sp) <= alt.size
}

/// Re-issues the program's call in fast mode: no mask juggling (the mask is
/// the program's all along), by `issue`.
///
/// Always inlined, as is the stack's way down to it (`stack::bottom`): on
/// this kind of machine every return after a system call mispredicts (the
/// return stack buffer does not survive the kernel entry; bench/rsb_depth.c:
/// ~10 ns per return level), so each function between `strata_fast` and the
/// `syscall` costs that much on every call.
#[inline(always)]
pub fn passthrough(t: &mut Thread, nr: usize, a: [u64; 6]) -> isize {
    issue(t, nr, a, t.ext_call == 0)
}

/// `passthrough` for a call that is the program's (`prog`) or an
/// extension's own.
/// The `syscall` is inline (no function of its own to return from); a
/// signal handler tells that the kernel stopped this call to restart it by
/// `fast_sc_prog` and a `syscall` at the interrupted PC (`at_issued_call`).
#[inline(always)]
pub fn issue(t: &mut Thread, nr: usize, a: [u64; 6], prog: bool) -> isize {
    t.fast_sc_prog = u8::from(prog);
    let pc: *mut u64 = &mut t.issue_pc;
    let r: isize;
    // SAFETY: the program's own call (or an extension's), as made; the
    // kernel clobbers rcx and r11 only. The store before it writes this
    // thread's `issue_pc` through a pointer to it.
    unsafe {
        core::arch::asm!(
            "lea {tmp}, [rip + 2f]",
            "mov [{pc}], {tmp}",
            "2:",
            "syscall",
            pc = in(reg) pc,
            tmp = out(reg) _,
            inlateout("rax") nr as isize => r,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            in("r8") a[4],
            in("r9") a[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        )
    };
    thread::current().fast_sc_prog = 0;
    r
}

/// Whether `pc` is the `syscall` that `issue` runs (its address, which
/// `issue` records just before it). Not any `syscall` of strata's text: a
/// signal can arrive on the way back from the issued call (the program's
/// kill of itself), and another during that signal's handling, at one of
/// strata's own calls; taken for a restart of the issued call, it restarted
/// the program's call with strata's own call number (kill became
/// rt_sigprocmask and failed with EINVAL: CPython's
/// test_stress_delivery_simultaneous under a layer, now and then).
fn at_issued_call(t: &Thread, pc: u64) -> bool {
    pc == t.issue_pc && crate::image::in_text(pc as usize)
}

/// Completes a fast call's return into `uc`, which interrupted its last
/// instructions or trapped at the slow exit: the program state at S_ret
/// (or at the site's `syscall` for a restart or bail), deferred signals
/// unblocked.
pub fn roll_forward(t: &mut Thread, uc: &mut UContext) {
    let g = &mut uc.gregs;
    let sret = t.sret as u64;
    if t.fast_restart != 0 {
        g[reg::RIP] = sret - 2;
        g[reg::RAX] = t.restart_nr;
    } else if t.fast_bail != 0 {
        g[reg::RIP] = sret - 2;
        g[reg::RAX] = t.fast_nr;
    } else {
        g[reg::RIP] = sret;
        g[reg::RAX] = t.fast_result;
    }
    g[RCX] = sret;
    g[R11] = t.prog_flags;
    g[reg::EFL] = t.prog_flags;
    g[reg::RSP] = t.prog_rsp as u64;
    uc.sigmask &= !t.deferred;
    t.deferred = 0;
    t.fast_slow = 0;
    t.fast_restart = 0;
    t.fast_bail = 0;
    t.in_fast = 0;
    t.selector = BLOCK;
    deliver_saved(t, uc);
    t.fault_ok = 0;
}

/// Is this SIGSYS the slow exit's trap? Then completes the return.
pub fn slow_exit(t: &mut Thread, uc: &mut UContext) -> bool {
    if t.in_fast == 0 || uc.gregs[reg::RIP] != addr(strata_slow_stub) + 2 {
        return false;
    }
    roll_forward(t, uc);
    true
}

/// Is `pc` in the last instructions of a fast call (after its deferred
/// check)? A signal there is handled by rolling forward.
pub fn in_exit_window(pc: u64) -> bool {
    (addr(strata_fast_window)..addr(strata_fast_window_end)).contains(&pc)
}

/// A signal for the program arrived while strata's code ran a fast call
/// (`sig_entry`, or the fault guard for a signal sent to it): hold it until
/// the call ends. Returns false if this is not the case.
pub fn defer(t: &mut Thread, sig: usize, uc: &mut UContext) -> bool {
    if t.in_fast == 0 {
        return false;
    }
    if t.fast_sc_prog != 0 && at_issued_call(t, uc.gregs[reg::RIP]) {
        // The kernel rewound the program's call to restart it after the
        // handler: end it here, and restart it from the site.
        t.restart_nr = uc.gregs[reg::RAX];
        t.fast_restart = 1;
        uc.gregs[reg::RIP] += 2;
        uc.gregs[reg::RAX] = ERESTARTSYS;
    }
    let bit = 1u64 << (sig - 1);
    uc.sigmask |= bit;
    t.deferred |= bit;
    t.fast_slow = 1;
    t.fault_ok = 0;
    true
}

/// A deferred real-time signal: kept here and delivered by strata at the
/// end of the call (`deliver_saved`), ahead of later instances the kernel
/// still holds, which a re-sent one would queue behind. False if every
/// slot is taken (it is then re-sent).
pub fn save_rt(t: &mut Thread, sig: usize, info: &SigInfo) -> bool {
    if sig < 32 {
        return false;
    }
    match t.saved_rt.iter_mut().find(|s| s.signo == 0) {
        Some(slot) => {
            *slot = *info;
            slot.signo = sig as i32;
            true
        }
        None => false,
    }
}

/// Delivers the real-time signals `save_rt` kept into `uc`, a program
/// state (the highest number first, so the lowest one's handler runs
/// first, as the kernel orders them).
pub fn deliver_saved(t: &mut Thread, uc: &mut UContext) {
    while let Some(i) = (0..t.saved_rt.len())
        .filter(|&i| t.saved_rt[i].signo != 0)
        .max_by_key(|&i| t.saved_rt[i].signo)
    {
        let info = t.saved_rt[i];
        t.saved_rt[i].signo = 0;
        let sig = info.signo as usize;
        let act = crate::sys::KSigaction {
            handler: ACT_HANDLER[sig].load(Ordering::Relaxed),
            flags: ACT_FLAGS[sig].load(Ordering::Relaxed),
            restorer: ACT_RESTORER[sig].load(Ordering::Relaxed),
            mask: ACT_MASK[sig].load(Ordering::Relaxed),
        };
        crate::signals::deliver(t, uc, &info, &act);
    }
}

/// The real-time signals in `which` that `save_rt` kept in this thread's
/// state go back to the kernel, where they stay pending while blocked: the
/// program now blocks them itself (`set_mask`), or the image is about to be
/// replaced (every one, for the new image, as natively).
pub fn requeue_saved(t: &mut Thread, which: u64) {
    for i in 0..t.saved_rt.len() {
        let sig = t.saved_rt[i].signo as usize;
        if sig != 0 && which & (1 << (sig - 1)) != 0 {
            let info = t.saved_rt[i];
            t.saved_rt[i].signo = 0;
            requeue(sig, &info);
        }
    }
}

/// Sends `sig` with `info` to this thread again (it stays pending while
/// blocked, and is delivered by the kernel when the program state is back).
pub fn requeue(sig: usize, info: &SigInfo) {
    if ACT_FLAGS[sig].load(Ordering::Relaxed) & sys::SA_RESETHAND != 0 {
        // The kernel reset the action when it delivered this one.
        crate::signals::reinstall_entry(sig);
    }
    let (pid, tid) = (sys::getpid(), thread::current().tid);
    let queue = |i: &SigInfo| {
        // SAFETY: queueing a signal to our own thread from a siginfo.
        unsafe { sys::sc(Sysno::rt_tgsigqueueinfo, &[pid, tid, sig, i as *const SigInfo as usize]) };
    };
    if sig < 32 {
        // Standard signals do not queue: one pending instance is all.
        queue(info);
        return;
    }
    // Real-time signals queue in order: later instances already pending
    // must stay behind this one. Take them out (every signal is blocked
    // here), queue this one, then them again.
    const MAX: usize = 1 << 14;
    let bytes = MAX * core::mem::size_of::<SigInfo>();
    let Some(buf) = sys::mmap_anon(bytes, sys::PROT_READ | sys::PROT_WRITE) else {
        queue(info);
        return;
    };
    let set: u64 = 1 << (sig - 1);
    let zero = [0u64; 2];
    let mut n = 0;
    while n < MAX {
        let slot = buf + n * core::mem::size_of::<SigInfo>();
        // SAFETY: dequeues one pending instance into our buffer, no wait.
        let r = unsafe {
            sys::sc(
                Sysno::rt_sigtimedwait,
                &[&set as *const u64 as usize, slot, zero.as_ptr() as usize, 8],
            )
        };
        if r != sig as isize {
            break;
        }
        n += 1;
    }
    queue(info);
    for k in 0..n {
        // SAFETY: slot k was filled by the kernel above.
        queue(unsafe { &*((buf + k * core::mem::size_of::<SigInfo>()) as *const SigInfo) });
    }
    // SAFETY: our scratch mapping.
    unsafe { sys::sc(Sysno::munmap, &[buf, bytes]) };
}

/// A fault in `strata_safe_copy`: make it return 1. True if it was one.
pub fn recover_copy(sig: usize, uc: &mut UContext) -> bool {
    if matches!(sig, 7 | 11) && uc.gregs[reg::RIP] == addr(strata_safe_copy_insn) {
        uc.gregs[reg::RIP] = addr(strata_safe_copy_fault);
        return true;
    }
    false
}

/// Whether the program's memory may be copied directly here: in a fast
/// call, with SIGSEGV and SIGBUS deliverable (a fault while they are blocked
/// would kill the process). `Thread::fault_ok` caches the answer; every
/// place where the mask changes sets or clears it (`note_mask`, and the
/// forwarding of a handler, which the kernel runs with its own mask).
pub fn direct_copy_ok() -> bool {
    let Some(t) = thread::try_current() else {
        return false;
    };
    if t.in_fast != 1 || !crate::signals::faults_recoverable() {
        return false;
    }
    if t.fault_ok == 0 {
        // Not known since the mask last changed: ask once.
        let faults = (1 << (7 - 1)) | (1 << (11 - 1));
        t.fault_ok = if sys::sigmask() & faults == 0 { 1 } else { 2 };
    }
    t.fault_ok == 1
}

const R12: usize = 4;
const R13: usize = 5;
const R14: usize = 6;

/// Outside fast mode, makes the interrupted state `uc` a program state if
/// it is one of strata's short sequences that stand for one: a native call,
/// the first or last instruction of a fast call, a trampoline, or the entry
/// of another signal on its way to the program's handler.
pub fn fixup(t: &Thread, uc: &mut UContext) {
    let g = &mut uc.gregs;
    let pc = g[reg::RIP];
    if (addr(strata_sig_entry)..addr(strata_sig_entry_end)).contains(&pc) {
        // Another signal was being forwarded: natively this one would have
        // interrupted that one's handler at its first instruction.
        let (sig, info, auc) = if pc < addr(strata_sig_entry_saved) {
            (g[reg::RDI], g[reg::RSI], g[reg::RDX])
        } else {
            (g[R12], g[R13], g[R14])
        };
        // SAFETY: `auc` is the frame the kernel built for that signal
        // (strata_sig_entry keeps its address in rdx, then r14).
        fixup(t, unsafe { &mut *(auc as *mut UContext) });
        g[reg::RIP] = ACT_HANDLER[(sig as usize).min(64)].load(Ordering::Relaxed);
        g[reg::RDI] = sig;
        g[reg::RSI] = info;
        g[reg::RDX] = auc;
        g[reg::RSP] = auc - 8;
        g[reg::RAX] = 0;
    } else if (addr(strata_native_entry)..addr(strata_native_end)).contains(&pc) {
        // A native call: at the site's `syscall` (not issued yet, or to be
        // restarted: rax holds the number) or at S_ret (done).
        if pc == addr(strata_native_entry) {
            g[reg::RIP] = g[RCX] - 2;
        } else if pc == addr(strata_native_sc) {
            g[reg::RIP] = t.native_ret as u64 - 2;
        } else {
            g[reg::RIP] = t.native_ret as u64;
            g[RCX] = t.native_ret as u64;
        }
    } else if pc == addr(strata_fast_entry) {
        // Nothing done yet: at the site's `syscall`.
        g[reg::RIP] = g[RCX] - 2;
    } else if pc == addr(strata_fast_window_end) {
        g[reg::RIP] = g[RCX];
    } else if let Some(at) = crate::rewrite::trampoline_at(pc) {
        // The replaced instructions run in the trampoline one for one: the
        // program is at the next one not yet run (or at the `syscall`).
        g[reg::RIP] = at;
    }
}

/// The Rust half of `strata_sig_entry`, for a signal that did not interrupt
/// plain program code. Returns 0 to forward to the program's handler on the
/// kernel's frame (after fixing up `uc`), or never returns (sigreturn).
///
/// # Safety
/// Called by `strata_sig_entry` only, with the kernel's arguments.
unsafe extern "C" fn strata_on_signal(sig: usize, info: *mut SigInfo, uc: *mut UContext) -> u64 {
    let t = thread::current();
    // SAFETY: the kernel passes valid pointers into the signal frame.
    let (info, uc) = unsafe { (&*info, &mut *uc) };
    let pc = uc.gregs[reg::RIP];
    if info.code > 0 && recover_copy(sig, uc) {
        // SAFETY: `uc` now resumes at the copy's failure return.
        unsafe { crate::asm::strata_sigreturn_to(uc) }
    }
    if t.in_fast == 0 {
        fixup(t, uc);
        return 0;
    }
    if t.in_fast != 0 && in_exit_window(pc) {
        roll_forward(t, uc);
        requeue(sig, info);
        // SAFETY: `uc` is the complete program state.
        unsafe { crate::asm::strata_sigreturn_to(uc) }
    }
    if t.in_fast != 0 {
        let fault = matches!(sig, 4 | 7 | 8 | 11) && info.code > 0 && info.code != 0x80;
        if fault {
            if crate::stack::in_layer() {
                crate::stack::fault(sig as i32, info.f0, pc);
            }
            // strata's own fault: the program's handler sees it, as before.
            return 0;
        }
        defer(t, sig, uc);
        if !save_rt(t, sig, info) {
            requeue(sig, info);
        }
        // SAFETY: returns to the interrupted strata code with the signal
        // blocked.
        unsafe { crate::asm::strata_sigreturn_to(uc) }
    }
    0
}
