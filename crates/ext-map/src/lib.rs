//! `map`: path remapping as a strata layer, in the feel of `proot -b`.
//!
//! # Arguments
//!
//! One or more mappings separated by `;`, each `PROGRAM_PATH=HOST_PATH`,
//! optionally followed by `:ro` or `:discard`:
//!
//! ```text
//! /data=/tmp/x;/etc/app=/srv/app-etc:ro;/var/log=/var/log:discard
//! ```
//!
//! Both paths are absolute; they are normalised lexically (`//`, `.` and a
//! trailing `/` go; `..`, NUL bytes, empty or relative paths are refused).
//! The first `=` separates the two sides and only a final `:ro` or
//! `:discard` is an option (other colons belong to the host path). At most
//! [`MAX_MAPPINGS`] mappings; a program path may be mapped once. Every
//! host path must exist when the layer starts (checked with `newfstatat`
//! straight to the kernel). Host paths should be canonical (no symbolic
//! links): the kernel reports canonical paths (`getcwd`, `/proc/self/fd`),
//! and only those under a host side read back as program paths.
//!
//! # The mapped view
//!
//! The program sees a file system in which each program path names its
//! host path: `/data/f` is `/tmp/x/f`. The longest program-side prefix
//! wins, component by component (`/data` does not cover `/database`). A
//! mapping point and the directories leading to it are directories in the
//! program's view (like mount points), whatever the host has there.
//!
//! A path is resolved as the kernel would resolve it *in the mapped view*
//! ([`resolve`]): made absolute from the program-view current directory
//! (the host's, read with `getcwd` and mapped back) or from the directory
//! of a `*at` call's handle (its host path read from `/proc/self/fd/N`),
//! then walked: `.` is skipped, `..` drops one component (never above
//! `/`), and every intermediate component, and the last one when the call
//! follows it, is looked up with `readlinkat` on its host path. A link's
//! target is read in the program view: an absolute one starts again at
//! `/`, a relative one in the link's directory; 40 links at most
//! (`ELOOP`). So `/data/../etc/passwd` is the host's `/etc/passwd`, and a
//! link `/home/me/d -> /data/real` leads into the mapping. When a directory
//! on the way is missing, the walk stops there and the rest is kept as
//! written (the kernel fails at the same place). A path whose last
//! component is `.`, `..` or followed by `/` keeps a trailing `/`.
//!
//! # Lossless
//!
//! When no mapping was involved (no prefix met during resolution, link
//! targets included, lay under a mapping, and the path did not start in a
//! directory under a host side), the call goes down unchanged: the kernel
//! sees the program's own pointer. Otherwise the changed operands point to
//! the host paths. NULL and empty paths (`AT_EMPTY_PATH`) always pass
//! unchanged. Every helper call (`readlinkat`, `getcwd`) is issued down the
//! stack ([`strata_ext::Below::issue`]), so the layers below, another map
//! among them, answer in their own view: maps compose.
//!
//! # Read-only and discarding mappings
//!
//! A call that would modify a path under a `:ro` mapping fails with
//! `EROFS` without going down; so does an access check for `W_OK`. The
//! modifying calls are the ops `StreamDelete`, `StreamRename`,
//! `StreamLink`, `StreamCreateDir`, `StreamSetAttr`, `StreamSetLength`,
//! `StreamOpen` with `O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC` or
//! `O_TMPFILE` (creat always; for openat2 the flags are read from its
//! `struct open_how`), and `bind` of an AF_UNIX socket; for rename and link
//! both operands count. Under a `:discard` mapping the same calls succeed
//! without changing the host: an open for writing opens `/dev/null`
//! instead (same flags without `O_CREAT|O_EXCL|O_TRUNC|O_DIRECTORY|
//! O_TMPFILE`), the others return 0 without going down. Reads reach the
//! host. `bind` is the exception: it goes down translated (a socket must
//! exist to be listened on).
//!
//! # Results in the program view
//!
//! `getcwd` is answered with the program path of the host's current
//! directory (longest host-side prefix wins; `ERANGE` if it does not fit).
//! `readlink`/`readlinkat` of a `/proc` link whose target is a host path
//! (`/proc/PID/{cwd,exe,root}`, `/proc/PID/fd/N`, also under `task/TID/`;
//! `self` and `thread-self` resolve to these) return the target mapped
//! back, cut to the program's buffer like readlink does. `bind` and
//! `connect` on an AF_UNIX address with a path (not an abstract name) use
//! the host path of `sun_path` (`ENAMETOOLONG` past 107 bytes); `connect`
//! follows a link in the last component, `bind` does not.
//!
//! # Limits
//!
//! What the kernel itself opens by path is not translated: the `#!`
//! interpreter of a script and the ELF interpreter of an executable are
//! found on the host. Addresses in `sendto`/`sendmsg` are not translated.
//! A host directory hidden by a mapping (the host's `/data/old` when
//! `/data` is mapped) cannot be named; a current directory there reads as
//! its program path and relative paths follow the program view.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
extern crate std;

pub mod path;
pub mod policy;
pub mod resolve;
pub mod stack;
pub mod table;

pub use resolve::{Fs, Resolved, Resolver, Start};
pub use table::{Mapping, Mode, Table, MAX_MAPPINGS};

use path::{Buf, PATH_CAP};
use policy::{
    OpenFlags, NR_BIND, NR_CONNECT, NR_GETCWD, NR_NEWFSTATAT, NR_OPENAT2, NR_READLINK, NR_READLINKAT, SOCKADDR_UN_LEN,
};
use stack::StackFs;
use strata_abi::MAX_PATHS;
use strata_ext::{
    read_mem, write_mem, Below, Call, Extension, InitError, Interest, Op, PathBuf, EFAULT, ERANGE, EROFS, NO_ARG,
};

/// The `map` layer: a [`Table`] of mappings, read-only after start.
#[derive(Debug)]
pub struct Map {
    table: Table,
}

impl Map {
    /// A layer for `table`, without checking that its host paths exist
    /// ([`Extension::new`] parses its arguments and checks).
    pub fn from_table(table: Table) -> Map {
        Map { table }
    }

    pub fn table(&self) -> &Table {
        &self.table
    }
}

/// Whether host path `p` exists (newfstatat straight to the kernel).
fn host_exists(p: &[u8]) -> bool {
    let mut path = PathBuf::new();
    if path.set(p).is_err() {
        return false;
    }
    let mut st = [0u64; 32]; // struct stat is 144 bytes on x86-64
    let args = [
        resolve::AT_FDCWD as i64 as u64,
        path.as_ptr() as u64,
        st.as_mut_ptr() as u64,
        0,
        0,
        0,
    ];
    strata_ext::raw_syscall(NR_NEWFSTATAT, args) == 0
}

fn arg(c: &Call, i: u8) -> u64 {
    c.args.get(i as usize).copied().unwrap_or(0)
}

fn set_arg(args: &mut [u64; 6], i: usize, v: u64) {
    if let Some(a) = args.get_mut(i) {
        *a = v;
    }
}

/// `struct open_how`'s flags (its first u64) at program address `addr`.
fn open_how_flags(addr: u64) -> Result<u64, i64> {
    let mut b = [0u8; 8];
    match read_mem(addr, &mut b)? {
        8 => Ok(u64::from_ne_bytes(b)),
        _ => Err(-EFAULT),
    }
}

/// Writes `text` and a NUL at program address `addr`.
fn write_c_string(addr: u64, text: &[u8]) -> Result<(), i64> {
    let short = |n: usize, want: usize| if n == want { Ok(()) } else { Err(-EFAULT) };
    short(write_mem(addr, text)?, text.len())?;
    short(write_mem(addr.wrapping_add(text.len() as u64), &[0])?, 1)
}

impl Extension for Map {
    const NAME: &'static str = "map";

    fn new(args: &str) -> Result<Map, InitError> {
        let table = Table::parse(args)?;
        for m in table.iter() {
            if !host_exists(m.host) {
                let mut e = InitError::new("map: host path ");
                e.push(core::str::from_utf8(m.host).unwrap_or("?"));
                e.push(" does not exist");
                return Err(e);
            }
        }
        Ok(Map { table })
    }

    fn interest(&self) -> Interest {
        let mut i = Interest::NONE.with_paths();
        for nr in [NR_GETCWD, NR_READLINK, NR_READLINKAT, NR_BIND, NR_CONNECT] {
            i.insert(nr);
        }
        i
    }

    fn call(&self, c: &mut Call, below: &Below) -> i64 {
        match c.nr {
            NR_GETCWD => self.getcwd(c, below),
            NR_BIND | NR_CONNECT => self.socket(c, below),
            _ if c.npaths > 0 => self.paths(c, below),
            _ => below.call(c),
        }
    }
}

impl Map {
    /// A call with path operands.
    fn paths(&self, c: &mut Call, below: &Below) -> i64 {
        let tmpl = *c;
        let fs = StackFs { template: &tmpl, below };
        let op = tmpl.op();
        let mut res = Resolver::new();
        let mut outs = [PathBuf::new(), PathBuf::new()];
        let mut changed = [false; MAX_PATHS];
        let (mut ro, mut discard, mut proc_link) = (false, false, false);
        for ((slot, out), changed) in tmpl.path_slots().iter().zip(outs.iter_mut()).zip(changed.iter_mut()) {
            let addr = arg(&tmpl, slot.arg);
            if addr == 0 {
                continue;
            }
            if let Err(e) = out.read_from(addr) {
                return e;
            }
            if out.is_empty() {
                continue;
            }
            if self.plain_lookup(&tmpl, op, slot.follow != 0, out.as_bytes()) {
                continue;
            }
            let start = match slot.dirfd_arg {
                NO_ARG => Start::Cwd,
                i => Start::from_dirfd(arg(&tmpl, i)),
            };
            // A path in directory form follows its last link, except where
            // the kernel then fails on the link itself (creating, deleting,
            // renaming, linking).
            let dir_form = path::names_dir(out.as_bytes())
                && slot.create == 0
                && !matches!(op, Op::StreamDelete | Op::StreamRename | Op::StreamLink);
            let r = match res.resolve(&fs, &self.table, out, start, slot.follow != 0 || dir_form) {
                Ok(r) => r,
                Err(e) => return e,
            };
            *changed = r.changed;
            ro |= r.mode == Mode::ReadOnly;
            discard |= r.mode == Mode::Discard;
            proc_link = matches!(tmpl.nr, NR_READLINK | NR_READLINKAT)
                && r.complete
                && policy::is_proc_link(res.program_path());
        }

        if ro || discard {
            let how = || open_how_flags(tmpl.args[2]);
            let modifies = match policy::modifies(op, tmpl.nr, &tmpl.args, how) {
                Ok(m) => m,
                Err(e) => return e,
            };
            if ro && (modifies || policy::asks_write_access(tmpl.nr, &tmpl.args)) {
                return -EROFS;
            }
            if discard && modifies {
                if op == Op::StreamOpen {
                    let [null, _] = &mut outs;
                    return discard_open(&tmpl, below, null);
                }
                return 0;
            }
        }

        let [out0, out1] = &outs;
        let [ch0, ch1] = changed;
        if proc_link {
            let path = ch0.then_some(out0);
            return self.readlink_view(&tmpl, below, path, &mut res);
        }
        if ch0 || ch1 {
            below.call_with_paths(c, [ch0.then_some(out0), ch1.then_some(out1)])
        } else {
            below.call(c)
        }
    }

    /// The fast path: reading the attributes of one name, not following a
    /// link, relative to a directory (a handle or the working directory)
    /// that is already a host directory. Without `/`, `..` or a link to
    /// follow, the kernel's lookup is one step inside that directory, which
    /// the mapped view shares, unless the name is where a mapping is
    /// mounted. So the call goes down unchanged, with no lookups of ours
    /// (this is most of what `ls -l`, `find` and `tar` do).
    fn plain_lookup(&self, c: &Call, op: Op, follow: bool, name: &[u8]) -> bool {
        op == Op::StreamAttrByName
            && !follow
            && !matches!(c.nr, NR_READLINK | NR_READLINKAT)
            && !name.is_empty()
            && !name.contains(&b'/')
            && name != b"."
            && name != b".."
            && !self
                .table
                .iter()
                .any(|m| m.program.rsplit(|&b| b == b'/').next() == Some(name))
    }

    /// readlink(at) of a `/proc` link whose target is a host path: read it
    /// into a buffer of ours, map it back, hand the program its share.
    fn readlink_view(&self, c: &Call, below: &Below, path: Option<&PathBuf>, res: &mut Resolver) -> i64 {
        let (buf_arg, size_arg) = if c.nr == NR_READLINK { (1, 2) } else { (2, 3) };
        let user_buf = c.args.get(buf_arg).copied().unwrap_or(0);
        let size = c.args.get(size_arg).copied().unwrap_or(0) as u32 as i32;
        let mut args = c.args;
        if let (Some(p), Some(slot)) = (path, c.path_slots().first()) {
            set_arg(&mut args, slot.arg as usize, p.as_ptr() as u64);
        }
        let Ok(size) = usize::try_from(size) else {
            // The kernel's EINVAL.
            return below.call_with_args(c, args);
        };
        if size == 0 {
            return below.call_with_args(c, args);
        }
        let (target, mapped) = res.scratch();
        let storage = target.storage();
        set_arg(&mut args, buf_arg, storage.as_mut_ptr() as u64);
        set_arg(&mut args, size_arg, storage.len() as u64);
        let r = below.call_with_args(c, args);
        let Ok(n) = usize::try_from(r) else {
            return r;
        };
        if target.set_len(n.min(PATH_CAP)).is_err() {
            return -EFAULT;
        }
        let text = match target.as_bytes().first() {
            Some(b'/') if self.table.reverse(target.as_bytes(), mapped).is_ok() => mapped.as_bytes(),
            _ => target.as_bytes(),
        };
        let give = text.get(..size.min(text.len())).unwrap_or(&[]);
        match write_mem(user_buf, give) {
            Ok(w) if w == give.len() => give.len() as i64,
            Ok(_) => -EFAULT,
            Err(e) => e,
        }
    }

    /// getcwd: the host's current directory, as a program path.
    fn getcwd(&self, c: &Call, below: &Below) -> i64 {
        let (user_buf, size) = (c.args[0], c.args[1]);
        let mut host = Buf::new();
        let mut prog = Buf::new();
        let mut args = c.args;
        let storage = host.storage();
        args[0] = storage.as_mut_ptr() as u64;
        args[1] = storage.len() as u64;
        let r = below.call_with_args(c, args);
        let Ok(n) = usize::try_from(r) else {
            return r;
        };
        let got = host.storage().get(..n).unwrap_or(&[]);
        let n = got.iter().position(|&b| b == 0).unwrap_or(got.len());
        if host.set_len(n).is_err() {
            return -ERANGE;
        }
        let text = match host.as_bytes().first() {
            Some(b'/') if self.table.reverse(host.as_bytes(), &mut prog).is_ok() => prog.as_bytes(),
            _ => host.as_bytes(),
        };
        let need = text.len() + 1;
        if need as u64 > size {
            return -ERANGE;
        }
        match write_c_string(user_buf, text) {
            Ok(()) => need as i64,
            Err(e) => e,
        }
    }

    /// bind and connect: the host path of an AF_UNIX address.
    fn socket(&self, c: &mut Call, below: &Below) -> i64 {
        let (addr, len) = (c.args[1], c.args[2] as u32 as usize);
        let mut sa = [0u8; SOCKADDR_UN_LEN];
        // No address, an unnamed one, or one too long for AF_UNIX (the
        // kernel answers).
        let Some(given) = sa.get_mut(..len).filter(|_| addr != 0 && len > 2) else {
            return below.call(c);
        };
        match read_mem(addr, given) {
            Ok(n) if n == len => {}
            Ok(_) => return -EFAULT,
            Err(e) => return e,
        }
        let Some(unix) = policy::unix_path(sa.get(..len).unwrap_or(&[])) else {
            return below.call(c);
        };
        let mut host = PathBuf::new();
        if let Err(e) = host.set(unix) {
            return e;
        }
        let bind = c.nr == NR_BIND;
        let tmpl = *c;
        let fs = StackFs { template: &tmpl, below };
        let mut res = Resolver::new();
        let r = match res.resolve(&fs, &self.table, &mut host, Start::Cwd, !bind) {
            Ok(r) => r,
            Err(e) => return e,
        };
        if bind && r.mode == Mode::ReadOnly {
            return -EROFS;
        }
        if !r.changed {
            return below.call(c);
        }
        let mut out = [0u8; SOCKADDR_UN_LEN];
        let n = match policy::unix_sockaddr(host.as_bytes(), &mut out) {
            Ok(n) => n,
            Err(e) => return e,
        };
        let mut args = c.args;
        args[1] = out.as_ptr() as u64;
        args[2] = n as u64;
        below.call_with_args(c, args)
    }
}

/// An open for writing under a discarding mapping: `/dev/null` instead.
fn discard_open(c: &Call, below: &Below, null: &mut PathBuf) -> i64 {
    if let Err(e) = null.set(b"/dev/null") {
        return e;
    }
    let mut args = c.args;
    if let Some(slot) = c.path_slots().first() {
        set_arg(&mut args, slot.arg as usize, null.as_ptr() as u64);
    }
    let mut how = [0u64; 3]; // struct open_how: flags, mode, resolve
    match policy::open_flags(c.nr) {
        OpenFlags::Arg(i) => {
            let f = args.get(i).copied().unwrap_or(0);
            set_arg(&mut args, i, policy::discard_flags(f));
        }
        OpenFlags::How if c.nr == NR_OPENAT2 => {
            match open_how_flags(args[2]) {
                Ok(f) => how[0] = policy::discard_flags(f),
                Err(e) => return e,
            }
            // No O_CREAT: mode must be 0; no RESOLVE_* limits for /dev/null.
            args[2] = how.as_ptr() as u64;
            args[3] = core::mem::size_of_val(&how) as u64;
        }
        OpenFlags::How | OpenFlags::Creat => {}
    }
    below.call_with_args(c, args)
}
