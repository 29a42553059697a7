//! What the history of the blessings costs `vaultbench publish`. Builds a
//! git repository in a temporary folder: our docs and MODELS baselines
//! (default 200) of realistic size (54 tasks, 5 runs, a response of about
//! 1 KB per run), each blessed BLESSINGS times (default 20), one commit per
//! round of blessings, packed as a clone has it, with runs that come and go
//! and two tasks edited halfway. Then, medians of RUNS (default 3) runs:
//!
//! 1. `publish` of the same files outside any repository (no history), and
//!    of the repository with the history cache warm (the usual build: the
//!    versions and steps seen before are not read or judged again) and cold
//!    (every version read from git, parsed and judged): the differences
//!    are the time the history adds;
//! 2. `vaultbench history --json`, cold and warm;
//! 3. `--watch`: a rebuild after a docs page changed (the history is not
//!    read again: checked, not assumed) and after a baseline changed.
//!
//! Not a test; nothing here is committed output. Run with
//! `cargo bench --bench history` (MODELS=20 BLESSINGS=5 for a quick look).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/publish_support/mod.rs"]
mod publish_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use vaultbench::format::Tier;
use vaultbench::format::result::{ResultFile, TaskResult};
use vaultbench::publish::{ChangeKind, PublishOptions, Site};
use vaultbench::report::aggregate;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The tiers of the reference suite's 54 tasks.
const TIERS: [(Tier, usize); 4] = [(Tier::T1, 3), (Tier::T2, 13), (Tier::T3, 29), (Tier::T4, 9)];

/// Model `m`'s result at blessing `b`: each task solved in each run with a
/// chance of its own (fixed per model and task), so tasks drift, flake and
/// recover from one blessing to the next as real ones do.
fn result(m: usize, b: usize) -> ResultFile {
    let mut rng = fastrand::Rng::with_seed((m * 1000 + b) as u64);
    let mut chance = fastrand::Rng::with_seed(m as u64);
    let response = "The note says the apple harvest was 940 kg this quarter. ".repeat(18);
    let mut tasks: Vec<TaskResult> = Vec::new();
    for (tier, count) in TIERS {
        for i in 0..count {
            let id = format!("{}-task-{i:02}", tier.as_str().to_lowercase());
            let p = [1.0, 1.0, 1.0, 0.97, 0.9, 0.6, 0.0][chance.usize(..7)];
            let runs = (0..5)
                .map(|n| {
                    let mut r = common::run_record(&id, true, rng.f64() < p);
                    r.response_text = response.clone();
                    r.transcript_path = format!("evals/results/run/{id}-{}.json", n + 1);
                    r
                })
                .collect();
            let edited = i < 2 && tier == Tier::T3 && b >= 10;
            tasks.push(TaskResult {
                content_hash: Some(format!("sha256:{id}-{}", if edited { 2 } else { 1 })),
                ..aggregate::task_result(id, Some(tier), Some("retrieval".into()), runs)
            });
        }
    }
    let run_id = format!("2026-{:02}-{:02}T10:00:00.000Z", 1 + b / 28, 1 + b % 28);
    common::result_file("gemini", &format!("model-{m:03}"), &run_id, &format!("{:07x}", 0xabc0000 + b), tasks)
}

fn git(dir: &Path, args: &[&str], date: &str) {
    let out = Command::new("git")
        .args(["-c", "user.name=bench", "-c", "user.email=bench@example.org", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_AUTHOR_DATE", date)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// Median wall time of `vaultbench ARGS` in `dir` after one run to warm up,
/// the caches in `cache`; with `cold`, the history's cache is removed
/// before each run (the highlighted code blocks' stays).
fn time(dir: &Path, args: &[&str], cache: &Path, cold: bool, runs: usize) -> Duration {
    let once = || {
        if cold {
            let _ = std::fs::remove_file(cache.join("history.json"));
        }
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_vaultbench"))
            .args(args)
            .current_dir(dir)
            .env("VAULTBENCH_CACHE_DIR", cache)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        start.elapsed()
    };
    once();
    median((0..runs).map(|_| once()).collect())
}

fn options(dir: &Path) -> PublishOptions {
    PublishOptions {
        docs: dir.join("docs"),
        baselines: dir.join("evals/baselines"),
        suite: dir.join("none"),
        out: dir.join("site"),
        templates: dir.join("templates"),
        config: dir.join("vaultbench.toml"),
        ..PublishOptions::default()
    }
}

fn main() {
    let (models, blessings, runs) = (env("MODELS", 200), env("BLESSINGS", 20), env("RUNS", 3));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("repo");
    let baselines = repo.join("evals/baselines");
    std::fs::create_dir_all(&baselines).unwrap();
    publish_support::copy_dir(&root.join("docs"), &repo.join("docs"));
    git(&repo, &["init", "-q", "-b", "main"], "2026-01-01T00:00:00Z");
    let start = Instant::now();
    for b in 0..blessings {
        for m in 0..models {
            vaultbench::report::write_result(&baselines.join(format!("gemini-model-{m:03}.json")), &result(m, b))
                .unwrap();
        }
        let date = format!("2026-{:02}-{:02}T12:00:00Z", 1 + b / 28, 1 + b % 28);
        git(&repo, &["add", "-A"], &date);
        git(&repo, &["commit", "-q", "-m", &format!("bless round {}", b + 1)], &date);
    }
    // As a clone has it: packed, the versions stored as deltas.
    git(&repo, &["gc", "-q"], "2026-12-31T00:00:00Z");
    let size: u64 = walkdir::WalkDir::new(&baselines)
        .into_iter()
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    println!(
        "repository: {models} baselines x {blessings} blessings ({} versions; {} MB of baselines in the working \
         tree) made in {:.0} s; {} cores",
        models * blessings,
        size >> 20,
        start.elapsed().as_secs_f64(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    // The same files outside any repository: nothing to read from git.
    let plain = work.path().join("plain");
    publish_support::copy_dir(&repo.join("docs"), &plain.join("docs"));
    publish_support::copy_dir(&baselines, &plain.join("evals/baselines"));

    let cache = work.path().join("cache");
    let publish = ["publish", "--suite", "none", "--out", "site"];
    let without = time(&plain, &publish, &cache, false, runs);
    let warm = time(&repo, &publish, &cache, false, runs);
    let cold = time(&repo, &publish, &cache, true, runs);
    println!("publish, the baselines outside git (no history):         {}", ms(without));
    println!(
        "publish, {models} baselines x {blessings} blessings, cache warm:   {} (+{})",
        ms(warm),
        ms(warm.saturating_sub(without))
    );
    println!(
        "publish, {models} baselines x {blessings} blessings, cache cold:   {} (+{})",
        ms(cold),
        ms(cold.saturating_sub(without))
    );
    let history = ["history", "--json"];
    println!(
        "vaultbench history --json, cache warm:                   {}",
        ms(time(&repo, &history, &cache, false, runs))
    );
    println!(
        "vaultbench history --json, cache cold:                   {}",
        ms(time(&repo, &history, &cache, true, runs))
    );

    // --watch: the same stages a rebuild runs, with the pages kept between
    // builds, in this process (its history cache in memory, as a watch has it).
    vaultbench::history::keep_cache_in_memory();
    let options = options(&repo);
    let out = options.output_dir().unwrap();
    let mut site = Site::load(options).unwrap();
    site.keep_pages();
    site.build_into(&out, None, false).unwrap();
    let history = Arc::clone(site.history());
    let page = repo.join("docs/index.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let rebuild = |site: &mut Site, kind: ChangeKind, n: usize| {
        if kind == ChangeKind::Content {
            std::fs::write(&page, format!("{text}\n\nEdit {n}.\n")).unwrap();
        } else {
            let file = baselines.join("gemini-model-000.json");
            vaultbench::report::write_result(&file, &result(0, blessings + n)).unwrap();
        }
        let start = Instant::now();
        site.reload(kind).unwrap();
        site.build_into(&out, None, false).unwrap();
        start.elapsed()
    };
    let docs: Vec<Duration> = (0..runs).map(|n| rebuild(&mut site, ChangeKind::Content, n)).collect();
    assert!(Arc::ptr_eq(&history, site.history()), "a docs rebuild read the history again");
    println!("--watch rebuild after a docs page changed:                {} (history not read again)", ms(median(docs)));
    let baseline: Vec<Duration> = (0..runs).map(|n| rebuild(&mut site, ChangeKind::Baselines, n)).collect();
    assert!(!Arc::ptr_eq(&history, site.history()));
    println!("--watch rebuild after a baseline changed (history read):  {}", ms(median(baseline)));
}
