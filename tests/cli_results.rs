//! compare and bless through the real binary, on real files.

mod common;

use common::*;

#[test]
fn compare_equal_result_has_no_regressions() {
    let dir = tempfile::tempdir().unwrap();
    let r = sample_result("ollama", "m1", &[("alpha", &[true, true]), ("beta", &[true, false])]);
    write_result(&dir.path().join("base.json"), &r);
    write_result(&dir.path().join("cur.json"), &r);
    let out = vaultbench(&["compare", "--fail-on-regression", "base.json", "cur.json"], dir.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("No regressions vs baseline."));
}

#[test]
fn compare_exact_flags_a_run_flipping_to_unsolved_by_task_name() {
    let dir = tempfile::tempdir().unwrap();
    let base = sample_result("ollama", "m1", &[("alpha", &[true, true]), ("beta", &[true, true])]);
    let cur = sample_result("ollama", "m1", &[("alpha", &[true, true]), ("beta", &[true, false])]);
    write_result(&dir.path().join("base.json"), &base);
    write_result(&dir.path().join("cur.json"), &cur);
    let out = vaultbench(&["compare", "--exact", "--fail-on-regression", "base.json", "cur.json"], dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("beta: REGRESSION solved 2/2 → 1/2"), "{text}");
    assert!(text.contains("Rule: exact"), "{text}");
    assert!(text.contains("REGRESSIONS FOUND"), "{text}");
    // Without --fail-on-regression the diff is informational.
    assert!(vaultbench(&["compare", "--exact", "base.json", "cur.json"], dir.path()).status.success());
    // The default gate sees one run of one task: within noise, exit 0.
    let out = vaultbench(&["compare", "--fail-on-regression", "base.json", "cur.json"], dir.path());
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("beta: solved 2/2 → 1/2 (p 0.50, adjusted 0.50) within noise"), "{text}");
    assert!(text.contains("No regressions vs baseline (2 aggregate and 1 task drops within noise)."), "{text}");
}

/// 24 tasks solved 5/5 in the baseline; in the result 6 are never solved and
/// 3 lose one run.
fn broad_drop(dir: &std::path::Path) {
    let ids: Vec<String> = (0..24).map(|i| format!("task-{i:02}")).collect();
    let all = [true; 5];
    let none = [false; 5];
    let one_off = [true, true, true, true, false];
    let base: Vec<(&str, &[bool])> = ids.iter().map(|id| (id.as_str(), &all[..])).collect();
    let cur: Vec<(&str, &[bool])> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            (
                id.as_str(),
                if i < 6 {
                    &none[..]
                } else if i < 9 {
                    &one_off[..]
                } else {
                    &all[..]
                },
            )
        })
        .collect();
    write_result(&dir.join("base.json"), &sample_result("ollama", "m1", &base));
    write_result(&dir.join("cur.json"), &sample_result("ollama", "m1", &cur));
}

#[test]
fn compare_gate_flags_what_the_data_supports_and_lists_the_rest_as_noise() {
    let dir = tempfile::tempdir().unwrap();
    broad_drop(dir.path());
    let out = vaultbench(&["compare", "--fail-on-regression", "base.json", "cur.json"], dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("task-00: REGRESSION solved 5/5 → 0/5 (p 0.0040, adjusted"), "{text}");
    assert!(text.contains("task-06: solved 5/5 → 4/5 (p 0.50, adjusted") && text.contains("within noise"), "{text}");
    assert!(text.contains("solve^5    100.0% → 62.5% (-37.5pp [") && text.contains("REGRESSION"), "{text}");
    // A stricter level flags nothing the correction cannot carry.
    let out = vaultbench(&["compare", "--alpha", "0.001", "--fail-on-regression", "base.json", "cur.json"], dir.path());
    let text = stdout(&out);
    assert!(text.contains("alpha 0.001"), "{text}");
    assert!(!text.contains("task-00: REGRESSION"), "{text}");
    // The JSON carries the verdicts and the tests.
    let out = vaultbench(&["compare", "--json", "base.json", "cur.json"], dir.path());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["rule"], serde_json::json!({"rule": "statistical", "alpha": 0.05}));
    assert_eq!(json["paired"]["common_tasks"], 24);
    let t0 = json["tasks"].as_array().unwrap().iter().find(|t| t["id"] == "task-00").unwrap();
    assert_eq!(t0["solve_verdict"], "regression");
    assert_eq!(t0["solved_test"]["p_drop"], 0.004);
    let solve_k = json["aggregates"].as_array().unwrap().iter().find(|a| a["key"] == "solve_k_rate").unwrap();
    assert_eq!(solve_k["verdict"], "regression");
}

/// At k = 3 no task alone can be significant (3/3 against 0/3 gives p =
/// 1/20 before the correction), and six tasks broken outright among 40 with
/// flaky ones around them leave the bootstrap interval of solve^3 wide; the
/// stratified test of the solved runs across tasks still sees the drop.
#[test]
fn compare_at_k_3_catches_tasks_broken_outright_across_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = (0..40).map(|i| format!("task-{i:02}")).collect();
    let (all, none) = ([true; 3], [false; 3]);
    let flaky: [&[bool]; 4] =
        [&[true, false, false], &[true, true, false], &[false, true, true], &[false, false, true]];
    let side = |broken: bool| -> Vec<(&str, &[bool])> {
        ids.iter()
            .enumerate()
            .map(|(i, id)| {
                let runs: &[bool] = match i {
                    0..6 if broken => &none,
                    0..24 => &all,
                    // Flaky tasks shift one run between the sweeps, both ways.
                    _ => flaky[(i + usize::from(broken)) % 4],
                };
                (id.as_str(), runs)
            })
            .collect()
    };
    write_result(&dir.path().join("base.json"), &sample_result("ollama", "m1", &side(false)));
    write_result(&dir.path().join("cur.json"), &sample_result("ollama", "m1", &side(true)));
    let out = vaultbench(&["compare", "--fail-on-regression", "base.json", "cur.json"], dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("task-00: solved 3/3 → 0/3 (p 0.050, adjusted") && text.contains("within noise"), "{text}");
    assert!(!text.contains("task-00: REGRESSION"), "{text}");
    assert!(text.contains("solved runs") && text.contains("across tasks"), "{text}");
    let out = vaultbench(&["compare", "--json", "base.json", "cur.json"], dir.path());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let agg = |key: &str| json["aggregates"].as_array().unwrap().iter().find(|a| a["key"] == key).unwrap().clone();
    assert_eq!(agg("mean_solve_rate")["verdict"], "regression", "{json}");
    let across = &json["paired"]["solved_across_tasks"];
    assert!(across["p_drop"].as_f64().unwrap() < 0.025, "{across}");
    // A level the data cannot reach flags nothing.
    let out =
        vaultbench(&["compare", "--alpha", "0.0001", "--fail-on-regression", "base.json", "cur.json"], dir.path());
    assert!(out.status.success(), "{}", stdout(&out));
}

#[test]
fn compare_rejects_a_meaningless_alpha() {
    let dir = tempfile::tempdir().unwrap();
    broad_drop(dir.path());
    for bad in ["0", "0.7", "five"] {
        let out = vaultbench(&["compare", "--alpha", bad, "base.json", "cur.json"], dir.path());
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("--alpha"), "{}", stderr(&out));
    }
    let out = vaultbench(&["compare", "--alpha", "0.01", "--exact", "base.json", "cur.json"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn compare_reports_an_added_task_without_flagging_it() {
    let dir = tempfile::tempdir().unwrap();
    let base = sample_result("ollama", "m1", &[("alpha", &[true])]);
    let cur = sample_result("ollama", "m1", &[("alpha", &[true]), ("gamma", &[true])]);
    write_result(&dir.path().join("base.json"), &base);
    write_result(&dir.path().join("cur.json"), &cur);
    let out = vaultbench(&["compare", "--fail-on-regression", "base.json", "cur.json"], dir.path());
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("[NEW] gamma: solved 1/1 (not flagged)"), "{text}");
    assert!(
        text.contains("Added since the baseline: 1 task (gamma).") && text.contains("reported, not flagged"),
        "{text}"
    );
}

#[test]
fn compare_defaults_to_latest_result_and_its_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let r = sample_result("ollama", "gemma4:e4b", &[("alpha", &[true])]);
    write_result(&dir.path().join("evals/results/2026-11-20T10-00-00-000Z.json"), &r);
    write_result(&dir.path().join("evals/baselines/ollama-gemma4-e4b.json"), &r);
    let out = vaultbench(&["compare"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("ollama-gemma4-e4b.json"));
}

#[test]
fn bless_names_the_file_from_provider_and_model_and_copies_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let r = sample_result("ollama", "gemma4:e4b", &[("alpha", &[true, true])]);
    let older = sample_result("ollama", "gemma4:e4b", &[("alpha", &[false, false])]);
    write_result(&dir.path().join("evals/results/2026-11-19T10-00-00-000Z.json"), &older);
    write_result(&dir.path().join("evals/results/2026-11-20T10-00-00-000Z.json"), &r);
    let out = vaultbench(&["bless"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let baseline = dir.path().join("evals/baselines/ollama-gemma4-e4b.json");
    // The latest result, byte for byte.
    assert_eq!(
        std::fs::read(&baseline).unwrap(),
        std::fs::read(dir.path().join("evals/results/2026-11-20T10-00-00-000Z.json")).unwrap()
    );
    let names: Vec<_> =
        std::fs::read_dir(dir.path().join("evals/baselines")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["ollama-gemma4-e4b.json"], "no temporary files are left behind");
}

#[test]
fn bless_refuses_a_preview_model_unless_forced_and_keeps_the_old_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("evals/baselines/gemini-gemini-9-flash-preview.json");
    std::fs::create_dir_all(baseline.parent().unwrap()).unwrap();
    std::fs::write(&baseline, b"the previous baseline").unwrap();
    let r = sample_result("gemini", "gemini-9-flash-preview", &[("alpha", &[true])]);
    write_result(&dir.path().join("r.json"), &r);
    let out = vaultbench(&["bless", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("moving alias"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&baseline).unwrap(), b"the previous baseline");
    let out = vaultbench(&["bless", "--force", "r.json"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("warning: blessed despite"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&baseline).unwrap(), std::fs::read(dir.path().join("r.json")).unwrap());
}

#[test]
fn bless_refuses_a_result_whose_verdicts_a_missing_judge_decided() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = sample_result("ollama", "m", &[("alpha", &[false, false, true]), ("beta", &[false, true])]);
    // alpha: two runs met every other check and failed on the skipped judge alone;
    // beta: one run skipped the judge but failed its contains matcher anyway.
    skip_judge(&mut r, 0, &[0, 1], true);
    skip_judge(&mut r, 1, &[0], false);
    write_result(&dir.path().join("r.json"), &r);
    let out = vaultbench(&["bless", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("3 runs in 2 tasks skipped their judge matchers for lack of a judge; 2 runs in 1 task failed on that alone (alpha)"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    assert!(!dir.path().join("evals/baselines/ollama-m.json").exists());
    let out = vaultbench(&["bless", "--force", "r.json"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("warning: blessed despite: 3 runs in 2 tasks"), "{}", stderr(&out));

    // Skips that decided nothing (every such run failed another check) do not block.
    let mut r = sample_result("ollama", "m2", &[("beta", &[false, true])]);
    skip_judge(&mut r, 0, &[0], false);
    write_result(&dir.path().join("r2.json"), &r);
    let out = vaultbench(&["bless", "r2.json"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
#[allow(clippy::type_complexity)]
fn bless_refuses_partial_interrupted_errored_and_reference_runs() {
    let dir = tempfile::tempdir().unwrap();
    let base = sample_result("ollama", "m", &[("alpha", &[true])]);
    type Mutate = Box<dyn Fn(&mut vaultbench::format::result::ResultFile)>;
    let cases: Vec<(&str, Mutate, bool)> = vec![
        ("interrupted", Box::new(|r| r.interrupted = true), true),
        ("shard 1/2", Box::new(|r| r.shard = Some("1/2".into())), true),
        ("only tasks matching", Box::new(|r| r.task_filter = Some("al".into())), true),
        ("harness error", Box::new(|r| r.tasks[0].runs[0].errors.push("provider: HTTP 503".into())), true),
        ("reference provider", Box::new(|r| r.provider = "reference".into()), false),
        ("do not re-derive", Box::new(|r| r.aggregate.solve_k_rate = 12.5), false),
    ];
    for (needle, mutate, forceable) in cases {
        let mut r = base.clone();
        mutate(&mut r);
        write_result(&dir.path().join("r.json"), &r);
        let out = vaultbench(&["bless", "r.json"], dir.path());
        assert_eq!(out.status.code(), Some(1), "{needle}");
        assert!(stderr(&out).contains(needle), "{needle}: {}", stderr(&out));
        let forced = vaultbench(&["bless", "--force", "r.json"], dir.path());
        assert_eq!(forced.status.success(), forceable, "{needle}: {}", stderr(&forced));
    }
}

#[test]
fn report_fails_when_stored_figures_do_not_rederive() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = sample_result("ollama", "m", &[("alpha", &[true, false])]);
    r.tasks[0].solved_count = 2;
    write_result(&dir.path().join("r.json"), &r);
    let out = vaultbench(&["report", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("tasks[alpha].solved_count: stored 2, re-derived 1"), "{}", stderr(&out));
}

#[test]
fn rescore_exits_nonzero_on_a_disagreement() {
    use vaultbench::format::OneOrMany;
    use vaultbench::format::result::MatcherDetail;
    let dir = tempfile::tempdir().unwrap();
    let mut r = sample_result("ollama", "m", &[("alpha", &[true])]);
    // The response does not contain "zebra", yet the verdict says it does.
    r.tasks[0].runs[0].solve_details.matcher_details.push(MatcherDetail::Contains {
        value: OneOrMany::One("zebra".into()),
        verdict: true,
        error: None,
    });
    write_result(&dir.path().join("r.json"), &r);
    let out = vaultbench(&["rescore", "r.json"], dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("contains: 0/1 agree"), "{text}");
    assert!(text.contains("alpha run 1: contains matcher 1 recorded true but rescores false"), "{text}");
    assert!(text.contains("alpha run 1: solved recorded true but rescores false"), "{text}");
}

#[test]
fn unreadable_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), "{\n  \"run_id\": 5\n}").unwrap();
    let out = vaultbench(&["report", "bad.json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("bad.json") && err.contains("line 2") && err.contains("run_id"), "{err}");
    let out = vaultbench(&["report"], dir.path());
    assert_eq!(out.status.code(), Some(2), "usage errors exit 2");
}

/// A result, baseline or calibration set with text after its JSON value is
/// refused naming the file and position (bless copies nothing); one that
/// starts with a byte order mark is read like any other.
#[test]
fn json_inputs_refuse_trailing_text_and_accept_a_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    let r = sample_result("ollama", "m1", &[("alpha", &[true, true])]);
    write_result(&dir.path().join("clean.json"), &r);
    let clean = std::fs::read(dir.path().join("clean.json")).unwrap();
    let mut garbage = clean.clone();
    garbage.extend_from_slice(b"\n<<<<<<< HEAD\n");
    std::fs::write(dir.path().join("garbage.json"), &garbage).unwrap();
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(&clean);
    std::fs::write(dir.path().join("bom.json"), &bom).unwrap();
    let lines = clean.iter().filter(|&&b| b == b'\n').count() + 2;

    for args in [
        vec!["report", "garbage.json"],
        vec!["bless", "garbage.json"],
        vec!["compare", "garbage.json", "clean.json"],
        vec!["compare", "clean.json", "garbage.json"],
        vec!["rescore", "garbage.json"],
    ] {
        let out = vaultbench(&args, dir.path());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains("garbage.json") && err.contains(&format!("line {lines} column 1")), "{args:?}: {err}");
        assert!(err.contains("more text after the JSON value"), "{args:?}: {err}");
    }
    assert!(!dir.path().join("evals/baselines/ollama-m1.json").exists(), "nothing was blessed");

    for args in [vec!["report", "bom.json"], vec!["compare", "bom.json", "clean.json"], vec!["bless", "bom.json"]] {
        let out = vaultbench(&args, dir.path());
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read(dir.path().join("evals/baselines/ollama-m1.json")).unwrap(), bom, "byte for byte");

    let set = r#"{"version": 1, "generated_at": "", "source": {}, "tuples": []}"#;
    std::fs::write(dir.path().join("gold.json"), format!("\u{feff}{set}")).unwrap();
    let out = vaultbench(&["calibrate", "report", "gold.json"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(dir.path().join("gold.json"), format!("{set}{set}")).unwrap();
    let out = vaultbench(&["calibrate", "report", "gold.json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("gold.json: line 1 column"), "{}", stderr(&out));
}

/// A FIFO would block a reader for ever and /dev/zero never ends: both are
/// refused at once, naming the file.
#[cfg(unix)]
#[test]
fn special_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    assert!(std::process::Command::new("mkfifo").arg(dir.path().join("fifo.json")).status().unwrap().success());
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json")).unwrap();
    for (file, kind) in [("fifo.json", "a FIFO"), ("zero.json", "a device")] {
        for cmd in ["report", "bless"] {
            let out = vaultbench(&[cmd, file], dir.path());
            assert_eq!(out.status.code(), Some(1));
            assert!(stderr(&out).contains(file) && stderr(&out).contains(kind), "{}", stderr(&out));
        }
    }
}
