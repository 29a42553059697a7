//! The Kubernetes example (`examples/kubernetes/`): an Indexed Job sweeping
//! one shard per pod, and the merge Job.
//!
//! - Its manifests validate against the Kubernetes schema with
//!   kubernetes-validate (PyPI; it ships the schemas, so it works offline),
//!   which `.ci/run` installs; skipped with the reason printed when absent.
//! - Whatever is installed, the manifests parse as YAML with what an Indexed
//!   Job needs (completionMode Indexed, completions matching
//!   VAULTBENCH_SHARD_COUNT, a restart policy a Job accepts, the model server
//!   as a native sidecar).
//! - The pods' own shell commands run here, one per completion index, with
//!   the manifest's environment, against a loopback server replaying the
//!   reference trajectories in place of vLLM; then the merge Job's command.
//!   A pod run again (a retried index) resumes its shard instead of starting
//!   a second sweep of it.

mod common;
#[path = "providers/fake.rs"]
mod fake;
#[path = "providers/replay.rs"]
mod replay;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};

use common::*;
use fake::{Fake, Reply};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kubernetes").join(name)
}

fn documents(name: &str) -> Vec<Value> {
    yaml_documents(&example(name))
}

fn find_job<'a>(docs: &'a [Value], name: &str) -> &'a Value {
    docs.iter().find(|d| d["kind"] == "Job" && d["metadata"]["name"] == name).unwrap()
}

/// A container's environment, as (name, value) pairs.
fn env_of(container: &Value) -> Vec<(String, String)> {
    container["env"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|e| (e["name"].as_str().unwrap().to_string(), e["value"].as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_manifests_validate_against_the_kubernetes_schema() {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-tools/bin/kubernetes-validate");
    let tool = if local.is_file() {
        local
    } else if Command::new("kubernetes-validate").arg("--version").output().is_ok_and(|o| o.status.success()) {
        PathBuf::from("kubernetes-validate")
    } else {
        eprintln!(
            "skipping: kubernetes-validate is not installed (.ci/run installs it from PyPI into target/ci-tools)"
        );
        return;
    };
    let out =
        Command::new(tool).arg("--strict").arg(example("sweep.yaml")).arg(example("merge.yaml")).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("passed for resource job/vaultbench-sweep"), "{}", stdout(&out));
    assert!(stdout(&out).contains("passed for resource job/vaultbench-merge"), "{}", stdout(&out));
}

#[test]
fn the_indexed_job_has_what_an_indexed_job_needs() {
    let docs = documents("sweep.yaml");
    let job = find_job(&docs, "vaultbench-sweep");
    assert_eq!(job["apiVersion"], "batch/v1");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let completions = spec["completions"].as_i64().unwrap();
    let pod = &spec["template"]["spec"];
    assert!(
        ["Never", "OnFailure"].contains(&pod["restartPolicy"].as_str().unwrap()),
        "a Job's pods may not restart Always"
    );
    let sweep = &pod["containers"][0];
    let env = env_of(sweep);
    let count = env.iter().find(|(k, _)| k == "VAULTBENCH_SHARD_COUNT").map(|(_, v)| v.parse::<i64>().unwrap());
    assert_eq!(count, Some(completions), "VAULTBENCH_SHARD_COUNT must equal completions");
    let sidecar = &pod["initContainers"][0];
    assert_eq!(sidecar["restartPolicy"], "Always", "the model server is a native sidecar");
    assert!(sidecar["startupProbe"].is_object(), "the sweep starts once the server is up");
    let merge = documents("merge.yaml");
    let merge = find_job(&merge, "vaultbench-merge");
    let args = merge["spec"]["template"]["spec"]["containers"][0]["args"][0].as_str().unwrap();
    assert!(args.contains("vaultbench merge"), "{args}");
}

/// Run a container's `sh -c` command as the pod would, with `/results` in
/// `results`, `vaultbench` on PATH and only `env` set.
fn run_container(container: &Value, workdir: &Path, results: &Path, env: &[(String, String)]) -> std::process::Output {
    assert_eq!(container["command"], json!(["/bin/sh", "-c"]));
    let script = container["args"][0].as_str().unwrap().replace("/results", &results.display().to_string());
    let bin = Path::new(env!("CARGO_BIN_EXE_vaultbench")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", &script]).current_dir(workdir).env_clear().env("PATH", path).env("HOME", workdir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn the_pods_commands_sweep_their_shards_and_the_merge_job_joins_them() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("app");
    let results = dir.path().join("results");
    // The image's /app/evals: a small suite.
    let suite_root = workdir.join("evals");
    orchard_suite(&suite_root, &["ash", "beech", "cherry", "damson", "elder", "fir"]);
    let suite = Arc::new(replay::suite(&suite_root));
    let fake = Fake::start(move |request, _| {
        if request.method != "POST" {
            return Reply::json(json!({}));
        }
        replay::openai(&suite, &request.body)
    });

    let docs = documents("sweep.yaml");
    let job = find_job(&docs, "vaultbench-sweep");
    let completions = job["spec"]["completions"].as_i64().unwrap();
    let sweep = &job["spec"]["template"]["spec"]["containers"][0];
    let mut env = env_of(sweep);
    for (k, v) in env.iter_mut() {
        if k == "OPENAI_BASE_URL" {
            *v = format!("{}/v1", fake.url); // the loopback stand-in for the pod's vLLM
        }
        if k == "K" {
            *v = "2".into();
        }
    }
    for index in 0..completions {
        let mut pod_env = env.clone();
        pod_env.push(("JOB_COMPLETION_INDEX".into(), index.to_string()));
        let out = run_container(sweep, &workdir, &results, &pod_env);
        assert!(out.status.success(), "pod {index}: {}\n{}", stdout(&out), stderr(&out));
        assert!(stderr(&out).contains(&format!("shard {}/{completions}", index + 1)), "{}", stderr(&out));
    }
    // A retried pod resumes its shard: no second sweep of it.
    let requests = fake.requests().len();
    let mut retry_env = env.clone();
    retry_env.push(("JOB_COMPLETION_INDEX".into(), "0".into()));
    let out = run_container(sweep, &workdir, &results, &retry_env);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fake.requests().len(), requests, "nothing run again");
    let sweeps: Vec<_> =
        std::fs::read_dir(results.join("shards/0")).unwrap().filter(|e| e.as_ref().unwrap().path().is_dir()).collect();
    assert_eq!(sweeps.len(), 1);

    let merge_docs = documents("merge.yaml");
    let merge = &find_job(&merge_docs, "vaultbench-merge")["spec"]["template"]["spec"]["containers"][0];
    let out = run_container(merge, &workdir, &results, &env_of(merge));
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("merged/openai-qwen3-8b.json")).unwrap()).unwrap();
    assert_eq!(merged["aggregate"]["total_runs"], 12, "6 tasks x k = 2, from four shards");
    assert_eq!(merged["aggregate"]["solve_k_rate"], 100.0);
    let transcripts = std::fs::read_dir(results.join("merged/openai-qwen3-8b")).unwrap().count();
    assert_eq!(transcripts, 12, "every shard's transcripts, for bless");
}
