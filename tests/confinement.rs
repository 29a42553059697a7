//! Property test of path confinement: random sequences of tool calls with
//! hostile paths (`..`, absolute, through links out of the vault, unicode,
//! NUL, very long) and hostile contents never change anything outside the
//! vault. Bounded (64 sequences of up to 12 calls) so CI stays fast.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};
use vaultbench::vault::{LoopDetector, Toolbox, Vault};

/// Stands for the absolute path of the folder outside the vault, which only
/// exists once a case runs.
const OUTSIDE: &str = "{OUTSIDE}";

fn path() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "",
        "/",
        ".",
        "..",
        "../outside/secret.md",
        "../../etc/passwd",
        "/etc/passwd",
        "/tmp",
        "~/x.md",
        "C:\\Windows\\x.md",
        "\\\\server\\share\\x.md",
        "eval-scratch/../../outside/secret.md",
        "eval-scratch/./../..",
        "eval-scratch/link-out",
        "eval-scratch/link-out/secret.md",
        "eval-scratch/link-out/new.md",
        "eval-scratch/file-link.md",
        "eval-scratch/link-in/a.md",
        "eval-scratch/link-root/..",
        "eval-scratch/a.md",
        "eval-scratch/sub",
        "eval-scratch/sub/b.md",
        "eval-scratch/é/ü 日本語.md",
        "eval-scratch/\u{202e}gnp.md",
        "eval-scratch/a\0b.md",
        "eval-scratch/ nul\0/..",
        "gemini-scribe/AGENTS.md",
        "{OUTSIDE}",
        "{OUTSIDE}/secret.md",
        "{OUTSIDE}/../outside/new.md",
    ])
    .prop_map(str::to_string);
    let segment = prop::sample::select(vec![
        "..",
        ".",
        "",
        "eval-scratch",
        "link-out",
        "link-in",
        "file-link.md",
        "sub",
        "x.md",
        "é",
        "\0",
        "~",
    ]);
    let joined = prop::collection::vec(segment, 1..6).prop_map(|parts| parts.join("/"));
    let long = (1usize..3, 200usize..5000).prop_map(|(kind, n)| match kind {
        1 => format!("eval-scratch/{}", "a".repeat(n)),
        _ => format!("eval-scratch/{}x.md", "d/".repeat(n / 2)),
    });
    prop_oneof![4 => fixed, 3 => joined, 1 => long]
}

fn content() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("pwned\n".to_string()),
        Just("---\ntitle: x\n---\nbody\0with NUL".to_string()),
        "\\PC{0,64}",
        (1usize..20_000).prop_map(|n| "é".repeat(n)),
    ]
}

fn call() -> impl Strategy<Value = (String, Value)> {
    (0usize..14, path(), path(), content(), content()).prop_map(|(tool, p, q, c, k)| {
        let (name, args) = match tool {
            0 => ("list_files", json!({"path": p, "recursive": true})),
            1 => ("read_file", json!({"path": p})),
            2 => ("find_files_by_name", json!({"pattern": k})),
            3 => ("find_files_by_content", json!({"query": k, "useRegex": c.len() % 2 == 0})),
            4 => ("write_file", json!({"path": p, "content": c})),
            5 => ("append_content", json!({"path": p, "content": c})),
            6 => ("update_frontmatter", json!({"path": p, "key": k, "value": c})),
            7 => ("move_file", json!({"sourcePath": p, "targetPath": q})),
            8 => ("delete_file", json!({"path": p})),
            9 => ("create_folder", json!({"path": p})),
            10 => ("update_memory", json!({"content": c})),
            11 => ("read_memory", json!({})),
            12 => ("recall_sessions", json!({"filePath": p})),
            _ => ("activate_skill", json!({"name": p})),
        };
        (name.to_string(), args)
    })
}

/// Everything below `root`, links not followed: path to kind and content.
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let kind = entry.file_type();
        let what = if kind.is_symlink() {
            format!("link -> {}", std::fs::read_link(entry.path()).unwrap().display())
        } else if kind.is_dir() {
            "folder".to_string()
        } else {
            format!("file {:?}", std::fs::read(entry.path()).unwrap())
        };
        out.insert(rel, what);
    }
    out
}

fn with_outside(v: &Value, outside: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace(OUTSIDE, outside)),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), with_outside(v, outside))).collect()),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn tool_calls_never_change_anything_outside_the_vault(calls in prop::collection::vec(call(), 1..12)) {
        let outer = tempfile::tempdir().unwrap();
        let vault_dir = outer.path().join("vault");
        let outside = outer.path().join("outside");
        std::fs::create_dir_all(vault_dir.join("eval-scratch/sub")).unwrap();
        std::fs::create_dir_all(outside.join("deeper")).unwrap();
        std::fs::write(outside.join("secret.md"), "secret\n").unwrap();
        std::fs::write(outside.join("deeper/also.md"), "also\n").unwrap();
        std::fs::write(vault_dir.join("eval-scratch/a.md"), "---\ntitle: a\n---\nA\n").unwrap();
        std::fs::write(vault_dir.join("eval-scratch/sub/b.md"), "B\n").unwrap();
        let link = |target: &Path, name: &str| std::os::unix::fs::symlink(target, vault_dir.join(name)).unwrap();
        link(&outside, "eval-scratch/link-out");
        link(&outside.join("secret.md"), "eval-scratch/file-link.md");
        link(&vault_dir.join("eval-scratch/sub"), "eval-scratch/link-in");
        link(outer.path(), "eval-scratch/link-root");
        let before = snapshot(&outside);
        let outer_before: Vec<_> = std::fs::read_dir(outer.path()).unwrap().map(|e| e.unwrap().file_name()).collect();

        let vault = Vault::open(&vault_dir).unwrap();
        let tools = Toolbox::standard();
        let mut loops = LoopDetector::default();
        let outside_text = outside.to_string_lossy().into_owned();
        for (name, args) in &calls {
            let args = with_outside(args, &outside_text);
            let answer = tools.dispatch(&vault, &mut loops, name, &args, None);
            prop_assert!(answer.content.get("success").is_some(), "{name}: {}", answer.content);
        }

        prop_assert_eq!(snapshot(&outside), before);
        let mut outer_after: Vec<_> = std::fs::read_dir(outer.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        outer_after.sort();
        let mut outer_before = outer_before;
        outer_before.sort();
        prop_assert_eq!(outer_after, outer_before, "nothing appears next to the vault");
    }
}
