//! The checked-in docs/abi.md and include/strata.h against the generator.

use std::path::Path;

use strata_abi::render::{render_header, render_markdown};

fn check(file: &str, what: &str, render: fn(&mut dyn core::fmt::Write) -> core::fmt::Result) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(file);
    let regenerate = format!("cargo run -q -p strata-abi --bin gen-abi -- {what} > {file}");
    let on_disk = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{file} cannot be read ({e}); generate it with\n  {regenerate}"));
    let mut rendered = String::new();
    render(&mut rendered).expect("rendering failed");
    if on_disk != rendered {
        let first = on_disk
            .lines()
            .zip(rendered.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| on_disk.lines().count().min(rendered.lines().count()));
        panic!(
            "{file} is out of date (first difference at line {}); regenerate with\n  {regenerate}",
            first + 1
        );
    }
}

#[test]
fn checked_in_docs_match_the_crate() {
    check("docs/abi.md", "markdown", render_markdown);
}

#[test]
fn checked_in_header_matches_the_crate() {
    check("include/strata.h", "header", render_header);
}

#[test]
fn docs_list_every_op_and_modelled_call() {
    let mut doc = String::new();
    render_markdown(&mut doc).unwrap();
    for o in strata_abi::OPS {
        assert!(
            doc.contains(&format!("| {} | `STRATA_OP_{}` |", o.op as u16, o.name)),
            "{}",
            o.name
        );
    }
    for (nr, name, _) in strata_abi::modelled() {
        assert!(doc.contains(&format!("| {nr} | `{name}` |")), "{name}");
    }
}

#[test]
fn header_defines_every_op() {
    let mut h = String::new();
    render_header(&mut h).unwrap();
    for o in strata_abi::OPS {
        assert!(
            h.contains(&format!("    STRATA_OP_{} = {},\n", o.name, o.op as u16)),
            "{}",
            o.name
        );
    }
}
