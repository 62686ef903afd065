//! A step's `log.md` form: readable markdown that carries each step's structured record, so
//! lore reads its own export back exactly. The step itself is [`crate::steps`] (re-exported here).

use jiff::Timestamp;

pub use crate::steps::*;

use crate::error::{Error, Result};
use crate::steps::cut;

/// The marker that starts a step's structured record inside `log.md`.
const STEP_MARKER: &str = "<!-- lore-step ";

impl Step {
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
}
