//! The `vaultbench` command line: parses arguments, calls the library, prints,
//! and decides the exit code (0 ok, 1 failure, 2 usage, 130/143 interrupted).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod cli;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use vaultbench::format::calibration::CalibrationFile;
use vaultbench::limits::Limits;
use vaultbench::report::{self, aggregate, bless, calibrate, compare, evidence, rescore, summary};
use vaultbench::score::{RegexBudget, sandbox};
use vaultbench::sweep::command::{self as sweep_command, Status};
use vaultbench::{errln, out, outln};
use vaultbench::{fsio, jsnum, judge, output};

#[derive(Parser)]
#[command(
    name = "vaultbench",
    version,
    about = "Agentic evaluation of LLMs inside a notes vault",
    long_about = "vaultbench runs an eval suite against a model through an embedded agent with real vault tools, \
                  scores every run (pass: finished cleanly; solve: passed and met the whole rubric), keeps blessed \
                  baselines per (provider, model), flags regressions against them, and publishes the results.\n\n\
                  Typical loop: `vaultbench run --provider gemini --model gemini-2.5-flash --repeat 5`, read the \
                  summary, then `vaultbench bless` to make it the baseline.",
    after_help = "Exit status: 0 ok, 1 failure (including regressions and disagreements), 2 usage error, \
                  130/143 interrupted by SIGINT/SIGTERM."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every task of a suite k times against a model and score each run.
    ///
    /// Each run gets a fresh vault (the task's fixture in eval-scratch/), the
    /// embedded agent and the vault tools. Writes <results>/<run-id>.json and a
    /// transcript per run, prints the summary and the regression check against
    /// <baselines>/<provider>-<model>.json. Ctrl-C saves what finished (resume
    /// with --resume RUN_ID).
    #[command(after_long_help = {
        let limits = vaultbench::limits::Limits::from_env().unwrap_or_default();
        format!(
            "{}\n\n{}\n{}",
            vaultbench::provider::environment_help(),
            limits.model_server_help(),
            limits.tool_call_help()
        )
    })]
    Run(Box<cli::run::RunArgs>),
    /// Join the results of `run --shard I/N` into one result.
    Merge {
        /// The shard result files, every shard exactly once.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// Where to write the merged result (default: <first shard>-merged.json).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Summarize a result file: solve^k by tier, flaky tasks, turns, cost,
    /// with 95% intervals and the pass^k / solve^k curve for every k.
    ///
    /// The figures are re-derived from the runs; if the file's stored figures
    /// differ, each differing field is listed and the exit status is 1.
    /// Intervals come from a bootstrap over tasks (a task's runs stay
    /// together) with a fixed seed, so a file always prints the same ones;
    /// pass^k for k below the runs per task is the unbiased C(c,k)/C(n,k).
    Report {
        /// The result or baseline file.
        result: PathBuf,
        /// Where blessed baselines live: the tasks added, removed and edited
        /// since the result's own baseline are named.
        #[arg(long, value_name = "DIR", default_value = "evals/baselines")]
        baselines: PathBuf,
        /// The suite: the tasks edited in it since the result ran are named.
        #[arg(long, value_name = "DIR", default_value = "evals")]
        suite: PathBuf,
        /// Print the re-derived aggregate block as JSON instead, with the
        /// derived `statistics` (intervals, curve, per tier) added.
        #[arg(long)]
        json: bool,
    },
    /// Compare a result with a baseline and list every change.
    ///
    /// A regression is a drop in pass^k, solve^k or a mean rate, or in a
    /// task's solved or passed fraction, that the data supports at --alpha:
    /// for pass^k and solve^k the paired bootstrap interval of the change
    /// (over the tasks both ran, at their common k) lies below zero; for the
    /// mean solve (pass) rate the exact stratified test of the solved (passed)
    /// runs across tasks gives p <= alpha/2; for a task its one-sided Fisher
    /// exact test is significant after the Benjamini-Hochberg correction. Smaller drops are listed as within noise; --exact flags any
    /// drop. Added and removed tasks are reported, not flagged. Results with
    /// different k compare at their common k. With no arguments: the latest
    /// result against the baseline of its (provider, model). With one file:
    /// a baseline (a file in --baselines) against the latest result of the
    /// same provider and model; any other file, as a result, against its own
    /// baseline. Two files of different models are compared with a warning.
    Compare {
        /// The baseline file, or with no second file a baseline or a result
        /// [default: <baselines>/<provider>-<model>.json of the result].
        baseline: Option<PathBuf>,
        /// The result file [default: the latest in --results of the baseline's model, by its run's own time].
        result: Option<PathBuf>,
        #[command(flatten)]
        dirs: Dirs,
        /// The suite: the tasks edited in it since either file ran are named.
        #[arg(long, value_name = "DIR", default_value = "evals")]
        suite: PathBuf,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
        /// Exit 1 when the gate finds a regression.
        #[arg(long)]
        fail_on_regression: bool,
        #[command(flatten)]
        gate: cli::run::GateArgs,
    },
    /// Promote a result to the baseline of its (provider, model).
    ///
    /// Writes evals/baselines/<provider>-<model>.json (characters outside
    /// [A-Za-z0-9._-] become `-`), atomically and byte for byte. Refuses moving
    /// model aliases (-latest, :latest, -preview), interrupted or partial sweeps and runs
    /// with harness errors unless --force; never blesses reference-provider
    /// runs or files whose figures do not re-derive from their runs.
    ///
    /// The run's transcripts (evals/results/<run-id>/) are archived as the
    /// baseline's evidence in
    /// evals/baselines/evidence/<provider>-<model>/<run-id>.tar.gz; commit both
    /// (and the removal of the previous run's archive). The pair is replaced as
    /// one: a bless that fails or is killed leaves the previous baseline and
    /// its evidence as they were, and concurrent blesses take turns.
    Bless {
        /// The result to bless (default: the latest in --results).
        result: Option<PathBuf>,
        #[command(flatten)]
        dirs: Dirs,
        /// Bless despite forceable refusals.
        #[arg(long)]
        force: bool,
    },
    /// Re-evaluate a result's recorded matcher verdicts from its evidence.
    ///
    /// Every contains and regex verdict is recomputed from response_text,
    /// then solved flags and all figures; every disagreement is listed and the
    /// exit status is 1 if there is any. With --judge, judge verdicts are
    /// asked afresh of the configured judge (EVAL_JUDGE_PROVIDER,
    /// EVAL_JUDGE_MODEL, EVAL_JUDGE_API_KEY or GEMINI_API_KEY).
    Rescore {
        /// The result or baseline file to rescore.
        result: PathBuf,
        /// Print the tallies and disagreements as JSON.
        #[arg(long)]
        json: bool,
        /// Also write the rescored result to this file.
        #[arg(long, value_name = "FILE")]
        write: Option<PathBuf>,
        /// Re-judge judge matchers with the configured judge model.
        #[arg(long)]
        judge: bool,
        /// With --judge: ask the judge N times per verdict, keep the majority
        /// answer (a tie is NO) and report its flip rate per task and overall.
        #[arg(long, value_name = "N", default_value_t = 1, requires = "judge",
              value_parser = clap::value_parser!(u32).range(1..=20))]
        repeat: u32,
        /// The suite the sweep ran (for the tasks' user messages, which the judge sees).
        #[arg(long, value_name = "DIR", default_value = "evals")]
        suite: PathBuf,
    },
    /// Grade a result's recorded runs by today's checks.
    ///
    /// A change of checks does not change what a model saw (the request, the
    /// notes, the tools), so its runs stand and only their verdicts may move.
    /// Each run is replayed from its transcript: its tool calls in order,
    /// against a fresh copy of today's fixture through the real vault tools,
    /// then its final answer, scored by today's task file (a run that gave no
    /// answer is only shown to have seen what it saw). Each run is
    /// unchanged, FLIPPED (with what now fails), NEEDS RERUN (the replay did
    /// not see what the run saw: another prompt, request, tools or tool
    /// result; or a limit rose above where it stopped the run), NEEDS JUDGE
    /// (today's judge criteria are not the ones on record) or UNREADABLE (its
    /// transcript cannot stand for it). Ends with solve^k recorded and today
    /// when every run has a verdict. Writes nothing; exit status 1 if any
    /// verdict flips or has none.
    Regrade {
        /// The result or baseline file (its transcripts: the evidence archive
        /// of a baseline, or the folder next to a result).
        result: PathBuf,
        /// The suite whose checks grade it.
        #[arg(long, value_name = "DIR", default_value = "evals")]
        suite: PathBuf,
        /// Print every run's outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Work with the task suite.
    Suite {
        #[command(subcommand)]
        command: SuiteCommand,
    },
    /// The judge gold set: agreement of judge verdicts with human labels.
    Calibrate {
        #[command(subcommand)]
        command: CalibrateCommand,
    },
    Publish(cli::publish::PublishArgs),
    /// Every blessing of each baseline, from git, and how each model moved.
    ///
    /// Reads every committed version of the baseline files in --baselines
    /// (a file renamed is followed; the working tree's file, blessed and not
    /// committed yet, is the latest blessing). For each model: pass^k,
    /// solve^k and the mean rates at each blessing with their 95% intervals
    /// (bootstrap over tasks), each step between blessings judged as
    /// `compare` judges (paired bootstrap and exact tests at alpha 0.05, in
    /// both directions: a significant change, within noise, or no change),
    /// and the tasks flagged: a stable task (k of k) that became flaky or
    /// failing, or the reverse, with its Fisher exact test, and a task whose
    /// definition changed (its content hash), which is not a model change.
    /// A shallow clone gives the commits it has (`git fetch --unshallow` for
    /// the rest); no repository gives no history, with a note. What each
    /// version and step gave is cached by blob id in VAULTBENCH_CACHE_DIR
    /// (default ~/.cache/vaultbench; empty: in memory only).
    History {
        /// A model id, provider/model, or a file name the baseline has or had [default: every model].
        model: Option<String>,
        /// Where the blessed baselines live.
        #[arg(long, value_name = "DIR", default_value = "evals/baselines")]
        baselines: PathBuf,
        /// Print the history as JSON: every blessing, step and task.
        #[arg(long)]
        json: bool,
    },
    View(cli::publish::ViewArgs),
    /// Internal: match regular expressions for the parent process (see score::sandbox).
    #[command(name = "regex-worker", hide = true)]
    RegexWorker,
}

#[derive(Subcommand)]
enum SuiteCommand {
    /// Validate every task (schema, regexes compile with their flags, fixtures
    /// exist, ids unique), replay every reference trajectory (each must solve
    /// its task), run the silent and dump adversaries (neither may solve any
    /// task) and replay the alternative-answer corpus (every correct answer
    /// must solve its task, every wrong one must fail); print the tier and
    /// category counts, the false-negative and false-positive rates and every
    /// failure. Exit 1 on any failure.
    ///
    /// Verdicts are those of the literal checks (tools, contains, regex, vault
    /// assertions, budget): a judge matcher never counts as passing. Tasks
    /// where only a judge matcher could reject a wrong answer are listed.
    /// With a judge configured (EVAL_JUDGE_MODEL and its key), its verdicts
    /// are reported beside them.
    Check {
        #[command(flatten)]
        dirs: SuiteDirs,
        /// Check only the tasks whose id starts with PREFIX (their reference,
        /// adversaries and alternative answers), as `run --task` runs them.
        #[arg(long, value_name = "PREFIX")]
        task: Option<String>,
    },
    /// Write every task's checks (outputMatchers and vaultAssertions) from its
    /// check source, <suite>/checks/<id>.toml. With --check, write nothing and
    /// exit 1 when a task file differs from its source, naming each task and
    /// field. docs/adding-a-task.md explains the sources.
    Compile {
        /// The suite folder, holding tasks/, checks/ and fixtures/.
        #[arg(long, value_name = "DIR", default_value = "evals")]
        suite: PathBuf,
        /// Compare only (for CI).
        #[arg(long)]
        check: bool,
    },
    /// Scaffold a task: its file, check source, fixture folder, reference and
    /// an empty alternatives folder, to fill in as docs/adding-a-task.md describes.
    New {
        /// The task id: lowercase letters, digits and hyphens.
        id: String,
        /// The suite folder.
        #[arg(long, value_name = "DIR", default_value = "evals")]
        suite: PathBuf,
    },
}

/// Where a suite and the answers written for it live.
#[derive(Args)]
struct SuiteDirs {
    /// The suite folder, holding tasks/ and fixtures/ (and by default references/ and alternatives/).
    #[arg(long, value_name = "DIR", default_value = "evals")]
    suite: PathBuf,
    /// The reference trajectories [default: <suite>/references].
    #[arg(long, value_name = "DIR")]
    references: Option<PathBuf>,
    /// The alternative-answer corpus, <task id>/<name>.json [default: <suite>/alternatives].
    #[arg(long, value_name = "DIR")]
    alternatives: Option<PathBuf>,
}

#[derive(Subcommand)]
enum CalibrateCommand {
    /// Agreement of the verdicts recorded in a calibration file with its human labels.
    Report {
        /// Calibration file (default: evals/calibration/judge-calibration.json).
        file: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Build the gold set from a sweep: one tuple per judge verdict, to be labelled by hand.
    ///
    /// Tuples are `<task>::<run>::<matcher>`; human labels already in the
    /// output file are kept where the tuple's id and response are unchanged,
    /// and the command refuses to drop any other label unless --force.
    Extract {
        /// The result file of the sweep.
        result: PathBuf,
        /// The suite the sweep ran (for the tasks' user messages).
        #[arg(long, value_name = "DIR", default_value = "evals")]
        suite: PathBuf,
        /// Output file (default: evals/calibration/judge-calibration.json).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace the output file even if human labels would be lost.
        #[arg(long)]
        force: bool,
    },
    /// Build the gold set of the suite's own criteria from its answers: one
    /// tuple per judge matcher and per answer written for the task (its
    /// reference and every alternative of the corpus), labelled YES or NO by
    /// how the answer was written (a correct answer meets the criterion; a
    /// wrong one does not, unless its file says otherwise).
    ///
    /// Then `calibrate judge --model M` measures any judge against it.
    Corpus {
        #[command(flatten)]
        dirs: SuiteDirs,
        /// Output file (default: evals/calibration/judge-calibration.json).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace the output file even if human labels it holds would be lost.
        #[arg(long)]
        force: bool,
    },
    /// Ask a candidate judge every labelled tuple and report its agreement with the humans.
    Judge {
        /// Calibration file (default: evals/calibration/judge-calibration.json).
        file: Option<PathBuf>,
        /// The candidate judge model, e.g. gemini-3.5-flash.
        #[arg(long)]
        model: String,
        /// Its provider: gemini, ollama or openai (default: EVAL_JUDGE_PROVIDER, else gemini).
        #[arg(long)]
        provider: Option<String>,
        /// Judge calls in flight at once.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
        jobs: u16,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct Dirs {
    /// Where run results are written.
    #[arg(long, value_name = "DIR", default_value = "evals/results")]
    results: PathBuf,
    /// Where blessed baselines live.
    #[arg(long, value_name = "DIR", default_value = "evals/baselines")]
    baselines: PathBuf,
}

/// One example per command, shown at the end of its `--help`.
const EXAMPLES: &[(&[&str], &str)] = &[
    (&[], "vaultbench run --provider gemini --model gemini-2.5-flash --repeat 5 && vaultbench bless"),
    (&["run"], "vaultbench run --provider ollama --model gemma4:e4b --repeat 3 --dry-run"),
    (&["merge"], "vaultbench merge evals/results/shard-1.json evals/results/shard-2.json"),
    (&["report"], "vaultbench report evals/results/2026-06-01T10-00-00-000Z.json --json"),
    (&["compare"], "vaultbench compare evals/baselines/gemini-gemini-2.5-flash.json --alpha 0.01"),
    (&["bless"], "vaultbench bless evals/results/2026-06-01T10-00-00-000Z.json"),
    (&["rescore"], "vaultbench rescore evals/baselines/gemini-gemini-2.5-flash.json --judge --repeat 3"),
    (&["regrade"], "vaultbench regrade evals/baselines/openai-smollm2-135m-instruct.json"),
    (&["suite"], "vaultbench suite check"),
    (&["suite", "check"], "vaultbench suite check --suite evals"),
    (&["calibrate"], "vaultbench calibrate report"),
    (&["calibrate", "report"], "vaultbench calibrate report evals/calibration/judge-calibration.json"),
    (&["calibrate", "extract"], "vaultbench calibrate extract evals/results/2026-06-01T10-00-00-000Z.json"),
    (&["calibrate", "corpus"], "vaultbench calibrate corpus --out /tmp/gold.json"),
    (&["calibrate", "judge"], "vaultbench calibrate judge --model gemini-2.5-flash --jobs 8"),
    (&["publish"], "vaultbench publish --watch --port 4000"),
    (&["history"], "vaultbench history gemini/gemini-2.5-flash --json"),
    (&["view"], "vaultbench view --out /tmp/last-run"),
    (&["suite", "compile"], "vaultbench suite compile --check"),
    (&["suite", "new"], "vaultbench suite new ferry-night-toll"),
];

/// The command line with each command's example at the end of its help.
fn command_line() -> clap::Command {
    use clap::CommandFactory;
    let mut root = Cli::command();
    for (path, example) in EXAMPLES {
        root = with_example(root, path, example);
    }
    root
}

fn with_example(cmd: clap::Command, path: &[&str], example: &str) -> clap::Command {
    match path.split_first() {
        None => {
            let add = |text: Option<&clap::builder::StyledStr>| match text {
                Some(t) => format!("{t}\n\nExample:\n  {example}"),
                None => format!("Example:\n  {example}"),
            };
            let (short, long) = (add(cmd.get_after_help()), add(cmd.get_after_long_help()));
            let has_long = cmd.get_after_long_help().is_some();
            let cmd = cmd.after_help(short);
            if has_long { cmd.after_long_help(long) } else { cmd }
        }
        Some((first, rest)) => cmd.mut_subcommand(*first, |sub| with_example(sub, rest, example)),
    }
}

fn main() -> ExitCode {
    use clap::FromArgMatches;
    let cli = match Cli::from_arg_matches(&command_line().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let Command::RegexWorker = cli.command {
        return match sandbox::serve(std::io::stdin().lock(), std::io::stdout().lock()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    // Patterns from models and tasks are matched in worker processes of
    // this executable, which can be killed when they overrun.
    if let Ok(exe) = std::env::current_exe() {
        sandbox::use_worker_process(exe);
    }
    // For these commands what they print is the work itself: output that
    // could not be written (other than to a reader that closed its end)
    // means the work did not get through.
    let prints_its_work = matches!(
        cli.command,
        Command::Report { .. }
            | Command::Compare { .. }
            | Command::History { .. }
            | Command::Rescore { .. }
            | Command::Calibrate { command: CalibrateCommand::Report { .. } }
    );
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // A suite's diagnostics say their own kind ("path: error: ...").
            let prefix = if e.downcast_ref::<vaultbench::suite::SuiteErrors>().is_some() { "" } else { "error: " };
            let text = format!("{e:#}");
            errln!("{prefix}{text}");
            if let Some(hint) = project_root_hint(&text) {
                errln!("{hint}");
            }
            ExitCode::FAILURE
        }
    };
    // A closed pipe is the reader's choice; any other failure is worth a word.
    if let Some(kind) = output::stdout_lost().filter(|k| *k != std::io::ErrorKind::BrokenPipe) {
        if prints_its_work {
            errln!("error: standard output could not be written ({kind}): what this command prints was lost");
            return ExitCode::FAILURE;
        }
        errln!("note: standard output could not be written ({kind}); the rest of it was dropped");
    }
    code
}

/// The usual cause of a default folder that is missing: vaultbench was
/// started outside the project. Said once for every command, when the
/// error names a default folder and there is no `evals/` here.
fn project_root_hint(error: &str) -> Option<String> {
    let names_a_default = ["evals/", "the docs folder docs "].iter().any(|d| error.contains(d));
    if !names_a_default || Path::new("evals").is_dir() {
        return None;
    }
    let here = std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string());
    Some(format!(
        "hint: there is no evals/ folder here ({here}): run vaultbench from the project root (the folder holding \
         evals/ and docs/), or name the folders with the command's options (see --help)"
    ))
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    out!("{}", jsnum::to_json_string(value)?);
    Ok(())
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Report { result, baselines, suite, json } => cmd_report(&result, &baselines, &suite, json),
        Command::Compare { baseline, result, dirs, suite, json, fail_on_regression, gate } => {
            cmd_compare(baseline, result, &dirs, &suite, json, fail_on_regression, gate.gate().rule())
        }
        Command::Bless { result, dirs, force } => cmd_bless(result, &dirs, force),
        Command::Rescore { result, json, write, judge, suite, repeat } => {
            cmd_rescore(&result, json, write.as_deref(), judge.then_some(suite.as_path()), repeat)
        }
        Command::Regrade { result, suite, json } => {
            status(vaultbench::sweep::regrade::command(&result, &suite, json, &mut output::stdout()))
        }
        Command::Run(args) => status(sweep_command::run(args.options(), &mut output::stdout(), &mut output::stderr())),
        Command::Merge { shards, out } => status(sweep_command::merge(&shards, out, &mut output::stdout())),
        Command::Suite { command: SuiteCommand::Check { dirs, task } } => status(sweep_command::suite_check(
            &dirs.suite,
            dirs.references,
            dirs.alternatives,
            task.as_deref(),
            &mut output::stdout(),
            &mut output::stderr(),
        )),
        Command::Suite { command: SuiteCommand::Compile { suite, check } } => cmd_suite_compile(&suite, check),
        Command::Suite { command: SuiteCommand::New { id, suite } } => {
            for path in vaultbench::suite::compile::new_task(&suite, &id)? {
                println!("wrote {}", path.display());
            }
            println!(
                "next: write the fixture notes, the request, the check source and the reference (docs/adding-a-task.md)"
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Publish(args) => cmd_publish(&args),
        Command::History { model, baselines, json } => cmd_history(model.as_deref(), &baselines, json),
        Command::View(args) => cmd_view(&args),
        Command::Calibrate { command: CalibrateCommand::Report { file, json } } => {
            let path = file.unwrap_or_else(|| PathBuf::from(DEFAULT_CALIBRATION));
            let file: CalibrationFile = fsio::read_json(&path)?;
            let agreement = calibrate::recorded_agreement(&file);
            if json {
                print_json(&calibrate::AgreementJson::of(&agreement))?;
            } else {
                outln!("Calibration set: {}", path.display());
                out!("{agreement}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate { command: CalibrateCommand::Extract { result, suite, out, force } } => {
            let out = out.unwrap_or_else(|| PathBuf::from(DEFAULT_CALIBRATION));
            let extraction = calibrate::extract_to_file(&result, &user_messages(&suite)?, &out, force)?;
            let labelled = extraction.file.tuples.iter().filter(|t| t.human_label.is_some()).count();
            outln!("Wrote {} judge tuples to {}", extraction.file.tuples.len(), out.display());
            outln!("  human labels kept: {labelled}; unlabelled: {}", extraction.file.tuples.len() - labelled);
            if !extraction.labels_lost.is_empty() {
                errln!("warning: dropped {} human labels (--force)", extraction.labels_lost.len());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate { command: CalibrateCommand::Corpus { dirs, out, force } } => {
            cmd_calibrate_corpus(&dirs.suite, dirs.references, dirs.alternatives, out, force)
        }
        Command::Calibrate { command: CalibrateCommand::Judge { file, model, provider, jobs, json } } => {
            cmd_calibrate_judge(file, model, provider, usize::from(jobs), json)
        }
        Command::RegexWorker => unreachable!("handled in main before anything else"),
    }
}

const DEFAULT_CALIBRATION: &str = "evals/calibration/judge-calibration.json";

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")
}

/// Each task's user message, from the suite at `root`.
fn user_messages(root: &Path) -> Result<std::collections::BTreeMap<String, String>> {
    let suite = vaultbench::suite::Suite::load(root)
        .map_err(|e| anyhow::anyhow!("loading the suite {}:\n{e}", root.display()))?;
    Ok(suite.tasks.into_iter().map(|t| (t.id, t.user_message)).collect())
}

fn cmd_suite_compile(root: &Path, check: bool) -> Result<ExitCode> {
    use vaultbench::suite::compile::compile_suite;
    let outcome = match compile_suite(root, check) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    if check {
        for d in &outcome.differences {
            println!("{d}");
        }
        if outcome.changed.is_empty() {
            println!("{} task files agree with their check sources", outcome.tasks);
            Ok(ExitCode::SUCCESS)
        } else {
            println!(
                "{} of {} task files differ from their check sources: run `vaultbench suite compile`",
                outcome.changed.len(),
                outcome.tasks
            );
            Ok(ExitCode::FAILURE)
        }
    } else {
        for file in &outcome.changed {
            println!("wrote {}", file.display());
        }
        println!("{} task sources compiled, {} task files rewritten", outcome.tasks, outcome.changed.len());
        Ok(ExitCode::SUCCESS)
    }
}

fn cmd_calibrate_corpus(
    root: &Path,
    references: Option<PathBuf>,
    alternatives: Option<PathBuf>,
    out: Option<PathBuf>,
    force: bool,
) -> Result<ExitCode> {
    use vaultbench::suite::{Suite, corpus::Corpus};
    let suite = Suite::load(root).map_err(|e| anyhow::anyhow!("loading the suite {}:\n{e}", root.display()))?;
    let dir = alternatives.unwrap_or_else(|| Corpus::default_dir(root));
    let corpus = Corpus::load(&dir, &suite)
        .map_err(|e| anyhow::anyhow!("loading the alternative answers {}:\n{e}", dir.display()))?
        .ok_or_else(|| anyhow::anyhow!("no alternative-answer corpus at {}", dir.display()))?;
    let references = references.unwrap_or_else(|| root.join("references"));
    let out = out.unwrap_or_else(|| PathBuf::from(DEFAULT_CALIBRATION));
    let (file, written) = calibrate::from_corpus_to_file(&suite, &corpus, &references, &out, force)?;
    let yes = file.tuples.iter().filter(|t| t.human_label.is_some_and(|l| l.is_yes())).count();
    let tasks: std::collections::BTreeSet<&str> = file.tuples.iter().map(|t| t.task_id.as_str()).collect();
    outln!(
        "{} {} judge tuples ({} tasks with a judge matcher; {yes} labelled YES, {} NO) {} {}",
        if written { "Wrote" } else { "Unchanged:" },
        file.tuples.len(),
        tasks.len(),
        file.tuples.len() - yes,
        if written { "to" } else { "already in" },
        out.display()
    );
    outln!("Measure a judge against it: vaultbench calibrate judge {} --model MODEL", out.display());
    Ok(ExitCode::SUCCESS)
}

fn cmd_calibrate_judge(
    file: Option<PathBuf>,
    model: String,
    provider: Option<String>,
    jobs: usize,
    json: bool,
) -> Result<ExitCode> {
    let path = file.unwrap_or_else(|| PathBuf::from(DEFAULT_CALIBRATION));
    let set: CalibrationFile = fsio::read_json(&path)?;
    let mut config = judge::JudgeConfig::from_env()?;
    config.model = model;
    if let Some(p) = provider {
        config.provider = p;
    }
    if !config.has_key() {
        anyhow::bail!(
            "[judge unavailable] no API key for {}: set EVAL_JUDGE_API_KEY or GEMINI_API_KEY",
            config.label()
        );
    }
    let candidate = judge::build(&config)?;
    let run = runtime()?.block_on(calibrate::judge_candidate(&set, candidate, &config.label(), jobs));
    if json {
        print_json(&calibrate::AgreementJson::of(&run.agreement))?;
    } else {
        outln!("Calibration set: {}", path.display());
        out!("{}", run.agreement);
    }
    if let Some(first) = run.failed_calls.first() {
        errln!("warning: {} judge calls failed and were not counted; the first: {first}", run.failed_calls.len());
    }
    // Failed calls leave the figures on fewer tuples; none at all is a failure.
    Ok(if run.asked > 0 && run.agreement.evaluated == 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn cmd_publish(args: &cli::publish::PublishArgs) -> Result<ExitCode> {
    use vaultbench::publish::{self, Notice, Stopped};
    if args.watch {
        let stopped = publish::watch::run(args.options(), args.watch_options(), &mut |notice| match notice {
            Notice::Warning(_) | Notice::Failed(_) | Notice::WatchError(_) | Notice::NotWatching(_) => {
                errln!("{notice}")
            }
            _ => outln!("{notice}"),
        })?;
        return Ok(ExitCode::from(if stopped == Stopped::Terminated { 143 } else { 130 }));
    }
    let report = publish::build_and_exit(&args.options())?;
    for w in &report.warnings {
        errln!("warning: {w}");
    }
    outln!("{report}");
    Ok(ExitCode::SUCCESS)
}

fn cmd_history(model: Option<&str>, dir: &Path, json: bool) -> Result<ExitCode> {
    use vaultbench::history;
    if !dir.is_dir() {
        anyhow::bail!("the baselines folder {} does not exist (--baselines)", dir.display());
    }
    let history = history::load(dir);
    let models = match model {
        // No history at all (no repository, no git): the notes say why; not an error.
        Some(_) if history.models.is_empty() => Vec::new(),
        Some(name) => history.select(name).map_err(|e| anyhow::anyhow!(e))?,
        None => history.models.iter().collect(),
    };
    let notes = match model {
        Some(_) => history.notes_about(&models),
        None => history.notes.clone(),
    };
    let folder = dir.display().to_string();
    if json {
        print_json(&history::text::Json { baselines: &folder, alpha: history.alpha, notes: &notes, models })?;
    } else {
        out!("{}", history::text::render(&history, &models, &notes, &folder));
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_view(args: &cli::publish::ViewArgs) -> Result<ExitCode> {
    use vaultbench::publish::{Notice, Stopped, view};
    let options = args.options();
    if options.out.is_some() {
        let report = view::export(&options)?;
        outln!("{report}");
        return Ok(ExitCode::SUCCESS);
    }
    let stopped = view::serve(&options, &mut |notice| match notice {
        Notice::Warning(_) | Notice::Failed(_) | Notice::WatchError(_) => errln!("{notice}"),
        _ => outln!("{notice}"),
    })?;
    Ok(ExitCode::from(if stopped == Stopped::Terminated { 143 } else { 130 }))
}

fn status(result: Result<Status>) -> Result<ExitCode> {
    Ok(match result? {
        Status::Ok => ExitCode::SUCCESS,
        Status::Failed => ExitCode::FAILURE,
        Status::Interrupted(signal) => ExitCode::from(signal.exit_code()),
    })
}

fn cmd_report(path: &Path, baselines: &Path, suite: &Path, json: bool) -> Result<ExitCode> {
    let stored = report::load_result(path)?;
    let derived = aggregate::rederive(&stored);
    let diffs = aggregate::differences(&stored, &derived);
    // The model's baseline, unless this result is it.
    let baseline = baselines.join(bless::baseline_file_name(&stored.provider, &stored.model));
    let is_itself = baseline.canonicalize().ok().zip(path.canonicalize().ok()).is_some_and(|(a, b)| a == b);
    let drift = if baseline.is_file() && !is_itself {
        Some(report::drift::task_drift(&report::load_result(&baseline)?, &stored))
    } else {
        None
    };
    let edited = report::drift::edited_since(suite, &[&stored]).remove(0);
    if json {
        let mut report = summary::ReportJson::of(&derived);
        report.against_baseline =
            drift.map(|tasks| summary::AgainstBaseline { baseline: baseline.display().to_string(), tasks });
        report.edited_in_suite = edited;
        print_json(&report)?;
    } else {
        out!("{}", summary::render(&derived));
        if let Some(drift) = drift {
            outln!("\nTasks against the baseline {}:", baseline.display());
            for line in drift.to_string().lines() {
                outln!("  {line}");
            }
        }
        if !edited.is_empty() {
            outln!("\n{}", report::drift::edited_since_text("this result", &edited));
        }
    }
    if diffs.is_empty() {
        if !json {
            outln!("\nFigures: the stored task results and aggregate re-derive exactly from the runs.");
        }
        Ok(ExitCode::SUCCESS)
    } else {
        errln!("\n{}: {} stored figures differ from those re-derived from its runs:", path.display(), diffs.len());
        for d in &diffs {
            errln!("  {d}");
        }
        Ok(ExitCode::FAILURE)
    }
}

fn cmd_compare(
    first: Option<PathBuf>,
    second: Option<PathBuf>,
    dirs: &Dirs,
    suite: &Path,
    json: bool,
    fail_on_regression: bool,
    rule: vaultbench::stats::Rule,
) -> Result<ExitCode> {
    let own_baseline = |r: &vaultbench::format::result::ResultFile| -> Result<PathBuf> {
        let p = dirs.baselines.join(bless::baseline_file_name(&r.provider, &r.model));
        if !p.exists() {
            anyhow::bail!(
                "no baseline for {} / {} at {}: bless a result first, or name a baseline file",
                r.provider,
                r.model,
                p.display()
            );
        }
        Ok(p)
    };
    // One file: a baseline (a file in --baselines) meets the latest result
    // of its own model; any other file is a result, met by its own baseline.
    let (baseline_path, result_path, current) = match (first, second) {
        (Some(baseline), Some(result)) => {
            let current = report::load_result(&result)?;
            (baseline, result, current)
        }
        (Some(one), None) if in_folder(&one, &dirs.baselines) => {
            let base = report::load_result(&one)?;
            let result = warned(bless::latest_result_of(&dirs.results, &base.provider, &base.model)?);
            let current = report::load_result(&result)?;
            (one, result, current)
        }
        (Some(result), None) => {
            let current = report::load_result(&result)?;
            (own_baseline(&current)?, result, current)
        }
        (None, _) => {
            let result = latest(&dirs.results)?;
            let current = report::load_result(&result)?;
            (own_baseline(&current)?, result, current)
        }
    };
    let base = report::load_result(&baseline_path)?;
    if (base.provider.as_str(), base.model.as_str()) != (current.provider.as_str(), current.model.as_str()) {
        errln!(
            "warning: the two files are of different models: the baseline {} / {}, the result {} / {}",
            base.provider,
            base.model,
            current.provider,
            current.model
        );
    }
    let comparison = compare::compare(&base, &current, rule);
    if json {
        print_json(&comparison)?;
    } else {
        outln!("Baseline file: {}\nResult file:   {}\n", baseline_path.display(), result_path.display());
        let edited = report::drift::edited_since(suite, &[&base, &current]);
        for (what, edited) in ["the baseline", "the result"].into_iter().zip(&edited) {
            if !edited.is_empty() {
                outln!("{}\n", report::drift::edited_since_text(what, edited));
            }
        }
        out!("{}", comparison.detailed());
    }
    Ok(if fail_on_regression && comparison.has_regressions() { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn cmd_bless(result: Option<PathBuf>, dirs: &Dirs, force: bool) -> Result<ExitCode> {
    let source = match result {
        Some(p) => p,
        None => latest(&dirs.results)?,
    };
    let blessed = bless::bless(&source, &dirs.baselines, force)?;
    let r = &blessed.result;
    if blessed.already {
        outln!(
            "{} is already the baseline {} (run {}): nothing to do.",
            source.display(),
            blessed.baseline_path.display(),
            r.run_id
        );
        return Ok(ExitCode::SUCCESS);
    }
    for r in &blessed.forced {
        errln!("warning: blessed despite: {r}");
    }
    if let Some(old) = &blessed.previous {
        let comparison =
            compare::compare(old, r, vaultbench::stats::Rule::Statistical { alpha: vaultbench::stats::DEFAULT_ALPHA });
        outln!("What this bless changes, against the baseline it replaces (run {}):", old.run_id);
        out!("{}", comparison.summary());
        outln!();
    }
    outln!("Blessed {} / {} (run {}, commit {})", r.provider, r.model, r.run_id, r.git_sha);
    outln!("  source:   {}", source.display());
    outln!("  baseline: {}", blessed.baseline_path.display());
    if let Some(old) = &blessed.replaced {
        if blessed.previous_in_git {
            outln!("  replaced: the baseline from {old} (committed: recover it with git)");
        } else {
            match bless::result_of_run(&dirs.results, &old.to_string()) {
                Some(file) => outln!(
                    "  replaced: the baseline from {old} (it was not committed in git; its result is still {})",
                    file.display()
                ),
                None => outln!(
                    "  replaced: the baseline from {old} (it was not committed in git and no result of that run is \
                     left in {}, so its content is gone)",
                    dirs.results.display()
                ),
            }
        }
    }
    let ev = &blessed.evidence;
    if ev.archived > 0 {
        outln!(
            "  evidence: {} ({} transcripts; commit it with the baseline)",
            blessed.evidence_path.display(),
            ev.archived
        );
    }
    if blessed.kept_earlier_evidence {
        outln!(
            "  evidence: {} (kept: this run's archive from an earlier bless; no transcript was found now)",
            blessed.evidence_path.display()
        );
    } else if !ev.missing.is_empty() {
        errln!(
            "warning: no transcript for {} of {} runs ({}) in {}: the baseline carries no evidence for them",
            ev.missing.len(),
            ev.missing.len() + ev.archived,
            report::first_few(&ev.missing),
            evidence::transcripts_dir(&source).display()
        );
    }
    outln!(
        "  pass^{k}: {}%  solve^{k}: {}%",
        jsnum::to_fixed(r.aggregate.pass_k_rate, 1),
        jsnum::to_fixed(r.aggregate.solve_k_rate, 1),
        k = r.aggregate.n_runs
    );
    Ok(ExitCode::SUCCESS)
}

/// Whether `path` is a file directly in `folder` (both as they resolve).
fn in_folder(path: &Path, folder: &Path) -> bool {
    let parent = path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
    match (parent.and_then(|p| p.canonicalize().ok()), folder.canonicalize().ok()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The latest result of `dir` by its run's own time, after a warning for
/// each result dated in the future (a wrong clock), which is passed over.
fn latest(dir: &Path) -> Result<PathBuf> {
    Ok(warned(bless::latest_result(dir)?))
}

/// The latest result chosen, after a warning for each one passed over for
/// being dated in the future.
fn warned(latest: bless::Latest) -> PathBuf {
    for (path, run_id) in &latest.from_the_future {
        errln!("warning: passing over {}: its run is dated {run_id}, in the future (a wrong clock?)", path.display());
    }
    latest.path
}

fn cmd_rescore(
    path: &Path,
    json: bool,
    write: Option<&Path>,
    judge_suite: Option<&Path>,
    repeat: u32,
) -> Result<ExitCode> {
    let stored = report::load_result(path)?;
    let budget = RegexBudget::per_pattern(Limits::default().regex_timeout);
    let outcome = match judge_suite {
        None => futures_lite_block_on(rescore::rescore(&stored, None, &|_: &str| None, budget)),
        Some(suite) => {
            let Some(judge) = judge::try_from_env()? else {
                anyhow::bail!(
                    "[judge unavailable] --judge needs a judge key: set EVAL_JUDGE_API_KEY or GEMINI_API_KEY"
                );
            };
            let prompts = user_messages(suite)?;
            let lookup = |id: &str| prompts.get(id).cloned();
            runtime()?.block_on(rescore::rescore_repeated(&stored, Some(judge.as_ref()), &lookup, budget, repeat))
        }
    };
    if json {
        print_json(&outcome)?;
    } else {
        outln!("Rescored {} ({} / {}, run {})", path.display(), stored.provider, stored.model, stored.run_id);
        out!("{outcome}");
    }
    if let Some(out) = write {
        report::write_result(out, &outcome.rescored)
            .with_context(|| format!("writing the rescored result to {}", out.display()))?;
        if !json {
            outln!("Wrote the rescored result to {}", out.display());
        }
    }
    Ok(if outcome.all_agree() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Rescoring without a judge never awaits I/O, so a single poll completes it.
fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(f).poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => unreachable!("offline rescoring does not wait on I/O"),
    }
}

#[cfg(test)]
mod tests {
    /// Every command and subcommand, however deep, ends its help with an
    /// example: one listed in `EXAMPLES` for each, none forgotten.
    #[test]
    fn every_command_has_an_example() {
        fn walk(cmd: &clap::Command, path: &mut Vec<String>, missing: &mut Vec<String>) {
            let help = cmd.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            if !cmd.is_hide_set() && !help.contains("Example:\n  vaultbench ") {
                missing.push(path.join(" "));
            }
            for sub in cmd.get_subcommands() {
                path.push(sub.get_name().to_string());
                walk(sub, path, missing);
                path.pop();
            }
        }
        let mut missing = Vec::new();
        walk(&super::command_line(), &mut Vec::new(), &mut missing);
        assert!(missing.is_empty(), "commands without an example: {missing:?}");
    }
}
