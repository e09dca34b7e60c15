//! Extension objects: strata's own loader for `strata run --ext ./libname.so`.
//!
//! An extension object is a shared object built without libc. strata maps it
//! into the process itself (there is no ld.so to ask, and the program's may
//! not even exist), so only what such an object needs is supported:
//!
//! - ELF64, x86-64, `ET_DYN`; no `PT_TLS`, no `DT_NEEDED`, no `DF_STATIC_TLS`;
//!   `PT_LOAD` segments in address order, each on pages of its own, none both
//!   writable and executable;
//! - relocations `R_X86_64_RELATIVE`, `R_X86_64_64`, `R_X86_64_GLOB_DAT`,
//!   `R_X86_64_JUMP_SLOT` (all bound at load time) and `R_X86_64_NONE`, in
//!   `DT_RELA`/`DT_JMPREL` tables, plus packed relative relocations
//!   (`DT_RELR`);
//! - undefined symbols: only `memcpy`, `memmove`, `memset`, `memcmp`, `bcmp`
//!   and `strlen`, which strata provides (`mem.rs`); other weak undefined
//!   symbols resolve to 0;
//! - exported `strata_ext_abi_version` (a `u32` compatible with this strata's
//!   ABI) and `strata_ext_init` (a [`strata_abi::InitFn`]).
//!
//! The launcher (`strata_cli::extobj::check`) makes the same checks on the
//! same rules before the program starts, so a bad object is normally refused
//! there with the same reasons.
//!
//! Every table is read from a read-only mapping of the file with bounds
//! checks (a malformed file gives an error, never a fault); nothing
//! allocates. No page is ever writable and executable at once: segments with
//! relocations or a partial last page are mapped read-write (without
//! execute), fixed up, then given their final protection.

use crate::sys::{self, Sysno};
use core::fmt::{self, Write};
use object::elf;
use object::read::elf::{FileHeader as _, ProgramHeader as _};
use object::LittleEndian as LE;
use strata_abi::{ExtDesc, Host, InitFn};

type Header = elf::FileHeader64<LE>;
type Sym = elf::Sym64<LE>;

const PAGE: u64 = 4096;
const PROT_EXEC: usize = 4;
/// The most `PT_LOAD` segments an extension object may have.
const MAX_SEGMENTS: usize = 16;
/// Segments must end below this address (before the load bias): it keeps all
/// address arithmetic far from overflow.
const MAX_VADDR: u64 = 1 << 40;
/// Size of the error buffer `strata_ext_init` gets.
const ERR_LEN: usize = 256;

// Packed relative relocations (not in `object::elf` 0.36).
const DT_RELRSZ: u32 = 35;
const DT_RELR: u32 = 36;
const DT_RELRENT: u32 = 37;

/// The names strata resolves undefined symbols against.
const PROVIDED: &str = "memcpy, memmove, memset, memcmp, bcmp, strlen";

/// Address of strata's implementation of `name`, for an undefined symbol.
fn provided(name: &[u8]) -> Option<u64> {
    let a = match name {
        b"memcpy" => crate::mem::memcpy as *const () as usize,
        b"memmove" => crate::mem::memmove as *const () as usize,
        b"memset" => crate::mem::memset as *const () as usize,
        b"memcmp" => crate::mem::memcmp as *const () as usize,
        b"bcmp" => crate::mem::bcmp as *const () as usize,
        b"strlen" => crate::mem::strlen as *const () as usize,
        _ => return None,
    };
    Some(a as u64)
}

/// Why an object was refused; written into the caller's buffer.
enum Error<'a> {
    /// A system call failed: what strata was doing, and the errno.
    Sys(&'static str, isize),
    /// The whole message.
    Bad(&'static str),
    /// "malformed ELF: ..." with what is wrong.
    Malformed(&'static str),
    Class32,
    BigEndian,
    Machine(u16),
    NotShared(u16),
    Needed(&'a [u8]),
    Undefined(&'a [u8]),
    Ifunc(&'a [u8]),
    Relocation(u32),
    Missing(&'static str),
    Version(u32),
    InitFailed(&'a [u8]),
}

/// A name from the file, shown with anything but printable ASCII as `?`
/// (so that the message stays one line of text), cut at 64 bytes.
struct Name<'a>(&'a [u8]);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &c in self.0.iter().take(64) {
            f.write_char(if c.is_ascii_graphic() { c as char } else { '?' })?;
        }
        if self.0.len() > 64 {
            f.write_str("...")?;
        }
        Ok(())
    }
}

impl fmt::Display for Error<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Sys(what, e) => write!(f, "cannot {what}: {}", crate::out::strerror(*e)),
            Error::Bad(why) => f.write_str(why),
            Error::Malformed(why) => write!(f, "malformed ELF file: {why}"),
            Error::Class32 => f.write_str("32-bit ELF; extension objects must be x86-64 shared objects"),
            Error::BigEndian => f.write_str("big-endian ELF; extension objects must be x86-64 shared objects"),
            Error::Machine(m) => write!(f, "ELF for another machine (e_machine {m}), not x86-64"),
            Error::NotShared(t) => write!(f, "not an ELF shared object (e_type {t}; build with -shared)"),
            Error::Needed(lib) => write!(
                f,
                "needs {} (DT_NEEDED): extension objects must be built without libc or other shared libraries \
                 (link with -nostdlib)",
                Name(lib)
            ),
            Error::Undefined(name) => write!(f, "undefined symbol {} (strata provides only {PROVIDED})", Name(name)),
            Error::Ifunc(name) => write!(f, "symbol {} is an IFUNC, which strata does not support", Name(name)),
            Error::Relocation(t) => write!(
                f,
                "unsupported relocation {} (type {t}); strata applies only R_X86_64_RELATIVE, R_X86_64_64, \
                 R_X86_64_GLOB_DAT and R_X86_64_JUMP_SLOT",
                reloc_name(*t)
            ),
            Error::Missing(sym) => write!(
                f,
                "no {sym} (an extension object defines and exports strata_ext_init and strata_ext_abi_version)"
            ),
            Error::Version(v) => write!(
                f,
                "built for strata ABI {}.{}, this strata has {}.{}",
                v >> 16,
                v & 0xffff,
                strata_abi::VERSION_MAJOR,
                strata_abi::VERSION_MINOR
            ),
            Error::InitFailed(msg) => {
                f.write_str("strata_ext_init failed: ")?;
                if msg.is_empty() {
                    return f.write_str("(no message)");
                }
                // The extension's text: its valid UTF-8 prefix, one line.
                let s = match core::str::from_utf8(msg) {
                    Ok(s) => s,
                    Err(e) => core::str::from_utf8(&msg[..e.valid_up_to()]).unwrap_or(""),
                };
                for c in s.chars() {
                    f.write_char(if c.is_control() { ' ' } else { c })?;
                }
                Ok(())
            }
        }
    }
}

/// The name of an x86-64 relocation type, for messages.
fn reloc_name(t: u32) -> &'static str {
    match t {
        elf::R_X86_64_PC32 => "R_X86_64_PC32",
        elf::R_X86_64_GOT32 => "R_X86_64_GOT32",
        elf::R_X86_64_PLT32 => "R_X86_64_PLT32",
        elf::R_X86_64_COPY => "R_X86_64_COPY",
        elf::R_X86_64_GOTPCREL => "R_X86_64_GOTPCREL",
        elf::R_X86_64_32 => "R_X86_64_32",
        elf::R_X86_64_32S => "R_X86_64_32S",
        elf::R_X86_64_16 => "R_X86_64_16",
        elf::R_X86_64_8 => "R_X86_64_8",
        elf::R_X86_64_DTPMOD64 => "R_X86_64_DTPMOD64",
        elf::R_X86_64_DTPOFF64 => "R_X86_64_DTPOFF64",
        elf::R_X86_64_TPOFF64 => "R_X86_64_TPOFF64",
        elf::R_X86_64_TPOFF32 => "R_X86_64_TPOFF32",
        elf::R_X86_64_PC64 => "R_X86_64_PC64",
        elf::R_X86_64_SIZE32 => "R_X86_64_SIZE32",
        elf::R_X86_64_SIZE64 => "R_X86_64_SIZE64",
        elf::R_X86_64_TLSDESC => "R_X86_64_TLSDESC",
        elf::R_X86_64_IRELATIVE => "R_X86_64_IRELATIVE",
        elf::R_X86_64_RELATIVE64 => "R_X86_64_RELATIVE64",
        _ => "of an unknown type",
    }
}

/// The message writer: whole characters only, truncated at the buffer's end.
struct Msg<'b> {
    buf: &'b mut [u8; 256],
    len: usize,
}

impl Write for Msg<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            let mut tmp = [0u8; 4];
            let b = c.encode_utf8(&mut tmp).as_bytes();
            if self.len + b.len() > self.buf.len() {
                return Err(fmt::Error);
            }
            self.buf[self.len..self.len + b.len()].copy_from_slice(b);
            self.len += b.len();
        }
        Ok(())
    }
}

fn report(err: &mut [u8; 256], e: &Error) -> usize {
    let mut m = Msg { buf: err, len: 0 };
    let _ = write!(m, "{e}");
    m.len
}

const fn page_down(v: u64) -> u64 {
    v & !(PAGE - 1)
}

/// Rounds up; callers keep `v` below [`MAX_VADDR`] (or a real address).
const fn page_up(v: u64) -> u64 {
    (v + PAGE - 1) & !(PAGE - 1)
}

/// One `PT_LOAD` segment.
#[derive(Clone, Copy, Default)]
struct Seg {
    vaddr: u64,
    memsz: u64,
    offset: u64,
    filesz: u64,
    flags: u32,
}

impl Seg {
    /// Final protection (PROT_* bits) from the segment's flags.
    fn prot(&self) -> usize {
        let mut p = 0;
        if self.flags & elf::PF_R != 0 {
            p |= sys::PROT_READ;
        }
        if self.flags & elf::PF_W != 0 {
            p |= sys::PROT_WRITE;
        }
        if self.flags & elf::PF_X != 0 {
            p |= PROT_EXEC;
        }
        p
    }
    fn map_start(&self) -> u64 {
        page_down(self.vaddr)
    }
    fn map_end(&self) -> u64 {
        page_up(self.vaddr + self.memsz)
    }
    /// Whether `[vaddr, vaddr + len)` lies in the segment's memory.
    fn holds(&self, vaddr: u64, len: u64) -> bool {
        vaddr >= self.vaddr && vaddr - self.vaddr <= self.memsz && len <= self.memsz - (vaddr - self.vaddr)
    }
    /// The last file page is partly `.bss`, which must be zeroed by hand.
    fn partial_page(&self) -> bool {
        self.memsz > self.filesz && self.filesz > 0 && !(self.vaddr + self.filesz).is_multiple_of(PAGE)
    }
}

/// What the dynamic table says (addresses before the load bias).
#[derive(Default)]
struct Dynamic {
    symtab: Option<u64>,
    strtab: Option<u64>,
    strsz: u64,
    rela: Option<u64>,
    relasz: u64,
    jmprel: Option<u64>,
    pltrelsz: u64,
    relr: Option<u64>,
    relrsz: u64,
    hash: Option<u64>,
    gnu_hash: Option<u64>,
    init: Option<u64>,
    init_array: Option<u64>,
    init_arraysz: u64,
    /// String-table offset of the first DT_NEEDED name.
    needed: Option<u64>,
}

/// A parsed extension object: its headers and tables, read from the file.
struct Obj<'a> {
    data: &'a [u8],
    segs: [Seg; MAX_SEGMENTS],
    nsegs: usize,
    /// PT_GNU_RELRO: address and size.
    relro: Option<(u64, u64)>,
    dynamic: Dynamic,
    strtab: &'a [u8],
    syms: &'a [Sym],
}

fn u32_at(b: &[u8], off: u64) -> Option<u32> {
    let off = usize::try_from(off).ok()?;
    let w = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

impl<'a> Obj<'a> {
    fn segs(&self) -> &[Seg] {
        &self.segs[..self.nsegs]
    }

    /// The file bytes at address `vaddr`, up to the end of its segment's
    /// file part.
    fn file_from(&self, vaddr: u64) -> Option<&'a [u8]> {
        let s = self
            .segs()
            .iter()
            .find(|s| vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz)?;
        let start = s.offset + (vaddr - s.vaddr);
        let end = s.offset + s.filesz;
        self.data.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)
    }

    /// The `len` file bytes of an 8-byte aligned table at `vaddr` (the
    /// alignment is checked whatever `object` itself requires).
    fn table(&self, vaddr: u64, len: u64) -> Option<&'a [u8]> {
        if !vaddr.is_multiple_of(8) {
            return None;
        }
        self.file_range(vaddr, len)
    }

    /// The `len` file bytes at address `vaddr`.
    fn file_range(&self, vaddr: u64, len: u64) -> Option<&'a [u8]> {
        if len == 0 {
            return Some(&self.data[..0]); // (an aligned empty slice)
        }
        self.file_from(vaddr)?.get(..usize::try_from(len).ok()?)
    }

    /// Index of the segment whose memory holds `[vaddr, vaddr + len)`.
    fn seg_index(&self, vaddr: u64, len: u64) -> Option<usize> {
        self.segs().iter().position(|s| s.holds(vaddr, len))
    }

    fn in_code(&self, vaddr: u64) -> bool {
        self.seg_index(vaddr, 1)
            .is_some_and(|i| self.segs[i].flags & elf::PF_X != 0)
    }

    /// NUL-terminated string at `off` in the dynamic string table.
    fn string(&self, off: u64) -> Result<&'a [u8], Error<'a>> {
        let s = usize::try_from(off)
            .ok()
            .and_then(|o| self.strtab.get(o..))
            .ok_or(Error::Malformed("a name lies outside the string table"))?;
        let n = s
            .iter()
            .position(|&c| c == 0)
            .ok_or(Error::Malformed("a name in the string table is not NUL-terminated"))?;
        Ok(&s[..n])
    }

    fn name(&self, s: &Sym) -> Result<&'a [u8], Error<'a>> {
        self.string(s.st_name.get(LE).into())
    }

    /// Checks the headers and reads the tables.
    fn parse(data: &'a [u8]) -> Result<Obj<'a>, Error<'a>> {
        if !data.starts_with(&elf::ELFMAG) {
            return Err(Error::Bad("not an ELF shared object (no ELF header)"));
        }
        if data.len() < 64 {
            return Err(Error::Malformed("truncated ELF header"));
        }
        match data[strata_loader::EI_CLASS] {
            elf::ELFCLASS64 => {}
            elf::ELFCLASS32 => return Err(Error::Class32),
            _ => return Err(Error::Malformed("unknown ELF class")),
        }
        if data[strata_loader::EI_DATA] != elf::ELFDATA2LSB {
            return Err(Error::BigEndian);
        }
        let h = Header::parse(data).map_err(|_| Error::Malformed("bad ELF header"))?;
        let machine = h.e_machine.get(LE);
        if machine != elf::EM_X86_64 {
            return Err(Error::Machine(machine));
        }
        let ty = h.e_type.get(LE);
        if ty != elf::ET_DYN {
            return Err(Error::NotShared(ty));
        }
        if usize::from(h.e_phentsize.get(LE)) != core::mem::size_of::<elf::ProgramHeader64<LE>>() {
            return Err(Error::Malformed("wrong program header size"));
        }
        if !h.e_phoff.get(LE).is_multiple_of(8) {
            return Err(Error::Malformed("misaligned program headers"));
        }
        let phdrs = h
            .program_headers(LE, data)
            .map_err(|_| Error::Malformed("program headers lie outside the file"))?;

        let mut o = Obj {
            data,
            segs: [Seg::default(); MAX_SEGMENTS],
            nsegs: 0,
            relro: None,
            dynamic: Dynamic::default(),
            strtab: &[],
            syms: &[],
        };
        let mut dynamic = None;
        for ph in phdrs {
            match ph.p_type.get(LE) {
                elf::PT_LOAD => {
                    let s = Seg {
                        vaddr: ph.p_vaddr.get(LE),
                        memsz: ph.p_memsz.get(LE),
                        offset: ph.p_offset.get(LE),
                        filesz: ph.p_filesz.get(LE),
                        flags: ph.p_flags.get(LE),
                    };
                    if s.memsz == 0 {
                        continue;
                    }
                    o.add_segment(s)?;
                }
                elf::PT_TLS => {
                    return Err(Error::Bad(
                        "uses thread-local storage (PT_TLS), which extension objects cannot use",
                    ))
                }
                elf::PT_DYNAMIC => {
                    if !ph.p_offset.get(LE).is_multiple_of(8) {
                        return Err(Error::Malformed("misaligned dynamic table"));
                    }
                    dynamic = ph
                        .dynamic(LE, data)
                        .map_err(|_| Error::Malformed("the dynamic table lies outside the file"))?;
                }
                elf::PT_GNU_RELRO => o.relro = Some((ph.p_vaddr.get(LE), ph.p_memsz.get(LE))),
                _ => {}
            }
        }
        if o.nsegs == 0 {
            return Err(Error::Malformed("no loadable segment"));
        }
        if let Some((a, n)) = o.relro {
            let (lo, hi) = (o.segs[0].map_start(), o.segs[o.nsegs - 1].map_end());
            if a < lo || a > hi || n > hi - a {
                return Err(Error::Malformed("PT_GNU_RELRO lies outside the loadable segments"));
            }
        }
        let Some(dynamic) = dynamic else {
            return Err(Error::Malformed("no dynamic table (PT_DYNAMIC)"));
        };
        o.read_dynamic(dynamic)?;
        Ok(o)
    }

    fn add_segment(&mut self, s: Seg) -> Result<(), Error<'a>> {
        if s.filesz > s.memsz {
            return Err(Error::Malformed("a segment has more file bytes than memory bytes"));
        }
        if s.offset
            .checked_add(s.filesz)
            .is_none_or(|e| e > self.data.len() as u64)
        {
            return Err(Error::Malformed("a segment lies beyond the end of the file"));
        }
        if s.vaddr % PAGE != s.offset % PAGE {
            return Err(Error::Malformed(
                "a segment's address and file offset disagree modulo the page size",
            ));
        }
        if s.vaddr.checked_add(s.memsz).is_none_or(|e| e > MAX_VADDR) {
            return Err(Error::Malformed("a segment lies beyond the address range strata maps"));
        }
        if s.flags & elf::PF_W != 0 && s.flags & elf::PF_X != 0 {
            return Err(Error::Bad(
                "has a segment that is both writable and executable, which strata does not map",
            ));
        }
        if let Some(prev) = self.segs().last() {
            if s.map_start() < prev.map_end() {
                return Err(Error::Malformed(
                    "PT_LOAD segments overlap, share a page or are out of order",
                ));
            }
        }
        if self.nsegs == MAX_SEGMENTS {
            return Err(Error::Malformed("too many PT_LOAD segments"));
        }
        self.segs[self.nsegs] = s;
        self.nsegs += 1;
        Ok(())
    }

    /// Walks the dynamic table and finds the string and symbol tables.
    fn read_dynamic(&mut self, table: &[elf::Dyn64<LE>]) -> Result<(), Error<'a>> {
        let d = &mut self.dynamic;
        for e in table {
            let (tag, val) = (e.d_tag.get(LE), e.d_val.get(LE));
            let Ok(tag) = u32::try_from(tag) else {
                continue;
            };
            match tag {
                elf::DT_NULL => break,
                elf::DT_NEEDED => {
                    d.needed.get_or_insert(val);
                }
                elf::DT_SYMTAB => d.symtab = Some(val),
                elf::DT_STRTAB => d.strtab = Some(val),
                elf::DT_STRSZ => d.strsz = val,
                elf::DT_SYMENT if val != core::mem::size_of::<Sym>() as u64 => {
                    return Err(Error::Malformed("wrong symbol entry size (DT_SYMENT)"))
                }
                elf::DT_RELA => d.rela = Some(val),
                elf::DT_RELASZ => d.relasz = val,
                elf::DT_RELAENT if val != 24 => {
                    return Err(Error::Malformed("wrong relocation entry size (DT_RELAENT)"))
                }
                elf::DT_JMPREL => d.jmprel = Some(val),
                elf::DT_PLTRELSZ => d.pltrelsz = val,
                elf::DT_PLTREL if val != u64::from(elf::DT_RELA) => {
                    return Err(Error::Malformed("PLT relocations are not RELA (DT_PLTREL)"))
                }
                elf::DT_REL | elf::DT_RELSZ => {
                    return Err(Error::Malformed("REL relocations (DT_REL); x86-64 objects use RELA"))
                }
                DT_RELR => d.relr = Some(val),
                DT_RELRSZ => d.relrsz = val,
                DT_RELRENT if val != 8 => return Err(Error::Malformed("wrong DT_RELRENT")),
                elf::DT_HASH => d.hash = Some(val),
                elf::DT_GNU_HASH => d.gnu_hash = Some(val),
                elf::DT_INIT => d.init = Some(val),
                elf::DT_INIT_ARRAY => d.init_array = Some(val),
                elf::DT_INIT_ARRAYSZ => d.init_arraysz = val,
                elf::DT_FLAGS if val & u64::from(elf::DF_STATIC_TLS) != 0 => {
                    return Err(Error::Bad(
                        "uses thread-local storage (DF_STATIC_TLS), which extension objects cannot use",
                    ))
                }
                elf::DT_FLAGS_1 if val & u64::from(elf::DF_1_PIE) != 0 => {
                    return Err(Error::Bad(
                        "is a position-independent executable, not a shared object (build with -shared)",
                    ))
                }
                _ => {}
            }
        }
        let (Some(strtab), Some(symtab)) = (self.dynamic.strtab, self.dynamic.symtab) else {
            return Err(Error::Malformed("no dynamic symbol or string table"));
        };
        self.strtab = self
            .file_range(strtab, self.dynamic.strsz)
            .ok_or(Error::Malformed("the string table lies outside the file's segments"))?;
        if let Some(off) = self.dynamic.needed {
            return Err(Error::Needed(self.string(off)?));
        }
        let count = self.symbol_count()?;
        let bytes = self
            .table(symtab, count.saturating_mul(core::mem::size_of::<Sym>() as u64))
            .ok_or(Error::Malformed(
                "the symbol table is misaligned or lies outside the file's segments",
            ))?;
        self.syms =
            object::pod::slice_from_all_bytes(bytes).map_err(|_| Error::Malformed("the symbol table is misaligned"))?;
        Ok(())
    }

    /// How many dynamic symbols there are: DT_HASH's nchain, or the end of
    /// the longest DT_GNU_HASH chain.
    fn symbol_count(&self) -> Result<u64, Error<'a>> {
        const BAD: Error<'static> = Error::Malformed("bad DT_GNU_HASH table");
        if let Some(h) = self.dynamic.hash {
            let t = self.file_from(h).ok_or(Error::Malformed("bad DT_HASH table"))?;
            return u32_at(t, 4).map(u64::from).ok_or(Error::Malformed("bad DT_HASH table"));
        }
        let Some(g) = self.dynamic.gnu_hash else {
            return Err(Error::Malformed(
                "no DT_HASH or DT_GNU_HASH table to size the symbol table",
            ));
        };
        let t = self.file_from(g).ok_or(BAD)?;
        let nbuckets = u64::from(u32_at(t, 0).ok_or(BAD)?);
        let symoffset = u64::from(u32_at(t, 4).ok_or(BAD)?);
        let bloom = u64::from(u32_at(t, 8).ok_or(BAD)?);
        let buckets = 16 + bloom * 8;
        let chains = buckets + nbuckets * 4;
        if chains > t.len() as u64 {
            return Err(BAD);
        }
        let mut last = 0u64;
        for i in 0..nbuckets {
            last = last.max(u64::from(u32_at(t, buckets + 4 * i).ok_or(BAD)?));
        }
        if last == 0 {
            return Ok(symoffset);
        }
        if last < symoffset {
            return Err(BAD);
        }
        loop {
            let v = u32_at(t, chains + 4 * (last - symoffset)).ok_or(BAD)?;
            last += 1;
            if v & 1 != 0 {
                return Ok(last);
            }
        }
    }

    /// Address a relocation of symbol `idx` refers to, with load bias `base`.
    fn resolve(&self, idx: u32, base: u64) -> Result<u64, Error<'a>> {
        if idx == 0 {
            return Ok(0);
        }
        let s = self
            .syms
            .get(idx as usize)
            .ok_or(Error::Malformed("a relocation names a symbol beyond the symbol table"))?;
        let shndx = s.st_shndx.get(LE);
        if shndx != elf::SHN_UNDEF {
            return match s.st_type() {
                elf::STT_GNU_IFUNC => Err(Error::Ifunc(self.name(s)?)),
                elf::STT_TLS => Err(Error::Bad(
                    "uses thread-local storage (a TLS symbol), which extension objects cannot use",
                )),
                _ if shndx == elf::SHN_ABS => Ok(s.st_value.get(LE)),
                _ => Ok(base.wrapping_add(s.st_value.get(LE))),
            };
        }
        let name = self.name(s)?;
        if let Some(a) = provided(name) {
            return Ok(a);
        }
        if s.st_bind() == elf::STB_WEAK {
            return Ok(0);
        }
        Err(Error::Undefined(name))
    }

    /// Every undefined symbol must be one strata provides (or weak).
    fn check_undefined(&self) -> Result<(), Error<'a>> {
        for s in self.syms.iter().skip(1) {
            if s.st_shndx.get(LE) == elf::SHN_UNDEF && s.st_bind() != elf::STB_WEAK {
                let name = self.name(s)?;
                if provided(name).is_none() {
                    return Err(Error::Undefined(name));
                }
            }
        }
        Ok(())
    }

    /// Decodes every relocation and calls `apply(address, value)`: the 8-byte
    /// value to store, computed with load bias `base`, and where (an address
    /// before the bias).
    fn relocations(
        &self,
        base: u64,
        mut apply: impl FnMut(u64, u64) -> Result<(), Error<'a>>,
    ) -> Result<(), Error<'a>> {
        let d = &self.dynamic;
        for (addr, size) in [(d.rela, d.relasz), (d.jmprel, d.pltrelsz)] {
            let Some(addr) = addr else {
                continue;
            };
            const BAD: Error<'static> =
                Error::Malformed("a relocation table is misaligned or lies outside the file's segments");
            let bytes = self.table(addr, size).ok_or(BAD)?;
            let relas: &[elf::Rela64<LE>] =
                object::pod::slice_from_all_bytes(bytes).map_err(|_| Error::Malformed("bad relocation table size"))?;
            for r in relas {
                let (ty, sym) = (r.r_type(LE, false), r.r_sym(LE, false));
                let addend = r.r_addend.get(LE) as u64;
                let value = match ty {
                    elf::R_X86_64_NONE => continue,
                    elf::R_X86_64_RELATIVE => base.wrapping_add(addend),
                    elf::R_X86_64_64 => self.resolve(sym, base)?.wrapping_add(addend),
                    elf::R_X86_64_GLOB_DAT | elf::R_X86_64_JUMP_SLOT => self.resolve(sym, base)?,
                    t => return Err(Error::Relocation(t)),
                };
                apply(r.r_offset.get(LE), value)?;
            }
        }
        if let Some(addr) = d.relr {
            let bytes = self.table(addr, d.relrsz).ok_or(Error::Malformed(
                "the DT_RELR table is misaligned or lies outside the file's segments",
            ))?;
            let entries: &[elf::Relr64<LE>] =
                object::pod::slice_from_all_bytes(bytes).map_err(|_| Error::Malformed("bad DT_RELR table size"))?;
            let mut relative = |at: u64| {
                // The addend is the word stored in the file at the address.
                let word = self.file_range(at, 8).ok_or(Error::Malformed(
                    "a DT_RELR relocation lies outside the file's segments",
                ))?;
                let mut w = [0u8; 8];
                w.copy_from_slice(word);
                apply(at, base.wrapping_add(u64::from_le_bytes(w)))
            };
            relr(entries, &mut relative)?;
        }
        Ok(())
    }

    /// The exported, defined symbol `name`.
    fn export(&self, name: &'static str) -> Result<&'a Sym, Error<'a>> {
        let syms = self.syms;
        for s in syms.iter().skip(1) {
            let visible = matches!(s.st_visibility(), elf::STV_DEFAULT | elf::STV_PROTECTED);
            let global = matches!(s.st_bind(), elf::STB_GLOBAL | elf::STB_WEAK);
            if s.st_shndx.get(LE) != elf::SHN_UNDEF && visible && global && self.name(s)? == name.as_bytes() {
                return Ok(s);
            }
        }
        Err(Error::Missing(name))
    }

    /// The u32 at address `vaddr` as the object is loaded (0 in `.bss`).
    fn u32_in_image(&self, vaddr: u64) -> Result<u32, Error<'a>> {
        let i = self.seg_index(vaddr, 4).ok_or(Error::Malformed(
            "strata_ext_abi_version lies outside the loadable segments",
        ))?;
        let s = &self.segs[i];
        if vaddr - s.vaddr >= s.filesz {
            return Ok(0);
        }
        let b = self.file_range(vaddr, 4).ok_or(Error::Malformed(
            "strata_ext_abi_version straddles the end of its segment's file bytes",
        ))?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Calls `f` with every address of a packed relative relocation table: an
/// even entry is an address, an odd one a bitmap of the 63 words after the
/// last address or bitmap. (Address arithmetic wraps: a crafted table gives
/// addresses that no segment holds, never an overflow.)
fn relr<E>(entries: &[elf::Relr64<LE>], f: &mut impl FnMut(u64) -> Result<(), E>) -> Result<(), E> {
    let mut next = 0u64;
    for e in entries {
        let e = e.0.get(LE);
        if e & 1 == 0 {
            f(e)?;
            next = e.wrapping_add(8);
        } else {
            let mut bits = e >> 1;
            let mut at = next;
            while bits != 0 {
                if bits & 1 != 0 {
                    f(at)?;
                }
                bits >>= 1;
                at = at.wrapping_add(8);
            }
            next = next.wrapping_add(63 * 8);
        }
    }
    Ok(())
}

/// A descriptor closed on drop.
struct Fd(usize);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: closing a descriptor this module opened.
        unsafe { sys::sc(Sysno::close, &[self.0]) };
    }
}

/// A mapping removed on drop unless kept.
struct Mapping {
    addr: usize,
    len: usize,
    keep: bool,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if !self.keep {
            // SAFETY: unmapping a range this module mapped; nothing refers
            // to it any more.
            unsafe { sys::sc(Sysno::munmap, &[self.addr, self.len]) };
        }
    }
}

/// Loads the extension object at `path`, runs its initializers and its
/// `strata_ext_init` with `host` and `args`, which fills `out`.
///
/// On failure the reason (one line of UTF-8 text, without the file's name)
/// is written into `err` and its length returned.
pub fn load(
    path: &[u8],
    host: &'static Host,
    args: &[u8],
    out: &mut ExtDesc,
    err: &mut [u8; 256],
) -> Result<(), usize> {
    let mut p = crate::load::Path::new();
    if let Err(e) = p.set(path) {
        return Err(report(err, &Error::Sys("open", e)));
    }
    // SAFETY: `p` is NUL-terminated.
    let r = unsafe {
        sys::sc(
            Sysno::openat,
            &[sys::AT_FDCWD as usize, p.ptr(), sys::O_RDONLY | sys::O_CLOEXEC, 0],
        )
    };
    let fd = match sys::check(r) {
        Ok(fd) => Fd(fd),
        Err(e) => return Err(report(err, &Error::Sys("open", e))),
    };
    let mut st = [0u64; 18];
    // SAFETY: `st` is large enough for struct stat (144 bytes).
    let r = unsafe { sys::sc(Sysno::fstat, &[fd.0, st.as_mut_ptr() as usize]) };
    if let Err(e) = sys::check(r) {
        return Err(report(err, &Error::Sys("stat", e)));
    }
    let mode = st[3] as u32 & 0o170000;
    if mode == 0o040000 {
        return Err(report(err, &Error::Sys("load", 21))); // EISDIR
    }
    if mode != 0o100000 {
        return Err(report(err, &Error::Bad("not a regular file")));
    }
    let size = st[6] as usize;
    if size < 64 {
        return Err(report(err, &Error::Bad("not an ELF shared object (too short)")));
    }
    // SAFETY: a fresh read-only private mapping of our descriptor at a
    // kernel-chosen address.
    let r = unsafe { sys::sc(Sysno::mmap, &[0, size, sys::PROT_READ, sys::MAP_PRIVATE, fd.0, 0]) };
    let file = match sys::check(r) {
        Ok(addr) => Mapping {
            addr,
            len: size,
            keep: false,
        },
        Err(e) => return Err(report(err, &Error::Sys("map", e))),
    };
    // SAFETY: the mapping is `size` readable bytes and stays until `file` is
    // dropped, after the last use of `data` (the error message included). A
    // file shrunk by someone else meanwhile would fault (SIGBUS): extension
    // objects are not expected to change while strata starts.
    let data = unsafe { core::slice::from_raw_parts(file.addr as *const u8, size) };
    let mut ext_err = [0u8; ERR_LEN];
    let r = load_from(data, &fd, host, args, out, &mut ext_err);
    r.map_err(|e| report(err, &e))
}

fn load_from<'a>(
    data: &'a [u8],
    fd: &Fd,
    host: &'static Host,
    args: &[u8],
    out: &mut ExtDesc,
    ext_err: &'a mut [u8; ERR_LEN],
) -> Result<(), Error<'a>> {
    let o = Obj::parse(data)?;
    o.check_undefined()?;
    let version = o.export(strata_abi::VERSION_SYMBOL)?;
    let init = o.export(strata_abi::ENTRY_SYMBOL)?;
    let v = o.u32_in_image(version.st_value.get(LE))?;
    if !strata_abi::compatible(v) {
        return Err(Error::Version(v));
    }
    let init_at = init.st_value.get(LE);
    if !o.in_code(init_at) {
        return Err(Error::Bad("strata_ext_init is not code (not in an executable segment)"));
    }
    if o.dynamic.init.is_some_and(|a| !o.in_code(a)) {
        return Err(Error::Malformed("DT_INIT is not in an executable segment"));
    }
    let init_array = match o.dynamic.init_array {
        Some(a) => {
            let n = o.dynamic.init_arraysz;
            match o.seg_index(a, n) {
                Some(i) if n.is_multiple_of(8) => {
                    // Filled by relocations, read after them.
                    if o.segs[i].flags & elf::PF_R == 0 {
                        return Err(Error::Malformed("DT_INIT_ARRAY is not readable"));
                    }
                    Some((a, n / 8))
                }
                _ => return Err(Error::Malformed("DT_INIT_ARRAY lies outside the loadable segments")),
            }
        }
        None => None,
    };

    // Which segments relocation writes to (and that every target is in one).
    let mut written = [false; MAX_SEGMENTS];
    o.relocations(0, |at, _| {
        let i = o
            .seg_index(at, 8)
            .ok_or(Error::Malformed("a relocation lies outside the loadable segments"))?;
        written[i] = true;
        Ok(())
    })?;

    let lo = o.segs[0].map_start();
    let span = (o.segs[o.nsegs - 1].map_end() - lo) as usize;
    // SAFETY: a fresh PROT_NONE reservation at a kernel-chosen address.
    let r = unsafe {
        sys::sc(
            Sysno::mmap,
            &[
                0,
                span,
                0,
                sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_NORESERVE,
                usize::MAX,
                0,
            ],
        )
    };
    let mut image = Mapping {
        addr: sys::check(r).map_err(|e| Error::Sys("reserve memory for the object", e))?,
        len: span,
        keep: false,
    };
    let base = (image.addr as u64).wrapping_sub(lo);

    // Map: segments that are written now are read-write (never executable).
    let mut load_prot = [0usize; MAX_SEGMENTS];
    for (i, s) in o.segs().iter().enumerate() {
        load_prot[i] = if written[i] || s.partial_page() {
            sys::PROT_READ | sys::PROT_WRITE
        } else {
            s.prot()
        };
        map_segment(fd, base, s, load_prot[i])?;
    }
    o.relocations(base, |at, value| {
        // SAFETY: the first pass checked that [at, at + 8) lies in a
        // segment, and that segment is mapped read-write in our
        // reservation; no one else knows about this memory yet.
        unsafe { core::ptr::write_unaligned((base + at) as usize as *mut u64, value) };
        Ok(())
    })?;
    for (i, s) in o.segs().iter().enumerate() {
        if load_prot[i] != s.prot() {
            protect(base + s.map_start(), s.map_end() - s.map_start(), s.prot())?;
        }
    }
    if let Some((a, n)) = o.relro {
        let (start, end) = (page_down(base + a), page_down(base + a + n));
        if end > start {
            protect(start, end - start, sys::PROT_READ)?;
        }
    }

    // The initializers, checked before any of them runs.
    let mut inits = [0u64; 64];
    let mut ninits = 0;
    if let Some(a) = o.dynamic.init {
        inits[0] = base + a;
        ninits = 1;
    }
    if let Some((a, n)) = init_array {
        for k in 0..n {
            // SAFETY: [a, a + 8n) lies in a readable, mapped and relocated
            // segment (checked above).
            let f = unsafe { core::ptr::read_unaligned((base + a + 8 * k) as usize as *const u64) };
            if f == 0 || f == u64::MAX {
                continue;
            }
            if !o.in_code(f.wrapping_sub(base)) {
                return Err(Error::Malformed(
                    "an initializer (DT_INIT_ARRAY) is not in an executable segment",
                ));
            }
            if ninits == inits.len() {
                return Err(Error::Bad("has more than 64 initializers"));
            }
            inits[ninits] = f;
            ninits += 1;
        }
    }

    // From here on the object's code runs: it stays mapped whatever happens.
    image.keep = true;
    for &f in &inits[..ninits] {
        // SAFETY: `f` lies in an executable segment of the object, which is
        // mapped, relocated and protected; initializers take (argc, argv,
        // envp) from ld.so, or nothing: 0 and null pointers fit both.
        unsafe {
            let f = core::mem::transmute::<usize, extern "C" fn(i32, *const usize, *const usize)>(f as usize);
            f(0, core::ptr::null(), core::ptr::null());
        }
    }
    // SAFETY: `strata_ext_init` lies in an executable segment of the loaded
    // object, and an extension object's `strata_ext_init` is an `InitFn` by
    // the ABI's definition.
    let entry = unsafe { core::mem::transmute::<usize, InitFn>((base + init_at) as usize) };
    let rc = entry(host, args.as_ptr(), args.len(), out, ext_err.as_mut_ptr(), ERR_LEN);
    if rc != 0 {
        let n = ext_err.iter().position(|&c| c == 0).unwrap_or(ERR_LEN);
        return Err(Error::InitFailed(&ext_err[..n]));
    }
    Ok(())
}

fn protect(addr: u64, len: u64, prot: usize) -> Result<(), Error<'static>> {
    // SAFETY: changes the protection of pages of the object's own
    // reservation, which nothing but this loader uses yet.
    let r = unsafe { sys::sc(Sysno::mprotect, &[addr as usize, len as usize, prot]) };
    sys::check(r)
        .map(drop)
        .map_err(|e| Error::Sys("protect the object's memory", e))
}

/// Maps segment `s` of the file at load bias `base` with protection `prot`.
fn map_segment(fd: &Fd, base: u64, s: &Seg, prot: usize) -> Result<(), Error<'static>> {
    let start = base + s.map_start();
    let pageoff = s.vaddr % PAGE;
    let file_end = base + s.vaddr + s.filesz;
    if s.filesz > 0 {
        // SAFETY: replaces pages inside our own reservation with the file's.
        let r = unsafe {
            sys::sc(
                Sysno::mmap,
                &[
                    start as usize,
                    page_up(pageoff + s.filesz) as usize,
                    prot,
                    sys::MAP_PRIVATE | sys::MAP_FIXED,
                    fd.0,
                    (s.offset - pageoff) as usize,
                ],
            )
        };
        sys::check(r).map_err(|e| Error::Sys("map a segment of the object", e))?;
    }
    if s.memsz > s.filesz {
        if s.partial_page() {
            // SAFETY: [file_end, next page) is the rest of the last file
            // page, just mapped read-write (`prot`, see `partial_page`).
            unsafe { core::ptr::write_bytes(file_end as usize as *mut u8, 0, (page_up(file_end) - file_end) as usize) };
        }
        let anon = if s.filesz > 0 { page_up(file_end) } else { start };
        let end = base + s.map_end();
        if end > anon {
            // SAFETY: zero pages inside our own reservation.
            let r = unsafe {
                sys::sc(
                    Sysno::mmap,
                    &[
                        anon as usize,
                        (end - anon) as usize,
                        prot,
                        sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_FIXED,
                        usize::MAX,
                        0,
                    ],
                )
            };
            sys::check(r).map_err(|e| Error::Sys("map the object's zero-filled memory", e))?;
        }
    }
    Ok(())
}
