//! Agreement between two raters (a judge and the human labels): Cohen's
//! kappa, agreement beyond what chance would give with the same YES rates,
//! and the Wilson score interval for a proportion (for the raw agreement
//! rate), which behaves at 0% and 100% where the textbook ± interval does not.

use serde::Serialize;

/// The 97.5% point of the standard normal: a two-sided 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// Cohen's kappa from a 2x2 confusion matrix: `both_yes`, `yes_no` (first
/// rater YES, second NO), `no_yes`, `both_no`. `None` when there is nothing
/// to compare or both raters gave a single answer throughout (chance
/// agreement is then 1 and kappa is undefined).
pub fn cohen_kappa(both_yes: u32, yes_no: u32, no_yes: u32, both_no: u32) -> Option<f64> {
    let n = f64::from(both_yes) + f64::from(yes_no) + f64::from(no_yes) + f64::from(both_no);
    if n == 0.0 {
        return None;
    }
    let observed = (f64::from(both_yes) + f64::from(both_no)) / n;
    let first_yes = (f64::from(both_yes) + f64::from(yes_no)) / n;
    let second_yes = (f64::from(both_yes) + f64::from(no_yes)) / n;
    let chance = first_yes * second_yes + (1.0 - first_yes) * (1.0 - second_yes);
    if (1.0 - chance).abs() < 1e-12 {
        return None;
    }
    Some((observed - chance) / (1.0 - chance))
}

/// A proportion's interval, as fractions (0..=1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Proportion {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// The Wilson score interval for `successes` of `n` at the normal quantile
/// `z` ([`Z_95`] for 95%). `None` for n = 0.
pub fn wilson(successes: u32, n: u32, z: f64) -> Option<Proportion> {
    if n == 0 {
        return None;
    }
    let n_f = f64::from(n);
    let p = f64::from(successes.min(n)) / n_f;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n_f;
    let center = (p + z2 / (2.0 * n_f)) / denominator;
    let half = z / denominator * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt();
    Some(Proportion { estimate: p, low: (center - half).max(0.0), high: (center + half).min(1.0) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn kappa_by_hand() {
        // 50 items: 20 both YES, 5 YES/NO, 10 NO/YES, 15 both NO.
        // Observed 35/50 = .7; chance .5 * .6 + .5 * .4 = .5; kappa (.7 - .5)/.5 = .4.
        assert!(close(cohen_kappa(20, 5, 10, 15).unwrap(), 0.4, 1e-12));
        // Perfect agreement with both answers used: 1.
        assert!(close(cohen_kappa(10, 0, 0, 5).unwrap(), 1.0, 1e-12));
        // Agreement no better than chance: 0.
        assert!(close(cohen_kappa(25, 25, 25, 25).unwrap(), 0.0, 1e-12));
        assert_eq!(cohen_kappa(0, 0, 0, 0), None);
        assert_eq!(cohen_kappa(9, 0, 0, 0), None);
    }

    /// Newcombe (1998), "Two-sided confidence intervals for the single
    /// proportion", Table I, method 3 (Wilson score, no continuity correction).
    #[test]
    fn wilson_against_newcombe_1998() {
        for (k, n, lo, hi) in
            [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)]
        {
            let w = wilson(k, n, Z_95).unwrap();
            assert!(close(w.low, lo, 5e-5) && close(w.high, hi, 5e-5), "{k}/{n}: {w:?}");
        }
        assert_eq!(wilson(0, 0, Z_95), None);
        let all = wilson(20, 20, Z_95).unwrap();
        assert!(all.high == 1.0 && close(all.low, 1.0 - 0.1611, 5e-5));
    }
}
