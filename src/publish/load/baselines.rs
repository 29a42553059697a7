//! Loading the headline figures of blessed baselines (`evals/baselines/*.json`)
//! for the site: run id, commit, model, provider, the aggregate, and per task
//! its counts and mean metrics.
//!
//! Each run's evidence (`RunHeadline`: response text, metrics, errors,
//! every check with its verdict, how it ended) is kept for the run pages.
//! Every field is optional here: a readable file with missing fields still
//! gives a row, with safe defaults filled in by `publish::results`. A file that
//! is not valid JSON, or has a field of the wrong type, is left out with a
//! warning naming the file, the position and the field.
//!
//! It does not validate figures (that is `vaultbench report`) and never
//! writes anything.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use rayon::prelude::*;
use serde::Deserialize;

use crate::fsio;
use crate::publish::Warning;

/// The headline part of a result/baseline file.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Headline {
    pub run_id: Option<String>,
    pub git_sha: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    #[serde(default)]
    pub tasks: Vec<TaskHeadline>,
    #[serde(default)]
    pub aggregate: AggregateHeadline,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct TaskHeadline {
    pub id: Option<String>,
    pub difficulty: Option<String>,
    pub category: Option<String>,
    pub n_runs: Option<u32>,
    pub passed_count: Option<u32>,
    pub solved_count: Option<u32>,
    pub pass_k: Option<bool>,
    pub solve_k: Option<bool>,
    pub flaky: Option<bool>,
    #[serde(default)]
    pub metrics: MetricsHeadline,
    /// The runs, reduced to what the judge marks need.
    #[serde(default)]
    pub runs: Option<Vec<RunHeadline>>,
}

/// One run with its evidence, as the run pages show it. Every field is
/// optional: a run with missing fields still shows what it has.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RunHeadline {
    pub passed: Option<bool>,
    pub solved: Option<bool>,
    pub response_text: Option<String>,
    #[serde(default)]
    pub metrics: Option<RunMetricsHeadline>,
    #[serde(default)]
    pub errors: Option<Vec<String>>,
    pub solve_details: Option<DetailsHeadline>,
    #[serde(rename = "timedOut")]
    pub timed_out: Option<bool>,
    /// `turn_limit` or `context_exceeded` (vaultbench's addition); kept as
    /// text, so an unknown value shows as it is instead of losing the file.
    #[serde(rename = "endReason")]
    pub end_reason: Option<String>,
    pub transcript_path: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct RunMetricsHeadline {
    pub turns: Option<f64>,
    pub tool_calls: Option<f64>,
    pub prompt_tokens: Option<f64>,
    pub cached_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    pub cost_usd: Option<f64>,
    pub loop_fires: Option<f64>,
    pub duration_ms: Option<f64>,
    #[serde(default)]
    pub tool_list: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct DetailsHeadline {
    pub judge_skipped: Option<bool>,
    pub expected_tools_met: Option<bool>,
    pub forbidden_tools_clean: Option<bool>,
    pub matchers_pass: Option<bool>,
    pub vault_assertions_pass: Option<bool>,
    pub tool_budget_ok: Option<bool>,
    #[serde(default)]
    pub matcher_details: Option<Vec<MatcherHeadline>>,
    #[serde(default)]
    pub vault_assertion_details: Option<Vec<AssertionHeadline>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct MatcherHeadline {
    /// `contains`, `regex` or `judge`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A string or a list of strings.
    pub value: Option<serde_json::Value>,
    pub flags: Option<String>,
    pub criteria: Option<String>,
    pub verdict: Option<bool>,
    pub error: Option<String>,
}

impl MatcherHeadline {
    pub fn is_judge(&self) -> bool {
        self.kind.as_deref() == Some("judge")
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct AssertionHeadline {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub path: Option<String>,
    pub ok: Option<bool>,
    pub reason: Option<String>,
}

impl RunHeadline {
    /// The facts `report::judge_skips` tallies; a missing field reads as the
    /// check failing, so a malformed run never counts as decided by the judge.
    pub fn judge_facts(&self) -> crate::report::judge_skips::RunFacts {
        let none = DetailsHeadline::default();
        let d = self.solve_details.as_ref().unwrap_or(&none);
        let holds = |b: Option<bool>| b.unwrap_or(false);
        let other_matchers = d.matcher_details.iter().flatten().filter(|m| !m.is_judge());
        crate::report::judge_skips::RunFacts {
            passed: holds(self.passed),
            judge_skipped: holds(d.judge_skipped),
            other_checks_hold: holds(d.expected_tools_met)
                && holds(d.forbidden_tools_clean)
                && holds(d.vault_assertions_pass)
                && holds(d.tool_budget_ok)
                && other_matchers.clone().all(|m| holds(m.verdict)),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct MetricsHeadline {
    pub turns: Option<f64>,
    pub tool_calls: Option<f64>,
    pub prompt_tokens: Option<f64>,
    pub cached_tokens: Option<f64>,
    pub cache_ratio: Option<f64>,
    pub output_tokens: Option<f64>,
    pub cost_usd: Option<f64>,
    pub loop_fires: Option<f64>,
    pub duration_ms: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct AggregateHeadline {
    pub total_tasks: Option<u32>,
    pub n_runs: Option<u32>,
    pub total_runs: Option<u32>,
    pub pass_k_rate: Option<f64>,
    pub solve_k_rate: Option<f64>,
    pub mean_pass_rate: Option<f64>,
    pub mean_solve_rate: Option<f64>,
    pub flaky_task_count: Option<u32>,
    pub mean_turns: Option<f64>,
    pub p95_turns: Option<f64>,
    pub mean_cache_ratio: Option<f64>,
    pub mean_cost_usd: Option<f64>,
    pub total_cost_usd: Option<f64>,
    pub total_loop_fires: Option<u32>,
    #[serde(default)]
    pub by_difficulty: IndexMap<String, TierHeadline>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct TierHeadline {
    pub total_tasks: Option<u32>,
    pub solve_k_count: Option<u32>,
    pub solved_cells: Option<u32>,
    pub run_cells: Option<u32>,
    pub solve_k_rate: Option<f64>,
    pub mean_solve_rate: Option<f64>,
}

/// One readable baseline file.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub path: PathBuf,
    /// The file name without `.json`; names the baseline's own page.
    pub stem: String,
    pub headline: Headline,
    /// A digest of the file's text: a rebuild reuses the parsed file when
    /// it is unchanged, and pages keyed on it are not rendered again.
    pub digest: u64,
}

/// Parse one baseline's headline from its text.
pub fn parse(text: &str) -> Result<Headline, fsio::JsonError> {
    fsio::parse_json(text)
}

/// Load every `*.json` in `dir`, sorted by file name. A missing folder is an
/// empty list (a fresh clone has no baselines yet).
pub fn load_dir(dir: &Path) -> Result<(Vec<Baseline>, Vec<Warning>), anyhow::Error> {
    load_dir_reusing(dir, &[])
}

/// [`load_dir`], taking each file whose text is unchanged from `previous`
/// (the last load) instead of parsing it again: `--watch` after one
/// baseline changed reads every file but parses one.
pub fn load_dir_reusing(dir: &Path, previous: &[Baseline]) -> Result<(Vec<Baseline>, Vec<Warning>), anyhow::Error> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => anyhow::bail!("reading the baselines folder {}: {e}", dir.display()),
    };
    files.sort();
    let known: HashMap<(&Path, u64), &Headline> =
        previous.iter().map(|b| ((b.path.as_path(), b.digest), &b.headline)).collect();
    let results = parse_files(&files, &known);
    let mut baselines: Vec<Baseline> = Vec::with_capacity(files.len());
    let mut warnings = Vec::new();
    let mut names = crate::publish::write::Namespace::default();
    for (path, result) in files.into_iter().zip(results) {
        match result {
            Ok((headline, digest)) => {
                let stem = page_name(&path, &mut names, &mut warnings);
                baselines.push(Baseline { path, stem, headline, digest });
            }
            Err(message) => warnings.push(Warning::new(
                &path,
                format!("{message}; this baseline is left out of the table (fix the file or remove it)"),
            )),
        }
    }
    Ok((baselines, warnings))
}

/// The name of a baseline's pages: its file name without `.json`, unless
/// another baseline's already has it where case, Unicode normalization or
/// bytes that are not UTF-8 are ignored (as some file systems and every
/// URL do); then `-2`, `-3`... and a warning naming both files, so that
/// every baseline has pages of its own.
fn page_name(path: &Path, names: &mut crate::publish::write::Namespace, warnings: &mut Vec<Warning>) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let source = path.display().to_string();
    let Err(first) = names.claim(&stem, source.clone()) else { return stem };
    let unique = (2..).map(|n| format!("{stem}-{n}")).find(|s| !names.is_taken(s)).expect("a free name");
    let _ = names.claim(&unique, source);
    warnings.push(Warning::new(
        path,
        format!(
            "this baseline's page name {stem:?} is also {}'s (names that differ only by case, Unicode \
             normalization or bytes that are not UTF-8 are one page on many file systems); its pages are published \
             as {unique:?}. Rename one of the files",
            first.taken_by
        ),
    ));
    unique
}

/// Read and parse each file, spread over the cores (parsing dominates a
/// build with many large baselines). `VAULTBENCH_PARSE_THREADS` caps the
/// threads, for the one-thread figure of `benches/publish.sh`.
fn parse_files(files: &[PathBuf], known: &HashMap<(&Path, u64), &Headline>) -> Vec<Result<(Headline, u64), String>> {
    let one = |path: &PathBuf| -> Result<(Headline, u64), String> {
        let text = fsio::read_text_plain(path).map_err(|e| format!("cannot read: {e}"))?;
        let digest = crate::publish::digest::of_bytes(text.as_bytes());
        if let Some(&headline) = known.get(&(path.as_path(), digest)) {
            return Ok((headline.clone(), digest));
        }
        parse(&text).map(|h| (h, digest)).map_err(|e| e.to_string())
    };
    let all = || files.par_iter().map(one).collect();
    match std::env::var("VAULTBENCH_PARSE_THREADS").ok().and_then(|v| v.parse::<usize>().ok()) {
        Some(cap) => match rayon::ThreadPoolBuilder::new().num_threads(cap.max(1)).build() {
            Ok(pool) => pool.install(all),
            Err(_) => all(),
        },
        None => all(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_evidence_is_skipped_and_missing_fields_are_none() {
        let h = parse(r#"{"model": "m", "tasks": [{"id": "a", "runs": [{"huge": [1, 2, {"x": "y"}]}]}]}"#).unwrap();
        assert_eq!(h.model.as_deref(), Some("m"));
        assert_eq!(h.provider, None);
        assert_eq!(h.tasks.len(), 1);
        assert_eq!(h.tasks[0].id.as_deref(), Some("a"));
        assert_eq!(h.aggregate.solve_k_rate, None);
        let facts = h.tasks[0].runs.as_ref().unwrap()[0].judge_facts();
        assert!(!facts.passed && !facts.judge_skipped && !facts.other_checks_hold);
        assert!(parse(r#"{"tasks": [{"runs": null}]}"#).unwrap().tasks[0].runs.is_none());
    }

    #[test]
    fn a_run_decided_by_the_missing_judge_is_recognised() {
        let h = parse(
            r#"{"tasks": [{"id": "a", "runs": [{"passed": true, "response_text": "long", "solve_details": {
                "expected_tools_met": true, "forbidden_tools_clean": true, "vault_assertions_pass": true,
                "tool_budget_ok": true, "judge_skipped": true, "matcher_details": [
                    {"type": "contains", "value": "x", "verdict": true},
                    {"type": "judge", "criteria": "c", "verdict": false, "error": "no judge available"}]}}]}]}"#,
        )
        .unwrap();
        let facts = h.tasks[0].runs.as_ref().unwrap()[0].judge_facts();
        assert!(facts.passed && facts.judge_skipped && facts.other_checks_hold);
    }

    #[test]
    fn a_wrong_type_names_the_field() {
        let e = parse("{\"aggregate\": {\"solve_k_rate\": \"high\"}}").unwrap_err();
        assert_eq!(e.field, "aggregate.solve_k_rate");
        let e = parse("{\"model\": ").unwrap_err();
        assert!(e.message.contains("EOF"), "{e}");
    }

    #[test]
    fn a_folder_with_a_bad_file_keeps_the_good_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), r#"{"model": "a"}"#).unwrap();
        std::fs::write(dir.path().join("b.json"), "{ not json").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let (ok, warnings) = load_dir(dir.path()).unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].stem, "a");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].to_string().contains("b.json"), "{}", warnings[0]);
        let (none, w) = load_dir(&dir.path().join("absent")).unwrap();
        assert!(none.is_empty() && w.is_empty());
    }

    #[test]
    fn many_files_parse_in_parallel_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..20 {
            std::fs::write(dir.path().join(format!("b{i:02}.json")), format!(r#"{{"model": "m{i:02}"}}"#)).unwrap();
        }
        let (ok, _) = load_dir(dir.path()).unwrap();
        let models: Vec<_> = ok.iter().map(|b| b.headline.model.clone().unwrap()).collect();
        let expected: Vec<_> = (0..20).map(|i| format!("m{i:02}")).collect();
        assert_eq!(models, expected);
    }

    #[test]
    fn a_reload_reuses_unchanged_files_and_parses_changed_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), r#"{"model": "a"}"#).unwrap();
        std::fs::write(dir.path().join("b.json"), r#"{"model": "b"}"#).unwrap();
        let (mut first, _) = load_dir(dir.path()).unwrap();
        // A reused entry is recognised by its path and digest: mark one to see it come back.
        first[0].headline.provider = Some("kept from the last load".into());
        first[1].headline.provider = Some("kept from the last load".into());
        std::fs::write(dir.path().join("b.json"), r#"{"model": "b2"}"#).unwrap();
        let (second, _) = load_dir_reusing(dir.path(), &first).unwrap();
        assert_eq!(second[0].headline.provider.as_deref(), Some("kept from the last load"));
        assert_eq!((second[1].headline.model.as_deref(), second[1].headline.provider.as_deref()), (Some("b2"), None));
        assert_ne!(first[1].digest, second[1].digest);
    }
}
