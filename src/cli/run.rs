//! `vaultbench run`'s arguments (and the regression gate's, which `compare`
//! shares), turned into the library's plain options.

use std::path::PathBuf;

use vaultbench::report::compare;
use vaultbench::sweep::command::RunOptions;
use vaultbench::sweep::shard::ShardArg;

/// `vaultbench run`'s arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The suite folder: tasks/, fixtures/, references/ and pricing.toml.
    #[arg(long, value_name = "DIR", default_value = "evals")]
    pub suite: PathBuf,
    /// Where results and transcripts are written.
    #[arg(long, value_name = "DIR", default_value = "evals/results")]
    pub results: PathBuf,
    /// Where blessed baselines live (for the regression check).
    #[arg(long, value_name = "DIR", default_value = "evals/baselines")]
    pub baselines: PathBuf,
    /// Run only the tasks whose id starts with PREFIX.
    #[arg(long, value_name = "PREFIX")]
    pub task: Option<String>,
    /// The provider of the model under test.
    #[arg(long, value_name = "P", required_unless_present = "resume",
          value_parser = clap::builder::PossibleValuesParser::new(vaultbench::provider::PROVIDERS))]
    pub provider: Option<String>,
    /// The model id (the reference provider defaults to `reference`).
    #[arg(long, value_name = "ID", conflicts_with = "models")]
    pub model: Option<String>,
    /// Several models, one sweep each, plus a side-by-side Markdown report.
    #[arg(long, value_name = "A,B", value_delimiter = ',', num_args = 1)]
    pub models: Vec<String>,
    /// Runs per task (k) [default: 1].
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,
    /// Concurrent runs [default: 8 for reference, 1 for ollama and openai, 4 otherwise].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Continue an interrupted or killed sweep; finished runs are not redone.
    #[arg(long, value_name = "RUN_ID", conflicts_with = "models")]
    pub resume: Option<String>,
    /// With --resume: run again the runs that ended with a harness error
    /// (a server fault, exhausted retries), keeping every other run; the
    /// errored runs' records and transcripts are kept in <run>/retried/.
    #[arg(long, requires = "resume")]
    pub retry_errors: bool,
    /// Run slice I of N (whole tasks; task j of the sorted list goes to
    /// shard j mod N + 1). `--shard` alone (or `auto`) reads I and N from the
    /// batch system: VAULTBENCH_SHARD_INDEX (from 1) and
    /// VAULTBENCH_SHARD_COUNT (a CI matrix), JOB_COMPLETION_INDEX (from 0,
    /// Kubernetes Indexed Job) with VAULTBENCH_SHARD_COUNT, or a SLURM array's
    /// SLURM_ARRAY_TASK_ID/_MIN/_STEP/_COUNT. A shard given here wins.
    #[arg(long, value_name = "I/N|auto", num_args = 0..=1, default_missing_value = "auto")]
    pub shard: Option<ShardArg>,
    /// Print what the sweep would do and cost, without contacting any
    /// server: the runs, the model calls (at most maxTurns each; as many as
    /// the reference trajectories take), and the cost at pricing.toml's
    /// prices, as expected and as an upper bound (see docs/sweeps.md).
    #[arg(long, conflicts_with = "resume")]
    pub dry_run: bool,
    /// Keep every run's vault under <results>/<run>/vaults/.
    #[arg(long)]
    pub keep_artifacts: bool,
    /// Skip the warm-up of local models (ollama, openai): by default the
    /// other models Ollama holds are unloaded and one throwaway generation
    /// loads the model before the first timed run, its time printed apart.
    #[arg(long, env = "VAULTBENCH_NO_WARM_UP", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_warm_up: bool,
    /// Exit 1 when the regression gate finds a regression against the baseline.
    #[arg(long)]
    pub fail_on_regression: bool,
    #[command(flatten)]
    pub gate: GateArgs,
    /// The reference provider's trajectories [default: <suite>/references].
    #[arg(long, value_name = "DIR")]
    pub references: Option<PathBuf>,
    /// Record $0 for a gemini model missing from pricing.toml instead of refusing to run.
    #[arg(long)]
    pub allow_unpriced: bool,
    /// Cap on the tokens of one model reply; 0 = the provider's own default
    /// [default: 2048 for ollama and openai, whose servers may otherwise
    /// generate until the context is full; none for gemini].
    #[arg(long, value_name = "N")]
    pub max_output_tokens: Option<u32>,
    /// Requests a minute the model's server allows: every run's requests
    /// together are paced to it [default: the quotas file's entry for the
    /// model; without one the quota is learned from the server's answers].
    #[arg(long, value_name = "N", value_parser = positive_rate)]
    pub rpm: Option<f64>,
    /// Input tokens a minute the model's server allows (estimated at four
    /// bytes of request a token) [default: the quotas file's entry].
    #[arg(long, value_name = "N", value_parser = positive_rate)]
    pub tpm: Option<f64>,
    /// --rpm for the judge's server, which has its own quota.
    #[arg(long, value_name = "N", value_parser = positive_rate)]
    pub judge_rpm: Option<f64>,
    /// --tpm for the judge's server.
    #[arg(long, value_name = "N", value_parser = positive_rate)]
    pub judge_tpm: Option<f64>,
    /// The quotas file: rates per provider and model [default: <suite>/quotas.toml].
    #[arg(long, value_name = "FILE")]
    pub quotas: Option<PathBuf>,
    /// Testing aid: wait this long at the start of every run.
    #[arg(long, value_name = "MS", hide = true, default_value_t = 0)]
    pub cell_delay_ms: u64,
    /// Testing aid: the first run id to try instead of the clock's time, so
    /// that sweeps started together collide on it.
    #[arg(long, value_name = "ISO", hide = true)]
    pub run_id_from: Option<chrono::DateTime<chrono::Utc>>,
}

/// A rate from the command line: a number above 0.
fn positive_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{text}` is not a rate: give a number above 0, e.g. 60")),
    }
}

impl RunArgs {
    pub fn options(self) -> RunOptions {
        RunOptions {
            suite: self.suite,
            results: self.results,
            baselines: self.baselines,
            task: self.task,
            provider: self.provider,
            model: self.model,
            models: self.models,
            repeat: self.repeat,
            jobs: self.jobs,
            resume: self.resume,
            retry_errors: self.retry_errors,
            shard: self.shard,
            dry_run: self.dry_run,
            keep_artifacts: self.keep_artifacts,
            no_warm_up: self.no_warm_up,
            fail_on_regression: self.fail_on_regression,
            gate: self.gate.gate(),
            references: self.references,
            allow_unpriced: self.allow_unpriced,
            max_output_tokens: self.max_output_tokens,
            rpm: self.rpm,
            tpm: self.tpm,
            judge_rpm: self.judge_rpm,
            judge_tpm: self.judge_tpm,
            quotas: self.quotas,
            cell_delay_ms: self.cell_delay_ms,
            run_id_from: self.run_id_from,
        }
    }
}

/// How `compare` and `run` judge drops: `--alpha` and `--exact`.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct GateArgs {
    /// Significance level of the regression gate: a drop is flagged only when
    /// the data supports it at this level (paired bootstrap interval for
    /// pass^k and solve^k, the exact stratified test across tasks at A/2 for
    /// the mean rates, Fisher's exact test with the Benjamini-Hochberg
    /// correction per task).
    #[arg(long, value_name = "A", default_value_t = vaultbench::stats::DEFAULT_ALPHA, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Flag any drop at all as a regression (the rule before the statistical
    /// gate); a rerun of the same model then usually "regresses" by chance.
    #[arg(long, conflicts_with = "alpha")]
    pub exact: bool,
}

impl GateArgs {
    pub fn gate(&self) -> compare::Gate {
        compare::Gate { alpha: self.alpha, exact: self.exact }
    }
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(a) if a > 0.0 && a < 0.5 => Ok(a),
        Ok(_) => Err(format!("`{text}` is not a level between 0 and 0.5 (e.g. 0.05 for 95% confidence)")),
        Err(_) => Err(format!("`{text}` is not a number (e.g. 0.05)")),
    }
}
