//! The reference harness's own files must load, re-derive, rescore and
//! re-serialize exactly.

mod common;

use common::*;
use vaultbench::format::result::ResultFile;
use vaultbench::report::{aggregate, rescore};
use vaultbench::suite::Suite;
use vaultbench::{fsio, jsnum};

#[test]
fn baselines_rederive_field_for_field() {
    let Some(up) = upstream() else { return };
    for path in upstream_baselines(&up) {
        let stored: ResultFile = fsio::read_json(&path).unwrap();
        assert_eq!(stored.aggregate.total_tasks, 54);
        let derived = aggregate::rederive(&stored);
        let diffs = aggregate::differences(&stored, &derived);
        assert!(diffs.is_empty(), "{}: {diffs:#?}", path.display());
        assert_eq!(stored.aggregate, derived.aggregate, "{}", path.display());
    }
}

#[test]
fn baselines_reserialize_byte_for_byte() {
    let Some(up) = upstream() else { return };
    for path in upstream_baselines(&up) {
        let original = std::fs::read(&path).unwrap();
        let loaded: ResultFile = fsio::read_json(&path).unwrap();
        let written = jsnum::to_json_bytes(&loaded).unwrap();
        if written != original {
            let (a, b) = (String::from_utf8_lossy(&original), String::from_utf8_lossy(&written));
            let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            panic!(
                "{} differs at line {:?}: {:?} vs {:?}",
                path.display(),
                line.map(|l| l + 1),
                line.map(|l| a.lines().nth(l)),
                line.map(|l| b.lines().nth(l))
            );
        }
    }
}

#[test]
fn rescoring_agrees_with_every_recorded_verdict() {
    let Some(up) = upstream() else { return };
    for path in upstream_baselines(&up) {
        let stored: ResultFile = fsio::read_json(&path).unwrap();
        let none = |_: &str| None;
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let budget = vaultbench::score::RegexBudget::per_pattern(std::time::Duration::from_secs(5));
        let fut = rescore::rescore(&stored, None, &none, budget);
        let std::task::Poll::Ready(out) = std::pin::pin!(fut).poll(&mut cx) else { panic!("no I/O expected") };
        assert!(out.all_agree(), "{}: {out}", path.display());
        assert!(out.matchers["contains"].checked > 200);
        assert!(out.matchers["regex"].checked > 100);
        assert_eq!(out.solved.checked, 270);
    }
}

#[test]
fn the_59_upstream_tasks_load_unchanged() {
    let Some(up) = upstream() else { return };
    let suite = Suite::load(&up).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(suite.tasks.len(), 59);
    // Upstream forbids a tool vaultbench does not have; that is a warning, not an error.
    assert!(suite.warnings.iter().any(|w| w.message.contains("generate_image")), "{:?}", suite.warnings);
}

#[test]
fn cli_rescore_prints_counts_and_exits_zero() {
    let Some(up) = upstream() else { return };
    for path in upstream_baselines(&up) {
        let out = vaultbench(&["rescore", path.to_str().unwrap()], &up);
        let text = stdout(&out);
        assert!(out.status.success(), "{text}{}", stderr(&out));
        let regex_line = text.lines().find(|l| l.starts_with("regex: ")).expect(&text);
        let (agree, total) = regex_line["regex: ".len()..].trim_end_matches(" agree").split_once('/').unwrap();
        assert_eq!(agree, total);
        assert!(text.contains("solved: 270/270 runs agree"), "{text}");
    }
}

#[test]
fn cli_calibrate_report_gives_83_of_90() {
    let Some(up) = upstream() else { return };
    let file = up.join("calibration/judge-calibration.json");
    let out = vaultbench(&["calibrate", "report", file.to_str().unwrap()], &up);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("Agreement with human labels: 83/90 (92.2%)"), "{text}");
    assert!(text.contains("False positives (judge YES, human NO): 1"), "{text}");
    assert!(text.contains("False negatives (judge NO, human YES): 6"), "{text}");
    assert!(text.contains("95% interval on agreement (Wilson): "), "{text}");
    let out = vaultbench(&["calibrate", "report", "--json", file.to_str().unwrap()], &up);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |k: &str| json[k].as_u64().unwrap() as u32;
    let kappa = vaultbench::stats::agreement::cohen_kappa(
        n("both_yes"),
        n("false_positives"),
        n("false_negatives"),
        n("both_no"),
    )
    .unwrap();
    assert!((json["kappa"].as_f64().unwrap() - kappa).abs() < 1e-12);
    assert!(text.contains(&format!("Cohen's kappa: {}", jsnum::to_fixed(kappa, 3))), "{text}");
    let w = &json["agreement_interval"];
    assert!(w["low"].as_f64().unwrap() < 83.0 / 90.0 && 83.0 / 90.0 < w["high"].as_f64().unwrap());
}

#[test]
fn cli_report_rederives_and_prints_tiers() {
    let Some(up) = upstream() else { return };
    let path = up.join("baselines/gemini-gemini-3.1-flash-lite.json");
    let out = vaultbench(&["report", path.to_str().unwrap()], &up);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("solve^5:  74.1%"), "{text}");
    assert!(text.contains("re-derive exactly"), "{text}");
    let out = vaultbench(&["report", "--json", path.to_str().unwrap()], &up);
    let agg: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(agg["solve_k_rate"], serde_json::json!(74.1));
    assert_eq!(agg["by_difficulty"]["T3"]["solve_k_count"], serde_json::json!(19));
}
