//! One observation–thought–action step of an agent's trajectory: its fields, validation, and its
//! markdown rendering (`log.md`), which carries the structured record so it can be read back.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{MemoryId, to_millis};

/// The longest free text a step keeps (observation, thought, action).
pub const MAX_TEXT_CHARS: usize = 8_000;
/// Result excerpts longer than this are cut (with `…`): a step keeps an excerpt, not the output.
pub const MAX_RESULT_CHARS: usize = 2_000;
/// At most this many entities or files per step.
pub const MAX_LIST_ITEMS: usize = 32;
/// The marker that starts a step's structured record inside `log.md`.
const STEP_MARKER: &str = "<!-- lore-step ";

/// What a step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

fn cut(text: &str, max: usize) -> String {
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

    /// The step as a `log.md` section: readable markdown, preceded by its structured record.
    pub fn to_markdown(&self, ordinal: usize) -> Result<String> {
        let json = serde_json::to_string(self).map_err(|e| Error::Parse {
            context: "writing a step".into(),
            message: e.to_string(),
        })?;
        // `--` cannot end an HTML comment early inside JSON text, but escape it anyway.
        let json = json.replace("--", "\\u002d\\u002d");
        let mut out = format!("{STEP_MARKER}{json} -->\n");
        let kind = self.kind.map(StepKind::as_str).unwrap_or("step");
        out.push_str(&format!(
            "### {ordinal}. {kind} · {}{}\n\n",
            self.time,
            self.tool
                .as_ref()
                .map(|t| format!(" · `{t}`"))
                .unwrap_or_default()
        ));
        if let Some(text) = &self.text {
            out.push_str(text);
            out.push_str("\n\n");
        }
        let mut fields = Vec::new();
        if let Some(a) = &self.arguments {
            fields.push(format!("- arguments: `{}`", a.replace('\n', " ")));
        }
        if let Some(r) = &self.result {
            fields.push(format!("- result: {}", r.replace('\n', " ")));
        }
        if !self.entities.is_empty() {
            fields.push(format!("- entities: {}", self.entities.join(", ")));
        }
        if let Some(s) = &self.subgoal {
            fields.push(format!("- subgoal: {s}"));
        }
        if !self.files.is_empty() {
            fields.push(format!("- files: {}", self.files.join(", ")));
        }
        if let Some(o) = &self.origin {
            fields.push(format!("- merged from: {o}"));
        }
        if !fields.is_empty() {
            out.push_str(&fields.join("\n"));
            out.push_str("\n\n");
        }
        Ok(out)
    }
}

/// Renders a whole `log.md`.
pub fn render_log(branch: &str, steps: &[Step]) -> Result<String> {
    let mut out = format!("# Log — branch {branch}\n\n");
    for (i, step) in steps.iter().enumerate() {
        out.push_str(&step.to_markdown(i + 1)?);
    }
    Ok(out)
}

/// Reads a `log.md` back. lore's own files carry each step's record; a log written by another
/// tool is split at headings (or, without headings, at blank lines) into plain-text steps.
pub fn parse_log(text: &str, now: Timestamp) -> Result<Vec<Step>> {
    if text.contains(STEP_MARKER) {
        let mut steps = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let Some(rest) = line.strip_prefix(STEP_MARKER) else {
                continue;
            };
            let json = rest.trim_end().strip_suffix("-->").unwrap_or(rest).trim();
            let step: Step = serde_json::from_str(json).map_err(|e| Error::Parse {
                context: format!("log.md line {}", n + 1),
                message: e.to_string(),
            })?;
            steps.push(step);
        }
        return Ok(steps);
    }
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with("# ")).collect();
    let has_headings = body
        .iter()
        .any(|l| l.starts_with("## ") || l.starts_with("### "));
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in body {
        let boundary = if has_headings {
            line.starts_with("## ") || line.starts_with("### ")
        } else {
            line.trim().is_empty()
        };
        if boundary && !current.trim().is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        if !boundary || has_headings {
            current.push_str(line);
            current.push('\n');
        }
    }
    if !current.trim().is_empty() {
        pieces.push(current);
    }
    pieces
        .into_iter()
        .map(|p| {
            NewStep {
                text: Some(cut(p.trim(), MAX_TEXT_CHARS)),
                now: Some(now),
                ..NewStep::default()
            }
            .into_step()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(text: &str) -> Step {
        NewStep {
            kind: Some(StepKind::Action),
            tool: Some("bash".into()),
            arguments: Some("cargo test -- --nocapture".into()),
            result: Some("2 failed\nsee log".into()),
            entities: vec!["payments".into(), "payments".into(), " ".into()],
            subgoal: Some("fix flaky test".into()),
            files: vec!["src/lib.rs".into()],
            text: Some(text.into()),
            ..NewStep::default()
        }
        .into_step()
        .unwrap()
    }

    #[test]
    fn log_markdown_round_trips_structured_steps() {
        let steps = vec![step("ran the tests --> twice"), step("second\n\nparagraph")];
        assert_eq!(steps[0].entities, vec!["payments".to_string()]);
        let md = render_log("main", &steps).unwrap();
        assert!(md.contains("### 1. action"));
        assert_eq!(parse_log(&md, Timestamp::now()).unwrap(), steps);
    }

    #[test]
    fn foreign_logs_split_at_headings_or_paragraphs() {
        let now = Timestamp::now();
        let md = "# Log\n\n## Step one\nread the file\n\n## Step two\nedited it\n";
        let steps = parse_log(md, now).unwrap();
        assert_eq!(steps.len(), 2);
        assert!(steps[1].text.as_deref().unwrap().contains("edited it"));
        let plain = parse_log("first thing\n\nsecond thing\n", now).unwrap();
        assert_eq!(plain.len(), 2);
    }

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
