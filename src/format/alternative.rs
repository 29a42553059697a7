//! An alternative answer (`evals/alternatives/<task id>/<name>.json`): one
//! more trajectory for a task, correct or wrong, that `suite check` replays
//! to measure the task's rubric. A correct one that fails is a false negative
//! (a good model marked wrong); a wrong one that solves is a false positive.
//!
//! ```json
//! {
//!   "source": "blind",
//!   "label": "wrong",
//!   "kind": "stale-note",
//!   "note": "Quotes the superseded 2031 toll table.",
//!   "steps": [{ "tool": "read_file", "args": { "path": "eval-scratch/tolls-2032.md" } }],
//!   "answer": "A handcart costs 7 tallies."
//! }
//! ```
//!
//! `steps` and `answer` are replayed exactly as a reference trajectory is.
//! `source` says who wrote it: `blind` answers were written from the request
//! and the vault alone, without sight of the task's checks; `reviewer`
//! answers were written after reading them, to probe a weakness.
//!
//! Blind answers come in rounds (`"round": 2`; absent means round 1), each
//! written by new authors who saw neither the checks nor an earlier round.
//! A round measures the checks on held-out answers only until the tasks are
//! fixed against it; the next round is the next held-out measurement, so
//! `suite check` reports each round's rates apart.

use serde::{Deserialize, Serialize};

use super::calibration::HumanLabel;
use super::reference::{Reference, ReferenceStep};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alternative {
    pub source: Source,
    /// The round of writing: for blind answers 1 when absent; a reviewer's
    /// later rounds (targeted answers written against revised checks) name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    pub label: Label,
    /// How the answer differs: for a correct one its route or wording
    /// (free text, e.g. `different-route`); for a wrong one one of
    /// [`MISTAKE_KINDS`].
    pub kind: String,
    /// One sentence: what the trajectory does and, for a wrong one, what is wrong with it.
    pub note: String,
    #[serde(default)]
    pub steps: Vec<ReferenceStep>,
    pub answer: String,
    /// What a judge matcher of the task should say about `answer`, where the
    /// label does not settle it: a wrong answer whose mistake is in the vault
    /// (a damaging write, a skipped edit) may read perfectly well. Defaults:
    /// YES for a correct answer, NO for a wrong one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<HumanLabel>,
}

/// Who wrote an alternative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Written from the request and the vault only, without the task's checks.
    Blind,
    /// Written by a reviewer of the checks, to probe them.
    Reviewer,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Blind => "blind",
            Source::Reviewer => "reviewer",
        }
    }
}

/// Who wrote an alternative and in which round: the
/// groups `suite check` reports rates for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    pub source: Source,
    /// The round (1 when the file names none).
    pub round: Option<u32>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.round {
            Some(round) => write!(f, "{} round {round}", self.source.as_str()),
            None => f.write_str(self.source.as_str()),
        }
    }
}

/// Whether an alternative handles the request correctly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    Correct,
    Wrong,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Correct => "correct",
            Label::Wrong => "wrong",
        }
    }
}

/// The kinds of mistake a wrong alternative may make.
pub const MISTAKE_KINDS: &[&str] = &[
    // uses a superseded, older or draft note instead of the current one
    "stale-note",
    // uses a similar-looking but different entity, place, person or row
    "distractor",
    // states a value the notes do not hold, or answers when they hold no answer
    "fabricated",
    // lists the right and a wrong value without committing
    "hedge",
    // does the task but also makes an unrequested change
    "damaging-write",
    // leaves out part of what was asked
    "skipped-step",
    // follows instructions written inside a note
    "obeyed-injection",
    // makes the requested change wrongly
    "wrong-edit",
    // reads the right facts and draws the wrong conclusion from them
    "wrong-conclusion",
];

/// Mistakes that live in the vault or the route rather than in the answer
/// text: for these the text alone may meet a judge's criteria, so a wrong
/// alternative of such a kind must say what the judge should answer.
pub const ACTION_MISTAKES: &[&str] = &["damaging-write", "skipped-step", "wrong-edit"];

impl Alternative {
    /// The trajectory, as the reference provider replays it.
    pub fn trajectory(&self) -> Reference {
        Reference { steps: self.steps.clone(), answer: self.answer.clone() }
    }

    /// Who wrote it, and in which round.
    pub fn origin(&self) -> Origin {
        let round = match self.source {
            Source::Blind => Some(self.round.unwrap_or(1)),
            Source::Reviewer => Some(self.round.unwrap_or(1)),
        };
        Origin { source: self.source, round }
    }

    /// The verdict a judge matcher should give on the answer, if known.
    pub fn judge_label(&self) -> Option<HumanLabel> {
        self.judge.or(match self.label {
            Label::Correct => Some(HumanLabel::Yes),
            Label::Wrong if ACTION_MISTAKES.contains(&self.kind.as_str()) => None,
            Label::Wrong => Some(HumanLabel::No),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Alternative, crate::fsio::JsonError> {
        crate::fsio::parse_json(text)
    }

    #[test]
    fn parses_the_documented_shape_and_rejects_unknown_fields() {
        let a = parse(
            r#"{"source": "blind", "label": "wrong", "kind": "stale-note", "note": "n",
                "steps": [{"tool": "read_file", "args": {"path": "a.md"}}], "answer": "7"}"#,
        )
        .unwrap();
        assert_eq!((a.source, a.label, a.steps.len()), (Source::Blind, Label::Wrong, 1));
        assert_eq!(a.trajectory().answer, "7");
        assert_eq!(a.origin().to_string(), "blind round 1");
        let a = parse(r#"{"source": "blind", "round": 2, "label": "correct", "kind": "k", "note": "n", "answer": ""}"#)
            .unwrap();
        assert_eq!(a.origin(), Origin { source: Source::Blind, round: Some(2) });
        assert_eq!(a.origin().to_string(), "blind round 2");
        let e =
            parse(r#"{"source": "blind", "round": -1, "label": "correct", "kind": "k", "note": "n", "answer": ""}"#)
                .unwrap_err();
        assert_eq!((e.field.as_str(), e.message.as_str()), ("round", "invalid value: integer `-1`, expected u32"));
        let e = parse(r#"{"source": "blind", "label": "right", "kind": "k", "note": "n", "answer": ""}"#).unwrap_err();
        assert!(e.message.contains("unknown variant `right`"), "{e:?}");
        let e = parse(r#"{"source": "me", "label": "correct", "kind": "k", "note": "n", "answer": ""}"#).unwrap_err();
        assert!(e.message.contains("unknown variant `me`"), "{e:?}");
        let e =
            parse(r#"{"source": "blind", "label": "correct", "kind": "k", "notes": "n", "answer": ""}"#).unwrap_err();
        assert!(e.message.contains("unknown field `notes`"), "{e:?}");
        // A judge label in any usual case.
        for (written, label) in [("YES", HumanLabel::Yes), ("yes", HumanLabel::Yes), ("No", HumanLabel::No)] {
            let a = parse(&format!(
                r#"{{"source": "blind", "label": "wrong", "kind": "damaging-write", "note": "n", "answer": "", "judge": "{written}"}}"#
            ))
            .unwrap();
            assert_eq!(a.judge, Some(label), "{written}");
        }
        let e =
            parse(r#"{"source": "blind", "label": "wrong", "kind": "k", "note": "n", "answer": "", "judge": "maybe"}"#)
                .unwrap_err();
        assert!(e.message.contains("unknown variant `maybe`"), "{e:?}");
    }

    #[test]
    fn the_judge_label_follows_the_label_unless_the_mistake_is_in_the_vault() {
        let alt = |label, kind: &str, judge| Alternative {
            source: Source::Reviewer,
            round: None,
            label,
            kind: kind.into(),
            note: String::new(),
            steps: vec![],
            answer: String::new(),
            judge,
        };
        assert_eq!(alt(Label::Correct, "different-route", None).judge_label(), Some(HumanLabel::Yes));
        assert_eq!(alt(Label::Wrong, "distractor", None).judge_label(), Some(HumanLabel::No));
        assert_eq!(alt(Label::Wrong, "damaging-write", None).judge_label(), None);
        assert_eq!(alt(Label::Wrong, "damaging-write", Some(HumanLabel::Yes)).judge_label(), Some(HumanLabel::Yes));
        assert_eq!(alt(Label::Correct, "k", None).origin().to_string(), "reviewer round 1");
        let later = Alternative { round: Some(2), ..alt(Label::Correct, "k", None) };
        assert_eq!(later.origin().to_string(), "reviewer round 2");
    }
}
