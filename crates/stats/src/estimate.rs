//! The unbiased pass^k / solve^k estimator (the definition of tau-bench):
//! for a task with `c` successes in `n` runs, the chance that `k` fresh runs
//! all succeed is estimated by C(c, k) / C(n, k), the share of the k-subsets
//! of its runs that are all successes. Averaged over tasks it gives pass^k
//! (or solve^k) for every k <= n; at k = n it is the share of tasks that
//! succeeded in every run, the figure the result file stores.

/// C(c, k) / C(n, k); `None` when `k > n` (k runs cannot be chosen from n).
/// `c` above `n` is treated as `n`.
pub fn all_of_k(c: u32, n: u32, k: u32) -> Option<f64> {
    if k > n {
        return None;
    }
    let c = c.min(n);
    if c < k {
        return Some(0.0);
    }
    // The product of (c - i) / (n - i) for i < k: C(c,k)/C(n,k) without
    // forming either coefficient, which would overflow for large n.
    Some((0..k).map(|i| f64::from(c - i) / f64::from(n - i)).product())
}

/// The mean of [`all_of_k`] over tasks given as `(successes, runs)`, in
/// percent; `None` when there is no task or some task has fewer than k runs.
pub fn rate_at(tasks: &[(u32, u32)], k: u32) -> Option<f64> {
    if tasks.is_empty() {
        return None;
    }
    let mut sum = 0.0;
    for &(c, n) in tasks {
        sum += all_of_k(c, n, k)?;
    }
    Some(sum / tasks.len() as f64 * 100.0)
}

/// The largest k every task allows: its fewest runs (0 for no task).
pub fn common_k(runs: impl IntoIterator<Item = u32>) -> u32 {
    runs.into_iter().min().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        // C(3,2)/C(5,2) = 3/10.
        assert!((all_of_k(3, 5, 2).unwrap() - 0.3).abs() < 1e-12);
        // C(4,3)/C(5,3) = 4/10; C(5,5)/C(5,5) = 1; fewer successes than k: 0.
        assert!((all_of_k(4, 5, 3).unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(all_of_k(5, 5, 5), Some(1.0));
        assert_eq!(all_of_k(2, 5, 3), Some(0.0));
        // k = 1 is the plain success rate; k = 0 is certain.
        assert!((all_of_k(3, 5, 1).unwrap() - 0.6).abs() < 1e-12);
        assert_eq!(all_of_k(0, 5, 0), Some(1.0));
        assert_eq!(all_of_k(3, 5, 6), None);
    }

    #[test]
    fn at_k_equal_n_it_is_the_share_of_tasks_that_always_succeeded() {
        let tasks = [(5, 5), (4, 5), (0, 5), (5, 5), (3, 5)];
        assert_eq!(rate_at(&tasks, 5), Some(40.0));
        // And it never rises with k.
        let curve: Vec<f64> = (1..=5).map(|k| rate_at(&tasks, k).unwrap()).collect();
        assert!(curve.windows(2).all(|w| w[0] >= w[1]), "{curve:?}");
        // (5+4+0+5+3)/25 at k = 1.
        assert!((curve[0] - 68.0).abs() < 1e-9);
    }

    #[test]
    fn a_task_with_fewer_runs_than_k_has_no_estimate() {
        assert_eq!(rate_at(&[(3, 3), (2, 5)], 4), None);
        assert_eq!(rate_at(&[], 1), None);
        assert_eq!(common_k([5, 3, 5]), 3);
        assert_eq!(common_k([]), 0);
    }

    #[test]
    fn large_run_counts_do_not_overflow() {
        let p = all_of_k(900, 1000, 50).unwrap();
        assert!(p > 0.0 && p < 0.9f64.powi(50) * 1.01, "{p}");
    }
}
