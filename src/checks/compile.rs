//! A check source compiled into a task's `outputMatchers` and
//! `vaultAssertions`, each with its explanation in words.
//!
//! The rules, in the order their matchers come:
//!
//! - **answer lines** (`[[line]]`): the request asks for a line `Label:
//!   value`; the answer must have one giving the expected values (any
//!   spelling, see `spell`), and *every* line so labelled must give no
//!   other value of their kinds: a second number on a number line, a second
//!   time on a time line, a listed other candidate on a text line, is a
//!   hedge and fails, and so is a later line under the bare label that
//!   corrects the first by starting with another value ("Toll: 9" ...
//!   "Toll: 12"; one that starts with words, "Venue: not the Town Hall", or
//!   whose label carries a parenthesis says in words what it is, which is
//!   the judge's), and so is a value
//!   offered with a doubt ("maybe", "or" before anything but the value
//!   again) unless the line is said in a sentence (`prose`). A line is read as
//!   tokens: the line's own values first (so the `four` of `twenty-four` or
//!   the `2` of `Fl(2)` is no other value), then working (`(412 + 388 +
//!   295)`), then candidates. What the rest of the answer says is free. The
//!   line may be a list item (`-`, `*`, `•`, `1.`), a quote, a heading or a
//!   table row (`| Label | value |`), its label may be emphasised or in
//!   code (`**Label:**`, `` `Label`: ``) and followed by a parenthesis
//!   (`Label (date and time):`), and its separator may be a colon, a table
//!   bar or a dash. A label line with nothing after the label, followed by
//!   a list, takes the list as its value (`Family collections:` then one
//!   item per line). A `not_given` line must say something in words and
//!   give no number and no value of its kind: whether its words say the
//!   notes lack the value is for the judge (no word list can hold every
//!   way of saying so).
//! - **states**: the answer states each value somewhere, in any spelling.
//! - **never**: the answer never mentions a value no correct answer needs.
//! - **either**: ways to be right, any one of which will do: every value of
//!   one group stated, or (`asks`) a question put to the user.
//! - **raw**: a pattern written by hand (at most [`RAW_LIMIT`] characters),
//!   with the reason no rule says it.
//! - **judge**: the criteria the judge model decides.
//!
//! Vault rules compile to the format's assertions (`fileExists`,
//! `fileUnchanged`...), whole-note comparisons to `fileMatches` patterns
//! built from the fixture, and `nothing_else_changes` to vaultbench's
//! `nothingElseChanged` assertion.

use std::fmt::Write;

use serde_json::Value as Json;

use super::source::{Appended, Either, Line, NotGiven, Note, NoteLine, OneOrMany, Rest, Scalar, Source, Value};
use super::spell::{self, Date, Kind, Name, Number, Time};
use crate::format::OneOrMany as FormatOneOrMany;
use crate::format::task::{Matcher, VaultAssertion};
use crate::limits::MAX_PATTERN_LEN;
use crate::score::frontmatter;

/// The longest pattern a source may write by hand.
pub const RAW_LIMIT: usize = 200;

/// The folder the fixture is copied to; source paths are relative to it.
pub const SCRATCH: &str = "eval-scratch";

/// What compiling needs to know about the task.
pub struct Context<'a> {
    /// The task's request, which must ask for every answer line.
    pub user_message: &'a str,
    /// Reads a file of the task's fixture (a path relative to its folder).
    pub fixture: &'a dyn Fn(&str) -> Result<String, String>,
}

/// A compiled source: the task's checks and what each means.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    pub output_matchers: Vec<Matcher>,
    /// One per output matcher, in order.
    pub matcher_notes: Vec<String>,
    pub vault_assertions: Vec<VaultAssertion>,
    /// One per vault assertion, in order.
    pub assertion_notes: Vec<String>,
    /// Why only the judge can reject some wrong answers, where the source says so.
    pub judge_only: Option<String>,
}

/// Parse a source's TOML text.
pub fn parse(text: &str) -> Result<Source, String> {
    toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())
}

/// A value a check names, read from the source.
#[derive(Debug, Clone)]
enum Val {
    Number(Number),
    Time(Time),
    Date(Date),
    /// Spellings, any of them.
    Text(Vec<String>),
    /// A person, by any of several spellings of the name.
    Name(Vec<Name>),
    /// Keywords, any of them, in any inflection.
    Word(Vec<String>),
}

/// What spelling a value needs to know about its line: the units its
/// numbers carry and the other people it names.
#[derive(Default)]
struct Spelling<'a> {
    units: Option<&'a str>,
    other_names: &'a [Name],
}

impl Val {
    fn kind(&self) -> Kind {
        match self {
            Val::Number(_) => Kind::Number,
            Val::Time(_) => Kind::Time,
            Val::Date(_) => Kind::Date,
            Val::Text(_) | Val::Name(_) | Val::Word(_) => Kind::Text,
        }
    }

    fn pattern(&self, how: &Spelling<'_>) -> String {
        match self {
            Val::Number(n) => match how.units {
                Some(u) => spell::with_units(&spell::number(n), u),
                None => spell::number(n),
            },
            Val::Time(t) => spell::time(*t),
            Val::Date(d) => spell::date(*d),
            Val::Text(spellings) => spell::any_text(spellings),
            Val::Name(names) => {
                let forms: Vec<String> = names.iter().map(|n| spell::name(n, how.other_names)).collect();
                if forms.len() == 1 { forms[0].clone() } else { format!("(?:{})", forms.join("|")) }
            }
            Val::Word(words) => spell::any_word(words),
        }
    }

    /// The pattern for a value stated anywhere in an answer: a number
    /// there must stand alone, not be part of a date or time, or lie in a
    /// range between two other numbers of the list stated with it.
    fn pattern_anywhere(&self, units: Option<&str>, stated: &[Number]) -> String {
        match self {
            Val::Number(n) => {
                let n = spell::number_stated(n, stated);
                match units {
                    Some(u) => spell::with_units(&n, u),
                    None => n,
                }
            }
            Val::Date(d) => spell::date_stated(*d),
            other => other.pattern(&Spelling { units, ..Spelling::default() }),
        }
    }

    fn display(&self, units: &[String]) -> String {
        match self {
            Val::Number(n) if units.is_empty() => n.display(),
            Val::Number(n) => format!("{} {}", n.display(), units[0]),
            Val::Time(t) => t.display(),
            Val::Date(d) => d.display(),
            Val::Text(s) => quoted(s),
            Val::Name(n) => quoted(&n.iter().map(Name::display).collect::<Vec<_>>()),
            Val::Word(w) => format!("{} (in any inflection)", quoted(w)),
        }
    }
}

/// `"a"` or `"a" (or "b")`.
fn quoted(spellings: &[String]) -> String {
    let mut s = format!("\"{}\"", spellings[0]);
    if spellings.len() > 1 {
        let rest: Vec<String> = spellings[1..].iter().map(|v| format!("\"{v}\"")).collect();
        let _ = write!(s, " (or {})", rest.join(", "));
    }
    s
}

fn list_of(spellings: &OneOrMany<String>, at: &str, errors: &mut Vec<String>) -> Option<Vec<String>> {
    let list: Vec<String> = spellings.as_slice().iter().map(|s| s.trim().to_string()).collect();
    if list.is_empty() || list.iter().any(String::is_empty) {
        errors.push(format!("{at}: an empty text"));
        return None;
    }
    Some(list)
}

fn text_val(spellings: &OneOrMany<String>, at: &str, errors: &mut Vec<String>) -> Option<Val> {
    list_of(spellings, at, errors).map(Val::Text)
}

fn word_val(words: &OneOrMany<String>, at: &str, errors: &mut Vec<String>) -> Option<Val> {
    list_of(words, at, errors).map(Val::Word)
}

fn name_val(spellings: &OneOrMany<String>, at: &str, errors: &mut Vec<String>) -> Option<Val> {
    let list = list_of(spellings, at, errors)?;
    let names: Vec<Name> = list.iter().filter_map(|n| parsed(Name::parse(n), at, errors)).collect();
    (names.len() == list.len()).then_some(Val::Name(names))
}

fn parsed<T>(result: Result<T, String>, at: &str, errors: &mut Vec<String>) -> Option<T> {
    result.map_err(|e| errors.push(format!("{at}: {e}"))).ok()
}

fn number_val(n: &Scalar, at: &str, errors: &mut Vec<String>) -> Option<Val> {
    parsed(Number::parse(&n.as_text()), at, errors).map(Val::Number)
}

fn units_of(unit: &Option<OneOrMany<String>>) -> Vec<String> {
    unit.as_ref().map(|u| u.as_slice().to_vec()).unwrap_or_default()
}

/// Start of an answer line, up to its label: the start of a line, then list
/// markers, quote marks, heading marks, table bars and emphasis (any marks
/// but letters and digits), or a number of a numbered list.
const LINE_START: &str = r"(?<![^\n])[^\w\n]*(?:\d{1,3}[.)][^\w\n]*)?";
/// After the label, what qualifies it: `Label (date and time):`.
const LABEL_QUALIFIER: &str = r"(?: ?\([^()\n]{0,60}\))?";
/// After a label and its parenthesis, if any: emphasis, then a colon, a
/// bar or a dash.
const LABEL_END: &str = r"[\t *_`~]*(?:[:|]|[\u2013\u2014-](?= ))[\t *_`~|:]*";
/// A list item's start: its marker and the space after it.
const ITEM: &str = r" *(?:[-*+\u2022]|\d+[.)]) ";

/// The alternatives of [`WITHIN`], without its group: [`within`] adds one.
macro_rules! within_alternatives {
    () => {
        r"[^\n]|\n(?= *(?:[-*+\u2022]|\d+[.)]) (?![^:\n]{0,40}:))(?<=:[\t *_`~]*\n|(?:^|\n)(?:[^:\n]{41}[^\n]*|[^:\n]{0,40})\n)"
    };
}

/// A character of an answer line. The line goes on past a line break into
/// the next item of a list when that item is not labelled (has no colon in
/// its first 40 characters) and the line before it ends with a colon (an
/// empty label line: `Family collections:`) or is not labelled either: the
/// items of a list below the label, never the next `- Label: value` line
/// nor a list below a label line that has its value.
const WITHIN: &str = concat!("(?:", within_alternatives!(), ")");

/// [`WITHIN`] for the line so labelled, which also goes on into a list of
/// `key: detail` items right below the line when the line itself is empty
/// (`Moved:`), for as long as its items are all of that form. A key names
/// an item: it holds a digit, a slash, a dot or a backtick
/// (`- QSV-0412: Marsh woundwort`, `` - `mash-tun.md`: ... ``), or three
/// words or more (`1. Purge the cache: ...`). A key of one or two words
/// names a category (`- Kept: 0433`, `- Not moved: ...`) and is another
/// line, as is any `key: detail` line below a line that has its value or
/// after plain items (`Voters:`, its names, then `- Not eligible: ...`).
fn within(label: &str) -> String {
    let keyed = format!(r"{ITEM}(?=[^:\n]{{1,60}}:)(?:[^:\n]*[\d/.`]|[^\s:]+ +[^\s:]+ +[^\s:])[^:\n]*:");
    let empty_line = format!(r"(?<![^\n])[^\w\n]*{}[^:\n]{{0,64}}:[\t *_`~]*\n", label_pattern(label));
    format!(r"(?:{}|\n(?={keyed})(?<={empty_line}(?:{keyed}[^\n]*\n)*))", within_alternatives!())
}

/// The pattern `make` writes with `within` for a character of the line,
/// or with [`WITHIN`] where that is too long for the engine: that one
/// check then reads no `key: detail` list below an empty line.
fn fitted(make: impl Fn(&str) -> String, within: &str) -> String {
    let p = make(within);
    if p.chars().count() <= MAX_PATTERN_LEN { p } else { make(WITHIN) }
}

/// An answer line's start, up to its value.
fn label_line(label: &str) -> String {
    format!("{LINE_START}{}{LABEL_QUALIFIER}{LABEL_END}", label_pattern(label))
}

/// The values of one answer line, read from its source.
struct LineValues {
    items: Vec<Val>,
    /// The other candidates, spelled: texts, keywords or parts of names.
    others: Vec<String>,
    names: Vec<Name>,
    units: Vec<String>,
}

fn line_values(line: &Line, at: &str, errors: &mut Vec<String>) -> LineValues {
    let mut items: Vec<Val> = Vec::new();
    let texts: Vec<&OneOrMany<String>> = line.text.iter().chain(&line.texts).collect();
    for (i, t) in texts.into_iter().enumerate() {
        items.extend(text_val(t, &format!("{at}.text[{i}]"), errors));
    }
    let names: Vec<&OneOrMany<String>> = line.name.iter().chain(&line.names).collect();
    for (i, n) in names.into_iter().enumerate() {
        items.extend(name_val(n, &format!("{at}.name[{i}]"), errors));
    }
    let words: Vec<&OneOrMany<String>> = line.word.iter().chain(&line.words).collect();
    for (i, w) in words.into_iter().enumerate() {
        items.extend(word_val(w, &format!("{at}.word[{i}]"), errors));
    }
    let numbers: Vec<&Scalar> = line.number.iter().chain(&line.numbers).collect();
    for n in numbers {
        items.extend(number_val(n, &format!("{at}.number"), errors));
    }
    for t in line.time.iter().chain(&line.times) {
        items.extend(parsed(Time::parse(t), &format!("{at}.time"), errors).map(Val::Time));
    }
    for d in line.date.iter().chain(&line.dates) {
        items.extend(parsed(Date::parse(d), &format!("{at}.date"), errors).map(Val::Date));
    }
    let own_names: Vec<Name> = items
        .iter()
        .filter_map(|v| match v {
            Val::Name(n) => Some(n.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    if line.others.iter().any(|o| o.trim().is_empty()) {
        errors.push(format!("{at}.others: an empty text"));
    }
    // The others are candidates of the line's own sort: names on a name
    // line (found by any part), keywords on a keyword line, texts else.
    let mut names = Vec::new();
    let mut others = Vec::new();
    for (i, o) in line.others.iter().filter(|o| !o.trim().is_empty()).enumerate() {
        if !own_names.is_empty() {
            if let Some(name) = parsed(Name::parse(o), &format!("{at}.others[{i}]"), errors) {
                others.extend(spell::name_parts(&name, &own_names));
                names.push(name);
            }
        } else if line.word.is_some() || !line.words.is_empty() {
            others.push(spell::word(o));
        } else {
            others.push(spell::text(o));
        }
    }
    LineValues { items, others, names, units: units_of(&line.unit) }
}

/// A text's spellings, and each that starts with the line's label without
/// it: the label already says it (`Drawer: 14, cabinet C` for "drawer 14,
/// cabinet C"). What is left must hold a word of two letters or more, or
/// a digit and a letter (`drawer 14` does not become a bare `14`, nor
/// `Gate A` a bare `A`, which any sentence holds).
fn without_label(label: &str, spellings: &[String]) -> Vec<String> {
    let same = |a: &str, b: &str| a.to_lowercase() == b.to_lowercase();
    let telling = |rest: &str| {
        let word = rest.split(|c: char| !c.is_alphabetic()).any(|w| w.chars().count() >= 2);
        word || (rest.chars().any(char::is_alphabetic) && rest.chars().any(|c| c.is_ascii_digit()))
    };
    let mut out = spellings.to_vec();
    for s in spellings {
        let Some(head) = s.get(..label.len()) else { continue };
        let after = &s[label.len()..];
        let rest = after.trim_start_matches([' ', ',']);
        if same(head, label) && after.starts_with(' ') && telling(rest) && !out.iter().any(|o| same(o, rest)) {
            out.push(rest.to_string());
        }
    }
    out
}

/// An answer line's matchers, each with its explanation: one that a line
/// so labelled gives its values, and per kind of value that no line so
/// labelled gives another.
fn compile_line(line: &Line, at: &str, user_message: &str, errors: &mut Vec<String>) -> Vec<(Matcher, String)> {
    let before = errors.len();
    let label = line.label.trim();
    if label.is_empty() || label.contains('\n') || label.contains(':') {
        errors.push(format!("{at}.label: a label is one line of text without a colon"));
        return vec![];
    }
    if !user_message.contains(&format!("{label}:")) {
        errors.push(format!(
            "{at}.label: the request never asks for a line `{label}: ...`; say in userMessage where the value goes"
        ));
    }
    let LineValues { mut items, others, names, units } = line_values(line, at, errors);
    for v in &mut items {
        if let Val::Text(spellings) = v {
            *spellings = without_label(label, spellings);
        }
    }
    if !units.is_empty() && !items.iter().any(|v| v.kind() == Kind::Number) && line.not_given != Some(NotGiven::Number)
    {
        errors.push(format!("{at}.unit: a unit goes with a number"));
    }
    match (&line.not_given, items.is_empty()) {
        (None, true) => errors.push(format!(
            "{at}: the line gives no value: add text, name, word, number, time or date, or not_given for a value the notes lack"
        )),
        (Some(_), false) => errors.push(format!("{at}.not_given: a line either gives values or says none is given")),
        (Some(NotGiven::Text), true) if others.is_empty() => errors.push(format!(
            "{at}.others: a text that is not given is recognised by its candidates: list them in `others`"
        )),
        _ => {}
    }
    if errors.len() > before {
        return vec![];
    }
    // A line that says a value is not given gives no number at all, with a
    // unit or without.
    let unit_pattern = (!units.is_empty() && line.not_given.is_none()).then(|| spell::units(&units));
    let how = Spelling { units: unit_pattern.as_deref(), other_names: &names };
    let ll = label_line(label);
    let within = within(label);
    // A later line under the bare label corrects the answer line: two
    // answers. One whose label is qualified ("Toll (2031 table):", "Toll
    // (final):") says what it is in words, which no word list reads both
    // ways (round 7 beat one from each side): the rest of the answer is
    // free, and a contradiction there is the judge's.
    // (A quoted line, `> Plate scale: 0.4105`, cites a note: no correction.)
    let correcting_ll = format!(r"(?![^\w\n]*>){LINE_START}{}{LABEL_END}", label_pattern(label));
    let mut out = Vec::new();

    // The first line so labelled, the answer line, gives every value (or
    // says in words that the notes do not give it).
    let head = first_line(label, &ll);
    if line.not_given.is_some() {
        out.push((
            regex(format!(r"{head}(?={within}*?[a-z\u00c0-\u024f]{{2}})"), "i"),
            format!("the answer has a line \"{label}: ...\" saying in words that the notes do not give it"),
        ));
    } else {
        let lookahead = |v: &Val| format!(r"(?={within}*?{})", v.pattern(&how));
        let all: String = items.iter().map(lookahead).collect();
        let values: Vec<String> = items.iter().map(|v| v.display(&units)).collect();
        if head.len() + all.len() <= MAX_PATTERN_LEN {
            out.push((
                regex(format!("{head}{all}"), "i"),
                format!("the answer has a line \"{label}: ...\" giving {}", values.join(" and ")),
            ));
        } else {
            // Too long for one pattern: a matcher per value.
            for (v, said) in items.iter().zip(values) {
                out.push((
                    regex(format!("{head}{}", lookahead(v)), "i"),
                    format!("the answer has a line \"{label}: ...\" giving {said}"),
                ));
            }
        }
    }

    // The first line so labelled, the answer line, holds no other value of
    // a kind it gives.
    let mut kinds: Vec<Kind> = items.iter().map(Val::kind).collect();
    if !others.is_empty() {
        kinds.push(Kind::Text);
    }
    if let Some(k) = line.not_given {
        kinds.push(kind_of(k));
        kinds.push(Kind::Number);
    }
    kinds.sort();
    kinds.dedup();
    let numbers: Vec<Number> = items
        .iter()
        .filter_map(|v| match v {
            Val::Number(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    let years = spell::counts_years(&numbers);
    for kind in kinds {
        let Some(candidates) = spell::candidates(kind, how.units, if kind == Kind::Text { &others } else { &[] })
        else {
            continue;
        };
        let what = match kind {
            Kind::Text if !names.is_empty() => format!(
                "none of {} (by any part of the name)",
                names.iter().map(|o| format!("\"{}\"", o.display())).collect::<Vec<_>>().join(", ")
            ),
            Kind::Text => format!(
                "none of {}",
                line.others.iter().map(|o| format!("\"{}\"", o.trim())).collect::<Vec<_>>().join(", ")
            ),
            Kind::Number if how.units.is_some() => {
                format!("no other number (with {}, or offered on its own)", units.join("/"))
            }
            k if line.not_given.is_some() || !items.iter().any(|v| v.kind() == k) => format!("no {}", k.noun()),
            k => format!("no other {}", k.noun()),
        };
        for in_words in [false, true] {
            let these: Vec<String> =
                candidates.iter().filter(|c| c.in_words == in_words).map(|c| c.pattern.clone()).collect();
            if these.is_empty() {
                continue;
            }
            // What the line reads first, so that nothing inside it is read
            // again: the line's own values of the kind (a number without
            // its unit, in the candidates' spelling), and beside numbers in
            // digits, working and the parts of dates and times.
            let bare = Spelling { units: None, ..how };
            let mut own: Vec<String> = Vec::new();
            for v in items.iter().filter(|v| v.kind() == kind) {
                match (v, in_words) {
                    (Val::Number(n), false) => own.push(spell::number_digits(n)),
                    (Val::Number(n), true) => own.extend(spell::number_words(n)),
                    // A name's part that another name could hold is its
                    // surname (`Strand` in `Strand-Iredale`); the other
                    // parts are left out of the others already.
                    (Val::Name(names), _) => own.extend(names.iter().map(|n| spell::text(&n.surname))),
                    (other, _) => own.push(other.pattern(&bare)),
                }
            }
            let mut parts = Vec::new();
            if kind == Kind::Number {
                // (Working in brackets is read first in words too: its
                // comment may count in words, "the Wren's three receipts".)
                parts.push(spell::working());
                if !in_words {
                    parts.push(spell::not_numbers(years));
                    parts.push(spell::quantity_for());
                }
            }
            let skip = own.iter().chain(&parts).cloned().collect::<Vec<_>>().join("|");
            let first = &head[1..];
            for group in pack(&these, |alts| no_other_in(first, &skip, alts, WITHIN).chars().count() <= MAX_PATTERN_LEN)
            {
                out.push((
                    regex(fitted(|w| no_other_in(first, &skip, &group, w), &within), "i"),
                    format!("the first line \"{label}: ...\" gives {what} (a second value there is a hedge)"),
                ));
            }
            // A later line so labelled that gives none of the line's values
            // of the kind but starts with another one corrects the answer
            // line.
            let mine: Vec<String> = items.iter().filter(|v| v.kind() == kind).map(|v| v.pattern(&bare)).collect();
            if mine.is_empty() {
                continue;
            }
            // (A correction is one line: read without the list
            // continuation an answer line may have, which keeps the
            // pattern short.)
            let later = format!(r"[\s\S]*?{correcting_ll}(?![^\n]*?(?:{}))", mine.join("|"));
            let skip = parts.join("|");
            // A correction gives the other value first, right after the
            // label ("Toll: 12"), as an answer line does; a later line that
            // says something about a value ("- Venue: not Pellow Town Hall,
            // the 2030 venue") is a sentence of the prose, the judge's.
            let first_token = |alts: &str| {
                let skip = if skip.is_empty() { String::new() } else { format!(r"(?:(?:{skip})[^\w\n]*)*") };
                format!(r"^(?!{later}[^\w\n]*{skip}(?:{alts}))")
            };
            let fits = |alts: &str| first_token(alts).chars().count() <= MAX_PATTERN_LEN;
            for group in pack(&these, fits) {
                out.push((
                    regex(first_token(&group), "i"),
                    format!(
                        "no later line \"{label}: ...\" gives {} instead (a correction of the answer line)",
                        what.replacen("no other", "another", 1).replacen("none of", "one of", 1)
                    ),
                ));
            }
        }
    }

    // The answer line offers its value without a doubt: no "maybe", no
    // "or" before something else (a sentence's words are its own). One
    // pattern where it fits; else the words and the "or" apart, and the
    // "or" before the line's own values too where even that is too long.
    let prose = line.prose || items.iter().any(|v| matches!(v, Val::Word(_)));
    if !prose && line.not_given.is_none() {
        let bare = Spelling { units: None, ..how };
        let own: Vec<String> = items.iter().map(|v| v.pattern(&bare)).collect();
        let doubt = |hedge: &str| format!(r"^(?!{}{within}*?(?:{hedge}))", &head[1..]);
        let words = spell::HEDGES.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(", ");
        let said = |what: &str| {
            format!(
                "the first line \"{label}: ...\" offers its value without a doubt: {what} (a value offered with a doubt is a hedge)"
            )
        };
        let (hedge_words, hedge_or) = (spell::hedge_words(), spell::hedge_or(&own));
        let or_else = "no \"or\" before another value";
        let whole = doubt(&format!("{hedge_words}|{hedge_or}"));
        if whole.chars().count() <= MAX_PATTERN_LEN {
            out.push((regex(whole, "i"), said(&format!("none of {words}, and {or_else}"))));
        } else {
            out.push((regex(doubt(&hedge_words), "i"), said(&format!("none of {words}"))));
            let or = doubt(&hedge_or);
            if or.chars().count() <= MAX_PATTERN_LEN {
                out.push((regex(or, "i"), said(or_else)));
            } else {
                out.push((regex(doubt(&spell::hedge_or(&[])), "i"), said("no \"or\" on it")));
            }
        }
        // Nor two values joined by a slash ("C-14 / D-14", "SALLOW-6/11",
        // "9 / 12"). On a text line, a slash right after the value (a path
        // that ends in it, `hut / freezer / drawer 14C`, is one place); on
        // other lines a spaced slash past the line's own values (`26 1/2`,
        // `03/02/2031` and `km/h` are one value).
        let own: Vec<String> = items.iter().map(|v| v.pattern(&how)).collect();
        let joined = if items.iter().all(|v| v.kind() == Kind::Text) {
            // (A slash between the line's own values separates a list's
            // items: `Moved: 0412 / 0419 / 0427`.)
            let own = own.join("|");
            fitted(|w| format!(r"^(?!{}{w}*?(?:{own})\s*/(?![^/\n]{{0,12}}?(?:{own})))", &head[1..]), &within)
        } else {
            // (A number in another unit after the slash is the value
            // converted, `27.9 km / 17.3 mi`, not a second value.)
            let mut skip = own.clone();
            if let Some(u) = how.units {
                skip.push(format!(r"\s?/\s*\d[\d,.]*(?!{u}){}", spell::any_unit()));
            }
            let spaced = no_other_in(&head[1..], &skip.join("|"), r"\s/|/\s", &within);
            if spaced.chars().count() <= MAX_PATTERN_LEN {
                spaced
            } else {
                no_other_in(&head[1..], "", r"\s/|/\s", &within)
            }
        };
        out.push((regex(joined, "i"), said("no second value joined to it by a slash")));
    }
    out
}

/// The first line so labelled, from the start of the answer to its value.
/// The lines before it are those that do not start with the label and its
/// separator ("Venue and call sheet" is not the line "Venue: ...").
fn first_line(label: &str, ll: &str) -> String {
    format!(
        r"^(?:(?![^\w\n]{{0,8}}(?:\d{{1,3}}[.)][^\w\n]{{0,4}})?{}[^\w\n]{{0,3}}(?:\([^\n]*?\)[^\w\n]{{0,3}})?[:|\u2013\u2014-])[^\n]*\n)*{ll}",
        label_pattern(label)
    )
}

/// "No line that `line` finds (up to its value) holds one of `candidates`":
/// the line is read token by token, a token being one of what it reads
/// first (`skip`: its own values, working...), a candidate, or a
/// character, in that order of preference. The lookahead makes each
/// token's choice final (JavaScript has no atomic groups), and the last
/// token read is a candidate exactly when group 2 took part. `within` is
/// a character of the line (see [`within`]).
fn no_other_in(line: &str, skip: &str, candidates: &str, within: &str) -> String {
    let skip = if skip.is_empty() { String::new() } else { format!("{skip}|") };
    format!(r"^(?!{line}(?:(?=({skip}({candidates})|{within}))\1)*?(?!\2))")
}

/// Candidate patterns in as few groups as `fits` allows, each group one
/// alternation; a pattern that fits nowhere alone stays alone (and the
/// compiler reports its length).
fn pack(candidates: &[String], fits: impl Fn(&str) -> bool) -> Vec<String> {
    let mut groups: Vec<Vec<&String>> = Vec::new();
    for c in candidates {
        let joined = |g: &[&String]| g.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("|");
        match groups.last_mut() {
            Some(g) if fits(&format!("{}|{c}", joined(g))) => g.push(c),
            _ => groups.push(vec![c]),
        }
    }
    groups.iter().map(|g| g.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("|")).collect()
}

fn kind_of(k: NotGiven) -> Kind {
    match k {
        NotGiven::Number => Kind::Number,
        NotGiven::Time => Kind::Time,
        NotGiven::Date => Kind::Date,
        NotGiven::Text => Kind::Text,
    }
}

/// A label, spelled like a text but without its boundaries, and with its
/// spaces as spaces (a label is copied from the request, not respelled).
fn label_pattern(label: &str) -> String {
    let p = spell::text_with(label, spell::Spaces::Plain);
    p.strip_prefix(r"(?<![\w])").unwrap_or(&p).strip_suffix(r"(?![\w])").unwrap_or(&p).to_string()
}

fn regex(value: String, flags: &str) -> Matcher {
    Matcher::Regex { value: FormatOneOrMany::One(value), flags: (!flags.is_empty()).then(|| flags.to_string()) }
}

/// The one value of a `states` or `never` entry, with its pattern (flag i).
fn value_of(v: &Value, at: &str, errors: &mut Vec<String>) -> Option<(Val, Vec<String>)> {
    let set = [
        v.text.is_some(),
        v.name.is_some(),
        v.word.is_some(),
        v.number.is_some(),
        v.time.is_some(),
        v.date.is_some(),
        v.verbatim.is_some(),
    ];
    if set.iter().filter(|s| **s).count() != 1 {
        errors.push(format!("{at}: give exactly one of text, name, word, number, time, date or verbatim"));
        return None;
    }
    let units = units_of(&v.unit);
    if !units.is_empty() && v.number.is_none() {
        errors.push(format!("{at}.unit: a unit goes with a number"));
    }
    let val = if let Some(t) = &v.text {
        text_val(t, &format!("{at}.text"), errors)
    } else if let Some(n) = &v.name {
        name_val(n, &format!("{at}.name"), errors)
    } else if let Some(w) = &v.word {
        word_val(w, &format!("{at}.word"), errors)
    } else if let Some(n) = &v.number {
        number_val(n, &format!("{at}.number"), errors)
    } else if let Some(t) = &v.time {
        parsed(Time::parse(t), &format!("{at}.time"), errors).map(Val::Time)
    } else if let Some(d) = &v.date {
        parsed(Date::parse(d), &format!("{at}.date"), errors).map(Val::Date)
    } else {
        None
    };
    val.map(|val| (val, units))
}

/// A question put to the user: a sentence that ends in `?`, or one that
/// asks in the imperative ("tell me which Teague you mean", "let me know
/// which", "please confirm which").
const ASKS: &str =
    r"(?:[^\s?]\?(?![\w?])|\b(?:tell me|let me know|please (?:confirm|say|specify|clarify))\b[^.!?\n]{0,40}?\bwhich\b)";

/// Ways to be right as one pattern: every value of a group, stated
/// anywhere, or a question.
fn compile_either(either: &Either, at: &str, stated: &[Number], errors: &mut Vec<String>) -> Option<Matcher> {
    let before = errors.len();
    if either.why.trim().is_empty() {
        errors.push(format!("{at}.why: say what the answer does, in words"));
    }
    if either.states.len() + usize::from(either.asks) < 2 {
        errors.push(format!("{at}: give at least two ways (groups of states, or one group and asks = true)"));
    }
    let mut options = Vec::new();
    for (g, group) in either.states.iter().enumerate() {
        if group.is_empty() {
            errors.push(format!("{at}.states[{g}]: an empty group"));
        }
        let mut all = String::new();
        for (j, v) in group.iter().enumerate() {
            let here = format!("{at}.states[{g}][{j}]");
            if v.verbatim.is_some() {
                errors.push(format!("{here}.verbatim: not in either (write text, name, word, number, time or date)"));
            } else if let Some((val, units)) = value_of(v, &here, errors) {
                let unit = (!units.is_empty()).then(|| spell::units(&units));
                let _ = write!(all, r"(?=[\s\S]*?{})", val.pattern_anywhere(unit.as_deref(), stated));
            }
        }
        options.push(all);
    }
    if either.asks {
        options.push(format!(r"(?=[\s\S]*?{ASKS})"));
    }
    // (Its length is checked with every other matcher's, in `compile`.)
    (errors.len() == before).then(|| regex(format!("^(?:{})", options.join("|")), "i"))
}

fn compile_answer(source: &Source, cx: &Context<'_>, errors: &mut Vec<String>) -> (Vec<Matcher>, Vec<String>) {
    let mut matchers = Vec::new();
    let mut notes = Vec::new();
    for (i, line) in source.lines.iter().enumerate() {
        for (m, note) in compile_line(line, &format!("line[{i}]"), cx.user_message, errors) {
            matchers.push(m);
            notes.push(note);
        }
    }
    // The numbers stated together: a range between two of them states
    // those between.
    let stated: Vec<Number> = source
        .states
        .iter()
        .filter_map(|v| v.number.as_ref())
        .filter_map(|n| Number::parse(&n.as_text()).ok())
        .collect();
    for (i, v) in source.states.iter().enumerate() {
        let at = format!("states[{i}]");
        if let Some(text) = &v.verbatim {
            if text.is_empty() {
                errors.push(format!("{at}.verbatim: an empty text"));
                continue;
            }
            matchers.push(Matcher::Contains { value: FormatOneOrMany::One(text.clone()) });
            notes.push(format!("the answer contains exactly \"{text}\""));
        } else if let Some((val, units)) = value_of(v, &at, errors) {
            let unit = (!units.is_empty()).then(|| spell::units(&units));
            matchers.push(regex(val.pattern_anywhere(unit.as_deref(), &stated), "i"));
            notes.push(format!("the answer states {}", val.display(&units)));
        }
    }
    for (i, v) in source.never.iter().enumerate() {
        let at = format!("never[{i}]");
        if let Some(text) = &v.verbatim {
            matchers.push(regex(format!(r"^(?![\s\S]*{})", spell::escape(text)), ""));
            notes.push(format!("the answer never contains \"{text}\""));
        } else if let Some((val, units)) = value_of(v, &at, errors) {
            let unit = (!units.is_empty()).then(|| spell::units(&units));
            matchers.push(regex(format!(r"^(?![\s\S]*{})", val.pattern_anywhere(unit.as_deref(), &[])), "i"));
            notes.push(format!("the answer never mentions {}", val.display(&units)));
        }
    }
    for (i, either) in source.either.iter().enumerate() {
        if let Some(m) = compile_either(either, &format!("either[{i}]"), &stated, errors) {
            matchers.push(m);
            notes.push(format!("the answer {}", either.why.trim()));
        }
    }
    for (i, raw) in source.raw.iter().enumerate() {
        let at = format!("raw[{i}]");
        let flags = raw.flags.clone().unwrap_or_default();
        if raw.why.trim().is_empty() {
            errors.push(format!("{at}.why: say what the pattern checks and why no rule can"));
        }
        if raw.regex.chars().count() > RAW_LIMIT {
            errors.push(format!(
                "{at}.regex: {} characters; a pattern written by hand is at most {RAW_LIMIT} (say it with rules, or add a rule to the compiler)",
                raw.regex.chars().count()
            ));
        }
        if let Err(e) = regress::Regex::with_flags(&raw.regex, flags.as_str()) {
            errors.push(format!("{at}.regex: invalid regular expression: {e}"));
        }
        matchers.push(regex(raw.regex.clone(), &flags));
        notes.push(raw.why.trim().to_string());
    }
    if let Some(judge) = &source.judge {
        if judge.criteria.trim().is_empty() {
            errors.push("judge.criteria: the question for the judge is empty".into());
        }
        matchers.push(Matcher::Judge { criteria: judge.criteria.trim().to_string() });
        notes.push(format!("the judge is asked: {}", judge.criteria.trim()));
    }
    (matchers, notes)
}

/// A source path as a vault path: relative to `eval-scratch/`, or from the
/// vault root when it starts with `/`.
fn vault_path(path: &str, at: &str, errors: &mut Vec<String>) -> Option<String> {
    let p = path.trim();
    let rel = p.strip_prefix('/').unwrap_or(p);
    if rel.is_empty() || rel.split('/').any(|part| part.is_empty() || part == "." || part == "..") || rel.ends_with('/')
    {
        errors.push(format!("{at}: `{path}` is not a file path inside the vault"));
        return None;
    }
    Some(if p.starts_with('/') { rel.to_string() } else { format!("{SCRATCH}/{rel}") })
}

/// A fixture path (relative to the fixture folder) for a source path.
fn fixture_path<'p>(path: &'p str, at: &str, errors: &mut Vec<String>) -> Option<&'p str> {
    if path.trim().starts_with('/') {
        errors.push(format!("{at}: `{path}` is outside {SCRATCH}/, where no fixture file is"));
        return None;
    }
    Some(path.trim())
}

/// Text compared whole: every character as written, any line ending, and
/// white space at the end.
fn whole_text(text: &str) -> String {
    lines_pattern(text.trim_end())
}

/// Escaped text whose line breaks may be `\n` or `\r\n`.
fn lines_pattern(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    text.split('\n').map(spell::escape).collect::<Vec<_>>().join(r"\r?\n")
}

/// Part of a note split by edits: fixture text, or replacement texts.
enum Piece {
    Fixture(String),
    Replacement(Vec<String>),
}

fn edit_pattern(original: &str, note: &Note, at: &str, errors: &mut Vec<String>) -> Option<(String, String)> {
    let mut pieces = vec![Piece::Fixture(original.replace("\r\n", "\n"))];
    let mut said = Vec::new();
    for (i, e) in note.edit.iter().enumerate() {
        let to: Vec<String> = e.to.as_slice().to_vec();
        if e.from.is_empty() || to.is_empty() {
            errors.push(format!("{at}.edit[{i}]: from and to must not be empty"));
            return None;
        }
        let mut found = false;
        let mut next = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Fixture(text) if text.contains(&e.from) => {
                    found = true;
                    let parts: Vec<&str> = text.split(e.from.as_str()).collect();
                    for (j, part) in parts.iter().enumerate() {
                        if j > 0 {
                            next.push(Piece::Replacement(to.clone()));
                        }
                        next.push(Piece::Fixture(part.to_string()));
                    }
                }
                other => next.push(other),
            }
        }
        pieces = next;
        if !found {
            errors.push(format!("{at}.edit[{i}].from: \"{}\" is not in the fixture's note", e.from));
            return None;
        }
        said.push(format!("\"{}\" becomes {}", e.from, quoted(&to)));
    }
    let last = pieces.len() - 1;
    let mut pattern = String::from("^");
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Fixture(text) if i == last => pattern.push_str(&lines_pattern(text.trim_end())),
            Piece::Fixture(text) => pattern.push_str(&lines_pattern(text)),
            Piece::Replacement(to) if to.len() == 1 => pattern.push_str(&lines_pattern(&to[0])),
            Piece::Replacement(to) => {
                let alts: Vec<String> = to.iter().map(|t| lines_pattern(t)).collect();
                let _ = write!(pattern, "(?:{})", alts.join("|"));
            }
        }
    }
    pattern.push_str(r"\s*$");
    Some((pattern, said.join("; ")))
}

/// The text after a note's frontmatter (the closing `---` line excluded).
fn body_after_frontmatter(content: &str) -> Option<&str> {
    let block = frontmatter::block(content)?;
    let start = content.find(block)? + block.len();
    let rest = &content[start..];
    let closing_end = rest.find('\n').map_or(rest.len(), |i| i + 1);
    Some(&rest[closing_end..])
}

fn toml_to_json(v: &toml::Value) -> Json {
    match v {
        toml::Value::String(s) => Json::String(s.clone()),
        toml::Value::Integer(n) => Json::from(*n),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        toml::Value::Boolean(b) => Json::Bool(*b),
        toml::Value::Datetime(d) => Json::String(d.to_string()),
        toml::Value::Array(a) => Json::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Json::Object(t.iter().map(|(k, v)| (k.clone(), toml_to_json(v))).collect()),
    }
}

/// A note line's values as a pattern (flags i, m) and in words.
fn note_line(line: &NoteLine, at: &str, errors: &mut Vec<String>) -> Option<(String, String)> {
    let mut vals = Vec::new();
    if let Some(t) = &line.text {
        vals.extend(text_val(t, &format!("{at}.text"), errors));
    }
    if let Some(w) = &line.word {
        vals.extend(word_val(w, &format!("{at}.word"), errors));
    }
    if let Some(n) = &line.number {
        vals.extend(number_val(n, &format!("{at}.number"), errors));
    }
    if let Some(t) = &line.time {
        vals.extend(parsed(Time::parse(t), &format!("{at}.time"), errors).map(Val::Time));
    }
    if let Some(d) = &line.date {
        vals.extend(parsed(Date::parse(d), &format!("{at}.date"), errors).map(Val::Date));
    }
    if line.texts.iter().any(|t| t.trim().is_empty()) {
        errors.push(format!("{at}.texts: an empty text"));
        return None;
    }
    if vals.is_empty() && line.texts.is_empty() {
        errors.push(format!("{at}: a line needs at least one value"));
        return None;
    }
    let how = Spelling::default();
    let mut pattern: String = vals.iter().map(|v| format!(r"(?=[^\n]*?{})", v.pattern(&how))).collect();
    let mut words: Vec<String> = vals.iter().map(|v| v.display(&[])).collect();
    if !line.texts.is_empty() {
        // Several texts in this order on the line.
        let in_order: Vec<String> = line.texts.iter().map(|t| spell::text(t)).collect();
        let _ = write!(pattern, r"(?=[^\n]*?{})", in_order.join(r"[^\n]*?"));
        words.push(format!("{} in this order", quoted(&line.texts).replace(" (or ", ", ").trim_end_matches(')')));
    }
    Some((format!("^{pattern}"), words.join(", ")))
}

/// A note's frontmatter block, from its opening `---` to the first line
/// that closes it: what follows is the body (a second `---` further down is
/// part of the body, not the end of the block).
const FRONTMATTER_BLOCK: &str = r"^(?:\ufeff)?---[ \t]*\r?\n(?:(?!---[ \t]*\r?(?:\n|$))[^\n]*\n)*?---[ \t]*(?:\r?\n|$)";

/// The keys a frontmatter block may hold, and nothing else: each line of
/// the block is one of the keys, a continuation (indented, a list item), a
/// comment or blank.
fn frontmatter_keys_only(keys: &[&String]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| spell::escape(k)).collect();
    format!(
        r#"^(?:\ufeff)?---[ \t]*\r?\n(?:(?:["']?(?:{})["']?[ \t]*:|[ \t#-]|\r?(?=\n))[^\n]*\n)*?---[ \t]*(?:\r?\n|$)"#,
        keys.join("|")
    )
}

struct VaultOut {
    assertions: Vec<VaultAssertion>,
    notes: Vec<String>,
    /// Paths the rules let change, for `nothing_else_changes`.
    touched: Vec<String>,
}

impl VaultOut {
    fn push(&mut self, a: VaultAssertion, note: String) {
        self.assertions.push(a);
        self.notes.push(note);
    }

    fn touch(&mut self, path: &str) {
        if !self.touched.iter().any(|p| p == path) {
            self.touched.push(path.to_string());
        }
    }
}

fn compile_note(note: &Note, at: &str, cx: &Context<'_>, out: &mut VaultOut, errors: &mut Vec<String>) {
    let Some(path) = vault_path(&note.path, &format!("{at}.path"), errors) else { return };
    out.touch(&path);
    let whole = [note.text.is_some(), !note.edit.is_empty(), !note.appended.is_empty(), note.frontmatter.is_some()];
    if whole.iter().filter(|w| **w).count() > 1 {
        errors.push(format!("{at}: text, edit, appended and frontmatter each say the whole note; give one"));
        return;
    }
    let fixture = |errors: &mut Vec<String>| -> Option<String> {
        let rel = fixture_path(&note.path, &format!("{at}.path"), errors)?;
        (cx.fixture)(rel).map_err(|e| errors.push(format!("{at}.path: {e}"))).ok()
    };
    if let Some(text) = &note.text {
        out.push(
            file_matches(&path, format!(r"^{}(?:\r?\n)?$", whole_text(text)), ""),
            format!("{path} reads exactly as asked (either line ending; one final line break allowed)"),
        );
    }
    if !note.edit.is_empty()
        && let Some(original) = fixture(errors)
        && let Some((pattern, said)) = edit_pattern(&original, note, at, errors)
    {
        out.push(file_matches(&path, pattern, ""), format!("{path} is as it was, except that {said}"));
    }
    if !note.appended.is_empty()
        && let Some(original) = fixture(errors)
    {
        let added: Vec<String> = note
            .appended
            .iter()
            .map(|a| match a {
                Appended::Line(l) => lines_pattern(l),
                Appended::Starts { starts, rest } => {
                    format!("{}{}", spell::escape(starts), rest_pattern(rest.as_ref()))
                }
            })
            .collect();
        let pattern = format!(
            r"^{}\r?\n(?:[ \t]*\r?\n)?{}\s*$",
            lines_pattern(original.replace("\r\n", "\n").trim_end()),
            added.join(r"\r?\n")
        );
        out.push(
            file_matches(&path, pattern, ""),
            format!("{path} is as it was with {} added at its end{}", plural(note.appended.len(), "line"), {
                let shapes: Vec<String> = note
                    .appended
                    .iter()
                    .filter_map(|a| match a {
                        Appended::Starts { starts, rest: Some(rest) } => Some(rest_words(starts, rest)),
                        _ => None,
                    })
                    .collect();
                if shapes.is_empty() { String::new() } else { format!(" ({})", shapes.join("; ")) }
            }),
        );
    }
    if let Some(keys) = &note.frontmatter
        && let Some(original) = fixture(errors)
    {
        match frontmatter::parse(&original) {
            Err(e) => errors.push(format!("{at}: the fixture's frontmatter: {e}")),
            Ok(None) => errors.push(format!("{at}: the fixture's note has no frontmatter")),
            Ok(Some(before)) => {
                for (key, value) in &before {
                    let (value, how) = match keys.get(key) {
                        Some(v) => (toml_to_json(v), "set to"),
                        None => (value.clone(), "still"),
                    };
                    out.push(
                        VaultAssertion::FrontmatterEquals {
                            path: path.clone(),
                            key: key.clone(),
                            value: value.clone(),
                        },
                        format!("{path}: frontmatter `{key}` is {how} {value}"),
                    );
                }
                for (key, value) in keys.iter().filter(|(k, _)| !before.contains_key(*k)) {
                    let value = toml_to_json(value);
                    out.push(
                        VaultAssertion::FrontmatterEquals {
                            path: path.clone(),
                            key: key.clone(),
                            value: value.clone(),
                        },
                        format!("{path}: frontmatter `{key}` is set to {value}"),
                    );
                }
                // The block is compared whole: no key the request did not ask for.
                let allowed: Vec<&String> =
                    before.keys().chain(keys.keys().filter(|k| !before.contains_key(*k))).collect();
                out.push(
                    file_matches(&path, frontmatter_keys_only(&allowed), ""),
                    format!(
                        "{path}: the frontmatter holds no other key than {}",
                        allowed.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    ),
                );
                if let Some(body) = body_after_frontmatter(&original) {
                    out.push(
                        file_matches(&path, format!(r"{FRONTMATTER_BLOCK}{}\s*$", whole_text(body)), ""),
                        format!("{path}: the text after the frontmatter is as it was"),
                    );
                }
            }
        }
    }
    for text in &note.contains {
        out.push(
            VaultAssertion::FileContains { path: path.clone(), value: FormatOneOrMany::One(text.clone()) },
            format!("{path} contains \"{}\"", text.trim_end()),
        );
    }
    if !note.lacks.is_empty() {
        let value = match &note.lacks[..] {
            [one] => FormatOneOrMany::One(one.clone()),
            many => FormatOneOrMany::Many(many.to_vec()),
        };
        out.push(
            VaultAssertion::FileLacks { path: path.clone(), value },
            format!("{path} contains none of {}", quoted(&note.lacks).replace(" (or ", ", ").trim_end_matches(')')),
        );
    }
    for (i, line) in note.lines.iter().enumerate() {
        if let Some((pattern, words)) = note_line(line, &format!("{at}.lines[{i}]"), errors) {
            out.push(file_matches(&path, pattern, "im"), format!("{path} has a line with {words}"));
        }
    }
    if note.one_line_each {
        // A line per item: an item named on a second line that also gives
        // a time, where its line holds one, and names no other item is a
        // second entry; a sentence that names the items is not.
        let entries: Vec<(&[String], bool)> =
            note.lines.iter().filter_map(|l| l.text.as_ref().map(|t| (t.as_slice(), l.time.is_some()))).collect();
        if entries.is_empty() {
            errors.push(format!("{at}.one_line_each: no line here has a text"));
        }
        for (t, timed) in entries.iter().filter(|(t, _)| entries.iter().filter(|(u, _)| u == t).count() == 1) {
            let mut entry = format!("(?=[^\\n]*?{})", spell::any_text(t));
            // (A line that names several items is a sentence about them.)
            let others: Vec<String> = entries.iter().filter(|(u, _)| u != t).map(|(u, _)| spell::any_text(u)).collect();
            if !others.is_empty() {
                entry.push_str(&format!("(?![^\\n]*?(?:{}))", others.join("|")));
            }
            if *timed {
                entry.push_str(&format!("(?=[^\\n]*?{})", spell::any_clock_time()));
            }
            out.push(
                file_matches(
                    &path,
                    format!(r"(?<![\s\S])(?![\s\S]*?(?:^|\n){entry}[^\n]*\n(?:[^\n]*\n)*?{entry})"),
                    "i",
                ),
                format!(
                    "{path} names \"{}\" on one line only{}",
                    t[0].trim(),
                    if *timed { " with a time" } else { "" }
                ),
            );
        }
    }
    for (i, line) in note.no_lines.iter().enumerate() {
        if let Some((pattern, words)) = note_line(line, &format!("{at}.no_lines[{i}]"), errors) {
            let pattern = format!(r"(?<![\s\S])(?![\s\S]*?{pattern})");
            out.push(file_matches(&path, pattern, "im"), format!("{path} has no line with {words}"));
        }
    }
}

/// The shape asked of an appended line's own part, in words.
fn rest_words(starts: &str, rest: &Rest) -> String {
    let mut said = Vec::new();
    if let Some(n) = rest.at_most {
        said.push(format!("at most {n} characters"));
    }
    if rest.lower_case {
        said.push("starting in lower case".to_string());
    }
    if !rest.not_ending.is_empty() {
        said.push(format!("not ending in {}", quoted(&rest.not_ending.chars().map(String::from).collect::<Vec<_>>())));
    }
    format!("after \"{}\": {}", starts.trim(), said.join(", "))
}

/// The writer's part of an appended line: something, in the shape asked.
fn rest_pattern(rest: Option<&Rest>) -> String {
    let Some(rest) = rest else { return r"[^\n]*\S".to_string() };
    let mut out = String::new();
    if let Some(n) = rest.at_most {
        out.push_str(&format!(r"(?=[^\n]{{1,{n}}}(?:\r?\n|$))"));
    }
    if rest.lower_case {
        out.push_str(r"(?=[a-z\d])");
    }
    let last: String = rest.not_ending.chars().map(|c| spell::escape(&c.to_string())).collect();
    out.push_str(&format!(r"[^\n]*[^\s{last}]"));
    out
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("one {noun}") } else { format!("{n} {noun}s") }
}

fn file_matches(path: &str, pattern: String, flags: &str) -> VaultAssertion {
    VaultAssertion::FileMatches {
        path: path.to_string(),
        value: FormatOneOrMany::One(pattern),
        flags: (!flags.is_empty()).then(|| flags.to_string()),
    }
}

fn compile_vault(source: &Source, cx: &Context<'_>, errors: &mut Vec<String>) -> (Vec<VaultAssertion>, Vec<String>) {
    let v = &source.vault;
    let mut out = VaultOut { assertions: Vec::new(), notes: Vec::new(), touched: Vec::new() };
    for (i, p) in v.exists.iter().enumerate() {
        if let Some(path) = vault_path(p, &format!("vault.exists[{i}]"), errors) {
            out.touch(&path);
            out.push(VaultAssertion::FileExists { path: path.clone() }, format!("{path} exists"));
        }
    }
    for (i, p) in v.absent.iter().enumerate() {
        if let Some(path) = vault_path(p, &format!("vault.absent[{i}]"), errors) {
            out.touch(&path);
            out.push(VaultAssertion::FileAbsent { path: path.clone() }, format!("{path} is not there"));
        }
    }
    for (i, m) in v.moved.iter().enumerate() {
        let at = format!("vault.moved[{i}]");
        let (Some(from), Some(to), Some(fixture)) = (
            vault_path(&m.from, &format!("{at}.from"), errors),
            vault_path(&m.to, &format!("{at}.to"), errors),
            fixture_path(&m.from, &format!("{at}.from"), errors),
        ) else {
            continue;
        };
        if let Err(e) = (cx.fixture)(fixture) {
            errors.push(format!("{at}.from: {e}"));
        }
        out.touch(&from);
        out.touch(&to);
        out.push(VaultAssertion::FileAbsent { path: from.clone() }, format!("{from} is not there (moved to {to})"));
        out.push(
            VaultAssertion::FileUnchanged { path: to.clone(), fixture: fixture.to_string() },
            format!("{to} holds {from} byte for byte"),
        );
    }
    for (i, note) in v.notes.iter().enumerate() {
        compile_note(note, &format!("vault.note[{i}]"), cx, &mut out, errors);
    }
    for (i, p) in v.unchanged.iter().enumerate() {
        let at = format!("vault.unchanged[{i}]");
        let (Some(path), Some(fixture)) = (vault_path(p, &at, errors), fixture_path(p, &at, errors)) else { continue };
        if out.touched.contains(&path) {
            errors.push(format!("{at}: `{p}` is also named by a rule that changes it"));
        }
        if let Err(e) = (cx.fixture)(fixture) {
            errors.push(format!("{at}: {e}"));
        }
        out.push(
            VaultAssertion::FileUnchanged { path: path.clone(), fixture: fixture.to_string() },
            format!("{path} is byte for byte as in the fixture"),
        );
    }
    if v.nothing_else_changes {
        let except = out.touched.clone();
        let note = if except.is_empty() {
            "nothing in the vault changed and no file was added".to_string()
        } else {
            format!("nothing in the vault changed but {} and no other file was added", except.join(", "))
        };
        out.push(VaultAssertion::NothingElseChanged { except }, note);
    }
    (out.assertions, out.notes)
}

/// Compile a source against its task; every problem at once, each naming
/// its field (`line[0].number: ...`).
pub fn compile(source: &Source, cx: &Context<'_>) -> Result<Compiled, Vec<String>> {
    let mut errors = Vec::new();
    let (output_matchers, matcher_notes) = compile_answer(source, cx, &mut errors);
    let (vault_assertions, assertion_notes) = compile_vault(source, cx, &mut errors);
    // The default "nothing else changed" alone is passed by an agent that
    // does nothing: it checks no task.
    let default_only = vault_assertions.iter().all(|a| matches!(a, VaultAssertion::NothingElseChanged { .. }));
    if output_matchers.is_empty() && default_only {
        errors.push("the source checks nothing: add an answer line, states, a judge or a vault rule".into());
    }
    let patterns = output_matchers.iter().map(|m| match m {
        Matcher::Regex { value, .. } => value.as_slice().join(""),
        _ => String::new(),
    });
    for (i, p) in patterns.enumerate() {
        let len = p.chars().count();
        if len > MAX_PATTERN_LEN {
            errors.push(format!(
                "{}: compiles to a pattern of {len} characters, over the engine's limit of {MAX_PATTERN_LEN}: \
                 split it (fewer values or others on one line, or another line)",
                matcher_notes.get(i).map_or("a rule", String::as_str)
            ));
        }
    }
    for (a, note) in vault_assertions.iter().zip(&assertion_notes) {
        if let VaultAssertion::FileMatches { value, .. } = a
            && value.as_slice().iter().any(|v| v.chars().count() > MAX_PATTERN_LEN)
        {
            errors.push(format!("{note}: the note is too long to compare whole (over {MAX_PATTERN_LEN} characters)"));
        }
    }
    let judge_only = source.judge.as_ref().and_then(|j| j.why.clone()).map(|w| w.trim().to_string());
    if judge_only.as_deref() == Some("") {
        errors.push("judge.why: empty; leave it out or say why only the judge can tell".into());
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Compiled { output_matchers, matcher_notes, vault_assertions, assertion_notes, judge_only })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::RegexBudget;

    const BUDGET: RegexBudget = RegexBudget::per_pattern(std::time::Duration::from_secs(5));

    fn no_fixture(path: &str) -> Result<String, String> {
        Err(format!("no fixture file {path}"))
    }

    fn compiled(toml: &str, request: &str) -> Compiled {
        let cx = Context { user_message: request, fixture: &no_fixture };
        compile(&parse(toml).unwrap(), &cx).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// Does every literal matcher hold on `answer`?
    fn holds(c: &Compiled, answer: &str) -> bool {
        c.output_matchers.iter().zip(&c.matcher_notes).all(|(m, note)| {
            let ok = match m {
                Matcher::Regex { value, flags } => {
                    let (ok, error) = crate::score::matchers::regex(value, flags.as_deref(), answer, BUDGET);
                    assert!(error.is_none(), "{error:?}");
                    ok
                }
                Matcher::Contains { value } => crate::score::matchers::contains(value, answer),
                Matcher::Judge { .. } => true,
            };
            if !ok {
                eprintln!("not met: {note}");
            }
            ok
        })
    }

    #[test]
    fn an_answer_line_reads_one_value_wherever_the_rest_of_the_answer_goes() {
        let c = compiled("[[line]]\nlabel = \"Toll\"\nnumber = 9\n", "Start with a line `Toll: <amount>`.");
        assert_eq!(c.output_matchers.len(), c.matcher_notes.len());
        for yes in [
            "Toll: 9 tallies",
            "**Toll:** nine tallies\n\nThe old table said 12, and 8 for a pony trap.",
            "- Toll: 9\n",
            "1. **Toll**: 9 (2032 table)",
            "| Toll | 9 |\n|---|---|",
            "Intro line.\n> Toll — 9 tallies",
            "TOLL: 9.00",
            "Toll: 9 tallies for 1 handcart",
            "Toll: 9\n\nBreakdown:\nToll: 9 at Brannoch",
            "Toll: 9\n\nFor comparison:\nToll (2031 table): 8 tallies",
            "Toll: 9\n\n- Toll (Sallow Quay column, updated 2032): 12",
            "Toll: 9 tallies (412 + 388 \u{2013} 791 = 9)",
            "Toll: 9 (4 plus 5 =)",
            // Working in brackets, with words around its numbers, in words too.
            "Toll: 9 (4 handcarts + 5 pony traps)",
            "Toll: 9 (4 + 5, the two tallies of the morning and three of noon)",
            "Toll and tally rules, from the 2032 table\n\nToll: 9",
            "Toll: 9\n\nFor comparison:\n- Toll (Marshlight crossing): 12",
            "Toll: 9 tallies (1/2 of the 2030 rate)",
            // A qualified later line says what it is in words: context, or a
            // contradiction for the judge, never read by a word list.
            "Toll: 9\n\nToll (2033 proposal, not yet confirmed): 10 tallies",
            "Toll: 9\n\nToll (corrected): 12 tallies",
            // A later line that says something about another value, in words
            // first, is prose.
            "Toll: 9\n\n- Toll: not the 12 of the Sallow Quay column",
            "Toll: 9 tallies\n\nNotes:\n- Toll: the 2031 table's 8 is superseded",
        ] {
            assert!(holds(&c, yes), "{yes}");
        }
        for no in [
            "It costs 9 tallies.",
            "Toll: 12 tallies",
            "Toll: 9 or 12 tallies",
            "Toll: 9 (or 12)",
            "Toll: 12\nToll: 9",
            "Toll: 9\n\nOn second thoughts:\nToll: 12 tallies",
            "Toll: 9\n\n- Toll: 12, from the Sallow Quay column",
            "Toll: 9\n\n**Toll:** *12*",
            "Toll: nine, maybe twelve",
            "Tolls: 9",
            "The toll: 9",
            "Toll: 19",
            "Toll: 9 tallies, if the table is current",
            "Toll: 9 / 12 tallies",
            "Toll: 9 tallies / 12 on Sundays",
            "Toll: 9 (twelve with the 4 + 5 of Sundays)",
            "Toll: 9 (4 + 5), twelve on Sundays",
        ] {
            assert!(!holds(&c, no), "{no}");
        }
        assert_eq!(
            c.matcher_notes,
            [
                "the answer has a line \"Toll: ...\" giving 9",
                // In digits, then in words.
                "the first line \"Toll: ...\" gives no other number (a second value there is a hedge)",
                "no later line \"Toll: ...\" gives another number instead (a correction of the answer line)",
                "the first line \"Toll: ...\" gives no other number (a second value there is a hedge)",
                "no later line \"Toll: ...\" gives another number instead (a correction of the answer line)",
                "the first line \"Toll: ...\" offers its value without a doubt: none of \"maybe\", \"perhaps\", \
                 \"possibly\", \"probably\", \"might\", \"could\", \"may\", \"either\", \"unsure\", \"not sure\", \
                 \"uncertain\", \"unclear\", \"if\", \"unless\", \"otherwise\", and no \"or\" before another value (a \
                 value offered with a doubt is a hedge)",
                "the first line \"Toll: ...\" offers its value without a doubt: no second value joined to it by a \
                 slash (a value offered with a doubt is a hedge)",
            ]
        );
    }

    /// Every hedge word, on a line of every sort of value, makes it a
    /// hedge; an "or" before the line's own value again does not, and
    /// what the rest of the answer doubts is free. A line said in a
    /// sentence (`prose`) keeps its "or" and "might".
    #[test]
    fn a_value_offered_with_a_doubt_is_a_hedge_on_every_sort_of_line() {
        let request = "Lines `Toll:`, `Captain:`, `Code:` and `Sailing:`";
        let c = compiled(
            r#"
[[line]]
label = "Toll"
number = 9
unit = "tallies"

[[line]]
label = "Captain"
name = "Morwen Cale"
others = ["Piet Landry"]

[[line]]
label = "Code"
text = "OH-KR23M-4"

[[line]]
label = "Sailing"
date = "2031-10-09"
time = "19:30"
"#,
            request,
        );
        let good = "Toll: 9 tallies\nCaptain: Morwen Cale\nCode: OH-KR23M-4\nSailing: 9 October 2031, 19:30\n\n\
                    The rota might be stale, or perhaps not; maybe ask Piet Landry.";
        assert!(holds(&c, good));
        for (from, restated) in [
            ("9 tallies", "9 tallies, or nine tallies"),
            ("Morwen Cale", "Morwen Cale (or M. Cale)"),
            ("OH-KR23M-4", "OH-KR23M-4, or oh-kr23m-4"),
            ("19:30", "19:30, or 7.30 pm"),
        ] {
            assert!(holds(&c, &good.replacen(from, restated, 1)), "{restated}");
        }
        for from in ["9 tallies", "Morwen Cale", "OH-KR23M-4", "19:30"] {
            for hedge in spell::HEDGES.iter().chain(&["or"]) {
                for doubted in
                    [format!("{from} ({hedge} not)"), format!("{from}, {} the other one", hedge.to_uppercase())]
                {
                    assert!(!holds(&c, &good.replacen(from, &doubted, 1)), "{doubted}");
                }
            }
        }
        // Two values joined by a slash are a hedge; a slash inside a value,
        // or between two words, is not.
        for (from, joined) in [
            ("9 tallies", "9 / 12 tallies"),
            ("9 tallies", "9 tallies / 12 tallies"),
            ("9 tallies", "9 tallies / 12"),
            // Only a unit after the number makes it the value converted.
            ("9 tallies", "9 tallies / 12 last year"),
            ("9 tallies", "9 tallies / 12 in 2031"),
            ("Morwen Cale", "Morwen Cale / Piet Landry"),
            ("OH-KR23M-4", "OH-KR23M-4/3"),
            ("OH-KR23M-4", "OH-KR23M-4 / OH-KR23M-3"),
            ("19:30", "19:30 / 20:00"),
        ] {
            assert!(!holds(&c, &good.replacen(from, joined, 1)), "{joined}");
        }
        for (from, one) in
            [("9 tallies", "9 tallies (1/2 the 2030 rate)"), ("OH-KR23M-4", "OH-KR23M-4 (the 40 km/h code)")]
        {
            assert!(holds(&c, &good.replacen(from, one, 1)), "{one}");
        }
        // The value converted into another unit (a unit of measure) is the
        // same value; a number before any other word is a second value.
        let length = compiled("[[line]]\nlabel = \"Length\"\nnumber = 27.9\nunit = \"km\"\n", "a line `Length: ...`");
        for yes in ["Length: 27.9 km / 17.3 mi", "Length: 27.9 km/17.3 miles", "Length: 27.9 km (17.3 mi)"] {
            assert!(holds(&length, yes), "{yes}");
        }
        for no in ["Length: 27.9 km / 31.2 on the old survey", "Length: 27.9 km / 31.2 km", "Length: 27.9 km / 31.2"] {
            assert!(!holds(&length, no), "{no}");
        }
        // A later line so labelled in a quote cites a note: no correction.
        let plate = compiled("[[line]]\nlabel = \"Plate scale\"\nnumber = 0.4098\n", "a line `Plate scale: ...`");
        assert!(holds(
            &plate,
            "Plate scale: 0.4098\n\nThe CAM-2 report said:\n> Plate scale: 0.4105, measured in June"
        ));
        assert!(!holds(&plate, "Plate scale: 0.4098\n\nPlate scale: 0.4105"));
        // What the value is made of is not a second value.
        let packets = compiled("[[line]]\nlabel = \"Packets\"\nnumber = 19\n", "a line `Packets: ...`");
        assert!(holds(&packets, "Packets: 19 packets of 25 seeds"));
        assert!(!holds(&packets, "Packets: 19 packets, 24 requested"));
        // "May" beside a day is the month, not a hedge.
        let time = compiled("[[line]]\nlabel = \"First sailing\"\ntime = \"07:10\"\n", "a line `First sailing: ...`");
        for yes in [
            "First sailing: 07:10 (from 26 May 2031)",
            "First sailing: 07:10, timetable of May 26",
            "First sailing: 07:10 (since May)",
            "First sailing: 07:10, the timetable of late May",
            // In a list or span of months (round 11 beat the day rule so).
            "First sailing: 07:10 (Q2 2031: April, May and June)",
            "First sailing: 07:10 (May to July)",
            "First sailing: 07:10 (Apr/May)",
            "First sailing: 07:10 (March\u{2013}May)",
            "First sailing: 07:10 (May, June, July)",
        ] {
            assert!(holds(&time, yes), "{yes}");
        }
        for no in [
            "First sailing: 07:10, though it may change",
            "First sailing: 07:10, or it may be 07:40",
            "First sailing: 07:10 (the March timetable may differ)",
            "First sailing: 07:10; in June it may be later",
            // Words that start like a month are no months.
            "First sailing: 07:10, though it may decrease",
            "First sailing: 07:10 (the decision may go to the board)",
            "First sailing: 07:10 (as marked; may be revised)",
        ] {
            assert!(!holds(&time, no), "{no}");
        }
        let prose =
            compiled("[[line]]\nlabel = \"Reason\"\nprose = true\ntext = \"no mains\"\n", "a line `Reason: ...`");
        assert!(holds(&prose, "Reason: there are no mains, so it might run on 24 V or on the battery"));
        assert_eq!(prose.output_matchers.len(), 1, "no hedge matcher on a sentence: {:?}", prose.matcher_notes);
    }

    #[test]
    fn either_holds_when_one_way_does() {
        let c = compiled(
            "[[either]]\nstates = [[{ time = \"10:00\" }, { time = \"17:45\" }]]\nasks = true\nwhy = \"gives both calls or asks\"\n",
            "",
        );
        assert_eq!(c.matcher_notes, ["the answer gives both calls or asks"]);
        for yes in ["Ten o'clock for one, a quarter to six for the other.", "Which Teague do you mean?"] {
            assert!(holds(&c, yes), "{yes}");
        }
        for no in ["Teague is called at 10:00.", "He is due at 17:45.", "See the sheet at eval-scratch/a?b.md"] {
            assert!(!holds(&c, no), "{no}");
        }
        let cx = Context { user_message: "", fixture: &no_fixture };
        let errors =
            compile(&parse("[[either]]\nstates = [[{ verbatim = \"x\" }]]\nwhy = \" \"\n").unwrap(), &cx).unwrap_err();
        for e in ["either[0].why", "either[0]: give at least two ways", "either[0].states[0][0].verbatim"] {
            assert!(errors.iter().any(|x| x.starts_with(e)), "{e}: {errors:?}");
        }
    }

    #[test]
    fn lines_of_several_kinds_texts_with_others_and_units() {
        let request = "Lines `Carrow Point:`, `First performance:` and `Venue:`";
        let c = compiled(
            r#"
[[line]]
label = "Carrow Point"
text = "Fl(2) W 15s"
number = 16
unit = ["M", "NM", "nautical mile", "sea mile", "mile"]
others = ["Fl W", "20s"]

[[line]]
label = "First performance"
date = "2031-10-09"
time = "19:30"

[[line]]
label = "Venue"
text = ["Pellow Quay Playhouse", "the Playhouse"]
others = ["Town Hall"]
"#,
            request,
        );
        let good = "Carrow Point: Fl(2) W 15s, 16 M\nFirst performance (date and time): Thursday 9th October 2031, 7.30 pm\nVenue: **Pellow Quay Playhouse**";
        assert!(holds(&c, good));
        for (from, to) in [
            ("16 M", "18 M"),
            ("16 M", "16 M (18 M in notice 14)"),
            ("15s", "20s"),
            ("7.30 pm", "7.30 pm (doors 7 pm)"),
            ("2031", "2030"),
            ("Pellow Quay Playhouse**", "Pellow Quay Playhouse** or the Town Hall"),
        ] {
            assert!(!holds(&c, &good.replace(from, to)), "{to}");
        }
        assert!(holds(&c, &good.replace("Pellow Quay Playhouse", "the Playhouse, Pellow")));
    }

    /// Round 11's correct answers that the line rules read wrongly: a list
    /// of `key: detail` items below an empty label line, a value that
    /// leaves out the word its label already says, and a question asked in
    /// the imperative.
    #[test]
    fn keyed_list_items_a_label_said_once_and_a_question_without_its_mark() {
        let request = "Start with a line `Moved: ...` and a line `Drawer: ...`";
        let c = compiled(
            r#"
[[line]]
label = "Moved"
texts = ["0412", "0419"]
others = ["0433"]

[[line]]
label = "Drawer"
text = ["C-14", "drawer 14, cabinet C"]
others = ["C-41"]
"#,
            request,
        );
        let keyed = "Moved:\n- QSV-0412: Marsh woundwort (42%)\n1. QSV-0419: Meadow clary\n\nDrawer: C-14";
        assert!(holds(&c, keyed));
        assert!(holds(&c, "Moved:\n- 0412\n- 0419\n- Not moved: 0433 (50%)\nDrawer: C-14"));
        let fix = compiled(
            "[[line]]\nlabel = \"Fix\"\nprose = true\ntexts = [\"purge --tokens\", \"restart\"]\n",
            "a line `Fix: ...`",
        );
        let steps = "Fix:\n1. Correct the clock: turn on automatic time.\n2. Purge the cached tokens: `lumenctl cache purge --tokens`\n3. Restart the sync daemon: `lumenctl daemon restart`";
        assert!(holds(&fix, steps));
        for wrong in [
            // A key of one or two words is a category, another line.
            "Moved:\n- Moved: none\n- Kept: 0412, 0419\nDrawer: C-14",
            "Moved:\n- Kept: 0412\n- Moved: 0419\nDrawer: C-14",
            "Moved:\n- **Not moved**: 0412, 0419\nDrawer: C-14",
            // A keyed item in the list is still the line's.
            "Moved:\n- QSV-0412: Marsh woundwort\n- QSV-0419: Meadow clary\n- QSV-0433: Sea kale\nDrawer: C-14",
            // The items stop at a line that is not an item.
            "Moved:\n- QSV-0412: Marsh woundwort\nKept: 0419\nDrawer: C-14",
        ] {
            assert!(!holds(&c, wrong), "{wrong}");
        }
        for (drawer, ok) in [
            ("14, cabinet C", true),
            ("drawer 14, cabinet C", true),
            ("14", false),
            ("41, cabinet C", false),
            ("14, cabinet C (not C-41)", false),
        ] {
            assert_eq!(holds(&c, &format!("Moved: 0412, 0419\nDrawer: {drawer}")), ok, "{drawer}");
        }
        assert_eq!(without_label("Drawer", &["drawer 14".into()]), vec!["drawer 14".to_string()]);
        assert_eq!(without_label("Gate", &["Gate A".into()]), vec!["Gate A".to_string()]);
        assert_eq!(without_label("Gate", &["gate 4B".into()]), ["gate 4B", "4B"]);
        assert_eq!(without_label("Étage", &["étage trois".into(), "ét".into()]), ["étage trois", "ét", "trois"]);

        let asks = compiled(
            "[[either]]\nstates = [[{ time = \"10:00\" }, { time = \"17:45\" }]]\nasks = true\nwhy = \"gives both or asks\"\n",
            "Which Teague?",
        );
        for yes in [
            "There are two Teagues: which one do you mean?",
            "There are two Teagues, so tell me which Teague it is and I'll give you the time.",
            "Let me know which of the two you mean.",
            "Please confirm which one.",
            "Teague Olabode at 10:00, Morwenna Teague at 17:45.",
        ] {
            assert!(holds(&asks, yes), "{yes}");
        }
        for no in
            ["Teague is called at 10:00.", "Let me know if you need anything else. Which is fine.", "Tell me more."]
        {
            assert!(!holds(&asks, no), "{no}");
        }
    }

    #[test]
    fn a_value_not_given_is_said_so_with_no_value_on_the_line() {
        let c = compiled("[[line]]\nlabel = \"Fee\"\nnot_given = \"number\"\n", "a line `Fee: ...`");
        // Whether the words say the value is missing is the judge's to read.
        for yes in
            ["Fee: not in the notes", "- **Fee:** the notes don't give one", "Fee: unknown (ask the venue)", "Fee: TBC"]
        {
            assert!(holds(&c, yes), "{yes}");
        }
        for no in ["Fee: 60% of the box office", "Fee: not in the notes, probably 500 marks", "Fee: 5"] {
            assert!(!holds(&c, no), "{no}");
        }
    }

    #[test]
    fn states_never_raw_and_judge() {
        let c = compiled(
            r#"
states = [{ text = "Heron" }, { number = "1,095", unit = "litres" }, { date = "2031-02-03" }, { verbatim = "LW-04482 fix: " }]
never = [{ number = 5826 }, { verbatim = "Marsh-Lowe" }]

[[raw]]
regex = '\bC-?14\b'
why = "names drawer C-14"

[judge]
criteria = "Says the Heron."
why = "whether a second ferry is offered as the answer"
"#,
            "",
        );
        assert_eq!(c.output_matchers.len(), 8);
        assert_eq!(c.matcher_notes.len(), 8);
        assert!(matches!(c.output_matchers[3], Matcher::Contains { .. }));
        assert!(matches!(c.output_matchers[7], Matcher::Judge { .. }));
        let good =
            "The heron took on one thousand and ninety-five litres; 3rd of February. LW-04482 fix: x. Drawer C14.";
        assert!(holds(&c, good));
        assert!(!holds(&c, &good.replace("litres", "gallons")));
        assert!(!holds(&c, &format!("{good} Code 5 826.")));
        assert!(!holds(&c, &format!("{good} Marsh-Lowe")));
        assert!(holds(&c, &format!("{good} marsh-lowe")));
        // A date stated anywhere may be a day in a list of days of its month.
        for listed in ["1 and 3 February", "February 1 and 3", "Feb 1, 2 & 3rd, 2031"] {
            assert!(holds(&c, &good.replace("3rd of February", listed)), "{listed}");
        }
        for not in ["1 and 3 March", "February 1 and 3 volunteers", "February 1 and 3, 2030"] {
            assert!(!holds(&c, &good.replace("3rd of February", not)), "{not}");
        }
        assert_eq!(c.judge_only.as_deref(), Some("whether a second ferry is offered as the answer"));
        assert_eq!(c.matcher_notes[4], "the answer never mentions 5826");
        assert_eq!(c.matcher_notes[6], "names drawer C-14");
    }

    fn errors(toml: &str, request: &str) -> Vec<String> {
        let cx = Context { user_message: request, fixture: &no_fixture };
        compile(&parse(toml).unwrap(), &cx).unwrap_err()
    }

    #[test]
    fn every_problem_names_its_field() {
        assert!(errors("states = [{ text = \"a\", number = 1 }]", "")[0].starts_with("states[0]: give exactly one of"));
        let e = errors(
            r#"
[[line]]
label = "Toll"
number = "9a"

[[line]]
label = "Fee"

[[line]]
label = "Seats"
number = 1
not_given = "number"

[[raw]]
regex = "(broken"
why = ""
"#,
            "Start with `Toll:` and `Fee:`.",
        );
        for needle in [
            "line[0].number: `9a` is not a number",
            "line[1]: the line gives no value",
            "line[2].label: the request never asks for a line `Seats: ...`",
            "line[2].not_given: a line either gives values or says none is given",
            "raw[0].why: say what the pattern checks",
            "raw[0].regex: invalid regular expression",
        ] {
            assert!(e.iter().any(|x| x.starts_with(needle)), "{needle}\n{e:#?}");
        }
        let long = format!("[[raw]]\nregex = '{}'\nwhy = \"x\"\n", "a".repeat(RAW_LIMIT + 1));
        assert!(errors(&long, "")[0].contains("a pattern written by hand is at most 200"));
        assert!(errors("", "")[0].starts_with("the source checks nothing"));
        assert!(parse("[[line]]\nlable = \"x\"\n").unwrap_err().contains("unknown field `lable`"));
        assert!(errors("[vault]\nunchanged = [\"../x.md\"]\n", "")[0].contains("is not a file path inside the vault"));
    }

    #[test]
    fn hostile_sources_are_errors_never_panics() {
        let nasty = [
            "[[line]]\nlabel = \"(?<x\"\ntext = \"\\\\\"\n",
            "[[line]]\nlabel = \"T\"\nnumber = 99999999999999999999999\n",
            "[[line]]\nlabel = \"T\"\nnumber = -5\nunit = []\n",
            "[[line]]\nlabel = \"T\"\nnumber = 1e300\n",
            "[[line]]\nlabel = \"T\"\ntime = \"25:99\"\ndate = \"2031-13-40\"\n",
            "[[line]]\nlabel = \"T\"\ntext = []\nothers = [\"\"]\n",
            "[[line]]\nlabel = \"T\"\nnot_given = \"text\"\n",
            "states = [{}]\nnever = [{ unit = \"kg\" }]\n",
            "[vault]\nmoved = [{ from = \"/x\", to = \"..\" }]\nexists = [\"\"]\n",
            "[[vault.note]]\npath = \"a.md\"\ntext = \"x\"\nedit = [{ from = \"\", to = [] }]\n",
            "[[vault.note]]\npath = \"a.md\"\nfrontmatter = { k = 1970-01-01T00:00:00Z }\n",
            "[judge]\ncriteria = \"\"\nwhy = \"\"\n",
        ];
        for (i, toml) in nasty.iter().enumerate() {
            match parse(toml) {
                Err(e) => assert!(!e.is_empty(), "{i}"),
                Ok(source) => {
                    let cx = Context { user_message: "T: x", fixture: &fixture };
                    let _ = compile(&source, &cx);
                }
            }
        }
        // A label is text, never a pattern.
        let c = compiled("[[line]]\nlabel = \"a.b (c)\"\nnumber = 1\n", "a line `a.b (c): <n>`");
        assert!(holds(&c, "a.b (c): 1") && !holds(&c, "axb (c): 1"));
    }

    fn fixture(path: &str) -> Result<String, String> {
        match path {
            "crew/contacts.md" => {
                Ok("# Crew\n\n- Bertil Maun: lock house\n- Ada Maun (no relation to Bertil)\n".into())
            }
            "hives/s4.md" => Ok("---\nhive: S4\nframes: 12\n---\n# S4\n\nGood stores.\n".into()),
            "log.md" => Ok("# Log\n\n- one\n".into()),
            p if p.ends_with(".md") => Ok("x\n".into()),
            p => Err(format!("no fixture file {p}")),
        }
    }

    fn vault(toml: &str) -> Compiled {
        let cx = Context { user_message: "", fixture: &fixture };
        compile(&parse(toml).unwrap(), &cx).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn file_holds(c: &Compiled, i: usize, text: &str) -> bool {
        let VaultAssertion::FileMatches { value, flags, .. } = &c.vault_assertions[i] else { panic!() };
        crate::score::matchers::regex(value, flags.as_deref(), text, BUDGET).0
    }

    #[test]
    fn vault_rules_compile_to_whole_note_checks_and_nothing_else_changed() {
        let c = vault(
            r#"
[vault]
unchanged = ["other.md"]
moved = [{ from = "a.md", to = "old/a.md" }]

[[vault.note]]
path = "crew/contacts.md"
edit = [{ from = "Bertil Maun", to = "Bertil Aston-Maun" }, { from = "to Bertil)", to = ["to Bertil)", "to Bertil Aston-Maun)"] }]

[[vault.note]]
path = "log.md"
appended = ["- two"]

[[vault.note]]
path = "/gemini-scribe/AGENTS.md"
contains = ["Desk"]
lacks = ["team"]
"#,
        );
        let kinds: Vec<&str> = c.vault_assertions.iter().map(VaultAssertion::type_name).collect();
        assert_eq!(
            kinds,
            [
                "fileAbsent",
                "fileUnchanged",
                "fileMatches",
                "fileMatches",
                "fileContains",
                "fileLacks",
                "fileUnchanged",
                "nothingElseChanged"
            ]
        );
        let edited = "# Crew\n\n- Bertil Aston-Maun: lock house\n- Ada Maun (no relation to Bertil)\n";
        assert!(file_holds(&c, 2, edited) && file_holds(&c, 2, &edited.replace("\n", "\r\n")));
        assert!(file_holds(&c, 2, &edited.replace("to Bertil)", "to Bertil Aston-Maun)")));
        assert!(!file_holds(&c, 2, &edited.replace("lock house", "lock-house")));
        assert!(!file_holds(&c, 2, &edited.replace("Ada Maun", "Ada Aston-Maun")));
        assert!(file_holds(&c, 3, "# Log\n\n- one\n- two\n") && file_holds(&c, 3, "# Log\n\n- one\n\n- two"));
        assert!(!file_holds(&c, 3, "# Log\n\n- two\n- one\n"));
        let VaultAssertion::NothingElseChanged { except } = &c.vault_assertions[7] else { panic!() };
        assert_eq!(
            except,
            &[
                "eval-scratch/a.md",
                "eval-scratch/old/a.md",
                "eval-scratch/crew/contacts.md",
                "eval-scratch/log.md",
                "gemini-scribe/AGENTS.md"
            ]
        );
        assert_eq!(c.assertion_notes.len(), c.vault_assertions.len());
        assert!(
            c.assertion_notes[2].contains("\"Bertil Maun\" becomes \"Bertil Aston-Maun\""),
            "{}",
            c.assertion_notes[2]
        );
    }

    #[test]
    fn frontmatter_rules_keep_every_other_key_and_the_body() {
        let c = vault("[[vault.note]]\npath = \"hives/s4.md\"\nfrontmatter = { frames = 14, treated = false }\n");
        let keys: Vec<(String, Json)> = c
            .vault_assertions
            .iter()
            .filter_map(|a| match a {
                VaultAssertion::FrontmatterEquals { key, value, .. } => Some((key.clone(), value.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            keys,
            [
                ("hive".into(), Json::from("S4")),
                ("frames".into(), Json::from(14)),
                ("treated".into(), Json::from(false))
            ]
        );
        // The body's check, then the default "nothing else changed".
        let body = c.vault_assertions.len() - 2;
        assert!(matches!(c.vault_assertions[body + 1], VaultAssertion::NothingElseChanged { .. }));
        assert!(file_holds(&c, body, "---\nhive: S4\nframes: 14\ntreated: false\n---\n# S4\n\nGood stores.\n"));
        assert!(!file_holds(&c, body, "---\nhive: S4\nframes: 14\n---\n# S4\n\nGood stores. Treated.\n"));
        let cx = Context { user_message: "", fixture: &fixture };
        // The body follows the block's first closing line: text put before
        // the body with a rule of its own (a second block, a paragraph) is
        // not the body as it was.
        for no in [
            "---\nhive: S4\nframes: 14\ntreated: false\n---\n---\nhive: S4\nframes: 12\n---\n# S4\n\nGood stores.\n",
            "---\nhive: S4\nframes: 14\ntreated: false\n---\nTreated on 3 May.\n\n---\n# S4\n\nGood stores.\n",
        ] {
            assert!(!file_holds(&c, body, no), "{no}");
        }
        let e = compile(
            &parse("[[vault.note]]\npath = \"gone.txt\"\nedit = [{ from = \"a\", to = \"b\" }]\n").unwrap(),
            &cx,
        );
        assert_eq!(e.unwrap_err()[0], "vault.note[0].path: no fixture file gone.txt");
    }

    /// Nothing else may change unless a source says otherwise: every
    /// request is made under "touch nothing else".
    #[test]
    fn nothing_else_changes_is_the_default_and_can_be_turned_off() {
        let on = vault("states = [{ number = 9 }]\n");
        assert!(
            matches!(on.vault_assertions[..], [VaultAssertion::NothingElseChanged { ref except }] if except.is_empty())
        );
        let off = vault("states = [{ number = 9 }]\n\n[vault]\nnothing_else_changes = false\n");
        assert!(off.vault_assertions.is_empty());
        // The default alone checks nothing an idle agent would not pass.
        let cx = Context { user_message: "", fixture: &fixture };
        let e = compile(&parse("[vault]\nunchanged = []\n").unwrap(), &cx).unwrap_err();
        assert!(e[0].starts_with("the source checks nothing"), "{e:?}");
    }

    /// An appended line's own part in the shape a house style sets.
    #[test]
    fn appended_rest_holds_its_length_case_and_last_character() {
        let c = vault(
            "[[vault.note]]\npath = \"log.md\"\nappended = [{ starts = \"- fix: \", rest = { at_most = 20, lower_case = true, not_ending = \".\" } }]\n",
        );
        for yes in ["# Log\n\n- one\n- fix: stop the retry loop\n", "# Log\n\n- one\n- fix: add 2 caps"] {
            assert!(file_holds(&c, 0, yes), "{yes}");
        }
        for no in [
            "# Log\n\n- one\n- fix: Stop the retry loop\n",
            "# Log\n\n- one\n- fix: stop the retry loop.\n",
            "# Log\n\n- one\n- fix: stop the retry loop forever\n",
            "# Log\n\n- one\n- fix: \n",
        ] {
            assert!(!file_holds(&c, 0, no), "{no}");
        }
        assert_eq!(
            c.assertion_notes[0],
            "eval-scratch/log.md is as it was with one line added at its end (after \"- fix:\": at most 20 \
             characters, starting in lower case, not ending in \".\")"
        );
    }

    /// "One line per show": a second line naming a show is an extra entry.
    #[test]
    fn one_line_each_finds_a_second_line_naming_a_text() {
        let c = vault(
            "[[vault.note]]\npath = \"log.md\"\none_line_each = true\nlines = [{ text = \"Evening Reeds\", time = \"19:30\" }, { text = \"Marshlight\", time = \"20:00\" }]\n",
        );
        let (reeds, marsh) = (2, 3);
        let good = "# Report\n\n- Evening Reeds, 19:30\n- Marshlight, 20:00\n";
        assert!(file_holds(&c, reeds, good) && file_holds(&c, marsh, good));
        let extra = format!("{good}- evening reeds (repeat), 23:00\n");
        assert!(!file_holds(&c, reeds, &extra) && file_holds(&c, marsh, &extra));
        // A sentence naming the shows without a time is no entry.
        let intro =
            "# Report\n\nThe outage hit Evening Reeds and Marshlight.\n\n- Evening Reeds, 19:30\n- Marshlight, 20:00\n";
        assert!(file_holds(&c, reeds, intro) && file_holds(&c, marsh, intro));
        let timed_intro = "# Report\n\nOff air 19:00 to 23:50: Evening Reeds and Marshlight.\n\n- Evening Reeds, 19:30\n- Marshlight, 20:00\n";
        assert!(file_holds(&c, reeds, timed_intro) && file_holds(&c, marsh, timed_intro));
        let twice = "# Report\n\n- Evening Reeds, 19:30\n- Marshlight, 20:00\n- Evening Reeds, 7.30 pm\n";
        assert!(!file_holds(&c, reeds, twice));
        assert_eq!(
            c.assertion_notes[reeds],
            "eval-scratch/log.md names \"Evening Reeds\" on one line only with a time"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 128, ..Default::default() })]
        /// Below an empty answer line, a list of `key: detail` items is the
        /// line's value, whatever the marker, the keys and the details: it
        /// gives the values its items give, and an item giving another
        /// candidate is a second value on the line.
        #[test]
        fn a_keyed_list_below_an_empty_line_is_its_value(
            marker in proptest::sample::select(&["-", "*", "1.", "2)"][..]),
            // (Details without hedge words: "if" on the line is a hedge.)
            details in proptest::collection::vec(
                proptest::sample::select(&["", "Marsh woundwort", "latest test 42%", "Meadow clary (47%)", "fen violet, 31 %"][..]),
                2..5,
            ),
            other_at in proptest::option::of(0usize..5),
            emphasis in proptest::sample::select(&["", "**"][..]),
        ) {
            let c = compiled(
                "[[line]]\nlabel = \"Moved\"\ntexts = [\"0412\", \"0419\"]\nothers = [\"0433\"]\n",
                "Start with a line `Moved: ...`",
            );
            let codes = ["QSV-0412", "QSV-0419", "QSV-0501", "QSV-0502", "QSV-0503"];
            let mut items: Vec<String> = details
                .iter()
                .zip(codes)
                .map(|(d, code)| format!("{marker} {emphasis}{code}{emphasis}: {d}"))
                .collect();
            let other = other_at.map(|i| i.min(items.len()));
            if let Some(i) = other {
                items.insert(i, format!("{marker} QSV-0433: kept"));
            }
            let answer = format!("{emphasis}Moved:{emphasis}\n{}\n\nNothing else changed.", items.join("\n"));
            proptest::prop_assert_eq!(holds(&c, &answer), other.is_none(), "{}", answer);
        }

        /// Whatever the body, the body check holds for the note with its
        /// block rewritten and fails once anything is put between the block
        /// and the body, a line of `---` included.
        #[test]
        fn the_body_check_reads_the_body_after_the_first_block(
            body in proptest::collection::vec("[a-z #-]{0,12}", 0..5),
            inserted in proptest::collection::vec("[a-z #-]{0,12}|---", 1..4),
        ) {
            let body = body.join("\n") + "\n";
            let original = format!("---\nhive: S4\nframes: 12\n---\n{body}");
            let fixture = move |_: &str| -> Result<String, String> { Ok(original.clone()) };
            let cx = Context { user_message: "", fixture: &fixture };
            let c = compile(&parse("[[vault.note]]\npath = \"s4.md\"\nfrontmatter = { frames = 14 }\n").unwrap(), &cx)
                .unwrap();
            let check = c.assertion_notes.iter().position(|n| n.ends_with("the text after the frontmatter is as it was")).unwrap();
            let rewritten = format!("---\nhive: S4\nframes: 14\n---\n{body}");
            proptest::prop_assert!(file_holds(&c, check, &rewritten));
            let extra = inserted.join("\n") + "\n";
            if extra.trim().is_empty() {
                return Ok(());
            }
            let changed = format!("---\nhive: S4\nframes: 14\n---\n{extra}{body}");
            proptest::prop_assert!(!file_holds(&c, check, &changed), "{changed:?}");
        }
    }

    /// On a line of several texts a slash may separate the items; one
    /// before another value is still a hedge.
    #[test]
    fn a_slash_separates_a_lists_items_and_hedges_before_another_value() {
        let c = compiled(
            "[[line]]\nlabel = \"Moved\"\ntexts = [[\"0412\", \"Marsh woundwort\"], [\"0419\", \"Meadow clary\"]]\nothers = [\"0423\"]\n",
            "Start with a line `Moved: <accessions>`",
        );
        for yes in ["Moved: 0412 / 0419", "Moved: QSV-0412 / QSV-0419", "Moved: Marsh woundwort/Meadow clary"] {
            assert!(holds(&c, yes), "{yes}");
        }
        for no in ["Moved: 0412 / 0419 / 0427", "Moved: 0412 / 0419 / maybe 0431"] {
            assert!(!holds(&c, no), "{no}");
        }
    }
}
