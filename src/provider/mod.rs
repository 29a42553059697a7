//! Models behind one trait. A provider turns a provider-neutral conversation
//! ([`ChatRequest`]) into its wire format, sends it, and turns the answer back
//! into a [`ModelReply`]. The agent loop only ever sees these types.
//!
//! Adding a provider touches one file (its module) plus a line in the
//! registry ([`build`] and [`build_http`], here). Providers report transient
//! faults (429, 5xx, resets, timeouts) as [`ModelError::Transient`] so that
//! retrying is decided in one place (`retry`); the HTTP plumbing they share
//! (`http`, `secrets`, `wire`) sits below them and knows none of them.

pub mod gemini;
pub mod http;
pub mod ollama;
pub mod openai;
pub mod quota;
pub mod retry;
mod secrets;
mod wire;

pub mod adversary;
pub mod reference;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::format::task::Task;
use crate::limits::Limits;

pub use crate::score::BoxFuture;

/// A tool the model may call: name, description and JSON-schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object (`{"type": "object", "properties": {...}, "required": [...]}`).
    pub parameters: Value,
}

/// One tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (generated when the wire format has none).
    pub id: String,
    pub name: String,
    /// The arguments object. When the model sent arguments that are not a
    /// JSON object, this holds `{}` and `malformed` says what was wrong, so
    /// the agent can answer with a tool error instead of failing the run.
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malformed: Option<String>,
}

/// A turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        text: String,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
        /// The provider's own rendering of this turn (e.g. Gemini `content`
        /// with thought signatures), replayed verbatim when the provider needs it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<Value>,
    },
    /// The result of one tool call, in call order.
    ToolResult {
        call_id: String,
        name: String,
        /// `{"success": true, "data": ...}` or `{"success": false, "error": ...}`.
        content: Value,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    /// 0 for judges; `None` leaves the provider's default.
    pub temperature: Option<f64>,
    /// A cap on the tokens one reply may generate; `None` leaves the
    /// provider's default (which for a local server can be "until the
    /// context is full").
    pub max_output_tokens: Option<u32>,
    /// The run's own deadline (`timeoutMs`), if any. A call still waiting
    /// for the model then ends with [`ModelError::OutOfTime`] when the model
    /// was still working, or a harness error when the server was at fault
    /// (see `http`).
    pub deadline: Option<Instant>,
}

/// Token usage of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    /// `None` when the provider reports no cache figure.
    pub cached_tokens: Option<u64>,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// See [`Message::Assistant::raw`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The server refused the request for its rate limits (HTTP 429):
    /// worth sending again once the quota allows, without counting it
    /// among the call's attempts (see `retry` and `quota`).
    #[error("{message}")]
    RateLimited {
        message: String,
        /// The wait the server asked for (`retry-after-ms`, `Retry-After`,
        /// Gemini's `RetryInfo.retryDelay`), when it named one.
        retry_after: Option<Duration>,
    },
    /// Worth retrying: HTTP 408 or 5xx, a reset connection, a timeout.
    #[error("{message}")]
    Transient {
        message: String,
        /// From a `Retry-After` header, when the server sent one.
        retry_after: Option<Duration>,
    },
    /// Not worth retrying: bad credentials, a request the server rejects, an
    /// answer that cannot be read. The run ends with a harness error.
    #[error("{0}")]
    Fatal(String),
    /// The conversation no longer fits the model's context window. Not worth
    /// retrying, and not a harness fault: the model cannot take this task as
    /// served, so the run fails (it does not pass) without a harness error.
    #[error("{0}")]
    ContextOverflow(String),
    /// The run's deadline passed while the model was still working on its
    /// answer (the server was alive and had not started answering). Not a
    /// harness fault: the run timed out, as it would between calls.
    #[error("{0}")]
    OutOfTime(String),
    /// The server refused the request for a reason no retry and no other
    /// task can change (a bad key, a model it does not know): a harness
    /// error for the run, and a sweep that meets the same one a few times
    /// stops (see `sweep`).
    #[error("{}", .0.message)]
    Rejected(Rejected),
}

/// Why a server refused a request for good, read from its status and its
/// error body as each provider documents them (see `http`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rejection {
    /// The key is missing, wrong or revoked (HTTP 401; Gemini's 400 with
    /// reason `API_KEY_INVALID`; OpenAI's `invalid_api_key`).
    Unauthorized,
    /// The key is valid but not allowed this (HTTP 403; Gemini's
    /// `PERMISSION_DENIED`, `FAILED_PRECONDITION` for billing or region).
    Forbidden,
    /// The server does not know the model (HTTP 404; OpenAI's
    /// `model_not_found`; Ollama's "model not found, try pulling it").
    UnknownModel,
    /// The server rejects the request as vaultbench sends it (HTTP 400
    /// `INVALID_ARGUMENT`, `invalid_request_error`, 422).
    InvalidArgument,
}

/// A refusal with the server's own words (keys scrubbed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub rejection: Rejection,
    /// `provider: HTTP status: the server's message`.
    pub message: String,
}

impl Rejection {
    /// What to do about it, for `provider`.
    pub fn advice(self, provider: &str) -> String {
        let key = match provider {
            "gemini" => "GEMINI_API_KEY (https://aistudio.google.com/apikey)",
            "openai" => "OPENAI_API_KEY",
            _ => "the server's API key",
        };
        match self {
            Rejection::Unauthorized => format!("check {key}: the server does not accept it"),
            Rejection::Forbidden => format!(
                "the key ({key}) is valid but may not use this model or API: check the project's access, billing and region"
            ),
            Rejection::UnknownModel => match provider {
                "ollama" => "check --model against `ollama list`, or pull it first (`ollama pull MODEL`)".into(),
                "openai" => "check --model against the server's /v1/models, and OPENAI_BASE_URL".into(),
                _ => "check --model against the provider's model list".into(),
            },
            Rejection::InvalidArgument => "the server rejects the request as vaultbench sends it for this model: \
                 check that the model supports function calling, and --max-output-tokens"
                .into(),
        }
    }
}

/// A model under test (or a judge), reached through its provider's protocol.
pub trait Model: Send + Sync {
    /// `gemini`, `ollama`, `openai`, `reference`, ...
    fn provider(&self) -> &str;
    fn model_id(&self) -> &str;
    /// Whether the provider reports cached prompt tokens (null cache figures otherwise).
    fn reports_cache(&self) -> bool;
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>>;
    /// The quota this model's requests wait for, when it is reached over a
    /// rate-limited connection (the HTTP providers); `None` otherwise.
    fn quota(&self) -> Option<Arc<quota::Quota>> {
        None
    }
    /// The model ids the server offers (Gemini `models.list`, OpenAI
    /// `/v1/models`, Ollama `/api/tags`), to suggest near ones for an id it
    /// does not know. Default: none.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// Whether the model runs on a local server that loads it on first use,
    /// so a sweep warms it up before the first timed run (see [`warm_up`]).
    fn loads_on_first_use(&self) -> bool {
        false
    }
    /// Unload the other models the server holds in memory, waiting until
    /// they are gone; the names unloaded. Default: nothing to unload.
    fn unload_others(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// What warming a model up did: models unloaded first, and how long the
/// throwaway generation that loaded it took (never counted in any run).
#[derive(Debug, Clone)]
pub struct WarmUp {
    pub unloaded: Vec<String>,
    pub took: Duration,
}

/// Load `model` the way the reference harness does before its first timed
/// task: unload the server's other resident models (so a sweep of several
/// models never holds two at once), then one throwaway generation of a
/// single token, whose answer is dropped.
pub async fn warm_up(model: &dyn Model) -> Result<WarmUp, ModelError> {
    let unloaded = model.unload_others().await?;
    let started = Instant::now();
    let messages = [Message::User { text: "Reply with the word OK.".into() }];
    let request = ChatRequest {
        system: "",
        messages: &messages,
        tools: &[],
        // The server's defaults: some models refuse a temperature.
        temperature: None,
        max_output_tokens: Some(1),
        deadline: None,
    };
    model.chat(request).await?;
    Ok(WarmUp { unloaded, took: started.elapsed() })
}

/// Where a sweep gets the model for each run. HTTP providers hand out one
/// shared client ([`Shared`]); the reference provider a model per task.
pub trait ModelSource: Send + Sync {
    fn provider(&self) -> &str;
    fn model_id(&self) -> &str;
    /// The model that runs `task`.
    fn model_for(&self, task: &Task) -> anyhow::Result<Arc<dyn Model>>;
    /// Fail before a sweep starts when some of `tasks` cannot be run
    /// (e.g. a missing reference trajectory). Default: nothing to check.
    fn check(&self, _tasks: &[&Task]) -> anyhow::Result<()> {
        Ok(())
    }
    /// The quota shared by every run's requests, if the models have one.
    fn quota(&self) -> Option<Arc<quota::Quota>> {
        None
    }
    /// See [`Model::list_models`].
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// Warm the model up before the first timed run (see [`warm_up`]);
    /// `None` when it needs none (hosted APIs, replayed trajectories).
    fn warm_up(&self) -> BoxFuture<'_, Option<Result<WarmUp, ModelError>>> {
        Box::pin(async { None })
    }
}

/// One model for every task.
pub struct Shared(pub Arc<dyn Model>);

impl ModelSource for Shared {
    fn provider(&self) -> &str {
        self.0.provider()
    }
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn model_for(&self, _task: &Task) -> anyhow::Result<Arc<dyn Model>> {
        Ok(self.0.clone())
    }
    fn quota(&self) -> Option<Arc<quota::Quota>> {
        self.0.quota()
    }
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        self.0.list_models()
    }
    fn warm_up(&self) -> BoxFuture<'_, Option<Result<WarmUp, ModelError>>> {
        Box::pin(async { if self.0.loads_on_first_use() { Some(warm_up(self.0.as_ref()).await) } else { None } })
    }
}

/// What providers may need from the command line.
#[derive(Debug, Clone, Default)]
pub struct ProviderOptions {
    /// The reference provider's trajectories (`<suite>/references` by default).
    pub references_dir: PathBuf,
    /// The caps, deadlines and retry budget of the HTTP providers.
    pub limits: Limits,
}

/// Explicit settings that take precedence over the environment, e.g. the
/// judge's own key (`EVAL_JUDGE_API_KEY`) and endpoint.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub api_key: Option<String>,
    pub base_url: Option<String>,
}

/// The providers this build knows.
pub const PROVIDERS: &[&str] = &["gemini", "ollama", "openai", "reference"];

/// What `run --help` says about each provider and the environment it reads.
pub fn environment_help() -> String {
    format!(
        "Providers (--provider): {}.\n  \
         gemini     Google's Gemini API. GEMINI_API_KEY (required), GEMINI_BASE_URL (default {}).\n  \
         ollama     Ollama's /api/chat. OLLAMA_HOST (default {}).\n  \
         openai     any OpenAI-compatible /v1/chat/completions (llama.cpp, vLLM, LM Studio...). \
         OPENAI_BASE_URL (required), OPENAI_API_KEY (optional).\n  \
         reference  replays <suite>/references/<task>.json offline; no network, no key.\n\n\
         The judge of `judge` matchers: EVAL_JUDGE_PROVIDER (default gemini), EVAL_JUDGE_MODEL (default {}), \
         EVAL_JUDGE_API_KEY (falls back to GEMINI_API_KEY), EVAL_JUDGE_BASE_URL. With the reference provider \
         and no judge configured, the offline reference judge replays the verdicts recorded for the references.",
        PROVIDERS.join(", "),
        gemini::DEFAULT_BASE_URL,
        ollama::DEFAULT_HOST,
        crate::judge::DEFAULT_MODEL,
    )
}

/// The providers reached over HTTP.
pub const HTTP_PROVIDERS: &[&str] = &["gemini", "ollama", "openai"];

/// The registry: a model source for `provider` and `model_id`.
pub fn build(
    provider: &str,
    model_id: Option<&str>,
    options: &ProviderOptions,
) -> anyhow::Result<Arc<dyn ModelSource>> {
    match provider {
        "reference" => Ok(Arc::new(reference::ReferenceSource {
            dir: options.references_dir.clone(),
            model_id: model_id.unwrap_or("reference").to_string(),
        })),
        p if HTTP_PROVIDERS.contains(&p) => {
            let model_id = model_id.ok_or_else(|| anyhow::anyhow!("provider `{p}` needs a model: pass --model ID"))?;
            Ok(Arc::new(Shared(build_http(p, model_id, &Overrides::default(), &options.limits)?)))
        }
        other => anyhow::bail!("unknown provider `{other}`; this build knows: {}", PROVIDERS.join(", ")),
    }
}

/// The registry of the HTTP providers: `provider`'s client for `model_id`,
/// configured from the environment unless `overrides` says otherwise, held
/// to `limits` and wrapped in their retry policy.
pub fn build_http(
    provider: &str,
    model_id: &str,
    overrides: &Overrides,
    limits: &Limits,
) -> anyhow::Result<Arc<dyn Model>> {
    if model_id.trim().is_empty() {
        anyhow::bail!("no model id given for provider `{provider}`: pass --model");
    }
    let inner: Arc<dyn Model> = match provider {
        "gemini" => Arc::new(gemini::Gemini::new(gemini::GeminiConfig::from_env(model_id, overrides, limits)?)?),
        "ollama" => Arc::new(ollama::Ollama::new(ollama::OllamaConfig::from_env(model_id, overrides, limits)?)?),
        "openai" => Arc::new(openai::OpenAi::new(openai::OpenAiConfig::from_env(model_id, overrides, limits)?)?),
        other => anyhow::bail!("unknown provider `{other}`: the HTTP providers are {}", HTTP_PROVIDERS.join(", ")),
    };
    Ok(Arc::new(retry::Retrying::new(inner, retry::RetryPolicy::from_limits(limits))))
}

/// The cap on the tokens of one reply when `--max-output-tokens` is not
/// given: local servers (llama.cpp, Ollama) may otherwise generate until the
/// context window is full, which on a small machine costs minutes per call;
/// hosted APIs keep their own limits.
pub fn default_max_output_tokens(provider: &str) -> Option<u32> {
    match provider {
        "ollama" | "openai" => Some(2048),
        _ => None,
    }
}

/// Concurrent runs when `--jobs` is not given: many for the in-process
/// reference provider, a few for a hosted API, one for a local server that
/// would only queue parallel requests.
pub fn default_jobs(provider: &str) -> usize {
    match provider {
        "reference" => 8,
        "ollama" | "openai" => 1,
        _ => 4,
    }
}
