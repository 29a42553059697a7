//! How the tasks a result ran moved since a baseline: which were added,
//! which removed, and which changed under the same id (their definition,
//! fixture or setup files, by the content hashes results record; see
//! `suite::hash`). One function, [`task_drift`], for every reader that
//! shows two results side by side: `compare`, `report`, `bless`, the
//! regression check after `run`, and the site.
//!
//! A task without a hash on either side (a result written before
//! vaultbench recorded them, or by the reference harness) cannot be told
//! changed or not; it is counted apart, never guessed. It does not judge
//! whether a move is a regression (`compare` does).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::format::result::ResultFile;

/// The tasks of a result against those of its baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// In the result, not in the baseline.
    pub added: Vec<String>,
    /// In the baseline, not in the result.
    pub removed: Vec<String>,
    /// In both, with different content hashes: the task was edited.
    pub changed: Vec<String>,
    /// In both with the same content hash.
    pub same: usize,
    /// In both, without a hash on at least one side: cannot be told.
    pub unknown: Vec<String>,
}

/// How the tasks of `current` moved since `baseline`, each list sorted by id.
pub fn task_drift(baseline: &ResultFile, current: &ResultFile) -> Drift {
    let hashes = |r: &ResultFile| -> BTreeMap<String, Option<String>> {
        r.tasks.iter().map(|t| (t.id.clone(), t.content_hash.clone())).collect()
    };
    let (before, after) = (hashes(baseline), hashes(current));
    let mut drift = Drift::default();
    for (id, hash) in &after {
        match (before.get(id), hash) {
            (None, _) => drift.added.push(id.clone()),
            (Some(Some(old)), Some(new)) if old == new => drift.same += 1,
            (Some(Some(_)), Some(_)) => drift.changed.push(id.clone()),
            (Some(_), _) => drift.unknown.push(id.clone()),
        }
    }
    let now: BTreeSet<&String> = after.keys().collect();
    drift.removed = before.keys().filter(|id| !now.contains(id)).cloned().collect();
    drift
}

/// For each of `results`, the tasks it ran that have been edited in the
/// suite at `root` since: each a task it recorded a content hash for whose
/// definition, fixture or setup files hash otherwise now. The suite is read
/// and each task hashed once, whatever the number of results. A list is
/// empty when the suite cannot be read (no tasks folder) or its result
/// recorded no hash.
pub fn edited_since(root: &Path, results: &[&ResultFile]) -> Vec<Vec<String>> {
    let recorded = |r: &ResultFile| -> BTreeMap<String, String> {
        r.tasks.iter().filter_map(|t| Some((t.id.clone(), t.content_hash.clone()?))).collect()
    };
    let recorded: Vec<BTreeMap<String, String>> = results.iter().map(|r| recorded(r)).collect();
    let hashed: BTreeSet<&String> = recorded.iter().flat_map(|r| r.keys()).collect();
    let now = match crate::suite::Suite::load_catalog(root) {
        Ok(suite) if !hashed.is_empty() => {
            crate::suite::hash::content_hashes(root, suite.tasks.iter().filter(|t| hashed.contains(&t.id)))
        }
        _ => BTreeMap::new(),
    };
    recorded
        .iter()
        .map(|then| {
            now.iter()
                .filter(|(id, hash)| then.get(*id).is_some_and(|h| h != *hash))
                .map(|(id, _)| id.clone())
                .collect()
        })
        .collect()
}

/// `Edited in the suite since <what> ran (...): 1 task (a); its verdicts measure the old definition.`
pub fn edited_since_text(what: &str, ids: &[String]) -> String {
    format!(
        "Edited in the suite since {what} ran (definition, fixture or setup files): {}; {} the old definition{}.",
        named(ids),
        if ids.len() == 1 { "its verdicts measure" } else { "their verdicts measure" },
        if ids.len() == 1 { "" } else { "s" }
    )
}

impl Drift {
    /// Nothing was added, removed or changed, and every common task could be told.
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty() && self.unknown.is_empty()
    }

    /// Tasks were added, removed or edited: the two results did not measure the same suite.
    pub fn moved(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty())
    }
}

/// `3 tasks (a, b, c)`, `1 task (a)`.
fn named(ids: &[String]) -> String {
    format!("{} task{} ({})", ids.len(), if ids.len() == 1 { "" } else { "s" }, ids.join(", "))
}

/// In words, one line each: what was added, removed, changed, and what
/// could not be told; or that the tasks are the same.
impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_same() {
            return writeln!(f, "The same {} tasks as the baseline, none edited since.", self.same);
        }
        if !self.added.is_empty() {
            writeln!(f, "Added since the baseline: {}.", named(&self.added))?;
        }
        if !self.removed.is_empty() {
            writeln!(f, "Removed since the baseline: {}.", named(&self.removed))?;
        }
        if !self.changed.is_empty() {
            writeln!(
                f,
                "Changed since the baseline (definition, fixture or setup files edited; same id): {}.",
                named(&self.changed)
            )?;
        }
        if !self.unknown.is_empty() {
            writeln!(
                f,
                "Not known whether changed (no content hash recorded on one side, e.g. a result of an older \
                 version or of the reference harness): {} task{} ({}).",
                self.unknown.len(),
                if self.unknown.len() == 1 { "" } else { "s" },
                crate::report::first_few(&self.unknown)
            )?;
        }
        if self.same > 0 {
            writeln!(f, "Unchanged: {} task{}.", self.same, if self.same == 1 { "" } else { "s" })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Tier;
    use crate::format::result::RunId;
    use crate::report::aggregate::{aggregate, task_result, tests::run};

    fn result(tasks: &[(&str, Option<&str>)]) -> ResultFile {
        let tasks: Vec<_> = tasks
            .iter()
            .map(|(id, hash)| crate::format::result::TaskResult {
                content_hash: hash.map(str::to_string),
                ..task_result(id.to_string(), Some(Tier::T1), None, vec![run(true, true, 1, 0.0, None)])
            })
            .collect();
        ResultFile {
            run_id: RunId("2026-06-01T10:00:00.000Z".into()),
            git_sha: "abc1234".into(),
            model: "m".into(),
            provider: "gemini".into(),
            interrupted: false,
            shard: None,
            task_filter: None,
            offline_judge: false,
            shard_run_ids: Vec::new(),
            aggregate: aggregate(&tasks),
            tasks,
        }
    }

    #[test]
    fn added_removed_changed_and_unknown_tasks_are_named() {
        let base = result(&[("kept", Some("h1")), ("edited", Some("h2")), ("gone", Some("h3")), ("old", None)]);
        let now = result(&[("kept", Some("h1")), ("edited", Some("h2b")), ("new", Some("h4")), ("old", Some("h5"))]);
        let d = task_drift(&base, &now);
        assert_eq!(d.added, ["new"]);
        assert_eq!(d.removed, ["gone"]);
        assert_eq!(d.changed, ["edited"]);
        assert_eq!(d.unknown, ["old"]);
        assert_eq!(d.same, 1);
        assert!(d.moved() && !d.is_same());
        let text = d.to_string();
        assert!(text.contains("Added since the baseline: 1 task (new)."), "{text}");
        assert!(text.contains("Removed since the baseline: 1 task (gone)."), "{text}");
        assert!(text.contains("same id): 1 task (edited)."), "{text}");
        assert!(text.contains("Not known whether changed") && text.contains("(old)"), "{text}");
        assert!(text.contains("Unchanged: 1 task."), "{text}");
    }

    #[test]
    fn the_same_tasks_say_so_and_hashless_results_are_never_guessed_same() {
        let r = result(&[("a", Some("h")), ("b", Some("i"))]);
        let d = task_drift(&r, &r);
        assert!(d.is_same());
        assert_eq!(d.to_string(), "The same 2 tasks as the baseline, none edited since.\n");
        let bare = result(&[("a", None), ("b", None)]);
        let d = task_drift(&bare, &bare);
        assert!(!d.is_same() && !d.moved());
        assert_eq!(d.unknown, ["a", "b"]);
    }
}
