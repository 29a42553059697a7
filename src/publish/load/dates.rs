//! "Last updated" dates of docs pages, from the git history: the date of the
//! last commit that touched each file, read with one `git log` over the docs
//! folder (not one process per page). No git, or a docs folder outside a
//! repository, gives no dates, silently; the pages then show none.
//!
//! It reads only; the working tree's uncommitted edits do not count.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// Last commit date (`YYYY-MM-DD`, UTC as git prints it with `%cI` in the
/// committer's zone, cut to the date) by path relative to the docs folder.
pub type Dates = HashMap<String, String>;

/// The dates of every file under `docs` that git knows.
pub fn last_updated(docs: &Path) -> Dates {
    if !inside_repository(docs) {
        return Dates::new();
    }
    let output = Command::new("git")
        .args(["-c", "core.quotepath=off", "log", "--relative", "--format=%x00%cs", "--name-only", "--", "."])
        .current_dir(docs)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    match output {
        Ok(out) if out.status.success() => parse(&String::from_utf8_lossy(&out.stdout)),
        _ => Dates::new(),
    }
}

/// Whether `dir` or a parent holds `.git` (so that no process is started
/// for a docs folder that is not in a repository).
fn inside_repository(dir: &Path) -> bool {
    let Ok(abs) = std::path::absolute(dir) else { return false };
    abs.ancestors().any(|d| d.join(".git").exists())
}

/// Parse `git log --format=%x00%cs --name-only`: newest commit first, so
/// the first date seen for a file is its last change.
fn parse(log: &str) -> Dates {
    let mut dates = Dates::new();
    for commit in log.split('\0').filter(|c| !c.trim().is_empty()) {
        let mut lines = commit.lines();
        let Some(date) = lines.next().map(str::trim).filter(|d| d.len() == 10) else { continue };
        for file in lines.map(str::trim).filter(|l| !l.is_empty()) {
            dates.entry(file.to_string()).or_insert_with(|| date.to_string());
        }
    }
    dates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_commit_of_each_file_wins() {
        let log = "\u{0}2026-11-23\n\nlimits.md\n\u{0}2026-11-01\n\nlimits.md\nguide/a b.md\n";
        let dates = parse(log);
        assert_eq!(dates["limits.md"], "2026-11-23");
        assert_eq!(dates["guide/a b.md"], "2026-11-01");
        assert_eq!(dates.len(), 2);
    }

    #[test]
    fn a_folder_outside_git_has_no_dates() {
        let dir = tempfile::tempdir().unwrap();
        if inside_repository(dir.path()) {
            eprintln!("skipping: the temporary folder is inside a git repository");
            return;
        }
        assert!(last_updated(dir.path()).is_empty());
    }

    #[test]
    fn a_committed_file_gets_its_commit_date() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
                .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
                .output()
        };
        if !git(&["init", "-q"]).is_ok_and(|o| o.status.success()) {
            eprintln!("skipping: git is not installed");
            return;
        }
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/page.md"), "# P").unwrap();
        git(&["add", "."]).unwrap();
        let out = git(&["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "x"]).unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let dates = last_updated(&dir.path().join("docs"));
        assert_eq!(dates.get("page.md").map(String::as_str), Some("2026-01-02"));
    }
}
