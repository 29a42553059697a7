//! The derived statistics on the reference harness's two real baselines
//! (k = 5, the same 54 tasks): the curve ends at the stored figures, the
//! intervals are reproducible, and the paired comparison of the two models.

mod common;

use common::*;
use vaultbench::format::result::ResultFile;
use vaultbench::jsnum::round;
use vaultbench::report;
use vaultbench::stats::{self, Paired, Settings, Summary};

fn load(up: &std::path::Path, name: &str) -> ResultFile {
    report::load_result(&up.join("baselines").join(name)).unwrap()
}

#[test]
fn the_curve_ends_at_the_stored_pass_k_and_solve_k_overall_and_per_tier() {
    let Some(up) = upstream() else { return };
    for path in upstream_baselines(&up) {
        let r = report::load_result(&path).unwrap();
        let s = Summary::of(&stats::counts(&r), &Settings::default()).unwrap();
        let a = &r.aggregate;
        assert_eq!((s.k, s.curve.len()), (a.n_runs, a.n_runs as usize));
        assert_eq!(round(s.solve_k.estimate, 1), a.solve_k_rate, "{}", path.display());
        assert_eq!(round(s.pass_k.estimate, 1), a.pass_k_rate, "{}", path.display());
        assert_eq!(round(s.mean_solve_rate.estimate, 1), a.mean_solve_rate);
        assert_eq!(round(s.curve[0].solve.estimate, 1), a.mean_solve_rate, "k = 1 is the mean solve rate");
        for (tier, t) in &a.by_difficulty {
            assert_eq!(round(s.by_tier[tier].solve_k.estimate, 1), t.solve_k_rate, "{tier}");
            assert_eq!(round(s.by_tier[tier].mean_solve_rate.estimate, 1), t.mean_solve_rate, "{tier}");
        }
        // Intervals hold their estimate and are not degenerate where tasks disagree.
        assert!(s.solve_k.low < s.solve_k.estimate && s.solve_k.estimate < s.solve_k.high);
        eprintln!(
            "{}: pass^5 {}, solve^5 {}, mean solve rate {}",
            r.model,
            stats::percent(&s.pass_k),
            stats::percent(&s.solve_k),
            stats::percent(&s.mean_solve_rate)
        );
    }
}

#[test]
fn report_prints_the_same_intervals_every_time() {
    let Some(up) = upstream() else { return };
    let path = up.join("baselines/gemini-gemini-2.5-flash.json");
    let runs: Vec<String> = (0..2).map(|_| stdout(&vaultbench(&["report", path.to_str().unwrap()], &up))).collect();
    assert_eq!(runs[0], runs[1]);
    assert!(runs[0].contains("95% intervals (bootstrap over 54 tasks"), "{}", runs[0]);
    assert!(runs[0].contains("pass^k and solve^k for k = 1..5"), "{}", runs[0]);
    let json: Vec<serde_json::Value> = (0..2)
        .map(|_| {
            serde_json::from_slice(&vaultbench(&["report", "--json", path.to_str().unwrap()], &up).stdout).unwrap()
        })
        .collect();
    assert_eq!(json[0], json[1]);
    let st = &json[0]["statistics"];
    assert_eq!(st["curve"].as_array().unwrap().len(), 5);
    assert_eq!(st["solve_k"]["estimate"], json[0]["solve_k_rate"]);
    assert_eq!(st["bootstrap"]["resamples"], 2000);
}

#[test]
fn flash_lite_beats_flash_on_their_common_tasks() {
    let Some(up) = upstream() else { return };
    let flash = load(&up, "gemini-gemini-2.5-flash.json");
    let lite = load(&up, "gemini-gemini-3.1-flash-lite.json");
    let p = Paired::of(&stats::counts(&flash), &stats::counts(&lite), &Settings::default()).unwrap();
    assert_eq!((p.common_tasks, p.k), (54, 5));
    assert_eq!((round(p.solve_k.before, 1), round(p.solve_k.after, 1)), (57.4, 74.1));
    // The 16.7-point gap is more than noise at 95%.
    assert!(p.solve_k.change.low > 0.0 && p.solve_k.p_value < 0.05, "{:?}", p.solve_k);
    eprintln!(
        "solve^5 57.4% -> 74.1%: change {:+.1} [{:+.1}, {:+.1}], p {}; mean solve rate {:+.1} [{:+.1}, {:+.1}], p {}",
        p.solve_k.change.estimate,
        p.solve_k.change.low,
        p.solve_k.change.high,
        p.solve_k.p_value,
        p.mean_solve_rate.change.estimate,
        p.mean_solve_rate.change.low,
        p.mean_solve_rate.change.high,
        p.mean_solve_rate.p_value
    );
}
