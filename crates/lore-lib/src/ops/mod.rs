//! Every user-facing operation, defined once: a typed request (serde + schemars, so the MCP
//! schemas come from the same type), a typed response, and how to run it against a handle.
//!
//! Front ends are adapters around this module: the CLI turns arguments into a request and
//! renders the response as text or `--json`; the MCP server deserializes tool arguments into the
//! same request and returns the same response as structured content; the web UI does the same
//! over HTTP. So one operation returns the same fields on every front end, and a new front end
//! reuses the operations unchanged (the shape of cargo's `ops` and rust-analyzer's `ide`).
//!
//! Requests carry plain data: the front end resolves what only it can know (paths relative to
//! its working directory, standard input, files) before building one.

pub mod browse;
pub mod ctx;
pub mod memory;
pub mod recall;
pub mod review;
pub mod scope;
pub mod sequential;
pub mod store;
pub mod sync;
pub mod thoughts;
pub mod transfer;

use jiff::{SignedDuration, Timestamp};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::memory::{Lore, WriteContext};
use crate::progress::{self, SharedProgress};

/// What an operation does to the store, for front ends that say so (MCP tool annotations,
/// confirmations in the web UI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Reads only.
    ReadOnly,
    /// Adds or changes records; history keeps what was there.
    Write {
        /// Repeating the same request changes nothing more.
        idempotent: bool,
    },
    /// Removes something for good (rewrites history).
    Destructive {
        /// Repeating the same request changes nothing more.
        idempotent: bool,
    },
}

/// One operation: its request type is `Self`.
pub trait Operation: DeserializeOwned + JsonSchema + Send + 'static {
    /// Stable snake_case name (the MCP tool's name).
    const NAME: &'static str;
    /// A short human title.
    const TITLE: &'static str;
    /// What it does, for people and for agents choosing a tool.
    const DESCRIPTION: &'static str;
    /// What it does to the store.
    const EFFECT: Effect;
    /// The response.
    type Output: Serialize + JsonSchema + Send + 'static;

    /// Runs the operation.
    fn run(self, env: &mut Env<'_>) -> Result<Self::Output>;
}

/// What an operation runs against: the handle, who is writing, where progress goes, and the
/// warnings gathered on the way (things the caller should know that did not stop the
/// operation).
pub struct Env<'a> {
    /// The store and its index.
    pub lore: &'a mut Lore,
    /// Who writes, and when.
    pub write: WriteContext,
    /// Where long operations report progress.
    pub progress: SharedProgress,
    warnings: Vec<String>,
}

impl<'a> Env<'a> {
    /// An environment with silent progress.
    pub fn new(lore: &'a mut Lore, write: WriteContext) -> Env<'a> {
        Env {
            lore,
            write,
            progress: progress::silent(),
            warnings: Vec::new(),
        }
    }

    /// Sends progress to `progress`.
    pub fn with_progress(mut self, progress: SharedProgress) -> Self {
        self.progress = progress;
        self
    }

    /// Records a warning for the caller.
    pub fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    /// The warnings gathered so far (the handle's own, such as a missing git identity,
    /// included), emptied.
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut all = std::mem::take(&mut self.warnings);
        all.extend(self.lore.take_warnings());
        all
    }

    /// Runs an operation here.
    pub fn run<O: Operation>(&mut self, request: O) -> Result<O::Output> {
        let out = request.run(self);
        // A write that leaves more loose objects than git's `gc.auto` allows packs them (about
        // once per thousand single writes): a failure to pack loses nothing and is only said.
        if out.is_ok()
            && matches!(O::EFFECT, Effect::Write { .. })
            && let Err(e) = self.lore.pack_if_due()
        {
            self.warn(format!("packing loose objects failed: {e}"));
        }
        self.progress.finish();
        out
    }
}

/// Parses a JSON request for the operation (unknown fields refused) and runs it: for front ends
/// that receive JSON (MCP, the web UI).
pub fn run_json<O: Operation>(env: &mut Env<'_>, args: serde_json::Value) -> Result<O::Output> {
    let request: O = serde_path_to_error::deserialize(args).map_err(|e| {
        let at = e.path().to_string();
        let reason = match at.as_str() {
            "." | "" => e.inner().to_string(),
            _ => format!("{at}: {}", e.inner()),
        };
        Error::Invalid {
            what: "arguments",
            value: O::NAME.to_string(),
            reason,
        }
    })?;
    env.run(request)
}

/// Reads a time: RFC 3339, a date (`2026-01-31`), or an age before `now` (`30m`, `12h`, `7d`,
/// `2w`).
pub fn parse_time(value: &str, now: Timestamp) -> Result<Timestamp> {
    let v = value.trim();
    if let Some(t) = crate::interop::parse_time(v) {
        return Ok(t);
    }
    let bad = || Error::Invalid {
        what: "time",
        value: value.to_string(),
        reason: "use 2026-01-31, 2026-01-31T10:00:00Z, or an age like 30m, 12h, 7d, 2w".into(),
    };
    let (num, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
    let n: i64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        "d" => n.checked_mul(86_400),
        "w" => n.checked_mul(7 * 86_400),
        _ => return Err(bad()),
    }
    .ok_or_else(bad)?;
    now.checked_sub(SignedDuration::from_secs(secs))
        .map_err(|_| bad())
}

/// Reads a list of words given as `a,b` or as separate items (tags, statuses), trimmed, empty
/// ones dropped.
pub fn split_list(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

pub(crate) use crate::model::one_of;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_dates_or_ages() {
        let now: Timestamp = "2026-03-01T00:00:00Z".parse().unwrap();
        assert_eq!(
            parse_time("2d", now).unwrap(),
            "2026-02-27T00:00:00Z".parse::<Timestamp>().unwrap()
        );
        assert!(parse_time("2026-01-31", now).is_ok());
        assert!(parse_time("soon", now).is_err());
        assert!(parse_time("99999999999999999w", now).is_err());
    }

    #[test]
    fn lists_split_on_commas() {
        assert_eq!(
            split_list(&["a, b".into(), "".into(), "c".into()]),
            vec!["a", "b", "c"]
        );
    }
}
