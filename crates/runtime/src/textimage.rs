//! Text images: rewritten code shared between the processes of a session.
//!
//! Rewriting a library's sites writes a `jmp` into dozens of libc's
//! pages, and each written page is a copy-on-write fault: at every exec, for
//! every process, the same copies of the same pages. A text image is that
//! work done once per session: a copy of the library file whose text holds
//! the rewritten sites, followed in the same file by the pool with the
//! trampolines they jump to and a table of the sites. A later process that
//! maps the same file range maps the image instead (one file opened, two
//! mappings: the pool, the text): its text and trampolines come from the
//! page cache, shared by every process of the session, with no copy and no
//! fault per page.
//!
//! A jump's displacement depends on where the trampoline is relative to the
//! site, so an image's pool sits at a fixed distance from the library: right
//! below the address at which the mapping's file offset 0 would be (the
//! free space the kernel leaves below a library it has just placed, unless
//! the library filled a gap exactly; strata's loader leaves 256 KiB free
//! below the interpreter), as long as its trampolines and site table need. When that space is taken,
//! the process rewrites its own copy as before. The pool's first page, which
//! holds the addresses of strata's entry points, is the process's own:
//! strata-rt is mapped at a different address in every process.
//!
//! Images live in the session's directory (`SESSION.text`, made by the
//! launcher, removed with the session): in `PID.KEY/`, the file `NAME`, the
//! library's own file name (and the link `text` to it): the library's
//! bytes with the rewritten text, then, from the first page boundary past
//! the library's size, the pool as it lies in memory (its first page the
//! pool's constants and a header, then the trampolines and the site table).
//! The link `KEY` to the directory publishes an image once it is written
//! whole; images never change afterwards. They are keyed by the
//! library file's device, inode, size, modification and change times and
//! mapped range (files in memory, such as memfds, get none: see [`key`]);
//! the stack, and so which calls skip strata, is the same for every process
//! of a session. The launcher's own first process makes none (a run of one
//! program would pay for a copy nobody uses) unless the images are kept
//! across runs (a run without a sandbox policy: `SESSION.text` is then a
//! link to the launcher's `images-KEY/`, see cli/src/images.rs, and images
//! are named by the stack's wants besides their key); a program it starts
//! makes the image of a library with sites on at least [`MIN_PAGES`] pages
//! the first time it maps it.
//!
//! What the program can see: /proc/self/maps names the image file
//! (`.../strata-count.*.text/PID.KEY/libc.so.6`, or for kept images
//! `.../images-KEY/PID.KEY/libc.so.6`) for the text of an imaged
//! library, where it would name the library (the same file name in another
//! directory), and the same file for its trampolines, at an offset past the
//! library's end; up to there, the file is a byte-for-byte copy of the
//! library but for the rewritten sites, so tools that read the mapped file
//! (perf, gdb) find the same symbols.
//! dl_iterate_phdr and the link map, which name the library, do not change.

use crate::rewrite;
use crate::sys::{self, Sysno};

/// Images are made only for mappings whose sites are on at least this many
/// pages (each saves a page copy per process; a copy of the file is made
/// once).
pub const MIN_PAGES: usize = 4;

const MAGIC: u64 = u64::from_le_bytes(*b"STRTXT04");
/// The pool lies in the image file as it lies in memory, its first page
/// the pool's constants (the addresses of strata's entries, the same in
/// every process: strata-rt is linked at a fixed address), so a process
/// maps it whole in one call. The header follows the constants.
const HEADER_AT: usize = rewrite::POOL_HEADER;
/// Header words (at HEADER_AT in the pool).
const H_MAGIC: usize = 0;
const H_KEY: usize = 1; // KEY_WORDS words
const H_DELTA: usize = H_KEY + KEY_WORDS;
const H_TRAMP_LEN: usize = H_DELTA + 1;
const H_NSITES: usize = H_DELTA + 2;
const H_POOL_LEN: usize = H_DELTA + 3;
/// The site table's `rewrite::Summary`: patched, declined, lowest and
/// highest offset, sorted (1) or not (0).
const H_SUMMARY: usize = H_DELTA + 4;
const H_WORDS: usize = H_SUMMARY + 5;
const _: () = assert!(HEADER_AT + H_WORDS * 8 <= 4096);

/// What an image is of: the library file's device, inode, size,
/// modification time (s, ns), the mapped range (offset, length), and its
/// change time (s, ns), which no one can set back (an image of a file
/// changed in place since is never used).
pub type Key = [u64; KEY_WORDS];
pub const KEY_WORDS: usize = 9;

const TMPFS_MAGIC: i64 = 0x0102_1994;
const HUGETLBFS_MAGIC: i64 = 0x9584_58f6;

/// The image key of a mapping whose site cache key is `sites` (`st`: the
/// file's `struct stat`).
pub fn key(sites: &[u64; 7], st: &[u64; 18]) -> Key {
    let mut k = [0u64; KEY_WORDS];
    k[..7].copy_from_slice(sites);
    k[7] = st[13];
    k[8] = st[14];
    k
}

/// Whether `fd` is a file in memory (tmpfs, memfds, hugetlbfs), of which no
/// image is made: a program that writes code into one through another
/// mapping changes neither time. (Or whether that cannot be told.)
pub fn in_memory(fd: usize) -> bool {
    statfs(fd).is_none_or(|sfs| sfs[0] == TMPFS_MAGIC || sfs[0] == HUGETLBFS_MAGIC)
}

/// fstatfs of `fd`: the kernel's struct statfs as words (f_type first,
/// f_flags at 10).
fn statfs(fd: usize) -> Option<[i64; 15]> {
    let mut sfs = [0i64; 15];
    // SAFETY: fstatfs into a local buffer of the kernel's struct statfs size.
    let r = unsafe { sys::sc(Sysno::fstatfs, &[fd, sfs.as_mut_ptr() as usize]) };
    (r == 0).then_some(sfs)
}

/// Whether the kernel would let `fd` be mapped readable and executable:
/// opened for reading (not write-only, not O_PATH) on a file system not
/// mounted noexec. An image mapped in place of the program's mapping
/// ([`Place::InsteadOfProgram`]) comes from strata's own descriptor, so the
/// program's is asked first, as its own mmap would have been.
fn mappable_exec(fd: usize) -> bool {
    const O_ACCMODE: isize = 3;
    const O_WRONLY: isize = 1;
    const O_PATH: isize = 0o10_000_000;
    const F_GETFL: usize = 3;
    const ST_NOEXEC: i64 = 8;
    // SAFETY: fcntl(F_GETFL) reads nothing of ours.
    let fl = unsafe { sys::sc(Sysno::fcntl, &[fd, F_GETFL]) };
    if fl < 0 || fl & O_ACCMODE == O_WRONLY || fl & O_PATH != 0 {
        return false;
    }
    statfs(fd).is_some_and(|sfs| sfs[10] & ST_NOEXEC == 0) // f_flags
}

/// One site in an image: `tramp_off | len << 32 | state << 40`, the
/// `syscall`'s offset from the mapping's start, `Site::lens`, the call
/// number.
pub type Entry = [u64; 4];
pub const MAX_ENTRIES: usize = 8192;

fn page_up(x: u64) -> u64 {
    (x + 4095) & !4095
}

/// Where the image's pool of `size` bytes goes for a mapping at `addr` of
/// file offset `off`: right below where the file's offset 0 would be.
pub fn pool_base(addr: usize, off: usize, size: usize) -> Option<usize> {
    (addr & !4095).checked_sub(off)?.checked_sub(size)
}

/// The size of the pool of an image of `n` sites: the page of entry
/// addresses, room for the longest trampoline of each (and a page for
/// alignment), then the site table.
pub fn pool_size(n: usize) -> usize {
    (4096 + page_up(64 * n as u64 + 4096) + page_up(32 * n as u64)) as usize
}

/// Where the pool starts in the image file of a library of `size` bytes.
fn pool_at(size: u64) -> usize {
    page_up(size) as usize
}

/// Where the site table goes in a pool, after `tramp_len` bytes of
/// trampolines.
fn meta_at(tramp_len: usize) -> usize {
    page_up(4096 + tramp_len as u64) as usize
}

/// A path being built in a fixed buffer.
struct PathBuf {
    buf: [u8; 640],
    len: usize,
}

impl PathBuf {
    fn new() -> PathBuf {
        PathBuf { buf: [0; 640], len: 0 }
    }

    fn push(&mut self, b: &[u8]) -> Option<&mut PathBuf> {
        // One byte stays for the NUL.
        self.buf.get_mut(self.len..self.len + b.len() + 1)?[..b.len()].copy_from_slice(b);
        self.len += b.len();
        self.buf[self.len] = 0;
        Some(self)
    }

    fn hex(&mut self, v: u64) -> Option<&mut PathBuf> {
        let h: [u8; 16] = core::array::from_fn(|i| b"0123456789abcdef"[(v >> (60 - 4 * i) & 15) as usize]);
        self.push(&h)
    }

    fn ptr(&self) -> usize {
        self.buf.as_ptr() as usize
    }
}

/// The image's name: 16 hex digits of its key and of which calls the
/// stack wants (the image's trampolines go to strata or skip it by that;
/// images kept across runs serve runs of other stacks too).
fn key_hash(key: &Key) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in key.iter().chain(core::iter::once(&crate::stack::wants_digest())) {
        for b in v.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// `SESSION.text/`, where the session's images are.
fn image_dir() -> Option<PathBuf> {
    let s = crate::config::session();
    if s.is_empty() {
        return None;
    }
    let mut p = PathBuf::new();
    p.push(s)?.push(b".text/")?;
    Some(p)
}

/// Whether mapping an image was possible.
#[derive(Clone, Copy)]
pub enum Found {
    /// The image's text and pool are mapped and its sites recorded.
    Mapped,
    /// No image for this mapping (yet).
    Absent,
    /// An image exists but cannot be used here (its pool's place is taken,
    /// or it does not match): rewrite as usual, make none.
    Unusable,
}

fn close(fd: usize) {
    // SAFETY: closing a descriptor we opened.
    unsafe { sys::sc(Sysno::close, &[fd]) };
}

/// Where [`map`] puts an image.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Over the mapping of the file just made.
    Over,
    /// Instead of a mapping of the program's descriptor, not made yet: the
    /// kernel's checks on that descriptor are made first ([`mappable_exec`]).
    InsteadOfProgram,
    /// Instead of a mapping of strata's loader's own descriptor, not made
    /// yet: opened for reading, and the exec checked the file's execute
    /// permission, which a noexec mount refuses: nothing to ask.
    InsteadOfLoader,
}

/// The private file mapping [addr, addr+len) (file offset `off`, protection
/// `prot`) of `fd`, keyed `key`, was just made and no thread runs it: map
/// its image over it, if the session has one. Instead of the mapping
/// (`rewrite::map_image_in_place`), the image takes its place if the kernel
/// would have made it, and when the image cannot, nothing is mapped there
/// and the caller makes the mapping as asked.
pub fn map(addr: usize, len: usize, prot: usize, fd: usize, off: usize, key: &Key, place: Place) -> Found {
    let Some(mut path) = image_dir() else {
        return Found::Absent;
    };
    if path.hex(key_hash(key)).and_then(|p| p.push(b"/text")).is_none() {
        return Found::Absent;
    }
    // SAFETY: a NUL-terminated path in a local buffer.
    let img = unsafe { sys::sc(Sysno::open, &[path.ptr(), sys::O_RDONLY | sys::O_CLOEXEC, 0]) };
    if img < 0 {
        return if img == -sys::ENOENT {
            Found::Absent
        } else {
            Found::Unusable
        };
    }
    let found = map_open(addr, len, prot, (fd, place), off, key, img as usize);
    close(img as usize);
    found
}

fn map_open(addr: usize, len: usize, prot: usize, lib: (usize, Place), off: usize, key: &Key, img: usize) -> Found {
    let (fd, place) = lib;
    let instead = place != Place::Over;
    // The pool's constants and the header, in one read.
    const C: usize = HEADER_AT / 8;
    let mut all = [0u64; C + H_WORDS];
    let at = pool_at(key[2]);
    // SAFETY: reading into a local buffer of C + H_WORDS words.
    let r = unsafe { sys::sc(Sysno::pread64, &[img, all.as_mut_ptr() as usize, (C + H_WORDS) * 8, at]) };
    let (consts, h) = all.split_at(C);
    let (delta, tramp_len, n, pool_len) = (
        h[H_DELTA] as usize,
        h[H_TRAMP_LEN] as usize,
        h[H_NSITES] as usize,
        h[H_POOL_LEN] as usize,
    );
    let base = pool_base(addr, off, pool_len).filter(|&b| Some(b) == addr.checked_sub(delta));
    // (A mapping reaching past the library's last page would show the
    // pool there, where natively an access past the end is SIGBUS.)
    let (Some(base), true) = (base, off.saturating_add(len) <= at) else {
        return Found::Unusable;
    };
    let sum = rewrite::Summary {
        patched: h[H_SUMMARY],
        declined: h[H_SUMMARY + 1],
        lo: h[H_SUMMARY + 2],
        hi: h[H_SUMMARY + 3],
        sorted: h[H_SUMMARY + 4] == 1,
    };
    if r != ((C + H_WORDS) * 8) as isize
        || h[H_MAGIC] != MAGIC
        || !rewrite::pool_constants_are_ours(consts)
        || h[H_KEY..H_KEY + KEY_WORDS] != key[..]
        || pool_len > rewrite::POOL_SIZE
        || n > MAX_ENTRIES
        || tramp_len > rewrite::POOL_SIZE
        || meta_at(tramp_len) + 32 * n > pool_len
        || sum.patched.saturating_add(sum.declined) > n as u64
        || n > 0 && (sum.lo > sum.hi || sum.hi >= len as u64)
    {
        return Found::Unusable;
    }
    if instead {
        // The kernel's answer to the program's own mmap is the caller's.
        if place == Place::InsteadOfProgram && !mappable_exec(fd) {
            return Found::Unusable;
        }
        // The image replaces whatever the program's MAP_FIXED would have:
        // sites recorded there go, as they would after the program's own
        // mapping (dispatch.rs mmap).
        rewrite::forget(addr, len);
    }
    lock_and(|| {
        // The pool, whole from the image file, where nothing is mapped (or
        // the place is taken, or the file system is mounted noexec: the
        // process rewrites its own copy).
        let Some(pool) = rewrite::pool_from_file(base, pool_len, img, at) else {
            return Found::Unusable;
        };
        let fixed = sys::MAP_PRIVATE | sys::MAP_FIXED;
        // SAFETY: the library mapping the program just made and no one
        // runs yet (or the place the program asked for it, `instead`),
        // replaced by the same range of the image.
        let x = unsafe { sys::sc(Sysno::mmap, &[addr, len, prot, fixed, img, off]) };
        if x as usize != addr {
            if instead {
                rewrite::release_pool(pool);
                return Found::Unusable;
            }
            // Put the library back (MAP_FIXED may have unmapped it).
            // SAFETY: as above, from the program's own descriptor.
            let back = unsafe { sys::sc(Sysno::mmap, &[addr, len, prot, fixed, fd, off]) };
            rewrite::release_pool(pool);
            return if back as usize == addr {
                Found::Unusable
            } else {
                Found::Mapped
            };
        }
        // SAFETY: the kernel just mapped the n entries (n * 32 bytes) there,
        // in the pool, which the program cannot unmap.
        let sites = unsafe { core::slice::from_raw_parts((base + meta_at(tramp_len)) as *const Entry, n) };
        rewrite::adopt_image(pool, addr as u64, sites, &sum);
        Found::Mapped
    })
}

fn lock_and<T>(f: impl FnOnce() -> T) -> T {
    rewrite::lock();
    let r = f();
    rewrite::unlock();
    r
}

/// Whether this process makes the image of a mapping whose sites are on
/// `pages` distinct pages, when the session has none.
pub fn wanted(pages: usize) -> bool {
    pages >= MIN_PAGES
        && !crate::config::session().is_empty()
        && (crate::config::program_mask().is_some() || kept_across_runs())
}

/// Whether `SESSION.text` is the link to images kept across runs (the
/// launcher's images.rs): then the launcher's own first process makes
/// images too, for the runs to come. (Asked only when an image is wanted
/// and absent.)
fn kept_across_runs() -> bool {
    let s = crate::config::session();
    let mut link = PathBuf::new();
    if s.is_empty() || link.push(s).and_then(|p| p.push(b".text")).is_none() {
        return false;
    }
    let mut target = [0u8; 8];
    core::ffi::CStr::from_bytes_until_nul(&link.buf).is_ok_and(|l| sys::read_link(l, &mut target).is_ok())
}

/// Writes the image of the mapping [addr, addr+len) (file offset `off` of
/// `fd`, keyed `key`) that this process just rewrote into the pool
/// `pool` (base, end of its trampolines, size), with its sites `sites`.
pub fn write(
    addr: usize,
    len: usize,
    fd: usize,
    off: usize,
    key: &Key,
    pool: (usize, usize, usize),
    sites: &[Entry],
) -> bool {
    // The library's own name, so that /proc/self/maps still ends in it.
    let mut lib = crate::load::Path::new();
    let name: &[u8] = match crate::load::fd_name(fd, &mut lib) {
        Ok(n) => lib.buf[..n]
            .rsplit(|&c| c == b'/')
            .next()
            .filter(|b| !b.is_empty())
            .unwrap_or(b"image"),
        Err(_) => b"image",
    };
    let h = key_hash(key);
    // SESSION.text/PID.KEY/{NAME,text -> NAME}, then the link
    // SESSION.text/KEY -> PID.KEY.
    let (Some(mut dir), Some(mut link)) = (image_dir(), image_dir()) else {
        return false;
    };
    let mut target = PathBuf::new();
    let (mut file, mut text_link) = (PathBuf::new(), PathBuf::new());
    let names = (|| {
        target.hex(sys::getpid_now() as u64)?.push(b".")?.hex(h)?;
        dir.push(&target.buf[..target.len])?;
        link.hex(h)?;
        let d = &dir.buf[..dir.len];
        file.push(d)?.push(b"/")?.push(name)?;
        text_link.push(d)?.push(b"/text")?;
        Some(())
    })();
    if names.is_none() {
        return false;
    }
    const O_WRONLY: usize = 1;
    const O_CREAT: usize = 0o100;
    const O_EXCL: usize = 0o200;
    let create = |p: &PathBuf| -> Option<usize> {
        // SAFETY: a NUL-terminated path in a local buffer.
        let r = unsafe {
            sys::sc(
                Sysno::open,
                &[p.ptr(), O_WRONLY | O_CREAT | O_EXCL | sys::O_CLOEXEC, 0o600],
            )
        };
        (r >= 0).then_some(r as usize)
    };
    // SAFETY: a NUL-terminated path in a local buffer.
    if unsafe { sys::sc(Sysno::mkdir, &[dir.ptr(), 0o700]) } != 0 {
        return false;
    }
    let ok = match create(&file) {
        Some(t) => {
            let ok = write_open(addr, len, fd, off, key, pool, sites, t);
            close(t);
            ok
        }
        None => false,
    };
    // Published whole or not at all: the link is made last. A copy that is
    // not published (a process that wrote the same image at the same time
    // made the link first, or a write failed) is removed: images kept
    // across runs would otherwise keep it too.
    let mut name_only = PathBuf::new();
    let published = ok
        && name_only.push(name).is_some()
        // SAFETY: NUL-terminated paths in local buffers.
        && unsafe { sys::sc(Sysno::symlink, &[name_only.ptr(), text_link.ptr()]) } == 0
        // SAFETY: as above.
        && unsafe { sys::sc(Sysno::symlink, &[target.ptr(), link.ptr()]) } == 0;
    if !published {
        for p in [&text_link, &file] {
            // SAFETY: a NUL-terminated path in a local buffer.
            unsafe { sys::sc(Sysno::unlink, &[p.ptr()]) };
        }
        // SAFETY: as above.
        unsafe { sys::sc(Sysno::rmdir, &[dir.ptr()]) };
    }
    published
}

#[allow(clippy::too_many_arguments)]
fn write_open(
    addr: usize,
    len: usize,
    fd: usize,
    off: usize,
    key: &Key,
    pool: (usize, usize, usize),
    sites: &[Entry],
    text: usize,
) -> bool {
    let (base, tramp_end, pool_len) = pool;
    let size = key[2] as usize;
    let at = pool_at(key[2]);
    let tramp_len = tramp_end.saturating_sub(base + 4096);
    if meta_at(tramp_len) + 32 * sites.len() > pool_len {
        return false;
    }
    let pwrite = |to: usize, at: usize, from: usize, n: usize| -> bool {
        // SAFETY: `from` is readable for `n` bytes (the caller's mapping,
        // our pool, or a local buffer).
        n == 0 || unsafe { sys::sc(Sysno::pwrite64, &[to, from, n, at]) } == n as isize
    };
    // The library as it is on disk (sendfile reads at `pos`, leaving the
    // program's descriptor's offset alone).
    let mut pos: i64 = 0;
    while (pos as usize) < size {
        // SAFETY: `pos` is a local the kernel updates.
        let r = unsafe {
            sys::sc(
                Sysno::sendfile,
                &[text, fd, &mut pos as *mut i64 as usize, size - pos as usize],
            )
        };
        if r <= 0 {
            return false;
        }
    }
    let mut h = [0u64; H_WORDS];
    h[H_MAGIC] = MAGIC;
    h[H_KEY..H_KEY + KEY_WORDS].copy_from_slice(key);
    h[H_DELTA] = (addr - base) as u64;
    h[H_TRAMP_LEN] = tramp_len as u64;
    h[H_NSITES] = sites.len() as u64;
    h[H_POOL_LEN] = pool_len as u64;
    let sum = rewrite::Summary::of(sites);
    h[H_SUMMARY..].copy_from_slice(&[sum.patched, sum.declined, sum.lo, sum.hi, u64::from(sum.sorted)]);
    // The rewritten text from memory; past the library, the pool as it is
    // laid out (its constants, the trampolines), the header after the
    // constants, the file reaching the pool's end (`at + pool_len`: a
    // mapping of it has no page past the file's end).
    pwrite(text, off, addr, len)
        && pwrite(text, at, base, HEADER_AT)
        && pwrite(text, at + 4096, base + 4096, tramp_len)
        && pwrite(text, at + meta_at(tramp_len), sites.as_ptr() as usize, sites.len() * 32)
        && pwrite(text, at + HEADER_AT, h.as_ptr() as usize, H_WORDS * 8)
        // (A byte written, not ftruncate, which a sandbox's Landlock rules
        // may refuse where they let the session write.)
        && (meta_at(tramp_len) + sites.len() * 32 >= pool_len
            || pwrite(text, at + pool_len - 1, [0u8].as_ptr() as usize, 1))
}
