//! Blessing: promoting a result to the committed baseline of its (provider,
//! model). A baseline is what the published table shows and what later runs
//! are checked against, so a result that would mislead is refused: moving
//! model aliases, interrupted or partial sweeps, runs with harness errors,
//! results whose verdicts a missing judge decided (unless `--force`), and — never forceable — self-check runs of the
//! `reference` provider, empty results and results whose aggregate does not
//! re-derive from their runs.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::format::result::ResultFile;
use crate::fsio;
use crate::report::{self, aggregate, baseline_dir, evidence, judge_skips};

/// `<provider>-<model>.json`, with every character outside `[A-Za-z0-9._-]`
/// replaced by `-`: model `gemma4:e4b` on ollama gives `ollama-gemma4-e4b.json`.
pub fn baseline_file_name(provider: &str, model: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect()
    };
    format!("{}-{}.json", clean(provider), clean(model))
}

/// Whether a model id names a moving target rather than a fixed model.
pub fn is_moving_alias(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    // `gemini-flash-latest`, Ollama's `qwen3:latest` tag, `*-preview-*`.
    lower.ends_with("-latest") || lower.ends_with(":latest") || lower.split('-').any(|segment| segment == "preview")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: String,
    /// `--force` overrides it.
    pub forceable: bool,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)?;
        if !self.forceable {
            f.write_str(" (cannot be forced)")?;
        }
        Ok(())
    }
}

/// Every reason not to bless `result`.
pub fn refusals(result: &ResultFile) -> Vec<Refusal> {
    let mut out = Vec::new();
    let mut refuse = |forceable: bool, reason: String| out.push(Refusal { reason, forceable });
    if result.provider == "reference" {
        refuse(
            false,
            "the reference provider replays known answers: it checks the suite and is never a baseline".into(),
        );
    }
    if result.tasks.is_empty() {
        refuse(false, "the result has no tasks".into());
    }
    if result.offline_judge {
        refuse(
            false,
            "its judge verdicts were replayed offline from the references' labels, not asked of a judge model".into(),
        );
    }
    let diffs = aggregate::differences(result, &aggregate::rederive(result));
    if !diffs.is_empty() {
        refuse(
            false,
            format!(
                "the stored figures do not re-derive from the runs ({} fields differ, first: {}); run `vaultbench report` on it",
                diffs.len(),
                diffs[0]
            ),
        );
    }
    if is_moving_alias(&result.model) {
        refuse(
            true,
            format!("model id `{}` is a moving alias (-latest/-preview): bless a pinned model version", result.model),
        );
    }
    if result.interrupted {
        refuse(true, "the sweep was interrupted: resume it with `vaultbench run --resume` first".into());
    }
    if let Some(shard) = &result.shard {
        refuse(true, format!("this is shard {shard} of a sweep: join the shards with `vaultbench merge` first"));
    }
    if let Some(filter) = &result.task_filter {
        refuse(true, format!("only tasks matching `{filter}` ran: a baseline needs the whole suite"));
    }
    let errored: Vec<String> = result
        .tasks
        .iter()
        .flat_map(|t| {
            t.runs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.has_harness_error())
                .map(move |(i, _)| format!("{}#{}", t.id, i + 1))
        })
        .collect();
    if !errored.is_empty() {
        refuse(
            true,
            format!(
                "{} runs ended on a harness error ({}): rerun them so the baseline measures the model, not the harness \
                 (`vaultbench run --resume {} --retry-errors` runs only those again)",
                errored.len(),
                report::first_few(&errored),
                result.run_id
            ),
        );
    }
    let skips = judge_skips::JudgeSkips::of_result(result);
    if skips.matters() {
        refuse(true, format!("{skips}: rerun with a judge (EVAL_JUDGE_API_KEY or GEMINI_API_KEY)"));
    }
    out
}

/// How far in the future a run may seem to have started before its clock
/// is taken to be wrong (machines' clocks drift by seconds, not minutes).
const CLOCK_SKEW: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// The latest result of a folder, and the results passed over because
/// they say they ran in the future.
#[derive(Debug)]
pub struct Latest {
    pub path: PathBuf,
    /// (file, its run id): dated after now, so their clock was wrong.
    pub from_the_future: Vec<(PathBuf, String)>,
}

/// When a run started, from its id (`2026-05-24T21:42:41.910Z`).
pub fn run_time(run_id: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(run_id).ok().map(|t| t.with_timezone(&chrono::Utc))
}

/// The result in `results_dir` whose run started last, by the run's own
/// time (its `run_id`), not by its file's name or date; results dated in the
/// future are passed over (and listed), as are files that are not results.
pub fn latest_result(results_dir: &Path) -> Result<Latest> {
    latest_where(results_dir, None)
}

/// The latest result of (`provider`, `model`) in `results_dir`, as
/// [`latest_result`] chooses.
pub fn latest_result_of(results_dir: &Path, provider: &str, model: &str) -> Result<Latest> {
    latest_where(results_dir, Some((provider, model)))
}

/// A result file in `results_dir` of the run `run_id`, if one is left.
pub fn result_of_run(results_dir: &Path, run_id: &str) -> Option<PathBuf> {
    let mut heads = result_heads(results_dir).ok()?;
    heads.sort_by(|a, b| a.0.cmp(&b.0));
    heads.into_iter().find(|(_, h)| h.run_id == run_id).map(|(path, _)| path)
}

/// What the choice of a result reads of each file.
#[derive(serde::Deserialize)]
struct ResultHead {
    run_id: String,
    #[serde(default)]
    provider: String,
    #[serde(default)]
    model: String,
}

/// Every `.json` file directly in `results_dir` that reads as a result's
/// head, in the folder's order; files that are not results are passed over.
fn result_heads(results_dir: &Path) -> Result<Vec<(PathBuf, ResultHead)>> {
    let entries = std::fs::read_dir(results_dir)
        .with_context(|| format!("reading {} (no results yet? run `vaultbench run` first)", results_dir.display()))?;
    let mut heads = Vec::new();
    for entry in entries {
        let path = entry.with_context(|| format!("reading {}", results_dir.display()))?.path();
        if !path.is_file() || path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        if let Ok(head) = fsio::read_json::<ResultHead>(&path) {
            heads.push((path, head));
        }
    }
    Ok(heads)
}

fn latest_where(results_dir: &Path, of: Option<(&str, &str)>) -> Result<Latest> {
    let now = chrono::Utc::now();
    let mut best: Option<(chrono::DateTime<chrono::Utc>, PathBuf)> = None;
    let mut from_the_future = Vec::new();
    for (path, ResultHead { run_id: id, provider, model }) in result_heads(results_dir)? {
        if of.is_some_and(|(p, m)| (p, m) != (provider.as_str(), model.as_str())) {
            continue;
        }
        let Some(time) = run_time(&id) else { continue };
        if time > now + CLOCK_SKEW {
            from_the_future.push((path, id));
            continue;
        }
        if best.as_ref().is_none_or(|(t, p)| (time, &path) > (*t, p)) {
            best = Some((time, path));
        }
    }
    from_the_future.sort();
    match best {
        Some((_, path)) => Ok(Latest { path, from_the_future }),
        None if !from_the_future.is_empty() => bail!(
            "every result in {} is dated in the future ({}): a clock was wrong; name the result to use",
            results_dir.display(),
            from_the_future.iter().map(|(_, id)| id.as_str()).collect::<Vec<_>>().join(", ")
        ),
        None => match of {
            Some((p, m)) => bail!("no result of {p} / {m} in {}: run `vaultbench run` first", results_dir.display()),
            None => bail!("no result files in {}: run `vaultbench run` first", results_dir.display()),
        },
    }
}

#[derive(Debug)]
pub struct Blessed {
    pub baseline_path: PathBuf,
    /// The run id of the baseline this replaced, if there was one.
    pub replaced: Option<String>,
    /// The baseline this replaced, when it could be read (for the comparison).
    pub previous: Option<ResultFile>,
    /// The replaced baseline's content is committed in git (so `git show`
    /// or `git checkout` brings it back); false when nothing was replaced.
    pub previous_in_git: bool,
    /// The result was already the baseline, byte for byte: nothing was written.
    pub already: bool,
    /// Refusals overridden by `--force`.
    pub forced: Vec<Refusal>,
    pub result: ResultFile,
    /// `<baselines>/evidence/<stem>/<run>.tar.gz`, written when any transcript was found.
    pub evidence_path: PathBuf,
    pub evidence: evidence::Archived,
    /// See `baseline_dir::Replaced::kept_earlier_evidence`.
    pub kept_earlier_evidence: bool,
}

/// Copy `source` to `<baselines_dir>/<provider>-<model>.json`, byte for
/// byte, with its transcripts as evidence, unless it is refused. The pair is
/// replaced as one (see `report::baseline_dir`): a failed or killed bless
/// leaves the previous baseline and its evidence as they were.
pub fn bless(source: &Path, baselines_dir: &Path, force: bool) -> Result<Blessed> {
    let bytes = fsio::read_input(source)?;
    let text = std::str::from_utf8(&bytes).with_context(|| format!("reading {}: not UTF-8", source.display()))?;
    let result: ResultFile =
        fsio::parse_json(text).map_err(|e| anyhow::anyhow!("reading {}: {e}", source.display()))?;
    let all = refusals(&result);
    let blocking: Vec<&Refusal> = all.iter().filter(|r| !r.forceable || !force).collect();
    if !blocking.is_empty() {
        let list: Vec<String> = blocking.iter().map(|r| format!("  - {r}")).collect();
        let hint = if blocking.iter().all(|r| r.forceable) { "\n(pass --force to bless anyway)" } else { "" };
        bail!("refusing to bless {}:\n{}{hint}", source.display(), list.join("\n"));
    }
    let baseline_path = baselines_dir.join(baseline_file_name(&result.provider, &result.model));
    let lock = baseline_dir::lock(baselines_dir, baseline_dir::LOCK_WAIT)?;
    let current = std::fs::read(&baseline_path).ok();
    if current.as_deref() == Some(&bytes[..]) {
        return Ok(Blessed {
            replaced: None,
            previous: None,
            previous_in_git: false,
            already: true,
            forced: Vec::new(),
            evidence_path: evidence::archive_path(&baseline_path, &result.run_id.0).unwrap_or_default(),
            evidence: evidence::Archived::default(),
            kept_earlier_evidence: false,
            baseline_path,
            result,
        });
    }
    let previous: Option<ResultFile> = current.as_deref().and_then(|b| {
        let text = std::str::from_utf8(b).ok()?;
        fsio::parse_json(text).ok()
    });
    if let Some(old) = &previous
        && let (Some(then), Some(now)) = (run_time(&old.run_id.0), run_time(&result.run_id.0))
        && now < then
        && !force
    {
        bail!(
            "refusing to bless {}: it ran at {} but the current baseline {} ran later, at {}: blessing it would \
             replace a newer measurement with an older one\n(pass --force to bless it anyway)",
            source.display(),
            result.run_id,
            baseline_path.display(),
            old.run_id
        );
    }
    let mut all = all;
    if let Some(old) = &previous
        && let (Some(then), Some(now)) = (run_time(&old.run_id.0), run_time(&result.run_id.0))
        && now < then
    {
        all.push(Refusal {
            reason: format!("it ran before the baseline it replaces ({} < {})", result.run_id, old.run_id),
            forceable: true,
        });
    }
    let previous_in_git = current.is_some() && committed_in_git(&baseline_path);
    let done = baseline_dir::replace(&lock, &baseline_path, &bytes, &result, source)?;
    Ok(Blessed {
        baseline_path,
        previous,
        previous_in_git,
        already: false,
        replaced: done.previous,
        forced: all,
        result,
        evidence_path: done.evidence_path,
        evidence: done.evidence,
        kept_earlier_evidence: done.kept_earlier_evidence,
    })
}

/// Whether the file at `path`, as it is now, is committed in the git
/// repository around it: tracked, and the same as in HEAD.
fn committed_in_git(path: &Path) -> bool {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return false };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let git = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    git(&["ls-files".as_ref(), "--error-unmatch".as_ref(), "--".as_ref(), name])
        && git(&["diff".as_ref(), "--quiet".as_ref(), "HEAD".as_ref(), "--".as_ref(), name])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_times_are_read_from_run_ids() {
        let t = run_time("2026-05-24T21:42:41.910Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-05-24T21:42:41.910+00:00");
        assert!(run_time("2099-01-01T00:00:00.000Z").unwrap() > t);
        assert_eq!(run_time("yesterday"), None);
    }

    #[test]
    fn file_names_replace_unsafe_characters() {
        assert_eq!(baseline_file_name("ollama", "gemma4:e4b"), "ollama-gemma4-e4b.json");
        assert_eq!(baseline_file_name("gemini", "gemini-2.5-flash"), "gemini-gemini-2.5-flash.json");
        assert_eq!(baseline_file_name("openai", "org/Model 7B"), "openai-org-Model-7B.json");
        assert_eq!(baseline_file_name("openai", "../../etc"), "openai-..-..-etc.json");
    }

    #[test]
    fn moving_aliases() {
        assert!(is_moving_alias("gemini-flash-latest"));
        assert!(is_moving_alias("gemini-2.5-flash-preview-05-20"));
        assert!(is_moving_alias("gemini-3-pro-preview"));
        assert!(is_moving_alias("qwen3:latest"));
        assert!(!is_moving_alias("qwen3:8b"));
        assert!(!is_moving_alias("gemini-2.5-flash"));
        assert!(!is_moving_alias("previewer-7b"));
    }
}
