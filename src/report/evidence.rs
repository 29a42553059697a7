//! A baseline's evidence: the transcripts of the runs it was blessed from,
//! kept next to it as `<baselines>/evidence/<stem>/<run>.tar.gz` so anyone can
//! check a published row against what the model actually answered.
//!
//! The archive is named by the run id it holds, and a reader finds it from
//! the baseline's own `run_id` ([`archive_path`]): a baseline and an archive
//! of another run can never be taken for a pair, whatever state a killed or
//! failed bless left (see `report::baseline_dir`).
//!
//! Results and transcripts live under the git-ignored results folder; the
//! archive is what gets committed. It is reproducible (fixed mtimes, modes and
//! owners, entries in run order), so blessing the same result twice writes the
//! same bytes.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use crate::format::result::{ResultFile, RunId, RunRecord};
use crate::fsio;
use crate::limits::Limits;

/// The folder holding the transcripts of the result at `source`:
/// `evals/results/<run-id>.json` keeps them in `evals/results/<run-id>/`.
pub fn transcripts_dir(source: &Path) -> PathBuf {
    source.with_extension("")
}

/// The folder of `baseline`'s archives: `<baselines>/evidence/<stem>/`.
pub fn archive_dir(baseline: &Path) -> PathBuf {
    let stem = baseline.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    baseline.with_file_name("evidence").join(stem)
}

/// The longest run id that names an archive.
const MAX_RUN_KEY: usize = 100;

/// The file stem of the archive of run `run_id`: the run id's file stem
/// (`2026-05-24T21-42-41-910Z`), every character outside `[A-Za-z0-9_-]`
/// made `-`. `None` for an empty or overlong id, which names no archive.
pub fn run_key(run_id: &str) -> Option<String> {
    let stem = RunId(run_id.to_string()).file_stem();
    let key: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') { c } else { '-' }).collect();
    (!key.is_empty() && key.len() <= MAX_RUN_KEY).then_some(key)
}

/// Where the evidence of `baseline` (a `<stem>.json` in the baselines folder)
/// blessed from run `run_id` lives: `<baselines>/evidence/<stem>/<run>.tar.gz`.
pub fn archive_path(baseline: &Path, run_id: &str) -> Option<PathBuf> {
    run_key(run_id).map(|key| archive_dir(baseline).join(format!("{key}{ARCHIVE_SUFFIX}")))
}

pub const ARCHIVE_SUFFIX: &str = ".tar.gz";

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
/// into `out`, atomically, streaming each transcript (memory stays small
/// whatever their size). A transcript must be a regular file: a symbolic link
/// could pull a file from elsewhere into committed evidence. With no
/// transcript at all, no archive is written.
pub fn write(result: &ResultFile, source: &Path, out: &Path) -> Result<Archived> {
    let dir = transcripts_dir(source);
    let mut found = Vec::new();
    let mut report = Archived::default();
    for task in &result.tasks {
        for (i, run) in task.runs.iter().enumerate() {
            let path = entry_name(run)
                .map(|name| (dir.join(&name), name))
                .filter(|(path, _)| path.symlink_metadata().is_ok_and(|m| m.is_file()));
            match path {
                Some(p) => found.push(p),
                None => report.missing.push(format!("{}#{}", task.id, i + 1)),
            }
        }
    }
    report.archived = found.len();
    if found.is_empty() {
        return Ok(report);
    }
    fsio::write_atomic_with(out, |file| {
        let mut tar = tar::Builder::new(GzEncoder::new(file, Compression::best()));
        for (path, name) in &found {
            let transcript =
                std::fs::File::open(path).with_context(|| format!("reading the transcript {}", path.display()))?;
            let size = transcript.metadata().with_context(|| format!("reading {}", path.display()))?.len();
            let mut header = tar::Header::new_gnu();
            header.set_size(size);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_uid(0);
            header.set_gid(0);
            header.set_entry_type(tar::EntryType::Regular);
            // `take`: a transcript that grows while being read cannot overrun its header.
            tar.append_data(&mut header, name, transcript.take(size))
                .with_context(|| format!("archiving {}", path.display()))?;
        }
        tar.into_inner().and_then(|gz| gz.finish()).context("compressing the transcripts")?;
        fsio::test_pause("bless-evidence-written");
        Ok(())
    })?;
    Ok(report)
}

/// Every transcript in an evidence archive, by entry name. An archive is
/// outside input: entries must be regular files with plain names (no
/// folders, links or `..`), and the whole, unpacked, within
/// [`Limits::max_input_file_bytes`], so a crafted archive cannot write
/// anywhere or fill memory.
pub fn read(archive: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut out = BTreeMap::new();
    for_each_entry(archive, |name, size, data| {
        let mut bytes = Vec::with_capacity(size as usize);
        data.read_to_end(&mut bytes).with_context(|| format!("reading {name} in {}", archive.display()))?;
        if out.insert(name.to_string(), bytes).is_some() {
            return Err(anyhow!("{}: entry `{name}` appears twice", archive.display()));
        }
        Ok(())
    })?;
    Ok(out)
}

/// Stream an evidence archive: `each(name, size, contents)` for every
/// entry in turn, after the checks of [`read`] (plain regular files, the
/// whole within the cap); `contents` yields at most `size` bytes. Only one
/// entry is ever unpacked at a time.
pub fn for_each_entry(archive: &Path, mut each: impl FnMut(&str, u64, &mut dyn Read) -> Result<()>) -> Result<()> {
    let cap = Limits::default().max_input_file_bytes;
    let file = std::fs::File::open(archive).with_context(|| format!("opening {}", archive.display()))?;
    let unpacked = GuardedTar::new(GzDecoder::new(std::io::BufReader::new(file)), cap.saturating_add(SLACK));
    let mut tar = tar::Archive::new(unpacked);
    let mut total: u64 = 0;
    for entry in tar.entries().with_context(|| format!("reading {}", archive.display()))? {
        let entry = entry.with_context(|| format!("reading {}", archive.display()))?;
        let name =
            entry.path().with_context(|| format!("reading {}", archive.display()))?.to_string_lossy().into_owned();
        let plain = !name.is_empty() && !name.contains(['/', '\\']) && name != "." && name != "..";
        if !plain || entry.header().entry_type() != tar::EntryType::Regular {
            bail!("{}: entry `{name}` is not a plain transcript file", archive.display());
        }
        let size = entry.header().size().with_context(|| format!("reading {name} in {}", archive.display()))?;
        total = total.saturating_add(size);
        if total > cap {
            bail!("{}: the transcripts unpack to more than {} MiB", archive.display(), cap >> 20);
        }
        each(&name, size, &mut entry.take(size))?;
    }
    Ok(())
}

/// What an archive may unpack to beyond its entries' contents: headers
/// and padding.
const SLACK: u64 = 4 << 20;

/// The most bytes of one long-name or extended header entry (GNU `L` and
/// `K`, pax `x` and `g`), which the tar reader would hold in memory whole.
const MAX_META_ENTRY: u64 = 64 << 10;

/// The unpacked stream of an archive, watched as the tar reader reads it:
/// every byte counts against `cap` (headers and padding included, which the
/// entries' sizes do not show), and a long-name or extended header entry
/// larger than [`MAX_META_ENTRY`] is an error before the tar reader buffers
/// it. It follows the archive header by header with `tar::Header`; past a
/// header it does not know (the tar reader then refuses the entry), it only
/// counts.
struct GuardedTar<R> {
    inner: R,
    cap: u64,
    /// Bytes passed on so far.
    read: u64,
    /// Where the next header starts, while headers are followed.
    next_header: Option<u64>,
    /// The header being gathered, and how much of it has passed.
    header: [u8; 512],
    filled: usize,
}

impl<R: Read> GuardedTar<R> {
    fn new(inner: R, cap: u64) -> GuardedTar<R> {
        GuardedTar { inner, cap, read: 0, next_header: Some(0), header: [0; 512], filled: 0 }
    }

    /// Look at the bytes of `data`, which start at `self.read`: gather
    /// each header as it passes (it may span reads) and check it.
    fn watch(&mut self, data: &[u8]) -> std::io::Result<()> {
        let mut pos = self.read;
        let mut rest = data;
        while let Some(at) = self.next_header {
            // The next header byte wanted; never behind `pos`.
            let wanted = at + self.filled as u64;
            if wanted >= pos + rest.len() as u64 {
                break;
            }
            rest = &rest[(wanted - pos) as usize..];
            pos = wanted;
            let take = (512 - self.filled).min(rest.len());
            self.header[self.filled..self.filled + take].copy_from_slice(&rest[..take]);
            self.filled += take;
            rest = &rest[take..];
            pos += take as u64;
            if self.filled < 512 {
                break;
            }
            self.filled = 0;
            self.next_header = self.after_header(at)?;
        }
        Ok(())
    }

    /// Check the header at `at` (now in `self.header`) and say where the next one is.
    fn after_header(&self, at: u64) -> std::io::Result<Option<u64>> {
        if self.header.iter().all(|&b| b == 0) {
            return Ok(Some(at + 512));
        }
        let header = tar::Header::from_byte_slice(&self.header);
        let Ok(size) = header.entry_size() else { return Ok(None) };
        use tar::EntryType::*;
        match header.entry_type() {
            GNULongName | GNULongLink | XHeader | XGlobalHeader if size > MAX_META_ENTRY => {
                Err(std::io::Error::other(format!(
                    "an extended header entry claims {size} bytes, over the cap of {} KiB on one",
                    MAX_META_ENTRY >> 10
                )))
            }
            Regular | GNULongName | GNULongLink | XHeader | XGlobalHeader => {
                Ok(Some(at + 512 + size.div_ceil(512) * 512))
            }
            _ => Ok(None),
        }
    }
}

impl<R: Read> Read for GuardedTar<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = self.cap.saturating_sub(self.read);
        if room == 0 {
            // One byte past the cap tells an archive that is too large.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(format!("the archive unpacks to more than {} MiB", self.cap >> 20))),
            };
        }
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.watch(&buf[..n])?;
        self.read += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A gzip'd tar with one entry of `kind` named `name` (written into the
    /// header raw, as a crafted archive would) claiming `size` bytes, with
    /// `data` as its contents.
    fn archive(name: &str, kind: tar::EntryType, size: u64, data: &[u8]) -> Vec<u8> {
        let mut header = tar::Header::new_gnu();
        header.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(0o644);
        header.set_cksum();
        let mut raw = header.as_bytes().to_vec();
        raw.extend_from_slice(data);
        raw.resize(raw.len().next_multiple_of(512) + 1024, 0);
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(&raw).unwrap();
        gz.finish().unwrap()
    }

    fn read_bytes(bytes: &[u8]) -> Result<BTreeMap<String, Vec<u8>>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.tar.gz");
        std::fs::write(&path, bytes).unwrap();
        read(&path)
    }

    #[test]
    fn crafted_archives_are_refused_without_unpacking() {
        let ok = read_bytes(&archive("t-1.json", tar::EntryType::Regular, 2, b"{}")).unwrap();
        assert_eq!(ok["t-1.json"], b"{}");
        for (name, kind) in [
            ("../../etc/passwd", tar::EntryType::Regular),
            ("/abs.json", tar::EntryType::Regular),
            ("dir/t-1.json", tar::EntryType::Regular),
            ("..", tar::EntryType::Regular),
            ("link.json", tar::EntryType::Symlink),
            ("hard.json", tar::EntryType::Link),
            ("folder", tar::EntryType::Directory),
        ] {
            let err = read_bytes(&archive(name, kind, 0, b"")).unwrap_err().to_string();
            assert!(err.contains("is not a plain transcript file"), "{name}: {err}");
        }
        // Long names and pax headers are read whole by the tar reader: one
        // claiming more than a small cap is refused before it is buffered.
        for kind in [tar::EntryType::GNULongName, tar::EntryType::XHeader, tar::EntryType::XGlobalHeader] {
            let err = read_bytes(&archive("././@LongLink", kind, 1_500_000_000, b"")).unwrap_err();
            assert!(format!("{err:#}").contains("extended header entry claims 1500000000 bytes"), "{kind:?}: {err:#}");
        }
        // A header claiming more than the cap is refused before any byte is read.
        let cap = Limits::default().max_input_file_bytes;
        let err = read_bytes(&archive("big.json", tar::EntryType::Regular, cap + 1, b"x")).unwrap_err().to_string();
        assert!(err.contains("unpack to more than"), "{err}");
    }

    #[test]
    fn run_keys_are_file_names_and_refuse_odd_ids() {
        assert_eq!(run_key("2026-05-24T21:42:41.910Z").as_deref(), Some("2026-05-24T21-42-41-910Z"));
        assert_eq!(run_key("../../x y").as_deref(), Some("------x-y"));
        assert_eq!(run_key(""), None);
        assert_eq!(run_key(&"9".repeat(101)), None);
        let base = Path::new("evals/baselines/ollama-m.json");
        assert_eq!(
            archive_path(base, "2026-05-24T21:42:41.910Z").unwrap(),
            Path::new("evals/baselines/evidence/ollama-m/2026-05-24T21-42-41-910Z.tar.gz")
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

        /// Archives as the tar writer makes them (long names included, entries
        /// of every size, padding across the reader's chunks) read back whole
        /// through the guard that follows their headers.
        #[test]
        fn written_archives_read_back_through_the_guard(
            entries in proptest::collection::btree_map("[a-z0-9_-]{1,180}\\.json", proptest::collection::vec(proptest::prelude::any::<u8>(), 0..5000), 0..12)
        ) {
            let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
            {
                let mut tar = tar::Builder::new(&mut gz);
                for (name, data) in &entries {
                    let mut header = tar::Header::new_gnu();
                    header.set_size(data.len() as u64);
                    header.set_mode(0o644);
                    tar.append_data(&mut header, name, data.as_slice()).unwrap();
                }
                tar.finish().unwrap();
            }
            let back = read_bytes(&gz.finish().unwrap()).unwrap();
            proptest::prop_assert_eq!(back, entries.into_iter().collect::<BTreeMap<_, _>>());
        }
    }
}
