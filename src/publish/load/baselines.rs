//! Loading blessed baselines (`evals/baselines/*.json`) for the site: run
//! id, commit, model, provider, the aggregate, and per task its counts,
//! mean metrics and each run's evidence (response text, metrics, errors,
//! every check with its verdict, how it ended).
//!
//! A baseline is read by the reader `report` and `bless` use
//! (`format::result`), and its stored figures must be those its runs give
//! (`report::aggregate::check_figures`): a file that is not a result, has a
//! value of the wrong type or out of range (a negative or fractional count,
//! tokens past what a count holds), or figures its runs disagree with, is
//! left out with a warning naming the file, the position and the field (an
//! error with `--strict`). What is read becomes a [`Headline`], the plain
//! data the pages are made from.
//!
//! It never writes anything.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use rayon::prelude::*;
use serde::Deserialize;

use crate::format::OneOrMany;
use crate::format::result::{MatcherDetail, ResultFile, RunRecord, TaskResult};
use crate::fsio;
use crate::publish::Warning;
use crate::publish::load::inputs;

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
    /// What the task was when it ran (`suite::hash`), where recorded.
    #[serde(default)]
    pub content_hash: Option<String>,
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

/// Where the evidence archive of `baseline` is read from, if it has one:
/// the archive of its own run, found by its run id (so a file left by an
/// interrupted bless is never picked up), by the rule for links of
/// `inputs` within the baselines folder `dir`; `Err` says why it cannot be.
pub fn evidence_archive(dir: &Path, baseline: &Baseline) -> Option<Result<PathBuf, String>> {
    let archive = crate::report::evidence::archive_path(&baseline.path, baseline.headline.run_id.as_deref()?)?;
    std::fs::symlink_metadata(&archive).ok()?;
    Some(
        inputs::readable(dir, &archive).and_then(|file| {
            if file.is_file() { Ok(file) } else { Err(format!("{} is not a file", archive.display())) }
        }),
    )
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

/// Read one baseline from its text, as `report` reads a result, and check
/// its figures against its runs.
pub fn parse(text: &str) -> Result<Headline, String> {
    crate::report::parse_checked(text).map(Headline::from)
}

/// A headline from JSON with any field missing, for the tests of the pages.
#[cfg(test)]
pub fn parse_partial(text: &str) -> Headline {
    serde_json::from_str(text).expect("a partial headline")
}

impl From<ResultFile> for Headline {
    fn from(r: ResultFile) -> Headline {
        let a = r.aggregate;
        Headline {
            run_id: Some(r.run_id.0),
            git_sha: Some(r.git_sha),
            model: Some(r.model),
            provider: Some(r.provider),
            tasks: r.tasks.into_iter().map(TaskHeadline::from).collect(),
            aggregate: AggregateHeadline {
                total_tasks: Some(a.total_tasks),
                n_runs: Some(a.n_runs),
                total_runs: Some(a.total_runs),
                pass_k_rate: Some(a.pass_k_rate),
                solve_k_rate: Some(a.solve_k_rate),
                mean_pass_rate: Some(a.mean_pass_rate),
                mean_solve_rate: Some(a.mean_solve_rate),
                flaky_task_count: Some(a.flaky_task_count),
                mean_turns: Some(a.mean_turns),
                p95_turns: Some(f64::from(a.p95_turns)),
                mean_cache_ratio: a.mean_cache_ratio,
                mean_cost_usd: Some(a.mean_cost_usd),
                total_cost_usd: Some(a.total_cost_usd),
                total_loop_fires: Some(a.total_loop_fires),
                by_difficulty: a
                    .by_difficulty
                    .into_iter()
                    .map(|(tier, t)| {
                        let tier_view = TierHeadline {
                            total_tasks: Some(t.total_tasks),
                            solve_k_count: Some(t.solve_k_count),
                            solved_cells: Some(t.solved_cells),
                            run_cells: Some(t.run_cells),
                            solve_k_rate: Some(t.solve_k_rate),
                            mean_solve_rate: Some(t.mean_solve_rate),
                        };
                        (tier, tier_view)
                    })
                    .collect(),
            },
        }
    }
}

impl From<TaskResult> for TaskHeadline {
    fn from(t: TaskResult) -> TaskHeadline {
        let m = t.metrics;
        TaskHeadline {
            id: Some(t.id),
            content_hash: t.content_hash,
            difficulty: t.difficulty.map(|d| d.as_str().to_string()),
            category: t.category,
            n_runs: Some(t.n_runs),
            passed_count: Some(t.passed_count),
            solved_count: Some(t.solved_count),
            pass_k: Some(t.pass_k),
            solve_k: Some(t.solve_k),
            flaky: Some(t.flaky),
            metrics: MetricsHeadline {
                turns: Some(m.turns),
                tool_calls: Some(m.tool_calls),
                prompt_tokens: Some(m.prompt_tokens),
                cached_tokens: Some(m.cached_tokens),
                cache_ratio: m.cache_ratio,
                output_tokens: Some(m.output_tokens),
                cost_usd: Some(m.cost_usd),
                loop_fires: Some(m.loop_fires),
                duration_ms: Some(m.duration_ms),
            },
            runs: Some(t.runs.into_iter().map(RunHeadline::from).collect()),
        }
    }
}

impl From<RunRecord> for RunHeadline {
    fn from(r: RunRecord) -> RunHeadline {
        let m = r.metrics;
        let d = r.solve_details;
        RunHeadline {
            passed: Some(r.passed),
            solved: Some(r.solved),
            response_text: Some(r.response_text),
            metrics: Some(RunMetricsHeadline {
                turns: Some(f64::from(m.turns)),
                tool_calls: Some(f64::from(m.tool_calls)),
                prompt_tokens: Some(m.prompt_tokens as f64),
                cached_tokens: m.cached_tokens.map(|c| c as f64),
                output_tokens: Some(m.output_tokens as f64),
                cost_usd: Some(m.cost_usd),
                loop_fires: Some(f64::from(m.loop_fires)),
                duration_ms: Some(m.duration_ms as f64),
                tool_list: Some(m.tool_list),
            }),
            errors: Some(r.errors),
            solve_details: Some(DetailsHeadline {
                judge_skipped: Some(d.judge_skipped),
                expected_tools_met: Some(d.expected_tools_met),
                forbidden_tools_clean: Some(d.forbidden_tools_clean),
                matchers_pass: Some(d.matchers_pass),
                vault_assertions_pass: Some(d.vault_assertions_pass),
                tool_budget_ok: Some(d.tool_budget_ok),
                matcher_details: Some(d.matcher_details.into_iter().map(MatcherHeadline::from).collect()),
                vault_assertion_details: Some(
                    d.vault_assertion_details
                        .into_iter()
                        .map(|a| AssertionHeadline {
                            kind: Some(a.kind),
                            path: Some(a.path),
                            ok: Some(a.ok),
                            reason: Some(a.reason),
                        })
                        .collect(),
                ),
            }),
            timed_out: r.timed_out,
            end_reason: r.end_reason.map(|e| e.as_str().to_string()),
            transcript_path: Some(r.transcript_path),
        }
    }
}

impl From<MatcherDetail> for MatcherHeadline {
    fn from(m: MatcherDetail) -> MatcherHeadline {
        let kind = Some(m.type_name().to_string());
        let values = |v: OneOrMany| match v {
            OneOrMany::One(s) => serde_json::Value::String(s),
            OneOrMany::Many(list) => list.into_iter().map(serde_json::Value::String).collect(),
        };
        match m {
            MatcherDetail::Contains { value, verdict, error } => MatcherHeadline {
                kind,
                value: Some(values(value)),
                verdict: Some(verdict),
                error,
                ..Default::default()
            },
            MatcherDetail::Regex { value, flags, verdict, error } => MatcherHeadline {
                kind,
                value: Some(values(value)),
                flags,
                verdict: Some(verdict),
                error,
                criteria: None,
            },
            MatcherDetail::Judge { criteria, verdict, error } => {
                MatcherHeadline { kind, criteria: Some(criteria), verdict: Some(verdict), error, ..Default::default() }
            }
        }
    }
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
    let mut warnings = Vec::new();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .filter(|p| !p.file_name().is_some_and(inputs::is_hidden))
            .filter(|p| match inputs::readable(dir, p) {
                Ok(file) => file.is_file(),
                Err(why) => {
                    warnings.push(Warning::new(p, why));
                    false
                }
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => anyhow::bail!("reading the baselines folder {}: {e}", dir.display()),
    };
    files.sort();
    let known: HashMap<(&Path, u64), &Headline> =
        previous.iter().map(|b| ((b.path.as_path(), b.digest), &b.headline)).collect();
    let results = parse_files(&files, &known);
    let mut baselines: Vec<Baseline> = Vec::with_capacity(files.len());
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

    /// A result as `vaultbench run` writes it, as JSON.
    fn result_json(model: &str) -> String {
        let run = |solved| crate::report::aggregate::tests::run(true, solved, 3, 0.01, None);
        let task = crate::report::aggregate::task_result("a".into(), None, None, vec![run(true), run(false)]);
        let result = ResultFile {
            run_id: crate::format::result::RunId("2026-01-01T00:00:00.000Z".into()),
            git_sha: "abc".into(),
            model: model.into(),
            provider: "p".into(),
            interrupted: false,
            offline_judge: false,
            shard_run_ids: Vec::new(),
            shard: None,
            task_filter: None,
            aggregate: crate::report::aggregate::aggregate(std::slice::from_ref(&task)),
            tasks: vec![task],
        };
        serde_json::to_string(&result).unwrap()
    }

    #[test]
    fn a_result_reads_whole_and_anything_else_says_why() {
        let h = parse(&result_json("m")).unwrap();
        assert_eq!((h.model.as_deref(), h.tasks.len()), (Some("m"), 1));
        assert_eq!(h.tasks[0].runs.as_ref().unwrap().len(), 2);
        assert_eq!(h.aggregate.mean_solve_rate, Some(50.0));
        // Not a result at all, a task file, values a count cannot hold, figures the runs deny.
        let good = result_json("m");
        for (text, why) in [
            (r#"{"hello": 1}"#.to_string(), "missing field `run_id`"),
            (r#"{"id": "t", "userMessage": "x"}"#.to_string(), "not a result file"),
            (good.replacen("\"turns\":3,\"tool_calls\"", "\"turns\":-3,\"tool_calls\"", 1), "turns"),
            (good.replacen("\"tool_calls\":2,", "\"tool_calls\":2.5,", 1), "tool_calls"),
            (good.replacen("\"prompt_tokens\":1000,", "\"prompt_tokens\":1.5e308,", 1), "prompt_tokens"),
            (good.replacen("\"solved_count\":1", "\"solved_count\":2", 1), "stored figures"),
        ] {
            assert_ne!(text, good, "{why}: the sample changed nothing");
            let e = parse(&text).unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
        }
    }

    #[test]
    fn a_wrong_type_names_the_field() {
        let e = parse(&result_json("m").replacen("\"git_sha\":\"abc\"", "\"git_sha\":5", 1)).unwrap_err();
        assert!(e.contains("git_sha"), "{e}");
        let e = parse("{\"model\": ").unwrap_err();
        assert!(e.contains("EOF"), "{e}");
    }

    #[test]
    fn a_folder_with_a_bad_file_keeps_the_good_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), result_json("a")).unwrap();
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
            std::fs::write(dir.path().join(format!("b{i:02}.json")), result_json(&format!("m{i:02}"))).unwrap();
        }
        let (ok, _) = load_dir(dir.path()).unwrap();
        let models: Vec<_> = ok.iter().map(|b| b.headline.model.clone().unwrap()).collect();
        let expected: Vec<_> = (0..20).map(|i| format!("m{i:02}")).collect();
        assert_eq!(models, expected);
    }

    #[test]
    fn a_reload_reuses_unchanged_files_and_parses_changed_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), result_json("a")).unwrap();
        std::fs::write(dir.path().join("b.json"), result_json("b")).unwrap();
        let (mut first, _) = load_dir(dir.path()).unwrap();
        // A reused entry is recognised by its path and digest: mark one to see it come back.
        first[0].headline.provider = Some("kept from the last load".into());
        first[1].headline.provider = Some("kept from the last load".into());
        std::fs::write(dir.path().join("b.json"), result_json("b2")).unwrap();
        let (second, _) = load_dir_reusing(dir.path(), &first).unwrap();
        assert_eq!(second[0].headline.provider.as_deref(), Some("kept from the last load"));
        assert_eq!(
            (second[1].headline.model.as_deref(), second[1].headline.provider.as_deref()),
            (Some("b2"), Some("p"))
        );
        assert_ne!(first[1].digest, second[1].digest);
    }
}
