//! A reference trajectory (`evals/references/<task id>.json`): the tool calls
//! and final answer of one known solution of a task. The `reference` provider
//! replays it as if a model had produced it, which proves the task solvable
//! and drives the whole pipeline offline.
//!
//! ```json
//! {
//!   "steps": [
//!     { "tool": "find_files_by_content", "args": { "query": "Halverston" } },
//!     { "tool": "read_file", "args": { "path": "eval-scratch/budget.md" } }
//!   ],
//!   "answer": "The approved budget is 88,000 marks."
//! }
//! ```
//!
//! Each step is one model turn making one tool call; the answer is the last turn.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    #[serde(default)]
    pub steps: Vec<ReferenceStep>,
    pub answer: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceStep {
    /// A vault tool name, e.g. `read_file`.
    pub tool: String,
    /// The call's arguments, as a model would send them.
    #[serde(default = "empty_args")]
    pub args: serde_json::Value,
}

fn empty_args() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}
