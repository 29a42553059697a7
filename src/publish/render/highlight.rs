//! Syntax highlighting of code blocks at build time, with syntect's
//! Sublime Text grammars (the set bat ships, through `two-face`, which adds
//! TOML, TypeScript and others to syntect's defaults). Pages get no
//! highlighting JavaScript.
//!
//! The regex engine is Oniguruma, not the pure-Rust `fancy-regex`: a
//! grammar's regexes are compiled on first use in every build, and
//! fancy-regex compiles them several times slower (measured on the
//! TypeScript grammar: about 560 ms against 40 to 90 ms), which would make
//! a site with TypeScript samples publish slower than mdBook.
//!
//! Each token becomes `<span class="hl-X">` with one short class (`hl-k`
//! keyword, `hl-s` string...), never an inline colour: the stylesheet gives
//! the colours for the light and the dark theme alike. The class is chosen
//! the way a colour theme chooses a colour (the most specific scope selector
//! wins), by a theme built here whose "colours" are class numbers.
//!
//! The grammars are loaded once per process, on the first code block that
//! names a language, so a site without code pays nothing.
//!
//! Compiling a grammar's regexes is most of the cost of a build with code
//! samples (tens of milliseconds for TypeScript). A build therefore starts
//! highlighting its pages' code blocks (`prepare`) as soon as the pages are
//! read, on background threads, while the rest of the site loads; a page
//! that needs a block another thread is highlighting waits for it rather
//! than doing the work twice. Highlighted blocks are also kept between
//! builds in a cache file (`$VAULTBENCH_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/vaultbench`, else `~/.cache/vaultbench`; an empty
//! `VAULTBENCH_CACHE_DIR` turns it off). An entry is the exact language and
//! code and the HTML they gave, under a key naming this program's version and
//! token classes; a file that does not read is ignored and rewritten, and
//! only the blocks of the latest build are kept.
//!
//! It does not decide where code blocks are; `publish::markdown` calls it.

use std::collections::HashMap;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use syntect::highlighting::{
    Color, HighlightIterator, HighlightState, Highlighter, ScopeSelectors, StyleModifier, Theme, ThemeItem,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::publish::render::escape::escape_html;

/// Token classes: (class suffix, the scope selectors that give it). The
/// stylesheet (`hl-*` rules) colours each one.
const CLASSES: &[(&str, &str)] = &[
    ("c", "comment, punctuation.definition.comment"),
    ("s", "string, markup.raw, constant.other.symbol"),
    ("n", "constant.numeric, constant.language, constant.character, support.constant, constant.other"),
    ("k", "keyword, storage, keyword.control, variable.language"),
    ("o", "keyword.operator, punctuation.separator.key-value"),
    ("f", "entity.name.function, support.function, variable.function, meta.function-call entity.name"),
    (
        "t",
        "entity.name.type, entity.name.class, entity.name.struct, entity.name.enum, support.type, support.class, entity.other.inherited-class",
    ),
    (
        "p",
        "entity.name.tag, meta.mapping.key string, support.type.property-name, meta.object-literal.key, entity.other.attribute-name, variable.other.property, entity.name.section.group-title",
    ),
    ("v", "variable.parameter, variable.other.readwrite.shell, punctuation.definition.variable, variable.other.normal"),
    ("h", "markup.heading, entity.name.section, punctuation.definition.heading"),
    ("i", "markup.inserted"),
    ("d", "markup.deleted, invalid"),
    ("u", "markup.underline.link, markup.bold, markup.italic"),
];

/// Aliases that the grammars' own names and extensions do not cover.
const ALIASES: &[(&str, &str)] = &[
    ("shell", "bash"),
    ("console", "bash"),
    ("shellsession", "bash"),
    ("zsh", "bash"),
    ("jsonc", "json"),
    ("json5", "json"),
    ("yml", "yaml"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("mts", "ts"),
    ("cts", "ts"),
    ("py", "python"),
    ("rs", "rust"),
    ("md", "markdown"),
    ("vue", "html"),
    // Obsidian's Dataview queries read like SQL (TABLE ... FROM ... WHERE).
    ("dataview", "sql"),
    ("dql", "sql"),
];

/// Languages that are plain text on purpose: no grammar, no warning.
pub const PLAIN: &[&str] = &["", "text", "txt", "plain", "plaintext", "output", "log"];

/// Blocks larger than this are shown unhighlighted: highlighting is for
/// reading, and a pathological block must not stall the build.
const MAX_BYTES: usize = 256 * 1024;

struct Grammars {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn grammars() -> &'static Grammars {
    static GRAMMARS: OnceLock<Grammars> = OnceLock::new();
    GRAMMARS.get_or_init(|| {
        let scopes = CLASSES
            .iter()
            .enumerate()
            .map(|(i, (_, selectors))| ThemeItem {
                scope: ScopeSelectors::from_str(selectors).expect("the built-in selectors parse"),
                style: StyleModifier {
                    foreground: Some(Color { r: i as u8 + 1, g: 0, b: 0, a: 255 }),
                    ..StyleModifier::default()
                },
            })
            .collect();
        let mut theme = Theme { scopes, ..Theme::default() };
        theme.settings.foreground = Some(Color { r: 0, g: 0, b: 0, a: 255 });
        Grammars { syntaxes: two_face::syntax::extra_newlines(), theme }
    })
}

/// The language name of a fence info string: its first word, without
/// VitePress's `{1,3}` line marks or `:line-numbers`, lower case.
pub fn language(info: &str) -> String {
    let word = info.split_whitespace().next().unwrap_or("");
    let word = word.split(['{', ':', '[']).next().unwrap_or("");
    word.trim_start_matches('.').to_ascii_lowercase()
}

/// Whether `lang` (from `language`) has a grammar, or is plain on purpose.
pub fn is_known(lang: &str) -> bool {
    PLAIN.contains(&lang) || syntax_for(lang).is_some()
}

fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    if PLAIN.contains(&lang) {
        return None;
    }
    let lang = ALIASES.iter().find(|(alias, _)| *alias == lang).map_or(lang, |(_, to)| to);
    let set = &grammars().syntaxes;
    set.find_syntax_by_token(lang).filter(|s| s.name != "Plain Text")
}

/// The blocks of earlier builds, and whether this build added any.
#[derive(Default)]
struct Cache {
    /// (language, code) -> HTML (`None`: shown plain).
    entries: HashMap<(String, String), Option<String>>,
    /// The keys this process used; only they are saved.
    used: HashSet<(String, String)>,
    /// Blocks some thread is highlighting now; others wait for them (`DONE`).
    running: HashSet<(String, String)>,
    changed: bool,
}

/// Signalled whenever a block leaves `Cache::running`.
static DONE: Condvar = Condvar::new();

fn lock_cache() -> MutexGuard<'static, Cache> {
    cache().lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(serde::Serialize, serde::Deserialize)]
struct CacheFile {
    key: String,
    entries: Vec<(String, String, Option<String>)>,
}

/// The cache file, or `None` when caching is off.
fn cache_file() -> Option<PathBuf> {
    Some(crate::env::cache_dir()?.join("highlighted-blocks.json"))
}

/// What a cached block depends on besides its text: this program's
/// version and this very file (its classes, aliases and how it writes the
/// spans), so that any change to highlighting starts a fresh cache.
fn cache_key() -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    include_str!("highlight.rs").hash(&mut hasher);
    format!("vaultbench {} highlighter {:016x}", env!("CARGO_PKG_VERSION"), hasher.finish())
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| {
        let mut cache = Cache::default();
        let file = cache_file().and_then(|f| std::fs::read(f).ok());
        if let Some(file) = file.and_then(|bytes| serde_json::from_slice::<CacheFile>(&bytes).ok())
            && file.key == cache_key()
        {
            cache.entries = file.entries.into_iter().map(|(l, c, h)| ((l, c), h)).collect();
        }
        Mutex::new(cache)
    })
}

/// Save the blocks this process highlighted or reused, when any is new.
/// A cache that cannot be written only costs speed: errors are ignored.
pub fn save_cache() {
    let Some(path) = cache_file() else { return };
    let mut cache = lock_cache();
    if !cache.changed {
        return;
    }
    let entries =
        cache.used.iter().filter_map(|k| cache.entries.get(k).map(|h| (k.0.clone(), k.1.clone(), h.clone()))).collect();
    let file = CacheFile { key: cache_key(), entries };
    if let Ok(json) = serde_json::to_vec(&file)
        && crate::fsio::write_atomic(&path, &json).is_ok()
    {
        cache.changed = false;
    }
}

/// `code` as highlighted HTML (escaped, with `hl-*` spans), or `None` when
/// the language has no grammar or the block is too large; the caller then
/// shows it escaped and plain.
pub fn highlight(lang: &str, code: &str) -> Option<String> {
    if code.len() > MAX_BYTES || PLAIN.contains(&lang) {
        return None;
    }
    let key = (lang.to_string(), code.to_string());
    let mut cache = lock_cache();
    loop {
        if let Some(html) = cache.entries.get(&key).cloned() {
            cache.used.insert(key);
            return html;
        }
        if !cache.running.contains(&key) {
            break;
        }
        cache = DONE.wait(cache).unwrap_or_else(|e| e.into_inner());
    }
    cache.running.insert(key.clone());
    drop(cache);
    // Should the grammar panic, the block still leaves `running` and the
    // threads waiting for it wake up (and try it themselves).
    let running = Running(Some(key));
    let html = highlight_now(lang, code);
    running.finish(html.clone());
    html
}

/// A block in `Cache::running`, taken out when this is dropped.
struct Running(Option<(String, String)>);

impl Running {
    /// Record the block's HTML and take it out of `running`, at once.
    fn finish(mut self, html: Option<String>) {
        let key = self.0.take().expect("finished once");
        let mut cache = lock_cache();
        cache.running.remove(&key);
        cache.entries.insert(key.clone(), html);
        cache.used.insert(key);
        cache.changed = true;
        drop(cache);
        DONE.notify_all();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(key) = self.0.take() {
            lock_cache().running.remove(&key);
            DONE.notify_all();
        }
    }
}

/// Start highlighting the `(language, code)` blocks that `blocks` finds
/// on background threads, one per processor, so that grammars compile while
/// the rest of the site loads; `highlight` then finds the blocks done, or
/// waits for the one under way. `blocks` runs on the first of those
/// threads, not the caller's. The first block of each language goes first,
/// so that the threads compile different grammars at once rather than wait
/// for one another. Blocks already known are skipped.
pub fn prepare(blocks: impl FnOnce() -> Vec<(String, String)> + Send + 'static) {
    std::thread::spawn(move || {
        let blocks = pending_blocks(blocks().into_iter());
        if blocks.is_empty() {
            return;
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4).min(blocks.len());
        let queue = Arc::new((AtomicUsize::new(0), blocks));
        let work = move || {
            let (next, blocks) = &*queue;
            while let Some((lang, code)) = blocks.get(next.fetch_add(1, Ordering::Relaxed)) {
                highlight(lang, code);
            }
        };
        for _ in 1..threads {
            std::thread::spawn(work.clone());
        }
        work();
    });
}

/// The blocks that need highlighting, each once: the first block of each
/// language, languages with the most code first (grammar compilation is
/// the long part, and a big language is best started early), then the
/// others in page order.
fn pending_blocks(blocks: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let cache = lock_cache();
    let mut seen = HashSet::new();
    let mut bytes: HashMap<String, usize> = HashMap::new();
    let (mut firsts, mut rest) = (Vec::new(), Vec::new());
    for block in blocks {
        let (lang, code) = &block;
        if code.len() > MAX_BYTES
            || PLAIN.contains(&lang.as_str())
            || cache.entries.contains_key(&block)
            || !seen.insert(block.clone())
        {
            continue;
        }
        match bytes.get_mut(lang) {
            Some(n) => *n += code.len(),
            None => {
                bytes.insert(lang.clone(), code.len());
                firsts.push(block);
                continue;
            }
        }
        rest.push(block);
    }
    firsts.sort_by_key(|(lang, _)| std::cmp::Reverse(bytes[lang]));
    firsts.extend(rest);
    firsts
}

fn highlight_now(lang: &str, code: &str) -> Option<String> {
    let syntax = syntax_for(lang)?;
    let g = grammars();
    let highlighter = Highlighter::new(&g.theme);
    let mut parse = ParseState::new(syntax);
    let mut state = HighlightState::new(&highlighter, ScopeStack::new());
    let mut out = String::with_capacity(code.len() * 2);
    // Neighbouring tokens of one class share a span; blanks between them
    // wait to see whether the next token continues the span.
    let mut open: Option<&str> = None;
    let mut blank = String::new();
    for line in LinesWithEndings::from(code) {
        // A grammar that fails on a line (a regex the engine rejects) leaves
        // the block plain rather than half coloured.
        let ops = parse.parse_line(line, &g.syntaxes).ok()?;
        for (style, text) in HighlightIterator::new(&mut state, &ops, line, &highlighter) {
            if text.trim().is_empty() {
                blank.push_str(text);
                continue;
            }
            let class = CLASSES.get((style.foreground.r as usize).wrapping_sub(1)).map(|(name, _)| *name);
            if class != open {
                if open.is_some() {
                    out.push_str("</span>");
                }
                out.push_str(&blank);
                if let Some(name) = class {
                    out.push_str("<span class=\"hl-");
                    out.push_str(name);
                    out.push_str("\">");
                }
                open = class;
            } else {
                out.push_str(&blank);
            }
            blank.clear();
            out.push_str(&escape_html(text));
        }
    }
    if open.is_some() {
        out.push_str("</span>");
    }
    out.push_str(&blank);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_required_languages_have_grammars() {
        let samples = [
            ("sh", "echo \"hi\" # greet\n"),
            ("bash", "export A=1\n"),
            ("json", "{\"a\": 1}\n"),
            ("yaml", "key: value # note\n"),
            ("yml", "- 1\n"),
            ("toml", "[site]\ntitle = \"x\"\n"),
            ("rust", "fn f() {}\n"),
            ("js", "const x = 'a';\n"),
            ("ts", "let n: number = 1;\n"),
            ("typescript", "interface A {}\n"),
            ("python", "def f(): return 1\n"),
            ("markdown", "# Title\n\n*em*\n"),
        ];
        for (lang, code) in samples {
            assert!(syntax_for(lang).is_some(), "{lang}");
            let html = highlight_now(lang, code).unwrap();
            assert!(html.contains("<span class=\"hl-"), "{lang}: {html}");
        }
        assert!(is_known("text") && is_known("") && !is_known("klingon"));
        assert_eq!(highlight("text", "x"), None);
    }

    #[test]
    fn tokens_get_their_class_and_text_is_escaped() {
        let html = highlight_now("rust", "fn main() { let s = \"<b>\"; } // done\n").unwrap();
        assert!(html.contains("<span class=\"hl-k\">fn</span>"), "{html}");
        assert!(html.contains("<span class=\"hl-f\">main</span>"), "{html}");
        assert!(html.contains("&lt;b&gt;"), "{html}");
        assert!(html.contains("<span class=\"hl-c\">// done\n</span>"), "{html}");
        assert!(html.contains("<span class=\"hl-k\">let</span> s"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        let json = highlight_now("json", "{\"key\": 1}\n").unwrap();
        assert!(json.contains("<span class=\"hl-n\">1</span>"), "{json}");
    }

    /// The exact HTML of a sample in each language the docs commonly
    /// use: any change to the grammars, the class table or how spans are
    /// written shows here as a snapshot difference.
    #[test]
    fn highlighted_html_is_unchanged() {
        let samples = [
            (
                "sh",
                "# install\ncargo install vaultbench --locked\nexport VAULTBENCH_CACHE_DIR=\"$HOME/.cache/vb\" && vaultbench publish --out site\n",
            ),
            (
                "json",
                "{\n  \"model\": \"gemini-2.5-flash\",\n  \"runs\": [1, 2.5, -3e2],\n  \"ok\": true,\n  \"note\": null\n}\n",
            ),
            (
                "yaml",
                "# a task\nid: summarize-note\ntags: [vault, \"search\"]\nsteps:\n  - tool: read_file\n    args: { path: notes/a.md }\nlimit: 3 # runs\n",
            ),
            ("toml", "[site]\ntitle = \"Docs\"\nbase_path = \"/vaultbench/\"\nclean_urls = true\nlimit = 10\n"),
            (
                "rust",
                "/// Doc.\n#[derive(Debug)]\npub struct Row<'a> { name: &'a str, n: u32 }\nfn main() -> Result<(), String> {\n    let v: Vec<u8> = vec![1, 2]; // two\n    println!(\"{}\", v.len());\n    Ok(())\n}\n",
            ),
            (
                "js",
                "import { x } from './x.js';\nexport async function run(a, b = 2) {\n  const s = `t ${a}`; // tpl\n  return a?.b ?? [1, 'two', /re+/g];\n}\n",
            ),
            (
                "ts",
                "interface Tool<T = unknown> {\n  name: string;\n  run(args: T): Promise<Result>;\n}\nexport class Reader implements Tool<{ path: string }> {\n  private readonly n = 3;\n  async run({ path }: { path: string }): Promise<Result> {\n    const file = this.app.vault.getFileByPath(path) as TFile | null;\n    if (!file) throw new Error(`no ${path}`);\n    return { ok: true, summary: 'Read 1 file' };\n  }\n}\n",
            ),
            (
                "python",
                "import json\n\n@dataclass\nclass Run:\n    score: float = 0.5\n\ndef load(path: str) -> dict:\n    \"\"\"Read a run.\"\"\"\n    with open(path) as f:  # text\n        return json.load(f)\n",
            ),
            (
                "markdown",
                "---\ntitle: Setup\n---\n# Heading\n\nSome *em*, **bold**, `code` and a [link](guide/x.md).\n\n- item\n> quote\n\n```ts\nconst a: number = 1;\n```\n",
            ),
            (
                "dataview",
                "TABLE file.mtime AS \"Modified\"\nFROM \"notes\"\nWHERE contains(tags, \"#eval\")\nSORT file.mtime DESC\n",
            ),
            ("html", "<!doctype html>\n<p class=\"x\" v-if=\"ok\">Hi &amp; bye</p>\n<script>let a = 1;</script>\n"),
        ];
        let out: String = samples
            .iter()
            .map(|(lang, code)| {
                format!("== {lang}\n{}\n", highlight_now(lang, code).unwrap_or_else(|| "(plain)".into()))
            })
            .collect();
        insta::assert_snapshot!("highlighted_samples", out);
    }

    /// A block another thread is highlighting is waited for, not done
    /// twice: the waiter gets that thread's HTML (a marker here, which
    /// highlighting itself could never give).
    #[test]
    fn a_block_under_way_is_waited_for() {
        let key = ("rust".to_string(), "fn waited_for() {}\n".to_string());
        lock_cache().running.insert(key.clone());
        let running = Running(Some(key.clone()));
        let waiter = std::thread::spawn(move || highlight("rust", "fn waited_for() {}\n"));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the waiter must wait while the block is under way");
        running.finish(Some("<marker>".into()));
        assert_eq!(waiter.join().unwrap().as_deref(), Some("<marker>"));
    }

    /// A thread that gives up on a block (a panicking grammar) releases the
    /// threads waiting for it, which then highlight it themselves.
    #[test]
    fn an_abandoned_block_does_not_hang_its_waiters() {
        let code = "fn abandoned() {}\n";
        let key = ("rust".to_string(), code.to_string());
        lock_cache().running.insert(key.clone());
        let running = Running(Some(key));
        let waiter = std::thread::spawn(move || highlight("rust", code));
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(running);
        assert_eq!(waiter.join().unwrap(), highlight_now("rust", code));
    }

    /// `prepare` highlights the pages' blocks by itself (they are in the
    /// cache before any page asks), and what it leaves there is exactly
    /// what highlighting each block directly gives. Run on the reference
    /// project's docs when present, else on a page of our own.
    #[test]
    fn prepared_blocks_are_the_blocks_highlighted_directly() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/upstream/docs");
        let mut pages: Vec<String> = walkdir::WalkDir::new(&corpus)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .collect();
        if pages.is_empty() {
            println!("the reference corpus ({}) is absent: using a page of our own", corpus.display());
        }
        pages.push(
            "# Prepared\n\n```ts\nconst prepared: number = 1;\n```\n\n```yaml\nprepared: true\n```\n\n```text\nplain\n```\n"
                .into(),
        );
        let blocks: Vec<(String, String)> =
            pages.iter().flat_map(|p| crate::publish::render::markdown::code_blocks(p)).collect();
        let wanted: Vec<&(String, String)> =
            blocks.iter().filter(|(l, c)| !PLAIN.contains(&l.as_str()) && c.len() <= MAX_BYTES).collect();
        assert!(wanted.iter().any(|(l, _)| l == "ts"), "the sample page's blocks are found");
        prepare(move || pages.iter().flat_map(|text| crate::publish::render::markdown::fenced_blocks(text)).collect());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while wanted.iter().any(|k| !lock_cache().entries.contains_key(*k)) {
            assert!(std::time::Instant::now() < deadline, "prepare did not highlight every block");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for (lang, code) in &wanted {
            assert_eq!(highlight(lang, code), highlight_now(lang, code), "{lang} block:\n{code}");
        }
    }

    #[test]
    fn info_strings_give_the_language() {
        assert_eq!(language("ts{1,3}"), "ts");
        assert_eq!(language("JS:line-numbers title"), "js");
        assert_eq!(language("sh [npm]"), "sh");
        assert_eq!(language(""), "");
    }

    #[test]
    fn oversized_blocks_stay_plain() {
        assert_eq!(highlight("json", &"1,".repeat(MAX_BYTES)), None);
    }
}
