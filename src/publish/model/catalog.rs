//! The task catalog: the current suite as the site sees it, a line per
//! task with its tier, category, request and checks.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::format::task::{Matcher, Task};

/// The current suite as the site sees it.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteView {
    /// The tasks folder, for messages (`evals/tasks`).
    pub folder: String,
    /// `ok`, `empty` (no task files) or `invalid` (tasks that do not load).
    pub status: &'static str,
    /// Problems when `invalid`, one line each.
    pub problems: Vec<String>,
    pub tasks: Vec<CatalogTask>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CatalogTask {
    pub id: String,
    /// What the task is (`suite::hash`): a baseline that ran it with
    /// another hash ran an edited task.
    #[serde(skip)]
    pub content_hash: Option<String>,
    pub tier: String,
    pub category: String,
    pub description: String,
    /// The user's message the run starts with (`userMessage`).
    pub request: String,
    pub expected_tools: Vec<String>,
    pub forbidden_tools: Vec<String>,
    pub tool_call_budget: Option<u32>,
    pub matchers: String,
    pub assertions: usize,
    /// The task's checks in words (`checks::explain`), for the run pages.
    #[serde(skip)]
    pub explainer: std::sync::Arc<crate::checks::explain::Explainer>,
    /// The task's vault assertions, which a run records in this order.
    #[serde(skip)]
    pub vault_assertions: Vec<crate::format::task::VaultAssertion>,
}

impl SuiteView {
    pub fn from_tasks(folder: String, tasks: &[Task]) -> SuiteView {
        let mut tasks: Vec<CatalogTask> = tasks
            .iter()
            .map(|t| CatalogTask {
                id: t.id.clone(),
                content_hash: None,
                tier: t.difficulty.to_string(),
                category: t.category.clone(),
                description: t.description.clone(),
                request: t.user_message.clone(),
                expected_tools: t.expected_tools.clone(),
                forbidden_tools: t.forbidden_tools.clone(),
                tool_call_budget: t.tool_call_budget,
                matchers: matcher_summary(&t.output_matchers),
                assertions: t.vault_assertions.len(),
                explainer: Default::default(),
                vault_assertions: t.vault_assertions.clone(),
            })
            .collect();
        tasks.sort_by(|a, b| (&a.tier, &a.id).cmp(&(&b.tier, &b.id)));
        SuiteView { folder, status: "ok", problems: Vec::new(), tasks }
    }

    pub fn empty(folder: String) -> SuiteView {
        SuiteView { folder, status: "empty", problems: Vec::new(), tasks: Vec::new() }
    }

    pub fn invalid(folder: String, problems: Vec<String>) -> SuiteView {
        SuiteView { folder, status: "invalid", problems, tasks: Vec::new() }
    }

    /// The current suite's task ids with their content hashes (`None` when
    /// one could not be made); `None` when the suite did not load.
    pub fn ids(&self) -> Option<BTreeMap<&str, Option<&str>>> {
        (self.status == "ok").then(|| self.tasks.iter().map(|t| (t.id.as_str(), t.content_hash.as_deref())).collect())
    }
}

pub fn matcher_summary(matchers: &[Matcher]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for m in matchers {
        let name = match m {
            Matcher::Contains { .. } => "contains",
            Matcher::Regex { .. } => "regex",
            Matcher::Judge { .. } => "judge",
        };
        *counts.entry(name).or_default() += 1;
    }
    counts.iter().map(|(k, n)| if *n == 1 { k.to_string() } else { format!("{k} ×{n}") }).collect::<Vec<_>>().join(", ")
}
