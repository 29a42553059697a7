//! The site's search index, built at publish time from the sections that
//! `publish::html` cut every page into (docs pages and generated pages
//! alike, so a model's name finds its results row).
//!
//! It is written as `search-index.js`, a script that sets one global, not as
//! JSON: a page opened from disk (`file://`) may load a script but may not
//! fetch a file. `static/site.js` loads it on the first search and scans it;
//! no server, no CDN.
//!
//! Kept small: the text is the pages' visible text with whitespace
//! collapsed, each page's URL is stored once, and tables that repeat other
//! pages are left out by the templates (`data-search-skip`).

use std::sync::Arc;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::publish::render::html::Section;

/// The file the index is written to, from the site root.
pub const INDEX_FILE: &str = "search-index.js";

/// The global the index script sets.
const GLOBAL: &str = "vaultbenchSearchIndex";

/// Every page's sections, in the order pages were added. A page's sections
/// are shared with whoever else holds them (the page's record for the next
/// build), not copied.
#[derive(Debug, Default)]
pub struct SearchIndex {
    /// (title, link from the site root, sections).
    pages: Vec<(String, String, Arc<[Section]>)>,
}

/// Written as `{"pages": [[title, link], ...], "sections": [[page index,
/// anchor or "", heading, text], ...]}`, sections with no text and no
/// heading left out.
impl Serialize for SearchIndex {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Pages<'a>(&'a [(String, String, Arc<[Section]>)]);
        impl Serialize for Pages<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(|(title, href, _)| (title, href)))
            }
        }
        struct Sections<'a>(&'a [(String, String, Arc<[Section]>)]);
        impl Serialize for Sections<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().enumerate().flat_map(|(page, (_, _, sections))| {
                    sections.iter().filter(|s| !(s.text.is_empty() && s.title.is_empty())).map(move |s| {
                        (page, s.anchor.as_deref().unwrap_or_default(), s.title.as_str(), s.text.as_str())
                    })
                }))
            }
        }
        let mut index = serializer.serialize_struct("SearchIndex", 2)?;
        index.serialize_field("pages", &Pages(&self.pages))?;
        index.serialize_field("sections", &Sections(&self.pages))?;
        index.end()
    }
}

impl SearchIndex {
    /// Add a page: its title, its link from the site root, its sections.
    pub fn add(&mut self, title: &str, href: &str, sections: impl Into<Arc<[Section]>>) {
        self.pages.push((title.to_string(), href.to_string(), sections.into()));
    }

    pub fn sections(&self) -> usize {
        self.pages.iter().flat_map(|(_, _, s)| s.iter()).filter(|s| !(s.text.is_empty() && s.title.is_empty())).count()
    }

    /// The index as a script. JSON is valid JavaScript; `</` is escaped so
    /// no text can close a `<script>` element it might be inlined in.
    pub fn to_script(&self) -> String {
        let json = serde_json::to_string(self).expect("the index serializes");
        format!("window.{GLOBAL}={};\n", json.replace("</", "<\\/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_sets_the_global_with_every_section() {
        let mut index = SearchIndex::default();
        index.add(
            "Results",
            "results.html",
            vec![
                Section { anchor: Some("table".into()), title: "Table".into(), text: "rows </script>".into() },
                Section { anchor: None, title: String::new(), text: String::new() },
            ],
        );
        index.add("Home", "./", vec![Section { anchor: None, title: String::new(), text: "Welcome".into() }]);
        assert_eq!(index.sections(), 2);
        let script = index.to_script();
        assert!(script.starts_with("window.vaultbenchSearchIndex={"), "{script}");
        assert!(!script.contains("</script>"), "{script}");
        let json: serde_json::Value = serde_json::from_str(
            script.trim_end().trim_start_matches("window.vaultbenchSearchIndex=").trim_end_matches(';'),
        )
        .unwrap();
        assert_eq!(json["pages"][1], serde_json::json!(["Home", "./"]));
        assert_eq!(json["sections"][0], serde_json::json!([0, "table", "Table", "rows </script>"]));
        assert_eq!(json["sections"][1], serde_json::json!([1, "", "", "Welcome"]));
    }
}
