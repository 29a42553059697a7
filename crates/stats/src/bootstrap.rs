//! The bootstrap over tasks. A result's tasks are the sampling units: a
//! replicate draws as many tasks as there are, with replacement, and a drawn
//! task brings all its runs (runs of one task are not independent of each
//! other, tasks are). Every statistic is a function of column sums over the
//! drawn tasks, so one pass of draws serves all of them.
//!
//! The draws come from the `wyrand` generator of the `fastrand` crate seeded
//! with [`SEED`] (two draws per 64-bit output, by multiply-shift): the same
//! file always gives the same interval, and anyone can reproduce it. Intervals are percentiles of the replicates (linear
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
        self.data.len().checked_div(self.cols).unwrap_or(0)
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

    /// Calls `each` with the column sums of every replicate, in order.
    pub fn for_each_replicate(&self, settings: &Settings, each: impl FnMut(&[f64])) {
        self.for_each_stratified_replicate(std::slice::from_ref(&(0..self.len())), settings, each)
    }

    /// A stratified bootstrap: each replicate draws within each stratum (a
    /// range of rows) as many rows as it has, so the strata keep their
    /// sizes. `each` gets a replicate's block: each stratum's column sums,
    /// then, with more than one stratum, their total. Nothing is called
    /// without rows. The block is reused: what is kept must be copied out,
    /// so that a bootstrap needs no memory in proportion to its replicates.
    pub fn for_each_stratified_replicate(
        &self,
        strata: &[std::ops::Range<usize>],
        settings: &Settings,
        mut each: impl FnMut(&[f64]),
    ) {
        let cols = self.cols;
        let n = self.len();
        if n == 0 || strata.is_empty() || cols == 0 {
            return;
        }
        let parts = if strata.len() > 1 { strata.len() + 1 } else { 1 };
        // Tasks with the same counts have the same row, and a suite has only
        // a handful of distinct rows: a replicate counts how often each
        // distinct row of a stratum was drawn, then adds each once, times
        // its count.
        let rows: Vec<&[f64]> = self.data.chunks_exact(cols).collect();
        let mut distinct: Vec<(usize, &[f64])> = Vec::new();
        let mut group_of = vec![0usize; n];
        for (s, range) in strata.iter().enumerate() {
            for i in range.clone() {
                let same = |(t, d): &(usize, &[f64])| {
                    *t == s && d.iter().zip(rows[i]).all(|(a, b)| a.to_bits() == b.to_bits())
                };
                group_of[i] = distinct.iter().position(same).unwrap_or_else(|| {
                    distinct.push((s, rows[i]));
                    distinct.len() - 1
                });
            }
        }
        let mut draw = Draws::new(settings.seed);
        let mut acc = vec![0.0; parts * cols];
        let groups = distinct.len();
        // Four tallies taken in turn: most draws land in the same few groups,
        // and one tally would make each increment wait for the one before.
        let mut tallies = vec![0u32; 4 * groups];
        for _ in 0..settings.resamples {
            tallies.fill(0);
            acc.fill(0.0);
            for range in strata {
                let size = range.len();
                for j in 0..size {
                    tallies[(j & 3) * groups + group_of[range.start + draw.below(size)]] += 1;
                }
            }
            for (g, &(s, row)) in distinct.iter().enumerate() {
                let times = tallies[g] + tallies[groups + g] + tallies[2 * groups + g] + tallies[3 * groups + g];
                if times > 0 {
                    let times = f64::from(times);
                    for (a, v) in acc[s * cols..(s + 1) * cols].iter_mut().zip(row.iter()) {
                        *a += times * v;
                    }
                }
            }
            if parts > 1 {
                let (strata_sums, total) = acc.split_at_mut(strata.len() * cols);
                for part in strata_sums.chunks_exact(cols) {
                    for (t, v) in total.iter_mut().zip(part) {
                        *t += v;
                    }
                }
            }
            each(&acc);
        }
    }

    /// Every replicate's block, one after the other (for tests and small uses).
    pub fn replicate_blocks(&self, strata: &[std::ops::Range<usize>], settings: &Settings) -> Vec<Vec<f64>> {
        let mut out = Vec::with_capacity(settings.resamples as usize);
        self.for_each_stratified_replicate(strata, settings, |b| out.push(b.to_vec()));
        out
    }
}

/// Uniform indices: each 64-bit output of the generator gives two draws by
/// Lemire's multiply-shift on its 32-bit halves, so a draw costs half a
/// generator step. (An index's chance is off 1/n by under n / 2^32, below
/// one in a hundred million for any real suite.)
struct Draws {
    rng: fastrand::Rng,
    spare: Option<u32>,
}

impl Draws {
    fn new(seed: u64) -> Draws {
        Draws { rng: fastrand::Rng::with_seed(seed), spare: None }
    }

    /// An index below `n` (1..2^32).
    fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0 && (n as u64) <= u64::from(u32::MAX));
        let x = match self.spare.take() {
            Some(x) => x,
            None => {
                let w = self.rng.u64(..);
                self.spare = Some((w >> 32) as u32);
                w as u32
            }
        };
        ((u64::from(x) * n as u64) >> 32) as usize
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

/// The value at fractional position `h` (0..len-1) of unsorted values, as
/// [`quantile`] would read it on them sorted, by selection (linear time)
/// rather than a full sort. Leaves the values partitioned around `floor(h)`.
fn value_at(values: &mut [f64], h: f64) -> f64 {
    let lo = (h.floor() as usize).min(values.len() - 1);
    let (_, &mut at, right) = values.select_nth_unstable_by(lo, f64::total_cmp);
    let next = right.iter().copied().min_by(f64::total_cmp).unwrap_or(at);
    at + (h - lo as f64) * (next - at)
}

/// The percentile interval of `values` at level 1 - alpha, around `estimate`.
/// With no replicates (no data) the interval is the estimate itself.
pub fn percentile_interval(mut values: Vec<f64>, estimate: f64, alpha: f64) -> super::Interval {
    if values.is_empty() {
        return super::Interval { estimate, low: estimate, high: estimate };
    }
    let last = (values.len() - 1) as f64;
    let (h_low, h_high) = (last * (alpha / 2.0).clamp(0.0, 0.5), last * (1.0 - alpha / 2.0).clamp(0.5, 1.0));
    let low = value_at(&mut values, h_low);
    // The high position lies right of the low one, which is now in place:
    // only what lies right of it needs searching.
    let cut = h_low.floor() as usize + 1;
    let high = if (h_high.floor() as usize) >= cut {
        value_at(&mut values[cut..], h_high - cut as f64)
    } else {
        value_at(&mut values, h_high)
    };
    super::Interval { estimate, low, high }
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
        let ratios = |s: &Settings| -> Vec<f64> {
            rows.replicate_blocks(std::slice::from_ref(&(0..rows.len())), s).iter().map(|x| x[0] / x[1]).collect()
        };
        let (a, b) = (ratios(&s), ratios(&s));
        assert_eq!(a, b);
        // Each replicate draws 30 whole rows.
        assert!(rows.replicate_blocks(std::slice::from_ref(&(0..30)), &s).iter().all(|x| x[1] == 30.0));
        let other = ratios(&Settings { seed: 7, ..s });
        assert_ne!(a, other);
    }

    #[test]
    fn selection_gives_the_sorted_quantiles() {
        let mut rng = fastrand::Rng::with_seed(11);
        let values: Vec<f64> = (0..1001).map(|_| f64::from(rng.u8(..))).collect();
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        for q in [0.0, 0.025, 0.3333, 0.5, 0.975, 1.0] {
            let h = 1000.0 * q;
            assert_eq!(value_at(&mut values.clone(), h), quantile(&sorted, q), "q = {q}");
        }
        for alpha in [0.05, 0.01, 0.5, 0.2] {
            let i = percentile_interval(values.clone(), 1.0, alpha);
            let expect = (quantile(&sorted, alpha / 2.0), quantile(&sorted, 1.0 - alpha / 2.0));
            assert!((i.low - expect.0).abs() < 1e-9 && (i.high - expect.1).abs() < 1e-9, "{alpha}: {i:?} {expect:?}");
        }
        let one = percentile_interval(vec![3.0], 3.0, 0.05);
        assert_eq!((one.low, one.high), (3.0, 3.0));
    }

    #[test]
    fn grouped_draws_sum_like_row_by_row_draws() {
        // Rows with repeated values: the grouped sums equal adding each drawn row.
        let mut rows = Rows::new(3);
        let data = [[1.0, 0.5, 5.0], [0.0, 0.25, 5.0], [1.0, 0.5, 5.0], [0.0, 0.0, 3.0]];
        for r in &data {
            rows.push(r);
        }
        let s = Settings { resamples: 50, ..Settings::default() };
        let grouped = rows.replicate_blocks(std::slice::from_ref(&(0..4)), &s);
        let mut draw = Draws::new(s.seed);
        assert_eq!(grouped.len(), 50);
        for block in &grouped {
            let mut expect = [0.0; 3];
            for _ in 0..4 {
                let row = data[draw.below(4)];
                expect.iter_mut().zip(row).for_each(|(e, v)| *e += v);
            }
            assert_eq!(&block[..], &expect[..]);
        }
    }

    #[test]
    fn strata_keep_their_sizes_and_the_total_adds_them() {
        let mut rows = Rows::new(2);
        for i in 0..10 {
            rows.push(&[1.0, f64::from(i)]);
        }
        let blocks = rows.replicate_blocks(&[0..3, 3..10], &Settings::default());
        assert_eq!(blocks.len(), 2000);
        for block in &blocks {
            // Column 0 counts the rows drawn: 3 in the first stratum, 7 in the second.
            assert_eq!((block[0], block[2], block[4]), (3.0, 7.0, 10.0));
            // The first stratum draws only rows 0..3, the second only rows 3..10.
            assert!(block[1] <= 6.0 && block[3] >= 21.0 && block[5] == block[1] + block[3]);
        }
    }

    #[test]
    fn draws_are_uniform_enough() {
        let mut draw = Draws::new(5);
        let mut seen = [0u32; 7];
        for _ in 0..70_000 {
            seen[draw.below(7)] += 1;
        }
        // Each index about 10,000 times (a binomial standard deviation is about 93).
        assert!(seen.iter().all(|&c| (9_500..=10_500).contains(&c)), "{seen:?}");
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
