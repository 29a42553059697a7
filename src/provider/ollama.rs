//! The `ollama` provider: Ollama's native `POST /api/chat` with `tools` and
//! `"stream": false`.
//!
//! Request: `messages` with roles `system`, `user`, `assistant` (with
//! `tool_calls[].function.{name, arguments}`, arguments an object) and `tool`
//! (with `tool_name`), `tools` in the OpenAI function layout, and
//! `options.temperature`. Answer: `message.content`, `message.tool_calls`,
//! `prompt_eval_count` and `eval_count`. Ollama reports no cache figures, so
//! cached tokens are `None` (null in results).
//!
//! The host is `OLLAMA_HOST` (default `http://127.0.0.1:11434`). It does not
//! retry (see `retry`).

use anyhow::Result;
use serde_json::{Map, Value, json};

use super::http::Transport;
use super::wire::{self, CallIds};
use super::{BoxFuture, ChatRequest, Message, Model, ModelError, ModelReply, Overrides, ToolCall, Usage};
use crate::env;
use crate::limits::Limits;

/// Where Ollama listens by default.
pub const DEFAULT_HOST: &str = "http://127.0.0.1:11434";

/// Everything an [`Ollama`] client needs.
#[derive(Debug, Clone)]
pub struct OllamaConfig {
    pub model: String,
    /// `http://host:port`; a bare `host:port` (as `OLLAMA_HOST` allows) gets `http://`.
    pub host: String,
    pub limits: Limits,
}

impl OllamaConfig {
    /// `OLLAMA_HOST`, unless `overrides` gives it.
    pub fn from_env(model: &str, overrides: &Overrides, limits: &Limits) -> Result<OllamaConfig> {
        let host = overrides
            .base_url
            .clone()
            .or_else(|| env::nonempty("OLLAMA_HOST"))
            .unwrap_or_else(|| DEFAULT_HOST.to_string());
        Ok(OllamaConfig { model: model.to_string(), host, limits: limits.clone() })
    }
}

/// A model served by Ollama.
pub struct Ollama {
    model: String,
    url: String,
    /// `/api`: tags, ps and generate live beside chat.
    api: String,
    http: Transport,
    ids: CallIds,
}

impl Ollama {
    pub fn new(config: OllamaConfig) -> Result<Ollama> {
        let host = config.host.trim().trim_end_matches('/');
        let host = if host.contains("://") { host.to_string() } else { format!("http://{host}") };
        let api = format!("{}/api", host.strip_suffix("/api").unwrap_or(&host));
        Ok(Ollama {
            model: config.model.trim().to_string(),
            url: format!("{api}/chat"),
            api: api.clone(),
            // The version: Ollama's cheapest endpoint, answered while a model works.
            http: Transport::new("ollama", &config.limits, vec![], format!("{api}/version"), vec![])?,
            ids: CallIds::default(),
        })
    }

    async fn call(&self, request: ChatRequest<'_>) -> Result<ModelReply, ModelError> {
        let body = request_body(&self.model, &request);
        let mut answer = self.http.post_json(&self.url, &body, request.deadline).await?;
        parse_reply(&mut answer, &request, &self.ids).map_err(ModelError::Fatal)
    }
}

impl Model for Ollama {
    fn provider(&self) -> &str {
        "ollama"
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    fn reports_cache(&self) -> bool {
        false
    }

    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(self.call(request))
    }

    fn quota(&self) -> Option<std::sync::Arc<super::quota::Quota>> {
        Some(self.http.quota())
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        Box::pin(async {
            let answer = self.http.get_json(&format!("{}/tags", self.api)).await?;
            Ok(wire::strings_at(&answer["models"], "name"))
        })
    }

    fn loads_on_first_use(&self) -> bool {
        true
    }

    fn unload_others(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        Box::pin(self.unload_resident())
    }
}

/// How often the loaded models are asked for while waiting for an unload.
const UNLOAD_POLL: std::time::Duration = std::time::Duration::from_millis(200);

impl Ollama {
    /// The models Ollama holds in memory now (`GET /api/ps`).
    async fn resident(&self) -> Result<Vec<String>, ModelError> {
        let answer = self.http.get_json(&format!("{}/ps", self.api)).await?;
        Ok(wire::strings_at(&answer["models"], "name"))
    }

    /// Whether `name` (as `/api/ps` lists it) is the model under test:
    /// `gemma4` and `gemma4:latest` are one model.
    fn is_target(&self, name: &str) -> bool {
        let tagged = |n: &str| if n.contains(':') { n.to_string() } else { format!("{n}:latest") };
        tagged(name) == tagged(&self.model)
    }

    /// Unload every resident model but the one under test (a generate
    /// request with `keep_alive: 0`, as Ollama's API documents), then poll
    /// `/api/ps` until they are gone, for at most the HTTP timeout.
    async fn unload_resident(&self) -> Result<Vec<String>, ModelError> {
        let others: Vec<String> = self.resident().await?.into_iter().filter(|n| !self.is_target(n)).collect();
        for name in &others {
            let body = json!({ "model": name, "keep_alive": 0 });
            self.http.post_json(&format!("{}/generate", self.api), &body, None).await?;
        }
        let give_up = std::time::Instant::now() + self.http.http_timeout();
        loop {
            let still: Vec<String> = self.resident().await?.into_iter().filter(|n| others.contains(n)).collect();
            if still.is_empty() {
                return Ok(others);
            }
            if std::time::Instant::now() >= give_up {
                return Err(ModelError::Fatal(format!(
                    "ollama: {} still loaded after asking to unload {}",
                    still.join(", "),
                    if still.len() == 1 { "it" } else { "them" }
                )));
            }
            tokio::time::sleep(UNLOAD_POLL).await;
        }
    }
}

/// The `/api/chat` body for a conversation.
pub fn request_body(model: &str, request: &ChatRequest<'_>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    for m in request.messages {
        messages.push(match m {
            Message::User { text } => json!({ "role": "user", "content": text }),
            Message::Assistant { text, tool_calls, .. } => {
                let mut msg = json!({ "role": "assistant", "content": text });
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            json!({ "type": "function", "function": { "index": i, "name": c.name, "arguments": c.arguments } })
                        })
                        .collect();
                    msg["tool_calls"] = Value::Array(calls);
                }
                msg
            }
            Message::ToolResult { name, content, .. } => {
                json!({ "role": "tool", "tool_name": name, "content": wire::result_text(content) })
            }
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert("tools".into(), wire::function_tools(request.tools));
    }
    body.insert("stream".into(), json!(false));
    let mut options = Map::new();
    if let Some(t) = request.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if let Some(n) = request.max_output_tokens {
        options.insert("num_predict".into(), json!(n));
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    Value::Object(body)
}

/// Read an `/api/chat` answer; its text is moved out of `answer`, not copied.
fn parse_reply(answer: &mut Value, request: &ChatRequest<'_>, ids: &CallIds) -> Result<ModelReply, String> {
    if !answer.get("message").is_some_and(Value::is_object) {
        return Err(format!(
            "ollama: the answer has no `message` object: {}",
            super::http::preview(&answer.to_string())
        ));
    }
    let text = match answer.pointer_mut("/message/content").map(Value::take).unwrap_or_default() {
        Value::String(s) => s,
        _ => String::new(),
    };
    let message = &answer["message"];
    let tool_calls = message["tool_calls"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let f = &c["function"];
            let (arguments, malformed) = wire::parse_arguments(f.get("arguments"));
            ToolCall {
                id: c["id"].as_str().filter(|s| !s.is_empty()).map_or_else(|| ids.next(), str::to_string),
                name: wire::tool_name(f["name"].as_str().unwrap_or_default(), request.tools),
                arguments,
                malformed,
            }
        })
        .collect();
    let n = |k: &str| answer[k].as_u64().unwrap_or(0);
    Ok(ModelReply {
        text,
        tool_calls,
        usage: Usage { prompt_tokens: n("prompt_eval_count"), cached_tokens: None, output_tokens: n("eval_count") },
        raw: None,
    })
}
