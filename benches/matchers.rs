//! What a long, hostile answer costs our suite's regular expressions (output
//! matchers and `fileMatches` assertions). A pattern that backtracks
//! super-linearly turns a long model reply into a stalled scorer, so this
//! measures every task's patterns on texts of growing size and reports how
//! the cost scales: about 4x from one size to the next is linear.
//!
//! The texts, per task: its fixture's notes concatenated and repeated (what
//! the dump adversary answers), its reference answer repeated, and text
//! without sentence or line breaks.
//!
//! Run: `cargo bench --bench matchers` (`-- --suite DIR`, `-- --runs N`,
//! `-- --all` to list every task, not only the five slowest, so that two
//! versions of the suite can be compared task by task).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vaultbench::format::task::{Matcher, Task, VaultAssertion};
use vaultbench::score::jsregex::JsRegex;
use vaultbench::suite::Suite;

const SIZES: [usize; 3] = [8_000, 32_000, 128_000];

fn patterns(task: &Task) -> Vec<JsRegex> {
    let mut out = Vec::new();
    let mut add = |values: &[String], flags: Option<&str>| {
        out.extend(values.iter().filter_map(|v| JsRegex::new(v, flags).ok()));
    };
    for m in &task.output_matchers {
        if let Matcher::Regex { value, flags } = m {
            add(value.as_slice(), flags.as_deref());
        }
    }
    for a in &task.vault_assertions {
        if let VaultAssertion::FileMatches { value, flags, .. } = a {
            add(value.as_slice(), flags.as_deref());
        }
    }
    out
}

fn fixture_text(suite: &Path, task: &Task) -> String {
    let Some(name) = &task.fixture else { return String::new() };
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(suite.join("fixtures").join(name))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files.iter().filter_map(|f| std::fs::read_to_string(f).ok()).collect::<Vec<_>>().join("\n")
}

fn repeat_to(seed: &str, size: usize) -> String {
    let seed = if seed.is_empty() { "x " } else { seed };
    let mut s = seed.repeat(size / seed.len() + 1);
    let mut cut = size;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

/// Seconds to test every pattern of the task against every hostile text of `size`.
fn cost(suite: &Path, task: &Task, regexes: &[JsRegex], size: usize) -> f64 {
    let reference = std::fs::read_to_string(suite.join("references").join(format!("{}.json", task.id)))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["answer"].as_str().map(str::to_string))
        .unwrap_or_default();
    let texts = [
        repeat_to(&fixture_text(suite, task), size),
        repeat_to(&format!("{reference}\n"), size),
        repeat_to(&format!("{} 3 ", task.id), size),
    ];
    let start = Instant::now();
    for text in &texts {
        for re in regexes {
            std::hint::black_box(re.test(text));
        }
    }
    start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let root = PathBuf::from(arg("--suite").unwrap_or_else(|| "evals".into()));
    let runs: usize = arg("--runs").and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    let shown = if args.iter().any(|a| a == "--all") { usize::MAX } else { 5 };
    let suite = Suite::load(&root).unwrap_or_else(|e| panic!("loading {}: {e}", root.display()));
    println!("{} tasks in {}, median of {runs} runs per task and size", suite.tasks.len(), root.display());
    let mut table: Vec<(String, Vec<f64>)> = Vec::new();
    let started = Instant::now();
    for task in &suite.tasks {
        let regexes = patterns(task);
        let per_size =
            SIZES.iter().map(|&n| median((0..runs).map(|_| cost(&root, task, &regexes, n)).collect())).collect();
        table.push((task.id.clone(), per_size));
    }
    for (i, size) in SIZES.iter().enumerate() {
        let all: Vec<f64> = table.iter().map(|(_, t)| t[i]).collect();
        let total: f64 = all.iter().sum();
        println!(
            "{:>7} bytes: median {:>8.3} ms per task, worst {:>8.3} ms, all tasks {:>8.1} ms",
            size,
            median(all.clone()) * 1e3,
            all.iter().copied().fold(0.0, f64::max) * 1e3,
            total * 1e3
        );
    }
    table.sort_by(|a, b| b.1[2].total_cmp(&a.1[2]));
    println!("slowest at {} bytes (growth from {} bytes; ~4x is linear):", SIZES[2], SIZES[1]);
    for (id, t) in table.iter().take(shown) {
        println!("  {id:<40} {:>8.3} ms  x{:.1}", t[2] * 1e3, t[2] / t[1].max(1e-9));
    }
    println!("in {:.1?}", Duration::from_secs_f64(started.elapsed().as_secs_f64()));
}
