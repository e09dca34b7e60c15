//! Prints `docs/syscalls.md` from the syscall table.
//!
//! ```text
//! cargo run -q -p strata-syscall-table --bin gen-syscall-docs > docs/syscalls.md
//! ```
#![forbid(unsafe_code)]

use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args_os().len() > 1 {
        eprintln!("usage: gen-syscall-docs > docs/syscalls.md");
        return ExitCode::from(2);
    }
    let mut doc = String::new();
    if strata_syscall_table::render_markdown(&mut doc).is_err() {
        eprintln!("gen-syscall-docs: rendering failed");
        return ExitCode::FAILURE;
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(doc.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen-syscall-docs: {e}");
            ExitCode::FAILURE
        }
    }
}
