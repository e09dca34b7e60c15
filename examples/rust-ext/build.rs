//! Link flags for an extension object (docs/abi.md, "Extension objects").
//!
//! (A dependency's build script cannot pass link arguments to this cdylib,
//! so they are here, and every extension crate needs the same.)
fn main() {
    // No libc and no start files: the object runs inside the traced
    // program, loaded by strata, which provides the only functions it may
    // import (memcpy, memmove, memset, memcmp, bcmp, strlen).
    println!("cargo::rustc-link-arg-cdylib=-nostdlib");
    // (strata-ext's `cdylib` feature defines the unwinder's personality
    // routine, which core's unwind tables name, as a hidden symbol.)
    println!("cargo::rerun-if-changed=build.rs");
}
