//! A baseline's evidence: the transcripts of the runs it was blessed from,
//! kept next to it as `<baselines>/evidence/<stem>.tar.gz` so anyone can check
//! a published row against what the model actually answered.
//!
//! Results and transcripts live under the git-ignored results folder; the
//! archive is what gets committed. It is reproducible (fixed mtimes, modes and
//! owners, entries in run order), so blessing the same result twice writes the
//! same bytes.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use crate::format::result::{ResultFile, RunRecord};
use crate::fsio;

/// The folder holding the transcripts of the result at `source`:
/// `evals/results/<run-id>.json` keeps them in `evals/results/<run-id>/`.
pub fn transcripts_dir(source: &Path) -> PathBuf {
    source.with_extension("")
}

/// Where the evidence of `baseline` (a `<stem>.json` in the baselines folder) lives.
pub fn archive_path(baseline: &Path) -> PathBuf {
    let stem = baseline.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    baseline.with_file_name("evidence").join(format!("{stem}.tar.gz"))
}

/// The archive entry name of one run's transcript: its file name.
pub fn entry_name(run: &RunRecord) -> Option<String> {
    Path::new(&run.transcript_path).file_name().map(|n| n.to_string_lossy().into_owned())
}

/// What [`write`] archived.
#[derive(Debug, Default)]
pub struct Archived {
    /// Transcripts in the archive.
    pub archived: usize,
    /// Runs whose transcript was not found, as `task#n`.
    pub missing: Vec<String>,
}

/// Archive every transcript of `result` found in [`transcripts_dir`]`(source)`
/// into `out`, atomically. With no transcript at all, no archive is written
/// and a stale one at `out` (from an earlier baseline) is removed, so evidence
/// never describes a different run than its baseline.
pub fn write(result: &ResultFile, source: &Path, out: &Path) -> Result<Archived> {
    let dir = transcripts_dir(source);
    let mut tar = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::best()));
    let mut report = Archived::default();
    for task in &result.tasks {
        for (i, run) in task.runs.iter().enumerate() {
            let found = entry_name(run).map(|name| (dir.join(&name), name)).filter(|(path, _)| path.is_file());
            let Some((path, name)) = found else {
                report.missing.push(format!("{}#{}", task.id, i + 1));
                continue;
            };
            let bytes = std::fs::read(&path).with_context(|| format!("reading the transcript {}", path.display()))?;
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_uid(0);
            header.set_gid(0);
            header.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut header, &name, bytes.as_slice())
                .with_context(|| format!("archiving {}", path.display()))?;
            report.archived += 1;
        }
    }
    if report.archived == 0 {
        match std::fs::remove_file(out) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing the stale evidence {}", out.display())),
        }
        return Ok(report);
    }
    let bytes = tar.into_inner().and_then(|gz| gz.finish()).context("compressing the transcripts")?;
    fsio::write_atomic(out, &bytes)?;
    Ok(report)
}

/// Every transcript in an evidence archive, by entry name.
pub fn read(archive: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let file = std::fs::File::open(archive).with_context(|| format!("opening {}", archive.display()))?;
    let mut tar = tar::Archive::new(GzDecoder::new(file));
    let mut out = BTreeMap::new();
    for entry in tar.entries().with_context(|| format!("reading {}", archive.display()))? {
        let mut entry = entry.with_context(|| format!("reading {}", archive.display()))?;
        let name =
            entry.path().with_context(|| format!("reading {}", archive.display()))?.to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).with_context(|| format!("reading {name} in {}", archive.display()))?;
        out.insert(name, bytes);
    }
    Ok(out)
}
