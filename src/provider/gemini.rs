//! The `gemini` provider: Google's Gemini API, `models/{model}:generateContent`
//! (REST, v1beta).
//!
//! Request: `systemInstruction`, `contents` (role `user` / `model`, `parts`
//! with `text`, `functionCall {name, args}` and `functionResponse {name,
//! response}`), `tools[].functionDeclarations` and
//! `generationConfig.temperature`. Answer: `candidates[0].content.parts`,
//! `finishReason`, `usageMetadata`. The key travels in the `x-goog-api-key`
//! header, never in the URL.
//!
//! Thinking models put `thoughtSignature`s on the parts of their turns, and
//! require them back. The model turn's `content` is therefore kept verbatim in
//! [`ModelReply::raw`] and replayed unchanged from [`Message::Assistant`]'s
//! `raw` in later requests.
//!
//! Parameter schemas are converted to the OpenAPI subset Gemini accepts
//! ([`schema`]). It does not retry (see `retry`).

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use super::http::{Header, Transport};
use super::wire::CallIds;
use super::{BoxFuture, ChatRequest, Message, Model, ModelError, ModelReply, Overrides, ToolCall, ToolSpec, Usage};
use crate::env;
use crate::limits::Limits;

/// Google's public endpoint.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// Everything a [`Gemini`] client needs.
#[derive(Clone)]
pub struct GeminiConfig {
    pub model: String,
    pub api_key: String,
    /// Scheme and host, without `/v1beta` (e.g. [`DEFAULT_BASE_URL`]).
    pub base_url: String,
    pub limits: Limits,
}

impl std::fmt::Debug for GeminiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiConfig")
            .field("model", &self.model)
            .field("api_key", &"[REDACTED]")
            .field("base_url", &self.base_url)
            .field("limits", &self.limits)
            .finish()
    }
}

impl GeminiConfig {
    /// `GEMINI_API_KEY` (required) and `GEMINI_BASE_URL`, unless
    /// `overrides` gives them.
    pub fn from_env(model: &str, overrides: &Overrides, limits: &Limits) -> Result<GeminiConfig> {
        let api_key = overrides
            .api_key
            .clone()
            .or_else(|| env::nonempty("GEMINI_API_KEY"))
            .context("gemini: no API key: set GEMINI_API_KEY (create one at https://aistudio.google.com/apikey)")?;
        let base_url = overrides
            .base_url
            .clone()
            .or_else(|| env::nonempty("GEMINI_BASE_URL"))
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        Ok(GeminiConfig { model: model.to_string(), api_key, base_url, limits: limits.clone() })
    }
}

/// A Gemini model reached over the REST API.
pub struct Gemini {
    model: String,
    url: String,
    /// `models.list`.
    models_url: String,
    http: Transport,
    ids: CallIds,
}

impl Gemini {
    pub fn new(config: GeminiConfig) -> Result<Gemini> {
        let model = config.model.trim().trim_start_matches("models/").to_string();
        let base = config.base_url.trim().trim_end_matches('/');
        let base = base.strip_suffix("/v1beta").unwrap_or(base);
        if !base.starts_with("http://") && !base.starts_with("https://") {
            anyhow::bail!("gemini: GEMINI_BASE_URL `{base}` is not an http(s) URL, e.g. {DEFAULT_BASE_URL}");
        }
        let url = format!("{base}/v1beta/models/{model}:generateContent");
        // models.get: cheap, and answered at once by a live endpoint.
        let liveness = format!("{base}/v1beta/models/{model}");
        let key = Header { name: "x-goog-api-key", value: config.api_key.clone(), secret: true };
        let http = Transport::new("gemini", &config.limits, vec![key], liveness, vec![config.api_key])?;
        let models_url = format!("{base}/v1beta/models?pageSize=1000");
        Ok(Gemini { model, url, models_url, http, ids: CallIds::default() })
    }

    async fn call(&self, request: ChatRequest<'_>) -> Result<ModelReply, ModelError> {
        let body = request_body(&request);
        let answer = self.http.post_json(&self.url, &body, request.deadline).await?;
        let reply = parse_reply(&answer, &self.ids).map_err(|e| ModelError::Fatal(self.http.scrub(&e)))?;
        Ok(self.http.scrub_reply(reply))
    }
}

impl Model for Gemini {
    fn provider(&self) -> &str {
        "gemini"
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    fn reports_cache(&self) -> bool {
        true
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
            Ok(super::wire::strings_at(&answer["models"], "name")
                .into_iter()
                .map(|n| n.trim_start_matches("models/").to_string())
                .collect())
        })
    }
}

/// The `generateContent` body for a conversation.
pub fn request_body(request: &ChatRequest<'_>) -> Value {
    let mut body = Map::new();
    if !request.system.is_empty() {
        body.insert("systemInstruction".into(), json!({ "parts": [{ "text": request.system }] }));
    }
    body.insert("contents".into(), Value::Array(contents(request.messages)));
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request.tools.iter().map(declaration).collect();
        body.insert("tools".into(), json!([{ "functionDeclarations": declarations }]));
    }
    let mut config = Map::new();
    if let Some(t) = request.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(n) = request.max_output_tokens {
        config.insert("maxOutputTokens".into(), json!(n));
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    Value::Object(body)
}

fn declaration(tool: &ToolSpec) -> Value {
    let mut d = Map::new();
    d.insert("name".into(), json!(tool.name));
    d.insert("description".into(), json!(tool.description));
    // A tool without parameters has no `parameters` (an empty object schema
    // is rejected by some model versions).
    let has_params = tool.parameters.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
    if has_params {
        d.insert("parameters".into(), schema(&tool.parameters));
    }
    Value::Object(d)
}

/// The conversation as Gemini `contents`. Model turns replay their raw
/// content when they have one; tool results become `functionResponse` parts;
/// consecutive user-side turns are merged into one content.
fn contents(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    // Call ids Gemini itself gave (sent back with the response) and the ids
    // of calls that could not be read (answered as text, since Gemini has no
    // function call to pair them with).
    let mut gemini_ids: Vec<String> = Vec::new();
    let mut unreadable: Vec<String> = Vec::new();
    let push_user = |out: &mut Vec<Value>, part: Value| {
        if let Some(last) = out.last_mut()
            && last["role"] == "user"
            && let Some(parts) = last["parts"].as_array_mut()
        {
            parts.push(part);
            return;
        }
        out.push(json!({ "role": "user", "parts": [part] }));
    };
    for m in messages {
        match m {
            Message::User { text } => push_user(&mut out, json!({ "text": text })),
            Message::Assistant { text, tool_calls, raw } => {
                for c in tool_calls {
                    if c.malformed.is_some() || c.name.is_empty() {
                        unreadable.push(c.id.clone());
                    }
                }
                if let Some(raw) = raw.as_ref().filter(|r| r["parts"].as_array().is_some_and(|p| !p.is_empty())) {
                    for part in raw["parts"].as_array().into_iter().flatten() {
                        if let Some(id) = part["functionCall"]["id"].as_str() {
                            gemini_ids.push(id.to_string());
                        }
                    }
                    let mut content = raw.clone();
                    content["role"] = json!("model");
                    out.push(content);
                    continue;
                }
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({ "text": text }));
                }
                for c in tool_calls {
                    if c.malformed.is_some() || c.name.is_empty() {
                        parts.push(json!({ "text": "(a function call that could not be read)" }));
                    } else {
                        parts.push(json!({ "functionCall": { "name": c.name, "args": c.arguments } }));
                    }
                }
                if !parts.is_empty() {
                    out.push(json!({ "role": "model", "parts": parts }));
                }
            }
            Message::ToolResult { call_id, name, content } => {
                if unreadable.contains(call_id) {
                    let text = format!("Result of the function call that could not be read: {content}");
                    push_user(&mut out, json!({ "text": text }));
                    continue;
                }
                // `response` must be an object.
                let response = match content {
                    Value::Object(_) => content.clone(),
                    other => json!({ "result": other }),
                };
                let mut fr = json!({ "name": name, "response": response });
                if gemini_ids.contains(call_id) {
                    fr["id"] = json!(call_id);
                }
                push_user(&mut out, json!({ "functionResponse": fr }));
            }
        }
    }
    out
}

/// Read a `generateContent` answer. Errors are messages for a Fatal error.
pub(crate) fn parse_reply(answer: &Value, ids: &CallIds) -> Result<ModelReply, String> {
    let usage = usage(answer);
    let Some(candidate) = answer["candidates"].as_array().and_then(|c| c.first()) else {
        let reason = answer["promptFeedback"]["blockReason"].as_str().unwrap_or("none given");
        return Err(format!("gemini: the answer has no candidates (prompt block reason: {reason})"));
    };
    let finish = candidate["finishReason"].as_str().unwrap_or("");
    let content = &candidate["content"];
    let parts = content["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for part in parts {
        if let Some(fc) = part.get("functionCall") {
            let name = fc["name"].as_str().unwrap_or_default().to_string();
            let id = fc["id"].as_str().filter(|s| !s.is_empty()).map_or_else(|| ids.next(), str::to_string);
            let (arguments, malformed) = super::wire::parse_arguments(fc.get("args"));
            tool_calls.push(ToolCall { id, name, arguments, malformed });
        } else if let Some(t) = part["text"].as_str() {
            // Thought summaries are not part of the answer.
            if part["thought"] != json!(true) {
                text.push_str(t);
            }
        }
    }
    if tool_calls.is_empty() && finish == "MALFORMED_FUNCTION_CALL" {
        // The model tried to call a function and produced something Gemini
        // could not parse: hand it back as an unreadable call so the model
        // learns of it and can try again, rather than ending the run.
        let detail = candidate["finishMessage"].as_str().unwrap_or("no detail given");
        tool_calls.push(ToolCall {
            id: ids.next(),
            name: String::new(),
            arguments: json!({}),
            malformed: Some(format!("Gemini could not parse the function call (MALFORMED_FUNCTION_CALL): {detail}")),
        });
    }
    let raw = (!parts.is_empty() && tool_calls.iter().all(|c| c.malformed.is_none() && !c.name.is_empty()))
        .then(|| content.clone());
    Ok(ModelReply { text, tool_calls, usage, raw })
}

/// `usageMetadata`: the prompt (cached part included), its cached part, and
/// the output — visible candidates plus thinking, which is billed as output.
fn usage(answer: &Value) -> Usage {
    let meta = &answer["usageMetadata"];
    let n = |k: &str| meta[k].as_u64().unwrap_or(0);
    Usage {
        prompt_tokens: n("promptTokenCount"),
        cached_tokens: Some(n("cachedContentTokenCount")),
        // Figures from outside: added without overflowing.
        output_tokens: n("candidatesTokenCount").saturating_add(n("thoughtsTokenCount")),
    }
}

/// Schema keywords Gemini's `Schema` object accepts (an OpenAPI 3.0 subset).
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// A JSON Schema converted to the subset Gemini accepts: unsupported keywords
/// dropped (`additionalProperties`, `$schema`, `const`, ...), `oneOf` read as
/// `anyOf`, type lists turned into `nullable` or `anyOf`, `required` limited
/// to declared properties, non-string enums dropped. A schema with no type
/// (any value) becomes a string, with the description saying so: Gemini
/// requires a type, and the vault tools read JSON held in a string.
pub fn schema(s: &Value) -> Value {
    let Some(obj) = s.as_object() else { return json!({ "type": "string" }) };
    let mut out = Map::new();
    for (k, v) in obj {
        let v = match k.as_str() {
            "properties" => match v.as_object() {
                Some(props) => Value::Object(props.iter().map(|(name, p)| (name.clone(), schema(p))).collect()),
                None => continue,
            },
            "items" => schema(v),
            "anyOf" => match v.as_array() {
                Some(list) => Value::Array(list.iter().map(schema).collect()),
                None => continue,
            },
            "enum" if !v.as_array().is_some_and(|a| a.iter().all(Value::is_string)) => continue,
            "type" if v.is_array() => continue,
            k if SCHEMA_KEYS.contains(&k) => v.clone(),
            _ => continue,
        };
        out.insert(k.clone(), v);
    }
    if !out.contains_key("anyOf")
        && let Some(list) = obj.get("oneOf").and_then(Value::as_array)
    {
        out.insert("anyOf".into(), Value::Array(list.iter().map(schema).collect()));
    }
    if let Some(types) = obj.get("type").and_then(Value::as_array) {
        let non_null: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
        if non_null.len() < types.len() {
            out.insert("nullable".into(), json!(true));
        }
        match non_null.as_slice() {
            [] => {}
            [one] => {
                out.insert("type".into(), (*one).clone());
            }
            many => {
                let alternatives: Vec<Value> = many
                    .iter()
                    .map(|t| {
                        if t.as_str() == Some("array") {
                            json!({ "type": t, "items": { "type": "string" } })
                        } else {
                            json!({ "type": t })
                        }
                    })
                    .collect();
                out.insert("anyOf".into(), Value::Array(alternatives));
            }
        }
    }
    if let (Some(required), Some(props)) =
        (out.get("required").and_then(Value::as_array), out.get("properties").and_then(Value::as_object))
    {
        let kept: Vec<Value> =
            required.iter().filter(|r| r.as_str().is_some_and(|n| props.contains_key(n))).cloned().collect();
        out.insert("required".into(), Value::Array(kept));
    } else if !out.contains_key("properties") {
        out.remove("required");
    }
    if !out.contains_key("type") && !out.contains_key("anyOf") {
        let inferred = if out.contains_key("properties") {
            "object"
        } else if out.contains_key("items") {
            "array"
        } else {
            let note = "Any JSON value; give a non-string value as JSON text.";
            let description = match out.get("description").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d} ({note})"),
                _ => note.to_string(),
            };
            out.insert("description".into(), json!(description));
            "string"
        };
        out.insert("type".into(), json!(inferred));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_cut_to_the_gemini_subset() {
        let input = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": { "type": "string", "description": "vault path" },
                "limit": { "type": ["integer", "null"], "minimum": 1 },
                "mode": { "oneOf": [{ "type": "string" }, { "type": "boolean" }] },
                "value": { "description": "the new value" },
                "tags": { "type": "array", "items": { "type": "string", "const": "x" } },
                "level": { "enum": [1, 2] }
            },
            "required": ["path", "ghost"]
        });
        let out = schema(&input);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "vault path" },
                    "limit": { "type": "integer", "nullable": true, "minimum": 1 },
                    "mode": { "anyOf": [{ "type": "string" }, { "type": "boolean" }] },
                    "value": {
                        "type": "string",
                        "description": "the new value (Any JSON value; give a non-string value as JSON text.)"
                    },
                    "tags": { "type": "array", "items": { "type": "string" } },
                    "level": { "type": "string", "description": "Any JSON value; give a non-string value as JSON text." }
                },
                "required": ["path"]
            })
        );
    }

    #[test]
    fn malformed_function_call_becomes_an_unreadable_call() {
        let answer = json!({
            "candidates": [{ "content": { "role": "model", "parts": [] }, "finishReason": "MALFORMED_FUNCTION_CALL",
                             "finishMessage": "Malformed function call: read_file(path=" }],
            "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 0 }
        });
        let reply = parse_reply(&answer, &CallIds::default()).unwrap();
        assert_eq!(reply.tool_calls.len(), 1);
        assert!(reply.tool_calls[0].malformed.as_deref().unwrap().contains("read_file(path="));
        assert_eq!(reply.raw, None);
        // Replayed, the unreadable call and its result travel as text.
        let messages = vec![
            Message::User { text: "q".into() },
            Message::Assistant { text: String::new(), tool_calls: reply.tool_calls.clone(), raw: None },
            Message::ToolResult {
                call_id: reply.tool_calls[0].id.clone(),
                name: String::new(),
                content: json!({ "success": false, "error": "unreadable call" }),
            },
        ];
        let c = contents(&messages);
        assert_eq!(c[1], json!({ "role": "model", "parts": [{ "text": "(a function call that could not be read)" }] }));
        assert!(c[2]["parts"][0]["text"].as_str().unwrap().contains("unreadable call"));
    }

    #[test]
    fn no_candidates_is_an_error_with_the_block_reason() {
        let err =
            parse_reply(&json!({ "promptFeedback": { "blockReason": "SAFETY" } }), &CallIds::default()).unwrap_err();
        assert!(err.contains("SAFETY"), "{err}");
    }

    #[test]
    fn thought_text_is_not_part_of_the_answer() {
        let answer = json!({ "candidates": [{ "content": { "role": "model", "parts": [
            { "text": "Let me think.", "thought": true }, { "text": "YES", "thoughtSignature": "c2ln" }
        ] }, "finishReason": "STOP" }] });
        let reply = parse_reply(&answer, &CallIds::default()).unwrap();
        assert_eq!(reply.text, "YES");
        assert_eq!(reply.usage, Usage { prompt_tokens: 0, cached_tokens: Some(0), output_tokens: 0 });
    }
}
