//! Feeds arbitrary bytes, as the head of a file, to strata-loader's
//! `classify`, `plan` (with file_size = the input's length, a smaller and a
//! larger size derived from bytes 8..16, and u64::MAX) and `head_needed`, and
//! asserts the invariants in `../invariants.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| {
    invariants::check(data);
});
