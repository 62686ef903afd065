//! The sequential-thinking interface: the input of the widely used `sequentialthinking` tool
//! (thought, numbers, revisions, branches) plus lore's score, outcome and session, so an agent
//! set up for sequential thinking gets a persistent reasoning tree with replay and lessons.
//!
//! The input is read as the official server reads it: numbers and booleans may come as strings
//! (`"3"`, `"true"`), and keys it does not know are ignored. The response carries the official
//! fields with the official values, then lore's.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation};
use crate::error::Result;
use crate::thoughts::index::ThoughtIndex;
use crate::thoughts::sequential::{Sequence, branches, place};
use crate::thoughts::write::{self, NewThought};
use crate::thoughts::{Outcome, Scores};

/// One step of sequential thinking.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SequentialThinking {
    /// Your current thinking step.
    pub thought: String,
    /// Current thought number (1-based).
    #[serde(deserialize_with = "lenient::number")]
    pub thought_number: u32,
    /// Estimated total thoughts needed.
    #[serde(deserialize_with = "lenient::number")]
    pub total_thoughts: u32,
    /// Whether another thought step is needed.
    #[serde(deserialize_with = "lenient::boolean")]
    pub next_thought_needed: bool,
    /// Whether this revises previous thinking.
    #[serde(default, deserialize_with = "lenient::some_boolean")]
    pub is_revision: Option<bool>,
    /// Which thought is being reconsidered.
    #[serde(default, deserialize_with = "lenient::some_number")]
    pub revises_thought: Option<u32>,
    /// Branching point thought number.
    #[serde(default, deserialize_with = "lenient::some_number")]
    pub branch_from_thought: Option<u32>,
    /// Branch identifier.
    #[serde(default)]
    pub branch_id: Option<String>,
    /// If more thoughts are needed.
    #[serde(default, deserialize_with = "lenient::some_boolean")]
    pub needs_more_thoughts: Option<bool>,
    /// lore: the reasoning session. Over MCP each connection has its own unless one is named
    /// here; elsewhere the writer's session, else `sequential`.
    #[serde(default)]
    pub session: Option<String>,
    /// lore: the thought's combined score in 0..=1 (default 0.5).
    #[serde(default)]
    pub score: Option<f64>,
    /// lore: named score components, each in 0..=1.
    #[serde(default)]
    pub components: BTreeMap<String, f64>,
    /// lore: the thought's outcome, `success` or `failed`.
    #[serde(default)]
    pub outcome: Option<StepOutcome>,
}

/// The outcome a step may carry (`best` is chosen by finishing the session, not by a step).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// It worked.
    Success,
    /// It did not.
    Failed,
}

impl From<StepOutcome> for Outcome {
    fn from(o: StepOutcome) -> Outcome {
        match o {
            StepOutcome::Success => Outcome::Success,
            StepOutcome::Failed => Outcome::Failed,
        }
    }
}

/// What the step recorded, in the sequential-thinking server's terms plus lore's ids.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SequentialThought {
    /// The thought's number.
    pub thought_number: u32,
    /// The total, raised to the number when it was exceeded.
    pub total_thoughts: u32,
    /// Whether another thought is needed.
    pub next_thought_needed: bool,
    /// The session's branch ids.
    pub branches: Vec<String>,
    /// How many thoughts the session holds.
    pub thought_history_length: usize,
    /// lore: the thought's id (its commit).
    pub id: String,
    /// lore: its parent thought.
    pub parent: Option<String>,
    /// lore: the session.
    pub session: String,
    /// lore: its depth in the tree.
    pub depth: u32,
    /// lore: what the call named that the session does not hold; the thought then continues
    /// its line (the newest thought of its branch, else of the main line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved: Option<String>,
}

impl Operation for SequentialThinking {
    const NAME: &'static str = "sequentialthinking";
    const TITLE: &'static str = "Sequential thinking";
    const DESCRIPTION: &'static str = "Think step by step, revising and branching as needed \
        (the sequential-thinking tool's input), with each thought kept as a commit in a \
        reasoning tree: persistent, replayable, searchable. Add score (0..1) and outcome \
        (success/failed) to rank what worked; finish with think_done to keep a lesson.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = SequentialThought;

    fn run(self, env: &mut Env<'_>) -> Result<SequentialThought> {
        let scores = Scores::new(self.components, self.score)?;
        let session = self
            .session
            .or_else(|| env.write.session.clone())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "sequential".into());
        crate::thoughts::check_session(&session)?;
        let store = env.lore.store();
        let mut index = ThoughtIndex::open(store)?;
        let placement = place(
            &index,
            &Sequence {
                session: session.clone(),
                number: self.thought_number,
                revises: self.revises_thought,
                is_revision: self.is_revision.unwrap_or(false),
                branch_from: self.branch_from_thought,
                branch: self.branch_id.clone().filter(|b| !b.is_empty()),
            },
        )?;
        let added = write::add_thought(
            store,
            &NewThought {
                session: session.clone(),
                parent: placement.parent,
                text: self.thought,
                scores,
                number: Some(self.thought_number),
                branch: placement.branch,
                revises: placement.revises,
                ..NewThought::default()
            },
            &env.write,
        )?;
        if let Some(outcome) = self.outcome {
            write::mark_outcome(store, added.id, outcome.into())?;
        }
        index.refresh(store)?;
        let (length, _) = index.session_shape(&session)?;
        let branches = branches(&index, &session)?;
        if let Some(report) = &added.secrets {
            env.warn(format!(
                "thought {}: {}",
                self.thought_number,
                report.describe()
            ));
        }
        Ok(SequentialThought {
            thought_number: self.thought_number,
            total_thoughts: self.total_thoughts.max(self.thought_number),
            next_thought_needed: self.next_thought_needed,
            branches,
            thought_history_length: length,
            id: added.id.to_string(),
            parent: placement.parent.map(|p| p.to_string()),
            session,
            depth: added.metadata.depth,
            unresolved: placement.unresolved,
        })
    }
}

/// Reading numbers and booleans as the official server's schema coerces them.
mod lenient {
    use serde::Deserialize;
    use serde::de::{Deserializer, Error};
    use serde_json::Value;

    fn to_number<E: Error>(v: Value) -> Result<u32, E> {
        let n = match &v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) => Ok(n as u32),
            _ => Err(E::custom(format!("expected a whole number, got {v}"))),
        }
    }

    fn to_boolean<E: Error>(v: Value) -> Result<bool, E> {
        match &v {
            Value::Bool(b) => Ok(*b),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(E::custom(format!("expected true or false, got {v}"))),
        }
    }

    pub fn number<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        to_number(Value::deserialize(d)?)
    }

    pub fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        to_boolean(Value::deserialize(d)?)
    }

    pub fn some_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(None),
            v => to_number(v).map(Some),
        }
    }

    pub fn some_boolean<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(None),
            v => to_boolean(v).map(Some),
        }
    }
}
