//! Extension objects: strata's own loader for `strata run --ext ./libname.so`.
//!
//! An extension object is a shared object built without libc. strata maps it
//! into the process itself (there is no ld.so to ask, and the program's may
//! not even exist). What such an object may be and hold, and every check on
//! it, is `strata_loader::extobj`, which the launcher
//! (`strata_cli::extobj::check`) uses too, so a bad object is normally
//! refused there, before the program starts, with the same reasons. This
//! module does what touches memory: it maps the file read-only for those
//! checks, maps the segments, applies the relocations the checks list, and
//! calls the initializers and `strata_ext_init` (a [`strata_abi::InitFn`]).
//! Undefined symbols resolve to strata's own `memcpy`, `memmove`, `memset`,
//! `memcmp`, `bcmp` and `strlen` (`mem.rs`).
//!
//! Nothing allocates. No page is ever writable and executable at once:
//! segments with relocations or a partial last page are mapped read-write
//! (without execute), fixed up, then given their final protection.

use crate::sys::{self, Sysno};
use core::fmt::{self, Write};
use strata_abi::{ExtDesc, Host, InitFn};
use strata_loader::extobj::{ExtObj, Problem, MAX_SEGMENTS};
use strata_loader::{page_up, Segment, PAGE};

/// Size of the error buffer `strata_ext_init` gets.
const ERR_LEN: usize = 256;

/// Address of strata's implementation of `name`, for an undefined symbol
/// (one of `strata_abi::HOST_SYMBOLS`).
fn provided(name: &[u8]) -> Option<u64> {
    let a = match name {
        b"memcpy" => crate::mem::memcpy as *const () as usize,
        b"memmove" => crate::mem::memmove as *const () as usize,
        b"memset" => crate::mem::memset as *const () as usize,
        b"memcmp" => crate::mem::memcmp as *const () as usize,
        b"bcmp" => crate::mem::bcmp as *const () as usize,
        b"strlen" => crate::mem::strlen as *const () as usize,
        _ => return None,
    };
    Some(a as u64)
}

/// Why an object was refused; written into the caller's buffer.
enum Error<'a> {
    /// A system call failed: what strata was doing, and the errno.
    Sys(&'static str, isize),
    /// The whole message.
    Bad(&'static str),
    /// What is wrong with the file's contents.
    Problem(Problem),
    InitFailed(&'a [u8]),
}

impl From<Problem> for Error<'_> {
    fn from(p: Problem) -> Self {
        Error::Problem(p)
    }
}

impl fmt::Display for Error<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Sys(what, e) => write!(f, "cannot {what}: {}", crate::out::strerror(*e)),
            Error::Bad(why) => f.write_str(why),
            Error::Problem(p) => write!(f, "{p}"),
            Error::InitFailed(msg) => {
                f.write_str("strata_ext_init failed: ")?;
                if msg.is_empty() {
                    return f.write_str("(no message)");
                }
                // The extension's text: its valid UTF-8 prefix, one line.
                let s = match core::str::from_utf8(msg) {
                    Ok(s) => s,
                    Err(e) => core::str::from_utf8(&msg[..e.valid_up_to()]).unwrap_or(""),
                };
                for c in s.chars() {
                    f.write_char(if c.is_control() { ' ' } else { c })?;
                }
                Ok(())
            }
        }
    }
}

/// The message writer: whole characters only, truncated at the buffer's end.
struct Msg<'b> {
    buf: &'b mut [u8; 256],
    len: usize,
}

impl Write for Msg<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            let mut tmp = [0u8; 4];
            let b = c.encode_utf8(&mut tmp).as_bytes();
            if self.len + b.len() > self.buf.len() {
                return Err(fmt::Error);
            }
            self.buf[self.len..self.len + b.len()].copy_from_slice(b);
            self.len += b.len();
        }
        Ok(())
    }
}

fn report(err: &mut [u8; 256], e: &Error) -> usize {
    let mut m = Msg { buf: err, len: 0 };
    let _ = write!(m, "{e}");
    m.len
}

const fn page_down(v: u64) -> u64 {
    v & !(PAGE - 1)
}

/// A descriptor closed on drop.
struct Fd(usize);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: closing a descriptor this module opened.
        unsafe { sys::sc(Sysno::close, &[self.0]) };
    }
}

/// A mapping removed on drop unless kept.
struct Mapping {
    addr: usize,
    len: usize,
    keep: bool,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if !self.keep {
            // SAFETY: unmapping a range this module mapped; nothing refers
            // to it any more.
            unsafe { sys::sc(Sysno::munmap, &[self.addr, self.len]) };
        }
    }
}

/// Loads the extension object at `path`, runs its initializers and its
/// `strata_ext_init` with `host` and `args`, which fills `out`.
///
/// On failure the reason (one line of UTF-8 text, without the file's name)
/// is written into `err` and its length returned.
pub fn load(
    path: &[u8],
    host: &'static Host,
    args: &[u8],
    out: &mut ExtDesc,
    err: &mut [u8; 256],
) -> Result<(), usize> {
    let mut p = crate::load::Path::new();
    if let Err(e) = p.set(path) {
        return Err(report(err, &Error::Sys("open", e)));
    }
    // SAFETY: `p` is NUL-terminated.
    let r = unsafe {
        sys::sc(
            Sysno::openat,
            &[sys::AT_FDCWD as usize, p.ptr(), sys::O_RDONLY | sys::O_CLOEXEC, 0],
        )
    };
    let fd = match sys::check(r) {
        Ok(fd) => Fd(fd),
        Err(e) => return Err(report(err, &Error::Sys("open", e))),
    };
    let mut st = [0u64; 18];
    // SAFETY: `st` is large enough for struct stat (144 bytes).
    let r = unsafe { sys::sc(Sysno::fstat, &[fd.0, st.as_mut_ptr() as usize]) };
    if let Err(e) = sys::check(r) {
        return Err(report(err, &Error::Sys("stat", e)));
    }
    let mode = st[3] as u32 & 0o170000;
    if mode == 0o040000 {
        return Err(report(err, &Error::Sys("load", 21))); // EISDIR
    }
    if mode != 0o100000 {
        return Err(report(err, &Problem::NotRegular.into()));
    }
    let size = st[6] as usize;
    if size < 64 {
        return Err(report(err, &Error::Bad("not an ELF shared object (too short)")));
    }
    // SAFETY: a fresh read-only private mapping of our descriptor at a
    // kernel-chosen address.
    let r = unsafe { sys::sc(Sysno::mmap, &[0, size, sys::PROT_READ, sys::MAP_PRIVATE, fd.0, 0]) };
    let file = match sys::check(r) {
        Ok(addr) => Mapping {
            addr,
            len: size,
            keep: false,
        },
        Err(e) => return Err(report(err, &Error::Sys("map", e))),
    };
    // SAFETY: the mapping is `size` readable bytes and stays until `file` is
    // dropped, after the last use of `data` (the error message included). A
    // file shrunk by someone else meanwhile would fault (SIGBUS): extension
    // objects are not expected to change while strata starts.
    let data = unsafe { core::slice::from_raw_parts(file.addr as *const u8, size) };
    let mut ext_err = [0u8; ERR_LEN];
    let r = load_from(data, &fd, host, args, out, &mut ext_err);
    r.map_err(|e| report(err, &e))
}

fn load_from<'a>(
    data: &'a [u8],
    fd: &Fd,
    host: &'static Host,
    args: &[u8],
    out: &mut ExtDesc,
    ext_err: &'a mut [u8; ERR_LEN],
) -> Result<(), Error<'a>> {
    let o = ExtObj::parse(data)?;
    let checked = o.check()?;
    let segs = o.segments();
    let (Some(first), Some(last)) = (segs.first(), segs.last()) else {
        return Err(Problem::Malformed("no loadable segment").into());
    };

    let lo = first.map_start();
    let span = (last.map_end() - lo) as usize;
    // SAFETY: a fresh PROT_NONE reservation at a kernel-chosen address.
    let r = unsafe {
        sys::sc(
            Sysno::mmap,
            &[
                0,
                span,
                0,
                sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_NORESERVE,
                usize::MAX,
                0,
            ],
        )
    };
    let mut image = Mapping {
        addr: sys::check(r).map_err(|e| Error::Sys("reserve memory for the object", e))?,
        len: span,
        keep: false,
    };
    let base = (image.addr as u64).wrapping_sub(lo);

    // Map: segments that relocations write to are read-write now (never
    // executable).
    let mut load_prot = [0usize; MAX_SEGMENTS];
    for (i, s) in segs.iter().enumerate() {
        load_prot[i] = if checked.relocated[i] || s.partial_page() {
            sys::PROT_READ | sys::PROT_WRITE
        } else {
            s.prot as usize
        };
        map_segment(fd, base, s, load_prot[i])?;
    }
    o.relocations(|r| -> Result<(), Error<'a>> {
        let value = r.value(base, provided)?;
        // SAFETY: `relocations` checked that [offset, offset + 8) lies in
        // segment `r.segment`, which `check` listed as relocated, so it is
        // mapped read-write in our reservation; no one else knows about
        // this memory yet.
        unsafe { core::ptr::write_unaligned((base + r.offset) as usize as *mut u64, value) };
        Ok(())
    })?;
    for (i, s) in segs.iter().enumerate() {
        if load_prot[i] != s.prot as usize {
            protect(base + s.map_start(), s.map_end() - s.map_start(), s.prot as usize)?;
        }
    }
    if let Some((a, n)) = o.relro() {
        let (start, end) = (page_down(base + a), page_down(base + a + n));
        if end > start {
            protect(start, end - start, sys::PROT_READ)?;
        }
    }

    // The initializers, checked before any of them runs.
    let mut inits = [0u64; 64];
    let mut ninits = 0;
    if let Some(a) = checked.init {
        inits[0] = base + a;
        ninits = 1;
    }
    if let Some((a, n)) = checked.init_array {
        for k in 0..n {
            // SAFETY: [a, a + 8n) lies in a readable, mapped and relocated
            // segment (checked by `check`).
            let f = unsafe { core::ptr::read_unaligned((base + a + 8 * k) as usize as *const u64) };
            if f == 0 || f == u64::MAX {
                continue;
            }
            if !o.in_code(f.wrapping_sub(base)) {
                return Err(
                    Problem::Malformed("an initializer (DT_INIT_ARRAY) is not in an executable segment").into(),
                );
            }
            if ninits == inits.len() {
                return Err(Error::Bad("has more than 64 initializers"));
            }
            inits[ninits] = f;
            ninits += 1;
        }
    }

    // From here on the object's code runs: it stays mapped whatever happens.
    image.keep = true;
    for &f in &inits[..ninits] {
        // SAFETY: `f` lies in an executable segment of the object, which is
        // mapped, relocated and protected; initializers take (argc, argv,
        // envp) from ld.so, or nothing: 0 and null pointers fit both.
        unsafe {
            let f = core::mem::transmute::<usize, extern "C" fn(i32, *const usize, *const usize)>(f as usize);
            f(0, core::ptr::null(), core::ptr::null());
        }
    }
    // SAFETY: `strata_ext_init` lies in an executable segment of the loaded
    // object (checked by `check`), and an extension object's
    // `strata_ext_init` is an `InitFn` by the ABI's definition.
    let entry = unsafe { core::mem::transmute::<usize, InitFn>((base + checked.entry) as usize) };
    let rc = entry(host, args.as_ptr(), args.len(), out, ext_err.as_mut_ptr(), ERR_LEN);
    if rc != 0 {
        let n = ext_err.iter().position(|&c| c == 0).unwrap_or(ERR_LEN);
        return Err(Error::InitFailed(&ext_err[..n]));
    }
    Ok(())
}

fn protect(addr: u64, len: u64, prot: usize) -> Result<(), Error<'static>> {
    // SAFETY: changes the protection of pages of the object's own
    // reservation, which nothing but this loader uses yet.
    let r = unsafe { sys::sc(Sysno::mprotect, &[addr as usize, len as usize, prot]) };
    sys::check(r)
        .map(drop)
        .map_err(|e| Error::Sys("protect the object's memory", e))
}

/// Maps segment `s` of the file at load bias `base` with protection `prot`.
fn map_segment(fd: &Fd, base: u64, s: &Segment, prot: usize) -> Result<(), Error<'static>> {
    let start = base + s.map_start();
    let pageoff = s.vaddr % PAGE;
    let file_end = base + s.vaddr + s.filesz;
    if s.filesz > 0 {
        // SAFETY: replaces pages inside our own reservation with the file's.
        let r = unsafe {
            sys::sc(
                Sysno::mmap,
                &[
                    start as usize,
                    page_up(pageoff + s.filesz) as usize,
                    prot,
                    sys::MAP_PRIVATE | sys::MAP_FIXED,
                    fd.0,
                    (s.offset - pageoff) as usize,
                ],
            )
        };
        sys::check(r).map_err(|e| Error::Sys("map a segment of the object", e))?;
    }
    if s.memsz > s.filesz {
        if s.partial_page() {
            // SAFETY: [file_end, next page) is the rest of the last file
            // page, just mapped read-write (`prot`, see `partial_page`).
            unsafe { core::ptr::write_bytes(file_end as usize as *mut u8, 0, (page_up(file_end) - file_end) as usize) };
        }
        let anon = if s.filesz > 0 { page_up(file_end) } else { start };
        let end = base + s.map_end();
        if end > anon {
            // SAFETY: zero pages inside our own reservation.
            let r = unsafe {
                sys::sc(
                    Sysno::mmap,
                    &[
                        anon as usize,
                        (end - anon) as usize,
                        prot,
                        sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_FIXED,
                        usize::MAX,
                        0,
                    ],
                )
            };
            sys::check(r).map_err(|e| Error::Sys("map the object's zero-filled memory", e))?;
        }
    }
    Ok(())
}
