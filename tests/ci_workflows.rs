//! The GitHub Actions workflows (`.github/workflows/`), run here as far as
//! they can run without GitHub:
//!
//! - actionlint passes on every workflow (skipped, with the reason printed,
//!   when actionlint is not installed; `.ci/run` installs it);
//! - the sweep workflow's jobs run step by step as the YAML declares them:
//!   each step that calls `scripts/ci-sweep.sh` runs with the `env:` it
//!   declares (the `${{ }}` expressions filled in from the test's inputs,
//!   matrix and variables; an expression the test does not know fails it),
//!   and `upload-artifact`/`download-artifact` steps move files between the
//!   jobs' workspaces as their `with:` says. So plan -> shard (a matrix of
//!   two models x three shards) -> merge and bless -> apply -> publish runs
//!   exactly the commands the workflow runs, against a loopback server
//!   replaying the reference trajectories over OpenAI's protocol (`bless`
//!   never takes the `reference` provider itself), and the blessed baselines
//!   pass the committed baselines' own check (`common::evidence`);
//! - the docs workflow's publish step builds the site under its Pages path.

mod common;
#[path = "providers/fake.rs"]
mod fake;
#[path = "providers/replay.rs"]
mod replay;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};

use common::*;
use fake::{Fake, Reply};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn workflow(name: &str) -> Value {
    yaml_documents(&repo().join(".github/workflows").join(name)).remove(0)
}

/// A text with every `${{ expr }}` replaced by `vars[expr]`.
fn fill(text: &str, vars: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("a closed expression") + start;
        let expr = rest[start + 3..end].trim();
        let value = vars.get(expr).unwrap_or_else(|| panic!("the test does not know the expression `{expr}`"));
        out.push_str(value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The GitHub runners' workspaces, and the artifact store between jobs.
struct Runner {
    dir: tempfile::TempDir,
    suite: PathBuf,
    jobs: usize,
}

impl Runner {
    fn new() -> Runner {
        let dir = tempfile::tempdir().unwrap();
        let suite = dir.path().join("suite");
        // Tasks without a judge, so that the result blesses.
        orchard_suite(&suite, &["ash", "beech", "cherry", "damson", "elder"]);
        Runner { dir, suite, jobs: 0 }
    }

    fn artifacts(&self) -> PathBuf {
        self.dir.path().join("artifacts")
    }

    /// A fresh checkout: the repository's scripts and docs, the test's suite
    /// as evals/, and the binary where the Build step puts it.
    fn workspace(&mut self) -> PathBuf {
        self.jobs += 1;
        let ws = self.dir.path().join(format!("job-{}", self.jobs));
        std::fs::create_dir_all(ws.join("target/release")).unwrap();
        std::os::unix::fs::symlink(repo().join("scripts"), ws.join("scripts")).unwrap();
        std::os::unix::fs::symlink(repo().join("docs"), ws.join("docs")).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vaultbench"), ws.join("target/release/vaultbench")).unwrap();
        std::fs::copy(repo().join("vaultbench.toml"), ws.join("vaultbench.toml")).unwrap();
        copy_tree(&self.suite, &ws.join("evals"));
        ws
    }

    /// Run the steps of `job` in a fresh workspace; returns it and what the
    /// steps wrote to GITHUB_OUTPUT.
    fn run_job(&mut self, job: &Value, vars: &HashMap<String, String>) -> (PathBuf, String) {
        let ws = self.workspace();
        let output = ws.join("github-output");
        std::fs::write(&output, "").unwrap();
        let mut ran_script = false;
        for step in job["steps"].as_array().unwrap() {
            let with = |key: &str| step["with"][key].as_str().map(|v| fill(v, vars));
            match (step["uses"].as_str(), step["run"].as_str()) {
                (Some(uses), _) if uses.starts_with("actions/upload-artifact@") => {
                    let name = with("name").unwrap();
                    copy_tree(&ws.join(with("path").unwrap()), &self.artifacts().join(&name));
                }
                (Some(uses), _) if uses.starts_with("actions/download-artifact@") => {
                    let pattern = with("pattern").unwrap();
                    let prefix = pattern.strip_suffix('*').expect("patterns end in *");
                    let merge = step["with"]["merge-multiple"] == json!(true);
                    let into = ws.join(with("path").unwrap());
                    for artifact in std::fs::read_dir(self.artifacts()).unwrap().map(|e| e.unwrap().path()) {
                        let name = artifact.file_name().unwrap().to_string_lossy().into_owned();
                        if name.starts_with(prefix) {
                            copy_tree(&artifact, &if merge { into.clone() } else { into.join(&name) });
                        }
                    }
                }
                (_, Some(run)) if run.contains("scripts/ci-sweep.sh") => {
                    if run.contains("pull-request") {
                        continue; // needs GitHub; what it would commit is checked after `apply`
                    }
                    let mut cmd = Command::new("bash");
                    cmd.args(["-eo", "pipefail", "-c", run]).current_dir(&ws);
                    for var in PROVIDER_ENV {
                        cmd.env_remove(var);
                    }
                    cmd.env("GITHUB_OUTPUT", &output);
                    for (k, v) in step["env"].as_object().cloned().unwrap_or_default() {
                        let value = match v {
                            Value::String(s) => fill(&s, vars),
                            other => other.to_string(),
                        };
                        cmd.env(k, value);
                    }
                    let out = cmd.output().unwrap();
                    assert!(out.status.success(), "step `{run}` failed:\n{}\n{}", stdout(&out), stderr(&out));
                    ran_script = true;
                }
                _ => {} // checkout, cache, build: the workspace already has what they give
            }
        }
        assert!(ran_script, "the job runs scripts/ci-sweep.sh");
        (ws.clone(), std::fs::read_to_string(output).unwrap())
    }
}

fn output_value(outputs: &str, key: &str) -> Value {
    let line = outputs.lines().find_map(|l| l.strip_prefix(&format!("{key}="))).unwrap();
    serde_json::from_str(line).unwrap()
}

fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn the_sweep_workflow_runs_shard_merge_bless_publish_as_declared() {
    let wf = workflow("sweep.yml");
    assert!(wf["on"]["workflow_dispatch"]["inputs"].get("models").is_some());
    let mut runner = Runner::new();
    let suite = Arc::new(replay::suite(&runner.suite));
    let fake = Fake::start(move |request, _| {
        if request.method != "POST" {
            return Reply::json(json!({}));
        }
        replay::openai(&suite, &request.body)
    });
    let mut vars = vars(&[
        ("inputs.provider", "openai"),
        ("inputs.models", "replay-a, replay:b"),
        ("inputs.k", "2"),
        ("inputs.shards", "3"),
        ("runner.os", "Linux"),
        ("hashFiles('Cargo.lock')", "0"),
        ("github.run_id", "42"),
        ("github.token", ""),
        ("!cancelled()", "true"),
        ("vars.OLLAMA_HOST", ""),
        ("vars.EVAL_JUDGE_PROVIDER", ""),
        ("vars.EVAL_JUDGE_MODEL", ""),
        ("secrets.GEMINI_API_KEY", ""),
        ("secrets.OPENAI_API_KEY", ""),
        ("secrets.EVAL_JUDGE_API_KEY", ""),
    ]);
    vars.insert("vars.OPENAI_BASE_URL".into(), format!("{}/v1", fake.url));

    let (_, outputs) = runner.run_job(&wf["jobs"]["plan"], &vars);
    let models = output_value(&outputs, "models");
    let shards = output_value(&outputs, "shards");
    assert_eq!(
        models,
        json!([{"id": "replay-a", "slug": "replay-a"}, {"id": "replay:b", "slug": "replay-b"}]),
        "{outputs}"
    );
    assert_eq!(shards, json!([1, 2, 3]));
    vars.insert("fromJSON(needs.plan.outputs.models)".into(), models.to_string());
    vars.insert("fromJSON(needs.plan.outputs.shards)".into(), shards.to_string());
    let with_model = |vars: &HashMap<String, String>, model: &Value| {
        let mut v = vars.clone();
        v.insert("matrix.model.id".into(), model["id"].as_str().unwrap().into());
        v.insert("matrix.model.slug".into(), model["slug"].as_str().unwrap().into());
        v
    };

    for model in models.as_array().unwrap() {
        for shard in shards.as_array().unwrap() {
            let mut job_vars = with_model(&vars, model);
            job_vars.insert("matrix.shard".into(), shard.to_string());
            runner.run_job(&wf["jobs"]["shard"], &job_vars);
        }
    }
    for model in models.as_array().unwrap() {
        let (ws, _) = runner.run_job(&wf["jobs"]["merge"], &with_model(&vars, model));
        let slug = model["slug"].as_str().unwrap();
        let text = std::fs::read_to_string(ws.join(format!("merged/openai-{slug}.json"))).unwrap();
        let merged: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(merged["aggregate"]["total_runs"], 10, "5 tasks x k = 2, from three shards");
        assert_eq!(merged["shard"], Value::Null);
    }
    let steps = wf["jobs"]["pull-request"]["steps"].as_array().unwrap();
    assert!(steps.iter().any(|s| s["run"].as_str().is_some_and(|r| r.contains("ci-sweep.sh pull-request"))));
    let (ws, _) = runner.run_job(&wf["jobs"]["pull-request"], &vars);
    for slug in ["replay-a", "replay-b"] {
        let baseline = ws.join(format!("evals/baselines/openai-{slug}.json"));
        let b: Value = serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
        assert_eq!(b["aggregate"]["solve_k_rate"], 100.0, "{slug}");
        assert_eq!(b["aggregate"]["total_runs"], 10, "{slug}");
        let archives: Vec<_> =
            std::fs::read_dir(ws.join(format!("evals/baselines/evidence/openai-{slug}"))).unwrap().collect();
        assert_eq!(archives.len(), 1, "the evidence of the blessed run, and only it");
        // Merged from three shards, each with its own run id, and still backed
        // run by run by its transcripts, as a committed baseline must be.
        assert_eq!(b["shard_run_ids"].as_array().map(Vec::len), Some(3), "{slug}");
        assert_eq!(common::evidence::assert_backed_by_transcripts(&baseline), 10, "{slug}");
    }
    let results = std::fs::read_to_string(ws.join("site/results.html")).unwrap();
    assert!(results.contains("replay-a") && results.contains("replay:b"), "both rows on the site");
}

#[test]
fn the_docs_workflow_publishes_under_the_pages_path() {
    let wf = workflow("docs.yml");
    let vars = vars(&[
        ("steps.pages.outputs.base_path", "/vaultbench"),
        ("github.server_url", "https://github.com"),
        ("github.repository", "owner/vaultbench"),
        ("runner.os", "Linux"),
        ("hashFiles('Cargo.lock')", "0"),
    ]);
    let mut runner = Runner::new();
    let (ws, _) = runner.run_job(&wf["jobs"]["build"], &vars);
    // Pages serve the site under /<repository>/: the not-found page, served at
    // any depth, links there; every page links to the repository.
    let not_found = std::fs::read_to_string(ws.join("site/404.html")).unwrap();
    assert!(not_found.contains("\"/vaultbench/static/style.css\""), "links under the Pages path");
    let index = std::fs::read_to_string(ws.join("site/index.html")).unwrap();
    assert!(index.contains("https://github.com/owner/vaultbench"), "the repository from the workflow");
    let upload = wf["jobs"]["build"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/upload-pages-artifact@")));
    assert_eq!(upload.unwrap()["with"]["path"], "site", "what is deployed is what publish wrote");
}

/// actionlint, where .ci/run installs it or on PATH.
fn actionlint() -> Option<PathBuf> {
    let local = repo().join("target/ci-tools/bin/actionlint");
    if local.is_file() {
        return Some(local);
    }
    let on_path = Command::new("actionlint").arg("--version").output().is_ok_and(|o| o.status.success());
    on_path.then(|| PathBuf::from("actionlint"))
}

#[test]
fn actionlint_passes_on_every_workflow() {
    let Some(actionlint) = actionlint() else {
        eprintln!("skipping: actionlint is not installed (.ci/run installs it from PyPI into target/ci-tools)");
        return;
    };
    let workflows: Vec<PathBuf> = std::fs::read_dir(repo().join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    assert!(workflows.len() >= 2, "{workflows:?}");
    let out = Command::new(actionlint).args(&workflows).current_dir(repo()).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}
