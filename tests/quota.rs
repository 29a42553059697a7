//! Sweeps by the real binary against loopback quota servers (a token bucket
//! replaying the reference trajectories, see `providers/quota_server.rs`),
//! OpenAI style (429 + Retry-After + x-ratelimit headers) and Gemini style
//! (429 + RetryInfo, no headers). What must hold: no run is lost to the
//! quota, the server refuses at most one request in ten it serves, and the
//! requests take at most 1.2 times the quota's bound (the least time any
//! client needs to be served them). Also: four shard processes against one
//! quota server, merged, give what one process gives.

mod common;
#[path = "providers/fake.rs"]
mod fake;
#[path = "providers/quota_server.rs"]
mod quota_server;
#[path = "providers/replay.rs"]
mod replay;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use fake::{Fake, Reply};
use serde_json::{Value, json};

use common::*;
use quota_server::{QuotaServer, Style};

/// The tasks swept: 9 tasks of the project's suite.
const TASKS: &str = "ferry-";
const K: &str = "6";
const JOBS: &str = "8";
/// The server's bucket: 4 requests, refilled at 20 a second.
const CAPACITY: f64 = 4.0;
const RATE: f64 = 20.0;

/// The model calls a sweep of the tasks makes: per run, one per step of
/// the task's reference trajectory (which the server replays) and one for
/// the final answer.
fn model_calls() -> u64 {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/references");
    let mut per_k = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with(TASKS) {
            let reference: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            per_k += reference["steps"].as_array().unwrap().len() as u64 + 1;
        }
    }
    per_k * K.parse::<u64>().unwrap()
}

/// A judge server that answers every question YES, for the whole test process.
fn judge() -> &'static Fake {
    static JUDGE: std::sync::OnceLock<Fake> = std::sync::OnceLock::new();
    JUDGE.get_or_init(|| {
        Fake::always(Reply::json(json!({
            "candidates": [{ "content": { "role": "model", "parts": [{ "text": "YES" }] }, "finishReason": "STOP" }],
            "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11 }
        })))
    })
}

fn sweep_command(style: Style, url: &str, results: &Path) -> Command {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals");
    let mut cmd = command();
    match style {
        Style::OpenAi => {
            cmd.env("OPENAI_BASE_URL", format!("{url}/v1"));
            cmd.args(["run", "--provider", "openai", "--model", "quota-test"]);
        }
        Style::Gemini => {
            // The Gemini key would make Gemini the judge too, on this server:
            // its judge calls go to a server of their own, which says YES,
            // so the quota measured here is the model's alone.
            cmd.env("GEMINI_BASE_URL", url).env("GEMINI_API_KEY", "quota-test-key-0123456789");
            cmd.env("EVAL_JUDGE_BASE_URL", &judge().url);
            cmd.args(["run", "--provider", "gemini", "--model", "gemini-quota-test", "--allow-unpriced"]);
        }
    }
    cmd.args(["--task", TASKS, "--repeat", K, "--jobs", JOBS])
        .arg("--suite")
        .arg(&root)
        .arg("--results")
        .arg(results)
        .arg("--baselines")
        .arg(results.join("no-baselines"));
    cmd
}

fn result_files(dir: &Path) -> Vec<PathBuf> {
    json_files(dir)
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every run of the result passed, none with a harness error: none was lost to the quota.
fn assert_no_run_lost(result: &Value, runs: u64) {
    assert_eq!(result["aggregate"]["total_runs"], runs, "{}", result["aggregate"]);
    for task in result["tasks"].as_array().unwrap() {
        for run in task["runs"].as_array().unwrap() {
            assert_eq!(run["errors"], Value::Array(vec![]), "{}: {}", task["id"], run["errors"]);
            assert_eq!(run["passed"], true, "{}", task["id"]);
            // The reference trajectory solves its task; a task with a judge
            // matcher may fail on the judge alone where none is configured.
            let d = &run["solve_details"];
            if d["judge_skipped"] == true {
                let literal = d["matcher_details"].as_array().unwrap().iter().filter(|m| m["type"] != "judge");
                assert!(literal.clone().all(|m| m["verdict"] == true), "{}: {d}", task["id"]);
                assert_eq!(d["vault_assertions_pass"], true, "{}: {d}", task["id"]);
            } else {
                assert_eq!(run["solved"], true, "{}: the reference trajectory solves its task", task["id"]);
            }
        }
    }
}

fn check_sweep(style: Style) {
    let suite = Arc::new(replay::project_suite());
    let server = QuotaServer::start(style, CAPACITY, RATE, suite);
    let dir = tempfile::tempdir().unwrap();
    let out: Output = sweep_command(style, &server.fake.url, dir.path()).output().unwrap();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let figures = server.figures();
    let (span, bound) = (server.fake_span(), server.bound());
    let ratio = span.as_secs_f64() / bound.as_secs_f64();
    eprintln!(
        "{style:?}: served {}, refused {} ({:.1}%), requests took {:.2} s for a bound of {:.2} s ({ratio:.2}x)",
        figures.served,
        figures.refused,
        100.0 * figures.refused as f64 / figures.served as f64,
        span.as_secs_f64(),
        bound.as_secs_f64()
    );
    eprintln!("{}", stdout(&out).lines().filter(|l| l.contains("Quota")).collect::<Vec<_>>().join("\n"));
    let files = result_files(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    assert_no_run_lost(&read(&files[0]), 54);
    assert_eq!(figures.served, model_calls(), "one model call per reference step and one for the answer, k = 6");
    assert!(figures.refused * 10 <= figures.served, "refused {} of {}", figures.refused, figures.served);
    assert!(ratio <= 1.2, "{span:?} against a bound of {bound:?}");
    let text = stdout(&out);
    assert!(text.contains("Quota: waited "), "{text}");
    assert!(
        text.contains(&format!("{} of {} requests refused", figures.refused, figures.refused + figures.served)),
        "{text}"
    );
}

impl QuotaServer {
    fn fake_span(&self) -> std::time::Duration {
        self.figures().span()
    }
}

#[test]
fn an_openai_style_quota_loses_no_run_and_is_used_to_its_bound() {
    check_sweep(Style::OpenAi);
}

#[test]
fn a_gemini_style_quota_loses_no_run_and_is_used_to_its_bound() {
    check_sweep(Style::Gemini);
}

#[test]
fn a_configured_rate_is_never_refused() {
    let suite = Arc::new(replay::project_suite());
    let server = QuotaServer::start(Style::Gemini, CAPACITY, RATE, suite);
    let dir = tempfile::tempdir().unwrap();
    let quotas = dir.path().join("quotas.toml");
    std::fs::write(&quotas, "[gemini.\"gemini-quota-test\"]\nrequests_per_minute = 1200\n").unwrap();
    let out = sweep_command(Style::Gemini, &server.fake.url, dir.path()).arg("--quotas").arg(&quotas).output().unwrap();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let figures = server.figures();
    assert_eq!((figures.served, figures.refused), (model_calls(), 0));
    assert_no_run_lost(&read(&result_files(dir.path())[0]), 54);
    // The flag wins over the file: half the rate, about twice the time.
    let server = QuotaServer::start(Style::Gemini, CAPACITY, RATE, Arc::new(replay::project_suite()));
    let dir2 = tempfile::tempdir().unwrap();
    let out = sweep_command(Style::Gemini, &server.fake.url, dir2.path())
        .args(["--rpm", "600"])
        .arg("--quotas")
        .arg(&quotas)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let span = server.figures().span().as_secs_f64();
    assert!(span >= 179.0 / 10.0 * 0.95, "paced at 10 requests a second: {span} s");
    assert_eq!(server.figures().refused, 0);
}

#[test]
fn four_shards_against_one_quota_merge_into_what_one_process_gives() {
    let suite = Arc::new(replay::project_suite());
    let server = QuotaServer::start(Style::OpenAi, CAPACITY, RATE, suite.clone());
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    let children: Vec<_> = (1..=4)
        .map(|i| {
            sweep_command(Style::OpenAi, &server.fake.url, &shards)
                .args(["--shard", &format!("{i}/4")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    }
    let parts = result_files(&shards);
    assert_eq!(parts.len(), 4, "{parts:?}");
    let merged = dir.path().join("merged.json");
    let mut args: Vec<String> = vec!["merge".into()];
    args.extend(parts.iter().map(|p| p.display().to_string()));
    args.extend(["--out".into(), merged.display().to_string()]);
    let out = command().args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let figures = server.figures();
    eprintln!("four shards: served {}, refused {}", figures.served, figures.refused);
    assert_eq!(figures.served, model_calls());

    let server = QuotaServer::start(Style::OpenAi, CAPACITY, RATE, suite);
    let whole = dir.path().join("whole");
    let out = sweep_command(Style::OpenAi, &server.fake.url, &whole).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let merged = read(&merged);
    assert_no_run_lost(&merged, 54);
    assert_eq!(comparable_json(merged), comparable_json(read(&result_files(&whole)[0])));
}
