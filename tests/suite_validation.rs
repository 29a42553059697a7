//! Task files: every validation error names the file, position, field and a fix.

use std::path::Path;

use vaultbench::suite::Suite;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const GOOD: &str = r#"{
  "id": "good",
  "description": "d",
  "userMessage": "What is in notes.md?",
  "difficulty": "T1",
  "category": "retrieval",
  "fixture": "world",
  "expectedTools": ["read_file"],
  "outputMatchers": [{ "type": "regex", "value": "(?=.*apple)", "flags": "is" }],
  "vaultAssertions": [{ "type": "fileUnchanged", "path": "eval-scratch/notes.md", "fixture": "notes.md" }]
}"#;

fn suite_with(extra: &[(&str, &str)]) -> (tempfile::TempDir, Result<Suite, String>) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "fixtures/world/notes.md", "apple\n");
    write(dir.path(), "tasks/good.json", GOOD);
    for (rel, text) in extra {
        write(dir.path(), rel, text);
    }
    let loaded = Suite::load(dir.path()).map_err(|e| e.to_string());
    (dir, loaded)
}

fn errors_for(name: &str, text: &str) -> String {
    let (_dir, loaded) = suite_with(&[(&format!("tasks/{name}.json"), text)]);
    loaded.expect_err("the suite must be rejected")
}

#[test]
fn a_good_task_loads_with_defaults() {
    let (_dir, loaded) = suite_with(&[]);
    let suite = loaded.unwrap();
    assert_eq!(suite.tasks.len(), 1);
    assert_eq!(suite.tasks[0].max_turns, 15);
    assert_eq!(suite.tasks[0].timeout_ms, 300_000);
}

#[test]
fn unknown_field_with_did_you_mean_and_position() {
    let text = GOOD.replace("\"expectedTools\"", "\"expectTools\"").replace("\"good\"", "\"typo\"");
    let err = errors_for("typo", &text);
    assert!(err.contains("tasks/typo.json:8:"), "{err}");
    assert!(err.contains("unknown field `expectTools`"), "{err}");
    assert!(err.contains("did you mean `expectedTools`?"), "{err}");
}

#[test]
fn unknown_matcher_field_and_type() {
    let text = GOOD.replace("\"flags\"", "\"flag\"").replace("\"good\"", "\"m\"");
    let err = errors_for("m", &text);
    assert!(err.contains("unknown field `flag`") && err.contains("did you mean `flags`?"), "{err}");
    let text = GOOD.replace("\"regex\"", "\"regexp\"").replace("\"good\"", "\"m\"");
    let err = errors_for("m", &text);
    assert!(err.contains("unknown variant `regexp`") && err.contains("did you mean `regex`?"), "{err}");
}

#[test]
fn bad_tier() {
    let err = errors_for("t", &GOOD.replace("\"T1\"", "\"T5\"").replace("\"good\"", "\"t\""));
    assert!(err.contains("at `difficulty`") && err.contains("`T1`, `T2`, `T3`, `T4`"), "{err}");
}

#[test]
fn regex_that_does_not_compile_with_its_flags() {
    let text = GOOD.replace("(?=.*apple)", "(?<=unclosed").replace("\"good\"", "\"r\"");
    let err = errors_for("r", &text);
    assert!(err.contains("tasks/r.json:9:") && err.contains("outputMatchers[0].value"), "{err}");
    assert!(err.contains("invalid regular expression"), "{err}");
    let err = errors_for("f", &GOOD.replace("\"is\"", "\"iz\"").replace("\"good\"", "\"f\""));
    assert!(err.contains("invalid regular expression flags 'iz'"), "{err}");
}

#[test]
fn missing_fixtures_are_named() {
    let err = errors_for("x", &GOOD.replace("\"world\"", "\"nowhere\"").replace("\"good\"", "\"x\""));
    assert!(err.contains("fixture folder `nowhere` not found"), "{err}");
    let err = errors_for(
        "y",
        &GOOD.replace("\"fixture\": \"notes.md\"", "\"fixture\": \"gone.md\"").replace("\"good\"", "\"y\""),
    );
    assert!(err.contains("fixture file `gone.md` not found"), "{err}");
}

#[test]
fn id_must_match_the_file_name_and_be_unique() {
    let err = errors_for("other", GOOD);
    assert!(err.contains("id `good` differs from the file name `other.json`"), "{err}");
    assert!(err.contains("duplicate task id `good`"), "{err}");
}

#[test]
fn unsolvable_rubrics_are_errors() {
    let text = GOOD
        .replace("\"read_file\"]", "\"read_file\"], \"forbiddenTools\": [\"read_file\"]")
        .replace("\"good\"", "\"u\"");
    let err = errors_for("u", &text);
    assert!(err.contains("both expected and forbidden"), "{err}");
    let err = errors_for("v", &GOOD.replace("\"read_file\"", "\"read_fil\"").replace("\"good\"", "\"v\""));
    assert!(err.contains("unknown tool `read_fil`") && err.contains("did you mean `read_file`?"), "{err}");
    let text = GOOD.replace("\"(?=.*apple)\"", "[]").replace("\"good\"", "\"w\"");
    assert!(errors_for("w", &text).contains("empty any-of list"));
}

#[test]
fn every_error_is_reported_at_once() {
    let (_dir, loaded) = suite_with(&[
        ("tasks/a.json", "{ not json"),
        ("tasks/b.json", &GOOD.replace("\"good\"", "\"b\"").replace("\"T1\"", "\"T9\"")),
    ]);
    let err = loaded.unwrap_err();
    assert!(
        err.contains("tasks/a.json") && err.contains("tasks/b.json") && err.ends_with("2 errors in the suite"),
        "{err}"
    );
}
