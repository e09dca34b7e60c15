//! The commonest lines without the general formatter: `read`, `write`,
//! `pread64` and `pwrite64` that succeeded, written straight into a byte
//! buffer.
//!
//! A program that moves data a little at a time (dd bs=1, a shell reading
//! its script, a server writing small replies) makes mostly these calls,
//! and tracing it is mostly formatting them. The general path
//! ([`crate::format_call_with`]) goes through `dyn Write`, the decoder's
//! phases and a 256-byte memory window for every argument; this one reads
//! the at most `-s` + 1 bytes the line shows in one go and writes the text
//! with no intermediate step (quoting each byte with the general path's own
//! `out::escape`). It prints exactly what the general path
//! prints (the tests compare the two on many calls, buffers and limits),
//! and declines, returning `None`, whenever anything is out of the
//! ordinary: another call, a failed call, raw mode, a limit past
//! [`MAX_LIMIT`], a buffer it cannot read whole (the general path then
//! prints the address), or a line that does not fit `out`.

use crate::out::{escape, is_err, Digits};
use crate::{nr, Memory, Options};

/// The largest `-s` the shortcut handles (its buffer holds `-s` + 1 bytes).
pub const MAX_LIMIT: usize = 64;

/// Whether [`quick_call`] may take call `nr` (a cheap first test for
/// callers that have work to do before calling it).
#[inline(always)]
pub fn quick_takes(nr: usize) -> bool {
    matches!(nr, nr::READ | nr::WRITE | nr::PREAD64 | nr::PWRITE64)
}

/// Writes `name(args)` of call `nr` into `out` and returns its length,
/// when the call is one the shortcut knows and its result is a success
/// printed as ` = ` and the decimal `ret` (what [`quick_result`] writes).
/// `None`: use the general formatter (nothing useful is in `out`).
pub fn quick_call(
    out: &mut [u8],
    nr: usize,
    args: &[u64; 6],
    ret: i64,
    mem: &dyn Memory,
    opts: &Options,
) -> Option<usize> {
    if opts.raw || !opts.out_args || opts.string_limit > MAX_LIMIT || is_err(ret) {
        return None;
    }
    // The buffer shown: what read returned, what write was given.
    let (shown, offset) = match nr {
        nr::READ => (ret as u64, None),
        nr::WRITE => (args[2], None),
        nr::PREAD64 => (ret as u64, Some(args[3] as i64)),
        nr::PWRITE64 => (args[2], Some(args[3] as i64)),
        _ => return None,
    };
    let name = strata_syscall_table::name(nr)?;
    let mut w = Cursor { out, len: 0 };
    w.put(name.as_bytes())?;
    w.put(b"(")?;
    w.dec(args[0] as i32 as i64)?;
    w.put(b", ")?;
    w.buffer(args[1], shown, opts.string_limit, mem)?;
    w.put(b", ")?;
    w.dec_u(args[2])?;
    if let Some(off) = offset {
        w.put(b", ")?;
        w.dec(off)?;
    }
    w.put(b")")?;
    Some(w.len)
}

/// Writes ` = ret` (a success in decimal) into `out`; its length, or
/// `None` when it does not fit.
pub fn quick_result(out: &mut [u8], ret: i64) -> Option<usize> {
    let mut w = Cursor { out, len: 0 };
    w.put(b" = ")?;
    w.dec(ret)?;
    Some(w.len)
}

/// Writes at the end of what is written so far; every write is all or
/// nothing.
struct Cursor<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Cursor<'_> {
    #[inline(always)]
    fn put(&mut self, b: &[u8]) -> Option<()> {
        let end = self.len.checked_add(b.len())?;
        self.out.get_mut(self.len..end)?.copy_from_slice(b);
        self.len = end;
        Some(())
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) -> Option<()> {
        *self.out.get_mut(self.len)? = b;
        self.len += 1;
        Some(())
    }

    /// `v` in decimal (strace's `%lld`).
    fn dec(&mut self, v: i64) -> Option<()> {
        if v < 0 {
            self.byte(b'-')?;
        }
        self.dec_u(v.unsigned_abs())
    }

    /// `v` in decimal (strace's `%llu`).
    fn dec_u(&mut self, v: u64) -> Option<()> {
        if v < 10 {
            return self.byte(b'0' + v as u8);
        }
        self.put(Digits::of::<10>(v).as_bytes())
    }

    /// strace's `printstr_ex` of a plain buffer of `len` bytes at `addr`:
    /// NULL, or at most `limit` bytes quoted, then `...` when there were
    /// more. `None` when the bytes cannot all be read.
    fn buffer(&mut self, addr: u64, len: u64, limit: usize, mem: &dyn Memory) -> Option<()> {
        if addr == 0 {
            return self.put(b"NULL");
        }
        // strace checks one byte past the limit can be read (as the general
        // path does): read them all, or decline.
        let want = (limit as u64).saturating_add(1).min(len) as usize;
        let mut bytes = [0u8; MAX_LIMIT + 1];
        let mut got = 0;
        while got < want {
            let at = addr.checked_add(got as u64)?;
            let n = mem.read(at, bytes.get_mut(got..want)?).ok()?;
            if n == 0 {
                return None;
            }
            got += n;
        }
        let size = want.min(limit);
        let shown = bytes.get(..size)?;
        self.byte(b'"')?;
        for (i, &c) in shown.iter().enumerate() {
            let mut tmp = [0u8; 4];
            let next_octal = || shown.get(i + 1).is_some_and(|n| (b'0'..=b'7').contains(n));
            // (At most 4 bytes: one at a time costs less than a memcpy.)
            for &x in escape(c, next_octal, &mut tmp) {
                self.byte(x)?;
            }
        }
        self.byte(b'"')?;
        if len > limit as u64 {
            self.put(b"...")?;
        }
        Some(())
    }
}
