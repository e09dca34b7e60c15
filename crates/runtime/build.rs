//! strata-rt is a static position-independent executable with no C runtime:
//! the kernel maps it wherever it likes (high, with ASLR), `_start` relocates
//! it, and nothing from libc is linked in.
fn main() {
    for arg in [
        "-nostartfiles",
        "-nostdlib",
        "-static-pie",
        "-Wl,-z,noexecstack",
        "-Wl,--gc-sections",
        "-Wl,-e,_start",
    ] {
        println!("cargo:rustc-link-arg-bin=strata-rt={arg}");
    }
    // The large buffers go in a section of their own (big-bss.ld says why).
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rustc-link-arg-bin=strata-rt=-Wl,-T,{dir}/big-bss.ld");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=big-bss.ld");
}
