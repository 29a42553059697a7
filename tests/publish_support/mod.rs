//! Helpers for the `publish` tests: a temporary project to publish, the
//! `--watch` server as a real child process, and a minimal HTTP client
//! (requests go to 127.0.0.1 only).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// This repository's docs folder.
pub fn repo_docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")
}

/// Copy a folder tree.
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The cells of every body row of the first `<table class="results">`, as text.
/// Every file under `root`, by its path from there (with `/`), with its bytes.
pub fn files_under(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

pub fn results_rows(html: &str) -> Vec<Vec<String>> {
    let start = html.find("<table class=\"results\"").expect("a results table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    let body = &table[table.find("<tbody>").unwrap()..];
    body.split("<tr")
        .skip(1)
        .map(|row| row.split("<td").skip(1).map(|cell| text_of(&format!("<td{cell}"))).collect())
        .collect()
}

/// The text of an HTML fragment: tags dropped, entities of `<>&"'` decoded,
/// whitespace collapsed.
pub fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A `publish --watch` process and the URL it serves.
pub struct Watcher {
    pub child: Child,
    pub url: String,
    pub lines: mpsc::Receiver<String>,
}

impl Watcher {
    /// Start `vaultbench publish --watch --port 0 ARGS` in `dir` and wait for its URL.
    pub fn start(dir: &Path, args: &[&str]) -> Watcher {
        let mut all = vec!["publish", "--watch", "--port", "0"];
        all.extend_from_slice(args);
        Watcher::serving(dir, &all)
    }

    /// Start `vaultbench ARGS` (a command that serves pages) in `dir` and wait for its URL.
    pub fn serving(dir: &Path, args: &[&str]) -> Watcher {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vaultbench"))
            .env("VAULTBENCH_CACHE_DIR", "")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("vaultbench starts");
        let (tx, lines) = mpsc::channel();
        for stream in
            [Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>, Box::new(child.stderr.take().unwrap())]
        {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    eprintln!("[watch] {line}");
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = lines.recv_timeout(left).expect("the server prints the URL it serves");
            if let Some(i) = line.find("http://127.0.0.1:") {
                break line[i..].split_whitespace().next().unwrap().to_string();
            }
        };
        Watcher { child, url, lines }
    }

    /// Wait for an output line containing `needle`.
    pub fn wait_line(&self, needle: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return Some(line),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// SIGINT, and the exit code.
    pub fn interrupt(mut self) -> Option<i32> {
        Command::new("kill").args(["-INT", &self.child.id().to_string()]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        panic!("publish --watch did not stop within 10 s of SIGINT");
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status code and body.
pub struct Response {
    pub status: u16,
    pub body: String,
}

/// One HTTP/1.1 request to a `http://127.0.0.1:PORT/path` URL.
pub fn http(method: &str, url: &str, body: Option<&str>) -> std::io::Result<Response> {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let mut stream = TcpStream::connect(host)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = body.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    // Read the head, then as many body bytes as Content-Length says: some
    // servers keep the connection open despite `Connection: close`.
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let lower = head.to_ascii_lowercase();
    let length =
        lower.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|n| n.trim().parse::<usize>().ok());
    let mut raw = Vec::new();
    match length {
        Some(n) => {
            raw.resize(n, 0);
            reader.read_exact(&mut raw)?;
        }
        None => {
            reader.read_to_end(&mut raw)?;
        }
    }
    let body = String::from_utf8_lossy(&raw).into_owned();
    let body = if lower.contains("transfer-encoding: chunked") { dechunk(&body) } else { body };
    Ok(Response { status, body })
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

pub fn get(url: &str) -> Response {
    http("GET", url, None).unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

/// Poll `check` every 50 ms until it holds or `timeout` passes.
pub fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A free local port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The first executable named `name` on PATH, or at one of `also`.
pub fn find_program(name: &str, also: &[&str]) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path.into_iter().chain(also.iter().map(PathBuf::from)).find(|p| p.is_file())
}

/// Bless-like: write `result` as the baseline `<baselines>/<stem>.json` with an
/// evidence archive holding `transcripts` (entry name, JSON text), made by
/// the same code `bless` uses. Each run's `transcript_path` must name its entry.
pub fn write_baseline_with_evidence(
    baselines: &Path,
    stem: &str,
    result: &vaultbench::format::result::ResultFile,
    transcripts: &[(String, String)],
) {
    let scratch = tempfile::tempdir().unwrap();
    let source = scratch.path().join("result.json");
    vaultbench::report::write_result(&source, result).unwrap();
    let folder = vaultbench::report::evidence::transcripts_dir(&source);
    std::fs::create_dir_all(&folder).unwrap();
    for (name, text) in transcripts {
        std::fs::write(folder.join(name), text).unwrap();
    }
    let baseline = baselines.join(format!("{stem}.json"));
    vaultbench::report::write_result(&baseline, result).unwrap();
    let archive = vaultbench::report::evidence::archive_path(&baseline, &result.run_id.0).unwrap();
    std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
    let archived = vaultbench::report::evidence::write(result, &source, &archive).unwrap();
    assert_eq!(archived.archived, transcripts.len(), "missing: {:?}", archived.missing);
}

/// A transcript as the agent writes it, with `user` as the user's message
/// and `result` as the one tool call's answer.
pub fn transcript_json(user: &str, result: &str, end: &str) -> String {
    serde_json::json!({
        "system_prompt": "You are an assistant working inside the user's notes vault.",
        "tools": ["read_file"],
        "events": [
            {"type": "user_message", "text": user},
            {"type": "model_call", "turn": 1, "at_ms": 0, "duration_ms": 900,
             "usage": {"prompt_tokens": 1200, "cached_tokens": null, "output_tokens": 20},
             "text": "", "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes/<a>.md"}}]},
            {"type": "tool_call", "turn": 1, "id": "c1", "name": "read_file", "arguments": {"path": "notes/<a>.md"},
             "success": true, "result": {"success": true, "data": result}, "duration_us": 120},
            {"type": "model_call", "turn": 2, "at_ms": 900, "duration_ms": 500,
             "usage": {"prompt_tokens": 1300, "cached_tokens": null, "output_tokens": 12},
             "text": "The answer.", "tool_calls": []}
        ],
        "end": {"reason": end, "detail": "", "duration_ms": 1400}
    })
    .to_string()
}
