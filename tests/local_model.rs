//! One T1 task of our own suite against a real model served by software we
//! did not write: SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible
//! server, managed by `scripts/local-model.sh`. Skips (with the reason) when
//! the server is not installed: `scripts/local-model.sh install` builds it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;
use vaultbench::format::result::ResultFile;
use vaultbench::report::{self, aggregate};

const MODEL: &str = "smollm2-135m-instruct";
const TASK: &str = "ferry-read-toll";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script(args: &[&str]) -> std::process::Output {
    Command::new(repo().join("scripts/local-model.sh")).args(args).output().expect("the script runs")
}

/// Stops the server at the end of the test if the test started it.
struct Server {
    started_here: bool,
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.started_here {
            let _ = script(&["stop"]);
        }
    }
}

fn base_url(env_output: &str) -> String {
    env_output
        .lines()
        .find_map(|l| l.strip_prefix("export OPENAI_BASE_URL="))
        .expect("the script prints OPENAI_BASE_URL")
        .to_string()
}

#[test]
fn a_t1_task_runs_end_to_end_against_the_real_local_server() {
    if !script(&["installed"]).status.success() {
        eprintln!("skipping: the local model server is not installed (run scripts/local-model.sh install)");
        return;
    }
    // Reuse a server that is already up (and leave it running); otherwise start one.
    let already = script(&["status"]).status.success();
    let started = if already { script(&["env"]) } else { script(&["start"]) };
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let _server = Server { started_here: !already };
    let url = base_url(&String::from_utf8_lossy(&started.stdout));

    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let out = command()
        .env("OPENAI_BASE_URL", &url)
        .args(["run", "--provider", "openai", "--model", MODEL, "--task", TASK, "--suite"])
        .arg(repo().join("evals"))
        .arg("--results")
        .arg(&results)
        .arg("--baselines")
        .arg(dir.path().join("baselines"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{text}");

    let result_path = only_json(&results);
    let result: ResultFile = report::load_result(&result_path).unwrap();
    assert_eq!((result.provider.as_str(), result.model.as_str()), ("openai", MODEL));
    assert_eq!(result.tasks.len(), 1);
    let run = &result.tasks[0].runs[0];
    // Scored by the real pipeline: figures re-derive, and the harness itself did not fail.
    assert!(aggregate::differences(&result, &aggregate::rederive(&result)).is_empty());
    assert!(run.errors.is_empty(), "harness errors against the real server: {:?}\n{text}", run.errors);
    assert!(run.metrics.turns >= 1 && run.metrics.prompt_tokens > 0, "{:?}", run.metrics);

    // The transcript holds what the server answered, with its token counts.
    let transcript_path = results.parent().unwrap().join(&run.transcript_path);
    let transcript: Value = serde_json::from_str(&std::fs::read_to_string(&transcript_path).unwrap()).unwrap();
    // Local servers get a cap on each reply, recorded with the run.
    assert_eq!(transcript["max_output_tokens"].as_u64(), Some(2048));
    let calls: Vec<&Value> =
        transcript["events"].as_array().unwrap().iter().filter(|e| e["type"] == "model_call").collect();
    assert!(!calls.is_empty(), "{transcript}");
    assert!(calls.iter().all(|c| c["usage"]["prompt_tokens"].as_u64().unwrap_or(0) > 0), "{transcript}");
}

fn only_json(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}
