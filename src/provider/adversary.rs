//! Two adversarial agents used by `suite check` to find weak rubrics: a task
//! either of them solves does not test what it claims to.
//!
//! - `silent` makes no tool call and answers "I could not find that in your notes."
//! - `dump` lists every file (`list_files {"path": "", "recursive": true}`),
//!   reads them all (one turn, in listed order), and answers with the full
//!   content of the first file it read ("" if none).
//!
//! Both are stateless: they read what they need from the conversation.

use serde_json::{Value, json};

use super::{BoxFuture, ChatRequest, Message, Model, ModelError, ModelReply, ToolCall, Usage};

pub const SILENT_ANSWER: &str = "I could not find that in your notes.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adversary {
    Silent,
    Dump,
}

impl Adversary {
    pub const ALL: [Adversary; 2] = [Adversary::Silent, Adversary::Dump];

    pub fn name(self) -> &'static str {
        match self {
            Adversary::Silent => "silent",
            Adversary::Dump => "dump",
        }
    }
}

fn answer(text: String) -> ModelReply {
    ModelReply { text, tool_calls: vec![], usage: Usage::default(), raw: None }
}

fn calls(calls: Vec<(String, Value)>) -> ModelReply {
    let tool_calls = calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall { id: format!("adv-{}", i + 1), name, arguments, malformed: None })
        .collect();
    ModelReply { text: String::new(), tool_calls, usage: Usage::default(), raw: None }
}

/// Successful answers of the calls to `tool`, in order.
fn results<'m>(messages: &'m [Message], tool: &'m str) -> impl Iterator<Item = &'m Value> + 'm {
    messages.iter().filter_map(move |m| match m {
        Message::ToolResult { name, content, .. } if name == tool && content["success"] == json!(true) => {
            Some(&content["data"])
        }
        _ => None,
    })
}

fn dump_turn(messages: &[Message]) -> ModelReply {
    let turn = messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
    match turn {
        0 => calls(vec![("list_files".into(), json!({"path": "", "recursive": true}))]),
        1 => {
            let files: Vec<String> = results(messages, "list_files")
                .next()
                .and_then(|d| d["entries"].as_array())
                .map(|entries| entries.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default();
            if files.is_empty() {
                answer(String::new())
            } else {
                calls(files.into_iter().map(|f| ("read_file".to_string(), json!({"path": f}))).collect())
            }
        }
        _ => answer(
            results(messages, "read_file").next().and_then(|d| d["content"].as_str()).unwrap_or_default().to_string(),
        ),
    }
}

impl Model for Adversary {
    fn provider(&self) -> &str {
        "adversary"
    }
    fn model_id(&self) -> &str {
        self.name()
    }
    fn reports_cache(&self) -> bool {
        false
    }
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        let reply = match self {
            Adversary::Silent => answer(SILENT_ANSWER.to_string()),
            Adversary::Dump => dump_turn(request.messages),
        };
        Box::pin(async move { Ok(reply) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{self, Ending, Request};
    use crate::pricing::Pricing;
    use crate::vault::Toolbox;
    use crate::vault::tools::testing::TestVault;

    fn run(adversary: Adversary, v: &TestVault) -> agent::Outcome {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let req = Request {
            user_message: "q",
            context_files: &[],
            max_turns: 15,
            timeout: std::time::Duration::from_secs(5),
            max_output_tokens: None,
            limits: &crate::limits::Limits::default(),
        };
        rt.block_on(agent::run(&adversary, &v.vault, &Toolbox::standard(), req, &Pricing::Free))
    }

    #[test]
    fn silent_answers_without_tools() {
        let v = TestVault::new(&[("a.md", "A")]);
        let out = run(Adversary::Silent, &v);
        assert_eq!((out.response_text.as_str(), out.tool_list.len(), out.ending), (SILENT_ANSWER, 0, Ending::Answered));
    }

    #[test]
    fn dump_lists_reads_everything_and_answers_with_the_first_file() {
        let v = TestVault::new(&[("eval-scratch/b.md", "B text"), ("eval-scratch/a.md", "A text"), ("z.md", "Z")]);
        let out = run(Adversary::Dump, &v);
        assert_eq!(out.tool_list, ["list_files", "read_file", "read_file", "read_file"]);
        assert_eq!(out.response_text, "A text");
        assert_eq!(out.metrics.turns, 3);
        let empty = TestVault::new(&[]);
        let out = run(Adversary::Dump, &empty);
        assert_eq!((out.response_text.as_str(), out.tool_list.len()), ("", 1));
    }
}
