//! Loading the docs folder: every Markdown page (with its frontmatter read
//! and cut off) and every other file, which is copied to the site as a static
//! asset. Hidden files and folders (`.name`) are skipped.
//!
//! It does not render anything; see `publish::markdown` and `publish::site`.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::Value;

use crate::score::frontmatter;

/// A Markdown page of the docs folder.
#[derive(Debug, Clone)]
pub struct Page {
    /// Path relative to the docs folder, with `/` separators: `guide/setup.md`.
    pub rel: String,
    /// Output path relative to the site root: `guide/setup.html`.
    pub out: String,
    /// The file, for messages.
    pub file: PathBuf,
    /// The Markdown after the frontmatter, with the frontmatter's lines kept
    /// as empty lines so that line numbers match the file.
    pub body: String,
    /// `title` from the frontmatter.
    pub title: Option<String>,
    /// `order` from the frontmatter: position in the navigation (lower first).
    pub order: Option<i64>,
    /// `description`: the meta description and Open Graph description.
    pub description: Option<String>,
    /// `layout`: `home` gives the VitePress home page (hero and features).
    pub layout: Option<String>,
    /// `outline`: which headings the "On this page" outline lists.
    pub outline: Outline,
    /// `editLink: false` hides the "Edit this page" link.
    pub edit_link: bool,
    /// `lastUpdated: false` hides the "Last updated" date.
    pub last_updated: bool,
    /// Every frontmatter field, for templates (`page.meta.hero`...).
    pub meta: serde_json::Map<String, Value>,
}

/// The `outline` frontmatter field, as VitePress reads it: `false`, a level
/// (`2`), a range (`[2, 4]`) or `deep` (levels 2 to 6). Absent: 2 and 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outline {
    Hidden,
    Levels(u8, u8),
}

impl Default for Outline {
    fn default() -> Self {
        Outline::Levels(2, 3)
    }
}

impl Outline {
    fn from_value(v: &Value) -> Result<Outline, String> {
        let level = |v: &Value| v.as_u64().filter(|n| (1..=6).contains(n)).map(|n| n as u8);
        match v {
            Value::Bool(false) => Ok(Outline::Hidden),
            Value::Null | Value::Bool(true) => Ok(Outline::default()),
            Value::String(s) if s == "deep" => Ok(Outline::Levels(2, 6)),
            Value::Number(_) => {
                level(v).map(|n| Outline::Levels(n, n)).ok_or_else(|| format!("{v} is not a heading level 1 to 6"))
            }
            Value::Array(a) if a.len() == 2 => match (level(&a[0]), level(&a[1])) {
                (Some(lo), Some(hi)) if lo <= hi => Ok(Outline::Levels(lo, hi)),
                _ => Err(format!("{v} is not a range of heading levels such as [2, 3]")),
            },
            other => Err(format!("{other} is not one of false, a level (2), a range ([2, 3]) or \"deep\"")),
        }
    }
}

/// A file copied to the site unchanged.
#[derive(Debug, Clone)]
pub struct Asset {
    /// Path relative to its source folder and to the site root.
    pub rel: String,
    pub file: PathBuf,
}

#[derive(Debug, Clone, Default)]
pub struct Content {
    /// Sorted by `rel`.
    pub pages: Vec<Page>,
    /// Sorted by `rel`.
    pub assets: Vec<Asset>,
    /// Links skipped (see `inputs`).
    pub warnings: Vec<crate::publish::Warning>,
}

/// Load the docs folder `dir`.
pub fn load(dir: &Path) -> Result<Content> {
    if !dir.is_dir() {
        bail!("the docs folder {} does not exist: pass --docs DIR, the folder of Markdown pages", dir.display());
    }
    let mut content = Content::default();
    let (files, warnings) = crate::publish::load::inputs::files(dir, |_| false)?;
    content.warnings = warnings;
    for (rel, file) in files {
        if rel.ends_with(".md") {
            content.pages.push(load_page(&file, rel)?);
        } else {
            content.assets.push(Asset { rel, file });
        }
    }
    Ok(content)
}

/// Load every file under `dir` as an asset (the templates' `static/`
/// folder), with a warning per link skipped.
pub fn load_assets(dir: &Path, prefix: &str) -> Result<(Vec<Asset>, Vec<crate::publish::Warning>)> {
    if !dir.is_dir() {
        return Ok((Vec::new(), Vec::new()));
    }
    let (files, warnings) = crate::publish::load::inputs::files(dir, |_| false)?;
    Ok((files.into_iter().map(|(rel, file)| Asset { rel: format!("{prefix}{rel}"), file }).collect(), warnings))
}

pub use crate::publish::load::inputs::is_hidden;

fn load_page(file: &Path, rel: String) -> Result<Page> {
    let text = crate::fsio::read_text(file)?;
    page_from_text(file, rel, &text)
}

/// Split a page's text into frontmatter fields and body.
pub fn page_from_text(file: &Path, rel: String, text: &str) -> Result<Page> {
    let out = format!("{}.html", rel.strip_suffix(".md").unwrap_or(&rel));
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut page = Page {
        rel,
        out,
        file: file.to_path_buf(),
        body: text.to_string(),
        title: None,
        order: None,
        description: None,
        layout: None,
        outline: Outline::default(),
        edit_link: true,
        last_updated: true,
        meta: serde_json::Map::new(),
    };
    if let Some(yaml) = frontmatter::block(text) {
        let fields = frontmatter::parse(text)
            .map_err(|e| anyhow::anyhow!("{}: {e} (fix the YAML between the `---` lines at the top)", file.display()))?
            .unwrap_or_default();
        let text_field = |key: &str| match fields.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        page.title = text_field("title");
        page.description = text_field("description");
        page.layout = text_field("layout");
        if let Some(v) = fields.get("outline") {
            page.outline = Outline::from_value(v)
                .map_err(|e| anyhow::anyhow!("{}: frontmatter `outline`: {e}", file.display()))?;
        }
        page.edit_link = fields.get("editLink") != Some(&Value::Bool(false));
        page.last_updated = fields.get("lastUpdated") != Some(&Value::Bool(false));
        page.order = match fields.get("order") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.is_i64() => n.as_i64(),
            Some(other) => bail!("{}: frontmatter `order` is {other}: it must be a whole number", file.display()),
        };
        // The block plus its two `---` lines become empty lines.
        let end = yaml.as_ptr() as usize - text.as_ptr() as usize + yaml.len();
        let closing = text[end..].find('\n').map_or(text.len(), |i| end + i);
        let lines = text[..closing].matches('\n').count();
        page.body = "\n".repeat(lines) + &text[closing..];
        page.meta = fields;
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_is_read_and_cut_keeping_line_numbers() {
        let p =
            page_from_text(Path::new("d/x.md"), "x.md".into(), "---\ntitle: Hello\norder: 2\n---\n# Body\n").unwrap();
        assert_eq!(p.title.as_deref(), Some("Hello"));
        assert_eq!(p.order, Some(2));
        assert_eq!(p.body, "\n\n\n\n# Body\n");
        assert_eq!(p.out, "x.html");
    }

    #[test]
    fn no_frontmatter_keeps_the_text() {
        let p = page_from_text(Path::new("d/g/y.md"), "g/y.md".into(), "# Y\n---\n").unwrap();
        assert_eq!(p.title, None);
        assert_eq!(p.body, "# Y\n---\n");
        assert_eq!(p.out, "g/y.html");
    }

    #[test]
    fn malformed_frontmatter_names_the_file() {
        let e = page_from_text(Path::new("d/z.md"), "z.md".into(), "---\ntitle: [unclosed\n---\n").unwrap_err();
        assert!(e.to_string().contains("d/z.md") && e.to_string().contains("YAML"), "{e}");
        let e = page_from_text(Path::new("d/z.md"), "z.md".into(), "---\norder: first\n---\n").unwrap_err();
        assert!(e.to_string().contains("order"), "{e}");
        let e = page_from_text(Path::new("d/z.md"), "z.md".into(), "---\noutline: [4, 2]\n---\n").unwrap_err();
        assert!(e.to_string().contains("outline"), "{e}");
    }

    #[test]
    fn vitepress_fields_are_read() {
        let text = "---\ndescription: About it\nlayout: home\noutline: deep\neditLink: false\nhero:\n  name: X\n---\n";
        let p = page_from_text(Path::new("d/x.md"), "x.md".into(), text).unwrap();
        assert_eq!(p.description.as_deref(), Some("About it"));
        assert_eq!(p.layout.as_deref(), Some("home"));
        assert_eq!(p.outline, Outline::Levels(2, 6));
        assert!(!p.edit_link && p.last_updated);
        assert_eq!(p.meta["hero"]["name"], "X");
        for (v, want) in [("false", Outline::Hidden), ("3", Outline::Levels(3, 3)), ("[2, 4]", Outline::Levels(2, 4))] {
            let p = page_from_text(Path::new("d/x.md"), "x.md".into(), &format!("---\noutline: {v}\n---\n")).unwrap();
            assert_eq!(p.outline, want, "{v}");
        }
    }

    #[test]
    fn deeply_nested_frontmatter_is_an_error_naming_the_page() {
        // 50,000 levels overflowed even the main thread's 8 MiB stack.
        let text = crate::score::frontmatter::nested_note(50_000);
        let e = page_from_text(Path::new("d/deep.md"), "deep.md".into(), &text).unwrap_err().to_string();
        assert!(e.contains("d/deep.md") && e.contains("nested deeper than 64 levels"), "{e}");
    }

    #[test]
    fn pages_and_assets_are_separated_and_hidden_files_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("guide/img")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join("index.md"), "# I").unwrap();
        std::fs::write(dir.path().join("guide/a.md"), "# A").unwrap();
        std::fs::write(dir.path().join("guide/img/p.png"), "png").unwrap();
        std::fs::write(dir.path().join(".git/x.md"), "# no").unwrap();
        std::fs::write(dir.path().join("guide/.a.md.swp"), "no").unwrap();
        let c = load(dir.path()).unwrap();
        let pages: Vec<_> = c.pages.iter().map(|p| p.rel.as_str()).collect();
        assert_eq!(pages, ["guide/a.md", "index.md"]);
        let assets: Vec<_> = c.assets.iter().map(|a| a.rel.as_str()).collect();
        assert_eq!(assets, ["guide/img/p.png"]);
        assert!(load(&dir.path().join("missing")).unwrap_err().to_string().contains("--docs"));
    }
}
