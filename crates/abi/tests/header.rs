//! include/strata.h against the Rust layout.
//!
//! The header's structures are written by hand (render.rs), so this test
//! compiles a C file that includes the header and asserts, with
//! `_Static_assert`, what Rust says about every structure (size, alignment)
//! and every field (offset, size, type): a layout mismatch does not compile.
//! The lists of fields below are checked for completeness by exhaustive
//! patterns, so a field added in Rust and not here does not compile either.
//! The program then runs the header's inline interest-set helpers against
//! `Interest`.

use std::any::type_name;
use std::fmt::Write as _;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use strata_abi::{
    call_flags, class, Below, Call, ExtDesc, Host, InitFn, Interest, PathSlot, MAX_NR, MAX_PATHS, NO_ARG, OPS, VERSION,
    VERSION_MAJOR, VERSION_MINOR,
};

struct Layout {
    c: &'static str,
    size: usize,
    align: usize,
    fields: Vec<FieldLayout>,
}

struct FieldLayout {
    name: &'static str,
    offset: usize,
    size: usize,
    /// The Rust type, as `type_name` spells it.
    ty: &'static str,
}

/// Size and type name of the field `get` selects.
fn field<T, F>(_get: fn(&T) -> &F) -> (usize, &'static str) {
    (size_of::<F>(), type_name::<F>())
}

macro_rules! layout {
    ($t:ident as $c:literal { $($f:ident),* $(,)? }) => {{
        // Does not compile when `$t` has a field this list lacks.
        #[allow(dead_code)]
        fn exhaustive(v: &$t) {
            let $t { $($f: _),* } = v;
        }
        Layout {
            c: $c,
            size: size_of::<$t>(),
            align: align_of::<$t>(),
            fields: vec![$({
                let (size, ty) = field(|v: &$t| &v.$f);
                FieldLayout { name: stringify!($f), offset: offset_of!($t, $f), size, ty }
            }),*],
        }
    }};
}

fn layouts() -> Vec<Layout> {
    vec![
        layout!(PathSlot as "strata_path_slot" { arg, dirfd_arg, follow, create }),
        layout!(Call as "strata_call" {
            abi_version, size, op, class, nr, args, pid, tid, flags, npaths, paths,
        }),
        layout!(Interest as "strata_interest" { bits }),
        layout!(Below as "strata_below" { call, ctx, layer, _reserved }),
        layout!(Host as "strata_host" {
            abi_version, size, read_mem, write_mem, emit, raw_syscall, multi_task, fail,
        }),
        layout!(ExtDesc as "strata_ext_desc" {
            abi_version, size, name, state, interest, call, exec_commit, task_start, exit, signal, before, after,
        }),
    ]
}

/// The C spelling of a Rust type name (as an abstract declarator, for
/// `_Generic`); `None` for what the ABI does not use.
fn c_type(rust: &str) -> Option<String> {
    let rust = rust.trim();
    if let Some(inner) = rust
        .strip_prefix("core::option::Option<")
        .and_then(|r| r.strip_suffix('>'))
    {
        // Option<fn> is a nullable function pointer.
        return inner.starts_with("extern \"C\" fn(").then(|| c_type(inner)).flatten();
    }
    if let Some(f) = rust.strip_prefix("extern \"C\" fn(") {
        let (params, ret) = f.split_once(')')?;
        let ret = match ret.trim().strip_prefix("->").map(str::trim) {
            None | Some("!") | Some("()") => "void".to_string(),
            Some(r) => c_type(r)?,
        };
        let params = if params.trim().is_empty() {
            "void".to_string()
        } else {
            let ps: Option<Vec<String>> = params.split(',').map(c_type).collect();
            ps?.join(", ")
        };
        return Some(format!("{ret} (*)({params})"));
    }
    if let Some(p) = rust.strip_prefix("*const ") {
        return Some(format!("const {} *", c_type(p)?));
    }
    if let Some(p) = rust.strip_prefix("*mut ") {
        return Some(format!("{} *", c_type(p)?));
    }
    let scalar = match rust.rsplit("::").next()? {
        "u8" => "uint8_t",
        "u16" => "uint16_t",
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "i32" => "int32_t",
        "i64" => "int64_t",
        "usize" => "size_t",
        "c_void" => "void",
        "PathSlot" => "strata_path_slot",
        "Call" => "strata_call",
        "Interest" => "strata_interest",
        "Below" => "strata_below",
        "Host" => "strata_host",
        "ExtDesc" => "strata_ext_desc",
        _ => return None,
    };
    Some(scalar.to_string())
}

/// `[T; N]` as (T, N).
fn array(rust: &str) -> Option<(&str, usize)> {
    let inner = rust.strip_prefix('[')?.strip_suffix(']')?;
    let (elem, n) = inner.rsplit_once(';')?;
    Some((elem.trim(), n.trim().parse().ok()?))
}

fn upper(s: &str) -> String {
    s.to_ascii_uppercase()
}

/// The C program: static assertions, then a run of the interest helpers.
fn program() -> String {
    let mut c = String::from("#include \"strata.h\"\n#include <stdio.h>\n\n");
    let mut check = |cond: String, what: &str| {
        let what = what.replace('\\', "\\\\").replace('"', "\\\"");
        writeln!(c, "_Static_assert({cond}, \"{what}\");").unwrap();
    };
    for l in layouts() {
        let s = l.c;
        check(format!("sizeof({s}) == {}", l.size), &format!("size of {s}"));
        check(format!("_Alignof({s}) == {}", l.align), &format!("alignment of {s}"));
        for f in &l.fields {
            let m = format!("(({s} *)0)->{}", f.name);
            let what = format!("{s}.{} ({})", f.name, f.ty);
            check(
                format!("offsetof({s}, {}) == {}", f.name, f.offset),
                &format!("offset of {what}"),
            );
            check(format!("sizeof({m}) == {}", f.size), &format!("size of {what}"));
            let (elem, expr) = match array(f.ty) {
                Some((elem, n)) => {
                    check(
                        format!("sizeof({m}) / sizeof({m}[0]) == {n}"),
                        &format!("length of {what}"),
                    );
                    (elem, format!("{m}[0]"))
                }
                None => (f.ty, m),
            };
            let ct = c_type(elem).unwrap_or_else(|| panic!("no C spelling for the Rust type {elem} ({what})"));
            check(
                format!("_Generic({expr}, {ct}: 1, default: 0)"),
                &format!("type of {what} is {ct}"),
            );
        }
    }
    let init = c_type(type_name::<InitFn>()).expect("InitFn has a C spelling");
    check(
        format!("_Generic((strata_ext_init_fn)0, {init}: 1, default: 0)"),
        &format!("strata_ext_init_fn is {init}"),
    );
    check(format!("STRATA_ABI_VERSION == {VERSION}u"), "STRATA_ABI_VERSION");
    check(
        format!("STRATA_ABI_VERSION_MAJOR == {VERSION_MAJOR}u"),
        "STRATA_ABI_VERSION_MAJOR",
    );
    check(
        format!("STRATA_ABI_VERSION_MINOR == {VERSION_MINOR}u"),
        "STRATA_ABI_VERSION_MINOR",
    );
    check(format!("STRATA_NO_ARG == {NO_ARG}"), "STRATA_NO_ARG");
    check(format!("STRATA_MAX_PATHS == {MAX_PATHS}"), "STRATA_MAX_PATHS");
    check(format!("STRATA_MAX_NR == {MAX_NR}"), "STRATA_MAX_NR");
    check(
        format!("STRATA_CALL_FROM_EXTENSION == {}u", call_flags::FROM_EXTENSION),
        "STRATA_CALL_FROM_EXTENSION",
    );
    check(
        format!("STRATA_CALL_CHANGED == {}u", call_flags::CHANGED),
        "STRATA_CALL_CHANGED",
    );
    for cl in strata_syscall_table::Class::ALL {
        let name = format!("STRATA_CLASS_{}", upper(cl.as_str()));
        check(format!("{name} == {}u", class::of(cl)), &name);
    }
    for o in OPS {
        let name = format!("STRATA_OP_{}", o.name);
        check(format!("{name} == {}", o.op as u16), &name);
    }

    c.push_str(
        "
int main(void)
{
    static const uint32_t add[] = {@ADD@};
    strata_interest set = {{0}};
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++)
        strata_interest_add(&set, add[i]);
    for (int w = 0; w < STRATA_MAX_NR / 64; w++)
        printf(\"%016llx\\n\", (unsigned long long)set.bits[w]);
    for (uint32_t nr = 0; nr < STRATA_MAX_NR + 100; nr++)
        putchar(strata_interest_has(&set, nr) ? '1' : '0');
    putchar('\\n');
    return 0;
}
",
    );
    c.replace("@ADD@", &ADD.map(|n| n.to_string()).join(", "))
}

/// Call numbers the helpers are run on (512 and up are ignored).
const ADD: [u32; 9] = [0, 1, 63, 64, 257, 439, 511, 512, 1000];

fn compiler() -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    match Command::new(&cc).arg("--version").output() {
        Ok(o) if o.status.success() => Some(cc),
        _ => None,
    }
}

#[test]
fn c_types_are_spelled() {
    assert_eq!(
        c_type("extern \"C\" fn(*const strata_abi::Below, *mut strata_abi::Call) -> i64").as_deref(),
        Some("int64_t (*)(const strata_below *, strata_call *)")
    );
    assert_eq!(
        c_type("extern \"C\" fn() -> u32").as_deref(),
        Some("uint32_t (*)(void)")
    );
    assert_eq!(
        c_type("extern \"C\" fn(*const u8, usize) -> !").as_deref(),
        Some("void (*)(const uint8_t *, size_t)")
    );
    assert_eq!(c_type("*mut core::ffi::c_void").as_deref(), Some("void *"));
    assert_eq!(c_type("u128"), None);
    assert_eq!(
        array("[strata_abi::personality::PathSlot; 2]"),
        Some(("strata_abi::personality::PathSlot", 2))
    );
}

#[test]
fn header_matches_the_rust_layout() {
    let Some(cc) = compiler() else {
        eprintln!("note: no C compiler (cc, or $CC) found; include/strata.h was not checked against the Rust layout");
        return;
    };
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    assert!(
        include.join("strata.h").is_file(),
        "include/strata.h is missing; generate it with\n  \
         cargo run -q -p strata-abi --bin gen-abi -- header > include/strata.h"
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("strata-header");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("check.c");
    let exe = dir.join("check");
    std::fs::write(&src, program()).unwrap();

    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-I"])
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "include/strata.h does not match the Rust layout (or does not compile); {cc} said:\n{}\n(C file: {})",
        String::from_utf8_lossy(&out.stderr),
        src.display()
    );

    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "{} failed", exe.display());
    let text = String::from_utf8(run.stdout).unwrap();
    let mut lines = text.lines();

    let mut want = Interest::NONE;
    for nr in ADD {
        want.insert(nr);
    }
    for (w, bits) in want.bits.iter().enumerate() {
        assert_eq!(
            lines.next(),
            Some(format!("{bits:016x}").as_str()),
            "strata_interest_add, word {w}"
        );
    }
    let has: String = (0..MAX_NR as u32 + 100)
        .map(|nr| if want.contains(nr) { '1' } else { '0' })
        .collect();
    assert_eq!(lines.next(), Some(has.as_str()), "strata_interest_has");
}
