//! The soak test: a whole sweep of the project's suite, every task x 5 runs
//! (60 tasks: 300 runs), 16 at a time, by the real binary against a loopback
//! OpenAI-compatible server that replays each task's reference trajectory
//! (a fast model that solves everything) and injects a fault into 10% of its
//! answers, drawn from a seeded generator: 429, 500, a connection broken
//! mid-answer, an answer cut short, an answer slower than the timeout.
//!
//! What must hold: every run is either scored as the trajectory deserves
//! (passed, and solved unless it needs the judge, which is absent) or ends in
//! a harness error naming an injected fault; the result file holds every
//! run; no temporary vault is left behind; the process's peak memory stays
//! under the documented bound.

mod common;
#[path = "providers/fake.rs"]
mod fake;
#[path = "providers/replay.rs"]
mod replay;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::*;
use fake::{Fake, Recorded, Reply, Sending};

const SEED: u64 = 0x005e_ed0f_50a4;
const RUNS_PER_TASK: usize = 5;
const JOBS: &str = "16";
/// One answer in this many carries a fault.
const FAULT_ONE_IN: u64 = 10;
/// The process's peak resident memory may not pass this (docs/limits.md).
const PEAK_RSS_LIMIT_KIB: u64 = 512 * 1024;

/// The faults injected, by name.
const FAULTS: [&str; 5] = ["429", "500", "reset", "truncated", "slow"];

/// What a harness error caused by each fault says.
const FAULT_WORDS: [&str; 5] = [
    "HTTP 429 Too Many Requests",
    "HTTP 500 Internal Server Error",
    "connection broke",
    "ended early",
    "no answer from",
];

/// SplitMix64: a seeded draw for one request.
fn draw(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The fault for this request, if any: drawn from the seed, the request's
/// content and how often that same request came before, so that a run's
/// faults do not depend on how the concurrent runs interleave.
fn fault_for(seen: &Mutex<HashMap<u64, u64>>, request: &Recorded) -> Option<usize> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    request.raw_body.hash(&mut h);
    let content = h.finish();
    let attempt = {
        let mut seen = seen.lock().unwrap();
        let n = seen.entry(content).or_insert(0);
        *n += 1;
        *n
    };
    let r = draw(SEED ^ content ^ attempt.wrapping_mul(0x2545_f491_4f6c_dd1d));
    r.is_multiple_of(FAULT_ONE_IN).then(|| ((r / FAULT_ONE_IN) % FAULTS.len() as u64) as usize)
}

fn with_fault(reply: Reply, fault: usize) -> Reply {
    match FAULTS[fault] {
        "429" => {
            Reply::status(429, r#"{"error":{"message":"rate limited","type":"rate_limit"}}"#).header("retry-after", "0")
        }
        "500" => Reply::status(500, r#"{"error":{"message":"upstream exploded"}}"#),
        "reset" => {
            let half = reply.body.len() / 2;
            reply.sending(Sending::BreakAfter(half))
        }
        "truncated" => {
            let mut cut = reply;
            let half = cut.body.len() / 2;
            cut.body.truncate(half);
            cut
        }
        "slow" => reply.delayed(Duration::from_millis(2500)),
        other => unreachable!("{other}"),
    }
}

/// The peak resident memory of a running process so far (Linux), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[test]
fn three_hundred_runs_through_a_faulty_server() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("skipping: peak memory is read from /proc, which this system lacks");
        return;
    }
    let suite = replay::project_suite();
    let tasks = suite.tasks.len();
    let total_runs = tasks * RUNS_PER_TASK;
    assert!(tasks > 0, "the project's suite has tasks");
    let root = suite.root.clone();
    let judged: HashMap<String, bool> = suite.tasks.iter().map(|(id, _, j)| (id.clone(), *j)).collect();
    let seen = Mutex::new(HashMap::new());
    let injected = Mutex::new([0usize; FAULTS.len()]);
    let answers = Mutex::new(0usize);
    let state = std::sync::Arc::new((suite, seen, injected, answers));
    let server_state = state.clone();
    let fake = Fake::start(move |request, _| {
        let (suite, seen, injected, answers) = &*server_state;
        if request.method != "POST" {
            return Reply::json(json!({ "object": "list", "data": [] }));
        }
        let reply = replay::openai(suite, &request.body);
        *answers.lock().unwrap() += 1;
        match fault_for(seen, request) {
            Some(f) => {
                injected.lock().unwrap()[f] += 1;
                with_fault(reply, f)
            }
            None => reply,
        }
    });

    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let results = dir.path().join("results");
    let started = Instant::now();
    let mut child = command()
        .env("OPENAI_BASE_URL", format!("{}/v1", fake.url))
        .env("TMPDIR", &tmp)
        .env("VAULTBENCH_HTTP_TIMEOUT_S", "2")
        .env("VAULTBENCH_RETRY_BASE_MS", "1")
        // Two attempts per call: a fault repeated on the retry is a harness
        // error, so both outcomes occur.
        .env("VAULTBENCH_RETRY_ATTEMPTS", "2")
        .args(["run", "--provider", "openai", "--model", "soak", "--jobs", JOBS])
        .args(["--repeat", &RUNS_PER_TASK.to_string()])
        .arg("--suite")
        .arg(&root)
        .arg("--results")
        .arg(&results)
        .arg("--baselines")
        .arg(dir.path().join("baselines"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Drain the pipes while polling the peak memory (VmHWM only grows).
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || std::io::read_to_string(&mut out).unwrap());
    let err = std::thread::spawn(move || std::io::read_to_string(&mut err).unwrap());
    let mut peak = 0;
    let status = loop {
        if let Some(kib) = peak_rss_kib(pid) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "the sweep hangs");
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = started.elapsed();
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "{out}\n{err}");
    let (_, _, injected, answers) = &*state;
    let injected = *injected.lock().unwrap();
    eprintln!(
        "soak: {total_runs} runs in {:.1} s, peak RSS {} KiB, {} answers, faults injected {:?}",
        wall.as_secs_f64(),
        peak,
        answers.lock().unwrap(),
        FAULTS.iter().zip(injected).collect::<Vec<_>>()
    );
    assert!(injected.iter().all(|n| *n > 0), "every kind of fault was injected: {injected:?}");

    // The result holds every run, each scored or a harness error.
    let result_path = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a result file");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&result_path).unwrap()).unwrap();
    assert_eq!(result["aggregate"]["total_runs"], total_runs, "{}", result["aggregate"]);
    assert_eq!(result["tasks"].as_array().unwrap().len(), tasks);
    let mut harness_errors = 0;
    for task in result["tasks"].as_array().unwrap() {
        let id = task["id"].as_str().unwrap();
        let runs = task["runs"].as_array().unwrap();
        assert_eq!(runs.len(), RUNS_PER_TASK, "{id}");
        for run in runs {
            let errors = run["errors"].as_array().unwrap();
            if errors.is_empty() {
                assert_eq!(run["passed"], true, "{id}: a run without a harness error passes: {run}");
                if !judged[id] {
                    assert_eq!(run["solved"], true, "{id}: the reference trajectory solves its task: {run}");
                }
            } else {
                harness_errors += 1;
                assert_eq!(run["passed"], false, "{id}: {run}");
                let error = errors[0].as_str().unwrap();
                assert!(FAULT_WORDS.iter().any(|w| error.contains(w)), "{id}: an error no fault explains: {error}");
            }
        }
    }
    eprintln!("soak: {harness_errors} runs ended in a harness error (a fault repeated on the retry)");
    assert!(harness_errors < 30, "{harness_errors} harness errors: far more than two faults in a row explain");

    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "temporary vaults left behind: {left:?}");
    assert!(peak > 0 && peak < PEAK_RSS_LIMIT_KIB, "peak RSS {peak} KiB");
}
