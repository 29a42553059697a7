//! Sweep throughput and harness overhead, against an instant in-process
//! model (no network, no waiting): it lists eval-scratch/, reads the first
//! note, and answers. What is measured is therefore the harness alone: vault
//! preparation, tool execution, scoring, transcripts and saved cells.
//!
//! Run: `cargo bench --bench sweep` (59 tasks x k=5; `-- --runs N` for more
//! repetitions). Uses the upstream suite when ../shared/upstream is present,
//! else a generated suite of the same size.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vaultbench::format::result::RunId;
use vaultbench::pricing::Pricing;
use vaultbench::provider::{
    BoxFuture, ChatRequest, Message, Model, ModelError, ModelReply, ModelSource, Shared, ToolCall, Usage,
};
use vaultbench::suite::Suite;
use vaultbench::sweep::progress::Quiet;
use vaultbench::sweep::{Manifest, Store, Sweep};
use vaultbench::vault::{LoopDetector, Toolbox, Vault};

struct Instant_;

impl Model for Instant_ {
    fn provider(&self) -> &str {
        "bench"
    }
    fn model_id(&self) -> &str {
        "instant"
    }
    fn reports_cache(&self) -> bool {
        false
    }
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        let turn = request.messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
        let call = |name: &str, args: Value| ToolCall {
            id: format!("b{turn}"),
            name: name.into(),
            arguments: args,
            malformed: None,
        };
        let first_file = || {
            request.messages.iter().find_map(|m| match m {
                Message::ToolResult { content, .. } => content["data"]["entries"]
                    .as_array()
                    .and_then(|e| e.iter().filter_map(Value::as_str).find(|p| !p.ends_with('/')).map(str::to_string)),
                _ => None,
            })
        };
        let (text, tool_calls) = match turn {
            0 => (String::new(), vec![call("list_files", json!({"path": "eval-scratch"}))]),
            1 => match first_file() {
                Some(path) => (String::new(), vec![call("read_file", json!({"path": path}))]),
                None => ("nothing to read".to_string(), vec![]),
            },
            _ => ("Here is what the note says.".to_string(), vec![]),
        };
        Box::pin(async move { Ok(ModelReply { text, tool_calls, usage: Usage::default(), raw: None }) })
    }
}

fn generated_suite(dir: &Path) -> PathBuf {
    let root = dir.join("suite");
    for i in 0..59 {
        let fixture = root.join(format!("fixtures/f{i}"));
        std::fs::create_dir_all(&fixture).unwrap();
        for j in 0..5 {
            std::fs::write(
                fixture.join(format!("note-{j}.md")),
                format!("# Note {j}\n\n{}\n", "Some text. ".repeat(80)),
            )
            .unwrap();
        }
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::write(
            root.join(format!("tasks/t{i:02}.json")),
            format!(
                r#"{{"id": "t{i:02}", "description": "d", "userMessage": "Summarize a note.", "difficulty": "T2",
                "category": "retrieval", "fixture": "f{i}", "expectedTools": ["read_file"],
                "outputMatchers": [{{"type": "contains", "value": "note"}}],
                "vaultAssertions": [{{"type": "fileUnchanged", "path": "eval-scratch/note-0.md", "fixture": "note-0.md"}}]}}"#
            ),
        )
        .unwrap();
    }
    root
}

fn sweep_once(suite: &Suite, k: u32, jobs: usize, rt: &tokio::runtime::Runtime) -> (Duration, u64, u64) {
    let results = tempfile::tempdir().unwrap();
    let run_id = RunId(format!("bench-{jobs}"));
    let source: Arc<dyn ModelSource> = Arc::new(Shared(Arc::new(Instant_)));
    let sweep = Arc::new(Sweep {
        manifest: Manifest {
            run_id: run_id.clone(),
            git_sha: "bench".into(),
            provider: "bench".into(),
            model: "instant".into(),
            suite: suite.root.clone(),
            references: PathBuf::new(),
            repeat: k,
            task_filter: None,
            shard: None,
            allow_unpriced: false,
            max_output_tokens: None,
            tasks: suite.tasks.iter().map(|t| t.id.clone()).collect(),
            content_hashes: Default::default(),
            fixture_hashes: Default::default(),
            offline_judge: false,
        },
        store: Store::new(results.path(), &run_id),
        tasks: suite.tasks.clone(),
        suite_root: suite.root.clone(),
        source,
        judge: None,
        pricing: Pricing::Free,
        toolbox: Toolbox::standard(),
        scratch: Arc::new(vaultbench::sweep::Scratch::create().unwrap()),
        keep_artifacts: false,
        cell_delay: Duration::ZERO,
        limits: vaultbench::limits::Limits::default(),
    });
    let start = Instant::now();
    let outcome = rt.block_on(sweep.execute(jobs, std::future::pending(), &Quiet)).unwrap();
    let elapsed = start.elapsed();
    let runs = outcome.result.aggregate.total_runs;
    assert_eq!(runs as usize, suite.tasks.len() * k as usize);
    let tool_calls: u64 =
        outcome.result.tasks.iter().flat_map(|t| &t.runs).map(|r| u64::from(r.metrics.tool_calls)).sum();
    (elapsed, u64::from(runs), tool_calls)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Mean time of one tool call through the dispatcher (loop detection, path
/// checks, the file operation, the JSON answer) on a fixture-sized vault.
fn per_call_overhead(fixture: &Path) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("eval-scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut first = None;
    for e in std::fs::read_dir(fixture).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), scratch.join(e.file_name())).unwrap();
            first.get_or_insert(format!("eval-scratch/{}", e.file_name().to_string_lossy()));
        }
    }
    let vault = Vault::open(dir.path()).unwrap();
    let tools = Toolbox::standard();
    let time = |name: &str, args: Value| {
        let n = 2000;
        let start = Instant::now();
        for _ in 0..n {
            // A fresh detector per call: identical calls would be refused as a loop.
            let a = tools.dispatch(&vault, &mut LoopDetector::default(), name, &args, None);
            assert!(a.is_success(), "{}", a.content);
        }
        start.elapsed().as_secs_f64() * 1e6 / n as f64
    };
    let list = time("list_files", json!({"path": "eval-scratch"}));
    let read = time("read_file", json!({"path": first.unwrap()}));
    (list, read)
}

fn main() {
    // Regex work in worker processes, as the command line does it.
    vaultbench::score::sandbox::use_worker_process(env!("CARGO_BIN_EXE_vaultbench").into());
    let args: Vec<String> = std::env::args().collect();
    let runs: usize =
        args.iter().position(|a| a == "--runs").and_then(|i| args.get(i + 1)).and_then(|n| n.parse().ok()).unwrap_or(5);
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/upstream");
    let (root, label) = if upstream.join("tasks").is_dir() {
        (upstream.clone(), "upstream suite")
    } else {
        (generated_suite(tmp.path()), "generated suite")
    };
    let suite = Suite::load(&root).unwrap_or_else(|e| panic!("{e}"));
    let k = 5;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!(
        "sweep: {} tasks x k={k} = {} runs ({label}), instant in-process model, {} CPUs, median of {runs}",
        suite.tasks.len(),
        suite.tasks.len() * k as usize,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut medians = Vec::new();
    for jobs in [1, 8] {
        sweep_once(&suite, k, jobs, &rt); // warm the page cache
        let mut times = Vec::new();
        let mut per_call = Vec::new();
        let mut tool_calls = 0;
        for _ in 0..runs {
            let (t, _runs, calls) = sweep_once(&suite, k, jobs, &rt);
            times.push(t.as_secs_f64());
            per_call.push(t.as_secs_f64() * 1e3 / calls as f64);
            tool_calls = calls;
        }
        let m = median(times.clone());
        println!(
            "  --jobs {jobs}: median {:.3} s (min {:.3}, max {:.3}); {tool_calls} tool calls; {:.3} ms of sweep wall time per tool call",
            m,
            times.iter().copied().fold(f64::INFINITY, f64::min),
            times.iter().copied().fold(0.0, f64::max),
            median(per_call)
        );
        medians.push(m);
    }
    println!("  speed-up of --jobs 8 over --jobs 1: {:.2}x", medians[0] / medians[1]);
    let fixture = suite.root.join("fixtures").join(suite.tasks.iter().find_map(|t| t.fixture.clone()).unwrap());
    let (list, read) = per_call_overhead(&fixture);
    println!("  one tool call through the dispatcher: list_files {list:.1} us, read_file {read:.1} us");
}
