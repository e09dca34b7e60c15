//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The `strata` binary built for these tests.
pub const STRATA: &str = env!("CARGO_BIN_EXE_strata");

/// A directory under cargo's per-target temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{tag}.{}.{n}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn file(&self, name: &str, contents: &[u8], mode: u32) -> PathBuf {
        let p = self.0.join(name);
        fs::write(&p, contents).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A minimal x86-64 ET_EXEC image: one PT_LOAD covering the file and, if
/// `interp` is given, a PT_INTERP naming it.
pub fn mini_elf(interp: Option<&[u8]>) -> Vec<u8> {
    let phnum: u16 = if interp.is_some() { 2 } else { 1 };
    let interp_off = 64 + 56 * phnum as u64;
    let size = interp_off + interp.map_or(0, |i| i.len() as u64 + 1);
    let base = 0x40_0000u64;
    let mut f = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    f.extend_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(&62u16.to_le_bytes());
    f.extend_from_slice(&1u32.to_le_bytes());
    f.extend_from_slice(&(base + 0x1000).to_le_bytes());
    f.extend_from_slice(&64u64.to_le_bytes());
    f.extend_from_slice(&0u64.to_le_bytes());
    f.extend_from_slice(&0u32.to_le_bytes());
    for h in [64u16, 56, phnum, 64, 0, 0] {
        f.extend_from_slice(&h.to_le_bytes());
    }
    let mut ph = |ty: u32, flags: u32, off: u64, len: u64, align: u64| {
        f.extend_from_slice(&ty.to_le_bytes());
        f.extend_from_slice(&flags.to_le_bytes());
        for v in [off, base + off, base + off, len, len, align] {
            f.extend_from_slice(&v.to_le_bytes());
        }
    };
    if let Some(i) = interp {
        ph(3, 4, interp_off, i.len() as u64 + 1, 1);
    }
    ph(1, 5, 0, size, 0x1000);
    if let Some(i) = interp {
        f.extend_from_slice(i);
        f.push(0);
    }
    assert_eq!(f.len() as u64, size);
    f
}
