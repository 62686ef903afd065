//! Reasoning trees in git: every scored thought is a commit whose parent is its parent thought.
//!
//! ```text
//! refs/lore/thoughts/<session> ─► ledger commit ─► tree: session.json (+ done.json once finished)
//!     first parent: the previous ledger commit; second parent: the thought it recorded
//! thought commit ─► tree                 parent: its parent thought (none for a root thought)
//!   thought.md      the thought's text
//!   scores.json     score components and the combined score at the time of writing
//!   trace.jsonl     the tool calls and observations that led to it (one JSON value a line)
//!   metadata.json   session, agent, model, depth, sequential number and branch, timings
//! refs/lore/scores/<session>             scored versions, <2 hex>/<38 hex>/<ms>-<blob>.json
//! refs/lore/outcomes/<session>/success_<id> | failed_<id> | best    marks of thoughts
//! ```
//!
//! The ledger keeps every thought reachable (pruned branches too) and gives one ref to move by
//! compare-and-swap, so concurrent writers never lose a thought. Finishing a session merges the
//! best path into the ledger (a commit whose second parent is the best thought) and writes an
//! answer-free lesson as a keyed memory (`lessons/<topic>`), so two agents' contradictory lessons
//! on one topic meet as a merge conflict. The SQLite index beside lore's own
//! (`thoughts.sqlite3`) is derived from these refs and caught up when they move. Every ref of a
//! session travels with `lore sync` and merges by the rules of [`merge`], [`scores`] and
//! [`marks`]: one session written on several clones ends as one tree.

pub mod bundle;
pub mod bundle_lessons;
pub mod index;
pub mod marks;
pub mod merge;
pub mod read;
pub mod scores;
pub mod search;
pub mod sequential;
pub mod write;

use std::collections::BTreeMap;

use git2::Oid;
use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The prefix of the session refs (the ledgers).
pub const SESSION_REF_PREFIX: &str = "refs/lore/thoughts/";
/// The prefix of the outcome refs.
pub const OUTCOME_REF_PREFIX: &str = "refs/lore/outcomes/";
/// The prefix of the per-session refs holding scored versions.
pub const SCORES_REF_PREFIX: &str = "refs/lore/scores/";
/// The prefix of the per-session notes refs that held current scores (the older layout, read
/// while a thought has no scored version, carried over by the next score written).
pub const SCORES_NOTES_PREFIX: &str = "refs/notes/lore/scores/";
pub use write::THOUGHT_TRAILER;
/// The namespace lessons are written to, keyed by topic.
pub const LESSONS_NAMESPACE: &str = "lessons";
/// The longest session name.
const MAX_SESSION_CHARS: usize = 64;

/// The ledger ref of a session.
pub fn session_ref(session: &str) -> String {
    format!("{SESSION_REF_PREFIX}{session}")
}

/// The notes ref that held a session's current scores (the older layout).
pub fn scores_ref(session: &str) -> String {
    format!("{SCORES_NOTES_PREFIX}{session}")
}

/// The ref recording one outcome of a session.
pub fn outcome_ref(session: &str, outcome: Outcome, id: &str) -> String {
    match outcome {
        Outcome::Best => format!("{OUTCOME_REF_PREFIX}{session}/best"),
        other => format!(
            "{OUTCOME_REF_PREFIX}{session}/{}_{}",
            other.as_str(),
            short(id)
        ),
    }
}

/// The short form of a thought id shown to people (12 hex digits).
pub fn short(id: &str) -> &str {
    crate::agent_text::prefix(id, 12)
}

/// Checks a session name: 1–64 of `a-z 0-9 . _ -`, starting with a letter or digit.
pub fn check_session(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_SESSION_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !name.ends_with(".lock")
        && !name.contains("..");
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            what: "session",
            value: name.to_string(),
            reason: format!(
                "use 1-{MAX_SESSION_CHARS} of a-z, 0-9, '.', '_', '-', starting with a letter or digit"
            ),
        })
    }
}

/// How a thought is judged: named components and their combination, each in 0..=1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scores {
    /// Named score components (e.g. `correctness`, `progress`), each in 0..=1.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub components: BTreeMap<String, f64>,
    /// The combined score in 0..=1 (default: the mean of the components).
    pub combined: f64,
}

impl Scores {
    /// Scores from components and an optional combined value (default: their mean; 0.5 with no
    /// components), each checked to be a number in 0..=1.
    pub fn new(components: BTreeMap<String, f64>, combined: Option<f64>) -> Result<Scores> {
        for (name, value) in &components {
            check_unit(&format!("score component {name}"), *value)?;
        }
        let combined = match combined {
            Some(v) => v,
            None if components.is_empty() => 0.5,
            None => components.values().sum::<f64>() / components.len() as f64,
        };
        check_unit("combined score", combined)?;
        Ok(Scores {
            components,
            combined,
        })
    }

    /// Checks stored or received scores.
    pub fn validate(&self) -> Result<()> {
        Scores::new(self.components.clone(), Some(self.combined)).map(|_| ())
    }
}

fn check_unit(what: &str, value: f64) -> Result<()> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(Error::Invalid {
            what: "score",
            value: format!("{what} = {value}"),
            reason: "scores are numbers from 0 to 1".into(),
        })
    }
}

/// What came of a thought.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It worked.
    Success,
    /// It did not.
    Failed,
    /// The session's chosen answer (set by finishing the session).
    Best,
}

impl Outcome {
    /// The name used in refs and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failed => "failed",
            Outcome::Best => "best",
        }
    }

    /// Reads an outcome name.
    pub fn parse(value: &str) -> Result<Outcome> {
        crate::model::one_of(
            "outcome",
            value,
            &[
                ("success", Outcome::Success),
                ("failed", Outcome::Failed),
                ("best", Outcome::Best),
            ],
        )
    }

    /// The outcome term of the ranking: best and success 1, failed 0.
    pub fn value(self) -> f64 {
        match self {
            Outcome::Success | Outcome::Best => 1.0,
            Outcome::Failed => 0.0,
        }
    }
}

/// A thought's `metadata.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThoughtMeta {
    /// The reasoning session.
    pub session: String,
    /// Distance from the root thought (a root thought has depth 0).
    pub depth: u32,
    /// The agent that wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The model behind the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The sequential-thinking number, when written through that interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u32>,
    /// The sequential-thinking branch id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The thought this one revises (full id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revises: Option<String>,
    /// When it was written.
    pub created: Timestamp,
    /// How long producing it took, in milliseconds, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
}

/// One node of a reasoning tree as stored.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ThoughtNode {
    /// The thought's id (its commit).
    pub id: String,
    /// Its parent thought (none for a root thought).
    pub parent: Option<String>,
    /// The text (`thought.md`).
    pub text: String,
    /// The current scores (the newest scored version, else `scores.json`).
    pub scores: Scores,
    /// The trace (`trace.jsonl`).
    pub trace: Vec<serde_json::Value>,
    /// `metadata.json`.
    pub metadata: ThoughtMeta,
}

/// A session's `session.json` on its ledger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionInfo {
    /// The session's name.
    pub session: String,
    /// The project identity of the repository it was started in.
    pub project: String,
    /// When it started.
    pub created: Timestamp,
}

/// Reads a full thought id from text (40 hex digits).
pub(crate) fn parse_oid(id: &str) -> Result<Oid> {
    Oid::from_str(id).map_err(|_| Error::ThoughtNotFound(format!("no thought {id:?}")))
}

fn json_error(context: &str, e: impl std::fmt::Display) -> Error {
    Error::Parse {
        context: context.to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests;
