//! The regression gate measured by simulation on a real baseline (the
//! reference harness's gemini-2.5-flash sweep, k = 5, 17 flaky tasks): each
//! task's observed pass and solve rates are the model; 1000 simulated
//! comparisons per scenario, from a fixed seed. Not timed: the figures are
//! rates, the same on every machine. `cargo bench --bench gate` prints them
//! all; docs/evals.md quotes them.

mod common;

use vaultbench::report;
use vaultbench::stats::simulate::{self, Scenario};
use vaultbench::stats::{self, DEFAULT_ALPHA, TaskCounts};

const TRIALS: u32 = 1000;
const SEED: u64 = 2026;

fn flash_tasks() -> Option<Vec<TaskCounts>> {
    let up = common::upstream()?;
    let result = report::load_result(&up.join("baselines/gemini-gemini-2.5-flash.json")).unwrap();
    Some(stats::counts(&result))
}

fn rate(tasks: &[TaskCounts], k: u32, broken: usize) -> f64 {
    let out = simulate::run(tasks, Scenario { k, broken, fixed_baseline: false }, DEFAULT_ALPHA, TRIALS, SEED);
    eprintln!("k = {k}, {broken} always-solved tasks broken: fired {}/{} ({out:?})", out.fired, out.trials);
    out.fire_rate()
}

#[test]
fn reruns_of_the_same_model_rarely_raise_an_alarm() {
    let Some(tasks) = flash_tasks() else { return };
    for k in [3, 5] {
        let r = rate(&tasks, k, 0);
        assert!(r <= 0.05, "false-alarm rate at k = {k}: {r}");
    }
}

#[test]
fn six_always_solved_tasks_lost_are_caught_at_k_3_and_k_5() {
    let Some(tasks) = flash_tasks() else { return };
    for k in [3, 5] {
        let r = rate(&tasks, k, 6);
        assert!(r >= 0.90, "power for 6 broken tasks at k = {k}: {r}");
    }
}

#[test]
fn more_broken_tasks_are_easier_to_catch_and_k_3_is_weaker_than_k_5() {
    let Some(tasks) = flash_tasks() else { return };
    // At k = 3 a single task cannot reach significance (its smallest one-sided
    // p-value is 1/20), so only the aggregates can fire: 3 broken tasks are
    // printed, not promised.
    let (k3_three, k3_six) = (rate(&tasks, 3, 3), rate(&tasks, 3, 6));
    let k5_three = rate(&tasks, 5, 3);
    assert!(k3_six >= k3_three, "k = 3: 6 broken {k3_six} < 3 broken {k3_three}");
    assert!(k5_three >= k3_three, "3 broken: k = 5 {k5_three} < k = 3 {k3_three}");
}
