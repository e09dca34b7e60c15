//! Starting the runtime and mirroring the program's end.
//!
//! While the program runs the launcher behaves like `system()`: it ignores
//! SIGINT and SIGQUIT (the terminal sends them to the whole foreground
//! process group, so the program gets them anyway) and forwards SIGTERM,
//! SIGHUP, SIGUSR1 and SIGUSR2 to the program. The program starts with the
//! signal dispositions and mask the launcher itself started with, except
//! SIGPIPE, which is default (Rust's runtime ignores SIGPIPE before `main`,
//! so the launcher cannot know what its parent gave it; a shell gives
//! default).

use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

use libc::c_int;

/// Signals the launcher ignores while the program runs.
pub const IGNORED: [c_int; 2] = [libc::SIGINT, libc::SIGQUIT];
/// Signals the launcher forwards to the program.
pub const FORWARDED: [c_int; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGUSR1, libc::SIGUSR2];
/// Every signal whose disposition the launcher changes (and restores for
/// the program). SIGCHLD is set to default if it was ignored, so that the
/// launcher can wait for the program.
const TOUCHED: [c_int; 7] = [
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGCHLD,
];

/// The pid forwarded signals go to; 0 when there is none.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Why the program could not be started or waited for.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot set up signal handling: {}", crate::preflight::io_text(.0))]
    Signals(io::Error),
    #[error("{}", crate::preflight::io_text(.0))]
    Spawn(io::Error),
    #[error("cannot wait for the program: {}", crate::preflight::io_text(.0))]
    Wait(io::Error),
}

extern "C" fn forward(sig: c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: __errno_location returns this thread's errno slot, valid
        // for the thread's lifetime; kill is async-signal-safe. errno is
        // saved and restored so the interrupted code does not see it change.
        unsafe {
            let errno = libc::__errno_location();
            let saved = *errno;
            libc::kill(pid, sig);
            *errno = saved;
        }
    }
}

fn sigset(signals: &[c_int]) -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given; sigaddset is
    // given valid signal numbers and an initialised set.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &s in signals {
            libc::sigaddset(set.as_mut_ptr(), s);
        }
        set.assume_init()
    }
}

fn get_action(sig: c_int) -> io::Result<libc::sigaction> {
    let mut old = MaybeUninit::<libc::sigaction>::uninit();
    // SAFETY: a null new action only queries; `old` is written on success.
    if unsafe { libc::sigaction(sig, std::ptr::null(), old.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: sigaction succeeded and filled `old`.
    Ok(unsafe { old.assume_init() })
}

/// Async-signal-safe: no allocation (io::Error from an errno does not allocate).
fn set_action(sig: c_int, act: &libc::sigaction) -> io::Result<()> {
    // SAFETY: `act` points to a valid sigaction for the duration of the call.
    if unsafe { libc::sigaction(sig, act, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn action(handler: libc::sighandler_t, mask: libc::sigset_t, flags: c_int) -> libc::sigaction {
    // SAFETY: sigaction is a plain C struct for which all-zero bytes are a
    // valid value; the fields that matter are set below.
    let mut a: libc::sigaction = unsafe { std::mem::zeroed() };
    a.sa_sigaction = handler;
    a.sa_mask = mask;
    a.sa_flags = flags;
    a
}

/// Async-signal-safe.
fn set_mask(how: c_int, set: &libc::sigset_t) -> io::Result<()> {
    // SAFETY: `set` is a valid, initialised signal set; no old set wanted.
    match unsafe { libc::pthread_sigmask(how, set, std::ptr::null_mut()) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// The signal state the launcher started with.
#[derive(Clone, Copy)]
struct Saved {
    mask: libc::sigset_t,
    actions: [libc::sigaction; TOUCHED.len()],
}

impl Saved {
    /// Blocks the forwarded signals (so none is lost before the child's pid
    /// is known), then sets the launcher's dispositions. Returns the state
    /// from before.
    fn prepare() -> io::Result<Saved> {
        let mut mask = MaybeUninit::<libc::sigset_t>::uninit();
        let block = sigset(&FORWARDED);
        // SAFETY: `block` is initialised; the old mask is written to `mask`.
        let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &block, mask.as_mut_ptr()) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        // SAFETY: pthread_sigmask succeeded and filled `mask`.
        let mask = unsafe { mask.assume_init() };
        let empty = sigset(&[]);
        let mut actions = [action(libc::SIG_DFL, empty, 0); TOUCHED.len()];
        for (slot, &sig) in actions.iter_mut().zip(&TOUCHED) {
            *slot = get_action(sig)?;
        }
        let saved = Saved { mask, actions };
        let result = (|| {
            for (old, &sig) in saved.actions.iter().zip(&TOUCHED) {
                let was_ignored = old.sa_sigaction == libc::SIG_IGN;
                if IGNORED.contains(&sig) {
                    set_action(sig, &action(libc::SIG_IGN, empty, 0))?;
                } else if FORWARDED.contains(&sig) {
                    // A signal the launcher's parent ignores stays ignored
                    // (e.g. SIGHUP under nohup); the program inherits that.
                    if !was_ignored {
                        let handler = forward as extern "C" fn(c_int) as libc::sighandler_t;
                        set_action(sig, &action(handler, block, libc::SA_RESTART))?;
                    }
                } else if was_ignored {
                    set_action(sig, &action(libc::SIG_DFL, empty, 0))?;
                }
            }
            Ok(())
        })();
        match result {
            Ok(()) => Ok(saved),
            Err(e) => {
                let _ = saved.restore();
                Err(e)
            }
        }
    }

    /// Puts back the dispositions and the mask. Async-signal-safe, so it
    /// can run in the child between fork and exec.
    fn restore(&self) -> io::Result<()> {
        for (old, &sig) in self.actions.iter().zip(&TOUCHED) {
            set_action(sig, old)?;
        }
        set_mask(libc::SIG_SETMASK, &self.mask)
    }
}

/// Starts `cmd` with the launcher's signal handling around it and waits for
/// it to end.
pub fn spawn_and_wait(mut cmd: Command, pid_out: &mut i32) -> Result<ExitStatus, LaunchError> {
    let saved = Saved::prepare().map_err(LaunchError::Signals)?;
    let child_state = saved;
    // SAFETY: the closure runs in the child between fork and exec; it only
    // calls sigaction and pthread_sigmask (async-signal-safe) on data
    // copied into it, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || child_state.restore());
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = saved.restore();
            return Err(LaunchError::Spawn(e));
        }
    };
    let pid = child.id() as i32;
    *pid_out = pid;
    CHILD.store(pid, Ordering::SeqCst);
    // Signals that arrived meanwhile are delivered (and forwarded) now.
    let _ = set_mask(libc::SIG_SETMASK, &saved.mask);
    let status = wait(&mut child, pid);
    CHILD.store(0, Ordering::SeqCst);
    status
}

fn wait(child: &mut Child, pid: i32) -> Result<ExitStatus, LaunchError> {
    // Wait without reaping first: while the child is a zombie its pid cannot
    // be reused, so a forwarded signal never reaches a stranger.
    loop {
        let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: `info` is a valid siginfo_t buffer for waitid to fill.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(LaunchError::Wait(e));
        }
    }
    CHILD.store(0, Ordering::SeqCst);
    child.wait().map_err(LaunchError::Wait)
}

/// Ends the launcher the way the program ended: killed by `sig`. Restores
/// the signal's default action, makes sure no core file is written for the
/// launcher, unblocks the signal and sends it to itself. Exits with
/// 128 + `sig` if that somehow returns.
pub fn die_by_signal(sig: c_int) -> ! {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    let _ = set_action(sig, &action(libc::SIG_DFL, sigset(&[]), 0));
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `no_core` is a valid rlimit for the duration of the call.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) };
    let _ = set_mask(libc::SIG_UNBLOCK, &sigset(&[sig]));
    // SAFETY: sending a signal to this process; no memory is involved.
    unsafe { libc::kill(libc::getpid(), sig) };
    std::process::exit(128 + sig)
}
