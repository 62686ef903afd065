//! Coding-agent hooks: each agent's event payload in, lore's work (context injection, capture,
//! checkpoints), and the answer in that agent's format out.
//!
//! Claude Code, Codex CLI and Gemini CLI share one answer shape
//! (`hookSpecificOutput.additionalContext`); Cursor has its own (`additional_context`,
//! `continue`). Each agent names its events differently; [`Event::parse`] maps them onto lore's
//! six: session start, prompt submitted, tool used, before compaction, stop and session end.

mod agent;
mod answer;
mod claude;
mod codex;
mod cursor;
mod gemini;
mod payload;
pub mod spool;
pub mod tool_files;

use std::path::Path;

use serde::Serialize;

use crate::capture::{self, Capture, CaptureReport};
use crate::context::{self, ContextRequest};
use crate::error::{Error, Result};
use crate::index::{ListFilter, RankOptions};
use crate::memory::{Lore, WriteContext};
use crate::workspace::Workspace;

pub use agent::{Agent, Event};
pub use answer::respond;
pub use payload::HookInput;

/// The most characters a hook injects (Claude Code's limit for additional context).
pub const MAX_INJECT_CHARS: usize = 10_000;

/// The git configuration key holding a hook's time budget in milliseconds.
pub const TIME_BUDGET_CONFIG: &str = "lore.hookTimeoutMs";

/// How long a hook works before it gives up quietly (the agent waits for it meanwhile).
pub const DEFAULT_TIME_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// A hook's time budget: `git config lore.hookTimeoutMs`, else [`DEFAULT_TIME_BUDGET`]. A value
/// that is not a whole number of milliseconds is reported as a warning and the default used.
pub fn time_budget(store: &crate::store::Store) -> std::time::Duration {
    match store.config_string(TIME_BUDGET_CONFIG) {
        None => DEFAULT_TIME_BUDGET,
        Some(v) => match v.trim().parse::<u64>() {
            Ok(ms) => std::time::Duration::from_millis(ms),
            Err(_) => {
                store.warn(format!(
                    "git config {TIME_BUDGET_CONFIG} = {v:?} is not a number of milliseconds"
                ));
                DEFAULT_TIME_BUDGET
            }
        },
    }
}

/// Told to the agent at session start, after the context.
pub const CAPTURE_GUIDANCE: &str = "lore captures what you mark: put a decision, lesson or \
blocker in a block (`>> decision ----` on its own line, the text, then a line of `----`) or \
start a line with [decision], [learned] or [blocker]. Marked items are saved to project memory; \
other findings may be suggested for review.";

/// Settings for hook handling.
#[derive(Clone, Debug)]
pub struct HookOptions {
    /// The most characters to inject.
    pub max_chars: usize,
    /// A recalled memory is injected on a prompt only when it holds at least this share of the
    /// prompt's distinctive words (four letters or more, stop words aside), and at least two of
    /// them, or nearly repeats the prompt: "strongly relevant".
    pub prompt_min_coverage: f64,
    /// At most this many memories are injected on a prompt or a tool use.
    pub max_items: usize,
    /// Capture's per-session cap.
    pub session_cap: usize,
    /// Sync as `lore.sync.auto` says (off when replaying a spooled event: its network time
    /// would be taken from a live hook's budget).
    pub auto_sync: bool,
}

impl Default for HookOptions {
    fn default() -> Self {
        HookOptions {
            max_chars: MAX_INJECT_CHARS,
            prompt_min_coverage: 0.5,
            max_items: 3,
            session_cap: capture::DEFAULT_SESSION_CAP,
            auto_sync: true,
        }
    }
}

/// What handling an event did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HookOutcome {
    /// Text to give the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// A short line to show the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What capture did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureReport>,
    /// The context commit made as a checkpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
}

fn cap_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let note = "\n[… cut to fit]";
    let keep = max.saturating_sub(note.chars().count());
    let cut: String = text.chars().take(keep).collect();
    // Cut at the last line break so no entry is left half-quoted.
    let cut = match cut.rfind('\n') {
        Some(i) if i > keep / 2 => cut[..i].to_string(),
        _ => cut,
    };
    cut + note
}

/// Handles one event for `agent`.
pub fn handle(
    lore: &mut Lore,
    agent: Agent,
    event: Event,
    input: &HookInput,
    options: &HookOptions,
    ctx: &WriteContext,
) -> Result<HookOutcome> {
    let mut ctx = ctx.clone();
    ctx.agent.get_or_insert_with(|| agent.name().to_string());
    if ctx.session.is_none() {
        ctx.session = input.session.clone();
    }
    match event {
        Event::SessionStart => {
            if options.auto_sync {
                auto_sync(lore, crate::sync::Direction::FetchOnly);
            }
            session_start(lore, options)
        }
        Event::UserPromptSubmit => prompt(lore, input, options, &ctx),
        Event::PostToolUse => tool_used(lore, input, options, &ctx),
        Event::PreCompact => {
            let mut out = capture_transcript(lore, input, options, &ctx)?;
            out.checkpoint = checkpoint(lore, input, &ctx)?;
            Ok(out)
        }
        Event::Stop | Event::SessionEnd => {
            let out = capture_transcript(lore, input, options, &ctx);
            if options.auto_sync {
                auto_sync(lore, crate::sync::Direction::Both);
            }
            out
        }
    }
}

/// The time limit of one network call of a hook-driven sync: an agent waits for the hook.
const AUTO_SYNC_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// With `git config lore.sync.auto true`: at session start fetch and merge, at stop sync both
/// ways. Off by default; bounded in time; silent when offline or without a remote (the next
/// sync catches up).
fn auto_sync(lore: &mut Lore, direction: crate::sync::Direction) {
    let on = lore.store().config_bool("lore.sync.auto") == Some(true);
    if !on || !matches!(lore.store().kind(), crate::store::StoreKind::Repository) {
        return;
    }
    let options = crate::sync::SyncOptions {
        direction,
        timeout: AUTO_SYNC_TIMEOUT,
        ..crate::sync::SyncOptions::default()
    };
    if let Err(e) = crate::sync::sync(lore.store(), &options)
        && !matches!(e, Error::Remote { .. } | Error::NoRemote(_))
    {
        lore.warn(format!("automatic sync: {e}"));
    }
}

/// Whether the scopes read here include stores besides this one (the personal store, teams):
/// those stores are opened and read beside this one, not before it.
fn reads_other_scopes(lore: &Lore) -> Result<bool> {
    let own = lore.own_scope().clone();
    Ok(lore.scopes_read(None)?.iter().any(|s| *s != own))
}

/// Session start: the budgeted memory context, the context branch's state, capture guidance.
fn session_start(lore: &mut Lore, options: &HookOptions) -> Result<HookOutcome> {
    let mut text = String::new();
    let ws = Workspace::new(lore.store());
    let branch = ws.current()?.and_then(|b| ws.meta(&b).ok());
    drop(ws);
    if lore.store().tip()?.is_some() || reads_other_scopes(lore)? {
        // The context branch says what the work is about: its purpose drives semantic matches.
        let request = ContextRequest {
            query: branch
                .as_ref()
                .map(|m| format!("{} {}", m.purpose, m.summary)),
            ..ContextRequest::default()
        };
        let built = context::build(lore, &request)?;
        if built.memories > 0 {
            text.push_str(&built.text);
            text.push('\n');
        }
    }
    if let Some(meta) = branch {
        let safe = crate::agent_text::neutralize;
        text.push_str(&format!(
            "\nContext branch `{}` ({} commits): {}\nPurpose: {}\nResume with `lore ctx show`.\n",
            safe(&meta.name),
            meta.commits,
            safe(&meta.summary),
            safe(&meta.purpose)
        ));
    }
    let room = options.max_chars.saturating_sub(CAPTURE_GUIDANCE.len() + 2);
    let mut context = cap_chars(text.trim(), room);
    if !context.is_empty() {
        context.push_str("\n\n");
    }
    context.push_str(CAPTURE_GUIDANCE);
    Ok(HookOutcome {
        context: Some(context),
        ..HookOutcome::default()
    })
}

/// A prompt: capture what the user marked, and inject memories only when strongly relevant.
fn prompt(
    lore: &mut Lore,
    input: &HookInput,
    options: &HookOptions,
    ctx: &WriteContext,
) -> Result<HookOutcome> {
    let Some(prompt) = input.prompt.as_deref() else {
        return Ok(HookOutcome::default());
    };
    let mut out = HookOutcome::default();
    let found = capture::detect(prompt);
    if !found.is_empty() {
        let mut capture = Capture::new(lore);
        capture.session_cap = options.session_cap;
        let report = capture.capture(&found, ctx)?;
        out.message = capture_message(&report);
        out.capture = Some(report);
    }
    let scopes = lore.scopes_read(None)?;
    let own = lore.own_scope().clone();
    let nothing_to_read = lore.store().tip()?.is_none() && scopes.iter().all(|s| *s == own);
    if prompt.split_whitespace().count() < 3 || nothing_to_read {
        return Ok(out);
    }
    let hits = lore.search_scoped(
        &scopes,
        prompt,
        &ListFilter::default(),
        &RankOptions::default(),
        false,
    )?;
    let just_written: Vec<String> = out
        .capture
        .iter()
        .flat_map(|c| c.written.iter().map(|w| w.memory.id.to_string()))
        .collect();
    let strong: Vec<_> = hits
        .into_iter()
        .filter(|h| !just_written.contains(&h.memory.id.to_string()))
        .take(10)
        .filter(|h| h.near_duplicate || coverage(prompt, &h.memory) >= options.prompt_min_coverage)
        .collect();
    let labels: Labels = strong
        .iter()
        .map(|h| {
            (
                h.memory.id.to_string(),
                (h.scope.clone(), h.project.clone()),
            )
        })
        .collect();
    let strong = strong.into_iter().map(|h| h.memory).collect();
    out.context = inject(lore, ctx, strong, &labels, options)?;
    Ok(out)
}

/// Renders up to `max_items` memories for the agent, leaving out those this session was given
/// already (a hook that repeats itself on every prompt or file is noise), and remembers them.
/// The scope (and other project) of memories injected from scopes other than this store's,
/// by id.
type Labels = std::collections::HashMap<String, (String, Option<String>)>;

fn inject(
    lore: &mut Lore,
    ctx: &WriteContext,
    candidates: Vec<crate::model::Memory>,
    labels: &Labels,
    options: &HookOptions,
) -> Result<Option<String>> {
    let session = ctx.session.clone().unwrap_or_default();
    let capture = Capture::new(lore);
    let pick = |injected: &[String]| -> Vec<crate::model::Memory> {
        candidates
            .iter()
            .filter(|m| !injected.iter().any(|id| id == m.id.as_str()))
            .take(options.max_items)
            .cloned()
            .collect()
    };
    let fresh = if session.is_empty() {
        pick(&[])
    } else {
        // Choose and record under the session's lock, so concurrent hooks of one session never
        // inject the same memory twice nor lose each other's record.
        capture.update_session_state(&session, |state| {
            let fresh = pick(&state.injected);
            state
                .injected
                .extend(fresh.iter().map(|m| m.id.to_string()));
            fresh
        })?
    };
    if fresh.is_empty() {
        return Ok(None);
    }
    let contradictions = lore.contradictions()?;
    let items: Vec<_> = fresh
        .iter()
        .map(|m| {
            let mut item = context::item_flagged(context::Section::Match, m, &contradictions);
            if let Some((scope, project)) = labels.get(m.id.as_str()) {
                item.scope = scope.clone();
                item.project = project.clone();
            }
            item
        })
        .collect();
    Ok(Some(cap_chars(
        &context::render(&items, context::ContextFormat::Markdown),
        options.max_chars,
    )))
}

/// Words of a request to an agent that say nothing about its subject, beyond the stop words
/// recall drops ([`crate::index::is_stop_word`]).
const CHATTER: &[&str] = &[
    "about", "after", "again", "also", "been", "before", "being", "could", "doing", "here", "just",
    "like", "make", "more", "most", "need", "only", "other", "please", "should", "some", "such",
    "than", "those", "very", "want", "while", "would",
];

/// A text's words of four letters or more that are neither stop words nor chatter.
fn distinctive_words(s: &str) -> std::collections::HashSet<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(str::to_lowercase)
        .filter(|w| !crate::index::is_stop_word(w) && !CHATTER.contains(&w.as_str()))
        .collect()
}

/// The share of the text's distinctive words the memory holds (0 when fewer than two shared).
fn coverage(text: &str, m: &crate::model::Memory) -> f64 {
    let asked = distinctive_words(text);
    let held = distinctive_words(&format!("{} {} {}", m.summary, m.body, m.tags.join(" ")));
    let shared = asked.intersection(&held).count();
    if shared < 2 {
        return 0.0;
    }
    shared as f64 / asked.len() as f64
}

/// A tool read or wrote files: the memories citing or naming them.
fn tool_used(
    lore: &mut Lore,
    input: &HookInput,
    options: &HookOptions,
    ctx: &WriteContext,
) -> Result<HookOutcome> {
    let root = lore.store().workdir().map(Path::to_path_buf);
    let files: Vec<String> = input
        .files
        .iter()
        .map(|f| relative(f, root.as_deref(), input.cwd.as_deref()))
        .collect();
    // The step is logged whether or not any memory exists yet; only injection needs memories.
    log_tool_step(lore, input, &files, ctx)?;
    if files.is_empty() || lore.store().tip()?.is_none() {
        return Ok(HookOutcome::default());
    }
    let mut candidates = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for rel in &files {
        // More than will be shown: some may have been given to this session already.
        for m in lore.mentioning(rel, options.max_items * 4)? {
            if seen.insert(m.id.clone()) {
                candidates.push(m);
            }
        }
    }
    Ok(HookOutcome {
        context: inject(lore, ctx, candidates, &Labels::new(), options)?,
        ..HookOutcome::default()
    })
}

/// With a context workspace started (`lore ctx init`), a file tool's use becomes a step on the
/// current branch (tool, input, files inside the repository), so trajectory recall and the
/// compaction checkpoint see what the agent did. Without one, nothing is logged.
fn log_tool_step(
    lore: &Lore,
    input: &HookInput,
    files: &[String],
    ctx: &WriteContext,
) -> Result<()> {
    let ws = Workspace::new(lore.store()).with_secret_policy(Some(lore.secret_policy()?));
    if ws.current()?.is_none() || input.tool.is_none() {
        return Ok(());
    }
    let step = crate::workspace::log_md::NewStep {
        kind: Some(crate::workspace::log_md::StepKind::Action),
        tool: input.tool.clone(),
        arguments: input.tool_input.clone(),
        files: files
            .iter()
            .filter(|f| !Path::new(f).is_absolute())
            .cloned()
            .collect(),
        agent: ctx.agent.clone(),
        session: ctx.session.clone(),
        ..Default::default()
    };
    ws.log(None, step)?;
    Ok(())
}

/// A path as the repository names it (relative to its root), whatever form the agent gave.
fn relative(file: &str, root: Option<&Path>, cwd: Option<&Path>) -> String {
    let path = Path::new(file);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else if let Some(cwd) = cwd {
        cwd.join(path)
    } else {
        return file.trim_start_matches("./").to_string();
    };
    match root.and_then(|r| absolute.strip_prefix(r).ok()) {
        Some(rel) => rel.to_string_lossy().replace('\\', "/"),
        None => file.to_string(),
    }
}

/// Reads the transcript from where this session last stopped and captures its signals.
fn capture_transcript(
    lore: &mut Lore,
    input: &HookInput,
    options: &HookOptions,
    ctx: &WriteContext,
) -> Result<HookOutcome> {
    let Some(path) = &input.transcript else {
        return Ok(HookOutcome::default());
    };
    let session = ctx.session.clone().unwrap_or_default();
    let mut capture = Capture::new(lore);
    capture.session_cap = options.session_cap;
    let state = capture.session_state(&session);
    let Some(read) = capture::transcript_tail::read_new(path, &state)? else {
        return Ok(HookOutcome::default());
    };
    let found: Vec<_> = read
        .transcript
        .turns
        .iter()
        .flat_map(|t| capture::detect(&t.text))
        .collect();
    let report = capture.capture(&found, ctx)?;
    if !session.is_empty() {
        // Under the session's lock: capture saved its own count of writes meanwhile.
        capture.update_session_state(&session, |state| read.save(state))?;
    }
    Ok(HookOutcome {
        message: capture_message(&report),
        capture: Some(report),
        ..HookOutcome::default()
    })
}

fn capture_message(report: &CaptureReport) -> Option<String> {
    let (w, q) = (report.written.len(), report.queued.len());
    if w == 0 && q == 0 {
        return None;
    }
    let mut parts = Vec::new();
    if w > 0 {
        parts.push(format!(
            "saved {w} memor{}",
            if w == 1 { "y" } else { "ies" }
        ));
    }
    if q > 0 {
        parts.push(format!(
            "queued {q} suggestion{} (`lore review`)",
            if q == 1 { "" } else { "s" }
        ));
    }
    let secrets = report.secrets().count();
    if secrets > 0 {
        parts.push(format!("redacted secrets in {secrets}"));
    }
    Some(format!("lore: {}", parts.join(", ")))
}

/// Before compaction: commit the context branch's uncommitted steps, so nothing logged is lost
/// with the agent's context.
fn checkpoint(lore: &Lore, input: &HookInput, ctx: &WriteContext) -> Result<Option<String>> {
    let ws = Workspace::new(lore.store());
    let Some(branch) = ws.current()? else {
        return Ok(None);
    };
    if ws.uncommitted(&branch)?.items.is_empty() {
        return Ok(None);
    }
    let why = input.source.as_deref().unwrap_or("auto");
    let contribution = format!(
        "Checkpoint before context compaction ({why}) in session {}",
        ctx.session.as_deref().unwrap_or("unknown")
    );
    let done = ws.commit(Some(&branch), &contribution, None, None, ctx)?;
    Ok(Some(done.commit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_context_is_cut_at_a_line() {
        let text = "line\n".repeat(5000);
        let cut = cap_chars(&text, 1000);
        assert!(cut.chars().count() <= 1000);
        assert!(cut.ends_with("[… cut to fit]"));
    }
}
