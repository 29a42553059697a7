//! `publish --watch` through the real binary and plain HTTP: a Markdown edit
//! changes the served page, a template error is served as the error page
//! while the server keeps running, fixing it recovers, open pages are told to
//! reload, and Ctrl-C stops it cleanly.

mod common;
mod publish_support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use publish_support::*;

const WAIT: Duration = Duration::from_secs(15);

/// A project with docs and templates copied in, and an empty baselines folder.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_docs(), &dir.path().join("docs"));
    std::fs::create_dir_all(dir.path().join("templates")).unwrap();
    std::fs::create_dir_all(dir.path().join("evals/baselines")).unwrap();
    dir
}

#[test]
fn a_markdown_edit_changes_the_served_page() {
    let dir = project();
    let w = Watcher::start(dir.path(), &[]);
    let page = get(&format!("{}tools.html", w.url));
    assert_eq!(page.status, 200);
    assert!(page.body.contains("The vault tools"), "{}", page.body);
    // Only the preview gets the live-reload script; the file on disk does not.
    assert!(page.body.contains("/__vaultbench/livereload.js"));
    assert!(!std::fs::read_to_string(dir.path().join("site/tools.html")).unwrap().contains("livereload"));

    let file = dir.path().join("docs/tools.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("# The vault tools", "# The vault tools, edited")).unwrap();
    assert!(
        eventually(WAIT, || get(&format!("{}tools.html", w.url)).body.contains("The vault tools, edited")),
        "the page did not change after the edit"
    );
    assert!(w.wait_line("Changed content", WAIT).is_some());
    assert_eq!(w.interrupt(), Some(130));
}

#[test]
fn a_template_error_is_shown_on_the_page_and_fixing_it_recovers() {
    let dir = project();
    let w = Watcher::start(dir.path(), &[]);
    let url = format!("{}index.html", w.url);
    assert_eq!(get(&url).status, 200);

    let base = dir.path().join("templates/base.html");
    std::fs::write(&base, "<html>{% if %}</html>").unwrap();
    assert!(eventually(WAIT, || get(&url).status == 500), "the error page was not served");
    let page = get(&url);
    assert!(page.body.contains("The site did not build"), "{}", page.body);
    assert!(page.body.contains("base.html"), "the error names the template: {}", page.body);
    assert!(page.body.contains("/__vaultbench/livereload.js"), "the error page reloads by itself");
    // Every page shows the error, and the server keeps serving.
    assert_eq!(get(&format!("{}results.html", w.url)).status, 500);
    assert_eq!(get(&format!("{}static/style.css", w.url)).status, 200);

    std::fs::remove_file(&base).unwrap();
    assert!(eventually(WAIT, || get(&url).status == 200), "the site did not recover");
    assert!(get(&url).body.contains("<nav class=\"sidebar\""));
    assert_eq!(w.interrupt(), Some(130));
}

#[test]
fn open_pages_are_told_to_reload_after_a_new_baseline() {
    let dir = project();
    let w = Watcher::start(dir.path(), &[]);
    let host = w.url.trim_start_matches("http://").split('/').next().unwrap().to_string();
    let mut stream = TcpStream::connect(&host).unwrap();
    write!(stream, "GET /__vaultbench/events HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n").unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.contains("200"), "{line}");
    // Let the stream subscribe before the change.
    std::thread::sleep(Duration::from_millis(300));

    let start = Instant::now();
    let r = common::sample_result("ollama", "new-model", &[("alpha", &[true])]);
    common::write_result(&dir.path().join("evals/baselines/ollama-new-model.json"), &r);
    let mut got_reload = false;
    while start.elapsed() < WAIT {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if line.starts_with("event: reload") {
            got_reload = true;
            break;
        }
    }
    assert!(got_reload, "no reload event");
    let results = get(&format!("{}results.html", w.url)).body;
    assert_eq!(results_rows(&results)[0][0], "new-model");
    assert!(w.wait_line("Changed baselines", WAIT).is_some());
    assert_eq!(w.interrupt(), Some(130));
}

#[test]
fn a_malformed_baseline_while_watching_is_a_warning_not_an_outage() {
    let dir = project();
    let w = Watcher::start(dir.path(), &[]);
    std::fs::write(dir.path().join("evals/baselines/bad.json"), "{").unwrap();
    assert!(w.wait_line("bad.json", WAIT).is_some(), "the warning names the file");
    assert_eq!(get(&format!("{}results.html", w.url)).status, 200);
}

#[test]
fn a_sub_path_preview_answers_at_the_printed_url() {
    for clean in [false, true] {
        let dir = project();
        std::fs::write(
            dir.path().join("vaultbench.toml"),
            format!("[site]\nbase_path = \"/vaultbench/\"\nclean_urls = {clean}\n"),
        )
        .unwrap();
        let w = Watcher::start(dir.path(), &[]);
        assert!(w.url.ends_with("/vaultbench/"), "{}", w.url);
        let home = get(&w.url);
        assert_eq!(home.status, 200, "the printed URL answers (clean URLs: {clean})");
        assert!(home.body.contains("<main"), "{}", home.body);
        let results = if clean { "results/" } else { "results.html" };
        assert_eq!(get(&format!("{}{results}", w.url)).status, 200, "{results}");
        assert_eq!(get(&format!("{}static/style.css", w.url)).status, 200);
        let missing = get(&format!("{}no-such-page.html", w.url));
        assert_eq!(missing.status, 404);
        assert!(missing.body.contains("Page not found"), "the site's own 404 page: {}", missing.body);
        // The root and the base path without its slash lead to the home page.
        let host = w.url.trim_start_matches("http://").split('/').next().unwrap().to_string();
        assert_eq!(get(&format!("http://{host}/")).status, 307);
        assert_eq!(get(&format!("http://{host}/vaultbench")).status, 307);
        assert_eq!(get(&format!("http://{host}/elsewhere.html")).status, 404);
        if clean {
            let folder = http_head(&format!("{}results", w.url));
            assert!(folder.contains("/vaultbench/results/"), "the redirect keeps the base path: {folder}");
        }
        assert_eq!(w.interrupt(), Some(130));
    }
}

/// The status line and headers of a GET.
fn http_head(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').map(|(h, p)| (h, format!("/{p}"))).unwrap();
    let mut stream = TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut head = String::new();
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    head
}

/// Every file under `dir`, by path, with its bytes.
const MARKER: &str = ".vaultbench-site";

/// A rebuild keeps the pages whose data did not change (`--watch`); each
/// rebuild below must give exactly the site a fresh build gives, whatever
/// changed: a baseline's commit, one run's answer, its evidence archive, a
/// new and a removed baseline, a docs page (the navigation), a template
/// that makes every page read the results. A dependency the rebuild missed
/// leaves a stale page, and the trees differ.
#[test]
fn a_rebuild_after_each_change_gives_the_site_a_fresh_build_gives() {
    use vaultbench::publish::{ChangeKind, PublishOptions, Site};
    let dir = project();
    let root = dir.path();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let baselines = root.join("evals/baselines");
    copy_dir(&repo.join("evals/baselines"), &baselines);
    let ours = baselines.join("openai-smollm2-135m-instruct.json");
    let text = std::fs::read_to_string(&ours).unwrap();
    // A second model, so that the pair pages and the tie with the row above are built too.
    std::fs::write(baselines.join("other.json"), text.replace("smollm2-135m-instruct", "other-model")).unwrap();
    let options = |out: &str| PublishOptions {
        docs: root.join("docs"),
        baselines: baselines.clone(),
        suite: repo.join("evals"),
        out: root.join(out),
        templates: root.join("templates"),
        config: root.join("vaultbench.toml"),
        strict: false,
        require_baselines: true,
    };
    let mut watched = Site::load(options("site")).unwrap();
    watched.keep_pages();
    let out = options("site").output_dir().unwrap();
    let mut rebuild = |kind: ChangeKind, what: &str| {
        watched.reload(kind).unwrap();
        watched.build_into(&out, None, false).unwrap();
        let _ = std::fs::remove_dir_all(root.join("fresh"));
        vaultbench::publish::build(&options("fresh")).unwrap();
        let (incremental, fresh) = (files_under(&root.join("site")), files_under(&root.join("fresh")));
        assert_eq!(
            incremental.keys().collect::<Vec<_>>(),
            fresh.keys().collect::<Vec<_>>(),
            "after {what}: the same files"
        );
        for (path, bytes) in &fresh {
            if path == MARKER {
                // The marker also records each page's file stamp (its time
                // and inode), which differ between two builds; what it lists
                // must not.
                let files = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap()["files"].clone();
                assert_eq!(files(&incremental[path]), files(bytes), "after {what}: the files listed");
                continue;
            }
            assert!(incremental[path] == *bytes, "after {what}: {path} differs from a fresh build");
        }
        fresh.len()
    };
    let pages = rebuild(ChangeKind::Baselines, "the first build");
    assert!(pages > 300, "every task and transcript page is built ({pages} files)");

    std::fs::write(&ours, text.replacen("\"git_sha\": \"", "\"git_sha\": \"0ther", 1)).unwrap();
    rebuild(ChangeKind::Baselines, "a new commit");
    let answer = "\"response_text\": \"";
    assert!(text.contains(answer));
    std::fs::write(&ours, text.replacen(answer, "\"response_text\": \"<b>changed</b> ", 1)).unwrap();
    rebuild(ChangeKind::Baselines, "one run's answer");
    let archive = walkdir::WalkDir::new(baselines.join("evidence"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .expect("our baseline has its evidence");
    let entries = vaultbench::report::evidence::read(&archive).unwrap();
    let (first, _) = entries.iter().next().unwrap();
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for (name, data) in &entries {
        let data = if name == first {
            transcript_json("a changed question", "a changed result", "answered").into_bytes()
        } else {
            data.clone()
        };
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, data.as_slice()).unwrap();
    }
    std::fs::write(&archive, tar.into_inner().unwrap().finish().unwrap()).unwrap();
    rebuild(ChangeKind::Baselines, "a transcript in the evidence");
    std::fs::write(baselines.join("third.json"), text.replace("smollm2-135m-instruct", "third-model")).unwrap();
    rebuild(ChangeKind::Baselines, "a new baseline");
    std::fs::remove_file(baselines.join("other.json")).unwrap();
    rebuild(ChangeKind::Baselines, "a removed baseline");
    std::fs::write(root.join("docs/zz-new.md"), "# A new page\n\nIn the navigation of every page.\n").unwrap();
    rebuild(ChangeKind::Content, "a new docs page");
    std::fs::create_dir_all(root.join("templates/partials")).unwrap();
    std::fs::write(root.join("templates/partials/page_footer.html"), "<p>{{ results.rows | length }} models</p>")
        .unwrap();
    rebuild(ChangeKind::Templates, "a template reading the results on every page");
    std::fs::write(&ours, &text).unwrap();
    rebuild(ChangeKind::Baselines, "a baseline read by every page");
}

/// The docs folder deleted and made again, then replaced by a rename (what
/// `git checkout` and some editors do): every edit after each still shows,
/// not only the first. A one-off build into the folder the preview serves is
/// refused, naming the preview, so the preview never serves an older build.
#[test]
fn edits_keep_showing_after_the_docs_folder_is_replaced_and_one_off_builds_are_refused() {
    let dir = project();
    let w = Watcher::start(dir.path(), &[]);
    let docs = dir.path().join("docs");
    let url = format!("{}tools.html", w.url);
    let edit = |marker: &str| {
        let file = docs.join("tools.md");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}\n\n{marker}\n")).unwrap();
        assert!(eventually(WAIT, || get(&url).body.contains(marker)), "{marker} did not show");
    };
    edit("first-edit-before-anything");

    // Deleted and made again.
    let kept = dir.path().join("kept-docs");
    copy_dir(&docs, &kept);
    std::fs::remove_dir_all(&docs).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    copy_dir(&kept, &docs);
    edit("edit-after-recreate-one");
    edit("edit-after-recreate-two");

    // Replaced by a rename.
    let next = dir.path().join("docs.next");
    copy_dir(&docs, &next);
    let old = dir.path().join("docs.old");
    std::fs::rename(&docs, &old).unwrap();
    std::fs::rename(&next, &docs).unwrap();
    edit("edit-after-rename-one");
    edit("edit-after-rename-two");

    let one_off = common::vaultbench(&["publish", "--docs", "docs", "--out", "site"], dir.path());
    assert!(!one_off.status.success(), "a one-off build wrote into the served folder");
    assert!(common::stderr(&one_off).contains("publish --watch"), "{}", common::stderr(&one_off));
    assert!(get(&url).body.contains("edit-after-rename-two"));
    assert_eq!(w.interrupt(), Some(130));
}
