extern crate std;
use super::*;
use std::vec::Vec;

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn plans_a_dynamic_pie() {
    let f = read("/bin/true");
    let p = plan(&f, f.len() as u64).unwrap();
    assert!(p.pie);
    assert_eq!(p.interp, Some(&b"/lib64/ld-linux-x86-64.so.2"[..]));
    assert!(p.nsegments >= 2);
    assert!(p.phdr_vaddr.is_some());
    assert!(p.segments().iter().any(|s| s.prot & 4 != 0));
}

#[test]
fn plans_the_dynamic_loader_itself() {
    let f = read("/lib64/ld-linux-x86-64.so.2");
    let p = plan(&f, f.len() as u64).unwrap();
    assert!(p.pie);
    assert_eq!(p.interp, None);
}

#[test]
fn refuses_truncated_and_foreign_files() {
    let f = read("/bin/true");
    // Cut inside the last segment's file range.
    assert_eq!(plan(&f, (f.len() / 2) as u64), Err(LoadError::Truncated));
    assert_eq!(plan(&f[..40], 40), Err(LoadError::Truncated));
    let mut arm = f.clone();
    arm[18..20].copy_from_slice(&elf::EM_AARCH64.to_le_bytes());
    assert_eq!(
        plan(&arm, arm.len() as u64),
        Err(LoadError::WrongMachine(elf::EM_AARCH64))
    );
    let mut e32 = f.clone();
    e32[EI_CLASS] = elf::ELFCLASS32;
    assert_eq!(plan(&e32, e32.len() as u64), Err(LoadError::Elf32));
    let mut rel = f.clone();
    rel[16..18].copy_from_slice(&elf::ET_REL.to_le_bytes());
    assert_eq!(
        plan(&rel, rel.len() as u64),
        Err(LoadError::NotAnExecutable(elf::ET_REL))
    );
    let mut bad = f.clone();
    bad[54..56].copy_from_slice(&7u16.to_le_bytes()); // e_phentsize
    assert!(matches!(plan(&bad, bad.len() as u64), Err(LoadError::BadHeader(_))));
}

#[test]
fn classifies_scripts_like_the_kernel() {
    assert_eq!(
        classify(b"#!/bin/sh\necho"),
        Ok(Kind::Script {
            interp: b"/bin/sh",
            arg: None
        })
    );
    assert_eq!(
        classify(b"#! /usr/bin/env  python3 -u \nx"),
        Ok(Kind::Script {
            interp: b"/usr/bin/env",
            arg: Some(b"python3 -u")
        })
    );
    assert_eq!(
        classify(b"#!/bin/sh"),
        Ok(Kind::Script {
            interp: b"/bin/sh",
            arg: None
        })
    );
    assert_eq!(classify(b"#!\n"), Err(LoadError::BadShebang));
    assert_eq!(classify(b"#!   \n"), Err(LoadError::BadShebang));
    assert_eq!(classify(b"hello"), Err(LoadError::NotExecutableFormat));
    assert_eq!(classify(b""), Err(LoadError::NotExecutableFormat));
    let mut long = Vec::from(&b"#!/"[..]);
    long.resize(300, b'a');
    assert_eq!(classify(&long), Err(LoadError::BadShebang));
}
