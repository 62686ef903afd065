//! Helpers shared by commands: reading input, parsing times and citations, drawing memories.

use std::fmt::Write as _;
use std::io::Read;

use clap::{Args, ValueEnum};
use jiff::Timestamp;
use lore::ops::memory as ops;
use lore::ops::{Env, Operation};
use lore::progress::SharedProgress;
use lore::{IndexNotice, Lore, Memory, WriteContext};

use crate::error::{CmdResult, CommandError};
use crate::global::GlobalArgs;
use crate::location;
use crate::ui::Ui;

/// One store opened for one command: the handle, who writes, and where progress goes.
pub struct Session {
    /// The store and its index.
    pub lore: Lore,
    /// Who writes (from --agent/--session or the environment).
    pub write: WriteContext,
    progress: SharedProgress,
}

impl Session {
    /// Opens the store the global options point at.
    pub fn open(ui: &mut Ui, global: &GlobalArgs) -> CmdResult<Session> {
        let mut lore = location::open(global)?;
        // Nobody waits for upkeep a read finds due: it runs apart, after the command.
        lore.defer_upkeep();
        say_which_store(ui, global, &lore);
        Ok(Session::of(ui, global, lore))
    }

    /// A session over a handle opened otherwise.
    pub fn of(ui: &mut Ui, global: &GlobalArgs, lore: Lore) -> Session {
        Session {
            lore,
            write: write_context(global),
            progress: crate::progress_bar::for_terminal(ui.json()),
        }
    }

    /// Runs an operation, showing its warnings and the index's notices on stderr.
    pub fn run<O: Operation>(&mut self, ui: &mut Ui, request: O) -> CmdResult<O::Output> {
        // A missing index is news only when there was something to index before this command.
        let had_memories = self.lore.store().tip().ok().flatten().is_some();
        let mut env =
            Env::new(&mut self.lore, self.write.clone()).with_progress(self.progress.clone());
        let out = env.run(request);
        for warning in env.take_warnings() {
            ui.warn(&warning);
        }
        show_notices_since(ui, &mut self.lore, had_memories);
        Ok(out?)
    }
}

/// Outside any repository lore answers from the personal store: say so, so nobody mistakes it
/// for the project's memory.
pub fn say_which_store(ui: &mut Ui, global: &GlobalArgs, lore: &Lore) {
    if *lore.own_scope() == lore::scope::Scope::Personal
        && !global.personal
        && global.scope.is_none()
    {
        ui.warn(&format!(
            "not inside a git repository: using the personal store at {}",
            lore.store().common_dir().display()
        ));
    }
}

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

/// Prints what happened to the index (rebuilt, created over existing memories) on stderr, given
/// whether the store held memories before the command ran (a first write in a fresh repository
/// builds the index as a matter of course: no notice).
fn show_notices_since(ui: &mut Ui, lore: &mut Lore, has_memories: bool) {
    for notice in lore.take_notices() {
        match notice {
            IndexNotice::Created if has_memories => {
                ui.warn("built the index from refs/lore/memory (it was missing)")
            }
            IndexNotice::Created => {}
            IndexNotice::Rebuilt { reason } => ui.warn(&format!(
                "the index could not be used ({reason}); rebuilt it from refs/lore/memory"
            )),
            IndexNotice::MemoryRefMissing { commit, kept_as } => ui.warn(&format!(
                "refs/lore/memory is missing: the commit the index knew ({commit}) is kept as \
                 {kept_as}; `lore doctor --restore` puts it back"
            )),
        }
    }
}

/// The most a text argument read from a file or stdin may hold (a memory's body, a thought, a
/// context document): 16 times the default body bound. More is refused having read only this
/// much, in constant memory.
pub const MAX_TEXT_INPUT_BYTES: u64 = 16 << 20;

/// Reads text from a file, or stdin for `-`, insisting on UTF-8 and on at most
/// [`MAX_TEXT_INPUT_BYTES`].
pub fn read_text(source: &str) -> CmdResult<String> {
    read_limited(source, MAX_TEXT_INPUT_BYTES)
}

/// Reads what an import takes (a whole file of records), from a file or stdin for `-`.
pub fn read_bulk(source: &str) -> CmdResult<String> {
    read_limited(source, u64::MAX)
}

fn read_limited(source: &str, limit: u64) -> CmdResult<String> {
    let name = if source == "-" {
        "standard input"
    } else {
        source
    };
    let reader: Box<dyn Read> = if source == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(source)
                .map_err(|e| CommandError::usage(format!("cannot read {source}: {e}")))?,
        )
    };
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| CommandError::usage(format!("cannot read {name}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(CommandError::usage(format!(
            "{name} holds more than {limit} bytes; nothing was read further or written"
        )));
    }
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

/// Turns `--cite PATH[:LINES]` values (paths relative to the current directory) into the
/// repository-relative specs the operations take.
pub fn cite_specs(lore: &Lore, values: &[String]) -> CmdResult<Vec<String>> {
    let mut out = Vec::new();
    for value in values {
        let (path, lines) = lore::ops::memory::parse_cite(value)?;
        let rel = location::repo_relative(lore, &path)?;
        out.push(match lines {
            Some(l) => format!("{rel}:{l}"),
            None => rel,
        });
    }
    Ok(out)
}

/// Where a new memory's summary and body come from (shared by remember and supersede).
#[derive(Args, Debug, Clone)]
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
    // Stored text is shown neutralised: no terminal sequence runs, no tag opens.
    let safe = lore::agent_text::neutralize;
    let _ = writeln!(out, "{}  {}", m.id, safe(&m.summary));
    let mut field = |name: &str, value: String| {
        let _ = writeln!(out, "  {name:<10} {value}");
    };
    field("namespace", m.namespace.to_string());
    if let Some(k) = &m.key {
        field("key", k.to_string());
    }
    field("status", m.status.to_string());
    if !m.tags.is_empty() {
        field("tags", safe(&m.tags.join(", ")).into_owned());
    }
    field("created", m.created.to_string());
    if m.updated != m.created {
        field("updated", m.updated.to_string());
    }
    if let Some(a) = &m.author {
        // `Name <email>` is git's form of an author, not a tag.
        field(
            "author",
            lore::agent_text::neutralize_controls(a).into_owned(),
        );
    }
    if let Some(a) = &m.agent {
        field("agent", safe(a).into_owned());
    }
    if let Some(s) = &m.session {
        field("session", safe(s).into_owned());
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
            .map(|b| format!(" @ {}", short(b)))
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

/// Filters shared by list and recall.
#[derive(Args, Debug, Clone)]
pub struct FilterArgs {
    /// Only this namespace.
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Only memories with this tag.
    #[arg(long, short = 't')]
    pub tag: Option<String>,
    /// Only these statuses (comma-separated or repeated): active, resolved, superseded, archived.
    #[arg(long, value_delimiter = ',', value_parser = parse_status)]
    pub status: Vec<lore::Status>,
    /// Only memories updated since (2026-01-31, RFC 3339, or an age: 30m, 12h, 7d, 2w).
    #[arg(long)]
    pub since: Option<String>,
    /// Only memories updated before this time.
    #[arg(long)]
    pub until: Option<String>,
}

/// A status as `--status` takes it.
fn parse_status(text: &str) -> Result<lore::Status, String> {
    text.trim().parse().map_err(|e: lore::Error| e.to_string())
}

impl FilterArgs {
    /// The operations' filter.
    pub fn filter(&self) -> ops::Filter {
        ops::Filter {
            namespace: self.namespace.clone(),
            tag: self.tag.clone(),
            status: self.status.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
        }
    }
}

/// Ranking options shared by `recall`, `context` and `eval`.
#[derive(Args, Debug, Clone)]
pub struct RankArgs {
    /// How BM25 and vector rankings are combined: rrf (reciprocal rank) or score (calibrated
    /// scores).
    #[arg(long, default_value = "score", value_parser = ["rrf", "score"])]
    pub fusion: String,
    /// Weight of BM25 in score fusion (the vector part gets the rest).
    #[arg(long, value_name = "W", default_value_t = lore::index::rank::DEFAULT_LEXICAL_WEIGHT)]
    pub lexical_weight: f64,
    /// Share of the score that decays with age (0 turns recency off).
    #[arg(long, value_name = "W", default_value_t = lore::index::rank::DEFAULT_RECENCY_WEIGHT)]
    pub recency_weight: f64,
    /// Recency half-life in days (0 turns recency off).
    #[arg(long, value_name = "DAYS", default_value_t = lore::index::rank::DEFAULT_HALF_LIFE_DAYS)]
    pub half_life: f64,
    /// Namespace weight, e.g. decisions=1.2 (repeatable; default 1).
    #[arg(long = "ns-weight", value_name = "NS=W")]
    pub ns_weight: Vec<String>,
    /// Keep near-duplicate memories as separate hits.
    #[arg(long)]
    pub no_collapse: bool,
    /// How much memories written near a time the query names approximately ("two days ago")
    /// gain: score × (1 + W × closeness).
    #[arg(long, value_name = "W", default_value_t = lore::index::rank::DEFAULT_TIME_BOOST)]
    pub time_boost: f64,
    /// Do not read time expressions in the query ("last week", "in March") as a window.
    #[arg(long)]
    pub no_time: bool,
    /// The share of a strong hit's relevance that the candidates written just before and after
    /// it in the same agent session take at the least (half that two turns away), 0 to 0.9 (0
    /// turns it off).
    #[arg(long, value_name = "W", default_value_t = lore::index::rank::DEFAULT_BESIDE)]
    pub beside: f64,
}

impl RankArgs {
    /// The fusion asked for (clap admits only `rrf` and `score`).
    pub fn fusion_kind(&self) -> ops::FusionKind {
        if self.fusion == "rrf" {
            ops::FusionKind::Rrf
        } else {
            ops::FusionKind::Score
        }
    }

    /// The operations' ranking knobs.
    pub fn ranking(&self) -> CmdResult<ops::Ranking> {
        let mut namespace_weights = std::collections::BTreeMap::new();
        for w in &self.ns_weight {
            let parsed = w
                .split_once('=')
                .and_then(|(ns, v)| v.trim().parse::<f64>().ok().map(|v| (ns.trim(), v)));
            match parsed {
                Some((ns, v)) => {
                    namespace_weights.insert(ns.to_string(), v);
                }
                None => {
                    return Err(CommandError::usage(format!(
                        "--ns-weight {w:?}: expected NAMESPACE=WEIGHT, e.g. decisions=1.2"
                    )));
                }
            }
        }
        Ok(ops::Ranking {
            fusion: Some(self.fusion_kind()),
            lexical_weight: Some(self.lexical_weight),
            recency_weight: Some(self.recency_weight),
            half_life_days: Some(self.half_life),
            namespace_weights,
            no_collapse: self.no_collapse,
            time_boost: Some(self.time_boost),
            no_time: self.no_time,
            beside: Some(self.beside),
        })
    }
}

/// The first 12 characters of a commit or blob id, as listings show them.
pub fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// `1 memory`, `3 memories`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The formats memories move in (import and export).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum TransferFormat {
    /// git-notes-memory's refs/notes/mem/<namespace> in this repository.
    Notes,
    /// A directory of markdown files with YAML front matter.
    Markdown,
    /// JSON lines (a file, or `-` for standard input).
    Jsonl,
}

impl TransferFormat {
    /// The operations' name for it.
    pub fn name(self) -> &'static str {
        match self {
            TransferFormat::Notes => "notes",
            TransferFormat::Markdown => "markdown",
            TransferFormat::Jsonl => "jsonl",
        }
    }
}

/// Bytes as megabytes with one decimal (`0.0 MB` for under 50 kB).
pub fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
