//! Deciding which `syscall` sites can be rewritten: lazily at a trap, eagerly per function.

use crate::emit::{cover, JUMP_LEN, TRAMPOLINE_MAX, TRAMPOLINE_TAIL};
use crate::{is_prefix_byte, Decline, Pattern, Site, NR_RT_SIGRETURN, SYSCALL};
use iced_x86::{Code, Decoder, DecoderOptions, FlowControl, Instruction, OpKind, Register};

/// `mov $imm32,%rax`: REX.W, opcode c7 /0, ModRM c0.
const MOV_RAX: [u8; 3] = [0x48, 0xc7, 0xc0];
/// `mov $imm32,%eax`.
const MOV_EAX: u8 = 0xb8;
/// The two signal restorers, as glibc and others write them, without their `syscall`.
const RESTORERS: [&[u8]; 2] = [&[0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0], &[MOV_EAX, 0x0f, 0, 0, 0]];
/// Sites remembered per pass of [`scan_function`] (about 3.5 KiB of stack).
const MAX_PER_PASS: usize = 64;
/// The most instructions a P3 run may hold: one byte each in [`Site::lens`].
const MAX_RUN: usize = 8;
/// The longest replaced instruction or run.
const MAX_LEN: usize = 15;
/// The shortest P4 run: `eb rel8`.
const SHORT_JUMP_LEN: usize = 2;
/// How far before `eb rel8`'s end its target may lie.
const REL8_REACH: u64 = 128;

/// Lazy classification at a trap: the `syscall` at `sys_addr` just trapped with `%eax == eax`.
///
/// `before` holds the 15 bytes ending at `sys_addr` (`before[14]` is the byte at
/// `sys_addr - 1`), `after` the 2 bytes at `sys_addr`.
///
/// Without function bounds the instruction boundary before the `syscall` is a guess, so the
/// rules are strict:
/// - **P1** `b8 imm32`: the immediate must equal `eax` (the `mov` ran and led here) and the
///   byte before `b8` must be neither a prefix/REX byte ([`is_prefix_byte`]) nor `0f`.
/// - **P1W** `48 c7 c0 imm32`: the same, with `imm32 < 2³¹` (so `%rax` is its zero extension).
/// - **P2**: of the lengths 5..=15, exactly one may decode (iced, 64-bit, at `sys_addr - L`)
///   to a valid instruction of exactly that length, and it must be relocatable: flow control
///   *next*, no `%gs` override, no `eip`-relative operand (RIP-relative is relocated later).
///
/// `rt_sigreturn` (`eax == 15` or the restorer's bytes) and a `syscall` right after another
/// one are always declined.
///
/// **P2 here is a guess**: a unique candidate can still straddle the real boundary. In glibc
/// 2.36's libc.so.6 (tests/survey.rs), 4 of the 72 `syscall`s that follow a short instruction
/// (`mov %r12d,%eax`…) have one, e.g. `02 89 c2 44 89 e0` (`add -0x1f76bb3e(%rcx),%cl`) over `… 89 c2; 44 89 e0`.
/// Patching it would corrupt the code before it. Where the function is known (a file-backed
/// object with `.eh_frame_hdr`), prefer [`classify_in_function`]; use a P2 from here only
/// where a wrong boundary is otherwise excluded. P1/P1W rest on `%eax` matching the
/// immediate, the design's heuristic for code without bounds.
pub fn classify_trap(before: &[u8; 15], after: &[u8; 2], sys_addr: u64, eax: u32) -> Result<Site, Decline> {
    if *after != SYSCALL {
        return Err(Decline::NotSyscall);
    }
    if eax == NR_RT_SIGRETURN || is_restorer(before) {
        return Err(Decline::Restorer);
    }
    let [.., b10, b11, b12, b13, b14] = *before;
    if [b13, b14] == SYSCALL {
        return Err(Decline::BackToBack);
    }
    let imm = u32::from_le_bytes([b11, b12, b13, b14]);
    let static_len = if b10 == MOV_EAX {
        Some((Pattern::P1, 5))
    } else if before[8..11] == MOV_RAX {
        Some((Pattern::P1W, 7))
    } else {
        None
    };
    if let Some((pattern, len)) = static_len {
        let lead = before.get(14 - len).copied().unwrap_or(0x0f);
        if is_prefix_byte(lead) || lead == 0x0f {
            return Err(Decline::Prefix);
        }
        if imm != eax || (pattern == Pattern::P1W && imm >= 0x8000_0000) {
            return Err(Decline::NumberMismatch);
        }
        let bytes = before.get(15 - len..).unwrap_or_default();
        let lens = single_lens(len);
        return Ok(make_site(
            pattern,
            sys_addr.wrapping_sub(len as u64),
            bytes,
            Some(imm),
            lens,
        ));
    }

    let mut instr = Instruction::default();
    let mut found = None;
    for len in 5..=15usize {
        let start = sys_addr.wrapping_sub(len as u64);
        let bytes = before.get(15 - len..).unwrap_or_default();
        Decoder::with_ip(64, bytes, start, DecoderOptions::NONE).decode_out(&mut instr);
        if !instr.is_invalid() && instr.len() == len {
            if found.is_some() {
                return Err(Decline::Ambiguous);
            }
            found = Some((start, bytes, instr));
        }
    }
    let (start, bytes, instr) = found.ok_or(Decline::Undecodable)?;
    relocatable(&instr)?;
    Ok(make_site(Pattern::P2, start, bytes, None, single_lens(bytes.len())))
}

/// Eager scan of one function: `code` holds the bytes of `[base, base + code.len())`,
/// starting at the function's first instruction (e.g. from one `.eh_frame_hdr` start to the
/// next). Calls `f` for each `syscall` site that can be rewritten, in address order.
///
/// Decoding is linear from `base`: only a `syscall` reached at an instruction boundary
/// counts, and the instruction before it is classified with its boundary known (P1, P1W with
/// their static number, else P2 if relocatable and ≥ 5 bytes). If it is shorter than 5 bytes,
/// the run of instructions ending at the `syscall` is extended backwards, one instruction at a
/// time, until it has 5 bytes (P3): at most 8 instructions and 15 bytes, and not past the
/// function's start, else [`Decline::TooShort`]. Each instruction of the run must be
/// relocatable, or a plain `jcc`/`jmp` rel8/rel32 whose target lies outside the run; none may
/// be a `syscall`. The number is static only if the run ends in `xor %eax,%eax`.
///
/// A site is then skipped if any direct branch of the function (`jmp`, `jcc`, `call`, `loop`,
/// `xbegin` with an immediate target) lands strictly inside the replaced instruction or run,
/// on bytes that become dead. Branches from elsewhere (another function, a `.cold` part,
/// a jump table) are not seen: a P3 run's interior boundaries are real instruction starts.
/// An invalid instruction ends the scan; so does the end of `code`.
///
/// The start must be an instruction boundary, or the decode is misaligned until it happens to
/// resynchronise. `.eh_frame_hdr` starts are, with deliberate exceptions: glibc's FDE for
/// `__restore_rt` starts one byte early, inside padding, so that an unwinder looking up
/// `pc - 1` finds it. That is why the restorer is recognised by its bytes, too.
pub fn scan_function(code: &[u8], base: u64, f: &mut dyn FnMut(Site)) {
    scan_function_padded(code, base, None, f);
}

/// [`scan_function`], reporting every `syscall` it reaches: `f(sys_addr, Ok(site))` or
/// `f(sys_addr, Err(reason))`, in address order. For statistics.
pub fn scan_function_with_declines(code: &[u8], base: u64, f: &mut dyn FnMut(u64, Result<Site, Decline>)) {
    scan_function_padded_with_declines(code, base, None, f);
}

/// [`scan_function`], and P4 sites too when `prev` gives the previous function: its bytes and
/// start address, its bytes ending exactly at `base` (e.g. from the previous `.eh_frame_hdr`
/// start to this one). The same sites in the same order, but for the `syscall`s that follow a
/// run of 2..=4 bytes from `base`: [`Decline::TooShort`] without `prev`, a P4 site or a
/// decline with it.
///
/// The previous function must end in padding that no code reaches, where the 5-byte pad jump
/// goes. It is decoded linearly from its start; every instruction must decode, up to its
/// end at `base`. P is the end of its last instruction that is not padding (`int3`, `nop`,
/// `xchg %ax,%ax`, the `0f 1f /0` multi-byte nops, with any prefixes); that instruction must
/// be an unconditional transfer (`ret`, `jmp`, direct or indirect `call`, `ud2`, `hlt`). The
/// pad jump goes at P (where anything falling through from that instruction would land, too),
/// so the padding must hold at least 5 bytes and `base + 2 - P <= 128` (reach of `eb rel8`
/// at `base`): else [`Decline::Padding`]. A direct branch of either function into `[P, base)`,
/// or of the previous function into the inside of the run, declines the site
/// ([`Decline::BranchTarget`]). Each instruction of the run must be relocatable as for P2
/// (branches decline).
///
/// Branches from anywhere else (other functions, jump tables) are not seen: the padding is
/// taken to be unreachable because the previous function's code cannot fall into it and no
/// branch of the two functions lands there.
pub fn scan_function_padded(code: &[u8], base: u64, prev: Option<(&[u8], u64)>, f: &mut dyn FnMut(Site)) {
    scan_function_padded_with_declines(code, base, prev, &mut |_, site| {
        if let Ok(site) = site {
            f(site)
        }
    });
}

/// [`scan_function_padded`], reporting every `syscall` it reaches as
/// [`scan_function_with_declines`] does.
pub fn scan_function_padded_with_declines(
    code: &[u8],
    base: u64,
    prev: Option<(&[u8], u64)>,
    f: &mut dyn FnMut(u64, Result<Site, Decline>),
) {
    // Only worth decoding the previous function if this one may hold a P4 site.
    let head = prev.filter(|_| starts_short_run(code, base));
    let pad = head.map(|(prev, prev_base)| find_pad(prev, prev_base, base));
    // Two passes without allocation: collect up to MAX_PER_PASS sites, then decode the whole
    // function again for branch targets. A function with more sites repeats this per batch.
    let mut resume = 0;
    loop {
        let mut found = [(0u64, Err(Decline::InvalidSite)); MAX_PER_PASS];
        let (n, next) = collect(code, base, pad, resume, &mut found);
        let batch = found.get_mut(..n).unwrap_or_default();
        if batch.iter().any(|(_, r)| r.is_ok()) {
            drop_branch_targets(code, base, batch);
        }
        for (sys_addr, result) in batch.iter() {
            f(*sys_addr, *result);
        }
        match next {
            Some(next) => resume = next,
            None => return,
        }
    }
}

/// The eager verdict for the one `syscall` at `sys_addr`, from a scan of the function that
/// contains it (`code` and `base` as for [`scan_function`]): the lazy path's classification
/// where function bounds are known. [`Decline::NotSyscall`] if the decode does not reach a
/// `syscall` at `sys_addr` (the bytes there are inside another instruction).
pub fn classify_in_function(code: &[u8], base: u64, sys_addr: u64) -> Result<Site, Decline> {
    let mut verdict = Err(Decline::NotSyscall);
    scan_function_with_declines(code, base, &mut |at, result| {
        if at == sys_addr {
            verdict = result
        }
    });
    verdict
}

/// Whether `code` (at `base`) starts with 2..=4 bytes of instructions followed by a `syscall`:
/// the only functions that may hold a P4 site.
fn starts_short_run(code: &[u8], base: u64) -> bool {
    let head = code.get(..MAX_LEN).unwrap_or(code);
    let mut decoder = Decoder::with_ip(64, head, base, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    while decoder.can_decode() && decoder.position() < JUMP_LEN {
        let at = decoder.position();
        decoder.decode_out(&mut instr);
        if instr.is_invalid() {
            return false;
        }
        if instr.code() == Code::Syscall {
            return at >= SHORT_JUMP_LEN;
        }
    }
    false
}

/// Where a P4 pad jump may go before a function: found in the previous function's padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pad {
    /// P: the end of the previous function's last instruction that is not padding.
    addr: u64,
    /// The lowest target of a direct branch of the previous function strictly inside
    /// `(start, start + 5)`, where a P4 run lies (`u64::MAX` if none).
    head_target: u64,
}

/// Whether `instr` is padding between functions: `int3`, or a `nop` of any form (`90`,
/// `66 90`, `0f 1f /0` with any prefixes).
fn is_padding(instr: &Instruction) -> bool {
    matches!(
        instr.code(),
        Code::Int3 | Code::Nopw | Code::Nopd | Code::Nopq | Code::Nop_rm16 | Code::Nop_rm32 | Code::Nop_rm64
    )
}

/// Whether execution never continues after `instr` (but for a `call`'s return, which a
/// function only ends with when its callee does not return).
fn ends_flow(instr: &Instruction) -> bool {
    matches!(
        instr.flow_control(),
        FlowControl::Return | FlowControl::UnconditionalBranch | FlowControl::IndirectBranch
    ) || matches!(
        instr.code(),
        Code::Call_rel32_64 | Code::Call_rm64 | Code::Ud2 | Code::Hlt
    )
}

/// Whether `instr` is a branch with an immediate target (`jmp`, `jcc`, `call`, `loop`,
/// `xbegin`…).
fn is_direct_branch(instr: &Instruction) -> bool {
    matches!(
        instr.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    )
}

/// The padding at the end of the previous function (`prev` at `prev_base`, ending at `start`)
/// that can hold a P4 pad jump for the function at `start`: see [`scan_function_padded`].
fn find_pad(prev: &[u8], prev_base: u64, start: u64) -> Result<Pad, Decline> {
    if prev_base.checked_add(prev.len() as u64) != Some(start) {
        return Err(Decline::Padding);
    }
    let mut decoder = Decoder::with_ip(64, prev, prev_base, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    // The last instruction that is not padding, and where it ends.
    let mut last_ends_flow = false;
    let mut p = None;
    // The highest direct branch target below `start`, the lowest within the run.
    let mut below = None;
    let mut head_target = u64::MAX;
    while decoder.can_decode() {
        decoder.decode_out(&mut instr);
        // Invalid, or truncated by `start`: the decode is not aligned with the code.
        if instr.is_invalid() {
            return Err(Decline::Padding);
        }
        if is_direct_branch(&instr) {
            let target = instr.near_branch_target();
            if target < start {
                below = below.max(Some(target));
            } else if target > start && target < start.saturating_add(JUMP_LEN as u64) {
                head_target = head_target.min(target);
            }
        }
        if !is_padding(&instr) {
            p = Some(instr.next_ip());
            last_ends_flow = ends_flow(&instr);
        }
    }
    let p = p.ok_or(Decline::Padding)?;
    if !last_ends_flow || p.saturating_add(JUMP_LEN as u64) > start || start - p > REL8_REACH - 2 {
        return Err(Decline::Padding);
    }
    if below.is_some_and(|t| t >= p) {
        return Err(Decline::BranchTarget);
    }
    Ok(Pad { addr: p, head_target })
}

/// Whether the bytes before a `syscall` (ending at it) are a signal restorer's.
fn is_restorer(before: &[u8]) -> bool {
    RESTORERS.iter().any(|r| before.ends_with(r))
}

/// The last [`MAX_RUN`] instructions decoded, with their offsets in the function.
#[derive(Default)]
struct Recent {
    ring: [(Instruction, usize); MAX_RUN],
    count: usize,
}

impl Recent {
    fn push(&mut self, instr: Instruction, at: usize) {
        if let Some(slot) = self.ring.get_mut(self.count % MAX_RUN) {
            *slot = (instr, at);
        }
        self.count += 1;
    }

    /// The instructions in decoding order, at the end of the array, and how many there are.
    fn in_order(&self) -> ([(Instruction, usize); MAX_RUN], usize) {
        let seen = self.count.min(MAX_RUN);
        let mut out = [(Instruction::default(), 0usize); MAX_RUN];
        for (k, h) in out.iter_mut().skip(MAX_RUN - seen).enumerate() {
            if let Some(r) = self.ring.get((self.count - seen + k) % MAX_RUN) {
                *h = *r;
            }
        }
        (out, seen)
    }
}

/// Decodes the whole function and fills `found` with the `syscall`s reached at offsets
/// `>= resume`. Returns how many, and the offset to resume from if `found` filled up before
/// the end. (Every pass decodes from the function's start, so that the instructions before a
/// site are always known.)
fn collect(
    code: &[u8],
    base: u64,
    pad: Option<Result<Pad, Decline>>,
    resume: usize,
    found: &mut [(u64, Result<Site, Decline>); MAX_PER_PASS],
) -> (usize, Option<usize>) {
    let mut decoder = Decoder::with_ip(64, code, base, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    // No `syscall` can start after the last `0f 05` pair: decoding stops there.
    let Some(last_pair) = code.windows(2).rposition(|w| w == SYSCALL) else {
        return (0, None);
    };
    // Put in order, oldest first, only when a `syscall` is reached.
    let mut recent = Recent::default();
    let mut n = 0;
    while decoder.can_decode() {
        let at = decoder.position();
        if at > last_pair {
            break;
        }
        decoder.decode_out(&mut instr);
        if instr.is_invalid() {
            break;
        }
        if instr.code() == Code::Syscall && at >= resume {
            let (history, seen) = recent.in_order();
            let before = history.get(MAX_RUN - seen..).unwrap_or_default();
            let result = if is_restorer(code.get(..at).unwrap_or_default()) {
                Err(Decline::Restorer)
            } else {
                classify_before(before, code, pad)
            };
            if let Some(slot) = found.get_mut(n) {
                *slot = (instr.ip(), result);
                n += 1;
            }
            if n == MAX_PER_PASS {
                return (n, Some(decoder.position()));
            }
        }
        recent.push(instr, at);
    }
    (n, None)
}

/// Classifies the `syscall` that follows `before`: the instructions before it in its function
/// (oldest first, at most [`MAX_RUN`], fewer near the function's start), at their offsets in
/// `code`. `pad`: the previous function's padding, if it was looked at (for P4).
fn classify_before(
    before: &[(Instruction, usize)],
    code: &[u8],
    pad: Option<Result<Pad, Decline>>,
) -> Result<Site, Decline> {
    let Some((last, at)) = before.last() else {
        return Err(Decline::FunctionStart);
    };
    if last.code() == Code::Syscall {
        return Err(Decline::BackToBack);
    }
    if last.len() >= JUMP_LEN {
        let bytes = code.get(*at..*at + last.len()).ok_or(Decline::Undecodable)?;
        return classify_known(last, bytes);
    }
    // From the function's start, too short for P3 (fewer than 5 bytes, so all of it is here).
    let from_start = before.first().is_some_and(|(_, at)| *at == 0);
    let len: usize = before.iter().map(|(instr, _)| instr.len()).sum();
    match pad {
        Some(pad) if from_start && len < JUMP_LEN => classify_start(before, code, pad),
        _ => classify_run(before, code),
    }
}

/// P4: the run `before` of fewer than 5 bytes from the function's start up to the `syscall`,
/// with the previous function's padding `pad`.
fn classify_start(before: &[(Instruction, usize)], code: &[u8], pad: Result<Pad, Decline>) -> Result<Site, Decline> {
    let mut lens = 0u64;
    let mut len = 0;
    let mut last_bytes: &[u8] = &[];
    for (i, (instr, at)) in before.iter().enumerate() {
        let bytes = code.get(*at..*at + instr.len()).ok_or(Decline::Undecodable)?;
        if instr.code() == Code::Syscall {
            return Err(Decline::BackToBack);
        }
        relocatable(instr)?;
        lens |= ((bytes.len() << 4 | bytes.len()) as u64) << (8 * i);
        len += bytes.len();
        last_bytes = bytes;
    }
    let Some((first, _)) = before.first() else {
        return Err(Decline::FunctionStart);
    };
    if !(SHORT_JUMP_LEN..JUMP_LEN).contains(&len) {
        return Err(Decline::TooShort);
    }
    let nr = static_nr(last_bytes);
    if nr == Some(NR_RT_SIGRETURN) {
        return Err(Decline::Restorer);
    }
    let pad = pad?;
    let start = first.ip();
    if pad.head_target < start.wrapping_add(len as u64) {
        return Err(Decline::BranchTarget);
    }
    let bytes = code.get(..len).ok_or(Decline::Undecodable)?;
    Ok(Site {
        pad: pad.addr,
        ..make_site(Pattern::P4, start, bytes, nr, lens)
    })
}

/// Classifies an instruction of at least 5 bytes whose boundary is known (decoded linearly
/// from its function's start) and which is directly followed by a `syscall`.
fn classify_known(instr: &Instruction, bytes: &[u8]) -> Result<Site, Decline> {
    let (pattern, nr) = match (bytes.len(), static_nr(bytes)) {
        (5, Some(nr)) => (Pattern::P1, Some(nr)),
        (7, Some(nr)) => (Pattern::P1W, Some(nr)),
        (len, _) if len < JUMP_LEN => return Err(Decline::TooShort),
        _ => {
            relocatable(instr)?;
            (Pattern::P2, None)
        }
    };
    Ok(make_site(pattern, instr.ip(), bytes, nr, single_lens(bytes.len())))
}

/// The call number an instruction leaves in `%rax`, if it is one of `b8 imm32`
/// (`mov $imm,%eax`), `48 c7 c0 imm32` (`mov $imm,%rax`, imm < 2³¹) or `31 c0`/`33 c0`
/// (`xor %eax,%eax`): `bytes` must be exactly the instruction.
fn static_nr(bytes: &[u8]) -> Option<u32> {
    match *bytes {
        [MOV_EAX, a, b, c, d] => Some(u32::from_le_bytes([a, b, c, d])),
        [0x48, 0xc7, 0xc0, a, b, c, d] => Some(u32::from_le_bytes([a, b, c, d])).filter(|&i| i < 0x8000_0000),
        [0x31 | 0x33, 0xc0] => Some(0),
        _ => None,
    }
}

/// P3: the shortest run of instructions ending at the `syscall` (the end of `before`) that
/// holds 5 bytes.
fn classify_run(before: &[(Instruction, usize)], code: &[u8]) -> Result<Site, Decline> {
    let mut len = 0;
    let mut count = 0;
    for (instr, _) in before.iter().rev() {
        len += instr.len();
        count += 1;
        if len >= JUMP_LEN {
            break;
        }
    }
    // Not enough bytes before the function's start, or a long instruction overshoots.
    if !(JUMP_LEN..=MAX_LEN).contains(&len) || count > MAX_RUN {
        return Err(Decline::TooShort);
    }
    run_site(before.get(before.len() - count..).unwrap_or_default(), code)
}

/// The P3 site made of exactly the instructions `run` (at their offsets in `code`), which end
/// at a `syscall`.
fn run_site(run: &[(Instruction, usize)], code: &[u8]) -> Result<Site, Decline> {
    let len: usize = run.iter().map(|(instr, _)| instr.len()).sum();
    if !(JUMP_LEN..=MAX_LEN).contains(&len) || run.len() > MAX_RUN {
        return Err(Decline::TooShort);
    }
    let Some(&(first, first_at)) = run.first() else {
        return Err(Decline::TooShort);
    };
    let (start, end) = (first.ip(), first.ip().wrapping_add(len as u64));
    let mut lens = 0u64;
    let mut body = 0;
    let mut last_bytes: &[u8] = &[];
    for (i, (instr, at)) in run.iter().enumerate() {
        let bytes = code.get(*at..*at + instr.len()).ok_or(Decline::Undecodable)?;
        let new_len = if instr.code() == Code::Syscall {
            return Err(Decline::BackToBack);
        } else if let Some((_, op_len)) = plain_branch(bytes) {
            let target = instr.near_branch_target();
            if target >= start && target < end {
                return Err(Decline::BranchTarget);
            }
            op_len + 4
        } else {
            relocatable(instr)?;
            bytes.len()
        };
        lens |= ((new_len << 4 | bytes.len()) as u64) << (8 * i);
        body += new_len;
        last_bytes = bytes;
    }
    if body + TRAMPOLINE_TAIL > TRAMPOLINE_MAX {
        // Not reachable with the limits above (at most 23 bytes); kept as a guard.
        return Err(Decline::InvalidSite);
    }
    let nr = static_nr(last_bytes);
    if nr == Some(NR_RT_SIGRETURN) {
        return Err(Decline::Restorer);
    }
    let bytes = code.get(first_at..first_at + len).ok_or(Decline::Undecodable)?;
    Ok(make_site(Pattern::P3, start, bytes, nr, lens))
}

/// If `bytes` is exactly a plain direct `jcc` or `jmp` (rel8 `7x`/`eb`, rel32 `0f 8x`/`e9`,
/// no prefix): the opcode of its rel32 form (`0f 8x` or `e9`, padded to 2 bytes) and its
/// length, to be followed by the rel32.
pub(crate) fn plain_branch(bytes: &[u8]) -> Option<([u8; 2], usize)> {
    match *bytes {
        [op @ 0x70..=0x7f, _] => Some(([0x0f, op + 0x10], 2)),
        [0x0f, op @ 0x80..=0x8f, _, _, _, _] => Some(([0x0f, op], 2)),
        [0xeb, _] | [0xe9, _, _, _, _] => Some(([0xe9, 0], 1)),
        _ => None,
    }
}

/// Whether `instr` can run unchanged (but for a RIP-relative displacement) from a trampoline.
pub(crate) fn relocatable(instr: &Instruction) -> Result<(), Decline> {
    // syscall, sysenter, int, ud*, xbegin, every branch, call and ret are not Next.
    if instr.flow_control() != FlowControl::Next || instr.code() == Code::Syscall {
        return Err(Decline::Branch);
    }
    if instr.segment_prefix() == Register::GS {
        return Err(Decline::SegmentGs);
    }
    if instr.is_ip_rel_memory_operand() && instr.memory_base() == Register::EIP {
        return Err(Decline::EipRelative);
    }
    Ok(())
}

/// The most direct branch targets near the sites of one pass that [`drop_branch_targets`]
/// keeps; with more, every site of the pass is declined.
const MAX_TARGETS: usize = 64;

/// Replaces each accepted site in `batch` that a direct branch of the function lands inside
/// of where its jump goes (strictly after its start, in the bytes [`cover`] replaces; for P4
/// also in the padding from the pad jump to the function's start) by the same run begun at an
/// earlier instruction, whose jump then overlaps only instructions before the target (a P3
/// run, within [`MAX_LEN`] bytes and [`MAX_RUN`] instructions: glibc's thread-exit loop
/// `mov $60,%edx; nop; L: xor %edi,%edi; mov %edx,%eax; syscall; jmp L`), or else by
/// [`Decline::BranchTarget`]. A target in the rest of a run is fine: those bytes stay as they
/// were, and the code there runs as it always did, up to the intact `syscall`.
fn drop_branch_targets(code: &[u8], base: u64, batch: &mut [(u64, Result<Site, Decline>)]) {
    let mut targets = [0u64; MAX_TARGETS];
    let (mut n, mut overflow) = (0, false);
    let mut decoder = Decoder::with_ip(64, code, base, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut instr);
        if instr.is_invalid() {
            break;
        }
        if !is_direct_branch(&instr) {
            continue;
        }
        let t = instr.near_branch_target();
        // Only a target in the MAX_LEN bytes before a site's `syscall`, or in a P4 padding,
        // can matter.
        let near = batch.iter().any(|(sys, result)| {
            (t < *sys && t.saturating_add(MAX_LEN as u64) >= *sys)
                || result
                    .as_ref()
                    .is_ok_and(|s| s.pattern == Pattern::P4 && t >= s.pad && t < s.start)
        });
        if near {
            match targets.get_mut(n) {
                Some(slot) => {
                    *slot = t;
                    n += 1;
                }
                None => overflow = true,
            }
        }
    }
    let targets = targets.get(..n).unwrap_or_default();
    for (sys, result) in batch.iter_mut() {
        let Ok(site) = *result else {
            continue;
        };
        if overflow {
            *result = Err(Decline::BranchTarget);
        } else if lands_inside(&site, targets) {
            *result = earlier_run(code, base, &site, *sys, targets).ok_or(Decline::BranchTarget);
        }
    }
}

/// Whether one of `targets` lands where `site`'s jump leaves no instruction to land on.
fn lands_inside(site: &Site, targets: &[u64]) -> bool {
    let Ok(cover) = cover(site) else {
        return true;
    };
    let end = site.start.wrapping_add(cover as u64);
    targets
        .iter()
        .any(|&t| (t > site.start && t < end) || (site.pattern == Pattern::P4 && t >= site.pad && t < site.start))
}

/// For a P3 `site` (ending at `sys`) that one of `targets` lands inside of: the shortest run
/// ending at the same `syscall` that begins at an earlier instruction and that none of them
/// lands inside of.
fn earlier_run(code: &[u8], base: u64, site: &Site, sys: u64, targets: &[u64]) -> Option<Site> {
    if site.pattern != Pattern::P3 {
        return None;
    }
    // The instructions before the `syscall`, from a decode of the function from its start.
    let mut recent = Recent::default();
    let mut decoder = Decoder::with_ip(64, code, base, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    loop {
        if !decoder.can_decode() {
            return None;
        }
        let at = decoder.position();
        decoder.decode_out(&mut instr);
        if instr.is_invalid() || instr.ip() > sys {
            return None;
        }
        if instr.ip() == sys {
            break;
        }
        recent.push(instr, at);
    }
    let (history, seen) = recent.in_order();
    let before = history.get(MAX_RUN - seen..)?;
    let have = site.lens.to_le_bytes().iter().take_while(|&&b| b != 0).count();
    for k in have + 1..=seen {
        let run = before.get(seen - k..)?;
        match run_site(run, code) {
            Ok(longer) if !lands_inside(&longer, targets) => return Some(longer),
            Ok(_) => {}
            // Longer runs hold the same instruction, or are longer still.
            Err(_) => return None,
        }
    }
    None
}

/// [`Site::lens`] for a single instruction of `len` bytes, copied unchanged.
fn single_lens(len: usize) -> u64 {
    let len = len.min(MAX_LEN) as u64;
    len << 4 | len
}

fn make_site(pattern: Pattern, start: u64, bytes: &[u8], nr: Option<u32>, lens: u64) -> Site {
    let mut insn = [0; 15];
    for (dst, src) in insn.iter_mut().zip(bytes) {
        *dst = *src;
    }
    Site {
        pattern,
        start,
        len: bytes.len().min(MAX_LEN) as u8,
        nr,
        insn,
        lens,
        pad: 0,
    }
}

/// Calls `f(offset)` for every `0f 05` in `code`, in order: the candidates that decide which
/// functions are worth decoding. (`0f 05` cannot overlap itself.)
pub fn find_syscall_bytes(code: &[u8], f: &mut dyn FnMut(usize)) {
    let mut i = 0;
    while let Some(p) = code.get(i..).and_then(|rest| rest.iter().position(|&b| b == 0x0f)) {
        let at = i + p;
        if code.get(at + 1) == Some(&0x05) {
            f(at);
            i = at + 2;
        } else {
            i = at + 1;
        }
    }
}
