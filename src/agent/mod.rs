//! The embedded agent: one run of one request against a model, with the
//! vault tools. It sends the system prompt, the tool declarations and the
//! conversation; executes the tool calls the model asks for and feeds the
//! answers back; and stops at a final answer (a reply without tool calls),
//! after `maxTurns` model calls, or at `timeoutMs`. It records a transcript
//! and the run's metrics.
//!
//! It holds the run to its [`Limits`]: the deadline while tools run (the
//! tools check it too, see `Vault::check_time`), the cap on one tool result
//! fed back to the model and the cap on the whole conversation (see
//! `budget`).
//!
//! It knows nothing of rubrics or scoring (the runner scores what it
//! returns), nor of retries (a model error here is final: the provider's
//! retry wrapper has already tried again).

mod budget;
pub mod prompt;
pub mod transcript;

use std::time::{Duration, Instant};

use budget::Conversation;

use crate::format::result::RunMetrics;
use crate::jsnum;
use crate::limits::{Limits, deadline_after};
use crate::pricing::{self, Pricing};
use crate::provider::{ChatRequest, Message, Model, ModelError, Rejected, ToolSpec, Usage};
use crate::vault::{LoopDetector, Toolbox, Vault};

pub use transcript::{End, Event, Transcript};

/// What the agent is asked to do: the request and its limits, no rubric.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub user_message: &'a str,
    /// Vault paths attached to the first message.
    pub context_files: &'a [String],
    pub max_turns: u32,
    pub timeout: Duration,
    /// A cap on the tokens of each model reply (`None`: the provider's default).
    pub max_output_tokens: Option<u32>,
    /// The caps and deadlines the run is held to.
    pub limits: &'a Limits,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Answered,
    TurnLimit,
    TimedOut,
    /// A model call failed (after the provider's retries) or the first
    /// message could not be built: a harness fault, not the model's.
    HarnessError,
    /// The conversation outgrew the model's context window: the model's
    /// limit, so the run fails without a harness error.
    ContextExceeded,
}

impl Ending {
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Answered => "answered",
            Ending::TurnLimit => "turn_limit",
            Ending::TimedOut => "timed_out",
            Ending::HarnessError => "harness_error",
            Ending::ContextExceeded => "context_exceeded",
        }
    }
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub response_text: String,
    /// Tool names in call order (every call the model made, refused ones included).
    pub tool_list: Vec<String>,
    /// Harness faults; empty when the run ended on the model's behaviour.
    pub errors: Vec<String>,
    pub ending: Ending,
    pub metrics: RunMetrics,
    pub transcript: Transcript,
    /// When the run's time was up (its start plus `timeoutMs`): scoring
    /// takes its own deadline from it.
    pub deadline: Instant,
    /// The server refused a model call for good (a bad key, an unknown
    /// model): the run's harness error says so too; a sweep counts these.
    pub rejected: Option<Rejected>,
}

/// The conversation so far. It lives outside the future that drives it so
/// that a timeout, which drops that future, keeps everything recorded.
struct State {
    started: Instant,
    messages: Vec<Message>,
    events: Vec<Event>,
    /// Usage of each completed model call.
    usages: Vec<Usage>,
    /// Model calls sent, including one that failed or was cut by the timeout.
    turns: u32,
    tool_list: Vec<String>,
    loops: LoopDetector,
    response_text: String,
    errors: Vec<String>,
    conversation: Conversation,
    rejected: Option<Rejected>,
}

impl State {
    fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}

/// Run `request` against `model` in `vault`.
pub async fn run(
    model: &dyn Model,
    vault: &Vault,
    toolbox: &Toolbox,
    request: Request<'_>,
    pricing: &Pricing,
) -> Outcome {
    let started = Instant::now();
    let deadline = deadline_after(started, request.timeout);
    let vault = vault.with_deadline(deadline);
    let mut state = State {
        started,
        messages: Vec::new(),
        events: Vec::new(),
        usages: Vec::new(),
        turns: 0,
        tool_list: Vec::new(),
        loops: LoopDetector::default(),
        response_text: String::new(),
        errors: Vec::new(),
        conversation: Conversation::new(request.limits),
        rejected: None,
    };
    let system = prompt::system_prompt(&vault);
    let specs = toolbox.specs();
    let first = prompt::first_message(&vault, request.user_message, request.context_files).and_then(|first| {
        // The task's own text (prompt, memory, attached notes) must leave room to work.
        state.conversation.start(&system, &specs, &first)?;
        Ok(first)
    });
    let (ending, detail) = match first {
        Err(e) => {
            state.errors.push(e.clone());
            (Ending::HarnessError, e)
        }
        Ok(first) => {
            state.events.push(Event::UserMessage { text: first.clone() });
            state.messages.push(Message::User { text: first });
            let conversation = converse(&mut state, model, &vault, toolbox, &system, &specs, &request, deadline);
            // The conversation stops itself at the deadline: each turn checks
            // it, and a model call in flight is told it (see
            // `ChatRequest::deadline`), which takes a moment to tell a slow
            // model from a hung server. This outer limit, a grace later, is
            // the backstop.
            let backstop = request.timeout.saturating_add(request.limits.timeout_grace);
            match tokio::time::timeout(backstop, conversation).await {
                Ok(end) => end,
                Err(_) => (Ending::TimedOut, timeout_detail(&request)),
            }
        }
    };
    let duration_ms = state.elapsed_ms();
    let metrics = metrics(&state, model.reports_cache(), pricing, duration_ms);
    Outcome {
        response_text: state.response_text,
        tool_list: state.tool_list,
        errors: state.errors,
        rejected: state.rejected,
        ending,
        metrics,
        transcript: Transcript {
            system_prompt: system,
            tools: specs.into_iter().map(|s| s.name).collect(),
            events: state.events,
            end: End { reason: ending.as_str().to_string(), detail, duration_ms },
        },
        deadline,
    }
}

fn timeout_detail(request: &Request<'_>) -> String {
    format!("no final answer within timeoutMs = {} ms", request.timeout.as_millis())
}

#[allow(clippy::too_many_arguments)]
async fn converse(
    state: &mut State,
    model: &dyn Model,
    vault: &Vault,
    toolbox: &Toolbox,
    system: &str,
    specs: &[ToolSpec],
    limits: &Request<'_>,
    deadline: Instant,
) -> (Ending, String) {
    let max_turns = limits.max_turns;
    let timed_out = |why: &str| (Ending::TimedOut, format!("{} ({why})", timeout_detail(limits)));
    loop {
        if state.turns >= max_turns {
            return (Ending::TurnLimit, format!("maxTurns = {max_turns} model calls made without a final answer"));
        }
        if Instant::now() >= deadline {
            return timed_out("the time was up after the tool calls");
        }
        state.turns += 1;
        let turn = state.turns;
        let at_ms = state.elapsed_ms();
        let sent = Instant::now();
        let request = ChatRequest {
            system,
            messages: &state.messages,
            tools: specs,
            temperature: None,
            max_output_tokens: limits.max_output_tokens,
            deadline: Some(deadline),
        };
        let reply = match model.chat(request).await {
            Ok(reply) => reply,
            // The model, not the server, was still at work: the run timed out.
            Err(ModelError::OutOfTime(why)) => {
                let message = format!("{}: model call {turn} was cut off: {why}", timeout_detail(limits));
                state.events.push(Event::ModelError { turn, at_ms, message: message.clone() });
                return (Ending::TimedOut, message);
            }
            Err(e) => {
                let message = format!("model call {turn} failed: {e}");
                state.events.push(Event::ModelError { turn, at_ms, message: message.clone() });
                if matches!(e, ModelError::ContextOverflow(_)) {
                    return (Ending::ContextExceeded, message);
                }
                if let ModelError::Rejected(r) = e {
                    state.rejected = Some(r);
                }
                state.errors.push(message.clone());
                return (Ending::HarnessError, message);
            }
        };
        state.usages.push(reply.usage);
        // The transcript keeps a bounded copy of each call's arguments; the
        // conversation keeps the only whole one.
        state.events.push(Event::ModelCall {
            turn,
            at_ms,
            duration_ms: sent.elapsed().as_millis() as u64,
            usage: reply.usage,
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.iter().map(transcript::stored_call).collect(),
        });
        if reply.tool_calls.is_empty() {
            // Moved, not copied: the conversation ends here, so the answer
            // is not added to it (one copy less of the largest text).
            state.response_text = reply.text;
            return (Ending::Answered, format!("final answer after {turn} model calls"));
        }
        let message = Message::Assistant { text: reply.text, tool_calls: reply.tool_calls, raw: reply.raw };
        if let Err(why) = state.conversation.add_reply(&message) {
            // The model's own output outgrew the conversation: its limit, as
            // when a context window overflows, not a harness fault.
            return (Ending::ContextExceeded, why);
        }
        let Message::Assistant { tool_calls, .. } = &message else { unreachable!("built just above") };
        let mut results = Vec::with_capacity(tool_calls.len());
        let mut stopped = None;
        for (n, call) in tool_calls.iter().enumerate() {
            if Instant::now() >= deadline {
                let why = format!("stopped before tool call {} of {} in model call {turn}", n + 1, tool_calls.len());
                stopped = Some(timed_out(&why));
                break;
            }
            let began = Instant::now();
            // Tools run on this task (handing the thread over to the other
            // runs meanwhile) and stop at the deadline themselves, so no tool
            // is still writing to the vault once the run has ended.
            let answer = crate::blocking::run(|| {
                toolbox.dispatch(vault, &mut state.loops, &call.name, &call.arguments, call.malformed.as_deref())
            });
            let content = state.conversation.admit_result(&call.name, answer.content);
            let success = content.get("success") == Some(&serde_json::Value::Bool(true));
            let (result, result_truncated) = transcript::stored_result(&content);
            let (arguments, _) = transcript::stored_result(&call.arguments);
            state.tool_list.push(call.name.clone());
            state.events.push(Event::ToolCall {
                turn,
                id: call.id.clone(),
                name: call.name.clone(),
                arguments,
                success,
                result,
                result_truncated,
                loop_fired: answer.loop_fired,
                duration_us: began.elapsed().as_micros() as u64,
            });
            results.push(Message::ToolResult { call_id: call.id.clone(), name: call.name.clone(), content });
            if let Err(why) = state.conversation.check_room() {
                stopped = Some((Ending::ContextExceeded, why));
                break;
            }
        }
        state.messages.push(message);
        state.messages.extend(results);
        if let Some(end) = stopped {
            return end;
        }
        // Let a timeout or cancellation in between turns, even against a
        // model that answers without ever waiting.
        tokio::task::yield_now().await;
    }
}

fn metrics(state: &State, reports_cache: bool, pricing: &Pricing, duration_ms: u64) -> RunMetrics {
    // The largest prompt, and the cached part of that same call.
    let peak = state.usages.iter().fold(None::<&Usage>, |best, u| match best {
        Some(b) if b.prompt_tokens >= u.prompt_tokens => Some(b),
        _ => Some(u),
    });
    let prompt_tokens = peak.map_or(0, |u| u.prompt_tokens);
    let cached_tokens = reports_cache.then(|| peak.and_then(|u| u.cached_tokens).unwrap_or(0));
    let cache_ratio = cached_tokens
        .filter(|_| prompt_tokens > 0)
        .map(|c| jsnum::round(c as f64 / prompt_tokens as f64, 3))
        .or(if reports_cache { Some(0.0) } else { None });
    RunMetrics {
        turns: state.turns,
        tool_calls: state.tool_list.len() as u32,
        prompt_tokens,
        cached_tokens,
        cache_ratio,
        // Server figures: summed without overflowing.
        output_tokens: state.usages.iter().fold(0u64, |sum, u| sum.saturating_add(u.output_tokens)),
        cost_usd: pricing::cost(pricing, &state.usages),
        loop_fires: state.loops.fires(),
        duration_ms,
        tool_list: state.tool_list.clone(),
    }
}

#[cfg(test)]
mod tests;
