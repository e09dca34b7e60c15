//! Memory: mmap, mremap, mincore (strace's mem.c).

use core::fmt::Write as _;

use crate::out::{lookup, P, R};
use crate::xlat;

const MAP_TYPE: u64 = 0xf;
const MAP_HUGE_SHIFT: u64 = 26;
const MAP_HUGE_MASK: u64 = 0x3f;

/// mmap(addr, length, prot, flags, fd, offset).
pub(crate) fn mmap(p: &mut P) -> R {
    p.addr(p.a[0])?;
    p.next()?;
    p.u(p.a[1])?;
    p.next()?;
    p.flags64(xlat::MMAP_PROT, p.a[2], Some("PROT_???"))?;
    p.next()?;
    mmap_flags(p, p.a[3])?;
    p.next()?;
    p.fd(p.a[4])?;
    p.next()?;
    p.x(p.a[5])
}

/// strace's print_mmap_flags: the mapping type, the flags, the huge page size.
fn mmap_flags(p: &mut P, flags: u64) -> R {
    let mut flags = flags;
    // The mapping type is a value, the rest are flags.
    match lookup(xlat::MMAP_FLAGS, flags & MAP_TYPE) {
        Some(s) => p.s(s)?,
        None => {
            p.x(flags & MAP_TYPE)?;
            p.s(" /* MAP_??? */")?;
        }
    }
    flags &= !MAP_TYPE;
    let mask = MAP_HUGE_MASK << MAP_HUGE_SHIFT;
    let huge = flags & mask;
    flags &= !mask;
    if flags != 0 {
        p.s("|")?;
        p.flags64(xlat::MMAP_FLAGS, flags, None)?;
    }
    if huge != 0 {
        write!(p, "|{}<<MAP_HUGE_SHIFT", huge >> MAP_HUGE_SHIFT)?;
    }
    Ok(())
}

/// remap_file_pages(addr, size, prot, pgoff, flags).
pub(crate) fn remap_file_pages(p: &mut P) -> R {
    p.addr(p.a[0])?;
    p.next()?;
    p.u(p.a[1])?;
    p.next()?;
    p.flags64(xlat::MMAP_PROT, p.a[2], Some("PROT_???"))?;
    p.next()?;
    p.u(p.a[3])?;
    p.next()?;
    mmap_flags(p, p.a[4])
}

const MREMAP_MAYMOVE: u64 = 1;
const MREMAP_FIXED: u64 = 2;

/// mremap(old_address, old_size, new_size, flags[, new_address]).
pub(crate) fn mremap(p: &mut P) -> R {
    p.addr(p.a[0])?;
    p.next()?;
    p.u(p.a[1])?;
    p.next()?;
    p.u(p.a[2])?;
    p.next()?;
    p.flags64(xlat::MREMAP_FLAGS, p.a[3], Some("MREMAP_???"))?;
    if p.a[3] & (MREMAP_MAYMOVE | MREMAP_FIXED) == MREMAP_MAYMOVE | MREMAP_FIXED {
        p.next()?;
        p.addr(p.a[4])?;
    }
    Ok(())
}

/// mincore(addr, length, vec): one 0/1 per page at exit.
pub(crate) fn mincore(p: &mut P) -> R {
    p.addr(p.a[0])?;
    p.next()?;
    p.u(p.a[1])?;
    p.next()?;
    p.exiting()?;
    let len = p.a[1];
    let pages = len / 4096 + u64::from(len % 4096 != 0);
    p.array::<1>(p.a[2], pages, false, |p, el| p.u((el[0] & 1) as u64))
}
