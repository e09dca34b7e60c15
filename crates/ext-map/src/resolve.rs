//! The resolver: a program path, resolved the way the kernel would resolve
//! it in the mapped view, and its host path.
//!
//! It walks the path component by component in the *program* view: `.` is
//! skipped, `..` drops the last component (never above `/`), and a component
//! that may be a symbolic link is looked up through [`Fs::readlink`] on its
//! host path. A link's target is read in the program view too: an absolute
//! target starts again from `/`, a relative one from the link's directory.
//! The result is a canonical program path, mapped to the host by the
//! longest program-side prefix. Generic over [`Fs`], so the same code runs
//! on the layers below (in the extension) and on a fake file system (in the
//! tests).

use crate::path::{self, Buf};
use crate::policy;
use crate::table::{Mode, Table};
use strata_ext::{PathBuf, EINVAL, ELOOP, ENOENT};

/// Symbolic links followed in one resolution before `ELOOP` (Linux's
/// MAXSYMLINKS).
pub const MAX_LINKS: u32 = 40;

/// `AT_FDCWD`, the "current directory" handle.
pub const AT_FDCWD: i32 = -100;

/// What the resolver asks of the host file system (as the layers below
/// present it). Errors are negative errno values.
pub trait Fs {
    /// Writes the target of symbolic link `host_path` into `out` and returns
    /// its length; `Err(-EINVAL)` when `host_path` is not a link.
    fn readlink(&self, host_path: &PathBuf, out: &mut [u8]) -> Result<usize, i64>;
    /// Writes the host path of the current directory (no NUL) into `out`.
    fn cwd(&self, out: &mut [u8]) -> Result<usize, i64>;
    /// Writes the host path of the directory open as `fd` into `out`.
    fn fd_path(&self, fd: i32, out: &mut [u8]) -> Result<usize, i64>;
}

/// Where a relative path starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// The current directory.
    Cwd,
    /// The directory open as this handle.
    Fd(i32),
}

impl Start {
    /// The start of a relative path given the raw directory-handle argument
    /// of a `*at` call (its low 32 bits, sign-extended, as the kernel reads
    /// an `int`).
    pub fn from_dirfd(raw: u64) -> Start {
        match raw as u32 as i32 {
            AT_FDCWD => Start::Cwd,
            fd => Start::Fd(fd),
        }
    }
}

/// The outcome of [`Resolver::resolve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// A mapping was involved (a prefix met during resolution, link targets
    /// included, or the starting directory lay under a mapping): the call
    /// must use the host path. When false the program's own path means the
    /// same to the kernel and is passed unchanged.
    pub changed: bool,
    /// The mode of the mapping the resolved path lies under.
    pub mode: Mode,
    /// Resolution ran to the end; false when a missing (or unreadable)
    /// directory, or a `/proc` link to an object without a path, stopped it
    /// and the rest was kept as written.
    pub complete: bool,
}

impl Resolved {
    const UNCHANGED: Resolved = Resolved {
        changed: false,
        mode: Mode::ReadWrite,
        complete: true,
    };
}

/// Scratch space for resolutions (12 KiB, on the stack: make it only where
/// a path must be resolved, in a frame of its own, since every page of a
/// frame is touched at its entry).
pub struct Resolver {
    /// The canonical program path so far.
    cur: Buf,
    /// The path text still to walk (link targets are spliced in front).
    rest: Buf,
    /// Link targets, start directories.
    link: Buf,
}

impl Default for Resolver {
    fn default() -> Self {
        Resolver::new()
    }
}

impl Resolver {
    pub const fn new() -> Resolver {
        Resolver {
            cur: Buf::new(),
            rest: Buf::new(),
            link: Buf::new(),
        }
    }

    /// The canonical program path of the last resolution.
    pub fn program_path(&self) -> &[u8] {
        self.cur.as_bytes()
    }

    /// Two buffers free for other uses until the next resolution (their
    /// contents are overwritten by it).
    pub fn scratch(&mut self) -> (&mut Buf, &mut Buf) {
        (&mut self.link, &mut self.rest)
    }

    /// Resolves program path `path` (non-empty; relative ones start at
    /// `start`), following a link in the last component when `follow_last`.
    /// On return with `changed`, `path` holds the host path; otherwise its
    /// contents are unspecified (and the program's own path is to be used).
    ///
    /// Errors: `-ELOOP` (more than [`MAX_LINKS`] links), `-ENAMETOOLONG`,
    /// `-ENOENT` (an empty link target), as the kernel would return them.
    pub fn resolve<F: Fs + ?Sized>(
        &mut self,
        fs: &F,
        table: &Table,
        path: &mut PathBuf,
        start: Start,
        follow_last: bool,
    ) -> Result<Resolved, i64> {
        let Resolver { cur, rest, link } = self;
        let dir_form = path::names_dir(path.as_bytes());
        rest.set(path.as_bytes())?;
        cur.clear();
        let mut involved = false;
        if rest.as_bytes().first() == Some(&b'/') {
            cur.push(b"/")?;
        } else {
            let got = match start {
                Start::Cwd => fs.cwd(link.storage()),
                Start::Fd(fd) => fs.fd_path(fd, link.storage()),
            };
            // No usable start directory (a deleted current directory, a bad
            // or non-directory handle): the kernel gives the answer.
            let Ok(n) = got else {
                return Ok(Resolved::UNCHANGED);
            };
            link.set_len(n)?;
            if link.as_bytes().first() != Some(&b'/') {
                return Ok(Resolved::UNCHANGED);
            }
            involved = table.reverse(link.as_bytes(), cur)?;
        }
        involved |= table.covers(cur.as_bytes());

        let mut pos = 0;
        let mut links = 0;
        let mut complete = true;
        loop {
            let text = rest.as_bytes();
            let Some(from) = text.get(pos..).and_then(|t| t.iter().position(|&b| b != b'/')) else {
                break;
            };
            let from = pos + from;
            let len = text
                .get(from..)
                .map_or(0, |t| t.iter().position(|&b| b == b'/').unwrap_or(t.len()));
            pos = from + len;
            let comp = text.get(from..pos).unwrap_or(&[]);
            let last = text.get(pos..).map_or(true, |t| t.iter().all(|&b| b == b'/'));
            match comp {
                b"" => break,
                b"." => continue,
                b".." => {
                    cur.pop_component();
                    continue;
                }
                c => cur.push_component(c)?,
            }
            involved = involved || table.covers(cur.as_bytes());
            if (last && !follow_last) || table.leads_to_mapping(cur.as_bytes()) {
                continue;
            }
            table.forward(cur.as_bytes(), path)?;
            match fs.readlink(path, link.storage()) {
                Ok(0) => return Err(-ENOENT),
                Ok(n) => {
                    link.set_len(n)?;
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(-ELOOP);
                    }
                    if policy::is_proc_link(cur.as_bytes()) {
                        // A /proc "magic" link: the kernel jumps to the object
                        // itself. Its text is a host path (read back into the
                        // program view), or names no path at all (a pipe, a
                        // socket, a deleted file): then the walk stops here
                        // and the kernel makes the jump.
                        let target = link.as_bytes();
                        if target.first() != Some(&b'/') || target.ends_with(b" (deleted)") {
                            complete = false;
                            break;
                        }
                        table.reverse(target, path)?;
                        link.set(path.as_bytes())?;
                    }
                    if link.as_bytes().first() == Some(&b'/') {
                        cur.set(b"/")?;
                        involved = involved || table.covers(b"/");
                    } else {
                        cur.pop_component();
                    }
                    rest.replace_front(pos, link.as_bytes())?;
                    pos = 0;
                }
                Err(e) if e == -EINVAL || last => {}
                Err(_) => {
                    // A directory on the way is missing or cannot be read:
                    // the kernel's walk fails there too, so the rest is
                    // kept as written (no `..` folded past the failure).
                    complete = false;
                    break;
                }
            }
        }

        let mode = table
            .find_program(cur.as_bytes())
            .map_or(Mode::ReadWrite, |(m, _)| m.mode);
        if !involved {
            return Ok(Resolved::UNCHANGED);
        }
        table.forward(cur.as_bytes(), path)?;
        if !complete {
            path.push(rest.as_bytes().get(pos..).unwrap_or(&[]))?;
        }
        if dir_form && path.as_bytes().last() != Some(&b'/') {
            path.push(b"/")?;
        }
        Ok(Resolved {
            changed: true,
            mode,
            complete,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::PATH_CAP;
    use std::collections::{BTreeMap, BTreeSet};
    use std::string::{String, ToString};
    use strata_ext::{ENAMETOOLONG, ENOTDIR};

    /// A host file system: existing paths, symbolic links, a current
    /// directory and open directory handles. Lookups are exact (the
    /// resolver only asks about paths whose prefixes it has resolved).
    #[derive(Default)]
    struct FakeFs {
        exists: BTreeSet<String>,
        links: BTreeMap<String, String>,
        files: BTreeSet<String>,
        cwd: String,
        fds: BTreeMap<i32, String>,
        asked: core::cell::RefCell<std::vec::Vec<String>>,
    }

    impl FakeFs {
        fn new(paths: &[&str], links: &[(&str, &str)]) -> FakeFs {
            let mut fs = FakeFs {
                cwd: "/".into(),
                ..FakeFs::default()
            };
            for p in paths {
                let mut at = String::new();
                for c in p.split('/').filter(|c| !c.is_empty()) {
                    at.push('/');
                    at.push_str(c);
                    fs.exists.insert(at.clone());
                }
            }
            for (l, t) in links {
                fs.links.insert(l.to_string(), t.to_string());
            }
            fs
        }
    }

    fn put(out: &mut [u8], s: &str) -> Result<usize, i64> {
        out.get_mut(..s.len())
            .ok_or(-ENAMETOOLONG)?
            .copy_from_slice(s.as_bytes());
        Ok(s.len())
    }

    impl Fs for FakeFs {
        fn readlink(&self, host_path: &PathBuf, out: &mut [u8]) -> Result<usize, i64> {
            let p = core::str::from_utf8(host_path.as_bytes()).unwrap().to_string();
            self.asked.borrow_mut().push(p.clone());
            if let Some(t) = self.links.get(&p) {
                return put(out, t);
            }
            let parent = &p[..p.rfind('/').unwrap_or(0)];
            if self.files.contains(parent) {
                return Err(-ENOTDIR);
            }
            if self.exists.contains(&p) || p == "/" {
                Err(-EINVAL)
            } else {
                Err(-ENOENT)
            }
        }
        fn cwd(&self, out: &mut [u8]) -> Result<usize, i64> {
            put(out, &self.cwd)
        }
        fn fd_path(&self, fd: i32, out: &mut [u8]) -> Result<usize, i64> {
            match self.fds.get(&fd) {
                Some(p) => put(out, p),
                None => Err(-9),
            }
        }
    }

    /// Resolves `p`: Ok(Some(host path)) when changed, Ok(None) when the
    /// program's path is passed on unchanged.
    fn run(fs: &FakeFs, t: &str, p: &str, start: Start, follow: bool) -> Result<Option<(String, Mode)>, i64> {
        let table = Table::parse(t).unwrap();
        let mut r = Resolver::new();
        let mut buf = PathBuf::new();
        buf.set(p.as_bytes()).unwrap();
        let got = r.resolve(fs, &table, &mut buf, start, follow)?;
        if !got.changed {
            assert_eq!(got.mode, Mode::ReadWrite);
            return Ok(None);
        }
        Ok(Some((String::from_utf8(buf.as_bytes().to_vec()).unwrap(), got.mode)))
    }

    fn host(fs: &FakeFs, t: &str, p: &str) -> Option<String> {
        run(fs, t, p, Start::Cwd, true).unwrap().map(|(h, _)| h)
    }

    const DATA: &str = "/data=/tmp/x";

    #[test]
    fn plain_mapping() {
        let fs = FakeFs::new(&["/tmp/x/a/b", "/etc/passwd", "/data/real"], &[]);
        assert_eq!(host(&fs, DATA, "/data/a/b").as_deref(), Some("/tmp/x/a/b"));
        assert_eq!(host(&fs, DATA, "/data").as_deref(), Some("/tmp/x"));
        assert_eq!(host(&fs, DATA, "//data/./a//b").as_deref(), Some("/tmp/x/a/b"));
        assert_eq!(host(&fs, DATA, "/data/a/").as_deref(), Some("/tmp/x/a/"));
        assert_eq!(host(&fs, DATA, "/data/a/.").as_deref(), Some("/tmp/x/a/"));
        // Lossless: nothing mapped on the way, the program's path is kept.
        assert_eq!(host(&fs, DATA, "/etc/passwd"), None);
        assert_eq!(host(&fs, DATA, "/etc/../etc/passwd"), None);
        assert_eq!(host(&fs, DATA, "/database"), None);
        assert_eq!(host(&fs, DATA, "/"), None);
    }

    #[test]
    fn dotdot_across_a_mapping_boundary() {
        let fs = FakeFs::new(&["/tmp/x/a", "/etc/passwd"], &[]);
        // In the program view /data/.. is /, whatever the host's /tmp/x/.. is.
        assert_eq!(host(&fs, DATA, "/data/../etc/passwd").as_deref(), Some("/etc/passwd"));
        assert_eq!(
            host(&fs, DATA, "/data/a/../../etc/passwd").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(host(&fs, DATA, "/data/a/..").as_deref(), Some("/tmp/x/"));
        assert_eq!(host(&fs, DATA, "/../../data/a").as_deref(), Some("/tmp/x/a"));
        // Into a mapping from outside.
        assert_eq!(host(&fs, DATA, "/etc/../data/a").as_deref(), Some("/tmp/x/a"));
    }

    #[test]
    fn links_are_read_in_the_program_view() {
        let fs = FakeFs::new(
            &["/tmp/x/real/f", "/home/me", "/etc/passwd", "/tmp/elsewhere/g"],
            &[
                // Inside the mapping, absolute: /data/... is the program view.
                ("/tmp/x/abs", "/data/real"),
                // Inside the mapping, relative and climbing out of it.
                ("/tmp/x/up", "../etc"),
                // Outside, into the mapping.
                ("/home/me/d", "/data/real"),
                ("/home/me/rel", "../../data/real"),
                // Inside, out of the mapping to an unmapped host path.
                ("/tmp/x/out", "/tmp/elsewhere"),
                // Outside to outside.
                ("/home/me/pw", "/etc/passwd"),
            ],
        );
        assert_eq!(host(&fs, DATA, "/data/abs/f").as_deref(), Some("/tmp/x/real/f"));
        assert_eq!(host(&fs, DATA, "/data/up/passwd").as_deref(), Some("/etc/passwd"));
        assert_eq!(host(&fs, DATA, "/home/me/d/f").as_deref(), Some("/tmp/x/real/f"));
        assert_eq!(host(&fs, DATA, "/home/me/rel/f").as_deref(), Some("/tmp/x/real/f"));
        assert_eq!(host(&fs, DATA, "/data/out/g").as_deref(), Some("/tmp/elsewhere/g"));
        assert_eq!(host(&fs, DATA, "/home/me/pw"), None);
        // The last component is followed only when asked.
        assert_eq!(host(&fs, DATA, "/home/me/d").as_deref(), Some("/tmp/x/real"));
        assert_eq!(run(&fs, DATA, "/home/me/d", Start::Cwd, false).unwrap(), None);
        assert_eq!(
            run(&fs, DATA, "/data/abs", Start::Cwd, false).unwrap(),
            Some(("/tmp/x/abs".into(), Mode::ReadWrite))
        );
        // A link met as an intermediate component is always followed.
        assert_eq!(
            run(&fs, DATA, "/home/me/d/.", Start::Cwd, false).unwrap(),
            Some(("/tmp/x/real/".into(), Mode::ReadWrite))
        );
    }

    #[test]
    fn link_loops() {
        let fs = FakeFs::new(
            &["/tmp/x"],
            &[("/tmp/x/a", "b"), ("/tmp/x/b", "/data/a"), ("/tmp/self", "/tmp/self")],
        );
        assert_eq!(run(&fs, DATA, "/data/a", Start::Cwd, true), Err(-ELOOP));
        assert_eq!(run(&fs, DATA, "/data/a/f", Start::Cwd, false), Err(-ELOOP));
        assert_eq!(run(&fs, DATA, "/tmp/self/x", Start::Cwd, false), Err(-ELOOP));
        // Not followed: no loop.
        assert_eq!(
            run(&fs, DATA, "/data/a", Start::Cwd, false).unwrap(),
            Some(("/tmp/x/a".into(), Mode::ReadWrite))
        );
        // A chain of 40 links is fine, 41 is a loop.
        let mut links = std::vec::Vec::new();
        for i in 0..41 {
            links.push((std::format!("/tmp/x/l{i}"), std::format!("l{}", i + 1)));
        }
        let refs: std::vec::Vec<(&str, &str)> = links.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let fs = FakeFs::new(&["/tmp/x/l41"], &refs);
        assert_eq!(host(&fs, DATA, "/data/l1").as_deref(), Some("/tmp/x/l41"));
        assert_eq!(run(&fs, DATA, "/data/l0", Start::Cwd, true), Err(-ELOOP));
    }

    #[test]
    fn relative_paths_start_in_the_program_view() {
        let mut fs = FakeFs::new(&["/tmp/x/sub/f", "/home/me/f", "/etc/passwd"], &[]);
        // Current directory outside every mapping: relative paths without
        // `..` into a mapping are passed unchanged.
        fs.cwd = "/home/me".into();
        assert_eq!(host(&fs, DATA, "f"), None);
        assert_eq!(host(&fs, DATA, "./f"), None);
        assert_eq!(host(&fs, DATA, "."), None);
        assert_eq!(host(&fs, DATA, "../../data/sub").as_deref(), Some("/tmp/x/sub"));
        // Current directory under a host side: translated, from its program
        // path (/data/sub).
        fs.cwd = "/tmp/x/sub".into();
        assert_eq!(host(&fs, DATA, "f").as_deref(), Some("/tmp/x/sub/f"));
        assert_eq!(host(&fs, DATA, ".").as_deref(), Some("/tmp/x/sub/"));
        assert_eq!(host(&fs, DATA, "../../etc/passwd").as_deref(), Some("/etc/passwd"));
        // A directory handle.
        fs.fds.insert(5, "/tmp/x".into());
        fs.fds.insert(6, "/etc".into());
        fs.fds.insert(7, "socket:[1234]".into());
        assert_eq!(
            run(&fs, DATA, "sub/f", Start::Fd(5), true).unwrap(),
            Some(("/tmp/x/sub/f".into(), Mode::ReadWrite))
        );
        assert_eq!(run(&fs, DATA, "passwd", Start::Fd(6), true).unwrap(), None);
        assert_eq!(
            run(&fs, DATA, "../data/sub", Start::Fd(6), true).unwrap(),
            Some(("/tmp/x/sub".into(), Mode::ReadWrite))
        );
        // Unusable handles: the kernel decides.
        assert_eq!(run(&fs, DATA, "f", Start::Fd(7), true).unwrap(), None);
        assert_eq!(run(&fs, DATA, "f", Start::Fd(99), true).unwrap(), None);
        // Absolute paths ignore the start.
        assert_eq!(run(&fs, DATA, "/etc/passwd", Start::Fd(5), true).unwrap(), None);
        assert_eq!(Start::from_dirfd((-100i64) as u64), Start::Cwd);
        assert_eq!(Start::from_dirfd(0xffff_ff9c), Start::Cwd);
        assert_eq!(Start::from_dirfd(3), Start::Fd(3));
    }

    #[test]
    fn a_cwd_shadowed_by_a_mapping_is_read_in_the_program_view() {
        // The host directory /data/old is hidden by the mapping of /data:
        // its program path /data/old means /tmp/x/old.
        let mut fs = FakeFs::new(&["/data/old", "/tmp/x/old"], &[]);
        fs.cwd = "/data/old".into();
        assert_eq!(host(&fs, DATA, "f").as_deref(), Some("/tmp/x/old/f"));
    }

    #[test]
    fn missing_directories_stop_resolution() {
        let fs = FakeFs::new(&["/tmp/x/a", "/etc/passwd"], &[]);
        // The kernel would fail at /tmp/x/missing: keep the rest as written
        // so it does.
        assert_eq!(
            run(&fs, DATA, "/data/missing/../../etc/passwd", Start::Cwd, true).unwrap(),
            Some(("/tmp/x/missing/../../etc/passwd".into(), Mode::ReadWrite))
        );
        assert_eq!(host(&fs, DATA, "/nonexistent/../data/a"), None);
        // A missing last component is what creating calls name.
        assert_eq!(host(&fs, DATA, "/data/a/new").as_deref(), Some("/tmp/x/a/new"));
        // ENOTDIR on the way stops too.
        let mut fs = FakeFs::new(&["/tmp/x/file"], &[]);
        fs.files.insert("/tmp/x/file".into());
        assert_eq!(host(&fs, DATA, "/data/file/x/y").as_deref(), Some("/tmp/x/file/x/y"));
        // An empty link target is ENOENT.
        let fs = FakeFs::new(&["/tmp/x"], &[("/tmp/x/e", "")]);
        assert_eq!(run(&fs, DATA, "/data/e/f", Start::Cwd, true), Err(-ENOENT));
    }

    #[test]
    fn mapping_points_and_their_ancestors_are_directories() {
        // /opt/tool does not exist on the host, but leads to a mapping.
        let fs = FakeFs::new(&["/tmp/y/x", "/opt"], &[("/opt/tool", "/elsewhere")]);
        let t = "/opt/tool/bin=/tmp/y";
        assert_eq!(host(&fs, t, "/opt/tool/bin/x").as_deref(), Some("/tmp/y/x"));
        assert_eq!(host(&fs, t, "/opt/tool/bin/../bin/x").as_deref(), Some("/tmp/y/x"));
        // Only paths under the mapping were asked about.
        let asked = fs.asked.borrow().clone();
        assert_eq!(asked, ["/tmp/y/x", "/tmp/y/x"]);
    }

    #[test]
    fn modes_come_from_the_resolved_path() {
        let fs = FakeFs::new(
            &["/tmp/ro/f", "/tmp/rw/f", "/tmp/log/app"],
            &[("/tmp/rw/to-ro", "/ro/f"), ("/tmp/ro/to-rw", "/rw/f")],
        );
        let t = "/ro=/tmp/ro:ro;/rw=/tmp/rw;/var/log=/tmp/log:discard";
        let m = |p: &str, follow| run(&fs, t, p, Start::Cwd, follow).unwrap().map(|(_, m)| m);
        assert_eq!(m("/ro/f", true), Some(Mode::ReadOnly));
        assert_eq!(m("/rw/f", true), Some(Mode::ReadWrite));
        assert_eq!(m("/rw/to-ro", true), Some(Mode::ReadOnly));
        assert_eq!(m("/rw/to-ro", false), Some(Mode::ReadWrite));
        assert_eq!(m("/ro/to-rw", true), Some(Mode::ReadWrite));
        assert_eq!(m("/var/log/app", true), Some(Mode::Discard));
        assert_eq!(m("/var/log/../../ro/f", true), Some(Mode::ReadOnly));
    }

    #[test]
    fn a_root_mapping_involves_everything() {
        let fs = FakeFs::new(
            &["/rootfs/etc/passwd", "/rootfs/usr/bin/sh"],
            &[("/rootfs/bin", "usr/bin")],
        );
        let t = "/=/rootfs";
        assert_eq!(host(&fs, t, "/etc/passwd").as_deref(), Some("/rootfs/etc/passwd"));
        assert_eq!(host(&fs, t, "/bin/sh").as_deref(), Some("/rootfs/usr/bin/sh"));
        assert_eq!(host(&fs, t, "/").as_deref(), Some("/rootfs/"));
        assert_eq!(host(&fs, t, "/../..").as_deref(), Some("/rootfs/"));
    }

    #[test]
    fn proc_links_name_host_paths() {
        let fs = FakeFs::new(
            &["/proc/42/fd", "/proc/42/task/43", "/tmp/x/sub/f", "/rootfs/home/f"],
            &[
                ("/proc/self", "42"),
                ("/proc/thread-self", "42/task/43"),
                ("/proc/42/cwd", "/tmp/x/sub"),
                ("/proc/42/task/43/cwd", "/rootfs/home"),
                ("/proc/42/fd/0", "pipe:[7]"),
                ("/proc/42/fd/4", "/tmp/x/gone (deleted)"),
            ],
        );
        // The target of a magic link is a host path: read back first.
        assert_eq!(host(&fs, DATA, "/proc/self/cwd/f").as_deref(), Some("/tmp/x/sub/f"));
        let root = "/=/rootfs;/proc=/proc";
        assert_eq!(
            host(&fs, root, "/proc/thread-self/cwd/f").as_deref(),
            Some("/rootfs/home/f")
        );
        // No path to follow: the kernel jumps.
        assert_eq!(host(&fs, DATA, "/proc/self/fd/0"), None);
        assert_eq!(host(&fs, DATA, "/proc/self/fd/4"), None);
        assert_eq!(host(&fs, root, "/proc/self/fd/0").as_deref(), Some("/proc/42/fd/0"));
        assert_eq!(host(&fs, root, "/proc/self/fd/4/x").as_deref(), Some("/proc/42/fd/4/x"));
        // Not followed in the last component.
        assert_eq!(run(&fs, DATA, "/proc/self/cwd", Start::Cwd, false).unwrap(), None);
        let table = Table::parse(DATA).unwrap();
        let mut r = Resolver::new();
        let mut buf = PathBuf::new();
        buf.set(b"/proc/self/cwd").unwrap();
        r.resolve(&fs, &table, &mut buf, Start::Cwd, false).unwrap();
        assert_eq!(r.program_path(), b"/proc/42/cwd");
    }

    #[test]
    fn long_paths_fail_cleanly() {
        let fs = FakeFs::new(&["/tmp/x"], &[]);
        let table = Table::parse("/d=/tmp/a-much-longer-host-directory-name").unwrap();
        let mut r = Resolver::new();
        let mut buf = PathBuf::new();
        let long = std::format!("/d/{}", "x".repeat(PATH_CAP - 3));
        buf.set(long.as_bytes()).unwrap();
        assert_eq!(r.resolve(&fs, &table, &mut buf, Start::Cwd, true), Err(-ENAMETOOLONG));
    }
}
