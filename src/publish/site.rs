//! The site pipeline. `Site::load` runs every loading stage; `Site::reload`
//! re-runs the one a change needs (`ChangeKind`, as in Zola); `Site::render`
//! turns what is loaded into output files; `Site::write` puts them on disk.
//! A one-off build and every `--watch` rebuild go through these same calls.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{Result, anyhow};
use serde::Serialize;
use tera::{Context, Value};

use super::baselines::{self, Baseline};
use super::config::{self, SiteConfig};
use super::content::{self, Content, Page};
use super::links::{self, SiteIndex};
use super::markdown;
use super::output::{self, OutData, OutFile, WriteStats};
use super::results::{self, SuiteView};
use super::templates::{self, StaticFile, Templates};
use super::{BuildReport, PublishOptions, Warning};
use crate::report::evidence;
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

/// Generated pages, by output path.
pub const RESULTS_PAGE: &str = "results.html";
pub const MATRIX_PAGE: &str = "matrix.html";
pub const CATALOG_PAGE: &str = "tasks.html";

/// Everything loaded for a build.
pub struct Site {
    pub options: PublishOptions,
    config: SiteConfig,
    templates: Templates,
    content: Content,
    baselines: Vec<Baseline>,
    baseline_warnings: Vec<Warning>,
    suite: SuiteView,
    suite_warnings: Vec<Warning>,
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

#[derive(Serialize)]
struct NavSection {
    title: String,
    items: Vec<NavItem>,
}

#[derive(Serialize)]
struct NavItem {
    title: String,
    /// The output path, compared with `page.url` to mark the current page.
    url: String,
    /// `url` as a URL relative to the site root.
    href: String,
}

impl NavItem {
    fn new(title: String, url: String) -> NavItem {
        NavItem { href: links::href(&url), title, url }
    }
}

/// A baseline page's download of its evidence archive.
#[derive(Serialize)]
struct EvidenceLink {
    /// Relative to the baseline's page.
    href: String,
    kib: u64,
}

#[derive(Serialize)]
struct PageInfo<'a> {
    title: &'a str,
    /// Output path from the site root.
    url: &'a str,
}

impl Site {
    /// Run every loading stage.
    pub fn load(options: PublishOptions) -> Result<Site> {
        let config = config::load(&options.config)?;
        let templates = templates::load(&options.templates)?;
        let content = content::load(&options.docs)?;
        let (baselines, baseline_warnings) = baselines::load_dir(&options.baselines)?;
        let (suite, suite_warnings) = load_suite(&options.suite);
        Ok(Site { options, config, templates, content, baselines, baseline_warnings, suite, suite_warnings })
    }

    /// Re-run the loading stage for one kind of change.
    pub fn reload(&mut self, kind: ChangeKind) -> Result<()> {
        match kind {
            ChangeKind::Config => *self = Site::load(self.options.clone())?,
            ChangeKind::Templates => self.templates = templates::load(&self.options.templates)?,
            ChangeKind::Content => self.content = content::load(&self.options.docs)?,
            ChangeKind::Static => {
                self.content = content::load(&self.options.docs)?;
                self.templates.static_files = templates::load_static(&self.options.templates)?;
            }
            ChangeKind::Baselines => {
                (self.baselines, self.baseline_warnings) = baselines::load_dir(&self.options.baselines)?;
            }
            ChangeKind::Tasks => (self.suite, self.suite_warnings) = load_suite(&self.options.suite),
        }
        Ok(())
    }

    /// Write a rendered site to the output folder.
    pub fn write(&self, built: &Built) -> Result<WriteStats> {
        let o = &self.options;
        output::check_target(&o.out, &[&o.docs, &o.templates, &o.baselines, &o.suite])?;
        output::write(&o.out, &built.files)
    }

    /// Render every page. Errors (a template or page that cannot be
    /// rendered) are all collected and returned together.
    pub fn render(&mut self) -> Result<Built> {
        let mut warnings: Vec<Warning> = Vec::new();
        warnings.extend(self.baseline_warnings.iter().cloned());
        warnings.extend(self.suite_warnings.iter().cloned());
        let results = results::view(&self.baselines, &self.suite, &self.config);

        // Data every template sees, and the generated fragments pages can place.
        {
            let global = self.templates.tera.global_context();
            global.insert("site", &self.config);
            global.insert("results", &results);
            global.insert("suite", &self.suite);
        }
        let mut fragments = HashMap::new();
        for &name in templates::FUNCTIONS {
            let html = self
                .templates
                .tera
                .render(&format!("partials/{name}.html"), &Context::new())
                .map_err(|e| anyhow!("{}", self.describe(&e)))?;
            fragments.insert(name, templates::one_line(&html));
        }
        *self.templates.fragments.write().expect("fragments lock") = fragments;

        let generated: Vec<String> = [RESULTS_PAGE, MATRIX_PAGE, CATALOG_PAGE]
            .into_iter()
            .map(String::from)
            .chain(results.rows.iter().map(|r| r.page.clone()))
            .collect();
        let index = SiteIndex {
            pages: self.content.pages.iter().map(|p| p.rel.clone()).collect(),
            outputs: self
                .content
                .pages
                .iter()
                .map(|p| p.out.clone())
                .chain(generated.iter().cloned())
                .chain(self.content.assets.iter().map(|a| a.rel.clone()))
                .chain(self.templates.static_files.iter().map(|f| f.rel().to_string()))
                .collect(),
            base_path: self.config.base_path.clone(),
        };
        let mut errors: Vec<String> = Vec::new();
        for page in &self.content.pages {
            if generated.contains(&page.out) {
                errors.push(format!(
                    "{}: this page would be published at {}, which is a generated page; rename it",
                    page.file.display(),
                    page.out
                ));
            }
        }

        // Markdown (after template expressions) to HTML, links resolved.
        let mut rendered: Vec<(&Page, String, String)> = Vec::with_capacity(self.content.pages.len());
        let mut anchors: HashMap<&str, HashSet<String>> = HashMap::new();
        let mut pending: Vec<(&Page, usize, String, (String, String))> = Vec::new();
        for page in &self.content.pages {
            let text = match self.expand(page) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let mut link_warnings = Vec::new();
            let out = markdown::render(&text, &mut |dest, offset| match links::resolve(&page.rel, dest, &index) {
                Ok(resolved) => {
                    if let Some(anchor) = resolved.anchor {
                        pending.push((page, line_of(&text, offset), dest.to_string(), anchor));
                    }
                    resolved.rewritten
                }
                Err(why) => {
                    link_warnings.push(Warning {
                        file: page.file.clone(),
                        line: Some(line_of(&text, offset)),
                        message: format!("broken link {why}"),
                    });
                    None
                }
            });
            warnings.extend(link_warnings);
            anchors.insert(page.rel.as_str(), out.anchors);
            let title = page
                .title
                .clone()
                .or(out.first_heading)
                .unwrap_or_else(|| default_title(&page.rel, &self.config.title));
            rendered.push((page, title, out.html));
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

        let nav = navigation(&rendered, &self.config.title);
        self.templates.tera.global_context().insert("nav", &nav);
        let mut files = Vec::with_capacity(rendered.len() + generated.len() + self.content.assets.len() + 2);
        for (page, title, html) in &rendered {
            let mut ctx = Context::new();
            ctx.insert("page", &PageInfo { title, url: &page.out });
            ctx.insert_value("content", Value::safe_string(html));
            let html = self.render_template("page.html", &ctx)?;
            files.push(OutFile { rel: page.out.clone(), data: OutData::Bytes(html.into_bytes()) });
        }
        for (url, template, title) in [
            (RESULTS_PAGE, "results.html", "Results"),
            (MATRIX_PAGE, "matrix.html", "Task matrix"),
            (CATALOG_PAGE, "catalog.html", "Task catalog"),
        ] {
            let mut ctx = Context::new();
            ctx.insert("page", &PageInfo { title, url });
            let html = self.render_template(template, &ctx)?;
            files.push(OutFile { rel: url.to_string(), data: OutData::Bytes(html.into_bytes()) });
        }
        for view in &results.pages {
            let mut ctx = Context::new();
            let title = format!("{} ({})", view.row.model, view.row.provider);
            ctx.insert("page", &PageInfo { title: &title, url: &view.row.page });
            ctx.insert("baseline", view);
            // The transcripts blessed with the baseline, offered for download:
            // the archive of the baseline's own run, found by its run id, so a
            // file left by an interrupted bless is never picked up.
            let archive = evidence::archive_path(&self.options.baselines.join(&view.row.file), &view.run_id);
            let mut link = None;
            if let Some((archive, meta)) =
                archive.and_then(|a| std::fs::symlink_metadata(&a).ok().filter(|m| m.is_file()).map(|m| (a, m)))
            {
                let page = view.row.page.strip_suffix(".html").unwrap_or(&view.row.page);
                let rel = format!("{page}.evidence.tar.gz");
                let href = links::href(rel.rsplit('/').next().unwrap_or(&rel));
                link = Some(EvidenceLink { href, kib: meta.len().div_ceil(1024) });
                files.push(OutFile { rel, data: OutData::Copy(archive) });
            }
            ctx.insert("evidence", &link);
            let html = self.render_template("baseline.html", &ctx)?;
            files.push(OutFile { rel: view.row.page.clone(), data: OutData::Bytes(html.into_bytes()) });
        }
        let mut assets = 0;
        for asset in &self.content.assets {
            files.push(OutFile { rel: asset.rel.clone(), data: OutData::Copy(asset.file.clone()) });
            assets += 1;
        }
        for file in &self.templates.static_files {
            if self.content.assets.iter().any(|a| a.rel == file.rel()) {
                continue; // a docs file of the same path wins
            }
            let data = match file {
                StaticFile::BuiltIn { text, .. } => OutData::Bytes(text.as_bytes().to_vec()),
                StaticFile::Disk(a) => OutData::Copy(a.file.clone()),
            };
            files.push(OutFile { rel: file.rel().to_string(), data });
            assets += 1;
        }
        Ok(Built {
            files,
            warnings,
            pages: rendered.len(),
            generated: 3 + results.pages.len(),
            assets,
            baselines: self.baselines.len(),
        })
    }

    /// A page's Markdown with its template expressions evaluated.
    fn expand(&self, page: &Page) -> Result<String, String> {
        if !markdown::has_template_syntax(&page.body) {
            return Ok(page.body.clone());
        }
        let shielded = markdown::shield_for_templates(&page.body);
        let mut ctx = Context::new();
        ctx.insert("page", &PageInfo { title: page.title.as_deref().unwrap_or(""), url: &page.out });
        self.templates.tera.render_str(&shielded, &ctx, true).map_err(|e| {
            let file = page.file.display().to_string();
            let origin = |name: &str| if name == "__tera_one_off" { file.clone() } else { self.origin(name) };
            format!("{file}: template error in the page:\n{}", templates::describe_error(&e, &origin))
        })
    }

    fn render_template(&self, name: &str, ctx: &Context) -> Result<String> {
        self.templates.tera.render(name, ctx).map_err(|e| anyhow!("{}", self.describe(&e)))
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

/// Load the suite for the catalog and the suite marks. A suite that does not
/// load is a warning (the site still builds), and the catalog says so.
fn load_suite(root: &Path) -> (SuiteView, Vec<Warning>) {
    let tasks_dir = Suite::tasks_dir(root);
    let folder = tasks_dir.display().to_string();
    let has_tasks = std::fs::read_dir(&tasks_dir)
        .map(|entries| entries.filter_map(|e| e.ok()).any(|e| e.path().extension().is_some_and(|x| x == "json")))
        .unwrap_or(false);
    if !has_tasks {
        return (SuiteView::empty(folder), Vec::new());
    }
    match Suite::load(root) {
        Ok(suite) => (SuiteView::from_tasks(folder, &suite.tasks), Vec::new()),
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

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
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

/// The navigation: root pages first, then a section per top-level folder,
/// then the generated pages. In a section, its `index.md` comes first, then
/// pages by frontmatter `order`, then by title.
fn navigation(rendered: &[(&Page, String, String)], site_title: &str) -> Vec<NavSection> {
    let mut sections: Vec<(String, Vec<(&Page, &String)>)> = Vec::new();
    let folders: BTreeSet<&str> =
        rendered.iter().filter_map(|(p, _, _)| p.rel.split_once('/').map(|(d, _)| d)).collect();
    let in_folder = |folder: Option<&str>| -> Vec<(&Page, &String)> {
        let mut items: Vec<(&Page, &String)> = rendered
            .iter()
            .filter(|(p, _, _)| p.rel.split_once('/').map(|(d, _)| d) == folder)
            .map(|(p, t, _)| (*p, t))
            .collect();
        items.sort_by(|(a, ta), (b, tb)| {
            let key = |p: &Page| {
                (!p.rel.ends_with("index.md") || p.rel.matches('/').count() > 1, p.order.unwrap_or(i64::MAX))
            };
            key(a).cmp(&key(b)).then_with(|| ta.to_lowercase().cmp(&tb.to_lowercase()))
        });
        items
    };
    sections.push((site_title.to_string(), in_folder(None)));
    for folder in folders {
        let items = in_folder(Some(folder));
        let title = items
            .iter()
            .find(|(p, _)| p.rel == format!("{folder}/index.md"))
            .map(|(_, t)| (*t).clone())
            .unwrap_or_else(|| capitalize(&folder.replace(['-', '_'], " ")));
        sections.push((title, items));
    }
    let mut nav: Vec<NavSection> = sections
        .into_iter()
        .filter(|(_, items)| !items.is_empty())
        .map(|(title, items)| NavSection {
            title,
            items: items.into_iter().map(|(p, t)| NavItem::new(t.clone(), p.out.clone())).collect(),
        })
        .collect();
    nav.push(NavSection {
        title: "Results".into(),
        items: [(RESULTS_PAGE, "Results"), (MATRIX_PAGE, "Task matrix"), (CATALOG_PAGE, "Task catalog")]
            .into_iter()
            .map(|(url, title)| NavItem::new(title.into(), url.into()))
            .collect(),
    });
    nav
}
