//! The tools that change the vault: `write_file`, `append_content`,
//! `update_frontmatter`, `move_file`, `delete_file`, `create_folder`.
//! Every path goes through `Vault::resolve`, so nothing outside is touched.

use std::fs;

use serde_json::{Value, json};

use super::schema;
use crate::vault::{Args, Tool, Vault, VaultPath, frontmatter_edit};

fn create_parents(path: &VaultPath) -> Result<(), String> {
    if let Some(parent) = path.abs.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("cannot create the folders for `{}`: {e}", path.rel))?;
    }
    Ok(())
}

fn not_root(path: &VaultPath, what: &str) -> Result<(), String> {
    if path.is_root() { Err(format!("give a file path to {what}, not the vault root")) } else { Ok(()) }
}

pub struct WriteFile;

impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }
    fn description(&self) -> &'static str {
        "Create a file, or replace its whole content, creating missing folders."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({
                "path": {"type": "string", "description": "Vault path of the file, e.g. eval-scratch/Summary.md."},
                "content": {"type": "string", "description": "The complete new text of the file."},
                "summary": {"type": "string", "description": "Optional: what the change is, in a few words."}
            }),
            &["path", "content"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let path = vault.resolve(args.string("path")?)?;
        let content = args.string("content")?;
        args.opt_string("summary")?;
        not_root(&path, "write")?;
        vault.check_write("`content`", content.len())?;
        if path.abs.is_dir() {
            return Err(format!("`{}` is a folder; give a file path", path.rel));
        }
        let created = !path.exists();
        create_parents(&path)?;
        fs::write(&path.abs, content).map_err(|e| format!("cannot write `{}`: {e}", path.rel))?;
        Ok(json!({"path": path.rel, "bytes": content.len(), "created": created}))
    }
}

pub struct AppendContent;

impl Tool for AppendContent {
    fn name(&self) -> &'static str {
        "append_content"
    }
    fn description(&self) -> &'static str {
        "Append text to the end of an existing file (the .md extension is optional), after a newline if the \
         file does not end with one."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({
                "path": {"type": "string", "description": "Vault path of an existing file."},
                "content": {"type": "string", "description": "Text to add at the end."}
            }),
            &["path", "content"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let path = vault.resolve_note(args.string("path")?)?;
        let content = args.string("content")?;
        not_root(&path, "append to")?;
        vault.check_write("`content`", content.len())?;
        let mut text = vault
            .read_text(&path.abs, &path.rel)
            .map_err(|e| format!("{e}; append_content only extends existing files (use write_file to create one)"))?;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(content);
        fs::write(&path.abs, &text).map_err(|e| format!("cannot write `{}`: {e}", path.rel))?;
        Ok(json!({"path": path.rel, "bytes": text.len()}))
    }
}

pub struct UpdateFrontmatter;

impl Tool for UpdateFrontmatter {
    fn name(&self) -> &'static str {
        "update_frontmatter"
    }
    fn description(&self) -> &'static str {
        "Set one property of a note's YAML frontmatter (created if missing), leaving every other property and \
         the body unchanged. A string holding JSON (\"41200\", \"[\\\"a\\\"]\", \"true\") is stored as that value."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({
                "path": {"type": "string", "description": "Vault path of the note (.md optional)."},
                "key": {"type": "string", "description": "The property name."},
                "value": {"description": "The new value: a string, number, boolean, list or object."}
            }),
            &["path", "key", "value"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let path = vault.resolve_note(args.string("path")?)?;
        let key = args.string("key")?;
        let raw = args.raw("value").ok_or("missing required parameter `value`")?;
        not_root(&path, "update")?;
        let text = vault.read_text(&path.abs, &path.rel)?;
        let value = frontmatter_edit::coerce(raw);
        vault.check_write("the value", crate::jsnum::json_len(&value))?;
        let updated = frontmatter_edit::set(&text, key, &value)?;
        fs::write(&path.abs, updated).map_err(|e| format!("cannot write `{}`: {e}", path.rel))?;
        Ok(json!({"path": path.rel, "key": key, "value": value}))
    }
}

pub struct MoveFile;

impl Tool for MoveFile {
    fn name(&self) -> &'static str {
        "move_file"
    }
    fn description(&self) -> &'static str {
        "Move or rename a file or folder, creating missing folders. The target must not exist."
    }
    fn parameters(&self) -> Value {
        schema(
            json!({
                "sourcePath": {"type": "string", "description": "Current vault path."},
                "targetPath": {"type": "string", "description": "New vault path, including the file name."}
            }),
            &["sourcePath", "targetPath"],
        )
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let from = vault.resolve(args.string("sourcePath")?)?;
        let to = vault.resolve(args.string("targetPath")?)?;
        not_root(&from, "move")?;
        not_root(&to, "move to")?;
        if !from.exists() {
            return Err(format!("`{}` not found", from.rel));
        }
        if to.exists() {
            return Err(format!("`{}` already exists; choose another target or delete it first", to.rel));
        }
        if to.rel.starts_with(&format!("{}/", from.rel)) {
            return Err(format!("cannot move `{}` into itself", from.rel));
        }
        create_parents(&to)?;
        fs::rename(&from.abs, &to.abs).map_err(|e| format!("cannot move `{}` to `{}`: {e}", from.rel, to.rel))?;
        Ok(json!({"from": from.rel, "to": to.rel}))
    }
}

pub struct DeleteFile;

impl Tool for DeleteFile {
    fn name(&self) -> &'static str {
        "delete_file"
    }
    fn description(&self) -> &'static str {
        "Delete a file, or a folder with everything in it."
    }
    fn parameters(&self) -> Value {
        schema(json!({"path": {"type": "string", "description": "Vault path of the file or folder."}}), &["path"])
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let path = vault.resolve(args.string("path")?)?;
        if path.is_root() {
            return Err("the vault root cannot be deleted".into());
        }
        let meta = path.abs.symlink_metadata().map_err(|_| format!("`{}` not found", path.rel))?;
        // A link is removed as a link; `remove_dir_all` does not follow links inside folders.
        let result = if meta.is_dir() { fs::remove_dir_all(&path.abs) } else { fs::remove_file(&path.abs) };
        result.map_err(|e| format!("cannot delete `{}`: {e}", path.rel))?;
        Ok(json!({"path": path.rel, "deleted": true}))
    }
}

pub struct CreateFolder;

impl Tool for CreateFolder {
    fn name(&self) -> &'static str {
        "create_folder"
    }
    fn description(&self) -> &'static str {
        "Create a folder (and any missing parent folders)."
    }
    fn parameters(&self) -> Value {
        schema(json!({"path": {"type": "string", "description": "Vault path of the folder."}}), &["path"])
    }
    fn execute(&self, vault: &Vault, args: &Args) -> Result<Value, String> {
        let path = vault.resolve(args.string("path")?)?;
        not_root(&path, "create")?;
        match path.abs.symlink_metadata() {
            Ok(m) if m.is_dir() => return Ok(json!({"path": path.rel, "created": false})),
            Ok(_) => return Err(format!("`{}` exists and is not a folder", path.rel)),
            Err(_) => {}
        }
        fs::create_dir_all(&path.abs).map_err(|e| format!("cannot create `{}`: {e}", path.rel))?;
        Ok(json!({"path": path.rel, "created": true}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::tools::testing::TestVault;

    fn vault() -> TestVault {
        TestVault::new(&[
            ("eval-scratch/log.md", "- first"),
            ("eval-scratch/book.md", "---\ntitle: Book\nstatus: drafting\n---\nBody\n"),
            ("eval-scratch/sub/a.md", "a"),
        ])
    }

    #[test]
    fn write_file_creates_and_replaces() {
        let v = vault();
        let d = v.ok("write_file", json!({"path": "eval-scratch/new/AI Summary.md", "content": "hi", "summary": "s"}));
        assert_eq!(d, json!({"path": "eval-scratch/new/AI Summary.md", "bytes": 2, "created": true}));
        assert_eq!(v.read("eval-scratch/new/AI Summary.md"), "hi");
        let d = v.ok("write_file", json!({"path": "eval-scratch/log.md", "content": "replaced"}));
        assert_eq!(d["created"], false);
        assert_eq!(v.read("eval-scratch/log.md"), "replaced");
        assert!(v.err("write_file", json!({"path": "eval-scratch/sub", "content": "x"})).contains("is a folder"));
        assert!(v.err("write_file", json!({"path": "", "content": "x"})).contains("vault root"));
        assert!(v.err("write_file", json!({"path": "x.md"})).contains("`content`"));
    }

    #[test]
    fn writes_over_the_cap_are_refused_and_change_nothing() {
        let limits = crate::limits::Limits { max_write_bytes: 1_000, ..Default::default() };
        let v = vault().limited(&limits);
        let big = "b".repeat(1_001);
        for (tool, args) in [
            ("write_file", json!({"path": "eval-scratch/new.md", "content": big})),
            ("write_file", json!({"path": "eval-scratch/log.md", "content": big})),
            ("append_content", json!({"path": "eval-scratch/log.md", "content": big})),
            ("update_memory", json!({"content": big})),
            ("update_frontmatter", json!({"path": "eval-scratch/book.md", "key": "k", "value": big})),
        ] {
            let e = v.err(tool, args);
            assert!(e.contains("one write may add at most 1000 bytes"), "{tool}: {e}");
        }
        assert!(!v.exists("eval-scratch/new.md") && !v.exists(crate::vault::MEMORY_PATH));
        assert_eq!(v.read("eval-scratch/log.md"), "- first");
        assert!(!v.read("eval-scratch/book.md").contains("bbb"));
        v.ok("write_file", json!({"path": "eval-scratch/new.md", "content": "b".repeat(1_000)}));
    }

    #[test]
    fn append_adds_a_newline_first_when_needed() {
        let v = vault();
        let d = v.ok("append_content", json!({"path": "eval-scratch/log", "content": "- second\n"}));
        assert_eq!(d["path"], "eval-scratch/log.md");
        assert_eq!(v.read("eval-scratch/log.md"), "- first\n- second\n");
        v.ok("append_content", json!({"path": "eval-scratch/log.md", "content": "- third"}));
        assert_eq!(v.read("eval-scratch/log.md"), "- first\n- second\n- third");
        assert_eq!(d["bytes"], 17);
        let e = v.err("append_content", json!({"path": "eval-scratch/none.md", "content": "x"}));
        assert!(e.contains("not found") && e.contains("use write_file"), "{e}");
    }

    #[test]
    fn update_frontmatter_sets_typed_values() {
        let v = vault();
        let d = v.ok("update_frontmatter", json!({"path": "eval-scratch/book", "key": "word_count", "value": "41200"}));
        assert_eq!(d, json!({"path": "eval-scratch/book.md", "key": "word_count", "value": 41200}));
        v.ok(
            "update_frontmatter",
            json!({"path": "eval-scratch/book.md", "key": "tags", "value": ["novel", "fiction"]}),
        );
        v.ok("update_frontmatter", json!({"path": "eval-scratch/book.md", "key": "deadline", "value": "2026-09-30"}));
        assert_eq!(
            v.read("eval-scratch/book.md"),
            "---\ntitle: Book\nstatus: drafting\nword_count: 41200\ntags:\n  - novel\n  - fiction\ndeadline: 2026-09-30\n---\nBody\n"
        );
        assert!(v.err("update_frontmatter", json!({"path": "eval-scratch/book.md", "key": "k"})).contains("`value`"));
        assert!(v.err("update_frontmatter", json!({"path": "nope.md", "key": "k", "value": 1})).contains("not found"));
    }

    #[test]
    fn update_frontmatter_refuses_deep_yaml_and_deep_values() {
        let deep = crate::score::frontmatter::nested_note(2_000);
        let v = TestVault::new(&[("eval-scratch/deep.md", &deep), ("eval-scratch/plain.md", "body\n")]);
        let e = v.err("update_frontmatter", json!({"path": "eval-scratch/deep.md", "key": "k", "value": 1}));
        assert!(e.contains("cannot be read") && e.contains("nested deeper than 64 levels"), "{e}");
        assert_eq!(v.read("eval-scratch/deep.md"), deep);
        // A value nested as deep as JSON allows reads back too deep: refused, note unchanged.
        let mut value = json!(0);
        for _ in 0..120 {
            value = json!([value]);
        }
        for value in [value.clone(), json!(value.to_string())] {
            let e = v.err("update_frontmatter", json!({"path": "eval-scratch/plain.md", "key": "k", "value": value}));
            assert!(e.contains("could not set `k` safely") && e.contains("nested deeper"), "{e}");
        }
        assert_eq!(v.read("eval-scratch/plain.md"), "body\n");
    }

    #[test]
    fn move_file_and_its_refusals() {
        let v = vault();
        let d = v
            .ok("move_file", json!({"sourcePath": "eval-scratch/log.md", "targetPath": "eval-scratch/Archive/log.md"}));
        assert_eq!(d, json!({"from": "eval-scratch/log.md", "to": "eval-scratch/Archive/log.md"}));
        assert!(!v.exists("eval-scratch/log.md") && v.read("eval-scratch/Archive/log.md") == "- first");
        v.ok("move_file", json!({"sourcePath": "eval-scratch/sub", "targetPath": "moved"}));
        assert_eq!(v.read("moved/a.md"), "a");
        let e = v.err(
            "move_file",
            json!({"sourcePath": "eval-scratch/book.md", "targetPath": "eval-scratch/Archive/log.md"}),
        );
        assert!(e.contains("already exists"));
        assert!(v.err("move_file", json!({"sourcePath": "gone.md", "targetPath": "x.md"})).contains("not found"));
        assert!(
            v.err("move_file", json!({"sourcePath": "moved", "targetPath": "moved/inner"})).contains("into itself")
        );
    }

    #[test]
    fn delete_file_and_folders() {
        let v = vault();
        assert_eq!(
            v.ok("delete_file", json!({"path": "eval-scratch/log.md"})),
            json!({"path": "eval-scratch/log.md", "deleted": true})
        );
        assert!(!v.exists("eval-scratch/log.md"));
        v.ok("delete_file", json!({"path": "eval-scratch/sub"}));
        assert!(!v.exists("eval-scratch/sub"));
        assert!(v.err("delete_file", json!({"path": "eval-scratch/log.md"})).contains("not found"));
        assert!(v.err("delete_file", json!({"path": "/"})).contains("cannot be deleted"));
        assert!(v.err("delete_file", json!({"path": ""})).contains("cannot be deleted"));
    }

    #[test]
    fn create_folder_reports_whether_it_was_new() {
        let v = vault();
        assert_eq!(v.ok("create_folder", json!({"path": "a/b"})), json!({"path": "a/b", "created": true}));
        assert_eq!(v.ok("create_folder", json!({"path": "a/b/"})), json!({"path": "a/b", "created": false}));
        assert!(v.err("create_folder", json!({"path": "eval-scratch/log.md"})).contains("not a folder"));
    }

    /// Every tool that takes a path refuses ways out of the vault and leaves
    /// everything outside exactly as it was.
    #[cfg(unix)]
    #[test]
    fn nothing_outside_the_vault_is_read_or_touched() {
        let outer = tempfile::tempdir().unwrap();
        let vault_dir = outer.path().join("vault");
        let outside = outer.path().join("outside");
        fs::create_dir_all(vault_dir.join("eval-scratch")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.md"), "secret").unwrap();
        fs::write(vault_dir.join("eval-scratch/mine.md"), "mine").unwrap();
        std::os::unix::fs::symlink(&outside, vault_dir.join("eval-scratch/link")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.md"), vault_dir.join("eval-scratch/file-link.md")).unwrap();
        let vault = Vault::open(&vault_dir).unwrap();
        let tools = crate::vault::Toolbox::standard();
        let passwd_before = fs::read("/etc/passwd").ok();
        let secret_abs = outside.join("secret.md").to_string_lossy().into_owned();
        let escapes = [
            "../../etc/passwd".to_string(),
            "/etc/passwd".to_string(),
            "../outside/secret.md".to_string(),
            secret_abs,
            "eval-scratch/link/secret.md".to_string(),
            "eval-scratch/link".to_string(),
            "eval-scratch/file-link.md".to_string(),
        ];
        for bad in &escapes {
            let calls = [
                ("read_file", json!({"path": bad})),
                ("list_files", json!({"path": bad})),
                ("write_file", json!({"path": bad, "content": "pwned"})),
                ("append_content", json!({"path": bad, "content": "pwned"})),
                ("update_frontmatter", json!({"path": bad, "key": "k", "value": "v"})),
                ("delete_file", json!({"path": bad})),
                ("create_folder", json!({"path": format!("{bad}/x")})),
                ("move_file", json!({"sourcePath": bad, "targetPath": "eval-scratch/stolen.md"})),
                ("move_file", json!({"sourcePath": "eval-scratch/mine.md", "targetPath": bad})),
            ];
            for (tool, args) in calls {
                let answer = tools.dispatch(&vault, &mut crate::vault::LoopDetector::default(), tool, &args, None);
                assert!(!answer.is_success(), "{tool} {args} succeeded: {}", answer.content);
            }
        }
        assert_eq!(fs::read_to_string(outside.join("secret.md")).unwrap(), "secret");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 1, "nothing was created outside");
        assert_eq!(fs::read_dir(outer.path()).unwrap().count(), 2);
        assert_eq!(fs::read_to_string(vault_dir.join("eval-scratch/mine.md")).unwrap(), "mine");
        assert!(!vault_dir.join("eval-scratch/stolen.md").exists());
        assert_eq!(fs::read("/etc/passwd").ok(), passwd_before);
    }
}
