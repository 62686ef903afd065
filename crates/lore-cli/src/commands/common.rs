//! Helpers shared by commands: reading input, parsing times and citations, drawing memories.

use std::fmt::Write as _;
use std::io::Read;

use jiff::{SignedDuration, Timestamp};
use lore::{Citation, IndexNotice, LineRange, Lore, Memory, Status, WriteContext};

use crate::cli::GlobalArgs;
use crate::error::{CmdResult, CommandError};
use crate::location;
use crate::ui::Ui;

/// The write context from global options (agent and session also come from the environment).
pub fn write_context(global: &GlobalArgs) -> WriteContext {
    WriteContext {
        agent: global.agent.clone().filter(|a| !a.is_empty()),
        session: global.session.clone().filter(|s| !s.is_empty()),
        author: None,
        now: None,
    }
}

/// Reports what the secret scanner did in a write, on stderr (the JSON result carries it too).
pub fn report_secrets(ui: &mut Ui, report: Option<&lore::secrets::SecretReport>) {
    if let Some(report) = report {
        ui.warn(&format!("secret scanner: {}", report.describe()));
    }
}

/// Prints what happened to the index (rebuilt, created over existing memories) on stderr.
pub fn show_notices(ui: &mut Ui, lore: &mut Lore) {
    let has_memories = lore.store().tip().ok().flatten().is_some();
    for notice in lore.take_notices() {
        match notice {
            IndexNotice::Created if has_memories => {
                ui.warn("built the index from refs/lore/memory (it was missing)")
            }
            IndexNotice::Created => {}
            IndexNotice::Rebuilt { reason } => ui.warn(&format!(
                "the index could not be used ({reason}); rebuilt it from refs/lore/memory"
            )),
        }
    }
}

/// Reads text from a file, or stdin for `-`, insisting on UTF-8.
pub fn read_text(source: &str) -> CmdResult<String> {
    let mut bytes = Vec::new();
    if source == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| CommandError::usage(format!("cannot read standard input: {e}")))?;
    } else {
        bytes = std::fs::read(source)
            .map_err(|e| CommandError::usage(format!("cannot read {source}: {e}")))?;
    }
    let name = if source == "-" {
        "standard input"
    } else {
        source
    };
    String::from_utf8(bytes).map_err(|e| {
        CommandError::usage(format!(
            "{name} is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
        .hint("lore stores text; convert the input to UTF-8 first (e.g. with iconv)")
    })
}

/// Splits a message like a commit message: the first line is the summary, the rest the body.
pub fn split_message(text: &str) -> (String, String) {
    let text = text.trim_start_matches(['\n', '\r']);
    match text.split_once('\n') {
        Some((first, rest)) => (
            first.trim().to_string(),
            rest.trim_start_matches(['\r', '\n']).to_string(),
        ),
        None => (text.trim().to_string(), String::new()),
    }
}

/// Parses `--since`/`--until`: RFC 3339, a date, or an age such as `30m`, `12h`, `7d`, `2w`.
pub fn parse_time(value: &str) -> CmdResult<Timestamp> {
    let v = value.trim();
    if let Some(t) = lore::interop::parse_time(v) {
        return Ok(t);
    }
    let (num, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
    let n: i64 = num.parse().map_err(|_| {
        CommandError::usage(format!("cannot read the time {value:?}"))
            .hint("use 2026-01-31, 2026-01-31T10:00:00Z, or an age like 30m, 12h, 7d, 2w")
    })?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        "w" => n * 7 * 86_400,
        _ => {
            return Err(
                CommandError::usage(format!("cannot read the time {value:?}"))
                    .hint("use 2026-01-31, 2026-01-31T10:00:00Z, or an age like 30m, 12h, 7d, 2w"),
            );
        }
    };
    Timestamp::now()
        .checked_sub(SignedDuration::from_secs(secs))
        .map_err(|_| CommandError::usage(format!("the time {value:?} is out of range")))
}

/// Parses statuses given as `active,resolved`.
pub fn parse_statuses(values: &[String]) -> CmdResult<Vec<Status>> {
    let mut out = Vec::new();
    for v in values.iter().flat_map(|v| v.split(',')) {
        let st: Status = v.trim().parse()?;
        if !out.contains(&st) {
            out.push(st);
        }
    }
    Ok(out)
}

/// Splits comma-separated, repeatable tag options.
pub fn split_tags(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Parses `--cite PATH[:N[-M]]` and pins the file's current content.
pub fn parse_citations(lore: &Lore, values: &[String]) -> CmdResult<Vec<Citation>> {
    let mut out = Vec::new();
    for value in values {
        let (path, lines) = match value.rsplit_once(':') {
            Some((p, r)) if !p.is_empty() && LineRange::parse(r).is_ok() => {
                (p, Some(LineRange::parse(r)?))
            }
            _ => (value.as_str(), None),
        };
        let rel = location::repo_relative(lore, path)?;
        out.push(lore.cite(&rel, lines)?);
    }
    Ok(out)
}

/// Where a new memory's summary and body come from (shared by remember and supersede).
#[derive(clap::Args, Debug, Clone)]
pub struct MessageArgs {
    /// One-line summary (at most 100 characters), or `-` to read summary and body from standard
    /// input (first line the summary, the rest the body).
    pub summary: Option<String>,
    /// Read summary and body from a file: first line the summary, the rest the body.
    #[arg(long = "file", short = 'F', value_name = "PATH")]
    pub message_file: Option<String>,
    /// Markdown body.
    #[arg(long, short = 'b')]
    pub body: Option<String>,
    /// Read the body from a file (`-` for standard input).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<String>,
}

impl MessageArgs {
    /// The summary and body these options give.
    pub fn read(&self) -> CmdResult<(String, String)> {
        summary_and_body(
            self.summary.as_deref(),
            self.message_file.as_deref(),
            &self.body,
            &self.body_file,
        )
    }
}

/// The summary and body of a new memory: the summary argument, or a whole message (first line
/// the summary, the rest the body, as in a commit message) from `-F FILE` or from standard input
/// when the summary is `-`; `--body`/`--body-file` replace the body.
pub fn summary_and_body(
    summary: Option<&str>,
    message_file: Option<&str>,
    body: &Option<String>,
    body_file: &Option<String>,
) -> CmdResult<(String, String)> {
    let message_source = match (summary, message_file) {
        (Some(_), Some(_)) => {
            return Err(CommandError::usage("give a summary or --file, not both"));
        }
        (None, None) => {
            return Err(CommandError::usage(
                "give a summary, `-` to read standard input, or --file PATH",
            ));
        }
        (Some("-"), None) => Some("-"),
        (None, Some(f)) => Some(f),
        (Some(_), None) => None,
    };
    let (summary, mut text) = match message_source {
        Some(source) => {
            if source == "-" && body_file.as_deref() == Some("-") {
                return Err(CommandError::usage("standard input can be read only once"));
            }
            split_message(&read_text(source)?)
        }
        None => (summary.unwrap_or_default().to_string(), String::new()),
    };
    if let Some(b) = body_from(body, body_file)? {
        text = b;
    }
    Ok((summary, text))
}

/// Reads the body from `--body` or `--body-file`.
pub fn body_from(body: &Option<String>, body_file: &Option<String>) -> CmdResult<Option<String>> {
    match (body, body_file) {
        (Some(_), Some(_)) => Err(CommandError::usage("give --body or --body-file, not both")),
        (Some(b), None) => Ok(Some(with_newline(b))),
        (None, Some(f)) => Ok(Some(read_text(f)?)),
        (None, None) => Ok(None),
    }
}

fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

/// A short, stable time for listings.
pub fn short_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M").to_string()
}

/// One line per memory: id, namespace/key, status, date, summary.
pub fn memory_line(out: &mut String, m: &Memory) {
    let name = match &m.key {
        Some(k) => format!("{}/{k}", m.namespace),
        None => m.namespace.to_string(),
    };
    let tags = if m.tags.is_empty() {
        String::new()
    } else {
        format!("  [{}]", m.tags.join(", "))
    };
    let _ = writeln!(
        out,
        "{}  {:<24} {:<10} {}  {}{}",
        m.id,
        name,
        m.status,
        short_time(m.updated),
        m.summary,
        tags
    );
}

/// The header block of a memory (everything but the body).
pub fn memory_header(out: &mut String, m: &Memory) {
    let _ = writeln!(out, "{}  {}", m.id, m.summary);
    let mut field = |name: &str, value: String| {
        let _ = writeln!(out, "  {name:<10} {value}");
    };
    field("namespace", m.namespace.to_string());
    if let Some(k) = &m.key {
        field("key", k.to_string());
    }
    field("status", m.status.to_string());
    if !m.tags.is_empty() {
        field("tags", m.tags.join(", "));
    }
    field("created", m.created.to_string());
    if m.updated != m.created {
        field("updated", m.updated.to_string());
    }
    if let Some(a) = &m.author {
        field("author", a.clone());
    }
    if let Some(a) = &m.agent {
        field("agent", a.clone());
    }
    if let Some(s) = &m.session {
        field("session", s.clone());
    }
    if let Some(c) = m.confidence {
        field("confidence", c.to_string());
    }
    if let Some(a) = &m.anchor {
        field("anchor", a.clone());
    }
    for c in &m.citations {
        let lines = c.lines.map(|l| format!(":{l}")).unwrap_or_default();
        let blob = c
            .blob
            .as_deref()
            .map(|b| format!(" @ {}", &b[..b.len().min(12)]))
            .unwrap_or_default();
        field("cites", format!("{}{lines}{blob}", c.path));
    }
    for r in &m.relates_to {
        field("relates", r.to_string());
    }
    if let Some(s) = &m.supersedes {
        field("supersedes", s.to_string());
    }
    if let Some(s) = &m.superseded_by {
        field("superseded", format!("by {s}"));
    }
}
