//! Writing the built site to its output folder (`site/` by default).
//!
//! Each file is written to a temporary name and renamed into place, so a
//! preview server never serves half a file; unchanged files are not
//! rewritten; files a previous build left that this build did not produce are
//! removed. Because it deletes, it only ever works in a folder it made: the
//! folder must be new, empty, or carry the marker file `.vaultbench-site`,
//! and it may not be, hold, or sit inside a source folder.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rayon::prelude::*;

/// The file that marks a folder as a vaultbench site.
pub const MARKER: &str = ".vaultbench-site";

/// One file of the built site.
#[derive(Debug, Clone)]
pub struct OutFile {
    /// Path under the output folder, with `/`.
    pub rel: String,
    pub data: OutData,
}

#[derive(Debug, Clone)]
pub enum OutData {
    Bytes(Vec<u8>),
    /// Bytes named by a digest of what they were made from (a kept page):
    /// when the file on disk is as the last write left it ([`Stamps`]) and
    /// holds the bytes of the same digest, it is not read to be compared.
    Known {
        bytes: Arc<String>,
        digest: u64,
    },
    /// Copied from this file.
    Copy(PathBuf),
}

/// What a write changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    pub written: usize,
    pub unchanged: usize,
    pub removed: usize,
}

/// What the last write left on disk: for each file written as
/// [`OutData::Known`], its digest and the file's size, modification time
/// and inode right after. A file changed since by anyone else no longer
/// matches and is compared as usual.
#[derive(Debug, Default)]
pub struct Stamps(HashMap<PathBuf, Remembered>);

type Stamp = (u64, Option<std::time::SystemTime>, u64);

/// What a write remembers of a known file: its digest and stamp.
type Remembered = (u64, Stamp);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok().filter(|m| m.is_file())?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((meta.len(), meta.modified().ok(), inode))
}

/// Check that `out` may be written and cleaned: not a source folder, not
/// inside or around one, and ours or empty.
pub fn check_target(out: &Path, sources: &[&Path]) -> Result<()> {
    let out_abs = absolute(out)?;
    for src in sources {
        let src_abs = absolute(src)?;
        if out_abs == src_abs || out_abs.starts_with(&src_abs) || src_abs.starts_with(&out_abs) {
            bail!(
                "the output folder {} overlaps the source folder {}: choose another --out (default: site)",
                out.display(),
                src.display()
            );
        }
    }
    if out.exists() {
        if !out.is_dir() {
            bail!("the output {} is a file, not a folder: choose another --out", out.display());
        }
        let empty = std::fs::read_dir(out).with_context(|| format!("reading {}", out.display()))?.next().is_none();
        if !empty && !out.join(MARKER).exists() {
            bail!(
                "refusing to write into {}: it is not empty and was not made by `vaultbench publish` (no {MARKER} \
                 file in it); choose a new or empty folder with --out",
                out.display()
            );
        }
    }
    Ok(())
}

fn absolute(p: &Path) -> Result<PathBuf> {
    // The folder may not exist yet: resolve the deepest part that does.
    let abs = std::path::absolute(p).with_context(|| format!("resolving {}", p.display()))?;
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => break,
        }
    }
    let mut resolved = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    for name in rest.into_iter().rev() {
        resolved.push(name);
    }
    Ok(resolved)
}

/// Write `files` under `out` (already checked with `check_target`). Copied
/// files are streamed, compared and written in chunks, so a large asset or
/// evidence archive is never held in memory whole.
pub fn write(out: &Path, files: &[OutFile]) -> Result<WriteStats> {
    write_remembering(out, files, &mut Stamps::default())
}

/// [`write`], with what the last write through these `stamps` left, to skip
/// comparing the known files that are as it left them (`--watch`).
pub fn write_remembering(out: &Path, files: &[OutFile], stamps: &mut Stamps) -> Result<WriteStats> {
    std::fs::create_dir_all(out).with_context(|| format!("creating the output folder {}", out.display()))?;
    std::fs::write(out.join(MARKER), "Built by `vaultbench publish`; this folder is replaced on every build.\n")
        .with_context(|| format!("writing {}", out.join(MARKER).display()))?;
    // Files are compared and written on every core: each is its own.
    let known = &*stamps;
    let outcomes: Vec<(PathBuf, bool, Option<Remembered>)> = files
        .par_iter()
        .map(|file| -> Result<_> {
            let path = out.join(&file.rel);
            let (changed, remembered) = write_one(&path, &file.data, known)?;
            Ok((path, changed, remembered))
        })
        .collect::<Result<_>>()?;
    let mut stats = WriteStats::default();
    let mut keep: HashSet<PathBuf> = HashSet::with_capacity(files.len() + 1);
    keep.insert(out.join(MARKER));
    let mut now = Stamps(HashMap::new());
    for (path, changed, remembered) in outcomes {
        if changed {
            stats.written += 1;
        } else {
            stats.unchanged += 1;
        }
        if let Some(remembered) = remembered {
            now.0.insert(path.clone(), remembered);
        }
        keep.insert(path);
    }
    stats.removed = remove_stale(out, &keep)?;
    *stamps = now;
    Ok(stats)
}

/// Write one file unless it already holds `data`: whether it was written,
/// and what to remember of a known file.
fn write_one(path: &Path, data: &OutData, stamps: &Stamps) -> Result<(bool, Option<Remembered>)> {
    Ok(match data {
        OutData::Known { bytes, digest } => {
            let known = stamps.0.get(path).filter(|(d, _)| d == digest).map(|(_, s)| *s);
            let changed = (known.is_none() || known != stamp(path)) && !holds(path, bytes.as_bytes());
            if changed {
                replace(path, &mut bytes.as_bytes())?;
            }
            (changed, stamp(path).map(|s| (*digest, s)))
        }
        OutData::Bytes(bytes) => {
            let changed = !holds(path, bytes);
            if changed {
                replace(path, &mut bytes.as_slice())?;
            }
            (changed, None)
        }
        OutData::Copy(src) => {
            let open = || File::open(src).with_context(|| format!("reading {}", src.display()));
            let source = open()?;
            let len = source.metadata().with_context(|| format!("reading {}", src.display()))?.len();
            let changed = !same_contents(path, len, source);
            if changed {
                replace(path, &mut open()?).with_context(|| format!("copying {}", src.display()))?;
            }
            (changed, None)
        }
    })
}

/// Whether the file at `path` holds exactly `bytes` (read whole: a page
/// in memory is no larger than the file it is compared with).
fn holds(path: &Path, bytes: &[u8]) -> bool {
    let Ok(mut old) = File::open(path) else { return false };
    if old.metadata().map(|m| m.len()).ok() != Some(bytes.len() as u64) {
        return false;
    }
    let mut read = Vec::with_capacity(bytes.len() + 1);
    old.read_to_end(&mut read).is_ok() && read == bytes
}

/// Whether the file at `path` holds exactly the `len` bytes `new` reads.
fn same_contents(path: &Path, len: u64, new: impl Read) -> bool {
    let Ok(old) = File::open(path) else { return false };
    if old.metadata().map(|m| m.len()).ok() != Some(len) {
        return false;
    }
    let (mut old, mut new) = (old, new);
    let (mut a, mut b) = (vec![0u8; CHUNK], vec![0u8; CHUNK]);
    loop {
        let (Ok(n), Ok(m)) = (fill(&mut old, &mut a), fill(&mut new, &mut b)) else { return false };
        if n != m || a[..n] != b[..m] {
            return false;
        }
        if n < CHUNK {
            return true;
        }
    }
}

const CHUNK: usize = 64 * 1024;

/// Read until `buf` is full or the reader ends; the count read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Write through a temporary file and a rename, so readers see the old or
/// the new file, never a part. Not synced to disk: the site is rebuilt, not
/// recovered.
fn replace(path: &Path, contents: &mut impl Read) -> Result<()> {
    let dir = path.parent().expect("output files have a parent");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".publish.");
    // A web server running as another user must read the site: the usual
    // mode of a new file (0666 less the umask), not tempfile's private 0600.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp =
        builder.tempfile_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    std::io::copy(contents, &mut tmp).with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path).map_err(|e| e.error).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

fn remove_stale(out: &Path, keep: &HashSet<PathBuf>) -> Result<usize> {
    let mut removed = 0;
    let mut dirs = Vec::new();
    for entry in walkdir::WalkDir::new(out).min_depth(1) {
        let entry = entry.with_context(|| format!("reading {}", out.display()))?;
        let path = entry.path();
        if entry.file_type().is_dir() {
            dirs.push(path.to_path_buf());
        } else if !keep.contains(path) {
            std::fs::remove_file(path).with_context(|| format!("removing the stale file {}", path.display()))?;
            removed += 1;
        }
    }
    // Deepest first; a folder that still has files stays.
    for dir in dirs.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rel: &str, text: &str) -> OutFile {
        OutFile { rel: rel.into(), data: OutData::Bytes(text.as_bytes().to_vec()) }
    }

    #[test]
    fn writes_skips_unchanged_and_removes_stale() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        check_target(&out, &[]).unwrap();
        let s = write(&out, &[file("a.html", "A"), file("g/b.html", "B")]).unwrap();
        assert_eq!(s, WriteStats { written: 2, unchanged: 0, removed: 0 });
        let s = write(&out, &[file("a.html", "A2")]).unwrap();
        assert_eq!(s, WriteStats { written: 1, unchanged: 0, removed: 1 });
        assert_eq!(std::fs::read_to_string(out.join("a.html")).unwrap(), "A2");
        assert!(!out.join("g").exists());
        let s = write(&out, &[file("a.html", "A2")]).unwrap();
        assert_eq!(s.unchanged, 1);
        check_target(&out, &[]).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn written_files_get_the_mode_of_any_new_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let out = dir.path().join("site");
        write(&out, &[file("a.html", "A"), file("g/b.html", "B")]).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&out.join("a.html")), mode(&plain));
        assert_eq!(mode(&out.join("g/b.html")), mode(&plain));
        // Readable by others under the usual umask (022): what a web server needs.
        assert_ne!(mode(&plain) & 0o004, 0, "this test needs a umask that lets others read");
    }

    #[test]
    fn known_files_as_left_are_not_compared_and_changed_ones_are() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let known = |text: &str, digest| {
            vec![OutFile { rel: "a.html".into(), data: OutData::Known { bytes: Arc::new(text.to_string()), digest } }]
        };
        let mut stamps = Stamps::default();
        assert_eq!(write_remembering(&out, &known("one", 1), &mut stamps).unwrap().written, 1);
        assert_eq!(write_remembering(&out, &known("one", 1), &mut stamps).unwrap().unchanged, 1);
        // Someone else rewrote the file (another size): it is compared, found different, written back.
        std::fs::write(out.join("a.html"), "edited by hand").unwrap();
        assert_eq!(write_remembering(&out, &known("one", 1), &mut stamps).unwrap().written, 1);
        assert_eq!(std::fs::read_to_string(out.join("a.html")).unwrap(), "one");
        // Another digest: compared and written.
        assert_eq!(write_remembering(&out, &known("two", 2), &mut stamps).unwrap().written, 1);
        assert_eq!(std::fs::read_to_string(out.join("a.html")).unwrap(), "two");
    }

    #[test]
    fn copies_stream_and_compare_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let src = dir.path().join("big.bin");
        let mut data: Vec<u8> = (0..3 * CHUNK + 17).map(|i| (i % 251) as u8).collect();
        std::fs::write(&src, &data).unwrap();
        let copy = || vec![OutFile { rel: "a/big.bin".into(), data: OutData::Copy(src.clone()) }];
        assert_eq!(write(&out, &copy()).unwrap().written, 1);
        assert_eq!(std::fs::read(out.join("a/big.bin")).unwrap(), data);
        assert_eq!(write(&out, &copy()).unwrap().unchanged, 1);
        // One byte changed in the last chunk, same length: rewritten.
        data[3 * CHUNK + 3] ^= 1;
        std::fs::write(&src, &data).unwrap();
        assert_eq!(write(&out, &copy()).unwrap().written, 1);
        assert_eq!(std::fs::read(out.join("a/big.bin")).unwrap(), data);
        // Exactly one chunk long.
        std::fs::write(&src, vec![7u8; CHUNK]).unwrap();
        assert_eq!(write(&out, &copy()).unwrap().written, 1);
        assert_eq!(write(&out, &copy()).unwrap().unchanged, 1);
    }

    #[test]
    fn refuses_foreign_folders_and_overlaps() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("precious.txt"), "keep").unwrap();
        let e = check_target(dir.path(), &[]).unwrap_err().to_string();
        assert!(e.contains(MARKER), "{e}");
        let docs = dir.path().join("docs");
        std::fs::create_dir(&docs).unwrap();
        let e = check_target(&docs.join("site"), &[&docs]).unwrap_err().to_string();
        assert!(e.contains("overlaps"), "{e}");
        assert!(check_target(dir.path(), &[&docs]).unwrap_err().to_string().contains("overlaps"));
        assert!(check_target(&dir.path().join("new"), &[&docs]).is_ok());
    }
}
