//! Signal virtualization.
//!
//! The rules (see ARCHITECTURE.md, "Signals"):
//! - SIGSYS belongs to strata. The program's SIGSYS action, its SIGSYS mask
//!   bit and a pending SIGSYS are kept here and delivered by strata.
//! - Every other signal is the kernel's business: the program's action is
//!   installed as is, so the kernel builds the same frame on the same stack
//!   and returns to the program's own restorer, as natively. That restorer's
//!   rt_sigreturn traps like any call; `sigreturn` performs it.
//! - Inside strata's SIGSYS handler every signal is blocked. A call that may
//!   block runs with the program's own mask (`passthrough` in dispatch.rs), so
//!   signals interrupt it exactly as they would the program.
//! - The program's mask and alternate stack are changed by editing the
//!   ucontext that strata's handler returns through: rt_sigreturn then applies
//!   them atomically, as the kernel would at the end of the syscall.

use crate::fast;
use crate::sys::{self, reg, KSigaction, RtSigframe, SigInfo, StackT, Sysno, UContext};
use crate::thread::{self, Thread};
use core::sync::atomic::{AtomicU64, Ordering};

/// Marker in uc_flags of frames strata built (checked by `strata_restorer`).
pub const UC_STRATA_FRAME: u32 = 1 << 30;

/// The program's SIGSYS action (handler, flags, restorer, mask).
static VSYS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

fn vsys() -> KSigaction {
    KSigaction {
        handler: VSYS[0].load(Ordering::Acquire),
        flags: VSYS[1].load(Ordering::Acquire),
        restorer: VSYS[2].load(Ordering::Acquire),
        mask: VSYS[3].load(Ordering::Acquire),
    }
}

/// Whether the program's SIGSYS is ignored (what an exec keeps).
pub fn sigsys_ignored() -> bool {
    VSYS[0].load(Ordering::Acquire) == sys::SIG_IGN
}

fn set_vsys(a: &KSigaction) {
    VSYS[1].store(a.flags, Ordering::Release);
    VSYS[2].store(a.restorer, Ordering::Release);
    VSYS[3].store(a.mask, Ordering::Release);
    VSYS[0].store(a.handler, Ordering::Release);
}

// ---- the fault guard ------------------------------------------------------
//
// A fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE) inside an extension must stop the
// program with a message naming the extension and the call (fail closed),
// not kill it silently. While the program leaves such a signal at its default
// action, strata's guard handler is installed for it instead (the program
// still reads back SIG_DFL): a fault inside a layer is reported by
// `stack::fault`; any other fault gets the default action back and happens
// again, so the program dies of it exactly as natively. Once the program
// installs its own handler for the signal, that handler is installed as
// given and the guard steps aside (docs: a fault in an extension then reaches
// the program's handler).

/// The guarded signals.
const FAULT_SIGS: [usize; 4] = [4, 7, 8, 11];
const fn fault_bit(sig: usize) -> u64 {
    1 << (sig - 1)
}
const FAULT_MASK: u64 = fault_bit(4) | fault_bit(7) | fault_bit(8) | fault_bit(11);

/// Per guarded signal: nonzero while strata's guard is installed; then the
/// program's (default) action as it last set it, for it to read back.
static GUARD_ON: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static GUARD_VIRT: [[AtomicU64; 3]; 4] = [const { [const { AtomicU64::new(0) }; 3] }; 4];

/// Per guarded signal: nonzero while strata's entry is installed for the
/// program's own handler.
static ENTRY_ON: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

/// Whether a SIGSEGV or SIGBUS reaches strata's code (the guard or the
/// entry), which can then recover from a fault in a direct copy.
pub fn faults_recoverable() -> bool {
    [7, 11].iter().all(|&sig| {
        guard_index(sig)
            .is_some_and(|i| GUARD_ON[i].load(Ordering::Acquire) != 0 || ENTRY_ON[i].load(Ordering::Acquire) != 0)
    })
}

fn guard_index(sig: usize) -> Option<usize> {
    FAULT_SIGS.iter().position(|&s| s == sig)
}

fn guard_action() -> KSigaction {
    KSigaction {
        handler: strata_on_fault as *const () as u64,
        flags: sys::SA_SIGINFO | sys::SA_ONSTACK | sys::SA_RESTORER | sys::SA_NODEFER,
        restorer: crate::asm::strata_restorer as *const () as u64,
        mask: !FAULT_MASK,
    }
}

/// The kernel's action for `sig` (what rt_sigaction's old-action argument
/// returns), after installing `new` when given.
fn kernel_sigaction(sig: usize, new: Option<&KSigaction>) -> Result<KSigaction, isize> {
    let mut old = KSigaction::default();
    let new = new.map_or(0, |a| a as *const KSigaction as usize);
    // SAFETY: rt_sigaction reading `new` (if any) and writing `old`, both ours.
    sys::check(unsafe { sys::sc(Sysno::rt_sigaction, &[sig, new, &mut old as *mut _ as usize, 8]) })?;
    Ok(old)
}

/// The program's (default) action for guarded signal `i`, which it reads
/// back while the guard is installed.
fn set_guard_virt(i: usize, virt: &KSigaction) {
    GUARD_VIRT[i][0].store(virt.flags, Ordering::Relaxed);
    GUARD_VIRT[i][1].store(virt.restorer, Ordering::Relaxed);
    GUARD_VIRT[i][2].store(virt.mask, Ordering::Relaxed);
}

fn install_guard(i: usize, virt: &KSigaction) -> isize {
    set_guard_virt(i, virt);
    let r = kernel_sigaction(FAULT_SIGS[i], Some(&guard_action())).map_or_else(|e| -e, |_| 0);
    set_guard_on(i, r == 0);
    r
}

/// Records whether the guard is installed for guarded signal `i`, and keeps
/// SIGSYS's handler mask in step: a guarded signal stays deliverable inside
/// strata's handler (so a fault in an extension reaches the guard); an
/// unguarded one is blocked there, as every other signal is (the program's
/// own handler must never run nested inside strata's).
fn set_guard_on(i: usize, on: bool) {
    let was = GUARD_ON[i].swap(on as u64, Ordering::AcqRel) != 0;
    if was != on {
        install_sigsys_action();
    }
}

/// The mask strata's SIGSYS handler runs with.
fn sigsys_handler_mask() -> u64 {
    let mut m = !0u64;
    for (i, &sig) in FAULT_SIGS.iter().enumerate() {
        if GUARD_ON[i].load(Ordering::Acquire) != 0 {
            m &= !fault_bit(sig);
        }
    }
    m
}

/// Installs strata's handlers at a process start: a guard for every fault
/// signal left at its default action, then strata's SIGSYS handler, whose
/// mask depends on the guards, keeping an inherited ignored SIGSYS ignored
/// for the program. `blocked`: every signal is blocked meanwhile (a start
/// after an exec by strata-rt), so each handler is installed by the call
/// that reads the inherited action (a guard's put back at once if that was
/// not the default). Otherwise (the launcher's first start), each action is
/// read first, and SIGSYS's before a guard's installation puts strata's
/// handler there.
pub fn install_start_handlers(blocked: bool) {
    // Ignored as the kernel says (the launcher's start), or as the runtime
    // that exec'd us says (its SIGSYS action was strata's handler).
    let keep_ignored = |old: KSigaction| {
        if old.handler == sys::SIG_IGN || crate::config::flags() & strata_proto::FLAG_SIGSYS_IGNORED != 0 {
            set_vsys(&KSigaction {
                handler: sys::SIG_IGN,
                ..Default::default()
            });
        }
    };
    if !blocked {
        keep_ignored(kernel_sigaction(sys::SIGSYS, None).unwrap_or_default());
        install_sigsys_action();
    }
    for (i, &sig) in FAULT_SIGS.iter().enumerate() {
        if blocked {
            match kernel_sigaction(sig, Some(&guard_action())) {
                Ok(old) if old.handler == sys::SIG_DFL => {
                    set_guard_virt(i, &old);
                    GUARD_ON[i].store(1, Ordering::Release);
                }
                Ok(old) => {
                    let _ = kernel_sigaction(sig, Some(&old));
                }
                Err(_) => {}
            }
        } else if let Some(old) = kernel_sigaction(sig, None).ok().filter(|o| o.handler == sys::SIG_DFL) {
            install_guard(i, &old);
        }
    }
    if blocked {
        keep_ignored(install_sigsys_action());
    }
}

/// The guard handler.
///
/// # Safety
/// Called by the kernel only, with valid `info` and `uc` pointers.
unsafe extern "C" fn strata_on_fault(sig: i32, info: *mut SigInfo, uc: *mut UContext) {
    // SAFETY: the kernel passes valid pointers into the signal frame.
    let (info, uc) = unsafe { (&*info, &mut *uc) };
    if info.code > 0 && fast::recover_copy(sig as usize, uc) {
        return;
    }
    let in_layer = crate::stack::in_layer();
    if thread::current().in_fast == 0 {
        fast::fixup(thread::current(), uc);
    }
    // SI_KERNEL: not a fault of the code that ran (e.g. the kernel could not
    // build a signal frame for a handler without a restorer and forces
    // SIGSEGV, which kills natively too).
    const SI_KERNEL: i32 = 0x80;
    if in_layer && info.code > 0 && info.code != SI_KERNEL {
        crate::stack::fault(sig, info.f0, uc.gregs[reg::RIP]);
    }
    let sig = sig as usize;
    if in_layer || thread::current().in_fast != 0 || crate::image::overlaps_image(uc.gregs[reg::RIP] as usize, 1) {
        // A signal sent while strata's handler runs (e.g. the program's own
        // tgkill, passed through): hold it until the handler returns to the
        // program, which then gets it as it would have natively.
        let t = thread::current();
        if t.in_fast != 0 && fast::in_exit_window(uc.gregs[reg::RIP]) {
            // The last instructions of a fast call: complete it, and let
            // the signal come at the program's own PC.
            fast::roll_forward(t, uc);
        } else {
            fast::defer(t, sig, uc);
            uc.sigmask |= fault_bit(sig);
        }
        // SAFETY: signalling our own thread; it stays pending (blocked
        // once this handler returns into strata's).
        unsafe { sys::sc(Sysno::tgkill, &[sys::getpid(), sys::gettid(), sig]) };
        return;
    }
    // The program's own fault (or a signal sent to it) with the default
    // action: give it that action and let it happen again.
    if let Some(i) = guard_index(sig) {
        set_guard_on(i, false);
    }
    let dfl = KSigaction::default();
    // SAFETY: restoring the default action from a local.
    unsafe { sys::sc(Sysno::rt_sigaction, &[sig, &dfl as *const _ as usize, 0, 8]) };
    // Send it again: it stays pending until this handler returns, then
    // kills as it would have. (Returning alone is not enough: a signal
    // sent by kill, or the kernel's SIGSEGV when it cannot build a signal
    // frame, would not recur.)
    // SAFETY: signalling our own thread.
    unsafe { sys::sc(Sysno::tgkill, &[sys::getpid(), sys::gettid(), sig]) };
}

/// Installs strata's SIGSYS handler with the current handler mask; returns
/// the action it replaced (default when the call fails).
fn install_sigsys_action() -> KSigaction {
    let act = KSigaction {
        handler: crate::asm::strata_sigsys_entry as *const () as u64,
        flags: sys::SA_SIGINFO | sys::SA_ONSTACK | sys::SA_RESTORER,
        restorer: crate::asm::strata_restorer as *const () as u64,
        mask: sigsys_handler_mask(),
    };
    kernel_sigaction(sys::SIGSYS, Some(&act)).unwrap_or_default()
}

/// The program's view of its signal mask.
fn program_mask(t: &Thread, uc: &UContext) -> u64 {
    uc.sigmask | if t.vsigsys_blocked != 0 { sys::SIGSYS_BIT } else { 0 }
}

/// Makes `mask` the program's mask when strata's handler returns.
fn set_program_mask(t: &mut Thread, uc: &mut UContext, mask: u64) {
    let mask = mask & !((1 << (sys::SIGKILL - 1)) | (1 << (sys::SIGSTOP - 1)));
    t.vsigsys_blocked = u8::from(mask & sys::SIGSYS_BIT != 0);
    uc.sigmask = mask & !sys::SIGSYS_BIT;
}

/// rt_sigaction(sig, act, oact, sigsetsize).
pub fn sigaction(args: [u64; 6]) -> isize {
    let (sig, act_p, oact_p, size) = (args[0] as usize, args[1] as usize, args[2] as usize, args[3] as usize);
    if size != 8 || sig == 0 || sig > 64 {
        return -sys::EINVAL;
    }
    let new = if act_p != 0 {
        match sys::read_user::<KSigaction>(act_p) {
            Ok(a) => Some(a),
            Err(e) => return -e,
        }
    } else {
        None
    };
    if sig == sys::SIGSYS {
        let old = vsys();
        if let Some(a) = new {
            set_vsys(&a);
        }
        if oact_p != 0 {
            if let Err(e) = sys::write_user(oact_p, &old) {
                return -e;
            }
        }
        return 0;
    }
    if let Some(i) = guard_index(sig) {
        return fault_sigaction(i, new, oact_p);
    }
    // The program's flags, mask and restorer are installed as given, its
    // handler behind strata's entry (`wrap`): its restorer's rt_sigreturn
    // traps like any other call and is performed by `sigreturn` below. Only
    // SIGSYS leaves the mask.
    let mut real = new;
    let prev = program_action(sig);
    if let Some(a) = real.as_mut() {
        wrap(sig, a);
    }
    let rp = real.as_ref().map_or(0, |a| a as *const KSigaction as usize);
    let mut old = KSigaction::default();
    // SAFETY: both structs are locals.
    let r = unsafe { sys::sc(Sysno::rt_sigaction, &[sig, rp, &mut old as *mut _ as usize, 8]) };
    if r < 0 {
        return r;
    }
    unwrap(&mut old, prev);
    if oact_p != 0 {
        if let Err(e) = sys::write_user(oact_p, &old) {
            return -e;
        }
    }
    0
}

/// The program's handler and flags for `sig` as strata's entry forwards them.
fn program_action(sig: usize) -> (u64, u64) {
    (
        fast::ACT_HANDLER[sig].load(Ordering::Acquire),
        fast::ACT_FLAGS[sig].load(Ordering::Acquire),
    )
}

/// Turns the program's action into the one the kernel gets: a handler is
/// reached through `strata_sig_entry` (which forwards to it, or defers the
/// signal while strata runs), with SA_SIGINFO so the entry always has the
/// signal's information; flags, mask and restorer stay the program's, so the
/// kernel builds the very frame the program's handler expects. SIGSYS leaves
/// the mask.
fn wrap(sig: usize, a: &mut KSigaction) {
    a.mask &= !sys::SIGSYS_BIT;
    let entry = a.handler != sys::SIG_DFL && a.handler != sys::SIG_IGN;
    if let Some(i) = guard_index(sig) {
        // A fault here reaches strata's entry for good (not after a reset).
        ENTRY_ON[i].store(u64::from(entry && a.flags & sys::SA_RESETHAND == 0), Ordering::Release);
    }
    if entry {
        fast::ACT_MASK[sig].store(a.mask, Ordering::Release);
        fast::ACT_RESTORER[sig].store(a.restorer, Ordering::Release);
        fast::ACT_FLAGS[sig].store(a.flags, Ordering::Release);
        fast::ACT_HANDLER[sig].store(a.handler, Ordering::Release);
        a.handler = fast::strata_sig_entry as *const () as u64;
        a.flags |= sys::SA_SIGINFO;
    }
}

/// The program's view of an action the kernel reported (`prev`: what
/// `program_action` said before the change).
fn unwrap(old: &mut KSigaction, prev: (u64, u64)) {
    if old.handler == fast::strata_sig_entry as *const () as u64 {
        old.handler = prev.0;
        old.flags = prev.1;
    } else if old.flags & sys::SA_RESETHAND != 0 && prev.1 & sys::SA_SIGINFO == 0 {
        // Reset to SIG_DFL by the kernel on delivery: only the handler changed.
        old.flags &= !sys::SA_SIGINFO;
    }
}

/// Puts strata's entry back for `sig` after the kernel reset the action to
/// SIG_DFL on delivery (SA_RESETHAND): a deferred signal is delivered again
/// later and must still reach the program's handler once.
pub fn reinstall_entry(sig: usize) {
    let mut cur = KSigaction::default();
    // SAFETY: query into a local, then install from it.
    unsafe {
        sys::sc(Sysno::rt_sigaction, &[sig, 0, &mut cur as *mut _ as usize, 8]);
        if cur.handler == sys::SIG_DFL {
            cur.handler = fast::strata_sig_entry as *const () as u64;
            sys::sc(Sysno::rt_sigaction, &[sig, &cur as *const _ as usize, 0, 8]);
        }
    }
}

/// rt_sigaction on a guarded signal: a default action keeps (or puts back)
/// the guard; anything else is installed as given.
fn fault_sigaction(i: usize, new: Option<KSigaction>, oact_p: usize) -> isize {
    let sig = FAULT_SIGS[i];
    let mut old = KSigaction::default();
    let prev = program_action(sig);
    if GUARD_ON[i].load(Ordering::Acquire) != 0 {
        old.handler = sys::SIG_DFL;
        old.flags = GUARD_VIRT[i][0].load(Ordering::Relaxed);
        old.restorer = GUARD_VIRT[i][1].load(Ordering::Relaxed);
        old.mask = GUARD_VIRT[i][2].load(Ordering::Relaxed);
    } else {
        // SAFETY: querying into a local.
        let r = unsafe { sys::sc(Sysno::rt_sigaction, &[sig, 0, &mut old as *mut _ as usize, 8]) };
        if r < 0 {
            return r;
        }
        unwrap(&mut old, prev);
    }
    match new {
        Some(a) if a.handler == sys::SIG_DFL => {
            let r = install_guard(i, &a);
            if r < 0 {
                return r;
            }
        }
        Some(mut a) => {
            wrap(sig, &mut a);
            // SAFETY: installing the program's action from a local.
            let r = unsafe { sys::sc(Sysno::rt_sigaction, &[sig, &a as *const _ as usize, 0, 8]) };
            if r < 0 {
                return r;
            }
            set_guard_on(i, false);
        }
        None => {}
    }
    if oact_p != 0 {
        if let Err(e) = sys::write_user(oact_p, &old) {
            return -e;
        }
    }
    0
}

/// rt_sigprocmask(how, set, oldset, sigsetsize), applied to the frame.
pub fn sigprocmask(t: &mut Thread, uc: &mut UContext, args: [u64; 6]) -> isize {
    let (how, set_p, old_p, size) = (args[0] as usize, args[1] as usize, args[2] as usize, args[3] as usize);
    if size != 8 {
        return -sys::EINVAL;
    }
    let cur = program_mask(t, uc);
    if set_p != 0 {
        let set = match sys::read_user::<u64>(set_p) {
            Ok(s) => s,
            Err(e) => return -e,
        };
        let new = match how {
            sys::SIG_BLOCK => cur | set,
            sys::SIG_UNBLOCK => cur & !set,
            sys::SIG_SETMASK => set,
            _ => return -sys::EINVAL,
        };
        set_program_mask(t, uc, new);
    }
    if old_p != 0 {
        if let Err(e) = sys::write_user(old_p, &cur) {
            return -e;
        }
    }
    0
}

/// rt_sigpending(set, sigsetsize): the kernel's pending set plus a SIGSYS
/// strata holds for the program.
pub fn sigpending(t: &Thread, args: [u64; 6]) -> isize {
    if args[1] != 8 {
        return -sys::EINVAL;
    }
    let mut set = 0u64;
    // SAFETY: writes 8 bytes into a local.
    let r = unsafe { sys::sc(Sysno::rt_sigpending, &[&mut set as *mut u64 as usize, 8]) };
    if r < 0 {
        return r;
    }
    if t.vsigsys_pending != 0 {
        set |= sys::SIGSYS_BIT;
    }
    match sys::write_user(args[0] as usize, &set) {
        Ok(()) => 0,
        Err(e) => -e,
    }
}

/// Whether two alternate stacks are the same (a sigaltstack to set the one
/// that is already set is spared).
fn same_stack(a: &StackT, b: &StackT) -> bool {
    (a.sp, a.flags, a.size) == (b.sp, b.flags, b.size)
}

fn on_stack(ss: &StackT, sp: u64) -> bool {
    ss.flags & sys::SS_DISABLE == 0 && ss.size != 0 && sp.wrapping_sub(ss.sp) <= ss.size
}

/// The program's alternate stack as sigaltstack reports it at `sp`.
fn report_altstack(t: &Thread, sp: u64) -> StackT {
    let ss = t.prog_altstack;
    if ss.flags & sys::SS_DISABLE != 0 {
        return StackT::DISABLED;
    }
    StackT {
        flags: (ss.flags & sys::SS_AUTODISARM) | if on_stack(&ss, sp) { sys::SS_ONSTACK } else { 0 },
        ..ss
    }
}

/// Applies a new program alternate stack: it becomes the real one at once
/// (strata's handler then runs on it), and `uc.stack` agrees so that
/// rt_sigreturn does not undo it.
fn apply_altstack(t: &mut Thread, uc: &mut UContext, ss: &StackT) -> isize {
    let mode = ss.flags & !sys::SS_AUTODISARM;
    if mode == sys::SS_DISABLE {
        t.prog_altstack = StackT::DISABLED;
        uc.stack = thread::own_altstack(t);
        if !same_stack(&t.real_alt, &uc.stack) {
            thread::set_altstack(&uc.stack);
        }
        return 0;
    }
    if mode != 0 && mode != sys::SS_ONSTACK {
        return -sys::EINVAL;
    }
    if (ss.size as usize) < sys::MINSIGSTKSZ {
        return -sys::ENOMEM;
    }
    let real = StackT {
        sp: ss.sp,
        flags: 0,
        _pad: 0,
        size: ss.size,
    };
    let r = if same_stack(&t.real_alt, &real) {
        0
    } else {
        thread::set_altstack(&real)
    };
    if r < 0 {
        return r;
    }
    t.prog_altstack = StackT {
        sp: ss.sp,
        flags: ss.flags & sys::SS_AUTODISARM,
        _pad: 0,
        size: ss.size,
    };
    // rt_sigreturn restores uc_stack too: keep it in agreement.
    uc.stack = real;
    0
}

/// sigaltstack(ss, old_ss).
pub fn sigaltstack(t: &mut Thread, uc: &mut UContext, args: [u64; 6]) -> isize {
    let (ss_p, old_p) = (args[0] as usize, args[1] as usize);
    let sp = uc.gregs[reg::RSP];
    let old = report_altstack(t, sp);
    if ss_p != 0 {
        let ss = match sys::read_user::<StackT>(ss_p) {
            Ok(s) => s,
            Err(e) => return -e,
        };
        if old.flags & sys::SS_ONSTACK != 0 {
            return -sys::EPERM;
        }
        let r = apply_altstack(t, uc, &ss);
        if r < 0 {
            return r;
        }
    }
    if old_p != 0 {
        if let Err(e) = sys::write_user(old_p, &old) {
            return -e;
        }
    }
    0
}

/// The program issued rt_sigreturn itself (from a restorer of its own or a
/// frame it built): restore that frame into strata's.
pub fn sigreturn(t: &mut Thread, uc: &mut UContext) {
    let frame = uc.gregs[reg::RSP] as usize;
    // In this handler the fault signals are blocked only if the program
    // blocks them: otherwise its frame is read directly (a fault is
    // recovered into EFAULT), not with one process_vm_readv per piece.
    let direct = uc.sigmask & FAULT_MASK == 0 && faults_recoverable();
    let read = |dst: &mut [u8], src: usize| -> Result<(), isize> {
        if !direct {
            return sys::copy_from_user(dst, src);
        }
        // SAFETY: writes only `dst`, ours.
        unsafe { sys::copy_direct(dst.as_mut_ptr(), src as *const u8, dst.len()) }
    };
    let mut puc = [0u64; 38];
    // SAFETY: viewing our own local array as bytes.
    let bytes = unsafe { core::slice::from_raw_parts_mut(puc.as_mut_ptr() as *mut u8, core::mem::size_of_val(&puc)) };
    if read(bytes, frame).is_err() {
        kill_with(sys::SIGSEGV)
    }
    // [0]=flags [1]=link [2..5]=stack [5..28]=gregs [28]=fpstate [29..37]=reserved [37]=sigmask
    uc.gregs.copy_from_slice(&puc[5..28]);
    let fp = puc[28] as usize;
    if fp != 0 && uc.fpstate != 0 {
        let mut head = [0u8; 512];
        if read(&mut head, fp).is_ok() {
            // SAFETY: `uc.fpstate` points at our frame's FPU area.
            let ours = unsafe { sys::fpstate_size(uc.fpstate) };
            // SAFETY: `head` holds a copy of the program's fxsave area.
            let theirs = unsafe { sys::fpstate_size(head.as_ptr() as u64) };
            // SAFETY: our frame's FPU area has `ours` bytes.
            let dst = unsafe { core::slice::from_raw_parts_mut(uc.fpstate as *mut u8, ours.min(theirs)) };
            let _ = read(dst, fp);
        }
    }
    set_program_mask(t, uc, puc[37]);
    // The frame names the real alternate stack when the signal came: strata's
    // own one when the program had none.
    let ss = if puc[2] == t.altstack as u64 {
        StackT::DISABLED
    } else {
        StackT {
            sp: puc[2],
            flags: puc[3] as i32,
            _pad: 0,
            size: puc[4],
        }
    };
    if !on_stack(&t.prog_altstack, uc.gregs[reg::RSP]) {
        apply_altstack(t, uc, &ss);
    }
}

/// prctl(PR_SET_SYSCALL_USER_DISPATCH, ...) issued by the program: kept
/// virtual; strata's own dispatch stays on.
pub fn program_sud(t: &mut Thread, args: [u64; 6]) -> isize {
    let (mode, off, len, sel) = (args[1] as usize, args[2] as usize, args[3] as usize, args[4] as usize);
    match mode {
        sys::PR_SYS_DISPATCH_OFF => {
            if off != 0 || len != 0 || sel != 0 {
                return -sys::EINVAL;
            }
            t.prog_sud = thread::ProgramSud::default();
            0
        }
        sys::PR_SYS_DISPATCH_ON | sys::PR_SYS_DISPATCH_INCLUSIVE_ON => {
            if off.checked_add(len).is_none() {
                return -sys::EINVAL;
            }
            if sel != 0 && sys::read_user::<u8>(sel).is_err() {
                return -sys::EFAULT;
            }
            // Its dispatch must see every call, also those strata's filter
            // lets through.
            if let Err(e) = crate::seccomp::trap_all(t) {
                return -e;
            }
            t.prog_sud = thread::ProgramSud {
                mode,
                offset: off,
                len,
                selector: sel,
            };
            0
        }
        _ => -sys::EINVAL,
    }
}

/// Would the program's own Syscall User Dispatch trap this call? If so,
/// delivers its SIGSYS and returns true.
pub fn program_dispatch(t: &mut Thread, uc: &mut UContext, nr: usize) -> bool {
    let s = t.prog_sud;
    let ip = uc.gregs[reg::RIP] as usize;
    let in_range = ip.wrapping_sub(s.offset) < s.len;
    let dispatched = if s.mode == sys::PR_SYS_DISPATCH_ON {
        !in_range
    } else {
        in_range
    };
    if !dispatched {
        return false;
    }
    if s.selector != 0 {
        match sys::read_user::<u8>(s.selector) {
            Ok(sys::SYSCALL_DISPATCH_FILTER_ALLOW) => return false,
            Ok(sys::SYSCALL_DISPATCH_FILTER_BLOCK) => {}
            Ok(_) => kill_with(sys::SIGSYS),
            Err(_) => kill_with(sys::SIGSEGV),
        }
    }
    let info = SigInfo {
        signo: sys::SIGSYS as i32,
        errno: 0,
        code: sys::SYS_USER_DISPATCH,
        _pad: 0,
        f0: ip as u64,
        f1: (nr as u64 & 0xffff_ffff) | ((strata_proto::bpf::AUDIT_ARCH_X86_64 as u64) << 32),
        rest: [0; 12],
    };
    force_sigsys(t, uc, &info);
    true
}

/// A SIGSYS the kernel forces (dispatch, seccomp trap): a blocked or ignored
/// SIGSYS kills, as force_sig does.
fn force_sigsys(t: &mut Thread, uc: &mut UContext, info: &SigInfo) {
    let act = vsys();
    if act.handler == sys::SIG_DFL || act.handler == sys::SIG_IGN || t.vsigsys_blocked != 0 {
        kill_with(sys::SIGSYS);
    }
    deliver(t, uc, info, &act);
}

static PROGRAM_FILTERS: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// The program installed a seccomp filter (or strict mode) of its own.
pub fn note_program_filters() {
    PROGRAM_FILTERS.store(true, core::sync::atomic::Ordering::Relaxed);
}

/// Whether the program (this image, or one before it: filters outlive
/// exec, `FLAG_PROGRAM_FILTERS`) installed seccomp filters of its own.
pub fn program_filters() -> bool {
    PROGRAM_FILTERS.load(core::sync::atomic::Ordering::Relaxed)
}

/// A SIGSYS that the kernel delivered to strata's handler but that did not
/// come from strata's dispatch: sent by kill/tgkill/sigqueue, or a seccomp
/// filter of the program's.
pub fn real_sigsys(t: &mut Thread, info: &SigInfo, uc: &mut UContext) {
    if info.code == sys::SYS_SECCOMP {
        if t.in_fast == 0 || !crate::image::in_text(uc.gregs[reg::RIP] as usize) {
            return force_sigsys(t, uc, info);
        }
        // The program's own filter trapped the program's call that strata
        // issued for it: the program's trap, at its own site, once the call
        // has left strata (the slow exit, or the trap path's handler,
        // delivers it). The kernel rolled the call back: its result is the
        // number, as the program's rax would be.
        let mut i = *info;
        i.f0 = if t.in_fast == fast::TRAP_BLOCKING {
            t.trap_ret
        } else {
            t.sret
        } as u64;
        t.pending_info = i;
        t.vsigsys_pending = 1;
        t.fast_slow = 1;
        return;
    }
    let act = vsys();
    if act.handler == sys::SIG_IGN {
        return;
    }
    if t.in_fast == 0 {
        // A native call or a trampoline stands for the program's own code.
        fast::fixup(t, uc);
    } else if fast::in_exit_window(uc.gregs[reg::RIP]) {
        fast::roll_forward(t, uc);
    }
    if t.vsigsys_blocked != 0 || t.in_fast != 0 || crate::image::in_text(uc.gregs[reg::RIP] as usize) {
        // Held until the program unblocks it, or until strata's call returns
        // (a fast call then leaves through the slow exit, which delivers it).
        t.pending_info = *info;
        t.vsigsys_pending = 1;
        if t.in_fast != 0 {
            t.fast_slow = 1;
        }
        return;
    }
    if act.handler == sys::SIG_DFL {
        kill_with(sys::SIGSYS);
    }
    deliver(t, uc, info, &act);
}

/// Delivers a held SIGSYS if the program no longer blocks it.
pub fn deliver_pending(t: &mut Thread, uc: &mut UContext) {
    if t.vsigsys_pending == 0 || t.vsigsys_blocked != 0 {
        return;
    }
    t.vsigsys_pending = 0;
    let info = t.pending_info;
    let act = vsys();
    match act.handler {
        sys::SIG_IGN => {}
        sys::SIG_DFL => kill_with(sys::SIGSYS),
        _ => deliver(t, uc, &info, &act),
    }
}

/// Makes the program run `act`'s handler for `info` when strata's handler
/// returns: builds the frame the kernel would on the program's stack (or its
/// alternate stack), with strata's restorer as the return address.
pub fn deliver(t: &mut Thread, uc: &mut UContext, info: &SigInfo, act: &KSigaction) {
    // The layers' signal upcall may suppress the delivery.
    if crate::stack::signal(info) {
        return;
    }
    let sig = info.signo as u64;
    let sp0 = uc.gregs[reg::RSP];
    let alt = t.prog_altstack;
    let mut sp = if act.flags & sys::SA_ONSTACK != 0 && alt.flags & sys::SS_DISABLE == 0 && !on_stack(&alt, sp0) {
        alt.sp + alt.size
    } else {
        sp0 - 128
    };
    // The program's alternate stack is also the real one (apply_altstack):
    // strata's own handler may be running on it, its frame (from `uc`'s
    // return-address word up) where the program's would go. The program's
    // goes below it then, as the kernel nests a second signal.
    let ours = (uc as *const UContext as u64).wrapping_sub(8);
    if on_stack(&alt, ours) && on_stack(&alt, sp) && ours < sp {
        sp = ours;
    }
    let fsize = if uc.fpstate != 0 {
        // SAFETY: `uc.fpstate` points at our frame's FPU area.
        unsafe { sys::fpstate_size(uc.fpstate) }
    } else {
        0
    };
    sp = (sp - fsize as u64) & !63;
    let fp = sp;
    sp -= core::mem::size_of::<RtSigframe>() as u64;
    sp = (sp & !15) - 8;
    let frame = RtSigframe {
        pretcode: crate::asm::strata_restorer as *const () as u64,
        uc: UContext {
            flags: uc.flags | UC_STRATA_FRAME as u64,
            link: 0,
            stack: uc.stack,
            gregs: uc.gregs,
            fpstate: if fsize != 0 { fp } else { 0 },
            reserved1: uc.reserved1,
            sigmask: program_mask(t, uc),
        },
        info: *info,
    };
    if fsize != 0 {
        // SAFETY: our frame's FPU area has `fsize` bytes.
        let src = unsafe { core::slice::from_raw_parts(uc.fpstate as *const u8, fsize) };
        if sys::copy_to_user(fp as usize, src).is_err() {
            kill_with(sys::SIGSEGV);
        }
    }
    if sys::write_user(sp as usize, &frame).is_err() {
        kill_with(sys::SIGSEGV);
    }
    let mut mask = program_mask(t, uc) | act.mask;
    if act.flags & sys::SA_NODEFER == 0 {
        mask |= 1 << (sig - 1);
    }
    set_program_mask(t, uc, mask);
    if act.flags & sys::SA_RESETHAND != 0 && sig == sys::SIGSYS as u64 {
        set_vsys(&KSigaction::default());
    }
    let g = &mut uc.gregs;
    g[reg::RSP] = sp;
    g[reg::RIP] = act.handler;
    g[reg::RDI] = sig;
    g[reg::RSI] = sp + core::mem::offset_of!(RtSigframe, info) as u64;
    g[reg::RDX] = sp + core::mem::offset_of!(RtSigframe, uc) as u64;
    g[reg::RAX] = 0;
    g[reg::EFL] &= !(0x400 | 0x100 | 0x10000); // DF, TF, RF
}

/// Ends the process by `sig` with its default action, as the kernel would.
pub fn kill_with(sig: usize) -> ! {
    let dfl = KSigaction::default();
    // SAFETY: resetting the action to default, unblocking and raising.
    unsafe {
        sys::sc(Sysno::rt_sigaction, &[sig, &dfl as *const _ as usize, 0, 8]);
        let set: u64 = 1 << (sig - 1);
        sys::sc(
            Sysno::rt_sigprocmask,
            &[sys::SIG_UNBLOCK, &set as *const u64 as usize, 0, 8],
        );
        sys::sc(Sysno::tgkill, &[sys::getpid_now(), sys::gettid(), sig]);
    }
    sys::exit_group(128 + sig as i32)
}

/// rt_sigtimedwait(set, info, timeout, size): a SIGSYS strata holds for the
/// program is taken first; otherwise SIGSYS leaves the set.
pub fn sigtimedwait(t: &mut Thread, uc: &UContext, a: [u64; 6]) -> isize {
    if a[3] != 8 {
        return -sys::EINVAL;
    }
    let set = match sys::read_user::<u64>(a[0] as usize) {
        Ok(s) => s,
        Err(e) => return -e,
    };
    if set & sys::SIGSYS_BIT != 0 && t.vsigsys_pending != 0 {
        if a[1] != 0 {
            if let Err(e) = sys::write_user(a[1] as usize, &t.pending_info) {
                return -e;
            }
        }
        t.vsigsys_pending = 0;
        return sys::SIGSYS as isize;
    }
    let local = set & !sys::SIGSYS_BIT;
    let mut b = a;
    b[0] = &local as *const u64 as u64;
    crate::dispatch::passthrough_nested(uc, Sysno::rt_sigtimedwait as usize, b)
}

/// Copies of a mask argument with SIGSYS removed, for calls that install a
/// temporary mask (sigsuspend, ppoll, pselect6, epoll_pwait, signalfd).
pub fn strip_sigsys(mask_p: usize, local: &mut u64) -> Result<usize, isize> {
    if mask_p == 0 {
        return Ok(0);
    }
    *local = sys::read_user::<u64>(mask_p)? & !sys::SIGSYS_BIT;
    Ok(local as *mut u64 as usize)
}
