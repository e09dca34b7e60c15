//! Replays every file in `fuzz/seeds/` (the cargo-fuzz target's seeds, and
//! any crashing input it found) through the fuzz target's invariant checks,
//! so that they run in the normal `cargo test` suite without cargo-fuzz.

#[path = "../fuzz/invariants.rs"]
mod invariants;

use strata_loader::{classify, plan, Kind};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds");

#[test]
fn fuzz_seeds_keep_the_invariants() {
    let mut files: Vec<_> = std::fs::read_dir(SEEDS)
        .unwrap_or_else(|e| panic!("{SEEDS}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {SEEDS}");
    let (mut plans, mut scripts) = (0, 0);
    for f in &files {
        let data = std::fs::read(f).unwrap();
        // Shown (with --nocapture, or on failure) before a panic names no file.
        println!("seed {}", f.display());
        invariants::check(&data);
        plans += plan(&data, u64::MAX).is_ok() as usize;
        scripts += matches!(classify(&data), Ok(Kind::Script { .. })) as usize;
    }
    // The seeds are worth something: real ELF heads that plan, and scripts.
    assert!(plans >= 3, "only {plans} seeds plan Ok");
    assert!(scripts >= 1, "no script seed");
}
