//! The bootstrap over tasks. A result's tasks are the sampling units: a
//! replicate draws as many tasks as there are, with replacement, and a drawn
//! task brings all its runs (runs of one task are not independent of each
//! other, tasks are). Every statistic is a function of column sums over the
//! drawn tasks, so one pass of draws serves all of them.
//!
//! The draws come from the `wyrand` generator of the `fastrand` crate seeded
//! with [`SEED`]: the same file always gives the same interval, and anyone
//! can reproduce it. Intervals are percentiles of the replicates (linear
//! interpolation between order statistics, "type 7").

use serde::Serialize;

/// The fixed seed of every bootstrap.
pub const SEED: u64 = 0x5EED_2026_0524;
/// Replicates per bootstrap: enough for a stable 95% percentile interval
/// (the 2.5% tail holds 50 replicates) at a cost of milliseconds.
pub const RESAMPLES: u32 = 2000;
/// How the random draws are made, for the record.
pub const GENERATOR: &str = "wyrand (fastrand 2), seeded";

/// How a bootstrap is run: its level and its reproducibility.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settings {
    /// Two-sided: intervals cover 1 - alpha.
    pub alpha: f64,
    pub resamples: u32,
    pub seed: u64,
    pub generator: &'static str,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { alpha: super::DEFAULT_ALPHA, resamples: RESAMPLES, seed: SEED, generator: GENERATOR }
    }
}

impl Settings {
    pub fn with_alpha(alpha: f64) -> Settings {
        Settings { alpha, ..Settings::default() }
    }

    /// `95%` for alpha 0.05.
    pub fn confidence_label(&self) -> String {
        format!("{}%", super::round((1.0 - self.alpha) * 100.0, 2))
    }
}

/// Per-unit rows of `cols` values, stored flat.
#[derive(Debug, Clone)]
pub struct Rows {
    pub cols: usize,
    pub data: Vec<f64>,
}

impl Rows {
    pub fn new(cols: usize) -> Rows {
        Rows { cols, data: Vec::new() }
    }

    pub fn push(&mut self, row: &[f64]) {
        debug_assert_eq!(row.len(), self.cols);
        self.data.extend_from_slice(row);
    }

    pub fn len(&self) -> usize {
        if self.cols == 0 { 0 } else { self.data.len() / self.cols }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The column sums over all rows (the observed data).
    pub fn sums(&self) -> Vec<f64> {
        let mut acc = vec![0.0; self.cols];
        for row in self.data.chunks_exact(self.cols.max(1)) {
            for (a, v) in acc.iter_mut().zip(row) {
                *a += v;
            }
        }
        acc
    }

    /// Column sums of each replicate: `resamples` blocks of `cols` values.
    /// Empty when there are no rows.
    pub fn replicate_sums(&self, settings: &Settings) -> Replicates {
        let (n, cols) = (self.len(), self.cols);
        let reps = settings.resamples as usize;
        if n == 0 {
            return Replicates { cols, sums: Vec::new() };
        }
        let mut rng = fastrand::Rng::with_seed(settings.seed);
        let mut sums = vec![0.0; reps * cols];
        for acc in sums.chunks_exact_mut(cols) {
            for _ in 0..n {
                let i = rng.usize(..n);
                for (a, v) in acc.iter_mut().zip(&self.data[i * cols..(i + 1) * cols]) {
                    *a += v;
                }
            }
        }
        Replicates { cols, sums }
    }
}

/// The column sums of every replicate.
pub struct Replicates {
    cols: usize,
    sums: Vec<f64>,
}

impl Replicates {
    /// One statistic per replicate, computed from its column sums.
    pub fn statistic(&self, f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
        self.sums.chunks_exact(self.cols.max(1)).map(f).collect()
    }
}

/// The `q` quantile (0..=1) of sorted values, interpolating linearly.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The percentile interval of `values` at level 1 - alpha, around `estimate`.
/// With no replicates (no data) the interval is the estimate itself.
pub fn percentile_interval(mut values: Vec<f64>, estimate: f64, alpha: f64) -> super::Interval {
    if values.is_empty() {
        return super::Interval { estimate, low: estimate, high: estimate };
    }
    values.sort_by(f64::total_cmp);
    super::Interval { estimate, low: quantile(&values, alpha / 2.0), high: quantile(&values, 1.0 - alpha / 2.0) }
}

/// The two-sided bootstrap p-value of "no difference" for replicated
/// differences: twice the smaller share of replicates on either side of 0
/// (zeros count on both), capped at 1. It is below alpha exactly when the
/// 1 - alpha percentile interval lies on one side of 0 (up to interpolation).
pub fn two_sided_p(differences: &[f64]) -> f64 {
    if differences.is_empty() {
        return 1.0;
    }
    let n = differences.len() as f64;
    let at_most = differences.iter().filter(|&&d| d <= 0.0).count() as f64;
    let at_least = differences.iter().filter(|&&d| d >= 0.0).count() as f64;
    (2.0 * at_most.min(at_least) / n).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_linearly() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.125), 1.5);
        assert_eq!(quantile(&v, 1.0), 5.0);
    }

    #[test]
    fn the_same_seed_draws_the_same_replicates() {
        let mut rows = Rows::new(2);
        for i in 0..30 {
            rows.push(&[f64::from(i % 3), 1.0]);
        }
        let s = Settings::default();
        let a = rows.replicate_sums(&s).statistic(|x| x[0] / x[1]);
        let b = rows.replicate_sums(&s).statistic(|x| x[0] / x[1]);
        assert_eq!(a, b);
        // Each replicate draws 30 whole rows.
        assert!(rows.replicate_sums(&s).statistic(|x| x[1]).iter().all(|&n| n == 30.0));
        let other = rows.replicate_sums(&Settings { seed: 7, ..s }).statistic(|x| x[0] / x[1]);
        assert_ne!(a, other);
    }

    #[test]
    fn p_values_count_both_tails() {
        assert_eq!(two_sided_p(&[0.0; 10]), 1.0);
        assert_eq!(two_sided_p(&[-1.0, -1.0, -1.0, 1.0]), 0.5);
        assert_eq!(two_sided_p(&[-1.0; 4]), 0.0);
        assert_eq!(two_sided_p(&[]), 1.0);
    }

    #[test]
    fn confidence_labels() {
        assert_eq!(Settings::default().confidence_label(), "95%");
        assert_eq!(Settings::with_alpha(0.01).confidence_label(), "99%");
    }
}
