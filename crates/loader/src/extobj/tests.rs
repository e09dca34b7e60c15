//! The rules on objects built here with `cc` (skipped, with a note, without
//! one), and on damaged copies of them.
extern crate std;

use super::*;
use std::format;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::string::{String, ToString};
use std::vec::Vec;

const FLAGS: &[&str] = &[
    "-shared",
    "-fPIC",
    "-nostdlib",
    "-ffreestanding",
    "-fno-stack-protector",
    "-O2",
];

/// An object file's bytes, 8-byte aligned as strata-rt's mapping of it is.
struct Bytes {
    words: Vec<u64>,
    len: usize,
}

impl Bytes {
    fn new(b: &[u8]) -> Bytes {
        let mut words = std::vec![0u64; b.len().div_ceil(8)];
        for (w, c) in words.iter_mut().zip(b.chunks(8)) {
            let mut a = [0u8; 8];
            a[..c.len()].copy_from_slice(c);
            *w = u64::from_ne_bytes(a);
        }
        Bytes { words, len: b.len() }
    }
    fn get(&self) -> &[u8] {
        &object::pod::bytes_of_slice(&self.words)[..self.len]
    }
    fn get_mut(&mut self) -> &mut [u8] {
        &mut object::pod::bytes_of_slice_mut(&mut self.words)[..self.len]
    }
}

fn have_cc() -> bool {
    let ok = Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        std::eprintln!("skipped: no C compiler (cc) to build test objects");
    }
    ok
}

/// strata.h if it exists, else the two symbols' types by hand.
fn prelude() -> String {
    let h = concat!(env!("CARGO_MANIFEST_DIR"), "/../../include/strata.h");
    if std::path::Path::new(h).is_file() {
        format!(
            "#include \"{h}\"\n#define VERSION STRATA_ABI_VERSION\n\
             typedef strata_host host_t;\ntypedef strata_ext_desc desc_t;\n"
        )
    } else {
        "#include <stddef.h>\n#include <stdint.h>\n#define VERSION 0x00010000u\n\
         typedef struct host host_t;\ntypedef struct desc desc_t;\n"
            .to_string()
    }
}

const INIT: &str = "int32_t strata_ext_init(const host_t *host, const uint8_t *args, size_t args_len,\n\
     desc_t *out, uint8_t *err, size_t err_len) {\n\
     (void)host; (void)args; (void)args_len; (void)out; (void)err; (void)err_len;\n\
     return 0;\n}\n";

/// Compiles `body` (after the prelude, from standard input) with `cc` and
/// `flags`; the object's bytes.
fn build(name: &str, body: &str, flags: &[&str]) -> Bytes {
    let out: PathBuf = std::env::temp_dir().join(format!("strata-loader-test.{}.{name}.so", std::process::id()));
    let mut child = Command::new("cc")
        .args(flags)
        .args(["-x", "c", "-o"])
        .arg(&out)
        .arg("-")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{}{body}", prelude()).as_bytes()).unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "cc {name}: {}", String::from_utf8_lossy(&o.stderr));
    let b = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    Bytes::new(&b)
}

fn good_source() -> String {
    format!(
        "uint32_t strata_ext_abi_version = VERSION;\n\
         static const char *names[] = {{\"good\", \"other\"}};\n\
         char big[10000];\n\
         void *memcpy(void *, const void *, size_t);\n\
         extern void maybe(void) __attribute__((weak));\n\
         const char *pick(int i) {{ memcpy(big, names[i & 1], 4); return maybe ? big : names[i & 1]; }}\n\
         {INIT}"
    )
}

fn problem(b: &Bytes) -> Problem {
    match inspect(b.get()) {
        Err(p) => p,
        Ok(_) => panic!("expected a problem"),
    }
}

#[test]
fn accepts_a_freestanding_object() {
    if !have_cc() {
        return;
    }
    for (name, extra) in [
        ("good", &[][..]),
        ("lazy", &["-Wl,-z,lazy"][..]),
        ("relr", &["-Wl,-z,pack-relative-relocs"][..]),
        ("norelro", &["-Wl,-z,norelro"][..]),
        ("sysvhash", &["-Wl,--hash-style=sysv"][..]),
    ] {
        let flags: Vec<&str> = FLAGS.iter().chain(extra).copied().collect();
        let b = build(name, &good_source(), &flags);
        let (o, c) = inspect(b.get()).unwrap_or_else(|p| panic!("{name}: {p}"));
        assert_eq!(c.version, strata_abi::VERSION, "{name}");
        assert!(o.in_code(c.entry), "{name}");
        assert_eq!(
            o.name(o.export(strata_abi::ENTRY_SYMBOL).unwrap()).unwrap(),
            b"strata_ext_init"
        );
        if name == "relr" {
            assert!(o.dynamic().relr.is_some(), "{name}: no DT_RELR");
        }
        if name == "sysvhash" {
            assert!(o.dynamic().hash.is_some() && o.dynamic().gnu_hash.is_none(), "{name}");
        }
        // Every relocation has a value; the segments they write are the
        // ones `check` lists.
        let base = 0x7f00_0000_0000u64;
        let mut n = 0;
        let mut written = [false; MAX_SEGMENTS];
        o.relocations(|r| -> Result<(), Problem> {
            let v = r.value(base, |name| host_symbol(name).then_some(0x1000))?;
            if r.ty == elf::R_X86_64_RELATIVE {
                assert_eq!((r.sym, v), (0, base.wrapping_add(r.addend as u64)));
            }
            written[r.segment] = true;
            n += 1;
            Ok(())
        })
        .unwrap();
        assert!(n > 0, "{name}: no relocations");
        assert_eq!(written, c.relocated, "{name}");
    }
}

/// What strata cannot load: the problem and the start of its message.
#[test]
fn refuses_what_strata_cannot_load() {
    if !have_cc() {
        return;
    }
    let with_version = |rest: &str| format!("uint32_t strata_ext_abi_version = VERSION;\n{rest}");
    let speaks = format!(
        "; this strata speaks {}.{}",
        strata_abi::VERSION_MAJOR,
        strata_abi::VERSION_MINOR
    );
    let cases: [(&str, String, &[&str], Problem, String); 7] = [
        (
            "noinit",
            with_version("int other(void) { return 1; }\n"),
            FLAGS,
            Problem::Missing("strata_ext_init"),
            "no strata_ext_init (an extension object defines and exports strata_ext_init and strata_ext_abi_version)"
                .into(),
        ),
        // Hidden is not exported.
        (
            "hidden",
            format!("__attribute__((visibility(\"hidden\"))) {INIT}uint32_t strata_ext_abi_version = VERSION;\n"),
            FLAGS,
            Problem::Missing("strata_ext_init"),
            "no strata_ext_init ".into(),
        ),
        (
            "v2",
            format!("uint32_t strata_ext_abi_version = 0x00020000;\n{INIT}"),
            FLAGS,
            Problem::Version(0x0002_0000),
            format!("built for strata ABI 2.0{speaks}"),
        ),
        // In .bss: 0, from no file bytes.
        (
            "v0",
            format!("uint32_t strata_ext_abi_version;\n{INIT}"),
            FLAGS,
            Problem::Version(0),
            format!("built for strata ABI 0.0{speaks}"),
        ),
        (
            "libc",
            format!(
                "#include <stdio.h>\n{}",
                with_version(&format!("int hello(void) {{ return printf(\"hi\\n\"); }}\n{INIT}"))
            ),
            &["-shared", "-fPIC"],
            Problem::Needed(Name::new(b"libc.so.6")),
            "needs libc.so.6 (DT_NEEDED): extension objects must be built without libc".into(),
        ),
        (
            "undef",
            with_version(&format!("int frob(int);\nint f(void) {{ return frob(1); }}\n{INIT}")),
            FLAGS,
            Problem::Undefined(Name::new(b"frob")),
            "undefined symbol frob (strata provides only memcpy, memmove, memset, memcmp, bcmp, strlen)".into(),
        ),
        (
            "tls",
            with_version(&format!("__thread int t;\nint f(void) {{ return t; }}\n{INIT}")),
            FLAGS,
            Problem::Tls("PT_TLS"),
            "uses thread-local storage (PT_TLS), which extension objects cannot use".into(),
        ),
    ];
    for (name, body, flags, want, text) in cases {
        let p = problem(&build(name, &body, flags));
        assert_eq!(p, want, "{name}");
        assert!(p.to_string().starts_with(&text), "{name}: {p}");
    }
}

#[test]
fn refuses_what_is_not_an_x86_64_shared_object() {
    let text = Bytes::new(&b"this is not an ELF file, it is plain text\n".repeat(4));
    assert_eq!(problem(&text), Problem::NotElf);
    assert_eq!(problem(&text).to_string(), "not an ELF shared object (no ELF header)");
    let exe = std::fs::read("/bin/true").unwrap();
    let mut head = exe[..64].to_vec();
    head.resize(4096, 0);
    head[16..18].copy_from_slice(&elf::ET_EXEC.to_le_bytes());
    assert_eq!(problem(&Bytes::new(&head)), Problem::NotShared(elf::ET_EXEC));
    head[18..20].copy_from_slice(&elf::EM_AARCH64.to_le_bytes());
    assert_eq!(problem(&Bytes::new(&head)), Problem::Machine(elf::EM_AARCH64));
    head[EI_DATA] = elf::ELFDATA2MSB;
    assert_eq!(problem(&Bytes::new(&head)), Problem::BigEndian);
    head[EI_CLASS] = elf::ELFCLASS32;
    assert_eq!(problem(&Bytes::new(&head)), Problem::Elf32);
    assert_eq!(problem(&Bytes::new(&exe[..63])), Problem::NotElf);
}

#[test]
fn names_are_one_line_and_cut() {
    let long = [b'a'; 70];
    let n = Name::new(&long);
    assert!(n.is_cut());
    assert_eq!(n.as_bytes().len(), NAME_SHOWN);
    assert_eq!(format!("{n}"), format!("{}...", "a".repeat(64)));
    assert_eq!(format!("{}", Name::new(b"a b\n\xff")), "a?b??");
    assert_eq!(
        Problem::Ifunc(Name::new(b"f")).to_string(),
        "symbol f is an IFUNC, which strata does not support"
    );
    assert_eq!(
        Problem::Relocation(elf::R_X86_64_PC32).to_string(),
        "unsupported relocation R_X86_64_PC32 (type 2); strata applies only R_X86_64_RELATIVE, R_X86_64_64, \
         R_X86_64_GLOB_DAT and R_X86_64_JUMP_SLOT"
    );
}

#[test]
fn decodes_packed_relative_relocations() {
    let words = [0x1000u64, 0b111, 1 | 1 << 63];
    let entries: Vec<elf::Relr64<LE>> = words.iter().map(|&w| elf::Relr64(object::U64::new(LE, w))).collect();
    let mut got = Vec::new();
    relr(&entries, &mut |at| -> Result<(), ()> {
        got.push(at);
        Ok(())
    })
    .unwrap();
    assert_eq!(got, [0x1000, 0x1008, 0x1010, 0x1200 + 62 * 8]);
    let theirs: Vec<u64> = object::read::elf::RelrIterator::<Header>::new(LE, &entries).collect();
    assert_eq!(got, theirs);
}

/// Cut and damaged copies of a good object give errors, never a panic.
#[test]
fn malformed_objects_never_panic() {
    if !have_cc() {
        return;
    }
    let b = build("fuzz", &good_source(), FLAGS);
    let good = b.get();
    assert_eq!(inspect(good).map(|(_, c)| c.version), Ok(strata_abi::VERSION));
    // Cut within the loadable segments: refused; after them (section
    // headers, the static symbol table): still good.
    let h = Header::parse(good).unwrap();
    let need = h
        .program_headers(LE, good)
        .unwrap()
        .iter()
        .filter(|ph| ph.p_type.get(LE) == elf::PT_LOAD)
        .map(|ph| ph.p_offset.get(LE) + ph.p_filesz.get(LE))
        .max()
        .unwrap() as usize;
    for n in 0..good.len() {
        assert_eq!(inspect(&good[..n]).is_ok(), n >= need, "cut at {n}");
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20_000 {
        let mut d = Bytes::new(good);
        for _ in 0..1 + next() % 4 {
            let at = (next() % good.len() as u64) as usize;
            d.get_mut()[at] = next() as u8;
        }
        let _ = inspect(d.get());
    }
}
