//! Hostile tasks and models through the real binary: what a task file, a
//! seeded note or a model's tool calls can throw at a sweep must end as a
//! scored run or a clear error, never an abort, a hang or a leftover vault.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};
use vaultbench::format::result::ResultFile;
use vaultbench::report;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A task of fixture `f` whose reference takes `steps` and answers `answer`;
/// `extra` overrides task fields.
fn add_task(evals: &Path, id: &str, extra: Value, steps: Value, answer: &str) {
    let mut task = json!({
        "id": id,
        "description": "hostile input",
        "userMessage": "Do the thing.",
        "difficulty": "T1",
        "category": "retrieval",
        "fixture": "f",
        "expectedTools": [],
        "outputMatchers": [{"type": "contains", "value": "done"}],
        "maxTurns": 4,
        "timeoutMs": 3000
    });
    for (k, v) in extra.as_object().unwrap() {
        task[k] = v.clone();
    }
    write(evals, &format!("tasks/{id}.json"), &serde_json::to_string_pretty(&task).unwrap());
    write(evals, &format!("references/{id}.json"), &json!({"steps": steps, "answer": answer}).to_string());
}

/// Frontmatter nested 2000 levels deep in 4 KB (`- - - x`): it overflowed a
/// worker thread's stack and aborted the process.
fn deep_note() -> String {
    format!("---\nk:\n  {}x\n---\nbody\n", "- ".repeat(2000))
}

/// Run a reference sweep of `dir/evals` with a private TMPDIR; returns the
/// output and that TMPDIR (to look for leftover vaults).
fn sweep(dir: &Path) -> (std::process::Output, PathBuf) {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = command()
        .args(["run", "--provider", "reference", "--suite", "evals", "--results", "results"])
        .env("TMPDIR", &tmp)
        .current_dir(dir)
        .output()
        .unwrap();
    (out, tmp)
}

fn result(dir: &Path) -> ResultFile {
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    report::load_result(&files[0]).unwrap()
}

fn transcript(dir: &Path, r: &ResultFile, task: usize) -> Value {
    let path = dir.join(&r.tasks[task].runs[0].transcript_path);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn deep_frontmatter_anywhere_in_a_sweep_is_scored_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let evals = dir.path().join("evals");
    write(&evals, "fixtures/f/deep.md", &deep_note());
    add_task(
        &evals,
        "update",
        json!({"vaultAssertions": [{"type": "frontmatterEquals", "path": "eval-scratch/deep.md", "key": "k", "value": 1}]}),
        json!([{"tool": "update_frontmatter", "args": {"path": "eval-scratch/deep.md", "key": "k", "value": 1}}]),
        "done",
    );
    add_task(
        &evals,
        "session",
        json!({"setup": [{"path": "gemini-scribe/Agent-Sessions/deep.md", "from": "f/deep.md"}]}),
        json!([{"tool": "recall_sessions", "args": {}}]),
        "done",
    );
    add_task(
        &evals,
        "skill",
        json!({"setup": [{"path": "gemini-scribe/Skills/deep/SKILL.md", "from": "f/deep.md"}]}),
        json!([{"tool": "activate_skill", "args": {"name": "deep"}}]),
        "done",
    );
    let (out, tmp) = sweep(dir.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let r = result(dir.path());
    assert_eq!(r.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["session", "skill", "update"]);
    assert!(r.tasks.iter().all(|t| t.runs[0].passed && t.runs[0].errors.is_empty()));
    // The edit was refused with the reason, and the assertion failed with it.
    let update = &r.tasks[2].runs[0];
    assert!(!update.solved);
    let reason = &update.solve_details.vault_assertion_details[0].reason;
    assert!(reason.contains("nested deeper than 64 levels"), "{reason}");
    let t = transcript(dir.path(), &r, 2);
    let call = t["events"].as_array().unwrap().iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(call["success"], false);
    assert!(call["result"]["error"].as_str().unwrap().contains("nested deeper"), "{call}");
    // Sessions and skills with unreadable frontmatter are still listed, by name.
    assert!(r.tasks[0].runs[0].solved && r.tasks[1].runs[0].solved);
    let t = transcript(dir.path(), &r, 1);
    assert!(t["system_prompt"].as_str().unwrap().contains("- deep: (no description)"));
    assert_eq!(leftovers(&tmp), Vec::<String>::new(), "no temporary vault is left");
}

#[test]
fn a_docs_page_with_deep_frontmatter_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "docs/index.md", "# Home\n");
    // 50,000 levels overflowed even the main thread's stack.
    write(dir.path(), "docs/deep.md", &format!("---\nk:\n  {}x\n---\nbody\n", "- ".repeat(50_000)));
    std::fs::create_dir_all(dir.path().join("baselines")).unwrap();
    let out = vaultbench(&["publish", "--docs", "docs", "--baselines", "baselines", "--out", "site"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("deep.md") && err.contains("nested deeper than 64 levels"), "{err}");
}

/// Catastrophic patterns ((a+)+$, (a|a)*b) on texts no backtracking engine
/// finishes in a lifetime: in a model's search, a task's regex matcher and a
/// fileMatches assertion. Each fails closed with an error naming the
/// pattern, the sweep ends within its deadlines, and `rescore` too.
#[test]
fn catastrophic_patterns_fail_closed_within_the_deadline_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let evals = dir.path().join("evals");
    write(&evals, "fixtures/f/long.md", &format!("{}!\n", "a".repeat(5_000)));
    add_task(
        &evals,
        "search",
        json!({}),
        json!([{"tool": "find_files_by_content", "args": {"query": "(a+)+$", "useRegex": true}}]),
        "done",
    );
    add_task(
        &evals,
        "matcher",
        json!({"outputMatchers": [{"type": "regex", "value": "(a|a)*b"}]}),
        json!([]),
        &"a".repeat(60),
    );
    add_task(
        &evals,
        "assertion",
        json!({"vaultAssertions": [{"type": "fileMatches", "path": "eval-scratch/long.md", "value": "^(a+)+$"}]}),
        json!([]),
        "done",
    );
    let started = std::time::Instant::now();
    let (out, tmp) = sweep(dir.path());
    let took = started.elapsed();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    // Three runs in parallel, each with timeoutMs = 3000 and a 1 s regex budget.
    assert!(took < std::time::Duration::from_secs(15), "the sweep took {took:?}");
    let r = result(dir.path());
    let run = |id: &str| r.tasks.iter().find(|t| t.id == id).unwrap().runs[0].clone();

    let search = run("search");
    assert!(search.passed && search.metrics.duration_ms < 4_000, "{:?}", search.metrics.duration_ms);
    let t = transcript(dir.path(), &r, r.tasks.iter().position(|t| t.id == "search").unwrap());
    let call = t["events"].as_array().unwrap().iter().find(|e| e["type"] == "tool_call").unwrap();
    let error = call["result"]["error"].as_str().unwrap();
    assert!(error.contains("/(a+)+$/i did not finish within") && error.contains("eval-scratch/long.md"), "{error}");

    let matcher = run("matcher");
    assert!(matcher.passed && !matcher.solved);
    let json = serde_json::to_value(&matcher.solve_details.matcher_details[0]).unwrap();
    assert_eq!(json["verdict"], false);
    assert!(json["error"].as_str().unwrap().contains("/(a|a)*b/ did not finish within"), "{json}");

    let assertion = run("assertion");
    let reason = &assertion.solve_details.vault_assertion_details[0].reason;
    assert!(!assertion.solved && reason.contains("/^(a+)+$/ did not finish within"), "{reason}");
    assert_eq!(leftovers(&tmp), Vec::<String>::new());

    // Rescoring meets the same pattern and does not hang either: the recorded
    // verdict, changed to a pass, is contradicted with the reason.
    let path = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for task in v["tasks"].as_array_mut().unwrap() {
        if task["id"] == "matcher" {
            task["runs"][0]["solve_details"]["matcher_details"][0]["verdict"] = json!(true);
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let out = vaultbench(&["rescore", path.to_str().unwrap()], dir.path());
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("matcher run 1: regex matcher 1 recorded true but rescores false"), "{text}");
    assert!(text.contains("/(a|a)*b/ did not finish within"), "{text}");
}

/// A model that answers "done" at once, and panics for the task `boom`: a
/// stand-in for a bug of ours inside one run.
struct Panicky {
    boom: bool,
}

impl vaultbench::provider::Model for Panicky {
    fn provider(&self) -> &str {
        "test"
    }
    fn model_id(&self) -> &str {
        "panicky"
    }
    fn reports_cache(&self) -> bool {
        false
    }
    fn chat<'a>(
        &'a self,
        _request: vaultbench::provider::ChatRequest<'a>,
    ) -> vaultbench::provider::BoxFuture<'a, Result<vaultbench::provider::ModelReply, vaultbench::provider::ModelError>>
    {
        Box::pin(async move {
            assert!(!self.boom, "boom!");
            Ok(vaultbench::provider::ModelReply {
                text: "done".into(),
                tool_calls: vec![],
                usage: Default::default(),
                raw: None,
            })
        })
    }
}

struct PanickySource;

impl vaultbench::provider::ModelSource for PanickySource {
    fn provider(&self) -> &str {
        "test"
    }
    fn model_id(&self) -> &str {
        "panicky"
    }
    fn model_for(
        &self,
        task: &vaultbench::format::task::Task,
    ) -> anyhow::Result<std::sync::Arc<dyn vaultbench::provider::Model>> {
        Ok(std::sync::Arc::new(Panicky { boom: task.id == "boom" }))
    }
}

#[test]
fn a_panic_inside_one_run_is_that_runs_harness_error_and_the_sweep_goes_on() {
    use std::sync::Arc;
    use vaultbench::format::result::RunId;
    use vaultbench::sweep::{Manifest, Store, Sweep};

    let dir = tempfile::tempdir().unwrap();
    let evals = dir.path().join("evals");
    write(&evals, "fixtures/f/a.md", "a\n");
    for id in ["boom", "fine"] {
        add_task(&evals, id, json!({}), json!([]), "done");
    }
    let suite = vaultbench::suite::Suite::load(&evals).unwrap();
    let run_id = RunId("2026-01-01T00:00:00.000Z".into());
    let results = dir.path().join("results");
    let sweep = Arc::new(Sweep {
        manifest: Manifest {
            run_id: run_id.clone(),
            git_sha: "test".into(),
            provider: "test".into(),
            model: "panicky".into(),
            suite: evals.clone(),
            references: PathBuf::new(),
            repeat: 2,
            task_filter: None,
            offline_judge: false,
            shard: None,
            allow_unpriced: false,
            max_output_tokens: None,
            tasks: suite.tasks.iter().map(|t| t.id.clone()).collect(),
            content_hashes: Default::default(),
            fixture_hashes: Default::default(),
        },
        store: Store::new(&results, &run_id),
        tasks: suite.tasks.clone(),
        suite_root: suite.root.clone(),
        source: Arc::new(PanickySource),
        judge: None,
        pricing: vaultbench::pricing::Pricing::Free,
        toolbox: vaultbench::vault::Toolbox::standard(),
        limits: vaultbench::limits::Limits::default(),
        scratch: Arc::new(vaultbench::sweep::Scratch::create_in(dir.path()).unwrap()),
        keep_artifacts: false,
        cell_delay: std::time::Duration::ZERO,
    });
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let outcome = rt
        .block_on(sweep.clone().execute(4, std::future::pending(), &vaultbench::sweep::progress::Quiet))
        .expect("the sweep goes on and writes its result");
    let r = report::load_result(&sweep.store.result_path()).unwrap();
    assert_eq!(r, outcome.result);
    assert_eq!(r.aggregate.total_runs, 4);
    let boom = &r.tasks.iter().find(|t| t.id == "boom").unwrap().runs;
    for run in boom {
        assert!(!run.passed);
        assert!(run.errors[0].starts_with("the run crashed (a fault in vaultbench"), "{:?}", run.errors);
        assert!(run.errors[0].contains("boom!"), "{:?}", run.errors);
        assert!(dir.path().join(&run.transcript_path).is_file());
    }
    assert!(r.tasks.iter().find(|t| t.id == "fine").unwrap().runs.iter().all(|run| run.solved));
}

/// A suite of one slow task: five catastrophic searches, each cut at the
/// 1 s regex budget, so its vault exists for about five seconds.
fn slow_suite() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let evals = dir.path().join("evals");
    write(&evals, "fixtures/f/long.md", &format!("{}!\n", "a".repeat(5_000)));
    let steps: Vec<Value> = (1..=5)
        .map(|i| json!({"tool": "find_files_by_content", "args": {"query": format!("(a+)+{}$", "a?".repeat(i)), "useRegex": true}}))
        .collect();
    add_task(&evals, "slow", json!({"timeoutMs": 20000}), json!(steps), "done");
    dir
}

fn spawn_sweep(dir: &Path, tmp: &Path) -> std::process::Child {
    std::fs::create_dir_all(tmp).unwrap();
    command()
        .args(["run", "--provider", "reference", "--suite", "evals", "--results", "results"])
        .env("TMPDIR", tmp)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Wait until a run's vault exists in `tmp`; returns the process folder.
fn wait_for_vault(tmp: &Path) -> PathBuf {
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(30) {
        let folders: Vec<PathBuf> = std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().path()).collect();
        for f in folders {
            if std::fs::read_dir(&f).is_ok_and(|mut d| d.any(|e| e.unwrap().path().join("eval-scratch").is_dir())) {
                return f;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("no vault appeared in {}", tmp.display());
}

#[cfg(unix)]
#[test]
fn sigterm_and_sigint_mid_run_leave_no_temporary_vault() {
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        let dir = slow_suite();
        let tmp = dir.path().join("tmp");
        let mut child = spawn_sweep(dir.path(), &tmp);
        wait_for_vault(&tmp);
        let sent = std::process::Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{signal}");
        assert_eq!(leftovers(&tmp), Vec::<String>::new(), "{signal}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_vaults_of_a_killed_sweep_are_removed_by_the_next_command() {
    let dir = slow_suite();
    let tmp = dir.path().join("tmp");
    let mut child = spawn_sweep(dir.path(), &tmp);
    let left = wait_for_vault(&tmp);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(left.is_dir(), "kill -9 cannot clean up");
    // Someone else's folders are left alone.
    std::fs::create_dir_all(tmp.join("vaultbench-unrelated")).unwrap();
    std::fs::write(tmp.join("vaultbench-file"), "x").unwrap();
    let out = command()
        .args(["suite", "check", "--suite", "evals"])
        .env("TMPDIR", &tmp)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(stderr(&out).contains("Removed 1 temporary folders left by vaultbench processes"), "{}", stderr(&out));
    assert!(!left.exists());
    let mut rest = leftovers(&tmp);
    rest.sort();
    assert_eq!(rest, ["vaultbench-file", "vaultbench-unrelated"]);
}

#[test]
fn run_help_lists_the_limits() {
    let out = vaultbench(&["run", "--help"], Path::new("."));
    let text = stdout(&out);
    assert!(text.contains("Limits on the model's tool calls and the run:"), "{text}");
    for line in ["the whole conversation", "one tool answer fed back to the model", "past timeoutMs to stop and score"]
    {
        assert!(text.contains(line), "{line}: {text}");
    }
}
