//! The history of the blessed baselines: every committed version of every
//! baseline file in the baselines folder, read from git, grouped by model.
//! A bless overwrites `<provider>-<model>.json`; its commits keep what each
//! blessing measured. `vaultbench history` and the site's model pages and
//! "What changed" page show it (`trend` turns it into figures, steps and
//! task strips; `text` prints it).
//!
//! A version is read as the site reads a baseline (`report::parse_checked`:
//! the result reader, its figures checked against its runs); one that does
//! not read is left out with a note. A baseline renamed is followed: by
//! git's rename detection, and by the provider and model its versions
//! record. The working tree's file, when it differs from the last commit
//! (blessed, not committed yet), is the latest blessing.
//!
//! No repository or no git gives no history, a shallow clone or a history
//! past the bounds (`git::Bounds`) what there is: each with a note, never
//! an error. It reads
//! only; it never changes the repository.

mod cache;
pub mod git;
pub mod text;
pub mod trend;
pub mod version;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use crate::format::result::ResultFile;

pub use cache::in_memory_only as keep_cache_in_memory;
pub use git::Bounds;
pub use trend::{History, ModelHistory};
pub use version::Version;

/// One version of a baseline file: a blessing.
#[derive(Debug, Clone, Serialize)]
pub struct Blessing {
    /// The commit that wrote it; `None` for the working tree's file, blessed
    /// and not committed yet.
    pub commit: Option<String>,
    /// The commit's date (committer, ISO 8601).
    pub date: Option<String>,
    /// Its file name in the baselines folder then.
    pub file: String,
    /// The evidence archive kept beside it then, relative to the baselines
    /// folder (`evidence/<stem>/<run>.tar.gz`): `git show COMMIT:PATH` gives it.
    pub evidence: Option<String>,
    pub run_id: String,
    /// The harness commit the result records.
    pub git_sha: String,
    /// Its git blob id (computed, for the working tree's file).
    #[serde(skip)]
    pub blob: String,
    /// Read at the oldest commit of a shallow clone, which shows every file
    /// as written there: the blessing was made at that commit or before.
    pub at_or_before: bool,
    #[serde(skip)]
    pub version: Arc<Version>,
}

impl Blessing {
    /// The commit's first 7 characters (`≤ abc1234` at a shallow clone's
    /// boundary), or `not committed`.
    pub fn short_commit(&self) -> String {
        match &self.commit {
            Some(sha) => format!("{}{}", self.before_mark(), sha.chars().take(7).collect::<String>()),
            None => "not committed".into(),
        }
    }

    /// `YYYY-MM-DD` of the commit (`≤ ...` at a shallow clone's boundary),
    /// or of the run for an uncommitted file.
    pub fn day(&self) -> String {
        let date = self.date.as_deref().unwrap_or(&self.run_id);
        format!("{}{}", self.before_mark(), date.chars().take(10).collect::<String>())
    }

    fn before_mark(&self) -> &'static str {
        if self.at_or_before { "≤ " } else { "" }
    }
}

/// Every blessing of one (provider, model), oldest first.
#[derive(Debug, Clone)]
pub struct Versions {
    pub provider: String,
    pub model: String,
    /// Its baseline file in the folder now; `None` when it is no longer a baseline.
    pub file: Option<String>,
    /// Every name its file had, oldest first.
    pub files: Vec<String>,
    pub blessings: Vec<Blessing>,
}

/// What was read: the models' versions, and notes on what could not be.
#[derive(Debug, Clone, Default)]
pub struct Read {
    pub models: Vec<Versions>,
    pub notes: Vec<String>,
    /// The results parsed by this read, by blob id (the others came from
    /// the cache), for judging the steps between them.
    pub parsed: HashMap<String, Arc<ResultFile>>,
    /// Where more versions can be read from: the folder and the bounds.
    pub source: Option<(PathBuf, Bounds)>,
}

impl Read {
    /// Read and parse the versions `ids` into `parsed` (a step the cache
    /// does not have needs them); what cannot be is a note.
    pub fn fetch(&mut self, ids: Vec<String>) {
        let Some((dir, bounds)) = &self.source else { return };
        if ids.is_empty() {
            return;
        }
        for (id, outcome) in read_blobs(dir, ids, bounds, &mut self.notes) {
            if let Ok((result, _)) = outcome {
                self.parsed.insert(id, result);
            }
        }
    }
}

/// The history of the baselines in `dir`: read from git, then each model's
/// trend (the steps judged by `compare`'s gate at the default level).
pub fn load(dir: &Path) -> History {
    trend::analyse(read(dir, &Bounds::default()))
}

/// A file name the history follows: a `.json` directly in the folder, not hidden.
fn is_baseline_name(name: &str) -> bool {
    name.ends_with(".json") && !name.contains('/') && !name.starts_with('.') && name.len() > ".json".len()
}

/// One version before its blob is read.
struct Pending {
    lineage: usize,
    /// Index of its commit in the log (oldest first); `usize::MAX` for the working tree.
    order: usize,
    blob: String,
    file: String,
    /// The evidence archives under `evidence/<stem>/` at that commit.
    archives: Vec<String>,
}

/// A file followed through its renames.
struct Lineage {
    /// Its working tree file, once known to be current.
    current: Option<String>,
    /// Its path at the last commit read (`None` once deleted).
    path: Option<String>,
    last_blob: Option<String>,
}

/// Read every version of every baseline of `dir`, within `bounds`.
pub fn read(dir: &Path, bounds: &Bounds) -> Read {
    let mut notes = Vec::new();
    let shallow;
    let commits = match git::repository(dir, bounds) {
        Ok(repo) => {
            shallow = repo.shallow;
            let log = git::log(dir, bounds).unwrap_or_else(|e| {
                notes.push(format!("the history could not be read ({e}); only the current baselines are shown"));
                git::Log::default()
            });
            if repo.shallow {
                let from = log.commits.first().map(|c| format!(" (from {})", &c.date[..c.date.len().min(10)]));
                notes.push(format!(
                    "a shallow clone: the history holds only the commits fetched{}, and a baseline last changed \
                     before them is shown at the oldest commit fetched (marked at or before); git fetch --unshallow \
                     fetches the rest",
                    from.unwrap_or_default()
                ));
            }
            if log.cut {
                notes.push(format!(
                    "the history is longer than the {} MiB read of it; the oldest commits are left out",
                    bounds.max_log_bytes >> 20
                ));
            }
            if log.unreadable > 0 {
                notes.push(format!("{} records of git's output did not parse and were passed over", log.unreadable));
            }
            log.commits
        }
        Err(git::NoRepository(why)) => {
            notes.push(format!("{why}: no history of the baselines"));
            return Read { notes, ..Read::default() };
        }
    };
    let (mut lineages, mut pending) = replay(&commits, &mut notes);
    if pending.len() > bounds.max_versions {
        let dropped = pending.len() - bounds.max_versions;
        pending.drain(..dropped);
        notes.push(format!(
            "{dropped} older versions are left out: the history reads the newest {} at most",
            bounds.max_versions
        ));
    }
    // Each version from the cache, or read from git and parsed.
    let ids: BTreeSet<String> = pending.iter().map(|p| p.blob.clone()).collect();
    let mut versions: Versioned = HashMap::new();
    let mut unknown = Vec::new();
    for id in ids {
        match cache::version(&id) {
            Some(v) => {
                versions.insert(id, Ok(v));
            }
            None => unknown.push(id),
        }
    }
    let mut parsed = HashMap::new();
    for (id, outcome) in read_blobs(dir, unknown, bounds, &mut notes) {
        versions.insert(
            id.clone(),
            outcome.map(|(result, version)| {
                parsed.insert(id, result);
                version
            }),
        );
    }
    working_tree(dir, bounds, &mut lineages, &mut pending, &mut versions, &mut parsed, &mut notes);
    let models = group(&commits, shallow, lineages, pending, &versions, &mut notes);
    Read { models, notes, parsed, source: Some((dir.to_path_buf(), bounds.clone())) }
}

/// Each version by blob id, or why it could not be read.
type Versioned = HashMap<String, Result<Arc<Version>, String>>;

/// Replay the commits, oldest first: which file each change continues
/// (renames followed), and every version written.
fn replay(commits: &[git::Commit], notes: &mut Vec<String>) -> (Vec<Lineage>, Vec<Pending>) {
    let mut lineages: Vec<Lineage> = Vec::new();
    let mut by_path: HashMap<String, usize> = HashMap::new();
    let mut archives: HashMap<String, BTreeSet<String>> = HashMap::new();
    let mut pending = Vec::new();
    let mut not_files = BTreeSet::new();
    for (order, commit) in commits.iter().enumerate() {
        // The evidence first: a bless commits the baseline and its archive together.
        for change in &commit.changes {
            let archive = |path: &str| {
                let (stem, name) = path.strip_prefix("evidence/")?.split_once('/')?;
                Some((stem.to_string(), name.to_string()))
            };
            if let Some((stem, name)) = change.from.as_deref().filter(|_| change.status == 'R').and_then(archive) {
                archives.entry(stem).or_default().remove(&name);
            }
            if let Some((stem, name)) = archive(&change.path) {
                let set = archives.entry(stem).or_default();
                if change.status == 'D' {
                    set.remove(&name);
                } else {
                    set.insert(name);
                }
            }
        }
        for change in &commit.changes {
            let from = change.from.as_deref().filter(|f| is_baseline_name(f));
            // Renamed away from a baseline name: that file's line continues
            // only when the new name is a baseline's too.
            let continued = match (change.status, from) {
                ('R', Some(from)) => by_path.remove(from),
                _ => None,
            };
            if !is_baseline_name(&change.path) {
                if let Some(l) = continued {
                    lineages[l].path = None;
                }
                continue;
            }
            if change.status == 'D' {
                if let Some(l) = by_path.remove(&change.path) {
                    lineages[l].path = None;
                }
                continue;
            }
            if !change.regular {
                not_files.insert(change.path.clone());
                continue;
            }
            let lineage = continued.or_else(|| by_path.get(&change.path).copied()).unwrap_or_else(|| {
                lineages.push(Lineage { current: None, path: None, last_blob: None });
                lineages.len() - 1
            });
            by_path.insert(change.path.clone(), lineage);
            let l = &mut lineages[lineage];
            l.path = Some(change.path.clone());
            if l.last_blob.as_deref() == Some(change.blob.as_str()) {
                continue;
            }
            l.last_blob = Some(change.blob.clone());
            let stem = change.path.trim_end_matches(".json");
            pending.push(Pending {
                lineage,
                order,
                blob: change.blob.clone(),
                file: change.path.clone(),
                archives: archives.get(stem).map(|s| s.iter().cloned().collect()).unwrap_or_default(),
            });
        }
    }
    if !not_files.is_empty() {
        notes.push(format!(
            "{} baseline names were committed as links or other non-files and are not followed: {}",
            not_files.len(),
            crate::report::first_few(&not_files.into_iter().collect::<Vec<_>>())
        ));
    }
    (lineages, pending)
}

/// A version read: its result (for the steps) and what the history keeps of it.
type Parsed = (Arc<ResultFile>, Arc<Version>);

/// Read and parse the blobs `ids` on all cores while git reads on; each
/// version made is put in the cache.
fn read_blobs(
    dir: &Path,
    ids: Vec<String>,
    bounds: &Bounds,
    notes: &mut Vec<String>,
) -> Vec<(String, Result<Parsed, String>)> {
    if ids.is_empty() {
        return Vec::new();
    }
    let (blobs, reader) = git::blobs(dir, ids, bounds);
    let parsed = blobs
        .into_iter()
        .par_bridge()
        .map(|(id, bytes)| {
            let outcome = bytes.and_then(|b| parse(&b)).map(|result| {
                let version = Arc::new(Version::of(&result));
                cache::put_version(&id, &version);
                (result, version)
            });
            (id, outcome)
        })
        .collect();
    match reader.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => notes.push(format!("the versions could not all be read ({e}); those not read are left out")),
        Err(_) => notes.push("the versions could not all be read; those not read are left out".into()),
    }
    parsed
}

/// A version's bytes as a result, read as every baseline is
/// (`report::parse_checked`), without its runs' evidence.
fn parse(bytes: &[u8]) -> Result<Arc<ResultFile>, String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("not UTF-8 text (invalid byte at offset {})", e.valid_up_to()))?;
    let mut result = crate::report::parse_checked(text)?;
    lighten(&mut result);
    Ok(Arc::new(result))
}

/// Drop what the history never shows (each run's response, check details,
/// tools and transcript), so that thousands of versions fit in memory: the
/// counts, metrics, hashes and figures stay.
fn lighten(result: &mut ResultFile) {
    for run in result.tasks.iter_mut().flat_map(|t| t.runs.iter_mut()) {
        run.response_text = String::new();
        run.transcript_path = String::new();
        run.metrics.tool_list = Vec::new();
        run.solve_details.matcher_details = Vec::new();
        run.solve_details.vault_assertion_details = Vec::new();
    }
}

/// The git blob id of `bytes` (SHA-1, as most repositories name objects).
fn blob_id(bytes: &[u8]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(format!("blob {}\0", bytes.len()).as_bytes());
    ctx.update(bytes);
    ctx.finish().as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The working tree's baselines: each marks its file's line as current, and
/// one that differs from its last commit is a version of its own.
fn working_tree(
    dir: &Path,
    bounds: &Bounds,
    lineages: &mut Vec<Lineage>,
    pending: &mut Vec<Pending>,
    versions: &mut Versioned,
    parsed: &mut HashMap<String, Arc<ResultFile>>,
    notes: &mut Vec<String>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| is_baseline_name(n))
        .collect();
    names.sort();
    let mut unreadable = Vec::new();
    for name in names {
        let Ok(bytes) = crate::fsio::read_capped_plain(&dir.join(&name), bounds.max_blob_bytes) else {
            unreadable.push(name);
            continue;
        };
        let known = lineages.iter().position(|l| l.path.as_deref() == Some(name.as_str()));
        let id = blob_id(&bytes);
        if let Some(l) = known {
            lineages[l].current = Some(name.clone());
            if lineages[l].last_blob.as_deref() == Some(id.as_str()) {
                continue;
            }
        }
        // Parsed whatever the cache has: git cannot give it back for a step.
        let Ok(result) = parse(&bytes) else {
            unreadable.push(name);
            continue;
        };
        let version = cache::version(&id).unwrap_or_else(|| {
            let v = Arc::new(Version::of(&result));
            cache::put_version(&id, &v);
            v
        });
        // The same result as committed (a checkout with other line endings): no new blessing.
        let last = known.and_then(|l| lineages[l].last_blob.as_ref()).and_then(|b| versions.get(b)?.as_ref().ok());
        if last.is_some_and(|last| **last == *version) {
            continue;
        }
        let lineage = known.unwrap_or_else(|| {
            lineages.push(Lineage { current: Some(name.clone()), path: Some(name.clone()), last_blob: None });
            lineages.len() - 1
        });
        let stem = name.trim_end_matches(".json");
        let archives = std::fs::read_dir(dir.join("evidence").join(stem))
            .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str().map(str::to_string)).collect())
            .unwrap_or_default();
        parsed.insert(id.clone(), result);
        versions.insert(id.clone(), Ok(version));
        pending.push(Pending { lineage, order: usize::MAX, blob: id, file: name, archives });
    }
    if !unreadable.is_empty() {
        notes.push(format!(
            "{} current baseline files do not read as results and are left out of the history: {}",
            unreadable.len(),
            crate::report::first_few(&unreadable)
        ));
    }
}

/// Group the versions by model: a file's line through its renames, joined
/// with every line whose versions record the same provider and model
/// (a rename git did not detect), never two lines that are both current.
fn group(
    commits: &[git::Commit],
    shallow: bool,
    lineages: Vec<Lineage>,
    pending: Vec<Pending>,
    versions: &Versioned,
    notes: &mut Vec<String>,
) -> Vec<Versions> {
    let mut parent: Vec<usize> = (0..lineages.len()).collect();
    let mut current: Vec<Option<String>> = lineages.iter().map(|l| l.current.clone()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut by_model: HashMap<(String, String), usize> = HashMap::new();
    let mut skipped = Vec::new();
    for p in &pending {
        let Some(Ok(version)) = versions.get(&p.blob) else { continue };
        let key = (version.provider.clone(), version.model.clone());
        let here = root(&mut parent, p.lineage);
        let Some(&other) = by_model.get(&key) else {
            by_model.insert(key, here);
            continue;
        };
        let there = root(&mut parent, other);
        if here != there && !(current[here].is_some() && current[there].is_some()) {
            parent[here] = there;
            current[there] = current[there].take().or(current[here].take());
        }
    }
    // Two current files of one model: kept apart, and said.
    let mut twice: HashMap<(&str, &str), BTreeSet<String>> = HashMap::new();
    for p in &pending {
        let Some(Ok(version)) = versions.get(&p.blob) else { continue };
        if let Some(file) = &current[root(&mut parent, p.lineage)] {
            twice.entry((&version.provider, &version.model)).or_default().insert(file.clone());
        }
    }
    let mut twice: Vec<String> = twice
        .into_iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|((provider, model), files)| {
            format!(
                "{provider} / {model} has {} current baseline files ({})",
                files.len(),
                files.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    twice.sort();
    for t in twice {
        notes.push(format!("{t}: their histories are shown apart; remove the file that is no longer its baseline"));
    }
    let mut groups: HashMap<usize, Vec<&Pending>> = HashMap::new();
    for p in &pending {
        let g = root(&mut parent, p.lineage);
        groups.entry(g).or_default().push(p);
    }
    let mut models: Vec<Versions> = groups
        .into_iter()
        .filter_map(|(g, mut members)| {
            members.sort_by_key(|p| p.order);
            let mut blessings: Vec<Blessing> = members
                .iter()
                .filter_map(|p| {
                    let commit = commits.get(p.order);
                    let version = match versions.get(&p.blob) {
                        Some(Ok(v)) => Arc::clone(v),
                        Some(Err(why)) => {
                            let at =
                                commit.map_or_else(|| "the working tree".into(), |c| format!("commit {}", &c.sha[..7]));
                            skipped.push(format!("{} at {at}: {why}", p.file));
                            return None;
                        }
                        None => return None,
                    };
                    let archive = crate::report::evidence::archive_path(Path::new(&p.file), &version.run_id);
                    let evidence = archive
                        .and_then(|a| Some(a.file_name()?.to_str()?.to_string()))
                        .filter(|name| p.archives.contains(name))
                        .map(|name| format!("evidence/{}/{name}", p.file.trim_end_matches(".json")));
                    Some(Blessing {
                        commit: commit.map(|c| c.sha.clone()),
                        date: commit.map(|c| c.date.clone()),
                        file: p.file.clone(),
                        evidence,
                        run_id: version.run_id.clone(),
                        git_sha: version.git_sha.clone(),
                        blob: p.blob.clone(),
                        at_or_before: shallow && p.order == 0,
                        version,
                    })
                })
                .collect();
            // A version committed again as it was (a bad one reverted, say)
            // is the same blessing, not a new one.
            blessings.dedup_by(|later, earlier| later.version == earlier.version);
            let last = blessings.last()?;
            let mut files: Vec<String> = Vec::new();
            for b in &blessings {
                if !files.contains(&b.file) {
                    files.push(b.file.clone());
                }
            }
            Some(Versions {
                provider: last.version.provider.clone(),
                model: last.version.model.clone(),
                file: current[g].clone(),
                files,
                blessings,
            })
        })
        .collect();
    models.sort_by(|a, b| (&a.provider, &a.model, &a.file).cmp(&(&b.provider, &b.model, &b.file)));
    if !skipped.is_empty() {
        skipped.sort();
        let (versions, verb) = if skipped.len() == 1 { ("version", "does") } else { ("versions", "do") };
        notes.push(format!(
            "{} {versions} {verb} not read as a result and {} left out: {}",
            skipped.len(),
            if skipped.len() == 1 { "is" } else { "are" },
            crate::report::first_few(&skipped)
        ));
    }
    models
}
