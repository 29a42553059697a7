//! `vaultbench run`, `merge` and `suite check` through the real binary, with
//! the reference provider on small suites built here (and on upstream tasks
//! read in place when the corpus is present).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;
use vaultbench::format::result::ResultFile;
use vaultbench::report::{self, aggregate, evidence};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A task that only a run that reads the right note can solve: the answer is
/// in `notes.md`, `a.md` (read first by the dump agent) is a distractor, and
/// the budget leaves no room for reading everything.
fn task(id: &str) -> String {
    format!(
        r#"{{
  "id": "{id}",
  "description": "read one note and report a figure",
  "userMessage": "What was the apple harvest? Read eval-scratch/notes.md.",
  "difficulty": "T2",
  "category": "retrieval",
  "fixture": "orchard",
  "expectedTools": ["read_file"],
  "forbiddenTools": ["delete_file"],
  "outputMatchers": [{{ "type": "contains", "value": "940 kg" }}],
  "vaultAssertions": [{{ "type": "fileUnchanged", "path": "eval-scratch/notes.md", "fixture": "notes.md" }}],
  "toolCallBudget": 3,
  "maxTurns": 5,
  "timeoutMs": 20000
}}"#
    )
}

const REFERENCE: &str = r#"{"steps": [{"tool": "read_file", "args": {"path": "eval-scratch/notes.md"}}], "answer": "The harvest was 940 kg."}"#;

/// A suite of `ids.len()` solvable tasks with their references.
fn suite(ids: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("evals");
    write(&root, "fixtures/orchard/a.md", "Pears are green.\n");
    write(&root, "fixtures/orchard/notes.md", "The apple harvest was 940 kg this quarter.\n");
    write(&root, "fixtures/orchard/z.md", "Plums.\n");
    for id in ids {
        write(&root, &format!("tasks/{id}.json"), &task(id));
        write(&root, &format!("references/{id}.json"), REFERENCE);
    }
    dir
}

fn result_files(results: &Path) -> Vec<PathBuf> {
    json_files(results)
}

fn only_result(results: &Path) -> (PathBuf, ResultFile) {
    let files = result_files(results);
    assert_eq!(files.len(), 1, "{files:?}");
    let r = report::load_result(&files[0]).unwrap();
    (files[0].clone(), r)
}

fn sweep_dir(results: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> =
        std::fs::read_dir(results).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

fn finished_cells(results: &Path) -> Vec<PathBuf> {
    let Ok(dirs) = std::fs::read_dir(results) else { return vec![] };
    let mut out = Vec::new();
    for d in dirs.flatten() {
        if let Ok(cells) = std::fs::read_dir(d.path().join("cells")) {
            out.extend(cells.flatten().map(|c| c.path()).filter(|p| p.extension().is_some_and(|e| e == "json")));
        }
    }
    out.sort();
    out
}

fn assert_rederives(r: &ResultFile) {
    let diffs = aggregate::differences(r, &aggregate::rederive(r));
    assert!(diffs.is_empty(), "{diffs:?}");
}

/// The result as JSON without what legitimately differs between two runs of
/// the same sweep: ids, commit, durations, transcript paths, shard marks.
fn comparable(r: &ResultFile) -> Value {
    comparable_json(serde_json::to_value(r).unwrap())
}

fn run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--provider", "reference", "--suite", "evals"];
    if !extra.contains(&"--results") {
        args.extend(["--results", "results"]);
    }
    args.extend_from_slice(extra);
    args
}

#[test]
fn a_reference_sweep_writes_results_and_transcripts() {
    let dir = suite(&["alpha", "beta"]);
    let out = vaultbench(&run_args(&["--repeat", "3", "--keep-artifacts"]), dir.path());
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("=== reference / reference ===") && text.contains("solve^3:  100.0%"), "{text}");
    assert!(text.contains("No baseline for reference / reference"), "{text}");
    let (path, r) = only_result(&dir.path().join("results"));
    let stem = r.run_id.file_stem();
    assert_eq!(path.file_name().unwrap().to_string_lossy(), format!("{stem}.json"));
    assert!(r.run_id.0.len() == 24 && r.run_id.0.ends_with('Z'), "{}", r.run_id);
    assert_eq!((r.tasks.len(), r.aggregate.n_runs, r.aggregate.solve_k_rate), (2, 3, 100.0));
    assert!(!r.interrupted && r.shard.is_none() && r.task_filter.is_none());
    assert_rederives(&r);
    let run = &r.tasks[1].runs[2];
    assert_eq!(run.transcript_path, format!("results/{stem}/beta-3.json"));
    assert_eq!(run.metrics.tool_list, ["read_file"]);
    assert_eq!((run.metrics.turns, run.metrics.cache_ratio), (2, None));
    assert!(run.solve_details.vault_assertion_details[0].ok);
    let transcript: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(&run.transcript_path)).unwrap()).unwrap();
    assert_eq!(transcript["task_id"], "beta");
    assert_eq!(transcript["end"]["reason"], "answered");
    let vault = PathBuf::from(transcript["vault"].as_str().unwrap());
    assert!(vault.join("eval-scratch/notes.md").is_file(), "--keep-artifacts keeps the vault");
    assert!(text.contains("Vaults kept under"), "{text}");
}

/// A run stopped by the turn limit says so in the result (`endReason`), as a
/// timed-out one does with upstream's `timedOut`; an answered run carries
/// neither field.
#[test]
fn a_run_cut_by_the_turn_limit_records_why_it_ended() {
    let dir = suite(&["alpha", "beta"]);
    let path = dir.path().join("evals/tasks/beta.json");
    let text = std::fs::read_to_string(&path).unwrap().replace("\"maxTurns\": 5", "\"maxTurns\": 1");
    std::fs::write(&path, text).unwrap();
    let out = vaultbench(&run_args(&[]), dir.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let (path, r) = only_result(&dir.path().join("results"));
    let raw: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let alpha = &raw["tasks"][0]["runs"][0];
    let beta = &raw["tasks"][1]["runs"][0];
    assert_eq!(alpha.get("endReason"), None, "{alpha}");
    assert_eq!(alpha.get("timedOut"), None);
    assert_eq!(beta["endReason"], "turn_limit", "{beta}");
    assert_eq!(beta.get("timedOut"), None);
    assert!(!r.tasks[1].runs[0].passed);
}

/// Blessing archives the run's transcripts next to the baseline, byte for
/// byte; a later baseline without transcripts removes the stale archive.
#[test]
fn bless_keeps_the_transcripts_as_evidence() {
    let dir = suite(&["alpha", "beta"]);
    let out = vaultbench(&run_args(&["--repeat", "2"]), dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let (path, mut r) = only_result(&dir.path().join("results"));
    // A reference run is never a baseline; pose as a real provider to bless it.
    r.provider = "ollama".into();
    r.model = "m:1b".into();
    report::write_result(&path, &r).unwrap();

    let out = vaultbench(&["bless", path.to_str().unwrap(), "--baselines", "baselines"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let archive = dir.path().join(format!("baselines/evidence/ollama-m-1b/{}.tar.gz", r.run_id.file_stem()));
    assert!(stdout(&out).contains("4 transcripts"), "{}", stdout(&out));
    let entries = evidence::read(&archive).unwrap();
    let names: Vec<&str> = entries.keys().map(String::as_str).collect();
    assert_eq!(names, ["alpha-1.json", "alpha-2.json", "beta-1.json", "beta-2.json"]);
    for task in &r.tasks {
        for run in &task.runs {
            let on_disk = std::fs::read(dir.path().join(&run.transcript_path)).unwrap();
            assert_eq!(entries[&evidence::entry_name(run).unwrap()], on_disk, "{}", run.transcript_path);
        }
    }
    // Blessing the same result again writes the same bytes.
    let first = std::fs::read(&archive).unwrap();
    assert!(vaultbench(&["bless", path.to_str().unwrap(), "--baselines", "baselines"], dir.path()).status.success());
    assert_eq!(std::fs::read(&archive).unwrap(), first, "the archive is reproducible");

    // The same result moved away from its transcripts: already the
    // baseline, so nothing is done and this run's archive stays its evidence.
    std::fs::copy(&path, dir.path().join("moved.json")).unwrap();
    let out = vaultbench(&["bless", "moved.json", "--baselines", "baselines"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("is already the baseline"), "{}", stdout(&out));
    assert_eq!(std::fs::read(&archive).unwrap(), first);

    // Another run without transcripts: blessed with a warning, and the old
    // evidence (of another run) is gone.
    r.run_id.0 = "2026-11-30T08:00:00.000Z".into();
    report::write_result(&dir.path().join("other.json"), &r).unwrap();
    let out = vaultbench(&["bless", "other.json", "--baselines", "baselines"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no transcript for 4 of 4 runs (alpha#1, alpha#2, beta#1, beta#2)"),
        "{}",
        stderr(&out)
    );
    assert!(!archive.exists());
    assert!(!dir.path().join("baselines/evidence/ollama-m-1b").exists(), "the emptied folder goes too");
    assert!(dir.path().join("baselines/ollama-m-1b.json").is_file());
}

#[test]
fn task_filter_and_missing_references_are_clear() {
    let dir = suite(&["alpha", "beta"]);
    let out = vaultbench(&run_args(&["--task", "al"]), dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, r) = only_result(&dir.path().join("results"));
    assert_eq!((r.tasks.len(), r.task_filter.as_deref()), (1, Some("al")));

    std::fs::remove_file(dir.path().join("evals/references/beta.json")).unwrap();
    let out = vaultbench(&run_args(&["--task", "b"]), dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("have no reference trajectory") && stderr(&out).contains("beta"), "{}", stderr(&out));
    let out = vaultbench(&run_args(&["--task", "zzz"]), dir.path());
    assert!(stderr(&out).contains("no task id in evals starts with `zzz`"), "{}", stderr(&out));
    let out = vaultbench(&["run", "--suite", "evals"], dir.path());
    assert_eq!(out.status.code(), Some(2), "--provider is required");
    // A gemini model needs a price before anything runs (this suite has no pricing.toml).
    let out = vaultbench(&["run", "--suite", "evals", "--provider", "gemini"], dir.path());
    assert!(
        stderr(&out).contains("--model ID (or --models A,B) is required for provider `gemini`"),
        "{}",
        stderr(&out)
    );
    let out = vaultbench(&["run", "--suite", "evals", "--provider", "gemini", "--model", "gemini-x"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("gemini model `gemini-x` has no price") && stderr(&out).contains("--allow-unpriced"),
        "{}",
        stderr(&out)
    );
    let out = vaultbench(
        &["run", "--suite", "evals", "--provider", "gemini", "--model", "gemini-x", "--allow-unpriced"],
        dir.path(),
    );
    assert!(stderr(&out).contains("warning: gemini model `gemini-x` is unpriced"), "{}", stderr(&out));
    let out = vaultbench(&run_args(&["--shard", "3/2"]), dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid shard `3/2`"), "{}", stderr(&out));
}

#[test]
fn shards_merge_into_the_unsharded_result() {
    let ids = ["a1", "a2", "b1", "b2", "c1"];
    let dir = suite(&ids);
    for shard in ["1/2", "2/2"] {
        let out = vaultbench(&run_args(&["--repeat", "2", "--shard", shard, "--results", "shards"]), dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = vaultbench(&run_args(&["--repeat", "2"]), dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, whole) = only_result(&dir.path().join("results"));

    let parts = result_files(&dir.path().join("shards"));
    let first: ResultFile = report::load_result(&parts[0]).unwrap();
    assert_eq!(first.shard.as_deref(), Some("1/2"));
    assert_eq!(first.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["a1", "b1", "c1"]);
    let part_args: Vec<String> = parts.iter().rev().map(|p| p.to_string_lossy().into_owned()).collect();
    let mut args = vec!["merge"];
    args.extend(part_args.iter().map(String::as_str));
    args.extend(["--out", "merged.json"]);
    let out = vaultbench(&args, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let merged = report::load_result(&dir.path().join("merged.json")).unwrap();
    assert_rederives(&merged);
    assert_eq!(comparable(&merged), comparable(&whole));
    // Each shard's run id, shard 1/2 first, whatever order the parts were given in.
    let ids: Vec<_> = parts.iter().map(|p| report::load_result(p).unwrap()).map(|r| (r.shard, r.run_id)).collect();
    let mut ids = ids.into_iter().map(|(s, id)| (s.unwrap(), id)).collect::<Vec<_>>();
    ids.sort();
    assert_eq!(merged.shard_run_ids, ids.into_iter().map(|(_, id)| id).collect::<Vec<_>>());

    // Overlapping or incomplete parts are refused with the reason.
    let out = vaultbench(&["merge", &part_args[0]], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("missing shard"), "{}", stderr(&out));
    let out = vaultbench(&["merge", &part_args[0], &part_args[0]], dir.path());
    assert!(stderr(&out).contains("given twice"), "{}", stderr(&out));
}

#[test]
fn the_shard_comes_from_the_batch_systems_environment_and_a_flag_wins() {
    let dir = suite(&["a1", "a2", "b1"]);
    let run = |env: &[(&str, &str)], extra: &[&str], results: &str| {
        let mut cmd = command();
        cmd.args(run_args(&[extra, &["--results", results]].concat())).current_dir(dir.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    // A Kubernetes Indexed Job's second pod.
    let out = run(&[("JOB_COMPLETION_INDEX", "1"), ("VAULTBENCH_SHARD_COUNT", "2")], &["--shard"], "k8s");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("shard 2/2, from JOB_COMPLETION_INDEX=1"), "{}", stderr(&out));
    let (_, r) = only_result(&dir.path().join("k8s"));
    assert_eq!(r.shard.as_deref(), Some("2/2"));
    assert_eq!(r.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["a2"]);
    // A SLURM array task, `--shard auto`.
    let slurm = [("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_COUNT", "2")];
    let out = run(&slurm, &["--shard", "auto"], "slurm");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(only_result(&dir.path().join("slurm")).1.shard.as_deref(), Some("1/2"));
    // The flag wins, and says so.
    let out = run(&[("VAULTBENCH_SHARD_INDEX", "1"), ("VAULTBENCH_SHARD_COUNT", "2")], &["--shard", "2/2"], "flag");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("--shard 2/2 given; the environment says 1/2"), "{}", stderr(&out));
    assert_eq!(only_result(&dir.path().join("flag")).1.shard.as_deref(), Some("2/2"));
    // Sources that disagree, or none at all, stop the run before it starts.
    let both = [("JOB_COMPLETION_INDEX", "0"), ("VAULTBENCH_SHARD_INDEX", "2"), ("VAULTBENCH_SHARD_COUNT", "2")];
    let out = run(&both, &["--shard"], "conflict");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("the environment names two different shards"), "{}", stderr(&out));
    let out = run(&[], &["--shard"], "none");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("the environment names no shard"), "{}", stderr(&out));
    assert!(!dir.path().join("conflict").exists() && !dir.path().join("none").exists());
}

/// Start a slow sweep (every run waits `delay_ms` first) in the background.
fn spawn_sweep(dir: &Path, extra: &[&str]) -> std::process::Child {
    common::command()
        .args(run_args(extra))
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for_cells(results: &Path, at_least: usize) -> usize {
    let start = Instant::now();
    loop {
        let n = finished_cells(results).len();
        if n >= at_least {
            return n;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "only {n} runs finished in 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn kill_9_then_resume_runs_every_cell_exactly_once() {
    let ids = ["t1", "t2", "t3", "t4"];
    let dir = suite(&ids);
    let results = dir.path().join("results");
    // 4 tasks x 10 runs, 2 at a time, 60 ms each: about 1.2 s in all.
    let sweep = ["--repeat", "10", "--jobs", "2", "--cell-delay-ms", "60"];
    let mut child = spawn_sweep(dir.path(), &sweep);
    wait_for_cells(&results, 6);
    child.kill().unwrap(); // SIGKILL: no chance to save anything more
    child.wait().unwrap();
    let before: Vec<(PathBuf, Vec<u8>)> =
        finished_cells(&results).into_iter().map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect();
    assert!(before.len() >= 6 && before.len() < 40, "killed mid-way: {} of 40 finished", before.len());
    assert!(result_files(&results).is_empty(), "a killed sweep wrote no result");

    let stem = sweep_dir(&results).file_name().unwrap().to_string_lossy().into_owned();
    // What a write cut short by the kill leaves; resuming removes it.
    let leftover = sweep_dir(&results).join("cells/.t1-1.json.Ab3dE9.tmp");
    std::fs::write(&leftover, b"{\"id\": \"t1\"").unwrap();
    let out = vaultbench(&run_args(&["--resume", &stem]), dir.path());
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    let reused = before.len();
    assert!(text.contains(&format!("Resumed: {reused} runs reused, {} run now", 40 - reused)), "{text}");
    // The runs finished before the kill were not run again.
    for (path, bytes) in &before {
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "{} was rewritten", path.display());
    }
    assert_eq!(finished_cells(&results).len(), 40);
    assert!(!leftover.exists(), "the temporary file of the killed sweep is removed on resume");
    let (_, resumed) = only_result(&results);
    assert!(!resumed.interrupted);
    assert_rederives(&resumed);

    // Same shape as an uninterrupted run of the same sweep.
    let out = vaultbench(&run_args(&["--repeat", "10", "--results", "clean"]), dir.path());
    assert!(out.status.success());
    let (_, clean) = only_result(&dir.path().join("clean"));
    assert_eq!(comparable(&resumed), comparable(&clean));
}

/// Every result in `results` is whole and its own: its file is named after
/// its run id, it has every run of `tasks` x `k`, and each transcript in its
/// folder carries its run id.
fn assert_distinct_whole_sweeps(results: &Path, n: usize, tasks: usize, k: u32) {
    let files = result_files(results);
    assert_eq!(files.len(), n, "{files:?}");
    let mut ids = std::collections::HashSet::new();
    for path in &files {
        let r = report::load_result(path).unwrap();
        assert_eq!(path.file_stem().unwrap().to_string_lossy(), r.run_id.file_stem());
        assert!(ids.insert(r.run_id.0.clone()), "run id {} twice", r.run_id);
        assert_eq!((r.tasks.len(), r.aggregate.total_runs), (tasks, tasks as u32 * k), "{}", path.display());
        for run in r.tasks.iter().flat_map(|t| &t.runs) {
            let t: Value =
                serde_json::from_slice(&std::fs::read(results.parent().unwrap().join(&run.transcript_path)).unwrap())
                    .unwrap();
            assert_eq!(t["run_id"], r.run_id.0.as_str(), "{} holds another sweep's run", run.transcript_path);
        }
    }
    let dirs = std::fs::read_dir(results).unwrap().filter(|e| e.as_ref().unwrap().path().is_dir()).count();
    assert_eq!(dirs, n, "one folder per sweep");
}

/// Six sweeps into one results folder, started together, all trying the same
/// run id first (the hidden testing aid), and six more on the real clock: each
/// claims its own id and folder, none is lost.
#[test]
fn concurrent_sweeps_never_share_a_run_id_or_folder() {
    let dir = suite(&["alpha", "beta"]);
    for (results, extra) in [("same-start", vec!["--run-id-from", "2026-11-22T10:00:00.000Z"]), ("clock", vec![])] {
        let mut args = vec!["--results", results, "--repeat", "2", "--jobs", "2"];
        args.extend(extra.iter().copied());
        let children: Vec<_> = (0..6).map(|_| spawn_sweep(dir.path(), &args)).collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
        assert_distinct_whole_sweeps(&dir.path().join(results), 6, 2, 2);
    }
    let mut ids: Vec<String> =
        result_files(&dir.path().join("same-start")).iter().map(|p| report::load_result(p).unwrap().run_id.0).collect();
    ids.sort();
    assert_eq!(ids[0], "2026-11-22T10:00:00.000Z");
    assert_eq!(ids[5], "2026-11-22T10:00:00.005Z", "taken ids move to the next free millisecond");
}

#[test]
fn a_running_sweep_cannot_be_resumed_twice() {
    let dir = suite(&["t1", "t2"]);
    let results = dir.path().join("results");
    let args = ["--repeat", "10", "--jobs", "1", "--cell-delay-ms", "100", "--run-id-from", "2026-11-22T10:00:00.000Z"];
    let child = spawn_sweep(dir.path(), &args);
    wait_for_cells(&results, 1);
    let out = vaultbench(&run_args(&["--resume", "2026-11-22T10:00:00.000Z"]), dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("is being run by another vaultbench process"), "{}", stderr(&out));
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_distinct_whole_sweeps(&results, 1, 2, 10);
}

fn interrupt_with(signal: &str, code: i32) {
    let dir = suite(&["t1", "t2"]);
    let results = dir.path().join("results");
    let child = spawn_sweep(dir.path(), &["--repeat", "20", "--jobs", "1", "--cell-delay-ms", "50"]);
    wait_for_cells(&results, 3);
    let status = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(code), "{text}{}", String::from_utf8_lossy(&output.stderr));
    assert!(text.contains(&format!("Interrupted by SIG{signal}")), "{text}");
    assert!(text.contains("Resume with: vaultbench run --resume "), "{text}");
    let (_, r) = only_result(&results);
    assert!(r.interrupted);
    let runs: usize = r.tasks.iter().map(|t| t.runs.len()).sum();
    assert!((3..40).contains(&runs), "{runs}");
    assert_eq!(runs, finished_cells(&results).len(), "the result holds exactly the saved runs");
    assert_rederives(&r);
    // Resuming completes it.
    let out = vaultbench(&run_args(&["--resume", &r.run_id.0]), dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, done) = only_result(&results);
    assert!(!done.interrupted);
    assert_eq!(done.aggregate.total_runs, 40);
}

/// A sweep resumed after its fixture changed ran on two fixtures: its result
/// records no fixture hash for the tasks of that fixture, so `regrade`
/// trusts none of their tool results a transcript cut. Unchanged, a resumed
/// sweep keeps them.
#[test]
fn a_fixture_edited_before_a_resume_drops_its_tasks_fixture_hash() {
    for edit in [false, true] {
        let dir = suite(&["t1", "t2"]);
        let results = dir.path().join("results");
        let child = spawn_sweep(dir.path(), &["--repeat", "20", "--jobs", "1", "--cell-delay-ms", "50"]);
        wait_for_cells(&results, 3);
        assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
        child.wait_with_output().unwrap();
        let (_, r) = only_result(&results);
        assert!(r.interrupted && r.tasks.iter().all(|t| t.fixture_hash.is_some()), "{edit}");
        if edit {
            write(&dir.path().join("evals"), "fixtures/orchard/z.md", "Plums and damsons.\n");
        }
        let out = vaultbench(&run_args(&["--resume", &r.run_id.0]), dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
        let (_, done) = only_result(&results);
        assert!(!done.interrupted);
        for t in &done.tasks {
            assert_eq!(t.fixture_hash.is_none(), edit, "{}: {:?}", t.id, t.fixture_hash);
            assert!(t.content_hash.is_some(), "the content hash of the start is kept");
        }
    }
}

/// A fixture edited while a sweep runs: its tasks ran on two fixtures, and
/// the result records no fixture hash for them.
#[test]
fn a_fixture_edited_during_a_sweep_drops_its_tasks_fixture_hash() {
    let dir = suite(&["t1", "t2"]);
    let results = dir.path().join("results");
    let child = spawn_sweep(dir.path(), &["--repeat", "10", "--jobs", "1", "--cell-delay-ms", "30"]);
    wait_for_cells(&results, 2);
    write(&dir.path().join("evals"), "fixtures/orchard/z.md", "Plums and damsons.\n");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, done) = only_result(&results);
    assert_eq!(done.aggregate.total_runs, 20);
    assert!(done.tasks.iter().all(|t| t.fixture_hash.is_none() && t.content_hash.is_some()));
}

#[test]
fn sigint_saves_an_interrupted_result_and_exits_130() {
    interrupt_with("INT", 130);
}

#[test]
fn sigterm_exits_143() {
    interrupt_with("TERM", 143);
}

#[test]
fn models_flag_writes_a_comparison_report() {
    let dir = suite(&["alpha"]);
    let out = vaultbench(&run_args(&["--models", "ref-a,ref-b", "--repeat", "2"]), dir.path());
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert_eq!(result_files(&dir.path().join("results")).len(), 2);
    let report: Vec<PathBuf> = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    assert_eq!(report.len(), 1);
    let md = std::fs::read_to_string(&report[0]).unwrap();
    assert!(md.contains("| Task | Tier | ref-a | ref-b |") && md.contains("| alpha | T2 | 2/2 | 2/2 |"), "{md}");
}

#[test]
fn the_offline_path_scores_judge_matchers_with_the_reference_judge() {
    let dir = suite(&["alpha", "beta"]);
    let judged = task("alpha").replace(
        r#"[{ "type": "contains", "value": "940 kg" }]"#,
        r#"[{ "type": "contains", "value": "940 kg" }, { "type": "judge", "criteria": "Says 940 kg." }]"#,
    );
    write(&dir.path().join("evals"), "tasks/alpha.json", &judged);
    let out = vaultbench(&run_args(&[]), dir.path());
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // The reference provider needs no judge model: the offline reference
    // judge replays the references' labels, and says so.
    assert!(!err.contains("[judge unavailable]"), "{err}");
    assert!(err.contains("judge: the offline reference judge") && err.contains("can never be blessed"), "{err}");
    let (path, r) = only_result(&dir.path().join("results"));
    assert!(r.offline_judge);
    let alpha = &r.tasks.iter().find(|t| t.id == "alpha").unwrap().runs[0];
    assert!(alpha.solved && !alpha.solve_details.judge_skipped && alpha.solve_details.judge_available);
    let out = vaultbench(&["bless", path.to_str().unwrap(), "--force"], dir.path());
    assert!(stderr(&out).contains("replayed offline from the references' labels"), "{}", stderr(&out));
    // A suite without judge matchers says nothing about the judge.
    let dir = suite(&["alpha"]);
    let out = vaultbench(&run_args(&[]), dir.path());
    assert!(!stderr(&out).contains("judge"), "{}", stderr(&out));
    let (_, r) = only_result(&dir.path().join("results"));
    assert!(!r.offline_judge);
}

#[test]
fn fail_on_regression_compares_with_the_baseline() {
    let dir = suite(&["alpha"]);
    // A baseline in which alpha was solved; now its reference stops solving it.
    let out = vaultbench(&run_args(&[]), dir.path());
    assert!(out.status.success());
    let (path, _) = only_result(&dir.path().join("results"));
    std::fs::create_dir_all(dir.path().join("evals/baselines")).unwrap();
    std::fs::copy(&path, dir.path().join("evals/baselines/reference-reference.json")).unwrap();
    write(&dir.path().join("evals"), "references/alpha.json", r#"{"answer": "no idea"}"#);
    // One task, one run: no data can support a drop, so the default gate lets it pass...
    let out = vaultbench(&run_args(&["--baselines", "evals/baselines", "--fail-on-regression"]), dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("Against the baseline") && text.contains("alpha: solved 1/1 → 0/1"), "{text}");
    assert!(text.contains("within noise") && text.contains("No regressions vs baseline"), "{text}");
    // ...and the exact rule flags it.
    let args = run_args(&["--baselines", "evals/baselines", "--fail-on-regression", "--exact"]);
    let out = vaultbench(&args, dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("Against the baseline") && text.contains("REGRESSION"), "{text}");
}

fn check(dir: &Path) -> (i32, String) {
    let out = vaultbench(&["suite", "check", "--suite", "evals"], dir);
    (out.status.code().unwrap(), format!("{}{}", stdout(&out), stderr(&out)))
}

#[test]
fn suite_check_passes_a_good_suite() {
    let dir = suite(&["alpha"]);
    let (code, text) = check(dir.path());
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("references (evals/references): 1/1 solve their task"), "{text}");
    assert!(text.contains("silent solves 0/1, dump solves 0/1"), "{text}");
    assert!(text.contains("tiers: T2 1") && text.contains("categories: retrieval 1"), "{text}");
}

#[test]
fn suite_check_fails_a_reference_that_does_not_solve_its_task() {
    let dir = suite(&["alpha"]);
    write(
        &dir.path().join("evals"),
        "references/alpha.json",
        r#"{"steps": [{"tool": "delete_file", "args": {"path": "eval-scratch/notes.md"}}], "answer": "940 pounds"}"#,
    );
    let (code, text) = check(dir.path());
    assert_eq!(code, 1, "{text}");
    let line = text.lines().find(|l| l.starts_with("FAIL alpha")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("the reference does not solve it"), "{line}");
    assert!(line.contains("expected tools not called: read_file"), "{line}");
    assert!(line.contains("forbidden tools called: delete_file"), "{line}");
    // Each failed check in words: the rule and its value, not its pattern.
    assert!(line.contains("not met: the answer contains \"940 kg\""), "{line}");
    assert!(
        line.contains("not met: eval-scratch/notes.md is byte for byte as in the fixture (file missing)"),
        "{line}"
    );
    std::fs::remove_file(dir.path().join("evals/references/alpha.json")).unwrap();
    let (code, text) = check(dir.path());
    assert_eq!(code, 1);
    assert!(text.contains("FAIL alpha: no reference trajectory for task `alpha`"), "{text}");
}

#[test]
fn suite_check_lists_tasks_the_adversaries_solve() {
    let dir = suite(&["alpha"]);
    let root = dir.path().join("evals");
    // Anything that "could not find" the answer passes: the silent agent wins.
    write(
        &root,
        "tasks/lazy.json",
        &task("lazy").replace(r#""expectedTools": ["read_file"],"#, "").replace("940 kg", "could not find"),
    );
    write(&root, "references/lazy.json", r#"{"answer": "I could not find it."}"#);
    // Reading everything and echoing the first note passes: the dump agent wins.
    write(
        &root,
        "tasks/greedy.json",
        &task("greedy").replace(r#""toolCallBudget": 3,"#, "").replace("940 kg", "Pears"),
    );
    write(
        &root,
        "references/greedy.json",
        r#"{"steps": [{"tool": "read_file", "args": {"path": "eval-scratch/a.md"}}], "answer": "Pears"}"#,
    );
    let (code, text) = check(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("FAIL lazy: weak rubric: the silent agent solves it"), "{text}");
    assert!(text.contains("FAIL greedy: weak rubric: the dump agent solves it"), "{text}");
    assert!(!text.contains("FAIL alpha"), "{text}");
    assert!(text.contains("silent solves 1/3, dump solves 1/3"), "{text}");
}

#[test]
fn suite_check_never_counts_judge_matchers_as_passing() {
    let dir = suite(&["alpha"]);
    let root = dir.path().join("evals");
    let judged = task("judged").replace(
        r#"{ "type": "contains", "value": "940 kg" }"#,
        r#"{ "type": "contains", "value": "940 kg" }, { "type": "judge", "criteria": "Says 940 kg." }"#,
    );
    write(&root, "tasks/judged.json", &judged);
    write(&root, "references/judged.json", REFERENCE);
    let (code, text) = check(dir.path());
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("judge matchers: not judged (no judge configured) in 1 tasks"), "{text}");
    assert!(text.contains("the literal checks alone"), "{text}");
    // A task whose only check is the judge: the silent agent passes every literal check.
    let judge_only = task("judge-only")
        .replace(r#"{ "type": "contains", "value": "940 kg" }"#, r#"{ "type": "judge", "criteria": "Says 940 kg." }"#);
    write(&root, "tasks/judge-only.json", &judge_only.replace(r#""expectedTools": ["read_file"],"#, ""));
    write(&root, "references/judge-only.json", REFERENCE);
    let (code, text) = check(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("FAIL judge-only: weak rubric: the silent agent solves it (only a judge matcher could stop it)"),
        "{text}"
    );
}

fn alternative(label: &str, kind: &str, steps: &str, answer: &str) -> String {
    format!(
        r#"{{"source": "blind", "label": "{label}", "kind": "{kind}", "note": "a probe", "steps": {steps}, "answer": "{answer}"}}"#
    )
}

const READ_NOTES: &str = r#"[{"tool": "read_file", "args": {"path": "eval-scratch/notes.md"}}]"#;

/// A corpus of three good alternatives for `alpha`.
fn corpus(root: &Path) {
    write(
        root,
        "alternatives/alpha/correct-1.json",
        &alternative("correct", "different-wording", READ_NOTES, "940 kg of apples."),
    );
    write(
        root,
        "alternatives/alpha/wrong-1.json",
        &alternative(
            "wrong",
            "distractor",
            r#"[{"tool": "read_file", "args": {"path": "eval-scratch/a.md"}}]"#,
            "Pears.",
        ),
    );
    write(
        root,
        "alternatives/alpha/wrong-2.json",
        &alternative(
            "wrong",
            "damaging-write",
            r#"[{"tool": "read_file", "args": {"path": "eval-scratch/notes.md"}}, {"tool": "write_file", "args": {"path": "eval-scratch/notes.md", "content": "x"}}]"#,
            "940 kg.",
        ),
    );
}

/// An answer of the second round of blind writing.
fn round_two(alternative: String) -> String {
    alternative.replace(r#""source": "blind","#, r#""source": "blind", "round": 2,"#)
}

/// A wrong answer that names the right figure and another (second round).
fn hedge(root: &Path) {
    write(
        root,
        "alternatives/alpha/wrong-3.json",
        &round_two(alternative("wrong", "hedge", READ_NOTES, "Either 940 kg or 490 kg.")),
    );
}

#[test]
fn suite_check_replays_the_alternatives_and_prints_the_rates() {
    let dir = suite(&["alpha"]);
    let root = dir.path().join("evals");
    corpus(&root);
    let (code, text) = check(dir.path());
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("alternative answers (evals/alternatives): 3 in 1 task, 1 correct and 2 wrong"), "{text}");
    assert!(text.contains("  all: false negatives 0/1 (0.0%) (correct answers not solved), false positives 0/2 (0.0%) (wrong answers solved)"), "{text}");
    assert!(text.contains("  blind: false negatives 0/1 (0.0%)"), "{text}");
    assert!(!text.contains("round 1"), "one round is not split: {text}");
    assert!(text.contains("tasks where only the judge separates them: none"), "{text}");

    // A second round: a correct answer in other words that the rubric
    // misses, and a wrong one it credits; each round is measured apart.
    write(
        &root,
        "alternatives/alpha/correct-2.json",
        &round_two(alternative("correct", "different-wording", READ_NOTES, "Nine hundred and forty kilograms.")),
    );
    hedge(&root);
    let (code, text) = check(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("  all: false negatives 1/2 (50.0%) (correct answers not solved), false positives 1/3 (33.3%) (wrong answers solved)"), "{text}");
    assert!(
        text.contains(
            "  blind round 1: false negatives 0/1 (0.0%) (correct answers not solved), false positives 0/2 (0.0%)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  blind round 2: false negatives 1/1 (100.0%) (correct answers not solved), false positives 1/1 (100.0%)"
        ),
        "{text}"
    );
    assert!(text.contains("FAIL alpha: false negative: correct answer `correct-2` (blind round 2, different-wording) is not solved: not met: the answer contains \"940 kg\""), "{text}");
    assert!(
        text.contains("FAIL alpha: false positive: wrong answer `wrong-3` (blind round 2, hedge) solves it"),
        "{text}"
    );
    assert!(text.contains("suite check failed: 2 problems"), "{text}");
}

#[test]
fn suite_check_lists_tasks_only_the_judge_separates_and_corpus_gaps() {
    let dir = suite(&["alpha"]);
    let root = dir.path().join("evals");
    corpus(&root);
    let judged = task("alpha").replace(
        r#"{ "type": "contains", "value": "940 kg" }"#,
        r#"{ "type": "contains", "value": "940 kg" }, { "type": "judge", "criteria": "Commits to 940 kg." }"#,
    );
    write(&root, "tasks/alpha.json", &judged);
    hedge(&root);
    // A damaging write in a judged task must say what the judge should answer.
    let (code, text) = check(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("wrong-2.json: error at `judge`"), "{text}");
    let damaging = std::fs::read_to_string(root.join("alternatives/alpha/wrong-2.json")).unwrap();
    write(&root, "alternatives/alpha/wrong-2.json", &damaging.replace(r#""note""#, r#""judge": "YES", "note""#));
    write(&root, "tasks/beta.json", &task("beta"));
    write(&root, "references/beta.json", REFERENCE);
    let (code, text) = check(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("  alpha  no   (1/1 correct solve, 2/3 wrong fail a literal check)"), "{text}");
    assert!(text.contains("tasks where only the judge separates them (1):\n  alpha: no reason given"), "{text}");
    assert!(text.contains("FAIL alpha: false positive: wrong answer `wrong-3` (blind round 2, hedge) solves it (only a judge matcher could reject it; not judged, and the check source gives no judge.why)"), "{text}");
    assert!(text.contains("FAIL corpus: beta: 0 correct and 0 wrong alternatives"), "{text}");
    // A check source that says why only the judge can tell leaves the hedge
    // to the judge: listed with the reason, counted apart, not a failure.
    write(
        &root,
        "checks/alpha.toml",
        "states = [{ verbatim = \"940 kg\" }]\n\n[judge]\ncriteria = \"Commits to 940 kg.\"\nwhy = \"a hedge in the prose is for the judge\"\n",
    );
    let (_, text) = check(dir.path());
    assert!(text.contains("  alpha: a hedge in the prose is for the judge (1 wrong answer)"), "{text}");
    assert!(text.contains("false positives 0/3 (0.0%) (wrong answers solved), 1 more left to the judge"), "{text}");
    assert!(!text.contains("FAIL alpha"), "{text}");
    std::fs::remove_file(root.join("checks/alpha.toml")).unwrap();
    // An explicit corpus folder must exist; a misspelt argument name is named.
    let out = vaultbench(&["suite", "check", "--suite", "evals", "--alternatives", "nowhere"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no alternative-answer corpus at nowhere"), "{}", stderr(&out));
    // A round given with --alternatives is measured as it is: beta, which it
    // has no answers for, is no failure of it (the suite's own corpus is).
    let out = vaultbench(&["suite", "check", "--suite", "evals", "--alternatives", "evals/alternatives"], dir.path());
    let text = stdout(&out);
    assert!(text.contains("false negatives") && !text.contains("FAIL corpus: beta"), "{text}");
    // One task alone: its reference, adversaries and answers, and no other's.
    let out = vaultbench(&["suite", "check", "--suite", "evals", "--task", "bet"], dir.path());
    let text = stdout(&out);
    assert!(text.starts_with("checking 1 of the suite's tasks (--task bet): beta\n1 task in evals"), "{text}");
    assert!(text.contains("FAIL corpus: beta") && !text.contains("alpha"), "{text}");
    let out = vaultbench(&["suite", "check", "--suite", "evals", "--task", "zeta"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no task id in evals starts with `zeta`"), "{}", stderr(&out));
    write(
        &root,
        "alternatives/beta/correct-1.json",
        &alternative("correct", "x", r#"[{"tool": "read_file", "args": {"file": "eval-scratch/notes.md"}}]"#, "940 kg"),
    );
    let (_, text) = check(dir.path());
    assert!(text.contains("FAIL beta: evals/alternatives/beta/correct-1.json steps[0]: `read_file` has no argument `file` (it takes: path)"), "{text}");
}

/// Upstream tasks, unchanged, replayed from the trajectories in
/// tests/references/upstream/, with the vault assertions checked on the files
/// the tools really wrote.
#[test]
fn upstream_tasks_are_solved_by_their_reference_trajectories() {
    let Some(upstream) = upstream() else { return };
    let dir = tempfile::tempdir().unwrap();
    let refs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/references/upstream");
    let suite_dir = dir.path().join("suite");
    std::fs::create_dir_all(suite_dir.join("tasks")).unwrap();
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(&refs).unwrap() {
        let name = entry.unwrap().file_name();
        ids.push(name.to_string_lossy().trim_end_matches(".json").to_string());
        // The task files are read in place, through a link, never copied into the repository.
        std::os::unix::fs::symlink(upstream.join("tasks").join(&name), suite_dir.join("tasks").join(&name)).unwrap();
    }
    std::os::unix::fs::symlink(upstream.join("fixtures"), suite_dir.join("fixtures")).unwrap();
    assert!(ids.len() >= 8, "{ids:?}");
    let refs_arg = refs.to_string_lossy().into_owned();
    let out = vaultbench(
        &[
            "run",
            "--provider",
            "reference",
            "--suite",
            "suite",
            "--references",
            &refs_arg,
            "--results",
            "results",
            "--repeat",
            "2",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let (_, r) = only_result(&dir.path().join("results"));
    assert_eq!(r.tasks.len(), ids.len());
    assert_rederives(&r);
    assert_eq!(r.offline_judge, r.tasks.iter().any(|t| t.runs[0].solve_details.judge_attempted));
    let mut categories = std::collections::BTreeSet::new();
    for t in &r.tasks {
        categories.insert(t.category.clone().unwrap());
        for run in &t.runs {
            let d = &run.solve_details;
            assert!(run.passed, "{}: {:?}", t.id, run.errors);
            assert!(d.expected_tools_met && d.forbidden_tools_clean && d.tool_budget_ok, "{}: {d:?}", t.id);
            assert!(d.vault_assertions_pass, "{}: {:?}", t.id, d.vault_assertion_details);
            // Without a judge model, the offline reference judge replays
            // the references' labels: every reference solves its task.
            assert!(d.matcher_details.iter().all(|m| m.verdict()), "{}: {:?}", t.id, d.matcher_details);
            assert!(!d.judge_skipped && run.solved, "{}: {d:?}", t.id);
        }
    }
    for c in ["retrieval", "write", "edit", "delete", "memory", "skills", "context-shelf"] {
        assert!(categories.contains(c), "no {c} task among {categories:?}");
    }
    let frontmatter = r.tasks.iter().find(|t| t.id == "frontmatter-typed-update").unwrap();
    assert_eq!(frontmatter.runs[0].solve_details.vault_assertion_details.len(), 5);
    // With judge matchers unchecked, the suite check passes them all, and neither adversary solves any.
    let out = vaultbench(&["suite", "check", "--suite", "suite", "--references", &refs_arg], dir.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains(&format!("{n}/{n} solve their task", n = ids.len())), "{}", stdout(&out));
}

/// Reference trajectories are JSON inputs like tasks: a byte order mark is
/// fine, text after the value is an error naming the file.
#[test]
fn a_reference_with_a_byte_order_mark_replays_and_one_with_trailing_text_is_refused() {
    let dir = suite(&["alpha", "beta"]);
    write(dir.path(), "evals/references/alpha.json", &format!("\u{feff}{REFERENCE}"));
    let out = vaultbench(&run_args(&["--task", "alpha"]), dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, r) = only_result(&dir.path().join("results"));
    assert_eq!(r.tasks[0].solved_count, 1);

    write(dir.path(), "evals/references/beta.json", &format!("{REFERENCE}\n{REFERENCE}"));
    let out = vaultbench(&run_args(&["--task", "beta"]), dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("references/beta.json") && err.contains("more text after the JSON value"), "{err}");
}

#[test]
fn dry_run_prices_the_sweep_without_contacting_a_server() {
    let dir = suite(&["alpha", "beta", "gamma"]);
    write(
        &dir.path().join("evals"),
        "pricing.toml",
        "read_on = \"2026-11-23\"\nsource = \"test\"\n[models.\"gemini-test\"]\ninput = 1.0\ncached_input = 0.1\noutput = 10.0\n",
    );
    // A server that is never called: nothing listens there.
    let out = command()
        .env("GEMINI_BASE_URL", "http://127.0.0.1:9")
        .args(["run", "--provider", "gemini", "--model", "gemini-test", "--suite", "evals", "--results", "results"])
        .args(["--dry-run", "--repeat", "4", "--rpm", "6"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("Dry run of gemini / gemini-test: 3 tasks x k=4 = 12 runs. No server was contacted."),
        "{text}"
    );
    // maxTurns 5 each: at most 60 calls; the reference reads one note and answers: 2 calls a run.
    assert!(text.contains("Model calls: at most 60 (every run to its maxTurns); 24 if every run goes like"), "{text}");
    assert!(text.contains("$1 input, $0.1 cached input, $10 output per 1M tokens (read on 2026-11-23)"), "{text}");
    assert!(text.contains("Quota: 6 requests a minute: at least 4 min"), "{text}");
    let cost = |label: &str| -> f64 {
        let at = text.find(label).unwrap() + label.len();
        text[at..]
            .trim_start_matches('$')
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (expected, upper) = (cost("Cost: "), cost("upper bound "));
    assert!(expected > 0.0 && upper > expected, "{expected} {upper}");
    assert!(!dir.path().join("results").exists(), "a dry run writes no result");
}
