//! The Tera templates of the site: built into the binary (so `publish` works
//! from any folder), with files in the `templates/` folder on disk replacing
//! the built-in ones of the same name and adding new ones (partials a page
//! can include). Also the stylesheet and other files of `templates/static/`.
//!
//! Templates are parsed once per load, never per page. Pages and templates
//! can call the generated-content functions (`results_table()`,
//! `results_chart()`, `task_matrix()`, `task_catalog()`); each returns HTML
//! rendered once per build from the partials (`Fragments`).
//!
//! It does not decide what is rendered where; that is `publish::site`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use anyhow::{Context, Result};
use tera::{Kwargs, State, Tera, Value};

use super::content::{self, Asset};

/// Every built-in template, by name.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("base.html", include_str!("../../templates/base.html")),
    ("page.html", include_str!("../../templates/page.html")),
    ("results.html", include_str!("../../templates/results.html")),
    ("baseline.html", include_str!("../../templates/baseline.html")),
    ("matrix.html", include_str!("../../templates/matrix.html")),
    ("catalog.html", include_str!("../../templates/catalog.html")),
    ("partials/nav.html", include_str!("../../templates/partials/nav.html")),
    ("partials/results_table.html", include_str!("../../templates/partials/results_table.html")),
    ("partials/results_chart.html", include_str!("../../templates/partials/results_chart.html")),
    ("partials/task_matrix.html", include_str!("../../templates/partials/task_matrix.html")),
    ("partials/task_catalog.html", include_str!("../../templates/partials/task_catalog.html")),
];

/// Built-in static files, by path under the site root.
pub const BUILT_IN_STATIC: &[(&str, &str)] = &[("static/style.css", include_str!("../../templates/static/style.css"))];

/// The functions pages can call, each backed by the partial of the same name.
pub const FUNCTIONS: &[&str] = &["results_table", "results_chart", "task_matrix", "task_catalog"];

/// HTML produced once per build for the generated-content functions.
pub type Fragments = Arc<RwLock<HashMap<&'static str, String>>>;

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

/// Loaded templates.
pub struct Templates {
    pub tera: Tera,
    /// Template files taken from disk (overriding or added), for messages.
    pub from_disk: Vec<PathBuf>,
    pub static_files: Vec<StaticFile>,
    pub fragments: Fragments,
}

/// Load the built-in templates, then `dir` (when it exists) over them.
pub fn load(dir: &Path) -> Result<Templates> {
    let fragments: Fragments = Arc::default();
    let mut tera = Tera::new();
    for &name in FUNCTIONS {
        let slot = Arc::clone(&fragments);
        tera.register_function(name, move |_: Kwargs, _: &State| {
            let html = slot.read().expect("fragments lock").get(name).cloned().unwrap_or_default();
            Value::safe_string(&html)
        });
    }
    let mut sources: HashMap<String, (String, Option<PathBuf>)> =
        BUILT_IN.iter().map(|(n, t)| (n.to_string(), (t.to_string(), None))).collect();
    let mut from_disk = Vec::new();
    let static_dir = dir.join("static");
    if dir.is_dir() {
        for entry in walkdir::WalkDir::new(dir)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || (!content::is_hidden(e.file_name()) && e.path() != static_dir))
        {
            let entry = entry.with_context(|| format!("reading the templates folder {}", dir.display()))?;
            if !entry.file_type().is_file() {
                continue;
            }
            let path = entry.path();
            let name = path
                .strip_prefix(dir)
                .expect("walked under dir")
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let text = crate::fsio::read_text(path)?;
            sources.insert(name, (text, Some(path.to_path_buf())));
            from_disk.push(path.to_path_buf());
        }
    }
    let mut named: Vec<(&String, &String)> = sources.iter().map(|(n, (t, _))| (n, t)).collect();
    named.sort();
    tera.add_raw_templates(named).map_err(|e| {
        let origin = |name: &str| match sources.get(name) {
            Some((_, Some(p))) => p.display().to_string(),
            _ => format!("{name} (built in)"),
        };
        anyhow::anyhow!("{}", describe_error(&e, &origin))
    })?;
    let static_files = load_static(dir)?;
    Ok(Templates { tera, from_disk, static_files, fragments })
}

/// The static files: built in, with `dir/static/` on disk over them.
pub fn load_static(dir: &Path) -> Result<Vec<StaticFile>> {
    let mut static_files: Vec<StaticFile> =
        BUILT_IN_STATIC.iter().map(|&(rel, text)| StaticFile::BuiltIn { rel, text }).collect();
    for asset in content::load_assets(&dir.join("static"), "static/")? {
        static_files.retain(|f| f.rel() != asset.rel);
        static_files.push(StaticFile::Disk(asset));
    }
    Ok(static_files)
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
        let t = load(&dir.path().join("none")).unwrap();
        assert!(t.from_disk.is_empty());
        assert!(t.tera.contains_template("base.html"));
        t.fragments.write().unwrap().insert("results_table", "<table></table>".into());
        let out = t.tera.render_str("{{ results_table() }}", &tera::Context::new(), true).unwrap();
        assert_eq!(out, "<table></table>");
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
        assert_eq!(rels, ["static/extra.js", "static/style.css"]);
        assert!(matches!(t.static_files[1], StaticFile::Disk(_)));
    }

    #[test]
    fn a_broken_template_names_its_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("base.html"), "{% if %}").unwrap();
        let e = load(dir.path()).err().unwrap().to_string();
        assert!(e.contains(&dir.path().join("base.html").display().to_string()), "{e}");
    }

    #[test]
    fn fragments_become_one_line() {
        assert_eq!(one_line("<div>\n\n  <p>a</p>\n</div>\n"), "<div> <p>a</p> </div>");
    }
}
