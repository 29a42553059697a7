//! The history's cache: what each version of a baseline gave (`Version`)
//! and what each step between two versions gave (`Judged`), by the git blob
//! ids of the versions. A blob id names its content, so an entry never goes
//! stale: a history read again reads from git only the versions it has not
//! seen, and judges only the steps it has not judged.
//!
//! Kept in memory for the process (a `--watch` rebuild after a bless reads
//! only what is new) and in the cache folder (`env::cache_dir()`, the file
//! `history.json`) between runs; an empty `VAULTBENCH_CACHE_DIR` keeps it in
//! memory only. The file's key names this program's version and the
//! sources of what is cached (the history's analysis, `compare`, the
//! statistics, the result reader), so that a change to any starts afresh.
//! Each save keeps what the last read used. A cache that cannot be read or
//! written only costs time; a file that does not parse is ignored.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde::{Deserialize, Serialize};

use super::trend::{FigureMove, Judged, Movement, StepVerdict, TaskTest};
use super::version::{Figures, TaskCell, Version};
use crate::stats::Interval;

#[derive(Default)]
struct Cache {
    versions: HashMap<String, Arc<Version>>,
    steps: HashMap<String, Arc<Judged>>,
    used_versions: HashSet<String>,
    used_steps: HashSet<String>,
    /// Something was added since the file was read or written.
    changed: bool,
}

fn cache() -> MutexGuard<'static, Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(load().unwrap_or_default())).lock().unwrap_or_else(|e| e.into_inner())
}

/// Set by [`in_memory_only`].
static IN_MEMORY_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(cfg!(test));

/// Keep the cache in memory only, for this process: nothing is read from
/// or written to the cache folder (tests, and the unit tests always).
pub fn in_memory_only() {
    IN_MEMORY_ONLY.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn file() -> Option<PathBuf> {
    if IN_MEMORY_ONLY.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    Some(crate::env::cache_dir()?.join("history.json"))
}

/// What a cached entry depends on besides the blobs it names.
fn key() -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for source in [
        include_str!("trend.rs"),
        include_str!("version.rs"),
        include_str!("cache.rs"),
        include_str!("../report/compare.rs"),
        include_str!("../report/aggregate.rs"),
        include_str!("../report/drift.rs"),
        include_str!("../format/result.rs"),
        include_str!("../stats.rs"),
        include_str!("../../crates/stats/src/bootstrap.rs"),
        include_str!("../../crates/stats/src/estimate.rs"),
        include_str!("../../crates/stats/src/exact.rs"),
        include_str!("../../crates/stats/src/gate.rs"),
        include_str!("../../crates/stats/src/multiple.rs"),
        include_str!("../../crates/stats/src/paired.rs"),
        include_str!("../../crates/stats/src/stratified.rs"),
        include_str!("../../crates/stats/src/summary.rs"),
    ] {
        source.hash(&mut hasher);
    }
    format!("vaultbench {} history {:016x}", env!("CARGO_PKG_VERSION"), hasher.finish())
}

/// The version of blob `id`, if known.
pub fn version(id: &str) -> Option<Arc<Version>> {
    let mut cache = cache();
    let found = cache.versions.get(id).cloned();
    if found.is_some() {
        cache.used_versions.insert(id.to_string());
    }
    found
}

pub fn put_version(id: &str, version: &Arc<Version>) {
    let mut cache = cache();
    cache.versions.insert(id.to_string(), Arc::clone(version));
    cache.used_versions.insert(id.to_string());
    cache.changed = true;
}

/// The key of the step from blob `before` to blob `after` judged at `alpha`.
pub fn step_key(before: &str, after: &str, alpha: f64) -> String {
    format!("{before} {after} {alpha}")
}

pub fn step(key: &str) -> Option<Arc<Judged>> {
    let mut cache = cache();
    let found = cache.steps.get(key).cloned();
    if found.is_some() {
        cache.used_steps.insert(key.to_string());
    }
    found
}

pub fn put_step(key: &str, judged: &Arc<Judged>) {
    let mut cache = cache();
    cache.steps.insert(key.to_string(), Arc::clone(judged));
    cache.used_steps.insert(key.to_string());
    cache.changed = true;
}

/// After a read: keep what it used, and save it when anything is new.
pub fn finish() {
    let mut cache = cache();
    let Cache { versions, steps, used_versions, used_steps, .. } = &mut *cache;
    versions.retain(|id, _| used_versions.contains(id));
    steps.retain(|key, _| used_steps.contains(key));
    used_versions.clear();
    used_steps.clear();
    if !cache.changed {
        return;
    }
    let Some(path) = file() else { return };
    let stored = Stored {
        key: key(),
        versions: cache.versions.iter().map(|(id, v)| (id.clone(), StoredVersion::from(&**v))).collect(),
        steps: cache.steps.iter().map(|(k, j)| (k.clone(), StoredJudged::from(&**j))).collect(),
    };
    if let Ok(json) = serde_json::to_vec(&stored)
        && crate::fsio::write_atomic(&path, &json).is_ok()
    {
        cache.changed = false;
    }
}

/// The cache as the file holds it, when it holds one of this program.
fn load() -> Option<Cache> {
    let bytes = crate::fsio::read_capped(&file()?, 1 << 30).ok()?;
    let stored: Stored = serde_json::from_slice(&bytes).ok()?;
    if stored.key != key() {
        return None;
    }
    Some(Cache {
        versions: stored.versions.into_iter().map(|(id, v)| (id, Arc::new(Version::from(v)))).collect(),
        steps: stored.steps.into_iter().filter_map(|(k, j)| Some((k, Arc::new(Judged::try_from(j).ok()?)))).collect(),
        ..Cache::default()
    })
}

/// The file: every figure as the exact number computed (not the one
/// decimal the history prints), so that a cached history is the computed one.
#[derive(Serialize, Deserialize)]
struct Stored {
    key: String,
    versions: Vec<(String, StoredVersion)>,
    steps: Vec<(String, StoredJudged)>,
}

type StoredInterval = [f64; 3];

fn store(i: &Interval) -> StoredInterval {
    [i.estimate, i.low, i.high]
}

fn unstore(i: StoredInterval) -> Interval {
    Interval { estimate: i[0], low: i[1], high: i[2] }
}

#[derive(Serialize, Deserialize)]
struct StoredVersion {
    provider: String,
    model: String,
    run_id: String,
    git_sha: String,
    k: u32,
    tasks: usize,
    figures: Option<[StoredInterval; 4]>,
    /// (id, content hash, solved, runs).
    cells: Vec<(String, Option<String>, u32, u32)>,
}

impl From<&Version> for StoredVersion {
    fn from(v: &Version) -> StoredVersion {
        StoredVersion {
            provider: v.provider.clone(),
            model: v.model.clone(),
            run_id: v.run_id.clone(),
            git_sha: v.git_sha.clone(),
            k: v.k,
            tasks: v.tasks,
            figures: v
                .figures
                .map(|f| [store(&f.pass_k), store(&f.solve_k), store(&f.mean_pass_rate), store(&f.mean_solve_rate)]),
            cells: v.cells.iter().map(|c| (c.id.clone(), c.hash.clone(), c.solved, c.runs)).collect(),
        }
    }
}

impl From<StoredVersion> for Version {
    fn from(v: StoredVersion) -> Version {
        Version {
            provider: v.provider,
            model: v.model,
            run_id: v.run_id,
            git_sha: v.git_sha,
            k: v.k,
            tasks: v.tasks,
            figures: v.figures.map(|[pass_k, solve_k, mean_pass_rate, mean_solve_rate]| Figures {
                pass_k: unstore(pass_k),
                solve_k: unstore(solve_k),
                mean_pass_rate: unstore(mean_pass_rate),
                mean_solve_rate: unstore(mean_solve_rate),
            }),
            cells: v.cells.into_iter().map(|(id, hash, solved, runs)| TaskCell { id, hash, solved, runs }).collect(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct StoredJudged {
    verdict: StepVerdict,
    k: Option<u32>,
    common_tasks: usize,
    /// (key, label, before, after, change, movement).
    figures: Vec<(String, String, f64, f64, StoredInterval, Movement)>,
    significant_tasks: Vec<String>,
    changed: Vec<String>,
    added: Vec<String>,
    removed: Vec<String>,
    unknown: Vec<String>,
    /// (id, rise, p, adjusted p, significant).
    tests: Vec<(String, bool, f64, Option<f64>, bool)>,
}

impl From<&Judged> for StoredJudged {
    fn from(j: &Judged) -> StoredJudged {
        StoredJudged {
            verdict: j.verdict,
            k: j.k,
            common_tasks: j.common_tasks,
            figures: j
                .figures
                .iter()
                .map(|f| (f.key.to_string(), f.label.clone(), f.before, f.after, store(&f.change), f.movement))
                .collect(),
            significant_tasks: j.significant_tasks.clone(),
            changed: j.changed.clone(),
            added: j.added.clone(),
            removed: j.removed.clone(),
            unknown: j.unknown.clone(),
            tests: j.tests.iter().map(|t| (t.id.clone(), t.rise, t.p, t.p_adjusted, t.significant)).collect(),
        }
    }
}

impl TryFrom<StoredJudged> for Judged {
    /// A figure this program does not know: the entry is not used.
    type Error = ();

    fn try_from(j: StoredJudged) -> Result<Judged, ()> {
        let figures = j
            .figures
            .into_iter()
            .map(|(key, label, before, after, change, movement)| {
                let key = super::trend::FIGURE_KEYS.iter().copied().find(|k| *k == key).ok_or(())?;
                Ok(FigureMove { key, label, before, after, change: unstore(change), movement })
            })
            .collect::<Result<Vec<_>, ()>>()?;
        Ok(Judged {
            verdict: j.verdict,
            k: j.k,
            common_tasks: j.common_tasks,
            figures,
            significant_tasks: j.significant_tasks,
            changed: j.changed,
            added: j.added,
            removed: j.removed,
            unknown: j.unknown,
            tests: j
                .tests
                .into_iter()
                .map(|(id, rise, p, p_adjusted, significant)| TaskTest { id, rise, p, p_adjusted, significant })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_stored_reads_back_exactly() {
        let i = Interval { estimate: 92.307_692_307_692_3, low: 76.923_076_923_076_9, high: 100.0 };
        let version = Version {
            provider: "p".into(),
            model: "m".into(),
            run_id: "2026-01-01T00:00:00.000Z".into(),
            git_sha: "abc".into(),
            k: 5,
            tasks: 13,
            figures: Some(Figures { pass_k: i, solve_k: i, mean_pass_rate: i, mean_solve_rate: i }),
            cells: vec![TaskCell { id: "a".into(), hash: Some("sha256:x".into()), solved: 4, runs: 5 }],
        };
        let json = serde_json::to_string(&StoredVersion::from(&version)).unwrap();
        let back: StoredVersion = serde_json::from_str(&json).unwrap();
        assert_eq!(Version::from(back), version);
        let judged = Judged {
            verdict: StepVerdict::SignificantChange,
            k: Some(5),
            common_tasks: 12,
            figures: vec![FigureMove {
                key: "solve_k_rate",
                label: "solve^5".into(),
                before: 91.666_666_666_666_7,
                after: 83.333_333_333_333_3,
                change: i,
                movement: Movement::WithinNoise,
            }],
            significant_tasks: vec!["drift".into()],
            changed: vec!["edited".into()],
            added: vec![],
            removed: vec![],
            unknown: vec![],
            tests: vec![TaskTest {
                id: "drift".into(),
                rise: false,
                p: 5.0 / 210.0,
                // The audit's p-value that came back one ULP off before
                // floats were read to round trip.
                p_adjusted: Some(0.214_285_714_285_714_02),
                significant: true,
            }],
        };
        let json = serde_json::to_string(&StoredJudged::from(&judged)).unwrap();
        let back: StoredJudged = serde_json::from_str(&json).unwrap();
        assert_eq!(Judged::try_from(back).unwrap(), judged);
        // Every number comes back as the same number, not a neighbour.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = (x >> 11) as f64 / (1u64 << 53) as f64;
            let back: f64 = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
            assert_eq!(back.to_bits(), f.to_bits(), "{f}");
        }
        // A figure this program does not know makes the entry unusable, not wrong.
        let odd = json.replace("solve_k_rate", "another_rate");
        assert!(Judged::try_from(serde_json::from_str::<StoredJudged>(&odd).unwrap()).is_err());
    }
}
