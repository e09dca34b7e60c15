//! What the policy layer does at every process start, N times: build the
//! layer from the compiled text the launcher passes (`Sandbox::new_in`,
//! which parses it) and compute its interest. Run under callgrind by
//! bench/policy-start-cost.sh, which takes the count per start as the total
//! over N less the total with N = 0.
//!
//! Usage: policy_start_cost POLICY N   (POLICY: a file or builtin:NAME)
//! With SHOW set in the environment it also prints the compiled text.

use std::mem::MaybeUninit;
use std::process::ExitCode;

use strata_ext::Extension;
use strata_ext_policy::Sandbox;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(policy), Some(n)) = (args.get(1), args.get(2).and_then(|n| n.parse::<usize>().ok())) else {
        eprintln!("usage: policy_start_cost POLICY N");
        return ExitCode::from(2);
    };
    let p = match strata_cli::policy::load(policy, false) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("policy_start_cost: {e}");
            return ExitCode::from(2);
        }
    };
    let text = p.compiled();
    // One slot, reused: the runtime builds the layer once per process in
    // fresh memory; what is counted here is the work, not the page faults.
    let mut slot: Box<MaybeUninit<Sandbox>> = Box::new(MaybeUninit::uninit());
    let mut sum = 0u64;
    for _ in 0..n {
        match Sandbox::new_in(&mut slot, std::hint::black_box(&text)) {
            Ok(s) => sum += u64::from(s.interest().bits[0].count_ones()),
            Err(e) => {
                eprintln!("policy_start_cost: {}", String::from_utf8_lossy(e.message()));
                return ExitCode::from(1);
            }
        }
    }
    if std::env::var_os("SHOW").is_some() {
        println!("{text}");
    }
    println!("{} bytes of compiled text, {n} starts ({sum})", text.len());
    ExitCode::SUCCESS
}
