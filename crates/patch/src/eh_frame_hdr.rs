//! Function starts from `.eh_frame_hdr` (Linux Standard Base, "Exception Frame Header").

/// `DW_EH_PE_omit`: no value.
const OMIT: u8 = 0xff;
/// `DW_EH_PE_udata4`, absolute.
const UDATA4: u8 = 0x03;
/// `DW_EH_PE_datarel | DW_EH_PE_sdata4`: relative to the start of `.eh_frame_hdr`.
const DATAREL_SDATA4: u8 = 0x3b;

/// The binary-search table of a `.eh_frame_hdr` section: the sorted start address of every
/// function that has an FDE. Together with the next start it bounds the code that
/// [`scan_function`](crate::scan_function) decodes.
///
/// Only what GCC, ld, gold and lld emit is supported: version 1, a `fde_count` in `udata4`
/// and a table in `datarel|sdata4` (`eh_frame_ptr` may have any fixed-size encoding; it is
/// skipped). Anything else is `None`, and the object is simply not scanned.
#[derive(Clone, Copy, Debug)]
pub struct EhFrameHdr<'a> {
    /// `count` pairs (initial location, FDE address) of 2 × 4 bytes.
    table: &'a [u8],
    count: usize,
    /// The section's address: table entries are relative to it.
    vaddr: u64,
}

impl<'a> EhFrameHdr<'a> {
    /// Parses the section's bytes; `vaddr` is its address (link-time or loaded, and every
    /// address returned is on the same base).
    pub fn parse(bytes: &'a [u8], vaddr: u64) -> Option<Self> {
        let [version, ptr_enc, count_enc, table_enc] = *bytes.first_chunk::<4>()?;
        if version != 1 || count_enc != UDATA4 || table_enc != DATAREL_SDATA4 {
            return None;
        }
        // eh_frame_ptr: its size follows from the low nibble of its encoding.
        let ptr_len = match ptr_enc {
            OMIT => 0,
            _ => match ptr_enc & 0x0f {
                0x02 | 0x0a => 2,
                0x03 | 0x0b => 4,
                0x04 | 0x0c => 8,
                _ => return None,
            },
        };
        let rest = bytes.get(4 + ptr_len..)?;
        let count = usize::try_from(u32::from_le_bytes(*rest.first_chunk::<4>()?)).ok()?;
        let table = rest.get(4..4 + count.checked_mul(8)?)?;
        Some(EhFrameHdr { table, count, vaddr })
    }

    /// The number of functions in the table.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The start address of the `i`-th function, in ascending order.
    pub fn start(&self, i: usize) -> Option<u64> {
        let at = i.checked_mul(8)?;
        let rel = i32::from_le_bytes(*self.table.get(at..)?.first_chunk::<4>()?);
        Some(self.vaddr.wrapping_add(i64::from(rel) as u64))
    }

    /// The function containing `addr`: its start (the last start `<= addr`) and the next
    /// greater start, `None` for the last function. `None` if `addr` precedes every start.
    ///
    /// The end is the next start, not the FDE's own range: code between functions (padding,
    /// code without unwind info) is decoded as part of the function before it.
    pub fn containing(&self, addr: u64) -> Option<(u64, Option<u64>)> {
        // Binary search for the number of starts <= addr.
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.start(mid)? <= addr {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let start = self.start(lo.checked_sub(1)?)?;
        Some((start, self.start(lo)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn hdr(starts: &[i32]) -> Vec<u8> {
        let mut v = std::vec![1, 0x1b, UDATA4, DATAREL_SDATA4];
        v.extend_from_slice(&0x100i32.to_le_bytes());
        v.extend_from_slice(&(starts.len() as u32).to_le_bytes());
        for (i, s) in starts.iter().enumerate() {
            v.extend_from_slice(&s.to_le_bytes());
            v.extend_from_slice(&(0x200 + i as i32 * 0x20).to_le_bytes());
        }
        v
    }

    #[test]
    fn parse_and_search() {
        let bytes = hdr(&[-0x1000, -0x800, -0x800, 0x40]);
        let h = EhFrameHdr::parse(&bytes, 0x10_0000).unwrap();
        assert_eq!(h.len(), 4);
        assert_eq!(h.start(0), Some(0x10_0000 - 0x1000));
        assert_eq!(h.start(3), Some(0x10_0040));
        assert_eq!(h.start(4), None);
        assert_eq!(h.containing(0x10_0000 - 0x1001), None);
        assert_eq!(h.containing(0x10_0000 - 0x1000), Some((0xff000, Some(0xff800))));
        assert_eq!(h.containing(0xff7ff), Some((0xff000, Some(0xff800))));
        // Duplicate starts: the next start is strictly greater.
        assert_eq!(h.containing(0xff800), Some((0xff800, Some(0x10_0040))));
        assert_eq!(h.containing(0x10_0040), Some((0x10_0040, None)));
        assert_eq!(h.containing(u64::MAX), Some((0x10_0040, None)));
    }

    #[test]
    fn rejects_what_it_does_not_know() {
        let good = hdr(&[0, 16]);
        assert!(EhFrameHdr::parse(&good, 0).is_some());
        for (at, byte) in [(0, 2), (2, 0x0b), (3, 0x1b), (1, 0x01)] {
            let mut bad = good.clone();
            bad[at] = byte;
            assert!(EhFrameHdr::parse(&bad, 0).is_none(), "byte {at} = {byte:#x}");
        }
        for cut in 0..good.len() {
            assert!(EhFrameHdr::parse(&good[..cut], 0).is_none(), "cut at {cut}");
        }
        let empty = hdr(&[]);
        let h = EhFrameHdr::parse(&empty, 0).unwrap();
        assert!(h.is_empty() && h.containing(0).is_none());
        // A huge count does not overflow.
        let mut huge = hdr(&[]);
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(EhFrameHdr::parse(&huge, 0).is_none());
    }
}
