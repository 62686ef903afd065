//! Scores of thoughts as an append-only set of versions on `refs/lore/scores/<session>`, so they
//! travel with `lore sync` and merge by union: writing, reading the current version, listing all
//! of them, merging two sides, and carrying over the scores of the older notes layout.
//!
//! ```text
//! refs/lore/scores/<session> ─► commit ─► tree
//!   <2 hex>/<38 hex>/<13-digit ms>-<blob id>.json    one scored version of a thought
//! ```
//!
//! A version's name holds the time it was written (milliseconds since the epoch, zero-padded)
//! and the id of its own content, so two clones never write different content at one path and
//! the merge of two trees is their union. The current scores of a thought are its version with
//! the greatest name: the newest time, ties broken by the content's id. Nothing is removed: the
//! versions that lost stay listed ([`versions`]). A new version on a clone is stamped at least
//! one millisecond after that thought's newest, so a re-score always supersedes what its clone
//! showed. Scores written as git notes on `refs/notes/lore/scores/<session>` (the older layout)
//! still count while a thought has no version; the next score written in that session copies
//! them in as versions stamped 0 (older than any other) and removes the notes ref.

use git2::{ObjectType, Oid};
use jiff::Timestamp;
use schemars::JsonSchema;
use serde::Serialize;

use super::{SCORES_REF_PREFIX, Scores, json_error, scores_ref, short};
use crate::error::{Error, Result};
use crate::memory::WriteContext;
use crate::store::{Edit, Message, RefWrite, Snapshot, Store, ref_target};

/// The ref holding a session's scored versions.
pub fn versions_ref(session: &str) -> String {
    format!("{SCORES_REF_PREFIX}{session}")
}

/// The directory of a thought's versions (fanned out like git's notes).
pub fn thought_dir(id: Oid) -> String {
    let hex = id.to_string();
    format!("{}/{}", &hex[..2], &hex[2..])
}

/// One scored version of a thought.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ScoreVersion {
    /// When it was written (milliseconds since the epoch; 0 for scores carried over from notes).
    pub at_ms: i64,
    /// The id of its content.
    pub blob: String,
    /// The scores.
    pub scores: Scores,
    /// Whether it is the current version (the greatest name).
    pub current: bool,
}

/// Reads a version's time from its file name (`<ms>-<blob>.json`).
pub fn stamp_of(name: &str) -> Option<i64> {
    name.split_once('-')?.0.parse().ok()
}

fn version_name(at_ms: i64, content: &[u8]) -> Result<String> {
    let blob = Oid::hash_object(ObjectType::Blob, content)?;
    Ok(format!("{at_ms:013}-{blob}.json"))
}

fn render(scores: &Scores) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(scores).map_err(|e| json_error("scores", e))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Every version of a thought, oldest first (the last is current); empty when it has none.
pub fn versions(store: &Store, session: &str, id: Oid) -> Result<Vec<ScoreVersion>> {
    let snap = store.snapshot(ref_target(store.repo(), &versions_ref(session))?)?;
    let files = snap.files_in(&thought_dir(id))?;
    let last = files.len().saturating_sub(1);
    let mut out = Vec::new();
    for (i, (name, blob)) in files.iter().enumerate() {
        let scores = serde_json::from_slice(&snap.blob(*blob)?)
            .map_err(|e| json_error(&format!("score version {name}"), e))?;
        out.push(ScoreVersion {
            at_ms: stamp_of(name).unwrap_or(0),
            blob: blob.to_string(),
            scores,
            current: i == last,
        });
    }
    Ok(out)
}

/// The current version of a thought in a snapshot of its session's scores ref: the newest one
/// that reads (a damaged version is passed over; the index warns of it).
pub fn current_in(snap: &Snapshot<'_>, id: Oid) -> Result<Option<Scores>> {
    for (_, blob) in snap.files_in(&thought_dir(id))?.iter().rev() {
        if let Ok(scores) = serde_json::from_slice(&snap.blob(*blob)?) {
            return Ok(Some(scores));
        }
    }
    Ok(None)
}

/// The current scores of a thought from its versions, else the older notes layout; none when
/// neither has any (the thought's `scores.json` then holds them).
pub fn current(store: &Store, session: &str, id: Oid) -> Result<Option<Scores>> {
    let snap = store.snapshot(ref_target(store.repo(), &versions_ref(session))?)?;
    if let Some(scores) = current_in(&snap, id)? {
        return Ok(Some(scores));
    }
    if let Ok(note) = store.repo().find_note(Some(&scores_ref(session)), id)
        && let Ok(scores) = serde_json::from_slice::<Scores>(note.message_bytes())
    {
        return Ok(Some(scores));
    }
    Ok(None)
}

/// A notes ref of the older layout: its tip and each (thought, note blob).
type LegacyNotes = (Oid, Vec<(Oid, Oid)>);

/// The notes of the older layout.
fn legacy_notes(store: &Store, session: &str) -> Result<Option<LegacyNotes>> {
    let Some(tip) = ref_target(store.repo(), &scores_ref(session))? else {
        return Ok(None);
    };
    let mut notes = Vec::new();
    for file in store.files(Some(tip))? {
        let hex: String = file.path.chars().filter(|c| *c != '/').collect();
        if let Ok(id) = Oid::from_str(&hex)
            && hex.len() == 40
        {
            notes.push((id, file.blob));
        }
    }
    Ok(Some((tip, notes)))
}

/// Writes a new version of a thought's scores (carrying over the session's notes of the older
/// layout in the same commit). Returns the commit.
pub fn write_version(
    store: &Store,
    session: &str,
    id: Oid,
    scores: &Scores,
    ctx: &WriteContext,
    trailers: Vec<(String, String)>,
) -> Result<Oid> {
    let content = render(scores)?;
    let now = ctx.now.unwrap_or_else(Timestamp::now).as_millisecond();
    let legacy = legacy_notes(store, session)?;
    let message = Message {
        subject: format!("score {} = {:.4}", short(&id.to_string()), scores.combined),
        body: None,
        trailers,
    };
    let dir = thought_dir(id);
    let (_, commit) = store.transact_ref(&versions_ref(session), |snap| {
        let mut edits = Vec::new();
        for (thought, blob) in legacy.iter().flat_map(|(_, notes)| notes) {
            let old = snap.blob(*blob)?;
            if serde_json::from_slice::<Scores>(&old).is_ok() {
                let path = format!("{}/{}", thought_dir(*thought), version_name(0, &old)?);
                edits.push(Edit::Upsert { path, content: old });
            }
        }
        let newest = snap
            .files_in(&dir)?
            .last()
            .and_then(|(name, _)| stamp_of(name))
            .unwrap_or(-1);
        let at = now.max(newest + 1);
        edits.push(Edit::Upsert {
            path: format!("{dir}/{}", version_name(at, &content)?),
            content: content.clone(),
        });
        Ok((RefWrite::on_tip(edits, message.clone()), ()))
    })?;
    if let Some((tip, _)) = legacy {
        // Carried over: the notes ref goes, unless it moved meanwhile (nothing writes it now).
        if let Ok(mut r) = store.repo().find_reference(&scores_ref(session))
            && r.target() == Some(tip)
        {
            r.delete()?;
        }
    }
    commit.ok_or_else(|| Error::ThoughtNotFound("the score was not written".into()))
}
