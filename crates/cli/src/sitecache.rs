//! The fast path's site cache, kept from one run to the next.
//!
//! Within a run, the processes of the traced tree share their scan results in
//! the session file (`strata_proto::counts::SITE_CACHE_WORD`): a library is
//! decoded once per run. This keeps the complete entries when the run ends,
//! in `sites-KEY.cache` beside the session files (the user's private
//! `strata-UID` directory), and puts them back into the next session's cache
//! before its program starts, so a new run of `ls` or `python3` does not
//! decode libc again (`--fast-stats` counts the mappings scanned and those
//! taken from the cache). KEY names the
//! strata-rt binary (device, inode, size, modification time): another build
//! never reads a cache whose record layout it does not share; another
//! build's file that has not been written for two weeks is removed when a
//! cache is saved.
//!
//! An entry is keyed by its file's device, inode, size and modification time,
//! and the runtime checks every record against the code bytes before it
//! rewrites anything; a stale or damaged cache costs a scan, never a wrong
//! rewrite of different code. Runs with a sandbox policy read it but never
//! write it: a sandboxed program can write its session's cache, and must
//! not influence a later run (what an unsandboxed program of the user's
//! wrote, it could as well have written anywhere the user can).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use strata_proto::counts;

use crate::counter::CounterFile;

/// Caches larger than this keep only the entries their own run added when
/// they are saved (entries for files since replaced would otherwise
/// accumulate without bound).
const KEEP_ALL_MAX: usize = counts::SITE_CACHE_DEFAULT / 2;

/// The saved cache for runtime `rt` in `dir`.
pub fn path_for(dir: &Path, rt: &Path) -> Option<PathBuf> {
    Some(dir.join(format!("sites-{}.cache", build_key(rt)?)))
}

/// What names a strata-rt build in the files kept across runs (its device,
/// inode, size and modification time, 16 hex digits): this cache, and text
/// images (crate::images).
pub fn build_key(rt: &Path) -> Option<String> {
    let m = fs::metadata(rt).ok()?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in [m.dev(), m.ino(), m.size(), m.mtime() as u64, m.mtime_nsec() as u64] {
        for b in v.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    Some(format!("{h:016x}"))
}

/// The length in bytes of the complete entries at the start of `words`.
fn complete_prefix(words: &[u64]) -> usize {
    let mut i = 0;
    while i + counts::SITE_ENTRY_HEAD <= words.len() {
        let (state, n) = (words[i], words[i + counts::SITE_ENTRY_HEAD - 1]);
        let Some(end) = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(counts::SITE_REC_WORDS))
            .and_then(|r| r.checked_add(i + counts::SITE_ENTRY_HEAD))
        else {
            break;
        };
        if state != 1 || end > words.len() {
            break;
        }
        i = end;
    }
    i * 8
}

fn words_of(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect()
}

/// Where the session's cache is and how big: (offset, size), if it has one.
fn region(session: &CounterFile) -> Option<(u64, usize)> {
    let at = session.word(counts::SITE_CACHE_WORD);
    let size = session.word(counts::SITE_CACHE_SIZE_WORD) as usize;
    (at != 0 && size != 0).then_some((at, size))
}

/// Copies the complete entries of the saved cache `file` (if it is this
/// user's own regular file) into the session's empty cache. Returns the bytes
/// loaded (0 when there is nothing usable).
pub fn load(session: &CounterFile, file: &Path) -> usize {
    let Some((at, size)) = region(session) else {
        return 0;
    };
    let Ok(f) = File::open(file) else {
        return 0;
    };
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let ok = f
        .metadata()
        .is_ok_and(|m| m.is_file() && m.uid() == uid && m.mode() & 0o077 == 0 && m.len() as usize <= size);
    let mut bytes = Vec::new();
    if !ok || io::Read::read_to_end(&mut &f, &mut bytes).is_err() || bytes.len() > size {
        return 0;
    }
    let n = complete_prefix(&words_of(&bytes));
    if n == 0 {
        return 0;
    }
    let Ok(s) = OpenOptions::new().write(true).open(session.path()) else {
        return 0;
    };
    if s.write_all_at(&bytes[..n], at).is_err()
        || s.write_all_at(&(n as u64).to_le_bytes(), (counts::SITE_CACHE_USED_WORD * 8) as u64)
            .is_err()
    {
        // The runtime sees an empty cache (the used word is written last).
        return 0;
    }
    n
}

/// Writes the session's complete entries to `file` (atomically: a new file
/// renamed over it). `loaded`: the bytes [`load`] put in at the start.
pub fn save(session: &CounterFile, file: &Path, loaded: usize) -> io::Result<()> {
    let Some((at, size)) = region(session) else {
        return Ok(());
    };
    let used = (session.word(counts::SITE_CACHE_USED_WORD) as usize).min(size);
    let mut bytes = vec![0u8; used];
    File::open(session.path())?.read_exact_at(&mut bytes, at)?;
    let n = complete_prefix(&words_of(&bytes));
    if n <= loaded {
        return Ok(()); // nothing new
    }
    let keep = if n > KEEP_ALL_MAX {
        &bytes[loaded..n]
    } else {
        &bytes[..n]
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".sites.{}.tmp", std::process::id()));
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(keep))
        .and_then(|()| fs::rename(&tmp, file));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    } else {
        prune(dir, file, STALE_AFTER);
    }
    written
}

/// A cache of another strata-rt build that nothing has written for this
/// long is removed when a cache is saved (each build has its own file: an
/// upgraded or rebuilt strata would otherwise leave them behind for good).
/// Kept text images go by the same rule (crate::images).
pub(crate) const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(14 * 24 * 3600);

/// Removes the `sites-*.cache` files in `dir` but `keep` that were last
/// written more than `age` ago.
fn prune(dir: &Path, keep: &Path, age: std::time::Duration) {
    prune_stale(dir, keep, std::time::SystemTime::now(), age, &|name| {
        name.starts_with("sites-") && name.ends_with(".cache")
    });
}

/// Removes the entries of `dir` but `keep` whose name `ours` accepts and
/// that were last modified more than `age` before `now` (files, or
/// directories with what they hold).
pub(crate) fn prune_stale(
    dir: &Path,
    keep: &Path,
    now: std::time::SystemTime,
    age: std::time::Duration,
    ours: &dyn Fn(&str) -> bool,
) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path == keep || !e.file_name().to_str().is_some_and(ours) {
            continue;
        }
        let Ok(m) = e.metadata() else {
            continue;
        };
        if !m.modified().is_ok_and(|t| now.duration_since(t).is_ok_and(|d| d > age)) {
            continue;
        }
        let _ = if m.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    fn entry(key: u64, n: u64) -> Vec<u64> {
        let mut e = vec![1, key, 0, 0, 0, 0, 0, 0, n];
        e.extend(std::iter::repeat_n(7u64, n as usize * counts::SITE_REC_WORDS));
        e
    }

    fn bytes(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn only_complete_entries_count() {
        let mut w = entry(1, 2);
        w.extend(entry(2, 0));
        let good = w.len() * 8;
        assert_eq!(complete_prefix(&w), good);
        // An entry still being written (state 0), one running past the end,
        // one whose count overflows: the prefix stops before each.
        for bad in [
            vec![0, 3, 0, 0, 0, 0, 0, 0, 1],
            entry(3, 5)[..20].to_vec(),
            vec![1, 0, 0, 0, 0, 0, 0, 0, u64::MAX],
        ] {
            let mut v = w.clone();
            v.extend(bad);
            assert_eq!(complete_prefix(&v), good);
        }
        assert_eq!(complete_prefix(&[1, 2, 3]), 0);
    }

    #[test]
    fn stale_caches_of_other_builds_are_pruned() {
        let d = TempDir::new("sitecache-prune");
        let p = |n: &str| d.path().join(n);
        for n in [
            "sites-current.cache",
            "sites-old.cache",
            "sites-recent.cache",
            "other-old.cache",
        ] {
            fs::write(p(n), b"x").unwrap();
        }
        let month_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(30 * 24 * 3600);
        for n in ["sites-current.cache", "sites-old.cache", "other-old.cache"] {
            File::options()
                .write(true)
                .open(p(n))
                .unwrap()
                .set_modified(month_ago)
                .unwrap();
        }
        prune(d.path(), &p("sites-current.cache"), STALE_AFTER);
        let mut left: Vec<String> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["other-old.cache", "sites-current.cache", "sites-recent.cache"]);
    }

    #[test]
    fn saved_and_loaded_through_sessions() {
        let d = TempDir::new("sitecache");
        let file = d.path().join("sites-test.cache");
        let a = CounterFile::create_session(d.path(), 0, 1 << 16, None).unwrap();
        let (at, _) = region(&a).unwrap();
        // What a run's processes put in: two complete entries and one half-written.
        let mut w = entry(10, 1);
        w.extend(entry(11, 3));
        let complete = w.len() * 8;
        w.extend([0u64, 12, 0, 0, 0, 0, 0, 0, 0]);
        let f = OpenOptions::new().write(true).open(a.path()).unwrap();
        f.write_all_at(&bytes(&w), at).unwrap();
        f.write_all_at(
            &((w.len() * 8) as u64).to_le_bytes(),
            (counts::SITE_CACHE_USED_WORD * 8) as u64,
        )
        .unwrap();
        save(&a, &file, 0).unwrap();
        assert_eq!(fs::read(&file).unwrap().len(), complete);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        // The next session starts with them.
        let b = CounterFile::create_session(d.path(), 0, 1 << 16, None).unwrap();
        assert_eq!(load(&b, &file), complete);
        assert_eq!(b.word(counts::SITE_CACHE_USED_WORD) as usize, complete);
        let mut back = vec![0u8; complete];
        File::open(b.path()).unwrap().read_exact_at(&mut back, at).unwrap();
        assert_eq!(back, bytes(&w)[..complete]);
        // Nothing new: the file stays as it was.
        save(&b, &file, complete).unwrap();
        assert_eq!(fs::read(&file).unwrap().len(), complete);
        // A file others may read, or garbage, is not loaded.
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        let c = CounterFile::create_session(d.path(), 0, 1 << 16, None).unwrap();
        assert_eq!(load(&c, &file), 0);
        fs::write(&file, b"not a cache at all").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(load(&c, &file), 0);
        assert_eq!(c.word(counts::SITE_CACHE_USED_WORD), 0);
    }
}
