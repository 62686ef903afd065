//! Trajectory steps: one observation, thought or action of an agent, its fields and validation.
//!
//! The context workspace ([`crate::workspace`]) records steps and trajectory retrieval
//! ([`crate::trajectory`]) reads them; both import this module, neither imports the other for it.

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{MemoryId, to_millis};

/// The longest free text a step keeps (observation, thought, action).
pub const MAX_TEXT_CHARS: usize = 8_000;
/// Result excerpts longer than this are cut (with `…`): a step keeps an excerpt, not the output.
pub const MAX_RESULT_CHARS: usize = 2_000;
/// At most this many entities or files per step.
pub const MAX_LIST_ITEMS: usize = 32;

/// What a step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// Something seen (a tool's output, a file's content).
    Observation,
    /// Reasoning.
    Thought,
    /// Something done (a tool call, an edit).
    Action,
}

impl StepKind {
    /// Parses `observation`, `thought` or `action` (also `obs`, `act`).
    pub fn parse(value: &str) -> Result<StepKind> {
        match value.trim().to_ascii_lowercase().as_str() {
            "observation" | "obs" => Ok(StepKind::Observation),
            "thought" => Ok(StepKind::Thought),
            "action" | "act" => Ok(StepKind::Action),
            _ => Err(Error::Invalid {
                what: "step kind",
                value: value.to_string(),
                reason: "expected observation, thought or action".into(),
            }),
        }
    }

    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Observation => "observation",
            StepKind::Thought => "thought",
            StepKind::Action => "action",
        }
    }
}

/// One step of a trajectory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// A random id (twelve base32 characters); merges and commits deduplicate by it.
    pub id: String,
    /// When it was logged.
    pub time: Timestamp,
    /// Observation, thought or action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<StepKind>,
    /// The tool used (`bash`, `edit`, `grep`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool's arguments, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// An excerpt of the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Entities the step is about (services, functions, tickets, hosts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<String>,
    /// The subgoal being worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subgoal: Option<String>,
    /// Files touched or read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Free text: the observation, thought or action in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The branch a merged step came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The agent that logged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// The fields a caller gives for a new step.
#[derive(Clone, Debug, Default)]
pub struct NewStep {
    /// Observation, thought or action.
    pub kind: Option<StepKind>,
    /// The tool used.
    pub tool: Option<String>,
    /// The tool's arguments.
    pub arguments: Option<String>,
    /// The result (cut to an excerpt).
    pub result: Option<String>,
    /// Entities.
    pub entities: Vec<String>,
    /// Subgoal.
    pub subgoal: Option<String>,
    /// Files.
    pub files: Vec<String>,
    /// Free text.
    pub text: Option<String>,
    /// Agent.
    pub agent: Option<String>,
    /// Session.
    pub session: Option<String>,
    /// The time to record (default: now).
    pub now: Option<Timestamp>,
}

fn clean(value: Option<String>) -> Option<String> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `text` cut to `max` characters, the last one `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

fn clean_list(what: &'static str, items: Vec<String>) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if item.chars().count() > 200 || item.contains('\n') {
            return Err(Error::Invalid {
                what,
                value: cut(item, 40),
                reason: "one line of at most 200 characters".into(),
            });
        }
        if !out.iter().any(|o| o == item) {
            out.push(item.to_string());
        }
    }
    if out.len() > MAX_LIST_ITEMS {
        return Err(Error::Invalid {
            what,
            value: format!("{} items", out.len()),
            reason: format!("at most {MAX_LIST_ITEMS} per step"),
        });
    }
    Ok(out)
}

impl NewStep {
    /// Validates the fields and makes a step with a fresh id.
    pub fn into_step(self) -> Result<Step> {
        let text = clean(self.text);
        let tool = clean(self.tool);
        let result = clean(self.result).map(|r| cut(&r, MAX_RESULT_CHARS));
        let arguments = clean(self.arguments).map(|a| cut(&a, MAX_RESULT_CHARS));
        if text.is_none() && tool.is_none() && result.is_none() && arguments.is_none() {
            return Err(Error::Invalid {
                what: "step",
                value: String::new(),
                reason: "give the step's text, or at least a tool, its arguments or a result"
                    .into(),
            });
        }
        if let Some(t) = &text
            && t.chars().count() > MAX_TEXT_CHARS
        {
            return Err(Error::Invalid {
                what: "step text",
                value: cut(t, 40),
                reason: format!("at most {MAX_TEXT_CHARS} characters; keep the rest in a file"),
            });
        }
        for (what, value) in [("tool", &tool), ("subgoal", &self.subgoal)] {
            if let Some(v) = value
                && (v.contains('\n') || v.chars().count() > 200)
            {
                return Err(Error::Invalid {
                    what,
                    value: cut(v, 40),
                    reason: "one line of at most 200 characters".into(),
                });
            }
        }
        Ok(Step {
            id: MemoryId::generate()?.as_str().to_string(),
            time: to_millis(self.now.unwrap_or_else(Timestamp::now)),
            kind: self.kind,
            tool,
            arguments,
            result,
            entities: clean_list("entity", self.entities)?,
            subgoal: clean(self.subgoal),
            files: clean_list("file", self.files)?,
            text,
            origin: None,
            agent: clean(self.agent),
            session: clean(self.session),
        })
    }
}

impl Step {
    /// One compact line (or a few) for packing into a model's context.
    pub fn compact(&self) -> String {
        let mut out = String::new();
        let kind = self.kind.map(StepKind::as_str).unwrap_or("step");
        out.push('[');
        out.push_str(kind);
        if let Some(tool) = &self.tool {
            out.push(' ');
            out.push_str(tool);
        }
        out.push(']');
        for p in [&self.text, &self.arguments].into_iter().flatten() {
            out.push(' ');
            out.push_str(p);
        }
        if let Some(r) = &self.result {
            out.push_str(" → ");
            out.push_str(r);
        }
        if !self.entities.is_empty() {
            out.push_str(" {");
            out.push_str(&self.entities.join(", "));
            out.push('}');
        }
        if let Some(s) = &self.subgoal {
            out.push_str(" (subgoal: ");
            out.push_str(s);
            out.push(')');
        }
        if !self.files.is_empty() {
            out.push_str(" files: ");
            out.push_str(&self.files.join(", "));
        }
        if let Some(o) = &self.origin {
            out.push_str(" [from ");
            out.push_str(o);
            out.push(']');
        }
        out
    }

    /// The words retrieval sees: every field but ids and times.
    pub fn search_text(&self) -> String {
        let mut out = String::new();
        for part in [
            &self.text,
            &self.tool,
            &self.arguments,
            &self.result,
            &self.subgoal,
        ]
        .into_iter()
        .flatten()
        {
            out.push_str(part);
            out.push('\n');
        }
        for e in self.entities.iter().chain(&self.files) {
            out.push_str(e);
            out.push('\n');
        }
        out
    }
}

/// A step of a trajectory as retrieval sees it.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct TrajectoryStep {
    /// The step.
    pub step: Step,
    /// The branch it was read from.
    pub branch: String,
    /// Whether it is part of a commit yet.
    pub committed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_steps_and_long_results_are_handled() {
        assert!(NewStep::default().into_step().is_err());
        let long = NewStep {
            result: Some("x".repeat(5000)),
            ..NewStep::default()
        }
        .into_step()
        .unwrap();
        assert_eq!(long.result.unwrap().chars().count(), MAX_RESULT_CHARS);
    }
}
