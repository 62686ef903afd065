//! Automatic capture: signals found in prompts, responses and transcripts become memories (AUTO
//! tier), suggestions queued for review (SUGGEST), or nothing (SKIP).
//!
//! Before anything is written or queued, a novelty check drops repeats of stored memories and of
//! queued suggestions, and a per-session cap bounds how many memories one session writes on its
//! own. Local state lives under `<git common dir>/lore/capture/` (per clone, never pushed):
//! `review.jsonl` (the queue, a [`LineFile`]) and `sessions/<session>.json` (what a session has
//! written, and how far its transcript has been read), both kept by the rule of
//! [`crate::localstate`]: a suggestion is checked against the queue and appended under one lock,
//! and a session's state is read, changed and written back under its lock. A session state that
//! cannot be read is a warning on the store ([`crate::Store::take_warnings`]), and capture goes on
//! from an empty state.

pub mod signals;
pub mod transcript;
pub mod transcript_tail;

use std::path::PathBuf;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::localstate::linefile::LineFile;
use crate::localstate::{JsonFile, Locked};
use crate::memory::{Lore, NewMemory, Novelty, WriteContext, Written};
use crate::model::MemoryId;
use crate::secrets::SecretReport;
pub use signals::{Signal, Source, Tier, detect};

/// The default number of memories one session may write automatically.
pub const DEFAULT_SESSION_CAP: usize = 20;

/// A suggestion waiting in the review queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Suggestion {
    /// Its id in the queue (a memory-style id).
    pub id: String,
    /// When it was queued.
    pub created: Timestamp,
    /// The agent whose session produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The signal.
    #[serde(flatten)]
    pub signal: Signal,
}

/// A signal capture did not act on, and why.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Skipped {
    /// The signal's summary.
    pub summary: String,
    /// Its confidence.
    pub confidence: f64,
    /// Why: `low confidence`, `duplicate of <id>`, `already queued`, `session cap reached`.
    pub reason: String,
}

/// What one capture did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CaptureReport {
    /// Memories written (AUTO tier).
    pub written: Vec<Written>,
    /// Suggestions queued for `lore review` (SUGGEST tier, or AUTO past the session cap).
    pub queued: Vec<Suggestion>,
    /// Signals dropped.
    pub skipped: Vec<Skipped>,
}

impl CaptureReport {
    /// The secret scanner's reports on what was written.
    pub fn secrets(&self) -> impl Iterator<Item = &SecretReport> {
        self.written.iter().filter_map(|w| w.secrets.as_ref())
    }
}

/// Per-session capture state.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionState {
    /// Memories this session has written automatically.
    pub auto_written: usize,
    /// Transcript lines already read (later reads start after them).
    pub transcript_lines: usize,
    /// Memories already given to this session by a hook (not given again).
    #[serde(default)]
    pub injected: Vec<String>,
    /// The transcript's byte offset after the last whole line read (0: read it whole next).
    #[serde(default)]
    pub transcript_offset: u64,
    /// A hash of the bytes before `transcript_offset`, so a replaced file is not read from it.
    #[serde(default)]
    pub transcript_tail: u64,
}

/// Edits made while accepting a suggestion.
#[derive(Clone, Debug, Default)]
pub struct SuggestionEdit {
    /// Another namespace.
    pub namespace: Option<String>,
    /// Another summary.
    pub summary: Option<String>,
    /// Another body.
    pub body: Option<String>,
}

/// Capture for one store: detection results in, memories and suggestions out.
pub struct Capture<'a> {
    lore: &'a mut Lore,
    dir: PathBuf,
    /// The most memories one session writes automatically.
    pub session_cap: usize,
}

fn session_file_name(session: &str) -> String {
    let safe = !session.is_empty()
        && session.len() <= 96
        && session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !session.starts_with('.')
        && crate::secrets::scan(session).is_empty();
    if safe {
        format!("{session}.json")
    } else {
        format!(
            "h-{}.json",
            format_args!("{:016x}", crate::hash::fnv1a(session.as_bytes()))
        )
    }
}

impl<'a> Capture<'a> {
    /// Capture into `lore`'s store.
    pub fn new(lore: &'a mut Lore) -> Capture<'a> {
        let dir = lore.store().common_dir().join("lore").join("capture");
        Capture {
            lore,
            dir,
            session_cap: DEFAULT_SESSION_CAP,
        }
    }

    /// The review queue.
    pub fn queue(&self) -> LineFile<Suggestion> {
        LineFile::new(&self.dir, "review")
    }

    fn session_file(&self, session: &str) -> JsonFile<SessionState> {
        JsonFile::new(self.dir.join("sessions").join(session_file_name(session)))
    }

    /// A session's state (default when it has none yet). A state that cannot be read is
    /// reported as a warning on the store and read as empty.
    pub fn session_state(&self, session: &str) -> SessionState {
        let file = self.session_file(session);
        match file.read() {
            Ok(state) => state.unwrap_or_default(),
            Err(e) => {
                self.warn_unreadable(session, &e.to_string());
                SessionState::default()
            }
        }
    }

    /// Replaces a session's state (under its lock, through a temporary file of its own).
    pub fn save_session_state(&self, session: &str, state: &SessionState) -> Result<()> {
        self.session_file(session).write(state.clone())
    }

    /// Changes a session's state under its lock: read, `change`, written back. Concurrent hooks
    /// of one session each see the others' changes, so none is lost.
    pub fn update_session_state<R>(
        &self,
        session: &str,
        change: impl FnOnce(&mut SessionState) -> R,
    ) -> Result<R> {
        let mut locked = self.lock_session(session)?;
        let value = change(&mut locked.value);
        locked.save()?;
        Ok(value)
    }

    fn lock_session(&self, session: &str) -> Result<Locked<SessionState>> {
        let locked = self.session_file(session).lock()?;
        if let Some(why) = &locked.damaged {
            self.warn_unreadable(session, why);
        }
        Ok(locked)
    }

    fn warn_unreadable(&self, session: &str, why: &str) {
        self.lore.store().warn(format!(
            "capture state of session {session:?} could not be read ({why}); it starts afresh"
        ));
    }

    /// Acts on signals: AUTO ones are written (novel ones, up to the session cap; past it they
    /// are queued), SUGGEST ones queued, SKIP ones reported.
    pub fn capture(&mut self, found: &[Signal], ctx: &WriteContext) -> Result<CaptureReport> {
        let mut report = CaptureReport::default();
        let session = ctx.session.clone().unwrap_or_default();
        // The session's state stays locked while this capture runs, so two captures of one
        // session count against one cap.
        let mut state = if session.is_empty() {
            None
        } else {
            Some(self.lock_session(&session)?)
        };
        let mut auto_written = state.as_ref().map_or(0, |s| s.value.auto_written);
        // A signal waiting for review is not also written as a memory.
        let queued: Vec<Suggestion> = self.queue().read()?.items;
        let mut seen = std::collections::HashSet::new();
        for signal in found {
            let skip = |reason: String| Skipped {
                summary: signal.summary.clone(),
                confidence: signal.confidence,
                reason,
            };
            if !seen.insert((signal.namespace.clone(), signal.body.clone())) {
                continue;
            }
            let tier = signal.tier();
            if tier == Tier::Skip {
                report.skipped.push(skip("low confidence".into()));
                continue;
            }
            let new = memory_of(signal);
            if let Some(d) = self.lore.find_duplicate(&new)? {
                report
                    .skipped
                    .push(skip(format!("duplicate of {}", d.memory.id)));
                continue;
            }
            if queued
                .iter()
                .chain(&report.queued)
                .any(|q| same_signal(&q.signal, signal))
            {
                report.skipped.push(skip("already queued".into()));
                continue;
            }
            if tier == Tier::Auto && auto_written < self.session_cap {
                match self.write_signal(&new, ctx)? {
                    Ok(written) => {
                        auto_written += 1;
                        report.written.push(written);
                    }
                    Err(reason) => report.skipped.push(skip(reason)),
                }
                continue;
            }
            let Some(suggestion) = self.enqueue(signal, ctx)? else {
                report.skipped.push(skip("already queued".into()));
                continue;
            };
            if tier == Tier::Auto {
                report.skipped.push(skip(
                    "session cap reached: queued for review instead".into(),
                ));
            }
            report.queued.push(suggestion);
        }
        if let Some(state) = &mut state
            && !report.written.is_empty()
        {
            state.value.auto_written = auto_written;
            // The memories are written: a count that cannot be saved is a warning, not a
            // failure of the capture.
            if let Err(e) = state.save() {
                self.lore.store().warn(format!(
                    "capture state of session {session:?} could not be saved: {e}"
                ));
            }
        }
        Ok(report)
    }

    /// Writes one AUTO signal's memory. A duplicate, a blocked secret or an unknown namespace
    /// drops this signal, not the rest: its reason comes back as the inner error.
    fn write_signal(
        &mut self,
        new: &NewMemory,
        ctx: &WriteContext,
    ) -> Result<std::result::Result<Written, String>> {
        match self.lore.remember_checked(new, ctx, Novelty::Check) {
            Ok(done) => Ok(Ok(done.written)),
            Err(Error::Duplicate { id, .. }) => Ok(Err(format!("duplicate of {id}"))),
            Err(e @ (Error::SecretBlocked(_) | Error::UnknownNamespace { .. })) => {
                Ok(Err(e.to_string()))
            }
            Err(e) => Err(e),
        }
    }

    /// Queues a signal for review; `None` when it is queued already.
    fn enqueue(&self, signal: &Signal, ctx: &WriteContext) -> Result<Option<Suggestion>> {
        // Who and which session are recorded less any secret they hold (a name is never
        // the place for one), and the line passes the store's guard like any write.
        let unsecret = |v: &Option<String>| v.as_deref().map(crate::secrets::unsecret);
        let suggestion = Suggestion {
            id: MemoryId::generate()?.to_string(),
            created: ctx.now.unwrap_or_else(Timestamp::now),
            agent: unsecret(&ctx.agent),
            session: unsecret(&ctx.session),
            signal: screened(self.lore, signal)?,
        };

        // Checked and appended under the queue's lock: another process queueing the same
        // signal at the same moment queues it once between them.
        let store = self.lore.store();
        let appended = self.queue().append_unless(
            &suggestion,
            |q| same_signal(&q.signal, signal) || same_signal(&q.signal, &suggestion.signal),
            |line| store.guard("the review queue", line),
        )?;
        Ok(appended.then_some(suggestion))
    }

    /// The suggestions waiting for review, oldest first.
    pub fn pending(&self) -> Result<Vec<Suggestion>> {
        Ok(self.queue().read()?.items)
    }

    /// Accepts a suggestion (by id or unique id prefix), with edits: writes it as a memory and
    /// takes it off the queue. The queue stays locked meanwhile, so no one accepts it twice.
    pub fn accept(
        &mut self,
        id: &str,
        edit: &SuggestionEdit,
        ctx: &WriteContext,
    ) -> Result<Written> {
        let queue = self.queue();
        let lore = &mut *self.lore;
        queue.rewrite(|items| {
            let at = find(items, id)?;
            let mut signal = items[at].signal.clone();
            apply_edit(&mut signal, edit);
            let mut new = memory_of(&signal);
            // A person accepted it: full confidence.
            new.confidence = Some(1.0);
            let written = lore.remember_checked(&new, ctx, Novelty::Check)?;
            items.remove(at);
            Ok(written.written)
        })
    }

    /// Edits a queued suggestion in place (it stays queued for a later accept or reject). The
    /// new text is screened for secrets like any other.
    pub fn edit(&mut self, id: &str, edit: &SuggestionEdit) -> Result<Suggestion> {
        let lore = &*self.lore;
        self.queue().rewrite(|items| {
            let at = find(items, id)?;
            let mut signal = items[at].signal.clone();
            apply_edit(&mut signal, edit);
            crate::model::check_summary(&signal.summary)?;
            crate::model::Namespace::parse(&signal.namespace)?;
            items[at].signal = screened(lore, &signal)?;
            Ok(items[at].clone())
        })
    }

    /// Rejects a suggestion: takes it off the queue.
    pub fn reject(&mut self, id: &str) -> Result<Suggestion> {
        self.queue().rewrite(|items| {
            let at = find(items, id)?;
            Ok(items.remove(at))
        })
    }
}

/// The suggestion's text, as the secret policy would store it. A suggestion sits in a local
/// file, but it still must not hold a secret the policy would keep out of memory.
fn screened(lore: &Lore, signal: &Signal) -> Result<Signal> {
    let mut s = signal.clone();
    crate::secrets::screen(
        &mut [("summary", &mut s.summary), ("body", &mut s.body)],
        lore.secret_policy()?,
    )?;
    Ok(s)
}

/// Whether two signals are the same suggestion (same namespace and body).
fn same_signal(a: &Signal, b: &Signal) -> bool {
    a.namespace == b.namespace && a.body == b.body
}

fn apply_edit(signal: &mut Signal, edit: &SuggestionEdit) {
    if let Some(ns) = &edit.namespace {
        signal.namespace = ns.clone();
    }
    if let Some(s) = &edit.summary {
        signal.summary = s.clone();
    }
    if let Some(b) = &edit.body {
        signal.body = b.clone();
    }
}

fn find(items: &[Suggestion], id: &str) -> Result<usize> {
    let matches: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].id.starts_with(id) && !id.is_empty())
        .collect();
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => Err(Error::NotFound(format!("suggestion {id}"))),
        many => Err(Error::Ambiguous {
            query: id.into(),
            candidates: many.iter().map(|&i| items[i].id.clone()).collect(),
        }),
    }
}

/// The memory a signal becomes: its namespace, summary and body, tagged `captured`, with the
/// signal's confidence.
pub fn memory_of(signal: &Signal) -> NewMemory {
    NewMemory {
        namespace: signal.namespace.clone(),
        summary: signal.summary.clone(),
        body: signal.body.clone(),
        tags: vec!["captured".into()],
        confidence: Some((signal.confidence * 100.0).round() / 100.0),
        ..NewMemory::default()
    }
}
