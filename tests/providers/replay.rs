//! A fast model for whole sweeps: answers that replay each task's
//! reference trajectory (`evals/references/<id>.json`), one step per model
//! call, in the OpenAI chat-completions or the Gemini generateContent wire
//! format. The task is recognized by the first user message, the step by
//! the model turns already in the conversation. Served through the fake
//! server (`fake.rs`), it is a model that solves every task it is given.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::fake::Reply;

/// A suite's tasks (id, user message, whether it has a judge matcher) and
/// their reference trajectories.
pub struct Suite {
    pub root: PathBuf,
    pub tasks: Vec<(String, String, bool)>,
    pub references: HashMap<String, Value>,
}

/// The suite under `root` (tasks/ and references/).
pub fn suite(root: &Path) -> Suite {
    let mut tasks = Vec::new();
    let mut references = HashMap::new();
    for entry in std::fs::read_dir(root.join("tasks")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let task: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let id = task["id"].as_str().unwrap().to_string();
        let judged = task["outputMatchers"].as_array().is_some_and(|m| m.iter().any(|m| m["type"] == "judge"));
        let reference = std::fs::read_to_string(root.join("references").join(format!("{id}.json"))).unwrap();
        references.insert(id.clone(), serde_json::from_str(&reference).unwrap());
        tasks.push((id, task["userMessage"].as_str().unwrap().to_string(), judged));
    }
    tasks.sort();
    Suite { root: root.to_path_buf(), tasks, references }
}

/// The project's own suite.
pub fn project_suite() -> Suite {
    suite(&Path::new(env!("CARGO_MANIFEST_DIR")).join("evals"))
}

/// The step of a trajectory: a tool call (name, arguments), or the answer.
pub enum Step {
    Call(Value, Value),
    Answer(Value),
}

impl Suite {
    /// The task whose conversation starts with the user message `first`.
    pub fn task_of(&self, first: &str) -> Option<&str> {
        let (id, _, _) =
            self.tasks.iter().filter(|(_, q, _)| first.starts_with(q.as_str())).max_by_key(|t| t.1.len())?;
        Some(id)
    }

    /// The step for a conversation whose first user message is `first` and
    /// that holds `turn` model turns; `None` when no task has that message.
    pub fn step(&self, first: &str, turn: usize) -> Option<Step> {
        let reference = &self.references[self.task_of(first)?];
        Some(match reference["steps"].as_array().and_then(|s| s.get(turn)) {
            Some(step) => Step::Call(step["tool"].clone(), step["args"].clone()),
            None => Step::Answer(reference["answer"].clone()),
        })
    }
}

/// The first user message of a `/v1/chat/completions` request.
pub fn openai_first(request: &Value) -> &str {
    let messages = request["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    messages.iter().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or("")
}

/// The next step as an OpenAI chat completion, for a `/v1/chat/completions` request.
pub fn openai(suite: &Suite, request: &Value) -> Reply {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let first = openai_first(request);
    let turn = messages.iter().filter(|m| m["role"] == "assistant").count();
    let message = match suite.step(first, turn) {
        None => return Reply::status(400, r#"{"error":{"message":"no task has this user message"}}"#),
        Some(Step::Call(name, args)) => json!({ "role": "assistant", "content": "", "tool_calls": [{
            "id": format!("call_{turn}"), "type": "function",
            "function": { "name": name, "arguments": args.to_string() } }] }),
        Some(Step::Answer(answer)) => json!({ "role": "assistant", "content": answer }),
    };
    Reply::json(json!({
        "id": "chatcmpl-replay", "object": "chat.completion", "model": "replay",
        "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 100 + 10 * turn, "completion_tokens": 10 }
    }))
}

/// The next step as a Gemini `generateContent` answer.
pub fn gemini(suite: &Suite, request: &Value) -> Reply {
    let contents = request["contents"].as_array().cloned().unwrap_or_default();
    let first = contents
        .iter()
        .find(|c| c["role"] == "user")
        .and_then(|c| c["parts"].as_array()?.iter().find_map(|p| p["text"].as_str()))
        .unwrap_or("");
    let turn = contents.iter().filter(|c| c["role"] == "model").count();
    let part = match suite.step(first, turn) {
        None => {
            return Reply::status(
                400,
                r#"{"error":{"code":400,"message":"no task has this user message","status":"INVALID_ARGUMENT"}}"#,
            );
        }
        Some(Step::Call(name, args)) => json!({ "functionCall": { "name": name, "args": args } }),
        Some(Step::Answer(answer)) => json!({ "text": answer }),
    };
    Reply::json(json!({
        "candidates": [{ "content": { "role": "model", "parts": [part] }, "finishReason": "STOP", "index": 0 }],
        "usageMetadata": { "promptTokenCount": 100 + 10 * turn, "candidatesTokenCount": 10, "totalTokenCount": 110 + 10 * turn },
        "modelVersion": "replay"
    }))
}
