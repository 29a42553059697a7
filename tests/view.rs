//! `vaultbench view` through the real binary: a result (blessed or not)
//! exported as the explorer's pages with its runs, checks in words,
//! transcripts and the comparison with the baseline it would replace,
//! naming the tasks edited since; a sweep still running, served and
//! refreshed as its runs finish; clear errors for what is not there.

mod common;
mod publish_support;

use std::path::Path;
use std::time::Duration;

use common::*;
use publish_support::*;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A reference sweep of the ferry tasks into `results`; the result file.
fn sweep(dir: &Path, results: &str, extra: &[&str]) -> std::path::PathBuf {
    let suite = repo().join("evals");
    let mut args = vec!["run", "--provider", "reference", "--suite", suite.to_str().unwrap(), "--results", results];
    args.extend_from_slice(&["--task", "ferry"]);
    args.extend_from_slice(extra);
    let out = vaultbench(&args, dir);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    json_files(&dir.join(results)).into_iter().max().expect("a result file")
}

fn page(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn a_result_exports_with_its_runs_transcripts_and_the_comparison_with_its_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The baseline: an earlier sweep, in which one task was another task (its content hash differs).
    let earlier = sweep(root, "old-results", &[]);
    let mut baseline: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&earlier).unwrap()).unwrap();
    baseline["tasks"][0]["content_hash"] = "sha256:an-older-definition".into();
    let edited = baseline["tasks"][0]["id"].as_str().unwrap().to_string();
    std::fs::create_dir_all(root.join("evals/baselines")).unwrap();
    std::fs::write(root.join("evals/baselines/reference-reference.json"), baseline.to_string()).unwrap();
    let result = sweep(root, "evals/results", &[]);

    let suite = repo().join("evals");
    let out = vaultbench(&["view", "--suite", suite.to_str().unwrap(), "--out", "review"], root);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let site = root.join("review");
    let home = page(&site, "index.html");
    let run_id: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert!(home.contains(run_id["run_id"].as_str().unwrap()), "the home page names the run");
    assert!(home.contains("Tasks since the baseline") && home.contains(&edited), "{home}");
    assert!(home.contains("offline reference judge"), "a self-check says so");
    // Both rows, and the comparison of the two.
    let results = page(&site, "results.html");
    assert_eq!(results_rows(&results).len(), 2, "{results}");
    // Which row is which, in every place a model's name is shown; a view has no history page.
    assert!(results.contains("reference (this run)") && results.contains("reference (baseline)"), "{results}");
    assert!(results.contains("The run on view") && !results.contains("Every blessed baseline"), "{results}");
    assert!(!site.join("changes.html").exists() && !home.contains("changes.html"), "no What changed page");
    let pairs: Vec<_> =
        walkdir::WalkDir::new(site.join("compare")).into_iter().flatten().filter(|e| e.file_type().is_file()).collect();
    assert_eq!(pairs.len(), 1, "one comparison page");
    // The run's task page: each check in words, and the transcript of the run.
    let run_pages: Vec<_> = std::fs::read_dir(site.join("baselines"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let run_dir = run_pages.iter().find(|n| n.starts_with("run-") && !n.ends_with(".html")).expect("the run's pages");
    let task = page(&site.join("baselines").join(run_dir), "ferry-read-toll.html");
    // The baseline's page of the task it ran with another definition says so.
    let blessed_dir = run_pages.iter().find(|n| n.starts_with("blessed-") && !n.ends_with(".html")).unwrap();
    let edited_page = page(&site.join("baselines").join(blessed_dir), &format!("{edited}.html"));
    assert!(edited_page.contains("Edited since this ran"), "{edited_page}");
    assert!(!task.contains("Edited since this ran"), "the run ran the suite as it is");
    assert!(task.contains("check-what") && task.contains("Toll"), "checks in words: {task}");
    assert!(task.contains("transcript"), "{task}");
    let transcript = page(&site.join("baselines").join(run_dir), "ferry-read-toll/run-1.html");
    assert!(
        transcript.contains("read_file") && transcript.contains("tolls-2032"),
        "the run's transcript: {transcript}"
    );
    // The results folder is only read.
    assert!(!root.join("evals/results").join("index.html").exists());
}

#[test]
fn a_running_sweep_is_served_and_its_page_refreshes_as_runs_finish() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let suite = repo().join("evals");
    let mut running = std::process::Command::new(env!("CARGO_BIN_EXE_vaultbench"))
        .args(["run", "--provider", "reference", "--suite", suite.to_str().unwrap(), "--results", "evals/results"])
        .args(["--task", "ferry", "--jobs", "1", "--cell-delay-ms", "700"])
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        eventually(Duration::from_secs(20), || std::fs::read_dir(root.join("evals/results"))
            .is_ok_and(|d| d.flatten().any(|e| e.path().join("sweep.json").is_file()))),
        "the sweep did not start"
    );
    let view = Watcher::serving(root, &["view", "--suite", suite.to_str().unwrap(), "--port", "0"]);
    let home = get(&format!("{}index.html", view.url));
    assert_eq!(home.status, 200);
    assert!(home.body.contains("still running"), "{}", home.body);
    let finished = |body: &str| {
        let at = body.find("runs have finished")?;
        let before = &body[..at];
        let n: usize = before.rsplit(" of ").nth(1)?.rsplit(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
        Some(n)
    };
    let first = finished(&home.body).expect("a count of finished runs");
    // More runs finish: the served page follows, then the sweep ends and the note goes.
    assert!(
        eventually(Duration::from_secs(30), || finished(&get(&format!("{}index.html", view.url)).body)
            .is_some_and(|n| n > first)),
        "the page did not follow the sweep"
    );
    assert!(running.wait().unwrap().success());
    assert!(
        eventually(Duration::from_secs(10), || !get(&format!("{}index.html", view.url)).body.contains("still running")),
        "the finished sweep is still shown as running"
    );
    assert_eq!(view.interrupt(), Some(130));
}

#[test]
fn what_is_not_there_is_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let out = vaultbench(&["view", "--out", "x"], dir.path());
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no results in evals/results yet"), "{}", stderr(&out));
    std::fs::create_dir_all(dir.path().join("evals/results")).unwrap();
    let out = vaultbench(&["view", "2030-01-01T00:00:00.000Z", "--out", "x"], dir.path());
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no result `2030-01-01T00:00:00.000Z`"), "{}", stderr(&out));
    assert!(!dir.path().join("x").exists(), "nothing is written");
}
