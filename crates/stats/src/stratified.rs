//! The exact stratified test across tasks: did runs succeed less often after
//! a change, task by task, taken together?
//!
//! Each common task is a 2x2 table (before/after x succeeded/not), and the
//! hypothesis of no change is that within every task a run succeeds as
//! often after as before. Given each table's margins the after side's
//! successes are hypergeometric (as in Fisher's test), and the tables are
//! independent, so their sum S, the Cochran–Mantel–Haenszel statistic, has
//! an exact null distribution: the convolution of the tasks' hypergeometric
//! distributions (R's `mantelhaen.test(exact = TRUE)` computes the same).
//! The one-sided p-value of a drop is P(S <= observed).
//!
//! Why it belongs beside the per-task tests and the bootstrap: at k = 3 one
//! task can never be significant after a correction (3/3 against 0/3 gives
//! p = 1/20), and the bootstrap interval of the mean solve rate is wide
//! exactly when a few tasks broke completely (their differences of -100
//! points inflate the spread it resamples). The stratified test pools every
//! task's evidence while a task that is all-or-nothing on both sides (5/5
//! against 5/5) adds no noise, its table being fixed by its margins.

use serde::Serialize;

use super::exact::after_successes;

/// Probabilities below this at either end of the running convolution are
/// dropped: they cannot move a p-value printed to four decimals, and
/// dropping them keeps the work proportional to the spread of the sum.
const NEGLIGIBLE: f64 = 1e-300;

/// The test's figures over the tables given.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stratified {
    /// Successes after, summed over the tasks.
    pub observed: u64,
    /// Their expectation under no change (from each table's margins).
    #[serde(serialize_with = "super::one_decimal")]
    pub expected: f64,
    /// P(S <= observed): evidence that runs succeed less often after.
    #[serde(serialize_with = "super::four_decimals")]
    pub p_drop: f64,
    /// P(S >= observed): evidence that they succeed more often.
    #[serde(serialize_with = "super::four_decimals")]
    pub p_rise: f64,
    /// Tables whose margins leave room for chance (not all-or-nothing).
    pub informative: usize,
}

impl Stratified {
    /// Fewer successes after than expected.
    pub fn dropped(&self) -> bool {
        (self.observed as f64) < self.expected - 1e-9
    }

    /// Test `tables`, each (before, after) as (successes, runs); tables with
    /// no runs on a side are left out. No table left: no evidence (p = 1).
    pub fn of(tables: impl IntoIterator<Item = ((u32, u32), (u32, u32))>) -> Stratified {
        // dist[i] = P(S = offset + i) over the tables so far.
        let mut offset = 0u64;
        let mut dist = vec![1.0f64];
        let (mut observed, mut expected, mut informative) = (0u64, 0.0f64, 0usize);
        for (before, after) in tables {
            if before.1 == 0 || after.1 == 0 {
                continue;
            }
            let (lo, pmf) = after_successes(before, after);
            observed += u64::from(after.0.min(after.1));
            expected += pmf.iter().enumerate().map(|(i, p)| (lo + i as u64) as f64 * p).sum::<f64>();
            if pmf.len() == 1 {
                offset += lo;
                continue;
            }
            informative += 1;
            let mut next = vec![0.0; dist.len() + pmf.len() - 1];
            for (i, &a) in dist.iter().enumerate() {
                for (j, &b) in pmf.iter().enumerate() {
                    next[i + j] += a * b;
                }
            }
            offset += lo;
            let start = next.iter().position(|&p| p >= NEGLIGIBLE).unwrap_or(0);
            let end = next.iter().rposition(|&p| p >= NEGLIGIBLE).map_or(next.len(), |e| e + 1);
            offset += start as u64;
            dist = next[start..end.max(start + 1)].to_vec();
        }
        let (mut p_drop, mut p_rise) = (0.0, 0.0);
        for (i, p) in dist.iter().enumerate() {
            let s = offset + i as u64;
            if s <= observed {
                p_drop += p;
            }
            if s >= observed {
                p_rise += p;
            }
        }
        Stratified { observed, expected, p_drop: p_drop.min(1.0), p_rise: p_rise.min(1.0), informative }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12
    }

    #[test]
    fn one_table_is_fishers_test() {
        // 3/3 then 0/3: P(X = 0) for hypergeometric(6, 3, 3) = 1/C(6,3) = 1/20.
        let s = Stratified::of([((3, 3), (0, 3))]);
        assert!(close(s.p_drop, 0.05), "{s:?}");
        assert!(close(s.p_rise, 1.0));
        assert_eq!((s.observed, s.informative), (0, 1));
        assert!(close(s.expected, 1.5) && s.dropped());
        for (b, a) in [((4, 5), (1, 5)), ((2, 7), (3, 4)), ((5, 5), (0, 3))] {
            let f = crate::exact::fisher(b, a);
            let s = Stratified::of([(b, a)]);
            assert!(close(s.p_drop, f.lower) && close(s.p_rise, f.higher), "{b:?} {a:?}");
        }
    }

    #[test]
    fn tables_add_up_by_convolution() {
        // Two tables 3/3 -> 0/3: each X has P(0..=3) = 1/20, 9/20, 9/20, 1/20,
        // so P(S = 0) = 1/400. With 3/3 -> 1/3 instead, that table's X is
        // hypergeometric(6, 4, 3) on 1..=3: 3/15, 9/15, 3/15, so
        // P(S <= 1) = P(X1 = 0) P(X2 = 1) = 1/20 * 3/15 = 1/100.
        let s = Stratified::of([((3, 3), (0, 3)), ((3, 3), (0, 3))]);
        assert!(close(s.p_drop, 1.0 / 400.0), "{s:?}");
        let s = Stratified::of([((3, 3), (0, 3)), ((3, 3), (1, 3))]);
        assert!(close(s.p_drop, 1.0 / 100.0), "{s:?}");
        // A table fixed by its margins shifts the sum and adds no chance.
        let s = Stratified::of([((3, 3), (0, 3)), ((3, 3), (0, 3)), ((5, 5), (5, 5)), ((0, 2), (0, 2))]);
        assert!(close(s.p_drop, 1.0 / 400.0), "{s:?}");
        assert_eq!((s.observed, s.informative), (5, 2));
        assert!(close(s.expected, 8.0));
    }

    #[test]
    fn no_change_is_no_evidence_and_no_table_none() {
        let s = Stratified::of([((2, 5), (2, 5)), ((5, 5), (5, 5)), ((4, 5), (4, 5))]);
        assert!(!s.dropped() && s.p_drop > 0.5 && s.p_rise > 0.5, "{s:?}");
        for s in [Stratified::of([]), Stratified::of([((1, 0), (0, 3))])] {
            assert_eq!((s.p_drop, s.p_rise, s.informative, s.dropped()), (1.0, 1.0, 0, false));
        }
    }

    #[test]
    fn many_large_tables_stay_bounded_and_sum_to_one() {
        let tables: Vec<_> = (0..2000).map(|i| ((i % 50, 50), ((i + 7) % 50, 50))).collect();
        let s = Stratified::of(tables);
        assert!(s.p_drop >= 0.0 && s.p_drop <= 1.0 && s.p_rise <= 1.0);
        // P(S <= o) + P(S >= o) = 1 + P(S = o) >= 1.
        assert!(s.p_drop + s.p_rise >= 1.0 - 1e-9, "{s:?}");
    }
}
