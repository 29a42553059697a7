//! Where the runs' temporary vaults live: one folder per vaultbench process
//! in the system's temporary folder (`$TMPDIR/vaultbench-<pid>-XXXXXX/`),
//! marked with its owner, each run's vault a folder inside it, removed when
//! the run ends. The process folder goes when the command ends, on Ctrl-C,
//! SIGTERM or a panic too.
//!
//! A process that is killed (`kill -9`) or aborts cannot clean up, so every
//! command that makes vaults first removes the folders of vaultbench
//! processes that no longer exist. Safely: only folders named `vaultbench-*`
//! (not links), owned by this user, holding an owner file that names a
//! process (pid and start time, so a reused pid is not mistaken for the
//! owner) that is gone. Liveness is read from `/proc`; where there is no
//! `/proc` nothing is ever removed.

use std::io;
use std::path::{Path, PathBuf};

/// The prefix of every process folder.
const PREFIX: &str = "vaultbench-";

/// The owner file inside a process folder: `vaultbench <pid> <start time>`.
const OWNER_FILE: &str = ".owner";

/// This process's folder for temporary vaults, removed on drop.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
    /// Folders of dead processes removed when this one was made.
    pub removed: Vec<PathBuf>,
}

impl Scratch {
    /// Remove what dead vaultbench processes left in the temporary folder,
    /// then make this process's own folder there.
    pub fn create() -> io::Result<Scratch> {
        Scratch::create_in(&std::env::temp_dir())
    }

    pub fn create_in(tmp: &Path) -> io::Result<Scratch> {
        let removed = remove_stale(tmp);
        let dir = tempfile::Builder::new().prefix(&format!("{PREFIX}{}-", std::process::id())).tempdir_in(tmp)?;
        std::fs::write(dir.path().join(OWNER_FILE), owner_line(std::process::id()))?;
        Ok(Scratch { dir, removed })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The owner line of process `pid`.
fn owner_line(pid: u32) -> String {
    format!("vaultbench {pid} {}\n", start_time(pid).unwrap_or_default())
}

/// When process `pid` started (clock ticks after boot, from
/// `/proc/<pid>/stat`), or `None` when there is no such process (or no `/proc`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Field 22 is the start time; after the name, fields start at 3.
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// Remove the process folders in `tmp` whose owner is gone; returns them.
pub fn remove_stale(tmp: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    // Without /proc, no owner can be proved dead: remove nothing.
    if !Path::new("/proc/self/stat").exists() {
        return removed;
    }
    let Ok(entries) = std::fs::read_dir(tmp) else { return removed };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_name().to_str().is_some_and(|n| n.starts_with(PREFIX))
            && owner_is_gone(&path)
            && std::fs::remove_dir_all(&path).is_ok()
        {
            removed.push(path);
        }
    }
    removed
}

/// True only for a real folder of this user with a readable owner file
/// naming a process that no longer runs.
fn owner_is_gone(dir: &Path) -> bool {
    let Ok(meta) = dir.symlink_metadata() else { return false };
    if !meta.is_dir() || !same_user(&meta) {
        return false;
    }
    let owner = dir.join(OWNER_FILE);
    if !owner.symlink_metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(line) = std::fs::read_to_string(&owner) else { return false };
    let mut words = line.split_whitespace();
    let (Some("vaultbench"), Some(pid), Some(started)) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    let (Ok(pid), Ok(started)) = (pid.parse::<u32>(), started.parse::<u64>()) else { return false };
    if pid == std::process::id() {
        return false;
    }
    // Gone, or the pid now belongs to a process that started at another time.
    start_time(pid) != Some(started)
}

#[cfg(unix)]
fn same_user(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|me| me.uid() == meta.uid())
}

#[cfg(not(unix))]
fn same_user(_meta: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pid of a process that has exited.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    fn folder(tmp: &Path, name: &str, owner: Option<&str>) -> PathBuf {
        let dir = tmp.join(name);
        std::fs::create_dir_all(dir.join("vault/eval-scratch")).unwrap();
        std::fs::write(dir.join("vault/eval-scratch/note.md"), "x").unwrap();
        if let Some(line) = owner {
            std::fs::write(dir.join(OWNER_FILE), line).unwrap();
        }
        dir
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn only_folders_of_dead_vaultbench_processes_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let dead = folder(t, "vaultbench-1-dead", Some(&owner_line(dead_pid())));
        let me = std::process::id();
        let mine_other_time = folder(t, "vaultbench-2-mine", Some(&format!("vaultbench {me} 1\n")));
        let alive = folder(t, "vaultbench-3-alive", Some(&owner_line(me)));
        let no_owner = folder(t, "vaultbench-4-no-owner", None);
        let not_ours = folder(t, "other-5", Some(&owner_line(dead_pid())));
        let garbled = folder(t, "vaultbench-6-garbled", Some("someone else's file\n"));
        let outside = tempfile::tempdir().unwrap();
        let target = folder(outside.path(), "vaultbench-7-target", Some(&owner_line(dead_pid())));
        std::os::unix::fs::symlink(&target, t.join("vaultbench-8-link")).unwrap();
        std::fs::write(t.join("vaultbench-9-file"), "x").unwrap();

        let removed = remove_stale(t);
        assert_eq!(removed, vec![dead.clone()]);
        assert!(!dead.exists());
        // Our own pid is never removed, whatever the owner file says.
        assert!(mine_other_time.exists() && alive.exists());
        assert!(no_owner.exists() && not_ours.exists() && garbled.exists());
        assert!(target.join("vault/eval-scratch/note.md").exists(), "links are not followed");
        assert!(t.join("vaultbench-9-file").exists());

        // A reused pid: another live process with a different start time.
        let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let reused_pid = folder(t, "vaultbench-10-reused", Some(&format!("vaultbench {} 1\n", sleeper.id())));
        let live_other = folder(t, "vaultbench-11-live", Some(&owner_line(sleeper.id())));
        assert_eq!(remove_stale(t), vec![reused_pid]);
        assert!(live_other.exists(), "a live owner keeps its folder");
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        assert_eq!(remove_stale(t), vec![live_other]);
    }

    #[test]
    fn the_process_folder_is_marked_and_removed_on_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let scratch = Scratch::create_in(tmp.path()).unwrap();
        let path = scratch.path().to_path_buf();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(&format!("vaultbench-{}-", std::process::id())), "{name}");
        let owner = std::fs::read_to_string(path.join(OWNER_FILE)).unwrap();
        assert!(owner.starts_with(&format!("vaultbench {} ", std::process::id())), "{owner}");
        assert!(remove_stale(tmp.path()).is_empty(), "our own folder is not stale");
        drop(scratch);
        assert!(!path.exists());
    }
}
