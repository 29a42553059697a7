//! Two results compared on the tasks they share. The difference in pass^k,
//! solve^k and the mean pass and solve rates comes with a paired bootstrap
//! interval and p-value: a replicate draws common tasks and takes both
//! results' figures on the same draw, so that task difficulty, which both
//! share, cancels out. Per task, Fisher's exact test on the solved (and
//! passed) counts, with the Benjamini–Hochberg correction across tasks.
//!
//! Results with different k compare at their common k (the fewer runs) with
//! the unbiased estimator; per-task tests compare fractions, so any k works.

use serde::Serialize;

use super::bootstrap::{Rows, Settings, percentile_interval, two_sided_p};
use super::estimate::{all_of_k, common_k, rate_at};
use super::exact::{Fisher, fisher};
use super::multiple::benjamini_hochberg;
use super::stratified::Stratified;
use super::{Interval, TaskCounts};

/// A figure before and after, and their difference (after - before) with
/// its interval, in percentage points.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    #[serde(serialize_with = "super::one_decimal")]
    pub before: f64,
    #[serde(serialize_with = "super::one_decimal")]
    pub after: f64,
    pub change: Interval,
    /// Two-sided bootstrap p-value of "no difference".
    #[serde(serialize_with = "super::four_decimals")]
    pub p_value: f64,
}

impl Difference {
    /// The figure fell and the interval of the change lies wholly below zero.
    pub fn drop_excludes_zero(&self) -> bool {
        self.change.estimate < 0.0 && self.change.high < 0.0
    }

    pub fn rise_excludes_zero(&self) -> bool {
        self.change.estimate > 0.0 && self.change.low > 0.0
    }
}

/// The curves of both results on the common tasks at one k.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurveChange {
    pub k: u32,
    #[serde(serialize_with = "super::one_decimal")]
    pub pass_before: f64,
    #[serde(serialize_with = "super::one_decimal")]
    pub pass_after: f64,
    #[serde(serialize_with = "super::one_decimal")]
    pub solve_before: f64,
    #[serde(serialize_with = "super::one_decimal")]
    pub solve_after: f64,
}

/// `count` of `runs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Count {
    pub count: u32,
    pub runs: u32,
}

impl Count {
    pub fn fraction(self) -> f64 {
        if self.runs == 0 { 0.0 } else { f64::from(self.count) / f64::from(self.runs) }
    }
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.count, self.runs)
    }
}

/// Fisher's exact test of one task's counts, before and after.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ExactTest {
    pub before: Count,
    pub after: Count,
    /// One-sided p-value of a drop.
    #[serde(serialize_with = "super::four_decimals")]
    pub p_drop: f64,
    #[serde(serialize_with = "super::four_decimals")]
    pub p_two_sided: f64,
    /// `p_drop` after the Benjamini–Hochberg correction over every
    /// informative test of the comparison; `None` for an all-or-nothing
    /// table (5/5 vs 5/5, 0/5 vs 0/5), which carries no information and is
    /// left out of the family.
    #[serde(serialize_with = "super::four_decimals_opt")]
    pub p_drop_adjusted: Option<f64>,
    /// `p_two_sided` after the same correction: for telling two models
    /// apart task by task, in either direction.
    #[serde(serialize_with = "super::four_decimals_opt")]
    pub p_two_sided_adjusted: Option<f64>,
}

impl ExactTest {
    fn new(before: Count, after: Count) -> (ExactTest, Fisher) {
        let f = fisher((before.count, before.runs), (after.count, after.runs));
        let test = ExactTest {
            before,
            after,
            p_drop: f.lower,
            p_two_sided: f.two_sided,
            p_drop_adjusted: None,
            p_two_sided_adjusted: None,
        };
        (test, f)
    }

    /// The fraction fell (whether or not the data supports it).
    pub fn dropped(&self) -> bool {
        self.after.fraction() < self.before.fraction()
    }

    pub fn changed(&self) -> bool {
        self.before != self.after
    }

    /// A drop significant at `alpha` after the correction.
    pub fn significant_drop(&self, alpha: f64) -> bool {
        self.dropped() && self.p_drop_adjusted.is_some_and(|q| q <= alpha)
    }

    /// A difference either way, significant at `alpha` after the correction.
    pub fn significant_difference(&self, alpha: f64) -> bool {
        self.changed() && self.p_two_sided_adjusted.is_some_and(|q| q <= alpha)
    }
}

/// One common task's tests.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskTest {
    pub id: String,
    pub tier: String,
    pub solved: ExactTest,
    pub passed: ExactTest,
}

/// The paired comparison of `before` (e.g. a baseline) and `after`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Paired {
    /// Tasks both results ran (with at least one run each side).
    pub common_tasks: usize,
    /// The k pass^k and solve^k are compared at: the fewest runs of any
    /// common task on either side.
    pub k: u32,
    /// Each side's own k over the common tasks (its fewest runs).
    pub k_before: u32,
    pub k_after: u32,
    pub only_before: Vec<String>,
    pub only_after: Vec<String>,
    pub pass_k: Difference,
    pub solve_k: Difference,
    pub mean_pass_rate: Difference,
    pub mean_solve_rate: Difference,
    /// The exact stratified test across the common tasks of the solved
    /// counts, then of the passed counts: the gate's test of the mean rates.
    pub solved_across_tasks: Stratified,
    pub passed_across_tasks: Stratified,
    /// pass^j and solve^j of both results on the common tasks, j = 1..k.
    pub curve: Vec<CurveChange>,
    /// One per common task, in the order of `after`. Not serialized here:
    /// whoever lists the tasks shows each test next to its task.
    #[serde(skip)]
    pub tasks: Vec<TaskTest>,
    /// Informative per-task tests in the correction's family.
    pub family_size: usize,
    pub bootstrap: Settings,
}

impl Paired {
    /// The results ran a different number of times per task.
    pub fn different_k(&self) -> bool {
        self.k_before != self.k_after
    }

    /// Compare on common tasks (matched by id); `None` when there is none.
    pub fn of(before: &[TaskCounts], after: &[TaskCounts], settings: &Settings) -> Option<Paired> {
        let usable = |t: &&TaskCounts| t.runs > 0;
        let before_by_id: std::collections::HashMap<&str, &TaskCounts> =
            before.iter().filter(usable).map(|t| (t.id.as_str(), t)).collect();
        let after_ids: std::collections::HashSet<&str> = after.iter().filter(usable).map(|t| t.id.as_str()).collect();
        let pairs: Vec<(&TaskCounts, &TaskCounts)> =
            after.iter().filter(usable).filter_map(|a| Some((*before_by_id.get(a.id.as_str())?, a))).collect();
        if pairs.is_empty() {
            return None;
        }
        let only_before =
            before.iter().filter(usable).filter(|t| !after_ids.contains(t.id.as_str())).map(|t| t.id.clone()).collect();
        let only_after = after
            .iter()
            .filter(usable)
            .filter(|t| !before_by_id.contains_key(t.id.as_str()))
            .map(|t| t.id.clone())
            .collect();
        let k_before = common_k(pairs.iter().map(|(b, _)| b.runs));
        let k_after = common_k(pairs.iter().map(|(_, a)| a.runs));
        let k = k_before.min(k_after);

        // Columns: pass^k, solve^k, passed, solved, runs, before then after.
        let mut rows = Rows::new(10);
        for (b, a) in &pairs {
            let side = |t: &TaskCounts| {
                [
                    all_of_k(t.passed, t.runs, k).unwrap_or(0.0),
                    all_of_k(t.solved, t.runs, k).unwrap_or(0.0),
                    f64::from(t.passed),
                    f64::from(t.solved),
                    f64::from(t.runs),
                ]
            };
            let mut row = side(b).to_vec();
            row.extend(side(a));
            rows.push(&row);
        }
        let n = pairs.len() as f64;
        // (before, after) of figure f from column sums.
        let figure = |f: usize, s: &[f64]| -> (f64, f64) {
            let ratio = |num: f64, den: f64| if den == 0.0 { 0.0 } else { num / den * 100.0 };
            match f {
                0 | 1 => (s[f] / n * 100.0, s[5 + f] / n * 100.0),
                _ => (ratio(s[f], s[4]), ratio(s[5 + f], s[9])),
            }
        };
        let observed = rows.sums();
        // Sums of the same values in another order can differ in the last
        // bits: a change within 1e-9 points is no change, so that rounding
        // never passes for a drop.
        let change = |b: f64, a: f64| if (a - b).abs() < 1e-9 { 0.0 } else { a - b };
        let mut changes: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::with_capacity(settings.resamples as usize));
        rows.for_each_replicate(settings, |s| {
            for (f, values) in changes.iter_mut().enumerate() {
                let (b, a) = figure(f, s);
                values.push(change(b, a));
            }
        });
        let [pass_k, solve_k, mean_pass_rate, mean_solve_rate] = changes.map(Some);
        let difference = |f: usize, changes: Option<Vec<f64>>| {
            let changes = changes.unwrap_or_default();
            let (before, after) = figure(f, &observed);
            let p_value = two_sided_p(&changes);
            Difference {
                before,
                after,
                change: percentile_interval(changes, change(before, after), settings.alpha),
                p_value,
            }
        };

        let mut tasks: Vec<TaskTest> = Vec::with_capacity(pairs.len());
        // The informative tests: (task, solved or passed).
        let mut family: Vec<(usize, bool)> = Vec::new();
        for (i, (b, a)) in pairs.iter().enumerate() {
            let count = |c: u32, t: &TaskCounts| Count { count: c, runs: t.runs };
            let (solved, fs) = ExactTest::new(count(b.solved, b), count(a.solved, a));
            let (passed, fp) = ExactTest::new(count(b.passed, b), count(a.passed, a));
            if !fs.degenerate {
                family.push((i, true));
            }
            if !fp.degenerate {
                family.push((i, false));
            }
            tasks.push(TaskTest { id: a.id.clone(), tier: a.tier.clone(), solved, passed });
        }
        let pick = |tasks: &[TaskTest], &(i, is_solved): &(usize, bool)| {
            if is_solved { tasks[i].solved } else { tasks[i].passed }
        };
        let drop_q = benjamini_hochberg(&family.iter().map(|f| pick(&tasks, f).p_drop).collect::<Vec<_>>());
        let two_q = benjamini_hochberg(&family.iter().map(|f| pick(&tasks, f).p_two_sided).collect::<Vec<_>>());
        for ((&(i, is_solved), q_drop), q_two) in family.iter().zip(drop_q).zip(two_q) {
            let test = if is_solved { &mut tasks[i].solved } else { &mut tasks[i].passed };
            test.p_drop_adjusted = Some(q_drop);
            test.p_two_sided_adjusted = Some(q_two);
        }
        Some(Paired {
            common_tasks: pairs.len(),
            k,
            k_before,
            k_after,
            only_before,
            only_after,
            pass_k: difference(0, pass_k),
            solve_k: difference(1, solve_k),
            mean_pass_rate: difference(2, mean_pass_rate),
            mean_solve_rate: difference(3, mean_solve_rate),
            solved_across_tasks: Stratified::of(pairs.iter().map(|(b, a)| ((b.solved, b.runs), (a.solved, a.runs)))),
            passed_across_tasks: Stratified::of(pairs.iter().map(|(b, a)| ((b.passed, b.runs), (a.passed, a.runs)))),
            curve: curve(&pairs, k),
            tasks,
            family_size: family.len(),
            bootstrap: *settings,
        })
    }
}

/// Both curves on the common tasks, k = 1..=k (at most
/// [`CURVE_POINTS`](super::summary::CURVE_POINTS) points, then k itself).
fn curve(pairs: &[(&TaskCounts, &TaskCounts)], k: u32) -> Vec<CurveChange> {
    let side = |pick: fn(&TaskCounts) -> u32, before: bool| -> Vec<(u32, u32)> {
        pairs.iter().map(|(b, a)| if before { (pick(b), b.runs) } else { (pick(a), a.runs) }).collect()
    };
    let (pb, pa) = (side(|t| t.passed, true), side(|t| t.passed, false));
    let (sb, sa) = (side(|t| t.solved, true), side(|t| t.solved, false));
    super::summary::curve_ks(k)
        .into_iter()
        .map(|j| CurveChange {
            k: j,
            pass_before: rate_at(&pb, j).unwrap_or(0.0),
            pass_after: rate_at(&pa, j).unwrap_or(0.0),
            solve_before: rate_at(&sb, j).unwrap_or(0.0),
            solve_after: rate_at(&sa, j).unwrap_or(0.0),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(counts: &[(&str, u32, u32)]) -> Vec<TaskCounts> {
        counts.iter().map(|&(id, n, c)| TaskCounts::new(id, "T2", n, n, c)).collect()
    }

    #[test]
    fn identical_results_differ_by_nothing() {
        let t = tasks(&[("a", 5, 5), ("b", 5, 3), ("c", 5, 0), ("d", 5, 4)]);
        let p = Paired::of(&t, &t, &Settings::default()).unwrap();
        assert_eq!(p.common_tasks, 4);
        for d in [p.pass_k, p.solve_k, p.mean_pass_rate, p.mean_solve_rate] {
            assert_eq!((d.change.estimate, d.change.low, d.change.high, d.p_value), (0.0, 0.0, 0.0, 1.0));
        }
        assert!(p.tasks.iter().all(|t| !t.solved.dropped()));
        // 5/5 vs 5/5 and 0/5 vs 0/5 say nothing; 3/5 vs 3/5 and 4/5 vs 4/5 are tested.
        assert_eq!(p.family_size, 2);
    }

    #[test]
    fn a_broad_drop_is_significant_and_a_single_flip_is_not() {
        let before: Vec<TaskCounts> = (0..30).map(|i| TaskCounts::new(format!("t{i}"), "T2", 5, 5, 5)).collect();
        let mut after = before.clone();
        for t in after.iter_mut().take(10) {
            t.solved = 0;
        }
        after[10].solved = 4;
        let p = Paired::of(&before, &after, &Settings::default()).unwrap();
        assert!((p.solve_k.change.estimate - (-1100.0 / 30.0)).abs() < 1e-9, "{:?}", p.solve_k);
        assert!(p.solve_k.drop_excludes_zero(), "{:?}", p.solve_k);
        assert!(p.solve_k.p_value < 0.01);
        assert!(p.tasks[..10].iter().all(|t| t.solved.significant_drop(0.05)));
        assert!(p.tasks[..10].iter().all(|t| t.solved.significant_difference(0.05)));
        // 5/5 -> 4/5 alone: p = 0.5, nowhere near.
        assert!(p.tasks[10].solved.dropped() && !p.tasks[10].solved.significant_drop(0.05));
        assert!(p.tasks[11].solved.p_drop_adjusted.is_none());
    }

    #[test]
    fn different_k_compare_at_the_common_k() {
        let before = tasks(&[("a", 5, 4), ("b", 5, 5), ("gone", 5, 5)]);
        let after = tasks(&[("a", 3, 2), ("b", 3, 3), ("new", 3, 0)]);
        let p = Paired::of(&before, &after, &Settings::default()).unwrap();
        assert_eq!((p.k, p.k_before, p.k_after, p.different_k()), (3, 5, 3, true));
        assert_eq!(
            (p.only_before.as_slice(), p.only_after.as_slice()),
            (&["gone".to_string()][..], &["new".to_string()][..])
        );
        // solve^3 before: (C(4,3)/C(5,3) + 1)/2 = (0.4 + 1)/2 = 70%; after: (0 + 1)/2 = 50%.
        assert!((p.solve_k.before - 70.0).abs() < 1e-9 && (p.solve_k.after - 50.0).abs() < 1e-9, "{:?}", p.solve_k);
        // The curves run to the common k and end there; solve^1 is each side's mean rate.
        assert_eq!(p.curve.len(), 3);
        assert_eq!((p.curve[2].solve_before, p.curve[2].solve_after), (p.solve_k.before, p.solve_k.after));
        assert!((p.curve[0].solve_before - 90.0).abs() < 1e-9 && (p.curve[0].solve_after - 500.0 / 6.0).abs() < 1e-9);
        assert!(Paired::of(&before, &tasks(&[("x", 3, 3)]), &Settings::default()).is_none());
    }

    #[test]
    fn same_seed_same_comparison() {
        let before = tasks(&[("a", 5, 4), ("b", 5, 2), ("c", 5, 5), ("d", 5, 1)]);
        let after = tasks(&[("a", 5, 3), ("b", 5, 2), ("c", 5, 4), ("d", 5, 0)]);
        let s = Settings::default();
        assert_eq!(Paired::of(&before, &after, &s), Paired::of(&before, &after, &s));
    }
}
