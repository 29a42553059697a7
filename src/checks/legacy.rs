//! The eight templates the suite's hand-copied regexes were instances of,
//! before checks were compiled from a source (`checks::compile`). 103 of
//! the 229 regex matchers our tasks carried were byte-exact copies of these
//! with the author's values filled in: a label (`L`), the values a clause
//! must not assert (`B`), the values it must assert (`G`) and the words that
//! excused a value in its clause (`E`).
//!
//! [`decompile`] reads such a pattern back into its template and values, and
//! [`Template::fill`] writes it again byte for byte. The compiler no longer
//! writes these (their word lists are what the verdicts issue retired); this
//! module is how an old pattern, in a result file or a task from before, is
//! still explained in words.

/// One template: literal text with holes written `{L}`, `{B}`, `{E}` or `{G}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    pub name: &'static str,
    text: &'static str,
}

/// The values filled into a template's holes, in the order they first appear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decompiled {
    pub template: Template,
    pub holes: Vec<(char, String)>,
}

impl Decompiled {
    pub fn hole(&self, name: char) -> Option<&str> {
        self.holes.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

/// The "hedge" pattern, the same in every task that carried it.
const HEDGE: &str = r"^(?![\s\S]*(?:\beither\b[^.\n]{0,80}\bor\b|\bcould be either\b|\btwo possible\b|\bone of (?:these|the) two\b|\bdepending on (?:which|whether|how)\b|\bwhether (?:those|they|it|he|she) counts?\b|\b\d+(?:[.,]\d+)?\s*\(\s*or\s+\d+(?:[.,]\d+)?\s*\)|\bis (?:\d+(?:[.,]\d+)?) or (?:\d+(?:[.,]\d+)?)\b|\bor possibly\b|\bnot (?:entirely )?sure (?:which|whether)\b))";

pub const TEMPLATES: [Template; 8] = [
    Template { name: "hedge", text: HEDGE },
    Template {
        name: "clause-asserts",
        text: r"(?:^|[.;!?\n(,])(?=(?:[^.;!?\n(,]|[.,]\d){0,200}?(?:{G}))(?:(?!{E})(?:[^.;!?\n(,]|[.,]\d)){0,200}?(?:{G})",
    },
    Template {
        name: "no-clause-asserts",
        text: r"^(?!(?:[^.;!?\n)]*[.;!?\n)])*?(?=[^.;!?\n]{0,300}?(?:{B}))(?:(?!{E})(?:[^.;!?()\n]|\.\d)|\([^()\n]{0,300}\)){0,300}?(?:(?:{B})|\((?:(?!{E})[^()\n]){0,300}?(?:{B})(?:(?!{E})[^()\n]){0,300}\))(?:(?!{E})(?:[^.;!?()\n]|\.\d)|\([^()\n]{0,300}\)){0,300}(?:[.;!?\n)]|$))",
    },
    Template {
        name: "no-clause-asserts, outside parentheses",
        text: r"^(?!(?:[^.;!?\n)]*[.;!?\n)])*?(?=[^.;!?\n]{0,300}?(?:{B}))(?:(?!{E})(?:[^.;!?()\n]|\.\d)|\([^()\n]{0,300}\)){0,300}?(?:{B})(?:(?!{E})(?:[^.;!?()\n]|\.\d)|\([^()\n]{0,300}\)){0,300}(?:[.;!?\n)]|$))",
    },
    Template {
        name: "no-clause-asserts, inside parentheses",
        text: r"^(?!(?:[^.;!?\n]*[.;!?\n])*?(?=[^.;!?\n]{0,300}?\([^()\n]{0,300}?(?:{B}))(?:(?!{E})(?:[^.;!?\n]|\.\d)){0,300}?(?:{B})(?:(?!{E})(?:[^.;!?\n]|\.\d)){0,300}(?:[.;!?\n]|$))",
    },
    Template {
        name: "labelled-line-asserts-no",
        text: r"^(?!(?:[^\n]*\n)*?[ \t>#*_`-]*{L}[^:\n]{0,40}:(?=[^\n]{0,300}?(?:{B}))(?:(?:[^()\n]|\([^()\n]{0,300}\)){0,300}?(?:[.;!?:\u2014\u2013]|\([^()\n]{0,300}\)))??(?:(?!{E})(?:[^.;!?()\n]|\.\d)|\([^()\n]{0,300}\)){0,300}?(?:(?:{B})|\((?:(?!{E})[^()\n]){0,300}?(?:{B})(?:(?!{E})[^()\n]){0,300}\))(?:(?!{E})(?:[^.;!?()\n]|\.\d)|\([^()\n]{0,300}\)){0,300}(?:[.;!?)\n]|$))",
    },
    Template {
        name: "labelled-line-asserts-no, outside parentheses",
        text: r"^(?!(?:[^\n]*\n)*?[ \t>#*_`-]*{L}[^:\n]{0,40}:(?=[^\n]{0,300}?(?:{B}))(?:(?:[^()\n]|\([^()\n]{0,300}\)){0,300}?(?:[.;!?:\u2014\u2013]|\([^()\n]{0,300}\)))??(?:(?!{E})(?:[^.;!?()\n]|\.\d)|\([^()\n]{0,300}\)){0,300}?(?:{B})(?:(?!{E})(?:[^.;!?()\n]|\.\d)|\([^()\n]{0,300}\)){0,300}(?:[.;!?)\n]|$))",
    },
    Template {
        name: "labelled-line-asserts-no, inside parentheses",
        text: r"^(?!(?:[^\n]*\n)*?[ \t>#*_`-]*{L}[^:\n]{0,40}:(?=[^\n]{0,300}?\([^()\n]{0,300}?(?:{B}))(?:(?:[^()\n]|\([^()\n]{0,300}\)){0,300}?(?:[.;!?:\u2014\u2013]|\([^()\n]{0,300}\)))??(?:(?!{E})(?:[^.;!?\n]|\.\d)){0,300}?(?:{B})(?:(?!{E})(?:[^.;!?\n]|\.\d)){0,300}(?:[.;!?\n]|$))",
    },
];

/// A piece of a template: literal text or a named hole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'t> {
    Text(&'t str),
    Hole(char),
}

/// A hole is `{X}` with X an uppercase letter; `{0,300}` is literal text.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' && i + 2 < bytes.len() && bytes[i + 1].is_ascii_uppercase() && bytes[i + 2] == b'}' {
            if start < i {
                out.push(Piece::Text(&text[start..i]));
            }
            out.push(Piece::Hole(bytes[i + 1] as char));
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < text.len() {
        out.push(Piece::Text(&text[start..]));
    }
    out
}

impl Template {
    /// The template with every hole filled; `None` if a hole has no value.
    pub fn fill(&self, holes: &[(char, String)]) -> Option<String> {
        let mut out = String::with_capacity(self.text.len());
        for piece in pieces(self.text) {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Hole(name) => out.push_str(&holes.iter().find(|(n, _)| *n == name)?.1),
            }
        }
        Some(out)
    }

    /// The hole values that make this template `pattern`, if any.
    fn read(&self, pattern: &str) -> Option<Vec<(char, String)>> {
        let pieces = pieces(self.text);
        let mut holes = Vec::new();
        read_from(&pieces, pattern, &mut holes).then_some(holes)
    }
}

/// Match `pieces` against all of `rest`, binding holes; a hole seen before
/// must repeat its value, a new one takes at least one character.
fn read_from(pieces: &[Piece<'_>], rest: &str, holes: &mut Vec<(char, String)>) -> bool {
    let Some((first, more)) = pieces.split_first() else { return rest.is_empty() };
    match *first {
        Piece::Text(t) => rest.strip_prefix(t).is_some_and(|r| read_from(more, r, holes)),
        Piece::Hole(name) => {
            if let Some((_, value)) = holes.iter().find(|(n, _)| *n == name) {
                let value = value.clone();
                return rest.strip_prefix(value.as_str()).is_some_and(|r| read_from(more, r, holes));
            }
            // Try every end for the hole, shortest first, where the next
            // literal piece begins (or the end of the pattern).
            let next = more.first().and_then(|p| match p {
                Piece::Text(t) => Some(*t),
                Piece::Hole(_) => None,
            });
            let ends: Vec<usize> = match next {
                Some(t) => rest.match_indices(t).map(|(i, _)| i).filter(|&i| i > 0).collect(),
                None if more.is_empty() => vec![rest.len()],
                None => rest.char_indices().map(|(i, _)| i).filter(|&i| i > 0).collect(),
            };
            for end in ends {
                holes.push((name, rest[..end].to_string()));
                if read_from(more, &rest[end..], holes) {
                    return true;
                }
                holes.pop();
            }
            false
        }
    }
}

/// The template `pattern` is an instance of, with its values; `None` for a
/// pattern written by hand or by the compiler.
pub fn decompile(pattern: &str) -> Option<Decompiled> {
    TEMPLATES.iter().find_map(|t| {
        let holes = t.read(pattern)?;
        // Reading succeeds only on a byte-exact instance; filling must agree.
        (t.fill(&holes).as_deref() == Some(pattern)).then_some(Decompiled { template: *t, holes })
    })
}

/// A short account of a legacy pattern in words.
pub fn explain(d: &Decompiled) -> String {
    let h = |c| d.hole(c).unwrap_or("");
    match d.template.name {
        "hedge" => "the answer uses none of a fixed list of hedging phrases (\"either ... or\", \"not sure which\"...)"
            .to_string(),
        "clause-asserts" => format!("some clause states /{}/ without any of the words /{}/ before it", h('G'), h('E')),
        name if name.starts_with("labelled-line") => format!(
            "the line labelled \"{}\" does not state /{}/ unless its clause has one of the words /{}/",
            h('L'),
            h('B'),
            h('E')
        ),
        _ => format!("no clause states /{}/ unless it has one of the words /{}/", h('B'), h('E')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Recorded {
        task: String,
        matcher: usize,
        value: String,
    }

    /// The 103 templated patterns of the suite as it was before its checks
    /// were compiled (recorded from `evals/tasks` at that commit).
    fn recorded() -> Vec<Recorded> {
        serde_json::from_str(include_str!("testdata/templated-patterns.json")).unwrap()
    }

    #[test]
    fn the_103_templated_patterns_decompile_and_recompile_byte_for_byte() {
        let patterns = recorded();
        assert_eq!(patterns.len(), 103);
        let mut per_template = std::collections::BTreeMap::new();
        for p in &patterns {
            let d = decompile(&p.value).unwrap_or_else(|| panic!("{} #{}: not templated", p.task, p.matcher));
            assert_eq!(d.template.fill(&d.holes).unwrap(), p.value, "{} #{}", p.task, p.matcher);
            *per_template.entry(d.template.name).or_insert(0) += 1;
        }
        // Every template is used: none of the eight is dead weight.
        assert_eq!(per_template.len(), 8, "{per_template:?}");
        assert_eq!(per_template["hedge"], 32);
    }

    #[test]
    fn the_authors_input_is_a_fraction_of_each_pattern() {
        let mut authored: Vec<(usize, usize)> = recorded()
            .iter()
            .map(|p| decompile(&p.value).unwrap())
            .filter(|d| d.template.name != "hedge")
            .map(|d| {
                let chars = |s: &str| s.chars().count();
                (chars(&d.template.fill(&d.holes).unwrap()), d.holes.iter().map(|(_, v)| chars(v)).sum())
            })
            .collect();
        assert_eq!(authored.len(), 71);
        authored.sort_unstable();
        // Characters, as a reader counts them (the median of 71 is the 36th).
        let median_len = authored[35].0;
        let mut inputs: Vec<usize> = authored.iter().map(|a| a.1).collect();
        inputs.sort_unstable();
        assert_eq!((median_len, inputs[35]), (720, 177));
    }

    #[test]
    fn other_patterns_are_not_templated() {
        for p in [r"\bC-?14\b", "", "Olabode", &HEDGE[1..], &format!("{HEDGE}x")] {
            assert!(decompile(p).is_none(), "{p}");
        }
        let d = decompile(r"(?:^|[.;!?\n(,])(?=(?:[^.;!?\n(,]|[.,]\d){0,200}?(?:\bfog))(?:(?!drill)(?:[^.;!?\n(,]|[.,]\d)){0,200}?(?:\bfog)").unwrap();
        assert_eq!(d.holes, [('G', r"\bfog".to_string()), ('E', "drill".to_string())]);
        assert_eq!(explain(&d), r"some clause states /\bfog/ without any of the words /drill/ before it");
        // A hole that repeats must repeat the same text.
        let broken = r"(?:^|[.;!?\n(,])(?=(?:[^.;!?\n(,]|[.,]\d){0,200}?(?:\bfog))(?:(?!drill)(?:[^.;!?\n(,]|[.,]\d)){0,200}?(?:\bice)";
        assert!(decompile(broken).is_none());
    }

    #[test]
    fn no_task_carries_a_templated_pattern_any_more() {
        // The suite's checks are compiled from sources now: a pattern of one
        // of these templates in a task file was pasted there by hand.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/tasks");
        let mut patterns = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let task: crate::format::task::Task = serde_json::from_str(&text).unwrap();
            for m in &task.output_matchers {
                if let crate::format::task::Matcher::Regex { value, .. } = m {
                    for v in value.as_slice() {
                        patterns += 1;
                        assert!(decompile(v).is_none(), "{}: a legacy templated pattern: {v}", task.id);
                    }
                }
            }
        }
        assert!(patterns > 100, "{patterns} regex matchers read");
    }
}
