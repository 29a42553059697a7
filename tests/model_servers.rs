//! Whole sweeps, through the real binary, against model servers that
//! misbehave: what the run records, and whether `bless` takes it.
//!
//! - a hung server: a harness error, so bless refuses;
//! - a slow model on a live server: `timed_out`, the model's, so bless takes it;
//! - an answer that drips: a harness error;
//! - an endless answer: a harness error naming the cap, memory kept low;
//! - absurd numbers (`Retry-After: 1e300`, `VAULTBENCH_HTTP_TIMEOUT_S=1e300`): no panic;
//! - a key echoed encoded, by the model's server and so on to the judge's: never written, never sent.

mod common;
#[path = "providers/fake.rs"]
mod fake;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::*;
use fake::{Fake, Reply, Sending};

const KEY: &str = "sk-live-0123456789abcdefghijklmnop";
const JUDGE_KEY: &str = "judge-key-0123456789abcdefghij";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A one-task suite; `matchers` is the task's outputMatchers.
fn suite(timeout_ms: u64, matchers: Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("evals");
    write(&root, "fixtures/notes/budget.md", "The approved budget is 88,000 marks.\n");
    let task = json!({
        "id": "budget", "description": "d", "userMessage": "What is the approved budget?",
        "difficulty": "T1", "category": "retrieval", "fixture": "notes",
        "outputMatchers": matchers, "maxTurns": 5, "timeoutMs": timeout_ms
    });
    write(&root, "tasks/budget.json", &task.to_string());
    std::fs::create_dir(dir.path().join("tmp")).unwrap();
    dir
}

fn says(text: &str) -> Reply {
    Reply::json(json!({
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 10, "completion_tokens": 5 }
    }))
}

/// `run` against the OpenAI-compatible server at `url`, then the one result.
fn sweep(dir: &Path, url: &str, env: &[(&str, &str)]) -> (Output, PathBuf, Value) {
    let mut cmd = command();
    cmd.env("OPENAI_BASE_URL", format!("{url}/v1"))
        .env("OPENAI_API_KEY", KEY)
        .env("VAULTBENCH_RETRY_BASE_MS", "1")
        .env("TMPDIR", dir.join("tmp"))
        .args(["run", "--provider", "openai", "--model", "m", "--suite", "evals", "--results", "results"])
        .args(["--baselines", "baselines"])
        .current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!text.contains("panicked"), "{text}");
    let path = std::fs::read_dir(dir.join("results"))
        .unwrap_or_else(|e| panic!("no results folder ({e}): {text}"))
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap_or_else(|| panic!("no result file: {text}"));
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(std::fs::read_dir(dir.join("tmp")).unwrap().next().is_none(), "a temporary vault was left behind");
    (out, path, result)
}

fn the_run(result: &Value) -> &Value {
    &result["tasks"][0]["runs"][0]
}

fn bless(dir: &Path, result: &Path) -> Output {
    command().args(["bless", result.to_str().unwrap(), "--baselines", "baselines"]).current_dir(dir).output().unwrap()
}

fn contains() -> Value {
    json!([{ "type": "contains", "value": "88,000" }])
}

#[test]
fn a_hung_server_is_a_harness_error_that_bless_refuses() {
    let dir = suite(1500, contains());
    let fake = Fake::always(says("The budget is 88,000 marks.").delayed(Duration::from_secs(60)));
    let started = Instant::now();
    let (_, path, result) = sweep(dir.path(), &fake.url, &[]);
    // timeoutMs, plus the liveness check (1 s), within the grace.
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
    let run = the_run(&result);
    let error = run["errors"][0].as_str().unwrap_or_else(|| panic!("no harness error: {run}"));
    assert!(error.contains("no answer to a liveness check") && error.contains("the server is hung"), "{error}");
    assert_eq!(run.get("timedOut"), None, "{run}");
    let out = bless(dir.path(), &path);
    assert!(!out.status.success(), "bless took a hung server's result: {}", stdout(&out));
    assert!(stderr(&out).contains("harness error"), "{}", stderr(&out));
}

#[test]
fn a_slow_model_on_a_live_server_times_out_and_is_blessable() {
    let dir = suite(1500, contains());
    // The chat takes long; the model list (the liveness check) is answered at once.
    let fake = Fake::start(|r, _| {
        if r.method == "POST" {
            says("The budget is 88,000 marks.").delayed(Duration::from_secs(60))
        } else {
            Reply::json(json!({ "object": "list", "data": [] }))
        }
    });
    let (_, path, result) = sweep(dir.path(), &fake.url, &[]);
    let run = the_run(&result);
    assert_eq!((run["timedOut"].as_bool(), run["passed"].as_bool()), (Some(true), Some(false)), "{run}");
    assert_eq!(run["errors"], json!([]), "{run}");
    let out = bless(dir.path(), &path);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_dripping_answer_is_a_harness_error() {
    let dir = suite(1500, contains());
    let fake = Fake::always(says("The budget is 88,000 marks.").sending(Sending::Drip(Duration::from_millis(200))));
    let (_, path, result) = sweep(dir.path(), &fake.url, &[]);
    let error = the_run(&result)["errors"][0].as_str().unwrap_or_default().to_string();
    assert!(error.contains("was still sending its answer") && error.contains("not the model's"), "{error}");
    assert!(!bless(dir.path(), &path).status.success());
}

#[test]
fn an_endless_answer_is_a_harness_error_naming_the_cap() {
    let dir = suite(20_000, contains());
    let fake = Fake::always(says("The budget is ").sending(Sending::Endless));
    let started = Instant::now();
    let (_, _, result) = sweep(dir.path(), &fake.url, &[]);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    let error = the_run(&result)["errors"][0].as_str().unwrap_or_default().to_string();
    assert!(error.contains("openai: the answer from") && error.contains("larger than the 4 MiB cap"), "{error}");
    assert_eq!(fake.requests().len(), 1, "not asked again");
}

#[test]
fn absurd_numbers_from_outside_do_not_panic() {
    let dir = suite(20_000, contains());
    let fake = Fake::scripted(vec![
        Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "1e300"),
        says("The budget is 88,000 marks."),
    ]);
    let (_, _, result) = sweep(dir.path(), &fake.url, &[]);
    let error = the_run(&result)["errors"][0].as_str().unwrap_or_default().to_string();
    assert!(error.contains("would pass the 600 s retry budget") && error.contains("slow down"), "{error}");

    let dir = suite(20_000, contains());
    let fake = Fake::always(says("The budget is 88,000 marks."));
    let (out, _, result) = sweep(dir.path(), &fake.url, &[("VAULTBENCH_HTTP_TIMEOUT_S", "1e300")]);
    assert!(out.status.success());
    assert_eq!(the_run(&result)["solved"], true, "{result}");

    let out = command()
        .env("VAULTBENCH_HTTP_TIMEOUT_S", "NaN")
        .env("OPENAI_BASE_URL", &fake.url)
        .args(["run", "--provider", "openai", "--model", "m", "--suite", "evals", "--results", "results"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("VAULTBENCH_HTTP_TIMEOUT_S is `NaN`: set it to a positive number of seconds"));
}

#[test]
fn an_encoded_key_is_never_written_nor_sent_to_the_judge() {
    let matchers =
        json!([{ "type": "contains", "value": "88,000" }, { "type": "judge", "criteria": "States the budget." }]);
    let dir = suite(20_000, matchers);
    let escaped: String = KEY.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
    let percent: String = KEY.bytes().map(|b| format!("%{b:02X}")).collect();
    let mut echo = says("PLACEHOLDER");
    echo.body = echo.body.replace(
        "PLACEHOLDER",
        &format!("The budget is 88,000 marks. Your key: {escaped}, in a URL: ?key={percent}, plain: {KEY}"),
    );
    let model = Fake::always(echo);
    let judge = Fake::always(Reply::json(json!({
        "candidates": [{ "content": { "role": "model", "parts": [{ "text": "YES" }] }, "finishReason": "STOP" }],
        "usageMetadata": { "promptTokenCount": 200, "candidatesTokenCount": 1 }
    })));
    let (out, path, result) = sweep(
        dir.path(),
        &model.url,
        &[("EVAL_JUDGE_PROVIDER", "gemini"), ("EVAL_JUDGE_BASE_URL", &judge.url), ("EVAL_JUDGE_API_KEY", JUDGE_KEY)],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let run = the_run(&result);
    assert_eq!(run["solved"], true, "{run}");
    assert_eq!(
        run["response_text"],
        "The budget is 88,000 marks. Your key: [REDACTED], in a URL: ?key=[REDACTED], plain: [REDACTED]"
    );
    // Nothing under the results, in any encoding.
    let tail = &KEY[3..];
    for entry in walkdir::WalkDir::new(path.parent().unwrap()) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for form in [KEY, tail, &escaped, &percent] {
                assert!(!text.contains(form), "{} holds the key", entry.path().display());
            }
        }
    }
    // The judge saw the answer, scrubbed.
    let prompts = judge.requests();
    assert_eq!(prompts.len(), 1);
    let sent = &prompts[0].raw_body;
    assert!(sent.contains("88,000") && sent.contains("[REDACTED]"), "{sent}");
    assert!(!sent.contains(tail), "the judge's server got the key: {sent}");
}
