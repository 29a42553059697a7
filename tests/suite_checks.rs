//! The suite's check sources (evals/checks/) and the task files compiled
//! from them, through the real binary and the library: `suite compile
//! --check` holds on the committed suite and names what differs when a task
//! file drifts; no task carries a hand-written pattern longer than the
//! compiler allows outside its escape hatch; `suite new` scaffolds a task a
//! maintainer can compile and check; every task file validates against
//! evals/task.schema.json, whose fields are the task format's.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};
use vaultbench::checks::compile::RAW_LIMIT;
use vaultbench::format::task::{
    ASSERTION_FIELDS, ASSERTION_TYPES, MATCHER_FIELDS, MATCHER_TYPES, Matcher, TASK_FIELDS, Task, VaultAssertion,
};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tasks() -> Vec<(PathBuf, Task)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("evals/tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files.into_iter().map(|f| (f.clone(), vaultbench::fsio::read_json(&f).unwrap())).collect()
}

/// A copy of the suite's tasks, checks and fixtures (what compiling reads).
fn suite_copy(dir: &Path) -> PathBuf {
    let root = dir.join("evals");
    for sub in ["tasks", "checks", "fixtures"] {
        let from = repo().join("evals").join(sub);
        for entry in walkdir::WalkDir::new(&from) {
            let entry = entry.unwrap();
            let to = root.join(sub).join(entry.path().strip_prefix(&from).unwrap());
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::copy(entry.path(), &to).unwrap();
            }
        }
    }
    root
}

#[test]
fn the_committed_tasks_agree_with_their_sources_and_drift_is_named() {
    let out = vaultbench(&["suite", "compile", "--check"], &repo());
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("task files agree with their check sources"), "{}", stdout(&out));

    let dir = tempfile::tempdir().unwrap();
    let root = suite_copy(dir.path());
    let file = root.join("tasks/ferry-read-toll.json");
    let mut task: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    task["outputMatchers"][0]["value"] = json!("Toll: 9");
    std::fs::write(&file, serde_json::to_string_pretty(&task).unwrap()).unwrap();
    let suite = root.to_str().unwrap();
    let out = vaultbench(&["suite", "compile", "--check", "--suite", suite], dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("ferry-read-toll.json: outputMatchers[0] differs from its source"), "{text}");
    // However many tasks the suite has: a maintainer adding one changes the count.
    let n = tasks().len();
    assert!(text.contains(&format!("1 of {n} task files differ from their check sources")), "{text}");
    // Compiling writes the task back; then it agrees again.
    let out = vaultbench(&["suite", "compile", "--suite", suite], dir.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let compiled = format!("{n} task sources compiled, 1 task files rewritten");
    assert!(stdout(&out).contains(&compiled), "{}", stdout(&out));
    let out = vaultbench(&["suite", "compile", "--check", "--suite", suite], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // A broken source is an error naming its file and field, never a panic.
    std::fs::write(root.join("checks/ferry-read-toll.toml"), "[[line]]\nlabel = \"Toll\"\nnumber = \"nine\"\n")
        .unwrap();
    std::fs::write(root.join("checks/no-such-task.toml"), "states = [{ text = \"x\" }]\n").unwrap();
    std::fs::write(root.join("checks/ferry-list-dockside.toml"), "[[line]\n").unwrap();
    let out = vaultbench(&["suite", "compile", "--check", "--suite", suite], dir.path());
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for needle in [
        "checks/ferry-read-toll.toml: error at `line[0].number`: `nine` is not a number",
        "checks/no-such-task.toml: error: no task `no-such-task` for this source",
        "checks/ferry-list-dockside.toml: error: TOML parse error at line 1",
    ] {
        assert!(text.contains(needle), "{needle}\n{text}");
    }
}

#[test]
fn no_task_carries_a_hand_written_pattern_longer_than_the_escape_hatch_allows() {
    let root = repo().join("evals");
    let mut long = 0;
    for (file, task) in tasks() {
        let source_file = root.join("checks").join(format!("{}.toml", task.id));
        let source = vaultbench::checks::compile::parse(&std::fs::read_to_string(&source_file).unwrap()).unwrap();
        let raw: Vec<&str> = source.raw.iter().map(|r| r.regex.as_str()).collect();
        for r in &raw {
            assert!(
                r.chars().count() <= RAW_LIMIT,
                "{}: a raw pattern over {RAW_LIMIT} characters",
                source_file.display()
            );
        }
        let compiled = vaultbench::suite::compile::compile_task(&root, &task).unwrap().unwrap();
        let patterns = task
            .output_matchers
            .iter()
            .filter_map(|m| match m {
                Matcher::Regex { value, .. } => Some(value.as_slice()),
                _ => None,
            })
            .chain(task.vault_assertions.iter().filter_map(|a| match a {
                VaultAssertion::FileMatches { value, .. } => Some(value.as_slice()),
                _ => None,
            }))
            .flatten();
        for p in patterns {
            let n = p.chars().count();
            if n > RAW_LIMIT {
                long += 1;
                // Long patterns are the compiler's, written from a rule: in
                // the compiled source and not one of its raw patterns.
                assert!(!raw.contains(&p.as_str()), "{}: a hand-written pattern of {n} characters", file.display());
                let from_rule = compiled
                    .output_matchers
                    .iter()
                    .any(|m| matches!(m, Matcher::Regex { value, .. } if value.as_slice() == [p.clone()]))
                    || compiled.vault_assertions.iter().any(
                        |a| matches!(a, VaultAssertion::FileMatches { value, .. } if value.as_slice() == [p.clone()]),
                    );
                assert!(from_rule, "{}: a pattern of {n} characters no rule of its source writes", file.display());
            }
        }
    }
    assert!(long > 0, "the suite has compiled patterns over {RAW_LIMIT} characters; the test reads them");
}

#[test]
fn suite_new_scaffolds_a_task_that_compiles_and_says_what_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let root = suite_copy(dir.path());
    let suite = root.to_str().unwrap();
    let out = vaultbench(&["suite", "new", "ferry-bell-times", "--suite", suite], dir.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    for file in [
        "tasks/ferry-bell-times.json",
        "checks/ferry-bell-times.toml",
        "fixtures/ferry-bell-times/README.md",
        "references/ferry-bell-times.json",
    ] {
        assert!(root.join(file).is_file(), "{file}");
        assert!(stdout(&out).contains(file), "{}", stdout(&out));
    }
    assert!(root.join("alternatives/ferry-bell-times").is_dir());
    // Nothing is overwritten, and an id must be one.
    let again = vaultbench(&["suite", "new", "ferry-bell-times", "--suite", suite], dir.path());
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("already exists"), "{}", stderr(&again));
    let bad = vaultbench(&["suite", "new", "Ferry Bell", "--suite", suite], dir.path());
    assert!(stderr(&bad).contains("is not a task id"), "{}", stderr(&bad));
    // The scaffold compiles as it stands.
    let out = vaultbench(&["suite", "compile", "--suite", suite], dir.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let task: Task = vaultbench::fsio::read_json(&root.join("tasks/ferry-bell-times.json")).unwrap();
    assert_eq!(
        task.output_matchers.len(),
        3,
        "a text line without others: that it gives the text, without a doubt and without a second value after a slash"
    );
    assert!(matches!(task.vault_assertions[..], [VaultAssertion::NothingElseChanged { .. }]));
    // Its reference solves it; the check names the answers it still needs.
    let out = vaultbench(
        &["suite", "check", "--suite", suite, "--references", root.join("references").to_str().unwrap()],
        dir.path(),
    );
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("corpus: ferry-bell-times: 0 correct and 0 wrong alternatives"), "{text}");
    assert!(!text.contains("ferry-bell-times: the reference does not solve it"), "{text}");
}

/// Enough of JSON Schema for our schema: types, properties, required,
/// additionalProperties, enum, const, pattern, oneOf, items and local $ref.
fn validate(schema: &Value, defs: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local refs only");
        return validate(&defs[name], defs, v, at, errors);
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let fits = options
            .iter()
            .filter(|o| {
                let mut e = Vec::new();
                validate(o, defs, v, at, &mut e);
                e.is_empty()
            })
            .count();
        if fits != 1 {
            errors.push(format!("{at}: fits {fits} of the schema's alternatives, not one"));
        }
        return;
    }
    if let Some(c) = schema.get("const")
        && c != v
    {
        errors.push(format!("{at}: must be {c}"));
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(v)
    {
        errors.push(format!("{at}: {v} is not one of {options:?}"));
    }
    let kind_ok = match schema.get("type").and_then(Value::as_str) {
        Some("object") => v.is_object(),
        Some("array") => v.is_array(),
        Some("string") => v.is_string(),
        Some("integer") => v.is_u64() || v.is_i64(),
        _ => true,
    };
    if !kind_ok {
        errors.push(format!("{at}: not of type {}", schema["type"]));
        return;
    }
    if let (Some(p), Some(s)) = (schema.get("pattern").and_then(Value::as_str), v.as_str())
        && regress::Regex::new(p).unwrap().find(s).is_none()
    {
        errors.push(format!("{at}: {s:?} does not match {p}"));
    }
    if let (Some(items), Some(list)) = (schema.get("items"), v.as_array()) {
        for (i, item) in list.iter().enumerate() {
            validate(items, defs, item, &format!("{at}[{i}]"), errors);
        }
    }
    if let Some(object) = v.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for required in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !object.contains_key(required.as_str().unwrap()) {
                errors.push(format!("{at}: missing {required}"));
            }
        }
        for (key, value) in object {
            match properties.and_then(|p| p.get(key)) {
                Some(s) => validate(s, defs, value, &format!("{at}.{key}"), errors),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{at}: unknown field {key}"))
                }
                None => {}
            }
        }
    }
}

fn schema() -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo().join("evals/task.schema.json")).unwrap()).unwrap()
}

#[test]
fn every_task_validates_against_the_schema() {
    let schema = schema();
    let defs = &schema["$defs"];
    for (file, _) in tasks() {
        let task: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut errors = Vec::new();
        validate(&schema, defs, &task, "task", &mut errors);
        assert!(errors.is_empty(), "{}: {errors:#?}", file.display());
    }
    // The schema is no rubber stamp: a misspelt field or tier fails it.
    let bad = json!({"id": "x", "description": "d", "userMessage": "u", "difficulty": "T5", "category": "c",
        "outputMatchers": [{"type": "regex", "value": "a", "flag": "i"}]});
    let mut errors = Vec::new();
    validate(&schema, defs, &bad, "task", &mut errors);
    assert_eq!(errors.len(), 2, "{errors:#?}");
}

#[test]
fn the_schema_names_exactly_the_fields_of_the_task_format() {
    let schema = schema();
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let sorted = |v: &[&str]| -> Vec<String> {
        let mut k: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        k.sort();
        k
    };
    assert_eq!(keys(&schema["properties"]), sorted(TASK_FIELDS));
    // The `type` values and the field names of a list of alternatives.
    let types_and_fields = |alternatives: &Value| -> (Vec<String>, Vec<String>) {
        let (mut types, mut fields) = (Vec::new(), Vec::new());
        for a in alternatives.as_array().unwrap() {
            let t = &a["properties"]["type"];
            match t.get("const") {
                Some(c) => types.push(c.as_str().unwrap().to_string()),
                None => types.extend(t["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string())),
            }
            fields.extend(keys(&a["properties"]));
        }
        types.sort();
        fields.sort();
        fields.dedup();
        (types, fields)
    };
    assert_eq!(types_and_fields(&schema["$defs"]["matcher"]["oneOf"]), (sorted(MATCHER_TYPES), sorted(MATCHER_FIELDS)));
    assert_eq!(
        types_and_fields(&schema["$defs"]["assertion"]["oneOf"]),
        (sorted(ASSERTION_TYPES), sorted(ASSERTION_FIELDS))
    );
    let tools: Vec<String> =
        schema["$defs"]["tool"]["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(tools, vaultbench::suite::TOOL_NAMES);
}
