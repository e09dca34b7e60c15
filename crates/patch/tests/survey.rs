//! Survey of this machine's glibc (and ld.so): every function containing `0f 05` is scanned,
//! every site found is classified lazily too, and its jump and trampoline are built and
//! decoded back. `cargo test -p strata-patch --test survey -- --nocapture` prints the counts.

use iced_x86::{
    Code, Decoder, DecoderOptions, Formatter, GasFormatter, Instruction, InstructionInfoFactory, OpAccess, OpKind,
    Register,
};
use object::{Object, ObjectSection, ObjectSymbol};
use std::collections::{BTreeMap, BTreeSet};
use strata_patch::*;

#[derive(Default, Debug)]
struct Survey {
    raw_0f05: usize,
    functions: usize,
    patterns: BTreeMap<String, usize>,
    declines: BTreeMap<&'static str, usize>,
    /// Lazy classification of the eagerly accepted sites: agreeing, or declining (pattern, why).
    lazy_agrees: usize,
    lazy_declines: BTreeMap<(Pattern, &'static str), usize>,
    /// Sites the scan declined but `classify_trap` would accept (wrong boundaries): all P2.
    lazy_false_accepts: Vec<String>,
    /// The P2 instructions, formatted.
    p2: Vec<String>,
    /// The P3 runs, formatted.
    p3: Vec<String>,
    /// `syscall`s whose previous instruction (decoded from the function's start) is shorter
    /// than 5 bytes: all TooShort before P3.
    short: BTreeSet<u64>,
    /// P3 sites without a static number whose run sets `%eax` to a constant (`mov $n,%eax`
    /// not last): what tracking writes to `%eax` through the run would add.
    p3_nr_by_tracking: usize,
    /// P3 sites with an interior boundary that a direct branch anywhere in `.text` targets
    /// (e.g. from a `.cold` part, outside the function the scan sees).
    p3_foreign_targets: Vec<String>,
    /// The short sites still declined, with why.
    short_declined: Vec<String>,
    /// Every accepted site.
    sites: Vec<Site>,
    /// `read`'s address and size, from `.dynsym`.
    read: Option<(u64, u64)>,
    /// `syscall`s after 2..=4 bytes from their function's start (TooShort without the
    /// previous function): P4 candidates.
    head: usize,
    /// Why the scan with the previous function still declines some of them (address, reason).
    p4_declined: Vec<(u64, Decline)>,
    /// The P4 runs, formatted.
    p4: Vec<String>,
    /// How many bytes of padding before each P4's function, from the pad jump on.
    p4_padding: BTreeMap<u64, usize>,
    /// Every function of the table, as if it began with `xor %eax,%eax; syscall`: how many
    /// times the padding before it is usable for P4, or why not.
    padding_verdicts: BTreeMap<&'static str, usize>,
    /// `__read_nocancel`'s address: from `.symtab`, `.dynsym`, or the first function starting
    /// with `xor %eax,%eax; syscall`.
    read_nocancel: Option<(u64, &'static str)>,
}

impl Survey {
    fn accepted(&self) -> usize {
        self.patterns.values().sum()
    }
}

fn survey(path: &str) -> Option<Survey> {
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).expect("ELF");
    let text = file.section_by_name(".text").expect(".text");
    let hdr = file.section_by_name(".eh_frame_hdr").expect(".eh_frame_hdr");
    let hdr_bytes = hdr.data().unwrap();
    let hdr = EhFrameHdr::parse(hdr_bytes, hdr.address()).expect("supported .eh_frame_hdr");
    let (ta, td) = (text.address(), text.data().unwrap());
    let text_end = ta + td.len() as u64;

    let mut s = Survey::default();
    let mut offsets = Vec::new();
    find_syscall_bytes(td, &mut |o| offsets.push(o));
    s.raw_0f05 = offsets.len();
    s.read = file
        .dynamic_symbols()
        .find(|sym| matches!(sym.name(), Ok("read" | "__read")))
        .map(|sym| (sym.address(), sym.size()));
    s.read_nocancel = find_read_nocancel(&file, &hdr, ta, td);
    let mut last_fn = None;
    for o in offsets {
        let Some((start, next)) = hdr.containing(ta + o as u64) else {
            continue;
        };
        if last_fn == Some(start) || start < ta {
            continue;
        }
        last_fn = Some(start);
        s.functions += 1;
        let end = next.unwrap_or(text_end).min(text_end);
        let code = &td[(start - ta) as usize..(end - ta) as usize];
        let mut prev_len = None;
        for insn in Decoder::with_ip(64, code, start, DecoderOptions::NONE) {
            if insn.is_invalid() {
                break;
            }
            if insn.code() == Code::Syscall && prev_len.is_some_and(|l| l < 5) {
                s.short.insert(insn.ip());
            }
            prev_len = Some(insn.len());
        }
        let mut plain = Vec::new();
        scan_function_with_declines(code, start, &mut |sys, result| {
            assert_eq!(classify_in_function(code, start, sys), result);
            plain.push((sys, result));
            check_site(&mut s, td, ta, sys, result)
        });
        // Again with the previous function (from the table's order): the same verdicts but
        // for the syscalls after 2..=4 bytes from the start.
        let prev = hdr
            .containing(start - 1)
            .filter(|&(p, next)| p >= ta && next == Some(start))
            .map(|(p, _)| (&td[(p - ta) as usize..(start - ta) as usize], p));
        let mut padded = Vec::new();
        scan_function_padded_with_declines(code, start, prev, &mut |sys, result| padded.push((sys, result)));
        assert_eq!(padded.len(), plain.len());
        let mut accepted = Vec::new();
        scan_function_padded(code, start, prev, &mut |site| accepted.push(site));
        assert_eq!(accepted, padded.iter().filter_map(|(_, r)| r.ok()).collect::<Vec<_>>());
        for ((sys, result), (psys, presult)) in padded.into_iter().zip(plain) {
            assert_eq!(sys, psys);
            let head = presult == Err(Decline::TooShort) && (2..5).contains(&(sys - start));
            if head {
                // Counted as TooShort by check_site: counted again below, as P4 or the decline.
                s.head += 1;
                let too_short = s.declines.get_mut(Decline::TooShort.reason()).unwrap();
                *too_short -= 1;
                if *too_short == 0 {
                    s.declines.remove(Decline::TooShort.reason());
                }
                s.short_declined.retain(|d| !d.starts_with(&format!("{sys:#x}:")));
            }
            match result {
                Ok(site) if site.pattern == Pattern::P4 => {
                    assert!(head, "{site:x?}");
                    check_p4(&mut s, td, ta, site);
                }
                Err(d) if head => {
                    *s.declines.entry(d.reason()).or_default() += 1;
                    s.short_declined.push(format!("{sys:#x}: {d:?}"));
                    s.p4_declined.push((sys, d));
                }
                _ => assert_eq!(result, presult, "{sys:#x}"),
            }
        }
    }
    foreign_targets(&mut s, &hdr, ta, td);
    padding_everywhere(&mut s, &hdr, ta, td);
    Some(s)
}

/// The P4 padding rules on every pair of neighbouring functions of `.text`: the real previous
/// function, and `xor %eax,%eax; syscall; ret` in place of the next one. Each padding accepted
/// must be padding in the file, from the pad to the function's start.
fn padding_everywhere(s: &mut Survey, hdr: &EhFrameHdr, ta: u64, td: &[u8]) {
    let text_end = ta + td.len() as u64;
    for i in 1..hdr.len() {
        let (prev, start) = (hdr.start(i - 1).unwrap(), hdr.start(i).unwrap());
        if prev < ta || prev >= start || start + 5 > text_end {
            continue;
        }
        let prev_code = &td[(prev - ta) as usize..(start - ta) as usize];
        let mut verdict = Err(Decline::InvalidSite);
        let next = [0x31, 0xc0, 0x0f, 0x05, 0xc3];
        scan_function_padded_with_declines(&next, start, Some((prev_code, prev)), &mut |_, r| verdict = r);
        let key = match verdict {
            Ok(site) => {
                assert_eq!(site.pattern, Pattern::P4);
                let padding = &td[(site.pad - ta) as usize..(start - ta) as usize];
                assert!(padding.len() >= 5 && start + 2 - site.pad <= 128);
                let mut end = site.pad;
                for insn in Decoder::with_ip(64, padding, site.pad, DecoderOptions::NONE) {
                    assert!(
                        matches!(
                            insn.code(),
                            Code::Int3
                                | Code::Nopw
                                | Code::Nopd
                                | Code::Nopq
                                | Code::Nop_rm16
                                | Code::Nop_rm32
                                | Code::Nop_rm64
                        ),
                        "{site:x?}: {insn}"
                    );
                    end = insn.next_ip();
                }
                assert_eq!(end, start);
                "usable"
            }
            Err(d) => d.reason(),
        };
        *s.padding_verdicts.entry(key).or_default() += 1;
    }
}

/// Every direct branch of every function in `.text` whose target lies inside the bytes a P3
/// site's jump replaces ([`cover`]; the rest of a run stays as it was).
fn foreign_targets(s: &mut Survey, hdr: &EhFrameHdr, ta: u64, td: &[u8]) {
    let text_end = ta + td.len() as u64;
    let p3: Vec<&Site> = s.sites.iter().filter(|s| s.pattern == Pattern::P3).collect();
    for i in 0..hdr.len() {
        let start = hdr.start(i).unwrap();
        let end = hdr.start(i + 1).unwrap_or(text_end).min(text_end);
        if start < ta || start >= end {
            continue;
        }
        let code = &td[(start - ta) as usize..(end - ta) as usize];
        for insn in Decoder::with_ip(64, code, start, DecoderOptions::NONE) {
            if insn.is_invalid() {
                break;
            }
            if !matches!(insn.op0_kind(), OpKind::NearBranch64) {
                continue;
            }
            let t = insn.near_branch_target();
            for site in p3
                .iter()
                .filter(|site| t > site.start && t < site.start + cover(site).unwrap() as u64)
            {
                s.p3_foreign_targets
                    .push(format!("{:#x} -> {t:#x} (site {:#x})", insn.ip(), site.start));
            }
        }
    }
}

/// Whether `insn` writes (part of) `%rax`, from iced's register usage.
fn writes_rax(info: &mut InstructionInfoFactory, insn: &Instruction) -> bool {
    info.info(insn).used_registers().iter().any(|r| {
        r.register().full_register() == Register::RAX
            && !matches!(r.access(), OpAccess::Read | OpAccess::CondRead | OpAccess::NoMemAccess)
    })
}

fn check_site(s: &mut Survey, td: &[u8], ta: u64, sys: u64, result: Result<Site, Decline>) {
    let at = (sys - ta) as usize;
    let before: [u8; 15] = td[at - 15..at].try_into().unwrap();
    let after: [u8; 2] = td[at..at + 2].try_into().unwrap();
    let site = match result {
        Err(d) => {
            *s.declines.entry(d.reason()).or_default() += 1;
            if s.short.contains(&sys) {
                s.short_declined.push(format!("{sys:#x}: {d:?}"));
            }
            // Lazily, the worst case is %eax equal to whatever a `b8` before it would load.
            let eax = if before[10] == 0xb8 {
                u32::from_le_bytes(before[11..].try_into().unwrap())
            } else {
                39
            };
            if let Ok(lazy) = classify_trap(&before, &after, sys, eax) {
                assert_eq!(lazy.pattern, Pattern::P2, "{sys:#x}: {lazy:x?}");
                s.lazy_false_accepts
                    .push(format!("{sys:#x} ({}): lazily {lazy:x?}", d.reason()));
            }
            return;
        }
        Ok(site) => site,
    };
    assert_eq!(site.sys_addr(), sys);
    assert_eq!(site.pattern == Pattern::P3, s.short.contains(&sys), "{site:x?}");
    s.sites.push(site);
    *s.patterns.entry(format!("{:?}", site.pattern)).or_default() += 1;
    match classify_trap(&before, &after, sys, site.nr.unwrap_or(39)) {
        Ok(lazy) if site.pattern == Pattern::P3 => {
            // Never P3 lazily: any acceptance has a wrong boundary.
            assert_eq!(lazy.pattern, Pattern::P2, "{sys:#x}: {lazy:x?}");
            s.lazy_false_accepts.push(format!("{sys:#x} (P3): lazily {lazy:x?}"));
        }
        Ok(lazy) => {
            assert_eq!(lazy, site, "lazy and eager disagree at {sys:#x}");
            s.lazy_agrees += 1;
        }
        Err(d) => {
            // The lazy rules are stricter: a P1/P1W whose previous instruction happens to end
            // in a prefix-like byte is declined, a P2 may have several candidate boundaries, a
            // P3 is never seen.
            assert!(
                matches!(site.pattern, Pattern::P2 | Pattern::P3) || d == Decline::Prefix,
                "lazy declines {site:x?}: {d:?}"
            );
            *s.lazy_declines.entry((site.pattern, d.reason())).or_default() += 1;
        }
    }
    // The jump and a trampoline 1 GiB above, decoded back.
    let (tramp, slot) = (site.start + 0x4000_0040, site.start + 0x4000_0000);
    let mut jmp = [0; 15];
    let n = cover(&site).unwrap();
    assert!(n >= 5 && n <= site.len as usize);
    assert_eq!(
        n < site.len as usize,
        site.pattern == Pattern::P3 && n < site.len as usize
    );
    assert_eq!(jump_bytes(&site, tramp, &mut jmp), Ok(n));
    assert!(jmp[5..n].iter().all(|&b| b == 0xcc));
    let mut out = [0; 64];
    let n = trampoline(&site, tramp, slot, &mut out).unwrap();
    assert!(n <= TRAMPOLINE_MAX);
    let decoded: Vec<Instruction> = Decoder::with_ip(64, &out[..n], tramp, DecoderOptions::NONE)
        .into_iter()
        .collect();
    let original: Vec<Instruction> = Decoder::with_ip(64, site.bytes(), site.start, DecoderOptions::NONE)
        .into_iter()
        .collect();
    assert_eq!(decoded.len(), original.len() + 2);
    assert!(original.len() == 1 || site.pattern == Pattern::P3);
    let text = original
        .iter()
        .map(|i| {
            let mut t = String::new();
            GasFormatter::new().format(i, &mut t);
            t
        })
        .collect::<Vec<_>>()
        .join("; ");
    match site.pattern {
        Pattern::P2 => s.p2.push(format!("{:#x}: {text}", site.start)),
        Pattern::P3 => {
            s.p3.push(format!("{:#x}: {text} (nr {:?})", site.start, site.nr));
            let mut info = InstructionInfoFactory::new();
            let last_write = original.iter().rev().find(|i| writes_rax(&mut info, i));
            if site.nr.is_none()
                && last_write.is_some_and(|i| matches!(i.code(), Code::Mov_r32_imm32 | Code::Mov_rm64_imm32))
                && last_write.is_some_and(|i| i.op0_register() == Register::EAX || i.op0_register() == Register::RAX)
            {
                s.p3_nr_by_tracking += 1;
            }
        }
        _ => {}
    }
    let (mut off, mut orig_off) = (0u64, 0u64);
    for (i, (d, o)) in decoded.iter().zip(&original).enumerate() {
        assert_eq!(site_offset(site.lens, off), Some(orig_off), "{site:x?}");
        assert_eq!(
            (site.lens >> (8 * i)) & 0xff,
            (d.len() << 4 | o.len()) as u64,
            "{site:x?}"
        );
        if o.is_jcc_short_or_near() || o.is_jmp_short_or_near() {
            assert_eq!(site.pattern, Pattern::P3);
            assert_eq!(
                (d.mnemonic(), d.near_branch_target()),
                (o.mnemonic(), o.near_branch_target())
            );
            assert!(matches!(d.code(), Code::Jmp_rel32_64) || d.is_jcc_near());
        } else {
            assert_eq!(d.code(), o.code());
            if o.is_ip_rel_memory_operand() {
                assert_eq!(d.ip_rel_memory_address(), o.ip_rel_memory_address());
            } else {
                let (a, b) = (off as usize, (o.ip() - site.start) as usize);
                assert_eq!(&out[a..a + o.len()], &site.bytes()[b..b + o.len()]);
            }
        }
        off += d.len() as u64;
        orig_off += o.len() as u64;
    }
    assert_eq!(orig_off, u64::from(site.len));
    assert_eq!(site_offset(site.lens, off), Some(orig_off));
    assert_eq!(site_offset(site.lens, off + 7), Some(orig_off));
    assert_eq!(site_offset(site.lens, off + 13), None);
    let tail = &decoded[original.len()..];
    assert_eq!(
        (tail[0].code(), tail[0].ip_rel_memory_address()),
        (Code::Lea_r64_m, site.ret_addr())
    );
    assert_eq!(
        (tail[1].code(), tail[1].ip_rel_memory_address()),
        (Code::Jmp_rm64, slot)
    );
}

/// `__read_nocancel`: from `.symtab` if the file has one, else `.dynsym` (GLIBC_PRIVATE),
/// else the first function of `.eh_frame_hdr` that starts with `31 c0 0f 05`.
fn find_read_nocancel(file: &object::File, hdr: &EhFrameHdr, ta: u64, td: &[u8]) -> Option<(u64, &'static str)> {
    let named = |mut syms: object::SymbolIterator| {
        syms.find(|sym| sym.name() == Ok("__read_nocancel"))
            .map(|sym| sym.address())
    };
    if let Some(a) = named(file.symbols()) {
        return Some((a, ".symtab"));
    }
    if let Some(a) = named(file.dynamic_symbols()) {
        return Some((a, ".dynsym"));
    }
    let text_end = ta + td.len() as u64;
    (0..hdr.len())
        .filter_map(|i| hdr.start(i))
        .filter(|&a| a >= ta && a + 4 <= text_end)
        .find(|&a| td[(a - ta) as usize..][..4] == [0x31, 0xc0, 0x0f, 0x05])
        .map(|a| (a, "first function starting with 31 c0 0f 05"))
}

/// A P4 site: the padding in the file, the short jump, the pad jump and the trampoline.
fn check_p4(s: &mut Survey, td: &[u8], ta: u64, site: Site) {
    let sys = site.sys_addr();
    assert!((2..=4).contains(&site.len) && site.pad + 5 <= site.start && site.start + 2 - site.pad <= 128);
    assert_eq!(&td[(sys - ta) as usize..][..2], SYSCALL);
    assert_eq!(&td[(site.start - ta) as usize..][..site.len as usize], site.bytes());
    // From the pad jump to the function's start: padding instructions only, ending at the start.
    let padding = &td[(site.pad - ta) as usize..(site.start - ta) as usize];
    let mut end = site.pad;
    for insn in Decoder::with_ip(64, padding, site.pad, DecoderOptions::NONE) {
        assert!(
            matches!(
                insn.code(),
                Code::Int3 | Code::Nopw | Code::Nopd | Code::Nopq | Code::Nop_rm16 | Code::Nop_rm32 | Code::Nop_rm64
            ),
            "{site:x?}: {insn} in the padding"
        );
        end = insn.next_ip();
    }
    assert_eq!(end, site.start, "{site:x?}");
    *s.p4_padding.entry(site.start).or_default() = padding.len();
    s.sites.push(site);
    *s.patterns.entry(format!("{:?}", site.pattern)).or_default() += 1;
    // Lazily never P4: the run is too short for anything but a wrong boundary.
    let at = (sys - ta) as usize;
    let before: [u8; 15] = td[at - 15..at].try_into().unwrap();
    let after: [u8; 2] = td[at..at + 2].try_into().unwrap();
    if let Ok(lazy) = classify_trap(&before, &after, sys, site.nr.unwrap_or(39)) {
        assert_eq!(lazy.pattern, Pattern::P2, "{sys:#x}: {lazy:x?}");
        s.lazy_false_accepts.push(format!("{sys:#x} (P4): lazily {lazy:x?}"));
    }
    // `eb` at the start reaches the pad, the pad jump the trampoline 1 GiB above.
    let (tramp, slot) = (site.pad + 0x4000_0040, site.pad + 0x4000_0000);
    let mut jmp = [0; 15];
    assert_eq!(jump_bytes(&site, tramp, &mut jmp), Ok(site.len as usize));
    assert!(jmp[2..site.len as usize].iter().all(|&b| b == 0xcc));
    let short = Decoder::with_ip(64, &jmp[..2], site.start, DecoderOptions::NONE).decode();
    assert_eq!(
        (short.code(), short.near_branch_target()),
        (Code::Jmp_rel8_64, site.pad)
    );
    let pad = pad_jump_bytes(&site, tramp).unwrap();
    let far = Decoder::with_ip(64, &pad, site.pad, DecoderOptions::NONE).decode();
    assert_eq!((far.code(), far.near_branch_target()), (Code::Jmp_rel32_64, tramp));
    let mut out = [0; 64];
    let n = trampoline(&site, tramp, slot, &mut out).unwrap();
    let decoded: Vec<Instruction> = Decoder::with_ip(64, &out[..n], tramp, DecoderOptions::NONE)
        .into_iter()
        .collect();
    let original: Vec<Instruction> = Decoder::with_ip(64, site.bytes(), site.start, DecoderOptions::NONE)
        .into_iter()
        .collect();
    assert_eq!(decoded.len(), original.len() + 2);
    assert_eq!(&out[..site.len as usize], site.bytes());
    let mut off = 0;
    for (d, o) in decoded.iter().zip(&original) {
        assert_eq!(site_offset(site.lens, off), Some(off));
        assert_eq!(d.code(), o.code());
        off += d.len() as u64;
    }
    assert_eq!(site_offset(site.lens, off), Some(u64::from(site.len)));
    let tail = &decoded[original.len()..];
    assert_eq!(
        (tail[0].code(), tail[0].ip_rel_memory_address()),
        (Code::Lea_r64_m, site.ret_addr())
    );
    assert_eq!(
        (tail[1].code(), tail[1].ip_rel_memory_address()),
        (Code::Jmp_rm64, slot)
    );
    let text = original
        .iter()
        .map(|i| {
            let mut t = String::new();
            GasFormatter::new().format(i, &mut t);
            t
        })
        .collect::<Vec<_>>()
        .join("; ");
    s.p4.push(format!(
        "{:#x}: {text} (nr {:?}, pad {:#x}, {} bytes of padding)",
        site.start,
        site.nr,
        site.pad,
        site.start - site.pad
    ));
}

fn print(path: &str, s: &Survey) {
    println!(
        "{path}: {} `0f 05` bytes in .text, {} functions scanned",
        s.raw_0f05, s.functions
    );
    println!("  accepted {}: {:?}", s.accepted(), s.patterns);
    println!("  declined {}: {:?}", s.declines.values().sum::<usize>(), s.declines);
    println!("  P2: {}", s.p2.join(" | "));
    println!(
        "  P3: {} of the {} syscalls after a short instruction; {} with a static number, {} more \
         if writes to %eax were tracked through the run; {} interior boundaries targeted from \
         elsewhere in .text",
        s.patterns.get("P3").copied().unwrap_or(0),
        s.short.len(),
        s.sites
            .iter()
            .filter(|s| s.pattern == Pattern::P3 && s.nr.is_some())
            .count(),
        s.p3_nr_by_tracking,
        s.p3_foreign_targets.len()
    );
    for p in &s.p3 {
        println!("    {p}");
    }
    println!("  short sites still declined: {}", s.short_declined.join(", "));
    println!(
        "  P4: {} of the {} syscalls after 2..=4 bytes from their function's start; declined: {:x?}",
        s.patterns.get("P4").copied().unwrap_or(0),
        s.head,
        s.p4_declined
    );
    for p in &s.p4 {
        println!("    {p}");
    }
    println!("  __read_nocancel: {:x?}", s.read_nocancel);
    println!(
        "  padding before every function of .text, were it to start with xor; syscall: {:?}",
        s.padding_verdicts
    );
    for f in &s.p3_foreign_targets {
        println!("    foreign branch into a P3 run: {f}");
    }
    println!(
        "  classify_trap on accepted sites: {} agree, declines {:?}",
        s.lazy_agrees, s.lazy_declines
    );
    println!(
        "  classify_trap accepting declined sites (wrong boundaries): {}",
        s.lazy_false_accepts.len()
    );
    for f in &s.lazy_false_accepts {
        println!("    {f}");
    }
}

#[test]
fn libc() {
    let path = "/lib/x86_64-linux-gnu/libc.so.6";
    let Some(s) = survey(path) else {
        println!("{path} not found: survey skipped");
        return;
    };
    print(path, &s);
    let p1 = s.patterns.get("P1").copied().unwrap_or(0);
    assert!(s.accepted() > 300, "{s:?}");
    assert!(p1 * 100 > s.accepted() * 80, "{s:?}");
    assert_eq!(s.declines.get(Decline::Restorer.reason()), Some(&1), "__restore_rt");
    // P3: most of the formerly short sites, and read's.
    let p3 = s.patterns.get("P3").copied().unwrap_or(0);
    assert!(p3 >= 40, "only {p3} P3 sites of {} short ones", s.short.len());
    let (read, size) = s.read.expect("read in .dynsym");
    let main = s
        .sites
        .iter()
        .filter(|site| site.start >= read && site.start < read + size.max(1))
        .min_by_key(|site| site.start)
        .expect("a site in read");
    println!("read at {read:#x}: {main:x?}");
    assert_eq!((main.pattern, main.nr), (Pattern::P3, Some(0)), "{main:x?}");
    assert!(s.p3_foreign_targets.is_empty(), "{:?}", s.p3_foreign_targets);
    check_read_nocancel(&s);
}

/// `__read_nocancel` is P4 with number 0 (when it starts with `xor %eax,%eax; syscall`).
fn check_read_nocancel(s: &Survey) {
    let (addr, how) = s.read_nocancel.expect("__read_nocancel");
    let site = s
        .sites
        .iter()
        .find(|site| site.start == addr)
        .unwrap_or_else(|| panic!("no site at __read_nocancel {addr:#x} ({how}): {:x?}", s.p4_declined));
    println!("__read_nocancel at {addr:#x} ({how}): {site:x?}");
    assert_eq!(
        (site.pattern, site.nr, site.len),
        (Pattern::P4, Some(0), 2),
        "{site:x?}"
    );
}

#[test]
fn ld_so() {
    let path = "/lib64/ld-linux-x86-64.so.2";
    let Some(s) = survey(path) else {
        println!("{path} not found: survey skipped");
        return;
    };
    print(path, &s);
    assert!(s.accepted() > 0);
    check_read_nocancel(&s);
}
