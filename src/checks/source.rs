//! The check source of a task, `evals/checks/<id>.toml`, field for field.
//! Unknown fields are an error, as in task files: a misspelt rule would
//! otherwise check nothing.
//!
//! ```toml
//! # The request: "Start your answer with a line `Toll: <amount>`".
//! [[line]]
//! label = "Toll"
//! number = 9            # 9, nine, 9.00; and no other number on the line
//!
//! states = [{ text = "Kellowmouth" }]
//!
//! # Nothing in the vault may change: the default (`[vault]` names what may).
//! ```
//!
//! What each rule compiles to and means is `compile`'s documentation; how a
//! value may be spelled is `spell`'s.

use serde::Deserialize;

/// A whole check source.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Answer lines the request asks for, in the order it names them.
    #[serde(default, rename = "line")]
    pub lines: Vec<Line>,
    /// Values the answer must state somewhere.
    #[serde(default)]
    pub states: Vec<Value>,
    /// Values no correct answer has a reason to mention (a secret, an
    /// invented name).
    #[serde(default)]
    pub never: Vec<Value>,
    /// Several ways to be right, any one of which will do ("gives both
    /// calls, or asks which person is meant").
    #[serde(default)]
    pub either: Vec<Either>,
    /// One-off patterns the rules cannot say.
    #[serde(default)]
    pub raw: Vec<Raw>,
    #[serde(default)]
    pub judge: Option<Judge>,
    #[serde(default)]
    pub vault: Vault,
}

/// One or several spellings (any of them), or one or several items.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    pub fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(t) => std::slice::from_ref(t),
            OneOrMany::Many(v) => v,
        }
    }
}

/// A number as TOML gives it: `9`, `26.5` or a string (`"1,095"`, `"38.50"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Integer(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    pub fn as_text(&self) -> String {
        match self {
            Scalar::Integer(n) => n.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Text(s) => s.clone(),
        }
    }
}

/// The kinds a line can say are not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotGiven {
    Number,
    Time,
    Date,
    Text,
}

/// An answer line: `Label: value`, where the request asks for it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub label: String,
    /// The value as a text, or several spellings of it.
    pub text: Option<OneOrMany<String>>,
    /// Several texts, every one on the line (each may list spellings).
    #[serde(default)]
    pub texts: Vec<OneOrMany<String>>,
    /// A person's name, given names first (or several spellings of it):
    /// also found with an initial, surname first or by the surname alone,
    /// and the line's `others` are then names, found by any of their parts.
    pub name: Option<OneOrMany<String>>,
    /// Several names, every one on the line.
    #[serde(default)]
    pub names: Vec<OneOrMany<String>>,
    /// A keyword (or any of several), found in any inflection (`fog`,
    /// `foggy`); the line's `others` are then keywords too.
    pub word: Option<OneOrMany<String>>,
    /// Several keywords, every one on the line (each may list alternatives).
    #[serde(default)]
    pub words: Vec<OneOrMany<String>>,
    pub number: Option<Scalar>,
    #[serde(default)]
    pub numbers: Vec<Scalar>,
    pub time: Option<String>,
    #[serde(default)]
    pub times: Vec<String>,
    pub date: Option<String>,
    #[serde(default)]
    pub dates: Vec<String>,
    /// Units a number is followed by (`min`, `M`); then only numbers
    /// followed by one of them count as values on the line.
    pub unit: Option<OneOrMany<String>>,
    /// Texts that must not be on the line: the other candidates (a stale
    /// venue, the deputy's name).
    #[serde(default)]
    pub others: Vec<String>,
    /// The right answer is that the notes do not give it: the line says so
    /// in words and holds no value of this kind and no number.
    pub not_given: Option<NotGiven>,
    /// The value is said in a sentence (a reason, a cause, a fix): "or",
    /// "might" and the like belong to its wording and offer no second
    /// value. A keyword line is read so without it.
    #[serde(default)]
    pub prose: bool,
}

/// A value stated (or never stated) anywhere in the answer.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Value {
    pub text: Option<OneOrMany<String>>,
    /// A person's name (or any of several), given names first: also
    /// counted surname first, with an initial, or as the surname alone.
    pub name: Option<OneOrMany<String>>,
    /// A keyword (or any of several), in any inflection.
    pub word: Option<OneOrMany<String>>,
    pub number: Option<Scalar>,
    pub time: Option<String>,
    pub date: Option<String>,
    /// Exactly this text, case and all (a `contains` matcher).
    pub verbatim: Option<String>,
    pub unit: Option<OneOrMany<String>>,
}

/// Ways to be right, any one of which will do: every value of one group
/// stated, or (with `asks`) a question put to the user.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Either {
    /// Groups of values; the answer states every value of one of them.
    #[serde(default)]
    pub states: Vec<Vec<Value>>,
    /// Or the answer asks the user something (a sentence ending in `?`, or
    /// "tell me which ...").
    #[serde(default)]
    pub asks: bool,
    /// What the answer does, in words: "gives both calls or asks which
    /// Teague is meant".
    pub why: String,
}

/// A pattern written by hand, with the reason no rule says it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    pub regex: String,
    pub flags: Option<String>,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Judge {
    /// The yes/no question the judge answers about the answer.
    pub criteria: String,
    /// Why the literal checks cannot reject every wrong answer of the task,
    /// when they cannot: `suite check` lists the task with this reason.
    pub why: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vault {
    #[serde(default)]
    pub exists: Vec<String>,
    #[serde(default)]
    pub absent: Vec<String>,
    /// Notes that must be byte for byte as in the fixture.
    #[serde(default)]
    pub unchanged: Vec<String>,
    #[serde(default)]
    pub moved: Vec<Moved>,
    #[serde(default, rename = "note")]
    pub notes: Vec<Note>,
    /// Nothing in the vault changed but the paths the rules above name, and
    /// no other file was added (the memory file included). On unless a
    /// source turns it off: every request is made under the system prompt's
    /// "touch nothing else".
    #[serde(default = "on")]
    pub nothing_else_changes: bool,
}

fn on() -> bool {
    true
}

impl Default for Vault {
    fn default() -> Self {
        Vault {
            exists: vec![],
            absent: vec![],
            unchanged: vec![],
            moved: vec![],
            notes: vec![],
            nothing_else_changes: true,
        }
    }
}

/// A note moved (or renamed) whole: gone from `from`, the same bytes at `to`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moved {
    pub from: String,
    pub to: String,
}

/// What a note must hold after the run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Note {
    pub path: String,
    /// The whole note, exactly (line endings and final white space aside).
    pub text: Option<String>,
    /// The fixture's note with these replacements, and nothing else changed.
    #[serde(default)]
    pub edit: Vec<Edit>,
    /// The fixture's note with these lines added at its end.
    #[serde(default)]
    pub appended: Vec<Appended>,
    /// Frontmatter keys set to these values; every other key and the body
    /// stay as in the fixture.
    pub frontmatter: Option<toml::Table>,
    /// Exactly these texts somewhere in the note.
    #[serde(default)]
    pub contains: Vec<String>,
    /// None of these texts anywhere in the note.
    #[serde(default)]
    pub lacks: Vec<String>,
    /// Lines of the note that must each hold all their values.
    #[serde(default)]
    pub lines: Vec<NoteLine>,
    /// Lines that must not be there (every value of one on one line).
    #[serde(default)]
    pub no_lines: Vec<NoteLine>,
    /// Each text of `lines` is on its own line only ("one line per
    /// show"): a second line naming it is an extra, made-up entry.
    #[serde(default)]
    pub one_line_each: bool,
}

/// A line added at the end of a note: exactly this text, or any line that
/// starts with `starts` (a line whose end the writer chooses).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Appended {
    Line(String),
    Starts {
        starts: String,
        /// What the rest of the line must be, in the house style a skill or
        /// a note sets: its length, its first letter, its last character.
        #[serde(default)]
        rest: Option<Rest>,
    },
}

/// The shape of the writer's own part of a line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rest {
    /// At most this many characters.
    pub at_most: Option<u32>,
    /// Starts with a lower-case letter (or a digit).
    #[serde(default)]
    pub lower_case: bool,
    /// Does not end with any of these characters (a full stop: ".").
    #[serde(default)]
    pub not_ending: String,
}

/// One replacement of an edit: `from` in the fixture becomes `to` (or any
/// of several acceptable texts).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    pub from: String,
    pub to: OneOrMany<String>,
}

/// The values one line of a note holds together.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteLine {
    pub text: Option<OneOrMany<String>>,
    /// Several texts, on the line in this order.
    #[serde(default)]
    pub texts: Vec<String>,
    /// A keyword (or any of several), in any inflection.
    pub word: Option<OneOrMany<String>>,
    pub number: Option<Scalar>,
    pub time: Option<String>,
    pub date: Option<String>,
}
