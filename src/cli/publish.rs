//! The command-line arguments of `vaultbench publish` and `vaultbench view`,
//! turned into the library's plain options (`PublishOptions`,
//! `WatchOptions`, `ViewOptions`).

use std::path::PathBuf;

use vaultbench::publish::view::ViewOptions;
use vaultbench::publish::{PublishOptions, WatchOptions};

/// Build the docs site: the Markdown pages of --docs as HTML in --out, with
/// the results table, a page per baseline, the task matrix, the solve^k
/// chart and the task catalog generated from --baselines and --suite.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Templates: the Tera templates and stylesheet are built into the binary, so publish works \
    from any folder; files in --templates (default: templates/) replace the built-in ones of the same name and add \
    new ones (e.g. partials a page can {% include %}).\n\n\
    A page places generated content with {{ results_table() }}, {{ results_chart() }}, {{ task_matrix() }} or \
    {{ task_catalog() }} on a line of its own; template syntax inside code and raw HTML is left as written.\n\n\
    Pages may use GitHub alerts (> [!NOTE], [!TIP], [!IMPORTANT], [!WARNING], [!CAUTION]) and VitePress \
    containers (::: info|tip|warning|danger|details [title] ... :::); an unknown container is a warning. Code \
    blocks are highlighted at build time and kept between builds in ~/.cache/vaultbench \
    (VAULTBENCH_CACHE_DIR; empty: no cache). Frontmatter: title, description, order, outline, editLink, lastUpdated, \
    layout: home (hero, features).\n\n\
    Configuration (optional, in --config): [site] title, description, url (sitemap.xml, Open Graph; its path is \
    the base path), base_path (serving under a sub-path), repository (commit links), edit_url (with {path}), \
    clean_urls, last_updated, lang.\n\n\
    The site links relatively, so it works from any server and opened from disk; it includes 404.html, a \
    search index (search-index.js) and, with url set, sitemap.xml.")]
pub struct PublishArgs {
    /// The Markdown pages.
    #[arg(long, value_name = "DIR", default_value = "docs")]
    pub docs: PathBuf,
    /// The blessed baselines shown in the results table [default:
    /// evals/baselines, which may be absent; a folder named here must exist].
    #[arg(long, value_name = "DIR")]
    pub baselines: Option<PathBuf>,
    /// The suite folder (holding tasks/) for the task catalog and for marking
    /// baselines whose tasks differ from the current suite.
    #[arg(long, value_name = "DIR", default_value = "evals")]
    pub suite: PathBuf,
    /// Where the site is written (replaced on every build).
    #[arg(long, value_name = "DIR", default_value = "site")]
    pub out: PathBuf,
    /// Templates on disk that override the built-in ones.
    #[arg(long, value_name = "DIR", default_value = "templates")]
    pub templates: PathBuf,
    /// The site configuration; absent means the defaults.
    #[arg(long, value_name = "FILE", default_value = "vaultbench.toml")]
    pub config: PathBuf,
    /// Serve the site on 127.0.0.1 and rebuild it, with live reload, on every
    /// change to the pages, templates, baselines, tasks or configuration.
    #[arg(long)]
    pub watch: bool,
    /// The preview server's port with --watch (0: a free port, printed).
    #[arg(long, default_value_t = 0, requires = "watch")]
    pub port: u16,
    /// Fail (exit 1, nothing written) on any warning: a malformed baseline,
    /// a broken internal link, an unknown container or code language, a Vue
    /// block that cannot be shown, a suite that does not load.
    #[arg(long)]
    pub strict: bool,
}

impl PublishArgs {
    pub fn options(&self) -> PublishOptions {
        PublishOptions {
            docs: self.docs.clone(),
            baselines: self.baselines.clone().unwrap_or_else(|| PublishOptions::default().baselines),
            require_baselines: self.baselines.is_some(),
            suite: self.suite.clone(),
            out: self.out.clone(),
            templates: self.templates.clone(),
            config: self.config.clone(),
            strict: self.strict,
        }
    }

    pub fn watch_options(&self) -> WatchOptions {
        WatchOptions { port: self.port, ..WatchOptions::default() }
    }
}

/// Look at one result before blessing it: the explorer's pages (its figures,
/// every task with its runs, each check in words, the response and the
/// transcript, the failure breakdown) and the comparison with the baseline of
/// the same provider and model, with the tasks added, removed and edited since
/// it. Served on 127.0.0.1 and refreshed as a running sweep finishes runs, or
/// exported with --out.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Examples:\n  vaultbench view                      # the latest result (or the sweep still running), served\n  \
    vaultbench view 2026-11-25T10:00:00.000Z --port 8080\n  vaultbench view evals/results/run.json --out review/   # \
    static pages to share"
)]
pub struct ViewArgs {
    /// A result file, a run id or a sweep's folder [default: the latest in --results, by its run's own time, a
    /// sweep still running included]
    #[arg(value_name = "RESULT")]
    pub result: Option<String>,
    /// Where sweeps write their results.
    #[arg(long, value_name = "DIR", default_value = "evals/results")]
    pub results: PathBuf,
    /// Where the baseline of the same provider and model is looked for.
    #[arg(long, value_name = "DIR", default_value = "evals/baselines")]
    pub baselines: PathBuf,
    /// The suite folder (holding tasks/ and checks/): task details and checks in words.
    #[arg(long, value_name = "DIR", default_value = "evals")]
    pub suite: PathBuf,
    /// Templates on disk that override the built-in ones.
    #[arg(long, value_name = "DIR", default_value = "templates")]
    pub templates: PathBuf,
    /// Write the pages into this folder (new, empty or made by vaultbench) instead of serving them.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The server's port (0: a free port, printed).
    #[arg(long, default_value_t = 0, conflicts_with = "out")]
    pub port: u16,
}

impl ViewArgs {
    pub fn options(&self) -> ViewOptions {
        ViewOptions {
            result: self.result.clone(),
            results: self.results.clone(),
            baselines: self.baselines.clone(),
            suite: self.suite.clone(),
            templates: self.templates.clone(),
            out: self.out.clone(),
            port: self.port,
            poll: std::time::Duration::from_millis(500),
        }
    }
}
