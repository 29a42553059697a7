//! The regression gate's false-alarm rate and power, by simulation on the
//! reference harness's gemini-2.5-flash baseline (see `stats::simulate` and
//! docs/evals.md). Prints a table; run with `cargo bench --bench gate`.
//! Needs ../shared/upstream; TRIALS (default 1000) and ALPHA (0.05) may be set.

use std::path::Path;

use vaultbench::report;
use vaultbench::stats;
use vaultbench::stats::simulate::{self, Outcome, Scenario};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = root.join("../shared/upstream/baselines/gemini-gemini-2.5-flash.json");
    if !file.is_file() {
        eprintln!("skipping: the upstream corpus is not at {}", file.display());
        return;
    }
    let trials: u32 = std::env::var("TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let alpha: f64 = std::env::var("ALPHA").ok().and_then(|v| v.parse().ok()).unwrap_or(0.05);
    let result = report::load_result(&file).expect("the baseline loads");
    let tasks = stats::counts(&result);
    println!("model: per-task pass and solve rates of {} ({} tasks)", file.display(), tasks.len());
    println!("trials per row: {trials}; alpha {alpha}; seed 2026\n");
    println!(
        "{:<44} {:>8} {:>10} {:>8} {:>8} {:>10} {:>8}",
        "scenario", "gate", "aggregate", "across", "task", "with Holm", "exact"
    );
    let pct = |n: u32| format!("{:.1}%", Outcome::rate(n, trials) * 100.0);
    for (label, k, broken, fixed) in [
        ("rerun of the same model, k = 3", 3, 0, false),
        ("rerun of the same model, k = 5", 5, 0, false),
        ("rerun vs the real baseline, k = 5", 5, 0, true),
        ("3 always-solved tasks never solved, k = 3", 3, 3, false),
        ("3 always-solved tasks never solved, k = 5", 5, 3, false),
        ("6 always-solved tasks never solved, k = 3", 3, 6, false),
        ("6 always-solved tasks never solved, k = 5", 5, 6, false),
    ] {
        let o = simulate::run(&tasks, Scenario { k, broken, fixed_baseline: fixed }, alpha, trials, 2026);
        println!(
            "{label:<44} {:>8} {:>10} {:>8} {:>8} {:>10} {:>8}",
            pct(o.fired),
            pct(o.fired_aggregate),
            pct(o.fired_across_tasks),
            pct(o.fired_task),
            pct(o.fired_with_holm),
            pct(o.fired_exact)
        );
    }
}
