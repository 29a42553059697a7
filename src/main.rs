//! The `vaultbench` command line: parses arguments, calls the library, prints,
//! and decides the exit code (0 ok, 1 failure, 2 usage, 130/143 interrupted).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use vaultbench::format::calibration::CalibrationFile;
use vaultbench::report::{self, aggregate, bless, calibrate, compare, rescore, summary};
use vaultbench::{fsio, jsnum};

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
    after_help = "Exit status: 0 ok, 1 failure (including regressions and disagreements), 2 usage error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarize a result file: solve^k by tier, flaky tasks, turns, cost.
    ///
    /// The figures are re-derived from the runs; if the file's stored figures
    /// differ, each differing field is listed and the exit status is 1.
    Report {
        /// The result or baseline file.
        result: PathBuf,
        /// Print the re-derived aggregate block as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Compare a result with a baseline and list every change.
    ///
    /// A regression is a drop in pass^k or solve^k, or a drop of any task's
    /// solved or passed fraction. Added and removed tasks are reported, not flagged.
    /// With no arguments: the latest result against the baseline of its
    /// (provider, model). With one: that baseline against the latest result.
    Compare {
        baseline: Option<PathBuf>,
        result: Option<PathBuf>,
        #[command(flatten)]
        dirs: Dirs,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
        /// Exit 1 when a regression is found.
        #[arg(long)]
        fail_on_regression: bool,
    },
    /// Promote a result to the baseline of its (provider, model).
    ///
    /// Writes evals/baselines/<provider>-<model>.json (characters outside
    /// [A-Za-z0-9._-] become `-`), atomically and byte for byte. Refuses moving
    /// model aliases (-latest, -preview), interrupted or partial sweeps and runs
    /// with harness errors unless --force; never blesses reference-provider
    /// runs or files whose figures do not re-derive from their runs.
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
    /// exit status is 1 if there is any.
    Rescore {
        result: PathBuf,
        /// Print the tallies and disagreements as JSON.
        #[arg(long)]
        json: bool,
        /// Also write the rescored result to this file.
        #[arg(long, value_name = "FILE")]
        write: Option<PathBuf>,
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
    Publish(vaultbench::publish::args::PublishArgs),
}

#[derive(Subcommand)]
enum SuiteCommand {
    /// Validate every task (schema, regexes compile with their flags, fixtures
    /// exist, ids unique) and print the tier and category counts.
    Check {
        /// The suite folder, holding tasks/ and fixtures/.
        #[arg(long, value_name = "DIR", default_value = "evals")]
        suite: PathBuf,
    },
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    print!("{}", jsnum::to_json_string(value)?);
    Ok(())
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Report { result, json } => cmd_report(&result, json),
        Command::Compare { baseline, result, dirs, json, fail_on_regression } => {
            cmd_compare(baseline, result, &dirs, json, fail_on_regression)
        }
        Command::Bless { result, dirs, force } => cmd_bless(result, &dirs, force),
        Command::Rescore { result, json, write } => cmd_rescore(&result, json, write.as_deref()),
        Command::Suite { command: SuiteCommand::Check { suite } } => cmd_suite_check(&suite),
        Command::Publish(args) => cmd_publish(&args),
        Command::Calibrate { command: CalibrateCommand::Report { file, json } } => {
            let path = file.unwrap_or_else(|| PathBuf::from("evals/calibration/judge-calibration.json"));
            let file: CalibrationFile = fsio::read_json(&path)?;
            let agreement = calibrate::recorded_agreement(&file);
            if json {
                print_json(&agreement)?;
            } else {
                println!("Calibration set: {}", path.display());
                print!("{agreement}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn cmd_publish(args: &vaultbench::publish::args::PublishArgs) -> Result<ExitCode> {
    use vaultbench::publish::{self, Notice, Stopped};
    if args.watch {
        let stopped = publish::watch::run(args.options(), args.watch_options(), &mut |notice| match notice {
            Notice::Warning(_) | Notice::Failed(_) | Notice::WatchError(_) | Notice::NotWatching(_) => {
                eprintln!("{notice}")
            }
            _ => println!("{notice}"),
        })?;
        return Ok(ExitCode::from(if stopped == Stopped::Terminated { 143 } else { 130 }));
    }
    let report = publish::build(&args.options())?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    println!("{report}");
    Ok(ExitCode::SUCCESS)
}

fn cmd_suite_check(root: &Path) -> Result<ExitCode> {
    let suite = match vaultbench::suite::Suite::load(root) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    for w in &suite.warnings {
        eprintln!("{w}");
    }
    println!("{} tasks in {}", suite.tasks.len(), root.display());
    let mut tiers = std::collections::BTreeMap::new();
    let mut categories = std::collections::BTreeMap::new();
    for t in &suite.tasks {
        *tiers.entry(t.difficulty.as_str()).or_insert(0) += 1;
        *categories.entry(t.category.as_str()).or_insert(0) += 1;
    }
    let list = |m: &std::collections::BTreeMap<&str, i32>| {
        m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    };
    println!("tiers: {}", list(&tiers));
    println!("categories: {}", list(&categories));
    Ok(ExitCode::SUCCESS)
}

fn cmd_report(path: &Path, json: bool) -> Result<ExitCode> {
    let stored = report::load_result(path)?;
    let derived = aggregate::rederive(&stored);
    let diffs = aggregate::differences(&stored, &derived);
    if json {
        print_json(&derived.aggregate)?;
    } else {
        print!("{}", summary::render(&derived));
    }
    if diffs.is_empty() {
        if !json {
            println!("\nFigures: the stored task results and aggregate re-derive exactly from the runs.");
        }
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("\n{}: {} stored figures differ from those re-derived from its runs:", path.display(), diffs.len());
        for d in &diffs {
            eprintln!("  {d}");
        }
        Ok(ExitCode::FAILURE)
    }
}

fn cmd_compare(
    baseline: Option<PathBuf>,
    result: Option<PathBuf>,
    dirs: &Dirs,
    json: bool,
    fail_on_regression: bool,
) -> Result<ExitCode> {
    let result_path = match result {
        Some(p) => p,
        None => bless::latest_result(&dirs.results)?,
    };
    let current = report::load_result(&result_path)?;
    let baseline_path = match baseline {
        Some(p) => p,
        None => {
            let p = dirs.baselines.join(bless::baseline_file_name(&current.provider, &current.model));
            if !p.exists() {
                anyhow::bail!(
                    "no baseline for {} / {} at {}: bless a result first, or name a baseline file",
                    current.provider,
                    current.model,
                    p.display()
                );
            }
            p
        }
    };
    let base = report::load_result(&baseline_path)?;
    let comparison = compare::compare(&base, &current);
    if json {
        print_json(&comparison)?;
    } else {
        println!("Baseline file: {}\nResult file:   {}\n", baseline_path.display(), result_path.display());
        print!("{}", comparison.detailed());
    }
    Ok(if fail_on_regression && comparison.has_regressions() { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn cmd_bless(result: Option<PathBuf>, dirs: &Dirs, force: bool) -> Result<ExitCode> {
    let source = match result {
        Some(p) => p,
        None => bless::latest_result(&dirs.results)?,
    };
    let blessed = bless::bless(&source, &dirs.baselines, force)?;
    for r in &blessed.forced {
        eprintln!("warning: blessed despite: {r}");
    }
    let r = &blessed.result;
    println!("Blessed {} / {} (run {}, commit {})", r.provider, r.model, r.run_id, r.git_sha);
    println!("  source:   {}", source.display());
    println!("  baseline: {}", blessed.baseline_path.display());
    if let Some(old) = &blessed.replaced {
        println!("  replaced: the baseline from {old} (recover it with git)");
    }
    println!(
        "  pass^{k}: {}%  solve^{k}: {}%",
        jsnum::to_fixed(r.aggregate.pass_k_rate, 1),
        jsnum::to_fixed(r.aggregate.solve_k_rate, 1),
        k = r.aggregate.n_runs
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_rescore(path: &Path, json: bool, write: Option<&Path>) -> Result<ExitCode> {
    let stored = report::load_result(path)?;
    let no_prompts = |_: &str| None;
    let outcome = futures_lite_block_on(rescore::rescore(&stored, None, &no_prompts));
    if json {
        print_json(&outcome)?;
    } else {
        println!("Rescored {} ({} / {}, run {})", path.display(), stored.provider, stored.model, stored.run_id);
        print!("{outcome}");
    }
    if let Some(out) = write {
        report::write_result(out, &outcome.rescored)
            .with_context(|| format!("writing the rescored result to {}", out.display()))?;
        if !json {
            println!("Wrote the rescored result to {}", out.display());
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
