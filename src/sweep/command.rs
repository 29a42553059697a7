//! The `run`, `merge` and `suite check` commands: argument handling and
//! console output around the sweep machinery. They return a status; `main`
//! turns it into an exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::progress::Console;
use super::shard::{self, Shard, ShardArg};
use super::store::{Manifest, Store, SweepLock};
use super::{Interrupt, Scratch, Sweep, check, comparison, dry_run, judge, signal};
use crate::format::result::{ResultFile, RunId};
use crate::format::task::Task;
use crate::limits::{Limits, QuotaRates};
use crate::pricing::{self, PriceTable};
use crate::provider::quota::Tally;
use crate::provider::{self, ProviderOptions, Rejection};
use crate::quotas::QuotaTable;
use crate::report::{self, aggregate, bless, compare, evidence, summary};
use crate::suite::Suite;
use crate::suite::corpus::Corpus;
use crate::vault::Toolbox;

/// What `vaultbench run` is asked to do (the command line's `run`
/// arguments, in `cli::run`, turn into these): each field is the option of
/// the same name, documented there.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub suite: PathBuf,
    pub results: PathBuf,
    pub baselines: PathBuf,
    pub task: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub models: Vec<String>,
    pub repeat: Option<u32>,
    pub jobs: Option<u16>,
    pub resume: Option<String>,
    pub retry_errors: bool,
    pub shard: Option<ShardArg>,
    pub dry_run: bool,
    pub keep_artifacts: bool,
    pub no_warm_up: bool,
    pub fail_on_regression: bool,
    pub gate: compare::Gate,
    pub references: Option<PathBuf>,
    pub allow_unpriced: bool,
    pub max_output_tokens: Option<u32>,
    pub rpm: Option<f64>,
    pub tpm: Option<f64>,
    pub judge_rpm: Option<f64>,
    pub judge_tpm: Option<f64>,
    pub quotas: Option<PathBuf>,
    pub cell_delay_ms: u64,
    pub run_id_from: Option<chrono::DateTime<chrono::Utc>>,
}

impl RunOptions {
    /// The shard to run: the one given, or the environment's (`--shard auto`).
    fn resolved_shard(&self, err: &mut dyn Write) -> Result<Option<Shard>> {
        let from_env = || shard::from_env(crate::env::nonempty);
        match self.shard {
            None => Ok(None),
            Some(ShardArg::Given(given)) => {
                // The flag wins; an environment that disagrees is worth a word.
                if let Ok(Some((other, from))) = from_env()
                    && other != given
                {
                    writeln!(
                        err,
                        "note: --shard {given} given; the environment says {other} ({from}): running {given}"
                    )?;
                }
                Ok(Some(given))
            }
            Some(ShardArg::FromEnv) => match from_env()? {
                Some((shard, from)) => {
                    writeln!(err, "shard {shard}, from {from}")?;
                    Ok(Some(shard))
                }
                None => bail!(
                    "--shard auto: the environment names no shard: set VAULTBENCH_SHARD_INDEX (from 1) and \
                     VAULTBENCH_SHARD_COUNT, or run in a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with \
                     VAULTBENCH_SHARD_COUNT) or a SLURM job array; or give --shard I/N"
                ),
            },
        }
    }

    fn quota_flags(&self) -> QuotaRates {
        QuotaRates { requests_per_minute: self.rpm, tokens_per_minute: self.tpm }
    }

    fn judge_quota_flags(&self) -> QuotaRates {
        QuotaRates { requests_per_minute: self.judge_rpm, tokens_per_minute: self.judge_tpm }
    }

    /// The quotas file of a sweep of `suite`.
    fn quota_table(&self, suite: &Path) -> Result<QuotaTable> {
        QuotaTable::load_optional(&self.quotas.clone().unwrap_or_else(|| suite.join("quotas.toml")))
    }
}

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// A regression under --fail-on-regression, or a failed check.
    Failed,
    Interrupted(Interrupt),
}

/// The short commit of the working directory's repository, or `unknown`.
pub fn git_sha() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn load_suite(root: &Path) -> Result<Suite> {
    Ok(Suite::load(root)?)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")
}

/// One model's sweep, ready to execute.
struct Planned {
    sweep: Arc<Sweep>,
    jobs: usize,
    judge: judge::SweepJudge,
    /// Said once, when every check has passed and the sweeps are about to
    /// run: judge matchers that no judge will decide.
    judge_warning: Option<String>,
    /// This process's hold on the sweep's folder, until it ends.
    _lock: SweepLock,
}

/// This process's folder for temporary vaults, after removing what killed
/// vaultbench processes left behind (said on `err`).
fn make_scratch(err: &mut dyn Write) -> Result<Scratch> {
    let scratch = Scratch::create()
        .with_context(|| format!("creating a folder for temporary vaults in {}", std::env::temp_dir().display()))?;
    if !scratch.removed.is_empty() {
        writeln!(
            err,
            "Removed {} temporary folders left by vaultbench processes that were killed (in {})",
            scratch.removed.len(),
            std::env::temp_dir().display()
        )?;
    }
    Ok(scratch)
}

/// `vaultbench run`.
pub fn run(args: RunOptions, out: &mut dyn Write, err: &mut dyn Write) -> Result<Status> {
    let scratch = Arc::new(make_scratch(err)?);
    if args.dry_run {
        return dry_run(&args, out, err, &scratch);
    }
    let plans = match &args.resume {
        Some(id) => vec![plan_resume(&args, id, err, &scratch)?],
        None => plan_new(&args, err, &scratch)?,
    };
    // Said once, when the first sweep is about to run: never before an
    // error that stops it (a refused key would bury the server's words).
    let mut judge_said = false;
    let judge_warning = plans.iter().find_map(|p| p.judge_warning.clone());
    let offline_judge = plans.iter().any(|p| p.judge.offline);
    let rt = runtime()?;
    let mut finished: Vec<(PathBuf, ResultFile)> = Vec::new();
    let mut status = Status::Ok;
    for plan in plans {
        let sweep = plan.sweep.clone();
        let label = format!("{} / {}", sweep.manifest.provider, sweep.manifest.model);
        if !args.no_warm_up
            && sweep.has_pending()?
            && let Some(rejected) = warm_up(&rt, &sweep, &label, err)?
        {
            // Refused for good before any run: nothing is spent on runs that cannot work.
            stopped_early(&rt, &sweep, &super::Stopped { rejected, runs: 0 }, 0, &args.results, err)?;
            status = Status::Failed;
            continue;
        }
        if !std::mem::replace(&mut judge_said, true) {
            if let Some(warning) = &judge_warning {
                writeln!(err, "{warning}")?;
            }
            if offline_judge {
                writeln!(
                    err,
                    "judge: {}; no model is asked, the result is marked offline_judge and can never be blessed",
                    judge::REFERENCE_JUDGE
                )?;
            }
        }
        let outcome = rt.block_on(async {
            let interrupt = signal::listen();
            sweep.clone().execute(plan.jobs, interrupt, &Console::auto(label.clone())).await
        })?;
        let path = sweep.store.result_path();
        if let Some(signal) = outcome.interrupted {
            let total = sweep.tasks.len() * sweep.manifest.repeat as usize;
            writeln!(
                out,
                "Interrupted by {}: {} of {total} runs finished; saved to {} (interrupted: true).\n\
                 Resume with: vaultbench run --resume {} --results {}",
                signal.name(),
                outcome.ran + outcome.reused,
                path.display(),
                sweep.manifest.run_id,
                args.results.display()
            )?;
            return Ok(Status::Interrupted(signal));
        }
        if let Some(stopped) = &outcome.stopped {
            stopped_early(&rt, &sweep, stopped, outcome.ran + outcome.reused, &args.results, err)?;
            status = Status::Failed;
            continue;
        }
        let result = aggregate::rederive(&outcome.result);
        write!(out, "{}", summary::render(&result))?;
        if let Some(first) = all_harness_errors(&result) {
            writeln!(
                err,
                "error: every run of {label} ended on a harness error, so the sweep measured nothing about the model; \
                 the first: {first}"
            )?;
            status = Status::Failed;
        }
        if let Some(tally) = &outcome.quota {
            writeln!(out, "\n{}", quota_summary("Quota", tally, outcome.wall))?;
        }
        if let Some(q) = &plan.judge.quota {
            let tally = q.tally();
            if tally.served + tally.refused > 0 {
                writeln!(
                    out,
                    "{}",
                    quota_summary(&format!("Judge quota ({})", plan.judge.label), &tally, outcome.wall)
                )?;
            }
        }
        writeln!(out, "\nResult:      {}", path.display())?;
        writeln!(out, "Transcripts: {}", sweep.store.dir().display())?;
        if outcome.reused > 0 {
            writeln!(out, "Resumed: {} runs reused, {} run now", outcome.reused, outcome.ran)?;
        }
        if sweep.keep_artifacts {
            writeln!(out, "Vaults kept under {}", sweep.store.dir().join("vaults").display())?;
        }
        if regression_check(&args, &result, out)? && args.fail_on_regression {
            status = Status::Failed;
        }
        writeln!(out)?;
        finished.push((path, result));
    }
    if finished.len() > 1 {
        let parts: Vec<(String, &ResultFile)> = finished.iter().map(|(p, r)| (p.display().to_string(), r)).collect();
        let refs: Vec<(&str, &ResultFile)> = parts.iter().map(|(p, r)| (p.as_str(), *r)).collect();
        let md = comparison::render(&refs);
        let path = args.results.join(format!("comparison-{}.md", finished[0].1.run_id.file_stem()));
        crate::fsio::write_atomic(&path, md.as_bytes())?;
        write!(out, "{md}")?;
        writeln!(out, "\nComparison: {}", path.display())?;
    }
    Ok(status)
}

/// `configured`, unless the sweep replays references without a judge
/// model: then the offline reference judge, so that the offline path
/// scores judge matchers too (its result is marked and never blessed).
fn offline_or(configured: judge::SweepJudge, provider: &str, tasks: &[&Task], references: &Path) -> judge::SweepJudge {
    if configured.judge.is_some() || provider != "reference" || !tasks.iter().any(|t| t.has_judge_matcher()) {
        return configured;
    }
    judge::SweepJudge {
        judge: Some(Arc::new(judge::ReferenceJudge::load(tasks, references))),
        quota: None,
        label: judge::REFERENCE_JUDGE.to_string(),
        offline: true,
    }
}

/// Warm the sweep's model up when it needs it (a local server), saying
/// what was unloaded and how long the load took. A refusal of the key or
/// the model is returned (the sweep stops before any run); any other
/// failure is a warning (the runs will meet the same fault and record it).
fn warm_up(
    rt: &tokio::runtime::Runtime,
    sweep: &Sweep,
    label: &str,
    err: &mut dyn Write,
) -> Result<Option<crate::provider::Rejected>> {
    match rt.block_on(sweep.source.warm_up()) {
        None => {}
        Some(Ok(warm)) => {
            if !warm.unloaded.is_empty() {
                writeln!(
                    err,
                    "{label}: unloaded the server's other resident models first: {}",
                    warm.unloaded.join(", ")
                )?;
            }
            writeln!(
                err,
                "{label}: warm-up: one throwaway generation loaded the model in {:.2} s (not counted in any run)",
                warm.took.as_secs_f64()
            )?;
        }
        // The key and the model are the same for every request; the
        // warm-up's own request (tiny, without tools) is not, so a request
        // the server rejects as invalid says nothing about the runs'.
        Some(Err(crate::provider::ModelError::Rejected(rejected)))
            if rejected.rejection != Rejection::InvalidArgument =>
        {
            return Ok(Some(rejected));
        }
        Some(Err(e)) => writeln!(
            err,
            "warning: {label}: the warm-up failed ({e}); the sweep goes on, and its first run may carry the model's load time"
        )?,
    }
    Ok(None)
}

/// Say why a sweep stopped itself (the server's own words, scrubbed of
/// keys), what to do, near model ids when the server did not know the
/// model, and how to go on once it is fixed.
fn stopped_early(
    rt: &tokio::runtime::Runtime,
    sweep: &Sweep,
    stopped: &super::Stopped,
    finished: usize,
    results: &Path,
    err: &mut dyn Write,
) -> Result<()> {
    let m = &sweep.manifest;
    let rejected = &stopped.rejected;
    let when = match stopped.runs {
        0 => "stopped before any run: the warm-up met an error".to_string(),
        n => format!("stopped after {n} runs ended on the same error"),
    };
    writeln!(
        err,
        "error: {} / {}: {when}, which no retry can fix:\n  {}\nWhat to do: {}",
        m.provider,
        m.model,
        rejected.message,
        rejected.rejection.advice(&m.provider)
    )?;
    if rejected.rejection == Rejection::UnknownModel {
        let near = rt.block_on(nearest_models(sweep));
        if !near.is_empty() {
            writeln!(err, "Known model ids near `{}`: {}", m.model, near.join(", "))?;
        }
    }
    if rejected.rejection == Rejection::UnknownModel {
        // A resumed sweep keeps its model, so the fix is a new sweep.
        let saved = match stopped.runs {
            0 => String::new(),
            _ => format!(
                "The {finished} finished runs are saved in {} (marked interrupted). ",
                sweep.store.result_path().display()
            ),
        };
        writeln!(
            err,
            "{saved}Once fixed, start a new sweep with the model id the server knows: vaultbench run --provider {} \
             --model <id> (a sweep resumed with --resume keeps the model it started with)",
            m.provider
        )?;
    } else if stopped.runs == 0 {
        writeln!(err, "Once fixed: vaultbench run --resume {} --results {}", m.run_id, results.display())?;
    } else {
        writeln!(
            err,
            "Saved the {finished} finished runs to {} (marked interrupted). Once fixed, run the rest and these \
             again: vaultbench run --resume {} --retry-errors --results {}",
            sweep.store.result_path().display(),
            m.run_id,
            results.display()
        )?;
    }
    Ok(())
}

/// The model ids nearest to the sweep's: those its server lists (when it
/// answers within a few seconds) and those the pricing table prices.
async fn nearest_models(sweep: &Sweep) -> Vec<String> {
    let mut known = match tokio::time::timeout(Duration::from_secs(10), sweep.source.list_models()).await {
        Ok(Ok(ids)) => ids,
        _ => Vec::new(),
    };
    if let Ok(table) = PriceTable::load(&sweep.manifest.suite.join("pricing.toml")) {
        known.extend(table.models.into_keys());
    }
    let ids: Vec<&str> = known.iter().map(String::as_str).collect();
    crate::suite::diagnostics::nearest(&sweep.manifest.model, &ids, 3).into_iter().map(str::to_string).collect()
}

/// The first harness error, when every run of `result` ended on one.
fn all_harness_errors(result: &ResultFile) -> Option<&str> {
    let mut runs = result.tasks.iter().flat_map(|t| &t.runs).peekable();
    runs.peek()?;
    let mut first = None;
    for run in runs {
        first = first.or(run.errors.first());
        if !run.has_harness_error() {
            return None;
        }
    }
    first.map(String::as_str)
}

/// Print the regression summary against the matching baseline; true when it regressed.
fn regression_check(args: &RunOptions, result: &ResultFile, out: &mut dyn Write) -> Result<bool> {
    let path = args.baselines.join(bless::baseline_file_name(&result.provider, &result.model));
    if !path.is_file() {
        writeln!(
            out,
            "\nNo baseline for {} / {} at {}: nothing to compare (bless a clean result with `vaultbench bless`).",
            result.provider,
            result.model,
            path.display()
        )?;
        return Ok(false);
    }
    let base = report::load_result(&path)?;
    let comparison = compare::compare(&base, result, args.gate.rule());
    writeln!(out, "\nAgainst the baseline {}:", path.display())?;
    write!(out, "{}", comparison.summary())?;
    Ok(comparison.has_regressions())
}

/// What a new sweep runs: the selected tasks (after --task and --shard)
/// and the models, checked.
struct Selection<'s> {
    provider: String,
    tasks: Vec<&'s Task>,
    shard: Option<Shard>,
    models: Vec<Option<String>>,
    references: PathBuf,
    table_path: PathBuf,
    table: Option<PriceTable>,
}

fn select<'s>(args: &RunOptions, suite: &'s Suite, err: &mut dyn Write) -> Result<Selection<'s>> {
    let provider =
        args.provider.clone().context("a sweep needs a provider (--provider), unless it resumes one (--resume)")?;
    for w in &suite.warnings {
        writeln!(err, "{w}")?;
    }
    let mut tasks: Vec<&Task> = suite.select(args.task.as_deref());
    if tasks.is_empty() {
        bail!("no task id in {} starts with `{}`", args.suite.display(), args.task.as_deref().unwrap_or(""));
    }
    let shard = args.resolved_shard(err)?;
    if let Some(shard) = shard {
        tasks = shard.select(tasks);
        if tasks.is_empty() {
            bail!("shard {shard} is empty: the selection has fewer than {} tasks", shard.index);
        }
    }
    let references = args.references.clone().unwrap_or_else(|| args.suite.join("references"));
    let models: Vec<Option<String>> =
        if args.models.is_empty() { vec![args.model.clone()] } else { args.models.iter().cloned().map(Some).collect() };
    if provider != "reference" && models.iter().any(Option::is_none) {
        bail!("--model ID (or --models A,B) is required for provider `{provider}`");
    }
    // Said before anything is spent: only `bless` would refuse it otherwise.
    for model in models.iter().flatten().filter(|m| bless::is_moving_alias(m)) {
        writeln!(
            err,
            "warning: `{model}` is a moving alias (-latest, :latest, -preview): the model behind it can change from one run \
             to the next, so this sweep cannot be compared over time and `vaultbench bless` will refuse it; \
             pin a version if there is one"
        )?;
    }
    let table_path = args.suite.join("pricing.toml");
    let table = if table_path.is_file() { Some(PriceTable::load(&table_path)?) } else { None };
    Ok(Selection { provider, tasks, shard, models, references, table_path, table })
}

/// `run --dry-run`: the runs, calls and cost of each model's sweep; no
/// folder is claimed, no provider built, no server contacted.
fn dry_run(args: &RunOptions, out: &mut dyn Write, err: &mut dyn Write, scratch: &Scratch) -> Result<Status> {
    let suite = load_suite(&args.suite)?;
    let sel = select(args, &suite, err)?;
    let quotas = args.quota_table(&args.suite)?;
    let limits = Limits::from_env()?;
    let owned: Vec<Task> = sel.tasks.iter().map(|t| (*t).clone()).collect();
    let measured = runtime()?.block_on(dry_run::measure(&suite.root, scratch.path(), &sel.references, &owned, &limits));
    let k = args.repeat.unwrap_or(1);
    let max_output_tokens = match args.max_output_tokens {
        Some(0) => None,
        Some(n) => Some(n),
        None => provider::default_max_output_tokens(&sel.provider),
    };
    for model in &sel.models {
        let model_id = model.as_deref().unwrap_or("reference");
        let (pricing, warning) =
            pricing::for_model(sel.table.as_ref(), &sel.table_path, &sel.provider, model_id, args.allow_unpriced)?;
        if let Some(w) = warning {
            writeln!(err, "warning: {w}")?;
        }
        let pricing_note = match (&pricing, &sel.table) {
            (pricing::Pricing::Priced(p), Some(t)) => format!(
                "{}, {model_id}: ${} input, ${} cached input, ${} output per 1M tokens (read on {})",
                sel.table_path.display(),
                p.input,
                p.cached_input,
                p.output,
                t.read_on
            ),
            _ => format!("{model_id} is not priced in {}", sel.table_path.display()),
        };
        let entry = quotas.get(&sel.provider, model_id);
        let rates = quota_rates(&quotas, &sel.provider, model_id, args.quota_flags());
        let estimate = dry_run::estimate(&measured, k, &pricing, max_output_tokens);
        let mut label = format!("{} / {model_id}", sel.provider);
        if let Some(shard) = sel.shard {
            label.push_str(&format!(" (shard {shard})"));
        }
        let text = dry_run::render(
            &label,
            &measured,
            k,
            &estimate,
            &pricing_note,
            rates,
            entry.and_then(|e| e.requests_per_day),
        );
        writeln!(out, "{text}")?;
    }
    Ok(Status::Ok)
}

fn plan_new(args: &RunOptions, err: &mut dyn Write, scratch: &Arc<Scratch>) -> Result<Vec<Planned>> {
    let suite = load_suite(&args.suite)?;
    let Selection { provider: provider_name, tasks: selected, shard, models, references, table_path, table } =
        select(args, &suite, err)?;
    let limits = Limits::from_env()?;
    let quotas = args.quota_table(&args.suite)?;
    let sweep_judge =
        offline_or(judge::configured_with(&quotas, args.judge_quota_flags())?, &provider_name, &selected, &references);
    let judge = sweep_judge.judge.clone();
    let judge_warning = judge.is_none().then(|| judge::unscorable_warning(&selected)).flatten();
    let git_sha = git_sha();
    // Everything is checked for every model before any sweep starts.
    let mut plans = Vec::new();
    for model in &models {
        // Prices first: an unpriced model stops the run before any provider is contacted.
        let model_id = model.as_deref().unwrap_or("reference");
        let (pricing, warning) =
            pricing::for_model(table.as_ref(), &table_path, &provider_name, model_id, args.allow_unpriced)?;
        if let Some(w) = warning {
            writeln!(err, "warning: {w}")?;
        }
        let mut limits = limits.clone();
        limits.quota = quota_rates(&quotas, &provider_name, model_id, args.quota_flags());
        let options = ProviderOptions { references_dir: references.clone(), limits: limits.clone() };
        let source = provider::build(&provider_name, model.as_deref(), &options)?;
        source.check(&selected)?;
        let manifest = Manifest {
            run_id: RunId(String::new()),
            git_sha: git_sha.clone(),
            provider: provider_name.clone(),
            model: source.model_id().to_string(),
            suite: args.suite.clone(),
            references: references.clone(),
            repeat: args.repeat.unwrap_or(1),
            task_filter: args.task.clone(),
            shard: shard.map(|s| s.to_string()),
            allow_unpriced: args.allow_unpriced,
            max_output_tokens: match args.max_output_tokens {
                Some(0) => None,
                Some(n) => Some(n),
                None => provider::default_max_output_tokens(&provider_name),
            },
            tasks: selected.iter().map(|t| t.id.clone()).collect(),
            content_hashes: crate::suite::hash::content_hashes(&suite.root, selected.iter().copied()),
            fixture_hashes: crate::suite::hash::fixture_hashes(&suite.root, selected.iter().copied()),
            offline_judge: sweep_judge.offline,
        };
        let tasks = selected.iter().map(|t| (*t).clone()).collect();
        plans.push((manifest, tasks, source, pricing, limits));
    }
    let jobs = args.jobs.map_or_else(|| provider::default_jobs(&provider_name), usize::from);
    let mut planned = Vec::new();
    for (mut manifest, tasks, source, pricing, limits) in plans {
        // A fresh id per sweep, claimed so that no other sweep shares its folder.
        let (store, run_id, lock) = Store::claim_new(&args.results, args.run_id_from.unwrap_or_else(chrono::Utc::now))?;
        manifest.run_id = run_id;
        store.write_manifest(&manifest)?;
        planned.push(Planned {
            sweep: Arc::new(Sweep {
                manifest,
                store,
                tasks,
                suite_root: suite.root.clone(),
                source,
                judge: judge.clone(),
                pricing,
                toolbox: Toolbox::standard(),
                scratch: scratch.clone(),
                keep_artifacts: args.keep_artifacts,
                cell_delay: Duration::from_millis(args.cell_delay_ms),
                limits,
            }),
            jobs,
            judge: sweep_judge.clone(),
            judge_warning: judge_warning.clone(),
            _lock: lock,
        });
    }
    Ok(planned)
}

fn plan_resume(args: &RunOptions, run_id: &str, err: &mut dyn Write, scratch: &Arc<Scratch>) -> Result<Planned> {
    let (store, mut manifest) = Store::find(&args.results, run_id)?;
    let lock = store.lock()?;
    store.remove_leftovers(&lock)?;
    let conflicts = [
        ("--provider", args.provider.as_deref(), Some(manifest.provider.as_str())),
        ("--model", args.model.as_deref(), Some(manifest.model.as_str())),
        ("--task", args.task.as_deref(), manifest.task_filter.as_deref()),
    ];
    for (flag, given, recorded) in conflicts {
        if given.is_some() && given != recorded {
            bail!(
                "{flag} {} differs from the sweep being resumed ({}); leave it out to resume as recorded",
                given.unwrap_or(""),
                recorded.unwrap_or("none")
            );
        }
    }
    if let Some(n) = args.max_output_tokens
        && (n != 0 || manifest.max_output_tokens.is_some())
        && Some(n) != manifest.max_output_tokens
    {
        bail!(
            "--max-output-tokens differs from the sweep being resumed ({}); leave it out",
            manifest.max_output_tokens.map_or_else(|| "no cap".to_string(), |n| n.to_string())
        );
    }
    if args.repeat.is_some_and(|k| k != manifest.repeat) {
        bail!("--repeat differs from the sweep being resumed (k = {}); leave it out", manifest.repeat);
    }
    let shard = args.resolved_shard(err)?;
    if shard.is_some() && shard.map(|s| s.to_string()) != manifest.shard {
        bail!("--shard differs from the sweep being resumed; leave it out");
    }
    let suite = load_suite(&manifest.suite)?;
    let tasks: Vec<Task> = manifest
        .tasks
        .iter()
        .map(|id| {
            suite.tasks.iter().find(|t| &t.id == id).cloned().ok_or_else(|| {
                anyhow::anyhow!("task `{id}` of the sweep being resumed is no longer in {}", manifest.suite.display())
            })
        })
        .collect::<Result<_>>()?;
    let now = crate::suite::hash::content_hashes(&suite.root, tasks.iter());
    let edited: Vec<String> = manifest
        .content_hashes
        .iter()
        .filter(|(id, hash)| now.get(*id) != Some(hash))
        .map(|(id, _)| id.clone())
        .collect();
    if !edited.is_empty() {
        writeln!(
            err,
            "warning: {} task{} changed since the sweep started ({}): the runs made now use the edited files, the \
             result keeps the hashes of the start (so a comparison counts these tasks as changed)",
            edited.len(),
            if edited.len() == 1 { "" } else { "s" },
            report::first_few(&edited)
        )?;
    }
    let current = git_sha();
    if current != manifest.git_sha {
        writeln!(
            err,
            "warning: the sweep started at commit {}; resuming at {current} (the result keeps {})",
            manifest.git_sha, manifest.git_sha
        )?;
    }
    let references = args.references.clone().unwrap_or_else(|| manifest.references.clone());
    let quotas = args.quota_table(&manifest.suite)?;
    let mut limits = Limits::from_env()?;
    limits.quota = quota_rates(&quotas, &manifest.provider, &manifest.model, args.quota_flags());
    let options = ProviderOptions { references_dir: references.clone(), limits: limits.clone() };
    let source = provider::build(&manifest.provider, Some(&manifest.model), &options)?;
    let refs: Vec<&Task> = tasks.iter().collect();
    source.check(&refs)?;
    let table_path = manifest.suite.join("pricing.toml");
    let table = if table_path.is_file() { Some(PriceTable::load(&table_path)?) } else { None };
    let (pricing, warning) = pricing::for_model(
        table.as_ref(),
        &table_path,
        &manifest.provider,
        &manifest.model,
        manifest.allow_unpriced || args.allow_unpriced,
    )?;
    if let Some(w) = warning {
        writeln!(err, "warning: {w}")?;
    }
    let sweep_judge = judge::configured_with(&quotas, args.judge_quota_flags())?;
    // The judge the sweep started with: the offline one again, or a model.
    let sweep_judge = if manifest.offline_judge {
        offline_or(judge::SweepJudge::default(), &manifest.provider, &refs, &references)
    } else {
        sweep_judge
    };
    let judge = sweep_judge.judge.clone();
    let judge_warning = judge.is_none().then(|| judge::unscorable_warning(&refs)).flatten();
    let jobs = args.jobs.map_or_else(|| provider::default_jobs(&manifest.provider), usize::from);
    // Last, once every check has passed: nothing is moved for a resume that stops.
    // A task whose vault files changed since the sweep started runs on two
    // fixtures: the result records no fixture hash for it, so that `regrade`
    // trusts no tool result its transcripts cut.
    let fixtures_now = crate::suite::hash::fixture_hashes(&suite.root, tasks.iter());
    let recorded = manifest.fixture_hashes.len();
    manifest.fixture_hashes.retain(|id, hash| fixtures_now.get(id) == Some(hash));
    if manifest.fixture_hashes.len() != recorded {
        store.write_manifest(&manifest)?;
    }
    if args.retry_errors {
        let again = store.set_aside_errored(&lock, &manifest.tasks, manifest.repeat)?;
        if again.is_empty() {
            writeln!(err, "--retry-errors: no run of this sweep ended with a harness error")?;
        } else {
            let names: Vec<String> = again.iter().map(|(t, n)| format!("{t} #{n}")).collect();
            writeln!(
                err,
                "--retry-errors: running again {} run{} that ended with a harness error ({}); the earlier records are kept in {}",
                again.len(),
                if again.len() == 1 { "" } else { "s" },
                report::first_few(&names),
                store.dir().join("retried").display()
            )?;
        }
    }
    Ok(Planned {
        sweep: Arc::new(Sweep {
            suite_root: suite.root.clone(),
            manifest,
            store,
            tasks,
            source,
            judge,
            pricing,
            toolbox: Toolbox::standard(),
            scratch: scratch.clone(),
            keep_artifacts: args.keep_artifacts,
            cell_delay: Duration::from_millis(args.cell_delay_ms),
            limits,
        }),
        jobs,
        judge: sweep_judge,
        judge_warning,
        _lock: lock,
    })
}

/// The rates a sweep of (`provider`, `model`) is paced to: the quotas
/// file's entry, each rate the flags give winning.
fn quota_rates(quotas: &QuotaTable, provider: &str, model: &str, flags: QuotaRates) -> QuotaRates {
    quotas.get(provider, model).map(|e| e.rates()).unwrap_or_default().overridden_by(flags)
}

/// The summary's line about a quota: how long the sweep waited on it and
/// what the server refused.
pub fn quota_summary(what: &str, tally: &Tally, wall: Duration) -> String {
    let mut line = format!(
        "{what}: waited {:.1} s of the sweep's {:.1} s on it ({} request{} held back); {} of {} request{} refused (HTTP 429)",
        tally.held_wall.as_secs_f64(),
        wall.as_secs_f64(),
        tally.held,
        if tally.held == 1 { "" } else { "s" },
        tally.refused,
        tally.served + tally.refused,
        if tally.served + tally.refused == 1 { "" } else { "s" },
    );
    if let Some(low) = tally.lowest_window {
        line.push_str(&format!("; concurrency went down to {low}"));
    }
    line
}

/// `vaultbench merge`: join shard results; writes `out_file` (default: next
/// to the first part, `<its stem>-merged.json`).
pub fn merge(files: &[PathBuf], out_file: Option<PathBuf>, out: &mut dyn Write) -> Result<Status> {
    let parts: Vec<(PathBuf, ResultFile)> =
        files.iter().map(|p| Ok((p.clone(), report::load_result(p)?))).collect::<Result<_>>()?;
    let merged = shard::merge(&parts)?;
    let target = out_file.unwrap_or_else(|| {
        let first = &files[0];
        let stem = first.file_stem().map_or_else(|| "merged".into(), |s| s.to_string_lossy().into_owned());
        first.with_file_name(format!("{stem}-merged.json"))
    });
    report::write_result(&target, &merged)?;
    let copied = gather_transcripts(&parts, &target)?;
    write!(out, "{}", summary::render(&merged))?;
    writeln!(out, "\nMerged {} shards into {}", parts.len(), target.display())?;
    if copied > 0 {
        writeln!(
            out,
            "Transcripts: {copied} copied to {} (the evidence `bless` archives)",
            evidence::transcripts_dir(&target).display()
        )?;
    }
    Ok(Status::Ok)
}

/// Copy each part's transcripts (`<part>/<task>-<n>.json`, next to the part's
/// result) to the merged result's folder, where `bless` finds them; returns
/// how many. A part without transcripts is passed over: the merged result
/// then blesses with fewer (`bless` names the missing ones).
fn gather_transcripts(parts: &[(PathBuf, ResultFile)], target: &Path) -> Result<usize> {
    let into = evidence::transcripts_dir(target);
    let mut copied = 0;
    for (path, part) in parts {
        let from = evidence::transcripts_dir(path);
        for run in part.tasks.iter().flat_map(|t| &t.runs) {
            let Some(name) = evidence::entry_name(run) else { continue };
            let source = from.join(&name);
            // Plain files only: a link could pull a file from elsewhere into evidence.
            if !source.symlink_metadata().is_ok_and(|m| m.is_file()) {
                continue;
            }
            std::fs::create_dir_all(&into).with_context(|| format!("creating {}", into.display()))?;
            std::fs::copy(&source, into.join(&name))
                .with_context(|| format!("copying {} to {}", source.display(), into.display()))?;
            copied += 1;
        }
    }
    Ok(copied)
}

/// `vaultbench suite check`: `alternatives` defaults to `<suite>/alternatives`;
/// `task`, a prefix of ids, checks only those tasks.
pub fn suite_check(
    root: &Path,
    references: Option<PathBuf>,
    alternatives: Option<PathBuf>,
    task: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Status> {
    // A suite that does not load is the command's error (main says it, with
    // a hint when the folder is missing).
    let mut suite = Suite::load(root)?;
    for w in &suite.warnings {
        writeln!(err, "{w}")?;
    }
    let references = references.unwrap_or_else(|| root.join("references"));
    let explicit = alternatives.is_some();
    let alternatives = alternatives.unwrap_or_else(|| Corpus::default_dir(root));
    let mut corpus = match Corpus::load(&alternatives, &suite) {
        Ok(None) if explicit => {
            writeln!(err, "no alternative-answer corpus at {}", alternatives.display())?;
            return Ok(Status::Failed);
        }
        Ok(c) => c,
        Err(e) => {
            writeln!(err, "{e}")?;
            return Ok(Status::Failed);
        }
    };
    // The corpus is read against the whole suite (an answer to a task that
    // does not exist is still an error); then only the chosen tasks remain.
    if let Some(prefix) = task {
        suite.tasks.retain(|t| t.id.starts_with(prefix));
        if suite.tasks.is_empty() {
            writeln!(err, "no task id in {} starts with `{prefix}`", root.display())?;
            return Ok(Status::Failed);
        }
        if let Some(c) = corpus.as_mut() {
            c.entries.retain(|e| suite.tasks.iter().any(|t| t.id == e.task_id));
        }
        let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
        writeln!(out, "checking {} of the suite's tasks (--task {prefix}): {}", ids.len(), ids.join(", "))?;
    }
    let judge = judge::configured()?;
    let scratch = Arc::new(make_scratch(err)?);
    let mut report = runtime()?.block_on(check::check(&suite, &references, corpus.as_ref(), judge, 8, scratch));
    // A folder given with --alternatives is a round to measure (the suite's
    // own corpus is what must cover every task): tasks it has no answers
    // for are no failure of it.
    if explicit && let Some(c) = report.corpus.as_mut() {
        c.coverage_gaps.clear();
    }
    write!(out, "{}", check::render(&suite, &references, &report))?;
    Ok(if report.ok() { Status::Ok } else { Status::Failed })
}
