//! A step's `log.md` form: readable markdown that carries each step's structured record, so
//! lore reads its own export back exactly. The step itself is [`crate::steps`] (re-exported here).

use jiff::Timestamp;

pub use crate::steps::*;

use crate::error::{Error, Result};
use crate::steps::cut;

/// The marker that starts a step's structured record inside `log.md`.
const STEP_MARKER: &str = "<!-- lore-step ";

/// Lines that start one of these mean something to a `log.md` reader (contexa's labels and
/// record headings, lore's own record): inside a step's text they are written one space in.
const LINE_STARTS: [&str; 5] = [
    "### Step",
    "**Observation:**",
    "**Thought:**",
    "**Action:**",
    STEP_MARKER,
];

/// A step's text as written into `log.md` (see [`super::gcc_compat::escaped`]; `leads` when
/// the first line follows a label on its line).
fn escaped(text: &str, leads: bool) -> String {
    super::gcc_compat::escaped(text, leads, &LINE_STARTS)
}

impl Step {
    /// The step's structured record: one HTML comment line that lore reads back exactly.
    fn record_line(&self) -> Result<String> {
        let json = serde_json::to_string(self).map_err(|e| Error::Parse {
            context: "writing a step".into(),
            message: e.to_string(),
        })?;
        // `--` cannot end an HTML comment early inside JSON text, but escape it anyway.
        let json = json.replace("--", "\\u002d\\u002d");
        Ok(format!("{STEP_MARKER}{json} -->\n"))
    }

    /// What the step says, for a reader: its text, the tool call, the result.
    fn content(&self) -> String {
        let mut parts = Vec::new();
        if let Some(text) = &self.text {
            parts.push(text.clone());
        }
        let call = match (&self.tool, &self.arguments) {
            (Some(t), Some(a)) => Some(format!("`{t}` `{}`", a.replace('\n', " "))),
            (Some(t), None) => Some(format!("`{t}`")),
            (None, Some(a)) => Some(format!("`{}`", a.replace('\n', " "))),
            (None, None) => None,
        };
        parts.extend(call);
        if let Some(r) = &self.result {
            parts.push(format!("→ {}", r.replace('\n', " ")));
        }
        parts.join("\n")
    }

    /// The step's labels (subgoal, entities, files, origin) as one line, if it has any.
    fn labels_line(&self) -> Option<String> {
        let mut fields = Vec::new();
        if let Some(s) = &self.subgoal {
            fields.push(format!("subgoal: {s}"));
        }
        if !self.entities.is_empty() {
            fields.push(format!("entities: {}", self.entities.join(", ")));
        }
        if !self.files.is_empty() {
            fields.push(format!("files: {}", self.files.join(", ")));
        }
        if let Some(o) = &self.origin {
            fields.push(format!("merged from: {o}"));
        }
        (!fields.is_empty()).then(|| format!("*{}*\n", escaped(&fields.join(" · "), true)))
    }

    /// Only kind and text: such steps of one time and origin, in observation–thought–action
    /// order, are one record (as a record read from a GCC log was).
    fn is_plain(&self) -> bool {
        self.kind.is_some()
            && self.tool.is_none()
            && self.arguments.is_none()
            && self.result.is_none()
            && self.entities.is_empty()
            && self.subgoal.is_none()
            && self.files.is_empty()
    }
}

/// The steps of `log.md`'s next section: a run of plain steps that make one record, else one.
fn next_section(steps: &[Step]) -> usize {
    let first = &steps[0];
    if !first.is_plain() {
        return 1;
    }
    let mut n = 1;
    while let Some(next) = steps.get(n) {
        let prev = &steps[n - 1];
        if !(next.is_plain()
            && next.time == first.time
            && next.origin == first.origin
            && next.kind.map(|k| k as u8) > prev.kind.map(|k| k as u8))
        {
            break;
        }
        n += 1;
    }
    n
}

/// One section of `log.md`: each step's record, then (for observations, thoughts and actions)
/// an observation–thought–action record in the GCC form contexa reads (`### Step N — TIME`,
/// labelled fields), or (for a step of no kind) a heading and its text, then `---`.
fn render_section(section: &[Step], record: &mut usize) -> Result<String> {
    let mut out = String::new();
    for step in section {
        out.push_str(&step.record_line()?);
    }
    let first = &section[0];
    if first.kind.is_some() {
        *record += 1;
        out.push_str(&format!("### Step {record} — {}\n", first.time));
    } else {
        out.push_str(&format!("### Unlabelled step — {}\n", first.time));
    }
    out.extend(first.labels_line());
    out.push('\n');
    for step in section {
        let content = step.content();
        match step.kind {
            Some(kind) => {
                let label = match kind {
                    StepKind::Observation => "Observation",
                    StepKind::Thought => "Thought",
                    StepKind::Action => "Action",
                };
                out.push_str(&format!("**{label}:** {}\n\n", escaped(&content, true)));
            }
            None => out.push_str(&format!("{}\n\n", escaped(&content, false))),
        }
    }
    out.push_str("---\n\n");
    Ok(out)
}

/// Renders a whole `log.md`: readable by GCC tools (contexa 1.1.2 reads each observation,
/// thought or action as its observation–thought–action record, with its time), and by lore
/// exactly (each step's record rides along in an HTML comment).
pub fn render_log(branch: &str, steps: &[Step]) -> Result<String> {
    let mut out = format!("# OTA Log — branch `{branch}`\n\n");
    let mut record = 0;
    let mut at = 0;
    while at < steps.len() {
        let n = next_section(&steps[at..]);
        out.push_str(&render_section(&steps[at..at + n], &mut record)?);
        at += n;
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
        assert!(md.contains("### Step 1 — "));
        assert!(md.contains("**Action:** ran the tests --> twice\n`bash` `cargo test -- --nocapture`\n→ 2 failed see log"));
        assert_eq!(parse_log(&md, Timestamp::now()).unwrap(), steps);
    }

    #[test]
    fn log_markdown_is_in_the_gcc_record_form_and_escapes_what_would_break_it() {
        let at: Timestamp = "2026-01-02T03:04:05.123Z".parse().unwrap();
        let plain = |kind, text: &str| {
            NewStep {
                kind: Some(kind),
                text: Some(text.into()),
                now: Some(at),
                ..NewStep::default()
            }
            .into_step()
            .unwrap()
        };
        let mut steps = vec![
            plain(StepKind::Observation, "slow page"),
            plain(
                StepKind::Thought,
                "N+1\n---\n**Action:** not a label\nends with ---",
            ),
            plain(StepKind::Action, "batch the loads"),
            plain(StepKind::Thought, "a second record: the kinds start again"),
            NewStep {
                text: Some("no kind\n<!-- lore-step {} -->\n### Step 9 — x".into()),
                now: Some(at),
                ..NewStep::default()
            }
            .into_step()
            .unwrap(),
        ];
        steps[3].origin = Some("side".into());
        let md = render_log("main", &steps).unwrap();
        assert!(md.starts_with("# OTA Log — branch `main`\n\n"), "{md}");
        assert!(md.contains("### Step 1 — 2026-01-02T03:04:05.123Z\n\n**Observation:** slow page\n\n**Thought:** N+1\n\\---\n **Action:** not a label\nends with \\---\n\n**Action:** batch the loads\n\n---\n"), "{md}");
        assert!(
            md.contains("### Step 2 — 2026-01-02T03:04:05.123Z\n*merged from: side*\n"),
            "{md}"
        );
        assert!(md.contains("### Unlabelled step — "), "{md}");
        assert!(md.contains("\n <!-- lore-step {} -->\n ### Step 9"), "{md}");
        assert!(!md.contains("### Step 3"), "{md}");
        // Every `---` line break left in the file ends a record.
        assert_eq!(md.matches("\n---\n").count(), 3, "{md}");
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
