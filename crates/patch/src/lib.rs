//! Finds x86-64 `syscall` sites that strata can rewrite, and builds the bytes that rewrite them.
//!
//! The fast path (docs/design/fast-path.md §2, §5.1) never changes a `syscall` (`0f 05`)
//! itself. It replaces the whole instruction of at least 5 bytes right *before* it (or the
//! first of the few shorter instructions that end at it, P3: those the 5-byte jump overlaps,
//! [`cover`]) with `jmp rel32` to a per-site trampoline, and fills what is left of them with
//! `int3`; the rest of a P3 run stays as it was, so a branch of the function to it runs the
//! original code and the intact `syscall`. The trampoline runs the replaced
//! instruction(s) (relocated), sets `%rcx` to the address after the `syscall` as the kernel
//! would, and jumps through an 8-byte constant to strata's entry stub:
//!
//! ```text
//! site S:   e9 rel32 (cc…)    ; was: the replaced instruction(s), L bytes
//! S+L:      0f 05             ; untouched: a branch here, a restart, a fallback all trap
//! tramp:    <replaced instruction(s), RIP-relative displacements and branches relocated>
//!           48 8d 0d rel32    ; lea S+L+2(%rip),%rcx
//!           ff 25 rel32       ; jmp *slot(%rip)
//! ```
//!
//! Five patterns ([`Pattern`]) are accepted: `mov $nr,%eax` (P1), `mov $nr,%rax` (P1W), any
//! other single relocatable instruction of 5 to 15 bytes (P2), a run of up to 8 shorter
//! instructions, branches included, of 5 to 15 bytes in all (P3, eager scan only: the
//! trampoline runs them all), and a run of 2 to 4 bytes at the very start of a function (P4,
//! eager scan with the previous function known): too short for `jmp rel32`, it becomes a
//! 2-byte `jmp rel8` to a `jmp rel32` written into the padding before the function:
//!
//! ```text
//! pad:      e9 rel32          ; was: padding after the previous function's last instruction
//! …
//! start S:  eb rel8 (cc…)     ; was: e.g. `31 c0` (xor %eax,%eax); rel8 reaches pad
//! S+L:      0f 05             ; untouched
//! ```
//!
//! Sites are found either eagerly, by decoding whole functions ([`scan_function`],
//! [`scan_function_padded`], with function starts from [`EhFrameHdr`] and candidates from
//! [`find_syscall_bytes`]), or lazily at a trap from the 15 bytes before the trapping
//! `syscall` ([`classify_trap`]; never P3 or P4). Everything else is a [`Decline`] with a
//! reason, and stays on the trap path.
//!
//! A signal can interrupt a trampoline; [`site_offset`] maps an offset in it back to the
//! corresponding place in the original code ([`Site::lens`]).
//!
//! The runtime calls this crate inside its SIGSYS handler, so it is `no_std`, has no
//! `unsafe`, never allocates and never panics on the bytes it is given: every failure is a
//! [`Decline`] or `None`. It decodes with iced-x86's `Decoder` (`with_ip` + `decode_out`),
//! which does not allocate once iced has built its decoder tables: call [`warm_up`] once at
//! start-up, before the first signal can arrive.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    warn(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(test)]
extern crate std;

mod classify;
mod eh_frame_hdr;
mod emit;

pub use classify::{
    classify_in_function, classify_trap, find_syscall_bytes, scan_function, scan_function_padded,
    scan_function_padded_with_declines, scan_function_with_declines,
};
pub use eh_frame_hdr::EhFrameHdr;
pub use emit::{
    cover, jump_bytes, live_p1_ok, next_live_p1_addr, pad_jump_bytes, relocation, site_offset, trampoline,
    trampoline_with, JUMP_LEN, TRAMPOLINE_MAX,
};

/// The bytes of `syscall`.
pub const SYSCALL: [u8; 2] = [0x0f, 0x05];

/// `rt_sigreturn`: its sites are never patched. libgcc's unwinder and debuggers recognise the
/// signal restorer (`mov $15,%eax` or `mov $15,%rax`, then `syscall`) by its exact bytes.
pub const NR_RT_SIGRETURN: u32 = 15;

/// Builds iced-x86's decoder tables now.
///
/// iced builds them on first use behind a `lazy_static` (a spin lock in `no_std`), and that
/// first build allocates. A signal handler must never be the first user: it could run on top
/// of an interrupted build and spin forever, or re-enter the allocator. Call this once at
/// start-up; afterwards decoding allocates nothing.
pub fn warm_up() {
    let _ = iced_x86::Decoder::with_ip(64, &SYSCALL, 0, iced_x86::DecoderOptions::NONE);
}

/// How the instruction before a `syscall` is replaced, and where the call number comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pattern {
    /// `b8 imm32`: `mov $nr,%eax`, 5 bytes, static number. The only pattern that can be
    /// patched while other threads run it (§4.3), since `e9` replaces `b8` in one byte.
    P1,
    /// `48 c7 c0 imm32`: `mov $nr,%rax`, 7 bytes (2 dead), static number.
    P1W,
    /// Any other single relocatable instruction of 5..=15 bytes; the number is in `%eax` at
    /// run time.
    P2,
    /// A run of 2..=8 consecutive instructions ending at the `syscall`, 5..=15 bytes in all,
    /// the last one shorter than 5 bytes: glibc's `read` (`cmpb $0,x(%rip); je …; xor
    /// %eax,%eax; syscall`). Each is relocatable as for P2, or a plain `jcc`/`jmp` (rel8 or
    /// rel32) whose target lies outside the run, re-encoded as rel32 in the trampoline. Found
    /// only by [`scan_function`], where instruction boundaries are known; the number is static
    /// (0) only when the last instruction is `xor %eax,%eax` (or one of P1's/P1W's `mov`s).
    /// The shortest such run is taken, unless a branch of the function lands inside the
    /// instructions its jump would overlap: then the shortest that begins earlier and avoids
    /// every such target (glibc's thread-exit loop, `mov $60,%edx; nop; L: xor %edi,%edi; mov
    /// %edx,%eax; syscall; jmp L`, is rewritten from its `mov $60`).
    P3,
    /// A run of 1..=4 instructions of 2..=4 bytes in all, from the function's first byte up to
    /// the `syscall`: glibc's `__read_nocancel` (`xor %eax,%eax; syscall`). Each is relocatable
    /// as for P2 (no branches). The run becomes `eb rel8` (and `int3`s) to a `jmp rel32` at
    /// [`Site::pad`], in the padding between the previous function's last instruction and this
    /// function, which jumps to a trampoline built as for P3 ([`pad_jump_bytes`]). Found only
    /// by [`scan_function_padded`], given the previous function; the number is static as for
    /// P3.
    P4,
}

/// A `syscall` site that can be rewritten: the replaced instruction (for P3 and P4, the run of
/// instructions) at `start` and the `syscall` right after it, at `start + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    /// Which kind of instruction is replaced.
    pub pattern: Pattern,
    /// S: the address of the replaced instruction.
    pub start: u64,
    /// L: its length (P3, P4: of the whole run), 5..=15 (P4: 2..=4). The `syscall` is at
    /// `start + len`.
    pub len: u8,
    /// The static call number: for P1 and P1W, and for P3 and P4 ending in `xor %eax,%eax`.
    pub nr: Option<u32>,
    /// The original bytes of the replaced instruction(s): the first `len` are valid, the rest 0.
    pub insn: [u8; 15],
    /// One byte per replaced instruction, in order (byte 0 = the first): low nibble its
    /// original length, high nibble its length in the trampoline (they differ only for a P3
    /// branch: `jcc rel8` 2 → 6, `jmp rel8` 2 → 5). Unused bytes are 0. See [`site_offset`].
    pub lens: u64,
    /// P4 only (else 0): the address of the 5 padding bytes before the function that receive
    /// `jmp rel32` to the trampoline; `start + 2 - pad` is at most 128, and `pad + 5 <= start`.
    pub pad: u64,
}

impl Site {
    /// The address of the `syscall` (S_sys = S + L).
    pub fn sys_addr(&self) -> u64 {
        self.start.wrapping_add(u64::from(self.len))
    }

    /// The address just after the `syscall` (S_ret = S + L + 2): where the program resumes,
    /// and what the kernel leaves in `%rcx`.
    pub fn ret_addr(&self) -> u64 {
        self.sys_addr().wrapping_add(2)
    }

    /// The original bytes of the replaced instruction(s) (empty if `len` is not 5..=15, for
    /// P4 not 2..=4).
    pub fn bytes(&self) -> &[u8] {
        match (self.pattern, self.len) {
            (Pattern::P4, 2..=4) | (Pattern::P1 | Pattern::P1W | Pattern::P2 | Pattern::P3, 5..=15) => {
                self.insn.get(..usize::from(self.len)).unwrap_or(&[])
            }
            _ => &[],
        }
    }
}

/// Why a `syscall` site is not rewritten. Declined sites stay on the trap path; the runtime
/// counts them per reason (`Decline as usize` indexes [`Decline::ALL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Decline {
    /// The instruction before the `syscall` is shorter than the 5 bytes of `jmp rel32`, and
    /// no run of instructions ending at it makes 5..=15 bytes (P3) within the function (nor,
    /// where the previous function is known, 2..=4 bytes from the function's start, P4).
    TooShort,
    /// A prefix, REX or `0f` byte right before the `mov`: it may not start an instruction.
    Prefix,
    /// The bytes at the trap address are not `0f 05`.
    NotSyscall,
    /// `%eax` at the trap differs from the `mov`'s immediate: the `syscall` was reached
    /// another way, or the `mov` bytes are not an instruction.
    NumberMismatch,
    /// The instruction before the `syscall` (or one of a P3 run) changes control flow (call,
    /// ret, int, `sysenter`, `xbegin`, `ud`, `loop`, an indirect or prefixed branch…; any branch
    /// outside P3): it cannot run from a trampoline.
    Branch,
    /// A RIP-relative operand's target is not within ±2 GiB of the trampoline.
    RipRelativeOutOfRange,
    /// A 32-bit `eip`-relative operand (`67` prefix): not relocated.
    EipRelative,
    /// A `%gs` segment override: the program's GS base is virtual under strata.
    SegmentGs,
    /// Several instruction lengths end exactly at the `syscall`: the boundary is uncertain.
    Ambiguous,
    /// No instruction of 5..=15 bytes ends exactly at the `syscall`.
    Undecodable,
    /// An `rt_sigreturn` site (call number 15): the signal restorer.
    Restorer,
    /// The `syscall` directly follows another `syscall` (or a P3 run would contain one).
    BackToBack,
    /// The `syscall` is the first instruction of its function: nothing before it to replace.
    FunctionStart,
    /// A direct branch in the function targets the inside of the replaced instruction (or
    /// run), or a branch of a P3 run targets the run itself; for P4, a direct branch of this
    /// or the previous function targets the padding that would hold the pad jump, or one of
    /// the previous function's targets the inside of the run.
    BranchTarget,
    /// The trampoline, the return address or the entry constant is not within ±2 GiB.
    OutOfRange,
    /// The [`Site`] handed in is malformed (length outside 5..=15, wrong pattern).
    InvalidSite,
    /// P4: the previous function does not end in usable padding: it does not decode up to this
    /// function's start, its last instruction before the padding is not an unconditional
    /// transfer (`ret`, `jmp`, `call`, `ud2`, `hlt`), or the padding is shorter than 5 bytes or
    /// starts more than 126 bytes before the function (out of `jmp rel8`'s reach).
    Padding,
}

impl Decline {
    /// Every reason, in declaration order: `Decline::ALL[d as usize] == d`.
    pub const ALL: [Decline; 17] = [
        Decline::TooShort,
        Decline::Prefix,
        Decline::NotSyscall,
        Decline::NumberMismatch,
        Decline::Branch,
        Decline::RipRelativeOutOfRange,
        Decline::EipRelative,
        Decline::SegmentGs,
        Decline::Ambiguous,
        Decline::Undecodable,
        Decline::Restorer,
        Decline::BackToBack,
        Decline::FunctionStart,
        Decline::BranchTarget,
        Decline::OutOfRange,
        Decline::InvalidSite,
        Decline::Padding,
    ];

    /// A short human-readable reason, for statistics and traces.
    pub fn reason(&self) -> &'static str {
        match self {
            Decline::TooShort => "instruction before syscall shorter than 5 bytes",
            Decline::Prefix => "prefix byte before the mov",
            Decline::NotSyscall => "not a syscall",
            Decline::NumberMismatch => "eax differs from the mov immediate",
            Decline::Branch => "instruction before syscall changes control flow",
            Decline::RipRelativeOutOfRange => "rip-relative target out of range",
            Decline::EipRelative => "eip-relative operand",
            Decline::SegmentGs => "gs segment override",
            Decline::Ambiguous => "ambiguous instruction boundary",
            Decline::Undecodable => "no instruction ends at the syscall",
            Decline::Restorer => "rt_sigreturn",
            Decline::BackToBack => "back-to-back syscalls",
            Decline::FunctionStart => "syscall starts its function",
            Decline::BranchTarget => "branch into the replaced instruction",
            Decline::OutOfRange => "trampoline out of rel32 range",
            Decline::InvalidSite => "malformed site",
            Decline::Padding => "no usable padding before the function",
        }
    }
}

/// Whether `b` is an x86-64 legacy prefix (segment 26 2e 36 3e 64 65, operand/address size
/// 66 67, lock f0, rep f2 f3) or a REX byte (40..=4f).
///
/// A `b8` right after such a byte is not `mov $imm,%eax`: `41 b8 imm32` is `mov $imm,%r8d`,
/// `66 b8 imm16` moves 2 bytes.
pub fn is_prefix_byte(b: u8) -> bool {
    matches!(b, 0x26 | 0x2e | 0x36 | 0x3e | 0x40..=0x4f | 0x64..=0x67 | 0xf0 | 0xf2 | 0xf3)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod lib_tests {
    use super::*;

    #[test]
    fn decline_all_is_indexed_by_discriminant() {
        for (i, d) in Decline::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i);
            assert!(!d.reason().is_empty());
        }
    }

    #[test]
    fn prefix_bytes() {
        let all: std::vec::Vec<u8> = (0..=255u8).filter(|&b| is_prefix_byte(b)).collect();
        assert_eq!(all.len(), 4 + 16 + 4 + 3);
        assert!(is_prefix_byte(0x41) && is_prefix_byte(0x65) && is_prefix_byte(0xf3));
        assert!(!is_prefix_byte(0x0f) && !is_prefix_byte(0xb8) && !is_prefix_byte(0x90));
    }
}
