//! The vault a run works in and the tools a model uses on it, exactly as
//! `docs/tools.md` specifies them: path confinement ([`Vault::resolve`]),
//! the [`Tool`] trait with one small type per tool, the [`Toolbox`] registry
//! and loop detection ([`LoopDetector`]).
//!
//! It does not know about tasks, models or scoring: the agent loop hands it
//! tool calls and feeds the JSON answers back to the model; the runner
//! prepares the folder and snapshots it afterwards.

mod args;
pub mod frontmatter_edit;
mod loops;
mod paths;
pub mod tools;

use serde_json::{Map, Value, json};

pub use args::Args;
pub use loops::{LOOP_LIMIT, LoopDetector};
pub use paths::{Vault, VaultPath};

use crate::provider::ToolSpec;

/// The memory file, relative to the vault root.
pub const MEMORY_PATH: &str = "gemini-scribe/AGENTS.md";
/// The folder holding one sub-folder per skill, each with a `SKILL.md`.
pub const SKILLS_DIR: &str = "gemini-scribe/Skills";
/// The folder holding past agent sessions.
pub const SESSIONS_DIR: &str = "gemini-scribe/Agent-Sessions";

/// A vault tool. Adding one means a new type implementing this trait plus a
/// line in [`Toolbox::standard`].
pub trait Tool: Send + Sync {
    /// The name models call it by (and tasks name in `expectedTools`).
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// A JSON Schema object describing the arguments.
    fn parameters(&self) -> Value;
    /// Run the tool. `Ok` is the `data` of a successful answer; `Err` is the
    /// message of a tool error, fed back to the model.
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String>;
}

/// The answer to one tool call, as fed back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// `{"success": true, "data": ...}` or `{"success": false, "error": ...}`.
    pub content: Value,
    /// The call was refused as the repetition of an identical call.
    pub loop_fired: bool,
}

impl ToolAnswer {
    pub fn ok(data: Value) -> ToolAnswer {
        ToolAnswer { content: json!({"success": true, "data": data}), loop_fired: false }
    }

    pub fn error(message: impl Into<String>) -> ToolAnswer {
        ToolAnswer { content: json!({"success": false, "error": message.into()}), loop_fired: false }
    }

    pub fn is_success(&self) -> bool {
        self.content.get("success") == Some(&Value::Bool(true))
    }
}

/// Every tool a run offers, in declaration order.
pub struct Toolbox {
    tools: Vec<Box<dyn Tool>>,
}

impl Toolbox {
    /// The tools of `docs/tools.md`.
    pub fn standard() -> Toolbox {
        use tools::*;
        Toolbox {
            tools: vec![
                Box::new(ListFiles),
                Box::new(ReadFile),
                Box::new(FindFilesByName),
                Box::new(FindFilesByContent),
                Box::new(WriteFile),
                Box::new(AppendContent),
                Box::new(UpdateFrontmatter),
                Box::new(MoveFile),
                Box::new(DeleteFile),
                Box::new(CreateFolder),
                Box::new(UpdateMemory),
                Box::new(ReadMemory),
                Box::new(RecallSessions),
                Box::new(ActivateSkill),
            ],
        }
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| t.as_ref())
    }

    /// The declarations sent to the model.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: t.parameters(),
            })
            .collect()
    }

    /// Answer one call: loop detection first, then the tool. A call to an
    /// unknown tool, or with `malformed` arguments, is a tool error, never a
    /// failure of the run.
    pub fn dispatch(
        &self,
        vault: &Vault,
        loops: &mut LoopDetector,
        name: &str,
        arguments: &Value,
        malformed: Option<&str>,
    ) -> ToolAnswer {
        if loops.record(name, arguments) {
            let mut answer = ToolAnswer::error(format!(
                "loop detected: `{name}` was already called {LOOP_LIMIT} times with these exact arguments; \
                 use what those calls returned or try something else"
            ));
            answer.loop_fired = true;
            return answer;
        }
        let Some(tool) = self.get(name) else {
            return ToolAnswer::error(format!(
                "unknown tool `{name}`; the available tools are: {}",
                self.names().join(", ")
            ));
        };
        if let Some(why) = malformed {
            return ToolAnswer::error(format!("malformed arguments for `{name}`: {why}; send a JSON object"));
        }
        let empty = Map::new();
        let map = match arguments {
            Value::Object(map) => map,
            Value::Null => &empty,
            other => {
                return ToolAnswer::error(format!(
                    "malformed arguments for `{name}`: expected a JSON object, got {other}"
                ));
            }
        };
        match tool.execute(vault, &Args::new(map)) {
            Ok(data) => ToolAnswer::ok(data),
            Err(message) => ToolAnswer::error(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_agree_with_the_suite_validator() {
        let mut ours = Toolbox::standard().names();
        let mut suite: Vec<&str> = crate::suite::TOOL_NAMES.to_vec();
        ours.sort_unstable();
        suite.sort_unstable();
        assert_eq!(ours, suite);
    }

    #[test]
    fn every_tool_declares_an_object_schema_with_known_required_fields() {
        for spec in Toolbox::standard().specs() {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            let props = spec.parameters["properties"].as_object().unwrap();
            for r in spec.parameters["required"].as_array().unwrap() {
                assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", spec.name);
            }
            assert!(!spec.description.is_empty());
        }
    }

    #[test]
    fn unknown_and_malformed_calls_are_tool_errors() {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::open(dir.path()).unwrap();
        let tb = Toolbox::standard();
        let mut loops = LoopDetector::default();
        let a = tb.dispatch(&vault, &mut loops, "rm_rf", &json!({}), None);
        assert!(!a.is_success());
        assert!(a.content["error"].as_str().unwrap().contains("unknown tool `rm_rf`"));
        let a = tb.dispatch(&vault, &mut loops, "read_file", &json!({}), Some("arguments were not JSON"));
        assert!(a.content["error"].as_str().unwrap().starts_with("malformed arguments for `read_file`"));
        let a = tb.dispatch(&vault, &mut loops, "read_file", &json!([1]), None);
        assert!(a.content["error"].as_str().unwrap().contains("expected a JSON object"));
        let a = tb.dispatch(&vault, &mut loops, "list_files", &Value::Null, None);
        assert!(!a.is_success(), "path is required");
    }

    #[test]
    fn the_fourth_identical_call_is_refused_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "x").unwrap();
        let vault = Vault::open(dir.path()).unwrap();
        let tb = Toolbox::standard();
        let mut loops = LoopDetector::default();
        let call = |loops: &mut LoopDetector, args: Value| tb.dispatch(&vault, loops, "read_file", &args, None);
        for _ in 0..3 {
            assert!(call(&mut loops, json!({"path": "a.md"})).is_success());
        }
        // Key order does not make a call different.
        let a = call(&mut loops, json!({"path": "a.md"}));
        assert!(a.loop_fired && a.content["error"].as_str().unwrap().contains("loop detected"));
        assert!(call(&mut loops, json!({"path": "a.md"})).loop_fired);
        // A different call is still answered.
        assert!(call(&mut loops, json!({"path": "a"})).is_success());
        assert_eq!(loops.fires(), 2);
    }
}
