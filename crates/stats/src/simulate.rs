//! Measuring the regression gate by simulation: how often it fires when the
//! same model is simply run again (its false-alarm rate), and how often when
//! a real regression happened (its power).
//!
//! A model is given by each task's chance to pass and to solve a run (in
//! practice the per-task rates of a real baseline). A simulated sweep draws
//! k runs per task from those chances; a comparison draws a baseline sweep
//! and a current sweep and applies the gate. Draws use a seeded generator,
//! so the figures are the same on every machine and every run.

use serde::Serialize;

use super::gate::{self, Rule};
use super::multiple::holm;
use super::paired::Paired;
use super::{Settings, TaskCounts};

/// One task's chances per run; `solve <= pass`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRates {
    pub id: String,
    pub tier: String,
    pub pass: f64,
    pub solve: f64,
}

impl TaskRates {
    /// The observed rates of a result's tasks: the model as the baseline saw it.
    pub fn observed(tasks: &[TaskCounts]) -> Vec<TaskRates> {
        tasks
            .iter()
            .filter(|t| t.runs > 0)
            .map(|t| TaskRates {
                id: t.id.clone(),
                tier: t.tier.clone(),
                pass: f64::from(t.passed) / f64::from(t.runs),
                solve: f64::from(t.solved) / f64::from(t.runs),
            })
            .collect()
    }
}

/// What to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scenario {
    /// Runs per task on both sides.
    pub k: u32,
    /// This many always-solved tasks (solve rate 1) become never-solved in
    /// the current sweep (chosen at random per trial); 0 for a plain rerun.
    pub broken: usize,
    /// Compare against the given counts instead of a freshly drawn baseline.
    pub fixed_baseline: bool,
}

/// How often the gate fired over the trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Outcome {
    pub trials: u32,
    /// The gate as shipped: any aggregate or task regression.
    pub fired: u32,
    /// Of those, by the aggregates (pass^k or solve^k, or a mean rate by
    /// the stratified test).
    pub fired_aggregate: u32,
    /// By the stratified test of a mean rate alone.
    pub fired_across_tasks: u32,
    /// By a task test (after the Benjamini–Hochberg correction).
    pub fired_task: u32,
    /// What the task part would do with Holm instead (aggregates unchanged).
    pub fired_with_holm: u32,
    /// The exact rule: any drop.
    pub fired_exact: u32,
}

impl Outcome {
    pub fn rate(count: u32, trials: u32) -> f64 {
        if trials == 0 { 0.0 } else { f64::from(count) / f64::from(trials) }
    }

    pub fn fire_rate(&self) -> f64 {
        Outcome::rate(self.fired, self.trials)
    }
}

fn draw(rng: &mut fastrand::Rng, model: &[TaskRates], k: u32, broken: &[usize]) -> Vec<TaskCounts> {
    model
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let solve = if broken.contains(&i) { 0.0 } else { t.solve };
            let (mut passed, mut solved) = (0, 0);
            for _ in 0..k {
                // One uniform draw per run keeps solved runs a subset of passed ones.
                let u = rng.f64();
                passed += u32::from(u < t.pass);
                solved += u32::from(u < solve.min(t.pass));
            }
            TaskCounts::new(t.id.clone(), t.tier.clone(), k, passed, solved)
        })
        .collect()
}

/// Run `trials` simulated comparisons of `scenario` under the statistical
/// rule at `alpha`. `baseline` is the fixed baseline (its rates are the model).
pub fn run(baseline: &[TaskCounts], scenario: Scenario, alpha: f64, trials: u32, seed: u64) -> Outcome {
    let model = TaskRates::observed(baseline);
    let always: Vec<usize> = model.iter().enumerate().filter(|(_, t)| t.solve >= 1.0).map(|(i, _)| i).collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let settings = Settings::with_alpha(alpha);
    let rule = Rule::Statistical { alpha };
    let mut out = Outcome {
        trials,
        fired: 0,
        fired_aggregate: 0,
        fired_across_tasks: 0,
        fired_task: 0,
        fired_with_holm: 0,
        fired_exact: 0,
    };
    for _ in 0..trials {
        let mut pool = always.clone();
        rng.shuffle(&mut pool);
        pool.truncate(scenario.broken);
        let before = if scenario.fixed_baseline { baseline.to_vec() } else { draw(&mut rng, &model, scenario.k, &[]) };
        let after = draw(&mut rng, &model, scenario.k, &pool);
        let Some(p) = Paired::of(&before, &after, &settings) else { continue };
        let n = p.common_tasks;
        let across =
            [p.solved_across_tasks, p.passed_across_tasks].iter().any(|s| gate::across_tasks(rule, s).is_regression());
        let aggregate = across || [p.pass_k, p.solve_k].iter().any(|d| gate::aggregate(rule, d, n).is_regression());
        let tests = p.tasks.iter().flat_map(|t| [&t.solved, &t.passed]);
        let task = tests.clone().any(|t| gate::task(rule, t).is_regression());
        let in_family: Vec<_> = tests.clone().filter(|t| t.p_drop_adjusted.is_some()).collect();
        let holm_q = holm(&in_family.iter().map(|t| t.p_drop).collect::<Vec<_>>());
        let task_holm = in_family.iter().zip(holm_q).any(|(t, q)| t.dropped() && q <= alpha);
        let exact = [p.pass_k, p.solve_k].iter().any(|d| gate::aggregate(Rule::Exact, d, n).is_regression())
            || tests.clone().any(|t| gate::task(Rule::Exact, t).is_regression());
        out.fired += u32::from(aggregate || task);
        out.fired_aggregate += u32::from(aggregate);
        out.fired_across_tasks += u32::from(across);
        out.fired_task += u32::from(task);
        out.fired_with_holm += u32::from(aggregate || task_holm);
        out.fired_exact += u32::from(exact);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_rates_and_the_seed() {
        let base: Vec<TaskCounts> = (0..10).map(|i| TaskCounts::new(format!("t{i}"), "T1", 5, 5, i % 6)).collect();
        let s = Scenario { k: 5, broken: 0, fixed_baseline: false };
        assert_eq!(run(&base, s, 0.05, 20, 1), run(&base, s, 0.05, 20, 1));
        let mut rng = fastrand::Rng::with_seed(3);
        let model = TaskRates::observed(&base);
        // Rate 0 never solves, rate 1 always does, a broken task never does.
        let drawn = draw(&mut rng, &model, 5, &[]);
        assert_eq!((drawn[0].solved, drawn[5].solved), (0, 5));
        let drawn = draw(&mut rng, &model, 5, &[5]);
        assert_eq!((drawn[0].solved, drawn[5].solved), (0, 0));
        assert!(drawn.iter().all(|t| t.passed == 5 && t.solved <= t.passed));
    }
}
