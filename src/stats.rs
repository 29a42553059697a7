//! Statistics: the `vaultbench-stats` crate (pure functions over task
//! counts: pass^k for every k, bootstrap intervals, the paired comparison,
//! exact tests, the regression gate, judge agreement), re-exported here,
//! plus the two things that need vaultbench: counting a result file's tasks,
//! and writing the figures as the rest of the tool writes numbers.

pub use vaultbench_stats::*;

use crate::format::Tier;
use crate::format::result::{ResultFile, TaskResult};
use crate::jsnum;

/// The tasks of a result file, counted from their runs (not from the stored
/// counts, which `report` checks separately).
pub fn counts(result: &ResultFile) -> Vec<TaskCounts> {
    result.tasks.iter().map(counts_of).collect()
}

/// One task of a result file, counted from its runs.
pub fn counts_of(t: &TaskResult) -> TaskCounts {
    let passed = t.runs.iter().filter(|r| r.passed).count() as u32;
    let solved = t.runs.iter().filter(|r| r.solved).count() as u32;
    TaskCounts::new(t.id.clone(), t.difficulty.map_or("untagged", Tier::as_str), t.runs.len() as u32, passed, solved)
}

/// One decimal, rounded as the aggregate block rounds rates (`Math.round`,
/// so a figure at k = n prints as its stored value); `-0.0` prints as `0.0`.
/// (Not `jsnum::to_fixed`, exact to the last binary digit and far slower:
/// a site shows thousands of these.)
pub fn fixed1(x: f64) -> String {
    let r = jsnum::round(x, 1) + 0.0;
    if r == 0.0 { "0.0".into() } else { format!("{r:.1}") }
}

/// A signed change with one decimal: `+3.7`, `-11.1`, `0.0`.
pub fn signed1(x: f64) -> String {
    let s = fixed1(x);
    if s.starts_with('-') || s == "0.0" { s } else { format!("+{s}") }
}

/// A p-value for people: `0.0040`, `0.26`, `<0.0001`, `1.00`.
pub fn format_p(p: f64) -> String {
    if p < 0.0001 {
        "<0.0001".into()
    } else if p >= 0.995 {
        "1.00".into()
    } else if p < 0.01 {
        format!("{p:.4}")
    } else if p < 0.1 {
        // Near the usual levels (0.05, 0.01) two decimals would read 0.048
        // and 0.054 both as 0.05, one flagged and one not.
        format!("{p:.3}")
    } else {
        format!("{p:.2}")
    }
}

/// `[44.4, 70.4]`.
pub fn bounds(i: &Interval) -> String {
    format!("[{}, {}]", fixed1(i.low), fixed1(i.high))
}

/// `57.4% [44.4, 70.4]`.
pub fn percent(i: &Interval) -> String {
    format!("{}% {}", fixed1(i.estimate), bounds(i))
}

/// `57.4% ±13.0`: the estimate and half the interval's width.
pub fn plus_minus(i: &Interval) -> String {
    format!("{}% ±{}", fixed1(i.estimate), fixed1(i.half_width()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        let i = Interval { estimate: 57.407, low: 44.44, high: 70.37 };
        assert_eq!(plus_minus(&i), "57.4% ±13.0");
        assert_eq!(percent(&i), "57.4% [44.4, 70.4]");
        assert_eq!(signed1(-0.01), "0.0");
        assert_eq!(signed1(3.66), "+3.7");
        assert_eq!(format_p(0.003968), "0.0040");
        assert_eq!(format_p(0.26), "0.26");
        assert_eq!((format_p(0.0476), format_p(0.0536)), ("0.048".into(), "0.054".into()));
        assert_eq!(format_p(0.00001), "<0.0001");
        // Ties round up, as the stored rates do: 1/16 of the tasks is 6.25%.
        assert_eq!(fixed1(6.25), jsnum::to_fixed(6.25, 1));
        assert_eq!((fixed1(57.407), fixed1(-0.04), fixed1(100.0)), ("57.4".into(), "0.0".into(), "100.0".into()));
    }
}
