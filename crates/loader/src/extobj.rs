//! Extension objects (`strata run --ext ./libname.so`): the rules strata's
//! own loader holds them to, checked on the bytes of the whole file.
//!
//! Two places read an extension object, and both read it here: the launcher
//! (`strata_cli::extobj::check`) before the program starts, and strata-rt's
//! loader (`crates/runtime/src/dso.rs`), which then maps it, applies the
//! relocations this module lists and calls its entry point. So both make the
//! same decisions and report them with the same text ([`Problem`]).
//!
//! An extension object is a shared object built without libc. There is no
//! ld.so to ask, so only what such an object needs is supported:
//!
//! - ELF64, x86-64, `ET_DYN` (not a PIE); no `PT_TLS`, no `DT_NEEDED`, no
//!   `DF_STATIC_TLS`;
//! - `PT_LOAD` segments inside the file, in address order, each on pages of
//!   its own, none both writable and executable;
//! - relocations `R_X86_64_RELATIVE`, `R_X86_64_64`, `R_X86_64_GLOB_DAT`,
//!   `R_X86_64_JUMP_SLOT` (all bound at load time) and `R_X86_64_NONE`, in
//!   `DT_RELA`/`DT_JMPREL` tables, plus packed relative relocations
//!   (`DT_RELR`), all inside the segments;
//! - undefined symbols: only those strata provides
//!   ([`strata_abi::HOST_SYMBOLS`]); other weak undefined symbols resolve
//!   to 0;
//! - `strata_ext_init` and `strata_ext_abi_version` defined and exported
//!   (global or weak binding, default or protected visibility), the entry
//!   point in code, and the version word (as loaded) compatible with this
//!   strata ([`strata_abi::compatible`]).
//!
//! Every table is found through the segments and read with bounds checks: a
//! malformed file gives a [`Problem`], never a panic. Nothing allocates
//! (strata-rt has no allocator): names in a [`Problem`] are copied into a
//! fixed buffer ([`Name`]). The tables are viewed in place with `object`'s
//! `Pod` types, so `data` must be 8-byte aligned unless `object`'s
//! `unaligned` feature is on (an mmap is; the launcher's `Vec` needs it).

use core::fmt::{self, Write as _};

use object::elf;
use object::read::elf::{FileHeader as _, ProgramHeader as _};
use object::LittleEndian as LE;

use crate::{prot_of, Segment, EI_CLASS, EI_DATA, PAGE};

type Header = elf::FileHeader64<LE>;
/// A dynamic symbol.
pub type Sym = elf::Sym64<LE>;

/// The most `PT_LOAD` segments an extension object may have.
pub const MAX_SEGMENTS: usize = 16;
/// Segments must end below this address (before the load bias): it keeps all
/// address arithmetic far from overflow.
pub const MAX_VADDR: u64 = 1 << 40;

// Packed relative relocations (not in `object::elf` 0.36).
const DT_RELRSZ: u32 = 35;
const DT_RELR: u32 = 36;
const DT_RELRENT: u32 = 37;

/// How many bytes of a name from the file a [`Problem`] keeps (and shows).
pub const NAME_SHOWN: usize = 64;

/// A name from the file (a symbol, a library), as a [`Problem`] keeps it:
/// its first [`NAME_SHOWN`] bytes. Shown with anything but printable ASCII
/// as `?` (so that the message stays one line of text) and `...` if cut.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Name {
    bytes: [u8; NAME_SHOWN],
    len: u8,
    cut: bool,
}

impl Name {
    pub fn new(b: &[u8]) -> Name {
        let n = b.len().min(NAME_SHOWN);
        let mut bytes = [0u8; NAME_SHOWN];
        bytes[..n].copy_from_slice(&b[..n]);
        Name {
            bytes,
            len: n as u8,
            cut: b.len() > NAME_SHOWN,
        }
    }
    /// The bytes kept (all of the name unless [`Name::is_cut`]).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
    /// Whether the name was longer than [`NAME_SHOWN`] bytes.
    pub fn is_cut(&self) -> bool {
        self.cut
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &c in self.as_bytes() {
            f.write_char(if c.is_ascii_graphic() { c as char } else { '?' })?;
        }
        if self.cut {
            f.write_str("...")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// What is wrong with an extension object's contents. Its `Display` is the
/// reason users read after the file's name, from the launcher and from
/// strata-rt alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    NotRegular,
    NotElf,
    Elf32,
    BigEndian,
    Machine(u16),
    NotShared(u16),
    Pie,
    /// What is malformed.
    Malformed(&'static str),
    /// How the object uses thread-local storage.
    Tls(&'static str),
    WritableCode,
    /// The DT_NEEDED library.
    Needed(Name),
    Undefined(Name),
    Ifunc(Name),
    /// The relocation type.
    Relocation(u32),
    /// The symbol that is not defined and exported.
    Missing(&'static str),
    /// What is not code.
    NotCode(&'static str),
    /// The object's ABI version.
    Version(u32),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotRegular => f.write_str("not a regular file"),
            Problem::NotElf => f.write_str("not an ELF shared object (no ELF header)"),
            Problem::Elf32 => f.write_str("32-bit ELF; extension objects must be x86-64 shared objects"),
            Problem::BigEndian => f.write_str("big-endian ELF; extension objects must be x86-64 shared objects"),
            Problem::Machine(m) => write!(f, "ELF for another machine (e_machine {m}), not x86-64"),
            Problem::NotShared(t) => write!(f, "not an ELF shared object (e_type {t}; build with -shared)"),
            Problem::Pie => {
                f.write_str("is a position-independent executable, not a shared object (build with -shared)")
            }
            Problem::Malformed(why) => write!(f, "malformed ELF file: {why}"),
            Problem::Tls(how) => write!(
                f,
                "uses thread-local storage ({how}), which extension objects cannot use"
            ),
            Problem::WritableCode => {
                f.write_str("has a segment that is both writable and executable, which strata does not map")
            }
            Problem::Needed(lib) => write!(
                f,
                "needs {lib} (DT_NEEDED): extension objects must be built without libc or other shared libraries \
                 (link with -nostdlib)"
            ),
            Problem::Undefined(name) => {
                write!(f, "undefined symbol {name} (strata provides only ")?;
                for (i, s) in strata_abi::HOST_SYMBOLS.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(s)?;
                }
                f.write_str(")")
            }
            Problem::Ifunc(name) => write!(f, "symbol {name} is an IFUNC, which strata does not support"),
            Problem::Relocation(t) => write!(
                f,
                "unsupported relocation {} (type {t}); strata applies only R_X86_64_RELATIVE, R_X86_64_64, \
                 R_X86_64_GLOB_DAT and R_X86_64_JUMP_SLOT",
                reloc_name(*t)
            ),
            Problem::Missing(sym) => write!(
                f,
                "no {sym} (an extension object defines and exports {} and {})",
                strata_abi::ENTRY_SYMBOL,
                strata_abi::VERSION_SYMBOL
            ),
            Problem::NotCode(what) => write!(f, "{what} is not code (not in an executable segment)"),
            Problem::Version(v) => write!(
                f,
                "built for strata ABI {}.{}; this strata speaks {}.{}",
                v >> 16,
                v & 0xffff,
                strata_abi::VERSION_MAJOR,
                strata_abi::VERSION_MINOR
            ),
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

/// Whether strata provides `name` for an undefined symbol.
pub fn host_symbol(name: &[u8]) -> bool {
    strata_abi::HOST_SYMBOLS.iter().any(|p| p.as_bytes() == name)
}

/// What the dynamic table says (addresses before the load bias). Sizes are
/// in bytes; an absent table has size 0 unless the file says otherwise.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dynamic {
    pub symtab: Option<u64>,
    pub strtab: Option<u64>,
    pub strsz: u64,
    pub rela: Option<u64>,
    pub relasz: u64,
    pub jmprel: Option<u64>,
    pub pltrelsz: u64,
    pub relr: Option<u64>,
    pub relrsz: u64,
    pub hash: Option<u64>,
    pub gnu_hash: Option<u64>,
    pub init: Option<u64>,
    pub init_array: Option<u64>,
    pub init_arraysz: u64,
    /// String-table offset of the first DT_NEEDED name (a parsed object has
    /// none: it is refused).
    needed: Option<u64>,
}

/// What a relocation's symbol resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// Symbol 0, or a weak undefined symbol strata does not provide: 0.
    Zero,
    /// An absolute symbol (`SHN_ABS`): its value as it is.
    Absolute(u64),
    /// A symbol defined in the object: an address before the load bias.
    Image(u64),
    /// An undefined symbol strata provides (one of
    /// [`strata_abi::HOST_SYMBOLS`]), by name.
    Host(&'a [u8]),
}

/// One relocation to apply: an 8-byte word stored at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reloc<'a> {
    /// Where (an address before the load bias).
    pub offset: u64,
    /// `R_X86_64_RELATIVE`, `R_X86_64_64`, `R_X86_64_GLOB_DAT` or
    /// `R_X86_64_JUMP_SLOT` (a `DT_RELR` entry is a `R_X86_64_RELATIVE`).
    pub ty: u32,
    /// The symbol index (0 for relative relocations).
    pub sym: u32,
    /// The addend (for `DT_RELR`, the word the file holds at `offset`).
    pub addend: i64,
    /// What the symbol resolves to ([`Target::Zero`] for relative ones).
    pub target: Target<'a>,
    /// Index of the segment ([`ExtObj::segments`]) whose memory holds
    /// `[offset, offset + 8)`.
    pub segment: usize,
}

impl Reloc<'_> {
    /// The word to store, with load bias `base`; `host` gives the address of
    /// a symbol strata provides.
    pub fn value(&self, base: u64, host: impl FnOnce(&[u8]) -> Option<u64>) -> Result<u64, Problem> {
        let symbol = match self.target {
            Target::Zero => 0,
            Target::Absolute(v) => v,
            Target::Image(v) => base.wrapping_add(v),
            Target::Host(name) => host(name).ok_or(Problem::Undefined(Name::new(name)))?,
        };
        let addend = self.addend as u64;
        match self.ty {
            elf::R_X86_64_RELATIVE => Ok(base.wrapping_add(addend)),
            elf::R_X86_64_64 => Ok(symbol.wrapping_add(addend)),
            elf::R_X86_64_GLOB_DAT | elf::R_X86_64_JUMP_SLOT => Ok(symbol),
            t => Err(Problem::Relocation(t)),
        }
    }
}

/// What [`ExtObj::check`] found besides "acceptable" (addresses before the
/// load bias).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// The `strata_ext_abi_version` word.
    pub version: u32,
    /// Address of `strata_ext_init` (in an executable segment).
    pub entry: u64,
    /// `DT_INIT` (in an executable segment).
    pub init: Option<u64>,
    /// `DT_INIT_ARRAY`: its address and number of entries (in a readable
    /// segment; the entries are filled by relocations).
    pub init_array: Option<(u64, u64)>,
    /// Which segments relocations write to.
    pub relocated: [bool; MAX_SEGMENTS],
}

/// A parsed extension object: its headers and tables, read from the file.
pub struct ExtObj<'a> {
    data: &'a [u8],
    segs: [Segment; MAX_SEGMENTS],
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

/// Checks `data` (a whole extension object) as strata's loader will; what
/// the loader needs besides.
pub fn inspect(data: &[u8]) -> Result<(ExtObj<'_>, Checked), Problem> {
    let o = ExtObj::parse(data)?;
    let c = o.check()?;
    Ok((o, c))
}

impl<'a> ExtObj<'a> {
    /// Checks the headers and reads the tables.
    pub fn parse(data: &'a [u8]) -> Result<ExtObj<'a>, Problem> {
        if !data.starts_with(&elf::ELFMAG) || data.len() < 64 {
            return Err(Problem::NotElf);
        }
        match data[EI_CLASS] {
            elf::ELFCLASS64 => {}
            elf::ELFCLASS32 => return Err(Problem::Elf32),
            _ => return Err(Problem::Malformed("unknown ELF class")),
        }
        if data[EI_DATA] != elf::ELFDATA2LSB {
            return Err(Problem::BigEndian);
        }
        let h = Header::parse(data).map_err(|_| Problem::Malformed("bad ELF header"))?;
        let machine = h.e_machine.get(LE);
        if machine != elf::EM_X86_64 {
            return Err(Problem::Machine(machine));
        }
        let ty = h.e_type.get(LE);
        if ty != elf::ET_DYN {
            return Err(Problem::NotShared(ty));
        }
        if usize::from(h.e_phentsize.get(LE)) != core::mem::size_of::<elf::ProgramHeader64<LE>>() {
            return Err(Problem::Malformed("wrong program header size"));
        }
        if !h.e_phoff.get(LE).is_multiple_of(8) {
            return Err(Problem::Malformed("misaligned program headers"));
        }
        let phdrs = h
            .program_headers(LE, data)
            .map_err(|_| Problem::Malformed("program headers lie outside the file"))?;

        let mut o = ExtObj {
            data,
            segs: [Segment::default(); MAX_SEGMENTS],
            nsegs: 0,
            relro: None,
            dynamic: Dynamic::default(),
            strtab: &[],
            syms: &[],
        };
        let mut dynamic = None;
        for ph in phdrs {
            match ph.p_type.get(LE) {
                // (A segment without memory maps nothing: skipped.)
                elf::PT_LOAD if ph.p_memsz.get(LE) > 0 => o.add_segment(ph)?,
                elf::PT_TLS => return Err(Problem::Tls("PT_TLS")),
                elf::PT_DYNAMIC => {
                    if !ph.p_offset.get(LE).is_multiple_of(8) {
                        return Err(Problem::Malformed("misaligned dynamic table"));
                    }
                    dynamic = ph
                        .dynamic(LE, data)
                        .map_err(|_| Problem::Malformed("the dynamic table lies outside the file"))?;
                }
                elf::PT_GNU_RELRO => o.relro = Some((ph.p_vaddr.get(LE), ph.p_memsz.get(LE))),
                _ => {}
            }
        }
        let (Some(first), Some(last)) = (o.segments().first(), o.segments().last()) else {
            return Err(Problem::Malformed("no loadable segment"));
        };
        if let Some((a, n)) = o.relro {
            let (lo, hi) = (first.map_start(), last.map_end());
            if a < lo || a > hi || n > hi - a {
                return Err(Problem::Malformed("PT_GNU_RELRO lies outside the loadable segments"));
            }
        }
        let Some(dynamic) = dynamic else {
            return Err(Problem::Malformed("no dynamic table (PT_DYNAMIC)"));
        };
        o.read_dynamic(dynamic)?;
        Ok(o)
    }

    fn add_segment(&mut self, ph: &elf::ProgramHeader64<LE>) -> Result<(), Problem> {
        let flags = ph.p_flags.get(LE);
        let s = Segment {
            vaddr: ph.p_vaddr.get(LE),
            memsz: ph.p_memsz.get(LE),
            offset: ph.p_offset.get(LE),
            filesz: ph.p_filesz.get(LE),
            prot: prot_of(flags),
        };
        if s.filesz > s.memsz {
            return Err(Problem::Malformed("a segment has more file bytes than memory bytes"));
        }
        if s.offset
            .checked_add(s.filesz)
            .is_none_or(|e| e > self.data.len() as u64)
        {
            return Err(Problem::Malformed("a segment lies beyond the end of the file"));
        }
        if s.vaddr % PAGE != s.offset % PAGE {
            return Err(Problem::Malformed(
                "a segment's address and file offset disagree modulo the page size",
            ));
        }
        if s.vaddr.checked_add(s.memsz).is_none_or(|e| e > MAX_VADDR) {
            return Err(Problem::Malformed(
                "a segment lies beyond the address range strata maps",
            ));
        }
        if flags & elf::PF_W != 0 && flags & elf::PF_X != 0 {
            return Err(Problem::WritableCode);
        }
        if self
            .segments()
            .last()
            .is_some_and(|prev| s.map_start() < prev.map_end())
        {
            return Err(Problem::Malformed(
                "PT_LOAD segments overlap, share a page or are out of order",
            ));
        }
        if self.nsegs == MAX_SEGMENTS {
            return Err(Problem::Malformed("too many PT_LOAD segments"));
        }
        self.segs[self.nsegs] = s;
        self.nsegs += 1;
        Ok(())
    }

    /// The whole file.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The `PT_LOAD` segments with memory (at least one, in address order,
    /// each on pages of its own, all below [`MAX_VADDR`]; `prot` is
    /// PROT_READ=1 | PROT_WRITE=2 | PROT_EXEC=4, never both of the last two).
    pub fn segments(&self) -> &[Segment] {
        &self.segs[..self.nsegs]
    }

    /// `PT_GNU_RELRO`: address and size, within the segments' pages.
    pub fn relro(&self) -> Option<(u64, u64)> {
        self.relro
    }

    /// What the dynamic table says.
    pub fn dynamic(&self) -> &Dynamic {
        &self.dynamic
    }

    /// The dynamic symbols (entry 0 included).
    pub fn symbols(&self) -> &'a [Sym] {
        self.syms
    }

    /// The file bytes at address `vaddr`, up to the end of its segment's
    /// file part.
    fn file_from(&self, vaddr: u64) -> Option<&'a [u8]> {
        let s = self
            .segments()
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

    /// The `len` file bytes at address `vaddr` (all in one segment's file
    /// part).
    pub fn file_range(&self, vaddr: u64, len: u64) -> Option<&'a [u8]> {
        if len == 0 {
            return Some(&self.data[..0]); // (an aligned empty slice)
        }
        self.file_from(vaddr)?.get(..usize::try_from(len).ok()?)
    }

    /// Index of the segment whose memory holds `[vaddr, vaddr + len)`.
    pub fn segment_index(&self, vaddr: u64, len: u64) -> Option<usize> {
        self.segments().iter().position(|s| s.holds(vaddr, len))
    }

    /// Whether `vaddr` lies in an executable segment.
    pub fn in_code(&self, vaddr: u64) -> bool {
        self.segment_index(vaddr, 1).is_some_and(|i| self.segs[i].prot & 4 != 0)
    }

    /// NUL-terminated string at `off` in the dynamic string table.
    fn string(&self, off: u64) -> Result<&'a [u8], Problem> {
        let s = usize::try_from(off)
            .ok()
            .and_then(|o| self.strtab.get(o..))
            .ok_or(Problem::Malformed("a name lies outside the string table"))?;
        let n = s
            .iter()
            .position(|&c| c == 0)
            .ok_or(Problem::Malformed("a name in the string table is not NUL-terminated"))?;
        Ok(&s[..n])
    }

    /// The name of symbol `s`.
    pub fn name(&self, s: &Sym) -> Result<&'a [u8], Problem> {
        self.string(s.st_name.get(LE).into())
    }

    /// Walks the dynamic table and finds the string and symbol tables.
    fn read_dynamic(&mut self, table: &[elf::Dyn64<LE>]) -> Result<(), Problem> {
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
                    return Err(Problem::Malformed("wrong symbol entry size (DT_SYMENT)"))
                }
                elf::DT_RELA => d.rela = Some(val),
                elf::DT_RELASZ => d.relasz = val,
                elf::DT_RELAENT if val != 24 => {
                    return Err(Problem::Malformed("wrong relocation entry size (DT_RELAENT)"))
                }
                elf::DT_JMPREL => d.jmprel = Some(val),
                elf::DT_PLTRELSZ => d.pltrelsz = val,
                elf::DT_PLTREL if val != u64::from(elf::DT_RELA) => {
                    return Err(Problem::Malformed("PLT relocations are not RELA (DT_PLTREL)"))
                }
                elf::DT_REL | elf::DT_RELSZ => {
                    return Err(Problem::Malformed("REL relocations (DT_REL); x86-64 objects use RELA"))
                }
                DT_RELR => d.relr = Some(val),
                DT_RELRSZ => d.relrsz = val,
                DT_RELRENT if val != 8 => return Err(Problem::Malformed("wrong DT_RELRENT")),
                elf::DT_HASH => d.hash = Some(val),
                elf::DT_GNU_HASH => d.gnu_hash = Some(val),
                elf::DT_INIT => d.init = Some(val),
                elf::DT_INIT_ARRAY => d.init_array = Some(val),
                elf::DT_INIT_ARRAYSZ => d.init_arraysz = val,
                elf::DT_FLAGS if val & u64::from(elf::DF_STATIC_TLS) != 0 => return Err(Problem::Tls("DF_STATIC_TLS")),
                elf::DT_FLAGS_1 if val & u64::from(elf::DF_1_PIE) != 0 => return Err(Problem::Pie),
                _ => {}
            }
        }
        let (Some(strtab), Some(symtab)) = (self.dynamic.strtab, self.dynamic.symtab) else {
            return Err(Problem::Malformed("no dynamic symbol or string table"));
        };
        self.strtab = self
            .file_range(strtab, self.dynamic.strsz)
            .ok_or(Problem::Malformed("the string table lies outside the file's segments"))?;
        if let Some(off) = self.dynamic.needed {
            return Err(Problem::Needed(Name::new(self.string(off)?)));
        }
        let count = self.symbol_count()?;
        let bytes = self
            .table(symtab, count.saturating_mul(core::mem::size_of::<Sym>() as u64))
            .ok_or(Problem::Malformed(
                "the symbol table is misaligned or lies outside the file's segments",
            ))?;
        self.syms = object::pod::slice_from_all_bytes(bytes)
            .map_err(|_| Problem::Malformed("the symbol table is misaligned"))?;
        Ok(())
    }

    /// How many dynamic symbols there are: DT_HASH's nchain, or the end of
    /// the longest DT_GNU_HASH chain.
    fn symbol_count(&self) -> Result<u64, Problem> {
        const BAD: Problem = Problem::Malformed("bad DT_GNU_HASH table");
        if let Some(h) = self.dynamic.hash {
            let t = self.file_from(h).ok_or(Problem::Malformed("bad DT_HASH table"))?;
            return u32_at(t, 4)
                .map(u64::from)
                .ok_or(Problem::Malformed("bad DT_HASH table"));
        }
        let Some(g) = self.dynamic.gnu_hash else {
            return Err(Problem::Malformed(
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

    /// What symbol `idx` of a relocation resolves to.
    pub fn resolve(&self, idx: u32) -> Result<Target<'a>, Problem> {
        if idx == 0 {
            return Ok(Target::Zero);
        }
        let s = self.syms.get(idx as usize).ok_or(Problem::Malformed(
            "a relocation names a symbol beyond the symbol table",
        ))?;
        let shndx = s.st_shndx.get(LE);
        if shndx != elf::SHN_UNDEF {
            return match s.st_type() {
                elf::STT_GNU_IFUNC => Err(Problem::Ifunc(Name::new(self.name(s)?))),
                elf::STT_TLS => Err(Problem::Tls("a TLS symbol")),
                _ if shndx == elf::SHN_ABS => Ok(Target::Absolute(s.st_value.get(LE))),
                _ => Ok(Target::Image(s.st_value.get(LE))),
            };
        }
        let name = self.name(s)?;
        if host_symbol(name) {
            return Ok(Target::Host(name));
        }
        if s.st_bind() == elf::STB_WEAK {
            return Ok(Target::Zero);
        }
        Err(Problem::Undefined(Name::new(name)))
    }

    /// Every undefined symbol must be one strata provides (or weak).
    pub fn check_undefined(&self) -> Result<(), Problem> {
        for s in self.syms.iter().skip(1) {
            if s.st_shndx.get(LE) == elf::SHN_UNDEF && s.st_bind() != elf::STB_WEAK {
                let name = self.name(s)?;
                if !host_symbol(name) {
                    return Err(Problem::Undefined(Name::new(name)));
                }
            }
        }
        Ok(())
    }

    /// Decodes every relocation (`DT_RELA`, `DT_JMPREL`, then `DT_RELR`),
    /// checks its type, symbol and place, and calls `f` with it.
    /// `R_X86_64_NONE` is skipped.
    pub fn relocations<E: From<Problem>>(&self, mut f: impl FnMut(Reloc<'a>) -> Result<(), E>) -> Result<(), E> {
        let d = &self.dynamic;
        for (addr, size) in [(d.rela, d.relasz), (d.jmprel, d.pltrelsz)] {
            let Some(addr) = addr else {
                continue;
            };
            let bytes = self.table(addr, size).ok_or(Problem::Malformed(
                "a relocation table is misaligned or lies outside the file's segments",
            ))?;
            let relas: &[elf::Rela64<LE>] = object::pod::slice_from_all_bytes(bytes)
                .map_err(|_| Problem::Malformed("bad relocation table size"))?;
            for r in relas {
                let (ty, sym) = (r.r_type(LE, false), r.r_sym(LE, false));
                let target = match ty {
                    elf::R_X86_64_NONE => continue,
                    elf::R_X86_64_RELATIVE => Target::Zero,
                    elf::R_X86_64_64 | elf::R_X86_64_GLOB_DAT | elf::R_X86_64_JUMP_SLOT => self.resolve(sym)?,
                    t => return Err(Problem::Relocation(t).into()),
                };
                let offset = r.r_offset.get(LE);
                f(Reloc {
                    offset,
                    ty,
                    sym,
                    addend: r.r_addend.get(LE),
                    target,
                    segment: self.relocated_segment(offset)?,
                })?;
            }
        }
        if let Some(addr) = d.relr {
            let bytes = self.table(addr, d.relrsz).ok_or(Problem::Malformed(
                "the DT_RELR table is misaligned or lies outside the file's segments",
            ))?;
            let entries: &[elf::Relr64<LE>] =
                object::pod::slice_from_all_bytes(bytes).map_err(|_| Problem::Malformed("bad DT_RELR table size"))?;
            relr(entries, &mut |offset| {
                // The addend is the word stored in the file at the address.
                let word = self.file_range(offset, 8).ok_or(Problem::Malformed(
                    "a DT_RELR relocation lies outside the file's segments",
                ))?;
                let mut w = [0u8; 8];
                w.copy_from_slice(word);
                f(Reloc {
                    offset,
                    ty: elf::R_X86_64_RELATIVE,
                    sym: 0,
                    addend: i64::from_le_bytes(w),
                    target: Target::Zero,
                    segment: self.relocated_segment(offset)?,
                })
            })?;
        }
        Ok(())
    }

    /// The segment a relocation at `offset` writes to.
    fn relocated_segment(&self, offset: u64) -> Result<usize, Problem> {
        self.segment_index(offset, 8)
            .ok_or(Problem::Malformed("a relocation lies outside the loadable segments"))
    }

    /// The exported, defined symbol `name`.
    pub fn export(&self, name: &'static str) -> Result<&'a Sym, Problem> {
        let syms = self.syms;
        for s in syms.iter().skip(1) {
            let visible = matches!(s.st_visibility(), elf::STV_DEFAULT | elf::STV_PROTECTED);
            let global = matches!(s.st_bind(), elf::STB_GLOBAL | elf::STB_WEAK);
            if s.st_shndx.get(LE) != elf::SHN_UNDEF && visible && global && self.name(s)? == name.as_bytes() {
                return Ok(s);
            }
        }
        Err(Problem::Missing(name))
    }

    /// The u32 at address `vaddr` as the object is loaded: from the file, or
    /// 0 in `.bss` (relocations aside).
    pub fn u32_in_image(&self, vaddr: u64) -> Result<u32, Problem> {
        let i = self.segment_index(vaddr, 4).ok_or(Problem::Malformed(
            "strata_ext_abi_version lies outside the loadable segments",
        ))?;
        let s = &self.segs[i];
        if vaddr - s.vaddr >= s.filesz {
            return Ok(0);
        }
        let b = self.file_range(vaddr, 4).ok_or(Problem::Malformed(
            "strata_ext_abi_version straddles the end of its segment's file bytes",
        ))?;
        u32_at(b, 0).ok_or(Problem::Malformed("strata_ext_abi_version is cut short"))
    }

    /// Everything strata checks before it maps the object, in the order it
    /// reports them: undefined symbols, the two exports, the version, the
    /// entry point and initializers, the relocations.
    pub fn check(&self) -> Result<Checked, Problem> {
        self.check_undefined()?;
        let version = self.export(strata_abi::VERSION_SYMBOL)?;
        let entry = self.export(strata_abi::ENTRY_SYMBOL)?.st_value.get(LE);
        let v = self.u32_in_image(version.st_value.get(LE))?;
        if !strata_abi::compatible(v) {
            return Err(Problem::Version(v));
        }
        if !self.in_code(entry) {
            return Err(Problem::NotCode(strata_abi::ENTRY_SYMBOL));
        }
        let d = &self.dynamic;
        if d.init.is_some_and(|a| !self.in_code(a)) {
            return Err(Problem::Malformed("DT_INIT is not in an executable segment"));
        }
        let init_array = match d.init_array {
            Some(a) => {
                let n = d.init_arraysz;
                match self.segment_index(a, n) {
                    Some(i) if n.is_multiple_of(8) => {
                        if self.segs[i].prot & 1 == 0 {
                            return Err(Problem::Malformed("DT_INIT_ARRAY is not readable"));
                        }
                        Some((a, n / 8))
                    }
                    _ => return Err(Problem::Malformed("DT_INIT_ARRAY lies outside the loadable segments")),
                }
            }
            None => None,
        };
        let mut relocated = [false; MAX_SEGMENTS];
        self.relocations(|r| -> Result<(), Problem> {
            relocated[r.segment] = true;
            Ok(())
        })?;
        Ok(Checked {
            version: v,
            entry,
            init: d.init,
            init_array,
            relocated,
        })
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

#[cfg(test)]
mod tests;
