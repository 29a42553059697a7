//! `vaultbench regrade`: today's checks on a result's recorded runs.
//!
//! A task's checks are not part of what its model saw (the request, the
//! attached notes, the fixture, the tools), so a run's trajectory stands when
//! only the checks change; its verdict is then a function of that trajectory
//! and the new checks. Each answered run is replayed from its transcript: its
//! tool calls, in order, against a fresh copy of today's fixture through the
//! real vault tools, then its final answer; the vault and the answer are
//! scored by today's task.
//!
//! The replay is only taken as the run when it saw what the run saw: the same
//! request, and every tool call giving the result the transcript recorded. A
//! task changed beyond its checks (another note in its fixture, another
//! request) shows as a different result, and that run is reported as not
//! regradable: only a rerun can say. So are runs whose transcript cannot be
//! replayed (a call's arguments cut to the transcript's limit, malformed
//! arguments, a missing transcript). Judge verdicts are taken from the result
//! where today's judge criteria are the ones the run was judged by; where they
//! changed, a run the literal checks pass needs the judge.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use serde_json::Value;
use tokio::task::JoinSet;

use super::cell::{self, CellEnv};
use super::check::failing_checks;
use super::scratch::Scratch;
use crate::agent::transcript::Event;
use crate::checks::explain::Explainer;
use crate::format::reference::{Reference, ReferenceStep};
use crate::format::result::{MatcherDetail, ResultFile, RunRecord};
use crate::format::task::Task;
use crate::limits::Limits;
use crate::pricing::Pricing;
use crate::provider::reference::ReferenceModel;
use crate::report::evidence;
use crate::suite::Suite;
use crate::vault::Toolbox;

/// What today's checks say about one recorded run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The run gave no answer (time, turn limit, context, harness error):
    /// no check can solve it, so no change of checks changes it.
    NotAnswered,
    /// Today's checks give the recorded verdict.
    Same { solved: bool },
    /// Today's checks give the other verdict; `why` is what fails, in
    /// words, when it is now unsolved.
    Flipped { solved: bool, why: String },
    /// The literal checks hold, and today's judge criteria are not the ones
    /// the run was judged by: only the judge can say.
    NeedsJudge,
    /// The replay did not see what the run saw: the task changed beyond its
    /// checks, and only a rerun can say.
    Changed { reason: String },
    /// The run's transcript cannot be replayed.
    Unreplayable { reason: String },
}

/// One run and its outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRegrade {
    pub task: String,
    /// 1-based, as in the transcript's name.
    pub run: usize,
    pub recorded_solved: bool,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Every run of a result, regraded.
#[derive(Debug, Clone, Serialize)]
pub struct Regrade {
    pub runs: Vec<RunRegrade>,
    /// Tasks of the result that the suite no longer has.
    pub not_in_suite: Vec<String>,
}

impl Regrade {
    pub fn flipped(&self) -> impl Iterator<Item = &RunRegrade> {
        self.runs.iter().filter(|r| matches!(r.outcome, Outcome::Flipped { .. }))
    }

    /// Runs whose verdict today's checks cannot give without a rerun or the judge.
    pub fn undetermined(&self) -> impl Iterator<Item = &RunRegrade> {
        self.runs.iter().filter(|r| {
            matches!(r.outcome, Outcome::NeedsJudge | Outcome::Changed { .. } | Outcome::Unreplayable { .. })
        })
    }

    /// Every recorded verdict stands under today's checks.
    pub fn all_stand(&self) -> bool {
        self.flipped().next().is_none() && self.undetermined().next().is_none() && self.not_in_suite.is_empty()
    }
}

/// The transcripts of `result`, read from `path`'s evidence: the archive a
/// baseline names, or the folder of transcripts next to a result file.
/// Missing ones are left out (the run is then reported as unreplayable).
pub fn transcripts(path: &Path, result: &ResultFile) -> Result<BTreeMap<String, Vec<u8>>> {
    if let Some(archive) = evidence::archive_path(path, &result.run_id.0).filter(|a| a.is_file()) {
        return evidence::read(&archive);
    }
    let dir = evidence::transcripts_dir(path);
    if !dir.is_dir() {
        bail!(
            "no transcripts for {}: neither an evidence archive nor the folder {} (regrade replays the runs' recorded tool calls)",
            path.display(),
            dir.display()
        );
    }
    let cap = Limits::default().max_input_file_bytes;
    let mut out = BTreeMap::new();
    for run in result.tasks.iter().flat_map(|t| &t.runs) {
        let Some(name) = evidence::entry_name(run) else { continue };
        let file = dir.join(&name);
        if file.symlink_metadata().is_ok_and(|m| m.is_file()) {
            out.insert(name, crate::fsio::read_capped(&file, cap)?);
        }
    }
    Ok(out)
}

/// What the transcript of a run says the model did: its tool calls with
/// their recorded results, and the request it was given.
struct Recorded {
    system_prompt: Option<String>,
    tools: Option<Value>,
    user_message: Option<String>,
    /// (name, arguments, success, result) in call order.
    calls: Vec<(String, Value, bool, Value)>,
}

fn recorded(bytes: &[u8]) -> Result<Recorded, String> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| format!("the transcript is not JSON: {e}"))?;
    let events = value.get("events").and_then(Value::as_array).ok_or("the transcript has no `events` list")?;
    let mut out = Recorded {
        system_prompt: value.get("system_prompt").and_then(Value::as_str).map(str::to_string),
        tools: value.get("tools").cloned(),
        user_message: None,
        calls: Vec::new(),
    };
    for (i, e) in events.iter().enumerate() {
        let kind = e.get("type").and_then(Value::as_str);
        // A call whose arguments the model garbled got an error, not a
        // result of its (recorded) arguments: no replay gives that back.
        if kind == Some("model_call")
            && let Some(calls) = e.get("tool_calls").and_then(Value::as_array)
            && let Some(bad) = calls.iter().find(|c| c.get("malformed").is_some_and(|m| !m.is_null()))
        {
            let name = bad.get("name").and_then(Value::as_str).unwrap_or("?");
            return Err(format!("events[{i}]: the model's arguments to {name} were malformed"));
        }
        let event: Event = match kind {
            Some("user_message" | "tool_call") => {
                serde_json::from_value(e.clone()).map_err(|err| format!("events[{i}]: {err}"))?
            }
            _ => continue,
        };
        match event {
            Event::UserMessage { text } => out.user_message = Some(text),
            Event::ToolCall { name, arguments, success, result, .. } => {
                out.calls.push((name, arguments, success, result))
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Replay one answered run against today's `task`.
async fn replay(env: &CellEnv<'_>, task: &Task, record: &RunRecord, bytes: &[u8], explain: &Explainer) -> Outcome {
    let recorded = match recorded(bytes) {
        Ok(r) => r,
        Err(reason) => return Outcome::Unreplayable { reason },
    };
    let mut steps = Vec::with_capacity(recorded.calls.len());
    for (i, (tool, args, ..)) in recorded.calls.iter().enumerate() {
        if !args.is_object() {
            let reason = match args.as_str() {
                Some(s) if s.ends_with("bytes in all)") => {
                    format!("call {} ({tool}): its arguments were cut in the transcript", i + 1)
                }
                _ => format!("call {} ({tool}): its arguments are not a JSON object", i + 1),
            };
            return Outcome::Unreplayable { reason };
        }
        steps.push(ReferenceStep { tool: tool.clone(), args: args.clone() });
    }
    if steps.len() as u64 != u64::from(record.metrics.tool_calls) {
        return Outcome::Unreplayable {
            reason: format!(
                "the transcript holds {} tool calls, the result {}",
                steps.len(),
                record.metrics.tool_calls
            ),
        };
    }
    // The run passed within its limits; the replay, one call a turn, must
    // not be cut by them.
    let mut task = task.clone();
    task.max_turns = task.max_turns.max(u32::try_from(steps.len() + 1).unwrap_or(u32::MAX));
    let model = ReferenceModel::new(Reference { steps, answer: record.response_text.clone() }, "regrade");
    let out = cell::run(env, &task, &model, None).await;
    let replayed: Vec<_> = out
        .transcript
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { name, arguments, success, result, .. } => Some((name, arguments, success, result)),
            _ => None,
        })
        .collect();
    // What the model was given: the system prompt (with the vault's memory
    // and skills), the tools and the request (with its attached notes).
    let given = out.transcript.events.iter().find_map(|e| match e {
        Event::UserMessage { text } => Some(text.as_str()),
        _ => None,
    });
    let tools = serde_json::to_value(&out.transcript.tools).unwrap_or(Value::Null);
    for (what, then, now) in [
        ("system prompt", recorded.system_prompt.as_deref(), Some(out.transcript.system_prompt.as_str())),
        ("request", recorded.user_message.as_deref(), given),
    ] {
        if then != now {
            return Outcome::Changed { reason: format!("the {what} is not the one the run was given") };
        }
    }
    if recorded.tools.as_ref() != Some(&tools) {
        return Outcome::Changed { reason: "the tools are not the ones the run was given".into() };
    }
    for (i, ((name, args, success, result), now)) in recorded.calls.iter().zip(&replayed).enumerate() {
        if (name, args, success, result) != (now.0, now.1, now.2, now.3) {
            return Outcome::Changed {
                reason: format!("call {} ({name}) gives another result today than in the run", i + 1),
            };
        }
    }
    if !out.record.passed || replayed.len() != recorded.calls.len() {
        return Outcome::Changed {
            reason: format!("the replay did not finish as the run did: {:?}", out.record.errors),
        };
    }
    let details = &out.record.solve_details;
    let literal = details.literal_checks_hold();
    let judged = |d: &[MatcherDetail]| -> Vec<String> {
        d.iter()
            .filter_map(|m| match m {
                MatcherDetail::Judge { criteria, .. } => Some(criteria.clone()),
                _ => None,
            })
            .collect()
    };
    let today = judged(&details.matcher_details);
    let solved = if today.is_empty() {
        literal
    } else if !literal {
        false
    } else if today == judged(&record.solve_details.matcher_details) {
        record
            .solve_details
            .matcher_details
            .iter()
            .filter(|m| matches!(m, MatcherDetail::Judge { .. }))
            .all(MatcherDetail::verdict)
    } else {
        return Outcome::NeedsJudge;
    };
    if solved == record.solved {
        Outcome::Same { solved }
    } else {
        let why = if solved { String::new() } else { failing_checks(&task, &out.record, true, explain) };
        Outcome::Flipped { solved, why }
    }
}

/// Regrade every run of `result` by `suite`'s tasks today, `jobs` replays
/// at a time, their vaults in `scratch`.
pub async fn regrade(
    result: &ResultFile,
    transcripts: &BTreeMap<String, Vec<u8>>,
    suite: &Suite,
    jobs: usize,
    scratch: Arc<Scratch>,
) -> Regrade {
    let explainers: Arc<BTreeMap<String, Explainer>> = Arc::new(
        suite
            .tasks
            .iter()
            .map(|t| {
                let compiled = crate::suite::compile::compile_task(&suite.root, t).and_then(Result::ok);
                (t.id.clone(), Explainer::new(compiled))
            })
            .collect(),
    );
    let root = Arc::new(suite.root.clone());
    let mut runs: Vec<Option<RunRegrade>> = Vec::new();
    let mut not_in_suite = Vec::new();
    let mut pending = Vec::new();
    for t in &result.tasks {
        let Some(task) = suite.tasks.iter().find(|s| s.id == t.id) else {
            not_in_suite.push(t.id.clone());
            continue;
        };
        for (i, record) in t.runs.iter().enumerate() {
            let slot = runs.len();
            let base = |outcome| RunRegrade { task: t.id.clone(), run: i + 1, recorded_solved: record.solved, outcome };
            if !record.passed {
                runs.push(Some(base(Outcome::NotAnswered)));
                continue;
            }
            let bytes = evidence::entry_name(record).and_then(|name| transcripts.get(&name));
            match bytes {
                None => runs.push(Some(base(Outcome::Unreplayable { reason: "its transcript is missing".into() }))),
                Some(bytes) => {
                    runs.push(None);
                    pending.push((slot, task.clone(), record.clone(), bytes.clone(), base(Outcome::NotAnswered)));
                }
            }
        }
    }
    let mut queue = pending.into_iter();
    let mut running = JoinSet::new();
    loop {
        while running.len() < jobs.max(1) {
            let Some((slot, task, record, bytes, mut run)) = queue.next() else { break };
            let (explainers, root, scratch) = (explainers.clone(), root.clone(), scratch.clone());
            running.spawn(async move {
                let toolbox = Toolbox::standard();
                let env = CellEnv {
                    suite_root: &root,
                    scratch: scratch.path(),
                    toolbox: &toolbox,
                    pricing: &Pricing::Free,
                    judge: None,
                    max_output_tokens: None,
                    limits: &Limits::default(),
                };
                run.outcome = replay(&env, &task, &record, &bytes, &explainers[&task.id]).await;
                (slot, run)
            });
        }
        match running.join_next().await {
            Some(Ok((slot, run))) => runs[slot] = Some(run),
            Some(Err(e)) => panic!("a regrade replay crashed (a fault in vaultbench): {e}"),
            None => break,
        }
    }
    Regrade { runs: runs.into_iter().map(|r| r.expect("every run is regraded")).collect(), not_in_suite }
}

/// The console report.
pub fn render(path: &Path, result: &ResultFile, r: &Regrade) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let count = |f: &dyn Fn(&Outcome) -> bool| r.runs.iter().filter(|x| f(&x.outcome)).count();
    let total = r.runs.len();
    let answered = total - count(&|o| matches!(o, Outcome::NotAnswered));
    let _ = writeln!(
        s,
        "Regraded {} ({} / {}, run {}) by today's checks: {total} runs, {answered} answered",
        path.display(),
        result.provider,
        result.model,
        result.run_id
    );
    let same = count(&|o| matches!(o, Outcome::Same { .. }));
    let flipped = r.flipped().count();
    let undetermined = r.undetermined().count();
    let _ = writeln!(
        s,
        "  {} unchanged ({} unanswered, which no check can solve), {flipped} flipped, {undetermined} undetermined",
        same + total - answered,
        total - answered
    );
    for run in &r.runs {
        let at = format!("{}#{}", run.task, run.run);
        let line = match &run.outcome {
            Outcome::Flipped { solved: true, .. } => format!("  FLIPPED {at}: unsolved → solved"),
            Outcome::Flipped { solved: false, why } => format!("  FLIPPED {at}: solved → unsolved: {why}"),
            Outcome::NeedsJudge => format!("  JUDGE   {at}: the literal checks hold; its judge criteria changed"),
            Outcome::Changed { reason } => format!("  RERUN   {at}: the task changed beyond its checks: {reason}"),
            Outcome::Unreplayable { reason } => format!("  CANNOT  {at}: {reason}"),
            _ => continue,
        };
        let _ = writeln!(s, "{line}");
    }
    for id in &r.not_in_suite {
        let _ = writeln!(s, "  GONE    {id}: no longer in the suite");
    }
    let _ = writeln!(
        s,
        "{}",
        if r.all_stand() {
            "Every recorded verdict stands under today's checks."
        } else {
            "Some recorded verdicts do not stand under today's checks (above)."
        }
    );
    s
}

/// `vaultbench regrade`: load, regrade, print; `Ok(true)` when every
/// verdict stands.
pub fn command(path: &Path, suite_root: &Path, json: bool, out: &mut dyn std::io::Write) -> Result<bool> {
    let result = crate::report::load_result(path)?;
    let transcripts = transcripts(path, &result)?;
    let suite = Suite::load(suite_root)?;
    let scratch =
        Arc::new(Scratch::create().with_context(|| {
            format!("creating a folder for temporary vaults in {}", std::env::temp_dir().display())
        })?);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    let r = runtime.block_on(regrade(&result, &transcripts, &suite, 8, scratch));
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
    } else {
        write!(out, "{}", render(path, &result, &r))?;
    }
    Ok(r.all_stand())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, json};

    use super::*;

    /// Any JSON value, small.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            "\\PC{0,16}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec(("[a-z_]{1,10}", inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    /// An event as a transcript holds it, each field right or any value.
    fn event() -> impl Strategy<Value = Value> {
        let field = |right: Value| prop_oneof![3 => Just(right), 1 => any_json()];
        (
            prop_oneof![Just("user_message"), Just("model_call"), Just("tool_call"), Just("model_error"), Just("x")],
            field(json!("read_file")),
            field(json!({"path": "eval-scratch/a.md"})),
            field(json!(true)),
            field(json!({"success": true, "data": "x"})),
            field(json!([{"id": "c", "name": "read_file", "arguments": {}, "malformed": "bad json"}])),
        )
            .prop_map(|(kind, name, arguments, success, result, tool_calls)| {
                json!({"type": kind, "turn": 1, "id": "c", "text": "hi", "name": name, "arguments": arguments,
                       "success": success, "result": result, "duration_us": 3, "tool_calls": tool_calls})
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(21), ..ProptestConfig::default() })]

        /// Whatever a transcript holds, reading it gives the calls to replay
        /// or the reason it cannot be replayed; it never panics.
        #[test]
        fn any_transcript_reads_or_says_why(events in prop::collection::vec(event(), 0..6), top in any_json()) {
            let mut t = json!({"system_prompt": "s", "tools": ["read_file"], "events": events});
            let _ = recorded(serde_json::to_vec(&t).unwrap().as_slice());
            t["events"] = top.clone();
            prop_assert!(recorded(serde_json::to_vec(&t).unwrap().as_slice()).is_err() || top.is_array());
            let _ = recorded(serde_json::to_vec(&top).unwrap().as_slice());
        }
    }

    #[test]
    fn a_malformed_call_or_a_broken_event_is_the_reason() {
        let t = json!({"events": [{"type": "model_call", "tool_calls": [{"name": "write_file", "malformed": "EOF"}]}]});
        let err = recorded(&serde_json::to_vec(&t).unwrap()).err().unwrap();
        assert!(err.contains("arguments to write_file were malformed"), "{err}");
        let t = json!({"events": [{"type": "tool_call", "name": 3}]});
        assert!(recorded(&serde_json::to_vec(&t).unwrap()).err().unwrap().starts_with("events[0]: "));
        let ok = json!({"events": [{"type": "user_message", "text": "hi"},
            {"type": "tool_call", "turn": 1, "id": "a", "name": "read_file", "arguments": {"path": "p"},
             "success": false, "result": {"success": false}, "duration_us": 1}]});
        let r = recorded(&serde_json::to_vec(&ok).unwrap()).unwrap();
        assert_eq!((r.user_message.as_deref(), r.calls.len()), (Some("hi"), 1));
    }
}
