//! Sweeps under a quota: the real binary against loopback quota servers
//! (a token bucket of 4 requests refilled at 20 a second, replaying the
//! reference trajectories; see tests/providers/quota_server.rs), OpenAI
//! style (429 + Retry-After + x-ratelimit headers) and Gemini style (429 +
//! RetryInfo, no headers), with the quota unknown to vaultbench, and as a
//! peer the same sweep told the quota's rate (`--rpm`, 60 times the refill rate).
//!
//! Reported per case, median of the repetitions: requests refused as a
//! share of those served, and the wall time of the requests (first request
//! to last served) against the quota's bound, `(served - 4) / 20` s.
//!
//! Run: `cargo bench --bench quota` (`-- --runs N` for more repetitions;
//! 5 by default; each sweep is 54 runs, 180 model calls; `-- --rate R` for a
//! bucket refilled at R requests a second instead of 20: `--rate 1` is a
//! quota of one request a second, the sweep then takes three minutes).

#[path = "../tests/providers/fake.rs"]
mod fake;
#[path = "../tests/providers/quota_server.rs"]
mod quota_server;
#[path = "../tests/providers/replay.rs"]
mod replay;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use quota_server::{QuotaServer, Style};

const CAPACITY: f64 = 4.0;
const RATE: f64 = 20.0;

/// One sweep: (refused per served, wall over bound).
fn sweep(style: Style, configured: bool, rate: f64, suite: &Arc<replay::Suite>) -> (f64, f64) {
    let server = QuotaServer::start(style, CAPACITY, rate, suite.clone());
    let results = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vaultbench"));
    for var in ["GEMINI_API_KEY", "OPENAI_API_KEY", "EVAL_JUDGE_API_KEY", "EVAL_JUDGE_PROVIDER", "EVAL_JUDGE_BASE_URL"]
    {
        cmd.env_remove(var);
    }
    match style {
        Style::OpenAi => {
            cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.fake.url));
            cmd.args(["run", "--provider", "openai", "--model", "bench"]);
        }
        Style::Gemini => {
            cmd.env("GEMINI_BASE_URL", &server.fake.url).env("GEMINI_API_KEY", "bench-key-0123456789abcdef");
            cmd.args(["run", "--provider", "gemini", "--model", "gemini-bench", "--allow-unpriced"]);
        }
    }
    if configured {
        cmd.args(["--rpm", &(rate * 60.0).to_string()]);
    }
    let out = cmd
        .args(["--task", "ferry-", "--repeat", "6", "--jobs", "8"])
        .arg("--suite")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("evals"))
        .arg("--results")
        .arg(results.path())
        .arg("--baselines")
        .arg(results.path().join("none"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let f = server.figures();
    assert_eq!(f.served, 180, "every model call served");
    (f.refused as f64 / f.served as f64, f.span().as_secs_f64() / server.bound().as_secs_f64())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
    let runs: usize = flag("--runs").and_then(|n| n.parse().ok()).unwrap_or(5);
    let rate: f64 = flag("--rate").and_then(|n| n.parse().ok()).filter(|r: &f64| *r > 0.0).unwrap_or(RATE);
    let suite = Arc::new(replay::project_suite());
    println!(
        "quota: 9 tasks x k=6 = 54 runs, 180 model calls, --jobs 8, bucket of {CAPACITY} refilled at {rate}/s; \
         median of {runs} ({} CPUs)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for (name, style, configured) in [
        ("OpenAI style, quota learned", Style::OpenAi, false),
        ("Gemini style, quota learned", Style::Gemini, false),
        ("Gemini style, told the rate (peer)", Style::Gemini, true),
    ] {
        let (mut refused, mut ratio) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let (r, w) = sweep(style, configured, rate, &suite);
            refused.push(r);
            ratio.push(w);
        }
        println!(
            "  {name:<34} refused {:>5.1}% of served (max {:>5.1}%), wall {:.3}x the quota's bound (max {:.3}x)",
            100.0 * median(refused.clone()),
            100.0 * refused.iter().copied().fold(0.0, f64::max),
            median(ratio.clone()),
            ratio.iter().copied().fold(0.0, f64::max)
        );
    }
}
