//! Settings read from the environment: a variable's value, with a blank
//! value read as unset. Parsing and checking each value is the business of
//! whoever owns the setting (see `limits` for the numeric ones).

/// An environment variable, `None` when unset or blank.
pub fn nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// The folder of vaultbench's caches (highlighted code blocks, the history
/// of the baselines): `VAULTBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/vaultbench`,
/// else `~/.cache/vaultbench`; `None` when `VAULTBENCH_CACHE_DIR` is set
/// and empty (caching off) or no home is known.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    match std::env::var_os("VAULTBENCH_CACHE_DIR") {
        Some(d) if d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => Some(
            std::env::var_os("XDG_CACHE_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?
                .join("vaultbench"),
        ),
    }
}
