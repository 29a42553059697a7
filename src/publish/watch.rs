//! `publish --watch`: build, serve the output on 127.0.0.1 (`serve`), and
//! rebuild on every change. A change is only classified (`classify` gives a
//! `ChangeKind`, as Zola does); the rebuild calls the same `Site` stages a
//! one-off build does. A failed build keeps the server running and shows the
//! error in place of the pages until the next build succeeds.
//!
//! It does not print: it reports `Notice`s to the caller.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use notify::RecursiveMode;

use crate::publish::load::content;
use crate::publish::serve::{self, ServerState};
use crate::publish::site::{ChangeKind, Site};
use crate::publish::write::{OutputDir, Ownership};
use crate::publish::{BuildReport, PublishOptions, Warning};

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// 0 picks a free port.
    pub port: u16,
    /// Changes closer together than this are one rebuild.
    pub debounce: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions { port: 0, debounce: Duration::from_millis(100) }
    }
}

/// What the watcher reports as it goes.
#[derive(Debug)]
pub enum Notice {
    Watching(Vec<PathBuf>),
    /// A watched folder that does not exist; changes there are not seen.
    NotWatching(PathBuf),
    Serving(String),
    Built(BuildReport),
    /// A rebuild after changes of these kinds.
    Rebuilt(Vec<ChangeKind>, BuildReport),
    Warning(Warning),
    /// The build failed; the error page is served until a build succeeds.
    Failed(String),
    WatchError(String),
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Watching(paths) => {
                let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                write!(f, "Watching {}", list.join(", "))
            }
            Notice::NotWatching(p) => write!(f, "Not watching {}: it does not exist", p.display()),
            Notice::Serving(url) => write!(f, "Serving the site at {url} (Ctrl-C to stop)"),
            Notice::Built(report) => write!(f, "{report}"),
            Notice::Rebuilt(kinds, report) => {
                let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                write!(f, "Changed {}: {report}", names.join(", "))
            }
            Notice::Warning(w) => write!(f, "warning: {w}"),
            Notice::Failed(e) => {
                write!(f, "error: the site did not build (the error page is served until fixed):\n{e}")
            }
            Notice::WatchError(e) => write!(f, "error watching files: {e}"),
        }
    }
}

/// How the watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Ctrl-C (SIGINT).
    Interrupted,
    /// SIGTERM.
    Terminated,
}

/// The watched locations, made absolute, for classifying changed paths.
#[derive(Debug, Clone)]
pub struct Roots {
    pub docs: PathBuf,
    pub templates: PathBuf,
    pub baselines: PathBuf,
    pub tasks: PathBuf,
    pub config: PathBuf,
    pub out: PathBuf,
}

impl Roots {
    pub fn new(options: &PublishOptions) -> Roots {
        let abs = |p: &Path| {
            let a = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            a.canonicalize().unwrap_or(a)
        };
        Roots {
            docs: abs(&options.docs),
            templates: abs(&options.templates),
            baselines: abs(&options.baselines),
            tasks: abs(&crate::suite::Suite::tasks_dir(&options.suite)),
            config: abs(&options.config),
            out: abs(&options.out),
        }
    }
}

/// What a changed path means; `None` for paths the site does not read
/// (the output folder, hidden and editor temporary files).
pub fn classify(path: &Path, roots: &Roots) -> Option<ChangeKind> {
    if path == roots.config {
        return Some(ChangeKind::Config);
    }
    if path.starts_with(&roots.out) {
        return None;
    }
    let hidden_under = |root: &Path| {
        path.strip_prefix(root).map(|rel| rel.components().any(|c| content::is_hidden(c.as_os_str()))).unwrap_or(true)
    };
    if path.starts_with(&roots.templates) && !hidden_under(&roots.templates) {
        return Some(if path.starts_with(roots.templates.join("static")) {
            ChangeKind::Static
        } else {
            ChangeKind::Templates
        });
    }
    if path.starts_with(&roots.baselines) && !hidden_under(&roots.baselines) {
        return Some(ChangeKind::Baselines);
    }
    if path.starts_with(&roots.tasks) && !hidden_under(&roots.tasks) {
        return Some(ChangeKind::Tasks);
    }
    if path.starts_with(&roots.docs) && !hidden_under(&roots.docs) {
        return Some(if path.extension().is_some_and(|e| e == "md") {
            ChangeKind::Content
        } else {
            ChangeKind::Static
        });
    }
    None
}

/// What a path looked like: modification time, size, inode and whether it
/// is a folder, or `None` when it does not exist.
type Fingerprint = Option<(std::time::SystemTime, u64, u64, bool)>;

/// The last seen state of every watched path. The watcher also reports a
/// file being opened for reading (inotify `IN_OPEN`), which a build does to
/// every file it loads; only a path whose fingerprint changed is a change,
/// otherwise each build would trigger the next.
#[derive(Default)]
struct Fingerprints(std::collections::HashMap<PathBuf, Fingerprint>);

impl Fingerprints {
    fn of(path: &Path) -> Fingerprint {
        let meta = std::fs::symlink_metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some((meta.modified().ok()?, meta.len(), inode, meta.is_dir()))
    }

    /// Record every file and folder under the watched roots.
    fn record_all(&mut self, roots: &[&Path]) {
        for root in roots {
            for entry in walkdir::WalkDir::new(root).into_iter().filter_map(|e| e.ok()) {
                self.0.insert(entry.path().to_path_buf(), Self::of(entry.path()));
            }
        }
    }

    /// Whether `path` differs from when it was last seen (and remember it).
    /// A folder that still exists has not changed: what changed in it is
    /// reported with the paths of its files.
    fn changed(&mut self, path: &Path) -> bool {
        let now = Self::of(path);
        match self.0.insert(path.to_path_buf(), now) {
            Some(Some(before)) if before.3 && now.is_some_and(|n| n.3) => false,
            before => before != Some(now),
        }
    }
}

/// A watched input folder and the folder it was when last watched.
struct WatchedFolder {
    path: PathBuf,
    /// What to reload when it is replaced.
    kinds: &'static [ChangeKind],
    /// Its identity (device and inode) when last watched; `None` when it
    /// did not exist.
    identity: Option<(u64, u64)>,
}

impl WatchedFolder {
    fn new(path: &Path, kinds: &'static [ChangeKind]) -> WatchedFolder {
        WatchedFolder { path: path.to_path_buf(), kinds, identity: None }
    }

    fn identity(path: &Path) -> Option<(u64, u64)> {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_dir())?;
        #[cfg(unix)]
        return Some((std::os::unix::fs::MetadataExt::dev(&meta), std::os::unix::fs::MetadataExt::ino(&meta)));
        #[cfg(not(unix))]
        return Some((0, 0));
    }

    /// Whether the folder is not the one last watched: made, deleted, or
    /// another folder under its name.
    fn replaced(&self) -> bool {
        Self::identity(&self.path) != self.identity
    }

    /// Watch the folder as it is now (the old watch dropped); whether it exists.
    fn watch(&mut self, watcher: &mut dyn notify::Watcher) -> Result<bool> {
        let _ = watcher.unwatch(&self.path);
        self.identity = Self::identity(&self.path);
        if self.identity.is_none() {
            return Ok(false);
        }
        watcher
            .watch(&self.path, RecursiveMode::Recursive)
            .with_context(|| format!("watching {}", self.path.display()))?;
        Ok(true)
    }
}

enum LoopEvent {
    Changes(Vec<PathBuf>),
    WatchError(String),
    Signal(Stopped),
}

/// Build, serve and rebuild until Ctrl-C or SIGTERM.
pub fn run(options: PublishOptions, watch: WatchOptions, notify: &mut dyn FnMut(Notice)) -> Result<Stopped> {
    let out = options.output_dir()?;
    let owner = out.own()?;
    let roots = Roots::new(&options);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the preview server's runtime")?;

    let (tx, rx) = mpsc::channel::<LoopEvent>();

    // The first build; a failure is shown, not fatal.
    let base_path =
        crate::publish::load::config::load(&options.config).map(|c| c.base_path).unwrap_or_else(|_| "/".into());
    let state = ServerState::new(base_path.clone());
    let mut builder = Rebuilder { options: options.clone(), out, owner, site: None, stale: BTreeSet::new(), build: 0 };
    builder.rebuild(&[ChangeKind::Config], &state, notify, false);

    let server = serve::Server::start(&runtime, watch.port, builder.out.root().to_path_buf(), Arc::clone(&state))?;
    let addr = server.addr;
    let signal_tx = tx.clone();
    runtime.spawn(async move {
        let stopped = wait_for_signal().await;
        let _ = signal_tx.send(LoopEvent::Signal(stopped));
    });

    let event_tx = tx.clone();
    let mut debouncer = notify_debouncer_mini::new_debouncer(
        watch.debounce,
        move |result: notify_debouncer_mini::DebounceEventResult| {
            let event = match result {
                Ok(events) => LoopEvent::Changes(events.into_iter().map(|e| e.path).collect()),
                Err(e) => LoopEvent::WatchError(e.to_string()),
            };
            let _ = event_tx.send(event);
        },
    )
    .context("starting the file watcher")?;
    // Each folder is watched whole, and the folder holding it on its own:
    // a folder deleted and made again, or replaced by a rename (what `git
    // checkout` and some editors do), is a new folder the old watch does
    // not see; its parent's events tell, and the folder is watched again.
    let mut folders = [
        WatchedFolder::new(&roots.docs, &[ChangeKind::Content, ChangeKind::Static]),
        WatchedFolder::new(&roots.templates, &[ChangeKind::Templates, ChangeKind::Static]),
        WatchedFolder::new(&roots.baselines, &[ChangeKind::Baselines]),
        WatchedFolder::new(&roots.tasks, &[ChangeKind::Tasks]),
    ];
    let mut watching = Vec::new();
    for folder in &mut folders {
        match folder.watch(debouncer.watcher()) {
            Ok(true) => watching.push(folder.path.clone()),
            Ok(false) => notify(Notice::NotWatching(folder.path.clone())),
            Err(e) => return Err(e),
        }
    }
    let mut parents: BTreeSet<PathBuf> =
        folders.iter().filter_map(|f| f.path.parent().map(Path::to_path_buf)).collect();
    // The configuration file may come and go: watch the folder it is in.
    if let Some(parent) = roots.config.parent() {
        parents.insert(parent.to_path_buf());
        watching.push(roots.config.clone());
    }
    for parent in parents.iter().filter(|p| p.is_dir()) {
        debouncer.watcher().watch(parent, RecursiveMode::NonRecursive).ok();
    }
    let mut fingerprints = Fingerprints::default();
    fingerprints.record_all(&[&roots.docs, &roots.templates, &roots.baselines, &roots.tasks, &roots.config]);
    notify(Notice::Watching(watching));
    notify(Notice::Serving(format!("http://{addr}{base_path}")));

    let stopped = loop {
        match rx.recv() {
            Ok(LoopEvent::Changes(paths)) => {
                let mut kinds: BTreeSet<ChangeKind> =
                    paths.iter().filter_map(|p| classify(p, &roots).filter(|_| fingerprints.changed(p))).collect();
                for folder in &mut folders {
                    if folder.replaced() {
                        if let Err(e) = folder.watch(debouncer.watcher()) {
                            notify(Notice::WatchError(format!("{e:#}")));
                        }
                        fingerprints.record_all(&[&folder.path]);
                        kinds.extend(folder.kinds.iter().copied());
                    }
                }
                if !kinds.is_empty() {
                    builder.rebuild(&kinds.into_iter().collect::<Vec<_>>(), &state, notify, true);
                }
            }
            Ok(LoopEvent::WatchError(e)) => notify(Notice::WatchError(e)),
            Ok(LoopEvent::Signal(s)) => break s,
            Err(_) => break Stopped::Interrupted,
        }
    };
    drop(debouncer);
    server.stop(&runtime, &state);
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(stopped)
}

pub(crate) async fn wait_for_signal() -> Stopped {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return Stopped::Interrupted;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => Stopped::Interrupted,
            _ = term.recv() => Stopped::Terminated,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        Stopped::Interrupted
    }
}

/// The rebuild loop's state: the loaded site (none until a load succeeds)
/// and the kinds whose reload failed, which are retried on the next change.
struct Rebuilder {
    options: PublishOptions,
    out: OutputDir,
    /// This process's hold on the output folder, for as long as it serves it.
    owner: Ownership,
    site: Option<Site>,
    stale: BTreeSet<ChangeKind>,
    build: u64,
}

impl Rebuilder {
    fn rebuild(&mut self, kinds: &[ChangeKind], state: &ServerState, notify: &mut dyn FnMut(Notice), is_change: bool) {
        let start = Instant::now();
        self.build += 1;
        match self.try_rebuild(kinds) {
            Ok(report) => {
                *state.error.write().expect("error lock") = None;
                for w in &report.warnings {
                    notify(Notice::Warning(w.clone()));
                }
                let report = BuildReport { elapsed: start.elapsed(), ..report };
                notify(if is_change { Notice::Rebuilt(kinds.to_vec(), report) } else { Notice::Built(report) });
            }
            Err(e) => {
                let text = format!("{e:#}");
                *state.error.write().expect("error lock") = Some(text.clone());
                notify(Notice::Failed(text));
            }
        }
        state.reload(self.build);
    }

    fn try_rebuild(&mut self, kinds: &[ChangeKind]) -> Result<BuildReport> {
        let start = Instant::now();
        self.stale.extend(kinds.iter().copied());
        match &mut self.site {
            Some(site) if !self.stale.contains(&ChangeKind::Config) => {
                for &kind in &self.stale {
                    site.reload(kind)?;
                }
            }
            _ => {
                let mut site = Site::load(self.options.clone())?;
                site.keep_pages();
                self.site = Some(site);
            }
        }
        self.stale.clear();
        let site = self.site.as_mut().expect("loaded above");
        let (built, written) = site.build_into(&self.out, Some(&self.owner), false)?;
        Ok(built.report(&self.options, written, start.elapsed()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_a_file_is_not_a_change_but_writing_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.md");
        std::fs::write(&file, "one").unwrap();
        let mut prints = Fingerprints::default();
        prints.record_all(&[dir.path()]);
        std::fs::read(&file).unwrap();
        assert!(!prints.changed(&file));
        std::fs::write(&file, "two!").unwrap();
        assert!(prints.changed(&file));
        assert!(!prints.changed(&file));
        std::fs::remove_file(&file).unwrap();
        assert!(prints.changed(&file));
        let new = dir.path().join("b.md");
        std::fs::write(&new, "").unwrap();
        assert!(prints.changed(&new));
        // The folder's own time changed with its entries; that is not a change of its own.
        assert!(!prints.changed(dir.path()));
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert!(prints.changed(&sub));
    }

    fn roots() -> Roots {
        let r = Path::new("/repo");
        Roots {
            docs: r.join("docs"),
            templates: r.join("templates"),
            baselines: r.join("evals/baselines"),
            tasks: r.join("evals/tasks"),
            config: r.join("vaultbench.toml"),
            out: r.join("site"),
        }
    }

    #[test]
    fn paths_are_classified_by_where_they_are() {
        let r = roots();
        let kind = |p: &str| classify(Path::new(p), &r);
        assert_eq!(kind("/repo/docs/guide/a.md"), Some(ChangeKind::Content));
        assert_eq!(kind("/repo/docs/img/a.png"), Some(ChangeKind::Static));
        assert_eq!(kind("/repo/templates/base.html"), Some(ChangeKind::Templates));
        assert_eq!(kind("/repo/templates/static/style.css"), Some(ChangeKind::Static));
        assert_eq!(kind("/repo/evals/baselines/x.json"), Some(ChangeKind::Baselines));
        assert_eq!(kind("/repo/evals/tasks/t.json"), Some(ChangeKind::Tasks));
        assert_eq!(kind("/repo/vaultbench.toml"), Some(ChangeKind::Config));
        assert_eq!(kind("/repo/site/index.html"), None);
        assert_eq!(kind("/repo/docs/.a.md.swp"), None);
        assert_eq!(kind("/repo/evals/baselines/.x.json.1234.tmp"), None);
        assert_eq!(kind("/repo/README.md"), None);
    }
}
