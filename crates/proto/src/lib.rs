//! The contract between `strata` (the launcher, std) and `strata-rt` (the
//! in-process runtime, no_std).
//!
//! The launcher starts the runtime with the program's own argv and the
//! program's environment plus one variable, [`ENV_VAR`], whose value is an
//! encoded [`Config`]: flags, the session file, the stack specification and
//! the program. The specification travels in the variable itself (not only
//! in the session file) so that a process which outlives the launcher, and
//! its session file, still execs with its whole stack: an extension that
//! enforces something is never silently dropped. The runtime removes that variable before the program
//! sees its environment. When the program calls execve, the runtime re-execs
//! itself with the same encoding and the new program path, so capture follows
//! exec without any other channel.
//!
//! Everything here is `no_std` and allocation-free so the runtime can use it
//! in signal context.
#![no_std]
#![forbid(unsafe_code)]

pub mod bpf;

/// The environment variable carrying the launch configuration.
pub const ENV_VAR: &[u8] = b"STRATA_RT";
/// Version of the encoding below; bumped on any incompatible change.
pub const VERSION: u32 = 4;

/// Longest stack specification the variable carries (escaped, it is at most
/// three times as long, and one environment string may not exceed 128 KiB).
pub const SPEC_MAX: usize = 16 * 1024;

/// Flag: follow execve (load the new image under strata again).
pub const FLAG_FOLLOW_EXEC: u32 = 1 << 0;
/// Flag: rewrite syscall sites at their first trap (the fast path).
pub const FLAG_REWRITE_LAZY: u32 = 1 << 1;
/// Flag: rewrite syscall sites of code as it is loaded (the fast path).
pub const FLAG_REWRITE_EAGER: u32 = 1 << 2;
/// Flag: the program's SIGSYS is ignored. An exec keeps an ignored signal
/// ignored; strata virtualises SIGSYS (the kernel's action is strata's
/// handler, which an exec resets), so the runtime that execs says so.
pub const FLAG_SIGSYS_IGNORED: u32 = 1 << 3;
/// Flag: the launcher installed a seccomp filter and set no_new_privs (a
/// sandbox policy's kernel backstop), exec is followed and no extension
/// object is loaded: the runtime may catch calls with a filter of its own
/// instead of Syscall User Dispatch (runtime seccomp.rs).
pub const FLAG_SECCOMP_DISPATCH: u32 = 1 << 4;
/// Flag: the image that exec'd this one catches calls with strata's seccomp
/// filter, which the new image inherits (set by the runtime that execs).
pub const FLAG_SECCOMP_INSTALLED: u32 = 1 << 5;
/// Flag: the program installed seccomp filters of its own in an earlier
/// image (they outlive exec): one may trap the calls strata issues for it
/// (set by the runtime that execs).
pub const FLAG_PROGRAM_FILTERS: u32 = 1 << 6;

/// Flag: the image that exec'd this one checked the new program's ELF
/// interpreter as the kernel would (an executable regular file), so the new
/// image need not ask again (set by the runtime that execs).
pub const FLAG_INTERP_CHECKED: u32 = 1 << 7;

/// A decoded launch configuration. Borrowed from the encoded bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config<'a> {
    pub flags: u32,
    /// The program's signal mask for the new image, when the runtime that
    /// wrote this configuration execs with every signal blocked (it does, so
    /// that a signal arriving while it prepares the exec stays pending for
    /// the new image instead of being left blocked there); None: the mask
    /// the runtime inherits is the program's (the launcher's first start).
    pub mask: Option<u64>,
    /// Path of the session file (empty when no extension is loaded).
    pub session: &'a [u8],
    /// The stack specification ([`spec`]), escaped as it is in the
    /// variable ([`Config::encode_with_spec`]); [`Config::spec`] decodes it.
    pub spec_esc: &'a [u8],
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
    /// The signal mask field is not hexadecimal.
    BadMask,
    /// The output buffer is too small for the encoding.
    TooLong,
    /// A path contains a NUL byte or the separator where it may not.
    BadPath,
    /// The stack specification is not hex or too long.
    BadSpec,
}

impl ProtoError {
    pub fn message(self) -> &'static str {
        match self {
            ProtoError::MissingField => "launch configuration has too few fields",
            ProtoError::BadVersion => "launch configuration is from another strata version",
            ProtoError::BadFlags => "launch configuration has malformed flags",
            ProtoError::BadMask => "launch configuration has a malformed signal mask",
            ProtoError::TooLong => "launch configuration does not fit",
            ProtoError::BadPath => "launch configuration has a malformed path",
            ProtoError::BadSpec => "launch configuration has a malformed stack specification",
        }
    }
}

const SEP: u8 = b'|';

impl<'a> Config<'a> {
    /// Encodes as `VERSION|FLAGS_HEX|MASK_HEX|SESSION|SPEC|PROGRAM` (MASK_HEX
    /// empty for no mask) into `out` with the raw specification `spec`
    /// (`spec_esc` is ignored); returns the length written. The program
    /// path goes last so it may contain the separator. SPEC is the
    /// specification's bytes as they are but for `%`, the separator and
    /// NUL, each written `%XX` (two lower-case hex digits): every exec
    /// copies it twice (decoded at start, encoded again for the next
    /// image), and a policy's is some kilobytes, so most of it is copied
    /// in runs rather than translated byte by byte.
    pub fn encode_with_spec(&self, spec: &[u8], out: &mut [u8]) -> Result<usize, ProtoError> {
        if self.session.contains(&SEP) || self.session.contains(&0) || self.program.contains(&0) {
            return Err(ProtoError::BadPath);
        }
        if spec.len() > SPEC_MAX {
            return Err(ProtoError::TooLong);
        }
        let mut w = Writer { out, pos: 0 };
        w.num(VERSION as u64, 10)?;
        w.put(&[SEP])?;
        w.num(self.flags as u64, 16)?;
        w.put(&[SEP])?;
        if let Some(m) = self.mask {
            w.num(m, 16)?;
        }
        w.put(&[SEP])?;
        w.put(self.session)?;
        w.put(&[SEP])?;
        let mut rest = spec;
        loop {
            let run = rest.iter().position(|&b| escaped(b)).unwrap_or(rest.len());
            w.put(&rest[..run])?;
            let Some(&b) = rest.get(run) else { break };
            w.put(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]])?;
            rest = &rest[run + 1..];
        }
        w.put(&[SEP])?;
        w.put(self.program)?;
        Ok(w.pos)
    }

    /// Decodes the specification into `out`; returns it.
    pub fn spec<'o>(&self, out: &'o mut [u8]) -> Result<&'o [u8], ProtoError> {
        let lower_hex = |c: u8| Some(HEX_VAL[c as usize]).filter(|&v| v < 16);
        match unescape(self.spec_esc, out, lower_hex) {
            Ok(n) => Ok(&out[..n]),
            Err(_) => Err(ProtoError::BadSpec),
        }
    }

    /// Decodes the value of [`ENV_VAR`].
    pub fn decode(s: &'a [u8]) -> Result<Config<'a>, ProtoError> {
        let mut parts = s.splitn(6, |&b| b == SEP);
        let ver = parts.next().ok_or(ProtoError::MissingField)?;
        let flags = parts.next().ok_or(ProtoError::MissingField)?;
        let mask = parts.next().ok_or(ProtoError::MissingField)?;
        let session = parts.next().ok_or(ProtoError::MissingField)?;
        let spec_esc = parts.next().ok_or(ProtoError::MissingField)?;
        let program = parts.next().ok_or(ProtoError::MissingField)?;
        if parse_num(ver, 10).ok_or(ProtoError::BadVersion)? != VERSION as u64 {
            return Err(ProtoError::BadVersion);
        }
        let flags = parse_num(flags, 16).ok_or(ProtoError::BadFlags)?;
        let flags = u32::try_from(flags).map_err(|_| ProtoError::BadFlags)?;
        let mask = match mask {
            [] => None,
            m => Some(parse_num(m, 16).ok_or(ProtoError::BadMask)?),
        };
        if program.is_empty() {
            return Err(ProtoError::BadPath);
        }
        // The escapes are checked when the specification is decoded.
        if spec_esc.len() > escaped_len_max(SPEC_MAX) {
            return Err(ProtoError::BadSpec);
        }
        Ok(Config {
            flags,
            mask,
            session,
            spec_esc,
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

/// Bytes the specification's encoding escapes.
fn escaped(b: u8) -> bool {
    b == b'%' || b == SEP || b == 0
}

/// The length of the encoding of specification `spec` (what
/// [`Config::encode_with_spec`] writes for it).
pub fn escaped_len(spec: &[u8]) -> usize {
    spec.len() + 2 * spec.iter().filter(|&&b| escaped(b)).count()
}

/// The longest the encoding of a specification of `n` bytes can be (every
/// byte escaped).
pub const fn escaped_len_max(n: usize) -> usize {
    3 * n
}

/// Why [`unescape`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unescape {
    /// A `%` not followed by two digits.
    Malformed,
    /// `out` is too small.
    TooLong,
}

/// Copies `src` into `out` with each `%XX` (hex digits as `digit` reads
/// them) written as the byte it stands for; the runs between escapes are
/// copied whole. Returns the length written. (The launch configuration's
/// specification, and the policy layer's compiled text, are percent-encoded
/// this way; both are decoded at every process start.)
pub fn unescape(src: &[u8], out: &mut [u8], digit: impl Fn(u8) -> Option<u8>) -> Result<usize, Unescape> {
    let mut n = 0;
    unescape_to(src, digit, |piece| {
        out.get_mut(n..n + piece.len())
            .ok_or(Unescape::TooLong)?
            .copy_from_slice(piece);
        n += piece.len();
        Ok(())
    })?;
    Ok(n)
}

/// [`unescape`] into whatever `put` appends to: it gets the decoded text
/// in pieces, each run between escapes whole and each escaped byte alone.
pub fn unescape_to(
    src: &[u8],
    digit: impl Fn(u8) -> Option<u8>,
    mut put: impl FnMut(&[u8]) -> Result<(), Unescape>,
) -> Result<(), Unescape> {
    let mut rest = src;
    loop {
        let run = rest.iter().position(|&b| b == b'%').unwrap_or(rest.len());
        put(&rest[..run])?;
        if run == rest.len() {
            return Ok(());
        }
        let esc = rest.get(run + 1..run + 3).ok_or(Unescape::Malformed)?;
        let (Some(hi), Some(lo)) = (digit(esc[0]), digit(esc[1])) else {
            return Err(Unescape::Malformed);
        };
        put(&[hi << 4 | lo])?;
        rest = &rest[run + 3..];
    }
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

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lower-case hex digits' values; 0xff for any other byte.
const HEX_VAL: [u8; 256] = {
    let mut t = [0xff; 256];
    let mut i = 0;
    while i < 16 {
        t[HEX[i] as usize] = i as u8;
        i += 1;
    }
    t
};

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

/// Layout of the session file: the memory every process of a traced tree
/// shares with the launcher.
///
/// The launcher creates it when any extension is loaded; every process of
/// the tree maps it shared:
/// the `count` layer adds to its counters atomically, layers emit trace
/// records into its ring, which the launcher drains while the program runs,
/// and the runtime marks multi-task sessions and extension failures in its
/// header. The launcher removes it when the whole tree has exited.
pub mod counts {
    /// First 8 bytes of the file (3: writers wake a reader that waits,
    /// [`RING_WAITING_WORD`]; a runtime that does not would leave it
    /// asleep, so it refuses the file instead).
    pub const MAGIC: [u8; 8] = *b"STRATAS3";
    /// Syscall numbers 0..SLOTS are counted; larger numbers go to the last slot.
    pub const SLOTS: usize = 512;
    /// Bytes before the first counter slot: one page of header words.
    pub const HEADER: usize = 4096;
    /// u64 fields per slot: calls, errors, nanoseconds.
    pub const FIELDS: usize = 3;
    /// Where the trace ring starts (bytes from the file start).
    pub const RING_OFFSET: usize = HEADER + SLOTS * FIELDS * 8;
    /// File size without the ring.
    pub const FILE_SIZE: usize = RING_OFFSET;
    /// Default and limits of the ring size (a power of two).
    pub const RING_DEFAULT: usize = 1 << 20;
    pub const RING_MIN: usize = 1 << 16;
    pub const RING_MAX: usize = 1 << 30;
    /// Header word (u64, from the file start): calls that reached strata
    /// through a SIGSYS trap.
    pub const TRAPPED_WORD: usize = 1;
    /// Header word: TSC frequency in kHz, which the runtime uses to turn cycle
    /// counts into nanoseconds. Zero: unknown, raw cycles are stored.
    pub const TSC_KHZ_WORD: usize = 2;
    /// Header word: nonzero once the tree has had more than one task.
    pub const MULTI_TASK_WORD: usize = 3;
    /// Header words of the ring: bytes reserved so far (head), bytes
    /// consumed by the launcher (tail), ring size in bytes.
    pub const RING_HEAD_WORD: usize = 4;
    pub const RING_TAIL_WORD: usize = 5;
    pub const RING_SIZE_WORD: usize = 6;
    /// Header word: nonzero when an extension failed and strata stopped the
    /// program.
    pub const FAILED_WORD: usize = 7;
    /// Header words of the fast path (`--fast-stats`), summed over the tree:
    /// calls that entered strata through a rewritten site, calls a rewritten
    /// site issued without entering strata, program calls that trapped,
    /// sites rewritten, sites strata declined to rewrite.
    pub const FAST_WORD: usize = 8;
    pub const NATIVE_WORD: usize = 9;
    pub const TRAP_WORD: usize = 10;
    pub const PATCHED_WORD: usize = 11;
    pub const DECLINED_WORD: usize = 12;
    /// Header words of the site cache (the fast path's scan results, shared
    /// by every process of the tree): its offset in bytes from the file start
    /// (0: none), its size, and the bytes used so far.
    pub const SITE_CACHE_WORD: usize = 13;
    pub const SITE_CACHE_SIZE_WORD: usize = 14;
    pub const SITE_CACHE_USED_WORD: usize = 15;
    /// Default size of the site cache (sparse: untouched pages cost nothing).
    pub const SITE_CACHE_DEFAULT: usize = 8 << 20;
    /// Layout of the site cache: entries of [`SITE_ENTRY_HEAD`] words (state:
    /// 1 once complete, the file's key in 7 words, the record count), then
    /// that many records of [`SITE_REC_WORDS`] words each (runtime's
    /// `rewrite::Rec`), one after another from the start of the cache.
    pub const SITE_ENTRY_HEAD: usize = 9;
    pub const SITE_REC_WORDS: usize = 7;
    /// Header words: text mappings whose sites were found by a scan, and
    /// those whose sites came from the site cache (`--fast-stats`).
    pub const SCANNED_WORD: usize = 16;
    pub const CACHED_WORD: usize = 17;
    /// Header words: text mappings taken from a text image (rewritten code
    /// shared by the session's processes), and images written.
    pub const IMAGED_WORD: usize = 18;
    pub const IMAGES_WORD: usize = 19;
    /// Header word: how the tree's images caught calls, one bit each
    /// ([`CAPTURE_DISPATCH`], [`CAPTURE_SECCOMP`]; `--fast-stats`).
    pub const CAPTURE_WORD: usize = 20;
    /// Syscall User Dispatch.
    pub const CAPTURE_DISPATCH: u64 = 1;
    /// strata's own seccomp filter (runtime seccomp.rs).
    pub const CAPTURE_SECCOMP: u64 = 2;
    /// Header word: nonzero while the launcher's reader sleeps until a record
    /// comes (it sets it, looks at the ring once more, and waits on it,
    /// FUTEX_WAIT shared, low half) if the head has not moved. A writer that
    /// commits a record and finds it set clears it and wakes the reader
    /// (FUTEX_WAKE); it moves the head before it looks (both SeqCst), so the
    /// reader either sees the head moved or is woken. The reader only
    /// waits so once the ring has stayed empty a while: a busy ring is read
    /// by polling, and costs its writers nothing.
    pub const RING_WAITING_WORD: usize = 21;

    /// Word index (u64, from the start of the file) of field `f` of syscall `nr`.
    pub const fn word(nr: usize, f: usize) -> usize {
        let slot = if nr < SLOTS { nr } else { SLOTS - 1 };
        HEADER / 8 + slot * FIELDS + f
    }

    /// Total file size for a ring of `ring` bytes.
    pub const fn file_size(ring: usize) -> usize {
        RING_OFFSET + ring
    }

    /// Ring records: an 8-byte header word, then the payload padded to 8
    /// bytes. A header word never straddles the end of the ring (sizes are
    /// multiples of 8); a payload may wrap. A writer reserves a record by
    /// writing its header, uncommitted (`len << 40 | tid << 8 | lap << 2 |`
    /// [`RECORD_CLAIMED`]), into the free slot at the head, and only then
    /// moves the head past it (any writer that finds a reservation at the
    /// head moves the head past it for its owner), so the head never passes
    /// a slot without a header: a writer killed at any instruction leaves at
    /// worst a reservation the head never passed (ignored, and cleared when
    /// the ring comes round) or an uncommitted record whose writer is gone,
    /// which the reader skips. Once the payload is in, the writer stores
    /// the header again with [`RECORD_COMMITTED`]. `lap` is the ring lap of
    /// the record's position ([`ring_lap`]): a reservation left from an
    /// earlier lap is stale.
    pub const RECORD_COMMITTED: u64 = 1;
    /// Set in every header word a writer stores (an empty slot is zero).
    pub const RECORD_CLAIMED: u64 = 2;

    /// The header word of a record of `len` payload bytes written by `tid`
    /// at a position of ring lap `lap`.
    pub const fn record_header(len: usize, tid: u32, committed: bool, lap: u32) -> u64 {
        (len as u64) << 40 | (tid as u64) << 8 | ((lap & 63) as u64) << 2 | RECORD_CLAIMED | committed as u64
    }

    /// (payload length, writer tid, committed, lap) of a header word.
    pub const fn record_parts(h: u64) -> (usize, u32, bool, u32) {
        (
            (h >> 40) as usize,
            (h >> 8) as u32,
            h & RECORD_COMMITTED != 0,
            ((h >> 2) & 63) as u32,
        )
    }

    /// The lap (modulo 64) of ring position `pos` in a ring of `size` bytes.
    pub const fn ring_lap(pos: u64, size: usize) -> u32 {
        ((pos / size as u64) & 63) as u32
    }

    /// Largest record payload.
    pub const RECORD_MAX: usize = 16 * 1024;

    /// Bytes a record of `len` payload bytes takes in the ring.
    pub const fn record_size(len: usize) -> usize {
        8 + len.div_ceil(8) * 8
    }
}

/// The stack specification: one line per layer, top first,
/// `NAME<TAB>ARGS<NEWLINE>`. NAME is a built-in extension's name or the
/// absolute path of an extension object (it then contains a `/`). ARGS may
/// not contain a tab or a newline.
pub mod spec {
    /// Iterates over `(name, args)` of a specification text; malformed
    /// lines (no tab) yield `None` for their args.
    pub fn layers(text: &[u8]) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        text.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| {
            let mut it = l.splitn(2, |&b| b == b'\t');
            let name = it.next().unwrap_or(&[]);
            (name, it.next())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg<'a>(session: &'a [u8], program: &'a [u8]) -> Config<'a> {
        Config {
            flags: FLAG_FOLLOW_EXEC | 2,
            mask: None,
            session,
            spec_esc: b"",
            program,
        }
    }

    #[test]
    fn round_trip() {
        let c = cfg(b"/tmp/x", b"./a|b");
        let mut buf = [0u8; 64];
        let n = c.encode_with_spec(b"null\t\n", &mut buf).unwrap();
        assert_eq!(&buf[..n], b"4|3||/tmp/x|null\t\n|./a|b");
        let d = Config::decode(&buf[..n]).unwrap();
        assert_eq!(
            (d.flags, d.mask, d.session, d.program),
            (c.flags, None, c.session, c.program)
        );
        let m = Config {
            mask: Some(0x8000_0000_0000_0201),
            ..c
        };
        let mut buf2 = [0u8; 64];
        let n = m.encode_with_spec(b"", &mut buf2).unwrap();
        assert_eq!(&buf2[..n], b"4|3|8000000000000201|/tmp/x||./a|b");
        assert_eq!(Config::decode(&buf2[..n]).unwrap().mask, Some(0x8000_0000_0000_0201));
        let mut spec = [0u8; 16];
        assert_eq!(d.spec(&mut spec).unwrap(), b"null\t\n");
        assert_eq!(d.spec(&mut [0u8; 2]), Err(ProtoError::BadSpec));
    }

    /// Every byte value, alone and in runs, comes back as it went; only the
    /// escaped ones grow, and the separator never appears in the field.
    #[test]
    fn every_spec_byte_round_trips() {
        let mut spec = [0u8; 3 * 256];
        for (i, b) in spec.iter_mut().enumerate() {
            *b = match i % 3 {
                0 => (i / 3) as u8,
                1 => b'a',
                _ => (255 - i / 3) as u8,
            };
        }
        let c = cfg(b"/s", b"p|q");
        let mut buf = [0u8; 4096];
        let n = c.encode_with_spec(&spec, &mut buf).unwrap();
        let escapes = spec.iter().filter(|&&b| escaped(b)).count();
        assert_eq!(n, "4|3||/s||p|q".len() + spec.len() + 2 * escapes);
        assert!(!buf[..n].contains(&0));
        let d = Config::decode(&buf[..n]).unwrap();
        assert!(!d.spec_esc.contains(&SEP));
        assert_eq!(escaped_len(&spec), d.spec_esc.len());
        assert_eq!(d.program, b"p|q");
        let mut out = [0u8; 3 * 256];
        assert_eq!(d.spec(&mut out).unwrap(), &spec[..]);
        assert_eq!(d.spec(&mut [0u8; 3 * 256 - 1]), Err(ProtoError::BadSpec));
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(Config::decode(b"4|3||x|"), Err(ProtoError::MissingField));
        assert_eq!(Config::decode(b"2|3|x||y"), Err(ProtoError::MissingField));
        assert_eq!(Config::decode(b"3|3||x||y"), Err(ProtoError::BadVersion));
        assert_eq!(Config::decode(b"4|zz||x||y"), Err(ProtoError::BadFlags));
        assert_eq!(Config::decode(b"4|3|1x|x||y"), Err(ProtoError::BadMask));
        assert_eq!(Config::decode(b"4|3|11112222333344445|x||y"), Err(ProtoError::BadMask));
        assert_eq!(Config::decode(b"4|3||x||"), Err(ProtoError::BadPath));
        // Escapes that are not `%` and two lower-case hex digits.
        let mut out = [0u8; 16];
        for bad in [&b"4|3||x|a%0g|y"[..], b"4|3||x|a%2|y", b"4|3||x|%|y", b"4|3||x|%2F|y"] {
            let c = Config::decode(bad).unwrap();
            assert_eq!(
                c.spec(&mut out),
                Err(ProtoError::BadSpec),
                "{:?}",
                core::str::from_utf8(bad)
            );
        }
        let long = [b'x'; escaped_len_max(SPEC_MAX) + 1];
        let mut v = [0u8; escaped_len_max(SPEC_MAX) + 16];
        v[..7].copy_from_slice(b"4|3||x|");
        v[7..7 + long.len()].copy_from_slice(&long);
        v[7 + long.len()..9 + long.len()].copy_from_slice(b"|y");
        assert_eq!(Config::decode(&v[..9 + long.len()]), Err(ProtoError::BadSpec));
        assert_eq!(
            cfg(b"a|b", b"p").encode_with_spec(b"", &mut [0u8; 64]),
            Err(ProtoError::BadPath)
        );
        assert_eq!(
            cfg(b"", b"a-long-program-path").encode_with_spec(b"", &mut [0u8; 8]),
            Err(ProtoError::TooLong)
        );
        let big = [b'x'; SPEC_MAX + 1];
        // Escapes make it longer than the output.
        assert_eq!(
            cfg(b"", b"p").encode_with_spec(b"%%%%", &mut [0u8; 16]),
            Err(ProtoError::TooLong)
        );
        assert_eq!(
            cfg(b"", b"p").encode_with_spec(&big, &mut [0u8; 64]),
            Err(ProtoError::TooLong)
        );
    }
}
