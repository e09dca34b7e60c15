//! Helpers for unit tests: a temporary directory and tiny ELF images.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory under the system temp dir, removed with its contents on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("strata-cli-test.{}.{tag}.{n}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    /// Writes `name` with `contents` and permission bits `mode`.
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
    let interp_len = interp.map_or(0, |i| i.len() as u64 + 1);
    let size = interp_off + interp_len;
    let base = 0x40_0000u64;
    let mut f = Vec::new();
    f.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&2u16.to_le_bytes()); // e_type ET_EXEC
    f.extend_from_slice(&62u16.to_le_bytes()); // e_machine x86-64
    f.extend_from_slice(&1u32.to_le_bytes()); // e_version
    f.extend_from_slice(&(base + 0x1000).to_le_bytes()); // e_entry
    f.extend_from_slice(&64u64.to_le_bytes()); // e_phoff
    f.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
    f.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    f.extend_from_slice(&64u16.to_le_bytes()); // e_ehsize
    f.extend_from_slice(&56u16.to_le_bytes()); // e_phentsize
    f.extend_from_slice(&phnum.to_le_bytes());
    f.extend_from_slice(&64u16.to_le_bytes()); // e_shentsize
    f.extend_from_slice(&0u16.to_le_bytes()); // e_shnum
    f.extend_from_slice(&0u16.to_le_bytes()); // e_shstrndx
    let mut ph = |ty: u32, flags: u32, off: u64, len: u64, align: u64| {
        f.extend_from_slice(&ty.to_le_bytes());
        f.extend_from_slice(&flags.to_le_bytes());
        f.extend_from_slice(&off.to_le_bytes());
        f.extend_from_slice(&(base + off).to_le_bytes());
        f.extend_from_slice(&(base + off).to_le_bytes());
        f.extend_from_slice(&len.to_le_bytes());
        f.extend_from_slice(&len.to_le_bytes());
        f.extend_from_slice(&align.to_le_bytes());
    };
    if interp.is_some() {
        ph(3, 4, interp_off, interp_len, 1);
    }
    ph(1, 5, 0, size, 0x1000);
    if let Some(i) = interp {
        f.extend_from_slice(i);
        f.push(0);
    }
    assert_eq!(f.len() as u64, size);
    f
}
