//! Classic BPF for seccomp filters, shared by the two programs strata
//! writes: the launcher's policy filter (crates/cli policy/kernel.rs
//! `merge`) and the runtime's own capture filter (runtime seccomp.rs).
//! Both start with a binary search over runs of call numbers that share a
//! verdict, [`search`]; what a run does is each caller's.

/// `A = word at k` of `struct seccomp_data`.
pub const LD_W_ABS: u16 = 0x20;
/// `A &= k`.
pub const ALU_AND_K: u16 = 0x54;
/// Jump `k` instructions forward.
pub const JA: u16 = 0x05;
/// `A == k`: skip `jt`, else `jf`.
pub const JEQ_K: u16 = 0x15;
/// `A >= k`: skip `jt`, else `jf`.
pub const JGE_K: u16 = 0x35;
/// Return `k`.
pub const RET_K: u16 = 0x06;

/// `struct seccomp_data` offsets: the number, the architecture, the calling
/// address (two words), the arguments (8 bytes each).
pub const OFF_NR: u32 = 0;
pub const OFF_ARCH: u32 = 4;
pub const OFF_IP_LO: u32 = 8;
pub const OFF_IP_HI: u32 = 12;
pub const OFF_ARGS: u32 = 16;

pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
pub const RET_ALLOW: u32 = 0x7fff_0000;
pub const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// SECCOMP_RET_TRAP; its data (the SIGSYS's si_errno) in the low 16 bits.
pub const RET_TRAP: u32 = 0x0003_0000;

/// Where instructions go.
pub trait Emit {
    /// Appends one instruction and returns its position (None: no room).
    fn push(&mut self, code: u16, jt: u8, jf: u8, k: u32) -> Option<usize>;
    /// The position the next instruction gets (how many there are).
    fn next_at(&self) -> usize;
    /// Sets the `k` of instruction `at` (a jump's distance).
    fn set_k(&mut self, at: usize, k: u32) -> Option<()>;
}

/// A binary search over `n` runs of call numbers (the number is in A):
/// run `i` starts at `start(i)` (increasing) and goes on to the next;
/// `leaf(e, i)` emits what run `i` does. None when there is no run or no
/// room.
pub fn search<E: Emit>(
    e: &mut E,
    n: usize,
    start: &impl Fn(usize) -> u32,
    leaf: &mut impl FnMut(&mut E, usize) -> Option<()>,
) -> Option<()> {
    fn go<E: Emit>(
        e: &mut E,
        lo: usize,
        hi: usize,
        start: &impl Fn(usize) -> u32,
        leaf: &mut impl FnMut(&mut E, usize) -> Option<()>,
    ) -> Option<()> {
        if hi - lo == 1 {
            return leaf(e, lo);
        }
        let mid = (lo + hi) / 2;
        // number >= the upper half's first: to the `ja` over the lower half.
        e.push(JGE_K, 0, 1, start(mid))?;
        let over = e.push(JA, 0, 0, 0)?;
        go(e, lo, mid, start, leaf)?;
        let d = e.next_at().checked_sub(over + 1)?;
        e.set_k(over, u32::try_from(d).ok()?)?;
        go(e, mid, hi, start, leaf)
    }
    if n == 0 {
        return None;
    }
    go(e, 0, n, start, leaf)
}
