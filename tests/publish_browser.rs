//! End to end in headless Chromium, driven over the WebDriver protocol
//! (chromedriver + HTTP JSON): `publish --watch` serves the results page,
//! the table is checked in the browser, then a new baseline file appears and
//! the open page must reload by itself and show the new row within 2 s.
//! Then the site as a reader uses it: opened from disk (`file://`) it is
//! styled and its links work; search (keyboard `/`) finds a page and a
//! model's row; the theme toggle switches and is remembered; a heading's
//! anchor scrolls to it; a preview under a sub-path answers at its URL.
//!
//! Skips, saying why, when chromium or chromedriver is not installed
//! (`.ci/run` installs both).

mod common;
mod publish_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use publish_support::*;
use serde_json::{Value, json};

struct Driver {
    process: Child,
    base: String,
    session: String,
    _profile: tempfile::TempDir,
    /// One browser at a time: the tests' timings assume a browser that is
    /// not sharing two cores with eight others.
    _turn: std::sync::MutexGuard<'static, ()>,
}

static BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Driver {
    fn start(chromium: &Path, chromedriver: &Path) -> Driver {
        // A test that failed with the browser held leaves the lock poisoned,
        // not unusable.
        let turn = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
        let port = free_port();
        let process = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let base = format!("http://127.0.0.1:{port}");
        assert!(
            eventually(Duration::from_secs(20), || http("GET", &format!("{base}/status"), None)
                .is_ok_and(|r| r.body.contains("\"ready\":true"))),
            "chromedriver did not become ready"
        );
        let profile = tempfile::tempdir().unwrap();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                    "--window-size=1280,900",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        }}});
        let mut driver = Driver { process, base, session: String::new(), _profile: profile, _turn: turn };
        let created = driver.call("POST", "/session", Some(caps));
        driver.session = created["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {created}")).to_string();
        driver
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string());
        let r = http(method, &format!("{}{path}", self.base), body.as_deref()).expect("chromedriver answers");
        let v: Value = serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body));
        assert!(r.status == 200, "WebDriver {method} {path}: {}", r.body);
        v["value"].clone()
    }

    /// Open `url` and wait until its document has loaded (a navigation's
    /// answer can come back while a slow machine still parses the page).
    fn goto(&self, url: &str) {
        self.call("POST", &format!("/session/{}/url", self.session), Some(json!({"url": url})));
        let loaded = self.wait_until("return document.readyState === 'complete';");
        assert!(loaded, "{url} did not finish loading within 10 s: {}", self.eval(PAGE_STATE));
    }

    /// Wait until `css` matches an element of the page, or fail saying what
    /// the page shows instead.
    fn wait_for(&self, css: &str) {
        let script = format!("return document.querySelector({}) !== null;", json!(css));
        let found = self.wait_until(&script);
        assert!(found, "no `{css}` on the page within 10 s; the page: {}", self.eval(PAGE_STATE));
    }

    fn eval(&self, script: &str) -> Value {
        self.call(
            "POST",
            &format!("/session/{}/execute/sync", self.session),
            Some(json!({"script": script, "args": []})),
        )
    }

    /// Press keys as a user would (to whatever has the focus).
    fn keys(&self, text: &str) {
        let mut actions = Vec::new();
        for c in text.chars() {
            actions.push(json!({"type": "keyDown", "value": c.to_string()}));
            actions.push(json!({"type": "keyUp", "value": c.to_string()}));
        }
        self.call(
            "POST",
            &format!("/session/{}/actions", self.session),
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        );
    }

    /// Click the element matching `css` (a real pointer click).
    fn click(&self, css: &str) {
        let found = self.call(
            "POST",
            &format!("/session/{}/element", self.session),
            Some(json!({"using": "css selector", "value": css})),
        );
        let id = found.as_object().and_then(|o| o.values().next()).and_then(|v| v.as_str()).expect("an element id");
        self.call("POST", &format!("/session/{}/element/{id}/click", self.session), Some(json!({})));
    }

    /// Evaluate `script` until it returns true, for up to 10 s.
    fn wait_until(&self, script: &str) -> bool {
        eventually(Duration::from_secs(10), || self.eval(script) == json!(true))
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http("DELETE", &format!("{}/session/{}", self.base, self.session), None);
        }
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn programs() -> Option<(PathBuf, PathBuf)> {
    let chromium = find_program("chromium", &["/usr/bin/chromium", "/usr/bin/chromium-browser"]);
    let driver = find_program("chromedriver", &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]);
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        (c, d) => {
            eprintln!(
                "skipping: the browser test needs chromium ({}) and chromedriver ({}); \
                 install them with `apt-get install -y chromium chromium-driver`",
                if c.is_some() { "found" } else { "missing" },
                if d.is_some() { "found" } else { "missing" }
            );
            None
        }
    }
}

/// What a failing wait reports: where the browser is and what it shows.
const PAGE_STATE: &str = "return {url: location.href, state: document.readyState, title: document.title, \
    text: (document.body ? document.body.innerText : '').slice(0, 400)};";

const ROWS: &str = "return Array.from(document.querySelectorAll('table.results tbody tr'))\
    .map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.textContent.trim().replace(/\\s+/g, ' ')));";

#[test]
fn the_results_page_reloads_with_a_new_baseline_within_two_seconds() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_docs(), &dir.path().join("docs"));
    std::fs::write(dir.path().join("vaultbench.toml"), "[site]\nrepository = \"https://example.org/repo\"\n").unwrap();
    let baselines = dir.path().join("evals/baselines");
    common::write_result(
        &baselines.join("ollama-first.json"),
        &common::sample_result("ollama", "first-model", &[("alpha", &[true, true]), ("beta", &[true, false])]),
    );
    let watch = Watcher::start(dir.path(), &[]);
    let driver = Driver::start(&chromium, &chromedriver);

    driver.goto(&format!("{}results.html", watch.url));
    driver.wait_for("table.results tbody tr");
    let rows = driver.eval(ROWS);
    assert_eq!(
        rows,
        json!([[
            "first-model",
            "ollama",
            "2",
            "2",
            "100.0%",
            "50.0%",
            "—",
            "1/2",
            "—",
            "—",
            "2026-11-20",
            "0123abc",
            "50.0% ±50.0",
            "0.000000",
            "3.0",
            "—"
        ]]),
        "the table as the browser shows it: the twelve columns, then the interval, cost, turns and the change since \
         the previous blessing (none outside a repository)"
    );
    let link = driver.eval("return document.querySelector('table.results tbody tr td:nth-child(12) a').href;");
    assert_eq!(link, json!("https://example.org/repo/commit/0123abc"));
    // The tier chart is drawn without JavaScript, in HTML: four tier tracks,
    // and a bar for the one tier (T2) the baseline has.
    assert_eq!(driver.eval("return document.querySelectorAll('.tier-chart .bar-track').length;"), json!(4));
    assert_eq!(driver.eval("return document.querySelectorAll('.tier-chart .bar').length;"), json!(1));
    assert!(
        eventually(Duration::from_secs(10), || driver
            .eval("return document.documentElement.getAttribute('data-live-reload');")
            == json!("connected")),
        "the live-reload script did not connect"
    );
    driver.eval("window.__before_reload = true; return null;");

    let start = Instant::now();
    common::write_result(
        &baselines.join("gemini-second.json"),
        &common::sample_result("gemini", "second-model", &[("alpha", &[true, true]), ("beta", &[true, true])]),
    );
    let mut seen = Value::Null;
    let reloaded = eventually(Duration::from_secs(2), || {
        seen = driver.eval(
            "return {marker: window.__before_reload === true, \
             models: Array.from(document.querySelectorAll('table.results tbody tr td:first-child')).map(td => td.textContent.trim())};",
        );
        seen["marker"] == json!(false) && seen["models"] == json!(["second-model", "first-model"])
    });
    let elapsed = start.elapsed();
    assert!(reloaded, "no reload with the new row within 2 s; the page shows {seen}");
    eprintln!("the page reloaded with the new row {} ms after the file was written", elapsed.as_millis());
    let rows = driver.eval(ROWS);
    assert_eq!(
        rows[0],
        json!([
            "second-model",
            "gemini",
            "2",
            "2",
            "100.0%",
            "100.0%",
            "—",
            "2/2",
            "—",
            "—",
            "2026-11-20",
            "0123abc",
            "100.0% ±0.0",
            "0.000000",
            "3.0",
            "—"
        ])
    );
    drop(driver);
    assert_eq!(watch.interrupt(), Some(130));
}

/// A project with our docs and two baselines, published to `site/`.
fn published_project(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_docs(), &dir.path().join("docs"));
    std::fs::write(dir.path().join("vaultbench.toml"), config).unwrap();
    let baselines = dir.path().join("evals/baselines");
    common::write_result(
        &baselines.join("ollama-first.json"),
        &common::sample_result("ollama", "first-model", &[("alpha", &[true, true]), ("beta", &[true, false])]),
    );
    common::write_result(
        &baselines.join("gemini-second.json"),
        &common::sample_result("gemini", "second-model", &[("alpha", &[true, true]), ("beta", &[true, true])]),
    );
    let out = common::vaultbench(&["publish", "--strict"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Whether the page has its stylesheet: the header is sticky only by it.
const STYLED: &str = "return getComputedStyle(document.querySelector('header.top')).position === 'sticky';";

#[test]
fn the_site_opened_from_disk_is_styled_its_links_work_and_search_finds_pages_and_rows() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let dir = published_project("[site]\n");
    let site = dir.path().join("site");
    let driver = Driver::start(&chromium, &chromedriver);

    driver.goto(&file_url(&site.join("index.html")));
    assert_eq!(driver.eval(STYLED), json!(true), "the stylesheet loads from disk");
    // A link in the navigation, then one back from a page one folder down.
    driver.click("nav.sidebar a[href='results.html']");
    assert!(driver.wait_until(
        "return location.pathname.endsWith('/results.html') && !!document.querySelector('table.results');"
    ));
    driver.click("table.results tbody tr:first-child td:first-child a");
    assert!(driver.wait_until("return location.pathname.endsWith('/baselines/gemini-second.html');"));
    assert_eq!(driver.eval(STYLED), json!(true), "a page in a folder is styled too");
    assert_eq!(driver.eval("return document.querySelector('h1').textContent.includes('second-model');"), json!(true));
    driver.click("nav.sidebar a[href='../tools.html']");
    assert!(driver.wait_until(
        "return location.pathname.endsWith('/tools.html') && document.title.startsWith('The vault tools');"
    ));

    // Search: `/` focuses the box; a page is found by its words...
    driver.keys("/");
    assert_eq!(driver.eval("return document.activeElement.id;"), json!("search-input"));
    driver.keys("judge retries");
    assert!(
        driver.wait_until(
            "var r = document.querySelector('#search-results'); return !r.hidden && r.querySelectorAll('a').length > 0;"
        ),
        "no search results"
    );
    let first = driver.eval("return document.querySelector('#search-results a .hit-title').textContent;");
    assert!(first.as_str().unwrap().contains("Providers"), "the first hit: {first}");
    // ...and a model by its name, leading to its row of the results table.
    driver.eval("var i = document.querySelector('#search-input'); i.value = ''; i.focus(); return null;");
    driver.keys("second-model");
    assert!(driver.wait_until(
        "return Array.from(document.querySelectorAll('#search-results a')).some(a => a.pathname.endsWith('/results.html') && a.hash === '#model-gemini-second');"
    ));
    let hits = driver
        .eval("return Array.from(document.querySelectorAll('#search-results a .hit-title')).map(t => t.textContent);");
    assert!(hits[0].as_str().unwrap().contains("second-model"), "{hits}");
    let row = driver.eval("return Array.from(document.querySelectorAll('#search-results a')).findIndex(a => a.pathname.endsWith('/results.html') && a.hash === '#model-gemini-second');");
    assert_eq!(hits[row.as_u64().unwrap() as usize], json!("Results › second-model (gemini)"));
    // ArrowDown to the row's hit, Enter.
    driver.keys(&"\u{E015}".repeat(row.as_u64().unwrap() as usize + 1));
    driver.keys("\u{E007}");
    assert!(
        driver.wait_until(
            "return location.pathname.endsWith('/results.html') && location.hash === '#model-gemini-second';"
        ),
        "the hit leads to the row: {}",
        driver.eval("return location.href;")
    );
    assert_eq!(
        driver.eval("return document.querySelector(':target td').textContent.trim();"),
        json!("second-model"),
        "the row is the target"
    );
}

#[test]
fn the_theme_toggle_switches_and_is_remembered_and_anchors_scroll() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let dir = published_project("[site]\n");
    let site = dir.path().join("site");
    let driver = Driver::start(&chromium, &chromedriver);
    let background = "return getComputedStyle(document.body).backgroundColor;";

    driver.goto(&file_url(&site.join("index.html")));
    assert_eq!(driver.eval(background), json!("rgb(255, 255, 255)"), "light by default (the system's)");
    driver.click(".theme-toggle");
    assert_eq!(driver.eval("return document.documentElement.getAttribute('data-theme');"), json!("dark"));
    assert_eq!(driver.eval(background), json!("rgb(15, 18, 22)"));
    assert_eq!(
        driver.eval("return document.querySelector('.theme-toggle').getAttribute('aria-pressed');"),
        json!("true")
    );
    // Another page, opened afresh, keeps the choice.
    driver.goto(&file_url(&site.join("results.html")));
    assert_eq!(driver.eval(background), json!("rgb(15, 18, 22)"), "remembered");
    driver.click(".theme-toggle");
    driver.goto(&file_url(&site.join("tools.html")));
    assert_eq!(driver.eval(background), json!("rgb(255, 255, 255)"), "back to light, remembered too");

    // A heading's anchor link scrolls it to the top, below the sticky header.
    // One far enough down to scroll, with enough page below it to reach the top.
    let id = driver.eval(
        "var room = document.documentElement.scrollHeight - innerHeight; \
         var h = Array.from(document.querySelectorAll('main h2[id]')).filter(h => h.offsetTop > innerHeight && h.offsetTop < room); \
         return h[0].id;",
    );
    let id = id.as_str().unwrap().to_string();
    assert_eq!(driver.eval("return window.scrollY;"), json!(0));
    driver.eval(&format!("document.querySelector('#{id} a.anchor').click(); return null;"));
    assert!(driver.wait_until(&format!("return location.hash === '#{id}';")));
    let top = driver.eval(&format!("return document.getElementById('{id}').getBoundingClientRect().top;"));
    let header = driver.eval("return document.querySelector('header.top').getBoundingClientRect().height;");
    let (top, header) = (top.as_f64().unwrap(), header.as_f64().unwrap());
    assert!(driver.eval("return window.scrollY;").as_f64().unwrap() > 0.0, "the page scrolled");
    assert!(
        top >= header - 1.0 && top < header + 60.0,
        "the heading sits below the header: top {top}, header {header}"
    );
}

#[test]
fn a_preview_under_a_sub_path_answers_at_its_printed_url_in_the_browser() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_docs(), &dir.path().join("docs"));
    std::fs::write(dir.path().join("vaultbench.toml"), "[site]\nbase_path = \"/vaultbench/\"\n").unwrap();
    std::fs::create_dir_all(dir.path().join("evals/baselines")).unwrap();
    let watch = Watcher::start(dir.path(), &[]);
    assert!(watch.url.ends_with("/vaultbench/"), "{}", watch.url);
    assert_eq!(get(&watch.url).status, 200);
    let driver = Driver::start(&chromium, &chromedriver);
    driver.goto(&watch.url);
    assert_eq!(driver.eval(STYLED), json!(true));
    assert_eq!(driver.eval("return document.querySelector('h1').textContent.trim();"), json!("vaultbench #"));
    driver.click("nav.sidebar a[href='tools.html']");
    assert!(driver.wait_until("return location.pathname === '/vaultbench/tools.html';"));
    drop(driver);
    assert_eq!(watch.interrupt(), Some(130));
}

/// The results as a reader's tool: sort by a header, filter by typing and
/// by provider, follow a row to its model, a task, a run and its transcript,
/// compare two models; at phone width the model and solve^k show without
/// scrolling sideways.
#[test]
fn a_reader_sorts_filters_follows_a_run_to_its_transcript_and_compares_two_models() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_docs(), &dir.path().join("docs"));
    std::fs::write(dir.path().join("vaultbench.toml"), "[site]\n").unwrap();
    let baselines = dir.path().join("evals/baselines");
    let mut r = common::sample_result("ollama", "first-model", &[("alpha", &[true, false]), ("beta", &[true, true])]);
    for task in &mut r.tasks {
        for (i, run) in task.runs.iter_mut().enumerate() {
            run.transcript_path = format!("results/x/{}-{}.json", task.id, i + 1);
        }
    }
    let transcripts: Vec<(String, String)> = ["alpha-1", "alpha-2", "beta-1", "beta-2"]
        .iter()
        .map(|n| (format!("{n}.json"), transcript_json(&format!("question of {n}"), "the note", "answered")))
        .collect();
    write_baseline_with_evidence(&baselines, "ollama-first", &r, &transcripts);
    common::write_result(
        &baselines.join("gemini-second.json"),
        &common::sample_result("gemini", "second-model", &[("alpha", &[true, true]), ("beta", &[true, true])]),
    );
    common::write_result(
        &baselines.join("openai-third.json"),
        &common::sample_result("openai", "third-model", &[("alpha", &[false, false]), ("beta", &[true, false])]),
    );
    let out = common::vaultbench(&["publish", "--strict", "--suite", "no-suite"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let site = dir.path().join("site");
    let driver = Driver::start(&chromium, &chromedriver);
    let models = "return Array.from(document.querySelectorAll('table.results tbody tr')).filter(tr => !tr.hidden)\
        .map(tr => tr.querySelector('td').textContent.trim());";

    driver.goto(&file_url(&site.join("results.html")));
    assert_eq!(driver.eval(models), json!(["second-model", "first-model", "third-model"]));
    // Sort: solve^k ascending, then descending; Model by name.
    driver.click("table.results thead th:nth-child(6) button");
    assert_eq!(driver.eval(models), json!(["second-model", "first-model", "third-model"]), "descending first");
    driver.click("table.results thead th:nth-child(6) button");
    assert_eq!(driver.eval(models), json!(["third-model", "first-model", "second-model"]));
    assert_eq!(
        driver.eval("return document.querySelector('table.results thead th:nth-child(6)').getAttribute('aria-sort');"),
        json!("ascending")
    );
    driver.click("table.results thead th:nth-child(1) button");
    assert_eq!(driver.eval(models), json!(["third-model", "second-model", "first-model"]));
    // Filter by typing, then by provider.
    driver.click(".table-tools input");
    driver.keys("first");
    assert_eq!(driver.eval(models), json!(["first-model"]));
    assert_eq!(driver.eval("return document.querySelector('.table-tools .count').textContent;"), json!("1 of 3 shown"));
    driver.eval("var i = document.querySelector('.table-tools input'); i.value = ''; i.dispatchEvent(new Event('input')); return null;");
    driver.eval("var s = document.querySelector('.table-tools select'); s.value = 'gemini'; s.dispatchEvent(new Event('change')); return null;");
    assert_eq!(driver.eval(models), json!(["second-model"]));
    driver.eval("var s = document.querySelector('.table-tools select'); s.value = ''; s.dispatchEvent(new Event('change')); return null;");

    // A row to its model, a task, a run, its transcript.
    driver.click("table.results tbody tr#model-ollama-first td.model a");
    assert!(driver.wait_until("return location.pathname.endsWith('/baselines/ollama-first.html');"));
    driver.click("#failures a[href$='alpha.html#run-2'], table.failures a[href$='alpha.html#run-2']");
    assert!(driver.wait_until(
        "return location.pathname.endsWith('/baselines/ollama-first/alpha.html') && location.hash === '#run-2';"
    ));
    assert_eq!(
        driver.eval("return document.querySelector('#run-2 .verdict-no').textContent;"),
        json!("passed, not solved")
    );
    driver.click("section.run:nth-of-type(2) a.transcript-link");
    assert!(driver.wait_until("return location.pathname.endsWith('/baselines/ollama-first/alpha/run-2.html');"));
    assert_eq!(
        driver.eval("return document.querySelector('ol.conversation li.turn-user pre').textContent;"),
        json!("question of alpha-2")
    );
    assert_eq!(driver.eval(STYLED), json!(true));

    // Compare two models from the menus.
    driver.goto(&file_url(&site.join("compare.html")));
    driver.eval("document.getElementById('compare-a').value = 'ollama-first'; document.getElementById('compare-b').value = 'gemini-second'; return null;");
    driver.click("#compare-pick button");
    assert!(
        driver.wait_until("return location.pathname.endsWith('/compare/gemini-second/ollama-first.html');"),
        "{}",
        driver.eval("return location.href;")
    );
    let differing = driver.eval(
        "return Array.from(document.querySelectorAll('table.pair-tasks tbody tr')).map(tr => Array.from(tr.cells).slice(0, 4).map(td => td.textContent.trim()));",
    );
    assert_eq!(differing, json!([["alpha", "T2", "2/2", "1/2"]]));
    driver.click("table.pair-tasks tbody tr:first-child td:nth-child(4) a");
    assert!(driver.wait_until("return location.pathname.endsWith('/baselines/ollama-first/alpha.html');"));

    // Phone width: the model and solve^k in view, the table scrolls in itself.
    driver.call(
        "POST",
        &format!("/session/{}/window/rect", driver.session),
        Some(json!({"width": 390, "height": 844})),
    );
    driver.goto(&file_url(&site.join("results.html")));
    let fits = driver.eval(
        "var w = document.documentElement.clientWidth; var row = document.querySelector('table.results tbody tr');\
         var model = row.querySelector('td.model').getBoundingClientRect(), solve = row.cells[5].getBoundingClientRect();\
         return {w: w, model: model.right <= w, solve: solve.right <= w, page: document.documentElement.scrollWidth <= w};",
    );
    assert_eq!(fits["model"], json!(true), "{fits}");
    assert_eq!(fits["solve"], json!(true), "{fits}");
    assert_eq!(fits["page"], json!(true), "the page itself does not scroll sideways: {fits}");
    assert_eq!(
        driver.eval("return getComputedStyle(document.querySelector('nav.sidebar')).display;"),
        json!("none"),
        "the navigation folds behind the Menu button"
    );
}

/// A model name of 40 characters, as long as the results table must fit.
const LONG_MODEL: &str = "gemma-4-instruct-long-quantized-q4-k-mxl";

/// A project with our docs, a suite of one task whose request says "toll
/// handcart", and three baselines, one of them with a 40-character model
/// name; published to `site/`. `page` adds a docs page (name, text).
fn wide_project(page: Option<(&str, &str)>) -> tempfile::TempDir {
    assert_eq!(LONG_MODEL.len(), 40);
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_docs(), &dir.path().join("docs"));
    if let Some((name, text)) = page {
        std::fs::write(dir.path().join("docs").join(name), text).unwrap();
    }
    std::fs::write(dir.path().join("vaultbench.toml"), "[site]\nrepository = \"https://example.org/repo\"\n").unwrap();
    let suite = dir.path().join("suite");
    std::fs::create_dir_all(suite.join("fixtures/depot")).unwrap();
    std::fs::create_dir_all(suite.join("tasks")).unwrap();
    std::fs::write(suite.join("fixtures/depot/log.md"), "The toll handcart left at 06:10.\n").unwrap();
    std::fs::write(
        suite.join("tasks/depot-handcart.json"),
        r#"{"id": "depot-handcart", "description": "read the depot log", "userMessage": "When did the toll handcart leave the depot? Read eval-scratch/log.md.",
        "difficulty": "T2", "category": "retrieval", "fixture": "depot", "expectedTools": ["read_file"],
        "outputMatchers": [{"type": "contains", "value": "06:10"}], "toolCallBudget": 3, "maxTurns": 5, "timeoutMs": 20000}"#,
    )
    .unwrap();
    let baselines = dir.path().join("evals/baselines");
    let tasks: &[(&str, &[bool])] = &[("depot-handcart", &[true, true, false]), ("alpha", &[true, false, false])];
    common::write_result(&baselines.join("ollama-long.json"), &common::sample_result("ollama", LONG_MODEL, tasks));
    common::write_result(
        &baselines.join("gemini-second.json"),
        &common::sample_result(
            "gemini",
            "second-model",
            &[("depot-handcart", &[true, true, true]), ("alpha", &[true, true, false])],
        ),
    );
    common::write_result(
        &baselines.join("openai-third.json"),
        &common::sample_result(
            "openai",
            "third-model",
            &[("depot-handcart", &[false, false, false]), ("alpha", &[true, false, true])],
        ),
    );
    let out = common::vaultbench(&["publish", "--strict", "--suite", suite.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

/// Set the window's size (its inner width is what media queries see).
fn window(driver: &Driver, width: u32, height: u32) {
    driver.call(
        "POST",
        &format!("/session/{}/window/rect", driver.session),
        Some(json!({"width": width, "height": height})),
    );
}

/// The elements matching `css` whose right edge is past the viewport, or
/// that lie under the sticky first column, as "text: left-right".
fn outside_viewport(driver: &Driver, css: &str) -> Value {
    driver.eval(&format!(
        "var w = document.documentElement.clientWidth; \
         return Array.from(document.querySelectorAll({css:?})).filter(e => {{ var r = e.getBoundingClientRect(); return r.right > w + 0.5 || r.left < 0; }}) \
           .map(e => e.textContent.trim().slice(0, 30) + ': ' + Math.round(e.getBoundingClientRect().left) + '-' + Math.round(e.getBoundingClientRect().right) + ' of ' + w);"
    ))
}

#[test]
fn at_1280_px_every_column_chart_and_note_fits_and_at_390_px_model_solve_k_and_every_tier_show() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let dir = wide_project(None);
    let site = dir.path().join("site");
    let driver = Driver::start(&chromium, &chromedriver);
    window(&driver, 1280, 900);
    driver.goto(&file_url(&site.join("results.html")));
    // The window is 1280 px wide, its scroll bar included.
    assert!(driver.eval("return window.innerWidth;") == json!(1280), "{}", driver.eval("return window.innerWidth;"));
    let long = driver.eval(&format!(
        "return Array.from(document.querySelectorAll('table.results td.model')).some(td => td.textContent.trim() === '{LONG_MODEL}');"
    ));
    assert_eq!(long, json!(true), "the 40-character name is in the table, whole");
    // Every header and cell of the table, the note under it, the tier chart
    // and the legends are within the viewport: nothing to scroll to.
    for css in [
        "table.results th",
        "table.results td",
        "p.table-note",
        ".tier-chart .tier-cell",
        ".tier-chart .tier-model",
        ".chart-legend li",
        "ol.chart-points li",
        "svg.line-chart",
    ] {
        assert_eq!(outside_viewport(&driver, css), json!([]), "{css} at 1280 px");
    }
    let scroller = driver.eval(
        "var s = document.querySelector('table.results').closest('.table-scroll'); return s.scrollWidth - s.clientWidth;",
    );
    assert_eq!(scroller, json!(0), "the results table does not scroll sideways at 1280 px");
    // The note wraps: it is several lines, none cut.
    let note = driver.eval(
        "var p = document.querySelector('p.table-note'); return {lines: Math.round(p.getBoundingClientRect().height / parseFloat(getComputedStyle(p).lineHeight)), overflow: p.scrollWidth - p.clientWidth, text: p.textContent.trim().slice(0, 11)};",
    );
    assert_eq!(note["text"], json!("Noise floor"), "{note}");
    assert!(note["lines"].as_i64().unwrap() >= 2 && note["overflow"] == json!(0), "{note}");
    // The whole name is on the chart rows and in the legend, and on hover.
    let titles = driver.eval("return Array.from(document.querySelectorAll('.tier-model[title]')).map(e => e.title);");
    assert!(titles.as_array().unwrap().contains(&json!(format!("{LONG_MODEL} (ollama)"))), "{titles}");
    let legend =
        driver.eval("return Array.from(document.querySelectorAll('.chart-legend li')).map(e => e.textContent.trim());");
    assert!(legend.as_array().unwrap().contains(&json!(format!("{LONG_MODEL} (ollama)"))), "{legend}");

    // A baseline page and the matrix use the width too.
    driver.goto(&file_url(&site.join("baselines/ollama-long.html")));
    assert_eq!(outside_viewport(&driver, "main table th, main .chart-legend li, main h1"), json!([]));
    driver.goto(&file_url(&site.join("matrix.html")));
    assert_eq!(outside_viewport(&driver, "table.matrix th"), json!([]));

    // Phone width: the model, solve^k and every tier in view; the table
    // scrolls in itself, keeping the model column.
    window(&driver, 390, 844);
    driver.goto(&file_url(&site.join("results.html")));
    let w = driver.eval("return document.documentElement.clientWidth;").as_f64().unwrap();
    assert!(w <= 390.0, "{w}");
    for row in 1..=3 {
        let cells = driver.eval(&format!(
            "var tr = document.querySelector('table.results tbody tr:nth-child({row})'); \
             return [tr.querySelector('td.model'), tr.cells[5]].map(c => c.getBoundingClientRect().right <= {w});"
        ));
        assert_eq!(cells, json!([true, true]), "row {row}: model and solve^k in view");
    }
    assert_eq!(outside_viewport(&driver, ".tier-chart .tier-cell, .tier-chart .tier-model, svg.line-chart"), json!([]));
    assert_eq!(
        driver.eval("return document.querySelectorAll('.tier-chart .tier-row:not(.tier-head) .tier-cell').length;"),
        json!(12),
        "four tiers for each of three models"
    );
    assert_eq!(
        driver.eval("return document.documentElement.scrollWidth <= document.documentElement.clientWidth;"),
        json!(true)
    );
    // Scrolled sideways, the model column stays.
    let sticky = driver.eval(
        "var s = document.querySelector('table.results').closest('.table-scroll'); var td = document.querySelector('table.results td.model'); \
         var before = td.getBoundingClientRect().left; s.scrollLeft = 200; return [s.scrollLeft > 0, Math.abs(td.getBoundingClientRect().left - before) < 1];",
    );
    assert_eq!(sticky, json!([true, true]));

    // The home page: no copy button covers its code's first line.
    window(&driver, 1280, 900);
    driver.goto(&file_url(&site.join("index.html")));
    // (Measured once the page's scripts have added the buttons and its
    // fonts have settled the layout.)
    let covered_js = "return Array.from(document.querySelectorAll('div.code')).filter(block => { \
           var button = block.querySelector('button.copy'); var code = block.querySelector('code'); \
           if (!button || !code.firstChild) return true; \
           var range = document.createRange(); range.selectNodeContents(code); \
           var b = button.getBoundingClientRect(); \
           return Array.from(range.getClientRects()).some(r => r.width > 0 && r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom); \
         }).length;";
    driver.wait_until("return document.readyState === 'complete' && document.fonts.status === 'loaded' && document.querySelectorAll('div.code button.copy').length > 0;");
    let covered = driver.eval(covered_js);
    assert_eq!(covered, json!(0), "a copy button covers code, or a block has none");
    assert!(driver.eval("return document.querySelectorAll('div.code button.copy').length;").as_u64().unwrap() > 0);
}

/// A static file server on 127.0.0.1 for `root` that answers for the search
/// index only after `delay`, as a slow connection would.
fn slow_index_server(root: PathBuf, delay: Duration) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let root = root.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").split(['?', '#']).next().unwrap_or("/");
                let path = if path.ends_with('/') { format!("{path}index.html") } else { path.to_string() };
                let file = root.join(path.trim_start_matches('/'));
                if path.ends_with("search-index.js") {
                    std::thread::sleep(delay);
                }
                let (status, body) = match (path.contains(".."), std::fs::read(&file)) {
                    (false, Ok(body)) => ("200 OK", body),
                    _ => ("404 Not Found", b"not found".to_vec()),
                };
                let kind = match file.extension().and_then(|e| e.to_str()) {
                    Some("html") => "text/html; charset=utf-8",
                    Some("js") => "text/javascript",
                    Some("css") => "text/css",
                    Some("svg") => "image/svg+xml",
                    _ => "application/octet-stream",
                };
                let mut stream = &stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            });
        }
    });
    url
}

const HITS: &str = "return Array.from(document.querySelectorAll('#search-results a')).map(a => \
    [a.querySelector('.hit-title').textContent, a.pathname.split('/').pop() + a.hash, (a.querySelector('.hit-text') || {}).textContent || '']);";

#[test]
fn search_takes_a_query_typed_right_after_focus_finds_requests_and_opens_from_the_address() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let dir = wide_project(None);
    // The index comes 1.5 s after it is asked for: whatever is typed
    // meanwhile must be searched once it is here.
    let url = slow_index_server(dir.path().join("site"), Duration::from_millis(1500));
    let driver = Driver::start(&chromium, &chromedriver);
    driver.goto(&format!("{url}tools.html"));
    driver.click("#search-input");
    driver.keys("toll handcart");
    assert!(
        driver.wait_until(
            "var r = document.querySelector('#search-results'); return !r.hidden && r.querySelectorAll('a').length > 0;"
        ),
        "the query typed while the index loaded was dropped: {}",
        driver.eval("return document.querySelector('#search-results').textContent;")
    );
    let hits = driver.eval(HITS);
    let first = &hits[0];
    assert_eq!(first[0], json!("Task catalog › depot-handcart"), "{hits}");
    assert_eq!(first[1], json!("tasks.html#task-depot-handcart"), "{hits}");
    assert!(
        first[2].as_str().unwrap().contains("Request: When did the toll handcart leave"),
        "a clean snippet: {hits}"
    );
    // The address follows the query.
    assert_eq!(driver.eval("return new URLSearchParams(location.search).get('q');"), json!("toll handcart"));

    // A task's category and id, and a model's own page.
    driver.eval("var i = document.querySelector('#search-input'); i.value = ''; i.focus(); return null;");
    driver.keys(LONG_MODEL);
    assert!(driver.wait_until("return document.querySelectorAll('#search-results a').length > 0;"));
    let hits = driver.eval(HITS);
    let targets: Vec<&str> = hits.as_array().unwrap().iter().map(|h| h[1].as_str().unwrap()).collect();
    assert!(targets.contains(&"results.html#model-ollama-long"), "its row: {hits}");
    assert!(targets.iter().any(|t| t.starts_with("ollama-long.html")), "its own page: {hits}");
    let row = hits.as_array().unwrap().iter().find(|h| h[1] == json!("results.html#model-ollama-long")).unwrap();
    assert!(row[2].as_str().unwrap().starts_with("solve^k "), "a sentence, not the row's cells: {row}");

    // ?q= opens the search with its results, from disk too.
    driver.goto(&format!("{}?q=retrieval", file_url(&dir.path().join("site/results.html"))));
    assert!(driver.wait_until(
        "var r = document.querySelector('#search-results'); return !r.hidden && r.querySelectorAll('a').length > 0;"
    ));
    assert_eq!(driver.eval("return document.querySelector('#search-input').value;"), json!("retrieval"));
    let hits = driver.eval(HITS);
    assert!(hits.as_array().unwrap().iter().any(|h| h[1] == json!("tasks.html#task-depot-handcart")), "{hits}");
    let per_page = driver.eval(
        "var n = {}; document.querySelectorAll('#search-results a').forEach(a => n[a.pathname] = (n[a.pathname] || 0) + 1); return Math.max.apply(null, Object.values(n));",
    );
    assert!(per_page.as_u64().unwrap() <= 3, "at most three hits from one page: {hits}");
}

#[test]
fn code_group_tabs_switch_by_mouse_and_by_keyboard() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let page = "# Install\n\n::: code-group\n\n```sh [npm]\nnpm install x\n```\n\n```sh [cargo]\ncargo add x\n```\n\n```toml [Cargo.toml]\nx = \"1\"\n```\n\n:::\n";
    let dir = wide_project(Some(("install.md", page)));
    let driver = Driver::start(&chromium, &chromedriver);
    driver.goto(&file_url(&dir.path().join("site/install.html")));
    let state = "return {tabs: Array.from(document.querySelectorAll('[role=tablist] [role=tab]')).map(t => t.textContent + (t.getAttribute('aria-selected') === 'true' ? '*' : '')), \
        shown: Array.from(document.querySelectorAll('[role=tabpanel]')).filter(p => !p.hidden && p.offsetHeight > 0).map(p => p.querySelector('code').textContent.trim()), \
        focus: document.activeElement.textContent};";
    let s = driver.eval(state);
    assert_eq!(s["tabs"], json!(["npm*", "cargo", "Cargo.toml"]), "{s}");
    assert_eq!(s["shown"], json!(["npm install x"]), "{s}");
    // Each panel is labelled by its tab, each tab controls its panel.
    let wired = driver.eval(
        "return Array.from(document.querySelectorAll('[role=tab]')).every(t => { var p = document.getElementById(t.getAttribute('aria-controls')); \
           return p && p.getAttribute('role') === 'tabpanel' && p.getAttribute('aria-labelledby') === t.id; });",
    );
    assert_eq!(wired, json!(true));
    // The mouse.
    driver.click("[role=tab]:nth-child(2)");
    let s = driver.eval(state);
    assert_eq!(s["tabs"], json!(["npm", "cargo*", "Cargo.toml"]), "{s}");
    assert_eq!(s["shown"], json!(["cargo add x"]), "{s}");
    // The keyboard: arrows move and select, wrapping; Home and End.
    driver.keys("\u{E014}"); // ArrowRight
    let s = driver.eval(state);
    assert_eq!(
        (s["tabs"].clone(), s["shown"].clone(), s["focus"].clone()),
        (json!(["npm", "cargo", "Cargo.toml*"]), json!(["x = \"1\""]), json!("Cargo.toml")),
        "{s}"
    );
    driver.keys("\u{E014}");
    assert_eq!(driver.eval(state)["tabs"], json!(["npm*", "cargo", "Cargo.toml"]), "wraps to the first");
    driver.keys("\u{E012}"); // ArrowLeft
    assert_eq!(driver.eval(state)["tabs"], json!(["npm", "cargo", "Cargo.toml*"]));
    driver.keys("\u{E011}"); // Home
    assert_eq!(driver.eval(state)["shown"], json!(["npm install x"]));
    driver.keys("\u{E010}"); // End
    let s = driver.eval(state);
    assert_eq!((s["shown"].clone(), s["focus"].clone()), (json!(["x = \"1\""]), json!("Cargo.toml")), "{s}");
    // Only the selected tab is in the tab order.
    assert_eq!(
        driver.eval("return Array.from(document.querySelectorAll('[role=tab]')).map(t => t.tabIndex);"),
        json!([-1, -1, 0])
    );
}

/// `vaultbench view` in the browser while a sweep runs: the home page says
/// how many runs have finished and reloads by itself as more finish; from
/// it, the run, a task, a run's transcript and the comparison with the
/// baseline it would replace are a click away.
#[test]
fn view_follows_a_running_sweep_and_leads_to_a_run_its_transcript_and_the_comparison() {
    let Some((chromium, chromedriver)) = programs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals");
    let suite = suite.to_str().unwrap();
    let run = |results: &str, delay: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_vaultbench"))
            .args(["run", "--provider", "reference", "--suite", suite, "--results", results, "--task", "ferry"])
            .args(["--jobs", "1", "--cell-delay-ms", delay])
            .current_dir(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // The baseline it would replace: an earlier sweep of the same provider and model.
    assert!(run("earlier", "0").wait().unwrap().success());
    let earlier = common::json_files(&root.join("earlier")).pop().unwrap();
    std::fs::create_dir_all(root.join("evals/baselines")).unwrap();
    std::fs::copy(&earlier, root.join("evals/baselines/reference-reference.json")).unwrap();
    let mut sweep = run("evals/results", "900");
    assert!(
        eventually(Duration::from_secs(20), || std::fs::read_dir(root.join("evals/results"))
            .is_ok_and(|d| d.flatten().any(|e| e.path().join("sweep.json").is_file()))),
        "the sweep did not start"
    );
    let view = Watcher::serving(root, &["view", "--suite", suite, "--port", "0"]);
    let driver = Driver::start(&chromium, &chromedriver);
    driver.goto(&format!("{}index.html", view.url));
    // (null while the page is between two loads: it reloads as runs finish.)
    let finished = "var main = document.querySelector('main'); if (!main || document.readyState !== 'complete') return null; \
        var m = main.textContent.match(/(\\d+) of (\\d+) runs have finished/); return m ? Number(m[1]) : -1;";
    let mut first = -1;
    assert!(
        eventually(Duration::from_secs(10), || {
            first = driver.eval(finished).as_i64().unwrap_or(-1);
            first >= 0
        }),
        "the page says how far the sweep is"
    );
    assert!(driver.wait_until("return document.documentElement.getAttribute('data-live-reload') === 'connected';"));
    // No one reloads: the page does, as runs finish.
    assert!(
        eventually(Duration::from_secs(20), || driver.eval(finished).as_i64().is_some_and(|n| n > first)),
        "the open page did not follow the sweep"
    );
    assert!(sweep.wait().unwrap().success());
    assert!(
        eventually(Duration::from_secs(15), || driver.eval(finished) == json!(-1)),
        "the finished sweep still shows as running"
    );
    // The run, a task, a run's transcript.
    driver.click("main a[href^='baselines/run-']");
    assert!(driver.wait_until("return /\\/baselines\\/run-[^/]+\\.html$/.test(location.pathname);"));
    assert!(driver.wait_until("return document.querySelector('a[href$=\"ferry-read-toll.html\"]') !== null;"));
    let task = driver.eval("return document.querySelector('a[href$=\"ferry-read-toll.html\"]').href;");
    driver.goto(task.as_str().unwrap());
    assert!(driver.wait_until("return location.pathname.endsWith('/ferry-read-toll.html');"));
    assert!(
        driver.wait_until(
            "var c = document.querySelector('.check-what'); return c !== null && c.textContent.length > 0;"
        )
    );
    driver.click("a.transcript-link");
    assert!(driver.wait_until("return location.pathname.endsWith('/ferry-read-toll/run-1.html');"));
    assert!(driver.wait_until(
        "return Array.from(document.querySelectorAll('ol.conversation li')).some(li => li.textContent.includes('tolls-2032'));"
    ));
    // The comparison with the baseline.
    driver.goto(&format!("{}compare.html", view.url));
    let pair = driver.eval("var a = document.querySelector('a[href*=\"compare/\"]'); return a ? a.href : null;");
    let pair = pair.as_str().expect("a link to the comparison of the two").to_string();
    driver.goto(&pair);
    assert!(driver.wait_until("return document.querySelectorAll('table').length > 0;"));
    assert_eq!(driver.eval(STYLED), json!(true));
    drop(driver);
    assert_eq!(view.interrupt(), Some(130));
}
