//! The task file (`evals/tasks/<id>.json`), field for field as the reference
//! harness defines it. Unknown fields are an error: a misspelt rubric field
//! would otherwise be silently ignored and the task would score wrongly.

use serde::{Deserialize, Serialize};

use super::{OneOrMany, Tier};

/// Default turn limit when a task does not set `maxTurns`.
pub const DEFAULT_MAX_TURNS: u32 = 15;
/// Default wall-clock limit when a task does not set `timeoutMs`.
pub const DEFAULT_TIMEOUT_MS: u64 = 300_000;

/// Every field name a task file may use, for did-you-mean suggestions.
pub const TASK_FIELDS: &[&str] = &[
    "id",
    "description",
    "userMessage",
    "difficulty",
    "category",
    "fixture",
    "contextFiles",
    "setup",
    "expectedTools",
    "forbiddenTools",
    "outputMatchers",
    "vaultAssertions",
    "toolCallBudget",
    "maxTurns",
    "timeoutMs",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Task {
    pub id: String,
    pub description: String,
    pub user_message: String,
    pub difficulty: Tier,
    pub category: String,
    /// Folder under `fixtures/` copied into `eval-scratch/`; none means an empty scratch folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
    /// Vault paths attached to the first message (the "context shelf").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_files: Vec<String>,
    /// Files written into the vault before the run, from `fixtures/<from>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<SetupFile>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_tools: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden_tools: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_matchers: Vec<Matcher>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vault_assertions: Vec<VaultAssertion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_budget: Option<u32>,
    #[serde(default = "default_max_turns")]
    pub max_turns: u32,
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_max_turns() -> u32 {
    DEFAULT_MAX_TURNS
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

impl Task {
    /// Whether any output matcher needs the judge model.
    pub fn has_judge_matcher(&self) -> bool {
        self.output_matchers.iter().any(|m| matches!(m, Matcher::Judge { .. }))
    }

    /// The criteria of the task's judge matchers, in order.
    pub fn judge_criteria(&self) -> impl Iterator<Item = &str> {
        self.output_matchers.iter().filter_map(|m| match m {
            Matcher::Judge { criteria } => Some(criteria.as_str()),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupFile {
    /// Destination, relative to the vault root.
    pub path: String,
    /// Source, relative to the suite's `fixtures/` folder.
    pub from: String,
}

/// An output matcher: a check on the model's final answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum Matcher {
    /// Substring, case-sensitive; an array is any-of.
    Contains { value: OneOrMany },
    /// JavaScript regular expression with separate flags; an array is any-of.
    Regex {
        value: OneOrMany,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flags: Option<String>,
    },
    /// A yes/no question for the judge model.
    Judge { criteria: String },
}

pub const MATCHER_TYPES: &[&str] = &["contains", "regex", "judge"];
pub const MATCHER_FIELDS: &[&str] = &["type", "value", "flags", "criteria"];

/// A check on the vault after the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum VaultAssertion {
    FileExists {
        path: String,
    },
    FileAbsent {
        path: String,
    },
    /// Any-of substring.
    FileContains {
        path: String,
        value: OneOrMany,
    },
    /// None-of substring.
    FileLacks {
        path: String,
        value: OneOrMany,
    },
    /// Any-of JavaScript regex.
    FileMatches {
        path: String,
        value: OneOrMany,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flags: Option<String>,
    },
    /// YAML frontmatter `key` deep-equals `value`.
    FrontmatterEquals {
        path: String,
        key: String,
        value: serde_json::Value,
    },
    /// Byte-equal to `fixtures/<task fixture>/<fixture>`.
    FileUnchanged {
        path: String,
        fixture: String,
    },
    /// A vaultbench extension: every file of the vault outside `except` is
    /// byte for byte as the run found it, none was removed and none added.
    NothingElseChanged {
        #[serde(default)]
        except: Vec<String>,
    },
}

pub const ASSERTION_TYPES: &[&str] = &[
    "fileExists",
    "fileAbsent",
    "fileContains",
    "fileLacks",
    "fileMatches",
    "frontmatterEquals",
    "fileUnchanged",
    "nothingElseChanged",
];
pub const ASSERTION_FIELDS: &[&str] = &["type", "path", "value", "flags", "key", "fixture", "except"];

impl VaultAssertion {
    /// The assertion's `type` as written in task files.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::FileExists { .. } => "fileExists",
            Self::FileAbsent { .. } => "fileAbsent",
            Self::FileContains { .. } => "fileContains",
            Self::FileLacks { .. } => "fileLacks",
            Self::FileMatches { .. } => "fileMatches",
            Self::FrontmatterEquals { .. } => "frontmatterEquals",
            Self::FileUnchanged { .. } => "fileUnchanged",
            Self::NothingElseChanged { .. } => "nothingElseChanged",
        }
    }

    /// The file the assertion is about; empty for one about the whole vault.
    pub fn path(&self) -> &str {
        match self {
            Self::NothingElseChanged { .. } => "",
            Self::FileExists { path }
            | Self::FileAbsent { path }
            | Self::FileContains { path, .. }
            | Self::FileLacks { path, .. }
            | Self::FileMatches { path, .. }
            | Self::FrontmatterEquals { path, .. }
            | Self::FileUnchanged { path, .. } => path,
        }
    }
}
