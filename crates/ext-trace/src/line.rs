//! Building one output line in a fixed buffer, without strata: the pure
//! part of the extension, which the tests drive with a fake memory.
//!
//! A text line is what `strace -f` writes to standard error: the
//! `[pid  TID] ` prefix once the session has more than one task, `name(args)`,
//! spaces up to column 39 so that the `=` of ` = ` lands at column 40 (the
//! prefix counts), and the result. A JSON line is one object:
//! `{"pid":1,"tid":1,"syscall":"openat","args":"AT_FDCWD, \"/x\", O_RDONLY","ret":-1,"error":"ENOENT"}`.
//!
//! A line longer than [`LINE_CAP`] is cut: the call's text stops where it
//! no longer fits, `...` follows, then the result (and for JSON the rest of
//! the object), so a line always ends with its result and a newline.

use core::fmt::{self, Write};

use strata_decode::{errno_name, format_call, format_call_with, format_result_with, format_resumed};
use strata_decode::{EntryState, Memory, Options};

use crate::config::{Config, Format};
use crate::nr;

/// The most a line can hold, newline included.
pub const LINE_CAP: usize = 8192;

/// Room kept for the result (and `...`) while the call's text is written.
const RESULT_ROOM: usize = 1024;

/// strace pads `name(args)` (with the prefix) to this many columns, then
/// writes ` = `.
pub const COLUMN: usize = 39;

/// True for a raw result that is an error (`-4095..=-1`), as the kernel
/// and strace see it.
pub fn is_err(ret: i64) -> bool {
    (-4095..0).contains(&ret)
}

/// Who made a call, and whether lines get strace's `[pid N] ` prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// Process id (JSON's `pid`).
    pub pid: u32,
    /// Thread id (JSON's `tid`, and the number in the text prefix).
    pub tid: u32,
    /// The session has had more than one thread or process: text lines
    /// start with `[pid TID] `.
    pub multi: bool,
}

/// One finished call, as the line shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub task: Task,
    /// The Linux call number.
    pub nr: u32,
    /// The argument registers as the call was passed down.
    pub args: [u64; 6],
    /// The raw result (`-errno` for errors; ignored for exit and
    /// exit_group, which print `?`).
    pub ret: i64,
    /// What `strata_decode::entry_state` saved when the call started.
    pub entry: EntryState,
}

/// A fixed buffer holding one line.
pub struct Line {
    buf: [u8; LINE_CAP],
    len: usize,
    /// Writes through a [`Sink`] stop here.
    limit: usize,
    /// A write did not fit: the sink refuses everything until reset.
    full: bool,
    /// The line was cut at some point.
    truncated: bool,
}

impl Default for Line {
    fn default() -> Self {
        Line::new()
    }
}

impl Line {
    /// An empty line.
    pub const fn new() -> Line {
        Line {
            buf: [0; LINE_CAP],
            len: 0,
            limit: LINE_CAP,
            full: false,
            truncated: false,
        }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// The text written so far (always whole UTF-8 characters).
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether something did not fit and was left out.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Empties the line for reuse (its buffer keeps the old bytes).
    pub fn clear(&mut self) {
        self.len = 0;
        self.limit = LINE_CAP;
        self.full = false;
        self.truncated = false;
    }

    /// Sets where sink writes stop, and lets them go on.
    fn set_limit(&mut self, limit: usize) {
        self.limit = limit.min(LINE_CAP);
        self.full = false;
    }

    /// Appends `b` if all of it fits below the limit.
    fn put(&mut self, b: &[u8]) -> bool {
        let end = self.len.saturating_add(b.len());
        if end > self.limit {
            return false;
        }
        match self.buf.get_mut(self.len..end) {
            Some(dst) => {
                dst.copy_from_slice(b);
                self.len = end;
                true
            }
            None => false,
        }
    }

    /// Appends as much of `b` as fits in the whole buffer (past the limit).
    fn force(&mut self, b: &[u8]) {
        let n = b.len().min(LINE_CAP.saturating_sub(self.len));
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..self.len + n), b.get(..n)) {
            dst.copy_from_slice(src);
            self.len += n;
        }
        if n < b.len() {
            self.truncated = true;
        }
    }

    /// Marks the end of what was left out: `...`.
    fn cut(&mut self) {
        self.truncated = true;
        self.force(b"...");
    }

    /// Removes a last byte `b`.
    fn pop_if(&mut self, b: u8) {
        if self.len > 0 && self.buf.get(self.len - 1) == Some(&b) {
            self.len -= 1;
        }
    }

    pub(crate) fn sink(&mut self, json: bool) -> Sink<'_> {
        Sink {
            line: self,
            json,
            skip_to_paren: false,
        }
    }
}

/// Writes into a [`Line`] up to its limit; past it, refuses (returns
/// `Err`, which stops the formatter) and marks the line truncated.
pub(crate) struct Sink<'a> {
    line: &'a mut Line,
    /// Escape as the inside of a JSON string.
    json: bool,
    /// Drop everything up to and including the first `(` (the call's name,
    /// for JSON's `args`).
    skip_to_paren: bool,
}

impl Sink<'_> {
    fn refuse(&mut self) -> fmt::Result {
        self.line.full = true;
        self.line.truncated = true;
        Err(fmt::Error)
    }
}

impl Write for Sink<'_> {
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // The common case, kept small: plain text that fits.
        if !self.json && !self.skip_to_paren && !self.line.full && self.line.put(s.as_bytes()) {
            return Ok(());
        }
        self.write_slow(s)
    }
}

impl Sink<'_> {
    #[inline(never)]
    fn write_slow(&mut self, s: &str) -> fmt::Result {
        if self.line.full {
            return Err(fmt::Error);
        }
        let mut s = s;
        if self.skip_to_paren {
            match s.find('(') {
                Some(i) => {
                    s = s.get(i + 1..).unwrap_or("");
                    self.skip_to_paren = false;
                }
                None => return Ok(()),
            }
        }
        if !self.json {
            if self.line.put(s.as_bytes()) {
                return Ok(());
            }
            // Keep the whole characters that fit.
            let mut n = self.line.limit.saturating_sub(self.line.len).min(s.len());
            while !s.is_char_boundary(n) {
                n -= 1;
            }
            self.line.put(s.as_bytes().get(..n).unwrap_or(&[]));
            return self.refuse();
        }
        let mut tmp = [0u8; 6];
        for ch in s.chars() {
            if !self.line.put(json_escape(ch, &mut tmp)) {
                return self.refuse();
            }
        }
        Ok(())
    }
}

/// `ch` as it appears inside a JSON string.
fn json_escape(ch: char, tmp: &mut [u8; 6]) -> &[u8] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match ch {
        '"' => b"\\\"",
        '\\' => b"\\\\",
        '\n' => b"\\n",
        '\r' => b"\\r",
        '\t' => b"\\t",
        '\u{8}' => b"\\b",
        '\u{c}' => b"\\f",
        c if (c as u32) < 0x20 => {
            let v = c as usize;
            *tmp = [b'\\', b'u', b'0', b'0', HEX[(v >> 4) & 0xf], HEX[v & 0xf]];
            &tmp[..]
        }
        c => c.encode_utf8(&mut tmp[..]).as_bytes(),
    }
}

/// Drops the first `skip` bytes written through it (the `<... name
/// resumed>` of an exit half).
struct Skip<'a> {
    out: &'a mut dyn Write,
    skip: usize,
}

impl Write for Skip<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.skip >= s.len() {
            self.skip -= s.len();
            return Ok(());
        }
        let rest = s.get(self.skip..).unwrap_or("");
        self.skip = 0;
        self.out.write_str(rest)
    }
}

/// Counts what is written (the length of a name).
struct Count(usize);

impl Write for Count {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// The call's name as strace prints it (`syscall_0x1c8` for numbers
/// without a name).
fn write_name(out: &mut dyn Write, nr: u32) -> fmt::Result {
    match strata_syscall_table::name(nr as usize) {
        Some(name) => out.write_str(name),
        None => write!(out, "syscall_{nr:#x}"),
    }
}

/// Options for a whole call.
fn whole(cfg: &Config) -> Options {
    Options {
        out_args: true,
        ..cfg.decode
    }
}

/// Writes the line for a finished call (the whole call formatted now, with
/// the saved [`Record::entry`]) into `line`, replacing what it held.
pub fn format_line(line: &mut Line, cfg: &Config, rec: &Record, mem: &dyn Memory) {
    if cfg.format == Format::Text && strata_decode::quick_takes(rec.nr as usize) && quick(line, rec, mem, &whole(cfg)) {
        return;
    }
    format_line_general(line, cfg, rec, mem);
}

/// [`format_line`] without the shortcut (the tests compare the two).
pub(crate) fn format_line_general(line: &mut Line, cfg: &Config, rec: &Record, mem: &dyn Memory) {
    let opts = whole(cfg);
    build(line, cfg, rec, mem, &|w: &mut dyn Write| {
        format_call_with(w, rec.nr as usize, &rec.args, rec.ret, mem, &opts, &rec.entry)
    });
}

/// The text line of one of the calls `strata_decode::quick_call` takes
/// (a successful read or write, most lines of a program that moves data
/// a little at a time), with no `dyn Write` in between; false, with the
/// line in an unspecified state, when it declines.
fn quick(line: &mut Line, rec: &Record, mem: &dyn Memory, opts: &Options) -> bool {
    line.clear();
    line.set_limit(LINE_CAP - RESULT_ROOM);
    prefix(line, &rec.task);
    let at = line.len;
    let Some(n) = line
        .buf
        .get_mut(at..LINE_CAP - RESULT_ROOM)
        .and_then(|out| strata_decode::quick_call(out, rec.nr as usize, &rec.args, rec.ret, mem, opts))
    else {
        return false;
    };
    line.len = at + n;
    pad(line);
    let at = line.len;
    let Some(n) = line
        .buf
        .get_mut(at..LINE_CAP - 1)
        .and_then(|out| strata_decode::quick_result(out, rec.ret))
    else {
        return false;
    };
    line.len = at + n;
    line.put(b"\n")
}

/// Writes into `head` the entry half of call `nr` (`pselect6(4, [3], NULL,
/// NULL, NULL, NULL`): what strace prints when a call starts, for the calls
/// formatted in two halves. Finish the line with [`format_resumed_line`].
pub fn format_entry_half(head: &mut Line, cfg: &Config, nr: u32, args: &[u64; 6], mem: &dyn Memory) {
    head.clear();
    head.set_limit(LINE_CAP - RESULT_ROOM);
    let opts = Options {
        out_args: false,
        ..cfg.decode
    };
    let _ = format_call(&mut head.sink(false), nr as usize, args, 0, mem, &opts);
}

/// Writes the line for a call formatted in two halves: `head` from
/// [`format_entry_half`] when it started, the rest now.
pub fn format_resumed_line(line: &mut Line, cfg: &Config, rec: &Record, head: &Line, mem: &dyn Memory) {
    let opts = whole(cfg);
    // What format_resumed writes before the rest: `<... name resumed>`.
    let mut name = Count(0);
    let _ = write_name(&mut name, rec.nr);
    let skip = "<... ".len() + name.0 + " resumed>".len();
    build(line, cfg, rec, mem, &|w: &mut dyn Write| {
        w.write_str(head.as_str())?;
        if head.truncated() {
            return Err(fmt::Error);
        }
        format_resumed(
            &mut Skip { out: w, skip },
            rec.nr as usize,
            &rec.args,
            rec.ret,
            mem,
            &opts,
            &rec.entry,
        )
    });
}

/// strace's `[pid  TID] ` before a text line, once the session has had
/// more than one task.
fn prefix(line: &mut Line, task: &Task) {
    if task.multi {
        let _ = write!(line.sink(false), "[pid {:>5}] ", task.tid);
    }
}

/// Spaces up to the column where ` = ` starts. (The limit is far past the
/// column: the padding always fits.)
fn pad(line: &mut Line) {
    const SPACES: &[u8; COLUMN] = &[b' '; COLUMN];
    line.put(SPACES.get(..COLUMN.saturating_sub(line.len)).unwrap_or(&[]));
}

/// The common frame of a call's line: prefix, the call's text from `text`
/// (`name(args)`), padding, result.
fn build(line: &mut Line, cfg: &Config, rec: &Record, mem: &dyn Memory, text: &dyn Fn(&mut dyn Write) -> fmt::Result) {
    line.clear();
    line.set_limit(LINE_CAP - RESULT_ROOM);
    let nr = rec.nr as usize;
    match cfg.format {
        Format::Text => {
            prefix(line, &rec.task);
            if text(&mut line.sink(false)).is_err() || line.full {
                line.cut();
            }
            pad(line);
            // Keep room to close a cut result.
            line.set_limit(LINE_CAP - 4);
            let opts = whole(cfg);
            if format_result_with(&mut line.sink(false), nr, &rec.args, rec.ret, mem, &opts).is_err() {
                line.cut();
            }
            line.force(b"\n");
        }
        Format::Json => {
            let _ = write!(
                line.sink(false),
                "{{\"pid\":{},\"tid\":{},\"syscall\":\"",
                rec.task.pid,
                rec.task.tid
            );
            let _ = write_name(&mut line.sink(true), rec.nr);
            line.force(b"\",\"args\":\"");
            let mut args = line.sink(true);
            args.skip_to_paren = true;
            if text(&mut args).is_err() || line.full {
                line.cut();
            } else {
                line.pop_if(b')');
            }
            line.set_limit(LINE_CAP);
            let mut tail = TailBuf::new();
            let _ = json_tail(&mut tail, rec);
            line.force(tail.as_bytes());
        }
    }
}

/// The end of a JSON call line: `","ret":3}` and a newline.
fn json_tail(out: &mut TailBuf, rec: &Record) -> fmt::Result {
    if rec.nr == nr::EXIT || rec.nr == nr::EXIT_GROUP {
        return out.write_str("\",\"ret\":null}\n");
    }
    if !is_err(rec.ret) {
        return writeln!(out, "\",\"ret\":{}}}", rec.ret);
    }
    let e = rec.ret.unsigned_abs() as i32;
    match errno_name(e) {
        Some(name) => writeln!(out, "\",\"ret\":-1,\"error\":\"{name}\"}}"),
        None => writeln!(out, "\",\"ret\":-1,\"error\":\"errno {e}\"}}"),
    }
}

/// Writes the line for the end of a process with wait status `status`:
/// `+++ exited with 0 +++`, `+++ killed by SIGSEGV (core dumped) +++`, or
/// its JSON form `{"pid":1,"tid":1,"exited":0}`,
/// `{"pid":1,"tid":1,"killed":"SIGSEGV","core_dumped":true}`.
pub fn format_exit(line: &mut Line, cfg: &Config, task: &Task, status: i32) {
    line.clear();
    let _ = write_exit(&mut line.sink(false), cfg, task, status);
    if line.full {
        line.force(b"\n");
    }
}

fn write_exit(out: &mut dyn Write, cfg: &Config, task: &Task, status: i32) -> fmt::Result {
    let sig = status & 0x7f;
    let core = status & 0x80 != 0;
    let code = (status >> 8) & 0xff;
    match cfg.format {
        Format::Text => {
            if task.multi {
                write!(out, "[pid {:>5}] ", task.tid)?;
            }
            if sig == 0 {
                writeln!(out, "+++ exited with {code} +++")
            } else {
                out.write_str("+++ killed by ")?;
                strata_decode::write_signal_name(out, sig)?;
                writeln!(out, "{} +++", if core { " (core dumped)" } else { "" })
            }
        }
        Format::Json => {
            write!(out, "{{\"pid\":{},\"tid\":{},", task.pid, task.tid)?;
            if sig == 0 {
                writeln!(out, "\"exited\":{code}}}")
            } else {
                out.write_str("\"killed\":\"")?;
                strata_decode::write_signal_name(out, sig)?;
                writeln!(out, "\",\"core_dumped\":{core}}}")
            }
        }
    }
}

/// A small buffer for the end of a JSON line (always under 64 bytes).
struct TailBuf {
    buf: [u8; 96],
    len: usize,
}

impl TailBuf {
    fn new() -> TailBuf {
        TailBuf { buf: [0; 96], len: 0 }
    }

    fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}

impl Write for TailBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        match self.buf.get_mut(self.len..end) {
            Some(dst) => {
                dst.copy_from_slice(s.as_bytes());
                self.len = end;
                Ok(())
            }
            None => Err(fmt::Error),
        }
    }
}
