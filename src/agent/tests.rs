//! The agent loop against scripted models.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::limits::Limits;
use crate::pricing::Price;
use crate::provider::{BoxFuture, ModelError, ModelReply, ToolCall};
use crate::vault::tools::testing::TestVault;

/// Replies in order; the last one repeats. Optionally waits before each.
struct Scripted {
    replies: Mutex<Vec<Result<ModelReply, ModelError>>>,
    seen: Mutex<Vec<usize>>,
    /// The conversation of each request, in bytes of JSON.
    sent_bytes: Mutex<Vec<usize>>,
    cache: bool,
    delay: Duration,
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall { id: format!("c-{name}"), name: name.into(), arguments: args, malformed: None }
}

fn reply(text: &str, calls: Vec<ToolCall>, usage: (u64, Option<u64>, u64)) -> Result<ModelReply, ModelError> {
    Ok(ModelReply {
        text: text.into(),
        tool_calls: calls,
        usage: Usage { prompt_tokens: usage.0, cached_tokens: usage.1, output_tokens: usage.2 },
        raw: None,
    })
}

impl Scripted {
    fn new(replies: Vec<Result<ModelReply, ModelError>>) -> Scripted {
        Scripted {
            replies: Mutex::new(replies),
            seen: Mutex::new(Vec::new()),
            sent_bytes: Mutex::new(Vec::new()),
            cache: false,
            delay: Duration::ZERO,
        }
    }
}

impl Model for Scripted {
    fn provider(&self) -> &str {
        "scripted"
    }
    fn model_id(&self) -> &str {
        "s"
    }
    fn reports_cache(&self) -> bool {
        self.cache
    }
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(request.messages.len());
            self.sent_bytes.lock().unwrap().push(crate::jsnum::json_len(request.messages));
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            let mut replies = self.replies.lock().unwrap();
            if replies.len() > 1 { replies.remove(0) } else { replies[0].clone() }
        })
    }
}

fn request(max_turns: u32) -> Request<'static> {
    Request {
        user_message: "What is the budget?",
        context_files: &[],
        max_turns,
        timeout: Duration::from_secs(5),
        max_output_tokens: None,
        limits: &LIMITS,
    }
}

static LIMITS: std::sync::LazyLock<Limits> = std::sync::LazyLock::new(Limits::default);

fn vault() -> TestVault {
    TestVault::new(&[("eval-scratch/budget.md", "The approved budget is 88,000 marks.\n")])
}

fn run_with(model: &Scripted, v: &TestVault, req: Request<'_>, pricing: &Pricing) -> Outcome {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(super::run(model, &v.vault, &Toolbox::standard(), req, pricing))
}

#[test]
fn tool_calls_are_executed_and_fed_back_until_a_final_answer() {
    let v = vault();
    let model = Scripted::new(vec![
        reply("", vec![call("find_files_by_content", json!({"query": "budget"}))], (100, None, 10)),
        reply("Reading.", vec![call("read_file", json!({"path": "eval-scratch/budget.md"}))], (300, None, 20)),
        reply("It is 88,000 marks.", vec![], (200, None, 5)),
    ]);
    let out = run_with(&model, &v, request(15), &Pricing::Free);
    assert_eq!(out.ending, Ending::Answered);
    assert_eq!(out.response_text, "It is 88,000 marks.");
    assert_eq!(out.tool_list, ["find_files_by_content", "read_file"]);
    assert!(out.errors.is_empty());
    // user; +assistant+result; +assistant+result.
    assert_eq!(*model.seen.lock().unwrap(), [1, 3, 5]);
    let m = &out.metrics;
    assert_eq!((m.turns, m.tool_calls, m.prompt_tokens, m.output_tokens), (3, 2, 300, 35));
    assert_eq!((m.cached_tokens, m.cache_ratio, m.cost_usd, m.loop_fires), (None, None, 0.0, 0));
    let tool_events: Vec<&Event> =
        out.transcript.events.iter().filter(|e| matches!(e, Event::ToolCall { .. })).collect();
    match tool_events[1] {
        Event::ToolCall { name, success, result, .. } => {
            assert_eq!(name, "read_file");
            assert!(success);
            assert_eq!(result["data"]["content"], "The approved budget is 88,000 marks.\n");
        }
        _ => unreachable!(),
    }
    assert_eq!(out.transcript.end.reason, "answered");
    assert_eq!(out.transcript.tools.len(), 14);
}

#[test]
fn cache_figures_come_from_the_largest_prompt_and_cost_from_every_call() {
    let v = vault();
    let mut model = Scripted::new(vec![
        reply("", vec![call("list_files", json!({"path": ""}))], (10_000, Some(0), 100)),
        reply("done", vec![], (12_000, Some(9_000), 200)),
    ]);
    model.cache = true;
    let price = Pricing::Priced(Price { input: 0.30, cached_input: 0.03, output: 2.50 });
    let out = run_with(&model, &v, request(15), &price);
    let m = &out.metrics;
    assert_eq!((m.prompt_tokens, m.cached_tokens, m.cache_ratio), (12_000, Some(9_000), Some(0.75)));
    // (10000*.3 + 100*2.5) + (3000*.3 + 9000*.03 + 200*2.5) = 3250 + 1670 per 1M.
    assert_eq!(m.cost_usd, 0.00492);
}

#[test]
fn turn_limit_is_a_model_failure_recorded_in_the_transcript() {
    let v = vault();
    let model = Scripted::new(vec![reply("", vec![call("list_files", json!({"path": "eval-scratch"}))], (1, None, 1))]);
    let out = run_with(&model, &v, request(4), &Pricing::Free);
    assert_eq!(out.ending, Ending::TurnLimit);
    assert!(out.errors.is_empty(), "hitting maxTurns is the model's failure, not the harness's");
    assert_eq!(out.metrics.turns, 4);
    // The fourth identical list_files was refused as a loop.
    assert_eq!(out.metrics.loop_fires, 1);
    assert_eq!(out.transcript.end.reason, "turn_limit");
    assert!(out.transcript.end.detail.contains("maxTurns = 4"));
}

#[test]
fn timeout_keeps_what_was_recorded() {
    let v = vault();
    let mut model = Scripted::new(vec![reply("", vec![call("list_files", json!({"path": ""}))], (1, None, 1))]);
    model.delay = Duration::from_millis(40);
    let req = Request { timeout: Duration::from_millis(100), ..request(50) };
    let out = run_with(&model, &v, req, &Pricing::Free);
    assert_eq!(out.ending, Ending::TimedOut);
    assert!(out.errors.is_empty());
    assert!(out.metrics.turns >= 2, "{}", out.metrics.turns);
    assert!(!out.tool_list.is_empty());
    assert_eq!(out.transcript.end.reason, "timed_out");
}

#[test]
fn a_model_error_is_a_harness_error() {
    let v = vault();
    let model = Scripted::new(vec![
        reply("", vec![call("list_files", json!({"path": ""}))], (5, None, 1)),
        Err(ModelError::Fatal("HTTP 401: bad key".into())),
    ]);
    let out = run_with(&model, &v, request(15), &Pricing::Free);
    assert_eq!(out.ending, Ending::HarnessError);
    assert_eq!(out.errors, ["model call 2 failed: HTTP 401: bad key"]);
    assert_eq!(out.metrics.turns, 2);
    assert!(out.transcript.events.iter().any(|e| matches!(e, Event::ModelError { turn: 2, .. })));
}

#[test]
fn a_context_overflow_fails_the_run_without_a_harness_error() {
    let v = vault();
    let model = Scripted::new(vec![
        reply("", vec![call("list_files", json!({"path": ""}))], (5, None, 1)),
        Err(ModelError::ContextOverflow("openai: the prompt exceeded the model's context window".into())),
    ]);
    let out = run_with(&model, &v, request(15), &Pricing::Free);
    assert_eq!(out.ending, Ending::ContextExceeded);
    assert!(out.errors.is_empty(), "the model's limit is not a harness fault: {:?}", out.errors);
    assert_eq!(out.transcript.end.reason, "context_exceeded");
    assert!(out.transcript.events.iter().any(|e| matches!(e, Event::ModelError { turn: 2, .. })));
}

#[test]
fn a_model_still_thinking_at_the_deadline_times_out_without_a_harness_error() {
    let v = vault();
    let model = Scripted::new(vec![
        reply("", vec![call("list_files", json!({"path": ""}))], (5, None, 1)),
        Err(ModelError::OutOfTime("openai: the model was still working on its answer after 1.0 s".into())),
    ]);
    let out = run_with(&model, &v, request(15), &Pricing::Free);
    assert_eq!(out.ending, Ending::TimedOut);
    assert!(out.errors.is_empty(), "the model's time, not a harness fault: {:?}", out.errors);
    assert_eq!(out.transcript.end.reason, "timed_out");
    assert!(out.transcript.end.detail.contains("model call 2 was cut off: openai: the model was still working"));
}

#[test]
fn every_model_call_is_told_the_runs_deadline_and_token_sums_never_overflow() {
    struct Deadlines(Mutex<Vec<Option<std::time::Instant>>>);
    impl Model for Deadlines {
        fn provider(&self) -> &str {
            "d"
        }
        fn model_id(&self) -> &str {
            "d"
        }
        fn reports_cache(&self) -> bool {
            false
        }
        fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
            let mut seen = self.0.lock().unwrap();
            seen.push(request.deadline);
            let calls = if seen.len() < 3 { vec![call("list_files", json!({"path": ""}))] } else { vec![] };
            let usage = Usage { prompt_tokens: u64::MAX, cached_tokens: None, output_tokens: u64::MAX };
            Box::pin(async move { Ok(ModelReply { text: "done".into(), tool_calls: calls, usage, raw: None }) })
        }
    }
    let v = vault();
    let model = Deadlines(Mutex::new(Vec::new()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let started = std::time::Instant::now();
    let out = rt.block_on(super::run(&model, &v.vault, &Toolbox::standard(), request(15), &Pricing::Free));
    assert_eq!(out.ending, Ending::Answered);
    assert_eq!(out.metrics.output_tokens, u64::MAX);
    let seen = model.0.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let first = seen[0].expect("a deadline");
    assert!(seen.iter().all(|d| *d == Some(first)), "one deadline for the run: {seen:?}");
    let after = first.duration_since(started);
    assert!(after >= Duration::from_secs(5) && after < Duration::from_millis(5500), "{after:?}");
}

#[test]
fn malformed_and_unknown_calls_are_fed_back_as_tool_errors() {
    let v = vault();
    let mut bad = call("read_file", json!({}));
    bad.malformed = Some("arguments were not valid JSON: `{path:`".into());
    let model = Scripted::new(vec![
        reply("", vec![bad, call("teleport", json!({"to": "mars"}))], (1, None, 1)),
        reply("I could not read it.", vec![], (1, None, 1)),
    ]);
    let out = run_with(&model, &v, request(15), &Pricing::Free);
    assert_eq!(out.ending, Ending::Answered);
    assert_eq!(out.tool_list, ["read_file", "teleport"]);
    let errors: Vec<String> = out
        .transcript
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { success: false, result, .. } => Some(result["error"].as_str().unwrap().to_string()),
            _ => None,
        })
        .collect();
    assert!(errors[0].starts_with("malformed arguments for `read_file`"), "{errors:?}");
    assert!(errors[1].starts_with("unknown tool `teleport`"), "{errors:?}");
}

#[test]
fn context_files_reach_the_first_message() {
    let v = vault();
    let model = Scripted::new(vec![reply("88,000", vec![], (1, None, 1))]);
    let files = vec!["eval-scratch/budget.md".to_string()];
    let req = Request { context_files: &files, ..request(5) };
    let out = run_with(&model, &v, req, &Pricing::Free);
    match &out.transcript.events[0] {
        Event::UserMessage { text } => assert!(text.contains("<context_file path=\"eval-scratch/budget.md\">")),
        other => panic!("{other:?}"),
    }
    let files = vec!["eval-scratch/missing.md".to_string()];
    let out = run_with(&model, &v, Request { context_files: &files, ..request(5) }, &Pricing::Free);
    assert_eq!(out.ending, Ending::HarnessError);
    assert!(out.errors[0].contains("eval-scratch/missing.md"));
}

fn tool_errors(out: &Outcome) -> Vec<String> {
    out.transcript
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { success: false, result, .. } => Some(result["error"].as_str().unwrap_or("").to_string()),
            _ => None,
        })
        .collect()
}

/// Hundreds of reads of a big note in one reply: each answer over the cap of
/// one result is a short tool error; answers that fit fill the conversation
/// up to its cap, and then the run ends, never sending more than the cap.
#[test]
fn many_reads_in_one_reply_stay_within_the_caps() {
    let limits = Limits { max_tool_result_bytes: 20_000, max_conversation_bytes: 200_000, ..Limits::default() };
    let big = "x".repeat(30_000);
    let small = "y".repeat(9_000);
    let v = TestVault::new(&[("eval-scratch/big.md", &big), ("eval-scratch/small.md", &small)]);
    // Spelled differently each time, so the loop detector does not step in.
    let read =
        |i: usize, note: &str| call("read_file", json!({"path": format!("eval-scratch/{}{note}", "./".repeat(i))}));
    let model = Scripted::new(vec![
        reply("", (0..100).map(|i| read(i, "big.md")).collect(), (1, None, 1)),
        reply("", (0..100).map(|i| read(i, "small.md")).collect(), (1, None, 1)),
        reply("done", vec![], (1, None, 1)),
    ]);
    let out = run_with(&model, &v, Request { limits: &limits, ..request(15) }, &Pricing::Free);
    let errors = tool_errors(&out);
    assert!(errors[0].contains("over the cap of 20000 bytes on one tool result"), "{}", errors[0]);
    assert_eq!(out.ending, Ending::ContextExceeded, "{}", out.transcript.end.detail);
    assert!(out.transcript.end.detail.starts_with("the conversation is full"), "{}", out.transcript.end.detail);
    assert!(out.errors.is_empty(), "the model's own doing, not a harness fault");
    assert!(errors.iter().any(|e| e.contains("does not fit: the conversation is at")), "{errors:?}");
    // Every request sent stayed within the cap.
    let sent = model.sent_bytes.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|&b| b <= 200_000), "{sent:?}");
    assert!(out.tool_list.len() < 200, "the run stopped once the conversation was full");
}

#[test]
fn a_reply_that_overflows_the_conversation_ends_the_run() {
    let limits = Limits { max_conversation_bytes: 50_000, ..Limits::default() };
    let v = vault();
    let huge = call("write_file", json!({"path": "eval-scratch/x.md", "content": "z".repeat(60_000)}));
    let model = Scripted::new(vec![reply("", vec![huge], (1, None, 1)), reply("done", vec![], (1, None, 1))]);
    let out = run_with(&model, &v, Request { limits: &limits, ..request(15) }, &Pricing::Free);
    assert_eq!(out.ending, Ending::ContextExceeded);
    assert!(out.transcript.end.detail.contains("past its cap of 50000 bytes"), "{}", out.transcript.end.detail);
    assert!(out.tool_list.is_empty(), "the calls of a reply that does not fit are not run");
    assert!(!v.exists("eval-scratch/x.md"));
}

/// The transcript keeps a bounded copy of big arguments, in both places
/// they appear; the model's conversation keeps the whole call.
#[test]
fn big_arguments_are_cut_in_the_transcript() {
    let v = vault();
    let content = "w".repeat(100_000);
    let model = Scripted::new(vec![
        reply("", vec![call("write_file", json!({"path": "eval-scratch/w.md", "content": content}))], (1, None, 1)),
        reply("done", vec![], (1, None, 1)),
    ]);
    let out = run_with(&model, &v, request(15), &Pricing::Free);
    assert_eq!(out.ending, Ending::Answered);
    assert_eq!(v.read("eval-scratch/w.md").len(), 100_000);
    let stored = crate::jsnum::json_len(&out.transcript);
    assert!(stored < 20_000, "the transcript holds {stored} bytes");
    assert!(model.sent_bytes.lock().unwrap()[1] > 100_000, "the model saw its whole call");
}

/// A reply of thousands of tool calls cannot hold the run past its
/// deadline: calls stop being run when the time is up.
#[test]
fn the_deadline_holds_while_tools_run() {
    let v = TestVault::new(&[("eval-scratch/big.md", &"line of text\n".repeat(100_000))]);
    let searches: Vec<ToolCall> =
        (0..10_000).map(|i| call("find_files_by_content", json!({"query": format!("needle{i}")}))).collect();
    let model = Scripted::new(vec![reply("", searches, (1, None, 1)), reply("done", vec![], (1, None, 1))]);
    let started = std::time::Instant::now();
    let out = run_with(&model, &v, Request { timeout: Duration::from_millis(300), ..request(15) }, &Pricing::Free);
    assert!(started.elapsed() < Duration::from_millis(1_000), "{:?}", started.elapsed());
    assert_eq!(out.ending, Ending::TimedOut);
    assert!(out.transcript.end.detail.contains("stopped before tool call"), "{}", out.transcript.end.detail);
    assert!(out.tool_list.len() < 10_000);
}

/// A catastrophic pattern in a search is cut at the regex budget with a tool
/// error naming it; the run goes on and answers.
#[test]
fn a_catastrophic_search_is_a_tool_error_and_the_run_goes_on() {
    let limits = Limits { regex_timeout: Duration::from_millis(100), ..Limits::default() };
    // Short enough that the abandoned matching thread (the library's
    // fallback; the command line kills a worker process) ends soon.
    let v = TestVault::new(&[("eval-scratch/long.md", &format!("{}!\n", "a".repeat(25)))]);
    let search = call("find_files_by_content", json!({"query": "(a+)+$", "useRegex": true}));
    let model = Scripted::new(vec![reply("", vec![search], (1, None, 1)), reply("done", vec![], (1, None, 1))]);
    let out = run_with(&model, &v, Request { limits: &limits, ..request(15) }, &Pricing::Free);
    assert_eq!(out.ending, Ending::Answered);
    let errors = tool_errors(&out);
    assert!(errors[0].contains("/(a+)+$/i did not finish within"), "{errors:?}");
    assert!(errors[0].contains("eval-scratch/long.md"), "{errors:?}");
}
