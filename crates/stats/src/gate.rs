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

/// The verdict on an aggregate's paired difference over `common_tasks` tasks.
pub fn aggregate(rule: Rule, d: &Difference, common_tasks: usize) -> Verdict {
    if d.change.estimate >= 0.0 {
        return Verdict::NoDrop;
    }
    match rule {
        Rule::Exact => Verdict::Regression,
        Rule::Statistical { .. } if common_tasks >= MIN_TASKS && d.drop_excludes_zero() => Verdict::Regression,
        Rule::Statistical { .. } => Verdict::WithinNoise,
    }
}

/// The verdict on a mean rate, from the exact stratified test across tasks
/// of its counts (solved runs for the mean solve rate, passed runs for the
/// mean pass rate). Its one-sided level is alpha / 2, the tail the
/// two-sided intervals of pass^k and solve^k leave on the side of a drop.
pub fn across_tasks(rule: Rule, s: &Stratified) -> Verdict {
    if !s.dropped() {
        return Verdict::NoDrop;
    }
    match rule {
        Rule::Exact => Verdict::Regression,
        Rule::Statistical { alpha } if s.p_drop <= alpha / 2.0 => Verdict::Regression,
        Rule::Statistical { .. } => Verdict::WithinNoise,
    }
}

/// The verdict on one task's counts.
pub fn task(rule: Rule, t: &ExactTest) -> Verdict {
    if !t.dropped() {
        return Verdict::NoDrop;
    }
    match rule {
        Rule::Exact => Verdict::Regression,
        Rule::Statistical { alpha } if t.significant_drop(alpha) => Verdict::Regression,
        Rule::Statistical { .. } => Verdict::WithinNoise,
    }
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
