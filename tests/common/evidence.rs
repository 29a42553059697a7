//! A baseline is backed by its evidence: blessable as it stands (a real
//! provider, whole suite, no harness errors, figures that re-derive from its
//! runs), and every run's transcript is in its archive and agrees with what
//! the baseline records about that run.

use std::path::Path;

use serde_json::Value;
use vaultbench::format::result::{ResultFile, RunRecord};
use vaultbench::report::{self, bless, evidence};

fn events<'a>(transcript: &'a Value, kind: &str) -> Vec<&'a Value> {
    transcript["events"].as_array().unwrap().iter().filter(|e| e["type"] == kind).collect()
}

/// The transcript tells the same story as the run record.
fn check_run(r: &ResultFile, task: &str, n: usize, run: &RunRecord, transcript: &Value) {
    let at = format!("{task}#{n}");
    // A merged result's runs carry the run id of the shard that ran them.
    let run_id = r.run_id_of(task).unwrap_or_else(|| panic!("{at}: no run id for the task"));
    assert_eq!(transcript["run_id"], run_id.0.as_str(), "{at}");
    assert_eq!((transcript["task_id"].as_str(), transcript["run"].as_u64()), (Some(task), Some(n as u64)), "{at}");
    assert_eq!((transcript["provider"].as_str(), transcript["model"].as_str()), (Some(&*r.provider), Some(&*r.model)));
    assert_eq!((transcript["passed"].as_bool(), transcript["solved"].as_bool()), (Some(run.passed), Some(run.solved)));

    let tools: Vec<&str> = events(transcript, "tool_call").iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(tools, run.metrics.tool_list, "{at}: the tools called");
    assert_eq!(tools.len() as u64, run.metrics.tool_calls as u64, "{at}");

    // Every model call the run counted is in the transcript with the usage the
    // server reported; a call cut short (timeout, overflow) has no reply.
    let calls = events(transcript, "model_call");
    let turns = run.metrics.turns as usize;
    assert!(calls.len() == turns || calls.len() + 1 == turns, "{at}: {} model calls for {turns} turns", calls.len());
    let usage = |e: &&Value, field: &str| e["usage"][field].as_u64().unwrap_or(0);
    assert!(calls.iter().all(|e| usage(e, "prompt_tokens") > 0), "{at}: a model call without the server's usage");
    let high_water = calls.iter().map(|e| usage(e, "prompt_tokens")).max().unwrap_or(0);
    assert_eq!(high_water, run.metrics.prompt_tokens, "{at}: prompt tokens (high-water)");
    let output: u64 = calls.iter().map(|e| usage(e, "output_tokens")).sum();
    assert_eq!(output, run.metrics.output_tokens, "{at}: output tokens");
}

/// Asserts that the baseline at `path` is blessable and backed by its
/// transcripts; returns how many runs it holds.
pub fn assert_backed_by_transcripts(path: &Path) -> usize {
    let name = path.display();
    let r = report::load_result(path).unwrap();
    let refusals = bless::refusals(&r);
    assert!(refusals.is_empty(), "{name} would not be blessed today: {refusals:?}");
    assert_eq!(
        path.file_name().unwrap().to_string_lossy(),
        bless::baseline_file_name(&r.provider, &r.model),
        "{name}: named after its provider and model"
    );
    let archive = evidence::archive_path(path, &r.run_id.0).expect("a run id that names its evidence");
    let transcripts =
        evidence::read(&archive).unwrap_or_else(|e| panic!("{name} has no evidence at {}: {e:#}", archive.display()));
    let mut runs = 0;
    for task in &r.tasks {
        for (i, run) in task.runs.iter().enumerate() {
            let entry = evidence::entry_name(run).unwrap();
            let bytes = transcripts
                .get(&entry)
                .unwrap_or_else(|| panic!("{name}: {entry} is missing from {}", archive.display()));
            let transcript: Value = serde_json::from_slice(bytes).unwrap();
            check_run(&r, &task.id, i + 1, run, &transcript);
            runs += 1;
        }
    }
    assert_eq!(transcripts.len(), runs, "{name}: the evidence holds exactly the baseline's runs");
    runs
}
