//! The session file (see `strata_proto::counts`): created before the program
//! starts with the stack specification and an empty trace ring, shared with
//! every process of the traced tree, read when it ends (the `count`
//! summary), removed in every case (on drop).

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use strata_proto::counts::{self, MAGIC};

/// Why the counter file could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot create the counter file in {}: {reason}", dir.display())]
pub struct CounterError {
    pub dir: PathBuf,
    pub reason: String,
}

/// A counter file that is removed when this value is dropped.
#[derive(Debug)]
pub struct CounterFile {
    path: PathBuf,
}

/// The directory for temporary files: `$TMPDIR` (made absolute, since the
/// program may change directory) or `/tmp`.
pub fn temp_dir(tmpdir: Option<OsString>) -> PathBuf {
    let dir = match tmpdir {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from("/tmp"),
    };
    if dir.is_absolute() {
        dir
    } else {
        match std::env::current_dir() {
            Ok(cwd) => cwd.join(dir),
            Err(_) => dir,
        }
    }
}

/// Where this user's session files live: `strata-UID` in the temporary
/// directory, private to the user (mode 0700). A sandbox policy may not
/// allow writing there (see `crate::policy`): other strata sessions of the
/// user keep their state (trace ring, site cache) in it.
pub fn session_dir_path(tmp: &Path) -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    tmp.join(format!("strata-{uid}"))
}

/// [`session_dir_path`], created if missing; refused if it is not a
/// directory of this user that only this user can reach.
pub fn session_dir(tmp: &Path) -> Result<PathBuf, CounterError> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = session_dir_path(tmp);
    let err = |reason: String| CounterError {
        dir: dir.clone(),
        reason,
    };
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(err(crate::preflight::io_text(&e))),
    }
    let m = fs::symlink_metadata(&dir).map_err(|e| err(crate::preflight::io_text(&e)))?;
    if !is_private_dir(&m) {
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        return Err(err(format!(
            "not a private directory of this user (it must be a directory owned by uid {uid} with mode 0700)"
        )));
    }
    prune_dead_sessions(&dir, LEFT_FOR, &|pid| {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) != 0 && *libc::__errno_location() == libc::ESRCH }
    });
    Ok(dir)
}

/// How long what a launcher killed outright left behind (its session file
/// and text images, which it removes when it ends normally) is kept.
const LEFT_FOR: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Removes the session files in `dir` of launchers that no longer run
/// (`dead(pid)`) and that were not written for `age`, with their text
/// images, and text images whose session file is gone, as old. (A launcher
/// in another pid namespace looks dead: the age spares any run of days.)
fn prune_dead_sessions(dir: &Path, age: std::time::Duration, dead: &dyn Fn(i32) -> bool) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let Some(pid) = name
            .strip_prefix("strata-count.")
            .and_then(|r| r.split('.').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let path = e.path();
        let images = name.ends_with(".text");
        // A session's images go with its file (the directory's own time
        // says only when an image was last added).
        if images && path.with_extension("").exists() {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).is_ok_and(|d| d > age));
        if pid <= 0 || pid == std::process::id() as i32 || !old || !dead(pid) {
            continue;
        }
        if images {
            let _ = fs::remove_dir_all(&path);
        } else {
            let mut text = path.clone().into_os_string();
            text.push(".text");
            let _ = fs::remove_dir_all(PathBuf::from(text));
            let _ = fs::remove_file(&path);
        }
    }
}

/// Whether `m` (from `symlink_metadata`) is a directory of this user that
/// only this user can reach.
pub(crate) fn is_private_dir(m: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0
}

/// Whether `dir` is on a file system mounted noexec.
fn noexec(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path and a statvfs for the kernel to fill.
    unsafe {
        let mut v: libc::statvfs = std::mem::zeroed();
        libc::statvfs(c.as_ptr(), &mut v) == 0 && v.f_flag & libc::ST_NOEXEC != 0
    }
}

impl CounterFile {
    /// Creates `strata-count.PID.STAMP.N` in `dir` (exclusively, mode 0600):
    /// [`FILE_SIZE`] bytes, [`MAGIC`] then zeroes.
    pub fn create(dir: &Path) -> Result<CounterFile, CounterError> {
        Self::create_session(dir, 0, 0, None)
    }

    /// Creates a session file with a trace ring of `ring` bytes (0: none;
    /// else a power of two within the limits) and a site cache of `cache`
    /// bytes after it (0: none; the file is extended sparsely). With a site
    /// cache, `PATH.text` is made too: a directory, or with `images` a link
    /// to that (text images kept across runs, crate::images).
    pub fn create_session(
        dir: &Path,
        ring: usize,
        cache: usize,
        images: Option<&Path>,
    ) -> Result<CounterFile, CounterError> {
        let err = |e: io::Error| CounterError {
            dir: dir.to_path_buf(),
            reason: crate::preflight::io_text(&e),
        };
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        // The header words are in the first page; the rest starts as zeros.
        let size = counts::file_size(ring);
        let mut contents = vec![0u8; size.min(4096)];
        contents[..MAGIC.len()].copy_from_slice(&MAGIC);
        let put = |c: &mut Vec<u8>, w: usize, v: u64| c[w * 8..w * 8 + 8].copy_from_slice(&v.to_le_bytes());
        put(&mut contents, counts::RING_SIZE_WORD, ring as u64);
        if cache != 0 {
            put(&mut contents, counts::SITE_CACHE_WORD, counts::file_size(ring) as u64);
            put(&mut contents, counts::SITE_CACHE_SIZE_WORD, cache as u64);
        }
        let mut attempt = 0u32;
        loop {
            let path = dir.join(format!("strata-count.{}.{stamp:x}.{attempt}", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
                Ok(mut f) => {
                    let file = CounterFile { path };
                    // On failure `file` is dropped and the partial file removed.
                    write_zero_filled(&mut f, &contents, size).map_err(err)?;
                    if cache != 0 {
                        f.set_len((size + cache) as u64).map_err(err)?;
                        // Where the session's processes share rewritten
                        // code (text images, runtime/src/textimage.rs),
                        // unless nothing mapped from there may run.
                        if !noexec(dir) {
                            match images {
                                Some(to) => std::os::unix::fs::symlink(to, file.text_dir()).map_err(err)?,
                                None => fs::DirBuilder::new().mode(0o700).create(file.text_dir()).map_err(err)?,
                            }
                        }
                    }
                    return Ok(file);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
                Err(e) => return Err(err(e)),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session's directory of text images, `PATH.text` (made when the
    /// session has a site cache; removed with the session).
    pub fn text_dir(&self) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(".text");
        PathBuf::from(p)
    }

    /// Header word `w` (see `strata_proto::counts`), 0 if unreadable.
    pub fn word(&self, w: usize) -> u64 {
        use std::os::unix::fs::FileExt;
        let mut b = [0u8; 8];
        match fs::File::open(&self.path).and_then(|f| f.read_exact_at(&mut b, (w * 8) as u64)) {
            Ok(()) => u64::from_le_bytes(b),
            Err(_) => 0,
        }
    }

    /// The file's current contents.
    pub fn read(&self) -> io::Result<Vec<u8>> {
        fs::read(&self.path)
    }
}

impl Drop for CounterFile {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(self.text_dir());
        let _ = fs::remove_file(&self.path);
    }
}

/// Writes the new file `f`: `head` (the header page), then zeros up to
/// `size` bytes, allocated with fallocate, which reads back as zeros,
/// rather than written (a trace ring written out cost the launcher a page
/// fault and a page of writes per 4 KiB at every start). The blocks are
/// allocated now either way, so a full file system shows here and not as a
/// SIGBUS in a process writing the ring later. Falls back to writing the
/// zeros where fallocate is refused.
fn write_zero_filled(f: &mut fs::File, head: &[u8], size: usize) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    f.write_all(head)?;
    if head.len() >= size {
        return Ok(());
    }
    // SAFETY: fallocate on a descriptor this function borrows.
    if unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, size as libc::off_t) } == 0 {
        return Ok(());
    }
    let zeros = [0u8; 4096];
    let mut left = size - head.len();
    while left > 0 {
        let n = left.min(zeros.len());
        f.write_all(&zeros[..n])?;
        left -= n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn created_with_magic_and_removed_on_drop() {
        let d = TempDir::new("counter");
        let a = CounterFile::create(d.path()).unwrap();
        let b = CounterFile::create(d.path()).unwrap();
        assert_ne!(a.path(), b.path());
        let buf = a.read().unwrap();
        assert_eq!(buf.len(), counts::FILE_SIZE);
        assert_eq!(buf[..8], MAGIC);
        let s = CounterFile::create_session(d.path(), 1 << 16, 0, None).unwrap();
        let sb = s.read().unwrap();
        assert_eq!(sb.len(), counts::file_size(1 << 16));
        assert_eq!(
            sb[counts::RING_SIZE_WORD * 8..counts::RING_SIZE_WORD * 8 + 8],
            (1u64 << 16).to_le_bytes()
        );
        assert!(buf[8..].iter().all(|&x| x == 0));
        let mode = fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let p = a.path().to_path_buf();
        drop(a);
        assert!(!p.exists());
        assert!(b.path().exists());
    }

    #[test]
    fn bad_directory_is_an_error() {
        let d = TempDir::new("counter2");
        let e = CounterFile::create(&d.path().join("missing")).unwrap_err();
        assert!(e.to_string().ends_with("missing: No such file or directory"), "{e}");
    }

    #[test]
    fn dead_launchers_leftovers_are_pruned() {
        let d = TempDir::new("counter-prune");
        let s = CounterFile::create_session(d.path(), 0, 1 << 16, None).unwrap();
        let (file, text) = (s.path().to_path_buf(), s.text_dir());
        assert!(file.is_file() && text.is_dir());
        let (dead, live) = (999_999_999, 888_888_888);
        let left = |pid: i32| {
            let f = d.path().join(format!("strata-count.{pid}.1.0"));
            let t = d.path().join(format!("strata-count.{pid}.1.0.text"));
            fs::write(&f, b"x").unwrap();
            fs::create_dir_all(t.join("1.2")).unwrap();
            fs::write(t.join("1.2").join("libc.so.6"), b"x").unwrap();
            (f, t)
        };
        let (df, dt) = left(dead);
        let (lf, lt) = left(live);
        let orphan = d.path().join("strata-count.777777777.1.0.text");
        fs::create_dir_all(&orphan).unwrap();
        fs::write(d.path().join("sites-1.cache"), b"x").unwrap();
        let is_dead = |p: i32| p == dead || p == 777_777_777 || p == std::process::id() as i32;
        // Recent files stay, whoever left them.
        prune_dead_sessions(d.path(), LEFT_FOR, &is_dead);
        assert!(df.is_file() && dt.is_dir() && lf.is_file() && lt.is_dir() && orphan.is_dir());
        // Old ones of dead launchers go, file and images; those of live
        // launchers, of this one, and site caches stay.
        prune_dead_sessions(d.path(), std::time::Duration::ZERO, &is_dead);
        assert!(!df.exists() && !dt.exists(), "a dead launcher's leftovers stayed");
        assert!(!orphan.exists(), "images without a session file stayed");
        assert!(lf.is_file() && lt.is_dir() && file.is_file() && text.is_dir());
        assert!(d.path().join("sites-1.cache").is_file());
    }

    #[test]
    fn session_dir_is_private() {
        let base = crate::testutil::TempDir::new("sdir");
        let d = session_dir(base.path()).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&d).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(session_dir(base.path()).unwrap(), d);
        fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(session_dir(base.path()).is_err());
    }

    #[test]
    fn temp_dir_defaults_and_is_absolute() {
        assert_eq!(temp_dir(None), PathBuf::from("/tmp"));
        assert_eq!(temp_dir(Some(OsString::new())), PathBuf::from("/tmp"));
        assert_eq!(temp_dir(Some("/var/tmp".into())), PathBuf::from("/var/tmp"));
        assert!(temp_dir(Some("rel".into())).is_absolute());
    }
}
