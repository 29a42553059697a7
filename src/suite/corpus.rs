//! The alternative-answer corpus (`<suite>/alternatives/<task id>/*.json`):
//! more trajectories per task, correct and wrong, that `suite check` replays
//! to measure each rubric's false negatives and false positives. This module
//! loads and validates the files; replaying them belongs to the runner.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::format::alternative::{ACTION_MISTAKES, Alternative, Label, MISTAKE_KINDS, Source};
use crate::fsio;

use super::diagnostics::{Diagnostic, did_you_mean};
use super::{Suite, SuiteErrors, TOOL_NAMES};

/// The fewest alternatives of each label a task needs.
pub const MIN_CORRECT: usize = 1;
pub const MIN_WRONG: usize = 2;

/// One alternative, with where it came from.
#[derive(Debug, Clone)]
pub struct Entry {
    pub task_id: String,
    /// The file stem, unique within the task (`correct-1`, `probe-dismissed-distractor`).
    pub name: String,
    pub path: PathBuf,
    pub alternative: Alternative,
}

/// A loaded, valid corpus, sorted by task id then name.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub dir: PathBuf,
    pub entries: Vec<Entry>,
}

impl Corpus {
    /// The default location for a suite.
    pub fn default_dir(suite_root: &Path) -> PathBuf {
        suite_root.join("alternatives")
    }

    /// Load every alternative under `dir` and validate it against `suite`.
    /// `Ok(None)` when `dir` does not exist: the suite has no corpus.
    pub fn load(dir: &Path, suite: &Suite) -> Result<Option<Corpus>, SuiteErrors> {
        if !dir.exists() {
            return Ok(None);
        }
        let mut diagnostics = Vec::new();
        let mut entries = Vec::new();
        let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
        for folder in sorted_entries(dir, &mut diagnostics) {
            let Some(task_id) = folder.file_name().map(|n| n.to_string_lossy().into_owned()) else { continue };
            if !folder.is_dir() {
                diagnostics.push(Diagnostic::error(
                    &folder,
                    "not a folder: alternatives live in <alternatives>/<task id>/<name>.json".into(),
                    None,
                ));
                continue;
            }
            let Some(task) = suite.tasks.iter().find(|t| t.id == task_id) else {
                let help = did_you_mean(&task_id, &ids).map(|m| format!("did you mean `{m}`?"));
                diagnostics.push(Diagnostic::error(&folder, format!("no task `{task_id}` in the suite"), help));
                continue;
            };
            for file in sorted_entries(&folder, &mut diagnostics) {
                if file.extension().is_none_or(|e| e != "json") {
                    diagnostics.push(Diagnostic::error(&file, "not a .json file".into(), None));
                    continue;
                }
                let text = match std::fs::read_to_string(&file) {
                    Ok(t) => t,
                    Err(e) => {
                        diagnostics.push(Diagnostic::error(&file, format!("cannot read: {e}"), None));
                        continue;
                    }
                };
                let alternative: Alternative = match fsio::parse_json(&text) {
                    Ok(a) => a,
                    Err(e) => {
                        diagnostics.push(Diagnostic::from_json_error(&file, &e));
                        continue;
                    }
                };
                validate(&file, &alternative, task.has_judge_matcher(), &mut diagnostics);
                let name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                entries.push(Entry { task_id: task_id.clone(), name, path: file, alternative });
            }
        }
        if !diagnostics.is_empty() {
            return Err(SuiteErrors { diagnostics });
        }
        entries.sort_by(|a, b| (&a.task_id, &a.name).cmp(&(&b.task_id, &b.name)));
        Ok(Some(Corpus { dir: dir.to_path_buf(), entries }))
    }

    /// The alternatives of one task.
    pub fn for_task<'a>(&'a self, task_id: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries.iter().filter(move |e| e.task_id == task_id)
    }

    /// Tasks with fewer than [`MIN_CORRECT`] correct or [`MIN_WRONG`] wrong
    /// alternatives, each with what it lacks.
    pub fn coverage_gaps(&self, suite: &Suite) -> Vec<String> {
        let mut counts: BTreeMap<&str, (usize, usize)> = suite.tasks.iter().map(|t| (t.id.as_str(), (0, 0))).collect();
        for e in &self.entries {
            if let Some(c) = counts.get_mut(e.task_id.as_str()) {
                match e.alternative.label {
                    Label::Correct => c.0 += 1,
                    Label::Wrong => c.1 += 1,
                }
            }
        }
        counts
            .into_iter()
            .filter(|(_, (correct, wrong))| *correct < MIN_CORRECT || *wrong < MIN_WRONG)
            .map(|(id, (correct, wrong))| {
                format!(
                    "{id}: {correct} correct and {wrong} wrong alternatives; every task needs at least \
                     {MIN_CORRECT} correct and {MIN_WRONG} wrong"
                )
            })
            .collect()
    }
}

/// A folder's entries, sorted; hidden names are skipped.
fn sorted_entries(dir: &Path, out: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect(),
        Err(e) => {
            out.push(Diagnostic::error(dir, format!("cannot read the folder: {e}"), None));
            Vec::new()
        }
    };
    paths.sort();
    paths
}

fn validate(file: &Path, a: &Alternative, judged_task: bool, out: &mut Vec<Diagnostic>) {
    let err = |message: String, help: Option<String>| Diagnostic::error(file, message, help);
    match a.label {
        Label::Wrong if !MISTAKE_KINDS.contains(&a.kind.as_str()) => {
            let help = did_you_mean(&a.kind, MISTAKE_KINDS)
                .map_or_else(|| format!("one of: {}", MISTAKE_KINDS.join(", ")), |m| format!("did you mean `{m}`?"));
            out.push(err(format!("unknown kind of mistake `{}`", a.kind), Some(help)).field("kind"));
        }
        _ if a.kind.trim().is_empty() => {
            out.push(err("empty kind".into(), Some("say how the answer differs".into())).field("kind"))
        }
        _ => {}
    }
    match (a.source, a.round) {
        (Source::Blind, Some(0)) => {
            out.push(err("round 0".into(), Some("rounds of blind writing count from 1".into())).field("round"))
        }
        (Source::Reviewer, Some(0 | 1)) => out.push(
            err(
                "a reviewer's first round names no round".into(),
                Some("a later targeted round, written against revised checks, counts from 2".into()),
            )
            .field("round"),
        ),
        _ => {}
    }
    if a.note.trim().is_empty() {
        out.push(
            err("empty note".into(), Some("say what the trajectory does and what is wrong with it".into()))
                .field("note"),
        );
    }
    for (i, step) in a.steps.iter().enumerate() {
        if !TOOL_NAMES.contains(&step.tool.as_str()) {
            let help = did_you_mean(&step.tool, TOOL_NAMES).map(|m| format!("did you mean `{m}`?"));
            out.push(err(format!("unknown tool `{}`", step.tool), help).field(format!("steps[{i}].tool")));
        }
        if !step.args.is_object() {
            out.push(err("arguments must be a JSON object".into(), None).field(format!("steps[{i}].args")));
        }
    }
    if judged_task && a.label == Label::Wrong && a.judge.is_none() && ACTION_MISTAKES.contains(&a.kind.as_str()) {
        out.push(
            err(
                format!("a `{}` mistake may leave the answer text correct, and the task has a judge matcher", a.kind),
                Some("say what the judge should answer about the text: \"judge\": \"YES\" or \"NO\"".into()),
            )
            .field("judge"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(dir: &Path) -> Suite {
        let task = r#"{"id": "alpha", "description": "d", "userMessage": "How heavy?", "difficulty": "T2",
            "category": "retrieval", "outputMatchers": [{"type": "judge", "criteria": "Says 940 kg."}]}"#;
        std::fs::create_dir_all(dir.join("tasks")).unwrap();
        std::fs::write(dir.join("tasks/alpha.json"), task).unwrap();
        Suite::load(dir).unwrap()
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn alt(label: &str, kind: &str) -> String {
        format!(
            r#"{{"source": "blind", "label": "{label}", "kind": "{kind}", "note": "n",
                "steps": [{{"tool": "read_file", "args": {{"path": "eval-scratch/a.md"}}}}], "answer": "940 kg"}}"#
        )
    }

    #[test]
    fn no_folder_means_no_corpus() {
        let dir = tempfile::tempdir().unwrap();
        let s = suite(dir.path());
        assert!(Corpus::load(&dir.path().join("alternatives"), &s).unwrap().is_none());
    }

    #[test]
    fn loads_sorted_entries_and_reports_coverage() {
        let dir = tempfile::tempdir().unwrap();
        let s = suite(dir.path());
        write(dir.path(), "alternatives/alpha/wrong-1.json", &alt("wrong", "distractor"));
        write(dir.path(), "alternatives/alpha/correct-1.json", &alt("correct", "different-route"));
        let c = Corpus::load(&dir.path().join("alternatives"), &s).unwrap().unwrap();
        let names: Vec<&str> = c.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["correct-1", "wrong-1"]);
        assert_eq!(c.for_task("alpha").count(), 2);
        let gaps = c.coverage_gaps(&s);
        assert_eq!(gaps.len(), 1);
        assert!(gaps[0].starts_with("alpha: 1 correct and 1 wrong alternatives"), "{gaps:?}");
        write(dir.path(), "alternatives/alpha/wrong-2.json", &alt("wrong", "fabricated"));
        let c = Corpus::load(&dir.path().join("alternatives"), &s).unwrap().unwrap();
        assert!(c.coverage_gaps(&s).is_empty());
    }

    #[test]
    fn every_problem_is_reported_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let s = suite(dir.path());
        write(dir.path(), "alternatives/alpah/correct-1.json", &alt("correct", "x"));
        write(dir.path(), "alternatives/alpha/a.json", &alt("wrong", "stale-notes"));
        write(dir.path(), "alternatives/alpha/b.json", &alt("wrong", "damaging-write"));
        write(dir.path(), "alternatives/alpha/c.json", &alt("wrong", "distractor").replace("read_file", "read_files"));
        write(dir.path(), "alternatives/alpha/d.json", r#"{"source": "blind"}"#);
        write(dir.path(), "alternatives/alpha/e.txt", "");
        write(
            dir.path(),
            "alternatives/alpha/f.json",
            &alt("correct", "x").replace(r#""label""#, r#""round": 0, "label""#),
        );
        let reviewer = alt("correct", "x").replace(r#""blind""#, r#""reviewer", "round": 1"#);
        write(dir.path(), "alternatives/alpha/g.json", &reviewer);
        let e = Corpus::load(&dir.path().join("alternatives"), &s).unwrap_err().to_string();
        for needle in [
            "alpah: error: no task `alpah` in the suite (help: did you mean `alpha`?)",
            "a.json: error at `kind`: unknown kind of mistake `stale-notes` (help: did you mean `stale-note`?)",
            "b.json: error at `judge`: a `damaging-write` mistake may leave the answer text correct",
            "c.json: error at `steps[0].tool`: unknown tool `read_files` (help: did you mean `read_file`?)",
            "d.json:1:19: error: missing field `label`",
            "e.txt: error: not a .json file",
            "f.json: error at `round`: round 0 (help: rounds of blind writing count from 1)",
            "g.json: error at `round`: a reviewer's first round names no round",
        ] {
            assert!(e.contains(needle), "{needle}\n{e}");
        }
    }
}
