//! The regression gate: which drops count as regressions.
//!
//! Under the statistical rule (the default) a drop is a regression only
//! where the data supports it at level alpha:
//! - pass^k or solve^k (at the common k, on common tasks) when the paired
//!   bootstrap interval of the change, at 1 - alpha, lies wholly below zero;
//! - the mean solve or pass rate when the exact stratified test of the runs'
//!   counts across the common tasks gives a one-sided p <= alpha / 2 (the
//!   tail the two-sided intervals leave on the side of a drop); it pools the
//!   evidence of every task, so it catches a few tasks broken outright at
//!   k = 3, where no task alone can be significant;
//! - a task's solved or passed count when its one-sided Fisher exact test is
//!   significant at alpha after the Benjamini–Hochberg correction.
//!
//! Smaller drops are "within noise": listed, not flagged. The exact rule is
//! the old one: any drop at all is a regression.
//!
//! The bootstrap over tasks needs tasks to resample: with one task every
//! replicate is that task, and the interval shrinks to the observed change
//! however noisy it is. Below [`MIN_TASKS`] common tasks the aggregates are
//! therefore not gated (their drops are within noise) and the exact tests,
//! per task and across tasks, which hold at any size, decide alone.

use serde::Serialize;

use super::paired::{Difference, ExactTest};
use super::stratified::Stratified;

/// How drops are judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Rule {
    Statistical {
        alpha: f64,
    },
    /// Any drop is a regression.
    Exact,
}

/// What a change amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A drop the rule flags.
    Regression,
    /// A drop the data does not support at the chosen level.
    WithinNoise,
    /// No drop.
    NoDrop,
}

impl Verdict {
    pub fn is_regression(self) -> bool {
        self == Verdict::Regression
    }

    /// The word shown after a figure; empty for no drop.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Regression => "REGRESSION",
            Verdict::WithinNoise => "within noise",
            Verdict::NoDrop => "",
        }
    }
}

/// Fewest common tasks for a bootstrap interval to gate an aggregate.
pub const MIN_TASKS: usize = 10;

/// A drop's verdict: any drop under the exact rule; under the statistical
/// rule a regression when `supported(alpha)` holds.
fn judge(rule: Rule, dropped: bool, supported: impl FnOnce(f64) -> bool) -> Verdict {
    match rule {
        _ if !dropped => Verdict::NoDrop,
        Rule::Exact => Verdict::Regression,
        Rule::Statistical { alpha } if supported(alpha) => Verdict::Regression,
        Rule::Statistical { .. } => Verdict::WithinNoise,
    }
}

/// The verdict on an aggregate's paired difference over `common_tasks` tasks.
pub fn aggregate(rule: Rule, d: &Difference, common_tasks: usize) -> Verdict {
    judge(rule, d.change.estimate < 0.0, |_| common_tasks >= MIN_TASKS && d.drop_excludes_zero())
}

/// The verdict on a mean rate, from the exact stratified test across tasks
/// of its counts (solved runs for the mean solve rate, passed runs for the
/// mean pass rate). Its one-sided level is alpha / 2, the tail the
/// two-sided intervals of pass^k and solve^k leave on the side of a drop.
pub fn across_tasks(rule: Rule, s: &Stratified) -> Verdict {
    judge(rule, s.dropped(), |alpha| s.p_drop <= alpha / 2.0)
}

/// The verdict on one task's counts.
pub fn task(rule: Rule, t: &ExactTest) -> Verdict {
    judge(rule, t.dropped(), |alpha| t.significant_drop(alpha))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paired::Paired;
    use crate::{Settings, TaskCounts};

    #[test]
    fn one_flaky_task_losing_a_run_is_noise_unless_exact() {
        let before: Vec<TaskCounts> = (0..20).map(|i| TaskCounts::new(format!("t{i}"), "T1", 5, 5, 5)).collect();
        let mut after = before.clone();
        after[3].solved = 4;
        let p = Paired::of(&before, &after, &Settings::default()).unwrap();
        let stat = Rule::Statistical { alpha: 0.05 };
        let n = p.common_tasks;
        assert_eq!(aggregate(stat, &p.solve_k, n), Verdict::WithinNoise);
        assert_eq!(task(stat, &p.tasks[3].solved), Verdict::WithinNoise);
        assert_eq!(task(stat, &p.tasks[4].solved), Verdict::NoDrop);
        assert_eq!(aggregate(Rule::Exact, &p.solve_k, n), Verdict::Regression);
        assert_eq!(task(Rule::Exact, &p.tasks[3].solved), Verdict::Regression);
        assert_eq!(aggregate(stat, &p.pass_k, n), Verdict::NoDrop);
    }

    #[test]
    fn a_mean_rate_is_judged_across_tasks_at_half_alpha() {
        // Two tasks 3/3 -> 0/3: p = 1/400 across tasks, though each alone is 1/20.
        let two = Stratified::of([((3, 3), (0, 3)), ((3, 3), (0, 3))]);
        assert_eq!(across_tasks(Rule::Statistical { alpha: 0.05 }, &two), Verdict::Regression);
        assert_eq!(across_tasks(Rule::Statistical { alpha: 0.004 }, &two), Verdict::WithinNoise);
        // One task alone: p = 0.05 > 0.025.
        let one = Stratified::of([((3, 3), (0, 3))]);
        assert_eq!(across_tasks(Rule::Statistical { alpha: 0.05 }, &one), Verdict::WithinNoise);
        assert_eq!(across_tasks(Rule::Exact, &one), Verdict::Regression);
        let rise = Stratified::of([((0, 3), (3, 3))]);
        assert_eq!(across_tasks(Rule::Exact, &rise), Verdict::NoDrop);
    }

    #[test]
    fn too_few_tasks_leave_the_aggregate_to_the_task_tests() {
        // One task, solved 1/1 then 0/1: every replicate is that task, so the
        // interval is the drop itself; that is no evidence.
        let before = [TaskCounts::new("a", "T1", 1, 1, 1)];
        let after = [TaskCounts::new("a", "T1", 1, 1, 0)];
        let p = Paired::of(&before, &after, &Settings::default()).unwrap();
        assert!(p.solve_k.drop_excludes_zero());
        let stat = Rule::Statistical { alpha: 0.05 };
        assert_eq!(aggregate(stat, &p.solve_k, p.common_tasks), Verdict::WithinNoise);
        assert_eq!(task(stat, &p.tasks[0].solved), Verdict::WithinNoise);
    }
}
