//! The resolver's [`Fs`] in the running program: every question is a call
//! issued down the stack with [`Below::issue`], so layers below (another
//! map among them) answer it in their own view.

use crate::policy::{NR_GETCWD, NR_READLINKAT};
use crate::resolve::{Fs, AT_FDCWD};
use strata_ext::{Below, Call, PathBuf, EBADF, ENAMETOOLONG, ENOENT};

pub struct StackFs<'a> {
    /// The call being handled (its caller's ids go with the helper calls).
    pub template: &'a Call,
    pub below: &'a Below,
}

/// A byte count from a call, or its error; a result that filled `cap`
/// bytes may have been cut.
fn count(r: i64, cap: usize) -> Result<usize, i64> {
    match usize::try_from(r) {
        Err(_) => Err(r),
        Ok(n) if n >= cap => Err(-ENAMETOOLONG),
        Ok(n) => Ok(n),
    }
}

impl StackFs<'_> {
    fn readlinkat(&self, path: *const u8, out: &mut [u8]) -> Result<usize, i64> {
        let args = [
            AT_FDCWD as i64 as u64,
            path as u64,
            out.as_mut_ptr() as u64,
            out.len() as u64,
            0,
            0,
        ];
        count(self.below.issue(self.template, NR_READLINKAT, args), out.len())
    }
}

impl Fs for StackFs<'_> {
    fn readlink(&self, host_path: &PathBuf, out: &mut [u8]) -> Result<usize, i64> {
        self.readlinkat(host_path.as_ptr(), out)
    }

    fn cwd(&self, out: &mut [u8]) -> Result<usize, i64> {
        let args = [out.as_mut_ptr() as u64, out.len() as u64, 0, 0, 0, 0];
        let r = self.below.issue(self.template, NR_GETCWD, args);
        // The length counts the NUL.
        let n = count(r, out.len().saturating_add(1))?;
        let text = out.get(..n).unwrap_or(&[]);
        match text.iter().position(|&b| b == 0).unwrap_or(n) {
            0 => Err(-ENOENT),
            z => Ok(z),
        }
    }

    fn fd_path(&self, fd: i32, out: &mut [u8]) -> Result<usize, i64> {
        // "/proc/self/fd/N" with its NUL.
        let Ok(mut v) = u32::try_from(fd) else {
            return Err(-EBADF);
        };
        let mut digits = [0u8; 10];
        let mut at = digits.len();
        loop {
            at -= 1;
            if let Some(d) = digits.get_mut(at) {
                *d = b'0' + (v % 10) as u8;
            }
            v /= 10;
            if v == 0 || at == 0 {
                break;
            }
        }
        let digits = digits.get(at..).unwrap_or(&[]);
        let prefix = b"/proc/self/fd/";
        let mut name = [0u8; 32];
        let end = prefix.len() + digits.len();
        name.get_mut(..prefix.len()).ok_or(-EBADF)?.copy_from_slice(prefix);
        name.get_mut(prefix.len()..end).ok_or(-EBADF)?.copy_from_slice(digits);
        // name[end] stays 0: the NUL (end <= 24).
        self.readlinkat(name.as_ptr(), out)
    }
}
