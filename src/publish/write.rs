//! The write stage: the only code that touches the output folder (`site/` by
//! default). What it guarantees, whatever `--out` says and whatever is on
//! disk (docs/publishing.md, "The output folder", says the same to users):
//!
//! - **The place is resolved before it is checked.** `--out` goes through
//!   [`fsio::resolve`]: links followed, `..` applied after them, missing
//!   folders treated as the plain folders they will become. `site/../docs`
//!   is `docs`, and is refused as a source folder, before anything is made.
//! - **Only its own folder.** The folder must be new, empty, or carry the
//!   marker file [`MARKER`]; it may not be, hold or sit inside a source
//!   folder, and may not be the file system's root, the home folder or a
//!   folder holding the current one.
//! - **Only its own files.** The marker is also the manifest: the list of
//!   files the last build wrote. A build removes only files listed there
//!   that it no longer produces, and refuses to replace a file that is
//!   neither listed nor new. A marker from before manifests lists nothing:
//!   such a folder is adopted (its files may be replaced) but nothing in it
//!   is removed.
//! - **No links.** No folder on the way to a file, and no file, may be a
//!   symbolic link: such a path is an error naming it, never written
//!   through, never removed.
//! - **One writer at a time.** Each write holds an exclusive lock on
//!   [`LOCK`] in the folder: a second build into the same folder waits for
//!   the first to finish. The preview server opens each file under the
//!   shared lock ([`OutputDir::open_lock`]), so it never serves a file of a
//!   build still being written. While `publish --watch` serves a folder it
//!   owns it ([`OutputDir::own`]): a one-off build into it is refused, since
//!   the preview would keep serving whichever build wrote last.
//!
//! - **One source per path.** Every output path is claimed once, through a
//!   [`Namespace`] that sees two paths differing only by case or by Unicode
//!   normalization (NFC/NFD) as one, since sites are served from file systems
//!   that do: the second claim is a collision the build reports, naming both
//!   sources.
//!
//! Each file is written to a temporary name and renamed into place, so a
//! reader never sees half a file; unchanged files are not rewritten.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;

use crate::fsio;

/// The file that marks a folder as a vaultbench site and lists what the
/// last build wrote there.
pub const MARKER: &str = ".vaultbench-site";

/// The lock file of the writes (and of the preview server's reads).
pub const LOCK: &str = ".vaultbench-site.lock";

/// The lock file a `publish --watch` holds while it serves the folder.
pub const OWNER: &str = ".vaultbench-site.watch";

/// The start of the name of a file being written.
const TEMP_PREFIX: &str = ".publish.";

/// Most bytes of a manifest read (about a million file names).
const MANIFEST_CAP: u64 = 256 << 20;

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
        /// What to remember of the page for the next build, if it is one
        /// that build may leave as it is.
        page: Option<PageRecord>,
    },
    /// A page the last build wrote, left as it is: its record and its file
    /// are as that build left them ([`Writing::kept`]).
    Kept(PageRecord),
    /// Copied from this file.
    Copy(PathBuf),
}

/// What a build remembers of a page it wrote (in the manifest), so that
/// the next build, run by the same program, leaves the page as it is when
/// the page's sources and data have the same digests and its file is as
/// this build left it: the digests of its sources and data
/// (`Site::page_digests`) and its search sections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    pub source: u64,
    pub digest: u64,
    /// Shared with the search index.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub sections: Arc<[crate::publish::render::html::Section]>,
}

/// A page record with the stamp of the file it describes.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredPage {
    #[serde(flatten)]
    page: PageRecord,
    size: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

impl StoredPage {
    fn new(page: PageRecord, (size, modified, inode): Stamp) -> StoredPage {
        StoredPage { page, size, modified, inode }
    }

    /// The stamp of the file at `path`, if it is the one recorded: the file
    /// is as the build that recorded it left it.
    fn as_left(&self, path: &Path) -> Option<Stamp> {
        stamp(path).filter(|now| *now == (self.size, self.modified, self.inode))
    }
}

/// What wrote the page records of a manifest: a record is used only by the
/// same program (its version and its very executable), since another one
/// may render the same data otherwise.
fn program() -> &'static str {
    static PROGRAM: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PROGRAM.get_or_init(|| {
        let exe = std::env::current_exe().and_then(std::fs::metadata);
        let (len, modified) = match &exe {
            Ok(m) => (m.len(), m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())),
            Err(_) => (0, None),
        };
        match modified {
            Some(t) => format!(
                "vaultbench {} ({len} bytes, {}.{:09})",
                env!("CARGO_PKG_VERSION"),
                t.as_secs(),
                t.subsec_nanos()
            ),
            // An executable that cannot be read about: no record is ever used.
            None => String::new(),
        }
    })
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

/// The output paths of one build, each claimed by one source.
#[derive(Debug, Default)]
pub struct Namespace {
    /// By folded path: the path as claimed and who claimed it.
    taken: HashMap<String, (String, String)>,
}

/// A second claim of an output path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    /// The path the second source wanted, and the source.
    pub rel: String,
    pub source: String,
    /// The path as first claimed, and by whom.
    pub taken_as: String,
    pub taken_by: String,
}

impl std::fmt::Display for Collision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let same = if self.rel == self.taken_as {
            String::new()
        } else {
            format!(" (the same file as {} where case or Unicode normalization is ignored)", self.taken_as)
        };
        write!(f, "{} would be published at {}{same}, which is already {}", self.source, self.rel, self.taken_by)
    }
}

impl Namespace {
    /// Claim `rel` for `source`, unless it is taken.
    pub fn claim(&mut self, rel: &str, source: impl Into<String>) -> Result<(), Collision> {
        match self.taken.entry(fold(rel)) {
            std::collections::hash_map::Entry::Occupied(e) => Err(Collision {
                rel: rel.to_string(),
                source: source.into(),
                taken_as: e.get().0.clone(),
                taken_by: e.get().1.clone(),
            }),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((rel.to_string(), source.into()));
                Ok(())
            }
        }
    }

    pub fn is_taken(&self, rel: &str) -> bool {
        self.taken.contains_key(&fold(rel))
    }
}

/// A path as a case-insensitive, normalization-insensitive file system
/// sees it: decomposed, lowercased, recomposed.
pub fn fold(rel: &str) -> String {
    rel.nfd().flat_map(char::to_lowercase).nfc().collect()
}

/// The output folder, resolved and checked: the only handle through which
/// anything is written there.
#[derive(Debug, Clone)]
pub struct OutputDir {
    /// Where it really is (see [`fsio::resolve`]).
    root: PathBuf,
    /// As the user named it, for messages.
    shown: PathBuf,
}

/// The lock that makes a `publish --watch` the folder's only writer; held
/// until dropped.
#[derive(Debug)]
pub struct Ownership(#[allow(dead_code)] File);

/// What the marker says of the folder.
#[derive(Debug, PartialEq)]
enum Manifest {
    /// No marker: a new or empty folder.
    None,
    /// A marker written before manifests: the folder is ours, its files unlisted.
    Unlisted,
    Listed(HashSet<String>),
}

#[derive(Serialize, Deserialize)]
struct ManifestFile {
    note: String,
    files: Vec<String>,
    /// The program that wrote `pages` ([`program`]).
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "or_default")]
    program: String,
    /// By output path, the pages a next build may leave as they are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "or_default")]
    pages: BTreeMap<String, StoredPage>,
}

/// A field of the manifest that is only a cache (the page records): as
/// written, or empty where it does not read, so that a broken record never
/// costs the list of files.
fn or_default<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
    let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
    Ok(serde_json::from_str(raw.get()).unwrap_or_default())
}

const NOTE: &str = "Built by `vaultbench publish`, which writes and removes only the files listed here.";

impl OutputDir {
    /// Resolve `out` and check that it may be written: not overlapping any
    /// of `sources`, not a folder of the system or of the user, and new,
    /// empty or a site a build made. Nothing is created yet.
    pub fn claim(out: &Path, sources: &[&Path]) -> Result<OutputDir> {
        let root = fsio::resolve(out).with_context(|| format!("resolving the output folder {}", out.display()))?;
        let dir = OutputDir { root, shown: out.to_path_buf() };
        dir.check_place(sources)?;
        dir.check_contents()?;
        Ok(dir)
    }

    /// Where the folder really is.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `--out` as given, and where it leads when that differs.
    fn named(&self) -> String {
        let abs = std::path::absolute(&self.shown).unwrap_or_else(|_| self.shown.clone());
        if abs == self.root {
            self.shown.display().to_string()
        } else {
            format!("{} (which is {})", self.shown.display(), self.root.display())
        }
    }

    fn check_place(&self, sources: &[&Path]) -> Result<()> {
        let root = &self.root;
        for src in sources {
            let src_root = fsio::resolve(src).with_context(|| format!("resolving {}", src.display()))?;
            let how = if *root == src_root {
                "is"
            } else if root.starts_with(&src_root) {
                "is inside"
            } else if src_root.starts_with(root) {
                "holds"
            } else {
                continue;
            };
            bail!(
                "refusing to write the site into {}: it {how} the source folder {}, whose files a build would \
                 replace or remove. Choose another --out (default: site)",
                self.named(),
                src.display()
            );
        }
        let why = if root.parent().is_none() {
            Some("the root of the file system")
        } else if home().is_some_and(|home| *root == home) {
            Some("your home folder")
        } else if std::env::current_dir().ok().and_then(|d| d.canonicalize().ok()).is_some_and(|d| d.starts_with(root))
        {
            Some("the current folder or one holding it")
        } else {
            None
        };
        if let Some(why) = why {
            bail!(
                "refusing to write the site into {}: it is {why}. Choose another --out (default: site)",
                self.named()
            );
        }
        Ok(())
    }

    /// The folder, if it exists, is a real folder that is empty or a site.
    fn check_contents(&self) -> Result<()> {
        let meta = match std::fs::symlink_metadata(&self.root) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("reading the output folder {}", self.named())),
        };
        if !meta.is_dir() {
            bail!("the output {} is a file, not a folder: choose another --out", self.named());
        }
        let mut entries = std::fs::read_dir(&self.root).with_context(|| format!("reading {}", self.named()))?;
        // Its own lock files and a marker being written (a temporary file)
        // are what another build leaves in a folder it is starting.
        let own = |name: &str| [LOCK, OWNER].contains(&name) || name.starts_with(TEMP_PREFIX);
        let empty = entries.all(|e| e.is_ok_and(|e| own(e.file_name().to_str().unwrap_or(""))));
        let marker = std::fs::symlink_metadata(self.root.join(MARKER));
        if !empty && !marker.as_ref().is_ok_and(|m| m.is_file()) {
            bail!(
                "refusing to write into {}: it is not empty and was not made by `vaultbench publish` (no {MARKER} \
                 file in it); choose a new or empty folder with --out",
                self.named()
            );
        }
        Ok(())
    }

    /// Make the folder if need be and open its lock file.
    fn lock_file(&self, name: &str) -> Result<File> {
        std::fs::create_dir_all(&self.root).with_context(|| format!("creating the output folder {}", self.named()))?;
        let path = self.root.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
            bail!("{} is not a plain file: remove it", path.display());
        }
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening the lock file {}", path.display()))
    }

    /// Make this process the folder's only writer, for as long as the
    /// returned value lives (`publish --watch`). Refused while another
    /// process owns it.
    pub fn own(&self) -> Result<Ownership> {
        let mut file = self.lock_file(OWNER)?;
        if file.try_lock().is_err() {
            bail!("{}", self.owned_by_other(&mut file));
        }
        file.set_len(0).and_then(|()| writeln!(file, "{}", std::process::id())).ok();
        Ok(Ownership(file))
    }

    fn owned_by_other(&self, file: &mut File) -> String {
        let mut pid = String::new();
        let _ = file.read_to_string(&mut pid);
        let pid = pid.trim();
        let who = if pid.is_empty() { String::new() } else { format!(" (process {pid})") };
        format!(
            "{} is being served by `vaultbench publish --watch`{who}, which rebuilds it on every change; a build \
             here would be replaced by the preview's next one. Stop the preview or choose another --out",
            self.named()
        )
    }

    /// The shared lock on the folder's writes: a reader holding it never
    /// opens a file of a build that is being written. `None` if the folder
    /// has no lock file (no build wrote there yet).
    pub fn open_lock(root: &Path) -> Option<File> {
        let file = File::open(root.join(LOCK)).ok()?;
        file.lock_shared().ok()?;
        Some(file)
    }

    /// Write `files` under the folder, remembering through `stamps` what
    /// the last write left so that known files as it left them are not
    /// compared again (`--watch`). `owner` is the caller's own
    /// [`Ownership`], if it has one; without it a folder owned by a
    /// `publish --watch` is refused.
    pub fn write(&self, files: &[OutFile], stamps: &mut Stamps, owner: Option<&Ownership>) -> Result<WriteStats> {
        let rels: Vec<String> = files.iter().map(|f| f.rel.clone()).collect();
        let mut writing = self.begin(rels, owner)?;
        writing.write(files, stamps)?;
        writing.finish(stamps)
    }

    /// Start a write of the files at `rels` (every path the build will
    /// write, known before any is rendered): take the lock, check the folder
    /// again, list them in the manifest and make their folders. The files
    /// then come in parts ([`Writing::write`]), so that a build never holds
    /// the whole site in memory, and [`Writing::finish`] removes what the
    /// last build wrote and this one did not.
    pub fn begin(&self, rels: Vec<String>, owner: Option<&Ownership>) -> Result<Writing<'_>> {
        let lock = self.lock_file(LOCK)?;
        // Held through the write, so that no preview starts serving half way.
        let not_served = match owner {
            Some(_) => None,
            None => {
                let mut watch = self.lock_file(OWNER)?;
                if watch.try_lock_shared().is_err() {
                    bail!("{}", self.owned_by_other(&mut watch));
                }
                Some(watch)
            }
        };
        lock.lock().with_context(|| format!("locking {}", self.root.join(LOCK).display()))?;
        // Again under the lock: another build may have written meanwhile.
        self.check_contents()?;
        let (before, pages) = self.read_manifest()?;
        for rel in &rels {
            check_rel(rel)?;
        }
        // Listed before anything is made, so that a build killed half way
        // leaves only files the next build knows as its own, and so that
        // the folder is never without its marker once it holds anything.
        let mut listed: BTreeSet<&str> = rels.iter().map(String::as_str).collect();
        if let Manifest::Listed(old) = &before {
            listed.extend(old.iter().map(String::as_str));
        }
        self.write_manifest(listed, BTreeMap::new())?;
        let folders = self.plan(&rels, &before)?;
        Ok(Writing {
            dir: self,
            rels,
            before,
            pages_before: pages,
            pages: BTreeMap::new(),
            folders,
            stats: WriteStats::default(),
            remembered: Stamps::default(),
            _lock: lock,
            _not_served: not_served,
        })
    }

    /// The manifest, and the page records in it that this program wrote.
    fn read_manifest(&self) -> Result<(Manifest, BTreeMap<String, StoredPage>)> {
        let path = self.root.join(MARKER);
        let bytes = match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Manifest::None, BTreeMap::new())),
            _ => fsio::read_capped(&path, MANIFEST_CAP)?,
        };
        Ok(match serde_json::from_slice::<ManifestFile>(&bytes) {
            Ok(m) => {
                let pages = if !m.program.is_empty() && m.program == program() { m.pages } else { BTreeMap::new() };
                (Manifest::Listed(m.files.into_iter().collect()), pages)
            }
            Err(_) => (Manifest::Unlisted, BTreeMap::new()),
        })
    }

    fn write_manifest(&self, files: BTreeSet<&str>, pages: BTreeMap<String, StoredPage>) -> Result<()> {
        let program = if pages.is_empty() { String::new() } else { program().to_string() };
        let manifest =
            ManifestFile { note: NOTE.into(), files: files.into_iter().map(String::from).collect(), program, pages };
        // Streamed: with a page record per page, a large site's manifest
        // runs to megabytes.
        replace_with(&self.root.join(MARKER), |out| {
            serde_json::to_writer_pretty(&mut *out, &manifest)?;
            out.write_all(b"\n")
        })
    }

    /// Check every path about to be written and make its folders: the
    /// folders that will hold files, deepest last.
    fn plan(&self, rels: &[String], before: &Manifest) -> Result<Vec<String>> {
        let ours = |rel: &str| match before {
            Manifest::Listed(list) => list.contains(rel),
            Manifest::Unlisted => true,
            Manifest::None => false,
        };
        let mut folders = BTreeSet::new();
        for rel in rels {
            let mut at = 0;
            while let Some(i) = rel[at..].find('/') {
                folders.insert(rel[..at + i].to_string());
                at += i + 1;
            }
        }
        let shown = |rel: &str| self.shown.join(rel).display().to_string();
        // Shallowest first (a parent sorts before its children).
        for folder in &folders {
            let path = self.root.join(folder);
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => {}
                Ok(m) if m.file_type().is_symlink() => bail!(
                    "{} is a symbolic link: publish never writes through one, since it may lead out of the site. \
                     Remove it",
                    shown(folder)
                ),
                Ok(_) if ours(folder) => std::fs::remove_file(&path)
                    .and_then(|()| std::fs::create_dir(&path))
                    .with_context(|| format!("replacing the file {} by a folder", shown(folder)))?,
                Ok(_) => bail!("{} is a file that publish did not write, where the site needs a folder", shown(folder)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir(&path).with_context(|| format!("creating {}", shown(folder)))?
                }
                Err(e) => return Err(e).with_context(|| format!("reading {}", shown(folder))),
            }
        }
        for rel in rels {
            match std::fs::symlink_metadata(self.root.join(rel)) {
                Ok(m) if m.file_type().is_symlink() => bail!(
                    "{} is a symbolic link: publish never writes through one, since it may lead out of the site. \
                     Remove it",
                    shown(rel)
                ),
                Ok(m) if m.is_dir() => bail!("{} is a folder where the site needs a file", shown(rel)),
                Ok(_) if !ours(rel) => bail!(
                    "{} exists and was not written by `vaultbench publish`: it is not replaced. Move it away",
                    shown(rel)
                ),
                _ => {}
            }
        }
        Ok(folders.into_iter().collect())
    }

    /// Remove the files the last build listed that this one did not write,
    /// then the folders they leave empty. A listed path that is now a link
    /// or a folder is left alone: it is not what a build wrote.
    fn remove_stale(&self, rels: &[String], before: &Manifest, folders: &[String]) -> Result<usize> {
        let Manifest::Listed(old) = before else { return Ok(0) };
        let keep: HashSet<&str> = rels.iter().map(String::as_str).collect();
        let needed: HashSet<&str> = folders.iter().map(String::as_str).collect();
        let mut removed = 0;
        let mut emptied = BTreeSet::new();
        for rel in old.iter().filter(|rel| !keep.contains(rel.as_str())) {
            if check_rel(rel).is_err() || !self.real_folders_to(rel) {
                continue;
            }
            let path = self.root.join(rel);
            if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                continue;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("removing the stale file {}", path.display())),
            }
            let mut at = rel.as_str();
            while let Some(i) = at.rfind('/') {
                at = &at[..i];
                if !needed.contains(at) {
                    emptied.insert(at.to_string());
                }
            }
        }
        // Deepest first; a folder that still has anything in it stays.
        for folder in emptied.iter().rev() {
            let _ = std::fs::remove_dir(self.root.join(folder));
        }
        Ok(removed)
    }

    /// Whether every folder on the way to `rel` is a real folder.
    fn real_folders_to(&self, rel: &str) -> bool {
        let mut path = self.root.clone();
        let mut parts = rel.split('/').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                return true;
            }
            path.push(part);
            if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                return false;
            }
        }
        true
    }
}

/// A write under way ([`OutputDir::begin`]): the lock is held until it is
/// finished or dropped.
pub struct Writing<'a> {
    dir: &'a OutputDir,
    /// Every path this build writes.
    rels: Vec<String>,
    before: Manifest,
    folders: Vec<String>,
    stats: WriteStats,
    /// What the known files written so far were left as.
    remembered: Stamps,
    /// The page records of the last build (by the same program).
    pages_before: BTreeMap<String, StoredPage>,
    /// The page records of this one, as its pages are written or kept.
    pages: BTreeMap<String, StoredPage>,
    _lock: File,
    _not_served: Option<File>,
}

impl Writing<'_> {
    /// The record of the page at `rel` that the last build wrote, if its
    /// file is still as that build left it: the page may then be left as
    /// it is ([`OutData::Kept`]) when its digests are the same.
    pub fn kept(&self, rel: &str) -> Option<&PageRecord> {
        let stored = self.pages_before.get(rel)?;
        stored.as_left(&self.dir.root.join(rel)).map(|_| &stored.page)
    }

    /// Write `files` (some of the paths given to `begin`), compared and
    /// written on every core, each on its own; `stamps`: what the last
    /// write left, so that known files as it left them are not compared.
    pub fn write(&mut self, files: &[OutFile], stamps: &Stamps) -> Result<()> {
        let before = &self.pages_before;
        let outcomes: Vec<(PathBuf, bool, Option<Remembered>)> = files
            .par_iter()
            .map(|file| -> Result<_> {
                let path = self.dir.root.join(&file.rel);
                let (changed, remembered) = match &file.data {
                    OutData::Kept(page) => {
                        // Checked again: the file may have changed since `kept`.
                        let Some(now) =
                            before.get(&file.rel).filter(|s| s.page == *page).and_then(|s| s.as_left(&path))
                        else {
                            bail!("{} changed while the site was being built: build it again", path.display());
                        };
                        (false, Some((page.digest, now)))
                    }
                    data => write_one(&path, data, stamps)?,
                };
                Ok((path, changed, remembered))
            })
            .collect::<Result<_>>()?;
        for ((path, changed, remembered), file) in outcomes.into_iter().zip(files) {
            if changed {
                self.stats.written += 1;
            } else {
                self.stats.unchanged += 1;
            }
            let page = match &file.data {
                OutData::Known { page, .. } => page.as_ref(),
                OutData::Kept(page) => Some(page),
                _ => None,
            };
            if let (Some(page), Some((_, stamp))) = (page, remembered) {
                self.pages.insert(file.rel.clone(), StoredPage::new(page.clone(), stamp));
            }
            if let Some(remembered) = remembered {
                self.remembered.0.insert(path, remembered);
            }
        }
        Ok(())
    }

    /// Remove what the last build wrote and this one did not, list this
    /// build's files alone in the manifest, and say what changed; `stamps`
    /// becomes what this write left.
    pub fn finish(self, stamps: &mut Stamps) -> Result<WriteStats> {
        let removed = self.dir.remove_stale(&self.rels, &self.before, &self.folders)?;
        self.dir.write_manifest(self.rels.iter().map(String::as_str).collect(), self.pages)?;
        *stamps = self.remembered;
        Ok(WriteStats { removed, ..self.stats })
    }
}

/// An output path is relative, with plain `/`-separated names: never
/// absolute, never `..`, `.` or empty, never the marker or lock files.
fn check_rel(rel: &str) -> Result<()> {
    let bad = rel.is_empty()
        || rel.starts_with('/')
        || rel.contains('\0')
        || rel.split('/').any(|part| part.is_empty() || part == "." || part == "..")
        || [MARKER, LOCK, OWNER].contains(&rel);
    if bad {
        return Err(anyhow!(
            "the site would write the path {rel:?}, which is not a plain path inside the output folder"
        ));
    }
    Ok(())
}

fn home() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    fsio::resolve(Path::new(&home)).ok()
}

/// Write one file unless it already holds `data`: whether it was written,
/// and what to remember of a known file.
fn write_one(path: &Path, data: &OutData, stamps: &Stamps) -> Result<(bool, Option<Remembered>)> {
    Ok(match data {
        OutData::Known { bytes, digest, .. } => {
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
        OutData::Kept(_) => bail!("{} is kept from the last build, not written", path.display()),
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
/// the new file, never a part; the rename replaces the name, never what a
/// link there would lead to. Not synced to disk: the site is rebuilt, not
/// recovered. The folder exists ([`OutputDir::plan`] made it).
fn replace(path: &Path, contents: &mut impl Read) -> Result<()> {
    replace_with(path, |tmp| std::io::copy(contents, tmp).map(drop))
}

/// [`replace`], the contents written by `write` (streamed, never held whole).
fn replace_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let dir = path.parent().expect("output files have a parent");
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    // A web server running as another user must read the site: the usual
    // mode of a new file (0666 less the umask), not tempfile's private 0600.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp =
        builder.tempfile_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    let mut out = std::io::BufWriter::new(&mut tmp);
    write(&mut out).and_then(|()| out.flush()).with_context(|| format!("writing {}", path.display()))?;
    drop(out);
    tmp.persist(path).map_err(|e| e.error).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests;
