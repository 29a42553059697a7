//! `vaultbench regrade`: today's checks on a result's recorded runs.
//!
//! A task's checks are not part of what its model saw (the request, the
//! attached notes, the fixture, the tools), so a run's trajectory stands when
//! only the checks change; its verdict is then a function of that trajectory
//! and the new checks. Each run is replayed from its transcript: its tool
//! calls, in order, against a fresh copy of today's fixture through the real
//! vault tools, then its final answer; the vault and the answer of an
//! answered run are scored by today's task.
//!
//! The replay is only taken as the run when it saw what the run saw: the same
//! system prompt, tools and request, and every tool call giving the result the
//! transcript recorded (where the transcript cut a result, the fixture hash
//! the result records must be today's). A task changed beyond its checks
//! (another note in its fixture, another request) shows as a difference, and
//! that run needs a rerun; so does one stopped by a limit that has risen
//! since. A run that gave no answer, shown to have seen what it saw under the
//! same limits, can be solved by no check. Runs whose transcript cannot stand
//! for them (missing, of another run, its arguments cut) are unreadable.
//! Judge verdicts are taken from the result where today's judge criteria are
//! the ones the run was judged by; where they changed, a run the literal
//! checks pass needs the judge.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use serde_json::Value;
use tokio::task::JoinSet;

use super::cell::{self, CellEnv};
use super::check::failing_checks;
use super::command::Status;
use super::scratch::Scratch;
use super::signal::Interrupt;
use crate::agent::transcript::Event;
use crate::checks::explain::Explainer;
use crate::format::reference::{Reference, ReferenceStep};
use crate::format::result::{EndReason, MatcherDetail, ResultFile, RunRecord};
use crate::format::task::Task;
use crate::limits::Limits;
use crate::pricing::Pricing;
use crate::provider::reference::ReferenceModel;
use crate::report::{counted, evidence};
use crate::suite::Suite;
use crate::vault::Toolbox;

/// What today's checks say about one recorded run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The run gave no answer (time, turn limit, context, harness error)
    /// under limits today's task keeps: no check can solve it.
    NotAnswered,
    /// Today's checks give the recorded verdict.
    Same { solved: bool },
    /// Today's task gives the other verdict; `why` is what fails, in words,
    /// when it is now unsolved.
    Flipped {
        solved: bool,
        #[serde(skip_serializing_if = "String::is_empty")]
        why: String,
    },
    /// The literal checks hold and the judge's verdict is not on record for
    /// today's criteria: only the judge can say.
    NeedsJudge { reason: String },
    /// The replay did not see what the run saw (the task changed beyond its
    /// checks, or its limits now let the run go further): only a rerun can say.
    NeedsRerun { reason: String },
    /// The run's transcript cannot be replayed.
    Unreadable { reason: String },
}

impl Outcome {
    /// The word the console report puts before a run.
    fn label(&self) -> &'static str {
        match self {
            Outcome::NotAnswered => "NOT ANSWERED",
            Outcome::Same { .. } => "SAME",
            Outcome::Flipped { .. } => "FLIPPED",
            Outcome::NeedsJudge { .. } => "NEEDS JUDGE",
            Outcome::NeedsRerun { .. } => "NEEDS RERUN",
            Outcome::Unreadable { .. } => "UNREADABLE",
        }
    }

    /// Today's checks give no verdict for the run.
    fn undetermined(&self) -> bool {
        matches!(self, Outcome::NeedsJudge { .. } | Outcome::NeedsRerun { .. } | Outcome::Unreadable { .. })
    }
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
    /// (passed, solved) under today's task, where known.
    #[serde(skip)]
    now: Option<(bool, bool)>,
}

/// A result's figures, recorded and under today's checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub k: u32,
    pub recorded: (f64, f64),
    /// `(solve_k_rate, mean_solve_rate)`.
    pub today: (f64, f64),
}

/// Every run of a result, regraded.
#[derive(Debug, Clone, Serialize)]
pub struct Regrade {
    pub result: String,
    pub provider: String,
    pub model: String,
    pub run_id: String,
    /// The result's runs that gave an answer.
    pub answered: usize,
    /// The sweep was stopped before every run was made.
    pub interrupted: bool,
    pub runs: Vec<RunRegrade>,
    /// Tasks of the result that the suite no longer has, with their runs.
    pub not_in_suite: Vec<(String, usize)>,
    /// Tasks of the suite that the result does not hold (new, or renamed).
    pub not_in_result: Vec<String>,
    /// Tasks whose check source is missing, does not compile, or is not what
    /// their task file holds, with the problem: regrade grades by the task
    /// file (`suite compile` writes it).
    pub source_warnings: Vec<(String, String)>,
    /// solve^k and the mean solve rate, recorded and today, when every run
    /// has a verdict today.
    pub figures: Option<Figures>,
}

impl Regrade {
    pub fn flipped(&self) -> impl Iterator<Item = &RunRegrade> {
        self.runs.iter().filter(|r| matches!(r.outcome, Outcome::Flipped { .. }))
    }

    /// Runs whose verdict today's checks cannot give without a rerun or the judge.
    pub fn undetermined(&self) -> impl Iterator<Item = &RunRegrade> {
        self.runs.iter().filter(|r| r.outcome.undetermined())
    }

    /// Every recorded verdict stands under today's checks.
    pub fn all_stand(&self) -> bool {
        self.flipped().next().is_none() && self.undetermined().next().is_none() && self.not_in_suite.is_empty()
    }
}

/// A run's transcript, or why it cannot be had.
pub type Transcript = Result<Vec<u8>, String>;

/// The transcripts of `result`, read from `path`'s evidence: the archive a
/// baseline names, or the folder of transcripts next to a result file. A
/// file that cannot be read is that run's reason (missing ones are left
/// out); an archive that cannot be read gives its error, which becomes
/// every run's reason.
pub fn transcripts(path: &Path, result: &ResultFile) -> Result<Result<BTreeMap<String, Transcript>, String>> {
    let archive = evidence::archive_path(path, &result.run_id.0);
    if let Some(archive) = archive.as_ref().filter(|a| a.is_file()) {
        return Ok(evidence::read(archive)
            .map(|m| m.into_iter().map(|(name, bytes)| (name, Ok(bytes))).collect())
            .map_err(|e| format!("its evidence archive cannot be read: {e:#}")));
    }
    let dir = evidence::transcripts_dir(path);
    if !dir.is_dir() {
        bail!(
            "no transcripts for {}: neither its evidence archive {} nor the folder {} (regrade replays the runs' recorded tool calls)",
            path.display(),
            archive.map_or_else(|| "(none: the run id names no file)".into(), |a| a.display().to_string()),
            dir.display()
        );
    }
    let cap = Limits::default().max_input_file_bytes;
    let mut out = BTreeMap::new();
    for run in result.tasks.iter().flat_map(|t| &t.runs) {
        let Some(name) = evidence::entry_name(run) else { continue };
        let file = dir.join(&name);
        let read = match file.symlink_metadata() {
            Err(_) => continue,
            // A link could pull any file in as evidence.
            Ok(m) if !m.is_file() => Err(format!("its transcript {} is not a plain file", file.display())),
            Ok(_) => crate::fsio::read_capped(&file, cap).map_err(|e| format!("{e:#}")),
        };
        out.insert(name, read);
    }
    Ok(Ok(out))
}

/// What the transcript of a run says: whose run it is, what the model was
/// given, its tool calls with their recorded results, and its final answer.
struct Recorded {
    task_id: Option<String>,
    run: Option<u64>,
    run_id: Option<String>,
    system_prompt: Option<String>,
    tools: Option<Value>,
    user_message: Option<String>,
    calls: Vec<Call>,
    /// The text of the last model reply without tool calls.
    answer: Option<String>,
    /// Why the run ended, in the harness's words (`end.detail`).
    end: Option<String>,
}

/// One recorded tool call.
struct Call {
    name: String,
    arguments: Value,
    success: bool,
    result: Value,
    /// The transcript kept only the start of its result or arguments.
    cut: bool,
    /// The model's arguments could not be read; the call was refused.
    malformed: bool,
}

fn recorded(bytes: &[u8]) -> Result<Recorded, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the transcript cannot be read as JSON: {e}"))?;
    let events = value.get("events").and_then(Value::as_array).ok_or("the transcript has no `events` list")?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let mut out = Recorded {
        task_id: text("task_id"),
        run: value.get("run").and_then(Value::as_u64),
        run_id: text("run_id"),
        system_prompt: text("system_prompt"),
        tools: value.get("tools").cloned(),
        user_message: None,
        calls: Vec::new(),
        answer: None,
        end: value.get("end").and_then(|e| e.get("detail")).and_then(Value::as_str).map(str::to_string),
    };
    // Calls whose arguments the model garbled: refused, whatever they held.
    let mut malformed = std::collections::HashSet::new();
    for (i, e) in events.iter().enumerate() {
        let kind = e.get("type").and_then(Value::as_str);
        if kind == Some("model_call") {
            let calls = e.get("tool_calls").and_then(Value::as_array);
            for c in calls.into_iter().flatten() {
                if c.get("malformed").is_some_and(|m| !m.is_null()) {
                    malformed.insert(c.get("id").and_then(Value::as_str).unwrap_or_default().to_string());
                }
            }
            if calls.is_none_or(Vec::is_empty) {
                out.answer = e.get("text").and_then(Value::as_str).map(str::to_string);
            }
            continue;
        }
        let event: Event = match kind {
            Some("user_message" | "tool_call") => {
                serde_json::from_value(e.clone()).map_err(|err| format!("events[{i}]: {err}"))?
            }
            _ => continue,
        };
        match event {
            Event::UserMessage { text } => out.user_message = Some(text),
            Event::ToolCall { id, name, arguments, success, result, result_truncated, .. } => {
                let cut = result_truncated || arguments.as_str().is_some_and(|a| a.ends_with(" bytes in all)"));
                let malformed = malformed.contains(&id);
                out.calls.push(Call { name, arguments, success, result, cut, malformed })
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Today's limits against what the run used: `Err` is the outcome when
/// they decide it before any replay (a run stopped by a limit today's task
/// raised needs a rerun); `Ok(Some(why))` when a lowered limit would have cut
/// an answered run, which decides it once the replay shows the run stands;
/// `Ok(None)` when the run is for the replay to grade.
fn limits(task: &Task, record: &RunRecord, end: Option<&str>) -> Result<Option<String>, Decided> {
    let m = &record.metrics;
    if record.solved && !record.passed {
        let reason = "the result says it was solved without passing".to_string();
        return Err((Outcome::Unreadable { reason }, None));
    }
    if !record.passed {
        let rerun = |reason: String| Err((Outcome::NeedsRerun { reason }, None));
        // The limit the run was held to, as its transcript names it; else
        // the time it ran, which a timed-out run reached.
        let stated = |key: &str| -> Option<u64> {
            let rest = &end?[end?.find(key)? + key.len()..];
            rest.trim_start().strip_prefix('=')?.trim_start().split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
        };
        let timeout = stated("timeoutMs").unwrap_or(m.duration_ms);
        if record.timed_out == Some(true) && task.timeout_ms > timeout {
            return rerun(format!("it timed out at {timeout} ms; timeoutMs is now {}", task.timeout_ms));
        }
        let turns = stated("maxTurns").map_or(m.turns, |t| u32::try_from(t).unwrap_or(u32::MAX));
        if record.end_reason == Some(EndReason::TurnLimit) && task.max_turns > turns {
            return rerun(format!(
                "it stopped at {}; maxTurns is now {}",
                counted(turns as usize, "model call", "model calls"),
                task.max_turns
            ));
        }
        // Its limits stand: the replay shows whether what it saw does.
        return Ok(None);
    }
    let cut = if m.turns > task.max_turns {
        Some(format!("it answered after {} model calls; maxTurns is now {}", m.turns, task.max_turns))
    } else if m.duration_ms > task.timeout_ms {
        Some(format!("it answered after {} ms; timeoutMs is now {}", m.duration_ms, task.timeout_ms))
    } else {
        None
    };
    Ok(cut)
}

/// A run's outcome, with today's (passed, solved) where known.
type Decided = (Outcome, Option<(bool, bool)>);

/// One run to replay, with what was learnt of it before.
struct Job {
    task: Task,
    record: RunRecord,
    /// 1-based, and the run id its transcript must carry.
    n: usize,
    run_id: String,
    /// Its transcript, read.
    transcript: Recorded,
    /// The vault's files are those the run ran on (its recorded fixture or
    /// content hash is today's).
    fixture_known: bool,
    /// Why a limit lowered since would have cut its answer.
    cut_by_limit: Option<String>,
}

/// Replay one run against today's task (an answered one is then graded;
/// one that gave no answer only shown to have seen what it saw).
async fn replay(env: &CellEnv<'_>, job: Job, explain: &Explainer) -> Decided {
    let Job { task, record, n, run_id, transcript: recorded, fixture_known, cut_by_limit } = job;
    let (task, record) = (&task, &record);
    let unreadable = |reason: String| (Outcome::Unreadable { reason }, None);
    let rerun = |reason: String| (Outcome::NeedsRerun { reason }, None);
    if (recorded.task_id.as_deref(), recorded.run, recorded.run_id.as_deref())
        != (Some(task.id.as_str()), Some(n as u64), Some(run_id.as_str()))
    {
        return unreadable(format!(
            "the transcript is of another run (task {}, run {}, run id {})",
            recorded.task_id.as_deref().unwrap_or("?"),
            recorded.run.map_or_else(|| "?".into(), |r| r.to_string()),
            recorded.run_id.as_deref().unwrap_or("?")
        ));
    }
    if record.passed && recorded.answer.as_deref() != Some(record.response_text.as_str()) {
        return unreadable("the transcript's final answer is not the result's response text".into());
    }
    let mut steps = Vec::with_capacity(recorded.calls.len());
    for (i, call) in recorded.calls.iter().enumerate() {
        let tool = &call.name;
        // A refused call is replayed as one: its arguments did nothing.
        let args = if call.malformed { Value::String("(malformed)".into()) } else { call.arguments.clone() };
        if !call.malformed && !args.is_object() {
            let reason = if call.cut {
                format!("call {} ({tool}): its arguments were cut in the transcript (over 4,000 bytes of JSON)", i + 1)
            } else {
                format!("call {} ({tool}): its arguments are not a JSON object", i + 1)
            };
            return unreadable(reason);
        }
        steps.push(ReferenceStep { tool: tool.clone(), args });
    }
    if steps.len() as u64 != u64::from(record.metrics.tool_calls) {
        return unreadable(format!(
            "the transcript holds {}, the result {}",
            counted(steps.len(), "tool call", "tool calls"),
            record.metrics.tool_calls
        ));
    }
    // Today's limits were weighed against the run's before; the replay,
    // one call a turn, must not be cut by them.
    let mut task = task.clone();
    task.max_turns = task.max_turns.max(u32::try_from(steps.len() + 1).unwrap_or(u32::MAX));
    let model = ReferenceModel::new(Reference { steps, answer: record.response_text.clone() }, "regrade");
    let out = cell::run(env, &task, &model, None).await;
    // What the model was given: the system prompt (with the vault's memory
    // and skills), the tools and the request (with its attached notes).
    let given = out.transcript.events.iter().find_map(|e| match e {
        Event::UserMessage { text } => Some(text.as_str()),
        _ => None,
    });
    for (what, then, now) in [
        ("system prompt", recorded.system_prompt.as_deref(), Some(out.transcript.system_prompt.as_str())),
        ("request", recorded.user_message.as_deref(), given),
    ] {
        match then {
            None => return unreadable(format!("the transcript does not record the {what}")),
            Some(then) if Some(then) != now => return rerun(format!("the {what} is not the one the run was given")),
            Some(_) => {}
        }
    }
    let tools = serde_json::to_value(&out.transcript.tools).unwrap_or(Value::Null);
    if recorded.tools.as_ref() != Some(&tools) {
        return rerun("the tools offered are not the ones the run was given".into());
    }
    let replayed: Vec<_> = out
        .transcript
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { name, arguments, success, result, .. } => Some((name, arguments, success, result)),
            _ => None,
        })
        .collect();
    for (i, (call, now)) in recorded.calls.iter().zip(&replayed).enumerate() {
        let name = &call.name;
        let same = if call.malformed {
            // Refused then and now; the refusal's words are the harness's.
            name == now.0 && !call.success && !*now.2
        } else {
            (name, &call.arguments, &call.success, &call.result) == *now
        };
        if !same {
            return rerun(format!("call {} ({name}) answered otherwise in the replay than in the run", i + 1));
        }
        // A result the transcript cut shows only its start: the rest is the
        // run's only if the vault's files are those it ran on.
        if call.cut && !fixture_known {
            return rerun(format!(
                "call {} ({name}): the transcript kept only the start of it (over 4,000 bytes of JSON), and the result records no fixture hash that today's fixture matches, so the replay cannot show the run read the same",
                i + 1
            ));
        }
    }
    if !out.record.passed || replayed.len() != recorded.calls.len() {
        return rerun(format!("the replay did not finish as the run did: {:?}", out.record.errors));
    }
    if !record.passed {
        // It saw what the run saw, and today's limits are those that stopped
        // it: it gives no answer again, and no check can solve it.
        return (Outcome::NotAnswered, Some((false, false)));
    }
    // The run stands, and a limit lowered since would have cut its answer.
    if let Some(why) = cut_by_limit {
        let outcome =
            if record.solved { Outcome::Flipped { solved: false, why } } else { Outcome::Same { solved: false } };
        return (outcome, Some((false, false)));
    }
    let details = &out.record.solve_details;
    let literal = details.literal_checks_hold();
    let judged = |d: &[MatcherDetail]| -> Vec<(String, bool, bool)> {
        d.iter()
            .filter_map(|m| match m {
                MatcherDetail::Judge { criteria, verdict, error } => {
                    Some((criteria.clone(), *verdict, error.is_some()))
                }
                _ => None,
            })
            .collect()
    };
    let today = judged(&details.matcher_details);
    let then = judged(&record.solve_details.matcher_details);
    // Each of today's criteria takes the verdict given on the same words in
    // the run, wherever it stood among the task's judge matchers.
    let on_record: Option<Vec<&(String, bool, bool)>> =
        today.iter().map(|(criteria, ..)| then.iter().find(|(c, ..)| c == criteria)).collect();
    let solved = if today.is_empty() || !literal {
        literal
    } else if let Some(on_record) = on_record {
        if on_record.iter().any(|(_, _, failed)| *failed) {
            return (Outcome::NeedsJudge { reason: "the judge gave no verdict in the run".into() }, None);
        }
        on_record.iter().all(|(_, verdict, _)| *verdict)
    } else {
        return (Outcome::NeedsJudge { reason: "its judge criteria changed".into() }, None);
    };
    let outcome = if solved == record.solved {
        Outcome::Same { solved }
    } else {
        let why = if solved { String::new() } else { failing_checks(&task, &out.record, false, explain) };
        Outcome::Flipped { solved, why }
    };
    (outcome, Some((true, solved)))
}

/// Regrade every run of `result` by `suite`'s tasks today, `jobs` replays
/// at a time, their vaults in `scratch`. `transcripts` is the evidence, or
/// why it cannot be read.
pub async fn regrade(
    path: &Path,
    result: &ResultFile,
    transcripts: &Result<BTreeMap<String, Transcript>, String>,
    suite: &Suite,
    jobs: usize,
    scratch: Arc<Scratch>,
    stop: impl std::future::Future<Output = Interrupt>,
) -> Result<Regrade, Interrupt> {
    // A suite with check sources (ours) compiles each task's from it; a
    // suite without (the reference harness's) has only its task files.
    let has_sources = crate::suite::compile::checks_dir(&suite.root).is_dir();
    let mut source_warnings = Vec::new();
    let mut explainers = BTreeMap::new();
    for t in &suite.tasks {
        let compiled = match crate::suite::compile::compile_task(&suite.root, t) {
            None if has_sources => {
                source_warnings.push((t.id.clone(), "it has no check source".to_string()));
                None
            }
            None => None,
            Some(Err(_)) => {
                let problem = "its check source does not compile (`vaultbench suite compile --check` says why)";
                source_warnings.push((t.id.clone(), problem.to_string()));
                None
            }
            Some(Ok(c)) => {
                if !crate::suite::compile::agrees(t, &c) {
                    let problem = "its check source is not what its task file holds (run `vaultbench suite compile`)";
                    source_warnings.push((t.id.clone(), problem.to_string()));
                }
                Some(c)
            }
        };
        explainers.insert(t.id.clone(), Explainer::new(compiled));
    }
    let explainers = Arc::new(explainers);
    let root = Arc::new(suite.root.clone());
    let mut runs: Vec<RunRegrade> = Vec::new();
    let mut not_in_suite = Vec::new();
    let mut pending = Vec::new();
    for t in &result.tasks {
        let Some(task) = suite.tasks.iter().find(|s| s.id == t.id) else {
            not_in_suite.push((t.id.clone(), t.runs.len()));
            continue;
        };
        let run_id = result.run_id_of(&t.id).map_or_else(String::new, |id| id.0.clone());
        // The vault's files are the run's when the fixture hash it recorded is
        // today's, or its whole task is (the content hash covers the fixture;
        // results older than the fixture hash have only that).
        let same = |recorded: &Option<String>, today: Result<String>| {
            recorded.is_some() && recorded.as_ref() == today.ok().as_ref()
        };
        let fixture_known = same(&t.fixture_hash, crate::suite::hash::fixture_hash(&suite.root, task))
            || same(&t.content_hash, crate::suite::hash::content_hash(&suite.root, task));
        for (i, record) in t.runs.iter().enumerate() {
            let mut run = RunRegrade {
                task: t.id.clone(),
                run: i + 1,
                recorded_solved: record.solved,
                outcome: Outcome::NotAnswered,
                now: None,
            };
            // Each transcript is read once, here: its words on the limits
            // decide some runs before any replay.
            let transcript = match transcripts {
                Err(e) => Err(e.clone()),
                Ok(map) => match evidence::entry_name(record).and_then(|name| map.get(&name)) {
                    None => Err("its transcript is missing".to_string()),
                    Some(read) => read.as_ref().map_err(Clone::clone).and_then(|bytes| recorded(bytes)),
                },
            };
            let end = transcript.as_ref().ok().and_then(|r| r.end.as_deref());
            let cut = match limits(task, record, end) {
                Err((outcome, now)) => {
                    (run.outcome, run.now) = (outcome, now);
                    runs.push(run);
                    continue;
                }
                Ok(cut) => cut,
            };
            match transcript {
                Err(reason) => run.outcome = Outcome::Unreadable { reason },
                Ok(transcript) => pending.push((
                    runs.len(),
                    Job {
                        task: task.clone(),
                        record: record.clone(),
                        n: i + 1,
                        run_id: run_id.clone(),
                        transcript,
                        fixture_known,
                        cut_by_limit: cut,
                    },
                )),
            }
            runs.push(run);
        }
    }
    let mut queue = pending.into_iter();
    let mut running = JoinSet::new();
    // Which run each replay grades, to report one that crashed.
    let mut slots = std::collections::HashMap::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        while running.len() < jobs.max(1) {
            let Some((slot, job)) = queue.next() else { break };
            let (explainers, root, scratch) = (explainers.clone(), root.clone(), scratch.clone());
            let handle = running.spawn(async move {
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
                let explain = &explainers[&job.task.id];
                (slot, replay(&env, job, explain).await)
            });
            slots.insert(handle.id(), slot);
        }
        let joined = tokio::select! {
            joined = running.join_next() => joined,
            signal = &mut stop => {
                // Every replay ends before the runtime does: a task cut off
                // by the runtime's shutdown would find its timers gone.
                running.abort_all();
                while running.join_next().await.is_some() {}
                return Err(signal);
            }
        };
        match joined {
            Some(Ok((slot, (outcome, now)))) => (runs[slot].outcome, runs[slot].now) = (outcome, now),
            Some(Err(e)) => {
                let slot = slots[&e.id()];
                let reason = format!("its replay crashed (a fault in vaultbench): {e}");
                (runs[slot].outcome, runs[slot].now) = (Outcome::NeedsRerun { reason }, None);
            }
            None => break,
        }
    }
    // A sweep of some tasks (`--task PREFIX`, `--shard I/N`) is not missing
    // the others: the suite's tasks are held to its selection, as `run` made it.
    let mut selected: Vec<&str> = suite
        .tasks
        .iter()
        .map(|s| s.id.as_str())
        .filter(|id| result.task_filter.as_deref().is_none_or(|prefix| id.starts_with(prefix)))
        .collect();
    selected.sort_unstable();
    if let Some(shard) = result.shard.as_deref().and_then(|s| s.parse::<super::shard::Shard>().ok()) {
        selected = shard.select(selected);
    }
    // An interrupted sweep is missing the tasks it did not reach; it says so.
    let not_in_result = selected
        .into_iter()
        .filter(|id| !result.interrupted && !result.tasks.iter().any(|t| t.id == *id))
        .map(str::to_string)
        .collect();
    let answered = result.tasks.iter().flat_map(|t| &t.runs).filter(|r| r.passed).count();
    let figures = (not_in_suite.is_empty() && runs.iter().all(|r| r.now.is_some())).then(|| {
        let mut today = result.clone();
        let mut now = runs.iter().map(|r| r.now.expect("every run has a verdict"));
        for run in today.tasks.iter_mut().flat_map(|t| t.runs.iter_mut()) {
            (run.passed, run.solved) = now.next().expect("a verdict per run");
        }
        let today = crate::report::aggregate::rederive(&today);
        let recorded = crate::report::aggregate::rederive(result);
        let pair = |r: &ResultFile| (r.aggregate.solve_k_rate, r.aggregate.mean_solve_rate);
        Figures { k: recorded.aggregate.n_runs, recorded: pair(&recorded), today: pair(&today) }
    });
    Ok(Regrade {
        interrupted: result.interrupted,
        answered,
        result: path.display().to_string(),
        provider: result.provider.clone(),
        model: result.model.clone(),
        run_id: result.run_id.0.clone(),
        runs,
        not_in_suite,
        not_in_result,
        source_warnings,
        figures,
    })
}

/// The console report.
pub fn render(r: &Regrade) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let count = |f: &dyn Fn(&Outcome) -> bool| r.runs.iter().filter(|x| f(&x.outcome)).count();
    let gone: usize = r.not_in_suite.iter().map(|(_, n)| n).sum();
    let total = r.runs.len() + gone;
    let unanswered = count(&|o| matches!(o, Outcome::NotAnswered));
    let _ = writeln!(
        s,
        "Regraded {} ({} / {}, run {}) by today's checks: {}, {} answered",
        r.result,
        r.provider,
        r.model,
        r.run_id,
        counted(total, "run", "runs"),
        r.answered
    );
    for (id, problem) in &r.source_warnings {
        let _ = writeln!(s, "  warning: {id}: {problem}; regrade grades by the task file");
    }
    if r.interrupted {
        let _ = writeln!(s, "  note: the sweep was interrupted; these are the runs it finished");
    }
    let mut tally = vec![format!("{} unchanged", count(&|o| matches!(o, Outcome::Same { .. })) + unanswered)];
    for (n, what) in [
        (r.flipped().count(), "flipped"),
        (count(&|o| matches!(o, Outcome::NeedsRerun { .. })), "need a rerun"),
        (count(&|o| matches!(o, Outcome::NeedsJudge { .. })), "need the judge"),
        (count(&|o| matches!(o, Outcome::Unreadable { .. })), "unreadable"),
        (gone, if gone == 1 { "run of a task no longer in the suite" } else { "runs of tasks no longer in the suite" }),
    ] {
        if n > 0 {
            tally.push(format!("{n} {what}"));
        }
    }
    let _ = writeln!(s, "  {}", tally.join(", "));
    if unanswered > 0 {
        let _ = writeln!(
            s,
            "  ({} gave no answer, within limits today's tasks keep: no check can solve {})",
            counted(unanswered, "run", "runs"),
            if unanswered == 1 { "it" } else { "them" }
        );
    }
    for run in &r.runs {
        let at = format!("{}#{}", run.task, run.run);
        let detail = match &run.outcome {
            Outcome::Flipped { solved: true, .. } => "unsolved → solved".to_string(),
            Outcome::Flipped { solved: false, why } => format!("solved → unsolved: {why}"),
            Outcome::NeedsJudge { reason } => format!("the literal checks hold; {reason}"),
            Outcome::NeedsRerun { reason } => format!("the replay cannot stand for the run: {reason}"),
            Outcome::Unreadable { reason } => reason.clone(),
            _ => continue,
        };
        let _ = writeln!(s, "  {:<12} {at}: {detail}", run.outcome.label());
    }
    for (id, n) in &r.not_in_suite {
        let _ = writeln!(s, "  {:<12} {id}: no longer in the suite ({})", "GONE", counted(*n, "run", "runs"));
    }
    if !r.not_in_result.is_empty() {
        let _ = writeln!(s, "  Not in this result (new or renamed since it ran): {}", r.not_in_result.join(", "));
    }
    if let Some(f) = &r.figures {
        let _ = writeln!(
            s,
            "  solve^{} {:.1}% → {:.1}%, mean solve rate {:.1}% → {:.1}%",
            f.k, f.recorded.0, f.today.0, f.recorded.1, f.today.1
        );
    }
    let flipped = r.flipped().count();
    let undetermined = r.undetermined().count() + gone;
    let verdict = match (flipped, undetermined) {
        (0, 0) if r.answered == 0 => {
            "Every recorded verdict stands under today's checks (no run answered, so no check change can move them)."
                .to_string()
        }
        (0, 0) => "Every recorded verdict stands under today's checks.".to_string(),
        (f, 0) => format!("{} under today's checks.", counted(f, "verdict flips", "verdicts flip")),
        (0, u) => format!(
            "{} no verdict under today's checks without a rerun or the judge.",
            counted(u, "run has", "runs have")
        ),
        (f, u) => format!(
            "{} under today's checks; {} no verdict without a rerun or the judge.",
            counted(f, "verdict flips", "verdicts flip"),
            counted(u, "run has", "runs have")
        ),
    };
    let _ = writeln!(s, "{verdict}");
    s
}

/// `vaultbench regrade`: load, regrade, print; `Ok` when every verdict
/// stands. Ctrl-C or SIGTERM stops it, its temporary vaults removed.
pub fn command(path: &Path, suite_root: &Path, json: bool, out: &mut dyn std::io::Write) -> Result<Status> {
    let result = crate::report::load_result(path)?;
    let mut ids: Vec<&str> = result.tasks.iter().map(|t| t.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(pair) = ids.windows(2).find(|p| p[0] == p[1]) {
        bail!("{}: task `{}` appears twice; a result holds each task once", path.display(), pair[0]);
    }
    let transcripts = transcripts(path, &result)?;
    let suite = Suite::load(suite_root)?;
    let scratch =
        Arc::new(Scratch::create().with_context(|| {
            format!("creating a folder for temporary vaults in {}", std::env::temp_dir().display())
        })?);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    // The signal handlers are installed inside the runtime.
    let done = runtime.block_on(async {
        regrade(path, &result, &transcripts, &suite, 8, scratch.clone(), super::signal::listen()).await
    });
    drop(runtime);
    let r = match done {
        Ok(r) => r,
        Err(signal) => return Ok(Status::Interrupted(signal)),
    };
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
    } else {
        write!(out, "{}", render(&r))?;
    }
    Ok(if r.all_stand() { Status::Ok } else { Status::Failed })
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
    fn a_refused_call_a_cut_one_and_a_broken_event() {
        let t = json!({"events": [
            {"type": "model_call", "tool_calls": [{"id": "a", "name": "write_file", "malformed": "EOF"}]},
            {"type": "tool_call", "turn": 1, "id": "a", "name": "write_file", "arguments": {}, "success": false,
             "result": {"success": false}, "duration_us": 1},
            {"type": "tool_call", "turn": 2, "id": "b", "name": "read_file", "arguments": {"path": "p"}, "success": true,
             "result": "{\"data\": \"… (9000 bytes in all)", "result_truncated": true, "duration_us": 1},
            {"type": "model_call", "tool_calls": [], "text": "Done."}],
            "end": {"reason": "answered", "detail": "final answer after 3 model calls", "duration_ms": 1}});
        let r = recorded(&serde_json::to_vec(&t).unwrap()).unwrap();
        let flags: Vec<(bool, bool)> = r.calls.iter().map(|c| (c.malformed, c.cut)).collect();
        assert_eq!(flags, [(true, false), (false, true)]);
        assert_eq!((r.answer.as_deref(), r.end.as_deref()), (Some("Done."), Some("final answer after 3 model calls")));
        let t = json!({"events": [{"type": "tool_call", "name": 3}]});
        assert!(recorded(&serde_json::to_vec(&t).unwrap()).err().unwrap().starts_with("events[0]: "));
    }

    /// The limits a run was held to are read from its transcript's words.
    #[test]
    fn a_run_stopped_by_a_limit_that_rose_needs_a_rerun() {
        let task: Task = serde_json::from_value(json!({"id": "t", "description": "d", "userMessage": "u",
            "difficulty": "T1", "category": "c", "maxTurns": 8, "timeoutMs": 2502}))
        .unwrap();
        let mut run: RunRecord = serde_json::from_value(json!({"id": "t-1", "passed": false, "solved": false,
            "response_text": "", "errors": [], "transcript_path": "x", "timedOut": true,
            "metrics": {"turns": 3, "tool_calls": 2, "prompt_tokens": 0, "cached_tokens": 0, "cache_ratio": 0,
                        "output_tokens": 0, "cost_usd": 0, "loop_fires": 0, "duration_ms": 2503, "tool_list": []},
            "solve_details": {"expected_tools_met": true, "forbidden_tools_clean": true, "matchers_pass": false,
                "matcher_details": [], "judge_attempted": false, "judge_available": false, "judge_skipped": false,
                "vault_assertions_pass": true, "vault_assertion_details": [], "tool_budget_ok": true}}))
        .unwrap();
        // `None`: the limits stand, and the replay decides.
        let outcome = |run: &RunRecord, end: Option<&str>| limits(&task, run, end).err().map(|(o, _)| o);
        // It ran 2503 ms under a 2500 ms limit; 2502 ms is more time.
        let end = "no final answer within timeoutMs = 2500 ms: model call 3 was cut off";
        assert!(matches!(outcome(&run, Some(end)), Some(Outcome::NeedsRerun { .. })));
        // Without its words, the time it ran is the limit it reached.
        assert_eq!(outcome(&run, None), None);
        run.timed_out = None;
        run.end_reason = Some(EndReason::TurnLimit);
        let stopped = |turns: u32| format!("maxTurns = {turns} model calls made without a final answer");
        assert!(matches!(outcome(&run, Some(&stopped(6))), Some(Outcome::NeedsRerun { .. })));
        assert_eq!(outcome(&run, Some(&stopped(8))), None);
        run.solved = true;
        assert!(matches!(outcome(&run, None), Some(Outcome::Unreadable { .. })), "solved without passing");
    }
}
