//! Survey of this machine's glibc (and ld.so): every function containing `0f 05` is scanned,
//! every site found is classified lazily too, and its jump and trampoline are built and
//! decoded back. `cargo test -p strata-patch --test survey -- --nocapture` prints the counts.

use iced_x86::{Code, Decoder, DecoderOptions, Formatter, GasFormatter, Instruction};
use object::{Object, ObjectSection};
use std::collections::BTreeMap;
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
        scan_function_with_declines(code, start, &mut |sys, result| {
            assert_eq!(classify_in_function(code, start, sys), result);
            check_site(&mut s, td, ta, sys, result)
        });
    }
    Some(s)
}

fn check_site(s: &mut Survey, td: &[u8], ta: u64, sys: u64, result: Result<Site, Decline>) {
    let at = (sys - ta) as usize;
    let before: [u8; 15] = td[at - 15..at].try_into().unwrap();
    let after: [u8; 2] = td[at..at + 2].try_into().unwrap();
    let site = match result {
        Err(d) => {
            *s.declines.entry(d.reason()).or_default() += 1;
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
    *s.patterns.entry(format!("{:?}", site.pattern)).or_default() += 1;
    match classify_trap(&before, &after, sys, site.nr.unwrap_or(39)) {
        Ok(lazy) => {
            assert_eq!(lazy, site, "lazy and eager disagree at {sys:#x}");
            s.lazy_agrees += 1;
        }
        Err(d) => {
            // The lazy rules are stricter: a P1/P1W whose previous instruction happens to end
            // in a prefix-like byte is declined, a P2 may have several candidate boundaries.
            assert!(
                site.pattern == Pattern::P2 || d == Decline::Prefix,
                "lazy declines {site:x?}: {d:?}"
            );
            *s.lazy_declines.entry((site.pattern, d.reason())).or_default() += 1;
        }
    }
    // The jump and a trampoline 1 GiB above, decoded back.
    let (tramp, slot) = (site.start + 0x4000_0040, site.start + 0x4000_0000);
    let mut jmp = [0; 15];
    assert_eq!(jump_bytes(&site, tramp, &mut jmp), Ok(site.len as usize));
    let mut out = [0; 64];
    let n = trampoline(&site, tramp, slot, &mut out).unwrap();
    let decoded: Vec<Instruction> = Decoder::with_ip(64, &out[..n], tramp, DecoderOptions::NONE)
        .into_iter()
        .collect();
    let original = Decoder::with_ip(64, site.bytes(), site.start, DecoderOptions::NONE).decode();
    assert_eq!(decoded.len(), 3);
    if site.pattern == Pattern::P2 {
        let mut text = format!("{:#x}: ", site.start);
        GasFormatter::new().format(&original, &mut text);
        s.p2.push(text);
    }
    assert_eq!(decoded[0].code(), original.code());
    if original.is_ip_rel_memory_operand() {
        assert_eq!(decoded[0].ip_rel_memory_address(), original.ip_rel_memory_address());
    } else {
        assert_eq!(&out[..site.len as usize], site.bytes());
    }
    assert_eq!(
        (decoded[1].code(), decoded[1].ip_rel_memory_address()),
        (Code::Lea_r64_m, site.ret_addr())
    );
    assert_eq!(
        (decoded[2].code(), decoded[2].ip_rel_memory_address()),
        (Code::Jmp_rm64, slot)
    );
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
}
