//! Fisher's exact test on a 2x2 table: is a task's success count after a
//! change lower (or different) than before, given how many runs each side
//! had? Conditional on the table's margins the count is hypergeometric, so
//! the p-value is exact however few runs there are.
//!
//! The two-sided p-value sums the probabilities of every table no more
//! likely than the one observed (with R's relative tolerance of 1e-7 for
//! ties), as `fisher.test` does.

use serde::Serialize;

/// The p-values of one table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fisher {
    /// P(after count <= observed): evidence that after is lower than before.
    pub lower: f64,
    /// P(after count >= observed): evidence that after is higher.
    pub higher: f64,
    pub two_sided: f64,
    /// Both sides all-or-nothing with the same outcome (0/n vs 0/m, n/n vs
    /// m/m): the margins fix the table, and the test can say nothing.
    pub degenerate: bool,
}

/// `ln(i!)` for i = 0..=n.
fn ln_factorials(n: u64) -> Vec<f64> {
    let mut table = Vec::with_capacity(n as usize + 1);
    let mut acc = 0.0;
    table.push(0.0);
    for i in 1..=n {
        acc += (i as f64).ln();
        table.push(acc);
    }
    table
}

/// The null distribution of the after side's successes given the table's
/// margins, hypergeometric(total runs, total successes, after's runs): its
/// least value and the probabilities from there up. Counts above their runs
/// are treated as the runs.
pub(crate) fn after_successes(before: (u32, u32), after: (u32, u32)) -> (u64, Vec<f64>) {
    let (n1, n2) = (u64::from(before.1), u64::from(after.1));
    let successes = u64::from(before.0.min(before.1)) + u64::from(after.0.min(after.1));
    let total = n1 + n2;
    let lo = successes.saturating_sub(n1);
    let hi = successes.min(n2);
    let lf = ln_factorials(total);
    let ln_choose = |n: u64, k: u64| lf[n as usize] - lf[k as usize] - lf[(n - k) as usize];
    let denominator = ln_choose(total, successes);
    let pmf = (lo..=hi).map(|x| (ln_choose(n2, x) + ln_choose(n1, successes - x) - denominator).exp()).collect();
    (lo, pmf)
}

/// Compare `before` = (successes, runs) with `after` = (successes, runs).
/// Counts above their runs are treated as the runs.
pub fn fisher(before: (u32, u32), after: (u32, u32)) -> Fisher {
    let (n1, n2) = (u64::from(before.1), u64::from(after.1));
    let (c1, c2) = (u64::from(before.0.min(before.1)), u64::from(after.0.min(after.1)));
    let total = n1 + n2;
    let successes = c1 + c2;
    let degenerate = successes == 0 || successes == total;
    let (lo, pmf) = after_successes(before, after);
    let at = (c2 - lo) as usize;
    let lower: f64 = pmf[..=at].iter().sum();
    let higher: f64 = pmf[at..].iter().sum();
    let observed = pmf[at] * (1.0 + 1e-7);
    let two_sided: f64 = pmf.iter().filter(|&&p| p <= observed).sum();
    Fisher { lower: lower.min(1.0), higher: higher.min(1.0), two_sided: two_sided.min(1.0), degenerate }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Fisher's lady tasting tea (Agresti, Categorical Data Analysis, 2nd
    /// ed., §3.5.2): 3 of 4 milk-first cups named right. One-sided P = 0.243,
    /// two-sided P = 0.486 (17/70 and 34/70).
    #[test]
    fn tea_tasting() {
        // As counts: "before" 3 of 4 guesses right on milk-first cups, "after" 1 of 4.
        let f = fisher((3, 4), (1, 4));
        assert!(close(f.lower, 17.0 / 70.0, 1e-12), "{f:?}");
        assert!(close(f.two_sided, 34.0 / 70.0, 1e-12), "{f:?}");
        assert!(close(f.higher, 69.0 / 70.0, 1e-12), "{f:?}");
        assert!(!f.degenerate);
    }

    /// The worked example of Fisher's exact test in Wikipedia (dieting by
    /// sex, [[1, 9], [11, 3]]): two-sided p = 0.002759, one-sided 0.001380,
    /// as R's fisher.test prints.
    #[test]
    fn dieting_example() {
        let f = fisher((11, 14), (1, 10));
        assert!(close(f.two_sided, 0.002759, 5e-7), "{f:?}");
        assert!(close(f.lower, 0.0013797, 5e-7), "{f:?}");
    }

    #[test]
    fn five_of_five_to_none_of_five() {
        // 1 / C(10, 5) = 1/252: the smallest one-sided p a task can reach at k = 5.
        let f = fisher((5, 5), (0, 5));
        assert!(close(f.lower, 1.0 / 252.0, 1e-12), "{f:?}");
        assert!(close(f.two_sided, 2.0 / 252.0, 1e-12), "{f:?}");
        // 2/3 -> 0/3: 1/C(6,3) * C(3,2)... = P(X = 0) = C(4,3)/C(6,3) = 4/20.
        let f = fisher((2, 3), (0, 3));
        assert!(close(f.lower, 0.2, 1e-12), "{f:?}");
    }

    #[test]
    fn all_or_nothing_tables_say_nothing() {
        for (b, a) in [((5, 5), (5, 5)), ((0, 5), (0, 3)), ((3, 3), (5, 5))] {
            let f = fisher(b, a);
            assert!(f.degenerate && f.lower == 1.0 && f.two_sided == 1.0, "{b:?} {a:?}: {f:?}");
        }
        assert!(!fisher((5, 5), (4, 5)).degenerate);
        // No runs at all on one side.
        assert_eq!(fisher((0, 0), (3, 5)).two_sided, 1.0);
    }

    #[test]
    fn a_rise_is_no_evidence_of_a_drop() {
        let f = fisher((1, 5), (5, 5));
        assert!(f.lower > 0.99 && f.higher < 0.05, "{f:?}");
    }
}
