//! Diagnostics without an allocator: a fixed buffer that implements
//! `core::fmt::Write`, flushed to stderr with one write.

use crate::sys;
use core::fmt;

pub struct Line {
    buf: [u8; 1024],
    len: usize,
}

impl Line {
    pub const fn new() -> Line {
        Line { buf: [0; 1024], len: 0 }
    }
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
        self
    }
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    pub fn emit(&mut self) {
        if self.len == self.buf.len() {
            self.buf[self.len - 1] = b'\n';
        }
        sys::write_all(2, &self.buf[..self.len]);
        self.len = 0;
    }
}

impl fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.str(s);
        Ok(())
    }
}

/// Prints `strata: <file>: <why>` on stderr.
pub fn file_error(file: &[u8], why: &str) {
    Line::new()
        .str("strata: ")
        .bytes(file)
        .str(": ")
        .str(why)
        .str("\n")
        .emit();
}

/// Human text for the errno values the loader reports.
pub fn strerror(e: isize) -> &'static str {
    match e {
        1 => "Operation not permitted",
        2 => "No such file or directory",
        8 => "Exec format error",
        12 => "Cannot allocate memory",
        13 => "Permission denied",
        20 => "Not a directory",
        21 => "Is a directory",
        36 => "File name too long",
        40 => "Too many levels of symbolic links",
        9 => "Bad file descriptor",
        14 => "Bad address",
        22 => "Invalid argument",
        24 => "Too many open files",
        _ => "cannot execute (unexpected error)",
    }
}
