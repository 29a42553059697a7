//! `vaultbench publish` through the real binary: the results table against
//! the reference harness's published rows, escaping of untrusted baseline
//! text, malformed baselines, broken links, --strict, a fresh clone, and the
//! reference project's own docs corpus.

mod common;
mod publish_support;

use std::path::Path;

use common::*;
use publish_support::*;

const REPO: &str = "https://example.org/vaultbench";

/// A project folder with a config pointing commit links at `REPO`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("vaultbench.toml"), format!("[site]\nrepository = \"{REPO}\"\n")).unwrap();
    dir
}

fn publish(dir: &Path, extra: &[&str]) -> std::process::Output {
    let docs = repo_docs();
    let mut args = vec!["publish", "--docs", docs.to_str().unwrap(), "--out", "site"];
    args.extend_from_slice(extra);
    vaultbench(&args, dir)
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join("site").join(rel)).unwrap_or_else(|e| panic!("site/{rel}: {e}"))
}

/// The rows of the upstream README's published table.
fn upstream_readme_rows(up: &Path) -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(up.join("README.md")).unwrap();
    let mut lines = readme.lines().skip_while(|l| !l.starts_with("| Model | Provider |"));
    let header = lines.next().expect("the README has the results table");
    assert_eq!(header.split('|').filter(|c| !c.trim().is_empty()).count(), 12);
    lines
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect())
        .collect()
}

#[test]
fn upstream_baselines_publish_the_reference_rows_cell_for_cell() {
    let Some(up) = upstream() else { return };
    let dir = project();
    let baselines = up.join("baselines");
    let out = publish(dir.path(), &["--baselines", baselines.to_str().unwrap(), "--suite", "no-suite", "--strict"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    let results = read(dir.path(), "results.html");
    let rows = results_rows(&results);
    let expected = upstream_readme_rows(&up);
    assert_eq!(expected.len(), 2);
    // The twelve published columns, cell for cell, in their order; the
    // interval column comes after them.
    let published: Vec<Vec<String>> = rows.iter().map(|r| r[..12].to_vec()).collect();
    assert_eq!(published, expected, "the generated table differs from the published one");
    assert!(rows.iter().all(|r| r.len() == 16 && r[12].contains("% ±")), "{rows:?}");
    // Last, the change since the previous blessing: none outside a repository.
    assert!(rows.iter().all(|r| r[15] == "—"), "{rows:?}");
    // Then the mean cost per run and the mean turns, as each baseline's aggregate has them.
    for (row, file) in rows.iter().zip(["gemini-gemini-3.1-flash-lite.json", "gemini-gemini-2.5-flash.json"]) {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(baselines.join(file)).unwrap()).unwrap();
        let a = &json["aggregate"];
        let cost = vaultbench::jsnum::to_fixed(a["mean_cost_usd"].as_f64().unwrap(), 6);
        let turns = vaultbench::jsnum::to_fixed(a["mean_turns"].as_f64().unwrap(), 1);
        assert_eq!(row[13..15], [cost, turns], "{file}");
    }
    // 74.1% and 57.4% differ by more than noise: no tie mark; the note under the table states the noise floor.
    assert!(!results.contains("≈ tied"), "{results}");
    assert!(
        results.contains("<p class=\"table-note\">Noise floor: each solve^k is known to within about ±"),
        "{results}"
    );
    // Commit links go to the configured repository.
    for sha in ["36e3495", "4683f4f"] {
        assert!(results.contains(&format!("<a href=\"{REPO}/commit/{sha}\">{sha}</a>")), "{sha} link");
    }
    // The same table is placed in the evals page by {{ results_table() }}.
    let table = |html: &str| {
        let start = html.find("<table class=\"results\"").expect("a results table");
        html[start..start + html[start..].find("</table>").unwrap() + 8].to_string()
    };
    assert_eq!(table(&read(dir.path(), "evals.html")), table(&results));
    insta::assert_snapshot!("upstream_results_table", table(&results).replace("> <", ">\n<"));

    // A page per baseline, with flaky tasks marked and the tier breakdown.
    let page = read(dir.path(), "baselines/gemini-gemini-3.1-flash-lite.html");
    assert!(page.contains("<code>gemini-3.1-flash-lite</code>"), "{page}");
    assert_eq!(page.matches("<span class=\"flaky\">flaky</span></td>").count(), 8, "8 flaky tasks");
    assert!(page.contains("8 flaky"), "{page}");
    assert!(page.contains("<td>T3</td><td>29</td><td>19</td><td>65.5%</td><td>120/145</td><td>82.8%</td>"), "{page}");
    // Its figures carry intervals, and the curve runs from k = 1 (the mean solve rate) to k = 5.
    assert!(page.contains("<dt>solve^k</dt><dd>74.1% <span class=\"interval\">["), "{page}");
    assert!(page.contains("<tr><td>1</td><td>100.0% [100.0, 100.0]</td><td>83.7% ["), "{page}");
    assert!(page.contains("<tr><td>5</td><td>100.0% [100.0, 100.0]</td><td>74.1% ["), "{page}");
    // The matrix has both models and every task once.
    let matrix = read(dir.path(), "matrix.html");
    assert_eq!(matrix.matches("<tr><td><code>").count(), 54);
    // The tier chart is HTML with a row per model, each name whole; the
    // curve has a line per model, the cost chart a point per model, and
    // each names every model whole in its legend and its text alternative.
    assert_eq!(results.matches("<div class=\"tier-row\" role=\"row\">").count(), 2);
    assert_eq!(results.matches("<span class=\"tier-model\" role=\"rowheader\" title=\"gemini-3.1-flash-lite (gemini)\">gemini-3.1-flash-lite (gemini)</span>").count(), 1);
    assert_eq!(results.matches("<polyline points=").count(), 2);
    assert_eq!(results.matches("class=\"chart-point\"").count(), 2);
    assert!(results.contains("aria-label=\"solve^k over k for each model: gemini-3.1-flash-lite (gemini): from 83.7% at k = 1 to 74.1% at k = 5;"), "{results}");
    assert_eq!(results.matches("</svg>gemini-3.1-flash-lite (gemini)</li>").count(), 1, "in the legend");
    assert_eq!(
        results.matches("<li><strong>gemini-2.5-flash (gemini)</strong>: $").count(),
        1,
        "in the cost chart's list"
    );
}

#[test]
fn upstream_baselines_against_the_upstream_suite_are_marked_as_differing() {
    let Some(up) = upstream() else { return };
    let dir = project();
    let baselines = up.join("baselines");
    let out = publish(dir.path(), &["--baselines", baselines.to_str().unwrap(), "--suite", up.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = read(dir.path(), "results.html");
    // 54-task baselines against the 59-task suite.
    assert_eq!(results.matches("⚠ 5 differ</a>").count(), 2, "{results}");
    assert!(results.contains("59 tasks"), "{results}");
    let page = read(dir.path(), "baselines/gemini-gemini-2.5-flash.html");
    assert!(page.contains("5 tasks differ from the current suite"), "{page}");
    let catalog = read(dir.path(), "tasks.html");
    assert!(catalog.contains("<p>59 tasks.</p>"), "{catalog}");
    assert!(catalog.contains("<code>smoke-list-files</code>"), "{catalog}");
}

#[test]
fn untrusted_baseline_text_is_escaped_everywhere() {
    let dir = project();
    let evil = "<script>alert(1)</script>";
    let mut r = sample_result("ollama", evil, &[("alpha", &[true, false])]);
    r.tasks[0].runs[0].response_text = format!("{evil} and <img src=x onerror=alert(2)>");
    r.tasks[0].id = format!("task{evil}");
    r.provider = "\"><b>bold</b>".into();
    write_result(&dir.path().join("evals/baselines/evil.json"), &r);
    let out = publish(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    for rel in ["results.html", "evals.html", "matrix.html", "baselines/evil.html"] {
        let html = read(dir.path(), rel);
        assert!(!html.contains("<script>alert"), "{rel} has a live script");
        assert!(!html.contains("<b>bold</b>"), "{rel} has live markup");
        assert!(!html.contains("onerror=alert"), "{rel} shows response text");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{rel} shows the model name as text");
    }
    let rows = results_rows(&read(dir.path(), "results.html"));
    assert_eq!(rows[0][0], evil);
    assert_eq!(rows[0][1], "\"><b>bold</b>");
}

#[test]
fn a_baseline_with_evidence_offers_its_transcripts_for_download() {
    let dir = project();
    write_result(&dir.path().join("evals/baselines/ollama-a.json"), &sample_result("ollama", "a", &[("t", &[true])]));
    write_result(&dir.path().join("evals/baselines/ollama-b.json"), &sample_result("ollama", "b", &[("t", &[false])]));
    let archive = b"not really gzip, copied as is".repeat(100);
    // The archive of the baseline's run (2026-11-20T10:00:00.000Z), found by its run id.
    let evidence = dir.path().join("evals/baselines/evidence/ollama-a");
    std::fs::create_dir_all(&evidence).unwrap();
    std::fs::write(evidence.join("2026-11-20T10-00-00-000Z.tar.gz"), &archive).unwrap();
    // What an interrupted bless may leave is never taken for it: another run's
    // archive, a temporary file; and for `b` there is no archive of its run.
    std::fs::write(evidence.join("2026-11-21T10-00-00-000Z.tar.gz"), b"another run").unwrap();
    std::fs::write(evidence.join(".2026-11-20T10-00-00-000Z.tar.gz.a1b2c3.tmp"), b"half").unwrap();
    let other = dir.path().join("evals/baselines/evidence/ollama-b");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join(".2026-11-20T10-00-00-000Z.tar.gz.x1y2z3.tmp"), b"half").unwrap();
    std::fs::write(other.join("2026-11-19T10-00-00-000Z.tar.gz"), b"an older run").unwrap();
    // Not an archive: offered as it is, and the build says its transcripts
    // cannot be shown.
    let out = publish(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("ollama-a.json: its runs are shown without transcripts"), "{}", stderr(&out));
    let page = read(dir.path(), "baselines/ollama-a.html");
    assert!(page.contains(r#"<a id="evidence" href="ollama-a.evidence.tar.gz" download>"#), "{page}");
    assert!(page.contains("(3 KiB, tar.gz)"), "{page}");
    assert_eq!(std::fs::read(dir.path().join("site/baselines/ollama-a.evidence.tar.gz")).unwrap(), archive);
    // No archive, no link.
    let page = read(dir.path(), "baselines/ollama-b.html");
    assert!(!page.contains("evidence"), "{page}");
    assert!(!dir.path().join("site/baselines/ollama-b.evidence.tar.gz").exists());
}

/// A baseline with text after its JSON value (a merge conflict's markers, a
/// second value) is malformed like any other; one starting with a byte order
/// mark is a row like any other.
#[test]
fn trailing_text_makes_a_baseline_malformed_and_a_byte_order_mark_does_not() {
    let dir = project();
    let baselines = dir.path().join("evals/baselines");
    write_result(&baselines.join("ollama-a.json"), &sample_result("ollama", "a", &[("t", &[true])]));
    let mut bytes = std::fs::read(baselines.join("ollama-a.json")).unwrap();
    bytes.extend_from_slice(b"\n>>>>>>> theirs\n");
    std::fs::write(baselines.join("conflicted.json"), &bytes).unwrap();
    write_result(&baselines.join("ollama-b.json"), &sample_result("ollama", "b", &[("t", &[false])]));
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(&std::fs::read(baselines.join("ollama-b.json")).unwrap());
    std::fs::write(baselines.join("ollama-b.json"), bom).unwrap();

    let out = publish(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("conflicted.json") && err.contains("more text after the JSON value"), "{err}");
    let rows = results_rows(&read(dir.path(), "results.html"));
    let models: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(models, ["a", "b"]);

    let out = publish(dir.path(), &["--strict"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("conflicted.json"), "{}", stderr(&out));
}

#[test]
fn a_malformed_baseline_is_skipped_with_a_warning_and_strict_fails() {
    let dir = project();
    write_result(&dir.path().join("evals/baselines/ollama-a.json"), &sample_result("ollama", "a", &[("t", &[true])]));
    write_result(&dir.path().join("evals/baselines/ollama-b.json"), &sample_result("ollama", "b", &[("t", &[false])]));
    std::fs::write(
        dir.path().join("evals/baselines/broken.json"),
        "{\"model\": \"c\", \"aggregate\": {\"solve_k_rate\": \"high\"}}",
    )
    .unwrap();

    let out = publish(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("broken.json") && err.contains("aggregate.solve_k_rate"), "{err}");
    let rows = results_rows(&read(dir.path(), "results.html"));
    let models: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(models, ["a", "b"]);

    std::fs::remove_dir_all(dir.path().join("site")).unwrap();
    let out = publish(dir.path(), &["--strict"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("broken.json") && err.contains("--strict"), "{err}");
    assert!(!dir.path().join("site").exists(), "nothing is written when --strict fails");
}

/// `n` tasks, the first `solved` of them solved in every one of 5 runs.
fn baseline_solving(model: &str, ids: &[String], solved: usize) -> vaultbench::format::result::ResultFile {
    let all = [true; 5];
    let none = [false; 5];
    let tasks: Vec<(&str, &[bool])> =
        ids.iter().enumerate().map(|(i, id)| (id.as_str(), if i < solved { &all[..] } else { &none[..] })).collect();
    sample_result("ollama", model, &tasks)
}

#[test]
fn rows_within_noise_of_the_row_above_are_marked_tied_and_other_task_sets_are_not_compared() {
    let dir = project();
    let ids: Vec<String> = (0..30).map(|i| format!("t{i:02}")).collect();
    let other: Vec<String> = (0..30).map(|i| format!("u{i:02}")).collect();
    let b = |name: &str, r| write_result(&dir.path().join(format!("evals/baselines/{name}.json")), &r);
    b("a", baseline_solving("top", &ids, 24));
    // One task fewer than the row above: within noise.
    b("b", baseline_solving("close", &ids, 23));
    // Far below: a real gap.
    b("c", baseline_solving("low", &ids, 6));
    // Just below "low" but on other tasks: no claim either way.
    b("d", baseline_solving("elsewhere", &other, 5));
    let out = publish(dir.path(), &["--suite", "no-suite"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = read(dir.path(), "results.html");
    let rows = results_rows(&results);
    let models: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(models, ["top", "close", "low", "elsewhere"]);
    let solve_cells: Vec<&str> = rows.iter().map(|r| r[5].as_str()).collect();
    assert_eq!(solve_cells, ["80.0%", "76.7% ≈ tied", "20.0%", "16.7%"]);
    assert!(results.contains("statistically tied with top: solve^5 differs by -3.3 points ["), "{results}");
    assert!(results.contains("≈ marks a row statistically tied with it"), "{results}");
    // The twelve columns keep their values; the interval, cost, turns and
    // the change since the previous blessing follow Commit.
    assert!(rows.iter().all(|r| r.len() == 16), "{rows:?}");
    assert!(rows[0][12].starts_with("80.0% ±"), "{:?}", rows[0]);
}

#[test]
fn a_baseline_swept_without_a_judge_is_marked_and_its_page_says_why() {
    let dir = project();
    let mut r = sample_result("ollama", "unjudged", &[("alpha", &[false, false]), ("beta", &[true, true])]);
    skip_judge(&mut r, 0, &[0, 1], true);
    write_result(&dir.path().join("evals/baselines/ollama-unjudged.json"), &r);
    write_result(
        &dir.path().join("evals/baselines/ollama-judged.json"),
        &sample_result("ollama", "judged", &[("alpha", &[true])]),
    );
    let out = publish(dir.path(), &["--suite", "no-suite"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = read(dir.path(), "results.html");
    let rows = results_rows(&results);
    let unjudged = rows.iter().find(|r| r[0] == "unjudged").unwrap();
    assert_eq!(unjudged[5], "50.0% ⚖ no judge", "{unjudged:?}");
    assert!(!rows.iter().find(|r| r[0] == "judged").unwrap()[5].contains("judge"));
    assert!(results.contains("⚖ marks 1 baseline swept without a judge"), "{results}");
    let page = read(dir.path(), "baselines/ollama-unjudged.html");
    assert!(page.contains("<div class=\"notice\" id=\"judge\">"), "{page}");
    assert!(
        page.contains(
            "2 runs in 1 task had their judge matchers skipped for lack of a judge; 2 of them met every other check"
        ),
        "{page}"
    );
}

/// A baseline is read as `report` reads a result: a file that is not a
/// whole result (fields missing, a task file, values no count holds) or whose
/// figures its runs deny is left out with a warning naming the file and the
/// field, an error with --strict; a --baselines folder that does not exist
/// is an error, not an empty table.
#[test]
fn baselines_are_validated_as_report_validates_them() {
    let dir = project();
    let baselines = dir.path().join("evals/baselines");
    std::fs::create_dir_all(&baselines).unwrap();
    write_result(&baselines.join("ollama-good.json"), &sample_result("ollama", "good", &[("t", &[true])]));
    std::fs::write(baselines.join("sparse.json"), r#"{"model": "sparse", "tasks": [{"id": "x"}]}"#).unwrap();
    std::fs::write(baselines.join("hello.json"), r#"{"hello": 1}"#).unwrap();
    let mut negative = serde_json::to_value(sample_result("ollama", "neg", &[("t", &[true])])).unwrap();
    negative["tasks"][0]["runs"][0]["metrics"]["turns"] = serde_json::json!(-3);
    std::fs::write(baselines.join("negative.json"), negative.to_string()).unwrap();
    let mut huge = serde_json::to_value(sample_result("ollama", "huge", &[("t", &[true])])).unwrap();
    huge["tasks"][0]["runs"][0]["metrics"]["output_tokens"] = serde_json::json!(1.5e308);
    std::fs::write(baselines.join("huge.json"), huge.to_string()).unwrap();
    write_result(&dir.path().join("elsewhere.json"), &sample_result("ollama", "elsewhere", &[("t", &[true])]));
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path().join("elsewhere.json"), baselines.join("linked.json")).unwrap();
    let mut denied = sample_result("ollama", "denied", &[("t", &[true, false])]);
    denied.aggregate.solve_k_rate = 100.0;
    write_result(&baselines.join("denied.json"), &denied);

    let out = publish(dir.path(), &["--strict"]);
    assert!(!out.status.success(), "--strict accepted them: {}", stdout(&out));
    let e = stderr(&out);
    for (file, field) in [
        ("sparse.json", "n_runs"),
        ("hello.json", "run_id"),
        ("negative.json", "turns"),
        ("huge.json", "output_tokens"),
        ("denied.json", "aggregate.solve_k_rate"),
        #[cfg(unix)]
        ("linked.json", "outside"),
    ] {
        assert!(e.lines().any(|l| l.contains(file) && l.contains(field)), "{file} / {field}:\n{e}");
    }
    let out = publish(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = results_rows(&read(dir.path(), "results.html"));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0][0], "good");

    // Task files are not results; a folder that is not there is an error.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tasks = repo.join("evals/tasks");
    let out = publish(dir.path(), &["--baselines", tasks.to_str().unwrap(), "--strict"]);
    assert!(!out.status.success() && stderr(&out).contains("not a result file"), "{}", stderr(&out));
    let out = publish(dir.path(), &["--baselines", "evals/baselnes"]);
    assert!(!out.status.success(), "a misspelled folder built: {}", stdout(&out));
    assert!(stderr(&out).contains("evals/baselnes") && stderr(&out).contains("does not exist"), "{}", stderr(&out));
}

#[test]
fn a_fresh_clone_publishes_with_no_baselines_and_no_config() {
    let dir = tempfile::tempdir().unwrap();
    let out = publish(dir.path(), &["--strict"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = read(dir.path(), "results.html");
    assert!(results.contains("No baselines yet"), "{results}");
    assert!(results.contains("vaultbench bless"), "{results}");
    let evals = read(dir.path(), "evals.html");
    assert!(evals.contains("No baselines yet"), "{evals}");
    let catalog = read(dir.path(), "tasks.html");
    assert!(catalog.contains("has no tasks yet"), "{catalog}");
    for page in ["index.html", "tools.html", "static/style.css"] {
        assert!(dir.path().join("site").join(page).is_file(), "{page}");
    }
    // Navigation links every docs page and the generated ones.
    let index = read(dir.path(), "index.html");
    // Relative links, so the site works under any base path and from disk.
    for href in ["evals.html", "tools.html", "results.html", "matrix.html", "tasks.html", "static/style.css"] {
        assert!(index.contains(&format!("href=\"{href}\"")), "{href} in the navigation");
    }
    assert!(index.contains("<title>vaultbench</title>"), "{index}");
    assert!(evals.contains("<title>The eval suite · vaultbench</title>"), "frontmatter title");
}

#[test]
fn internal_links_are_rewritten_and_broken_ones_warn_or_fail_with_strict() {
    let dir = project();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("guide")).unwrap();
    std::fs::write(docs.join("index.md"), "# Home\n\n[Setup](guide/setup.md#install) and [gone](nope.md).\n").unwrap();
    std::fs::write(
        docs.join("guide/setup.md"),
        "# Setup\n\n## Install\n\n[Back](../index.md), [bad anchor](#nowhere).\n",
    )
    .unwrap();
    let out = vaultbench(&["publish"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("index.md:3: broken link `nope.md`"), "{err}");
    assert!(err.contains("setup.md:5: broken link `#nowhere`"), "{err}");
    let index = read(dir.path(), "index.html");
    assert!(index.contains("href=\"guide/setup.html#install\""), "{index}");
    let setup = read(dir.path(), "guide/setup.html");
    assert!(setup.contains("href=\"../index.html\""), "{setup}");
    assert!(setup.contains("<h2 id=\"install\">"), "{setup}");

    let out = vaultbench(&["publish", "--strict"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("2 warnings with --strict"), "{}", stderr(&out));
}

#[test]
fn a_template_error_in_a_page_fails_the_build_naming_the_page_and_line() {
    let dir = project();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("index.md"), "---\ntitle: T\n---\n# Home\n\n{{ results_tabel() }}\n").unwrap();
    let out = vaultbench(&["publish"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("results_tabel"), "{err}");
    assert!(err.contains(&format!("{}:6:", Path::new("docs").join("index.md").display())), "{err}");
}

/// `html` without code blocks and code spans (code may show any syntax).
fn outside_code(html: &str) -> String {
    let mut text = html.to_string();
    for (open, close) in [("<pre", "</pre>"), ("<code", "</code>")] {
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(start) = rest.find(open) {
            out.push_str(&rest[..start]);
            rest = rest[start..].find(close).map_or("", |end| &rest[start + end + close.len()..]);
        }
        out.push_str(rest);
        text = out;
    }
    text
}

#[test]
fn the_upstream_vitepress_corpus_publishes_with_no_vitepress_syntax_left() {
    let Some(up) = upstream() else { return };
    let dir = project();
    let docs = up.join("docs");
    let baselines = up.join("baselines");
    let args = ["publish", "--docs", docs.to_str().unwrap(), "--baselines", baselines.to_str().unwrap()];
    let out = vaultbench(&[&args[..], &["--suite", up.to_str().unwrap()]].concat(), dir.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    let site = dir.path().join("site");
    let mut pages = Vec::new();
    for entry in walkdir::WalkDir::new(&site) {
        let path = entry.unwrap().path().to_path_buf();
        if path.extension().is_some_and(|x| x == "html") {
            pages.push(path.strip_prefix(&site).unwrap().to_string_lossy().into_owned());
        }
    }
    // 32 pages, 5 generated pages (results, matrix, catalog, compare, what
    // changed), 2 baseline pages with a page per task (54 each), the page
    // comparing them and the 404 page.
    assert_eq!(pages.len(), 32 + 5 + 2 + 2 * 54 + 1 + 1, "{pages:?}");

    // Every Markdown page: no container markers, Vue blocks or bindings left.
    let mut fences = 0;
    let mut tagged = 0;
    let mut coloured = 0;
    for entry in walkdir::WalkDir::new(&docs) {
        let md = entry.unwrap().path().to_path_buf();
        if md.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let rel = md.strip_prefix(&docs).unwrap().to_string_lossy().replace(".md", ".html");
        let html = read(dir.path(), &rel);
        let text = outside_code(&html);
        for literal in [":::", "<script setup", "v-if=", "v-for=", "v-else", ":key=", ":id=", "{{", "[!NOTE]", "[!TIP]"]
        {
            assert!(!text.contains(literal), "{rel} still shows `{literal}`");
        }
        let body = &text[text.find("<body>").unwrap()..];
        assert!(!body.contains("<style"), "{rel}: page styles belong in <head>");
        // Every fenced block went through the highlighter: wrapped, and
        // coloured when it names a language with a grammar.
        let source = std::fs::read_to_string(&md).unwrap();
        for event in pulldown_cmark::Parser::new(&source) {
            if let pulldown_cmark::Event::Start(pulldown_cmark::Tag::CodeBlock(kind)) = event {
                fences += 1;
                if matches!(kind, pulldown_cmark::CodeBlockKind::Fenced(info) if !info.trim().is_empty()) {
                    tagged += 1;
                }
            }
        }
        assert_eq!(html.matches("<pre").count(), html.matches("<div class=\"code").count(), "{rel}");
        for block in html.split("<div class=\"code").skip(1) {
            let head = &block[..block.find('>').unwrap()];
            let code = &block[..block.find("</pre>").unwrap()];
            if let Some(lang) = head.split("data-lang=\"").nth(1).map(|l| &l[..l.find('"').unwrap()])
                && lang != "text"
            {
                assert!(head.starts_with(" highlighted\""), "{rel}: a `{lang}` block is not highlighted");
                coloured += usize::from(code.contains("<span class=\"hl-"));
            }
        }
    }
    // Most blocks have tokens to colour (prose-only Markdown blocks have none).
    assert!(coloured >= 60, "{coloured} coloured blocks");
    assert!(fences >= 171, "the corpus's code blocks: {fences}");
    let all_html: String = pages.iter().map(|p| read(dir.path(), p)).collect();
    assert_eq!(all_html.matches("<div class=\"code").count(), fences);
    assert_eq!(all_html.matches("\" data-lang=\"").count(), tagged);
    assert!(!err.contains("no syntax highlighting"), "every language of the corpus has a grammar: {err}");

    // Containers are callouts, with their titles.
    let mcp = read(dir.path(), "guide/mcp-servers.html");
    assert_eq!(
        mcp.matches("<div class=\"callout callout-tip\" role=\"note\"><p class=\"callout-title\">Tip</p>").count(),
        4
    );
    assert_eq!(mcp.matches("class=\"callout callout-warning\"").count(), 1);
    let hooks = read(dir.path(), "guide/lifecycle-hooks.html");
    assert!(hooks.contains("<p class=\"callout-title\">Opt-in</p>"), "custom title");
    // The Vue-driven results table is left out with a notice and a warning
    // naming the file and line; its scoped style moved to the head.
    let evals = read(dir.path(), "reference/evals.html");
    assert!(evals.contains("vue-omitted"), "notice");
    assert!(err.contains("reference/evals.md:176: a Vue template"), "{err}");
    assert!(evals[..evals.find("</head>").unwrap()].contains(".evals-results"), "page style in the head");
    // Placeholders in code are shown as written.
    let prompts = read(dir.path(), "guide/selection-prompts.html");
    assert!(prompts.contains("<code>{{selection}}</code>"), "placeholder in code");
    // VitePress heading slugs still lead somewhere.
    assert!(!err.contains("faq.md:78"), "{err}");
    let writing = read(dir.path(), "guide/ai-writing.html");
    assert!(writing.contains("id=\"how-to-use-explain\""), "explicit heading id");

    // The home layout: hero and feature cards from the frontmatter, links resolved.
    let index = read(dir.path(), "index.html");
    assert!(!index.contains("layout: home"), "frontmatter is not rendered");
    assert!(index.contains("<h1 class=\"hero-name\">Gemini Scribe</h1>"), "{index}");
    assert!(index.contains("href=\"guide/getting-started.html\">Get started</a>"), "{index}");
    assert_eq!(index.matches("<li class=\"feature\">").count(), 9);

    // The folders are the sidebar's sections, each listing its own pages.
    let sidebar = |html: &str| {
        let start = html.find("<nav class=\"sidebar\"").unwrap();
        html[start..start + html[start..].find("</nav>").unwrap()].to_string()
    };
    let nav = sidebar(&index);
    let sections: Vec<String> =
        nav.split("<p class=\"nav-title\">").skip(1).map(|s| s[..s.find('<').unwrap()].to_string()).collect();
    assert_eq!(sections, ["vaultbench", "Contributing", "Guide", "Reference", "Results"]);
    for (section, count) in [("Contributing", 6), ("Guide", 19), ("Reference", 5)] {
        let part = nav.split(&format!("<p class=\"nav-title\">{section}</p>")).nth(1).unwrap();
        let part = &part[..part.find("</ul>").unwrap()];
        assert_eq!(part.matches("<li>").count(), count, "{section}");
        let folder = section.to_lowercase();
        assert_eq!(part.matches(&format!("href=\"{folder}/")).count(), count, "{section} lists its own folder");
    }
    let getting_started = read(dir.path(), "guide/getting-started.html");
    assert!(sidebar(&getting_started).contains("href=\"../guide/getting-started.html\" aria-current=\"page\""));
}

/// HTML attribute text with its character references decoded (Tera writes
/// `/` as `&#x2F;`): the site's own decoder.
fn unescape_attr(s: &str) -> String {
    vaultbench::publish::render::html::decode_entities(s)
}

/// A gzip-compressed tar archive with no entries: evidence that reads.
fn empty_archive() -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&[0; 1024]).unwrap();
    gz.finish().unwrap()
}

/// Every `href` and `src` value in `html`.
fn urls(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in [" href=\"", " src=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            let value = &rest[i + attr.len()..];
            let end = value.find('"').unwrap();
            out.push(unescape_attr(&value[..end]));
            rest = &value[end..];
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() && u8::from_str_radix(&s[i + 1..i + 3], 16).is_ok() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Hostile baseline file names, model ids and docs page names: every URL on
/// every generated page is either a web or mail address or a relative path
/// (no `javascript:` or other scheme can appear) that leads to a file the
/// site has.
#[test]
fn every_generated_url_is_safe_and_leads_somewhere_whatever_the_names() {
    let dir = project();
    let docs = dir.path().join("docs");
    copy_dir(&repo_docs(), &docs);
    std::fs::write(docs.join("javascript:alert(1).md"), "# Evil page\n\nBack [home](index.md).\n").unwrap();
    std::fs::create_dir_all(docs.join("we\"ird <dir>")).unwrap();
    std::fs::write(docs.join("we\"ird <dir>/a b#c?d%.md"), "# Odd\n\n[Evil](../javascript:alert(1).md)\n").unwrap();
    std::fs::write(
        docs.join("links.md"),
        "# Links\n\n[evil](./javascript:alert(1).md) [odd](<we\"ird <dir>/a b#c?d%.md>) [abs](/javascript:alert(1).md)\n",
    )
    .unwrap();
    let names = [
        ("javascript:alert(1)", "javascript:alert(2)", "ollama"),
        ("a b\"<x>#?%", "m\"><script>alert(3)</script>", "\"><img src=x onerror=alert(4)>"),
        ("data:text", "data:text/html,<b>x</b>", "openai"),
        ("évil", "//evil.example/x", "gemini"),
    ];
    let baselines = dir.path().join("evals/baselines");
    for (i, (file, model, provider)) in names.iter().enumerate() {
        let mut r = sample_result(provider, model, &[("t", &[i % 2 == 0])]);
        r.git_sha = format!("javascript:alert({i})");
        write_result(&baselines.join(format!("{file}.json")), &r);
        let archive =
            vaultbench::report::evidence::archive_path(&baselines.join(format!("{file}.json")), &r.run_id.0).unwrap();
        std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
        std::fs::write(&archive, empty_archive()).unwrap();
    }
    let out = vaultbench(&["publish", "--docs", "docs", "--out", "site", "--strict"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));

    let checked = assert_every_url_leads_somewhere(&dir.path().join("site"));
    assert!(checked > 100, "only {checked} URLs checked");
    let page = read(dir.path(), "baselines/javascript:alert(1).html");
    assert!(page.contains("href=\"javascript%3Aalert%281%29.evidence.tar.gz\""), "{page}");
    let results = read(dir.path(), "results.html");
    assert!(results.contains("href=\"baselines/a%20b%22%3Cx%3E%23%3F%25.html\""), "{results}");
    // Relative links may start with the encoded name (`javascript%3A...`), never a scheme.
    assert!(!results.to_ascii_lowercase().contains("href=\"javascript:"), "{results}");
}

#[test]
fn containers_and_alerts_are_callouts_and_unknown_ones_fail_with_strict() {
    let dir = project();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("index.md"),
        "# Home\n\n::: tip Try it\nA *tip*.\n:::\n\n> [!CAUTION]\n> Careful.\n\n::: spoiler\nHidden.\n:::\n",
    )
    .unwrap();
    let out = vaultbench(&["publish"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let file = Path::new("docs").join("index.md");
    assert!(err.contains(&format!("{}:10: unknown container `::: spoiler`", file.display())), "{err}");
    let index = read(dir.path(), "index.html");
    assert!(index.contains("<div class=\"callout callout-tip\" role=\"note\"><p class=\"callout-title\">Try it</p>"));
    assert!(
        index.contains("<div class=\"callout callout-caution\" role=\"note\"><p class=\"callout-title\">Caution</p>")
    );
    assert!(index.contains("<div class=\"callout callout-other\" role=\"note\">\n<p>Hidden.</p>"), "{index}");
    assert!(!index.contains(":::"), "{index}");

    let out = vaultbench(&["publish", "--strict"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("1 warning with --strict"), "{}", stderr(&out));
}

#[test]
fn includes_publish_whole_and_every_unsupported_or_escaping_one_is_a_warning_not_a_failure() {
    let dir = project();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("guide/parts")).unwrap();
    std::fs::create_dir_all(docs.join("src")).unwrap();
    std::fs::write(dir.path().join("secret.md"), "SECRET TEXT").unwrap();
    std::fs::write(
        docs.join("guide/parts/basics.md"),
        "---\ntitle: Part\n---\nIntro of the part.\n\n<!-- #region usage -->\n### Usage\n\nRun <code>it</code>.\n<!-- #endregion usage -->\n",
    )
    .unwrap();
    std::fs::write(docs.join("src/lib.rs"), "fn one() {}\n// ANCHOR: two\nfn two() {}\n// ANCHOR_END: two\n").unwrap();
    std::fs::write(
        docs.join("guide/index.md"),
        "# Guide\n\n<!--@include: ./parts/basics.md-->\n\n## Again\n\n<!--@include: ./parts/basics.md#usage{3,}-->\n\n\
         ```rust\n{{#include ../src/lib.rs:two}}\n```\n\n{{#playground ../src/lib.rs}}\n\nWritten: \\{{#include x.rs}}\n\n\
         <!--@include: ../../secret.md-->\n\n<!--@include: ./missing.md-->\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path().join("secret.md"), docs.join("guide/parts/link.md")).unwrap();
    #[cfg(unix)]
    std::fs::write(docs.join("linked.md"), "# Linked\n\n<!--@include: ./guide/parts/link.md-->\n").unwrap();
    let out = vaultbench(&["publish", "--suite", "no-suite"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let page = Path::new("docs").join("guide").join("index.md");
    assert!(
        err.contains(&format!(
            "{}:13: the mdBook directive `{{{{#playground ../src/lib.rs}}}}` is not supported",
            page.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{}:17: include not expanded: `../../secret.md` leads outside the docs folder",
            page.display()
        )),
        "{err}"
    );
    assert!(err.contains(&format!("{}:19: cannot include `./missing.md`: no such file", page.display())), "{err}");
    #[cfg(unix)]
    assert!(
        err.contains("linked.md:3: cannot include `./guide/parts/link.md`: it links to a file outside the docs folder"),
        "{err}"
    );

    let guide = read(dir.path(), "guide/index.html");
    assert!(guide.contains("<p>Intro of the part.</p>"), "{guide}");
    assert!(!guide.contains("title: Part"), "the part's frontmatter is left out: {guide}");
    assert!(guide.contains("<p>Run <code>it</code>.</p>"), "{guide}");
    assert_eq!(guide.matches("<h3 id=\"usage").count(), 1, "the second include starts at the region's line 3: {guide}");
    assert!(guide.contains("<span class=\"hl-f\">two</span>"), "the anchor's lines, highlighted: {guide}");
    assert!(!guide.contains("ANCHOR"), "{guide}");
    assert!(guide.contains("{{#playground ../src/lib.rs}}") && guide.contains("Written: {{#include x.rs}}"), "{guide}");
    for page in ["guide/index.html", "linked.html"] {
        assert!(!read(dir.path(), page).contains("SECRET"), "{page}");
    }
    let out = vaultbench(&["publish", "--suite", "no-suite", "--strict"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("warnings with --strict"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("template error"), "{}", stderr(&out));
}

/// Pages built to make a preprocessor slow: lines of openers that never
/// close, includes that double at every level. Each is read in time linear
/// in its size, so the build takes seconds, not hours.
#[test]
fn hostile_include_and_dialect_pages_build_in_linear_time() {
    let dir = project();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let n = 100_000;
    let page = format!(
        "# Openers\n\n{}\n\n{}\n\n{}\n\n{}x}}\n\n`{}\n",
        "<!--@include: a.md".repeat(n / 4),
        "{{#include a.md ".repeat(n / 4),
        "<Badge {{ $x :a: <!-- ".repeat(n / 4),
        "{{#include b.md {{#x ".repeat(n / 4),
        "`` <!--@include: a.md-->".repeat(n / 8),
    );
    std::fs::write(docs.join("index.md"), &page).unwrap();
    // Each file includes the next twice: 2^12 copies of the last without a cap.
    for i in 0..12 {
        std::fs::write(
            docs.join(format!("d{i}.md")),
            format!("{{{{#include d{0}.md}}}}\n{{{{#include d{0}.md}}}}\n", i + 1),
        )
        .unwrap();
    }
    std::fs::write(docs.join("d12.md"), "y".repeat(100_000)).unwrap();
    std::fs::write(docs.join("double.md"), "# Double\n\n<!--@include: ./d0.md-->\n").unwrap();
    let start = std::time::Instant::now();
    let out = vaultbench(&["publish", "--suite", "no-suite"], dir.path());
    let elapsed = start.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    // Seconds on a loaded machine in a debug build; quadratic work would be hours.
    assert!(elapsed < std::time::Duration::from_secs(120), "{elapsed:?}");
    let err = stderr(&out);
    assert!(err.lines().count() < 100, "a line of broken includes is one warning: {}", err.lines().count());
    assert!(err.contains("includes nested deeper than 8") || err.contains("larger than"), "{err}");
    let double = std::fs::metadata(dir.path().join("site/double.html")).unwrap().len();
    assert!(double < 40 << 20, "the doubling page is capped: {double} bytes");
}

#[test]
fn deploy_files_and_page_metadata_follow_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("vaultbench.toml"),
        "[site]\ntitle = \"Bench\"\ndescription = \"Agent evals for notes vaults.\"\n\
         url = \"https://example.org/bench/\"\nedit_url = \"https://example.org/repo/edit/main/docs/{path}\"\n\
         clean_urls = true\n",
    )
    .unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("guide")).unwrap();
    std::fs::write(docs.join("index.md"), "# Home\n\nWelcome to [setup](guide/setup.md).\n").unwrap();
    std::fs::write(
        docs.join("guide/setup.md"),
        "---\ndescription: How to set it up.\n---\n# Setup\n\n## Install\n\nText.\n\n## Configure\n\nMore.\n\n## Run\n\nGo.\n",
    )
    .unwrap();
    write_result(
        &dir.path().join("evals/baselines/ollama-m.json"),
        &sample_result("ollama", "model-m", &[("t", &[true])]),
    );
    let out = vaultbench(&["publish", "--strict"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));

    // Clean URLs: pages are folders, linked relatively; the 404 page stays at the root.
    let setup = read(dir.path(), "guide/setup/index.html");
    assert!(read(dir.path(), "index.html").contains("href=\"guide/setup/\""));
    assert!(setup.contains("href=\"../../static/style.css\""), "relative to the page");
    assert!(setup.contains("href=\"../../results/\""), "{setup}");
    let not_found = read(dir.path(), "404.html");
    assert!(not_found.contains("href=\"/bench/static/style.css\""), "the 404 page links from the base path");
    assert!(dir.path().join("site/baselines/ollama-m/index.html").is_file());

    // Meta description and Open Graph: the page's own, else the site's; the first paragraph otherwise.
    assert!(setup.contains("<meta name=\"description\" content=\"How to set it up.\">"), "{setup}");
    assert!(setup.contains("<meta property=\"og:title\" content=\"Setup\">"));
    assert!(setup.contains("<meta property=\"og:url\" content=\"https://example.org/bench/guide/setup/\">"));
    assert!(setup.contains("<link rel=\"canonical\" href=\"https://example.org/bench/guide/setup/\">"));
    let index = read(dir.path(), "index.html");
    assert!(index.contains("<meta name=\"description\" content=\"Welcome to setup.\">"), "{index}");
    assert!(
        read(dir.path(), "tasks/index.html")
            .contains("<meta name=\"description\" content=\"The tasks of the current suite")
    );
    assert!(index.contains("rel=\"icon\" href=\"static/favicon.svg\""));
    assert!(dir.path().join("site/static/favicon.svg").is_file());

    // The edit link, the outline and the previous/next links.
    assert!(setup.contains("href=\"https://example.org/repo/edit/main/docs/guide/setup.md\">Edit this page</a>"));
    assert!(setup.contains("<nav class=\"outline\" aria-label=\"On this page\">"), "{setup}");
    assert!(setup.contains("<a href=\"#install\">Install</a>"));
    assert!(setup.contains("rel=\"prev\"><span class=\"dir\">Previous</span> Home</a>"), "{setup}");
    assert!(setup.contains("<h2 id=\"install\">Install <a class=\"anchor\" href=\"#install\""));

    // The sitemap lists every page at its public address.
    let sitemap = read(dir.path(), "sitemap.xml");
    for loc in
        ["https://example.org/bench/", "https://example.org/bench/guide/setup/", "https://example.org/bench/results/"]
    {
        assert!(sitemap.contains(&format!("<loc>{loc}</loc>")), "{loc} in {sitemap}");
    }
    assert!(!sitemap.contains("404"), "{sitemap}");

    // The search index holds the pages' headings and text and the results row.
    let index_js = read(dir.path(), "search-index.js");
    assert!(index_js.starts_with("window.vaultbenchSearchIndex="));
    assert!(index_js.contains("[\"Setup\",\"guide/setup/\"]"), "{index_js}");
    assert!(index_js.contains("\"install\",\"Install\",\"Text.\""), "{index_js}");
    assert!(index_js.contains("\"model-ollama-m\",\"model-m (ollama)\""), "{index_js}");
}

#[test]
fn highlighted_blocks_are_cached_between_builds_and_a_bad_cache_is_ignored() {
    let dir = project();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("index.md"), "# Code\n\n```ts\nconst n: number = 1;\n```\n\n```rust\nfn f() {}\n```\n")
        .unwrap();
    let cache = dir.path().join("cache");
    let build = |out: &str| {
        let out = command()
            .env("VAULTBENCH_CACHE_DIR", &cache)
            .args(["publish", "--docs", "docs", "--out", out, "--strict"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let file = cache.join("highlighted-blocks.json");
    build("cold");
    let saved = std::fs::read_to_string(&file).expect("the cache is written");
    assert!(saved.contains("const n: number = 1;") && saved.contains("hl-k"), "{saved}");
    build("warm");
    let page = |out: &str| std::fs::read_to_string(dir.path().join(out).join("index.html")).unwrap();
    assert!(page("cold").contains("<span class=\"hl-k\">const</span>"), "{}", page("cold"));
    assert_eq!(page("warm"), page("cold"), "a cached block renders as a fresh one");
    for garbage in [
        "{\"key\": 1",
        "\u{0}\u{1}",
        "{\"key\": \"other\", \"entries\": [[\"ts\", \"const n: number = 1;\\n\", \"<b>stale</b>\"]]}",
    ] {
        std::fs::write(&file, garbage).unwrap();
        build("again");
        assert_eq!(page("again"), page("cold"), "a cache that does not read, or of another version, is ignored");
        assert!(std::fs::read_to_string(&file).unwrap().contains("hl-k"), "and rewritten");
    }
}

#[test]
fn nested_folders_are_groups_in_their_section_and_pages_link_prev_next_in_sidebar_order() {
    let dir = project();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("guide/advanced")).unwrap();
    std::fs::write(docs.join("index.md"), "# Home\n").unwrap();
    std::fs::write(docs.join("guide/index.md"), "---\ntitle: The guide\n---\n# Guide\n").unwrap();
    std::fs::write(docs.join("guide/basics.md"), "---\norder: 1\n---\n# Basics\n").unwrap();
    std::fs::write(docs.join("guide/advanced/tuning.md"), "# Tuning\n").unwrap();
    let out = vaultbench(&["publish", "--strict"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let tuning = read(dir.path(), "guide/advanced/tuning.html");
    let nav = &tuning[tuning.find("<nav class=\"sidebar\"").unwrap()..];
    let nav = &nav[..nav.find("</nav>").unwrap()];
    assert!(nav.contains("<p class=\"nav-title\">The guide</p>"), "{nav}");
    // The sub-folder is a group inside the section, open on its own pages.
    assert!(nav.contains("<details class=\"nav-group\" open><summary>Advanced</summary>"), "{nav}");
    assert!(nav.contains("<a href=\"../../guide/advanced/tuning.html\" aria-current=\"page\">Tuning</a>"), "{nav}");
    let basics = read(dir.path(), "guide/basics.html");
    assert!(basics.contains("<details class=\"nav-group\"><summary>Advanced</summary>"), "closed elsewhere");
    // Reading order: Home, The guide, Basics, Tuning, then the generated pages.
    assert!(basics.contains("rel=\"prev\"><span class=\"dir\">Previous</span> The guide</a>"), "{basics}");
    assert!(basics.contains("rel=\"next\"><span class=\"dir\">Next</span> Tuning</a>"), "{basics}");
    assert!(tuning.contains("rel=\"next\"><span class=\"dir\">Next</span> Results</a>"), "{tuning}");
}

/// Below each baseline: a page per task with every run (how it ended, each
/// check and its verdict, the response), the transcript of each run kept in
/// the evidence, the failure breakdown linking to the runs, and a page
/// comparing two baselines. Everything from the files is escaped and long
/// texts are cut; odd task ids make safe addresses.
#[test]
fn runs_transcripts_failures_and_comparisons_get_pages_that_escape_everything() {
    use vaultbench::format::OneOrMany;
    use vaultbench::format::result::{EndReason, MatcherDetail};
    let dir = project();
    let baselines = dir.path().join("evals/baselines");
    let evil = "<script>alert(1)</script>";
    let odd = "../odd <id>";
    let mut r = sample_result("ollama", "first", &[("alpha", &[true, false]), (odd, &[true])]);
    for (t, task) in r.tasks.iter_mut().enumerate() {
        for (i, run) in task.runs.iter_mut().enumerate() {
            run.transcript_path = format!("results/x/t{t}-{}.json", i + 1);
        }
    }
    {
        let run = &mut r.tasks[0].runs[1];
        run.passed = false;
        run.end_reason = Some(EndReason::TurnLimit);
        run.response_text = evil.repeat(2000);
        run.errors = vec![];
        run.solve_details.matchers_pass = false;
        run.solve_details.matcher_details = vec![MatcherDetail::Regex {
            value: OneOrMany::One(format!("{evil}x")),
            flags: Some("i".into()),
            verdict: false,
            error: None,
        }];
    }
    let r = vaultbench::report::aggregate::rederive(&r);
    let transcripts = vec![
        ("t0-1.json".to_string(), transcript_json(evil, &"é".repeat(5000), "answered")),
        ("t0-2.json".to_string(), transcript_json("hi", "short", "turn_limit")),
        ("t1-1.json".to_string(), "{ not json".to_string()),
    ];
    write_baseline_with_evidence(&baselines, "ollama-first", &r, &transcripts);
    write_result(
        &baselines.join("gemini-second.json"),
        &sample_result("gemini", "second", &[("alpha", &[true, true])]),
    );
    let out = publish(dir.path(), &["--suite", "no-suite", "--strict"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    let site = dir.path().join("site");
    let task = read(dir.path(), "baselines/ollama-first/alpha.html");
    assert!(task.contains("id=\"run-1\"") && task.contains("id=\"run-2\""), "{task}");
    assert!(task.contains("turn limit reached"), "the run says how it ended");
    assert!(task.contains("/&lt;script&gt;alert(1)&lt;/script&gt;x/i"), "the matcher with its value and flags");
    assert!(task.contains("<span class=\"verdict-no\">fails</span>"));
    assert!(task.contains("more characters in the baseline file"), "a long response is cut");
    assert!(task.len() < 200_000, "bounded: {} bytes", task.len());
    assert!(
        task.contains("href=\"../../baselines/ollama-first/alpha/run-1.html\"")
            && task.contains("href=\"../../baselines/ollama-first/alpha/run-2.html\""),
        "{task}"
    );
    // The odd id: a safe file name, the id itself shown escaped.
    let baseline = read(dir.path(), "baselines/ollama-first.html");
    assert!(baseline.contains("href=\"../baselines/ollama-first/---odd--id-.html\""), "{baseline}");
    let odd_page = read(dir.path(), "baselines/ollama-first/---odd--id-.html");
    assert!(odd_page.contains("<code>../odd &lt;id&gt;</code>"), "{odd_page}");
    assert!(
        read(dir.path(), "baselines/ollama-first/---odd--id-/run-1.html").contains("the transcript is not valid JSON"),
        "a broken transcript says so"
    );
    // The breakdown: the unsolved run, under each check it failed, linked.
    assert!(baseline.contains("<td>did not pass</td><td>1</td>"), "{baseline}");
    assert!(baseline.contains("<a href=\"../baselines/ollama-first/alpha.html#run-2\">alpha #2</a>"), "{baseline}");
    assert!(baseline.contains("<td>regex</td><td>1</td>"));
    // The transcript: a conversation, escaped, the long result folded.
    let transcript = read(dir.path(), "baselines/ollama-first/alpha/run-1.html");
    assert!(transcript.contains("<details class=\"system-prompt\">"));
    assert!(transcript.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(transcript.contains("<details class=\"more\"><summary>Show all"), "{transcript}");
    assert!(transcript.contains("notes/&lt;a&gt;.md"));
    // No page carries the script as markup.
    for entry in walkdir::WalkDir::new(&site) {
        let path = entry.unwrap().into_path();
        if path.extension().is_some_and(|e| e == "html") {
            let html = std::fs::read_to_string(&path).unwrap();
            assert!(!html.contains(evil), "{} carries raw markup from a baseline", path.display());
        }
    }
    // Compare: the pair's page, listed on the index, linking to both task pages.
    let index = read(dir.path(), "compare.html");
    assert!(index.contains("compare/gemini-second/ollama-first.html"), "{index}");
    let pair = read(dir.path(), "compare/gemini-second/ollama-first.html");
    assert!(pair.contains("<code>alpha</code>"), "{pair}");
    assert!(pair.contains("href=\"../../baselines/ollama-first/alpha.html\">1/2</a>"), "{pair}");
    assert!(pair.contains("href=\"../../baselines/gemini-second/alpha.html\">2/2</a>"), "{pair}");
    // Search: task pages by their titles, transcripts not at all.
    let search = std::fs::read_to_string(site.join("search-index.js")).unwrap();
    assert!(search.contains("alpha · first (ollama)"), "task pages are found by name");
    assert!(!search.contains("Transcript of"), "transcripts are not indexed");
    assert!(!search.contains("é".repeat(100).as_str()), "nor their text");
}

/// The reported data loss, through the binary: `--out` through a folder
/// that does not exist yet, then `..`, leads into the docs or a home
/// folder; each is refused before anything is made, and nothing changes.
#[test]
fn out_through_a_missing_folder_and_dot_dot_deletes_nothing() {
    let dir = project();
    let root = dir.path();
    copy_dir(&repo_docs(), &root.join("docs"));
    std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
    std::fs::write(root.join("home/.bashrc"), "rc").unwrap();
    std::fs::write(root.join("home/.ssh/id_ed25519"), "key").unwrap();
    let before: Vec<_> =
        walkdir::WalkDir::new(root).sort_by_file_name().into_iter().map(|e| e.unwrap().into_path()).collect();
    for (out, why) in [("site/../docs", "is the source folder"), ("new/../home", "not empty")] {
        let o = vaultbench(&["publish", "--docs", "docs", "--out", out], root);
        assert!(!o.status.success(), "--out {out} was accepted: {}", stdout(&o));
        let e = stderr(&o);
        assert!(e.contains(out) && e.contains(why), "--out {out}: {e}");
    }
    let after: Vec<_> =
        walkdir::WalkDir::new(root).sort_by_file_name().into_iter().map(|e| e.unwrap().into_path()).collect();
    assert_eq!(before, after, "files came or went");
    assert_eq!(std::fs::read_to_string(root.join("home/.ssh/id_ed25519")).unwrap(), "key");
    // The same folder by its own name works, and so does a path through a missing folder that ends elsewhere.
    let o = vaultbench(&["publish", "--docs", "docs", "--out", "new/../built"], root);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(root.join("built/index.html").is_file() && !root.join("new").exists());
}

/// Two sources of one output path: docs assets named like generated files,
/// an asset beside the page of the same name, baselines whose file names
/// differ only by case, by Unicode normalization or by bytes that are not
/// UTF-8. Each collision is a warning naming both (an error with --strict),
/// nothing generated is replaced, and every baseline has its own page.
#[test]
fn sources_claiming_one_output_path_are_reported_and_every_baseline_has_its_page() {
    let dir = project();
    let root = dir.path();
    let docs = root.join("docs");
    std::fs::create_dir_all(docs.join("baselines")).unwrap();
    std::fs::write(docs.join("index.md"), "# Home\n\nSee [the guide](guide.md).\n").unwrap();
    std::fs::write(docs.join("guide.md"), "# Guide\n\nThe real guide.\n").unwrap();
    std::fs::write(docs.join("guide.html"), "<p>an asset</p>").unwrap();
    std::fs::write(docs.join("results.html"), "<p>fake results</p>").unwrap();
    std::fs::write(docs.join("search-index.js"), "alert(1)").unwrap();
    std::fs::write(docs.join("baselines/openai-m.html"), "<p>fake baseline</p>").unwrap();
    let baselines = root.join("evals/baselines");
    std::fs::create_dir_all(&baselines).unwrap();
    let models = ["m", "M", "caf\u{e9}", "cafe\u{301}"];
    for (i, model) in models.iter().enumerate() {
        let stem = format!("openai-{model}");
        write_result(
            &baselines.join(format!("{stem}.json")),
            &sample_result("openai", &format!("model-{i}"), &[("t", &[true])]),
        );
    }
    #[cfg(unix)]
    for bytes in [b"openai-x\xff.json".as_slice(), b"openai-x\xfe.json".as_slice()] {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(bytes);
        write_result(&baselines.join(name), &sample_result("openai", &format!("raw-{}", bytes[8]), &[("t", &[true])]));
    }
    let strict = vaultbench(&["publish", "--docs", "docs", "--out", "site", "--strict"], root);
    assert!(!strict.status.success(), "--strict accepted collisions: {}", stdout(&strict));
    let e = stderr(&strict);
    for both in [
        ("docs/results.html", "results.html"),
        ("docs/search-index.js", "search index"),
        ("docs/baselines/openai-m.html", "openai-m.json"),
        ("docs/guide.html", "docs/guide.md"),
        ("openai-M.json", "openai-m.json"),
        ("openai-cafe\u{301}.json", "openai-caf\u{e9}.json"),
    ] {
        assert!(e.contains(both.0) && e.contains(both.1), "{both:?} not both named:\n{e}");
    }
    assert!(!root.join("site").exists(), "--strict wrote something");

    let o = vaultbench(&["publish", "--docs", "docs", "--out", "site"], root);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(read(root, "results.html").contains("model-0") && !read(root, "results.html").contains("fake results"));
    assert!(!read(root, "search-index.js").contains("alert(1)"));
    assert!(read(root, "guide.html").contains("The real guide"));
    // Every baseline has a page of its own, showing its own model.
    let pages: Vec<String> = std::fs::read_dir(root.join("site/baselines"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".html"))
        .collect();
    let expected = if cfg!(unix) { 6 } else { 4 };
    assert_eq!(pages.len(), expected, "{pages:?}");
    for model in
        (0..4).map(|i| format!("model-{i}")).chain(["raw-255".into(), "raw-254".into()].into_iter().take(expected - 4))
    {
        let shown = pages
            .iter()
            .filter(|p| {
                std::fs::read_to_string(root.join("site/baselines").join(p)).unwrap().contains(&format!(">{model}<"))
            })
            .count();
        assert!(shown >= 1, "{model} has no page of its own: {pages:?}");
    }
}

/// Checks every URL of a built site: in its HTML pages and in the search
/// index, each is a web or mail address, a fragment, or a relative path to a
/// file the site has; none carries another scheme or leads to another host.
fn assert_every_url_leads_somewhere(site: &Path) -> usize {
    let mut checked = 0;
    let mut check = |page: &Path, base: &Path, url: &str| {
        let at = format!("{}: {url:?}", page.strip_prefix(site).unwrap().display());
        let before_path_end = url.split(['/', '?', '#']).next().unwrap();
        if before_path_end.contains(':') {
            let scheme = before_path_end.split(':').next().unwrap().to_ascii_lowercase();
            assert!(["http", "https", "mailto"].contains(&scheme.as_str()), "{at}: a {scheme}: URL");
            return;
        }
        assert!(!url.starts_with("//"), "{at}: a URL to another host");
        assert!(!url.chars().any(|c| c.is_control() || c == ' '), "{at}: not encoded");
        let path = url.split(['#', '?']).next().unwrap();
        if path.is_empty() {
            return;
        }
        let target = match path.strip_prefix('/') {
            Some(abs) => site.join(percent_decode(abs)),
            None => base.join(percent_decode(path)),
        };
        let target = if path.ends_with('/') { target.join("index.html") } else { target };
        assert!(target.is_file(), "{at} leads to nothing ({})", target.display());
        checked += 1;
    };
    for entry in walkdir::WalkDir::new(site) {
        let entry = entry.unwrap();
        let page = entry.path();
        if page.extension().is_some_and(|e| e == "html") {
            for url in urls(&std::fs::read_to_string(page).unwrap()) {
                check(page, page.parent().unwrap(), &url);
            }
        }
    }
    let index = std::fs::read_to_string(site.join("search-index.js")).unwrap();
    let json: serde_json::Value = serde_json::from_str(
        index.trim().trim_start_matches(|c| c != '=').trim_start_matches('=').trim_end_matches(';'),
    )
    .unwrap();
    for page in json["pages"].as_array().unwrap() {
        check(&site.join("search-index.js"), site, page[1].as_str().unwrap());
    }
    checked
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Generated names for docs pages (in a subfolder or not), baseline
    /// files and model ids, with every character a URL gives a meaning to:
    /// the site builds, and every URL on it, in the pages and the search
    /// index, is safe and leads to a file it has.
    #[test]
    fn generated_names_give_urls_that_are_safe_and_lead_somewhere(
        pages in proptest::collection::vec(("[a-z]{0,2}", "(?:[a-zA-Z0-9:#?%&=;' \"<>\\t\\n()+!@$*,éß\u{202e}_-]|\\.){1,12}"), 1..5),
        models in proptest::collection::vec("(?:[a-zA-Z0-9:#?%&=;' \"<>/()+!,é._-]){1,16}", 1..4),
    ) {
        let dir = project();
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("index.md"), "# Home\n\nWelcome.\n").unwrap();
        let mut written = Vec::new();
        for (i, (folder, name)) in pages.iter().enumerate() {
            let folder = if folder.is_empty() { docs.clone() } else { docs.join(folder) };
            std::fs::create_dir_all(&folder).unwrap();
            // A name the file system refuses is no page of the test.
            if std::fs::write(folder.join(format!("{name}.md")), format!("# Page {i}\n\nText {i}.\n")).is_ok() {
                written.push((format!("Page {i}"), name.clone()));
            }
        }
        let baselines = dir.path().join("evals/baselines");
        for (i, model) in models.iter().enumerate() {
            let r = sample_result("openai", model, &[("t", &[i % 2 == 0])]);
            let stem: String = model.chars().map(|c| if c == '/' { '_' } else { c }).collect();
            write_result(&baselines.join(format!("{stem}-{i}.json")), &r);
        }
        let out = vaultbench(&["publish", "--docs", "docs", "--out", "site"], dir.path());
        proptest::prop_assert!(out.status.success(), "{}", stderr(&out));
        let site = dir.path().join("site");
        let checked = assert_every_url_leads_somewhere(&site);
        proptest::prop_assert!(checked > 10, "only {checked} URLs");
        // Every page was published (a name that begins with a dot is hidden).
        let index = std::fs::read_to_string(site.join("search-index.js")).unwrap();
        for (title, name) in &written {
            proptest::prop_assert!(name.starts_with('.') || index.contains(&format!("[\"{title}\"")), "{title} ({name:?}) is not in the index");
        }
    }
}

/// An evidence archive whose one header claims 1.5 GiB (a GNU long name) is
/// refused at once: the baseline's runs are shown without transcripts, the
/// build warns naming the archive and the cap, and `--strict` fails.
#[test]
fn a_hostile_evidence_archive_is_a_warning_naming_it_and_fails_strict() {
    use std::io::Write;
    let dir = project();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("index.md"), "# Home\n").unwrap();
    let baseline = dir.path().join("evals/baselines/openai-m.json");
    let mut r = sample_result("openai", "m", &[("t", &[true])]);
    r.tasks[0].runs[0].transcript_path = "results/x/t-1.json".into();
    write_result(&baseline, &r);
    let archive = vaultbench::report::evidence::archive_path(&baseline, &r.run_id.0).unwrap();
    std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
    let mut header = tar::Header::new_gnu();
    header.set_path("././@LongLink").unwrap();
    header.set_entry_type(tar::EntryType::GNULongName);
    header.set_size(1536 << 20);
    header.set_cksum();
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&archive).unwrap(), flate2::Compression::fast());
    gz.write_all(header.as_bytes()).unwrap();
    gz.write_all(&vec![0; 1 << 20]).unwrap();
    gz.finish().unwrap();

    let out = vaultbench(&["publish"], dir.path());
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("openai-m.json") && err.contains("without transcripts") && err.contains("64 KiB"), "{err}");
    assert!(read(dir.path(), "baselines/openai-m.html").contains("id=\"evidence-problem\""));
    let out = vaultbench(&["publish", "--strict"], dir.path());
    assert!(!out.status.success(), "{}", stderr(&out));
}

/// The files of a built site, by path (the marker, which records file
/// stamps, and the lock files left out).
fn site_files(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = files_under(root);
    files.retain(|rel, _| !rel.starts_with(".vaultbench-site"));
    files
}

/// "(N written, M unchanged, ...)" of a build's summary line.
fn written_unchanged(out: &std::process::Output) -> (usize, usize) {
    let text = stdout(out);
    let figure = |word: &str| -> usize {
        let at = text.find(&format!(" {word}")).unwrap_or_else(|| panic!("no `{word}` in {text}"));
        text[..at].rsplit(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    (figure("written"), figure("unchanged"))
}

#[test]
fn a_page_is_left_as_the_last_build_wrote_it_only_while_its_data_its_file_and_the_program_are_the_same() {
    let dir = project();
    let baselines = dir.path().join("evals/baselines");
    write_result(&baselines.join("ollama-a.json"), &sample_result("ollama", "a", &[("t", &[true]), ("u", &[false])]));
    write_result(&baselines.join("ollama-b.json"), &sample_result("ollama", "b", &[("t", &[false]), ("u", &[true])]));
    let docs = repo_docs();
    let build = |out: &str| {
        let built = vaultbench(&["publish", "--docs", docs.to_str().unwrap(), "--out", out], dir.path());
        assert!(built.status.success(), "{}{}", stdout(&built), stderr(&built));
        built
    };
    let site = dir.path().join("site");
    let fresh = dir.path().join("fresh");
    let same_as_fresh = |why: &str| {
        let _ = std::fs::remove_dir_all(&fresh);
        build("fresh");
        assert!(site_files(&site) == site_files(&fresh), "{why}: the site differs from a fresh build");
    };
    let (written, _) = written_unchanged(&build("site"));
    assert!(written > 0);
    let manifest = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(site.join(".vaultbench-site")).unwrap()).unwrap()
    };
    let page = "baselines/ollama-a/t.html";
    assert!(manifest()["pages"][page]["digest"].is_u64(), "the task page is recorded: {}", manifest());

    // Nothing changed: every page is left as it is, and the site is the one
    // a fresh build makes (search index included).
    assert_eq!(written_unchanged(&build("site")).0, 0);
    same_as_fresh("a second build");

    // A page edited by hand is not what the last build left: rendered again.
    std::fs::write(site.join(page), "edited by hand").unwrap();
    assert_eq!(written_unchanged(&build("site")).0, 1);
    same_as_fresh("after a page was edited by hand");

    // New data for one baseline: its pages change, the other's are kept.
    let before_b = std::fs::read(site.join("baselines/ollama-b/t.html")).unwrap();
    write_result(&baselines.join("ollama-a.json"), &sample_result("ollama", "a", &[("t", &[false]), ("u", &[false])]));
    build("site");
    same_as_fresh("after a baseline changed");
    assert_eq!(std::fs::read(site.join("baselines/ollama-b/t.html")).unwrap(), before_b);

    // A record is trusted only from the program that wrote it: a page whose
    // file and stamp match its record, but written by another program, is
    // rendered again.
    // A stale page whose record says it is as written, by `program`.
    let stale_recorded_by = |program: Option<&str>| {
        std::fs::write(site.join(page), "stale").unwrap();
        let meta = std::fs::metadata(site.join(page)).unwrap();
        let modified = meta.modified().unwrap().duration_since(std::time::UNIX_EPOCH).unwrap();
        let mut m = manifest();
        m["pages"][page]["size"] = meta.len().into();
        m["pages"][page]["modified"] =
            serde_json::json!({"secs_since_epoch": modified.as_secs(), "nanos_since_epoch": modified.subsec_nanos()});
        m["pages"][page]["inode"] = std::os::unix::fs::MetadataExt::ino(&meta).into();
        if let Some(program) = program {
            m["program"] = program.into();
        }
        std::fs::write(site.join(".vaultbench-site"), serde_json::to_vec(&m).unwrap()).unwrap();
    };
    stale_recorded_by(Some("vaultbench 0.0.0 (another build)"));
    build("site");
    same_as_fresh("after another program's records");
    // (The same records, from this program, keep the stale page.)
    stale_recorded_by(None);
    build("site");
    assert_eq!(std::fs::read_to_string(site.join(page)).unwrap(), "stale", "the record is what decides");
}
