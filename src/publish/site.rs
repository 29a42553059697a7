//! The site pipeline. `Site::load` runs every loading stage; `Site::reload`
//! re-runs the one a change needs (`ChangeKind`, as in Zola); `Site::render`
//! turns what is loaded into output files; `Site::write` puts them on disk.
//! A one-off build and every `--watch` rebuild go through these same calls.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use rayon::prelude::*;
use serde::Serialize;
use tera::{Context, Value};

use crate::publish::digest::Digest;
use crate::publish::load::baselines::{self, Baseline};
use crate::publish::load::config::{self, SiteConfig};
use crate::publish::load::content::{self, Asset, Content, Outline, Page};
use crate::publish::load::dates::{self, Dates};
use crate::publish::model::baseline::BaselineView;
use crate::publish::model::compare::{self, PairPage};
use crate::publish::model::history::{self as history_model, CHANGES_PAGE, ChangesView, HistoryView, ModelSection};
use crate::publish::model::results::{self, SuiteView};
use crate::publish::model::runs::{RunView, TaskPage};
use crate::publish::model::transcripts::{self, TranscriptView, Transcripts};
use crate::publish::render::dialect;
use crate::publish::render::escape::escape_html;
use crate::publish::render::highlight;
use crate::publish::render::html::{self, OutlineLevels};
use crate::publish::render::include;
use crate::publish::render::links::{self, SiteIndex};
use crate::publish::render::markdown;
use crate::publish::render::search::{self, SearchIndex};
use crate::publish::render::templates::{self, StaticFile, Templates};
use crate::publish::render::url;
use crate::publish::render::vitepress;
use crate::publish::write::{self, Collision, Namespace, OutData, OutFile, OutputDir, Ownership, WriteStats};
use crate::publish::{BuildReport, PublishOptions, Warning};
use crate::suite::{Severity, Suite};

/// What a changed path means for the build (Zola's `ChangeKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// The configuration file: everything is reloaded.
    Config,
    /// A template: templates are parsed again.
    Templates,
    /// A Markdown page.
    Content,
    /// A file copied as is (docs assets, `templates/static/`).
    Static,
    /// A baseline file.
    Baselines,
    /// A task file of the suite.
    Tasks,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Config => "config",
            ChangeKind::Templates => "templates",
            ChangeKind::Content => "content",
            ChangeKind::Static => "static files",
            ChangeKind::Baselines => "baselines",
            ChangeKind::Tasks => "tasks",
        }
    }
}

/// Generated pages, by logical path.
pub const RESULTS_PAGE: &str = "results.html";
pub const MATRIX_PAGE: &str = "matrix.html";
pub const CATALOG_PAGE: &str = "tasks.html";
/// The page a static host serves for a missing address (GitHub Pages, Netlify...).
pub const NOT_FOUND_PAGE: &str = "404.html";
/// Written when `site.url` is configured.
pub const SITEMAP_FILE: &str = "sitemap.xml";

const RESULTS_DESCRIPTION: &str =
    "Every blessed baseline: pass^k and solve^k of each model on the suite, by difficulty tier, with its commit.";
const VIEW_RESULTS_DESCRIPTION: &str =
    "The run on view and the baseline it would replace: pass^k and solve^k on the suite, by difficulty tier.";
const MATRIX_DESCRIPTION: &str = "Solved runs out of k for every task of every blessed baseline, side by side.";
const COMPARE_DESCRIPTION: &str =
    "Two blessed baselines side by side: every task where they differ, with a paired test of the difference.";
const CHANGES_DESCRIPTION: &str = "The latest blessing of each model against the one before: the figures that moved, \
     judged as compare judges, and the tasks that drifted, linked to their runs.";
const CATALOG_DESCRIPTION: &str =
    "The tasks of the current suite: tier, category, the tools each expects or forbids, and its checks.";

/// Characters kept as they are in the path of an "edit this page" link.
const PATH_IN_URL: &AsciiSet = &NON_ALPHANUMERIC.remove(b'/').remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Everything loaded for a build.
pub struct Site {
    pub options: PublishOptions,
    config: SiteConfig,
    templates: Templates,
    content: Content,
    baselines: Vec<Baseline>,
    baseline_warnings: Vec<Warning>,
    /// The transcripts of each baseline's evidence archive, by stem, or why
    /// the archive could not be read.
    evidence: HashMap<String, Result<Transcripts, String>>,
    suite: SuiteView,
    suite_warnings: Vec<Warning>,
    /// "Last updated" dates of the docs pages.
    dates: Dates,
    /// Every blessing of every baseline, from git: read with the baselines
    /// and only then (a docs-only rebuild never reads git again).
    history: Arc<crate::history::History>,
    /// The task, transcript and pair pages of the last build, kept for the
    /// next one when rebuilding (`--watch`; see [`Site::keep_pages`]).
    kept: Mutex<Option<KeptPages>>,
    /// What the last write left in the output folder.
    stamps: write::Stamps,
    /// What the last build derived from each baseline (kept with the pages).
    derived: results::Derived,
    /// Built once and dropped ([`Site::once`]).
    once: bool,
}

/// Rendered pages by logical path, each with the digest of everything it
/// was rendered from: a page whose digest is unchanged is not rendered
/// again. Only the last build's pages are kept, so this holds at most one
/// site's worth of these pages.
type KeptPages = HashMap<String, KeptPage>;

struct KeptPage {
    /// What a build remembers of any page it may keep: the digests of its
    /// sources and data (`Site::page_digests`) and its search sections.
    page: write::PageRecord,
    html: Arc<String>,
}

/// The output of `render`.
pub struct Built {
    pub files: Vec<OutFile>,
    pub warnings: Vec<Warning>,
    pub pages: usize,
    pub generated: usize,
    pub assets: usize,
    pub baselines: usize,
}

impl Built {
    pub fn report(&self, options: &PublishOptions, written: WriteStats, elapsed: Duration) -> BuildReport {
        BuildReport {
            out: options.out.clone(),
            pages: self.pages,
            generated: self.generated,
            assets: self.assets,
            baselines: self.baselines,
            written,
            warnings: self.warnings.clone(),
            elapsed,
        }
    }
}

/// One entry of the sidebar, flattened for templates: a section (a folder
/// at the top level, or the root pages) opens, a group (a nested folder)
/// opens, a page, a group or section closes.
#[derive(Debug, Clone, Serialize)]
struct NavEntry {
    /// `section`, `end-section`, `group`, `end-group` or `page`.
    kind: &'static str,
    title: String,
    /// A page's logical path (`guide/x.html`).
    url: String,
    /// For a group: the pages under it, so a template can open the group
    /// holding the current page.
    pages: Vec<String>,
}

/// A baseline page's download of its evidence archive.
#[derive(Serialize)]
struct EvidenceLink {
    /// Relative to the baseline's page.
    href: String,
    kib: u64,
}

/// A link to a neighbouring page.
#[derive(Debug, Clone, Serialize)]
struct PageLink {
    title: String,
    /// Logical path, for the `url` filter.
    url: String,
}

/// What templates know of the page being rendered (`page.*`).
#[derive(Serialize, Default)]
struct PageInfo<'a> {
    title: &'a str,
    /// Logical path from the site root (`guide/x.html`), for the `url` filter
    /// and to mark the current page in the navigation.
    url: &'a str,
    /// The meta and Open Graph description.
    description: Option<&'a str>,
    /// The page's public address, when `site.url` is set.
    permalink: Option<String>,
    /// The docs file (`guide/x.md`), for docs pages.
    source: Option<&'a str>,
    edit_url: Option<String>,
    last_updated: Option<&'a str>,
    prev: Option<&'a PageLink>,
    next: Option<&'a PageLink>,
    /// The page's frontmatter.
    meta: Option<&'a serde_json::Map<String, serde_json::Value>>,
    /// `<style>` blocks of the page (VitePress pages carry them), for `<head>`.
    styles: &'a [String],
}

/// A docs page rendered to HTML, before its template.
struct RenderedPage<'a> {
    page: &'a Page,
    title: String,
    html: String,
    description: Option<String>,
    styles: Vec<String>,
    home: Option<HomeView>,
}

/// The VitePress home layout (`layout: home`): hero and feature cards.
#[derive(Debug, Clone, Default, Serialize)]
struct HomeView {
    name: Option<String>,
    text: Option<String>,
    tagline: Option<String>,
    actions: Vec<HomeLink>,
    features: Vec<HomeFeature>,
}

#[derive(Debug, Clone, Serialize)]
struct HomeLink {
    text: String,
    href: String,
    /// `brand` (the main action) or `alt`.
    theme: String,
}

#[derive(Debug, Clone, Serialize)]
struct HomeFeature {
    title: String,
    details: Option<String>,
    href: Option<String>,
}

/// What rendering one docs page gave.
struct PageDone<'a> {
    rendered: Result<RenderedPage<'a>, String>,
    warnings: Vec<Warning>,
    /// Links with an anchor to check once every page is rendered: (line, link, (page, anchor)).
    pending: Vec<(usize, String, (String, String))>,
    anchors: HashSet<String>,
}

/// One page ready for its template and the last pass.
struct Outgoing<'a> {
    /// Logical path (`guide/x.html`).
    url: String,
    template: &'static str,
    title: String,
    levels: OutlineLevels,
    /// Whether it goes into the search index and the sitemap.
    searched: bool,
    source: Source<'a>,
}

/// What a page's template context is made from.
enum Source<'a> {
    Docs(&'a RenderedPage<'a>),
    /// The results, matrix, catalog and compare pages: their data is global.
    Listing {
        description: &'static str,
    },
    Baseline {
        view: &'a BaselineView,
        description: String,
        evidence: Option<EvidenceLink>,
        history: Option<&'a ModelSection>,
    },
    Task {
        task: &'a TaskPage,
        description: String,
    },
    Transcript {
        task: &'a TaskPage,
        run: &'a RunView,
        transcript: &'a TranscriptView,
    },
    Pair(&'a PairPage),
    Changes(&'a ChangesView),
    NotFound,
}
impl Site {
    /// Run every loading stage.
    pub fn load(options: PublishOptions) -> Result<Site> {
        let config = config::load(&options.config)?;
        // The git history, the suite and the baselines with their evidence
        // load on their own threads while the pages and templates load here.
        std::thread::scope(|scope| {
            let dates =
                scope.spawn(|| if config.last_updated { dates::last_updated(&options.docs) } else { Dates::new() });
            // The suite hashes only the tasks a baseline recorded a hash for
            // (to tell which were edited since), known once the baselines are.
            let (recorded_tx, recorded_rx) = std::sync::mpsc::channel();
            let root = &options.suite;
            let suite = scope.spawn(move || load_suite(root, || recorded_rx.recv().unwrap_or_default()));
            let history = scope.spawn(|| load_history(&options.baselines));
            let data = scope.spawn(|| -> Result<_> {
                let recorded_tx = recorded_tx;
                if options.require_baselines && !options.baselines.is_dir() {
                    anyhow::bail!(
                        "the baselines folder {} does not exist (--baselines): check the name, or leave the option \
                         out for evals/baselines",
                        options.baselines.display()
                    );
                }
                let (baselines, warnings) = baselines::load_dir(&options.baselines)?;
                let _ = recorded_tx.send(hashed_tasks(&baselines));
                let evidence = load_evidence(&options.baselines, &baselines);
                Ok((baselines, warnings, evidence))
            });
            let content = content::load(&options.docs)?;
            // Code blocks highlight in the background while the rest loads.
            let bodies: Vec<String> = content.pages.iter().map(|p| p.body.clone()).collect();
            highlight::prepare(move || bodies.iter().flat_map(|text| markdown::fenced_blocks(text)).collect());
            let templates = templates::load(&options.templates)?;
            let (baselines, baseline_warnings, evidence) = data.join().expect("loading baselines does not panic")?;
            let (suite, suite_warnings) = suite.join().expect("loading the suite does not panic");
            let dates = dates.join().unwrap_or_default();
            let history = history.join().unwrap_or_default();
            Ok(Site {
                options: options.clone(),
                config: config.clone(),
                templates,
                content,
                baselines,
                baseline_warnings,
                evidence,
                suite,
                suite_warnings,
                dates,
                history: Arc::new(history),
                kept: Mutex::new(None),
                stamps: write::Stamps::default(),
                derived: results::Derived::default(),
                once: false,
            })
        })
    }

    /// The site of `vaultbench view`: no docs folder, but `home` as its home
    /// page (Markdown), and as its baselines the given ones with their
    /// transcripts (a result being looked at and the baseline it would
    /// replace); the suite and templates of `options`. Every later stage is
    /// the one a `publish` build runs.
    pub fn for_view(
        options: PublishOptions,
        title: String,
        home: String,
        baselines: Vec<(Baseline, Result<Transcripts, String>)>,
    ) -> Result<Site> {
        let config = SiteConfig { title, last_updated: false, view: true, ..SiteConfig::default() };
        let recorded = hashed_tasks(baselines.iter().map(|(b, _)| b));
        let (suite, suite_warnings) = load_suite(&options.suite, || recorded);
        let templates = templates::load(&options.templates)?;
        let home_file = options.docs.join("index.md");
        let mut content = Content::default();
        content.pages.push(content::page_from_text(&home_file, "index.md".into(), &home)?);
        let mut evidence = HashMap::new();
        let mut kept = Vec::new();
        for (baseline, transcripts) in baselines {
            evidence.insert(baseline.stem.clone(), transcripts);
            kept.push(baseline);
        }
        Ok(Site {
            options,
            config,
            templates,
            content,
            baselines: kept,
            baseline_warnings: Vec::new(),
            evidence,
            suite,
            suite_warnings,
            dates: Dates::new(),
            history: Arc::default(),
            kept: Mutex::new(None),
            stamps: write::Stamps::default(),
            derived: results::Derived::default(),
            once: true,
        })
    }

    /// Keep the task, transcript and pair pages of each build for the next:
    /// a rebuild renders only those whose data changed. For `--watch`; a
    /// one-off build renders every page and keeps none.
    pub fn keep_pages(&mut self) {
        *self.kept.get_mut().expect("kept pages lock") = Some(KeptPages::new());
        self.derived = results::Derived::keeping();
    }

    /// Re-run the loading stage for one kind of change.
    pub fn reload(&mut self, kind: ChangeKind) -> Result<()> {
        match kind {
            ChangeKind::Config => {
                let keep = self.kept.get_mut().expect("kept pages lock").is_some();
                *self = Site::load(self.options.clone())?;
                if keep {
                    self.keep_pages();
                }
            }
            ChangeKind::Templates => self.templates = templates::load(&self.options.templates)?,
            ChangeKind::Content => self.content = content::load(&self.options.docs)?,
            ChangeKind::Static => {
                self.content = content::load(&self.options.docs)?;
                (self.templates.static_files, self.templates.warnings) =
                    templates::load_static(&self.options.templates)?;
            }
            ChangeKind::Baselines => {
                (self.baselines, self.baseline_warnings) =
                    baselines::load_dir_reusing(&self.options.baselines, &self.baselines)?;
                self.evidence = load_evidence_reusing(&self.options.baselines, &self.baselines, &self.evidence);
                self.history = Arc::new(load_history(&self.options.baselines));
                // A baseline that records a hash the suite was not asked for.
                let recorded = hashed_tasks(&self.baselines);
                let hashed: HashSet<&str> =
                    self.suite.tasks.iter().filter(|t| t.content_hash.is_some()).map(|t| t.id.as_str()).collect();
                if recorded.iter().any(|id| !hashed.contains(id.as_str())) {
                    (self.suite, self.suite_warnings) = load_suite(&self.options.suite, || recorded);
                }
            }
            ChangeKind::Tasks => {
                let recorded = hashed_tasks(&self.baselines);
                (self.suite, self.suite_warnings) = load_suite(&self.options.suite, || recorded);
            }
        }
        Ok(())
    }

    /// The history of the baselines as last loaded.
    pub fn history(&self) -> &Arc<crate::history::History> {
        &self.history
    }

    /// This site is built once and then dropped (a one-off build): what a
    /// page no longer needs once the pages' data is made is released as the
    /// build goes, so that memory holds one copy of the baselines' runs.
    pub fn once(&mut self) {
        self.once = true;
    }

    /// What the last write left in the output folder: handed from one site
    /// to the next by a caller that loads a new one for each build (`view`).
    pub fn stamps_mut(&mut self) -> &mut write::Stamps {
        &mut self.stamps
    }

    /// Render every page and write it as it is made: the site is never held
    /// in memory whole. With `strict`, a warning stops the build before
    /// anything is written. `owner` is the caller's hold on the folder, if it
    /// serves it (`--watch`).
    pub fn build_into(
        &mut self,
        out: &OutputDir,
        owner: Option<&Ownership>,
        strict: bool,
    ) -> Result<(Built, WriteStats)> {
        let mut stamps = std::mem::take(&mut self.stamps);
        let mut sink = Writer { out, owner, strict, stamps: &stamps, writing: None };
        let built = self.render_into(&mut sink);
        let writing = sink.writing.take();
        drop(sink);
        let result = built.and_then(|built| {
            let writing = writing.context("the build wrote nothing")?;
            Ok((built, writing.finish(&mut stamps)?))
        });
        self.stamps = stamps;
        crate::publish::render::highlight::save_cache();
        result
    }

    /// Render every page, in named stages: the results data, the list of
    /// generated pages (the one list of them), the claim of every output
    /// path, the docs pages, the navigation, every page through its
    /// template with the search index and sitemap, and the files copied as
    /// they are. Errors (a template or page that cannot be rendered) are all
    /// collected and returned together.
    pub fn render(&mut self) -> Result<Built> {
        let mut files = Vec::new();
        let summary = self.render_into(&mut Collect(&mut files))?;
        Ok(Built { files, ..summary })
    }

    /// [`Site::render`], handing the files to `sink` as they are made: every
    /// path and the warnings first, then the pages in parts of
    /// [`PAGES_AT_ONCE`], so that a build never holds the whole site in
    /// memory. What it returns holds no files.
    pub fn render_into(&mut self, sink: &mut dyn Sink) -> Result<Built> {
        let mut warnings = self.load_warnings();
        let mut results = results::view(&self.baselines, &self.suite, &self.config, &self.evidence, &mut self.derived);
        // From the history's own reading of each version, not the baselines'
        // runs (which a one-off build releases next): the pages' views only.
        let history = history_model::view(&self.history, &results.pages, &mut results.rows, &self.config);
        if self.once {
            // The runs' evidence is in the run pages' data now; a site built
            // once needs no second copy of it.
            for b in &mut self.baselines {
                b.headline.tasks.iter_mut().for_each(|t| t.runs = None);
            }
        }
        let clean = self.config.clean_urls;
        // Where the site title in the header leads.
        let home_url = if self.content.pages.iter().any(|p| p.rel == "index.md") { "index.html" } else { RESULTS_PAGE };
        self.begin_templates(&results, home_url);
        let (generated, generated_files) = self.generated_pages(&results, &history);
        let claimed = claim_outputs(
            &self.content,
            &self.templates.static_files,
            clean,
            &generated,
            &generated_files,
            &mut warnings,
        );
        let index = self.site_index(&generated);
        let rendered = self.render_docs(&claimed.pages, &index, &mut warnings)?;
        let (nav, order) = navigation(&rendered, &self.config.title, self.config.view);
        self.templates.tera.global_context().insert("nav", &nav);
        let generated_count = generated.len() - 1; // the 404 page is not counted
        let outgoing: Vec<Outgoing> = docs_pages(&rendered).chain(generated).collect();
        let mut copied = Vec::new();
        let assets = copied_files(&claimed, &mut copied);
        let mut rels: Vec<String> = outgoing.iter().map(|page| page_rel(&page.url, clean)).collect();
        rels.push(search::INDEX_FILE.into());
        if self.config.url.is_some() {
            rels.push(SITEMAP_FILE.into());
        }
        rels.extend(generated_files.iter().chain(&copied).map(|f| f.rel.clone()));
        sink.begin(rels, &warnings)?;
        sink.write(generated_files)?;
        let shared = || self.shared_digest(&results, &nav, home_url);
        self.render_outgoing(&outgoing, &order, shared, sink)?;
        sink.write(copied)?;
        Ok(Built {
            files: Vec::new(),
            warnings,
            pages: rendered.len(),
            generated: generated_count,
            assets,
            baselines: self.baselines.len(),
        })
    }

    /// What loading found wrong, in the order of the inputs.
    fn load_warnings(&self) -> Vec<Warning> {
        let mut warnings = Vec::new();
        warnings.extend(self.baseline_warnings.iter().cloned());
        warnings.extend(self.content.warnings.iter().cloned());
        warnings.extend(self.templates.warnings.iter().cloned());
        warnings.extend(self.suite_warnings.iter().cloned());
        // An evidence archive refused (a cap, a broken file) is said on the
        // baseline's page and here, so that a build in CI says it too.
        for b in &self.baselines {
            if let Some(Err(why)) = self.evidence.get(&b.stem) {
                warnings.push(Warning::new(&b.path, format!("its runs are shown without transcripts: {why}")));
            }
        }
        warnings
    }

    /// The data every template sees; the generated fragments render from it
    /// on demand.
    fn begin_templates(&mut self, results: &results::ResultsView, home_url: &str) {
        let global = self.templates.tera.global_context();
        global.insert("site", &self.config);
        global.insert("results", results);
        global.insert("suite", &self.suite);
        global.insert("clean_urls", &self.config.clean_urls);
        global.insert("home_url", home_url);
        self.templates.fragments.begin_build(self.templates.tera.clone());
    }

    /// Every generated page, in the order of the site (the listings, each
    /// baseline with its task and transcript pages, the comparisons, the 404
    /// page), and the files they bring: each baseline's evidence archive,
    /// offered for download. Task pages are searched by their titles only
    /// (their templates mark the rest `data-search-skip`); transcripts, pairs
    /// and the 404 page not at all.
    fn generated_pages<'r>(
        &self,
        results: &'r results::ResultsView,
        history: &'r HistoryView,
    ) -> (Vec<Outgoing<'r>>, Vec<OutFile>) {
        let clean = self.config.clean_urls;
        let mut pages = Vec::new();
        let mut files = Vec::new();
        for (url, template, title, description) in [
            (RESULTS_PAGE, "results.html", "Results", RESULTS_DESCRIPTION),
            (MATRIX_PAGE, "matrix.html", "Task matrix", MATRIX_DESCRIPTION),
            (CATALOG_PAGE, "catalog.html", "Task catalog", CATALOG_DESCRIPTION),
            (compare::INDEX_PAGE, "compare.html", "Compare two models", COMPARE_DESCRIPTION),
        ] {
            let description = match (self.config.view, url) {
                (true, RESULTS_PAGE) => VIEW_RESULTS_DESCRIPTION,
                _ => description,
            };
            pages.push(Outgoing {
                url: url.into(),
                template,
                title: title.into(),
                levels: OutlineLevels::default(),
                searched: true,
                source: Source::Listing { description },
            });
        }
        // The history of blessings is the published site's; a view has none.
        if !self.config.view {
            pages.push(Outgoing {
                url: CHANGES_PAGE.into(),
                template: "changes.html",
                title: "What changed".into(),
                levels: OutlineLevels::default(),
                searched: true,
                source: Source::Changes(&history.changes),
            });
        }
        for view in &results.pages {
            let title = format!("{} ({})", view.row.model, view.row.provider);
            let description = format!(
                "{} on {}: solve^k {}, pass^k {} over {} tasks, k = {}.",
                view.row.model, view.row.provider, view.row.solve_k, view.row.pass_k, view.row.tasks, view.row.k
            );
            let url = view.row.page.as_str();
            let archive = self
                .baselines
                .iter()
                .find(|b| b.path == view.path)
                .and_then(|b| baselines::evidence_archive(&self.options.baselines, b)?.ok());
            let mut evidence = None;
            if let Some((archive, meta)) = archive.and_then(|a| std::fs::metadata(&a).ok().map(|m| (a, m))) {
                let rel = format!("{}.evidence.tar.gz", url.strip_suffix(".html").unwrap_or(url));
                let href = url::href(&url::relative_from(&url::output_path(url, clean), &rel));
                evidence = Some(EvidenceLink { href, kib: meta.len().div_ceil(1024) });
                files.push(OutFile { rel, data: OutData::Copy(archive) });
            }
            pages.push(Outgoing {
                url: url.into(),
                template: "baseline.html",
                title,
                levels: OutlineLevels::default(),
                searched: true,
                source: Source::Baseline {
                    view,
                    description,
                    evidence,
                    history: history.sections.get(url.trim_start_matches("baselines/").trim_end_matches(".html")),
                },
            });
        }
        for task in &results.task_pages {
            let title = format!("{} · {} ({})", task.id, task.model, task.provider);
            let description = format!(
                "{} runs of task {} by {} on {}: how each ended, every check, the response.",
                task.runs.len(),
                task.id,
                task.model,
                task.provider
            );
            pages.push(Outgoing {
                url: task.url.clone(),
                template: "task.html",
                title,
                levels: OutlineLevels { min: 7, max: 7 },
                searched: true,
                source: Source::Task { task, description },
            });
            for (url, transcript) in &task.transcripts {
                let Some(run) = task.runs.iter().find(|r| r.transcript.as_deref() == Some(url.as_str())) else {
                    continue;
                };
                pages.push(Outgoing {
                    url: url.clone(),
                    template: "transcript.html",
                    title: format!("Transcript of {} run {} · {} ({})", task.id, run.n, task.model, task.provider),
                    levels: OutlineLevels { min: 7, max: 7 },
                    searched: false,
                    source: Source::Transcript { task, run, transcript },
                });
            }
        }
        for pair in &results.pairs {
            pages.push(Outgoing {
                url: pair.url.clone(),
                template: "pair.html",
                title: format!("{} vs {}", pair.a.model, pair.b.model),
                levels: OutlineLevels { min: 7, max: 7 },
                searched: false,
                source: Source::Pair(pair),
            });
        }
        pages.push(Outgoing {
            url: NOT_FOUND_PAGE.into(),
            template: "404.html",
            title: "Page not found".into(),
            levels: OutlineLevels::default(),
            searched: false,
            source: Source::NotFound,
        });
        (pages, files)
    }

    /// What exists on the site, for checking the links of docs pages.
    fn site_index(&self, generated: &[Outgoing]) -> SiteIndex {
        SiteIndex {
            pages: self.content.pages.iter().map(|p| p.rel.clone()).collect(),
            outputs: self
                .content
                .pages
                .iter()
                .map(|p| p.out.clone())
                .chain(generated.iter().map(|p| p.url.clone()))
                .chain(self.content.assets.iter().map(|a| a.rel.clone()))
                .chain(self.templates.static_files.iter().map(|f| f.rel().to_string()))
                .collect(),
            base_path: self.config.base_path.clone(),
            clean_urls: self.config.clean_urls,
        }
    }

    /// Markdown (after template expressions) to HTML with links resolved,
    /// in parallel since highlighting dominates; then each link to a heading
    /// is checked against the headings its page turned out to have.
    fn render_docs<'p>(
        &self,
        pages: &[&'p Page],
        index: &SiteIndex,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<RenderedPage<'p>>> {
        let mut errors: Vec<String> = Vec::new();
        let mut rendered: Vec<RenderedPage> = Vec::with_capacity(pages.len());
        let mut anchors: HashMap<&str, HashSet<String>> = HashMap::new();
        let mut pending: Vec<(&Page, usize, String, (String, String))> = Vec::new();
        let done_pages: Vec<PageDone> = pages.par_iter().map(|page| self.render_page(page, index)).collect();
        for (page, done) in pages.iter().copied().zip(done_pages) {
            warnings.extend(done.warnings);
            match done.rendered {
                Ok(r) => {
                    pending.extend(done.pending.into_iter().map(|(line, dest, anchor)| (page, line, dest, anchor)));
                    anchors.insert(page.rel.as_str(), done.anchors);
                    rendered.push(r);
                }
                Err(e) => errors.push(e),
            }
        }
        for (page, line, dest, (target, anchor)) in pending {
            if anchors.get(target.as_str()).is_some_and(|a| !a.contains(&anchor)) {
                warnings.push(Warning {
                    file: page.file.clone(),
                    line: Some(line),
                    message: format!("broken link `{dest}`: {target} has no heading with the id `{anchor}`"),
                });
            }
        }
        if !errors.is_empty() {
            return Err(anyhow!("{}", errors.join("\n\n")));
        }
        Ok(rendered)
    }

    /// Every page through its template and the last HTML pass, on every
    /// core, with the search index and the sitemap made from them. Each
    /// page's context is built on the thread that renders it: serializing
    /// the data into Tera's values is a good part of the work. A page kept
    /// from the last build (`--watch`) whose data did not change is shared,
    /// not rendered: its HTML goes to the next build's kept pages and to the
    /// writer as one `Arc`.
    fn render_outgoing(
        &self,
        outgoing: &[Outgoing],
        order: &[PageLink],
        shared: impl FnOnce() -> u64,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let clean = self.config.clean_urls;
        let mut search = SearchIndex::default();
        let mut sitemap = Vec::new();
        let kept = self.kept.lock().expect("kept pages lock").take();
        // The digests are needed to keep pages: in memory (`--watch`), or
        // on disk, as the last build left them (a one-off build).
        let shared = (kept.is_some() || sink.records_pages()).then(shared);
        let mut keep = kept.as_ref().map(|_| KeptPages::new());
        for part in outgoing.chunks(PAGES_AT_ONCE) {
            // What the last build left on disk, for a one-off build.
            let on_disk: Vec<Option<write::PageRecord>> = part
                .iter()
                .map(|page| if kept.is_none() { sink.kept(&page_rel(&page.url, clean)) } else { None })
                .collect();
            let finished_pages: Vec<_> = part
                .par_iter()
                .zip(&on_disk)
                .map(|(page, on_disk)| -> Result<(Made, _)> {
                    let before = kept.as_ref().and_then(|kept| kept.get(&page.url));
                    let hint = before.map(|b| &b.page).or(on_disk.as_ref()).map(|r| (r.source, r.digest));
                    let digests = shared.and_then(|shared| self.page_digests(page, shared, hint));
                    let same = |digest: u64| digests.is_some_and(|(_, data)| data == digest);
                    if let Some(same) = before.filter(|b| same(b.page.digest)) {
                        return Ok((Made::Html(Arc::clone(&same.html), Arc::clone(&same.page.sections)), digests));
                    }
                    if let Some(record) = on_disk.as_ref().filter(|r| same(r.digest)) {
                        return Ok((Made::Kept(record.clone()), digests));
                    }
                    let ctx = self.page_context(page, order);
                    let text = if page.searched { html::Text::Search } else { html::Text::Skip };
                    let finished = self.render_finished(page.template, &ctx, page.levels, text)?;
                    Ok((Made::Html(Arc::new(finished.html), finished.sections.into()), digests))
                })
                .collect();
            let mut files = Vec::with_capacity(part.len());
            for (page, finished) in part.iter().zip(finished_pages) {
                let (made, digests) = finished?;
                // (A page that is not searched has no sections.)
                let (data, sections) = match (made, digests) {
                    (Made::Kept(record), _) => {
                        let sections = Arc::clone(&record.sections);
                        (OutData::Kept(record), sections)
                    }
                    (Made::Html(html, sections), Some((source, digest))) => {
                        let record = write::PageRecord { source, digest, sections: Arc::clone(&sections) };
                        if let Some(keep) = &mut keep {
                            keep.insert(page.url.clone(), KeptPage { page: record.clone(), html: Arc::clone(&html) });
                        }
                        (OutData::Known { bytes: html, digest, page: Some(record) }, sections)
                    }
                    (Made::Html(html, sections), None) => {
                        (OutData::Bytes(Arc::unwrap_or_clone(html).into_bytes()), sections)
                    }
                };
                if page.searched {
                    search.add(&page.title, &url::from_root(&page.url, clean), sections);
                    sitemap.push(page.url.clone());
                }
                files.push(OutFile { rel: page_rel(&page.url, clean), data });
            }
            sink.write(files)?;
        }
        *self.kept.lock().expect("kept pages lock") = keep;
        let mut files =
            vec![OutFile { rel: search::INDEX_FILE.into(), data: OutData::Bytes(search.to_script().into_bytes()) }];
        if let Some(url) = &self.config.url {
            let dates: HashMap<String, &String> =
                self.content.pages.iter().filter_map(|p| Some((p.out.clone(), self.dates.get(&p.rel)?))).collect();
            let xml = sitemap_xml(url, &sitemap, clean, &dates);
            files.push(OutFile { rel: SITEMAP_FILE.into(), data: OutData::Bytes(xml.into_bytes()) });
        }
        sink.write(files)
    }

    /// A digest of what every page shares: the templates, the configuration,
    /// the suite, the navigation and, when a template outside the listing
    /// pages may read it, the results data.
    fn shared_digest(&self, results: &results::ResultsView, nav: &[NavEntry], home_url: &str) -> u64 {
        let mut d = Digest::default();
        d.number(self.templates.digest);
        d.value(&self.config);
        d.value(&self.suite);
        d.value(nav);
        d.text(home_url);
        if self.templates.others_read_results {
            d.value(results);
        }
        d.finish()
    }

    /// Digests of what a task, transcript or pair page is rendered from
    /// (with `shared`, what all pages share): a cheap one naming its sources
    /// (the task's digest: its baseline file, the suite, the evidence), and
    /// one of its data, computed only when the sources changed, since a
    /// baseline rewritten with another commit leaves most of its pages as
    /// they were. `None` for the other pages, which are few and always rendered.
    fn page_digests(&self, page: &Outgoing, shared: u64, before: Option<(u64, u64)>) -> Option<(u64, u64)> {
        let mut d = Digest::default();
        d.number(shared);
        d.text(&page.url);
        d.text(page.template);
        d.text(&page.title);
        d.number(u64::from(page.levels.min) << 8 | u64::from(page.levels.max));
        d.number(u64::from(page.searched));
        let mut data = Digest::default();
        data.number(d.finish());
        match &page.source {
            Source::Task { task, description } => {
                d.number(task.digest);
                if let Some(same) = before.filter(|(source, _)| *source == d.finish()) {
                    return Some(same);
                }
                data.value(task);
                data.text(description);
            }
            Source::Transcript { task, run, transcript } => {
                d.number(task.digest);
                d.number(run.n as u64);
                d.number(transcript.digest);
                if let Some(same) = before.filter(|(source, _)| *source == d.finish()) {
                    return Some(same);
                }
                data.value(&task.brief());
                data.value(run);
                data.number(transcript.digest);
            }
            // Small: its data is its source.
            Source::Pair(pair) => data.value(pair),
            _ => return None,
        }
        Some((d.finish(), data.finish()))
    }

    /// The template context of one outgoing page; `order` is the reading
    /// order, for the previous and next links of docs and listing pages.
    fn page_context(&self, page: &Outgoing, order: &[PageLink]) -> Context {
        let url = page.url.as_str();
        let neighbours = || -> (Option<&PageLink>, Option<&PageLink>) {
            match order.iter().position(|l| l.url == url) {
                Some(i) => (i.checked_sub(1).map(|p| &order[p]), order.get(i + 1)),
                None => (None, None),
            }
        };
        let info = PageInfo { title: &page.title, url, ..PageInfo::default() };
        match &page.source {
            Source::Docs(r) => {
                let docs = r.page;
                let (prev, next) = neighbours();
                let edit_url = self.config.edit_url.as_ref().filter(|_| docs.edit_link).map(|template| {
                    template.replace("{path}", &utf8_percent_encode(&docs.rel, PATH_IN_URL).to_string())
                });
                let last_updated = self.dates.get(&docs.rel).filter(|_| self.config.last_updated && docs.last_updated);
                let info = PageInfo {
                    description: r.description.as_deref().or(self.config.description.as_deref()),
                    permalink: self.permalink(url),
                    source: Some(&docs.rel),
                    edit_url,
                    last_updated: last_updated.map(String::as_str),
                    prev,
                    next,
                    meta: Some(&docs.meta),
                    styles: &r.styles,
                    ..info
                };
                let mut ctx = self.context(url, &info);
                ctx.insert_value("content", Value::safe_string(&r.html));
                ctx.insert("home", &r.home);
                ctx
            }
            Source::Listing { description } => {
                let (prev, next) = neighbours();
                let info =
                    PageInfo { description: Some(description), permalink: self.permalink(url), prev, next, ..info };
                self.context(url, &info)
            }
            Source::Baseline { view, description, evidence, history } => {
                let info = PageInfo { description: Some(description), permalink: self.permalink(url), ..info };
                let mut ctx = self.context(url, &info);
                ctx.insert("baseline", view);
                ctx.insert("evidence", evidence);
                ctx.insert("history", history);
                ctx
            }
            Source::Changes(changes) => {
                let (prev, next) = neighbours();
                let info = PageInfo {
                    description: Some(CHANGES_DESCRIPTION),
                    permalink: self.permalink(url),
                    prev,
                    next,
                    ..info
                };
                let mut ctx = self.context(url, &info);
                ctx.insert("changes", changes);
                ctx
            }
            Source::Task { task, description } => {
                let info = PageInfo { description: Some(description), permalink: self.permalink(url), ..info };
                let mut ctx = self.context(url, &info);
                ctx.insert("task", task);
                ctx
            }
            Source::Transcript { task, run, transcript } => {
                let mut ctx = self.context(url, &info);
                ctx.insert("task", &task.brief());
                ctx.insert("run", run);
                ctx.insert("transcript", transcript);
                ctx
            }
            Source::Pair(pair) => {
                let mut ctx = self.context(url, &info);
                ctx.insert("pair", pair);
                ctx
            }
            // The page a server shows for a missing address: it may be served
            // at any depth, so its links start from the base path, not relative.
            Source::NotFound => {
                let mut ctx = self.context(url, &info);
                ctx.insert("root", &self.config.base_path);
                ctx
            }
        }
    }

    /// The template context of the page at `url` (logical), with its `root`.
    fn context(&self, url: &str, info: &PageInfo) -> Context {
        let mut ctx = Context::new();
        ctx.insert("page", info);
        ctx.insert("root", &url::root_of(&url::output_path(url, self.config.clean_urls)));
        ctx
    }

    /// The public address of the page at `url`, when the site's is configured.
    fn permalink(&self, url: &str) -> Option<String> {
        let base = self.config.url.as_ref()?;
        Some(format!("{base}{}", url::from_root(url, self.config.clean_urls)))
    }

    /// One docs page to HTML: template expressions, VitePress constructs,
    /// Markdown with its links resolved. What it finds wrong is returned,
    /// not pushed, so that pages can render on several threads.
    fn render_page<'p>(&self, page: &'p Page, index: &SiteIndex) -> PageDone<'p> {
        let mut done = PageDone {
            rendered: Err(String::new()),
            warnings: Vec::new(),
            pending: Vec::new(),
            anchors: HashSet::new(),
        };
        let root = url::root_of(&url::output_path(&page.out, self.config.clean_urls));
        let mut folder: Option<include::DocsFolder> = None;
        let docs = &self.options.docs;
        let included = include::expand(&page.body, &page.rel, &mut |rel| {
            folder.get_or_insert_with(|| include::DocsFolder::new(docs)).read(rel)
        });
        done.warnings.extend(included.note_warnings(&page.file, docs));
        let checked = dialect::check(&included.text);
        done.warnings
            .extend(checked.warnings.iter().map(|(line, m)| included.warning(&page.file, docs, *line, m.clone())));
        let text = match self.expand(page, &checked.text, &root) {
            Ok(t) => t,
            Err(e) => {
                done.rendered = Err(e);
                return done;
            }
        };
        let prepared = vitepress::prepare(&text);
        let at_line = |line: usize, message: String| included.warning(&page.file, docs, line, message);
        done.warnings.extend(prepared.warnings.iter().map(|(line, m)| at_line(*line, m.clone())));
        let ptext = &prepared.text;
        let lines = markdown::LineIndex::new(ptext);
        let line_of = |offset: usize| lines.line(offset);
        let out = markdown::render(ptext, &prepared.containers, &mut |dest, offset| match links::resolve(
            &page.rel, dest, index,
        ) {
            Ok(resolved) => {
                if let Some(anchor) = resolved.anchor {
                    done.pending.push((line_of(offset), dest.to_string(), anchor));
                }
                resolved.rewritten
            }
            Err(why) => {
                done.warnings.push(at_line(line_of(offset), format!("broken link {why}")));
                None
            }
        });
        done.warnings.extend(out.warnings.iter().map(|(offset, m)| at_line(line_of(*offset), m.clone())));
        done.anchors = out.anchors;
        let title =
            page.title.clone().or(out.first_heading).unwrap_or_else(|| default_title(&page.rel, &self.config.title));
        let home = (page.layout.as_deref() == Some("home")).then(|| home_view(page, index, &mut done.warnings));
        let description = page.description.clone().or(out.summary);
        done.rendered = Ok(RenderedPage { page, title, html: out.html, description, styles: prepared.styles, home });
        done
    }

    /// A page's Markdown (`body`, its includes expanded) with its template
    /// expressions evaluated.
    fn expand(&self, page: &Page, body: &str, root: &str) -> Result<String, String> {
        if !markdown::has_template_syntax(body) {
            return Ok(body.to_string());
        }
        let shielded = markdown::shield_for_templates(body);
        let mut ctx = Context::new();
        ctx.insert(
            "page",
            &PageInfo { title: page.title.as_deref().unwrap_or(""), url: &page.out, ..PageInfo::default() },
        );
        ctx.insert("root", root);
        self.templates.tera.render_str(&shielded, &ctx, true).map_err(|e| {
            let file = page.file.display().to_string();
            let origin = |name: &str| if name == "__tera_one_off" { file.clone() } else { self.origin(name) };
            format!("{file}: template error in the page:\n{}", templates::describe_error(&e, &origin))
        })
    }

    /// A page from its template, with the last pass (`html::finish`) done.
    /// Each thread renders into one buffer that it keeps: grown once to the
    /// largest page, instead of a new string doubling its way up per page.
    fn render_finished(
        &self,
        name: &str,
        ctx: &Context,
        levels: OutlineLevels,
        text: html::Text,
    ) -> Result<html::Finished> {
        thread_local! {
            static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        BUFFER.with_borrow_mut(|buffer| {
            buffer.clear();
            self.templates.tera.render_to(name, ctx, &mut *buffer).map_err(|e| anyhow!("{}", self.describe(&e)))?;
            let html =
                std::str::from_utf8(buffer).map_err(|e| anyhow!("{name} rendered text that is not UTF-8: {e}"))?;
            Ok(html::finish(html, levels, text))
        })
    }

    fn describe(&self, e: &tera::Error) -> String {
        templates::describe_error(e, &|name| self.origin(name))
    }

    /// Where a template came from, for messages.
    fn origin(&self, name: &str) -> String {
        let on_disk = self.options.templates.join(name);
        if self.templates.from_disk.contains(&on_disk) {
            on_disk.display().to_string()
        } else {
            format!("{name} (built in)")
        }
    }
}

/// The transcripts of each baseline's evidence archive (found from its run
/// id, as `report::evidence` names it), read on several threads. An archive
/// that cannot be read is not a build warning (the baseline itself is fine):
/// its page says why, and its runs are shown without transcripts.
fn load_evidence(dir: &Path, baselines: &[Baseline]) -> HashMap<String, Result<Transcripts, String>> {
    load_evidence_reusing(dir, baselines, &HashMap::new())
}

/// [`load_evidence`], taking what an archive gave in `previous` (the last
/// load, by baseline stem) when the file is unchanged (same digest).
fn load_evidence_reusing(
    dir: &Path,
    baselines: &[Baseline],
    previous: &HashMap<String, Result<Transcripts, String>>,
) -> HashMap<String, Result<Transcripts, String>> {
    let found: Vec<(&Baseline, Result<std::path::PathBuf, String>)> =
        baselines.iter().filter_map(|b| Some((b, baselines::evidence_archive(dir, b)?))).collect();
    found
        .par_iter()
        .map(|(b, archive)| {
            let archive = match archive {
                Ok(archive) => archive,
                Err(why) => return (b.stem.clone(), Err(why.clone())),
            };
            if let Some(Ok(before)) = previous.get(&b.stem)
                && transcripts::file_digest(archive).ok() == Some(before.digest)
            {
                return (b.stem.clone(), Ok(before.clone()));
            }
            (b.stem.clone(), transcripts::load(archive).map_err(|e| format!("{e:#}")))
        })
        .collect()
}

/// Pages rendered, then written, at once: enough to keep every core busy,
/// few enough that a site of any size is never held in memory whole.
pub const PAGES_AT_ONCE: usize = 256;

/// Where a build's files go as they are made ([`Site::render_into`]).
pub trait Sink {
    /// Every path the build will write, and the warnings, before any file;
    /// an error here (a `--strict` build with warnings) stops the build
    /// before anything is written.
    fn begin(&mut self, rels: Vec<String>, warnings: &[Warning]) -> Result<()>;
    fn write(&mut self, files: Vec<OutFile>) -> Result<()>;
    /// Whether the sink keeps records of the pages for the next build
    /// ([`Sink::kept`]).
    fn records_pages(&self) -> bool {
        false
    }
    /// The record of the page at `rel` as the last build left it, if its
    /// file is still as that build wrote it.
    fn kept(&self, _rel: &str) -> Option<write::PageRecord> {
        None
    }
}

/// A page of [`Site::render_outgoing`]: rendered (or kept in memory), or
/// left on disk as the last build wrote it.
enum Made {
    Html(Arc<String>, Arc<[html::Section]>),
    Kept(write::PageRecord),
}

/// The sink of [`Site::build_into`]: the write stage.
struct Writer<'a, 's> {
    out: &'a OutputDir,
    owner: Option<&'a Ownership>,
    strict: bool,
    /// What the last write left (`--watch`).
    stamps: &'s write::Stamps,
    writing: Option<write::Writing<'a>>,
}

impl Sink for Writer<'_, '_> {
    fn begin(&mut self, rels: Vec<String>, warnings: &[Warning]) -> Result<()> {
        if self.strict && !warnings.is_empty() {
            bail!("{}", crate::publish::strict_failure(warnings));
        }
        self.writing = Some(self.out.begin(rels, self.owner)?);
        Ok(())
    }
    fn write(&mut self, files: Vec<OutFile>) -> Result<()> {
        self.writing.as_mut().context("files before the build began")?.write(&files, self.stamps)
    }
    fn records_pages(&self) -> bool {
        true
    }
    fn kept(&self, rel: &str) -> Option<write::PageRecord> {
        self.writing.as_ref()?.kept(rel).cloned()
    }
}

/// A sink that keeps every file ([`Site::render`]).
struct Collect<'a>(&'a mut Vec<OutFile>);

impl Sink for Collect<'_> {
    fn begin(&mut self, _rels: Vec<String>, _warnings: &[Warning]) -> Result<()> {
        Ok(())
    }
    fn write(&mut self, files: Vec<OutFile>) -> Result<()> {
        self.0.extend(files);
        Ok(())
    }
}

/// Where a page is written: its output path; the 404 page at the root,
/// where static hosts look for it, whatever the URL style.
fn page_rel(url: &str, clean: bool) -> String {
    if url == NOT_FOUND_PAGE { url.to_string() } else { url::output_path(url, clean) }
}

/// Claim every output path, once, in order of precedence: the generated
/// pages and files, then the docs pages, the docs assets, the template
/// folder's static files and the built-in ones. A later claim of a path
/// taken (case and Unicode normalization ignored) is left out with a
/// warning naming both sources; a built-in static file yields silently,
/// since replacing one is how a site changes its style. What is left to
/// publish: the docs pages, the docs assets and the static files.
fn claim_outputs<'a>(
    content: &'a Content,
    static_files: &'a [StaticFile],
    clean: bool,
    generated: &[Outgoing],
    generated_files: &[OutFile],
    warnings: &mut Vec<Warning>,
) -> Claimed<'a> {
    let mut names = Namespace::default();
    let mut collided = |file: &Path, c: Collision| {
        warnings.push(Warning::new(file, format!("{c}; it is left out (rename one of them)")))
    };
    let fixed = [
        (search::INDEX_FILE.to_string(), "the generated search index"),
        (SITEMAP_FILE.to_string(), "the generated sitemap"),
    ];
    for (rel, what) in fixed {
        let _ = names.claim(&rel, what);
    }
    for page in generated {
        let rel = if page.url == NOT_FOUND_PAGE { page.url.clone() } else { url::output_path(&page.url, clean) };
        let _ = names.claim(&rel, format!("the generated page {}", page.url));
    }
    for file in generated_files {
        let _ = names.claim(&file.rel, format!("the generated file {}", file.rel));
    }
    let pages = content
        .pages
        .iter()
        .filter(|page| {
            let claimed = names.claim(&url::output_path(&page.out, clean), page.file.display().to_string());
            claimed.map_err(|c| collided(&page.file, c)).is_ok()
        })
        .collect();
    let assets = content
        .assets
        .iter()
        .filter(|asset| {
            let claimed = names.claim(&asset.rel, asset.file.display().to_string());
            claimed.map_err(|c| collided(&asset.file, c)).is_ok()
        })
        .collect();
    let statics = static_files
        .iter()
        .filter(|file| match file {
            StaticFile::BuiltIn { .. } => !names.is_taken(file.rel()),
            StaticFile::Disk(a) => {
                let claimed = names.claim(file.rel(), a.file.display().to_string());
                claimed.map_err(|c| collided(&a.file, c)).is_ok()
            }
        })
        .collect();
    Claimed { pages, assets, statics }
}

/// What is left to publish of the sources after [`claim_outputs`].
struct Claimed<'a> {
    pages: Vec<&'a Page>,
    assets: Vec<&'a Asset>,
    statics: Vec<&'a StaticFile>,
}

/// The docs pages as pages to render through their templates.
fn docs_pages<'a>(rendered: &'a [RenderedPage<'a>]) -> impl Iterator<Item = Outgoing<'a>> + 'a {
    rendered.iter().map(|r| {
        let levels = match r.page.outline {
            Outline::Hidden => OutlineLevels { min: 7, max: 7 },
            Outline::Levels(min, max) => OutlineLevels { min, max },
        };
        let template = if r.home.is_some() { "home.html" } else { "page.html" };
        Outgoing {
            url: r.page.out.clone(),
            template,
            title: r.title.clone(),
            levels,
            searched: true,
            source: Source::Docs(r),
        }
    })
}

/// The docs assets and static files, copied (or written, built in) as they
/// are; how many.
fn copied_files(claimed: &Claimed, files: &mut Vec<OutFile>) -> usize {
    for asset in &claimed.assets {
        files.push(OutFile { rel: asset.rel.clone(), data: OutData::Copy(asset.file.clone()) });
    }
    for file in &claimed.statics {
        let data = match file {
            StaticFile::BuiltIn { text, .. } => OutData::Bytes(text.as_bytes().to_vec()),
            StaticFile::Disk(a) => OutData::Copy(a.file.clone()),
        };
        files.push(OutFile { rel: file.rel().to_string(), data });
    }
    claimed.assets.len() + claimed.statics.len()
}

/// The history of the baselines in `dir`, from git; none when the folder
/// does not exist (a project without baselines yet).
fn load_history(dir: &Path) -> crate::history::History {
    if dir.is_dir() { crate::history::load(dir) } else { crate::history::History::default() }
}

/// The tasks some baseline recorded a content hash for.
fn hashed_tasks<'a>(baselines: impl IntoIterator<Item = &'a Baseline>) -> HashSet<String> {
    baselines
        .into_iter()
        .flat_map(|b| &b.headline.tasks)
        .filter(|t| t.content_hash.is_some())
        .filter_map(|t| t.id.clone())
        .collect()
}

/// Load the suite for the catalog and the suite marks, with the content hash
/// of each task in `hashed` (asked for once the catalog is read: hashing
/// reads every fixture, which only a baseline that recorded hashes needs).
/// A suite that does not load is a warning (the site still builds), and the
/// catalog says so.
fn load_suite(root: &Path, hashed: impl FnOnce() -> HashSet<String>) -> (SuiteView, Vec<Warning>) {
    let tasks_dir = Suite::tasks_dir(root);
    let folder = tasks_dir.display().to_string();
    let has_tasks = std::fs::read_dir(&tasks_dir)
        .map(|entries| entries.filter_map(|e| e.ok()).any(|e| e.path().extension().is_some_and(|x| x == "json")))
        .unwrap_or(false);
    if !has_tasks {
        return (SuiteView::empty(folder), Vec::new());
    }
    match Suite::load_catalog(root) {
        Ok(suite) => {
            let mut view = SuiteView::from_tasks(folder, &suite.tasks);
            // How each check reads in words, from the task's check source.
            let mut explainers: HashMap<&str, crate::checks::explain::Explainer> =
                suite.tasks.par_iter().map(|t| (t.id.as_str(), crate::suite::compile::explainer(root, t))).collect();
            // What each task is now, to tell the baselines that ran an edited one.
            let hashed = hashed();
            let hashes =
                crate::suite::hash::content_hashes(root, suite.tasks.iter().filter(|t| hashed.contains(&t.id)));
            for task in &mut view.tasks {
                task.content_hash = hashes.get(task.id.as_str()).cloned();
                if let Some(explainer) = explainers.remove(task.id.as_str()) {
                    task.explainer = Arc::new(explainer);
                }
            }
            (view, Vec::new())
        }
        Err(errors) => {
            let problems: Vec<String> = errors
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| d.to_string().lines().next().unwrap_or_default().to_string())
                .collect();
            let warning = Warning::new(
                &tasks_dir,
                format!(
                    "the suite does not load ({} error{}; run `vaultbench suite check`): the task catalog and the suite marks are left out",
                    problems.len(),
                    if problems.len() == 1 { "" } else { "s" }
                ),
            );
            (SuiteView::invalid(folder, problems), vec![warning])
        }
    }
}

fn default_title(rel: &str, site_title: &str) -> String {
    if rel == "index.md" {
        return site_title.to_string();
    }
    let stem = rel.rsplit('/').next().unwrap_or(rel).trim_end_matches(".md");
    let stem = if stem == "index" { rel.split('/').rev().nth(1).unwrap_or(stem) } else { stem };
    capitalize(&stem.replace(['-', '_'], " "))
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The sidebar and the reading order (for previous/next links): the root
/// pages as the first section, then a section per top-level folder, with a
/// group per folder below it, then the generated pages. In a folder, its
/// `index.md` comes first, then pages by frontmatter `order`, then by title;
/// folders follow the `order` of their `index.md`, then their names.
fn navigation(rendered: &[RenderedPage], site_title: &str, view: bool) -> (Vec<NavEntry>, Vec<PageLink>) {
    #[derive(Default)]
    struct Folder<'a> {
        pages: Vec<&'a RenderedPage<'a>>,
        folders: BTreeMap<String, Folder<'a>>,
    }
    impl<'a> Folder<'a> {
        fn index(&self, path: &str) -> Option<&'a RenderedPage<'a>> {
            self.pages.iter().copied().find(|r| r.page.rel == format!("{path}index.md"))
        }
        fn all_pages(&self, into: &mut Vec<String>) {
            into.extend(self.pages.iter().map(|r| r.page.out.clone()));
            self.folders.values().for_each(|f| f.all_pages(into));
        }
    }
    let mut root = Folder::default();
    for r in rendered {
        let mut folder = &mut root;
        let mut parts: Vec<&str> = r.page.rel.split('/').collect();
        parts.pop();
        for part in parts {
            folder = folder.folders.entry(part.to_string()).or_default();
        }
        folder.pages.push(r);
    }

    fn sort_pages(pages: &mut [&RenderedPage], path: &str) {
        pages.sort_by(|a, b| {
            let key = |r: &RenderedPage| (r.page.rel != format!("{path}index.md"), r.page.order.unwrap_or(i64::MAX));
            key(a).cmp(&key(b)).then_with(|| a.title.to_lowercase().cmp(&b.title.to_lowercase()))
        });
    }
    fn folder_title(folder: &Folder, path: &str, name: &str) -> String {
        folder.index(path).map(|r| r.title.clone()).unwrap_or_else(|| capitalize(&name.replace(['-', '_'], " ")))
    }
    fn sorted_folders<'f, 'a>(folder: &'f Folder<'a>, path: &str) -> Vec<(&'f String, &'f Folder<'a>)> {
        let mut folders: Vec<_> = folder.folders.iter().collect();
        folders.sort_by_key(|(name, f)| {
            let order = f.index(&format!("{path}{name}/")).and_then(|r| r.page.order).unwrap_or(i64::MAX);
            (order, (*name).clone())
        });
        folders
    }
    fn entry(kind: &'static str, title: String, url: String, pages: Vec<String>) -> NavEntry {
        NavEntry { kind, title, url, pages }
    }
    // A folder's pages, then its sub-folders as groups.
    fn walk(folder: &mut Folder, path: &str, nav: &mut Vec<NavEntry>, order: &mut Vec<PageLink>) {
        sort_pages(&mut folder.pages, path);
        for r in &folder.pages {
            nav.push(entry("page", r.title.clone(), r.page.out.clone(), Vec::new()));
            order.push(PageLink { title: r.title.clone(), url: r.page.out.clone() });
        }
        let names: Vec<String> = sorted_folders(folder, path).into_iter().map(|(n, _)| n.clone()).collect();
        for name in names {
            let sub = folder.folders.get_mut(&name).expect("listed above");
            let sub_path = format!("{path}{name}/");
            let mut pages = Vec::new();
            sub.all_pages(&mut pages);
            nav.push(entry("group", folder_title(sub, &sub_path, &name), String::new(), pages));
            walk(sub, &sub_path, nav, order);
            nav.push(entry("end-group", String::new(), String::new(), Vec::new()));
        }
    }

    let mut nav = Vec::new();
    let mut order = Vec::new();
    if !root.pages.is_empty() {
        nav.push(entry("section", site_title.to_string(), String::new(), Vec::new()));
        let mut pages_only = Folder { pages: std::mem::take(&mut root.pages), folders: BTreeMap::new() };
        walk(&mut pages_only, "", &mut nav, &mut order);
        nav.push(entry("end-section", String::new(), String::new(), Vec::new()));
    }
    let names: Vec<String> = sorted_folders(&root, "").into_iter().map(|(n, _)| n.clone()).collect();
    for name in names {
        let folder = root.folders.get_mut(&name).expect("listed above");
        let path = format!("{name}/");
        nav.push(entry("section", folder_title(folder, &path, &name), String::new(), Vec::new()));
        walk(folder, &path, &mut nav, &mut order);
        nav.push(entry("end-section", String::new(), String::new(), Vec::new()));
    }
    nav.push(entry("section", "Results".into(), String::new(), Vec::new()));
    for (url, title) in [
        (RESULTS_PAGE, "Results"),
        (compare::INDEX_PAGE, "Compare two models"),
        (CHANGES_PAGE, "What changed"),
        (MATRIX_PAGE, "Task matrix"),
        (CATALOG_PAGE, "Task catalog"),
    ] {
        if view && url == CHANGES_PAGE {
            continue;
        }
        nav.push(entry("page", title.into(), url.into(), Vec::new()));
        order.push(PageLink { title: title.into(), url: url.into() });
    }
    nav.push(entry("end-section", String::new(), String::new(), Vec::new()));
    (nav, order)
}

/// The home layout's hero and features from the page's frontmatter, with
/// their links resolved like the page's own.
fn home_view(page: &Page, index: &SiteIndex, warnings: &mut Vec<Warning>) -> HomeView {
    let text = |v: &serde_json::Value, key: &str| v.get(key).and_then(|x| x.as_str()).map(str::to_string);
    let mut link = |dest: &str| match links::resolve(&page.rel, dest, index) {
        Ok(resolved) => resolved.rewritten.unwrap_or_else(|| dest.to_string()),
        Err(why) => {
            warnings.push(Warning::new(&page.file, format!("broken link {why} in the frontmatter")));
            dest.to_string()
        }
    };
    let hero = page.meta.get("hero").cloned().unwrap_or_default();
    let actions = hero
        .get("actions")
        .and_then(|a| a.as_array())
        .map(|actions| {
            actions
                .iter()
                .filter_map(|a| {
                    let href = link(&text(a, "link")?);
                    Some(HomeLink {
                        text: text(a, "text").unwrap_or_else(|| href.clone()),
                        theme: text(a, "theme").filter(|t| t == "brand").unwrap_or_else(|| "alt".into()),
                        href,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let features = page
        .meta
        .get("features")
        .and_then(|f| f.as_array())
        .map(|features| {
            features
                .iter()
                .filter_map(|f| {
                    Some(HomeFeature {
                        title: text(f, "title")?,
                        details: text(f, "details"),
                        href: text(f, "link").map(|l| link(&l)),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    HomeView {
        name: text(&hero, "name"),
        text: text(&hero, "text"),
        tagline: text(&hero, "tagline"),
        actions,
        features,
    }
}

/// `sitemap.xml`: every published page at its public address.
fn sitemap_xml(base: &str, pages: &[String], clean: bool, dates: &HashMap<String, &String>) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for page in pages {
        let loc = escape_html(&format!("{base}{}", url::from_root(page, clean)));
        match dates.get(page) {
            Some(date) => xml.push_str(&format!("<url><loc>{loc}</loc><lastmod>{date}</lastmod></url>\n")),
            None => xml.push_str(&format!("<url><loc>{loc}</loc></url>\n")),
        }
    }
    xml.push_str("</urlset>\n");
    xml
}
