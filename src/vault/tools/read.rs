//! The reading tools: `list_files`, `read_file`, `find_files_by_name`,
//! `find_files_by_content`. They never change the vault.

use serde_json::{Value, json};

use super::{children, schema, walk_files};
use crate::score::jsregex::{JsRegex, MAX_PATTERN_LEN};
use crate::score::sandbox;
use crate::vault::{Args, Tool, Vault};

pub struct ListFiles;

impl Tool for ListFiles {
    fn name(&self) -> &'static str {
        "list_files"
    }
    fn description(&self) -> &'static str {
        "List a folder of the vault. Entries are vault paths; folders end with `/`. Use \"\" for the vault root \
         and recursive=true to list every file below the folder."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({
                "path": {"type": "string", "description": "Folder to list, relative to the vault root; \"\" for the root."},
                "recursive": {"type": "boolean", "description": "List every file below the folder (default false)."}
            }),
            &["path"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let path = vault.resolve(args.string("path")?)?;
        let recursive = args.bool_or("recursive", false)?;
        match std::fs::metadata(&path.abs) {
            Err(_) => return Err(format!("folder `{}` not found", path.rel)),
            Ok(m) if !m.is_dir() => {
                return Err(format!("`{}` is a file, not a folder: use read_file to read it", path.rel));
            }
            Ok(_) => {}
        }
        let entries: Vec<String> = if recursive {
            walk_files(vault, &path.abs)?.into_iter().map(|(rel, _)| rel).collect()
        } else {
            children(vault, &path.abs)?
        };
        Ok(json!({"path": path.rel, "entries": entries}))
    }
}

pub struct ReadFile;

impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }
    fn description(&self) -> &'static str {
        "Read the whole text of a note (the .md extension is optional). A folder path lists the folder instead."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({"path": {"type": "string", "description": "Vault path of the note, e.g. eval-scratch/ideas.md."}}),
            &["path"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let path = vault.resolve_note(args.string("path")?)?;
        if path.abs.is_dir() {
            return Ok(json!({"path": path.rel, "entries": children(vault, &path.abs)?}));
        }
        let content = vault.read_text(&path.abs, &path.rel)?;
        Ok(json!({"path": path.rel, "content": content}))
    }
}

pub struct FindFilesByName;

impl Tool for FindFilesByName {
    fn name(&self) -> &'static str {
        "find_files_by_name"
    }
    fn description(&self) -> &'static str {
        "Find files by name. `*` matches any characters and `?` one, case-insensitively, against the file name \
         (against the whole vault path when the pattern contains `/`); a pattern without wildcards matches any \
         path containing it."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({
                "pattern": {"type": "string", "description": "e.g. *.md, meeting*, budget"},
                "limit": {"type": "number", "description": "Most files to return (default 50)."}
            }),
            &["pattern"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let pattern = args.string("pattern")?;
        let limit = args.count_or("limit", 50)?;
        if pattern.trim().is_empty() {
            return Err("the pattern is empty: give part of a file name, or a wildcard pattern like *.md".into());
        }
        // Wildcard matching costs pattern length times path length per file.
        let len = pattern.chars().count();
        if len > MAX_PATTERN_LEN {
            return Err(format!("the pattern is {len} characters long; the limit is {MAX_PATTERN_LEN}"));
        }
        let lower = pattern.to_lowercase();
        let wildcard = lower.contains(['*', '?']);
        let mut files = Vec::new();
        for (rel, _) in walk_files(vault, vault.root())? {
            vault.check_time()?;
            let rel_lower = rel.to_lowercase();
            let found = if !wildcard {
                rel_lower.contains(&lower)
            } else if lower.contains('/') {
                wildcard_match(&lower, &rel_lower)
            } else {
                wildcard_match(&lower, rel_lower.rsplit('/').next().unwrap_or(&rel_lower))
            };
            if found {
                files.push(rel);
            }
        }
        let truncated = files.len() > limit;
        files.truncate(limit);
        Ok(json!({"pattern": pattern, "files": files, "truncated": truncated}))
    }
}

/// `*` any run of characters, `?` exactly one; the whole text must match.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Greedy matching with backtracking to the last `*`: linear in practice.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

pub struct FindFilesByContent;

/// Matches reported per file; the count says how many there were.
const MAX_MATCHES_PER_FILE: usize = 20;

/// Characters of one line shown in a match (a note may be one long line).
const MAX_LINE_CHARS: usize = 500;

impl Tool for FindFilesByContent {
    fn name(&self) -> &'static str {
        "find_files_by_content"
    }
    fn description(&self) -> &'static str {
        "Search the text of every file for a query (case-insensitive unless caseSensitive; a JavaScript regular \
         expression with useRegex). Returns matching lines with their line numbers and surrounding lines."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({
                "query": {"type": "string", "description": "Text (or regular expression) to find."},
                "caseSensitive": {"type": "boolean", "description": "Match case exactly (default false)."},
                "useRegex": {"type": "boolean", "description": "Treat the query as a JavaScript regular expression (default false)."},
                "limit": {"type": "number", "description": "Most files to return (default 50)."},
                "contextLines": {"type": "number", "description": "Lines shown before and after each match (default 2, at most 5)."}
            }),
            &["query"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let query = args.string("query")?;
        let case_sensitive = args.bool_or("caseSensitive", false)?;
        let use_regex = args.bool_or("useRegex", false)?;
        let limit = args.count_or("limit", 50)?;
        let context = args.count_or("contextLines", 2)?.min(5);
        if query.is_empty() {
            return Err("the query is empty".into());
        }
        let flags = if case_sensitive { None } else { Some("i") };
        if use_regex {
            // Compiling is quick and safe here; matching runs under a deadline.
            JsRegex::new(query, flags).map_err(|e| e.to_string())?;
        }
        let lower = query.to_lowercase();
        // What the files may take of the one tool result's cap.
        let mut room = vault.limits().max_tool_result_bytes.saturating_sub(2 * query.len() + 256);
        let mut files = Vec::new();
        let mut truncated = false;
        for (rel, abs) in walk_files(vault, vault.root())? {
            vault.check_time()?;
            // Files that are not text are simply not searchable.
            let Ok(text) = vault.read_text(&abs, &rel) else { continue };
            let hits: Vec<usize> = if use_regex {
                sandbox::matching_lines(query, flags, &text, &vault.regex_budget())
                    .map_err(|e| format!("{e} (while searching `{rel}`)"))?
            } else {
                let found = |line: &str| {
                    if case_sensitive { line.contains(query) } else { line.to_lowercase().contains(&lower) }
                };
                text.lines().enumerate().filter(|(_, line)| found(line)).map(|(i, _)| i).collect()
            };
            if hits.is_empty() {
                continue;
            }
            if files.len() == limit {
                truncated = true;
                break;
            }
            let lines: Vec<&str> = text.lines().collect();
            let matches: Vec<Value> = hits
                .iter()
                .take(MAX_MATCHES_PER_FILE)
                .map(|&i| {
                    let from = i.saturating_sub(context);
                    let to = (i + context).min(lines.len() - 1);
                    let around: Vec<String> =
                        (from..=to).map(|j| format!("{}: {}", j + 1, shown_line(lines[j]))).collect();
                    json!({"line": i + 1, "text": shown_line(lines[i]), "context": around})
                })
                .collect();
            let mut entry = json!({"path": rel, "matches": matches});
            if hits.len() > MAX_MATCHES_PER_FILE {
                entry["total_matches"] = json!(hits.len());
            }
            let size = crate::jsnum::json_len(&entry);
            if size > room {
                truncated = true;
                break;
            }
            room -= size;
            files.push(entry);
        }
        Ok(json!({"query": query, "files": files, "truncated": truncated}))
    }
}

/// A line as shown in a result, cut after [`MAX_LINE_CHARS`] characters.
fn shown_line(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => format!("{}… ({} characters in all)", &line[..cut], line.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::tools::testing::TestVault;

    fn vault() -> TestVault {
        TestVault::new(&[
            ("eval-scratch/Budget 2026.md", "# Budget\nHalverston: 88,000 marks\napproved\n"),
            ("eval-scratch/notes.md", "one\ntwo\nthree HALVERSTON\nfour\nfive\nsix\n"),
            ("eval-scratch/sub/deep.md", "deep note\n"),
            ("eval-scratch/.hidden.md", "Halverston secret\n"),
            ("top.md", "top\n"),
        ])
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_are_refused_never_merged() {
        use std::os::unix::ffi::OsStrExt;
        let v = TestVault::new(&[("notes/b.md", "b")]);
        for bytes in [&b"notes/a\xff.md"[..], b"notes/a\xfe.md"] {
            std::fs::write(v.dir.path().join(std::ffi::OsStr::from_bytes(bytes)), "x").unwrap();
        }
        for (tool, args) in [
            ("list_files", json!({"path": "notes"})),
            ("list_files", json!({"path": "notes", "recursive": true})),
            ("find_files_by_name", json!({"pattern": "a"})),
            ("find_files_by_content", json!({"query": "x"})),
        ] {
            let err = v.err(tool, args);
            assert!(err.contains("not valid UTF-8") && err.contains("notes/a\u{fffd}.md"), "{tool}: {err}");
        }
        // A name written with U+FFFD is another name, not either of them.
        assert!(v.err("read_file", json!({"path": "notes/a\u{fffd}.md"})).contains("not found"));
        assert_eq!(v.ok("read_file", json!({"path": "notes/b.md"}))["content"], "b");
    }

    #[test]
    fn list_files_children_and_recursive() {
        let v = vault();
        let d = v.ok("list_files", json!({"path": ""}));
        assert_eq!(d, json!({"path": "", "entries": ["eval-scratch/", "top.md"]}));
        let d = v.ok("list_files", json!({"path": "eval-scratch"}));
        assert_eq!(d["entries"], json!(["eval-scratch/Budget 2026.md", "eval-scratch/notes.md", "eval-scratch/sub/"]));
        let d = v.ok("list_files", json!({"path": "/", "recursive": true}));
        assert_eq!(
            d["entries"],
            json!(["eval-scratch/Budget 2026.md", "eval-scratch/notes.md", "eval-scratch/sub/deep.md", "top.md"])
        );
        assert!(v.err("list_files", json!({"path": "nope"})).contains("not found"));
        assert!(v.err("list_files", json!({"path": "top.md"})).contains("use read_file"));
        assert!(v.err("list_files", json!({})).contains("missing required parameter `path`"));
    }

    #[test]
    fn read_file_with_optional_extension_and_folders() {
        let v = vault();
        let d = v.ok("read_file", json!({"path": "eval-scratch/notes"}));
        assert_eq!(d["path"], "eval-scratch/notes.md");
        assert!(d["content"].as_str().unwrap().starts_with("one\n"));
        let d = v.ok("read_file", json!({"path": "eval-scratch/sub"}));
        assert_eq!(d["entries"], json!(["eval-scratch/sub/deep.md"]));
        assert_eq!(
            v.err("read_file", json!({"path": "eval-scratch/missing.md"})),
            "file `eval-scratch/missing.md` not found"
        );
        std::fs::write(v.dir.path().join("bin.dat"), [0xff, 0xfe, 0]).unwrap();
        assert!(v.err("read_file", json!({"path": "bin.dat"})).contains("not a text file"));
    }

    #[test]
    fn find_by_name_wildcards_and_substrings() {
        let v = vault();
        let d = v.ok("find_files_by_name", json!({"pattern": "*.MD"}));
        assert_eq!(d["files"].as_array().unwrap().len(), 4);
        assert_eq!(d["truncated"], false);
        let d = v.ok("find_files_by_name", json!({"pattern": "budget"}));
        assert_eq!(d["files"], json!(["eval-scratch/Budget 2026.md"]));
        let d = v.ok("find_files_by_name", json!({"pattern": "n?tes.md"}));
        assert_eq!(d["files"], json!(["eval-scratch/notes.md"]));
        let d = v.ok("find_files_by_name", json!({"pattern": "eval-scratch/*/*.md"}));
        assert_eq!(d["files"], json!(["eval-scratch/sub/deep.md"]));
        let d = v.ok("find_files_by_name", json!({"pattern": "*", "limit": 2}));
        assert_eq!((d["files"].as_array().unwrap().len(), d["truncated"].clone()), (2, json!(true)));
        assert!(v.err("find_files_by_name", json!({"pattern": " "})).contains("empty"));
        let e = v.err("find_files_by_name", json!({"pattern": "*a".repeat(1_500)}));
        assert!(e.contains("3000 characters long; the limit is 2048"), "{e}");
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("a*b?c", "axxbyc"));
        assert!(wildcard_match("*", ""));
        assert!(!wildcard_match("a*b", "ac"));
        assert!(wildcard_match("*.md", "x.y.md"));
        assert!(!wildcard_match("?", ""));
    }

    #[test]
    fn reads_and_searches_skip_files_over_the_read_cap() {
        let limits = crate::limits::Limits { max_read_bytes: 100, ..Default::default() };
        let v = TestVault::new(&[("big.md", &"needle\n".repeat(20)), ("small.md", "needle\n")]).limited(&limits);
        let e = v.err("read_file", json!({"path": "big.md"}));
        assert_eq!(e, "`big.md` is too large to read (140 bytes; the limit is 100)");
        let d = v.ok("find_files_by_content", json!({"query": "needle"}));
        assert_eq!(d["files"].as_array().unwrap().len(), 1);
        assert_eq!(d["files"][0]["path"], "small.md");
    }

    #[test]
    fn search_results_stay_within_the_result_cap() {
        let limits = crate::limits::Limits { max_tool_result_bytes: 3_000, ..Default::default() };
        let long_line = format!("needle {}\n", "z".repeat(5_000));
        let files: Vec<(String, String)> = (0..20).map(|i| (format!("n{i:02}.md"), long_line.clone())).collect();
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let v = TestVault::new(&refs).limited(&limits);
        let d = v.ok("find_files_by_content", json!({"query": "needle", "limit": 1000}));
        assert!(crate::jsnum::json_len(&d) < 3_000, "{}", crate::jsnum::json_len(&d));
        assert_eq!(d["truncated"], true);
        let shown = d["files"][0]["matches"][0]["text"].as_str().unwrap();
        assert!(shown.ends_with("… (5007 characters in all)") && shown.chars().count() < 540, "{shown}");
    }

    #[test]
    fn tools_stop_when_the_run_is_out_of_time() {
        let v = vault();
        let late = v.vault.with_deadline(std::time::Instant::now());
        let tools = crate::vault::Toolbox::standard();
        for (tool, args) in [
            ("find_files_by_content", json!({"query": "x"})),
            ("find_files_by_name", json!({"pattern": "*"})),
            ("list_files", json!({"path": "", "recursive": true})),
        ] {
            let a = tools.dispatch(&late, &mut crate::vault::LoopDetector::default(), tool, &args, None);
            assert!(a.content["error"].as_str().unwrap().contains("the run's time (timeoutMs) is up"), "{tool}");
        }
    }

    #[test]
    fn find_by_content_plain_case_and_regex() {
        let v = vault();
        let d = v.ok("find_files_by_content", json!({"query": "halverston"}));
        let files = d["files"].as_array().unwrap();
        assert_eq!(files.len(), 2, "hidden files are not searched: {d}");
        assert_eq!(files[0]["path"], "eval-scratch/Budget 2026.md");
        assert_eq!(files[0]["matches"][0]["line"], 2);
        assert_eq!(
            files[0]["matches"][0]["context"],
            json!(["1: # Budget", "2: Halverston: 88,000 marks", "3: approved"])
        );
        let d = v.ok("find_files_by_content", json!({"query": "halverston", "caseSensitive": true}));
        assert_eq!(d["files"], json!([]));
        let d = v.ok("find_files_by_content", json!({"query": "HALVERSTON", "caseSensitive": true, "contextLines": 1}));
        assert_eq!(d["files"][0]["matches"][0]["context"], json!(["2: two", "3: three HALVERSTON", "4: four"]));
        let d = v.ok("find_files_by_content", json!({"query": "^(?=.*marks)\\w+:", "useRegex": true}));
        assert_eq!(d["files"][0]["matches"][0]["text"], "Halverston: 88,000 marks");
        assert!(
            v.err("find_files_by_content", json!({"query": "(", "useRegex": true}))
                .contains("invalid regular expression")
        );
        let d = v.ok("find_files_by_content", json!({"query": "e", "limit": 1}));
        assert_eq!((d["files"].as_array().unwrap().len(), d["truncated"].clone()), (1, json!(true)));
    }
}
