//! The baselines folder on disk: each baseline `<stem>.json` with its
//! evidence `evidence/<stem>/<run>.tar.gz`, and how blessing replaces such a
//! pair so that a baseline and its evidence always come from the same result.
//!
//! The protocol, under an exclusive lock on the folder (one bless at a time;
//! the lock dies with its process, so a killed bless never blocks the next):
//! 1. the new evidence is written under its own run id's name, beside the
//!    current one, which it never touches;
//! 2. the new baseline is renamed over the old one: the commit point. Readers
//!    find evidence through the baseline's `run_id` (`evidence::archive_path`),
//!    so before this rename they see the old pair, after it the new one;
//! 3. what no baseline points to any more (the previous run's archive, the
//!    temporary files of an interrupted write) is removed, by this bless and,
//!    should it be killed first, by the next one.
//!
//! A failure at any step (a full disk, a write error) leaves the previous
//! pair as it was. It does not decide whether a result may be blessed
//! (`report::bless`) nor what an archive holds (`report::evidence`).

use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::evidence::{self, ARCHIVE_SUFFIX};
use crate::format::result::ResultFile;
use crate::fsio;

/// How long a bless waits for another one to finish with the folder.
pub const LOCK_WAIT: Duration = Duration::from_secs(120);

/// The exclusive hold on a baselines folder; released when dropped (or when
/// its process dies).
pub struct Lock {
    _dir: File,
}

/// Take the folder's lock, waiting up to `wait` for another holder.
pub fn lock(baselines: &Path, wait: Duration) -> Result<Lock> {
    std::fs::create_dir_all(baselines).with_context(|| format!("creating {}", baselines.display()))?;
    // The folder itself is locked: no lock file to commit, ignore or leave behind.
    let dir = File::open(baselines).with_context(|| format!("opening {} to lock it", baselines.display()))?;
    let start = Instant::now();
    loop {
        match dir.try_lock() {
            Ok(()) => return Ok(Lock { _dir: dir }),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => bail!(
                "another `vaultbench bless` has held {} for {} s; try again when it ends",
                baselines.display(),
                wait.as_secs()
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", baselines.display()));
            }
        }
    }
}

/// What [`replace`] did.
#[derive(Debug)]
pub struct Replaced {
    /// The run id of the baseline this replaced, if there was one.
    pub previous: Option<String>,
    pub evidence_path: PathBuf,
    pub evidence: evidence::Archived,
    /// No transcript was found, and the archive of this same run, blessed
    /// earlier, was kept as the evidence.
    pub kept_earlier_evidence: bool,
}

/// Make `bytes` (the text of `result`, blessed from the file `source`) the
/// baseline at `baseline_path`, with the transcripts of `source`'s run as its
/// evidence, by the protocol above. The caller holds [`lock`].
pub fn replace(
    _lock: &Lock,
    baseline_path: &Path,
    bytes: &[u8],
    result: &ResultFile,
    source: &Path,
) -> Result<Replaced> {
    let baselines = baseline_path.parent().unwrap_or(Path::new("."));
    // Leftovers of a bless killed earlier, before anything new is written.
    clean(baselines)?;
    fsio::test_pause("bless-locked");
    let previous = run_id_of(baseline_path);
    let run_id = &result.run_id.0;
    let evidence_path = evidence::archive_path(baseline_path, run_id).with_context(|| {
        format!("the run id `{run_id}` cannot name an evidence archive (it must have 1 to 100 characters)")
    })?;
    if let Some(Ok(old)) = &previous
        && old != run_id
        && evidence::archive_path(baseline_path, old).as_ref() == Some(&evidence_path)
    {
        bail!(
            "the run ids `{run_id}` and `{old}` (the current baseline's) name the same evidence archive {}; \
             remove the current baseline and its evidence first",
            evidence_path.display()
        );
    }
    let written = evidence::write(result, source, &evidence_path).and_then(|archived| {
        if archived.archived > 0 {
            fsio::sync_dir(&evidence::archive_dir(baseline_path))?;
        }
        fsio::test_pause("bless-evidence-renamed");
        fsio::write_atomic_with(baseline_path, |file| {
            std::io::Write::write_all(file, bytes)?;
            fsio::test_pause("bless-baseline-written");
            Ok(())
        })?;
        fsio::sync_dir(baselines)?;
        Ok(archived)
    });
    let archived = match written {
        Ok(a) => a,
        Err(e) => {
            // The new archive (if any) belongs to no baseline: remove it now,
            // so that the folder holds exactly the previous pair.
            let _ = clean(baselines);
            return Err(e);
        }
    };
    fsio::test_pause("bless-baseline-renamed");
    clean(baselines)?;
    let kept_earlier_evidence = archived.archived == 0 && evidence_path.is_file();
    Ok(Replaced {
        previous: previous.map(|p| p.unwrap_or_else(|_| "an unreadable file".into())),
        evidence_path,
        evidence: archived,
        kept_earlier_evidence,
    })
}

/// The run id of the baseline at `path`: `None` when there is no file,
/// `Some(Err)` when it cannot be read.
fn run_id_of(path: &Path) -> Option<Result<String>> {
    #[derive(Deserialize)]
    struct RunIdOnly {
        run_id: String,
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        _ => Some(fsio::read_json::<RunIdOnly>(path).map(|b| b.run_id)),
    }
}

/// Remove what no baseline points to: temporary files of interrupted writes
/// (in the folder and under `evidence/`), archives of runs other than their
/// baseline's, and the archives of a baseline that does not exist. The
/// evidence of a baseline that cannot be read is left alone (except its
/// temporary files): which archive is its own cannot be told. Files that
/// vaultbench does not write are never removed.
pub fn clean(baselines: &Path) -> Result<()> {
    fsio::remove_atomic_temps(baselines)?;
    let evidence_root = baselines.join("evidence");
    let entries = match std::fs::read_dir(&evidence_root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", evidence_root.display())),
    };
    fsio::remove_atomic_temps(&evidence_root)?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", evidence_root.display()))?;
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let dir = entry.path();
        fsio::remove_atomic_temps(&dir)?;
        let baseline = baselines.join(format!("{}.json", entry.file_name().to_string_lossy()));
        let keep = match run_id_of(&baseline) {
            None => None,
            Some(Ok(run_id)) => evidence::archive_path(&baseline, &run_id),
            Some(Err(_)) => continue,
        };
        for archive in list(&dir)? {
            let name = archive.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.ends_with(ARCHIVE_SUFFIX) && !name.starts_with('.') && keep.as_ref() != Some(&archive) {
                remove(&archive)?;
            }
        }
        // An emptied folder goes too; one holding anything else stays.
        if list(&dir)?.is_empty() {
            match std::fs::remove_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("removing {}", dir.display())),
            }
        }
    }
    Ok(())
}

fn list(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        out.push(entry.with_context(|| format!("reading {}", dir.display()))?.path());
    }
    out.sort();
    Ok(out)
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("removing {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn cleaning_keeps_each_baselines_own_archive_and_what_it_did_not_write() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        let ev = b.join("evidence");
        touch(&b.join("a.json"), r#"{"run_id": "2026-01-01T00:00:00.000Z"}"#);
        touch(&ev.join("a/2026-01-01T00-00-00-000Z.tar.gz"), "live");
        touch(&ev.join("a/2025-12-31T00-00-00-000Z.tar.gz"), "previous run");
        touch(&ev.join("a/.2026-01-02T00-00-00-000Z.tar.gz.Xy12Ab.tmp"), "half");
        touch(&ev.join("a/notes.txt"), "not ours");
        touch(&ev.join("orphan/2026-01-01T00-00-00-000Z.tar.gz"), "no baseline");
        touch(&b.join("broken.json"), "{");
        touch(&ev.join("broken/x.tar.gz"), "cannot tell");
        touch(&ev.join("broken/.x.tar.gz.Ab12Cd.tmp"), "half");
        touch(&b.join(".a.json.Qw12Er.tmp"), "half");
        touch(&b.join(".gitkeep"), "");
        clean(b).unwrap();
        let mut left: Vec<String> = walkdir::WalkDir::new(b)
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| e.path().strip_prefix(b).unwrap().display().to_string())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                ".gitkeep",
                "a.json",
                "broken.json",
                "evidence/a/2026-01-01T00-00-00-000Z.tar.gz",
                "evidence/a/notes.txt",
                "evidence/broken/x.tar.gz",
            ]
        );
        assert!(!ev.join("orphan").exists());
    }
}
