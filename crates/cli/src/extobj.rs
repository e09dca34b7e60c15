//! Extension objects (`strata run --ext ./libname.so`), checked before the
//! program starts.
//!
//! strata-rt loads an extension object with its own loader
//! (`crates/runtime/src/dso.rs`), inside the program, where a refusal can
//! only end the process. [`check`] makes every check that loader makes, on
//! the same rules, so that a bad object is reported here with the same
//! reasons before anything runs:
//!
//! - a readable regular file, ELF64, x86-64, `ET_DYN` (not a PIE);
//! - no `PT_TLS`, no `DF_STATIC_TLS`, no `DT_NEEDED` (built without libc);
//! - `PT_LOAD` segments inside the file, in address order, each on pages of
//!   its own, none both writable and executable;
//! - relocations only `R_X86_64_RELATIVE`, `R_X86_64_64`,
//!   `R_X86_64_GLOB_DAT`, `R_X86_64_JUMP_SLOT` and `R_X86_64_NONE` (RELA),
//!   plus packed relative ones (`DT_RELR`), all inside the segments;
//! - undefined symbols only those strata provides ([`PROVIDED`]), or weak;
//! - `strata_ext_init` and `strata_ext_abi_version` defined and exported
//!   (global or weak binding, default or protected visibility), the entry
//!   point in code, and the version word (read from the file) compatible
//!   with this strata ([`strata_abi::compatible`]).
//!
//! The two implementations are twins: a change to the rules changes both.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use object::elf;
use object::read::elf::{FileHeader as _, ProgramHeader as _};
use object::LittleEndian as LE;

use crate::preflight::io_text;

type Header = elf::FileHeader64<LE>;
type Sym = elf::Sym64<LE>;

/// The undefined symbols strata resolves (to its own implementations).
pub const PROVIDED: [&str; 6] = ["memcpy", "memmove", "memset", "memcmp", "bcmp", "strlen"];

const PAGE: u64 = 4096;
/// As in the runtime's loader.
const MAX_SEGMENTS: usize = 16;
const MAX_VADDR: u64 = 1 << 40;

// Packed relative relocations (not in `object::elf` 0.36).
const DT_RELRSZ: u32 = 35;
const DT_RELR: u32 = 36;
const DT_RELRENT: u32 = 37;

/// An extension object that strata-rt will load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtObject {
    /// Absolute and canonical (what the runtime is given).
    pub path: PathBuf,
    /// Its `strata_ext_abi_version`.
    pub version: u32,
}

/// Why an extension object cannot be used; displayed as `FILE: REASON`.
#[derive(Debug, thiserror::Error)]
pub enum ExtObjError {
    #[error("{}: cannot read the extension object: {}", path.display(), io_text(source))]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: {problem}", path.display())]
    Invalid { path: PathBuf, problem: Problem },
}

impl ExtObjError {
    /// What is wrong with the file's contents, if that is the reason.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            ExtObjError::Invalid { problem, .. } => Some(problem),
            ExtObjError::Read { .. } => None,
        }
    }
}

/// What is wrong with an extension object's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    Needed(String),
    Undefined(String),
    Ifunc(String),
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
            Problem::Undefined(name) => write!(
                f,
                "undefined symbol {name} (strata provides only {})",
                PROVIDED.join(", ")
            ),
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

/// Checks the extension object at `path` as strata-rt's loader will.
pub fn check(path: &Path) -> Result<ExtObject, ExtObjError> {
    let read_error = |source| ExtObjError::Read {
        path: path.to_path_buf(),
        source,
    };
    let invalid = |problem| ExtObjError::Invalid {
        path: path.to_path_buf(),
        problem,
    };
    let abs = fs::canonicalize(path).map_err(read_error)?;
    let meta = fs::metadata(&abs).map_err(read_error)?;
    if meta.is_dir() {
        return Err(read_error(io::Error::from_raw_os_error(libc::EISDIR)));
    }
    if !meta.is_file() {
        return Err(invalid(Problem::NotRegular));
    }
    let data = fs::read(&abs).map_err(read_error)?;
    let version = inspect(&data).map_err(invalid)?;
    Ok(ExtObject { path: abs, version })
}

/// Checks the contents of an extension object; its ABI version.
pub fn inspect(data: &[u8]) -> Result<u32, Problem> {
    if !data.starts_with(&elf::ELFMAG) || data.len() < 64 {
        return Err(Problem::NotElf);
    }
    let o = Obj::parse(data)?;
    o.check_undefined()?;
    let version = o.export(strata_abi::VERSION_SYMBOL)?;
    let init = o.export(strata_abi::ENTRY_SYMBOL)?;
    let v = o.u32_in_image(version.st_value.get(LE))?;
    if !strata_abi::compatible(v) {
        return Err(Problem::Version(v));
    }
    if !o.in_code(init.st_value.get(LE)) {
        return Err(Problem::NotCode(strata_abi::ENTRY_SYMBOL));
    }
    if o.dynamic.init.is_some_and(|a| !o.in_code(a)) {
        return Err(Problem::Malformed("DT_INIT is not in an executable segment"));
    }
    if let Some(a) = o.dynamic.init_array {
        let n = o.dynamic.init_arraysz;
        match o.seg_index(a, n) {
            Some(i) if n.is_multiple_of(8) => {
                if o.segs[i].flags & elf::PF_R == 0 {
                    return Err(Problem::Malformed("DT_INIT_ARRAY is not readable"));
                }
            }
            _ => return Err(Problem::Malformed("DT_INIT_ARRAY lies outside the loadable segments")),
        }
    }
    o.relocations(|at| {
        o.seg_index(at, 8)
            .map(drop)
            .ok_or(Problem::Malformed("a relocation lies outside the loadable segments"))
    })?;
    Ok(v)
}

/// One `PT_LOAD` segment.
#[derive(Debug, Clone, Copy)]
struct Seg {
    vaddr: u64,
    memsz: u64,
    offset: u64,
    filesz: u64,
    flags: u32,
}

impl Seg {
    fn map_start(&self) -> u64 {
        self.vaddr & !(PAGE - 1)
    }
    fn map_end(&self) -> u64 {
        (self.vaddr + self.memsz + PAGE - 1) & !(PAGE - 1)
    }
    fn holds(&self, vaddr: u64, len: u64) -> bool {
        vaddr >= self.vaddr && vaddr - self.vaddr <= self.memsz && len <= self.memsz - (vaddr - self.vaddr)
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
    needed: Option<u64>,
}

struct Obj<'a> {
    data: &'a [u8],
    segs: Vec<Seg>,
    dynamic: Dynamic,
    strtab: &'a [u8],
    syms: &'a [Sym],
}

fn u32_at(b: &[u8], off: u64) -> Option<u32> {
    let off = usize::try_from(off).ok()?;
    let w = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes(w.try_into().ok()?))
}

impl<'a> Obj<'a> {
    fn parse(data: &'a [u8]) -> Result<Obj<'a>, Problem> {
        match data[strata_loader::EI_CLASS] {
            elf::ELFCLASS64 => {}
            elf::ELFCLASS32 => return Err(Problem::Elf32),
            _ => return Err(Problem::Malformed("unknown ELF class")),
        }
        if data[strata_loader::EI_DATA] != elf::ELFDATA2LSB {
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
        if usize::from(h.e_phentsize.get(LE)) != std::mem::size_of::<elf::ProgramHeader64<LE>>() {
            return Err(Problem::Malformed("wrong program header size"));
        }
        if !h.e_phoff.get(LE).is_multiple_of(8) {
            return Err(Problem::Malformed("misaligned program headers"));
        }
        let phdrs = h
            .program_headers(LE, data)
            .map_err(|_| Problem::Malformed("program headers lie outside the file"))?;
        let mut o = Obj {
            data,
            segs: Vec::new(),
            dynamic: Dynamic::default(),
            strtab: &[],
            syms: &[],
        };
        let mut relro = None;
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
                    if s.memsz > 0 {
                        o.add_segment(s)?;
                    }
                }
                elf::PT_TLS => return Err(Problem::Tls("PT_TLS")),
                elf::PT_DYNAMIC => {
                    if !ph.p_offset.get(LE).is_multiple_of(8) {
                        return Err(Problem::Malformed("misaligned dynamic table"));
                    }
                    dynamic = ph
                        .dynamic(LE, data)
                        .map_err(|_| Problem::Malformed("the dynamic table lies outside the file"))?;
                }
                elf::PT_GNU_RELRO => relro = Some((ph.p_vaddr.get(LE), ph.p_memsz.get(LE))),
                _ => {}
            }
        }
        let (Some(first), Some(last)) = (o.segs.first(), o.segs.last()) else {
            return Err(Problem::Malformed("no loadable segment"));
        };
        if let Some((a, n)) = relro {
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

    fn add_segment(&mut self, s: Seg) -> Result<(), Problem> {
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
        if s.flags & elf::PF_W != 0 && s.flags & elf::PF_X != 0 {
            return Err(Problem::WritableCode);
        }
        if self.segs.last().is_some_and(|prev| s.map_start() < prev.map_end()) {
            return Err(Problem::Malformed(
                "PT_LOAD segments overlap, share a page or are out of order",
            ));
        }
        if self.segs.len() == MAX_SEGMENTS {
            return Err(Problem::Malformed("too many PT_LOAD segments"));
        }
        self.segs.push(s);
        Ok(())
    }

    fn file_from(&self, vaddr: u64) -> Option<&'a [u8]> {
        let s = self
            .segs
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

    fn file_range(&self, vaddr: u64, len: u64) -> Option<&'a [u8]> {
        if len == 0 {
            return Some(&self.data[..0]); // (an aligned empty slice)
        }
        self.file_from(vaddr)?.get(..usize::try_from(len).ok()?)
    }

    fn seg_index(&self, vaddr: u64, len: u64) -> Option<usize> {
        self.segs.iter().position(|s| s.holds(vaddr, len))
    }

    fn in_code(&self, vaddr: u64) -> bool {
        self.seg_index(vaddr, 1)
            .is_some_and(|i| self.segs[i].flags & elf::PF_X != 0)
    }

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

    fn name(&self, s: &Sym) -> Result<&'a [u8], Problem> {
        self.string(s.st_name.get(LE).into())
    }

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
                elf::DT_SYMENT if val != std::mem::size_of::<Sym>() as u64 => {
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
            return Err(Problem::Needed(text(self.string(off)?)));
        }
        let count = self.symbol_count()?;
        let bytes = self
            .table(symtab, count.saturating_mul(std::mem::size_of::<Sym>() as u64))
            .ok_or(Problem::Malformed(
                "the symbol table is misaligned or lies outside the file's segments",
            ))?;
        self.syms = object::pod::slice_from_all_bytes(bytes)
            .map_err(|_| Problem::Malformed("the symbol table is misaligned"))?;
        Ok(())
    }

    /// DT_HASH's nchain, or the end of the longest DT_GNU_HASH chain.
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

    /// Whether a relocation of symbol `idx` can be resolved.
    fn resolve(&self, idx: u32) -> Result<(), Problem> {
        if idx == 0 {
            return Ok(());
        }
        let s = self.syms.get(idx as usize).ok_or(Problem::Malformed(
            "a relocation names a symbol beyond the symbol table",
        ))?;
        if s.st_shndx.get(LE) != elf::SHN_UNDEF {
            return match s.st_type() {
                elf::STT_GNU_IFUNC => Err(Problem::Ifunc(text(self.name(s)?))),
                elf::STT_TLS => Err(Problem::Tls("a TLS symbol")),
                _ => Ok(()),
            };
        }
        let name = self.name(s)?;
        if PROVIDED.iter().any(|p| p.as_bytes() == name) || s.st_bind() == elf::STB_WEAK {
            return Ok(());
        }
        Err(Problem::Undefined(text(name)))
    }

    fn check_undefined(&self) -> Result<(), Problem> {
        for s in self.syms.iter().skip(1) {
            if s.st_shndx.get(LE) == elf::SHN_UNDEF && s.st_bind() != elf::STB_WEAK {
                let name = self.name(s)?;
                if !PROVIDED.iter().any(|p| p.as_bytes() == name) {
                    return Err(Problem::Undefined(text(name)));
                }
            }
        }
        Ok(())
    }

    /// Checks every relocation and calls `target` with each address written.
    fn relocations(&self, mut target: impl FnMut(u64) -> Result<(), Problem>) -> Result<(), Problem> {
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
                match r.r_type(LE, false) {
                    elf::R_X86_64_NONE => continue,
                    elf::R_X86_64_RELATIVE => {}
                    elf::R_X86_64_64 | elf::R_X86_64_GLOB_DAT | elf::R_X86_64_JUMP_SLOT => {
                        self.resolve(r.r_sym(LE, false))?
                    }
                    t => return Err(Problem::Relocation(t)),
                }
                target(r.r_offset.get(LE))?;
            }
        }
        if let Some(addr) = d.relr {
            let bytes = self.table(addr, d.relrsz).ok_or(Problem::Malformed(
                "the DT_RELR table is misaligned or lies outside the file's segments",
            ))?;
            let entries: &[elf::Relr64<LE>] =
                object::pod::slice_from_all_bytes(bytes).map_err(|_| Problem::Malformed("bad DT_RELR table size"))?;
            relr(entries, &mut |at| {
                self.file_range(at, 8).ok_or(Problem::Malformed(
                    "a DT_RELR relocation lies outside the file's segments",
                ))?;
                target(at)
            })?;
        }
        Ok(())
    }

    /// The exported, defined symbol `name`.
    fn export(&self, name: &'static str) -> Result<&'a Sym, Problem> {
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

    /// The u32 at `vaddr` as the object is loaded: from the file, or 0 in
    /// `.bss`.
    fn u32_in_image(&self, vaddr: u64) -> Result<u32, Problem> {
        let i = self.seg_index(vaddr, 4).ok_or(Problem::Malformed(
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

/// A name from the file as text, anything but printable ASCII shown as `?`,
/// cut at 64 bytes (as the runtime shows it).
fn text(b: &[u8]) -> String {
    let mut s: String = b
        .iter()
        .take(64)
        .map(|&c| if c.is_ascii_graphic() { c as char } else { '?' })
        .collect();
    if b.len() > 64 {
        s.push_str("...");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;
    use std::process::Command;

    const FLAGS: &[&str] = &[
        "-shared",
        "-fPIC",
        "-nostdlib",
        "-ffreestanding",
        "-fno-stack-protector",
        "-O2",
    ];

    fn have_cc() -> bool {
        let ok = Command::new("cc")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("skipped: no C compiler (cc) to build test objects");
        }
        ok
    }

    /// The prelude of a test extension: strata.h if it exists, else the two
    /// symbols' types by hand.
    fn prelude() -> String {
        let h = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include/strata.h");
        if h.is_file() {
            format!(
                "#include \"{}\"\n#define VERSION STRATA_ABI_VERSION\n\
                 typedef strata_host host_t;\ntypedef strata_ext_desc desc_t;\n",
                h.display()
            )
        } else {
            "#include <stddef.h>\n#include <stdint.h>\n#define VERSION 0x00010000u\n\
             typedef struct host host_t;\ntypedef struct desc desc_t;\n"
                .to_string()
        }
    }

    const INIT: &str = "int32_t strata_ext_init(const host_t *host, const uint8_t *args, size_t args_len,\n\
         desc_t *out, uint8_t *err, size_t err_len) {\n\
         (void)host; (void)args; (void)args_len; (void)out; (void)err; (void)err_len;\n\
         return 0;\n}\n";

    /// Builds `body` (after the prelude) with `cc` and extra `flags`.
    fn build(dir: &TempDir, name: &str, body: &str, flags: &[&str]) -> PathBuf {
        let src = dir.file(&format!("{name}.c"), format!("{}{body}", prelude()).as_bytes(), 0o644);
        let out = dir.path().join(format!("{name}.so"));
        let o = Command::new("cc")
            .args(flags)
            .arg("-o")
            .arg(&out)
            .arg(&src)
            .output()
            .unwrap();
        assert!(o.status.success(), "cc {name}: {}", String::from_utf8_lossy(&o.stderr));
        out
    }

    fn problem(p: &Path) -> Problem {
        match check(p) {
            Err(ExtObjError::Invalid { path, problem }) => {
                assert_eq!(path, p);
                problem
            }
            other => panic!("{}: expected a problem, got {other:?}", p.display()),
        }
    }

    fn good_source() -> String {
        format!(
            "uint32_t strata_ext_abi_version = VERSION;\n\
             static const char *names[] = {{\"good\", \"other\"}};\n\
             char big[10000];\n\
             void *memcpy(void *, const void *, size_t);\n\
             extern void maybe(void) __attribute__((weak));\n\
             const char *pick(int i) {{ memcpy(big, names[i & 1], 4); return maybe ? big : names[i & 1]; }}\n\
             {INIT}"
        )
    }

    #[test]
    fn accepts_a_freestanding_object() {
        if !have_cc() {
            return;
        }
        let dir = TempDir::new("extobj-good");
        for (name, extra) in [
            ("good", &[][..]),
            ("lazy", &["-Wl,-z,lazy"][..]),
            ("relr", &["-Wl,-z,pack-relative-relocs"][..]),
            ("norelro", &["-Wl,-z,norelro"][..]),
            ("sysvhash", &["-Wl,--hash-style=sysv"][..]),
        ] {
            let flags: Vec<&str> = FLAGS.iter().chain(extra).copied().collect();
            let so = build(&dir, name, &good_source(), &flags);
            let obj = check(&so).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(obj.version, strata_abi::VERSION);
            assert!(obj.path.is_absolute());
            assert_eq!(obj.path, fs::canonicalize(&so).unwrap());
        }
        // A relative path comes back absolute.
        let cwd = std::env::current_dir().unwrap();
        let rel = pathdiff(&dir.path().join("good.so"), &cwd);
        assert_eq!(
            check(&rel).unwrap().path,
            fs::canonicalize(dir.path().join("good.so")).unwrap()
        );
    }

    /// `to` relative to `from` (both absolute).
    fn pathdiff(to: &Path, from: &Path) -> PathBuf {
        let up = from.components().count() - 1;
        let mut p: PathBuf = std::iter::repeat_n("..", up).collect();
        p.push(to.strip_prefix("/").unwrap());
        p
    }

    #[test]
    fn refuses_an_object_without_strata_ext_init() {
        if !have_cc() {
            return;
        }
        let dir = TempDir::new("extobj-noinit");
        let so = build(
            &dir,
            "noinit",
            "uint32_t strata_ext_abi_version = VERSION;\nint other(void) { return 1; }\n",
            FLAGS,
        );
        assert_eq!(problem(&so), Problem::Missing("strata_ext_init"));
        let msg = check(&so).unwrap_err().to_string();
        assert!(
            msg.starts_with(&format!("{}: no strata_ext_init", so.display())),
            "{msg}"
        );
        // Hidden is not exported.
        let so = build(
            &dir,
            "hidden",
            &format!("__attribute__((visibility(\"hidden\"))) {INIT}uint32_t strata_ext_abi_version = VERSION;\n"),
            FLAGS,
        );
        assert_eq!(problem(&so), Problem::Missing("strata_ext_init"));
    }

    #[test]
    fn refuses_another_abi_major_version() {
        if !have_cc() {
            return;
        }
        let dir = TempDir::new("extobj-v2");
        let so = build(
            &dir,
            "v2",
            &format!("uint32_t strata_ext_abi_version = 0x00020000;\n{INIT}"),
            FLAGS,
        );
        assert_eq!(problem(&so), Problem::Version(0x0002_0000));
        let msg = check(&so).unwrap_err().to_string();
        assert!(
            msg.ends_with(&format!(
                "built for strata ABI 2.0; this strata speaks {}.{}",
                strata_abi::VERSION_MAJOR,
                strata_abi::VERSION_MINOR
            )),
            "{msg}"
        );
    }

    #[test]
    fn refuses_an_object_linked_against_libc() {
        if !have_cc() {
            return;
        }
        let dir = TempDir::new("extobj-libc");
        let so = build(
            &dir,
            "libc",
            &format!(
                "#include <stdio.h>\nuint32_t strata_ext_abi_version = VERSION;\n\
                 int hello(void) {{ return printf(\"hi\\n\"); }}\n{INIT}"
            ),
            &["-shared", "-fPIC"],
        );
        match problem(&so) {
            Problem::Needed(lib) => assert!(lib.starts_with("libc.so"), "{lib}"),
            p => panic!("{p}"),
        }
        let msg = check(&so).unwrap_err().to_string();
        assert!(msg.contains("needs libc.so.6 (DT_NEEDED)"), "{msg}");
    }

    #[test]
    fn refuses_undefined_symbols_and_tls() {
        if !have_cc() {
            return;
        }
        let dir = TempDir::new("extobj-undef");
        let so = build(
            &dir,
            "undef",
            &format!(
                "uint32_t strata_ext_abi_version = VERSION;\nint frob(int);\nint f(void) {{ return frob(1); }}\n{INIT}"
            ),
            FLAGS,
        );
        assert_eq!(problem(&so), Problem::Undefined("frob".into()));
        assert!(check(&so)
            .unwrap_err()
            .to_string()
            .contains("undefined symbol frob (strata provides only memcpy, memmove, memset, memcmp, bcmp, strlen)"));
        let so = build(
            &dir,
            "tls",
            &format!(
                "uint32_t strata_ext_abi_version = VERSION;\n__thread int t;\nint f(void) {{ return t; }}\n{INIT}"
            ),
            FLAGS,
        );
        assert_eq!(problem(&so), Problem::Tls("PT_TLS"));
    }

    #[test]
    fn refuses_files_that_are_not_objects() {
        let dir = TempDir::new("extobj-files");
        let text = dir.file(
            "text.so",
            b"this is not an ELF file, it is plain text\n".repeat(4).as_slice(),
            0o644,
        );
        assert_eq!(problem(&text), Problem::NotElf);
        assert_eq!(
            check(&text).unwrap_err().to_string(),
            format!("{}: not an ELF shared object (no ELF header)", text.display())
        );
        let exe = dir.file("exe", &crate::testutil::mini_elf(None), 0o755);
        assert_eq!(problem(&exe), Problem::NotShared(elf::ET_EXEC));

        let missing = dir.path().join("missing.so");
        let e = check(&missing).unwrap_err();
        assert!(matches!(&e, ExtObjError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound));
        assert_eq!(
            e.to_string(),
            format!(
                "{}: cannot read the extension object: No such file or directory",
                missing.display()
            )
        );
        let e = check(dir.path()).unwrap_err();
        assert!(e.to_string().ends_with("Is a directory"), "{e}");
    }

    #[test]
    fn decodes_packed_relative_relocations() {
        let words = [0x1000u64, 0b111, 1 | 1 << 63];
        let entries: Vec<elf::Relr64<LE>> = words.iter().map(|&w| elf::Relr64(object::U64::new(LE, w))).collect();
        let mut got = Vec::new();
        relr(&entries, &mut |at| -> Result<(), ()> {
            got.push(at);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, [0x1000, 0x1008, 0x1010, 0x1200 + 62 * 8]);
        let theirs: Vec<u64> = object::read::elf::RelrIterator::<Header>::new(LE, &entries).collect();
        assert_eq!(got, theirs);
    }

    /// Cut and damaged copies of a good object give errors, never a panic.
    #[test]
    fn malformed_objects_never_panic() {
        if !have_cc() {
            return;
        }
        let dir = TempDir::new("extobj-fuzz");
        let so = build(&dir, "good", &good_source(), FLAGS);
        let good = fs::read(&so).unwrap();
        assert_eq!(inspect(&good), Ok(strata_abi::VERSION));
        // Cut within the loadable segments: refused; after them (section
        // headers, the static symbol table): still good.
        let h = Header::parse(&*good).unwrap();
        let need = h
            .program_headers(LE, &*good)
            .unwrap()
            .iter()
            .filter(|ph| ph.p_type.get(LE) == elf::PT_LOAD)
            .map(|ph| ph.p_offset.get(LE) + ph.p_filesz.get(LE))
            .max()
            .unwrap() as usize;
        for n in 0..good.len() {
            assert_eq!(inspect(&good[..n]).is_ok(), n >= need, "cut at {n}");
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let mut b = good.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() % b.len() as u64) as usize;
                b[at] = next() as u8;
            }
            let _ = inspect(&b);
        }
    }
}
