//! Hand-assembled snippets for every pattern and decline, and the emitted bytes decoded back.

use crate::*;
use iced_x86::{Code, Decoder, DecoderOptions, Formatter, GasFormatter, Instruction, Register};
use std::string::String;
use std::vec::Vec;

const SYS: u64 = 0x7f00_1234_5000;

/// The 15 bytes ending at a `syscall`: the end of `tail`, right-aligned after `int3` padding
/// (`cc` is a one-byte instruction, so it never makes a longer candidate valid).
fn before(tail: &[u8]) -> [u8; 15] {
    let tail = &tail[tail.len().saturating_sub(15)..];
    let mut b = [0xcc; 15];
    b[15 - tail.len()..].copy_from_slice(tail);
    b
}

fn trap(tail: &[u8], eax: u32) -> Result<Site, Decline> {
    classify_trap(&before(tail), &SYSCALL, SYS, eax)
}

fn decode_all(bytes: &[u8], ip: u64) -> Vec<Instruction> {
    Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE)
        .into_iter()
        .collect()
}

fn gas(instr: &Instruction) -> String {
    let mut s = String::new();
    GasFormatter::new().format(instr, &mut s);
    s
}

/// All `syscall`s of a function, accepted or not.
fn scan_all(code: &[u8], base: u64) -> Vec<(u64, Result<Site, Decline>)> {
    let mut v = Vec::new();
    scan_function_with_declines(code, base, &mut |a, r| v.push((a, r)));
    v
}

/// glibc's syscall(3): the number and arguments shift one register down, the 6th comes
/// from the stack with a 5-byte `mov 0x8(%rsp),%r9` (P2).
const GLIBC_SYSCALL: [u8; 23] = [
    0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6, 0x48, 0x89, 0xca, 0x4d, 0x89, 0xc2, 0x4d, 0x89, 0xc8, 0x4c,
    0x8b, 0x4c, 0x24, 0x08,
];

#[test]
fn p1() {
    let site = trap(&[0xb8, 0x27, 0, 0, 0], 0x27).unwrap();
    assert_eq!(site.pattern, Pattern::P1);
    assert_eq!((site.start, site.len, site.nr), (SYS - 5, 5, Some(0x27)));
    assert_eq!(site.bytes(), [0xb8, 0x27, 0, 0, 0]);
    assert_eq!((site.sys_addr(), site.ret_addr()), (SYS, SYS + 2));
}

#[test]
fn p1_declines() {
    assert_eq!(trap(&[0xb8, 0x27, 0, 0, 0], 0x28), Err(Decline::NumberMismatch));
    // mov $0x27,%r8d, and b8 as the second byte of a 0f opcode.
    assert_eq!(trap(&[0x41, 0xb8, 0x27, 0, 0, 0], 0x27), Err(Decline::Prefix));
    assert_eq!(trap(&[0x0f, 0xb8, 0x27, 0, 0, 0], 0x27), Err(Decline::Prefix));
    for p in [
        0x26, 0x2e, 0x36, 0x3e, 0x40, 0x4f, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3,
    ] {
        assert_eq!(trap(&[p, 0xb8, 0x27, 0, 0, 0], 0x27), Err(Decline::Prefix), "{p:#x}");
    }
    assert_eq!(
        classify_trap(&before(&[0xb8, 0x27, 0, 0, 0]), &[0x0f, 0x34], SYS, 0x27),
        Err(Decline::NotSyscall)
    );
}

#[test]
fn p1w() {
    let site = trap(&[0x48, 0xc7, 0xc0, 0x3c, 0, 0, 0], 60).unwrap();
    assert_eq!(
        (site.pattern, site.start, site.len, site.nr),
        (Pattern::P1W, SYS - 7, 7, Some(60))
    );
    assert_eq!(
        trap(&[0x48, 0xc7, 0xc0, 0x3c, 0, 0, 0], 61),
        Err(Decline::NumberMismatch)
    );
    assert_eq!(trap(&[0x66, 0x48, 0xc7, 0xc0, 0x3c, 0, 0, 0], 60), Err(Decline::Prefix));
    // Sign-extended: %rax is not the zero extension of %eax.
    assert_eq!(
        trap(&[0x48, 0xc7, 0xc0, 0, 0, 0, 0x80], 0x8000_0000),
        Err(Decline::NumberMismatch)
    );
}

#[test]
fn p2_glibc_syscall3() {
    let site = trap(&GLIBC_SYSCALL, 39).unwrap();
    assert_eq!(
        (site.pattern, site.start, site.len, site.nr),
        (Pattern::P2, SYS - 5, 5, None)
    );
    assert_eq!(site.bytes(), [0x4c, 0x8b, 0x4c, 0x24, 0x08]);
    // Eager: the same site, with the boundary known.
    let mut code = GLIBC_SYSCALL.to_vec();
    code.extend_from_slice(&[0x0f, 0x05, 0xc3]);
    let base = SYS - GLIBC_SYSCALL.len() as u64;
    assert_eq!(scan_all(&code, base), [(SYS, Ok(site))]);
}

/// The site an eager scan finds for `insn; syscall`, placed so that the `syscall` is at SYS.
fn eager(insn: &[u8]) -> Site {
    let mut code = insn.to_vec();
    code.extend_from_slice(&SYSCALL);
    let got = scan_all(&code, SYS - insn.len() as u64);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, SYS);
    got[0].1.unwrap()
}

#[test]
fn p2_rip_relative_is_relocated() {
    // mov 0x1000(%rip),%rax: target SYS + 0x1000. Lazily it is ambiguous (below), so the
    // site comes from a scan.
    let site = eager(&[0x48, 0x8b, 0x05, 0x00, 0x10, 0, 0]);
    assert_eq!((site.pattern, site.start, site.len), (Pattern::P2, SYS - 7, 7));
    let target = SYS + 0x1000;
    for tramp in [SYS + 0x7000_0000, SYS - 0x7000_0000, SYS + 3] {
        let slot = tramp & !0xfff;
        let mut out = [0; 64];
        let n = trampoline(&site, tramp, slot, &mut out).unwrap();
        let insns = decode_all(&out[..n], tramp);
        assert_eq!(insns[0].code(), Code::Mov_r64_rm64);
        assert_eq!(insns[0].ip_rel_memory_address(), target);
        check_tail(&insns[1..], &site, slot);
    }
    // The target (SYS + 0x1000) is out of reach from 2 GiB below SYS.
    let mut out = [0; 64];
    assert_eq!(
        trampoline(&site, SYS - 0x8000_0000, SYS - 0x8000_0000, &mut out),
        Err(Decline::RipRelativeOutOfRange)
    );
    // What `relocation` finds (the disp32 at offset 3, kept as 3 + 1) is what builds the
    // trampoline without decoding; without it the displacement would be copied unchanged.
    assert_eq!(relocation(&site), Ok(4));
    let (tramp, slot) = (SYS + 0x100, SYS);
    let (mut with, mut plain) = ([0; 64], [0; 64]);
    let n = trampoline(&site, tramp, slot, &mut out).unwrap();
    assert_eq!(trampoline_with(&site, 4, tramp, slot, &mut with), Ok(n));
    assert_eq!(out[..n], with[..n]);
    assert_eq!(trampoline_with(&site, 0, tramp, slot, &mut plain), Ok(n));
    assert_eq!(
        decode_all(&plain[..n], tramp)[0].ip_rel_memory_address(),
        tramp + 7 + 0x1000
    );
    // An offset that does not fit the instruction is refused, not followed.
    assert_eq!(
        trampoline_with(&site, 6, tramp, slot, &mut plain),
        Err(Decline::InvalidSite)
    );
    // A displacement followed by an immediate: cmpl $7,0x10(%rip). Unambiguous lazily too.
    let site = trap(&[0x83, 0x3d, 0x10, 0, 0, 0, 0x07], 0).unwrap();
    assert_eq!(site, eager(&[0x83, 0x3d, 0x10, 0, 0, 0, 0x07]));
    let n = trampoline(&site, SYS + 0x100, SYS, &mut out).unwrap();
    let insns = decode_all(&out[..n], SYS + 0x100);
    assert_eq!(
        (insns[0].ip_rel_memory_address(), insns[0].immediate8()),
        (SYS + 0x10, 7)
    );
    // 32-bit eip-relative (67 prefix): declined.
    assert_eq!(
        scan_all(&[0x67, 0x8b, 0x05, 0, 1, 0, 0, 0x0f, 0x05], SYS)[0].1,
        Err(Decline::EipRelative)
    );
}

#[test]
fn lazy_boundaries_are_often_ambiguous() {
    // A RIP-relative operand ends in ModRM 05/0d/…/3d + disp32, and those five bytes are also
    // `add/or/…/cmp $imm32,%eax`; dropping a REX or segment prefix leaves a valid instruction.
    for modrm in [0x05, 0x0d, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d] {
        assert_eq!(trap(&[0x8b, modrm, 0, 1, 0, 0], 0), Err(Decline::Ambiguous));
    }
    assert_eq!(
        trap(&[0x64, 0x48, 0x8b, 0x90, 0x44, 0x33, 0x22, 0x11], 1),
        Err(Decline::Ambiguous)
    );
    // mov %gs:0x10,%rax, as in TLS code: eagerly it is the gs override that declines it.
    let gs = [0x65, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0];
    assert_eq!(trap(&gs, 1), Err(Decline::Ambiguous));
    assert_eq!(
        scan_all(&[&gs[..], &SYSCALL].concat(), SYS - 9)[0].1,
        Err(Decline::SegmentGs)
    );
}

/// `lea S_ret(%rip),%rcx`, then `jmp *slot(%rip)`, and nothing else.
fn check_tail(insns: &[Instruction], site: &Site, slot: u64) {
    assert_eq!(insns.len(), 2, "{:?}", insns.iter().map(gas).collect::<Vec<_>>());
    assert_eq!(
        (insns[0].code(), insns[0].op0_register()),
        (Code::Lea_r64_m, Register::RCX)
    );
    assert_eq!(insns[0].ip_rel_memory_address(), site.ret_addr());
    assert_eq!(insns[1].code(), Code::Jmp_rm64);
    assert!(insns[1].is_ip_rel_memory_operand());
    assert_eq!(insns[1].ip_rel_memory_address(), slot);
}

#[test]
fn trampolines_decode_back() {
    let sites = [
        trap(&[0xb8, 0x27, 0, 0, 0], 0x27),
        trap(&[0x48, 0xc7, 0xc0, 0x3c, 0, 0, 0], 60),
        trap(&GLIBC_SYSCALL, 0),
    ];
    for site in sites {
        let site = site.unwrap();
        let (tramp, slot) = (SYS - 0x10_0000 + 0x123, SYS - 0x10_0000);
        let mut out = [0; 64];
        let n = trampoline(&site, tramp, slot, &mut out).unwrap();
        assert!(n <= TRAMPOLINE_MAX && n == site.len as usize + 13);
        assert_eq!(&out[..site.len as usize], site.bytes());
        let insns = decode_all(&out[..n], tramp);
        std::println!(
            "{:?}: {}",
            site.pattern,
            insns.iter().map(gas).collect::<Vec<_>>().join("; ")
        );
        assert_eq!(insns[0].len(), site.len as usize);
        check_tail(&insns[1..], &site, slot);
    }
    let site = trap(&[0xb8, 0x27, 0, 0, 0], 0x27).unwrap();
    let mut out = [0; 64];
    assert_eq!(
        trampoline(&site, SYS + 0x8000_0000, SYS, &mut out),
        Err(Decline::OutOfRange)
    );
    assert_eq!(
        trampoline(&site, SYS, SYS + 0x9000_0000, &mut out),
        Err(Decline::OutOfRange)
    );
    // A site whose bytes do not match its length, or are not relocatable.
    let bad = Site { len: 6, ..site };
    assert_eq!(trampoline(&bad, SYS, SYS, &mut out), Err(Decline::Undecodable));
    let bad = Site { len: 4, ..site };
    assert_eq!(trampoline(&bad, SYS, SYS, &mut out), Err(Decline::InvalidSite));
    let call = Site {
        insn: [0xe8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ..site
    };
    assert_eq!(trampoline(&call, SYS, SYS, &mut out), Err(Decline::Branch));
}

#[test]
fn jump() {
    let site = trap(&[0x48, 0xc7, 0xc0, 0x3c, 0, 0, 0], 60).unwrap();
    let mut out = [0; 15];
    let tramp = site.start + 5 - 0x1234;
    assert_eq!(jump_bytes(&site, tramp, &mut out), Ok(7));
    assert_eq!(out[..7], [0xe9, 0xcc, 0xed, 0xff, 0xff, 0xcc, 0xcc]);
    let insn = decode_all(&out[..5], site.start)[0];
    assert_eq!((insn.code(), insn.near_branch_target()), (Code::Jmp_rel32_64, tramp));
    let up = site.start + 5 + 0x7fff_ffff;
    assert_eq!(jump_bytes(&site, up, &mut out), Ok(7));
    assert_eq!(jump_bytes(&site, up + 1, &mut out), Err(Decline::OutOfRange));
    assert_eq!(jump_bytes(&site, site.start + 5 - 0x8000_0000, &mut out), Ok(7));
    assert_eq!(
        jump_bytes(&site, site.start + 4 - 0x8000_0000, &mut out),
        Err(Decline::OutOfRange)
    );
}

#[test]
fn trap_declines() {
    // call rel32, jmp rel32, je rel32.
    assert_eq!(trap(&[0xe8, 0, 1, 0, 0], 1), Err(Decline::Branch));
    assert_eq!(trap(&[0xe9, 0, 1, 0, 0], 1), Err(Decline::Branch));
    assert_eq!(trap(&[0x0f, 0x84, 0, 1, 0, 0], 1), Err(Decline::Branch));
    // mov %gs:(%rsp),%rax: 5 bytes, so the 4 without the prefix are no candidate.
    assert_eq!(trap(&[0x65, 0x48, 0x8b, 0x04, 0x24], 1), Err(Decline::SegmentGs));
    // FS is fine (glibc's TLS): mov %fs:(%rsp),%rax.
    assert_eq!(
        trap(&[0x64, 0x48, 0x8b, 0x04, 0x24], 1).map(|s| s.pattern),
        Ok(Pattern::P2)
    );
    // Restorer, in both forms and whatever the bytes if %eax is 15.
    assert_eq!(trap(&[0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0], 15), Err(Decline::Restorer));
    assert_eq!(trap(&[0xb8, 0x0f, 0, 0, 0], 15), Err(Decline::Restorer));
    assert_eq!(trap(&GLIBC_SYSCALL, 15), Err(Decline::Restorer));
    assert_eq!(trap(&[0xb8, 0x27, 0, 0, 0, 0x0f, 0x05], 0x27), Err(Decline::BackToBack));
    assert_eq!(trap(&[0x31, 0xc0], 0), Err(Decline::Undecodable));
}

/// Assembles `nr` (P1) sites, for scan tests.
fn p1_site(code: &mut Vec<u8>, nr: u32) {
    code.push(0xb8);
    code.extend_from_slice(&nr.to_le_bytes());
    code.extend_from_slice(&SYSCALL);
}

#[test]
fn scan_small_function() {
    let base = 0x40_1000;
    let mut code = Vec::new();
    p1_site(&mut code, 39); // 0: A
    code.extend_from_slice(&[0x4c, 0x8b, 0x4c, 0x24, 0x08, 0x0f, 0x05]); // 7: B, syscall at 12
    code.extend_from_slice(&[0x48, 0x8b, 0x05, 0x10, 0, 0, 0, 0x0f, 0x05]); // 14: C, syscall at 21
    code.extend_from_slice(&[0x31, 0xc0, 0x0f, 0x05]); // 23: short, and P3 would take C's syscall
    code.extend_from_slice(&[0x65, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0, 0x0f, 0x05]); // 27: gs
    p1_site(&mut code, 15); // 38: restorer
    code.extend_from_slice(&[0x0f, 0x05]); // 45: back to back
    code.extend_from_slice(&[0x74, (9i32 - 49) as u8]); // 47: je 9, inside B
    code.extend_from_slice(&[0x75, (7i32 - 51) as u8]); // 49: jne 7, B's start: fine
    code.extend_from_slice(&[0xeb, (12i32 - 53) as u8]); // 51: jmp 12, B's syscall: fine
    code.extend_from_slice(&[0xe8, 0, 0, 0, 0, 0xc3]); // 53: call 58 (next), ret
    let got = scan_all(&code, base);
    let starts: Vec<_> = got
        .iter()
        .map(|(a, r)| (a - base, r.map(|s| (s.pattern, s.start - base, s.nr))))
        .collect();
    assert_eq!(
        starts,
        [
            (5, Ok((Pattern::P1, 0, Some(39)))),
            (12, Err(Decline::BranchTarget)),
            (21, Ok((Pattern::P2, 14, None))),
            (25, Err(Decline::BackToBack)),
            (36, Err(Decline::SegmentGs)),
            (43, Err(Decline::Restorer)),
            (45, Err(Decline::BackToBack)),
        ]
    );
    let mut accepted = Vec::new();
    scan_function(&code, base, &mut |s| accepted.push(s.start - base));
    assert_eq!(accepted, [0, 14]);
    assert_eq!(
        classify_in_function(&code, base, base + 21).map(|s| s.start),
        Ok(base + 14)
    );
    assert_eq!(classify_in_function(&code, base, base + 12), Err(Decline::BranchTarget));
    // syscall(3)-like site: P1W restorer, a function starting with syscall, an invalid
    // instruction (06 = push %es, not in 64-bit mode) ending the scan.
    let code = [
        0x0f, 0x05, 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05, 0x06, 0xb8, 1, 0, 0, 0, 0x0f, 0x05,
    ];
    let got: Vec<_> = scan_all(&code, base).into_iter().map(|(a, r)| (a - base, r)).collect();
    assert_eq!(got, [(0, Err(Decline::FunctionStart)), (9, Err(Decline::Restorer))]);
    // glibc's __restore_rt FDE starts inside the `nopl 0(%rax)` before it: misaligned, the
    // decode reaches the syscall after `00 00`, and the bytes still tell the restorer.
    let code = [0x00, 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05];
    assert_eq!(scan_all(&code, base), [(base + 8, Err(Decline::Restorer))]);
    assert_eq!(classify_in_function(&code, base, base + 8), Err(Decline::Restorer));
    assert_eq!(classify_in_function(&code, base, base + 7), Err(Decline::NotSyscall));
    assert_eq!(trap(&code[..8], 0x27), Err(Decline::Restorer));
    // A truncated instruction at the end ends the scan too.
    assert_eq!(scan_all(&[0xb8, 1, 0], base), []);
}

#[test]
fn scan_many_sites_in_batches() {
    // 150 sites: more than one batch. Backward jumps into sites 3 (first batch) and 140 (last).
    let base = 0x7000;
    let mut code = Vec::new();
    for nr in 0..150 {
        p1_site(&mut code, nr);
    }
    for victim in [3u64, 140] {
        let here = code.len() as u64;
        let target = victim * 7 + 2;
        code.push(0xe9);
        code.extend_from_slice(&((target as i64 - (here as i64 + 5)) as i32).to_le_bytes());
    }
    code.push(0xc3);
    let got = scan_all(&code, base);
    assert_eq!(got.len(), 150);
    for (i, (addr, r)) in got.iter().enumerate() {
        assert_eq!(*addr, base + i as u64 * 7 + 5);
        match i {
            3 | 140 => assert_eq!(*r, Err(Decline::BranchTarget)),
            15 => assert_eq!(*r, Err(Decline::Restorer)),
            _ => assert_eq!(r.map(|s| s.nr), Ok(Some(i as u32))),
        }
    }
}

#[test]
fn batches_keep_the_history() {
    // 64 sites fill the first batch; the 65th syscall follows the 64th directly. Each pass
    // decodes from the function's start, so the second batch still sees the one before it.
    let base = 0x7000;
    let mut code = Vec::new();
    for nr in 100..164 {
        p1_site(&mut code, nr);
    }
    code.extend_from_slice(&SYSCALL);
    code.extend_from_slice(&[0x48, 0x89, 0xc7, 0x31, 0xc0, 0x0f, 0x05, 0xc3]);
    let got = scan_all(&code, base);
    assert_eq!(got.len(), 66);
    assert_eq!(got[64], (base + 64 * 7, Err(Decline::BackToBack)));
    assert_eq!(
        got[65].1.map(|s| (s.pattern, s.start - base)),
        Ok((Pattern::P3, 64 * 7 + 2))
    );
}

/// glibc 2.36's `read`, shortened: `cmpb $0,__libc_single_threaded(%rip); je .Lcancel;
/// xor %eax,%eax; syscall` (P3 over 11 bytes) and, on the cancellable path, `mov
/// 0x8(%rsp),%edi; xor %eax,%eax; syscall` (P3 over 6 bytes).
const READ: [u8; 63] = [
    0x80, 0x3d, 0xd4, 0x6e, 0x0f, 0x00, 0x00, // 0: cmpb $0x0,0xf6ed4(%rip)
    0x74, 0x15, // 7: je 30
    0x31, 0xc0, // 9: xor %eax,%eax
    0x0f, 0x05, // 11: syscall
    0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, // 13: cmp $-4096,%rax
    0x77, 0x23, // 19: ja 56
    0xc3, // 21: ret
    0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, // 22: nopl 0x0(%rax,%rax,1)
    0x48, 0x83, 0xec, 0x28, // 30: sub $0x28,%rsp
    0x89, 0x7c, 0x24, 0x08, // 34: mov %edi,0x8(%rsp)
    0xe8, 0x00, 0x00, 0x00, 0x00, // 38: call 43
    0x8b, 0x7c, 0x24, 0x08, // 43: mov 0x8(%rsp),%edi
    0x31, 0xc0, // 47: xor %eax,%eax
    0x0f, 0x05, // 49: syscall
    0x48, 0x83, 0xc4, 0x28, // 51: add $0x28,%rsp
    0xc3, // 55: ret
    0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff, // 56: mov $-1,%rax
];

#[test]
fn p3_read() {
    let base = 0x7f00_0000_0000;
    let got = scan_all(&READ, base);
    let main = got[0].1.unwrap();
    assert_eq!(got[0].0, base + 11);
    assert_eq!(
        (main.pattern, main.start, main.len, main.nr),
        (Pattern::P3, base, 11, Some(0))
    );
    assert_eq!(main.bytes(), &READ[..11]);
    // cmpb 7 → 7, je rel8 2 → 6, xor 2 → 2.
    assert_eq!(main.lens, 0x22_62_77);
    let cancel = got[1].1.unwrap();
    assert_eq!(got[1].0, base + 49);
    assert_eq!(
        (cancel.pattern, cancel.start, cancel.len, cancel.nr, cancel.lens),
        (Pattern::P3, base + 43, 6, Some(0), 0x22_44)
    );
    assert_eq!(got.len(), 2);

    // Lazily, never P3: without bounds the run is not known.
    let mut b = [0xcc; 15];
    b[4..].copy_from_slice(&READ[..11]);
    assert!(!matches!(classify_trap(&b, &SYSCALL, base + 11, 0), Ok(s) if s.pattern == Pattern::P3));

    // The trampoline: the three instructions relocated, then lea/jmp.
    let (tramp, slot) = (base + 0x1234_5678, base + 0x1234_5000);
    let mut out = [0; 64];
    let n = trampoline(&main, tramp, slot, &mut out).unwrap();
    assert_eq!(n, 7 + 6 + 2 + 13);
    assert!(n <= TRAMPOLINE_MAX);
    let insns = decode_all(&out[..n], tramp);
    std::println!("P3: {}", insns.iter().map(gas).collect::<Vec<_>>().join("; "));
    assert_eq!(insns.len(), 5);
    assert_eq!(insns[0].code(), Code::Cmp_rm8_imm8);
    assert_eq!(insns[0].ip_rel_memory_address(), base + 7 + 0xf6ed4);
    assert_eq!(insns[0].immediate8(), 0);
    assert_eq!(insns[1].code(), Code::Je_rel32_64);
    assert_eq!(insns[1].near_branch_target(), base + 30);
    assert_eq!(insns[2].code(), Code::Xor_rm32_r32);
    assert_eq!(&out[13..15], [0x31, 0xc0]);
    check_tail(&insns[3..], &main, slot);

    // Every boundary of the trampoline maps back; nothing else does.
    let boundaries: Vec<_> = (0..=n as u64)
        .filter_map(|off| site_offset(main.lens, off).map(|o| (off, o)))
        .collect();
    assert_eq!(boundaries, [(0, 0), (7, 7), (13, 9), (15, 11), (22, 11)]);
    let mut off = 0;
    for insn in &insns {
        assert!(site_offset(main.lens, off).is_some());
        off += insn.len() as u64;
    }
    assert_eq!(site_offset(cancel.lens, 0), Some(0));
    assert_eq!(site_offset(cancel.lens, 4), Some(4));
    assert_eq!(site_offset(cancel.lens, 6), Some(6));
    assert_eq!(site_offset(cancel.lens, 13), Some(6));
    assert_eq!(site_offset(cancel.lens, 19), None);
    assert_eq!(site_offset(0, 0), None);

    // The jump: e9 rel32 and int3 over the rest of the cmpb it overlaps; the je and the xor
    // stay as they were (a branch to them runs them and the intact syscall).
    let mut jmp = [0; 15];
    assert_eq!(cover(&main), Ok(7));
    assert_eq!(jump_bytes(&main, tramp, &mut jmp), Ok(7));
    assert_eq!(jmp[5..7], [0xcc; 2]);
    assert_eq!(decode_all(&jmp[..5], base)[0].near_branch_target(), tramp);
}

/// A site's pattern, start (relative), len, nr and lens.
type Brief = (Pattern, u64, u8, Option<u32>, u64);

/// The sites (or declines) of a function `code` at 0x1000.
fn p3(code: &[u8]) -> Vec<(u64, Result<Brief, Decline>)> {
    scan_all(code, 0x1000)
        .into_iter()
        .map(|(a, r)| {
            (
                a - 0x1000,
                r.map(|s| (s.pattern, s.start - 0x1000, s.len, s.nr, s.lens)),
            )
        })
        .collect()
}

#[test]
fn p3_runs() {
    use Pattern::P3;
    // mov %rax,%rdi; mov %r8d,%eax: no static number.
    assert_eq!(
        p3(&[0x48, 0x89, 0xc7, 0x44, 0x89, 0xc0, 0x0f, 0x05]),
        [(6, Ok((P3, 0, 6, None, 0x33_33)))]
    );
    // mov $0xca,%eax; xor $0x80,%sil: the number is set before the last instruction, and only
    // the last one is looked at. (The run is the 4-byte xor and the 5-byte mov.)
    assert_eq!(
        p3(&[0xb8, 0xca, 0, 0, 0, 0x40, 0x80, 0xf6, 0x80, 0x0f, 0x05]),
        [(9, Ok((P3, 0, 9, None, 0x44_55)))]
    );
    // 33 c0 is xor %eax,%eax too.
    assert_eq!(
        p3(&[0x48, 0x89, 0xc7, 0x33, 0xc0, 0x0f, 0x05]),
        [(5, Ok((P3, 0, 5, Some(0), 0x22_33)))]
    );
    // Five one-byte nops: 5 bytes, 5 instructions.
    assert_eq!(
        p3(&[0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x0f, 0x05]),
        [(6, Ok((P3, 1, 5, None, 0x11_11_11_11_11)))]
    );
    // jne rel32 (kept at 6 bytes) to the syscall itself, which stays: fine.
    assert_eq!(
        p3(&[0x0f, 0x85, 0x02, 0, 0, 0, 0x31, 0xc0, 0x0f, 0x05]),
        [(8, Ok((P3, 0, 8, Some(0), 0x22_66)))]
    );
    // jmp rel8 out of the run, then code reached only from elsewhere: jmp becomes e9 rel32.
    let code = [0xeb, 0x10, 0x90, 0x90, 0x31, 0xc0, 0x0f, 0x05];
    assert_eq!(p3(&code), [(6, Ok((P3, 0, 6, Some(0), 0x22_11_11_52)))]);
    let site = scan_all(&code, 0x1000)[0].1.unwrap();
    let mut out = [0; 64];
    let n = trampoline(&site, 0x9000, 0x8000, &mut out).unwrap();
    let insns = decode_all(&out[..n], 0x9000);
    assert_eq!(
        (insns[0].code(), insns[0].near_branch_target()),
        (Code::Jmp_rel32_64, 0x1012)
    );
    assert_eq!(out[5..9], [0x90, 0x90, 0x31, 0xc0]);
    check_tail(&insns[4..], &site, 0x8000);
    assert_eq!(site_offset(site.lens, 5), Some(2));
    assert_eq!(site_offset(site.lens, 9), Some(6));
    // The last instruction a jcc (reached by falling through, it leads to the tail).
    assert_eq!(
        p3(&[0x48, 0x89, 0xc7, 0x75, 0x10, 0x0f, 0x05]),
        [(5, Ok((P3, 0, 5, None, 0x62_33)))]
    );
}

#[test]
fn p3_declines() {
    // At the function's start (__read_nocancel), or too few bytes before it.
    assert_eq!(p3(&[0x31, 0xc0, 0x0f, 0x05]), [(2, Err(Decline::TooShort))]);
    assert_eq!(p3(&[0x90, 0x31, 0xc0, 0x0f, 0x05]), [(3, Err(Decline::TooShort))]);
    // 14-byte nopw + xor: 16 bytes.
    let mut code = [0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0].to_vec();
    code.extend_from_slice(&[0x31, 0xc0, 0x0f, 0x05]);
    assert_eq!(decode_all(&code, 0)[0].len(), 14);
    assert_eq!(p3(&code), [(16, Err(Decline::TooShort))]);
    // With one byte less: 15, accepted.
    assert_eq!(p3(&code[1..])[0].1.map(|s| s.2), Ok(15));
    // A syscall in the run.
    assert_eq!(
        p3(&[0x0f, 0x05, 0x90, 0x31, 0xc0, 0x0f, 0x05]),
        [(0, Err(Decline::FunctionStart)), (5, Err(Decline::BackToBack))]
    );
    // call, loop, jrcxz, ret, a branch-hinted (3e) jcc, an indirect jmp: not relocatable.
    for insn in [
        &[0xe8, 0, 0, 0, 0][..],
        &[0xe2, 0x10],
        &[0xe3, 0x10],
        &[0xc3],
        &[0x3e, 0x74, 0x10],
        &[0xff, 0xe0],
    ] {
        let mut code = [0x48, 0x89, 0xc7].to_vec();
        code.extend_from_slice(insn);
        code.extend_from_slice(&[0x31, 0xc0, 0x0f, 0x05]);
        let at = code.len() as u64 - 2;
        assert_eq!(p3(&code), [(at, Err(Decline::Branch))], "{insn:x?}");
    }
    // %gs in the run; eip-relative in the run.
    assert_eq!(
        p3(&[0x65, 0x8b, 0x07, 0x89, 0xf8, 0x0f, 0x05]),
        [(5, Err(Decline::SegmentGs))]
    );
    assert_eq!(
        p3(&[0x67, 0x8b, 0x05, 0, 1, 0, 0, 0x31, 0xc0, 0x0f, 0x05]),
        [(9, Err(Decline::EipRelative))]
    );
    // A jcc of the run targeting the run: itself, the run's start, the next instruction.
    for target in [3i8, 0, 5] {
        let code = [0x48, 0x89, 0xc7, 0x74, (target - 5) as u8, 0x31, 0xc0, 0x0f, 0x05];
        assert_eq!(p3(&code), [(7, Err(Decline::BranchTarget))], "{target}");
    }
    // The same jcc to the syscall or past it: accepted.
    for target in [7i8, 9] {
        let code = [0x48, 0x89, 0xc7, 0x74, (target - 5) as u8, 0x31, 0xc0, 0x0f, 0x05];
        assert_eq!(p3(&code)[0].1.map(|s| s.0), Ok(Pattern::P3), "{target}");
    }
}

#[test]
fn p3_branch_targets() {
    // read, plus a jmp back to each offset of the function's start: inside the cmpb that
    // the site's jump overlaps (3) declines it; its start, the je and the xor after it
    // (intact: the jump replaces only the cmpb) and the syscall do not.
    for (target, ok) in [(0u64, true), (7, true), (9, true), (11, true), (3, false)] {
        let mut code = READ.to_vec();
        let here = code.len() as u64;
        code.push(0xe9);
        code.extend_from_slice(&((target as i64 - (here as i64 + 5)) as i32).to_le_bytes());
        let got = p3(&code);
        let expect = if ok {
            Ok(Pattern::P3)
        } else {
            Err(Decline::BranchTarget)
        };
        assert_eq!(got[0].1.map(|s| s.0), expect, "{target}");
        assert_eq!(got[1].1.map(|s| s.0), Ok(Pattern::P3));
    }
}

#[test]
fn p3_begins_earlier_for_a_branch_target() {
    // glibc's thread exit: mov $60,%edx; xchg %ax,%ax; L: xor %edi,%edi; mov %edx,%eax;
    // syscall; jmp L. The shortest run (xchg, xor, mov) has L inside its jump's 5 bytes; the
    // run from the mov $60 does not (its jump overlaps the mov alone).
    let code = [
        0xba,
        0x3c,
        0,
        0,
        0,
        0x66,
        0x90,
        0x31,
        0xff,
        0x89,
        0xd0,
        0x0f,
        0x05,
        0xeb,
        (7i32 - 15) as u8,
    ];
    let got = p3(&code);
    assert_eq!(got.len(), 1);
    let (pattern, start, len, nr, lens) = got[0].1.unwrap();
    assert_eq!((got[0].0, pattern, start, len, nr), (11, Pattern::P3, 0, 11, None));
    assert_eq!(lens, 0x22_22_22_55);
    let site = scan_all(&code, 0x1000)[0].1.unwrap();
    assert_eq!(cover(&site), Ok(5));
    let mut jmp = [0; 15];
    assert_eq!(jump_bytes(&site, 0x9000, &mut jmp), Ok(5));
    // A target inside the mov $60 too: no run is left.
    let mut code2 = code.to_vec();
    code2.extend_from_slice(&[0xeb, (2i32 - 17) as u8]);
    assert_eq!(p3(&code2)[0].1, Err(Decline::BranchTarget));
    // Without the mov $60 before it (the function starts at the xchg): declined.
    assert_eq!(
        p3(&[0x66, 0x90, 0x31, 0xff, 0x89, 0xd0, 0x0f, 0x05, 0xeb, (2i32 - 10) as u8])[0].1,
        Err(Decline::BranchTarget)
    );
}

#[test]
fn p3_trampoline_errors() {
    // mov %rax,%rdi; je +0x40; xor %eax,%eax.
    let code = [0x48, 0x89, 0xc7, 0x74, 0x40, 0x31, 0xc0, 0x0f, 0x05];
    let base = 0x7f00_0000_0000;
    let site = scan_all(&code, base)[0].1.unwrap();
    assert_eq!((site.pattern, site.lens), (Pattern::P3, 0x22_62_33));
    let target = base + 5 + 0x40;
    let mut out = [0; 64];
    // The je's rel32 ends at tramp + 9: the lowest trampoline from which it reaches.
    let lowest = target - 9 - 0x7fff_ffff;
    assert!(trampoline(&site, lowest, target, &mut out).is_ok());
    let insns = decode_all(&out[..3 + 6], lowest);
    assert_eq!(insns[1].near_branch_target(), target);
    assert_eq!(
        trampoline(&site, lowest - 1, target, &mut out),
        Err(Decline::OutOfRange)
    );
    // lens that do not match the bytes, or claim more instructions.
    for lens in [0, 0x22_22_33, 0x22_66_33, 0x11_22_62_33, 0x62_33] {
        let bad = Site { lens, ..site };
        assert_eq!(
            trampoline(&bad, base, base, &mut out),
            Err(Decline::InvalidSite),
            "{lens:#x}"
        );
    }
    // Several instructions are P3 only; so are branches.
    for pattern in [Pattern::P1, Pattern::P1W, Pattern::P2] {
        let bad = Site { pattern, ..site };
        assert_eq!(trampoline(&bad, base, base, &mut out), Err(Decline::InvalidSite));
    }
    let mut insn = [0; 15];
    insn[..5].copy_from_slice(&[0x0f, 0x85, 0x10, 0, 0]);
    let jcc = Site {
        pattern: Pattern::P2,
        len: 5,
        insn,
        lens: 0x55,
        ..site
    };
    assert_eq!(trampoline(&jcc, base, base, &mut out), Err(Decline::Undecodable));
    let jmp = Site {
        insn: [0xe9, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ..jcc
    };
    assert_eq!(trampoline(&jmp, base, base, &mut out), Err(Decline::Branch));
    // The same jmp as a (one-instruction) P3: relocated.
    let jmp = Site {
        pattern: Pattern::P3,
        ..jmp
    };
    assert_eq!(trampoline(&jmp, base, base, &mut out), Ok(5 + 13));
    // A P3 branch into its own run, handed in directly.
    let mut insn = [0; 15];
    insn[..5].copy_from_slice(&[0x48, 0x89, 0xc7, 0x74, 0xfb]);
    let into = Site {
        len: 5,
        insn,
        lens: 0x62_33,
        nr: None,
        ..site
    };
    assert_eq!(trampoline(&into, base, base, &mut out), Err(Decline::BranchTarget));
}

#[test]
fn syscall_bytes() {
    let mut at = Vec::new();
    find_syscall_bytes(&[0x0f, 0x05, 0x0f, 0x0f, 0x05, 0x05, 0x0f], &mut |o| at.push(o));
    assert_eq!(at, [0, 3]);
    find_syscall_bytes(&[], &mut |_| panic!());
    find_syscall_bytes(&[0x0f], &mut |_| panic!());
}

/// The 16 values `%eax` can take while the immediate bytes of `b8 i` are replaced by `r`.
fn mixes(i: u32, r: u32) -> impl Iterator<Item = u32> {
    (0..16u32).map(move |mask| {
        let pick = |byte: u32| if mask & (1 << byte) != 0 { r } else { i };
        (0..4)
            .map(|byte| pick(byte) & (0xff << (8 * byte)))
            .fold(0, |a, b| a | b)
    })
}

#[test]
fn live_p1_every_number() {
    let start = 0x7f12_3456_7001;
    let base = start + 5;
    for nr in 0..512u32 {
        let mut insn = [0; 15];
        insn[..5].copy_from_slice(&[0xb8, nr as u8, (nr >> 8) as u8, 0, 0]);
        let site = Site {
            pattern: Pattern::P1,
            start,
            len: 5,
            nr: Some(nr),
            insn,
            lens: 0x55,
            pad: 0,
        };
        for from in [
            base - 0x7000_0000,
            base - 3,
            base,
            base + 0x1_0000 + nr as u64 * 77,
            base + 0x7fff_0000,
        ] {
            let t = next_live_p1_addr(&site, from).unwrap();
            assert!(t >= from && t - from < 0x300, "nr {nr} from {from:#x}: {t:#x}");
            assert!(live_p1_ok(&site, t));
            assert!((from..t).all(|a| !live_p1_ok(&site, a)), "nr {nr}: not the smallest");
            let r = t.wrapping_sub(base) as u32;
            for m in mixes(nr, r).filter(|&m| m != nr) {
                assert!(m >= 512, "nr {nr} tramp {t:#x}: mix {m:#x}");
            }
            let mut jmp = [0; 15];
            jump_bytes(&site, t, &mut jmp).unwrap();
            assert_eq!(u32::from_le_bytes(jmp[1..5].try_into().unwrap()), r);
        }
    }
    let site = trap(&[0xb8, 0x27, 0, 0, 0], 0x27).unwrap();
    // Near the top of the range: nothing acceptable above it.
    assert_eq!(
        next_live_p1_addr(&site, site.start + 5 + 0x7fff_ff00),
        Some(site.start + 5 + 0x7fff_ff27)
    );
    assert_eq!(next_live_p1_addr(&site, site.start + 5 + 0x7fff_ff28), None);
    assert!(!live_p1_ok(&site, site.start + 5 + 0x1_0000_0227));
    // Far below the range: the first acceptable address within it.
    let low = next_live_p1_addr(&site, 0).unwrap();
    assert_eq!(low, site.start + 5 - 0x8000_0000 + 0x227);
    // Not live-patchable: P1W, P2, numbers >= 512.
    let p1w = trap(&[0x48, 0xc7, 0xc0, 0x3c, 0, 0, 0], 60).unwrap();
    assert!(!live_p1_ok(&p1w, p1w.start + 5 + 0x23c) && next_live_p1_addr(&p1w, 0).is_none());
    let big = trap(&[0xb8, 0, 2, 0, 0], 512).unwrap();
    assert!(next_live_p1_addr(&big, 0).is_none());
}

/// Cheap deterministic pseudo-random bytes.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u8 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 56) as u8
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    let mut rng = Lcg(1);
    let mut code = [0u8; 256];
    for round in 0..20_000u32 {
        for b in code.iter_mut() {
            *b = match rng.next() % 8 {
                0 => 0x0f,
                1 => 0x05,
                2 => 0xb8,
                _ => rng.next(),
            };
        }
        let mut b15 = [0; 15];
        b15.copy_from_slice(&code[..15]);
        let addr = u64::from(round).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let eax = u32::from_le_bytes(code[11..15].try_into().unwrap());
        if let Ok(site) = classify_trap(&b15, &SYSCALL, addr, eax) {
            let mut out = [0; 64];
            let _ = trampoline(&site, addr.wrapping_add(0x1000), addr, &mut out);
        }
        scan_function(&code, addr, &mut |site| {
            let mut out = [0; 64];
            let _ = trampoline(&site, addr.wrapping_sub(0x1000), addr, &mut out);
            let mut jmp = [0; 15];
            let _ = jump_bytes(&site, u64::MAX, &mut jmp);
        });
        find_syscall_bytes(&code, &mut |_| {});
        let _ = EhFrameHdr::parse(&code, addr).map(|h| h.containing(addr));
        // P4: the first bytes as the previous function, the rest (often starting as
        // __read_nocancel does, after a `ret` and padding) as the next one.
        let split = 8 + usize::from(rng.next() % 128);
        if round % 2 == 0 {
            code[split - 6..split].copy_from_slice(&[0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc]);
            code[split..split + 4].copy_from_slice(&[0x31, 0xc0, 0x0f, 0x05]);
        }
        let (prev, next) = code.split_at(split);
        // Near the top of the address space as well.
        let at = if round % 3 == 0 { u64::MAX - 300 } else { addr };
        scan_function_padded(next, at.wrapping_add(split as u64), Some((prev, at)), &mut |site| {
            let mut out = [0; 64];
            let _ = trampoline(&site, at.wrapping_sub(0x1000), at, &mut out);
            let mut jmp = [0; 15];
            let _ = jump_bytes(&site, u64::MAX, &mut jmp);
            let _ = pad_jump_bytes(&site, 0);
        });
    }
}

/// Where the previous function starts in the P4 tests.
const PREV: u64 = 0x7f00_0040_0000;

/// `mov %rdi,%rax; ret`, then `int3` up to 16 bytes: P (the padding's start) is at +4.
const PREV_RET: [u8; 16] = [
    0x48, 0x89, 0xf8, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
];

/// `__read_nocancel`: `xor %eax,%eax; syscall; ret`.
const NOCANCEL: [u8; 5] = [0x31, 0xc0, 0x0f, 0x05, 0xc3];

/// All `syscall`s of `next`, placed right after `prev` (which starts at [`PREV`]), scanned with
/// `prev` as the previous function; addresses relative to `next`'s start.
fn p4(prev: &[u8], next: &[u8]) -> Vec<(u64, Result<Site, Decline>)> {
    let base = PREV + prev.len() as u64;
    let mut v = Vec::new();
    scan_function_padded_with_declines(next, base, Some((prev, PREV)), &mut |a, r| v.push((a - base, r)));
    // The same sites from scan_function_padded, and from the plain scan but for P4.
    let mut accepted = Vec::new();
    scan_function_padded(next, base, Some((prev, PREV)), &mut |s| accepted.push(s));
    let ok: Vec<Site> = v.iter().filter_map(|(_, r)| r.ok()).collect();
    assert_eq!(accepted, ok);
    let plain = scan_all(next, base);
    assert_eq!(plain.len(), v.len());
    for ((a, r), (pa, pr)) in v.iter().zip(&plain) {
        assert_eq!(*a, pa - base);
        match r {
            Ok(s) if s.pattern == Pattern::P4 => assert_eq!(*pr, Err(Decline::TooShort)),
            Err(Decline::Padding) => assert_eq!(*pr, Err(Decline::TooShort)),
            _ if *pr == Err(Decline::TooShort) => {}
            _ => assert_eq!(r, pr),
        }
    }
    v
}

/// The P4 verdict for the first `syscall` of `next` after `prev`: (pattern, len, nr, lens, pad
/// relative to `next`'s start) or the decline.
fn p4_first(prev: &[u8], next: &[u8]) -> Result<(Pattern, u8, Option<u32>, u64, i64), Decline> {
    let base = PREV + prev.len() as u64;
    p4(prev, next)[0]
        .1
        .map(|s| (s.pattern, s.len, s.nr, s.lens, s.pad as i64 - base as i64))
}

#[test]
fn p4_read_nocancel() {
    use Pattern::P4;
    let base = PREV + 16;
    let got = p4(&PREV_RET, &NOCANCEL);
    assert_eq!(got.len(), 1);
    let site = got[0].1.unwrap();
    assert_eq!(
        (
            got[0].0,
            site.pattern,
            site.start,
            site.len,
            site.nr,
            site.lens,
            site.pad
        ),
        (2, P4, base, 2, Some(0), 0x22, PREV + 4)
    );
    assert_eq!(site.bytes(), [0x31, 0xc0]);
    assert_eq!((site.sys_addr(), site.ret_addr()), (base + 2, base + 4));
    // Without the previous function: as before.
    assert_eq!(scan_all(&NOCANCEL, base), [(base + 2, Err(Decline::TooShort))]);
    let mut none = 0;
    scan_function_padded(&NOCANCEL, base, None, &mut |_| none += 1);
    scan_function(&NOCANCEL, base, &mut |_| none += 1);
    assert_eq!(none, 0);
    // Lazily, never P4.
    let mut b = [0xcc; 15];
    b[13..].copy_from_slice(&[0x31, 0xc0]);
    assert_eq!(classify_trap(&b, &SYSCALL, base + 2, 0), Err(Decline::Undecodable));

    // The padding as glibc has it before __read_nocancel: `call __stack_chk_fail; nopl
    // 0x0(%rax,%rax,1)`; and `ret; cs nopw 0x0(%rax,%rax,1); xchg %ax,%ax` before the next.
    let call_nopl = [0xe8, 0, 1, 0, 0, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0];
    assert_eq!(p4_first(&call_nopl, &NOCANCEL), Ok((P4, 2, Some(0), 0x22, -8)));
    let ret_nopw = [0xc3, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x66, 0x90];
    assert_eq!(p4_first(&ret_nopw, &NOCANCEL), Ok((P4, 2, Some(0), 0x22, -12)));
    // Every other kind of padding and of unconditional transfer.
    let paddings: [&[u8]; 6] = [
        &[0x90; 5],
        &[0x66, 0x90, 0x90, 0x66, 0x90],
        &[0x0f, 0x1f, 0x44, 0, 0],
        &[0x66, 0x0f, 0x1f, 0x44, 0, 0],
        &[0x48, 0x90, 0x0f, 0x1f, 0x00],
        &[0xcc, 0x90, 0xcc, 0x0f, 0x1f, 0x40, 0],
    ];
    let ends: [&[u8]; 9] = [
        &[0xc3],
        &[0xc2, 0x08, 0],
        &[0xf3, 0xc3],
        &[0xeb, 0x80],
        &[0xe9, 0, 0, 1, 0],
        &[0xff, 0xe0],
        &[0xff, 0xd0],
        &[0x0f, 0x0b],
        &[0xf4],
    ];
    for end in ends {
        for pad in paddings {
            let prev = [&[0x48, 0x89, 0xf8][..], end, pad].concat();
            let expect = -(pad.len() as i64);
            assert_eq!(p4_first(&prev, &NOCANCEL).map(|s| s.4), Ok(expect), "{end:x?} {pad:x?}");
        }
    }
    // The previous function is all padding but its first instruction.
    assert_eq!(
        p4_first(&[0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc], &NOCANCEL).map(|s| s.4),
        Ok(-5)
    );
}

#[test]
fn p4_runs() {
    use Pattern::P4;
    // endbr64: 4 bytes, no number.
    assert_eq!(
        p4_first(&PREV_RET, &[0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x05]),
        Ok((P4, 4, None, 0x44, -12))
    );
    // mov %edi,%eax; nop: two instructions. 33 c0 after a nop: number 0.
    assert_eq!(
        p4_first(&PREV_RET, &[0x89, 0xf8, 0x90, 0x0f, 0x05]),
        Ok((P4, 3, None, 0x11_22, -12))
    );
    assert_eq!(
        p4_first(&PREV_RET, &[0x90, 0x33, 0xc0, 0x0f, 0x05]),
        Ok((P4, 3, Some(0), 0x22_11, -12))
    );
    // The second syscall of the function is classified as before (P3 reaches back over the
    // first one: back to back), and a 5-byte run is still P3, without a pad.
    let got = p4(&PREV_RET, &[0x31, 0xc0, 0x0f, 0x05, 0x90, 0x31, 0xc0, 0x0f, 0x05]);
    assert_eq!(got[0].1.map(|s| s.pattern), Ok(P4));
    assert_eq!(got[1], (7, Err(Decline::BackToBack)));
    let got = p4(&PREV_RET, &[0x48, 0x89, 0xf8, 0x31, 0xc0, 0x0f, 0x05]);
    assert_eq!(got[0].1.map(|s| (s.pattern, s.pad)), Ok((Pattern::P3, 0)));
    // A branch from this function to the function's start, to the syscall, past it: fine.
    for target in [0i8, 2, 4] {
        let next = [0x31, 0xc0, 0x0f, 0x05, 0x74, (target - 6) as u8, 0xc3];
        assert_eq!(p4_first(&PREV_RET, &next).map(|s| s.0), Ok(P4), "{target}");
    }
    // And from the previous function to this one's start (a tail call) or its syscall.
    for target in [16i8, 18] {
        let prev = [
            0x74,
            (target - 2) as u8,
            0x90,
            0xc3,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
        ];
        assert_eq!(p4_first(&prev, &NOCANCEL).map(|s| s.4), Ok(-12), "{target}");
    }
}

#[test]
fn p4_declines() {
    // The previous function does not end in an unconditional transfer: a mov, a jcc, a
    // syscall, an int $0x80 (int3 is padding: a function of only int3s has no last one).
    for end in [&[0x48, 0x89, 0xf8][..], &[0x75, 0x10], &[0x0f, 0x05], &[0xcd, 0x80]] {
        let prev = [&[0xc3][..], end, &[0xcc; 8]].concat();
        assert_eq!(p4_first(&prev, &NOCANCEL), Err(Decline::Padding), "{end:x?}");
    }
    assert_eq!(p4_first(&[0xcc; 8], &NOCANCEL), Err(Decline::Padding));
    assert_eq!(p4_first(&[0x90; 8], &NOCANCEL), Err(Decline::Padding));
    // `pause` (f3 90), `0f 1f /1` and `xchg %eax,%r8d` (41 90) are no padding.
    for not_pad in [&[0xf3, 0x90][..], &[0x0f, 0x1f, 0x48, 0x00], &[0x41, 0x90]] {
        let prev = [&[0xc3][..], not_pad, &[0xcc; 6]].concat();
        assert_eq!(p4_first(&prev, &NOCANCEL), Err(Decline::Padding), "{not_pad:x?}");
    }
    // Padding too short: 4 bytes, then 5 is enough.
    assert_eq!(p4_first(&PREV_RET[..8], &NOCANCEL), Err(Decline::Padding));
    assert_eq!(p4_first(&PREV_RET[..9], &NOCANCEL).map(|s| s.4), Ok(-5));
    // Out of rel8 reach: `eb` at start jumps to start + 2 + rel8, rel8 >= -128. P at start - 126
    // is the farthest.
    for (padding, ok) in [(126usize, true), (127, false), (200, false)] {
        let prev = [&[0xc3][..], &std::vec![0xcc; padding]].concat();
        let expect = if ok {
            Ok(-(padding as i64))
        } else {
            Err(Decline::Padding)
        };
        assert_eq!(p4_first(&prev, &NOCANCEL).map(|s| s.4), expect, "{padding}");
    }
    // The previous function's decode does not end at the start: an invalid instruction (06),
    // a truncated one (b8 01), or the bytes and address disagree.
    assert_eq!(
        p4_first(&[0x06, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc], &NOCANCEL),
        Err(Decline::Padding)
    );
    assert_eq!(
        p4_first(&[0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xb8, 0x01], &NOCANCEL),
        Err(Decline::Padding)
    );
    let mut v = Vec::new();
    scan_function_padded_with_declines(&NOCANCEL, PREV + 17, Some((&PREV_RET, PREV)), &mut |_, r| v.push(r));
    assert_eq!(v, [Err(Decline::Padding)]);

    // A branch of the previous function into the padding: to P, to the last byte before the
    // start; and into the run (start + 1).
    for target in [4i8, 15, 17] {
        let prev = [
            0x74,
            (target - 2) as u8,
            0x90,
            0xc3,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
            0xcc,
        ];
        assert_eq!(p4_first(&prev, &NOCANCEL), Err(Decline::BranchTarget), "{target}");
    }
    // A branch of this function into the padding or into the run.
    for target in [-12i8, -1, 1] {
        let next = [0x31, 0xc0, 0x0f, 0x05, 0xc3, 0xeb, (target - 7) as u8];
        assert_eq!(p4_first(&PREV_RET, &next), Err(Decline::BranchTarget), "{target}");
    }
    // ... but not below the padding.
    let next = [0x31, 0xc0, 0x0f, 0x05, 0xc3, 0xeb, (-13i8 - 7) as u8];
    assert_eq!(p4_first(&PREV_RET, &next).map(|s| s.0), Ok(Pattern::P4));
    // A run that is not relocatable: a branch (jmp to the syscall), a %gs access, a 1-byte run.
    assert_eq!(p4_first(&PREV_RET, &[0xeb, 0x00, 0x0f, 0x05]), Err(Decline::Branch));
    assert_eq!(
        p4_first(&PREV_RET, &[0x65, 0x8b, 0x07, 0x0f, 0x05]),
        Err(Decline::SegmentGs)
    );
    assert_eq!(p4_first(&PREV_RET, &[0x90, 0x0f, 0x05]), Err(Decline::TooShort));
    assert_eq!(p4_first(&PREV_RET, &[0x0f, 0x05]), Err(Decline::FunctionStart));
    // The run is checked before the padding.
    assert_eq!(p4_first(&[0x90; 8], &[0xeb, 0x00, 0x0f, 0x05]), Err(Decline::Branch));
}

#[test]
fn p4_round_trip() {
    let base = PREV + 16;
    let site = p4(&PREV_RET, &NOCANCEL)[0].1.unwrap();
    let (tramp, slot) = (base + 0x3000_0040, base + 0x3000_0000);
    // Memory as the runtime leaves it: pad jump first, then the site.
    let mut mem = [&PREV_RET[..], &NOCANCEL].concat();
    let pad = pad_jump_bytes(&site, tramp).unwrap();
    let at = (site.pad - PREV) as usize;
    mem[at..at + 5].copy_from_slice(&pad);
    let mut jmp = [0; 15];
    assert_eq!(jump_bytes(&site, tramp, &mut jmp), Ok(2));
    assert_eq!(jmp[..2], [0xeb, 0xf2]);
    mem[16..18].copy_from_slice(&jmp[..2]);
    assert_eq!(mem[18..20], SYSCALL);
    // eb → pad, pad → trampoline.
    let short = decode_all(&mem[16..18], base)[0];
    assert_eq!(
        (short.code(), short.near_branch_target()),
        (Code::Jmp_rel8_64, site.pad)
    );
    let far = decode_all(&mem[at..at + 5], site.pad)[0];
    assert_eq!((far.code(), far.near_branch_target()), (Code::Jmp_rel32_64, tramp));
    // The rest of the padding is untouched padding.
    assert!(mem[at + 5..16].iter().all(|&b| b == 0xcc));
    // The trampoline: xor, lea S_ret, jmp *slot.
    let mut out = [0; 64];
    let n = trampoline(&site, tramp, slot, &mut out).unwrap();
    assert_eq!(n, 2 + 13);
    let insns = decode_all(&out[..n], tramp);
    std::println!("P4: {}", insns.iter().map(gas).collect::<Vec<_>>().join("; "));
    assert_eq!(insns[0].code(), Code::Xor_rm32_r32);
    assert_eq!(&out[..2], [0x31, 0xc0]);
    check_tail(&insns[1..], &site, slot);
    assert_eq!(site_offset(site.lens, 0), Some(0));
    assert_eq!(site_offset(site.lens, 2), Some(2));
    assert_eq!(site_offset(site.lens, 9), Some(2));
    assert_eq!(site_offset(site.lens, 1), None);

    // A 3-instruction run with a RIP-relative operand is impossible (7 bytes); a 4-byte,
    // two-instruction run is relocated as is, and its int3 fill is 2 bytes.
    let next = [0x89, 0xf8, 0x89, 0xc7, 0x0f, 0x05];
    let site = p4(&PREV_RET, &next)[0].1.unwrap();
    let n = trampoline(&site, tramp, slot, &mut out).unwrap();
    assert_eq!(&out[..4], &next[..4]);
    check_tail(&decode_all(&out[..n], tramp)[2..], &site, slot);
    assert_eq!(jump_bytes(&site, tramp, &mut jmp), Ok(4));
    assert_eq!(jmp[..4], [0xeb, 0xf2, 0xcc, 0xcc]);
}

#[test]
fn p4_emit_errors() {
    let base = PREV + 16;
    let site = p4(&PREV_RET, &NOCANCEL)[0].1.unwrap();
    let mut jmp = [0; 15];
    // The trampoline within ±2 GiB of the pad (not of the site).
    let up = site.pad + 5 + 0x7fff_ffff;
    assert!(pad_jump_bytes(&site, up).is_ok() && jump_bytes(&site, up, &mut jmp).is_ok());
    assert_eq!(pad_jump_bytes(&site, up + 1), Err(Decline::OutOfRange));
    assert_eq!(jump_bytes(&site, up + 1, &mut jmp), Err(Decline::OutOfRange));
    // The pad: as far as rel8 reaches, no farther; not overlapping the site.
    for (pad, expect) in [
        (base + 2 - 128, Ok(0x80)),
        (base + 1 - 128, Err(Decline::OutOfRange)),
        (base - 5, Ok(0xf9)),
        (base - 4, Err(Decline::InvalidSite)),
        (u64::MAX - 2, Err(Decline::InvalidSite)),
    ] {
        let s = Site { pad, ..site };
        assert_eq!(jump_bytes(&s, pad, &mut jmp).map(|_| jmp[1]), expect, "{pad:#x}");
        assert_eq!(pad_jump_bytes(&s, pad).map(|_| ()), expect.map(|_| ()), "{pad:#x}");
    }
    // Malformed: a P4 of 1 or 5 bytes, a pad jump for another pattern.
    for len in [1, 5] {
        let s = Site { len, ..site };
        assert_eq!(jump_bytes(&s, base, &mut jmp), Err(Decline::InvalidSite));
        assert_eq!(pad_jump_bytes(&s, base), Err(Decline::InvalidSite));
        assert!(s.bytes().is_empty());
    }
    let p1 = trap(&[0xb8, 0x27, 0, 0, 0], 0x27).unwrap();
    assert_eq!(p1.pad, 0);
    assert_eq!(
        pad_jump_bytes(
            &Site {
                pad: p1.start - 100,
                ..p1
            },
            SYS
        ),
        Err(Decline::InvalidSite)
    );
    // A P4 with a branch handed in directly: not relocated.
    let mut insn = [0; 15];
    insn[..2].copy_from_slice(&[0xeb, 0x00]);
    let s = Site { insn, ..site };
    let mut out = [0; 64];
    assert_eq!(trampoline(&s, base, base, &mut out), Err(Decline::Branch));
}
