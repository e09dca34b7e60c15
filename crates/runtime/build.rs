//! strata-rt is a static executable with no C runtime, linked at a fixed
//! address (IMAGE_BASE): nothing from libc is linked in, and there is
//! nothing to relocate at start. As a position-independent executable it
//! relocated itself at every exec: its pointers (panic locations, vtables,
//! name tables; `readelf -r` on such a build lists them), each page of them
//! a copy-on-write fault in every process of a traced tree.
//!
//! Why 0x5500_0000_0000: free in every process (below where the kernel puts
//! a PIE, 0x5555_5555_4000 and up, far from the mmap area near the stack
//! and from non-PIE programs at 0x400000), and application memory in
//! ThreadSanitizer's fixed x86-64 layout (0x5500_0000_0000 to
//! 0x5680_0000_0000, "PIE binaries"), which refuses other mappings in its
//! gaps. strata-rt is the first thing the kernel maps after an exec,
//! so the range is always free; the program's own mappings come later and
//! the kernel places them around it. Its address is not secret: a program
//! reads it from /proc/self/maps anyway, and the policy's backstop is the
//! kernel's (docs/policy.md).
const IMAGE_BASE: &str = "0x550000000000";
//
// `-z norelro`: no loader ever makes strata-rt's relocation-read-only part
// read-only (there is none: the kernel maps strata-rt and nothing
// relocates it), so a RELRO segment of its own only costs a mapping more
// in every process, which every fork copies.

fn main() {
    for arg in [
        "-nostartfiles",
        "-nostdlib",
        "-static",
        "-no-pie",
        "-Wl,-z,noexecstack",
        "-Wl,-z,norelro",
        "-Wl,--gc-sections",
        "-Wl,-e,_start",
    ] {
        println!("cargo:rustc-link-arg-bin=strata-rt={arg}");
    }
    println!("cargo:rustc-link-arg-bin=strata-rt=-Wl,--image-base={IMAGE_BASE}");
    // The large buffers go in a section of their own (big-bss.ld says why).
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rustc-link-arg-bin=strata-rt=-Wl,-T,{dir}/big-bss.ld");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=big-bss.ld");
}
