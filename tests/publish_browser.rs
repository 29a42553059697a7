//! End to end in headless Chromium, driven over the WebDriver protocol
//! (chromedriver + HTTP JSON): `publish --watch` serves the results page,
//! the table is checked in the browser, then a new baseline file appears and
//! the open page must reload by itself and show the new row within 2 s.
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
}

impl Driver {
    fn start(chromium: &Path, chromedriver: &Path) -> Driver {
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
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        }}});
        let mut driver = Driver { process, base, session: String::new(), _profile: profile };
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

    fn goto(&self, url: &str) {
        self.call("POST", &format!("/session/{}/url", self.session), Some(json!({"url": url})));
    }

    fn eval(&self, script: &str) -> Value {
        self.call(
            "POST",
            &format!("/session/{}/execute/sync", self.session),
            Some(json!({"script": script, "args": []})),
        )
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
    let rows = driver.eval(ROWS);
    assert_eq!(
        rows,
        json!([["first-model", "ollama", "2", "2", "100.0%", "50.0%", "—", "1/2", "—", "—", "2026-11-20", "0123abc"]]),
        "the table as the browser shows it"
    );
    let link = driver.eval("return document.querySelector('table.results tbody tr td:last-child a').href;");
    assert_eq!(link, json!("https://example.org/repo/commit/0123abc"));
    // The chart is drawn without JavaScript, as SVG: four tier tracks, and a
    // bar for the one tier (T2) the baseline has.
    assert_eq!(driver.eval("return document.querySelectorAll('figure.chart svg rect').length;"), json!(5));
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
        json!(["second-model", "gemini", "2", "2", "100.0%", "100.0%", "—", "2/2", "—", "—", "2026-11-20", "0123abc"])
    );
    drop(driver);
    assert_eq!(watch.interrupt(), Some(130));
}
