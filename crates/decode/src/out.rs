//! The printer every decoder writes through, and strace's basic printing
//! primitives (numbers, addresses, strings, flags, constants, signals).
//!
//! Names follow strace's `util.c`/`xlat.c` where a primitive ports one of
//! its functions (`printaddr`, `printstr_ex`, `printpathn`, `printflags`,
//! `printxval`, ...), so a decoder reads like the strace decoder it mirrors.

use core::fmt::{self, Write};

use crate::xlat::Xlat;
use crate::Memory;

pub(crate) type R = fmt::Result;

/// Which part of the line is being printed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The whole call.
    Whole,
    /// Only what strace prints on entering the call.
    Entry,
    /// Only what strace prints on exiting the call.
    Exit,
}

/// The printer: the output, the call, the traced program's memory, and
/// where the line is split between entry and exit.
pub(crate) struct P<'a> {
    w: &'a mut dyn Write,
    pub(crate) mem: &'a dyn Memory,
    /// The six argument registers.
    pub(crate) a: [u64; 6],
    /// The raw return value (rax).
    pub(crate) ret: i64,
    /// strace -s.
    pub(crate) limit: usize,
    phase: Phase,
    /// Past the point where strace's decoder returns on entering.
    exiting: bool,
    /// Entry phase reached its end: output stops (see [`P::exiting`]).
    pub(crate) stopped: bool,
    /// What the caller saved when the call started ([`crate::entry_state`]).
    pub(crate) entry: crate::EntryState,
}

impl Write for P<'_> {
    fn write_str(&mut self, s: &str) -> R {
        let visible = match self.phase {
            Phase::Whole => true,
            Phase::Entry => !self.exiting,
            Phase::Exit => self.exiting,
        };
        if visible {
            self.w.write_str(s)
        } else {
            Ok(())
        }
    }
}

/// Style bits of strace's `string_quote`.
#[derive(Clone, Copy, Default)]
pub(crate) struct Style {
    /// QUOTE_0_TERMINATED: stop at the first NUL.
    pub(crate) nul: bool,
    /// QUOTE_FORCE_HEX: every byte as `\xNN`.
    pub(crate) hex: bool,
    /// QUOTE_OMIT_TRAILING_0: a NUL as the last byte ends the string.
    pub(crate) omit_trailing_0: bool,
}

pub(crate) const PLAIN: Style = Style {
    nul: false,
    hex: false,
    omit_trailing_0: false,
};
pub(crate) const CSTR: Style = Style {
    nul: true,
    hex: false,
    omit_trailing_0: false,
};
pub(crate) const HEX: Style = Style {
    nul: false,
    hex: true,
    omit_trailing_0: false,
};
pub(crate) const OMIT_TRAILING_0: Style = Style {
    nul: false,
    hex: false,
    omit_trailing_0: true,
};

/// A source of bytes by index.
pub(crate) trait Bytes {
    fn at(&mut self, i: usize) -> u8;
}

impl Bytes for &[u8] {
    fn at(&mut self, i: usize) -> u8 {
        self.get(i).copied().unwrap_or(0)
    }
}

/// The traced program's memory at `base`, read through a small window so
/// strings of any length are printed without allocation.
pub(crate) struct MemBytes<'m> {
    mem: &'m dyn Memory,
    base: u64,
    start: usize,
    len: usize,
    /// The bytes the caller will look at are below `base + end`: a read
    /// stops there (a one-byte buffer costs a one-byte read).
    end: usize,
    buf: [u8; 256],
}

impl<'m> MemBytes<'m> {
    pub(crate) fn new(mem: &'m dyn Memory, base: u64) -> Self {
        MemBytes::bounded(mem, base, usize::MAX)
    }

    /// Bytes at `base` of which the caller needs at most the first `end`.
    pub(crate) fn bounded(mem: &'m dyn Memory, base: u64, end: usize) -> Self {
        MemBytes {
            mem,
            base,
            start: 0,
            len: 0,
            end,
            buf: [0; 256],
        }
    }

    /// The byte at `base + i`, or None if it cannot be read.
    pub(crate) fn get(&mut self, i: usize) -> Option<u8> {
        if i < self.start || i >= self.start + self.len {
            let addr = self.base.checked_add(i as u64)?;
            // Never read across a page boundary in one go, as strace's
            // umovestr does not: a NUL before an unmapped page is found.
            let to_page = (4096 - (addr & 4095)) as usize;
            let want = self.buf.len().min(to_page).min(self.end.saturating_sub(i).max(1));
            let n = self.mem.read(addr, &mut self.buf[..want]).ok()?;
            if n == 0 {
                return None;
            }
            self.start = i;
            self.len = n.min(want);
        }
        Some(self.buf[i - self.start])
    }
}

impl Bytes for MemBytes<'_> {
    fn at(&mut self, i: usize) -> u8 {
        self.get(i).unwrap_or(0)
    }
}

/// Quoted text on its way out: a few bytes gathered before one write.
struct Run {
    buf: [u8; 64],
    len: usize,
}

impl Run {
    /// Flush when more than this is held: the longest escape (`\ooo`,
    /// `\xNN`) always fits after it.
    const ROOM: usize = 60;

    const fn new() -> Run {
        Run { buf: [0; 64], len: 0 }
    }

    /// Appends `b` (at most 4 bytes; the caller flushes past ROOM).
    fn push(&mut self, b: &[u8]) {
        for &x in b {
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = x;
                self.len += 1;
            }
        }
    }

    /// Writes what is held (ASCII by construction).
    fn flush(&mut self, p: &mut P) -> R {
        if self.len == 0 {
            return Ok(());
        }
        let text = core::str::from_utf8(self.buf.get(..self.len).unwrap_or(&[])).unwrap_or("");
        self.len = 0;
        p.write_str(text)
    }
}

/// strace's text for byte `c` of a quoted string (not in hex style): the
/// byte itself, a C escape, or octal: `\ooo` when `next_octal()` (the next
/// byte shown is an octal digit; asked only for such bytes), else the
/// shortest form. Written into `buf`, or a static string.
#[inline(always)]
pub(crate) fn escape(c: u8, next_octal: impl FnOnce() -> bool, buf: &mut [u8; 4]) -> &[u8] {
    match c {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x0c => b"\\f",
        b'\n' => b"\\n",
        b'\r' => b"\\r",
        b'\t' => b"\\t",
        0x0b => b"\\v",
        b' '..=b'~' => {
            buf[0] = c;
            &buf[..1]
        }
        _ => {
            let pad = next_octal();
            buf[0] = b'\\';
            let mut n = 1;
            if pad || c >> 6 != 0 {
                buf[n] = b'0' + (c >> 6);
                n += 1;
            }
            if pad || c >> 3 != 0 {
                buf[n] = b'0' + ((c >> 3) & 7);
                n += 1;
            }
            buf[n] = b'0' + (c & 7);
            &buf[..n + 1]
        }
    }
}

/// How a quoted string ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// At a NUL (only with [`Style::nul`]).
    Nul,
    /// After `size` bytes.
    Full,
}

/// `v` in decimal if it is below 100. Most numbers in a line
/// (descriptors, small sizes and results) are: those are slices of a
/// constant, with nothing to build or check.
#[inline]
fn small(v: u64) -> Option<&'static str> {
    const SMALL: &str = "00010203040506070809101112131415161718192021222324252627282930313233343536373839\
                         40414243444546474849505152535455565758596061626364656667686970717273747576777879\
                         8081828384858687888990919293949596979899";
    if v >= 100 {
        return None;
    }
    let end = v as usize * 2 + 2;
    SMALL.get(end - 2 + usize::from(v < 10)..end)
}

/// A number's text, built right to left in a small buffer: what
/// `write!(out, "{v}")` (or `{v:#x}`, `%#o`) prints, without core::fmt's
/// machinery (a traced line has several numbers, and the formatter is on
/// every traced call's path).
pub(crate) struct Digits {
    buf: [u8; 24],
    /// Where the text starts (it ends at the buffer's end).
    at: usize,
}

impl Digits {
    /// The digits of `v` in base RADIX (at most 16). Each caller's
    /// constant base turns the division into shifts and multiplications.
    #[inline(always)]
    pub(crate) fn of<const RADIX: u64>(mut v: u64) -> Digits {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut d = Digits { buf: [0; 24], at: 24 };
        let mut at = d.buf.len();
        loop {
            at -= 1;
            d.buf[at] = DIGITS[(v % RADIX) as usize];
            v /= RADIX;
            if v == 0 {
                d.at = at;
                return d;
            }
        }
    }

    /// Puts `b` before the text.
    pub(crate) fn push(&mut self, b: u8) {
        self.at -= 1;
        self.buf[self.at] = b;
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.buf.get(self.at..).unwrap_or(&[])
    }

    pub(crate) fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }
}

pub(crate) fn is_err(ret: i64) -> bool {
    (-4095..0).contains(&ret)
}

impl<'a> P<'a> {
    pub(crate) fn new(
        w: &'a mut dyn Write,
        mem: &'a dyn Memory,
        a: [u64; 6],
        ret: i64,
        limit: usize,
        phase: Phase,
    ) -> Self {
        P {
            w,
            mem,
            a,
            ret,
            limit,
            phase,
            exiting: false,
            stopped: false,
            entry: crate::EntryState::NONE,
        }
    }

    /// Marks the point where strace's decoder returns on entering the call:
    /// what follows is printed at exit. In the entry phase this ends the
    /// output (returns `Err`, which the caller turns back into `Ok`).
    pub(crate) fn exiting(&mut self) -> R {
        if self.exiting {
            return Ok(());
        }
        self.exiting = true;
        if self.phase == Phase::Entry {
            self.stopped = true;
            return Err(fmt::Error);
        }
        Ok(())
    }

    /// True once [`P::exiting`] was called.
    pub(crate) fn is_exiting(&self) -> bool {
        self.exiting
    }

    /// The call failed (only meaningful when exiting).
    pub(crate) fn failed(&self) -> bool {
        self.phase != Phase::Entry && is_err(self.ret)
    }

    // ---- numbers -------------------------------------------------------

    pub(crate) fn s(&mut self, s: &str) -> R {
        self.write_str(s)
    }

    /// `tprint_arg_next`.
    pub(crate) fn next(&mut self) -> R {
        self.write_str(", ")
    }

    /// PRINT_VAL_D.
    pub(crate) fn d(&mut self, v: i64) -> R {
        self.dec(v.unsigned_abs(), v < 0)
    }

    /// PRINT_VAL_U.
    pub(crate) fn u(&mut self, v: u64) -> R {
        self.dec(v, false)
    }

    /// `v` in decimal, after a `-` if `neg`.
    #[inline(always)]
    fn dec(&mut self, v: u64, neg: bool) -> R {
        if !neg {
            if let Some(s) = small(v) {
                return self.s(s);
            }
        }
        let mut d = Digits::of::<10>(v);
        if neg {
            d.push(b'-');
        }
        self.s(d.as_str())
    }

    /// `{v:#x}`.
    fn hex(&mut self, v: u64) -> R {
        let mut d = Digits::of::<16>(v);
        d.push(b'x');
        d.push(b'0');
        self.s(d.as_str())
    }

    /// PRINT_VAL_X: `%#llx`, which prints 0 as `0`.
    pub(crate) fn x(&mut self, v: u64) -> R {
        if v == 0 {
            self.write_str("0")
        } else {
            self.hex(v)
        }
    }

    /// `printaddr`: NULL or hex.
    pub(crate) fn addr(&mut self, v: u64) -> R {
        if v == 0 {
            self.write_str("NULL")
        } else {
            self.hex(v)
        }
    }

    /// `printfd`: the descriptor as an int.
    pub(crate) fn fd(&mut self, v: u64) -> R {
        self.d(v as i32 as i64)
    }

    /// `print_dirfd`: AT_FDCWD or the descriptor.
    pub(crate) fn dirfd(&mut self, v: u64) -> R {
        if v as i32 == -100 {
            self.write_str("AT_FDCWD")
        } else {
            self.fd(v)
        }
    }

    /// `%#03o`.
    pub(crate) fn oct(&mut self, v: u64) -> R {
        let mut d = Digits::of::<8>(v);
        // `#` adds a leading 0 unless the number already starts with one.
        if d.buf[d.at] != b'0' {
            d.push(b'0');
        }
        while d.buf.len() - d.at < 3 {
            d.push(b'0');
        }
        self.s(d.as_str())
    }

    /// `print_numeric_umode_t` (the mode is an unsigned short).
    pub(crate) fn umode(&mut self, v: u64) -> R {
        self.oct(v as u16 as u64)
    }

    /// PRINT_VAL_ID: a uid/gid, -1 for (uid_t)-1.
    pub(crate) fn id(&mut self, v: u64) -> R {
        if v as u32 == u32::MAX {
            self.write_str("-1")
        } else {
            self.u(v as u32 as u64)
        }
    }

    /// `print_symbolic_mode_t`: `S_IFREG|0644`.
    pub(crate) fn symbolic_mode(&mut self, mode: u32) -> R {
        let ifmt = mode & 0o170000;
        let name = if ifmt != 0 {
            lookup(crate::xlat::MODETYPES, ifmt as u64)
        } else {
            Some("")
        };
        let Some(name) = name else {
            return self.oct(mode as u64);
        };
        self.s(name)?;
        if !name.is_empty() {
            self.s("|")?;
        }
        if mode & 0o4000 != 0 {
            self.s("S_ISUID|")?;
        }
        if mode & 0o2000 != 0 {
            self.s("S_ISGID|")?;
        }
        if mode & 0o1000 != 0 {
            self.s("S_ISVTX|")?;
        }
        self.oct((mode & !(0o170000 | 0o7000)) as u64)
    }

    // ---- memory --------------------------------------------------------

    /// Reads exactly `buf.len()` bytes (strace's `umoven`).
    pub(crate) fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        read_exact(self.mem, addr, buf)
    }

    /// `umove_or_printaddr`: reads the object at `addr`, or prints NULL or
    /// the address (also when exiting a failed call) and returns false.
    pub(crate) fn fetch(&mut self, addr: u64, buf: &mut [u8]) -> Result<bool, fmt::Error> {
        if addr == 0 {
            self.s("NULL")?;
            return Ok(false);
        }
        if (self.exiting && self.failed()) || !self.read(addr, buf) {
            self.addr(addr)?;
            return Ok(false);
        }
        Ok(true)
    }

    /// `umove_or_printaddr_ignore_syserror`.
    pub(crate) fn fetch_any(&mut self, addr: u64, buf: &mut [u8]) -> Result<bool, fmt::Error> {
        if addr == 0 {
            self.s("NULL")?;
            return Ok(false);
        }
        if !self.read(addr, buf) {
            self.addr(addr)?;
            return Ok(false);
        }
        Ok(true)
    }

    // ---- strings -------------------------------------------------------

    /// strace's `string_quote` over `size` bytes of `src`, with quotes.
    pub(crate) fn quote(&mut self, src: &mut dyn Bytes, size: usize, style: Style) -> Result<End, fmt::Error> {
        self.s("\"")?;
        let end = self.quote_inner(src, size, style)?;
        self.s("\"")?;
        Ok(end)
    }

    fn quote_inner(&mut self, src: &mut dyn Bytes, size: usize, style: Style) -> Result<End, fmt::Error> {
        const HEXD: &[u8; 16] = b"0123456789abcdef";
        // The quoted text goes out in runs of up to Run's size, not a write
        // per byte. Every writer keeps the prefix of a write that fits, so
        // where a cut line stops does not depend on the runs.
        let mut run = Run::new();
        for i in 0..size {
            if run.len > Run::ROOM {
                run.flush(self)?;
            }
            let c = src.at(i);
            if style.nul && c == 0 {
                run.flush(self)?;
                return Ok(End::Nul);
            }
            if style.hex {
                run.push(&[b'\\', b'x', HEXD[(c >> 4) as usize], HEXD[(c & 15) as usize]]);
                continue;
            }
            if style.omit_trailing_0 && i == size - 1 && c == 0 {
                run.flush(self)?;
                return Ok(End::Nul);
            }
            let mut tmp = [0u8; 4];
            run.push(escape(
                c,
                || i + 1 < size && (b'0'..=b'7').contains(&src.at(i + 1)),
                &mut tmp,
            ));
        }
        run.flush(self)?;
        Ok(End::Full)
    }

    /// `print_quoted_cstring` on a local buffer (PRINT_FIELD_CSTRING):
    /// up to the NUL, `...` when there is none in the buffer.
    pub(crate) fn cstring_field(&mut self, buf: &[u8]) -> R {
        let n = buf.len().saturating_sub(1);
        let end = self.quote(&mut &buf[..n], n, CSTR)?;
        if end == End::Full && buf.last() != Some(&0) {
            self.s("...")?;
        }
        Ok(())
    }

    /// `printstr_ex(addr, len, style)`: at most -s bytes of a buffer of
    /// `len` bytes (or, with `style.nul`, of a string), `...` when longer.
    pub(crate) fn printstr_ex(&mut self, addr: u64, len: u64, style: Style) -> R {
        if addr == 0 {
            return self.s("NULL");
        }
        let limit = self.limit;
        let size0 = ((limit as u64).saturating_add(1)).min(len) as usize;
        let mut src = MemBytes::bounded(self.mem, addr, size0);
        // Validate first, so a fault prints the address and nothing else.
        let mut nul_at = None;
        if style.nul {
            for i in 0..size0 {
                match src.get(i) {
                    None => return self.addr(addr),
                    Some(0) => {
                        nul_at = Some(i);
                        break;
                    }
                    Some(_) => {}
                }
            }
        } else {
            for i in 0..size0 {
                if src.get(i).is_none() {
                    return self.addr(addr);
                }
            }
        }
        let size = size0.min(limit);
        let end = self.quote(&mut src, size, style)?;
        let unterminated = match end {
            End::Nul => false,
            // string_quote also looks at the byte after the last one printed.
            End::Full => !(style.nul && size0 > limit && nul_at == Some(limit)),
        };
        if unterminated && len != 0 && (style.nul || len > limit as u64) {
            self.s("...")?;
        }
        Ok(())
    }

    /// `printstrn`: a buffer of `len` bytes.
    pub(crate) fn strn(&mut self, addr: u64, len: u64) -> R {
        self.printstr_ex(addr, len, PLAIN)
    }

    /// `printstr`: a NUL-terminated string, at most -s bytes.
    pub(crate) fn cstr(&mut self, addr: u64) -> R {
        self.printstr_ex(addr, u64::MAX, CSTR)
    }

    /// `printpathn`: a NUL-terminated path of at most `n` bytes (not
    /// limited by -s), `...` when longer.
    pub(crate) fn pathn(&mut self, addr: u64, n: usize) -> R {
        if addr == 0 {
            return self.s("NULL");
        }
        let n = n.min(4095);
        let mut src = MemBytes::bounded(self.mem, addr, n + 1);
        let mut nul_at = None;
        for i in 0..=n {
            match src.get(i) {
                None => return self.addr(addr),
                Some(0) => {
                    nul_at = Some(i);
                    break;
                }
                Some(_) => {}
            }
        }
        let end = self.quote(&mut src, n, CSTR)?;
        if end == End::Full && nul_at.is_none() {
            self.s("...")?;
        }
        Ok(())
    }

    /// `printpath`.
    pub(crate) fn path(&mut self, addr: u64) -> R {
        self.pathn(addr, 4095)
    }

    // ---- constants and flags -------------------------------------------

    /// `printflags`: the names of the set bits in table order, joined by
    /// `|`, unknown bits in hex; `0` (when a default is given) for 0. As in
    /// strace, the value is an unsigned int: the upper 32 bits are dropped
    /// ([`P::flags64`] keeps them).
    pub(crate) fn flags(&mut self, x: Xlat, v: u64, dflt: Option<&str>) -> R {
        self.flags_multi(&[x], v as u32 as u64, dflt)
    }

    /// `printflags64`.
    pub(crate) fn flags64(&mut self, x: Xlat, v: u64, dflt: Option<&str>) -> R {
        self.flags_multi(&[x], v, dflt)
    }

    /// `printflags_ex` over several tables.
    pub(crate) fn flags_multi(&mut self, xs: &[Xlat], v: u64, dflt: Option<&str>) -> R {
        self.flags_n(xs, v, dflt).map(|_| ())
    }

    /// `printflags_ex`, returning what it returns: how many names (and a
    /// trailing hex value) it printed.
    pub(crate) fn flags_n(&mut self, xs: &[Xlat], mut v: u64, dflt: Option<&str>) -> Result<usize, fmt::Error> {
        let mut n = 0;
        'tables: for x in xs {
            for (val, name) in x.iter() {
                if v == 0 && n != 0 {
                    break 'tables;
                }
                if v == val || (val != 0 && v & val == val) {
                    if n > 0 {
                        self.s("|")?;
                    }
                    self.s(name)?;
                    n += 1;
                    v &= !val;
                }
                if v == 0 {
                    break;
                }
            }
        }
        if n > 0 {
            if v != 0 {
                self.s("|")?;
                self.x(v)?;
                n += 1;
            }
        } else if v != 0 {
            self.x(v)?;
            if let Some(d) = dflt {
                write!(self, " /* {d} */")?;
            }
        } else if dflt.is_some() {
            self.s("0")?;
        }
        Ok(n)
    }

    /// `printxval`: the name, or hex and a `/* XXX_??? */` comment; the
    /// value is an unsigned int, as in strace ([`P::xval64`] is not).
    pub(crate) fn xval(&mut self, x: Xlat, v: u64, dflt: Option<&str>) -> R {
        self.xval64(x, v as u32 as u64, dflt)
    }

    /// `printxval64`.
    pub(crate) fn xval64(&mut self, x: Xlat, v: u64, dflt: Option<&str>) -> R {
        match lookup(x, v) {
            Some(s) => self.s(s),
            None => {
                self.x(v)?;
                self.comment(dflt)
            }
        }
    }

    pub(crate) fn comment(&mut self, c: Option<&str>) -> R {
        match c {
            Some(c) => write!(self, " /* {c} */"),
            None => Ok(()),
        }
    }

    // ---- signals -------------------------------------------------------

    /// `printsignal`: SIGTERM, or the number.
    pub(crate) fn signal(&mut self, sig: i32) -> R {
        match signame(sig) {
            Some(Sig::Name(s)) => self.s(s),
            Some(Sig::Rt(n)) => write!(self, "SIGRT_{n}"),
            None => self.d(sig as i64),
        }
    }

    /// `sprintsigmask_n`: `[INT TERM]`, or `~[...]` when 2/3 or more of
    /// the bits are set.
    pub(crate) fn sigmask(&mut self, mask: &[u8]) -> R {
        let bytes = mask.len().min(8);
        let words = bytes.div_ceil(4);
        let mut m = [0u8; 8];
        m[..bytes].copy_from_slice(&mask[..bytes]);
        let bits = words * 32;
        let mut val = u64::from_le_bytes(m);
        if bits < 64 {
            val &= (1u64 << bits) - 1;
        }
        if val.count_ones() as usize >= bits * 2 / 3 {
            val = !val;
            if bits < 64 {
                val &= (1u64 << bits) - 1;
            }
            self.s("~")?;
        }
        let mut sep = "[";
        for i in 0..bits {
            if val & (1u64 << i) == 0 {
                continue;
            }
            self.s(sep)?;
            sep = " ";
            let sig = i as i32 + 1;
            match signame(sig) {
                Some(Sig::Name(s)) => self.s(&s[3..])?,
                Some(Sig::Rt(n)) => write!(self, "RT_{n}")?,
                None => {}
            }
        }
        if sep == "[" {
            self.s("[")?;
        }
        self.s("]")
    }

    /// `print_sigset_addr_len`: a sigset of `len` bytes at `addr`.
    pub(crate) fn sigset_addr_len(&mut self, addr: u64, len: u64) -> R {
        if !(8..=8).contains(&len) {
            return self.addr(addr);
        }
        let mut buf = [0u8; 8];
        if self.fetch(addr, &mut buf)? {
            self.sigmask(&buf)?;
        }
        Ok(())
    }

    // ---- times ---------------------------------------------------------

    /// `print_timespec64`: {tv_sec=1, tv_nsec=0}.
    pub(crate) fn timespec(&mut self, addr: u64) -> R {
        let mut b = [0u8; 16];
        if self.fetch(addr, &mut b)? {
            let (s, ns) = (le_i64(&b[0..]), le_u64(&b[8..]));
            write!(self, "{{tv_sec={s}, tv_nsec={ns}}}")?;
        }
        Ok(())
    }

    /// A timespec read regardless of the call's result (strace read it on
    /// entry): {tv_sec=1, tv_nsec=0}, NULL or the address.
    pub(crate) fn timespec_any(&mut self, addr: u64) -> R {
        let mut b = [0u8; 16];
        if self.fetch_any(addr, &mut b)? {
            let (s, ns) = (le_i64(&b[0..]), le_u64(&b[8..]));
            write!(self, "{{tv_sec={s}, tv_nsec={ns}}}")?;
        }
        Ok(())
    }

    /// `print_timeval`: {tv_sec=1, tv_usec=0}.
    pub(crate) fn timeval(&mut self, addr: u64) -> R {
        let mut b = [0u8; 16];
        if self.fetch(addr, &mut b)? {
            let (s, us) = (le_i64(&b[0..]), le_u64(&b[8..]));
            write!(self, "{{tv_sec={s}, tv_usec={us}}}")?;
        }
        Ok(())
    }

    /// `tprints_comment(sprinttime_nsec(sec, nsec))`: ` /* 2024-01-02T03:04:05+0000 */`
    /// (UTC; strace uses the local time zone).
    pub(crate) fn time_comment(&mut self, sec: i64, part: u64, max_part: u64, width: usize) -> R {
        if (sec == 0 && part == 0) || part > max_part {
            return Ok(());
        }
        self.s(" /* ")?;
        self.time_text(sec, part, max_part, width)?;
        self.s(" */")
    }

    /// strace's `sprinttime_ex` text: `2024-01-02T03:04:05.000000001+0000`.
    pub(crate) fn time_text(&mut self, sec: i64, part: u64, _max_part: u64, width: usize) -> R {
        let (y, mo, d, h, mi, s) = civil(sec);
        write!(self, "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}")?;
        if part > 0 {
            write!(self, ".{part:0width$}")?;
        }
        self.s("+0000")
    }

    /// `print_clock_t`: clock ticks, and seconds in a comment: `1 /* 0.01 s */`.
    pub(crate) fn clock_t(&mut self, v: u64) -> R {
        // USER_HZ is 100 on x86-64.
        self.u(v)?;
        if v > 0 {
            write!(self, " /* {}.{:02} s */", v / 100, v % 100)?;
        }
        Ok(())
    }

    // ---- arrays --------------------------------------------------------

    /// strace's `print_array` over `n` elements of `N` bytes at `addr`,
    /// `f` printing one element; at most -s elements, then `...`.
    pub(crate) fn array<const N: usize>(
        &mut self,
        addr: u64,
        n: u64,
        ignore_error: bool,
        mut f: impl FnMut(&mut Self, &[u8; N]) -> R,
    ) -> R {
        if addr == 0 {
            return self.s("NULL");
        }
        if n == 0 {
            return self.s("[]");
        }
        let Some(size) = n.checked_mul(N as u64) else {
            return self.addr(addr);
        };
        let Some(end) = addr.checked_add(size) else {
            return self.addr(addr);
        };
        let abbrev_end = if (self.limit as u64) < n {
            addr + N as u64 * self.limit as u64
        } else {
            end
        };
        let mut cur = addr;
        let fail_on_error = !ignore_error && self.exiting && self.failed();
        while cur < end {
            if cur != addr {
                self.s(", ")?;
            }
            let mut el = [0u8; N];
            if fail_on_error || !self.read(cur, &mut el) {
                if cur == addr {
                    return self.addr(cur);
                }
                write!(self, "... /* {cur:#x} */")?;
                break;
            }
            if cur == addr {
                self.s("[")?;
            }
            if cur >= abbrev_end {
                self.s("...")?;
                break;
            }
            f(self, &el)?;
            cur += N as u64;
        }
        self.s("]")
    }

    /// `printnum_int` / `printnum_fd`: `[N]`.
    pub(crate) fn num_int(&mut self, addr: u64) -> R {
        let mut b = [0u8; 4];
        if self.fetch(addr, &mut b)? {
            write!(self, "[{}]", i32::from_le_bytes(b))?;
        }
        Ok(())
    }

    /// `printnum_kptr`/`printnum_addr_int64`: `[0x...]`.
    pub(crate) fn num_ptr(&mut self, addr: u64) -> R {
        let mut b = [0u8; 8];
        if self.fetch(addr, &mut b)? {
            self.s("[")?;
            self.addr(u64::from_le_bytes(b))?;
            self.s("]")?;
        }
        Ok(())
    }

    /// Prints `args[i]` for i in `from..n` in hex (strace's `printargs`).
    pub(crate) fn hex_args(&mut self, from: usize, n: usize) -> R {
        for i in from..n {
            if i > 0 {
                self.next()?;
            }
            self.x(self.a[i])?;
        }
        Ok(())
    }
}

/// Reads exactly `buf.len()` bytes, in page-sized steps.
pub(crate) fn read_exact(mem: &dyn Memory, addr: u64, buf: &mut [u8]) -> bool {
    let mut done = 0;
    while done < buf.len() {
        let Some(a) = addr.checked_add(done as u64) else {
            return false;
        };
        match mem.read(a, &mut buf[done..]) {
            Ok(0) | Err(()) => return false,
            Ok(n) => done += n.min(buf.len() - done),
        }
    }
    true
}

pub(crate) fn lookup(x: Xlat, v: u64) -> Option<&'static str> {
    x.iter().find(|&(val, _)| val == v).map(|(_, s)| s)
}

pub(crate) fn le_u16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}
pub(crate) fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}
pub(crate) fn le_i32(b: &[u8]) -> i32 {
    le_u32(b) as i32
}
pub(crate) fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}
pub(crate) fn le_i64(b: &[u8]) -> i64 {
    le_u64(b) as i64
}

/// A signal's name.
pub(crate) enum Sig {
    Name(&'static str),
    /// SIGRT_n (signal 32 + n).
    Rt(u32),
}

static SIGNALS: [&str; 33] = [
    "0",
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGILL",
    "SIGTRAP",
    "SIGABRT",
    "SIGBUS",
    "SIGFPE",
    "SIGKILL",
    "SIGUSR1",
    "SIGSEGV",
    "SIGUSR2",
    "SIGPIPE",
    "SIGALRM",
    "SIGTERM",
    "SIGSTKFLT",
    "SIGCHLD",
    "SIGCONT",
    "SIGSTOP",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGURG",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGWINCH",
    "SIGIO",
    "SIGPWR",
    "SIGSYS",
    "SIGRTMIN",
];

/// strace's `signame`: names for 1..=32, SIGRT_n for 33..=64.
pub(crate) fn signame(sig: i32) -> Option<Sig> {
    match sig {
        1..=32 => Some(Sig::Name(SIGNALS[sig as usize])),
        33..=64 => Some(Sig::Rt(sig as u32 - 32)),
        _ => None,
    }
}

/// UTC calendar fields of a Unix time.
fn civil(t: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    // Howard Hinnant's days-to-civil.
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z.rem_euclid(146097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        m,
        d,
        (secs / 3600) as u32,
        (secs / 60 % 60) as u32,
        (secs % 60) as u32,
    )
}
