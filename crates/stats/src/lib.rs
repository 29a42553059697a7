//! Statistics over a result's tasks: pure functions, no I/O, no printing.
//! vaultbench's `report` (summary, compare, calibrate), `sweep` (the
//! `--models` report and the regression check after a run) and `publish`
//! (intervals, ties, curves) all call these, so every figure means the same
//! wherever it shows. It knows task counts, not result files: vaultbench
//! turns a result into [`TaskCounts`] and formats what comes back.
//!
//! What it owns:
//! - the unbiased pass^k / solve^k estimator for every k up to a task's runs
//!   ([`estimate`]) and its curve;
//! - the bootstrap over tasks (a task's runs stay together) with a fixed,
//!   named seed, and percentile intervals ([`bootstrap`], [`summary`]);
//! - the paired comparison of two results on their common tasks
//!   ([`paired`]), with Fisher's exact test per task ([`exact`]) corrected
//!   for multiple testing ([`multiple`]), the exact stratified test across
//!   tasks ([`stratified`]) and the regression gate ([`gate`]);
//! - the gate's false-alarm rate and power by simulation ([`simulate`]);
//! - judge agreement beyond chance: Cohen's kappa and the Wilson interval
//!   ([`agreement`]).
//!
//! Everything here is derived when a result is read; nothing is stored in a
//! result file. Rates are percentages (0..100), as in the aggregate block.

pub mod agreement;
pub mod bootstrap;
pub mod estimate;
pub mod exact;
pub mod gate;
pub mod multiple;
pub mod paired;
pub mod simulate;
pub mod stratified;
pub mod summary;

use serde::{Serialize, Serializer};

pub use bootstrap::Settings;
pub use gate::{Rule, Verdict};
pub use paired::Paired;
pub use summary::Summary;

/// The significance level used when none is given (`--alpha`): 95% intervals.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Runs per task the statistics take into account. A real sweep has a
/// handful; a file claiming more is malformed, and is read as this many so
/// that no estimate or exact test can grow without bound.
pub const MAX_RUNS: u32 = 10_000;

/// One task of a result as the statistics see it: how many of its runs
/// passed and solved. Runs above [`MAX_RUNS`] and counts above the runs (a
/// malformed file) are clamped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCounts {
    pub id: String,
    /// `T1`..`T4`, or `untagged`, as the aggregate's `by_difficulty` keys.
    pub tier: String,
    pub runs: u32,
    pub passed: u32,
    pub solved: u32,
}

impl TaskCounts {
    pub fn new(id: impl Into<String>, tier: impl Into<String>, runs: u32, passed: u32, solved: u32) -> TaskCounts {
        let runs = runs.min(MAX_RUNS);
        TaskCounts { id: id.into(), tier: tier.into(), runs, passed: passed.min(runs), solved: solved.min(runs) }
    }
}

/// A point estimate with its interval, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    #[serde(serialize_with = "one_decimal")]
    pub estimate: f64,
    #[serde(serialize_with = "one_decimal")]
    pub low: f64,
    #[serde(serialize_with = "one_decimal")]
    pub high: f64,
}

impl Interval {
    /// Half the interval's width: the `±` of `57.4% ±13.0`.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
}

/// `x` rounded to `places` decimals, for the JSON of derived figures.
pub fn round(x: f64, places: i32) -> f64 {
    let factor = 10f64.powi(places);
    (x * factor).round() / factor + 0.0
}

fn one_decimal<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round(*x, 1))
}

fn four_decimals<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round(*x, 4))
}

fn four_decimals_opt<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => four_decimals(x, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_clamped_to_the_runs() {
        let t = TaskCounts::new("a", "T1", 3, 7, 9);
        assert_eq!((t.passed, t.solved), (3, 3));
        let t = TaskCounts::new("a", "T1", u32::MAX, 5, u32::MAX);
        assert_eq!((t.runs, t.passed, t.solved), (MAX_RUNS, 5, MAX_RUNS));
    }

    #[test]
    fn json_figures_round_without_negative_zero() {
        let i = Interval { estimate: 57.407, low: -0.04, high: 70.37 };
        assert_eq!(serde_json::to_string(&i).unwrap(), r#"{"estimate":57.4,"low":0.0,"high":70.4}"#);
        assert_eq!(i.half_width(), (70.37 + 0.04) / 2.0);
    }
}
