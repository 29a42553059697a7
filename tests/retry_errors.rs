//! `run --resume RUN_ID --retry-errors` through the real binary: a server
//! that fails chosen tasks (HTTP 503 until the retries run out), then heals.
//! After the retry the result has no harness error, the runs that were fine
//! were not run again (the server saw no request of theirs, and their
//! transcripts are byte for byte the same), the errored runs' first records
//! are kept in `retried/`, and the result blesses without --force.

mod common;
#[path = "providers/fake.rs"]
mod fake;
#[path = "providers/replay.rs"]
mod replay;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use common::*;
use fake::{Fake, Reply};

const TASKS: [&str; 5] = ["alder", "birch", "cedar", "dogwood", "elm"];
const FAILING: [&str; 2] = ["birch", "elm"];

/// A suite of one-step tasks whose user messages tell them apart.
fn suite(dir: &Path) -> PathBuf {
    let root = dir.join("evals");
    orchard_suite(&root, &TASKS);
    root
}

fn transcripts(sweep: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(sweep)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json") && !p.ends_with("sweep.json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn retry_errors_reruns_only_the_errored_runs_and_the_result_blesses() {
    let dir = tempfile::tempdir().unwrap();
    let root = suite(dir.path());
    let replayed = Arc::new(replay::suite(&root));
    let healthy = Arc::new(AtomicBool::new(false));
    let (server_suite, server_healthy) = (replayed.clone(), healthy.clone());
    let fake = Fake::start(move |request, _| {
        if request.method != "POST" {
            return Reply::json(serde_json::json!({}));
        }
        let task = server_suite.task_of(replay::openai_first(&request.body)).unwrap_or("").to_string();
        if !server_healthy.load(Ordering::SeqCst) && FAILING.contains(&task.as_str()) {
            return Reply::status(503, r#"{"error":{"message":"the model is overloaded"}}"#);
        }
        replay::openai(&server_suite, &request.body)
    });
    let results = dir.path().join("results");
    let baselines = dir.path().join("baselines");
    let run = |extra: &[&str]| {
        command()
            .env("OPENAI_BASE_URL", format!("{}/v1", fake.url))
            .env("VAULTBENCH_RETRY_ATTEMPTS", "2")
            .env("VAULTBENCH_RETRY_BASE_MS", "1")
            .args(["run", "--provider", "openai", "--model", "retry-test", "--repeat", "2", "--jobs", "4"])
            .arg("--suite")
            .arg(&root)
            .arg("--results")
            .arg(&results)
            .arg("--baselines")
            .arg(&baselines)
            .args(extra)
            .output()
            .unwrap()
    };

    let out = run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result_path = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let first: Value = serde_json::from_str(&std::fs::read_to_string(&result_path).unwrap()).unwrap();
    let errored: Vec<String> = first["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["runs"].as_array().unwrap().iter().any(|r| !r["errors"].as_array().unwrap().is_empty()))
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(errored, FAILING, "the failing tasks, and only they, have harness errors");
    let bless = || {
        command()
            .args(["bless"])
            .arg(&result_path)
            .arg("--results")
            .arg(&results)
            .arg("--baselines")
            .arg(&baselines)
            .output()
            .unwrap()
    };
    let refused = bless();
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("--retry-errors"), "{}", stderr(&refused));

    let sweep = result_path.with_extension("");
    let before = transcripts(&sweep);
    let requests_before = fake.requests().len();
    healthy.store(true, Ordering::SeqCst);
    let run_id = first["run_id"].as_str().unwrap().to_string();
    let out = run(&["--resume", &run_id, "--retry-errors"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("running again 4 runs that ended with a harness error"), "{}", stderr(&out));

    // Only the failing tasks' runs reached the server again.
    let asked: Vec<String> = fake.requests()[requests_before..]
        .iter()
        .filter(|r| r.method == "POST")
        .filter_map(|r| replayed.task_of(replay::openai_first(&r.body)).map(str::to_string))
        .collect();
    assert!(!asked.is_empty());
    assert!(asked.iter().all(|t| FAILING.contains(&t.as_str())), "{asked:?}");

    let after = transcripts(&sweep);
    for (name, bytes) in &before {
        let task = name.rsplit_once('-').unwrap().0;
        if FAILING.contains(&task) {
            assert_ne!(after.get(name), Some(bytes), "{name} was run again");
        } else {
            assert_eq!(after.get(name), Some(bytes), "{name} was kept as it was");
        }
    }
    let retried: Vec<String> = std::fs::read_dir(sweep.join("retried"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(retried.len(), 8, "a record and a transcript for each of the 4 runs: {retried:?}");

    let second: Value = serde_json::from_str(&std::fs::read_to_string(&result_path).unwrap()).unwrap();
    assert_eq!(second["run_id"], first["run_id"]);
    assert_eq!(second["aggregate"]["total_runs"], 10);
    for task in second["tasks"].as_array().unwrap() {
        for run in task["runs"].as_array().unwrap() {
            assert_eq!(run["errors"], Value::Array(vec![]), "{}", task["id"]);
            assert_eq!(run["solved"], true, "{}", task["id"]);
        }
    }
    let blessed = bless();
    assert!(blessed.status.success(), "{}\n{}", stdout(&blessed), stderr(&blessed));
    assert!(baselines.join("openai-retry-test.json").is_file());

    // Nothing left to retry: said so, and nothing runs.
    let requests_before = fake.requests().len();
    let out = run(&["--resume", &run_id, "--retry-errors"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no run of this sweep ended with a harness error"), "{}", stderr(&out));
    assert_eq!(fake.requests().len(), requests_before);
}

#[test]
fn retry_errors_needs_resume() {
    let out = vaultbench(&["run", "--provider", "reference", "--retry-errors"], Path::new("."));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--resume"), "{}", stderr(&out));
}
