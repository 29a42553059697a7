//! Settings read from the environment: a variable's value, with a blank
//! value read as unset. Parsing and checking each value is the business of
//! whoever owns the setting (see `limits` for the numeric ones).

/// An environment variable, `None` when unset or blank.
pub fn nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}
