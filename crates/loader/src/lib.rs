//! What strata's loader decides before it maps anything.
//!
//! The runtime (`strata-rt`) reads the head of a file and asks this crate what
//! the kernel's execve would do with it: run it as a `#!` script ([`Kind::Script`]),
//! load it as an ELF executable ([`plan`] gives a [`Plan`]), or refuse it with
//! a reason ([`LoadError`]). The launcher uses the same checks to reject bad
//! input before anything starts, so both report identical reasons.
//!
//! Extension objects (`--ext ./libname.so`) are checked by [`extobj`], for
//! the launcher and for strata-rt's own loader alike.
//!
//! No I/O, no allocation, no unsafe: the fuzz target (`fuzz/`) drives [`plan`]
//! and [`classify`] with arbitrary bytes.
#![no_std]
#![forbid(unsafe_code)]

pub mod extobj;

use object::elf;

/// Index of the class byte in e_ident.
pub const EI_CLASS: usize = 4;
/// Index of the data-encoding byte in e_ident.
pub const EI_DATA: usize = 5;
use object::read::elf::{FileHeader, ProgramHeader};
use object::LittleEndian as LE;

/// Bytes of a file the kernel looks at to recognise it (BINPRM_BUF_SIZE).
pub const PROBE_LEN: usize = 256;
/// The most PT_LOAD segments a plan holds.
pub const MAX_SEGMENTS: usize = 32;
/// How many `#!` interpreters may be chained (the kernel allows 4 levels of
/// binfmt recursion in total; a script's interpreter can be a script).
pub const MAX_SCRIPT_DEPTH: usize = 4;
/// The page size strata maps with.
pub const PAGE: u64 = 4096;

/// Why a file cannot be executed. The text of [`LoadError::message`] is what
/// users read after the file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadError {
    /// The file is neither an ELF executable nor a `#!` script.
    NotExecutableFormat,
    /// An ELF file for a 32-bit architecture.
    Elf32,
    /// An ELF file whose data is big-endian.
    BigEndian,
    /// An ELF file built for another machine (the e_machine value).
    WrongMachine(u16),
    /// An ELF file that is not an executable (e.g. a relocatable object).
    NotAnExecutable(u16),
    /// The ELF header or program headers are malformed.
    BadHeader(&'static str),
    /// A segment lies (partly) beyond the end of the file.
    Truncated,
    /// A `#!` line with no interpreter name, or one longer than the kernel reads.
    BadShebang,
}

impl LoadError {
    /// One line, no trailing newline, for "strata: FILE: <message>".
    pub fn message(&self) -> &'static str {
        match self {
            LoadError::NotExecutableFormat => "cannot execute: not an ELF executable or #! script (Exec format error)",
            LoadError::Elf32 => "cannot execute: 32-bit ELF, strata runs x86-64 programs only (Exec format error)",
            LoadError::BigEndian => "cannot execute: big-endian ELF (Exec format error)",
            LoadError::WrongMachine(m) => machine_message(*m),
            LoadError::NotAnExecutable(_) => "cannot execute: ELF file is not an executable (Exec format error)",
            LoadError::BadHeader(why) => why,
            LoadError::Truncated => {
                "cannot execute: truncated ELF file, a segment lies beyond the end (Exec format error)"
            }
            LoadError::BadShebang => "cannot execute: malformed #! line (Exec format error)",
        }
    }

    /// The errno the kernel's execve reports for this.
    pub fn errno(&self) -> i32 {
        match self {
            LoadError::BadHeader(_) | LoadError::Truncated => 8, // ENOEXEC (the kernel says EIO or EINVAL for some)
            _ => 8,                                              // ENOEXEC
        }
    }
}

fn machine_message(m: u16) -> &'static str {
    match m {
        elf::EM_386 => "cannot execute: ELF for i386, not x86-64 (Exec format error)",
        elf::EM_AARCH64 => "cannot execute: ELF for aarch64, not x86-64 (Exec format error)",
        elf::EM_ARM => "cannot execute: ELF for arm, not x86-64 (Exec format error)",
        elf::EM_RISCV => "cannot execute: ELF for riscv, not x86-64 (Exec format error)",
        elf::EM_PPC64 => "cannot execute: ELF for ppc64, not x86-64 (Exec format error)",
        elf::EM_S390 => "cannot execute: ELF for s390, not x86-64 (Exec format error)",
        _ => "cannot execute: ELF for another machine, not x86-64 (Exec format error)",
    }
}

/// What a file is, judged from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind<'a> {
    /// Starts with the ELF magic; call [`plan`] on it.
    Elf,
    /// A `#!` script: the interpreter path and its optional single argument.
    Script { interp: &'a [u8], arg: Option<&'a [u8]> },
}

/// Recognises a file from its first bytes (at least [`PROBE_LEN`] of them if
/// the file is that long).
pub fn classify(head: &[u8]) -> Result<Kind<'_>, LoadError> {
    if head.starts_with(&elf::ELFMAG) {
        return Ok(Kind::Elf);
    }
    if head.starts_with(b"#!") {
        return parse_shebang(head);
    }
    Err(LoadError::NotExecutableFormat)
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// Parses a `#!` line as the kernel's binfmt_script does: the interpreter is
/// the first word, everything after it (trimmed) is one optional argument.
fn parse_shebang(head: &[u8]) -> Result<Kind<'_>, LoadError> {
    let head = &head[..head.len().min(PROBE_LEN)];
    let body = &head[2..];
    let (line, complete) = match body.iter().position(|&c| c == b'\n') {
        Some(n) => (&body[..n], true),
        None => (body, head.len() < PROBE_LEN),
    };
    let start = line.iter().position(|&c| !is_blank(c)).unwrap_or(line.len());
    let line = &line[start..];
    let iend = line.iter().position(|&c| is_blank(c) || c == 0).unwrap_or(line.len());
    let interp = &line[..iend];
    if interp.is_empty() {
        return Err(LoadError::BadShebang);
    }
    // A line cut off by the probe length: the kernel refuses it if the
    // interpreter name itself may be truncated.
    if !complete && iend == line.len() {
        return Err(LoadError::BadShebang);
    }
    let rest = &line[iend..];
    let rest = match rest.iter().position(|&c| c == 0) {
        Some(n) => &rest[..n],
        None => rest,
    };
    let a0 = rest.iter().position(|&c| !is_blank(c)).unwrap_or(rest.len());
    let a1 = rest
        .iter()
        .rposition(|&c| !is_blank(c) && c != b'\r')
        .map_or(a0, |n| n + 1);
    let arg = if a1 > a0 { Some(&rest[a0..a1]) } else { None };
    Ok(Kind::Script { interp, arg })
}

/// One PT_LOAD segment to map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    pub offset: u64,
    pub filesz: u64,
    /// PROT_READ=1 | PROT_WRITE=2 | PROT_EXEC=4.
    pub prot: u32,
}

impl Segment {
    /// First page-aligned address of the mapping.
    pub fn map_start(&self) -> u64 {
        self.vaddr & !(PAGE - 1)
    }
    /// End (exclusive, page-aligned) of the whole segment in memory.
    pub fn map_end(&self) -> u64 {
        page_up(self.vaddr + self.memsz)
    }
    /// Whether `[vaddr, vaddr + len)` lies in the segment's memory.
    pub fn holds(&self, vaddr: u64, len: u64) -> bool {
        vaddr >= self.vaddr && vaddr - self.vaddr <= self.memsz && len <= self.memsz - (vaddr - self.vaddr)
    }
    /// Whether the last file page is partly zero-filled memory (`.bss`),
    /// which a loader must clear by hand after mapping the file.
    pub fn partial_page(&self) -> bool {
        self.memsz > self.filesz && self.filesz > 0 && !(self.vaddr + self.filesz).is_multiple_of(PAGE)
    }
}

/// Rounds up to a page boundary (saturating at the top of the address space).
pub const fn page_up(v: u64) -> u64 {
    match v.checked_add(PAGE - 1) {
        Some(x) => x & !(PAGE - 1),
        None => !(PAGE - 1),
    }
}

/// How to load one ELF file: what the kernel's load_elf_binary would map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan<'a> {
    /// ET_DYN (position-independent: PIE, static-pie, or a shared object
    /// such as ld.so) rather than ET_EXEC.
    pub pie: bool,
    pub entry: u64,
    pub phoff: u64,
    pub phnum: u16,
    /// Address of the program headers once loaded (before the load bias),
    /// from PT_PHDR or from the segment that maps them.
    pub phdr_vaddr: Option<u64>,
    /// The PT_INTERP path without its NUL, if any: a slice of the header
    /// given to [`plan`], in which its NUL follows it (checked there).
    pub interp: Option<&'a [u8]>,
    pub segments: [Segment; MAX_SEGMENTS],
    pub nsegments: usize,
    /// PT_GNU_STACK asked for an executable stack.
    pub exec_stack: bool,
}

impl Plan<'_> {
    pub fn segments(&self) -> &[Segment] {
        &self.segments[..self.nsegments]
    }
    /// Lowest page-aligned address mapped (before the load bias).
    pub fn lo(&self) -> u64 {
        self.segments().iter().map(Segment::map_start).min().unwrap_or(0)
    }
    /// End of the highest segment (before the load bias), page-aligned.
    pub fn hi(&self) -> u64 {
        self.segments().iter().map(Segment::map_end).max().unwrap_or(0)
    }
}

/// Bytes of the file's head that [`plan`] needs: the ELF header, the program
/// headers and the interpreter path. A caller that read fewer bytes than the
/// file has should read at least this many and call [`plan`] again.
pub fn head_needed(head: &[u8]) -> usize {
    let Ok(h) = elf::FileHeader64::<LE>::parse(head) else {
        return 64;
    };
    let phend = h.e_phoff.get(LE).saturating_add(h.e_phnum.get(LE) as u64 * 56);
    let mut need = usize::try_from(phend).unwrap_or(usize::MAX).max(64);
    // With the program headers in hand, the interpreter path's end counts too.
    if let Ok(phdrs) = h.program_headers(LE, head) {
        for ph in phdrs.iter().filter(|ph| ph.p_type(LE) == elf::PT_INTERP) {
            let end = ph.p_offset(LE).saturating_add(ph.p_filesz(LE));
            need = need.max(usize::try_from(end).unwrap_or(usize::MAX));
        }
    }
    need
}

/// Checks an ELF file and says how to load it. `head` holds the start of the
/// file (at least the ELF header, the program headers and the PT_INTERP
/// string); `file_size` is the whole file's size.
pub fn plan(head: &[u8], file_size: u64) -> Result<Plan<'_>, LoadError> {
    if !head.starts_with(&elf::ELFMAG) {
        return Err(LoadError::NotExecutableFormat);
    }
    if head.len() < 64 {
        return Err(LoadError::Truncated);
    }
    match head[EI_CLASS] {
        elf::ELFCLASS64 => {}
        elf::ELFCLASS32 => return Err(LoadError::Elf32),
        _ => {
            return Err(LoadError::BadHeader(
                "cannot execute: ELF header has an unknown class (Exec format error)",
            ))
        }
    }
    if head[EI_DATA] != elf::ELFDATA2LSB {
        return Err(LoadError::BigEndian);
    }
    let h = elf::FileHeader64::<LE>::parse(head)
        .map_err(|_| LoadError::BadHeader("cannot execute: malformed ELF header (Exec format error)"))?;
    let machine = h.e_machine.get(LE);
    if machine != elf::EM_X86_64 {
        return Err(LoadError::WrongMachine(machine));
    }
    let ty = h.e_type.get(LE);
    let pie = match ty {
        elf::ET_EXEC => false,
        elf::ET_DYN => true,
        _ => return Err(LoadError::NotAnExecutable(ty)),
    };
    if h.e_phentsize.get(LE) as usize != core::mem::size_of::<elf::ProgramHeader64<LE>>() {
        return Err(LoadError::BadHeader(
            "cannot execute: ELF program header size is wrong (Exec format error)",
        ));
    }
    let phnum = h.e_phnum.get(LE);
    if phnum == 0 || phnum as usize * 56 > 65536 {
        return Err(LoadError::BadHeader(
            "cannot execute: ELF has no or too many program headers (Exec format error)",
        ));
    }
    let phoff = h.e_phoff.get(LE);
    let phend = phoff.checked_add(phnum as u64 * 56).ok_or(LoadError::Truncated)?;
    if phend > file_size {
        return Err(LoadError::Truncated);
    }
    let phdrs = h.program_headers(LE, head).map_err(|_| {
        LoadError::BadHeader("cannot execute: ELF program headers lie outside the part strata read (Exec format error)")
    })?;

    let mut p = Plan {
        pie,
        entry: h.e_entry.get(LE),
        phoff,
        phnum,
        phdr_vaddr: None,
        interp: None,
        segments: [Segment::default(); MAX_SEGMENTS],
        nsegments: 0,
        exec_stack: false,
    };
    let mut last_end = 0u64;
    for ph in phdrs {
        match ph.p_type(LE) {
            elf::PT_LOAD => {
                let s = Segment {
                    vaddr: ph.p_vaddr(LE),
                    memsz: ph.p_memsz(LE),
                    offset: ph.p_offset(LE),
                    filesz: ph.p_filesz(LE),
                    prot: prot_of(ph.p_flags(LE)),
                };
                check_segment(&s, file_size)?;
                if s.vaddr < last_end {
                    return Err(LoadError::BadHeader(
                        "cannot execute: ELF segments overlap or are out of order (Exec format error)",
                    ));
                }
                last_end = s.vaddr + s.memsz;
                if p.nsegments == MAX_SEGMENTS {
                    return Err(LoadError::BadHeader(
                        "cannot execute: ELF has too many loadable segments (Exec format error)",
                    ));
                }
                p.segments[p.nsegments] = s;
                p.nsegments += 1;
            }
            elf::PT_INTERP => {
                if p.interp.is_some() {
                    return Err(LoadError::BadHeader(
                        "cannot execute: ELF has two PT_INTERP headers (Exec format error)",
                    ));
                }
                let off = ph.p_offset(LE);
                let len = ph.p_filesz(LE);
                if !(2..=4096).contains(&len) || off.checked_add(len).is_none_or(|e| e > file_size) {
                    return Err(LoadError::BadHeader(
                        "cannot execute: ELF interpreter path is malformed (Exec format error)",
                    ));
                }
                let bytes = head
                    .get(off as usize..(off + len) as usize)
                    .ok_or(LoadError::BadHeader(
                        "cannot execute: ELF interpreter path lies outside the part strata read (Exec format error)",
                    ))?;
                let (path, nul) = bytes.split_at(bytes.len() - 1);
                if nul != [0] || path.contains(&0) || path.is_empty() {
                    return Err(LoadError::BadHeader(
                        "cannot execute: ELF interpreter path is not NUL-terminated (Exec format error)",
                    ));
                }
                p.interp = Some(path);
            }
            elf::PT_PHDR => p.phdr_vaddr = Some(ph.p_vaddr(LE)),
            elf::PT_GNU_STACK => p.exec_stack = ph.p_flags(LE) & elf::PF_X != 0,
            _ => {}
        }
    }
    if p.nsegments == 0 {
        return Err(LoadError::BadHeader(
            "cannot execute: ELF has no loadable segment (Exec format error)",
        ));
    }
    if p.phdr_vaddr.is_none() {
        // The program headers are in memory if a segment maps their file range.
        p.phdr_vaddr = p
            .segments()
            .iter()
            .find(|s| s.offset <= phoff && phend <= s.offset + s.filesz)
            .map(|s| s.vaddr + (phoff - s.offset));
    }
    if !pie && p.lo() < PAGE {
        return Err(LoadError::BadHeader(
            "cannot execute: ELF wants to be mapped at page 0 (Exec format error)",
        ));
    }
    Ok(p)
}

fn prot_of(flags: u32) -> u32 {
    let mut p = 0;
    if flags & elf::PF_R != 0 {
        p |= 1;
    }
    if flags & elf::PF_W != 0 {
        p |= 2;
    }
    if flags & elf::PF_X != 0 {
        p |= 4;
    }
    p
}

fn check_segment(s: &Segment, file_size: u64) -> Result<(), LoadError> {
    const TASK_SIZE: u64 = 0x7fff_ffff_f000;
    if s.filesz > s.memsz {
        return Err(LoadError::BadHeader(
            "cannot execute: ELF segment has more file bytes than memory bytes (Exec format error)",
        ));
    }
    if s.vaddr % PAGE != s.offset % PAGE {
        return Err(LoadError::BadHeader(
            "cannot execute: ELF segment is misaligned (Exec format error)",
        ));
    }
    match s.vaddr.checked_add(s.memsz) {
        Some(end) if end <= TASK_SIZE => {}
        _ => {
            return Err(LoadError::BadHeader(
                "cannot execute: ELF segment lies outside the user address space (Exec format error)",
            ))
        }
    }
    match s.offset.checked_add(s.filesz) {
        Some(end) if end <= file_size => Ok(()),
        _ => Err(LoadError::Truncated),
    }
}

#[cfg(test)]
mod tests;
