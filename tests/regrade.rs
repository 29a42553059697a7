//! `vaultbench regrade`: a result's recorded runs graded by today's checks,
//! each answered run replayed from its transcript against today's fixture.
//!
//! On a copy of our suite: a reference sweep's 60 runs (reads, searches,
//! writes, moves, deletes, frontmatter edits) all replay to the results they
//! recorded and keep their verdicts; a changed check flips exactly its task's
//! run and says why in words; changed judge criteria leave the run to the
//! judge; a changed fixture note makes its task's run one only a rerun can
//! grade; broken, cut and missing transcripts are
//! reported per run, never a crash.

mod common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use common::*;

/// Our suite's tasks, fixtures, check sources and references, in a temporary folder.
fn suite_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let evals = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals");
    for part in ["tasks", "fixtures", "checks", "references"] {
        copy_tree(&evals.join(part), &dir.path().join("evals").join(part));
    }
    dir
}

/// A reference sweep of the suite in `root` into `root/<results>`, with
/// `extra` arguments; its result file.
fn reference_sweep(root: &Path, results: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["run", "--provider", "reference", "--suite", "evals", "--results", results];
    args.extend_from_slice(extra);
    let out = vaultbench(&args, root);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::read_dir(root.join(results))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap()
}

fn regrade(dir: &Path, result: &Path) -> (Option<i32>, Value, String) {
    let out = vaultbench(&["regrade", &result.to_string_lossy(), "--json"], dir);
    let json = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (out.status.code(), json, stderr(&out))
}

fn outcome<'a>(report: &'a Value, task: &str) -> &'a Value {
    report["runs"].as_array().unwrap().iter().find(|r| r["task"] == task).unwrap_or_else(|| panic!("{task}"))
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn recorded_runs_keep_their_verdicts_until_a_check_changes_and_a_changed_fixture_asks_for_a_rerun() {
    let dir = suite_copy();
    let root = dir.path();
    let result = reference_sweep(root, "results", &["--repeat", "1"]);
    let tasks = std::fs::read_dir(root.join("evals/tasks")).unwrap().count();
    let text = |root: &Path| stdout(&vaultbench(&["regrade", &result.to_string_lossy()], root));

    // Today's checks are the run's: every run replays to what it recorded.
    let (code, report, err) = regrade(root, &result);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), tasks);
    for r in runs {
        assert_eq!((&r["outcome"], &r["solved"]), (&json!("same"), &json!(true)), "{r}");
    }
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(report["figures"]["today"], json!([100.0, 100.0]));

    // A check changes: that task's run flips, with the failing check in
    // words, and the figures move with it.
    edit_json(&root.join("evals/tasks/ferry-read-toll.json"), |t| {
        t["outputMatchers"].as_array_mut().unwrap().push(json!({"type": "contains", "value": "Toll: 11"}));
    });
    let (code, report, _) = regrade(root, &result);
    assert_eq!(code, Some(1));
    let toll = outcome(&report, "ferry-read-toll");
    assert_eq!((&toll["outcome"], &toll["solved"]), (&json!("flipped"), &json!(false)), "{toll}");
    assert!(toll["why"].as_str().unwrap().contains("Toll: 11"), "{toll}");
    let moved = text(root);
    assert!(moved.contains("FLIPPED      ferry-read-toll#1: solved → unsolved: "), "{moved}");
    let one_less = 100.0 * (tasks - 1) as f64 / tasks as f64;
    assert!(moved.contains(&format!("solve^1 100.0% → {one_less:.1}%")), "{moved}");
    assert!(moved.ends_with("1 verdict flips under today's checks.\n"), "{moved}");

    // A judge's criteria change: the literal checks still hold, and the
    // verdict the run was judged to no longer answers today's question.
    edit_json(&root.join("evals/tasks/kellmoor-student-photometric-hours.json"), |t| {
        for m in t["outputMatchers"].as_array_mut().unwrap() {
            if m["type"] == "judge" {
                m["criteria"] = json!(format!("{} Answer NO if it gives no date.", m["criteria"].as_str().unwrap()));
            }
        }
    });
    // A note of another task's fixture changes: its run read other text.
    let step = {
        let r: Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("evals/references/ferry-depth-not-recorded.json")).unwrap(),
        )
        .unwrap();
        r["steps"].as_array().unwrap().iter().find(|s| s["tool"] == "read_file").unwrap()["args"]["path"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let fixture = {
        let t: Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("evals/tasks/ferry-depth-not-recorded.json")).unwrap(),
        )
        .unwrap();
        t["fixture"].as_str().unwrap().to_string()
    };
    let note = root.join("evals/fixtures").join(fixture).join(step.strip_prefix("eval-scratch/").unwrap());
    let mut text_of_note = std::fs::read_to_string(&note).unwrap();
    text_of_note.push_str("\nA line written after the sweep.\n");
    std::fs::write(&note, text_of_note).unwrap();
    // A limit falls below what a run used: it would have been cut. Where the
    // run also saw another fixture, only a rerun can say.
    edit_json(&root.join("evals/tasks/ferry-see-also-cycle.json"), |t| t["maxTurns"] = json!(1));
    edit_json(&root.join("evals/tasks/ferry-depth-not-recorded.json"), |t| t["maxTurns"] = json!(1));

    let (code, report, _) = regrade(root, &result);
    assert_eq!(code, Some(1));
    assert_eq!(outcome(&report, "kellmoor-student-photometric-hours")["outcome"], "needs_judge");
    let fuel = outcome(&report, "ferry-depth-not-recorded");
    assert_eq!(fuel["outcome"], "needs_rerun", "{fuel}");
    assert!(fuel["reason"].as_str().unwrap().contains("answered otherwise in the replay than in the run"), "{fuel}");
    let cut = outcome(&report, "ferry-see-also-cycle");
    assert_eq!(cut["outcome"], "flipped", "{cut}");
    assert!(cut["why"].as_str().unwrap().contains("maxTurns is now 1"), "{cut}");
    let others = report["runs"].as_array().unwrap().iter().filter(|r| r["outcome"] == "same").count();
    assert_eq!(others, tasks - 4, "every other run still stands");
    assert_eq!(report["figures"], Value::Null, "no figures while some runs have no verdict");
    let moved = text(root);
    assert!(
        moved.contains("NEEDS RERUN  ferry-depth-not-recorded#1: the replay cannot stand for the run: call "),
        "{moved}"
    );
    assert!(moved.contains("(read_file) answered otherwise in the replay than in the run"), "{moved}");
    // The task files edited by hand above no longer hold what their sources compile to.
    assert!(moved.contains("warning: ferry-read-toll: its check source is not what its task file holds"), "{moved}");
    assert!(
        moved.contains("NEEDS JUDGE  kellmoor-student-photometric-hours#1: the literal checks hold; its judge"),
        "{moved}"
    );
    assert!(
        moved.ends_with("2 verdicts flip under today's checks; 2 runs have no verdict without a rerun or the judge.\n"),
        "{moved}"
    );

    // A check source edited and not compiled: the same warning.
    let source = root.join("evals/checks/radio-count-presenters.toml");
    let edited = std::fs::read_to_string(&source).unwrap().replacen("number = ", "number = 1", 1);
    std::fs::write(&source, edited).unwrap();
    std::fs::write(root.join("evals/checks/radio-find-producer.toml"), "[[[broken").unwrap();
    std::fs::remove_file(root.join("evals/checks/radio-outage-report.toml")).unwrap();
    let warned = text(root);
    for warning in [
        "warning: radio-count-presenters: its check source is not what its task file holds",
        "warning: radio-find-producer: its check source does not compile",
        "warning: radio-outage-report: it has no check source",
    ] {
        assert!(warned.contains(warning), "{warning}: {warned}");
    }

    // Broken evidence is reported run by run.
    let transcripts = root.join("results").join(result.file_stem().unwrap());
    let garbled = transcripts.join("ferry-list-dockside-1.json");
    let bytes = std::fs::read(&garbled).unwrap();
    std::fs::write(&garbled, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::remove_file(transcripts.join("radio-find-producer-1.json")).unwrap();
    edit_json(&transcripts.join("ferry-write-fog-notice-1.json"), |t| {
        for e in t["events"].as_array_mut().unwrap() {
            if e["type"] == "tool_call" && e["name"] == "write_file" {
                e["arguments"] = json!("{\"path\": \"eval-scratch/fog.md\", \"content\": \"Fog… (9000 bytes in all)");
            }
        }
    });
    std::fs::copy(transcripts.join("hive-move-retired-1.json"), transcripts.join("hive-find-swarm-once-1.json"))
        .unwrap();
    edit_json(&result, |r| {
        for t in r["tasks"].as_array_mut().unwrap() {
            if t["id"] == "seedlib-find-drawer" {
                t["runs"][0]["response_text"] = json!("Drawer: C-41");
            }
        }
    });
    let (code, report, _) = regrade(root, &result);
    assert_eq!(code, Some(1));
    let reason = |task: &str| {
        let r = outcome(&report, task);
        assert_eq!(r["outcome"], "unreadable", "{r}");
        r["reason"].as_str().unwrap().to_string()
    };
    assert!(reason("ferry-list-dockside").contains("cannot be read as JSON"));
    assert!(reason("radio-find-producer").contains("missing"));
    assert!(reason("ferry-write-fog-notice").contains("cut in the transcript"));
    assert!(reason("hive-find-swarm-once").contains("of another run (task hive-move-retired, run 1"));
    assert!(reason("seedlib-find-drawer").contains("final answer is not the result's response text"));
    std::os::unix::fs::symlink(transcripts.join("orrinvale-fault-contact-chain-1.json"), transcripts.join("x.json"))
        .unwrap();
    std::fs::remove_file(transcripts.join("orrinvale-fault-contact-chain-1.json")).unwrap();
    std::os::unix::fs::symlink(transcripts.join("x.json"), transcripts.join("orrinvale-fault-contact-chain-1.json"))
        .unwrap();
    let (_, report, _) = regrade(root, &result);
    let linked = outcome(&report, "orrinvale-fault-contact-chain");
    assert!(linked["reason"].as_str().unwrap().contains("is not a plain file"), "{linked}");
}

/// A tool result longer than the transcript keeps is compared by its start
/// only: a note edited past that start, keeping its length, is caught by
/// the fixture hash the result records, not by the transcript.
#[test]
fn an_edit_past_what_the_transcript_kept_needs_a_rerun() {
    let dir = suite_copy();
    let root = dir.path();
    let result = reference_sweep(root, "results", &["--task", "kellmoor-variable"]);
    let (code, report, _) = regrade(root, &result);
    assert_eq!(code, Some(0), "{report}");
    assert!(report["not_in_result"].as_array().unwrap().is_empty(), "a --task sweep misses no other task");
    let shard = reference_sweep(root, "shards", &["--shard", "2/3"]);
    let (code, report, _) = regrade(root, &shard);
    assert_eq!(code, Some(0), "{report}");
    assert!(report["not_in_result"].as_array().unwrap().is_empty(), "a shard misses no other shard's task");

    // A result from before the fixture hash: its unchanged task's content
    // hash, which covers the fixture, vouches for the cut results.
    let older = result.with_file_name("older.json");
    std::fs::copy(&result, &older).unwrap();
    edit_json(&older, |r| {
        for t in r["tasks"].as_array_mut().unwrap() {
            t.as_object_mut().unwrap().remove("fixture_hash");
        }
    });
    std::fs::create_dir_all(root.join("results/older")).unwrap();
    copy_tree(&root.join("results").join(result.file_stem().unwrap()), &root.join("results/older"));
    let (code, report, _) = regrade(root, &older);
    assert_eq!(code, Some(0), "{report}");

    let logbook = root.join("evals/fixtures/b-kellmoor-logbook/logbook-2031.md");
    let text = std::fs::read_to_string(&logbook).unwrap();
    let at = text.find("V = 12.07").expect("the reading the task turns on");
    assert!(at > 4_000, "past what a transcript keeps of a result");
    std::fs::write(&logbook, text.replacen("V = 12.07", "V = 12.97", 1)).unwrap();
    let (code, report, _) = regrade(root, &result);
    assert_eq!(code, Some(1));
    let run = outcome(&report, "kellmoor-variable-first-last");
    assert_eq!(run["outcome"], "needs_rerun", "{run}");
    assert!(run["reason"].as_str().unwrap().contains("kept only the start"), "{run}");
}

/// Our committed baseline answered nothing, so no check can move it; but
/// limits raised since it ran let its runs go further, and only a rerun
/// can say how far.
#[test]
fn runs_cut_by_limits_that_rose_since_need_a_rerun() {
    let dir = suite_copy();
    let root = dir.path();
    let evals = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals");
    copy_tree(&evals.join("baselines"), &root.join("evals/baselines"));
    let baseline = std::fs::read_dir(root.join("evals/baselines"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    let answered = recorded["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["runs"].as_array().unwrap())
        .filter(|r| r["passed"] == true)
        .count();
    if answered > 0 {
        eprintln!("skipping: the committed baseline has answered runs; this test is about one that has none");
        return;
    }
    let out = vaultbench(&["regrade", &baseline.to_string_lossy()], root);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("no run answered, so no check change can move them"), "{}", stdout(&out));

    // A run that gave no answer stands only while what it saw stands: its
    // request rewritten, a rerun might answer.
    let task = recorded["tasks"][0]["id"].as_str().unwrap().to_string();
    let runs = recorded["tasks"][0]["runs"].as_array().unwrap().len();
    edit_json(&root.join(format!("evals/tasks/{task}.json")), |t| {
        t["userMessage"] = json!(format!("{} Answer in French.", t["userMessage"].as_str().unwrap()));
    });
    let (code, report, _) = regrade(root, &baseline);
    assert_eq!(code, Some(1));
    let rewritten: Vec<&Value> = report["runs"].as_array().unwrap().iter().filter(|r| r["task"] == task).collect();
    assert_eq!(rewritten.len(), runs);
    for r in rewritten {
        assert_eq!(r["outcome"], "needs_rerun", "{r}");
        assert!(r["reason"].as_str().unwrap().contains("the request is not the one the run was given"), "{r}");
    }
    let (code, _, _) = {
        edit_json(&root.join(format!("evals/tasks/{task}.json")), |t| {
            let m = t["userMessage"].as_str().unwrap().trim_end_matches(" Answer in French.").to_string();
            t["userMessage"] = json!(m);
        });
        regrade(root, &baseline)
    };
    assert_eq!(code, Some(0), "the request as it was: the runs stand again");

    // Every limit raised: the runs that stopped at one now need a rerun.
    let mut cut = 0;
    for t in recorded["tasks"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        cut += t["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["timedOut"] == true || r["endReason"] == "turn_limit")
            .count();
        edit_json(&root.join(format!("evals/tasks/{id}.json")), |task| {
            task["maxTurns"] = json!(task["maxTurns"].as_u64().unwrap_or(10) * 3);
            task["timeoutMs"] = json!(task["timeoutMs"].as_u64().unwrap_or(120_000) * 3);
        });
    }
    assert!(cut > 0);
    let (code, report, _) = regrade(root, &baseline);
    assert_eq!(code, Some(1));
    let rerun = report["runs"].as_array().unwrap().iter().filter(|r| r["outcome"] == "needs_rerun").count();
    assert_eq!(rerun, cut, "every run a limit stopped");
    let one = report["runs"].as_array().unwrap().iter().find(|r| r["outcome"] == "needs_rerun").unwrap();
    assert!(one["reason"].as_str().unwrap().contains(" is now "), "{one}");
}

#[test]
fn a_result_without_transcripts_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("lone.json");
    write_result(&result, &sample_result("openai", "m", &[("a", &[true])]));
    let out = vaultbench(&["regrade", &result.to_string_lossy(), "--suite", "."], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("no transcripts for"), "{}", stderr(&out));
}

/// Ctrl-C stops a regrade with exit 130, its temporary vaults removed.
#[test]
fn an_interrupted_regrade_leaves_no_vault_behind() {
    let dir = suite_copy();
    let root = dir.path();
    let result = reference_sweep(root, "results", &["--repeat", "5"]);
    let tmp = tempfile::tempdir().unwrap();
    let scratch = |tmp: &Path| {
        std::fs::read_dir(tmp)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("vaultbench-"))
            .count()
    };
    let child = command()
        .args(["regrade", &result.to_string_lossy()])
        .current_dir(root)
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while scratch(tmp.path()) == 0 {
        assert!(start.elapsed().as_secs() < 30, "no scratch folder appeared");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let killed = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "every replay ends before the runtime: {}", stderr(&out));
    assert_eq!(scratch(tmp.path()), 0, "the temporary vaults are removed");
}
