//! Events a hook could not handle within its time budget, kept for the next hook to handle:
//! `<git common dir>/lore/hooks/spool.jsonl`, one event a line (per clone, never pushed).
//!
//! A hook gives up when its budget runs out (a busy repository, a slow disk), and the agent
//! goes on; what the event carried (a decision in the transcript, a step) is not dropped but
//! spooled, and the next hook of any event in this repository handles the spooled events first.
//! Every string of a spooled payload is kept less any secret in it, like every other line lore
//! writes.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::localstate::linefile::LineFile;

/// One event waiting to be handled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpooledEvent {
    /// The agent's name as the hook was called with it (`claude-code`).
    pub agent: String,
    /// The event's name as the hook was called with it (`Stop`).
    pub event: String,
    /// The payload, as JSON text, each string less any secret.
    pub payload: String,
    /// When it was spooled.
    pub spooled: Timestamp,
    /// How many hooks took it and could not finish it (it is dropped after [`MAX_ATTEMPTS`]).
    #[serde(default)]
    pub attempts: u32,
}

/// A spooled event that this many hooks could not finish is dropped (with a warning): one that
/// always overruns must not take every later hook's time.
pub const MAX_ATTEMPTS: u32 = 3;

impl SpooledEvent {
    /// An event to spool: `payload` is the JSON the agent sent (its strings are redacted here).
    pub fn new(agent: &str, event: &str, payload: &str, now: Timestamp) -> Result<SpooledEvent> {
        let mut value: serde_json::Value =
            serde_json::from_str(payload).map_err(|e| Error::Parse {
                context: "spooling a hook event".into(),
                message: e.to_string(),
            })?;
        unsecret_strings(&mut value);
        Ok(SpooledEvent {
            agent: agent.to_string(),
            event: event.to_string(),
            payload: value.to_string(),
            spooled: now,
            attempts: 0,
        })
    }
}

fn unsecret_strings(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => *s = crate::secrets::unsecret(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(unsecret_strings),
        serde_json::Value::Object(map) => map.values_mut().for_each(unsecret_strings),
        _ => {}
    }
}

/// The spool's directory in a repository's common git directory.
pub fn spool_dir(common_dir: &Path) -> PathBuf {
    common_dir.join("lore").join("hooks")
}

fn spool_file(common_dir: &Path) -> LineFile<SpooledEvent> {
    LineFile::new(&spool_dir(common_dir), "spool")
}

/// Appends events to the spool (each on disk when this returns).
pub fn save(common_dir: &Path, events: &[SpooledEvent]) -> Result<()> {
    let file = spool_file(common_dir);
    for event in events {
        file.append(event)?;
    }
    Ok(())
}

/// Takes every spooled event out of the spool, oldest first (the spool is empty after).
pub fn take(common_dir: &Path) -> Result<Vec<SpooledEvent>> {
    let file = spool_file(common_dir);
    if !file.path().exists() {
        return Ok(Vec::new());
    }
    file.drain(|contents| Ok(contents.items.clone()))
}

/// How many events wait in the spool.
pub fn waiting(common_dir: &Path) -> Result<usize> {
    Ok(spool_file(common_dir).read()?.items.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spooled_events_come_back_once_in_order_and_without_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let now = Timestamp::now();
        let secret = "ghp_R8fK2mQ9vT4xW7bN1cZ5hJ3pL6sD0gY8aE2u";
        let payload = format!(r#"{{"prompt":"use {secret}","n":[1,"two"]}}"#);
        let first = SpooledEvent::new("claude-code", "Stop", &payload, now).unwrap();
        let second = SpooledEvent::new("codex", "PostToolUse", "{}", now).unwrap();
        assert!(!first.payload.contains(secret), "{}", first.payload);
        assert!(
            first.payload.contains(r#""n":[1,"two"]"#),
            "{}",
            first.payload
        );
        assert_eq!(take(dir.path()).unwrap(), Vec::new());
        save(dir.path(), std::slice::from_ref(&first)).unwrap();
        save(dir.path(), std::slice::from_ref(&second)).unwrap();
        assert_eq!(waiting(dir.path()).unwrap(), 2);
        assert_eq!(take(dir.path()).unwrap(), vec![first, second]);
        assert_eq!(take(dir.path()).unwrap(), Vec::new());
        assert!(SpooledEvent::new("codex", "Stop", "not json", now).is_err());
    }
}
