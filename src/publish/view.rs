//! `vaultbench view`: the explorer's pages for one result, blessed or not,
//! before anyone decides to bless it: its figures, every task with its runs
//! (how each ended, every check in words, the response), each run's
//! transcript, the failure breakdown, and the comparison with the baseline
//! of the same provider and model when there is one, with the tasks added,
//! removed and edited since it (`report::drift`).
//!
//! It is the publish pipeline with other inputs: the result (and that
//! baseline) are the site's baselines, a generated home page says what is
//! shown, and the stages that load, model, render and write are the ones a
//! `publish` build runs ([`Site::for_view`]). A result whose sweep is still
//! running is read from its finished cells, and the served pages refresh as
//! cells finish. `--out` exports the pages instead of serving them.
//!
//! It never writes to the results or baselines folders.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::format::result::{ResultFile, TaskResult};
use crate::publish::load::baselines::{self, Baseline, Headline};
use crate::publish::model::transcripts::{self, Transcripts};
use crate::publish::serve::{self, ServerState};
use crate::publish::site::Site;
use crate::publish::watch::{Notice, Stopped};
use crate::publish::write::{OutputDir, Stamps};
use crate::publish::{BuildReport, PublishOptions};
use crate::report::{aggregate, bless, drift};
use crate::sweep::store::{Manifest, Store};

/// What `view` shows and where.
#[derive(Debug, Clone)]
pub struct ViewOptions {
    /// A result file, a run id or a sweep's folder; `None`: the latest.
    pub result: Option<String>,
    pub results: PathBuf,
    pub baselines: PathBuf,
    /// The suite folder (holding `tasks/`).
    pub suite: PathBuf,
    pub templates: PathBuf,
    /// Export the pages here instead of serving them.
    pub out: Option<PathBuf>,
    /// 0 picks a free port.
    pub port: u16,
    /// How often a served result is looked at for new runs.
    pub poll: Duration,
}

/// The result being looked at: a finished result file, or a sweep still
/// writing its cells.
#[derive(Debug, Clone)]
enum Target {
    File(PathBuf),
    Sweep(Store, Box<Manifest>),
}

/// What a load of the target found.
struct Loaded {
    result: ResultFile,
    /// The file shown as the result's (the result file, or where it will be).
    path: PathBuf,
    /// The folder of its transcripts.
    transcripts: PathBuf,
    /// Runs finished of runs planned, while the sweep is running.
    progress: Option<(usize, usize)>,
}

impl Target {
    /// The result `name` names (a file, a run id or a sweep folder), or
    /// the latest in `results` (finished or still running).
    fn find(name: Option<&str>, results: &Path) -> Result<Target> {
        match name {
            Some(name) => {
                let path = Path::new(name);
                if path.is_file() {
                    return Ok(Target::File(path.to_path_buf()));
                }
                if path.join("sweep.json").is_file() {
                    let parent = path.parent().unwrap_or(Path::new("."));
                    let stem = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    return Self::by_id(parent, &stem);
                }
                Self::by_id(results, name)
            }
            None => Self::latest(results),
        }
    }

    /// The result of run `id` in `results`: its file, or its sweep.
    fn by_id(results: &Path, id: &str) -> Result<Target> {
        let stem = id.trim_end_matches(".json").replace([':', '.'], "-");
        let file = results.join(format!("{stem}.json"));
        if file.is_file() {
            return Ok(Target::File(file));
        }
        match Store::find(results, id) {
            Ok((store, manifest)) => Ok(Target::Sweep(store, Box::new(manifest))),
            Err(_) => bail!(
                "no result `{id}`: neither {} nor a sweep folder {} exists (pass a result file, a run id, or \
                 --results DIR)",
                file.display(),
                results.join(&stem).display()
            ),
        }
    }

    /// The latest result by the run's own time, a running sweep included;
    /// one dated in the future is passed over, as `bless` does.
    fn latest(results: &Path) -> Result<Target> {
        let finished = bless::latest_result(results).ok().map(|l| l.path);
        let finished_time = finished
            .as_ref()
            .and_then(|p| crate::fsio::read_json::<RunIdOnly>(p).ok())
            .and_then(|r| bless::run_time(&r.run_id));
        let now = chrono::Utc::now() + chrono::TimeDelta::minutes(5);
        let mut running: Option<(chrono::DateTime<chrono::Utc>, String)> = None;
        for entry in std::fs::read_dir(results).into_iter().flatten().flatten() {
            let dir = entry.path();
            let stem = entry.file_name().to_string_lossy().into_owned();
            if !dir.join("sweep.json").is_file() || dir.with_extension("json").is_file() {
                continue;
            }
            let Ok(manifest) = crate::fsio::read_json::<Manifest>(&dir.join("sweep.json")) else { continue };
            let Some(time) = bless::run_time(&manifest.run_id.0).filter(|t| *t <= now) else { continue };
            if running.as_ref().is_none_or(|(t, _)| time > *t) {
                running = Some((time, stem));
            }
        }
        match (finished, finished_time, running) {
            (_, f, Some((t, stem))) if f.is_none_or(|f| t > f) => Self::by_id(results, &stem),
            (Some(file), _, _) => Ok(Target::File(file)),
            _ => bail!(
                "no results in {} yet: run a sweep first (`vaultbench run --provider reference` needs no model), \
                 or name a result",
                results.display()
            ),
        }
    }

    fn load(&self, suite: &Path) -> Result<Loaded> {
        match self {
            Target::File(path) => {
                let result = crate::report::load_result(path)?;
                let transcripts = crate::report::evidence::transcripts_dir(path);
                Ok(Loaded { result, path: path.clone(), transcripts, progress: None })
            }
            Target::Sweep(store, manifest) => {
                // Finished meanwhile: the result file is the whole story.
                if store.result_path().is_file() {
                    return Target::File(store.result_path()).load(suite);
                }
                let (result, done) = partial_result(store, manifest, suite)?;
                let planned = manifest.tasks.len() * manifest.repeat as usize;
                Ok(Loaded {
                    result,
                    path: store.result_path(),
                    transcripts: store.dir(),
                    progress: Some((done, planned)),
                })
            }
        }
    }

    /// What changes when the result does: its file, or its finished cells.
    fn fingerprint(&self) -> u64 {
        let mut d = crate::publish::digest::Digest::default();
        let mut note = |path: &Path| {
            if let Ok(meta) = std::fs::metadata(path) {
                d.text(&path.display().to_string());
                d.number(meta.len());
                let time = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                d.number(time.map_or(0, |t| t.as_nanos() as u64));
            }
        };
        match self {
            Target::File(path) => note(path),
            Target::Sweep(store, _) => {
                note(&store.result_path());
                note(&store.dir().join("cells"));
                note(&store.dir());
            }
        }
        d.finish()
    }
}

#[derive(serde::Deserialize)]
struct RunIdOnly {
    run_id: String,
}

/// The result a running sweep would write if it stopped now: its finished
/// cells, tasks in run order, each task's tier and category from the suite.
fn partial_result(store: &Store, manifest: &Manifest, suite: &Path) -> Result<(ResultFile, usize)> {
    let catalog = crate::suite::Suite::load_catalog(suite).ok();
    let task = |id: &str| catalog.as_ref().and_then(|s| s.tasks.iter().find(|t| t.id == id));
    let mut done = 0;
    let mut tasks = Vec::new();
    for id in &manifest.tasks {
        let mut runs = Vec::new();
        for n in 1..=manifest.repeat {
            if let Some(record) = store.load_cell(id, n)? {
                runs.push(record);
            }
        }
        if runs.is_empty() {
            continue;
        }
        done += runs.len();
        let (difficulty, category) = task(id).map_or((None, None), |t| (Some(t.difficulty), Some(t.category.clone())));
        tasks.push(TaskResult {
            content_hash: manifest.content_hashes.get(id).cloned(),
            fixture_hash: manifest.fixture_hashes.get(id).cloned(),
            ..aggregate::task_result(id.clone(), difficulty, category, runs)
        });
    }
    let result = ResultFile {
        run_id: manifest.run_id.clone(),
        git_sha: manifest.git_sha.clone(),
        model: manifest.model.clone(),
        provider: manifest.provider.clone(),
        interrupted: true,
        offline_judge: manifest.offline_judge,
        shard_run_ids: Vec::new(),
        shard: manifest.shard.clone(),
        task_filter: manifest.task_filter.clone(),
        aggregate: aggregate::aggregate(&tasks),
        tasks,
    };
    Ok((result, done))
}

/// The site for the target as it is now.
fn site(options: &ViewOptions, target: &Target) -> Result<Site> {
    let loaded = target.load(&options.suite)?;
    let run_key = crate::report::evidence::run_key(&loaded.result.run_id.0).unwrap_or_else(|| "result".into());
    let baseline_file =
        options.baselines.join(bless::baseline_file_name(&loaded.result.provider, &loaded.result.model));
    let blessed = match baseline_file.is_file() {
        true => Some(crate::report::load_result(&baseline_file)?),
        false => None,
    };
    let same_run = blessed.as_ref().is_some_and(|b| b.run_id == loaded.result.run_id);
    let live = options.out.is_none();
    let home = home_page(&loaded, blessed.as_ref().filter(|_| !same_run), &baseline_file, &run_key, live);
    let title = format!("{} ({}) · run {}", loaded.result.model, loaded.result.provider, loaded.result.run_id);
    // The two rows are of one model: each name says which is which, on
    // every page (the table, the comparison's title and choices).
    let labelled = |result: ResultFile, what: &str| {
        let mut headline = Headline::from(result);
        headline.model = headline.model.map(|m| format!("{m} ({what})"));
        headline
    };
    let mut shown = vec![(
        Baseline {
            path: loaded.path.clone(),
            stem: format!("run-{run_key}"),
            digest: target.fingerprint(),
            headline: labelled(loaded.result, "this run"),
        },
        transcripts::load_dir(&loaded.transcripts).map_err(|e| format!("{e:#}")),
    )];
    if let (Some(blessed), false) = (blessed, same_run) {
        let digest = crate::publish::digest::of_bytes(baseline_file.display().to_string().as_bytes());
        let baseline = Baseline {
            path: baseline_file.clone(),
            stem: format!("blessed-{}", baseline_file.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default()),
            digest,
            headline: labelled(blessed, "baseline"),
        };
        let evidence = match baselines::evidence_archive(&options.baselines, &baseline) {
            Some(Ok(archive)) => transcripts::load(&archive).map_err(|e| format!("{e:#}")),
            Some(Err(why)) => Err(why),
            None => Ok(Transcripts::default()),
        };
        shown.push((baseline, evidence));
    }
    let publish = PublishOptions {
        docs: PathBuf::from("(view)"),
        baselines: options.baselines.clone(),
        suite: options.suite.clone(),
        out: options.out.clone().unwrap_or_default(),
        templates: options.templates.clone(),
        config: PathBuf::new(),
        strict: false,
        require_baselines: false,
    };
    Site::for_view(publish, title, home, shown)
}

/// The home page: what is shown, whether the sweep is still running, and
/// how the tasks moved since the baseline, in words, with links.
fn home_page(loaded: &Loaded, blessed: Option<&ResultFile>, baseline_file: &Path, run_key: &str, live: bool) -> String {
    let r = &loaded.result;
    let md = |s: &str| s.replace(['[', ']', '<', '>', '`', '*', '_', '#', '|'], " ");
    let mut page = format!("# Run {}\n\n", md(&r.run_id.0));
    page.push_str(&format!(
        "`{}` on `{}`: {} task{}, k = {}, solve^k {:.1}%, pass^k {:.1}%. File: `{}`.\n\n",
        md(&r.model),
        md(&r.provider),
        r.aggregate.total_tasks,
        if r.aggregate.total_tasks == 1 { "" } else { "s" },
        r.aggregate.n_runs,
        r.aggregate.solve_k_rate,
        r.aggregate.pass_k_rate,
        md(&loaded.path.display().to_string()),
    ));
    if let Some((done, planned)) = loaded.progress {
        page.push_str(&if live {
            format!(
                "> [!NOTE]\n> The sweep is still running: {done} of {planned} runs have finished. This page \
                 refreshes as more finish.\n\n"
            )
        } else {
            format!(
                "> [!NOTE]\n> The sweep was still running when these pages were written: {done} of {planned} runs \
                 had finished. Run `vaultbench view` again for the rest.\n\n"
            )
        });
    } else if r.interrupted {
        page.push_str("> [!WARNING]\n> This sweep was interrupted: some runs are missing.\n\n");
    }
    if r.offline_judge {
        page.push_str(
            "> [!IMPORTANT]\n> Its judge verdicts come from the offline reference judge, a self-check of the \
             harness: this result measures the pipeline, not a model, and cannot be blessed.\n\n",
        );
    }
    page.push_str(&format!(
        "- [This run](baselines/run-{run_key}.html): its figures, every task with its runs, checks and transcripts, \
         and the failure breakdown.\n"
    ));
    match blessed {
        Some(b) => {
            let drift = drift::task_drift(b, r);
            page.push_str(&format!(
                "- [The baseline](results.html) it would replace, `{}`, is the other row of the results; [compare \
                 the two](compare.html), task by task, with the paired test.\n\n",
                md(&baseline_file.display().to_string())
            ));
            page.push_str("## Tasks since the baseline\n\n");
            for line in drift.to_string().lines() {
                page.push_str(&format!("{}\n\n", md(line)));
            }
        }
        None => {
            let next = if r.offline_judge || r.provider == "reference" {
                "a sweep of a real model can be blessed as the first"
            } else if loaded.progress.is_some() {
                "once the sweep has finished, `vaultbench bless` can make it the first"
            } else if r.interrupted {
                "an interrupted sweep is not blessed (finish it with `vaultbench run --resume`, or bless with `--force`)"
            } else {
                "`vaultbench bless` would make this run the first"
            };
            page.push_str(&format!(
                "- No baseline for this provider and model yet (`{}`): {next}.\n",
                md(&baseline_file.display().to_string())
            ))
        }
    }
    page
}

/// Export the pages to `options.out`.
pub fn export(options: &ViewOptions) -> Result<BuildReport> {
    let out_dir = options.out.clone().context("export needs --out")?;
    let start = Instant::now();
    let target = Target::find(options.result.as_deref(), &options.results)?;
    let out = OutputDir::claim(&out_dir, &[&options.results, &options.baselines, &options.suite, &options.templates])?;
    let mut site = site(options, &target)?;
    let (built, written) = site.build_into(&out, None, false)?;
    let publish = PublishOptions { out: out_dir, ..PublishOptions::default() };
    Ok(built.report(&publish, written, start.elapsed()))
}

/// Serve the pages on 127.0.0.1, rebuilding them when the result changes,
/// until Ctrl-C or SIGTERM.
pub fn serve(options: &ViewOptions, notify: &mut dyn FnMut(Notice)) -> Result<Stopped> {
    let target = Target::find(options.result.as_deref(), &options.results)?;
    let folder =
        tempfile::Builder::new().prefix("vaultbench-view-").tempdir().context("making a folder for the pages")?;
    let out = OutputDir::claim(&folder.path().join("site"), &[])?;
    let owner = out.own()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the server's runtime")?;
    let state = ServerState::new("/".into());
    let mut stamps = Stamps::default();
    let mut build = |state: &ServerState, n: u64, notify: &mut dyn FnMut(Notice)| {
        let start = Instant::now();
        let outcome = site(options, &target).and_then(|mut site| {
            std::mem::swap(site.stamps_mut(), &mut stamps);
            let built = site.build_into(&out, Some(&owner), false);
            std::mem::swap(site.stamps_mut(), &mut stamps);
            let (built, written) = built?;
            let publish = PublishOptions { out: out.root().to_path_buf(), ..PublishOptions::default() };
            Ok(built.report(&publish, written, start.elapsed()))
        });
        match outcome {
            Ok(report) => {
                *state.error.write().expect("error lock") = None;
                notify(Notice::Built(report));
            }
            Err(e) => {
                let text = format!("{e:#}");
                *state.error.write().expect("error lock") = Some(text.clone());
                notify(Notice::Failed(text));
            }
        }
        state.reload(n);
    };
    build(&state, 1, notify);
    let server = serve::Server::start(&runtime, options.port, out.root().to_path_buf(), Arc::clone(&state))?;
    let addr = server.addr;
    let (signal_tx, signal_rx) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let _ = signal_tx.send(crate::publish::watch::wait_for_signal().await);
    });
    notify(Notice::Serving(format!("http://{addr}/")));
    let mut seen = target.fingerprint();
    let mut n = 1;
    let stopped = loop {
        match signal_rx.recv_timeout(options.poll) {
            Ok(stopped) => break stopped,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break Stopped::Interrupted,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = target.fingerprint();
        if now != seen {
            seen = now;
            n += 1;
            build(&state, n, notify);
        }
    };
    server.stop(&runtime, &state);
    runtime.shutdown_timeout(Duration::from_millis(200));
    drop(folder);
    Ok(stopped)
}
