//! The statistics of one result: the pass^k and solve^k curves for k = 1..K
//! (K: the fewest runs of any task) and bootstrap intervals for them and for
//! the mean pass and solve rates, overall and per tier.
//!
//! The bootstrap is stratified by tier: a replicate draws each tier's tasks
//! from that tier, as many as it has. A suite's tier mix is a choice of its
//! authors, not chance, so it is kept fixed; and one set of draws gives both
//! the overall and the per-tier intervals.

use indexmap::IndexMap;
use serde::Serialize;

use super::bootstrap::{Rows, Settings, percentile_interval};
use super::estimate::{all_of_k, common_k};
use super::{Interval, TaskCounts};

/// One point of the curve: the chance that k runs of a task all pass / all solve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    pub k: u32,
    pub pass: Interval,
    pub solve: Interval,
}

/// The figures of one tier, at the result's K.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TierStats {
    pub tasks: usize,
    pub pass_k: Interval,
    pub solve_k: Interval,
    pub mean_solve_rate: Interval,
}

/// Intervals and curves of one result, derived from its task counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Tasks with at least one run (the sampling units).
    pub tasks: usize,
    /// The largest k every task allows; pass^k and solve^k are at this k.
    pub k: u32,
    /// Set when tasks have different numbers of runs: the curve stops at the fewest.
    pub uneven_runs: bool,
    pub pass_k: Interval,
    pub solve_k: Interval,
    pub mean_pass_rate: Interval,
    pub mean_solve_rate: Interval,
    /// k = 1..=K.
    pub curve: Vec<CurvePoint>,
    /// By tier, in first-seen task order (as `by_difficulty`).
    pub by_tier: IndexMap<String, TierStats>,
    pub bootstrap: Settings,
}

/// The curve shows every k up to this many; beyond it (a malformed file
/// with very many runs) it jumps to the last k.
pub const CURVE_POINTS: u32 = 100;

/// The k of the curve: 1..=K, at most [`CURVE_POINTS`] of them, and K.
pub(crate) fn curve_ks(k: u32) -> Vec<u32> {
    let mut ks: Vec<u32> = (1..=k.min(CURVE_POINTS)).collect();
    if k > CURVE_POINTS {
        ks.push(k);
    }
    ks
}

/// The rows of a result's tasks, grouped by tier. A task's row holds pass^j
/// for each j of the curve, then solve^j for each j, then its passed runs,
/// solved runs and runs.
struct Block {
    rows: Rows,
    points: usize,
    /// Each tier's rows, in first-seen order.
    strata: Vec<std::ops::Range<usize>>,
}

impl Block {
    fn new(tiers: &[&[&TaskCounts]], ks: &[u32]) -> Block {
        let points = ks.len();
        let mut rows = Rows::new(2 * points + 3);
        let mut row = Vec::with_capacity(rows.cols);
        let mut strata = Vec::with_capacity(tiers.len());
        for tasks in tiers {
            let start = rows.len();
            for t in tasks.iter() {
                row.clear();
                row.extend(ks.iter().map(|&j| all_of_k(t.passed, t.runs, j).unwrap_or(0.0)));
                row.extend(ks.iter().map(|&j| all_of_k(t.solved, t.runs, j).unwrap_or(0.0)));
                row.extend([f64::from(t.passed), f64::from(t.solved), f64::from(t.runs)]);
                rows.push(&row);
            }
            strata.push(start..rows.len());
        }
        Block { rows, points, strata }
    }

    /// Figure `f` of the tasks whose sums start at `offset` of a replicate's
    /// block (`tasks` of them): a curve column as a mean over tasks, the two
    /// rates as ratios of run counts (as the aggregate computes them).
    fn figure(&self, sums: &[f64], offset: usize, tasks: usize, f: usize) -> f64 {
        let p = self.points;
        if f < 2 * p {
            return sums[offset + f] / tasks as f64 * 100.0;
        }
        let runs = sums[offset + 2 * p + 2];
        if runs == 0.0 { 0.0 } else { sums[offset + f] / runs * 100.0 }
    }

    /// The intervals of every figure overall, and of `tier_figures` for each tier.
    fn intervals(&self, tier_figures: &[usize], settings: &Settings) -> (Vec<Interval>, Vec<Vec<Interval>>) {
        let cols = self.rows.cols;
        let stratified = self.strata.len() > 1;
        // What to read from a replicate's block: (offset, tasks, figure), the
        // overall figures first, then each tier's.
        let total_offset = if stratified { self.strata.len() * cols } else { 0 };
        let mut wanted: Vec<(usize, usize, usize)> =
            (0..2 * self.points + 2).map(|f| (total_offset, self.rows.len(), f)).collect();
        if stratified {
            for (s, range) in self.strata.iter().enumerate() {
                wanted.extend(tier_figures.iter().map(|&f| (s * cols, range.len(), f)));
            }
        }
        let mut values: Vec<Vec<f64>> = vec![Vec::with_capacity(settings.resamples as usize); wanted.len()];
        self.rows.for_each_stratified_replicate(&self.strata, settings, |rep| {
            for (v, &(offset, tasks, f)) in values.iter_mut().zip(&wanted) {
                v.push(self.figure(rep, offset, tasks, f));
            }
        });
        // The observed figures: the same, from the data's own sums.
        let mut observed = vec![0.0; total_offset + cols];
        for (s, range) in self.strata.iter().enumerate() {
            for row in self.rows.data[range.start * cols..range.end * cols].chunks_exact(cols) {
                for (c, v) in row.iter().enumerate() {
                    if stratified {
                        observed[s * cols + c] += v;
                    }
                    observed[total_offset + c] += v;
                }
            }
        }
        let mut intervals = values.into_iter().zip(&wanted).map(|(v, &(offset, tasks, f))| {
            percentile_interval(v, self.figure(&observed, offset, tasks, f), settings.alpha)
        });
        let overall: Vec<Interval> = intervals.by_ref().take(2 * self.points + 2).collect();
        if !stratified {
            return (overall.clone(), vec![tier_figures.iter().map(|&f| overall[f]).collect()]);
        }
        let tiers = self.strata.iter().map(|_| intervals.by_ref().take(tier_figures.len()).collect()).collect();
        (overall, tiers)
    }
}

impl Summary {
    /// `None` when no task has a run.
    pub fn of(tasks: &[TaskCounts], settings: &Settings) -> Option<Summary> {
        let units: Vec<&TaskCounts> = tasks.iter().filter(|t| t.runs > 0).collect();
        if units.is_empty() {
            return None;
        }
        let k = common_k(units.iter().map(|t| t.runs));
        let uneven_runs = units.iter().any(|t| t.runs != k);
        let ks = curve_ks(k);
        let p = ks.len();
        let mut tiers: IndexMap<String, Vec<&TaskCounts>> = IndexMap::new();
        for t in &units {
            tiers.entry(t.tier.clone()).or_default().push(t);
        }
        let groups: Vec<&[&TaskCounts]> = tiers.values().map(Vec::as_slice).collect();
        // Per tier: pass^K, solve^K and the mean solve rate.
        let (all, per_tier) = Block::new(&groups, &ks).intervals(&[p - 1, 2 * p - 1, 2 * p + 1], settings);
        let curve = ks.iter().enumerate().map(|(j, &k)| CurvePoint { k, pass: all[j], solve: all[p + j] }).collect();
        let by_tier = tiers
            .iter()
            .zip(per_tier)
            .map(|((tier, members), f)| {
                let stats = TierStats { tasks: members.len(), pass_k: f[0], solve_k: f[1], mean_solve_rate: f[2] };
                (tier.clone(), stats)
            })
            .collect();
        Some(Summary {
            tasks: units.len(),
            k,
            uneven_runs,
            pass_k: all[p - 1],
            solve_k: all[2 * p - 1],
            mean_pass_rate: all[2 * p],
            mean_solve_rate: all[2 * p + 1],
            curve,
            by_tier,
            bootstrap: *settings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(counts: &[(&str, u32, u32)]) -> Vec<TaskCounts> {
        counts.iter().enumerate().map(|(i, &(tier, n, c))| TaskCounts::new(format!("t{i}"), tier, n, n, c)).collect()
    }

    #[test]
    fn the_curve_ends_at_the_stored_figure_and_brackets_its_estimates() {
        let t = tasks(&[("T1", 5, 5), ("T1", 5, 4), ("T2", 5, 0), ("T2", 5, 5), ("T3", 5, 3)]);
        let s = Summary::of(&t, &Settings::default()).unwrap();
        assert_eq!(s.k, 5);
        assert_eq!(s.curve.len(), 5);
        assert_eq!(s.solve_k.estimate, 40.0);
        assert_eq!(s.curve[4].solve, s.solve_k);
        assert!((s.curve[0].solve.estimate - 68.0).abs() < 1e-9);
        assert_eq!(s.mean_solve_rate.estimate, 68.0);
        assert_eq!(s.pass_k.estimate, 100.0);
        for p in &s.curve {
            assert!(p.solve.low <= p.solve.estimate && p.solve.estimate <= p.solve.high, "{p:?}");
        }
        // Every task passed every run: no uncertainty about pass^k.
        assert_eq!((s.pass_k.low, s.pass_k.high), (100.0, 100.0));
        assert_eq!(s.by_tier.keys().collect::<Vec<_>>(), ["T1", "T2", "T3"]);
        let t2 = &s.by_tier["T2"];
        assert_eq!((t2.tasks, t2.solve_k.estimate, t2.mean_solve_rate.estimate), (2, 50.0, 50.0));
    }

    #[test]
    fn same_data_same_seed_same_intervals() {
        let t = tasks(&[("T1", 5, 5), ("T1", 5, 4), ("T2", 5, 1), ("T2", 5, 3), ("T3", 5, 2), ("T3", 5, 0)]);
        let a = Summary::of(&t, &Settings::default()).unwrap();
        let b = Summary::of(&t, &Settings::default()).unwrap();
        assert_eq!(a, b);
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    }

    #[test]
    fn uneven_runs_cut_the_curve_at_the_fewest() {
        let t = tasks(&[("T1", 3, 3), ("T1", 5, 5)]);
        let s = Summary::of(&t, &Settings::default()).unwrap();
        assert_eq!((s.k, s.uneven_runs, s.curve.len()), (3, true, 3));
        assert!(Summary::of(&tasks(&[("T1", 0, 0)]), &Settings::default()).is_none());
        // A malformed file claiming very many runs still gives a bounded curve.
        let s = Summary::of(&tasks(&[("T1", 5000, 4999), ("T1", 6000, 6000)]), &Settings::default()).unwrap();
        assert_eq!((s.k, s.curve.len(), s.curve.last().unwrap().k), (5000, CURVE_POINTS as usize + 1, 5000));
    }
}
