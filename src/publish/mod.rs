//! `vaultbench publish`: the docs site. Markdown pages from `docs/` rendered
//! to static HTML in `site/`, with the results table, per-baseline pages, the
//! task matrix, the solve^k chart and the task catalog generated at build
//! time from `evals/baselines/*.json` and the suite's tasks; below each
//! baseline, a page per task with its runs and, from the evidence archive,
//! a page per run's transcript; compare pages for pairs of baselines; and,
//! from the git history of the baselines (`crate::history`), each model's
//! blessings on its page and a "What changed" page.
//!
//! A pipeline of plain stages, as Zola's `Site`: load (config, templates,
//! content, baselines, suite), render (markdown, templates), write. `--watch`
//! classifies each change and re-runs the same stages (`watch`, `serve`).
//!
//! What it owns: turning committed files into a site. It never changes a
//! baseline, a task or a page, and it does not score or aggregate anything
//! (`report` does); it shows the figures the baselines carry.

pub mod digest;
pub mod load;
pub mod model;
pub mod render;
mod serve;
pub mod site;
pub mod view;
pub mod watch;
pub mod write;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;

pub use site::{ChangeKind, Site};
pub use watch::{Notice, Stopped, WatchOptions};

/// Where `publish` reads and writes.
#[derive(Debug, Clone)]
pub struct PublishOptions {
    pub docs: PathBuf,
    pub baselines: PathBuf,
    /// The suite folder, holding `tasks/`.
    pub suite: PathBuf,
    pub out: PathBuf,
    /// Templates on disk that replace or add to the built-in ones.
    pub templates: PathBuf,
    /// The configuration file (may be absent).
    pub config: PathBuf,
    /// Warnings fail the build.
    pub strict: bool,
    /// The baselines folder was named by the user, so its absence is an
    /// error (a typo would otherwise publish an empty table); the default
    /// folder may be absent in a project without baselines yet.
    pub require_baselines: bool,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions {
            docs: "docs".into(),
            baselines: "evals/baselines".into(),
            suite: "evals".into(),
            out: "site".into(),
            templates: "templates".into(),
            config: load::config::DEFAULT_FILE.into(),
            strict: false,
            require_baselines: false,
        }
    }
}

impl PublishOptions {
    /// The output folder, resolved and checked against every folder the
    /// site is read from (see `write`).
    pub fn output_dir(&self) -> Result<write::OutputDir> {
        write::OutputDir::claim(&self.out, &[&self.docs, &self.templates, &self.baselines, &self.suite])
    }
}

/// A problem that does not stop the build (unless `--strict`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl Warning {
    pub fn new(file: &Path, message: String) -> Warning {
        Warning { file: file.to_path_buf(), line: None, message }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// What a build did.
#[derive(Debug, Clone)]
pub struct BuildReport {
    pub out: PathBuf,
    pub pages: usize,
    pub generated: usize,
    pub assets: usize,
    pub baselines: usize,
    pub written: write::WriteStats,
    pub warnings: Vec<Warning>,
    pub elapsed: Duration,
}

impl fmt::Display for BuildReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Built {}: {} pages, {} generated pages from {} baseline{}, {} static files ({} written, {} unchanged, {} removed) in {} ms",
            self.out.display(),
            self.pages,
            self.generated,
            self.baselines,
            if self.baselines == 1 { "" } else { "s" },
            self.assets,
            self.written.written,
            self.written.unchanged,
            self.written.removed,
            self.elapsed.as_millis()
        )?;
        if !self.warnings.is_empty() {
            write!(f, ", {} warning{}", self.warnings.len(), if self.warnings.len() == 1 { "" } else { "s" })?;
        }
        Ok(())
    }
}

/// Build the site once. With `strict`, any warning is an error and nothing
/// is written.
pub fn build(options: &PublishOptions) -> Result<BuildReport> {
    let (report, site, built) = build_keeping(options)?;
    drop((site, built));
    Ok(report)
}

/// [`build`] for a process that exits next (the `publish` command): the
/// site's data is left to the exit to reclaim, not freed piece by piece
/// (thousands of strings; a few milliseconds of a build).
pub fn build_and_exit(options: &PublishOptions) -> Result<BuildReport> {
    let (report, site, built) = build_keeping(options)?;
    std::mem::forget((site, built));
    Ok(report)
}

/// A build, with the site and its output handed back beside the report.
fn build_keeping(options: &PublishOptions) -> Result<(BuildReport, Site, site::Built)> {
    let start = Instant::now();
    // Before anything is read: a refused --out is told at once.
    let out = options.output_dir()?;
    let mut site = Site::load(options.clone())?;
    site.once();
    let (built, written) = site.build_into(&out, None, options.strict)?;
    let report = built.report(options, written, start.elapsed());
    Ok((report, site, built))
}

/// The error text of a `--strict` build with warnings.
pub fn strict_failure(warnings: &[Warning]) -> String {
    let mut text = format!(
        "{} warning{} with --strict (nothing was written):",
        warnings.len(),
        if warnings.len() == 1 { "" } else { "s" }
    );
    for w in warnings {
        text.push_str(&format!("\n  {w}"));
    }
    text
}
