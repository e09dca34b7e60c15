//! How a system call reaches strata: Syscall User Dispatch.
//!
//! Every thread runs with dispatch on and its selector set to BLOCK. The
//! kernel lets through syscalls issued from strata's own text and turns every
//! other one into a SIGSYS, which lands in `strata_on_sigsys` on strata's
//! alternate stack with all signals blocked. The handler decides what the
//! call returns (dispatch.rs) and writes it into the saved rax; returning
//! through `strata_restorer` resumes the program after its `syscall`
//! instruction with exactly the registers a real syscall would leave (the
//! kernel already set rcx and r11 when it executed the instruction).

use crate::sys::{self, reg, SigInfo, UContext};
use crate::{dispatch, out, signals, thread};

/// The SIGSYS handler.
///
/// # Safety
/// Called by the kernel only, with valid `info` and `uc` pointers.
pub unsafe extern "C" fn strata_on_sigsys(_sig: i32, info: *mut SigInfo, uc: *mut UContext) {
    let t = thread::current();
    // SAFETY: the kernel passes valid pointers into the signal frame.
    let (info, uc) = unsafe { (&*info, &mut *uc) };
    if info.code != sys::SYS_USER_DISPATCH && !crate::seccomp::is_ours(info.code, info.errno) {
        signals::real_sigsys(t, info, uc);
        return;
    }
    if crate::fast::slow_exit(t, uc) {
        // The end of a fast call that deferred signals (or bailed out).
        if t.vsigsys_pending != 0 {
            signals::deliver_pending(t, uc);
        }
        crate::fast::note_mask(t, uc.sigmask);
        return;
    }
    let sys_addr = uc.gregs[reg::RIP] - 2;
    let nr = crate::rewrite::substitute(sys_addr, (info.f1 & 0xffff_ffff) as usize);
    if t.prog_sud.mode != 0 && signals::program_dispatch(t, uc, nr) {
        return;
    }
    t.trap_calls += 1;
    let g = &uc.gregs;
    let args = [
        g[reg::RDI],
        g[reg::RSI],
        g[reg::RDX],
        g[reg::R10],
        g[reg::R8],
        g[reg::R9],
    ];
    dispatch::syscall(t, uc, nr, args);
    if t.fast_restart != 0 {
        // A signal interrupted the call and the kernel chose to restart it
        // after the handler: back to the program's `syscall`, where the
        // deferred signal is delivered first.
        uc.gregs[reg::RIP] = sys_addr;
        uc.gregs[reg::RAX] = t.restart_nr;
    }
    t.fast_restart = 0;
    t.deferred = 0;
    t.fast_slow = 0;
    crate::fast::deliver_saved(t, uc);
    if t.prog_sud.mode == 0 {
        crate::rewrite::after_trap(sys_addr, nr as u32);
    }
    if t.vsigsys_pending != 0 {
        signals::deliver_pending(t, uc);
    }
    // The mask the program resumes with.
    crate::fast::note_mask(thread::current(), uc.sigmask);
}

/// Turns capture on for the main thread, just before the program's first
/// instruction.
pub fn enable_for_main_thread() {
    thread::install(thread::main_state());
    let t = thread::current();
    t.tid = sys::gettid();
    t.pid = sys::getpid_now();
    // The program's mask: handed over by the runtime that exec'd us (which
    // execs with every signal blocked, so that one arriving meanwhile stays
    // pending for this image: it is delivered here, as natively after an
    // exec) or, at the launcher's start, inherited. A blocked SIGSYS
    // becomes virtual.
    let handed = crate::config::program_mask();
    // The fault guards also without layers: the fast path copies program
    // memory directly and recovers from a fault through the guard.
    signals::install_start_handlers(handed.is_some());
    let mask = handed.unwrap_or_else(sys::sigmask);
    if mask & sys::SIGSYS_BIT != 0 {
        t.vsigsys_blocked = 1;
    }
    if handed.is_some() || mask & sys::SIGSYS_BIT != 0 {
        sys::set_sigmask(mask & !sys::SIGSYS_BIT);
    }
    thread::set_altstack(&thread::own_altstack(t));
    let flags = crate::config::flags();
    if flags & strata_proto::FLAG_PROGRAM_FILTERS != 0 {
        signals::note_program_filters();
    }
    crate::stack::note_capture(if crate::seccomp::init(flags) {
        strata_proto::counts::CAPTURE_SECCOMP
    } else {
        strata_proto::counts::CAPTURE_DISPATCH
    });
    if let Err(e) = thread::enable_capture(t) {
        out::Line::new()
            .str("strata: cannot turn on Syscall User Dispatch (Linux 5.11 or later is needed): ")
            .str(out::strerror(e))
            .str("\n")
            .emit();
        sys::exit_group(126);
    }
}

/// Entry of a thread or vfork child that shares our memory (from
/// `strata_clone_vm`): set up its state, turn capture on, and resume the
/// program from the frame the parent prepared.
///
/// # Safety
/// `t` is the state the parent prepared, with a boot frame.
#[no_mangle]
pub unsafe extern "C" fn strata_thread_boot(t: *mut thread::Thread) -> ! {
    thread::install(t);
    let t = thread::current();
    t.tid = sys::gettid();
    t.pid = sys::getpid_now();
    thread::set_altstack(&thread::own_altstack(t));
    if thread::enable_capture(t).is_err() {
        sys::exit_group(126);
    }
    crate::stack::task_start(t.tid, t.tid != t.pid);
    // SAFETY: the parent built a complete frame at boot_frame + 8.
    unsafe { crate::asm::strata_sigreturn_to((t.boot_frame + 8) as *mut UContext) }
}
