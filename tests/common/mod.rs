//! Helpers shared by the integration tests: the upstream compatibility corpus
//! (read in place from ../shared/upstream, never copied) and the CLI binary.

#![allow(dead_code)]

pub mod evidence;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `../shared/upstream`, or `None` (with the reason printed) when absent, so a
/// fresh clone without the corpus still passes its own tests.
pub fn upstream() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/upstream");
    if dir.join("baselines").is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipping: the upstream corpus is not at {} (it is only present in the development workspace)",
            dir.display()
        );
        None
    }
}

pub fn upstream_baselines(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("baselines"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "the corpus has two baselines");
    files
}

/// Model and judge settings a developer's shell may hold; tests never inherit them.
pub const PROVIDER_ENV: &[&str] = &[
    "GEMINI_API_KEY",
    "GEMINI_BASE_URL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "OLLAMA_HOST",
    "EVAL_JUDGE_PROVIDER",
    "EVAL_JUDGE_MODEL",
    "EVAL_JUDGE_API_KEY",
    "EVAL_JUDGE_BASE_URL",
];

/// The real binary, without the caller's provider and judge settings.
pub fn command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vaultbench"));
    // No cache of highlighted code blocks in the user's home: every build starts cold.
    cmd.env("VAULTBENCH_CACHE_DIR", "");
    for var in PROVIDER_ENV {
        cmd.env_remove(var);
    }
    // Tests script their servers request by request; the tests of the
    // warm-up itself turn it back on.
    cmd.env("VAULTBENCH_NO_WARM_UP", "1");
    cmd
}

/// Copy the folder `from` to `to`, with everything under it.
pub fn copy_tree(from: &Path, to: &Path) {
    let mut pending = vec![from.to_path_buf()];
    while let Some(path) = pending.pop() {
        let target = to.join(path.strip_prefix(from).unwrap());
        if path.is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

pub fn vaultbench(args: &[&str], cwd: &Path) -> Output {
    command().args(args).current_dir(cwd).output().expect("the vaultbench binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

use vaultbench::format::Tier;
use vaultbench::format::result::{ResultFile, RunId, RunMetrics, RunRecord, SolveDetails, TaskResult};
use vaultbench::report::aggregate;

/// A run record with plausible metrics; `solved` implies `passed`.
pub fn run_record(task: &str, passed: bool, solved: bool) -> RunRecord {
    RunRecord {
        id: task.to_string(),
        passed,
        solved,
        response_text: format!("answer for {task}"),
        metrics: RunMetrics {
            turns: 3,
            tool_calls: 2,
            prompt_tokens: 1800,
            cached_tokens: None,
            cache_ratio: None,
            output_tokens: 120,
            cost_usd: 0.0,
            loop_fires: 0,
            duration_ms: 1500,
            tool_list: vec!["list_files".into(), "read_file".into()],
        },
        errors: vec![],
        solve_details: SolveDetails {
            expected_tools_met: true,
            forbidden_tools_clean: true,
            matchers_pass: solved,
            matcher_details: vec![],
            judge_attempted: false,
            judge_available: false,
            judge_skipped: false,
            vault_assertions_pass: true,
            vault_assertion_details: vec![],
            tool_budget_ok: true,
        },
        timed_out: None,
        end_reason: None,
        transcript_path: String::new(),
    }
}

/// A consistent result file: one task per entry, one run per verdict.
pub fn sample_result(provider: &str, model: &str, tasks: &[(&str, &[bool])]) -> ResultFile {
    let tasks: Vec<_> = tasks
        .iter()
        .map(|(id, solved)| {
            let runs = solved.iter().map(|&s| run_record(id, true, s)).collect();
            aggregate::task_result(id.to_string(), Some(Tier::T2), Some("retrieval".into()), runs)
        })
        .collect();
    result_file(provider, model, "2026-11-20T10:00:00.000Z", "0123abc", tasks)
}

/// A whole result of `tasks`, its figures computed from their runs.
pub fn result_file(provider: &str, model: &str, run_id: &str, git_sha: &str, tasks: Vec<TaskResult>) -> ResultFile {
    ResultFile {
        run_id: RunId(run_id.into()),
        git_sha: git_sha.into(),
        model: model.into(),
        provider: provider.into(),
        interrupted: false,
        shard: None,
        task_filter: None,
        offline_judge: false,
        shard_run_ids: Vec::new(),
        aggregate: aggregate::aggregate(&tasks),
        tasks,
    }
}

pub fn write_result(path: &Path, result: &ResultFile) {
    vaultbench::report::write_result(path, result).unwrap();
}

/// Mark `runs` of task `t` as scored without a judge: a judge matcher that
/// failed as skipped, next to a contains matcher with the given verdict.
pub fn skip_judge(r: &mut ResultFile, t: usize, runs: &[usize], contains_holds: bool) {
    use vaultbench::format::OneOrMany;
    use vaultbench::format::result::MatcherDetail;
    for &i in runs {
        let d = &mut r.tasks[t].runs[i].solve_details;
        d.judge_attempted = true;
        d.judge_skipped = true;
        d.matchers_pass = false;
        d.matcher_details = vec![
            MatcherDetail::Contains { value: OneOrMany::One("x".into()), verdict: contains_holds, error: None },
            MatcherDetail::Judge { criteria: "c".into(), verdict: false, error: Some("no judge available".into()) },
        ];
    }
}

/// Every document of a YAML file, as JSON (mappings' keys as strings).
pub fn yaml_documents(path: &Path) -> Vec<serde_json::Value> {
    use saphyr::{LoadableYamlNode, Scalar, Yaml};
    use serde_json::{Value, json};
    fn to_json(node: &Yaml) -> Value {
        match node {
            Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
            Yaml::Value(Scalar::Integer(i)) => json!(i),
            Yaml::Value(Scalar::FloatingPoint(f)) => json!(f.into_inner()),
            Yaml::Value(Scalar::Boolean(b)) => json!(b),
            Yaml::Value(Scalar::Null) => Value::Null,
            Yaml::Representation(text, _, _) => Value::String(text.to_string()),
            Yaml::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
            Yaml::Mapping(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let key = match to_json(k) {
                            Value::String(s) => s,
                            other => other.to_string(),
                        };
                        (key, to_json(v))
                    })
                    .collect(),
            ),
            Yaml::Tagged(_, inner) => to_json(inner),
            other => panic!("unexpected YAML node {other:?}"),
        }
    }
    let text = std::fs::read_to_string(path).unwrap();
    Yaml::load_from_str(&text).unwrap().iter().map(to_json).collect()
}

/// The `.json` files directly in `dir` (none when it does not exist), sorted.
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// A result as JSON without what legitimately differs between two sweeps of
/// the same runs: ids, commit, durations, transcript paths, shard marks.
pub fn comparable_json(mut v: serde_json::Value) -> serde_json::Value {
    for key in ["run_id", "shard", "shard_run_ids", "git_sha"] {
        v.as_object_mut().unwrap().remove(key);
    }
    for t in v["tasks"].as_array_mut().unwrap() {
        t["metrics"].as_object_mut().unwrap().remove("duration_ms");
        for run in t["runs"].as_array_mut().unwrap() {
            run["metrics"].as_object_mut().unwrap().remove("duration_ms");
            run.as_object_mut().unwrap().remove("transcript_path");
        }
    }
    v
}

/// A suite under `root` of one-step tasks on the `orchard` fixture (read a
/// note, report the figure), their user messages telling them apart, each
/// with a reference trajectory that solves it; no judge matcher, so a sweep
/// of it blesses. Also an empty `baselines/`.
pub fn orchard_suite(root: &Path, ids: &[&str]) {
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("fixtures/orchard/notes.md", "The apple harvest was 940 kg this quarter.\n");
    for id in ids {
        write(
            &format!("tasks/{id}.json"),
            &format!(
                r#"{{"id": "{id}", "description": "read one note", "userMessage": "({id}) What was the apple harvest? Read eval-scratch/notes.md.",
                "difficulty": "T2", "category": "retrieval", "fixture": "orchard", "expectedTools": ["read_file"],
                "outputMatchers": [{{"type": "contains", "value": "940 kg"}}], "toolCallBudget": 3, "maxTurns": 5, "timeoutMs": 20000}}"#
            ),
        );
        write(
            &format!("references/{id}.json"),
            r#"{"steps": [{"tool": "read_file", "args": {"path": "eval-scratch/notes.md"}}], "answer": "The harvest was 940 kg."}"#,
        );
    }
    std::fs::create_dir_all(root.join("baselines")).unwrap();
}
