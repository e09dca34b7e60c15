//! (placeholder, being written) The declarative syscall table.
#![no_std]
/// The name of syscall `nr` on x86-64, if it has one.
pub fn name(nr: usize) -> Option<&'static str> {
    syscalls::Sysno::new(nr).map(|s| s.name())
}
