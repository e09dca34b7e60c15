//! Invariants of `strata_loader::{classify, plan, head_needed}` that must hold
//! for every input. Shared by the cargo-fuzz target (`fuzz_targets/plan.rs`)
//! and the seed replay test (`crates/loader/tests/fuzz_seeds.rs`), both of
//! which include this file with `#[path]`.
//!
//! Only what `crates/loader/src/lib.rs` actually guarantees is asserted. The
//! checks on an `Ok(Plan)` re-read the program headers from the raw bytes
//! (independently of the `object` crate) and compare field by field.

use strata_loader::{classify, head_needed, plan, Kind, LoadError, Plan, MAX_SEGMENTS, PAGE, PROBE_LEN};

const ELFMAG: &[u8; 4] = b"\x7fELF";
const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_PHDR: u32 = 6;
const PT_GNU_STACK: u32 = 0x6474_e551;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
/// check_segment's TASK_SIZE in lib.rs.
const TASK_SIZE: u64 = 0x7fff_ffff_f000;

/// The file sizes one input is planned with: its own length, a smaller and a
/// larger size derived from bytes 8..16 (EI_ABIVERSION and EI_PAD, which plan
/// never looks at, so mutating them changes only the size), and u64::MAX (so
/// that a 4 KiB head of a real binary plans `Ok` without the fuzzer first
/// having to guess the file size).
pub fn sizes(data: &[u8]) -> [u64; 4] {
    let len = data.len() as u64;
    let k = match data.get(8..16) {
        Some(b) => u64::from_le_bytes(b.try_into().unwrap()),
        None => data.iter().fold(0u64, |a, &b| a.rotate_left(8) ^ b as u64),
    };
    let smaller = len - k % (len + 1);
    let larger = len.saturating_add(k);
    [smaller, len, larger, u64::MAX]
}

/// Runs every check on one input.
pub fn check(data: &[u8]) {
    check_classify(data);
    check_head_needed(data);
    let sizes = sizes(data);
    let mut results: [Option<Result<Plan<'_>, LoadError>>; 4] = [None; 4];
    for (i, &fs) in sizes.iter().enumerate() {
        let r = plan(data, fs);
        // Pure: the same answer twice.
        assert_eq!(r, plan(data, fs));
        match &r {
            Ok(p) => check_plan(data, fs, p),
            Err(e) => check_error(data, e),
        }
        check_head_needed_suffices(data, fs, &r);
        results[i] = Some(r);
    }
    check_file_size_monotone(data, &sizes, &results);
}

fn check_error(data: &[u8], e: &LoadError) {
    let m = e.message();
    assert!(!m.is_empty() && !m.contains('\n'), "bad message {m:?}");
    assert_eq!(e.errno(), 8);
    match e {
        LoadError::NotExecutableFormat => assert!(!data.starts_with(ELFMAG)),
        LoadError::Elf32 => assert_eq!(data[4], 1),
        LoadError::BigEndian => assert!(data[4] == 2 && data[5] != 1),
        LoadError::WrongMachine(m) => {
            assert_ne!(*m, 62);
            assert_eq!(u16::from_le_bytes([data[18], data[19]]), *m);
        }
        LoadError::NotAnExecutable(t) => {
            assert!(*t != 2 && *t != 3);
            assert_eq!(u16::from_le_bytes([data[16], data[17]]), *t);
        }
        LoadError::BadShebang => panic!("plan() returned BadShebang"),
        LoadError::BadHeader(_) | LoadError::Truncated => {}
    }
}

fn u16_at(d: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(d[o..o + 2].try_into().unwrap())
}
fn u32_at(d: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(d[o..o + 4].try_into().unwrap())
}
fn u64_at(d: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(d[o..o + 8].try_into().unwrap())
}

/// Where `sub` starts inside `data`, asserting that it is a subslice.
fn offset_in(data: &[u8], sub: &[u8]) -> usize {
    let base = data.as_ptr() as usize;
    let p = sub.as_ptr() as usize;
    assert!(
        p >= base && p + sub.len() <= base + data.len(),
        "slice does not borrow from the input"
    );
    p - base
}

fn check_plan(data: &[u8], file_size: u64, p: &Plan<'_>) {
    // It is an ELF file as classify() sees it, with a header plan() accepts.
    assert_eq!(classify(data), Ok(Kind::Elf));
    assert!(data.len() >= 64);
    assert_eq!((data[4], data[5], data[6]), (2, 1, 1), "class, data, version");
    assert_eq!(u16_at(data, 18), 62, "e_machine");
    let ty = u16_at(data, 16);
    assert!(ty == 2 || ty == 3);
    assert_eq!(p.pie, ty == 3);
    assert_eq!(p.entry, u64_at(data, 24));
    assert_eq!(p.phoff, u64_at(data, 32));
    assert_eq!(u16_at(data, 54), 56, "e_phentsize");
    assert_eq!(p.phnum, u16_at(data, 56));
    assert!(p.phnum >= 1 && p.phnum as usize * 56 <= 65536);
    // The program headers were read from `data`, and lie inside the file.
    let phend = p.phoff + p.phnum as u64 * 56;
    assert!(phend <= file_size);
    assert!(phend <= data.len() as u64);
    // object returns no program headers at all for e_phoff == 0, and a plan
    // needs a PT_LOAD.
    assert!(p.phoff != 0);

    // Segments.
    assert!((1..=MAX_SEGMENTS).contains(&p.nsegments), "nsegments {}", p.nsegments);
    let segs = p.segments();
    assert_eq!(segs.len(), p.nsegments);
    let mut prev_end = 0u64;
    for s in segs {
        assert!(s.filesz <= s.memsz, "{s:?}");
        assert_eq!(s.vaddr % PAGE, s.offset % PAGE, "{s:?}");
        let end = s.vaddr.checked_add(s.memsz).expect("vaddr + memsz overflows");
        assert!(end <= TASK_SIZE, "{s:?}");
        let fend = s.offset.checked_add(s.filesz).expect("offset + filesz overflows");
        assert!(fend <= file_size, "{s:?} beyond file_size {file_size}");
        assert!(s.prot <= 7);
        // In order and not overlapping (byte-wise; pages may be shared).
        assert!(s.vaddr >= prev_end, "{s:?} overlaps the previous segment");
        prev_end = end;
        assert!(s.map_start() <= s.vaddr && end <= s.map_end());
        assert_eq!(s.map_start() % PAGE, 0);
        assert_eq!(s.map_end() % PAGE, 0);
    }
    // The unused tail of the array is untouched.
    assert!(p.segments[p.nsegments..].iter().all(|s| *s == Default::default()));
    assert!(p.lo() <= p.hi());
    assert_eq!(p.lo(), segs[0].map_start());
    assert!(p.hi() <= TASK_SIZE);
    if !p.pie {
        assert!(p.lo() >= PAGE, "ET_EXEC mapped at page 0");
    }

    // Re-read the program headers from the raw bytes and compare.
    let mut loads = 0usize;
    let mut pt_phdr = None;
    let mut exec_stack = false;
    let mut interp = None;
    for i in 0..p.phnum as usize {
        let o = p.phoff as usize + i * 56;
        let ph = &data[o..o + 56];
        let (ty, flags) = (u32_at(ph, 0), u32_at(ph, 4));
        let (off, vaddr, filesz, memsz) = (u64_at(ph, 8), u64_at(ph, 16), u64_at(ph, 32), u64_at(ph, 40));
        match ty {
            PT_LOAD => {
                let s = segs[loads];
                assert_eq!((s.vaddr, s.memsz, s.offset, s.filesz), (vaddr, memsz, off, filesz));
                let prot =
                    (flags & PF_R != 0) as u32 | ((flags & PF_W != 0) as u32) << 1 | ((flags & PF_X != 0) as u32) << 2;
                assert_eq!(s.prot, prot);
                loads += 1;
            }
            PT_INTERP => {
                assert!(interp.is_none(), "two PT_INTERP accepted");
                interp = Some((off, filesz));
            }
            PT_PHDR => pt_phdr = Some(vaddr),
            PT_GNU_STACK => exec_stack = flags & PF_X != 0,
            _ => {}
        }
    }
    assert_eq!(loads, p.nsegments);
    assert_eq!(p.exec_stack, exec_stack);

    // PT_INTERP: a NUL-terminated path inside the file and inside `data`.
    match (interp, p.interp) {
        (None, None) => {}
        (Some((off, len)), Some(path)) => {
            assert!((2..=4096).contains(&len));
            assert!(off + len <= file_size);
            assert_eq!(offset_in(data, path), off as usize);
            assert_eq!(path.len() as u64, len - 1);
            assert!(!path.is_empty() && !path.contains(&0));
            assert_eq!(data[(off + len - 1) as usize], 0);
        }
        (a, b) => panic!("PT_INTERP {a:?} but plan.interp {b:?}"),
    }

    // phdr_vaddr: PT_PHDR's p_vaddr if there is one (unchecked: the code
    // trusts it), else the address where the first segment that maps the
    // program headers' file range puts them.
    match pt_phdr {
        Some(v) => assert_eq!(p.phdr_vaddr, Some(v)),
        None => {
            let expect = segs
                .iter()
                .find(|s| s.offset <= p.phoff && phend <= s.offset + s.filesz)
                .map(|s| s.vaddr + (p.phoff - s.offset));
            assert_eq!(p.phdr_vaddr, expect);
            if let Some(v) = p.phdr_vaddr {
                // Inside some segment's file-backed range, with room for
                // all the program headers.
                assert!(segs
                    .iter()
                    .any(|s| s.vaddr <= v && v + p.phnum as u64 * 56 <= s.vaddr + s.filesz));
            }
        }
    }
}

/// For a given head, plan() is Ok for exactly the file sizes that reach the
/// end of the program headers, of every PT_LOAD's file range and of the
/// PT_INTERP string, and the plan does not depend on the size otherwise.
fn check_file_size_monotone(data: &[u8], sizes: &[u64; 4], results: &[Option<Result<Plan<'_>, LoadError>>; 4]) {
    let top = results[3].unwrap();
    assert_eq!(sizes[3], u64::MAX);
    match top {
        Ok(p) => {
            let mut need = p.phoff + p.phnum as u64 * 56;
            for s in p.segments() {
                need = need.max(s.offset + s.filesz);
            }
            if let Some(path) = p.interp {
                need = need.max((offset_in(data, path) + path.len() + 1) as u64);
            }
            for (fs, r) in sizes.iter().zip(results) {
                let r = r.unwrap();
                if *fs >= need {
                    assert_eq!(r, Ok(p), "file_size {fs} >= {need} but plan differs");
                } else {
                    assert!(r.is_err(), "file_size {fs} < {need} but plan is Ok");
                }
            }
        }
        Err(_) => {
            // Ok for a smaller size would be Ok for u64::MAX too.
            for r in results {
                assert!(r.unwrap().is_err());
            }
        }
    }
}

/// head_needed() is at least 64, and reading more never makes it shrink:
/// with only the ELF header it names the end of the program headers; with
/// those in hand, the end of the PT_INTERP string too.
fn check_head_needed(data: &[u8]) {
    let n = head_needed(data);
    assert!(n >= 64);
    if data.len() >= 64 {
        assert!(head_needed(&data[..64]) <= n);
    } else {
        assert_eq!(n, 64);
    }
}

fn check_head_needed_suffices(data: &[u8], fs: u64, full: &Result<Plan<'_>, LoadError>) {
    let n = head_needed(data);
    if full.is_ok() {
        // plan() read the program headers from `data`.
        assert!(n <= data.len(), "plan Ok but head_needed {n} > {}", data.len());
    }
    if data.len() < 64 || n > data.len() {
        return;
    }
    // Giving plan() exactly head_needed() bytes changes nothing.
    let cut = plan(&data[..n], fs);
    assert!(
        cut == *full,
        "plan(head[..head_needed]) = {cut:?}, plan(head) = {full:?}"
    );
}

/// classify() looks at PROBE_LEN bytes at most, and a script's interpreter
/// and argument are words of the first line that fit the runtime's
/// PROBE_LEN-byte line buffer with a NUL after each.
fn check_classify(data: &[u8]) {
    let r = classify(data);
    assert_eq!(r, classify(&data[..data.len().min(PROBE_LEN)]));
    let blank = |c: &u8| *c == b' ' || *c == b'\t';
    match r {
        Ok(Kind::Elf) => assert!(data.starts_with(ELFMAG)),
        Ok(Kind::Script { interp, arg }) => {
            assert!(data.starts_with(b"#!"));
            let io = offset_in(data, interp);
            assert!(io >= 2 && io + interp.len() <= PROBE_LEN);
            assert!(!interp.is_empty());
            assert!(!interp.iter().any(|c| blank(c) || *c == 0 || *c == b'\n'));
            // Everything between "#!" and the interpreter is blank.
            assert!(data[2..io].iter().all(blank));
            let mut used = interp.len() + 1;
            if let Some(a) = arg {
                let ao = offset_in(data, a);
                assert!(ao > io + interp.len() && ao + a.len() <= PROBE_LEN);
                assert!(data[io + interp.len()..ao].iter().all(blank));
                assert!(!a.is_empty());
                assert!(!a.iter().any(|c| *c == 0 || *c == b'\n'));
                assert!(!blank(&a[0]));
                let last = a[a.len() - 1];
                assert!(!blank(&last) && last != b'\r');
                used += a.len() + 1;
            }
            assert!(used <= PROBE_LEN);
        }
        Err(LoadError::NotExecutableFormat) => assert!(!data.starts_with(ELFMAG) && !data.starts_with(b"#!")),
        Err(LoadError::BadShebang) => assert!(data.starts_with(b"#!")),
        Err(e) => panic!("classify returned {e:?}"),
    }
}
