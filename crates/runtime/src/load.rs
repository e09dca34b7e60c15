//! strata's ELF loader: what the kernel's execve does, done in-process so
//! that capture is on before the program's (or ld.so's) first instruction.
//!
//! `start` resolves `#!` chains, maps the executable and its PT_INTERP,
//! builds the initial stack and auxiliary vector as the kernel would, turns
//! capture on and jumps. `check_exec` runs the same checks for a program's
//! execve, so a bad target fails in the calling image with the kernel's errno.

use crate::out;
use crate::sys::{self, Sysno};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use strata_loader::{classify, page_up, plan, Kind, LoadError, Plan, MAX_SCRIPT_DEPTH, PAGE, PROBE_LEN};

pub const PATH_MAX: usize = 4096;
const HEAD_MAX: usize = 64 * 1024;
/// Where the kernel puts a PIE that has an interpreter (before randomization).
const ELF_ET_DYN_BASE: usize = 0x5555_5555_4000;

const AT_NULL: u64 = 0;
const AT_PHDR: u64 = 3;
const AT_PHENT: u64 = 4;
const AT_PHNUM: u64 = 5;
const AT_BASE: u64 = 7;
const AT_FLAGS: u64 = 8;
const AT_ENTRY: u64 = 9;
pub(crate) const AT_EXECFN: u64 = 31;

/// A NUL-terminated path in a fixed buffer (its length first: a short path
/// in a static Path is one page written).
#[repr(C)]
pub struct Path {
    pub len: usize,
    pub buf: [u8; PATH_MAX + 1],
}

impl Path {
    pub const fn new() -> Path {
        Path {
            len: 0,
            buf: [0; PATH_MAX + 1],
        }
    }
    pub fn set(&mut self, s: &[u8]) -> Result<(), isize> {
        if s.len() > PATH_MAX || s.contains(&0) {
            return Err(36); // ENAMETOOLONG
        }
        self.buf[..s.len()].copy_from_slice(s);
        self.buf[s.len()] = 0;
        self.len = s.len();
        Ok(())
    }
    /// Appends `/` and `s` (a name under the directory this path names).
    pub fn join(&mut self, s: &[u8]) -> Result<(), isize> {
        let end = self.len + 1 + s.len();
        if end > PATH_MAX || s.contains(&0) {
            return Err(36); // ENAMETOOLONG
        }
        self.buf[self.len] = b'/';
        self.buf[self.len + 1..end].copy_from_slice(s);
        self.buf[end] = 0;
        self.len = end;
        Ok(())
    }
    /// Replaces the contents with the target of the symbolic link `link`
    /// (a NUL-terminated path); its length.
    pub fn read_link(&mut self, link: &core::ffi::CStr) -> Result<usize, isize> {
        let len = sys::read_link(link, &mut self.buf)?;
        self.len = len;
        Ok(len)
    }
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    pub fn ptr(&self) -> usize {
        self.buf.as_ptr() as usize
    }
    /// The path up to its NUL.
    pub fn cstr(&self) -> &core::ffi::CStr {
        core::ffi::CStr::from_bytes_until_nul(&self.buf).unwrap_or(c"")
    }
}

/// An open executable file.
struct File {
    fd: usize,
    /// Its struct stat (also the site cache's key of its text).
    st: [u64; 18],
}

impl File {
    fn size(&self) -> u64 {
        self.st[6]
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: closing a descriptor we opened.
        unsafe { sys::sc(Sysno::close, &[self.fd]) };
    }
}

const X_OK: usize = 1;
const R_OK: usize = 4;

/// How [`open_exec`] checks permission.
#[derive(Clone, Copy, PartialEq)]
enum Access {
    /// As execve does (X_OK): before the exec, where its errno goes back
    /// to the program ([`check_exec`]).
    Check,
    /// Already checked: the program (and its `#!` chain) in the new image,
    /// whose exec was checked by the image that made it (check_exec) or by
    /// the launcher (cli preflight.rs) with the same rules; the ELF
    /// interpreter only when the image that made it says it checked that
    /// too (`FLAG_INTERP_CHECKED`: check_exec cannot see it when the
    /// program's headers lie past its first page, and the launcher does not
    /// look).
    Checked,
}

/// Opens `path` for execution: a regular file, which the caller may execute.
fn open_exec(path: &core::ffi::CStr, access: Access) -> Result<File, isize> {
    let at = path.as_ptr() as usize;
    if access == Access::Check {
        // SAFETY: `path` is NUL-terminated.
        sys::check(unsafe { sys::sc(Sysno::faccessat, &[sys::AT_FDCWD as usize, at, X_OK, 0]) })?;
    }
    // SAFETY: as above.
    let fd = sys::check(unsafe {
        sys::sc(
            Sysno::openat,
            &[sys::AT_FDCWD as usize, at, sys::O_RDONLY | sys::O_CLOEXEC, 0],
        )
    })?;
    let mut file = File { fd, st: [0; 18] };
    // SAFETY: `st` is large enough for struct stat (144 bytes).
    sys::check(unsafe { sys::sc(Sysno::fstat, &[fd, file.st.as_mut_ptr() as usize]) })?;
    if !regular(&file.st) {
        return Err(sys::EACCES); // directories and devices: EACCES, as execve says
    }
    Ok(file)
}

/// Whether a struct stat is a regular file's (st_mode, after st_dev,
/// st_ino, st_nlink).
fn regular(st: &[u64; 18]) -> bool {
    st[3] & 0o170000 == 0o100000
}

fn pread(f: &File, buf: &mut [u8], off: u64) -> Result<usize, isize> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: writing into our own buffer within its bounds.
        let r = unsafe {
            sys::sc(
                Sysno::pread64,
                &[
                    f.fd,
                    buf.as_mut_ptr() as usize + got,
                    buf.len() - got,
                    off as usize + got,
                ],
            )
        };
        match sys::check(r) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e == sys::EINTR => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads the part of an ELF file that `plan` needs (64 KiB at most: the
/// headers and the PT_INTERP string live there in practice): a page first,
/// then what `head_needed` asks for beyond it. Each page of the buffer read
/// into is a fault at every exec, so only what is needed is read.
fn read_head<'b>(f: &File, buf: &'b mut [u8]) -> Result<&'b [u8], isize> {
    read_head_after(f, buf, 0)
}

/// [`read_head`] when `buf` already holds the file's first `have` bytes.
fn read_head_after<'b>(f: &File, buf: &'b mut [u8], have: usize) -> Result<&'b [u8], isize> {
    let max = HEAD_MAX.min(f.size() as usize).min(buf.len());
    let first = max.min(4096);
    let mut n = if have >= first {
        have.min(max)
    } else {
        pread(f, &mut buf[..first], 0)?
    };
    // Program headers first, then (with them in hand) the interpreter path.
    for _ in 0..2 {
        let want = strata_loader::head_needed(&buf[..n]).min(max);
        if want <= n || n < max.min(4096) {
            break;
        }
        n += pread(f, &mut buf[n..want], n as u64)?;
    }
    Ok(&buf[..n])
}

/// The checks the kernel's execve makes before it gives up the old image:
/// permissions, format, the interpreter chain. `Err(errno)` if it would fail;
/// otherwise whether the ELF interpreter of the program that will run was
/// checked (or it has none): false when its headers lie past the first page,
/// where the new image checks it.
pub fn check_exec(path: &Path, depth: usize) -> Result<bool, isize> {
    let f = open_exec(path.cstr(), Access::Check)?;
    let mut head = [0u8; 4096];
    let n = pread(&f, &mut head, 0)?;
    let head = &head[..n];
    match classify(head).map_err(|e| e.errno() as isize)? {
        Kind::Elf => match plan(head, f.size()) {
            // The name's NUL follows it in `head` (strata_loader::Plan).
            Ok(p) => p
                .interp
                .map_or(Ok(true), |interp| exec_ok(interp.as_ptr() as usize).map(|()| true)),
            // Headers beyond the first page: let the new image decide.
            Err(LoadError::BadHeader(_)) if strata_loader::head_needed(head) > n => Ok(false),
            Err(e) => Err(e.errno() as isize),
        },
        Kind::Script { interp, .. } => {
            if depth >= MAX_SCRIPT_DEPTH {
                return Err(40); // ELOOP
            }
            check_interp(interp, depth + 1)
        }
    }
}

/// The `#!` line's interpreter, checked as a program of its own. Not
/// inlined: check_exec runs at every exec, and every page of a frame is
/// touched at its entry (stack probes).
#[inline(never)]
fn check_interp(interp: &[u8], depth: usize) -> Result<bool, isize> {
    let mut ip = Path::new();
    ip.set(interp)?;
    check_exec(&ip, depth)
}

/// The kernel's checks of `path` (NUL-terminated) as the ELF interpreter:
/// the kernel opens it for execution, so one that is not a regular file, or
/// that may only be read, fails the exec with EACCES; and strata's loader
/// reads it, so one that may only be executed fails the same way here
/// (natively it would run).
fn exec_ok(path: usize) -> Result<(), isize> {
    let mut st = [0u64; 18];
    // SAFETY: `path` is NUL-terminated (callers); `st` has room for struct stat.
    sys::check(unsafe {
        sys::sc(
            Sysno::newfstatat,
            &[sys::AT_FDCWD as usize, path, st.as_mut_ptr() as usize, 0],
        )
    })?;
    if !regular(&st) {
        return Err(sys::EACCES);
    }
    // SAFETY: as above.
    sys::check(unsafe { sys::sc(Sysno::faccessat, &[sys::AT_FDCWD as usize, path, R_OK | X_OK, 0]) }).map(|_| ())
}

#[link_section = ".bss.big.main_head"]
static mut MAIN_HEAD: [u8; HEAD_MAX] = [0; HEAD_MAX];
#[link_section = ".bss.big.interp_head"]
static mut INTERP_HEAD: [u8; HEAD_MAX] = [0; HEAD_MAX];
/// Strings of the `#!` chain: interpreters and their arguments.
#[link_section = ".bss.big.script_lines"]
static mut SCRIPT_LINES: [[u8; PROBE_LEN]; MAX_SCRIPT_DEPTH + 1] = [[0; PROBE_LEN]; MAX_SCRIPT_DEPTH + 1];

/// Canonical path of the ELF file being run (what /proc/self/exe names),
/// worked out the first time it is asked for ([`exe`]): finding it takes
/// a lookup in /proc, whose entries for a new process the kernel builds on
/// demand, and most programs never ask.
#[link_section = ".bss.big.exe"]
static mut EXE: Path = Path::new();
/// The ELF file as the loader opened it (absolute), and its device and
/// inode, from which [`exe`] finds the canonical name. At start, the path
/// being loaded (the program, or the interpreter of its `#!` chain): a
/// static, not on the start-up's stack, whose every page a frame spans is
/// touched at its entry (stack probes), while a path uses one page here;
/// and not in `.bss`, all of whose pages each start touches.
#[link_section = ".bss.big.exe_opened"]
static mut EXE_OPENED: Path = Path::new();
static EXE_ID: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// EXE's state: not worked out yet, being written, ready.
static EXE_STATE: AtomicU32 = AtomicU32::new(EXE_UNKNOWN);
const EXE_UNKNOWN: u32 = 0;
const EXE_WRITING: u32 = 1;
const EXE_READY: u32 = 2;

/// Canonical path of the ELF file being run. The first call opens the file
/// the loader opened again (O_PATH) and asks the kernel for its name; if the
/// file has been removed or replaced since, the answer is the path the
/// loader opened followed by ` (deleted)`, as the kernel says of a removed
/// executable (a program renamed elsewhere since would show its new name
/// natively). An answer is kept once found; when the lookup fails for
/// another reason (no descriptor free, ...), the path the loader opened is
/// the answer this time and the next call tries again.
///
/// No lock: the name is worked out on the caller's stack and copied in by
/// whichever caller claims EXE first; one that finds it being written
/// waits a little, then answers with the opened path (the writer may be a
/// vfork child killed meanwhile, or a thread a fork left behind).
pub fn exe() -> &'static Path {
    // SAFETY: written once, before the opening start is over.
    let opened = unsafe { &*core::ptr::addr_of!(EXE_OPENED) };
    for _ in 0..100_000 {
        match EXE_STATE.load(Ordering::Acquire) {
            // SAFETY: complete and no longer written once ready.
            EXE_READY => return unsafe { &*core::ptr::addr_of!(EXE) },
            EXE_UNKNOWN => {
                let mut name = Path::new();
                if !find_exe(&mut name, opened) {
                    return opened;
                }
                if EXE_STATE
                    .compare_exchange(EXE_UNKNOWN, EXE_WRITING, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    // SAFETY: the one writer, by the state's claim; readers
                    // wait for EXE_READY.
                    unsafe { *core::ptr::addr_of_mut!(EXE) = name };
                    EXE_STATE.store(EXE_READY, Ordering::Release);
                }
            }
            _ => core::hint::spin_loop(),
        }
    }
    opened
}

/// In a child of fork: a name another thread was writing is worked out again.
pub fn after_fork() {
    // (Read first: a compare-exchange writes the page even when it fails.)
    if EXE_STATE.load(Ordering::Relaxed) == EXE_WRITING {
        EXE_STATE.store(EXE_UNKNOWN, Ordering::Relaxed);
    }
}

/// Works the name out into `out`; false if the lookup failed for a reason
/// that says nothing about the file (try again later).
fn find_exe(out: &mut Path, opened: &Path) -> bool {
    const O_PATH: usize = 0o10000000;
    // SAFETY: `opened` is NUL-terminated.
    let fd = unsafe {
        sys::sc(
            Sysno::openat,
            &[sys::AT_FDCWD as usize, opened.ptr(), O_PATH | sys::O_CLOEXEC],
        )
    };
    let gone = if fd >= 0 {
        let fd = fd as usize;
        let mut st = [0u64; 18];
        // SAFETY: `st` is large enough for struct stat.
        let stat_ok = unsafe { sys::sc(Sysno::fstat, &[fd, st.as_mut_ptr() as usize]) } == 0;
        let same = stat_ok && st[0] == EXE_ID[0].load(Ordering::Relaxed) && st[1] == EXE_ID[1].load(Ordering::Relaxed);
        let named = same && fd_name(fd, out).is_ok();
        // SAFETY: closing the descriptor opened above.
        unsafe { sys::sc(Sysno::close, &[fd]) };
        if named {
            return true;
        }
        if !stat_ok || same {
            return false;
        }
        // Another file has the name now: ours was removed or replaced.
        true
    } else {
        fd == -sys::ENOENT || fd == -sys::ENOTDIR
    };
    if !gone {
        return false;
    }
    // The kernel would give the canonical name; with the file gone, `.`,
    // `..` and doubled slashes are resolved by the text alone.
    let deleted = b" (deleted)";
    let mut n = 0;
    for comp in opened.bytes().split(|&b| b == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => n = out.buf[..n].iter().rposition(|&b| b == b'/').unwrap_or(0),
            c if n + 1 + c.len() + deleted.len() <= PATH_MAX => {
                out.buf[n] = b'/';
                out.buf[n + 1..n + 1 + c.len()].copy_from_slice(c);
                n += 1 + c.len();
            }
            _ => break,
        }
    }
    if n == 0 {
        out.buf[0] = b'/';
        n = 1;
    }
    out.buf[n..n + deleted.len()].copy_from_slice(deleted);
    out.len = n + deleted.len();
    out.buf[out.len] = 0;
    true
}

/// Records the ELF file the loader opened, `f`, whose path is in
/// EXE_OPENED (relative to the working directory unless absolute: made
/// absolute here), for [`exe`].
fn note_exe(f: &File) {
    EXE_ID[0].store(f.st[0], Ordering::Relaxed); // st_dev
    EXE_ID[1].store(f.st[1], Ordering::Relaxed); // st_ino
                                                 // SAFETY: single-threaded start.
    let o = unsafe { &mut *core::ptr::addr_of_mut!(EXE_OPENED) };
    if o.bytes().first() != Some(&b'/') {
        make_absolute(o);
    }
}

/// `path`, relative, made absolute (the current directory before it).
/// Unchanged if that fails. Not inlined: the copy's buffer stays off the
/// start's frame when the program's path is absolute, as it mostly is.
#[inline(never)]
fn make_absolute(path: &mut Path) {
    let mut rel = Path::new();
    if rel.set(path.bytes()).is_err() {
        return;
    }
    // SAFETY: getcwd into our own buffer, its size passed.
    let r = unsafe { sys::sc(Sysno::getcwd, &[path.buf.as_mut_ptr() as usize, PATH_MAX]) };
    // getcwd's length counts the NUL.
    let Ok(n) = sys::check(r).map(|n| n.saturating_sub(1)) else {
        let _ = path.set(rel.bytes());
        return;
    };
    path.len = n;
    let rel = rel.bytes();
    if path.join(rel.strip_prefix(b"./").unwrap_or(rel)).is_err() {
        let _ = path.set(rel);
    }
}

fn fail(path: &[u8], e: isize) -> ! {
    out::file_error(path, out::strerror(e));
    sys::exit_group(if e == sys::ENOENT || e == sys::ENOTDIR {
        127
    } else {
        126
    });
}

fn fail_load(path: &[u8], e: LoadError) -> ! {
    out::file_error(path, e.message());
    sys::exit_group(126);
}

fn random_pair() -> [usize; 2] {
    let mut v = [0usize; 2];
    // SAFETY: getrandom writes 16 bytes into `v`.
    unsafe { sys::sc(Sysno::getrandom, &[v.as_mut_ptr() as usize, 16, 0]) };
    v
}

fn randomized() -> bool {
    // SAFETY: personality(0xffffffff) only queries.
    let p = unsafe { sys::sc(Sysno::personality, &[0xffff_ffff]) };
    p >= 0 && p & 0x0040000 == 0 // ADDR_NO_RANDOMIZE
}

/// Room left free below an interpreter strata maps.
const BELOW_ROOM: usize = 256 << 10;

/// Maps an ELF file's segments; returns the load bias.
fn map_elf(f: &File, p: &Plan, hint: usize) -> Result<usize, isize> {
    let lo = p.lo() as usize;
    let span = (p.hi() - p.lo()) as usize;
    let segs = p.segments();
    // The first segment's own mapping holds the whole span, as the kernel's
    // and ld.so's do (one call fewer than a reservation and the mapping over
    // it): when it comes from the file, is not executable (a text image or a
    // scan may replace that one) and the segments follow one another
    // without sharing a page. The later ones are mapped over it; a hole
    // between two is made inaccessible. Not for an interpreter placed where
    // the kernel chooses: it needs the room below kept free (below), which
    // the kernel's choice alone leaves too small about once in 130
    // starts (a gap it fills almost exactly), and its text image is then of
    // no use.
    let spans = !(p.pie && hint == 0)
        && segs
            .first()
            .is_some_and(|s| s.filesz > 0 && (s.prot as usize) & sys::PROT_EXEC == 0 && s.map_start() == p.lo())
        && segs.windows(2).all(|w| w[1].map_start() >= w[0].map_end());
    let base = if spans {
        let s = &segs[0];
        let off = (s.offset - s.vaddr % PAGE) as usize;
        let (addr, flags) = if p.pie {
            (hint, sys::MAP_PRIVATE)
        } else {
            (lo, sys::MAP_PRIVATE | sys::MAP_FIXED_NOREPLACE)
        };
        // SAFETY: a new private file mapping where nothing is (the kernel's
        // choice, or a fixed range it may not replace).
        let r = sys::check(unsafe { sys::sc(Sysno::mmap, &[addr, span, s.prot as usize, flags, f.fd, off]) })?;
        if !p.pie && r != lo {
            return Err(sys::ENOMEM);
        }
        r
    } else if p.pie {
        // Where the kernel chooses (the interpreter), the space right below
        // is left free: a text image's pool goes there (textimage.rs), and
        // a gap the kernel filled exactly would have none.
        let room = if hint == 0 { BELOW_ROOM } else { 0 };
        // SAFETY: a fresh PROT_NONE reservation at a kernel-chosen address.
        let r = sys::check(unsafe {
            sys::sc(
                Sysno::mmap,
                &[
                    hint,
                    span + room,
                    0,
                    sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_NORESERVE,
                    usize::MAX,
                    0,
                ],
            )
        })?;
        if room != 0 {
            // SAFETY: the low end of the reservation we just made.
            unsafe { sys::sc(Sysno::munmap, &[r, room]) };
        }
        r + room
    } else {
        // SAFETY: reserving the fixed range the executable needs, failing
        // rather than replacing anything already there.
        let r = sys::check(unsafe {
            sys::sc(
                Sysno::mmap,
                &[
                    lo,
                    span,
                    0,
                    sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_FIXED_NOREPLACE | sys::MAP_NORESERVE,
                    usize::MAX,
                    0,
                ],
            )
        })?;
        if r != lo {
            return Err(sys::ENOMEM);
        }
        r
    };
    let bias = base.wrapping_sub(lo);
    let mut covered = base;
    for (i, s) in segs.iter().enumerate() {
        let start = bias + s.map_start() as usize;
        if spans && start > covered {
            // SAFETY: a hole inside the first segment's mapping, which is ours.
            sys::check(unsafe { sys::sc(Sysno::mprotect, &[covered, start - covered, 0]) })?;
        }
        covered = bias + s.map_end() as usize;
        let pageoff = (s.vaddr % PAGE) as usize;
        let file_end = bias + (s.vaddr + s.filesz) as usize;
        let prot = s.prot as usize;
        if s.filesz > 0 && !(spans && i == 0) {
            let len = page_up(pageoff as u64 + s.filesz) as usize;
            let off = s.offset as usize - pageoff;
            let exec = prot & (sys::PROT_EXEC | sys::PROT_READ) == sys::PROT_EXEC | sys::PROT_READ;
            // The session's text image in place of the file's text, when
            // it has one (dispatch.rs mmap, for the libraries ld.so maps).
            let tried = if exec {
                crate::rewrite::map_image_in_place(start, len, prot, f.fd, off, Some(&f.st))
            } else {
                None
            };
            if !tried.is_some_and(|t| t.mapped()) {
                // SAFETY: mapping inside our own reservation.
                sys::check(unsafe {
                    sys::sc(
                        Sysno::mmap,
                        &[start, len, prot, sys::MAP_PRIVATE | sys::MAP_FIXED, f.fd, off],
                    )
                })?;
                if exec {
                    crate::rewrite::scan_mapping(start, len, prot, f.fd, off, tried);
                }
            }
        }
        if s.memsz > s.filesz {
            let anon_start = if s.filesz > 0 {
                page_up(file_end as u64) as usize
            } else {
                start
            };
            if s.filesz > 0 && !file_end.is_multiple_of(PAGE as usize) {
                // Zero the rest of the last file page (the start of .bss).
                let n = anon_start - file_end;
                if prot & sys::PROT_WRITE == 0 {
                    // SAFETY: our own mapping, made writable for the zeroing.
                    unsafe { sys::sc(Sysno::mprotect, &[file_end & !4095, 4096, prot | sys::PROT_WRITE]) };
                }
                // SAFETY: [file_end, anon_start) is inside the page just mapped.
                unsafe { core::ptr::write_bytes(file_end as *mut u8, 0, n) };
                if prot & sys::PROT_WRITE == 0 {
                    // SAFETY: restoring the segment's protection.
                    unsafe { sys::sc(Sysno::mprotect, &[file_end & !4095, 4096, prot]) };
                }
            }
            let anon_end = bias + s.map_end() as usize;
            if anon_end > anon_start {
                // SAFETY: zero pages inside our own reservation.
                sys::check(unsafe {
                    sys::sc(
                        Sysno::mmap,
                        &[
                            anon_start,
                            anon_end - anon_start,
                            prot,
                            sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_FIXED,
                            usize::MAX,
                            0,
                        ],
                    )
                })?;
            }
        }
    }
    Ok(bias)
}

/// The kernel's name for open descriptor `fd` (the target of
/// /proc/self/fd/N), into `out`; its length.
pub fn fd_name(fd: usize, out: &mut Path) -> Result<usize, isize> {
    let mut link = [0u8; 40];
    let prefix = b"/proc/self/fd/";
    link[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 20];
    let (mut d, mut v) = (0, fd);
    loop {
        digits[d] = b'0' + (v % 10) as u8;
        d += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for (i, &c) in digits[..d].iter().rev().enumerate() {
        link[prefix.len() + i] = c;
    }
    // `link` is NUL-terminated: zeroed beyond the digits.
    let link = core::ffi::CStr::from_bytes_until_nul(&link).map_err(|_| sys::EINVAL)?;
    out.read_link(link)
}

/// What the initial stack needs.
pub struct StartInfo<'a> {
    /// The kernel's initial stack pointer for strata-rt.
    pub kernel_sp: usize,
    pub argc: usize,
    pub argv: *const usize,
    pub envp: *const usize,
    pub auxv: *const u64,
    /// Index into envp of the launch variable, left out of the program's env.
    pub skip_env: Option<usize>,
    pub program: &'a [u8],
}

/// Program break emulation state, set by the loader.
pub static mut BRK_START: usize = 0;
pub static mut BRK_CUR: usize = 0;

/// What the start needs of the program once it is mapped.
struct Program {
    entry: usize,
    phdr: usize,
    phnum: usize,
    /// Its ELF interpreter's name, in MAIN_HEAD.
    interp: Option<&'static [u8]>,
    brk_base: usize,
}

/// Loads the program and runs it. Never returns.
///
/// # Safety
/// Called once on the main thread at start, with the kernel's stack intact.
pub unsafe fn start(si: &StartInfo) -> ! {
    // SAFETY: single-threaded start; the static buffers are used only here.
    let path = unsafe { &mut *core::ptr::addr_of_mut!(EXE_OPENED) };
    if let Err(e) = path.set(si.program) {
        fail(si.program, e);
    }
    // Resolve the #! chain: `prefix` collects [interp, arg] pairs, outermost
    // first, as the kernel's binfmt_script prepends them.
    let mut prefix: [(usize, usize); 2 * (MAX_SCRIPT_DEPTH + 1)] = [(0, 0); 2 * (MAX_SCRIPT_DEPTH + 1)];
    let mut nprefix = 0usize;
    let mut depth = 0usize;
    // SAFETY: single-threaded start; the static buffers are used only here.
    let main_head = unsafe { &mut *core::ptr::addr_of_mut!(MAIN_HEAD) };
    // SAFETY: as above.
    let lines = unsafe { &mut *core::ptr::addr_of_mut!(SCRIPT_LINES) };
    let (f, have) = loop {
        let f = open_exec(path.cstr(), Access::Checked).unwrap_or_else(|e| {
            if depth > 0 && e == sys::ENOENT {
                out::file_error(si.program, "bad interpreter: No such file or directory");
                sys::exit_group(127);
            }
            fail(path.bytes(), e)
        });
        // The first page: enough to tell a script from an ELF file, and
        // for most ELF files all of their headers.
        let want = (f.size() as usize).clamp(PROBE_LEN, 4096);
        let n = pread(&f, &mut main_head[..want], 0).unwrap_or_else(|e| fail(path.bytes(), e));
        match classify(&main_head[..n.min(PROBE_LEN)]) {
            Ok(Kind::Elf) => break (f, n),
            Ok(Kind::Script { interp, arg }) => {
                if depth == MAX_SCRIPT_DEPTH {
                    fail(si.program, 40);
                }
                // Keep the line's strings; prepend [interp, arg].
                let line = &mut lines[depth];
                let (il, al) = (interp.len(), arg.map_or(0, |a| a.len()));
                line[..il].copy_from_slice(interp);
                line[il] = 0;
                let mut add = [(line.as_ptr() as usize, il), (0, 0)];
                let mut k = 1;
                if let Some(a) = arg {
                    line[il + 1..il + 1 + al].copy_from_slice(a);
                    line[il + 1 + al] = 0;
                    add[1] = (line.as_ptr() as usize + il + 1, al);
                    k = 2;
                }
                prefix.copy_within(0..nprefix, k);
                prefix[..k].copy_from_slice(&add[..k]);
                nprefix += k;
                depth += 1;
                let line = &lines[depth - 1];
                if let Err(e) = path.set(&line[..il]) {
                    fail(si.program, e);
                }
            }
            Err(e) => fail_load(path.bytes(), e),
        }
    };
    // What the rest needs of the program's plan, which is gone before the
    // interpreter's is made (the two would otherwise lie side by side on
    // the start's stack, a page deeper for every call below).
    let (prog, rand) = {
        let head = read_head_after(&f, main_head, have).unwrap_or_else(|e| fail(path.bytes(), e));
        let p = plan(head, f.size()).unwrap_or_else(|e| fail_load(path.bytes(), e));
        let rnd = randomized();
        // Both random offsets (the interpreter's base, the program break)
        // from one getrandom.
        let rand = if rnd { random_pair() } else { [0, 0] };
        let hint = if p.interp.is_some() {
            ELF_ET_DYN_BASE + ((rand[0] & ((1 << 28) - 1)) << 12)
        } else {
            0
        };
        let bias = map_elf(&f, &p, hint).unwrap_or_else(|e| fail(path.bytes(), e));
        // (After the messages above: they name the program as given.)
        note_exe(&f);
        // The program break starts after the executable (randomized like
        // the kernel's arch_randomize_brk); a static PIE gets it where the
        // kernel puts a PIE's.
        let brk_base = if p.pie && p.interp.is_none() {
            ELF_ET_DYN_BASE
        } else {
            page_up(bias.wrapping_add(p.hi() as usize) as u64) as usize
        };
        let prog = Program {
            entry: bias.wrapping_add(p.entry as usize),
            phdr: p.phdr_vaddr.map_or(0, |v| bias.wrapping_add(v as usize)),
            phnum: p.phnum as usize,
            interp: p.interp,
            brk_base,
        };
        (prog, rand)
    };
    let mut entry = prog.entry;
    let mut interp_base = 0usize;
    if let Some(interp) = prog.interp {
        // SAFETY: strata_loader's Plan guarantees a NUL right after the
        // name, in the header, which stays as it is until the start is over.
        let ip = unsafe { core::ffi::CStr::from_ptr(interp.as_ptr().cast()) };
        // (Checked already by the image that exec'd this one, when it says
        // so: check_exec.)
        let access = if crate::config::flags() & strata_proto::FLAG_INTERP_CHECKED != 0 {
            Access::Checked
        } else {
            Access::Check
        };
        let fi = open_exec(ip, access).unwrap_or_else(|e| fail(interp, e));
        // SAFETY: single-threaded start.
        let ih = unsafe { &mut *core::ptr::addr_of_mut!(INTERP_HEAD) };
        let ihead = read_head(&fi, ih).unwrap_or_else(|e| fail(interp, e));
        let ipl = plan(ihead, fi.size()).unwrap_or_else(|e| fail_load(interp, e));
        let ibias = map_elf(&fi, &ipl, 0).unwrap_or_else(|e| fail(interp, e));
        interp_base = ibias.wrapping_add(ipl.lo() as usize);
        entry = ibias.wrapping_add(ipl.entry as usize);
    }
    drop(f);

    let brk = prog.brk_base + ((rand[1] & ((1 << 13) - 1)) << 12);
    // SAFETY: single-threaded start.
    unsafe {
        BRK_START = brk;
        BRK_CUR = brk;
    }

    // comm is the basename of the path given to execve.
    let name = si.program.rsplit(|&c| c == b'/').next().unwrap_or(si.program);
    let mut comm = [0u8; 16];
    let n = name.len().min(15);
    comm[..n].copy_from_slice(&name[..n]);
    // SAFETY: `comm` is NUL-terminated.
    unsafe { sys::sc(Sysno::prctl, &[sys::PR_SET_NAME, comm.as_ptr() as usize]) };

    // SAFETY: building the stack below our own frames, in the stack mapping.
    let sp = unsafe {
        build_stack(
            si,
            &prefix[..nprefix],
            depth > 0,
            prog.phdr,
            prog.phnum,
            interp_base,
            prog.entry,
        )
    };

    let mut rl = [0u64; 2];
    // SAFETY: getrlimit(RLIMIT_STACK) into a local.
    unsafe { sys::sc(Sysno::getrlimit, &[3, rl.as_mut_ptr() as usize]) };
    sys::set_main_stack(si.kernel_sp, (rl[0] as usize).min(1 << 30));
    crate::capture::enable_for_main_thread();
    // SAFETY: the program's image is mapped and its stack built.
    unsafe { crate::asm::strata_enter_program(sp, entry) }
}

/// Builds argc, argv, envp and auxv for the program; returns its stack pointer.
///
/// # Safety
/// Writes below `si.kernel_sp`, which must be unused stack: the start-up
/// runs on strata's own stack (asm.rs `_start`), so the program's vectors go
/// right under the kernel's, in pages the kernel already touched.
unsafe fn build_stack(
    si: &StartInfo,
    prefix: &[(usize, usize)],
    script: bool,
    phdr: usize,
    phnum: usize,
    base: usize,
    entry: usize,
) -> usize {
    let mut cur = si.kernel_sp & !15;
    let mut push_str = |s: &[u8]| -> usize {
        cur -= s.len() + 1;
        // SAFETY: stack memory below our frames (contract).
        unsafe {
            core::ptr::copy_nonoverlapping(s.as_ptr(), cur as *mut u8, s.len());
            *((cur + s.len()) as *mut u8) = 0;
        }
        cur
    };
    let execfn = push_str(si.program);
    let mut pre = [0usize; 2 * (MAX_SCRIPT_DEPTH + 1) + 1];
    let mut npre = 0;
    for &(p, l) in prefix {
        // SAFETY: the prefix strings live in static buffers of this length.
        pre[npre] = push_str(unsafe { core::slice::from_raw_parts(p as *const u8, l) });
        npre += 1;
    }
    if script {
        pre[npre] = execfn;
        npre += 1;
    }
    cur &= !15;
    // SAFETY: reading the kernel's vectors, NULL/AT_NULL terminated.
    unsafe {
        let old_argv = core::slice::from_raw_parts(si.argv, si.argc);
        let argv_rest = if script {
            old_argv.get(1..).unwrap_or(&[])
        } else {
            old_argv
        };
        let mut nenv = 0;
        while *si.envp.add(nenv) != 0 {
            nenv += 1;
        }
        let mut naux = 0;
        while *si.auxv.add(2 * naux) != AT_NULL {
            naux += 1;
        }
        let argc = npre + argv_rest.len();
        let env_kept = nenv - usize::from(si.skip_env.is_some());
        let words = 1 + argc + 1 + env_kept + 1 + 2 * (naux + 1);
        let sp = (cur - words * 8) & !15;
        let mut w = sp as *mut usize;
        let mut put = |v: usize| {
            *w = v;
            w = w.add(1);
        };
        put(argc);
        for &p in &pre[..npre] {
            put(p);
        }
        for &p in argv_rest {
            put(p);
        }
        put(0);
        for i in 0..nenv {
            if Some(i) != si.skip_env {
                put(*si.envp.add(i));
            }
        }
        put(0);
        for i in 0..naux {
            let ty = *si.auxv.add(2 * i);
            let val = *si.auxv.add(2 * i + 1) as usize;
            let val = match ty {
                AT_PHDR => phdr,
                AT_PHENT => 56,
                AT_PHNUM => phnum,
                AT_BASE => base,
                AT_FLAGS => 0,
                AT_ENTRY => entry,
                AT_EXECFN => execfn,
                _ => val,
            };
            put(ty as usize);
            put(val);
        }
        put(AT_NULL as usize);
        put(0);
        let auxv_start = sp + 8 * (1 + argc + 1 + env_kept + 1);
        crate::procfs::record_auxv(auxv_start, 16 * (naux + 1));
        // The environment strings the kernel laid out, minus the launch
        // variable (always the last one).
        if env_kept > 0 {
            let first = *si.envp.add(usize::from(si.skip_env == Some(0)));
            let last_kept = (0..nenv)
                .rev()
                .find(|&i| Some(i) != si.skip_env)
                .map(|i| *si.envp.add(i));
            if let Some(last) = last_kept {
                let end = last + crate::cstr(last as *const u8).len() + 1;
                crate::procfs::record_environ(first, end.saturating_sub(first));
            }
        }
        sp
    }
}
