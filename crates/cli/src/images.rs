//! Text images kept from one run to the next.
//!
//! A session's processes share rewritten library code through text images
//! (runtime/src/textimage.rs) in the session's directory `SESSION.text`.
//! Without more, every run starts without them: its first process rewrites
//! its own copy of libc and ld.so (a copy-on-write fault per page holding a
//! site, and every fork of that process then copies the page tables of
//! those pages: bench/start-cost.sh and bench/exec-cost.sh's fork loop
//! measure what keeping the images saves, in
//! bench/results/2026-11-23-kept-images.md). For a run without a sandbox policy,
//! `SESSION.text` is instead a symbolic link to `images-KEY/` beside the
//! session files (the user's private `strata-UID` directory), which outlives
//! the run: the first run writes the images, later runs map them from its
//! first process on.
//!
//! KEY names the strata-rt binary, as the site cache's does
//! ([`crate::sitecache::path_for`]): an image's trampolines are that build's
//! code. The runtime names each image by its library's key and the set of
//! calls the run's layers want (which decides the trampolines' targets), so
//! runs with different stacks keep different images side by side.
//!
//! Runs with a sandbox policy keep theirs in the session, as before, and
//! never see these: a sandboxed program can write its session's images, and
//! must not influence a later run. An unsandboxed program could write here
//! as anywhere else the user can; what it wrote is code that only runs in
//! the user's own later runs.
//!
//! Bounds: a directory of more than [`MAX_IMAGES`] images (library updates
//! leave old ones behind) is emptied when a run starts; when a build makes
//! its directory, other builds' directories not used for two weeks are
//! removed, and all but the two most recently used.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// More images than this (published or not: an image left unpublished by a
/// process that died while writing it counts too) and the directory starts
/// again empty. An image is a copy of its library (libc: 2 MB), so this is
/// some 60 MB at most.
pub const MAX_IMAGES: u64 = 32;

/// Another build's directory unused for this long is removed (as another
/// build's site cache is).
const OTHER_BUILDS_KEPT: Duration = crate::sitecache::STALE_AFTER;

/// A directory's time is brought forward (for the two weeks' rule) when it
/// is older than this.
const TOUCH_AFTER: Duration = Duration::from_secs(24 * 3600);

/// The kept images of runtime `rt` in the session directory `dir`.
pub fn path_for(dir: &Path, rt: &Path) -> Option<PathBuf> {
    Some(dir.join(format!("images-{}", crate::sitecache::build_key(rt)?)))
}

/// Kept images in use by this run: the directory is removed when the run
/// ends if it is still empty (nothing was imaged: a program without
/// libraries, or a runtime that never started).
pub struct Kept(PathBuf);

impl Kept {
    /// What the session's `SESSION.text` links to (a name in the same
    /// directory).
    pub fn link_target(&self) -> PathBuf {
        self.0.file_name().map_or_else(|| self.0.clone(), PathBuf::from)
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.0);
    }
}

/// Readies `images` for this run: made if missing (a private directory of
/// this user; other builds' directories unused for two weeks go then),
/// emptied if it holds more than [`MAX_IMAGES`] images. None: the run
/// keeps its images to itself.
pub fn prepare(images: &Path) -> Option<Kept> {
    prepare_at(images, SystemTime::now()).ok()
}

fn prepare_at(images: &Path, now: SystemTime) -> io::Result<Kept> {
    // A directory's link count is 2 and one per subdirectory: one per image.
    let m = match fs::symlink_metadata(images) {
        Ok(m) if m.is_dir() && m.nlink() > MAX_IMAGES + 2 => {
            fs::remove_dir_all(images)?;
            None
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let m = match m {
        Some(m) => m,
        None => {
            if let Some(parent) = images.parent() {
                prune_other_builds(parent, images, now);
            }
            match fs::DirBuilder::new().mode(0o700).create(images) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            fs::symlink_metadata(images)?
        }
    };
    if !crate::counter::is_private_dir(&m) {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    let stale = m
        .modified()
        .is_ok_and(|t| now.duration_since(t).is_ok_and(|d| d > TOUCH_AFTER));
    if stale {
        let _ = fs::File::open(images).and_then(|f| f.set_modified(now));
    }
    Ok(Kept(images.to_path_buf()))
}

/// At most this many other builds' directories are kept (the most recently
/// used): someone who rebuilds strata often would otherwise keep a set of
/// images per build for two weeks.
const OTHER_BUILDS_MAX: usize = 2;

/// Removes the `images-*` directories of `parent` other than `keep` that no
/// run used for two weeks, and all but the [`OTHER_BUILDS_MAX`] most
/// recently used of the others. (Run when `keep` is made: a new build's
/// first run.)
fn prune_other_builds(parent: &Path, keep: &Path, now: SystemTime) {
    let ours = |n: &str| n.starts_with("images-");
    crate::sitecache::prune_stale(parent, keep, now, OTHER_BUILDS_KEPT, &ours);
    let Ok(list) = fs::read_dir(parent) else {
        return;
    };
    let mut others: Vec<(SystemTime, PathBuf)> = list
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(ours) && e.path() != keep)
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    others.sort_by_key(|o| std::cmp::Reverse(o.0));
    for (_, path) in others.iter().skip(OTHER_BUILDS_MAX) {
        let _ = fs::remove_dir_all(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    #[test]
    fn kept_images_outlive_the_run_unless_empty() {
        let base = TempDir::new("img");
        let images = base.path().join("images-00ff");
        let kept = prepare(&images).unwrap();
        assert_eq!(kept.link_target(), PathBuf::from("images-00ff"));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&images).unwrap().permissions().mode() & 0o777, 0o700);
        fs::create_dir(images.join("1.ab")).unwrap();
        drop(kept);
        assert!(images.join("1.ab").exists());
        fs::remove_dir(images.join("1.ab")).unwrap();
        drop(prepare(&images).unwrap());
        assert!(!images.exists(), "an empty directory goes with the run");
    }

    #[test]
    fn too_many_images_start_again_empty() {
        let base = TempDir::new("img");
        let images = base.path().join("images-00ff");
        let kept = prepare(&images).unwrap();
        for i in 0..MAX_IMAGES {
            fs::create_dir(images.join(format!("{i}.ab"))).unwrap();
        }
        drop(kept);
        let kept = prepare(&images).unwrap();
        assert_eq!(fs::read_dir(&images).unwrap().count() as u64, MAX_IMAGES);
        fs::create_dir(images.join("one.more")).unwrap();
        drop(kept);
        let _kept = prepare(&images).unwrap();
        assert_eq!(fs::read_dir(&images).unwrap().count(), 0);
    }

    #[test]
    fn other_builds_go_after_two_weeks() {
        let base = TempDir::new("img");
        let (old, recent) = (base.path().join("images-0001"), base.path().join("images-0002"));
        for d in [&old, &recent] {
            fs::create_dir(d).unwrap();
        }
        let later = SystemTime::now() + OTHER_BUILDS_KEPT + Duration::from_secs(60);
        fs::File::open(&recent).unwrap().set_modified(later).unwrap();
        let _kept = prepare_at(&base.path().join("images-00ff"), later).unwrap();
        assert!(!old.exists() && recent.exists());
    }

    #[test]
    fn only_the_latest_other_builds_are_kept() {
        let base = TempDir::new("img");
        let now = SystemTime::now();
        let dirs: Vec<PathBuf> = (1..=4).map(|i| base.path().join(format!("images-000{i}"))).collect();
        for (i, d) in dirs.iter().enumerate() {
            fs::create_dir(d).unwrap();
            let t = now - Duration::from_secs(3600 * (4 - i as u64));
            fs::File::open(d).unwrap().set_modified(t).unwrap();
        }
        let _kept = prepare_at(&base.path().join("images-00ff"), now).unwrap();
        let left: Vec<bool> = dirs.iter().map(|d| d.exists()).collect();
        assert_eq!(left, [false, false, true, true]);
    }

    #[test]
    fn a_directory_not_private_is_not_used() {
        let base = TempDir::new("img");
        let images = base.path().join("images-00ff");
        fs::create_dir(&images).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&images, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(prepare(&images).is_none());
    }
}
