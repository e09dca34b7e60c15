//! The one declarative table of every x86-64 Linux system call, and what
//! strata does with each.
//!
//! strata traps every `syscall` instruction the program executes (Syscall
//! User Dispatch) and handles it in its no_std runtime. This crate says, for
//! each call number the kernel has ever assigned on x86-64 (including the ones
//! it no longer implements): its name, a strace-like [`Class`], its
//! [`Disposition`] under strata, whether it [may block](Entry::may_block), and
//! a short note. The rows live in `src/table.rs`, in the spirit of gVisor's
//! syscall tables; `docs/syscalls.md` is generated from them by
//! [`render_markdown`] (binary `gen-syscall-docs`), and a test keeps the two
//! equal.
//!
//! Everything here is `no_std`, allocation-free and free of `unsafe`, so the
//! runtime can consult it in signal context. [`entry`] and [`name`] are an
//! index into a static array; [`by_name`] is a binary search over an index
//! sorted at compile time.
#![no_std]
#![forbid(unsafe_code)]

mod render;
mod table;

pub use render::render_markdown;

use core::cmp::Ordering;
use core::fmt;

/// What strata does when the program makes a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Disposition {
    /// Re-issued unchanged; the kernel's answer goes back to the program.
    Passthrough,
    /// Carried out by strata itself (the kernel sees a different call, or
    /// none).
    Emulated,
    /// Re-issued, after strata checks or rewrites part of it; the note says
    /// which part.
    Partial,
    /// Refused by strata without asking the kernel.
    Unsupported,
}

impl Disposition {
    /// Every disposition, in the order the docs list them.
    pub const ALL: [Disposition; 4] = [
        Disposition::Passthrough,
        Disposition::Emulated,
        Disposition::Partial,
        Disposition::Unsupported,
    ];

    /// The variant's name, as written in the table and the docs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Disposition::Passthrough => "Passthrough",
            Disposition::Emulated => "Emulated",
            Disposition::Partial => "Partial",
            Disposition::Unsupported => "Unsupported",
        }
    }
}

impl fmt::Display for Disposition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A strace-like class (`strace -e trace=%file` and friends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Takes a path name (including the `*at` calls relative to a directory
    /// descriptor).
    File,
    /// Works on a file descriptor.
    Desc,
    /// Sockets.
    Network,
    /// Process and thread life cycle, identity, credentials, scheduling,
    /// limits.
    Process,
    /// Address space: mappings, protections, locking, NUMA.
    Memory,
    /// Signal actions, masks, delivery and waiting.
    Signal,
    /// System V IPC, POSIX message queues, futexes.
    Ipc,
    /// Clocks, timers and sleeping.
    Time,
    /// Everything else (system administration, keys, modules, reserved
    /// numbers).
    Other,
}

impl Class {
    /// Every class, in the order the docs list them.
    pub const ALL: [Class; 9] = [
        Class::File,
        Class::Desc,
        Class::Network,
        Class::Process,
        Class::Memory,
        Class::Signal,
        Class::Ipc,
        Class::Time,
        Class::Other,
    ];

    /// Lower-case name, as in strace's `%file`, `%desc`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            Class::File => "file",
            Class::Desc => "desc",
            Class::Network => "network",
            Class::Process => "process",
            Class::Memory => "memory",
            Class::Signal => "signal",
            Class::Ipc => "ipc",
            Class::Time => "time",
            Class::Other => "other",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The x86-64 call number (the value in `rax`).
    pub nr: u32,
    /// The kernel's name for it (`syscall_64.tbl`), e.g. `"newfstatat"`.
    pub name: &'static str,
    /// strace-like class.
    pub class: Class,
    /// What strata does with it.
    pub disposition: Disposition,
    /// The call can sleep for an unbounded time waiting for something outside
    /// the process: a peer, another process or thread, a device, a lock
    /// holder, a timer or timeout the caller chose, or a file-system server on
    /// the data path (open, read/write, the fsync family). The runtime uses it
    /// to decide whether signals must be able to interrupt the call while
    /// strata performs it. Conservative: `true` when in doubt.
    pub may_block: bool,
    /// What the call is, and exactly what strata does when it is not a plain
    /// re-issue.
    pub note: &'static str,
}

/// Every x86-64 system call, sorted by number (numbers with no call, such as
/// 335..=423, are absent).
pub static TABLE: &[Entry] = table::ENTRIES;

/// Number of entries in [`TABLE`].
pub const COUNT: usize = table::ENTRIES.len();

/// The highest call number in the table.
pub const MAX_NR: usize = table::ENTRIES[COUNT - 1].nr as usize;

/// Marks a number with no call in [`INDEX`].
const NONE: u16 = u16::MAX;

/// `INDEX[nr]` is the position of call `nr` in [`TABLE`], or [`NONE`].
static INDEX: [u16; MAX_NR + 1] = build_index();

/// Positions in [`TABLE`], sorted by name.
static BY_NAME: [u16; COUNT] = sort_by_name();

// Checked at compile time: the table is sorted by number without duplicates,
// names and notes are non-empty, names are unique.
const _: () = check_table();

/// `NAMES[NAME_AT[i]..NAME_AT[i + 1]]` is the name of [`TABLE`]'s row `i`.
static NAME_AT: [u16; COUNT + 1] = name_offsets();

/// Row `i`'s call number.
static NR_OF: [u16; COUNT] = build_nrs();

/// Row `i`'s disposition (bits 0-1), class (bits 2-5) and `may_block`
/// (bit 6), as positions in [`Disposition::ALL`] and [`Class::ALL`].
static INFO: [u8; COUNT] = build_info();

// The runtime (strata-rt) reads calls' names, dispositions and `may_block`
// through `NAME_AT`, `INFO` and `INDEX` alone: arrays of numbers, which a
// position-independent program need not relocate when it starts. `TABLE`'s
// rows hold two pointers each (name and note), some 740 relocations on five
// pages. (strata-rt is now linked at a fixed address and relocates nothing;
// the arrays are also the smaller layout.)

/// The entry for call `nr`, if x86-64 has such a call. O(1).
#[inline]
pub fn entry(nr: usize) -> Option<&'static Entry> {
    match INDEX.get(nr) {
        Some(&i) if i != NONE => TABLE.get(i as usize),
        _ => None,
    }
}

/// The entry for call `nr`, for tables built at compile time (other crates'
/// per-number `const` tables): a linear search, usable in const context.
/// At run time [`entry`] is O(1).
pub const fn entry_const(nr: usize) -> Option<&'static Entry> {
    let mut i = 0;
    while i < COUNT {
        if table::ENTRIES[i].nr as usize == nr {
            return Some(&table::ENTRIES[i]);
        }
        i += 1;
    }
    None
}

/// Whether `d` is `Disposition::Passthrough` (usable in const context).
pub const fn is_passthrough(d: Disposition) -> bool {
    disposition_eq(d, Disposition::Passthrough)
}

/// Every entry, in number order.
pub fn entries() -> &'static [Entry] {
    TABLE
}

/// The row of call `nr` in [`TABLE`].
#[inline]
fn row(nr: usize) -> Option<usize> {
    match INDEX.get(nr) {
        Some(&i) if i != NONE => Some(i as usize),
        _ => None,
    }
}

/// The name of syscall `nr` on x86-64, if it has one.
#[inline]
pub fn name(nr: usize) -> Option<&'static str> {
    let i = row(nr)?;
    table::NAMES.get(NAME_AT[i] as usize..NAME_AT[i + 1] as usize)
}

/// What strata does with call `nr` (as `entry(nr)` says, without reading
/// [`TABLE`]).
#[inline]
pub fn disposition(nr: usize) -> Option<Disposition> {
    row(nr).map(|i| Disposition::ALL[(INFO[i] & 3) as usize])
}

/// The class of call `nr` (as `entry(nr)` says, without reading [`TABLE`]).
#[inline]
pub fn class(nr: usize) -> Option<Class> {
    row(nr).map(|i| Class::ALL[(INFO[i] >> 2 & 15) as usize])
}

/// Whether call `nr` may block (as `entry(nr)` says, without reading
/// [`TABLE`]).
#[inline]
pub fn may_block(nr: usize) -> Option<bool> {
    row(nr).map(|i| INFO[i] & 64 != 0)
}

/// The entry whose kernel name is `name` (exact, case-sensitive match).
pub fn by_name(name: &str) -> Option<&'static Entry> {
    nr_by_name(name).and_then(|nr| entry(nr as usize))
}

/// The number of the call whose kernel name is `name` (exact,
/// case-sensitive match), without reading [`TABLE`].
pub fn nr_by_name(name: &str) -> Option<u32> {
    let row_name = |i: u16| table::NAMES.get(NAME_AT[i as usize] as usize..NAME_AT[i as usize + 1] as usize);
    BY_NAME
        .binary_search_by(|&i| row_name(i).unwrap_or("").cmp(name))
        .ok()
        .map(|pos| NR_OF[BY_NAME[pos] as usize] as u32)
}

/// How many calls have disposition `d`.
pub const fn count(d: Disposition) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < COUNT {
        if disposition_eq(table::ENTRIES[i].disposition, d) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// How many calls may block.
pub const fn count_may_block() -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < COUNT {
        if table::ENTRIES[i].may_block {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn disposition_eq(a: Disposition, b: Disposition) -> bool {
    a as u8 == b as u8
}

/// Byte-wise (`str::cmp`) order of two names, usable in const context.
const fn cmp_names(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] < b[i] {
            return Ordering::Less;
        }
        if a[i] > b[i] {
            return Ordering::Greater;
        }
        i += 1;
    }
    if a.len() < b.len() {
        Ordering::Less
    } else if a.len() > b.len() {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

const fn name_less(i: u16, j: u16) -> bool {
    matches!(
        cmp_names(table::ENTRIES[i as usize].name, table::ENTRIES[j as usize].name),
        Ordering::Less
    )
}

const fn name_offsets() -> [u16; COUNT + 1] {
    let mut at = [0u16; COUNT + 1];
    let names = table::NAMES.as_bytes();
    let mut i = 0;
    while i < COUNT {
        let name = table::ENTRIES[i].name.as_bytes();
        let start = at[i] as usize;
        let mut k = 0;
        while k < name.len() {
            assert!(names[start + k] == name[k], "syscall table: NAMES out of step");
            k += 1;
        }
        at[i + 1] = (start + name.len()) as u16;
        i += 1;
    }
    assert!(at[COUNT] as usize == names.len(), "syscall table: NAMES out of step");
    at
}

const fn position_of_disposition(d: Disposition) -> u8 {
    let mut k = 0;
    while k < Disposition::ALL.len() {
        if disposition_eq(Disposition::ALL[k], d) {
            return k as u8;
        }
        k += 1;
    }
    panic!("syscall table: a disposition missing from Disposition::ALL")
}

const fn position_of_class(c: Class) -> u8 {
    let mut k = 0;
    while k < Class::ALL.len() {
        if Class::ALL[k] as u8 == c as u8 {
            return k as u8;
        }
        k += 1;
    }
    panic!("syscall table: a class missing from Class::ALL")
}

const fn build_nrs() -> [u16; COUNT] {
    let mut nrs = [0u16; COUNT];
    let mut i = 0;
    while i < COUNT {
        nrs[i] = table::ENTRIES[i].nr as u16;
        i += 1;
    }
    nrs
}

const fn build_info() -> [u8; COUNT] {
    assert!(Disposition::ALL.len() <= 4 && Class::ALL.len() <= 16);
    let mut info = [0u8; COUNT];
    let mut i = 0;
    while i < COUNT {
        let e = &table::ENTRIES[i];
        info[i] =
            position_of_disposition(e.disposition) | position_of_class(e.class) << 2 | if e.may_block { 64 } else { 0 };
        i += 1;
    }
    info
}

const fn build_index() -> [u16; MAX_NR + 1] {
    let mut index = [NONE; MAX_NR + 1];
    let mut i = 0;
    while i < COUNT {
        index[table::ENTRIES[i].nr as usize] = i as u16;
        i += 1;
    }
    index
}

/// Heapsort of the table positions by name (const, so no `&mut` helpers).
const fn sort_by_name() -> [u16; COUNT] {
    let mut a = [0u16; COUNT];
    let mut i = 0;
    while i < COUNT {
        a[i] = i as u16;
        i += 1;
    }
    // Build a max-heap, then repeatedly move the maximum to the end.
    let mut start = COUNT / 2;
    let mut end = COUNT;
    while end > 1 {
        if start > 0 {
            start -= 1;
        } else {
            end -= 1;
            let t = a[0];
            a[0] = a[end];
            a[end] = t;
        }
        let mut root = start;
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                break;
            }
            if child + 1 < end && name_less(a[child], a[child + 1]) {
                child += 1;
            }
            if name_less(a[root], a[child]) {
                let t = a[root];
                a[root] = a[child];
                a[child] = t;
                root = child;
            } else {
                break;
            }
        }
    }
    a
}

const fn check_table() {
    assert!(COUNT > 0 && COUNT < NONE as usize);
    let mut i = 0;
    while i < COUNT {
        let e = &table::ENTRIES[i];
        assert!(!e.name.is_empty(), "syscall table: empty name");
        assert!(!e.note.is_empty(), "syscall table: empty note");
        if i > 0 {
            assert!(
                table::ENTRIES[i - 1].nr < e.nr,
                "syscall table: numbers must be strictly increasing"
            );
        }
        i += 1;
    }
    let sorted = sort_by_name();
    let mut i = 1;
    while i < COUNT {
        assert!(name_less(sorted[i - 1], sorted[i]), "syscall table: duplicate name");
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_agree() {
        for e in TABLE {
            assert_eq!(entry(e.nr as usize), Some(e));
            assert_eq!(name(e.nr as usize), Some(e.name));
            assert_eq!(disposition(e.nr as usize), Some(e.disposition));
            assert_eq!(class(e.nr as usize), Some(e.class));
            assert_eq!(may_block(e.nr as usize), Some(e.may_block));
            assert_eq!(by_name(e.name), Some(e));
            assert_eq!(nr_by_name(e.name), Some(e.nr));
        }
        for nr in [400, MAX_NR + 1, usize::MAX] {
            assert_eq!(
                (name(nr), disposition(nr), class(nr), may_block(nr)),
                (None, None, None, None)
            );
        }
        assert_eq!(entry(MAX_NR + 1), None);
        assert_eq!(entry(usize::MAX), None);
        assert_eq!(entry(400), None);
        assert_eq!(by_name(""), None);
        assert_eq!(by_name("READ"), None);
        assert_eq!(by_name("zzz"), None);
    }

    #[test]
    fn by_name_index_is_sorted() {
        for w in BY_NAME.windows(2) {
            assert!(TABLE[w[0] as usize].name < TABLE[w[1] as usize].name);
        }
    }

    #[test]
    fn counts_add_up() {
        let total: usize = Disposition::ALL.iter().map(|&d| count(d)).sum();
        assert_eq!(total, COUNT);
        assert_eq!(count_may_block(), TABLE.iter().filter(|e| e.may_block).count());
    }
}
