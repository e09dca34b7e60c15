//! The contract between `strata` (the launcher, std) and `strata-rt` (the
//! in-process runtime, no_std).
//!
//! The launcher starts the runtime with the program's own argv and the
//! program's environment plus one variable, [`ENV_VAR`], whose value is an
//! encoded [`Config`]. The runtime removes that variable before the program
//! sees its environment. When the program calls execve, the runtime re-execs
//! itself with the same encoding and the new program path, so capture follows
//! exec without any other channel.
//!
//! Everything here is `no_std` and allocation-free so the runtime can use it
//! in signal context.
#![no_std]
#![forbid(unsafe_code)]

/// The environment variable carrying the launch configuration.
pub const ENV_VAR: &[u8] = b"STRATA_RT";
/// Version of the encoding below; bumped on any incompatible change.
pub const VERSION: u32 = 1;

/// Flag: follow execve (load the new image under strata again).
pub const FLAG_FOLLOW_EXEC: u32 = 1 << 0;
/// Flag: the `count` extension is loaded.
pub const FLAG_EXT_COUNT: u32 = 1 << 1;
/// Flag: the `null` extension is loaded (pass-through; kept so that the
/// runtime dispatches through the hook exactly as with a real extension).
pub const FLAG_EXT_NULL: u32 = 1 << 2;

/// A decoded launch configuration. Borrowed from the encoded bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config<'a> {
    pub flags: u32,
    /// Path of the shared counter file (empty when `count` is not loaded).
    pub count_path: &'a [u8],
    /// Path of the program to load, as given to execve (relative paths are
    /// relative to the working directory).
    pub program: &'a [u8],
}

/// Why a configuration string could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtoError {
    /// The value has fewer fields than the format needs.
    MissingField,
    /// The version field is not a number or not [`VERSION`].
    BadVersion,
    /// The flags field is not hexadecimal.
    BadFlags,
    /// The output buffer is too small for the encoding.
    TooLong,
    /// A path contains a NUL byte or the separator where it may not.
    BadPath,
}

impl ProtoError {
    pub fn message(self) -> &'static str {
        match self {
            ProtoError::MissingField => "launch configuration has too few fields",
            ProtoError::BadVersion => "launch configuration is from another strata version",
            ProtoError::BadFlags => "launch configuration has malformed flags",
            ProtoError::TooLong => "launch configuration does not fit",
            ProtoError::BadPath => "launch configuration has a malformed path",
        }
    }
}

const SEP: u8 = b'|';

impl<'a> Config<'a> {
    /// Encodes as `VERSION|FLAGS_HEX|COUNT_PATH|PROGRAM` into `out`; returns
    /// the length written. The program path goes last so it may contain the
    /// separator.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, ProtoError> {
        if self.count_path.contains(&SEP) || self.count_path.contains(&0) || self.program.contains(&0) {
            return Err(ProtoError::BadPath);
        }
        let mut w = Writer { out, pos: 0 };
        w.num(VERSION as u64, 10)?;
        w.put(&[SEP])?;
        w.num(self.flags as u64, 16)?;
        w.put(&[SEP])?;
        w.put(self.count_path)?;
        w.put(&[SEP])?;
        w.put(self.program)?;
        Ok(w.pos)
    }

    /// Decodes the value of [`ENV_VAR`].
    pub fn decode(s: &'a [u8]) -> Result<Config<'a>, ProtoError> {
        let mut parts = s.splitn(4, |&b| b == SEP);
        let ver = parts.next().ok_or(ProtoError::MissingField)?;
        let flags = parts.next().ok_or(ProtoError::MissingField)?;
        let count_path = parts.next().ok_or(ProtoError::MissingField)?;
        let program = parts.next().ok_or(ProtoError::MissingField)?;
        if parse_num(ver, 10).ok_or(ProtoError::BadVersion)? != VERSION as u64 {
            return Err(ProtoError::BadVersion);
        }
        let flags = parse_num(flags, 16).ok_or(ProtoError::BadFlags)?;
        let flags = u32::try_from(flags).map_err(|_| ProtoError::BadFlags)?;
        if program.is_empty() {
            return Err(ProtoError::BadPath);
        }
        Ok(Config {
            flags,
            count_path,
            program,
        })
    }

    pub fn follow_exec(&self) -> bool {
        self.flags & FLAG_FOLLOW_EXEC != 0
    }
}

struct Writer<'o> {
    out: &'o mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn put(&mut self, b: &[u8]) -> Result<(), ProtoError> {
        let end = self.pos.checked_add(b.len()).ok_or(ProtoError::TooLong)?;
        let dst = self.out.get_mut(self.pos..end).ok_or(ProtoError::TooLong)?;
        dst.copy_from_slice(b);
        self.pos = end;
        Ok(())
    }
    fn num(&mut self, mut v: u64, base: u64) -> Result<(), ProtoError> {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b"0123456789abcdef"[(v % base) as usize];
            v /= base;
            if v == 0 {
                break;
            }
        }
        self.put(&tmp[i..])
    }
}

fn parse_num(s: &[u8], base: u64) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' if base == 16 => c - b'a' + 10,
            _ => return None,
        } as u64;
        v = v.checked_mul(base)?.checked_add(d)?;
    }
    Some(v)
}

/// Layout of the shared counter file used by the `count` extension.
///
/// The launcher creates the file; every process of the traced tree maps it
/// shared and adds to the counters atomically; the launcher prints the
/// summary when the whole tree has exited.
pub mod counts {
    /// First 8 bytes of the file.
    pub const MAGIC: [u8; 8] = *b"STRATAC1";
    /// Syscall numbers 0..SLOTS are counted; larger numbers go to the last slot.
    pub const SLOTS: usize = 512;
    /// Bytes before the first slot.
    pub const HEADER: usize = 64;
    /// u64 fields per slot: calls, errors, nanoseconds.
    pub const FIELDS: usize = 3;
    /// Total file size.
    pub const FILE_SIZE: usize = HEADER + SLOTS * FIELDS * 8;
    /// Offset (in u64 words, from the start of the file) of the trap-path
    /// counter: calls that reached strata through a SIGSYS trap.
    pub const TRAPPED_WORD: usize = 1;
    /// Offset (in u64 words) where the launcher stores the TSC frequency in
    /// kHz, which the runtime uses to turn cycle counts into nanoseconds. Zero
    /// means unknown: the runtime then stores raw cycle counts.
    pub const TSC_KHZ_WORD: usize = 2;

    /// Word index (u64, from the start of the file) of field `f` of syscall `nr`.
    pub const fn word(nr: usize, f: usize) -> usize {
        let slot = if nr < SLOTS { nr } else { SLOTS - 1 };
        HEADER / 8 + slot * FIELDS + f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let c = Config {
            flags: FLAG_FOLLOW_EXEC | FLAG_EXT_COUNT,
            count_path: b"/tmp/x",
            program: b"./a|b",
        };
        let mut buf = [0u8; 64];
        let n = c.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"1|3|/tmp/x|./a|b");
        assert_eq!(Config::decode(&buf[..n]).unwrap(), c);
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(Config::decode(b"1|3|x"), Err(ProtoError::MissingField));
        assert_eq!(Config::decode(b"2|3|x|y"), Err(ProtoError::BadVersion));
        assert_eq!(Config::decode(b"1|zz|x|y"), Err(ProtoError::BadFlags));
        assert_eq!(Config::decode(b"1|3|x|"), Err(ProtoError::BadPath));
        let c = Config {
            flags: 0,
            count_path: b"a|b",
            program: b"p",
        };
        assert_eq!(c.encode(&mut [0u8; 64]), Err(ProtoError::BadPath));
        let c = Config {
            flags: 0,
            count_path: b"",
            program: b"a-long-program-path",
        };
        assert_eq!(c.encode(&mut [0u8; 8]), Err(ProtoError::TooLong));
    }
}
