//! Extension objects (`strata run --ext ./libname.so`), checked before the
//! program starts.
//!
//! strata-rt loads an extension object with its own loader
//! (`crates/runtime/src/dso.rs`), inside the program, where a refusal can
//! only end the process. Both read the object with `strata_loader::extobj`,
//! which holds the rules (ELF64 x86-64 shared object built without libc,
//! supported relocations only, undefined symbols only those strata provides,
//! `strata_ext_init` and a compatible `strata_ext_abi_version` exported), so
//! [`check`] refuses a bad object here, before anything runs, with the
//! reasons the runtime would give ([`Problem`]). What is left here is the
//! file: it must be a readable regular file, read whole.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use strata_loader::extobj::Problem;

use crate::preflight::io_text;

/// An extension object that strata-rt will load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtObject {
    /// Absolute and canonical (what the runtime is given).
    pub path: PathBuf,
    /// Its `strata_ext_abi_version`.
    pub version: u32,
}

/// Why an extension object cannot be used; displayed as `FILE: REASON`.
#[derive(Debug, thiserror::Error)]
pub enum ExtObjError {
    #[error("{}: cannot read the extension object: {}", path.display(), io_text(source))]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: {problem}", path.display())]
    Invalid { path: PathBuf, problem: Problem },
}

impl ExtObjError {
    /// What is wrong with the file's contents, if that is the reason.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            ExtObjError::Invalid { problem, .. } => Some(problem),
            ExtObjError::Read { .. } => None,
        }
    }
}

/// Checks the extension object at `path` as strata-rt's loader will.
pub fn check(path: &Path) -> Result<ExtObject, ExtObjError> {
    let read_error = |source| ExtObjError::Read {
        path: path.to_path_buf(),
        source,
    };
    let invalid = |problem| ExtObjError::Invalid {
        path: path.to_path_buf(),
        problem,
    };
    let abs = fs::canonicalize(path).map_err(read_error)?;
    let meta = fs::metadata(&abs).map_err(read_error)?;
    if meta.is_dir() {
        return Err(read_error(io::Error::from_raw_os_error(libc::EISDIR)));
    }
    if !meta.is_file() {
        return Err(invalid(Problem::NotRegular));
    }
    // (A Vec need not be 8-byte aligned: `object`'s `unaligned` feature, on
    // for this crate, lets the ELF structures be viewed at any address.)
    let data = fs::read(&abs).map_err(read_error)?;
    let (_, checked) = strata_loader::extobj::inspect(&data).map_err(invalid)?;
    Ok(ExtObject {
        path: abs,
        version: checked.version,
    })
}

#[cfg(test)]
mod tests {
    //! The launcher's part: files, paths and the path in the message. The
    //! rules themselves are tested in `strata_loader::extobj`.
    use super::*;
    use crate::testutil::TempDir;
    use std::process::Command;

    /// A good extension object built with `cc` in `dir`, or None (with a
    /// note) if there is no C compiler.
    fn good_object(dir: &TempDir) -> Option<PathBuf> {
        let src = dir.file(
            "good.c",
            format!(
                "#include <stdint.h>\nuint32_t strata_ext_abi_version = {:#x};\n\
                 int strata_ext_init(void) {{ return 0; }}\n",
                strata_abi::VERSION
            )
            .as_bytes(),
            0o644,
        );
        let out = dir.path().join("good.so");
        let flags = ["-shared", "-fPIC", "-nostdlib", "-ffreestanding", "-O2", "-o"];
        match Command::new("cc").args(flags).arg(&out).arg(&src).output() {
            Ok(o) if o.status.success() => Some(out),
            Ok(o) => panic!("cc: {}", String::from_utf8_lossy(&o.stderr)),
            Err(e) => {
                eprintln!("skipped: no C compiler (cc) to build test objects: {e}");
                None
            }
        }
    }

    fn problem(p: &Path) -> Problem {
        match check(p) {
            Err(ExtObjError::Invalid { path, problem }) => {
                assert_eq!(path, p);
                problem
            }
            other => panic!("{}: expected a problem, got {other:?}", p.display()),
        }
    }

    #[test]
    fn accepts_a_freestanding_object() {
        let dir = TempDir::new("extobj-good");
        let Some(so) = good_object(&dir) else {
            return;
        };
        let obj = check(&so).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(obj.version, strata_abi::VERSION);
        assert!(obj.path.is_absolute());
        assert_eq!(obj.path, fs::canonicalize(&so).unwrap());
        // A relative path comes back absolute.
        let cwd = std::env::current_dir().unwrap();
        let rel = pathdiff(&so, &cwd);
        assert_eq!(check(&rel).unwrap().path, fs::canonicalize(&so).unwrap());
    }

    /// `to` relative to `from` (both absolute).
    fn pathdiff(to: &Path, from: &Path) -> PathBuf {
        let up = from.components().count() - 1;
        let mut p: PathBuf = std::iter::repeat_n("..", up).collect();
        p.push(to.strip_prefix("/").unwrap());
        p
    }

    #[test]
    fn refuses_files_that_are_not_objects() {
        let dir = TempDir::new("extobj-files");
        let text = dir.file(
            "text.so",
            b"this is not an ELF file, it is plain text\n".repeat(4).as_slice(),
            0o644,
        );
        assert_eq!(problem(&text), Problem::NotElf);
        assert_eq!(
            check(&text).unwrap_err().to_string(),
            format!("{}: not an ELF shared object (no ELF header)", text.display())
        );
        let exe = dir.file("exe", &crate::testutil::mini_elf(None), 0o755);
        assert_eq!(problem(&exe), Problem::NotShared(object::elf::ET_EXEC));

        let missing = dir.path().join("missing.so");
        let e = check(&missing).unwrap_err();
        assert!(matches!(&e, ExtObjError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound));
        assert_eq!(
            e.to_string(),
            format!(
                "{}: cannot read the extension object: No such file or directory",
                missing.display()
            )
        );
        let e = check(dir.path()).unwrap_err();
        assert!(e.to_string().ends_with("Is a directory"), "{e}");
        let e = check(Path::new("/dev/null")).unwrap_err();
        assert_eq!(e.problem(), Some(&Problem::NotRegular));
        assert_eq!(e.to_string(), "/dev/null: not a regular file");
    }
}
