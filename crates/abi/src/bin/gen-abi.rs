//! Prints `docs/abi.md` or `include/strata.h` from the strata ABI crate.
//!
//! ```text
//! cargo run -q -p strata-abi --bin gen-abi -- markdown > docs/abi.md
//! cargo run -q -p strata-abi --bin gen-abi -- header > include/strata.h
//! ```
#![forbid(unsafe_code)]

use std::io::Write as _;
use std::process::ExitCode;

const USAGE: &str = "usage: gen-abi markdown > docs/abi.md\n       gen-abi header > include/strata.h";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let render: fn(&mut dyn core::fmt::Write) -> core::fmt::Result = match args.as_slice() {
        [what] if what == "markdown" => strata_abi::render::render_markdown,
        [what] if what == "header" => strata_abi::render::render_header,
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut text = String::new();
    if render(&mut text).is_err() {
        eprintln!("gen-abi: rendering failed");
        return ExitCode::FAILURE;
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen-abi: {e}");
            ExitCode::FAILURE
        }
    }
}
