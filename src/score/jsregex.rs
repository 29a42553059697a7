//! JavaScript regular expressions with JavaScript flags, as `new RegExp(p,
//! flags).test(text)` evaluates them. Task files are written for that engine
//! (lookahead, `s` and `m` flags, `\d` meaning ASCII digits), so we use the
//! ECMAScript-compatible `regress` engine rather than the `regex` crate.
//!
//! `regress` backtracks and has no step limit, so a pattern can run for ever
//! on a modest text: code that matches patterns from a model or a task goes
//! through [`super::sandbox`], which bounds the time. Compiling is cheap, but
//! the compiler recurses over the pattern, so patterns are capped at
//! [`MAX_PATTERN_LEN`] characters here.

use std::fmt;

pub use crate::limits::MAX_PATTERN_LEN;

/// A compiled pattern plus the flag behaviour `regress` leaves to the caller.
#[derive(Debug)]
pub struct JsRegex {
    regex: regress::Regex,
    /// `y`: a match must start where the search starts (index 0 for `test`).
    sticky: bool,
    /// `u`/`v`: code points; otherwise the text is UTF-16 code units as in JS.
    unicode: bool,
}

/// Why a pattern or its flags were rejected, in JavaScript's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexError(pub String);

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RegexError {}

impl JsRegex {
    /// Compile as `new RegExp(pattern, flags)` would, rejecting what it rejects.
    pub fn new(pattern: &str, flags: Option<&str>) -> Result<JsRegex, RegexError> {
        let flags = flags.unwrap_or("");
        check_flags(flags)?;
        let len = pattern.chars().count();
        if len > MAX_PATTERN_LEN {
            return Err(RegexError(format!(
                "regular expression {} is {len} characters long; the limit is {MAX_PATTERN_LEN}",
                shown(pattern, Some(flags))
            )));
        }
        let regex = regress::Regex::with_flags(pattern, regress::Flags::from(flags))
            .map_err(|e| RegexError(format!("invalid regular expression /{pattern}/{flags}: {e}")))?;
        Ok(JsRegex { regex, sticky: flags.contains('y'), unicode: flags.contains('u') || flags.contains('v') })
    }

    /// `RegExp.prototype.test` on a fresh regex (lastIndex 0). The `g` flag
    /// does not change the outcome of a single test from index 0.
    pub fn test(&self, text: &str) -> bool {
        let start = if self.unicode {
            self.regex.find(text).map(|m| m.start())
        } else {
            // Without `u`, JavaScript sees UTF-16 code units: `.` matches half
            // of a surrogate pair and `^.$` fails on an emoji.
            let units: Vec<u16> = text.encode_utf16().collect();
            self.regex.find_from_ucs2(&units, 0).next().map(|m| m.start())
        };
        match start {
            Some(0) => true,
            Some(_) => !self.sticky,
            None => false,
        }
    }
}

impl JsRegex {
    /// The 0-based numbers of the lines of `text` (split as `str::lines`
    /// does) that the pattern matches.
    pub fn matching_lines(&self, text: &str) -> Vec<usize> {
        text.lines().enumerate().filter(|(_, line)| self.test(line)).map(|(i, _)| i).collect()
    }
}

/// `/pattern/flags` for a message, cut to a readable length.
pub fn shown(pattern: &str, flags: Option<&str>) -> String {
    const SHOWN: usize = 120;
    let flags = flags.unwrap_or("");
    match pattern.char_indices().nth(SHOWN) {
        None => format!("/{pattern}/{flags}"),
        Some((cut, _)) => format!("/{}…/{flags} ({} characters)", &pattern[..cut], pattern.chars().count()),
    }
}

/// The flag rules of the RegExp constructor: known letters, each at most once,
/// and not `u` with `v`.
fn check_flags(flags: &str) -> Result<(), RegexError> {
    let mut seen = String::new();
    for c in flags.chars() {
        if !"dgimsuvy".contains(c) || seen.contains(c) {
            return Err(RegexError(format!(
                "invalid regular expression flags '{flags}': use each of d g i m s u v y at most once"
            )));
        }
        seen.push(c);
    }
    if seen.contains('u') && seen.contains('v') {
        return Err(RegexError(format!("invalid regular expression flags '{flags}': 'u' and 'v' cannot be combined")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(p: &str, f: &str, text: &str) -> bool {
        JsRegex::new(p, Some(f)).unwrap().test(text)
    }

    #[test]
    fn lookahead_requires_every_part_in_any_order() {
        let p = r"^(?=[\s\S]*alpha)(?=[\s\S]*beta)";
        assert!(test(p, "", "beta then alpha"));
        assert!(!test(p, "", "only alpha here"));
        assert!(!test(r"\bfoo(?!bar)", "", "foobar"));
        assert!(test(r"(?<=\$)\d+", "", "cost $42"));
    }

    #[test]
    fn flags_change_meaning() {
        assert!(!test("^second", "", "first\nsecond"));
        assert!(test("^second", "m", "first\nsecond"));
        assert!(!test("a.b", "", "a\nb"));
        assert!(test("a.b", "s", "a\nb"));
        assert!(test("HELLO", "i", "hello"));
        assert!(test("lo", "g", "hello"));
        assert!(!test("lo", "y", "hello"));
        assert!(test("he", "y", "hello"));
    }

    #[test]
    fn without_u_text_is_utf16_code_units() {
        assert!(!test("^.$", "", "😀"));
        assert!(test("^..$", "", "😀"));
        assert!(test("^.$", "u", "😀"));
    }

    #[test]
    fn long_patterns_are_refused_before_the_recursive_compiler_sees_them() {
        // 2,000 alternatives overflowed a 2 MiB stack in the compiler.
        let long = format!("{}a", "a|".repeat(2_000));
        let e = JsRegex::new(&long, None).unwrap_err().0;
        assert!(e.contains("4001 characters long; the limit is 2048"), "{e}");
        assert!(e.starts_with("regular expression /a|a|") && e.contains("…/"), "{e}");
        // At the limit, the worst shapes compile on a thread with the
        // smallest stack the program gives one (2 MiB), in this (debug) build.
        let at_limit = format!("{}a", "a|".repeat((MAX_PATTERN_LEN - 1) / 2));
        let shapes = [
            at_limit,
            format!("{}a{}", "(?:".repeat(MAX_PATTERN_LEN / 4), ")".repeat(MAX_PATTERN_LEN / 4)),
            format!("{}a{}", "(?=".repeat(MAX_PATTERN_LEN / 4), ")".repeat(MAX_PATTERN_LEN / 4)),
            "a?".repeat(MAX_PATTERN_LEN / 2),
        ];
        let thread = std::thread::Builder::new().stack_size(2 << 20);
        let compiled = thread
            .spawn(move || {
                shapes.iter().map(|p| JsRegex::new(p, None).map(|r| r.test("a")).is_ok()).collect::<Vec<_>>()
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(compiled[0] && compiled[3], "{compiled:?}");
    }

    #[test]
    fn matching_lines_numbers_from_zero() {
        let re = JsRegex::new("^b", Some("i")).unwrap();
        assert_eq!(re.matching_lines("a\nB\r\nc\nbb"), [1, 3]);
    }

    #[test]
    fn bad_patterns_and_flags_are_errors() {
        assert!(JsRegex::new("(unclosed", None).is_err());
        assert!(JsRegex::new("a", Some("x")).is_err());
        assert!(JsRegex::new("a", Some("ii")).is_err());
        assert!(JsRegex::new("a", Some("uv")).is_err());
    }
}
