//! How figures and texts are shown, for every page: the marks for a
//! missing figure or name, rates, numbers, seconds and texts cut to a
//! length. A leaf: it uses no other part of the site.

use serde::Serialize;

use crate::jsnum;

/// Shown where a figure is missing.
pub const MISSING: &str = "—";
/// Shown where a name is missing.
pub const UNKNOWN: &str = "unknown";
/// `74.1%`, or `—` when absent.
pub fn rate(r: Option<f64>) -> String {
    r.filter(|r| r.is_finite()).map_or_else(|| MISSING.into(), |r| format!("{}%", jsnum::to_fixed(r, 1)))
}

/// A figure with `places` decimals, or `—` when absent.
pub fn number(x: Option<f64>, places: usize) -> String {
    x.filter(|x| x.is_finite()).map_or_else(|| MISSING.into(), |x| jsnum::to_fixed(x, places))
}

/// A count, or `—` when absent.
pub fn count(x: Option<u32>) -> String {
    x.map_or_else(|| MISSING.into(), |x| x.to_string())
}

/// `12.3 s` from milliseconds.
pub fn seconds(ms: f64) -> String {
    format!("{} s", jsnum::to_fixed(ms / 1000.0, 1))
}

/// `s` cut to `max` characters, the last one `…` when cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// A text as a page shows it: whole when short, else its start and how
/// much was left out.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Shown {
    pub text: String,
    /// Characters left out, when cut.
    pub omitted: usize,
}

impl Shown {
    pub fn new(text: &str, max: usize) -> Shown {
        match text.char_indices().nth(max) {
            Some((cut, _)) => Shown { text: text[..cut].to_string(), omitted: text[cut..].chars().count() },
            None => Shown { text: text.to_string(), omitted: 0 },
        }
    }
}
