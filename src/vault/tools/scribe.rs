//! The plugin's own folders: memory (`gemini-scribe/AGENTS.md`), past agent
//! sessions (`gemini-scribe/Agent-Sessions/`) and skills
//! (`gemini-scribe/Skills/<name>/SKILL.md`). The system prompt reads memory
//! and skills through [`memory_text`] and [`skills`] too.

use std::fs;

use serde_json::{Value, json};

use super::{schema, walk_files};
use crate::score::frontmatter;
use crate::vault::{Args, MEMORY_PATH, SESSIONS_DIR, SKILLS_DIR, Tool, Vault};

/// The memory file's text, when the vault has one.
pub fn memory_text(vault: &Vault) -> Option<String> {
    vault.read_text(&vault.root().join(MEMORY_PATH), MEMORY_PATH).ok()
}

/// A skill: its folder name and the `description` of its frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
}

/// The vault's skills, sorted by name.
pub fn skills(vault: &Vault) -> Vec<Skill> {
    let Ok(entries) = fs::read_dir(vault.root().join(SKILLS_DIR)) else { return Vec::new() };
    let mut out: Vec<Skill> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = vault.read_text(&e.path().join("SKILL.md"), "SKILL.md").ok()?;
            let description = frontmatter::parse(&text)
                .ok()
                .flatten()
                .and_then(|fm| fm.get("description").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_default();
            Some(Skill { name, description })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// A note's text without its frontmatter block.
fn body(text: &str) -> &str {
    match frontmatter::block(text) {
        None => text,
        Some(block) => {
            let start = block.as_ptr() as usize - text.as_ptr() as usize + block.len();
            let rest = &text[start..];
            // Skip the closing `---` line.
            rest.split_once('\n').map_or("", |(_, after)| after)
        }
    }
}

pub struct ReadMemory;

impl Tool for ReadMemory {
    fn name(&self) -> &'static str {
        "read_memory"
    }
    fn description(&self) -> &'static str {
        "Read the vault's memory file (gemini-scribe/AGENTS.md): durable preferences and facts about this vault."
    }
    fn parameters(&self) -> Value {
        schema(json!({}), &[])
    }
    fn execute(&self, vault: &Vault, _args: &Args) -> Result<Value, String> {
        Ok(match memory_text(vault) {
            Some(content) => json!({"path": MEMORY_PATH, "content": content}),
            None => json!({"path": MEMORY_PATH, "content": "", "note": "there is no memory yet"}),
        })
    }
}

pub struct UpdateMemory;

impl Tool for UpdateMemory {
    fn name(&self) -> &'static str {
        "update_memory"
    }
    fn description(&self) -> &'static str {
        "Remember something for all future work in this vault: appends the text as a new line of \
         gemini-scribe/AGENTS.md."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({"content": {"type": "string", "description": "The fact or preference to remember."}}),
            &["content"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let content = args.string("content")?.trim();
        if content.is_empty() {
            return Err("nothing to remember: `content` is blank".into());
        }
        vault.check_write("`content`", content.len())?;
        let path = vault.resolve(MEMORY_PATH)?;
        let mut text = match path.abs.symlink_metadata() {
            Ok(_) => vault.read_text(&path.abs, MEMORY_PATH)?,
            Err(_) => String::new(),
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(content);
        text.push('\n');
        if let Some(parent) = path.abs.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("cannot create the memory folder: {e}"))?;
        }
        fs::write(&path.abs, text).map_err(|e| format!("cannot write the memory file: {e}"))?;
        Ok(json!({"path": MEMORY_PATH}))
    }
}

pub struct RecallSessions;

impl Tool for RecallSessions {
    fn name(&self) -> &'static str {
        "recall_sessions"
    }
    fn description(&self) -> &'static str {
        "Find past agent sessions (gemini-scribe/Agent-Sessions/) by title, by a vault path they mention, or by \
         project. Returns titles and paths, newest first; read a session's file to see what was said."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({
                "query": {"type": "string", "description": "Part of the session title (case-insensitive)."},
                "filePath": {"type": "string", "description": "A vault path the session mentions."},
                "project": {"type": "string", "description": "Part of the session's project."},
                "limit": {"type": "number", "description": "Most sessions to return (default 10)."}
            }),
            &[],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let query = args.opt_string("query")?.map(str::to_lowercase);
        let file_path = args.opt_string("filePath")?;
        let project = args.opt_string("project")?.map(str::to_lowercase);
        let limit = args.count_or("limit", 10)?;
        let dir = vault.resolve(SESSIONS_DIR)?;
        let mut sessions: Vec<(Option<String>, Value)> = Vec::new();
        for (rel, abs) in walk_files(vault, &dir.abs)? {
            if !rel.ends_with(".md") {
                continue;
            }
            let Ok(text) = vault.read_text(&abs, &rel) else { continue };
            let fm = frontmatter::parse(&text).ok().flatten().unwrap_or_default();
            let file_name = rel.rsplit('/').next().unwrap_or(&rel).trim_end_matches(".md").to_string();
            let title = fm.get("title").and_then(Value::as_str).map_or(file_name, str::to_string);
            let created = fm.get("created").map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
            if query.as_ref().is_some_and(|q| !title.to_lowercase().contains(q.as_str())) {
                continue;
            }
            if file_path.is_some_and(|p| !text.contains(p)) {
                continue;
            }
            if let Some(p) = &project {
                let matches = match fm.get("project") {
                    Some(Value::String(s)) => s.to_lowercase().contains(p.as_str()),
                    Some(Value::Array(items)) => {
                        items.iter().filter_map(Value::as_str).any(|s| s.to_lowercase().contains(p.as_str()))
                    }
                    _ => false,
                };
                if !matches {
                    continue;
                }
            }
            sessions.push((created.clone(), json!({"path": rel, "title": title, "created": created})));
        }
        // Newest first; sessions without a date last.
        sessions.sort_by(|a, b| b.0.cmp(&a.0));
        let sessions: Vec<Value> = sessions.into_iter().take(limit).map(|(_, s)| s).collect();
        Ok(json!({"sessions": sessions}))
    }
}

pub struct ActivateSkill;

impl Tool for ActivateSkill {
    fn name(&self) -> &'static str {
        "activate_skill"
    }
    fn description(&self) -> &'static str {
        "Load a skill's instructions by name (one of the skills listed in the system prompt), then follow them."
    }
    fn parameters(&self) -> Value {
        schema(json!({"name": {"type": "string", "description": "The skill's name."}}), &["name"])
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let name = args.string("name")?.trim();
        let available = || {
            let names: Vec<String> = skills(vault).into_iter().map(|s| s.name).collect();
            if names.is_empty() {
                "this vault has no skills".to_string()
            } else {
                format!("available: {}", names.join(", "))
            }
        };
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(format!("`{name}` is not a skill name; {}", available()));
        }
        let path = vault.resolve(&format!("{SKILLS_DIR}/{name}/SKILL.md"))?;
        let text =
            vault.read_text(&path.abs, &path.rel).map_err(|_| format!("unknown skill `{name}`; {}", available()))?;
        Ok(json!({"name": name, "instructions": body(&text)}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::tools::testing::TestVault;

    const SKILL: &str = "---\nname: shipping\ndescription: Formats tracking codes.\n---\n# Steps\n1. Prefix QSC-.\n";

    fn vault() -> TestVault {
        TestVault::new(&[
            ("gemini-scribe/Skills/shipping/SKILL.md", SKILL),
            ("gemini-scribe/Skills/plain/SKILL.md", "no frontmatter\n"),
            (
                "gemini-scribe/Agent-Sessions/old.md",
                "---\ntitle: Greenhouse irrigation planning\ncreated: 2031-03-02 09:15\nproject: [garden]\n---\nWe chose drip lines for eval-scratch/plan.md.\n",
            ),
            (
                "gemini-scribe/Agent-Sessions/new.md",
                "---\ntitle: Budget review\ncreated: 2031-04-01 10:00\nproject: finance\n---\nnothing\n",
            ),
            ("gemini-scribe/Agent-Sessions/untitled.md", "no frontmatter at all\n"),
        ])
    }

    #[test]
    fn memory_is_read_and_appended_line_by_line() {
        let v = vault();
        let d = v.ok("read_memory", json!({}));
        assert_eq!((d["content"].as_str(), d["note"].is_string()), (Some(""), true));
        assert_eq!(
            v.ok("update_memory", json!({"content": "  Use Kestrel for code.  "})),
            json!({"path": MEMORY_PATH})
        );
        v.ok("update_memory", json!({"content": "Second fact"}));
        assert_eq!(v.read(MEMORY_PATH), "Use Kestrel for code.\nSecond fact\n");
        std::fs::write(v.dir.path().join(MEMORY_PATH), "# Memory\n- concise").unwrap();
        v.ok("update_memory", json!({"content": "- more"}));
        assert_eq!(v.read(MEMORY_PATH), "# Memory\n- concise\n- more\n");
        assert_eq!(v.ok("read_memory", json!({}))["content"], "# Memory\n- concise\n- more\n");
        assert!(v.err("update_memory", json!({"content": "   "})).contains("blank"));
    }

    #[test]
    fn sessions_by_title_path_and_project_newest_first() {
        let v = vault();
        let all = v.ok("recall_sessions", json!({}));
        let titles: Vec<&str> =
            all["sessions"].as_array().unwrap().iter().map(|s| s["title"].as_str().unwrap()).collect();
        assert_eq!(titles, ["Budget review", "Greenhouse irrigation planning", "untitled"]);
        let d = v.ok("recall_sessions", json!({"query": "IRRIGATION"}));
        assert_eq!(
            d["sessions"],
            json!([{"path": "gemini-scribe/Agent-Sessions/old.md", "title": "Greenhouse irrigation planning", "created": "2031-03-02 09:15"}])
        );
        assert_eq!(
            v.ok("recall_sessions", json!({"filePath": "eval-scratch/plan.md"}))["sessions"].as_array().unwrap().len(),
            1
        );
        assert_eq!(
            v.ok("recall_sessions", json!({"project": "garden"}))["sessions"][0]["title"],
            "Greenhouse irrigation planning"
        );
        assert_eq!(v.ok("recall_sessions", json!({"project": "fin"}))["sessions"][0]["title"], "Budget review");
        assert_eq!(v.ok("recall_sessions", json!({"limit": 1}))["sessions"].as_array().unwrap().len(), 1);
        let empty = TestVault::new(&[]);
        assert_eq!(empty.ok("recall_sessions", json!({"query": "x"})), json!({"sessions": []}));
    }

    #[test]
    fn deep_frontmatter_in_sessions_and_skills_reads_as_none() {
        let deep = crate::score::frontmatter::nested_note(2_000);
        let v = TestVault::new(&[
            ("gemini-scribe/Agent-Sessions/deep.md", &deep),
            ("gemini-scribe/Skills/deep/SKILL.md", &deep),
        ]);
        let d = v.ok("recall_sessions", json!({}));
        assert_eq!(d["sessions"][0]["title"], "deep");
        assert_eq!(skills(&v.vault), vec![Skill { name: "deep".into(), description: String::new() }]);
        assert_eq!(v.ok("activate_skill", json!({"name": "deep"}))["instructions"], "body\n");
    }

    #[test]
    fn skills_are_listed_and_activated() {
        let v = vault();
        assert_eq!(
            skills(&v.vault),
            vec![
                Skill { name: "plain".into(), description: String::new() },
                Skill { name: "shipping".into(), description: "Formats tracking codes.".into() }
            ]
        );
        let d = v.ok("activate_skill", json!({"name": "shipping"}));
        assert_eq!(d, json!({"name": "shipping", "instructions": "# Steps\n1. Prefix QSC-.\n"}));
        let e = v.err("activate_skill", json!({"name": "shiping"}));
        assert!(e.contains("unknown skill `shiping`") && e.contains("available: plain, shipping"), "{e}");
        assert!(v.err("activate_skill", json!({"name": "../Skills/shipping"})).contains("not a skill name"));
    }
}
