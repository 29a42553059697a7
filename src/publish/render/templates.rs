//! The Tera templates of the site: built into the binary (so `publish` works
//! from any folder), with files in the `templates/` folder on disk replacing
//! the built-in ones of the same name and adding new ones (partials a page
//! can include). Also the stylesheet and other files of `templates/static/`.
//!
//! Templates are parsed once per load, never per page. Pages and templates
//! can call the generated-content functions (`results_table()`,
//! `results_chart()`, `task_matrix()`, `task_catalog()`); each returns HTML
//! rendered from its partial on first use, once per build and per page
//! depth, since links inside it are relative to the page (`Fragments`).
//!
//! Templates link with the `url` filter: `{{ "results.html" | url }}` is the
//! path from the page being rendered (its `root`) to that page, in the
//! site's URL style (clean or not); `slug` makes an element id of any text.
//!
//! It does not decide what is rendered where; that is `publish::site`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::Result;
use tera::{Kwargs, State, Tera, Value};

use crate::publish::load::content::{self, Asset};
use crate::publish::render::url;

/// Every built-in template, by name.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("base.html", include_str!("../../../templates/base.html")),
    ("page.html", include_str!("../../../templates/page.html")),
    ("home.html", include_str!("../../../templates/home.html")),
    ("404.html", include_str!("../../../templates/404.html")),
    ("results.html", include_str!("../../../templates/results.html")),
    ("baseline.html", include_str!("../../../templates/baseline.html")),
    ("matrix.html", include_str!("../../../templates/matrix.html")),
    ("catalog.html", include_str!("../../../templates/catalog.html")),
    ("task.html", include_str!("../../../templates/task.html")),
    ("transcript.html", include_str!("../../../templates/transcript.html")),
    ("compare.html", include_str!("../../../templates/compare.html")),
    ("pair.html", include_str!("../../../templates/pair.html")),
    ("partials/line_chart.html", include_str!("../../../templates/partials/line_chart.html")),
    ("partials/folded.html", include_str!("../../../templates/partials/folded.html")),
    ("partials/nav.html", include_str!("../../../templates/partials/nav.html")),
    ("partials/header.html", include_str!("../../../templates/partials/header.html")),
    ("partials/page_footer.html", include_str!("../../../templates/partials/page_footer.html")),
    ("partials/results_table.html", include_str!("../../../templates/partials/results_table.html")),
    ("partials/results_chart.html", include_str!("../../../templates/partials/results_chart.html")),
    ("partials/task_matrix.html", include_str!("../../../templates/partials/task_matrix.html")),
    ("partials/task_catalog.html", include_str!("../../../templates/partials/task_catalog.html")),
];

/// Built-in static files, by path under the site root.
pub const BUILT_IN_STATIC: &[(&str, &str)] = &[
    ("static/style.css", include_str!("../../../templates/static/style.css")),
    ("static/site.js", include_str!("../../../templates/static/site.js")),
    ("static/favicon.svg", include_str!("../../../templates/static/favicon.svg")),
];

/// The functions pages can call, each backed by the partial of the same name.
pub const FUNCTIONS: &[&str] = &["results_table", "results_chart", "task_matrix", "task_catalog"];

/// The generated-content functions' HTML: rendered from the partials on
/// first use in a build, for each `root` (the way up from a page to the
/// site root) that asks, and kept until the next build.
#[derive(Default)]
pub struct FragmentStore {
    /// This build's templates and data, to render partials from inside a
    /// template function (the instance being rendered is borrowed then).
    renderer: RwLock<Option<Arc<Tera>>>,
    cache: RwLock<HashMap<(&'static str, String), String>>,
    /// Fragments being rendered, so a partial that calls its own function
    /// is an error instead of endless recursion.
    active: Mutex<HashSet<(&'static str, String)>>,
}

pub type Fragments = Arc<FragmentStore>;

impl FragmentStore {
    /// Start a build: `tera` holds this build's data in its global context.
    pub fn begin_build(&self, tera: Tera) {
        *self.renderer.write().expect("fragments lock") = Some(Arc::new(tera));
        self.cache.write().expect("fragments lock").clear();
    }

    /// The HTML of fragment `name` for pages at `root`.
    pub fn get(&self, name: &'static str, root: &str) -> Result<String, tera::Error> {
        let key = (name, root.to_string());
        if let Some(html) = self.cache.read().expect("fragments lock").get(&key) {
            return Ok(html.clone());
        }
        let renderer = self.renderer.read().expect("fragments lock").clone();
        let Some(renderer) = renderer else { return Ok(String::new()) };
        if !self.active.lock().expect("fragments lock").insert(key.clone()) {
            return Err(tera::Error::message(format!("partials/{name}.html calls {name}() inside itself")));
        }
        let mut ctx = tera::Context::new();
        ctx.insert("root", root);
        let rendered = renderer.render(&format!("partials/{name}.html"), &ctx);
        self.active.lock().expect("fragments lock").remove(&key);
        let html = one_line(&rendered?);
        self.cache.write().expect("fragments lock").insert(key, html.clone());
        Ok(html)
    }
}

/// The `root` of the page being rendered (`""` at the site root, `../`...).
fn root_of(state: &State) -> String {
    state.get::<String>("root").ok().flatten().unwrap_or_default()
}

/// `path` (from the site root) linked from the page being rendered; each
/// segment percent-encoded by `url::href`, so a baseline named
/// `javascript:x` gives a harmless relative link.
fn url_filter(path: &str, _: Kwargs, state: &State) -> String {
    let clean = state.get::<bool>("clean_urls").ok().flatten().unwrap_or(false);
    let target = url::href_path(path, clean);
    let root = root_of(state);
    match (root.is_empty(), target.is_empty()) {
        (true, true) => "./".into(),
        (false, true) => root,
        _ => format!("{root}{}", url::href(&target)),
    }
}

/// Any text as an element id: lower case; letters, digits, `.`, `_` and
/// `-` kept, anything else one `-`.
fn slug_filter(text: &str, _: Kwargs, _: &State) -> String {
    let mut id = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || matches!(c, '.' | '_' | '-') {
            id.push(c);
        } else if !id.ends_with('-') {
            id.push('-');
        }
    }
    let id = id.trim_matches('-');
    if id.is_empty() { "x".into() } else { id.to_string() }
}

/// A static file: built in, or from `templates/static/` on disk.
#[derive(Debug, Clone)]
pub enum StaticFile {
    BuiltIn { rel: &'static str, text: &'static str },
    Disk(Asset),
}

impl StaticFile {
    pub fn rel(&self) -> &str {
        match self {
            StaticFile::BuiltIn { rel, .. } => rel,
            StaticFile::Disk(a) => &a.rel,
        }
    }
}

/// The page templates of the listing pages and the partials behind the
/// generated-content functions: the templates expected to read the global
/// `results` data (every baseline's figures).
const RESULTS_READERS: &[&str] = &[
    "results.html",
    "compare.html",
    "matrix.html",
    "catalog.html",
    "partials/results_table.html",
    "partials/results_chart.html",
    "partials/task_matrix.html",
    "partials/task_catalog.html",
];

/// Loaded templates.
pub struct Templates {
    pub tera: Tera,
    /// A digest of every template's name and text.
    pub digest: u64,
    /// Whether a page rendered from a template outside [`RESULTS_READERS`]
    /// (a task, transcript or pair page) may read the `results` data; if so,
    /// such a page depends on every baseline, not only on its own data.
    pub others_read_results: bool,
    /// Template files taken from disk (overriding or added), for messages.
    pub from_disk: Vec<PathBuf>,
    pub static_files: Vec<StaticFile>,
    pub fragments: Fragments,
    /// Links skipped in the templates folder (see `load::inputs`).
    pub warnings: Vec<crate::publish::Warning>,
}

/// Load the built-in templates, then `dir` (when it exists) over them.
pub fn load(dir: &Path) -> Result<Templates> {
    let fragments: Fragments = Arc::default();
    let mut tera = Tera::new();
    tera.set_escape_fn(crate::publish::render::escape::escape_html_to);
    for &name in FUNCTIONS {
        let store = Arc::clone(&fragments);
        tera.register_function(name, move |_: Kwargs, state: &State| {
            store.get(name, &root_of(state)).map(|html| Value::safe_string(&html))
        });
    }
    tera.register_filter("url", url_filter);
    tera.register_filter("slug", slug_filter);
    let mut sources: HashMap<String, (String, Option<PathBuf>)> =
        BUILT_IN.iter().map(|(n, t)| (n.to_string(), (t.to_string(), None))).collect();
    let mut from_disk = Vec::new();
    let static_dir = dir.join("static");
    let mut link_warnings = Vec::new();
    if dir.is_dir() {
        let (files, warnings) = crate::publish::load::inputs::files(dir, |p| p == static_dir)?;
        link_warnings = warnings;
        for (name, path) in files {
            let text = crate::fsio::read_text(&path)?;
            sources.insert(name, (text, Some(path.clone())));
            from_disk.push(path);
        }
    }
    let mut named: Vec<(&String, &String)> = sources.iter().map(|(n, (t, _))| (n, t)).collect();
    named.sort();
    tera.add_raw_templates(named.clone()).map_err(|e| {
        let origin = |name: &str| match sources.get(name) {
            Some((_, Some(p))) => p.display().to_string(),
            _ => format!("{name} (built in)"),
        };
        anyhow::anyhow!("{}", describe_error(&e, &origin))
    })?;
    let (static_files, mut warnings) = load_static(dir)?;
    warnings.extend(link_warnings);
    let mut digest = crate::publish::digest::Digest::default();
    for (name, text) in &named {
        digest.text(name);
        digest.text(text);
    }
    let others_read_results = named.iter().any(|(name, text)| {
        if RESULTS_READERS.contains(&name.as_str()) { defines_components(text) } else { reads_results(text) }
    });
    Ok(Templates { tera, digest: digest.finish(), others_read_results, from_disk, static_files, fragments, warnings })
}

/// The code of a template's tags (`{{ }}` and `{% %}`; comments left out),
/// each as (first word, identifiers, string literals). Quotes are respected,
/// so a `}}` inside a string does not end a tag.
fn tags(text: &str) -> Vec<(String, Vec<&str>, Vec<&str>)> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(open) = text[at..].find('{').map(|p| at + p) {
        let kind = bytes.get(open + 1).copied();
        at = open + 1;
        let close: &[u8] = match kind {
            Some(b'{') => b"}}",
            Some(b'%') => b"%}",
            Some(b'#') => {
                at = text[open..].find("#}").map_or(text.len(), |e| open + e + 2);
                continue;
            }
            _ => continue,
        };
        let mut i = open + 2;
        let (mut idents, mut literals) = (Vec::new(), Vec::new());
        while i < bytes.len() && !bytes[i..].starts_with(close) {
            let c = bytes[i];
            if matches!(c, b'"' | b'\'' | b'`') {
                let end = bytes[i + 1..].iter().position(|&b| b == c).map_or(bytes.len(), |e| i + 1 + e);
                literals.push(&text[i + 1..end.min(text.len())]);
                i = end + 1;
            } else if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                idents.push(&text[start..i]);
            } else {
                i += 1;
            }
        }
        at = (i + 2).min(text.len());
        let first = if kind == Some(b'%') { idents.first().map_or("", |w| w).to_string() } else { String::new() };
        found.push((first, idents, literals));
    }
    found
}

/// Whether a template may read the `results` data: it names `results` or a
/// generated-content function, or includes, extends or imports a template
/// that reads it, or one named by an expression (which could be any).
/// Cautious: a field that happens to be called `results` counts too.
fn reads_results(text: &str) -> bool {
    tags(text).iter().any(|(first, idents, literals)| {
        let names = idents.iter().any(|w| *w == "results" || FUNCTIONS.contains(w));
        let loads = matches!(first.as_str(), "include" | "extends" | "import" | "from")
            && (literals.is_empty() || literals.iter().any(|l| RESULTS_READERS.contains(l)));
        names || loads
    })
}

/// Whether a template defines components, which other templates could use
/// (a reader of `results` that defines one is not kept to its own pages).
fn defines_components(text: &str) -> bool {
    tags(text).iter().any(|(first, _, _)| first == "component")
}

/// The static files: built in, with `dir/static/` on disk over them, and a
/// warning per link skipped there.
pub fn load_static(dir: &Path) -> Result<(Vec<StaticFile>, Vec<crate::publish::Warning>)> {
    let mut static_files: Vec<StaticFile> =
        BUILT_IN_STATIC.iter().map(|&(rel, text)| StaticFile::BuiltIn { rel, text }).collect();
    let (assets, warnings) = content::load_assets(&dir.join("static"), "static/")?;
    for asset in assets {
        static_files.retain(|f| f.rel() != asset.rel);
        static_files.push(StaticFile::Disk(asset));
    }
    Ok((static_files, warnings))
}

/// A Tera error as text, with template names replaced by the files they
/// came from, and the causes it carries.
pub fn describe_error(e: &tera::Error, origin: &dyn Fn(&str) -> String) -> String {
    let mut text = e.to_string();
    // Reports read `--> name:line:col`; name the file instead.
    let names: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--> "))
        .filter_map(|loc| loc.rsplitn(3, ':').nth(2).map(str::to_string))
        .collect();
    for name in names {
        text = text.replace(&format!("--> {name}:"), &format!("--> {}:", origin(&name)));
    }
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(&format!("\ncaused by: {cause}"));
        source = cause.source();
    }
    text
}

/// Make a rendered fragment one line: it then sits in a Markdown page as a
/// single HTML block (a blank line would end the block), and the page's line
/// numbers after it stay those of the file.
pub fn one_line(html: &str) -> String {
    html.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_load_and_functions_are_known() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = load(&dir.path().join("none")).unwrap();
        assert!(t.from_disk.is_empty());
        assert!(t.tera.contains_template("base.html"));
        t.tera
            .add_raw_template("partials/results_table.html", "<a href=\"{{ 'results.html' | url }}\">\n\n</a>")
            .unwrap();
        t.fragments.begin_build(t.tera.clone());
        let mut ctx = tera::Context::new();
        ctx.insert("root", "../");
        let out = t.tera.render_str("{{ results_table() }}", &ctx, true).unwrap();
        assert_eq!(out, "<a href=\"../results.html\"> </a>");
        let out = t.tera.render_str("{{ results_table() }}", &tera::Context::new(), true).unwrap();
        assert_eq!(out, "<a href=\"results.html\"> </a>");
    }

    #[test]
    fn the_url_filter_follows_the_page_and_the_url_style() {
        let t = load(Path::new("no-such-folder")).unwrap();
        let render = |root: &str, clean: bool, path: &str| {
            let mut ctx = tera::Context::new();
            ctx.insert("root", root);
            ctx.insert("clean_urls", &clean);
            ctx.insert("path", path);
            t.tera.render_str("{{ path | url }}", &ctx, true).unwrap()
        };
        assert_eq!(render("", false, "index.html"), "index.html");
        assert_eq!(render("", true, "index.html"), "./");
        assert_eq!(render("../", true, "index.html"), "../");
        assert_eq!(render("../", true, "baselines/x.html"), "../baselines/x/");
        assert_eq!(render("../", false, "static/style.css"), "../static/style.css");
        assert_eq!(render("", false, "baselines/javascript:x \"y\".html"), "baselines/javascript%3Ax%20%22y%22.html");
    }

    #[test]
    fn slugs_are_valid_ids() {
        let t = load(Path::new("no-such-folder")).unwrap();
        let slug = |text: &str| {
            let mut ctx = tera::Context::new();
            ctx.insert("text", text);
            t.tera.render_str("{{ text | slug }}", &ctx, true).unwrap()
        };
        assert_eq!(slug("gemini-gemini-3.1-flash-lite"), "gemini-gemini-3.1-flash-lite");
        assert_eq!(slug("Ollama gemma4:e4b <x>"), "ollama-gemma4-e4b-x");
        assert_eq!(slug("\"><"), "x");
    }

    #[test]
    fn a_partial_calling_its_own_function_is_an_error() {
        let mut t = load(Path::new("no-such-folder")).unwrap();
        t.tera.add_raw_template("partials/results_chart.html", "{{ results_chart() }}").unwrap();
        t.fragments.begin_build(t.tera.clone());
        let e = t.tera.render_str("{{ results_chart() }}", &tera::Context::new(), true).unwrap_err();
        assert!(format!("{e:?}").contains("inside itself"), "{e:?}");
    }

    #[test]
    fn disk_templates_override_and_add() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("partials")).unwrap();
        std::fs::create_dir_all(dir.path().join("static")).unwrap();
        std::fs::write(dir.path().join("partials/hello.html"), "Hello {{ who }}").unwrap();
        std::fs::write(dir.path().join("static/style.css"), "body{}").unwrap();
        std::fs::write(dir.path().join("static/extra.js"), "1").unwrap();
        let t = load(dir.path()).unwrap();
        let mut ctx = tera::Context::new();
        ctx.insert("who", "<b>");
        assert_eq!(t.tera.render("partials/hello.html", &ctx).unwrap(), "Hello &lt;b&gt;");
        let rels: Vec<_> = t.static_files.iter().map(|f| f.rel().to_string()).collect();
        assert_eq!(rels, ["static/site.js", "static/favicon.svg", "static/extra.js", "static/style.css"]);
        assert!(matches!(t.static_files[3], StaticFile::Disk(_)));
    }

    #[test]
    fn a_broken_template_names_its_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("base.html"), "{% if %}").unwrap();
        let e = load(dir.path()).err().unwrap().to_string();
        assert!(e.contains(&dir.path().join("base.html").display().to_string()), "{e}");
    }

    #[test]
    fn templates_reading_the_results_data_are_recognised() {
        assert!(!reads_results(r#"<a href="{{ 'results.html' | url }}">{{ task.id }}</a>{# results #}"#));
        assert!(!reads_results(r#"{% include "partials/folded.html" %}{{ "}} results" }}"#));
        assert!(reads_results("{{ results.rows | length }}"));
        assert!(reads_results("{% if x %}{{ results_table() }}{% endif %}"));
        assert!(reads_results(r#"{% include "partials/results_table.html" %}"#));
        assert!(reads_results("{% include name %}"));
        assert!(reads_results(r#"{% extends "results.html" %}"#));
        assert!(defines_components("{% component card(x) %}{{ x }}{% endcomponent card %}"));
        let built_in = load(Path::new("/nonexistent")).unwrap();
        assert!(!built_in.others_read_results, "the built-in task, transcript and pair pages depend on their own data");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("partials")).unwrap();
        std::fs::write(dir.path().join("partials/page_footer.html"), "{{ results.rows | length }} models").unwrap();
        assert!(load(dir.path()).unwrap().others_read_results);
    }

    #[test]
    fn fragments_become_one_line() {
        assert_eq!(one_line("<div>\n\n  <p>a</p>\n</div>\n"), "<div> <p>a</p> </div>");
    }
}
