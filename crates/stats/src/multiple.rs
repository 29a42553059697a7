//! Corrections for testing many tasks at once. With 50 tasks each tested at
//! 5%, a rerun of the same model would flag two or three by chance; a
//! correction makes the whole family answer to one level.
//!
//! The gate uses Benjamini–Hochberg ([`benjamini_hochberg`]). When nothing
//! changed (the case a false alarm comes from) every flagged task is a false
//! discovery, so controlling the false discovery rate at alpha bounds the
//! chance of any false alarm at alpha, as Holm would. When something did
//! change, it keeps power where Holm has none: at k = 5 the smallest
//! one-sided p-value a single task can reach is 1/252 = 0.0040 (5/5 to 0/5),
//! and Holm's first threshold over 20 informative tasks is 0.05/20 = 0.0025,
//! so Holm could not flag a task at k = 5 however clear the drop. Tasks are
//! independent (separate runs), which Benjamini–Hochberg requires.
//! Holm ([`holm`]) is here to measure that difference (see docs/evals.md).

/// Benjamini–Hochberg adjusted p-values (R's `p.adjust(p, "BH")`): a test
/// is significant at level alpha when its adjusted value is <= alpha.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        adjusted[i] = running.min(1.0);
    }
    adjusted
}

/// Holm's step-down adjusted p-values (R's `p.adjust(p, "holm")`).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(p[i] * (m - rank) as f64);
        adjusted[i] = running.min(1.0);
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn benjamini_hochberg_by_hand() {
        // Sorted: .005 .01 .03 .04; m*p/rank: .02 .02 .04 .04; running minimum from the top.
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005]);
        assert!(close(&q, &[0.02, 0.04, 0.04, 0.02]), "{q:?}");
        // Five p-values in steps of .01 all adjust to .05.
        assert!(close(&benjamini_hochberg(&[0.01, 0.02, 0.03, 0.04, 0.05]), &[0.05; 5]));
        assert!(close(&benjamini_hochberg(&[0.9, 1.0]), &[1.0, 1.0]));
        assert!(benjamini_hochberg(&[]).is_empty());
    }

    #[test]
    fn holm_by_hand() {
        // Sorted: .005*4 = .02, .01*3 = .03, .03*2 = .06, .04*1 -> running max .06.
        let q = holm(&[0.01, 0.04, 0.03, 0.005]);
        assert!(close(&q, &[0.03, 0.06, 0.06, 0.02]), "{q:?}");
    }

    #[test]
    fn six_clear_drops_among_twenty_tasks() {
        // Six tasks 5/5 -> 0/5 (p = 1/252 each) among 14 with no evidence.
        let mut p = vec![1.0 / 252.0; 6];
        p.extend([0.5; 14]);
        assert!(benjamini_hochberg(&p)[..6].iter().all(|&q| q <= 0.05));
        assert!(holm(&p)[..6].iter().all(|&q| q > 0.05));
    }
}
