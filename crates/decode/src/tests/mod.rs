//! Unit tests: one module per family. Every expected line was produced by
//! strace 6.1 on x86-64 from the C code in the comment next to it (the
//! addresses and values in the fake memory are the ones that run used,
//! or the line was adapted only where the comment says so).

use std::string::String;
use std::vec::Vec;

use crate::{format_call, format_result_with, Memory, Options};

mod file;
mod io;
mod mem;
mod misc;
mod net;
mod process;
mod quick;
mod signal;
mod strings;
mod time;

/// A sparse memory: regions of bytes at addresses; reads stop at the end
/// of a region (a partial read), and fail outside every region.
#[derive(Default)]
pub(crate) struct Mem {
    regions: Vec<(u64, Vec<u8>)>,
}

impl Mem {
    pub(crate) fn new() -> Self {
        Mem::default()
    }

    /// Maps `bytes` at `addr`.
    pub(crate) fn put(mut self, addr: u64, bytes: &[u8]) -> Self {
        self.regions.push((addr, bytes.to_vec()));
        self
    }

    /// Maps a NUL-terminated copy of `s` at `addr`.
    pub(crate) fn str(self, addr: u64, s: &str) -> Self {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        self.put(addr, &v)
    }

    /// Maps little-endian u64 words at `addr`.
    pub(crate) fn words(self, addr: u64, words: &[u64]) -> Self {
        let v: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.put(addr, &v)
    }

    /// Maps little-endian u32 words at `addr`.
    pub(crate) fn ints(self, addr: u64, ints: &[u32]) -> Self {
        let v: Vec<u8> = ints.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.put(addr, &v)
    }
}

impl Memory for Mem {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<usize, ()> {
        for (base, bytes) in &self.regions {
            if addr >= *base && addr < base + bytes.len() as u64 {
                let off = (addr - base) as usize;
                let n = buf.len().min(bytes.len() - off);
                buf[..n].copy_from_slice(&bytes[off..off + n]);
                return Ok(n);
            }
        }
        Err(())
    }
}

/// The whole line, as strace prints it without the alignment padding:
/// `name(args) = result`.
pub(crate) fn line(nr: usize, args: [u64; 6], ret: i64, mem: &Mem) -> String {
    line_opts(nr, args, ret, mem, &Options::DEFAULT)
}

pub(crate) fn line_opts(nr: usize, args: [u64; 6], ret: i64, mem: &Mem, opts: &Options) -> String {
    let mut s = String::new();
    format_call(&mut s, nr, &args, ret, mem, opts).unwrap();
    format_result_with(&mut s, nr, &args, ret, mem, opts).unwrap();
    s
}

/// Removes strace's alignment padding before ` = `, so expected lines
/// can be pasted from strace output.
pub(crate) fn unpad(strace_line: &str) -> String {
    // The padding is a run of spaces after the closing parenthesis.
    let Some(eq) = strace_line.rfind(" = ") else {
        return strace_line.into();
    };
    let head = strace_line[..eq].trim_end_matches(' ');
    let mut s = String::from(head);
    s.push_str(&strace_line[eq..]);
    s
}

/// Checks `nr(args) = ret` against a line of strace output.
#[track_caller]
pub(crate) fn check(nr: usize, args: [u64; 6], ret: i64, mem: &Mem, strace_line: &str) {
    assert_eq!(line(nr, args, ret, mem), unpad(strace_line));
}

pub(crate) const NOMEM: &Mem = &Mem { regions: Vec::new() };
