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
        // (With `v`, classes nest and have set operations: left as written.)
        let folded = if flags.contains('i') && !flags.contains('v') {
            non_word_spelled_out(pattern, flags.contains('u'))
        } else {
            pattern.into()
        };
        let regex = regress::Regex::with_flags(&folded, regress::Flags::from(flags))
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

/// `\W` inside a character class under `i`, spelled out as the characters
/// it stands for, without U+017F (ſ) and U+212A (the Kelvin sign).
///
/// Without `u`, JavaScript's `i` flag folds case with `toUpperCase` and
/// never folds a character above U+007F onto one below: `/[^\W\d_]/i`
/// matches `s` and `k`. With `u`, ſ and K are word characters, so `\W`
/// holds neither. `regress` folds ſ onto `s` and K onto `k` in both modes
/// and counts them in `\W`, so there a class holding `\W` also matches `s`
/// and `k`, and `[^\W\d_]` does not: "seeds" read as "eed". Spelled out
/// without those two characters, the class means what it means in
/// JavaScript (with `u`, exactly; without, except that ſ and K themselves
/// fall out of it, since a class cannot hold them without regress folding
/// them onto s and k, which no answer written in English will notice).
const NON_WORD: &str = r"\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\u017e\u0180-\u2129\u212b-\uffff";

/// The pattern with every `\W` inside a character class written as
/// [`NON_WORD`]; escapes and the rest of the pattern as they are.
fn non_word_spelled_out(pattern: &str, unicode: bool) -> std::borrow::Cow<'_, str> {
    if !pattern.contains(r"\W") {
        return pattern.into();
    }
    let mut out = String::with_capacity(pattern.len() + 64);
    let mut in_class = false;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('W') if in_class => {
                    out.push_str(NON_WORD);
                    if unicode {
                        out.push_str(r"\u{10000}-\u{10ffff}");
                    }
                }
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push(c);
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.into()
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

    /// `\W` in a class, with `i` and without `u`, means what JavaScript
    /// means on every ASCII character (a word character is `[A-Za-z0-9_]`).
    #[test]
    fn a_class_with_non_word_characters_folds_case_as_javascript_does() {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let texts: Vec<char> = (0u8..128).map(char::from).collect();
        for (pattern, expected) in [
            (r"^[\W]$", &(|c: char| !word(c)) as &dyn Fn(char) -> bool),
            (r"^[^\W]$", &word),
            (r"^[^\W\d_]$", &|c: char| c.is_ascii_alphabetic()),
            (r"^[\W_]$", &|c: char| !c.is_ascii_alphanumeric()),
        ] {
            let re = JsRegex::new(pattern, Some("i")).unwrap();
            for &c in &texts {
                assert_eq!(re.test(&c.to_string()), expected(c), "/{pattern}/i on {:?}", c);
            }
        }
        // What made it matter: a letter run read whole.
        assert!(JsRegex::new(r"^\d+(?=\s+[^\W\d_]+\s+each\b)", Some("i")).unwrap().test("25 seeds each"));
        // Escapes and classes around it stay as written.
        assert_eq!(non_word_spelled_out(r"\W[\]\W]\\W[a-z]", false), format!(r"\W[\]{NON_WORD}]\\W[a-z]"));
        assert_eq!(non_word_spelled_out(r"[^\w\n]", false), r"[^\w\n]");
        // The price: ſ and K themselves are no longer in such a class (in
        // JavaScript they are).
        assert!(!JsRegex::new(r"[\W]", Some("i")).unwrap().test("\u{17f}"));
        // With `u`, ſ and K are word characters, and `\W` holds no s or k.
        for (pattern, text, expected) in [
            (r"^[^\W]$", "s", true),
            (r"^[^\W]$", "\u{17f}", true),
            (r"^[\W]$", "K", false),
            (r"^[\W]$", "\u{212a}", false),
            (r"^[\W]$", "-", true),
            (r"^[\W]$", "\u{1f600}", true),
        ] {
            assert_eq!(JsRegex::new(pattern, Some("iu")).unwrap().test(text), expected, "/{pattern}/iu on {text:?}");
        }
    }

    /// The members a class item stands for, among ASCII characters, as
    /// JavaScript reads it without `u`.
    fn members(item: &str) -> Vec<char> {
        let all = (0u8..128).map(char::from);
        let word = |c: &char| c.is_ascii_alphanumeric() || *c == '_';
        match item {
            r"\W" => all.filter(|c| !word(c)).collect(),
            r"\w" => all.filter(word).collect(),
            r"\d" => all.filter(char::is_ascii_digit).collect(),
            r"\D" => all.filter(|c| !c.is_ascii_digit()).collect(),
            r"\s" => all.filter(|c| " \t\n\x0b\x0c\r".contains(*c)).collect(),
            "a-f" => ('a'..='f').collect(),
            "K-S" => ('K'..='S').collect(),
            other => other.chars().collect(),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2048, ..Default::default() })]

        /// Any class of these items, negated or not, under `i` without `u`,
        /// matches an ASCII character exactly when JavaScript's does: when
        /// the character or its other case is a member (or, negated, is not).
        #[test]
        fn classes_under_i_match_ascii_as_javascript_does(
            negated in proptest::prelude::any::<bool>(),
            items in proptest::collection::vec(
                proptest::sample::select(vec![r"\W", r"\w", r"\d", r"\D", r"\s", "a-f", "K-S", "_", "s", "k", "-"]),
                1..4,
            ),
        ) {
            // Each item once, and a `-` last, where it is a member, not a range.
            let mut items = items;
            items.sort_unstable();
            items.dedup();
            items.sort_by_key(|i| *i == "-");
            let class = format!("^[{}{}]$", if negated { "^" } else { "" }, items.concat());
            let re = JsRegex::new(&class, Some("i")).unwrap();
            let set: Vec<char> = items.iter().flat_map(|i| members(i)).collect();
            for c in (0u8..128).map(char::from) {
                let other = if c.is_ascii_lowercase() { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() };
                let member = set.contains(&c) || set.contains(&other);
                proptest::prop_assert_eq!(re.test(&c.to_string()), member != negated, "{} on {:?}", class, c);
            }
        }
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
