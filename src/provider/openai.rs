//! The `openai` provider: any server speaking OpenAI's `POST
//! /v1/chat/completions` with `tools` — llama.cpp's server, vLLM, LM Studio,
//! hosted APIs.
//!
//! Request: `messages` (the system prompt always as a `system` message: some
//! servers only expose tools when there is one), assistant `tool_calls[]`
//! `{id, type: "function", function {name, arguments}}` with the arguments
//! as a JSON string, tool results as role `tool` with `tool_call_id`, `tools`
//! of type `function`, `tool_choice: "auto"`. Answer: `choices[0].message`,
//! `usage.prompt_tokens`, `completion_tokens` and, when the server reports
//! it, `prompt_tokens_details.cached_tokens`.
//!
//! Small local servers bend the format; each bend read here has a test:
//! empty or null `content` (or content as a list of text parts), `tool_calls`
//! next to a legacy `function_call` (the list wins), a legacy
//! `function_call` alone, padded or prefixed tool names, arguments that are
//! not valid JSON (a malformed call the agent answers with a tool error),
//! a context overflow (a fatal error that says so, see `http`), and any
//! `finish_reason`.
//!
//! `OPENAI_BASE_URL` is required (with or without the trailing `/v1`);
//! `OPENAI_API_KEY` is optional and sent as a Bearer token. It does not retry
//! (see `retry`).

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use super::http::{Header, Transport};
use super::wire::{self, CallIds};
use super::{BoxFuture, ChatRequest, Message, Model, ModelError, ModelReply, Overrides, ToolCall, Usage};
use crate::env;
use crate::limits::Limits;

/// Everything an [`OpenAi`] client needs.
#[derive(Clone)]
pub struct OpenAiConfig {
    pub model: String,
    /// e.g. `http://127.0.0.1:8080/v1` or `http://127.0.0.1:8080`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub limits: Limits,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("limits", &self.limits)
            .finish()
    }
}

impl OpenAiConfig {
    /// `OPENAI_BASE_URL` (required) and `OPENAI_API_KEY`, unless
    /// `overrides` gives them.
    pub fn from_env(model: &str, overrides: &Overrides, limits: &Limits) -> Result<OpenAiConfig> {
        let base_url = overrides.base_url.clone().or_else(|| env::nonempty("OPENAI_BASE_URL")).context(
            "openai: no server: set OPENAI_BASE_URL to the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1",
        )?;
        let api_key = overrides.api_key.clone().or_else(|| env::nonempty("OPENAI_API_KEY"));
        Ok(OpenAiConfig { model: model.to_string(), base_url, api_key, limits: limits.clone() })
    }
}

/// A model behind an OpenAI-compatible chat completions endpoint.
pub struct OpenAi {
    model: String,
    url: String,
    /// `/v1/models`.
    models_url: String,
    http: Transport,
    ids: CallIds,
    /// Set once the server has reported a cache figure; many never do.
    saw_cache: AtomicBool,
}

impl OpenAi {
    pub fn new(config: OpenAiConfig) -> Result<OpenAi> {
        let base = config.base_url.trim().trim_end_matches('/');
        let base = base.strip_suffix("/chat/completions").unwrap_or(base).trim_end_matches('/');
        if !base.starts_with("http://") && !base.starts_with("https://") {
            anyhow::bail!("openai: OPENAI_BASE_URL `{base}` is not an http(s) URL, e.g. http://127.0.0.1:8080/v1");
        }
        let v1 = if base.ends_with("/v1") { base.to_string() } else { format!("{base}/v1") };
        let headers = config
            .api_key
            .iter()
            .map(|k| Header { name: "authorization", value: format!("Bearer {k}"), secret: true })
            .collect();
        // The server's root, which no server routes to its model: any answer
        // will do. Not the model list: llama-cpp-python's server holds that
        // behind the lock of a running generation, so it would look hung.
        let liveness = format!("{}/", v1.strip_suffix("/v1").unwrap_or(&v1));
        let secrets = config.api_key.into_iter().collect();
        Ok(OpenAi {
            model: config.model.trim().to_string(),
            url: format!("{v1}/chat/completions"),
            models_url: format!("{v1}/models"),
            http: Transport::new("openai", &config.limits, headers, liveness, secrets)?,
            ids: CallIds::default(),
            saw_cache: AtomicBool::new(false),
        })
    }

    async fn call(&self, request: ChatRequest<'_>) -> Result<ModelReply, ModelError> {
        let body = request_body(&self.model, &request);
        let mut answer = self.http.post_json(&self.url, &body, request.deadline).await?;
        let reply =
            parse_reply(&mut answer, &request, &self.ids).map_err(|e| ModelError::Fatal(self.http.scrub(&e)))?;
        let reply = self.http.scrub_reply(reply);
        if reply.usage.cached_tokens.is_some() {
            self.saw_cache.store(true, Ordering::Relaxed);
        }
        Ok(reply)
    }
}

impl Model for OpenAi {
    fn provider(&self) -> &str {
        "openai"
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    /// True once the server has reported a cached-token figure: whether it
    /// does depends on the server, not on this protocol.
    fn reports_cache(&self) -> bool {
        self.saw_cache.load(Ordering::Relaxed)
    }

    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(self.call(request))
    }

    fn quota(&self) -> Option<std::sync::Arc<super::quota::Quota>> {
        Some(self.http.quota())
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        Box::pin(async {
            let answer = self.http.get_json(&self.models_url).await?;
            Ok(wire::strings_at(&answer["data"], "id"))
        })
    }

    /// llama.cpp, vLLM and LM Studio load (or compile) the model on its
    /// first request.
    fn loads_on_first_use(&self) -> bool {
        true
    }
}

/// The `/v1/chat/completions` body for a conversation.
pub fn request_body(model: &str, request: &ChatRequest<'_>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    messages.push(json!({ "role": "system", "content": request.system }));
    for m in request.messages {
        messages.push(match m {
            Message::User { text } => json!({ "role": "user", "content": text }),
            Message::Assistant { text, tool_calls, .. } => {
                let mut msg = json!({ "role": "assistant", "content": text });
                if !tool_calls.is_empty() {
                    // A malformed call goes back with `{}`: chat templates
                    // parse the arguments, and the model's broken text would
                    // make the server fail the whole request.
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            json!({ "id": c.id, "type": "function",
                                    "function": { "name": c.name, "arguments": c.arguments.to_string() } })
                        })
                        .collect();
                    msg["tool_calls"] = Value::Array(calls);
                }
                msg
            }
            Message::ToolResult { call_id, content, .. } => {
                json!({ "role": "tool", "tool_call_id": call_id, "content": wire::result_text(content) })
            }
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert("tools".into(), wire::function_tools(request.tools));
        body.insert("tool_choice".into(), json!("auto"));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = request.max_output_tokens {
        // `max_tokens` is the field every OpenAI-compatible server reads
        // (llama.cpp, vLLM, LM Studio, Ollama's /v1).
        body.insert("max_tokens".into(), json!(n));
    }
    body.insert("stream".into(), json!(false));
    Value::Object(body)
}

/// Read a chat completion; the answer's text is moved out of `answer`, not copied.
fn parse_reply(answer: &mut Value, request: &ChatRequest<'_>, ids: &CallIds) -> Result<ModelReply, String> {
    if answer["choices"].as_array().is_none_or(|c| c.is_empty()) {
        return Err(format!("openai: the answer has no `choices`: {}", super::http::preview(&answer.to_string())));
    }
    // `pointer_mut`, never `[]` on a mutable value: that panics on a server's wrong shapes.
    let content = answer.pointer_mut("/choices/0/message/content").map(Value::take).unwrap_or_default();
    let message = &answer["choices"][0]["message"];
    let text = match content {
        Value::String(s) => s,
        // Content as a list of parts: keep the text ones.
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    };
    let call = |name: &Value, arguments: Option<&Value>, id: &Value| {
        let (arguments, malformed) = wire::parse_arguments(arguments);
        ToolCall {
            id: id.as_str().filter(|s| !s.trim().is_empty()).map_or_else(|| ids.next(), str::to_string),
            name: wire::tool_name(name.as_str().unwrap_or_default(), request.tools),
            arguments,
            malformed,
        }
    };
    let mut tool_calls: Vec<ToolCall> = message["tool_calls"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|c| call(&c["function"]["name"], c["function"].get("arguments"), &c["id"]))
        .collect();
    // The legacy single `function_call` counts only when there is no list:
    // servers that send both send the same call twice.
    if tool_calls.is_empty()
        && let Some(fc) = message.get("function_call").filter(|f| f.is_object())
    {
        tool_calls.push(call(&fc["name"], fc.get("arguments"), &Value::Null));
    }
    let usage = &answer["usage"];
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    Ok(ModelReply {
        text,
        tool_calls,
        usage: Usage {
            prompt_tokens: n(&usage["prompt_tokens"]),
            cached_tokens: usage["prompt_tokens_details"]["cached_tokens"].as_u64(),
            output_tokens: n(&usage["completion_tokens"]),
        },
        raw: None,
    })
}
