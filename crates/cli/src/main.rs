//! `strata`: run an unmodified Linux x86-64 program with every system call
//! captured in-process. See the library crate for the details.

fn main() {
    strata_cli::finish(strata_cli::main_with(std::env::args_os()));
}
