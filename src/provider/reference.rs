//! The `reference` provider: replays a task's reference trajectory
//! (`<references>/<task id>.json`) as if a model had produced it. The n-th
//! assistant turn issues step n's tool call; the turn after the last step
//! answers `answer`. It is stateless — it counts the assistant turns already
//! in the request — and needs no network, so it proves a task solvable and
//! drives the whole pipeline offline.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use super::{BoxFuture, ChatRequest, Message, Model, ModelError, ModelReply, ModelSource, ToolCall, Usage};
use crate::format::reference::Reference;
use crate::format::task::Task;
use crate::fsio;

/// One task's trajectory, as a model.
#[derive(Debug, Clone)]
pub struct ReferenceModel {
    reference: Reference,
    model_id: String,
}

impl ReferenceModel {
    pub fn new(reference: Reference, model_id: impl Into<String>) -> ReferenceModel {
        ReferenceModel { reference, model_id: model_id.into() }
    }
}

impl Model for ReferenceModel {
    fn provider(&self) -> &str {
        "reference"
    }
    fn model_id(&self) -> &str {
        &self.model_id
    }
    fn reports_cache(&self) -> bool {
        false
    }
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        let turn = request.messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
        let reply = match self.reference.steps.get(turn) {
            Some(step) => {
                let (arguments, malformed) = if step.args.is_object() {
                    (step.args.clone(), None)
                } else {
                    (serde_json::json!({}), Some(format!("arguments must be a JSON object, got {}", step.args)))
                };
                ModelReply {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: format!("ref-{}", turn + 1),
                        name: step.tool.clone(),
                        arguments,
                        malformed,
                    }],
                    usage: Usage::default(),
                    raw: None,
                }
            }
            None => ModelReply {
                text: self.reference.answer.clone(),
                tool_calls: vec![],
                usage: Usage::default(),
                raw: None,
            },
        };
        Box::pin(async move { Ok(reply) })
    }
}

/// Where a task's trajectory lives.
pub fn reference_path(dir: &Path, task_id: &str) -> PathBuf {
    dir.join(format!("{task_id}.json"))
}

/// Load a trajectory; errors name the file and the field.
pub fn load(dir: &Path, task_id: &str) -> Result<Reference> {
    let path = reference_path(dir, task_id);
    if !path.is_file() {
        anyhow::bail!(
            "no reference trajectory for task `{task_id}` at {} (write one: {{\"steps\": [{{\"tool\": ..., \"args\": {{...}}}}], \"answer\": ...}})",
            path.display()
        );
    }
    fsio::read_json(&path)
}

/// A model per task, each replaying that task's trajectory.
pub struct ReferenceSource {
    pub dir: PathBuf,
    pub model_id: String,
}

impl ModelSource for ReferenceSource {
    fn provider(&self) -> &str {
        "reference"
    }
    fn model_id(&self) -> &str {
        &self.model_id
    }
    fn model_for(&self, task: &Task) -> Result<Arc<dyn Model>> {
        Ok(Arc::new(ReferenceModel::new(load(&self.dir, &task.id)?, self.model_id.clone())))
    }
    fn check(&self, tasks: &[&Task]) -> Result<()> {
        let missing: Vec<String> =
            tasks.iter().filter(|t| !reference_path(&self.dir, &t.id).is_file()).map(|t| t.id.clone()).collect();
        if !missing.is_empty() {
            anyhow::bail!(
                "{} task{} have no reference trajectory in {}: {} (pass --references DIR, or narrow the run with --task)",
                missing.len(),
                if missing.len() == 1 { "" } else { "s" },
                self.dir.display(),
                missing.join(", ")
            );
        }
        for t in tasks {
            load(&self.dir, &t.id)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::reference::ReferenceStep;
    use serde_json::json;

    fn poll(m: &ReferenceModel, messages: &[Message]) -> ModelReply {
        let req = ChatRequest {
            system: "",
            messages,
            tools: &[],
            temperature: None,
            max_output_tokens: None,
            deadline: None,
        };
        crate::score::ready(m.chat(req)).unwrap()
    }

    #[test]
    fn replays_one_step_per_assistant_turn_then_answers() {
        let m = ReferenceModel::new(
            Reference {
                steps: vec![
                    ReferenceStep { tool: "find_files_by_content".into(), args: json!({"query": "x"}) },
                    ReferenceStep { tool: "read_file".into(), args: json!({"path": "a.md"}) },
                ],
                answer: "done".into(),
            },
            "reference",
        );
        let user = Message::User { text: "q".into() };
        let mut history = vec![user];
        let r = poll(&m, &history);
        assert_eq!((r.tool_calls[0].name.as_str(), r.tool_calls[0].id.as_str()), ("find_files_by_content", "ref-1"));
        history.push(Message::Assistant { text: String::new(), tool_calls: r.tool_calls, raw: None });
        history.push(Message::ToolResult { call_id: "ref-1".into(), name: "x".into(), content: json!({}) });
        let r = poll(&m, &history);
        assert_eq!(r.tool_calls[0].arguments, json!({"path": "a.md"}));
        history.push(Message::Assistant { text: String::new(), tool_calls: r.tool_calls, raw: None });
        let r = poll(&m, &history);
        assert!(r.tool_calls.is_empty());
        assert_eq!(r.text, "done");
        assert_eq!(r.usage, Usage::default());
    }

    #[test]
    fn non_object_arguments_become_a_malformed_call() {
        let m = ReferenceModel::new(
            Reference {
                steps: vec![ReferenceStep { tool: "read_file".into(), args: json!("a.md") }],
                answer: String::new(),
            },
            "reference",
        );
        let r = poll(&m, &[Message::User { text: "q".into() }]);
        assert!(r.tool_calls[0].malformed.as_deref().unwrap().contains("JSON object"));
    }

    #[test]
    fn missing_and_malformed_files_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let err = load(dir.path(), "t").unwrap_err().to_string();
        assert!(err.contains("no reference trajectory for task `t`") && err.contains("t.json"), "{err}");
        std::fs::write(dir.path().join("t.json"), r#"{"steps": [{"tool": "x", "arg": {}}], "answer": ""}"#).unwrap();
        let err = format!("{:#}", load(dir.path(), "t").unwrap_err());
        assert!(err.contains("t.json") && err.contains("steps[0]") && err.contains("unknown field `arg`"), "{err}");
    }
}
