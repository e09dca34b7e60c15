//! The bytes written at a site and into its trampoline, and where a live P1 trampoline may go.

use crate::classify::{plain_branch, relocatable};
use crate::{Decline, Pattern, Site};
use iced_x86::{Decoder, DecoderOptions, Instruction};

/// Length of `jmp rel32`: the least a replaced instruction can have.
pub const JUMP_LEN: usize = 5;
/// The longest trampoline [`trampoline`] writes: its relocated instructions (15 bytes for
/// P1, P1W, P2; up to 23 for P3, whose 5..=15 bytes can include two `jcc rel8` that grow by 4
/// each) + 7 (`lea`) + 6 (`jmp *`) bytes.
pub const TRAMPOLINE_MAX: usize = 23 + TRAMPOLINE_TAIL;
/// The `lea`/`jmp *` tail of a trampoline.
pub(crate) const TRAMPOLINE_TAIL: usize = LEA_LEN + JMP_RIP_LEN;
/// Length of `lea rel32(%rip),%rcx`.
const LEA_LEN: usize = 7;
/// Length of `jmp *rel32(%rip)`.
const JMP_RIP_LEN: usize = 6;
/// The most instructions in a site: one byte each in [`Site::lens`].
const MAX_INSNS: usize = 8;
/// `int3`: fills the dead bytes, so a stray jump into them stops loudly.
const INT3: u8 = 0xcc;
/// `lea rel32(%rip),%rcx`.
const LEA_RCX: [u8; 3] = [0x48, 0x8d, 0x0d];
/// `jmp *rel32(%rip)`.
const JMP_RIP: [u8; 2] = [0xff, 0x25];
/// `jmp rel8`, P4's jump at the site.
const JMP_REL8: u8 = 0xeb;
/// `jmp rel32`.
const JMP_REL32: u8 = 0xe9;
/// Length of `jmp rel8`.
const SHORT_JUMP_LEN: usize = 2;

/// The rel32 that a branch or RIP-relative operand ending at `next_ip` needs to reach
/// `target`, if it fits.
fn rel32(next_ip: u64, target: u64) -> Option<i32> {
    i32::try_from(target.wrapping_sub(next_ip) as i64).ok()
}

/// The site's length, checked: 5..=15, for P4 2..=4.
fn site_len(site: &Site) -> Result<usize, Decline> {
    match (site.pattern, usize::from(site.len)) {
        (Pattern::P4, len @ SHORT_JUMP_LEN..JUMP_LEN) => Ok(len),
        (Pattern::P1 | Pattern::P1W | Pattern::P2 | Pattern::P3, len @ JUMP_LEN..=15) => Ok(len),
        _ => Err(Decline::InvalidSite),
    }
}

/// `e9 rel32` at `at`, jumping to `tramp`.
fn jmp_rel32(at: u64, tramp: u64) -> Result<[u8; 5], Decline> {
    let rel = rel32(at.wrapping_add(JUMP_LEN as u64), tramp).ok_or(Decline::OutOfRange)?;
    let [r0, r1, r2, r3] = rel.to_le_bytes();
    Ok([JMP_REL32, r0, r1, r2, r3])
}

/// A P4 site's `rel8` from `start + 2` back to `pad`, checked: the pad jump's 5 bytes must lie
/// before `start` ([`Decline::InvalidSite`]) and within reach ([`Decline::OutOfRange`]).
fn pad_rel8(site: &Site) -> Result<u8, Decline> {
    let before_start = site
        .pad
        .checked_add(JUMP_LEN as u64)
        .is_some_and(|end| end <= site.start);
    if site.pattern != Pattern::P4 || !before_start {
        return Err(Decline::InvalidSite);
    }
    let rel = i8::try_from(site.pad as i128 - (site.start as i128 + SHORT_JUMP_LEN as i128));
    rel.map(|rel| rel as u8).map_err(|_| Decline::OutOfRange)
}

/// How many of `site`'s bytes its jump replaces: the instructions that the 5-byte `jmp
/// rel32` overlaps, whole (for P1, P1W, P2: the one instruction; for P3: the first ones, up
/// to the first instruction boundary at or after 5 bytes; for P4: the whole run, whose `jmp
/// rel8` leads to the pad). The rest of a P3 run stays as it was: a branch of the function
/// that lands there runs the original instructions and the intact `syscall`, which traps.
/// Errors: [`Decline::InvalidSite`] if `lens` does not describe the run.
pub fn cover(site: &Site) -> Result<usize, Decline> {
    let len = site_len(site)?;
    if site.pattern != Pattern::P3 {
        return Ok(len);
    }
    let mut at = 0;
    for byte in site.lens.to_le_bytes() {
        at += usize::from(byte & 0x0f);
        if byte == 0 || at >= JUMP_LEN {
            break;
        }
    }
    if at < JUMP_LEN || at > len {
        return Err(Decline::InvalidSite);
    }
    Ok(at)
}

/// Writes the bytes that replace `site` into `out` and returns their number ([`cover`]):
/// `e9 rel32` to `tramp` (relative to `site.start + 5`), then `int3` for the dead bytes of
/// the instruction(s) it overlaps.
///
/// For P4: `eb rel8` to [`Site::pad`] (relative to `site.start + 2`), then `int3`; the pad
/// jump to `tramp` comes from [`pad_jump_bytes`] and must be written first.
///
/// Errors: [`Decline::OutOfRange`] if `tramp` is not within ±2 GiB (of the pad for P4) or a
/// P4 pad is out of `rel8` reach, [`Decline::InvalidSite`].
pub fn jump_bytes(site: &Site, tramp: u64, out: &mut [u8; 15]) -> Result<usize, Decline> {
    let len = site_len(site)?;
    if site.pattern == Pattern::P4 {
        let rel = pad_rel8(site)?;
        jmp_rel32(site.pad, tramp)?;
        *out = [INT3; 15];
        out[..SHORT_JUMP_LEN].copy_from_slice(&[JMP_REL8, rel]);
        return Ok(len);
    }
    let jmp = jmp_rel32(site.start, tramp)?;
    let n = cover(site)?;
    *out = [INT3; 15];
    out[..JUMP_LEN].copy_from_slice(&jmp);
    Ok(n)
}

/// For a P4 site: the 5 bytes to write at [`Site::pad`], `e9 rel32` to `tramp` (relative to
/// `site.pad + 5`). Write them before [`jump_bytes`]'s, which jump here.
///
/// Errors: [`Decline::OutOfRange`] if `tramp` is not within ±2 GiB of the pad, or the pad not
/// within `rel8` reach of the site, [`Decline::InvalidSite`] for any other pattern or a
/// malformed site.
pub fn pad_jump_bytes(site: &Site, tramp: u64) -> Result<[u8; 5], Decline> {
    site_len(site)?;
    pad_rel8(site)?;
    jmp_rel32(site.pad, tramp)
}

/// Writes the trampoline for `site`, to be placed at address `tramp`, into `out` and returns
/// its length (at most [`TRAMPOLINE_MAX`]; it does not depend on `tramp` or `slot`):
///
/// 1. the replaced instruction(s), in order ([`Site::lens`] gives each one's place): a
///    RIP-relative displacement is rewritten so that it reaches the same absolute address from
///    `tramp` (iced's constant offsets locate the disp32); a P3 `jcc`/`jmp` is re-encoded in
///    its rel32 form (`0f 8x`, `e9`) with the same absolute target (P4 has no branches);
/// 2. `lea S_ret(%rip),%rcx`, S_ret being the address after the `syscall`, as the kernel
///    leaves `%rcx`;
/// 3. `jmp *slot(%rip)`: `slot` is the address of an 8-byte constant holding the entry stub's
///    address (strata's code is usually more than 2 GiB away; the pool's constant is not).
///
/// Errors: [`Decline::RipRelativeOutOfRange`] if an operand's target is too far from `tramp`,
/// [`Decline::OutOfRange`] for a branch target, S_ret or `slot`, and the classification's
/// declines if the site's bytes are not relocatable instructions of `site.len` bytes in all
/// (one instruction unless P3 or P4), or [`Decline::InvalidSite`] if they disagree with `lens`.
pub fn trampoline(site: &Site, tramp: u64, slot: u64, out: &mut [u8; 64]) -> Result<usize, Decline> {
    let riprel = relocation(site)?;
    trampoline_with(site, riprel, tramp, slot, out)
}

/// Decodes the instruction(s) `site` replaces and checks what [`trampoline`] checks before it
/// places anything: each is valid and relocatable (or, for P3, a plain `jcc`/`jmp` whose
/// target lies outside the run), they agree with [`Site::lens`], and there are not too many.
/// Returns where each one's RIP-relative displacement is: byte `i` is 1 + the offset of the
/// disp32 within instruction `i`, or 0 if it has none. With it, [`trampoline_with`] builds the
/// trampoline without decoding (a process that takes its sites from the session's site cache
/// never builds the decoder's tables).
///
/// Errors: as [`trampoline`]'s, but for those that depend on where the trampoline goes.
pub fn relocation(site: &Site) -> Result<u64, Decline> {
    let len = site_len(site)?;
    let bytes = site.bytes();
    let end = site.start.wrapping_add(len as u64);
    let mut decoder = Decoder::with_ip(64, bytes, site.start, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    let mut riprel = 0u64;
    let mut count = 0;
    while decoder.can_decode() {
        let at = decoder.position();
        decoder.decode_out(&mut instr);
        if instr.is_invalid() {
            return Err(Decline::Undecodable);
        }
        let orig = bytes.get(at..decoder.position()).ok_or(Decline::Undecodable)?;
        if count >= MAX_INSNS || (count >= 1 && !matches!(site.pattern, Pattern::P3 | Pattern::P4)) {
            return Err(Decline::InvalidSite);
        }
        let branch = plain_branch(orig).filter(|_| site.pattern == Pattern::P3);
        let new_len = if let Some((_, op_len)) = branch {
            let target = instr.near_branch_target();
            if target >= site.start && target < end {
                return Err(Decline::BranchTarget);
            }
            op_len + 4
        } else {
            relocatable(&instr)?;
            if instr.is_ip_rel_memory_operand() {
                let offsets = decoder.get_constant_offsets(&instr);
                if offsets.displacement_size() != 4 || offsets.displacement_offset() + 4 > orig.len() {
                    return Err(Decline::Undecodable);
                }
                riprel |= ((offsets.displacement_offset() + 1) as u64) << (8 * count);
            }
            orig.len()
        };
        if (site.lens >> (8 * count)) & 0xff != (new_len << 4 | orig.len()) as u64 {
            return Err(Decline::InvalidSite);
        }
        count += 1;
    }
    // Every instruction accounted for, and nothing more in `lens`.
    if count == 0 || site.lens.checked_shr(8 * count as u32).unwrap_or(0) != 0 {
        return Err(Decline::InvalidSite);
    }
    Ok(riprel)
}

/// [`trampoline`] for a site [`relocation`] accepted, given what it returned: the same bytes,
/// built from [`Site::lens`] and the displacement offsets alone (no decoding).
///
/// Errors: [`Decline::RipRelativeOutOfRange`] if an operand's target is too far from `tramp`,
/// [`Decline::OutOfRange`] for a branch target, S_ret or `slot`, [`Decline::InvalidSite`] if
/// `lens` or `riprel` do not describe the site's bytes.
pub fn trampoline_with(site: &Site, riprel: u64, tramp: u64, slot: u64, out: &mut [u8; 64]) -> Result<usize, Decline> {
    site_len(site)?;
    let bytes = site.bytes();
    // Bytes written to `out`, and read from the site.
    let (mut pos, mut at) = (0usize, 0usize);
    for (i, lens) in site.lens.to_le_bytes().into_iter().enumerate() {
        if lens == 0 {
            break;
        }
        let (orig_len, new_len) = (usize::from(lens & 0x0f), usize::from(lens >> 4));
        let orig = bytes.get(at..at + orig_len).ok_or(Decline::InvalidSite)?;
        // Where the original instruction ends: its branch and RIP-relative operands count
        // from there.
        let orig_next = site.start.wrapping_add((at + orig_len) as u64);
        let dst = out.get_mut(pos..pos + new_len).ok_or(Decline::InvalidSite)?;
        let branch = plain_branch(orig).filter(|_| site.pattern == Pattern::P3);
        if let Some((op, op_len)) = branch {
            let disp = match *orig {
                [_, d] => i64::from(d as i8),
                [.., d0, d1, d2, d3] => i64::from(i32::from_le_bytes([d0, d1, d2, d3])),
                _ => return Err(Decline::InvalidSite),
            };
            if new_len != op_len + 4 {
                return Err(Decline::InvalidSite);
            }
            let target = orig_next.wrapping_add(disp as u64);
            let rel = rel32(tramp.wrapping_add((pos + new_len) as u64), target).ok_or(Decline::OutOfRange)?;
            let (dst_op, dst_rel) = dst.split_at_mut(op_len);
            dst_op.copy_from_slice(op.get(..op_len).unwrap_or_default());
            dst_rel.copy_from_slice(&rel.to_le_bytes());
        } else {
            if new_len != orig_len {
                return Err(Decline::InvalidSite);
            }
            dst.copy_from_slice(orig);
            let r = usize::from((riprel >> (8 * i)) as u8);
            if r != 0 {
                // The operand is relative to the end of the instruction, which moves.
                let d: &mut [u8; 4] = dst
                    .get_mut(r - 1..r + 3)
                    .and_then(|d| d.try_into().ok())
                    .ok_or(Decline::InvalidSite)?;
                let disp = i32::from_le_bytes(*d);
                let target = orig_next.wrapping_add(i64::from(disp) as u64);
                let new = rel32(tramp.wrapping_add((pos + orig_len) as u64), target);
                d.copy_from_slice(&new.ok_or(Decline::RipRelativeOutOfRange)?.to_le_bytes());
            }
        }
        pos += new_len;
        at += orig_len;
    }
    if at != bytes.len() || pos == 0 || pos + TRAMPOLINE_TAIL > TRAMPOLINE_MAX {
        return Err(Decline::InvalidSite);
    }

    let lea_end = tramp.wrapping_add((pos + LEA_LEN) as u64);
    let lea = rel32(lea_end, site.ret_addr()).ok_or(Decline::OutOfRange)?;
    let jmp = rel32(lea_end.wrapping_add(JMP_RIP_LEN as u64), slot).ok_or(Decline::OutOfRange)?;
    let [l0, l1, l2, l3] = lea.to_le_bytes();
    let [j0, j1, j2, j3] = jmp.to_le_bytes();
    let tail = [
        LEA_RCX[0], LEA_RCX[1], LEA_RCX[2], l0, l1, l2, l3, JMP_RIP[0], JMP_RIP[1], j0, j1, j2, j3,
    ];
    out.get_mut(pos..pos + tail.len())
        .ok_or(Decline::InvalidSite)?
        .copy_from_slice(&tail);
    Ok(pos + tail.len())
}

/// Where the program would be if a signal interrupted the trampoline at byte offset `off` (an
/// instruction boundary): the offset within the site's run of the original instruction that
/// corresponds (0 = site start; the sum of all original lengths = at the `syscall`, for the
/// trampoline's `lea`/`jmp` tail). None if `off` is not a boundary.
///
/// `lens` is [`Site::lens`]. Up to the `lea`, the trampoline has run exactly the original
/// instructions before the one at the returned offset; in the tail, only `%rcx` differs from
/// the state at the `syscall`, which clobbers it anyway.
pub fn site_offset(lens: u64, off: u64) -> Option<u64> {
    if lens == 0 {
        return None;
    }
    let (mut tramp, mut orig) = (0u64, 0u64);
    for byte in lens.to_le_bytes() {
        if byte == 0 {
            break;
        }
        if off == tramp {
            return Some(orig);
        }
        tramp += u64::from(byte >> 4);
        orig += u64::from(byte & 0x0f);
    }
    (off == tramp || off == tramp + LEA_LEN as u64).then_some(orig)
}

/// The number of a P1 site that can be patched live, i.e. below 512 (two bytes n0, n1 ≤ 1).
fn live_nr(site: &Site) -> Option<u32> {
    let nr = site.nr.filter(|&nr| nr < 512)?;
    (site.pattern == Pattern::P1 && site.len == 5 && site.insn[0] == 0xb8).then_some(nr)
}

/// Whether trampoline address `tramp` is safe for patching P1 `site` while other threads may
/// execute it (§4.3 of the design).
///
/// The immediate bytes `i = nr` are overwritten by `r = tramp - (start + 5)` before the
/// opcode `b8` becomes `e9`, in any order and width, so another thread may run `b8` followed
/// by any mix of old and new bytes. The mix must never be a plausible call number other than
/// `nr`. With r0 == n0 (byte 0 never changes) and r1 ≥ 2, every mix is either `nr` itself or
/// ≥ 512: byte 1 from `r` gives ≥ 0x200, bytes 2–3 from `r` are 0 (same as `i`) or give
/// ≥ 0x10000. Also requires `tramp` within rel32 range, and `nr < 512`.
pub fn live_p1_ok(site: &Site, tramp: u64) -> bool {
    let (Some(nr), Some(rel)) = (live_nr(site), rel32(site.start.wrapping_add(5), tramp)) else {
        return false;
    };
    let [r0, r1, ..] = rel.to_le_bytes();
    r0 == nr as u8 && r1 >= 2
}

/// The smallest address `>= from` that [`live_p1_ok`] accepts for `site`, if any: `None` if
/// `site` is not a live-patchable P1 or no such address is within rel32 range.
pub fn next_live_p1_addr(site: &Site, from: u64) -> Option<u64> {
    let nr = live_nr(site)?;
    let base = site.start.wrapping_add(5);
    // Start no lower than the lowest reachable address.
    let from = from.max(base.saturating_sub(1 << 31));
    // Fix byte 0, then raise byte 1 to at least 2 (it is 0 or 1 at most twice).
    let mut tramp = from.checked_add(u64::from((nr as u8).wrapping_sub(from.wrapping_sub(base) as u8)))?;
    while ((tramp.wrapping_sub(base) >> 8) as u8) < 2 {
        tramp = tramp.checked_add(0x100)?;
    }
    live_p1_ok(site, tramp).then_some(tramp)
}
