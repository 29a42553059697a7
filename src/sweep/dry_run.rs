//! `run --dry-run`: what a sweep would cost, before it starts, without
//! contacting any server. It counts the runs and the model calls, and prices
//! them with `pricing.toml`:
//!
//! - **calls**: a run makes at most `maxTurns` model calls; a run that goes
//!   the way its task's reference trajectory goes makes that trajectory's
//!   steps plus one (its answer). Judge calls: at most one per `judge`
//!   matcher per run.
//! - **tokens**: each task's reference trajectory is replayed offline
//!   through the real agent and vault tools, and every call's request (the
//!   system prompt, the tool declarations, the conversation) and reply are
//!   measured, at four bytes a token (the estimate providers themselves use
//!   before counting). A task without a reference is measured on its first
//!   call only.
//! - **cost**: `expected` prices the replayed calls (no cache, so it errs
//!   high); the `upper bound` assumes every run uses all `maxTurns` calls,
//!   each with a prompt as large as its task's largest replayed one plus the
//!   conversation growth of every turn after it, and a reply at the output
//!   cap (`--max-output-tokens`, else [`UNCAPPED_OUTPUT_TOKENS`]). A model
//!   that writes or reads more than the reference does can still pass the
//!   expected figure; the bound holds as long as each turn adds no more than
//!   the reference's largest turn did.
//!
//! It prints; the sweep itself is the business of `command`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use serde_json::json;

use super::cell;
use crate::format::task::{Matcher, Task};
use crate::limits::{Limits, QuotaRates};
use crate::pricing::{Price, Pricing};
use crate::provider::reference::ReferenceSource;
use crate::provider::{BoxFuture, ChatRequest, Model, ModelError, ModelReply, ModelSource, Usage};
use crate::vault::Toolbox;

/// The reply assumed for the upper bound when nothing caps it: the largest
/// output of Gemini 2.5 models (65,536 tokens).
pub const UNCAPPED_OUTPUT_TOKENS: u64 = 65_536;

/// Bytes a token, for estimates.
const BYTES_PER_TOKEN: u64 = 4;

/// One call as measured: its prompt and its reply, in tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Call {
    pub prompt_tokens: u64,
    pub output_tokens: u64,
}

/// One task, measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEstimate {
    pub id: String,
    pub max_turns: u32,
    pub judge_matchers: usize,
    /// The calls of its reference replay (only the first when it has none).
    pub calls: Vec<Call>,
    pub has_reference: bool,
}

impl TaskEstimate {
    /// The prompt of call `turn` (from 1) for the upper bound: the largest
    /// replayed prompt, plus the largest growth between two replayed calls
    /// for every turn past the replayed ones.
    fn bound_prompt(&self, turn: usize) -> u64 {
        let largest = self.calls.iter().map(|c| c.prompt_tokens).max().unwrap_or(0);
        let growth = self.calls.windows(2).map(|w| w[1].prompt_tokens.saturating_sub(w[0].prompt_tokens)).max();
        // With one measured call, a turn is assumed to add that call's reply and as much again.
        let growth = growth.unwrap_or_else(|| self.calls.first().map_or(0, |c| 2 * c.output_tokens));
        let extra = turn.saturating_sub(self.calls.len()) as u64;
        largest.saturating_add(extra.saturating_mul(growth))
    }
}

/// Records the size of every request and reply of the model it wraps.
struct Measuring {
    inner: Arc<dyn Model>,
    calls: Mutex<Vec<Call>>,
}

fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

impl Model for Measuring {
    fn provider(&self) -> &str {
        self.inner.provider()
    }
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn reports_cache(&self) -> bool {
        false
    }
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async move {
            let sent = json!({ "system": request.system, "messages": request.messages, "tools": request.tools });
            let reply = self.inner.chat(request).await?;
            let answered = json!({ "text": reply.text, "tool_calls": reply.tool_calls });
            let call = Call {
                prompt_tokens: tokens(sent.to_string().len()),
                output_tokens: tokens(answered.to_string().len()),
            };
            self.calls.lock().unwrap_or_else(|e| e.into_inner()).push(call);
            Ok(reply)
        })
    }
}

/// A model that answers at once, for measuring the first call of a task
/// without a reference.
struct Silent;

impl Model for Silent {
    fn provider(&self) -> &str {
        "dry-run"
    }
    fn model_id(&self) -> &str {
        "dry-run"
    }
    fn reports_cache(&self) -> bool {
        false
    }
    fn chat<'a>(&'a self, _request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async {
            Ok(ModelReply { text: String::new(), tool_calls: vec![], usage: Usage::default(), raw: None })
        })
    }
}

/// Replay every task's reference (offline) and measure its calls.
pub async fn measure(
    suite_root: &Path,
    scratch: &Path,
    references: &Path,
    tasks: &[Task],
    limits: &Limits,
) -> Vec<TaskEstimate> {
    let source = ReferenceSource { dir: references.to_path_buf(), model_id: "reference".into() };
    let toolbox = Toolbox::standard();
    let env = cell::CellEnv {
        suite_root,
        scratch,
        toolbox: &toolbox,
        pricing: &Pricing::Free,
        judge: None,
        max_output_tokens: None,
        limits,
    };
    let mut out = Vec::new();
    for task in tasks {
        let (inner, has_reference): (Arc<dyn Model>, bool) = match source.model_for(task) {
            Ok(model) => (model, true),
            Err(_) => (Arc::new(Silent), false),
        };
        let measuring = Measuring { inner, calls: Mutex::new(Vec::new()) };
        cell::run(&env, task, &measuring, None).await;
        out.push(TaskEstimate {
            id: task.id.clone(),
            max_turns: task.max_turns,
            judge_matchers: task.output_matchers.iter().filter(|m| matches!(m, Matcher::Judge { .. })).count(),
            calls: measuring.calls.into_inner().unwrap_or_else(|e| e.into_inner()),
            has_reference,
        });
    }
    out
}

/// The figures of a dry run.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub runs: u64,
    pub max_calls: u64,
    /// Calls if every run goes like its reference (tasks with one).
    pub reference_calls: u64,
    pub tasks_without_reference: usize,
    pub max_judge_calls: u64,
    pub expected_usd: Option<f64>,
    pub upper_usd: Option<f64>,
    pub output_cap: u64,
}

fn dollars(price: &Price, prompt: u64, output: u64) -> f64 {
    (prompt as f64 * price.input + output as f64 * price.output) / 1e6
}

/// The sweep's figures: `k` runs of each task, priced at `pricing`.
pub fn estimate(tasks: &[TaskEstimate], k: u32, pricing: &Pricing, max_output_tokens: Option<u32>) -> Estimate {
    let k64 = u64::from(k);
    let output_cap = max_output_tokens.map_or(UNCAPPED_OUTPUT_TOKENS, u64::from);
    let price = match pricing {
        Pricing::Priced(p) => Some(*p),
        Pricing::Free => None,
    };
    let mut e = Estimate {
        runs: tasks.len() as u64 * k64,
        max_calls: 0,
        reference_calls: 0,
        tasks_without_reference: 0,
        max_judge_calls: 0,
        expected_usd: price.map(|_| 0.0),
        upper_usd: price.map(|_| 0.0),
        output_cap,
    };
    for t in tasks {
        e.max_calls += u64::from(t.max_turns) * k64;
        e.max_judge_calls += t.judge_matchers as u64 * k64;
        if t.has_reference {
            e.reference_calls += t.calls.len() as u64 * k64;
        } else {
            e.tasks_without_reference += 1;
        }
        if let Some(p) = &price {
            let replayed: f64 = t.calls.iter().map(|c| dollars(p, c.prompt_tokens, c.output_tokens)).sum();
            let upper: f64 = (1..=t.max_turns as usize).map(|turn| dollars(p, t.bound_prompt(turn), output_cap)).sum();
            *e.expected_usd.as_mut().expect("priced") += replayed * k as f64;
            *e.upper_usd.as_mut().expect("priced") += upper * k as f64;
        }
    }
    e
}

/// `$0.0123`, `$12.34`.
fn usd(v: f64) -> String {
    if v < 1.0 { format!("${v:.4}") } else { format!("${v:.2}") }
}

/// The dry run's report.
pub fn render(
    label: &str,
    tasks: &[TaskEstimate],
    k: u32,
    e: &Estimate,
    pricing_note: &str,
    quota: QuotaRates,
    requests_per_day: Option<f64>,
) -> String {
    let mut out =
        format!("Dry run of {label}: {} tasks x k={k} = {} runs. No server was contacted.\n\n", tasks.len(), e.runs);
    out.push_str(&format!("{:<44} {:>9} {:>10} {:>14}\n", "task", "max calls", "ref calls", "ref tokens in"));
    for t in tasks {
        let prompt: u64 = t.calls.iter().map(|c| c.prompt_tokens).sum();
        let reference = if t.has_reference { t.calls.len().to_string() } else { "-".into() };
        out.push_str(&format!("{:<44} {:>9} {:>10} {:>14}\n", t.id, t.max_turns, reference, prompt));
    }
    out.push_str(&format!(
        "\nModel calls: at most {} (every run to its maxTurns); {} if every run goes like its task's reference",
        e.max_calls, e.reference_calls
    ));
    if e.tasks_without_reference > 0 {
        out.push_str(&format!(" ({} tasks have no reference and are not counted there)", e.tasks_without_reference));
    }
    out.push('\n');
    if e.max_judge_calls > 0 {
        out.push_str(&format!(
            "Judge calls: at most {} (one per judge matcher of a run that passes)\n",
            e.max_judge_calls
        ));
    }
    out.push_str(&format!("Prices: {pricing_note}\n"));
    match (e.expected_usd, e.upper_usd) {
        (Some(expected), Some(upper)) => out.push_str(&format!(
            "Cost: {} if every run goes like its reference (4 bytes a token, no cache); upper bound {} (every run \
             to its maxTurns, each prompt as large as its task's largest plus the largest growth per turn, each \
             reply {} tokens); judge calls not included\n",
            usd(expected),
            usd(upper),
            e.output_cap
        )),
        _ => out.push_str("Cost: $0 (this provider and model are not priced)\n"),
    }
    if let Some(rpm) = quota.requests_per_minute {
        let minutes = |calls: u64| calls as f64 / rpm;
        out.push_str(&format!(
            "Quota: {rpm} requests a minute: at least {:.0} min if runs go like the references, at most {:.0} min\n",
            minutes(e.reference_calls),
            minutes(e.max_calls)
        ));
    }
    if let Some(rpd) = requests_per_day
        && (e.reference_calls as f64) > rpd
    {
        out.push_str(&format!(
            "warning: the quota allows {rpd} requests a day, and even runs that go like the references need {}: \
             the sweep will stop on the daily limit (run it over several days with --resume, or raise the tier)\n",
            e.reference_calls
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(calls: &[(u64, u64)], max_turns: u32) -> TaskEstimate {
        TaskEstimate {
            id: "t".into(),
            max_turns,
            judge_matchers: 1,
            calls: calls.iter().map(|&(p, o)| Call { prompt_tokens: p, output_tokens: o }).collect(),
            has_reference: true,
        }
    }

    #[test]
    fn the_figures_by_hand() {
        // $1 per 1M input tokens, $10 per 1M output tokens.
        let price = Pricing::Priced(Price { input: 1.0, cached_input: 0.1, output: 10.0 });
        let t = task(&[(1000, 10), (1500, 20), (1600, 30)], 5);
        let e = estimate(&[t], 2, &price, Some(100));
        assert_eq!((e.runs, e.max_calls, e.reference_calls, e.max_judge_calls), (2, 10, 6, 2));
        // Replayed: (1000 + 1500 + 1600) in, (10 + 20 + 30) out, twice.
        let expected = 2.0 * (4100.0 * 1.0 + 60.0 * 10.0) / 1e6;
        assert!((e.expected_usd.unwrap() - expected).abs() < 1e-12);
        // Bound: turns 1-3 at the largest prompt (1600), turns 4 and 5 adding the
        // largest growth (500) each; 100 output tokens a call; twice.
        let prompts = 1600.0 * 3.0 + 2100.0 + 2600.0;
        let upper = 2.0 * (prompts * 1.0 + 5.0 * 100.0 * 10.0) / 1e6;
        assert!((e.upper_usd.unwrap() - upper).abs() < 1e-12, "{} vs {upper}", e.upper_usd.unwrap());
        assert!(e.upper_usd.unwrap() >= e.expected_usd.unwrap());
        let free = estimate(&[task(&[(1000, 10)], 3)], 1, &Pricing::Free, None);
        assert_eq!((free.expected_usd, free.output_cap), (None, UNCAPPED_OUTPUT_TOKENS));
    }
}
