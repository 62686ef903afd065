//! Where a call of the sequential-thinking interface puts its thought in the tree, and the
//! names of the sessions it writes to.
//!
//! Numbers resolve within the session. A thought continues its line: the newest thought of its
//! branch when it names one that has thoughts, else the newest of the main line (thoughts
//! without a branch id); thought 1 starts a new root. A revision becomes a sibling of the
//! thought it revises, a branch starts from the thought it names. A revision or branch that
//! names a thought the session does not hold is written all the same — the official server
//! appends every thought to one history whatever it names, so it continues its line as a plain
//! thought would — and the placement says what could not be resolved.

use git2::Oid;
use rusqlite::{OptionalExtension, params};

use super::index::ThoughtIndex;
use crate::error::{Error, Result};

/// How a sequential-thinking call relates to earlier thoughts.
#[derive(Clone, Debug, Default)]
pub struct Sequence {
    /// The session.
    pub session: String,
    /// This thought's number (1-based).
    pub number: u32,
    /// The number of the thought it revises.
    pub revises: Option<u32>,
    /// Whether it is a revision.
    pub is_revision: bool,
    /// The number of the thought it branches from.
    pub branch_from: Option<u32>,
    /// The branch id.
    pub branch: Option<String>,
}

/// Where the thought goes.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Its parent thought.
    pub parent: Option<Oid>,
    /// The thought it revises.
    pub revises: Option<Oid>,
    /// Its branch id.
    pub branch: Option<String>,
    /// What the call named that the session does not hold (the thought was attached to its
    /// line instead).
    pub unresolved: Option<String>,
}

/// The newest thought of a session numbered `number`: on `branch` first, then on the main line,
/// then anywhere.
fn by_number(
    index: &ThoughtIndex,
    session: &str,
    number: u32,
    branch: Option<&str>,
) -> Result<Option<Oid>> {
    let id: Option<String> = index
        .conn
        .query_row(
            "SELECT id FROM thoughts WHERE session = ?1 AND number = ?2
             ORDER BY (branch IS ?3 AND ?3 IS NOT NULL) DESC, (branch IS NULL) DESC, rowid DESC
             LIMIT 1",
            params![session, number, branch],
            |r| r.get(0),
        )
        .optional()?;
    id.map(|i| super::parse_oid(&i)).transpose()
}

/// The newest thought of a session on `branch` (`None`: the main line).
fn newest_on(index: &ThoughtIndex, session: &str, branch: Option<&str>) -> Result<Option<Oid>> {
    let id: Option<String> = index
        .conn
        .query_row(
            "SELECT id FROM thoughts WHERE session = ?1 AND branch IS ?2
             ORDER BY rowid DESC LIMIT 1",
            params![session, branch],
            |r| r.get(0),
        )
        .optional()?;
    id.map(|i| super::parse_oid(&i)).transpose()
}

/// The thought a new thought on `branch` follows: the branch's newest, else the main line's.
fn line_tip(index: &ThoughtIndex, seq: &Sequence) -> Result<Option<Oid>> {
    if let Some(branch) = seq.branch.as_deref()
        && let Some(tip) = newest_on(index, &seq.session, Some(branch))?
    {
        return Ok(Some(tip));
    }
    newest_on(index, &seq.session, None)
}

/// Places a sequential-thinking thought (see the module's documentation).
pub fn place(index: &ThoughtIndex, seq: &Sequence) -> Result<Placement> {
    if seq.number == 0 {
        return Err(Error::Invalid {
            what: "thoughtNumber",
            value: "0".into(),
            reason: "thoughts are numbered from 1".into(),
        });
    }
    let find = |n: u32| by_number(index, &seq.session, n, seq.branch.as_deref());
    let on_line = |unresolved: String| -> Result<Placement> {
        Ok(Placement {
            parent: line_tip(index, seq)?,
            revises: None,
            branch: seq.branch.clone(),
            unresolved: Some(unresolved),
        })
    };
    if seq.is_revision || seq.revises.is_some() {
        let Some(n) = seq.revises else {
            return on_line("isRevision names no revisesThought".into());
        };
        return match find(n)? {
            Some(target) => Ok(Placement {
                parent: index.parent_of(target)?,
                revises: Some(target),
                branch: seq.branch.clone(),
                unresolved: None,
            }),
            None => on_line(format!(
                "revisesThought {n}: the session has no thought {n}"
            )),
        };
    }
    if let Some(n) = seq.branch_from {
        return match find(n)? {
            Some(base) => Ok(Placement {
                parent: Some(base),
                revises: None,
                branch: seq.branch.clone(),
                unresolved: None,
            }),
            None => on_line(format!(
                "branchFromThought {n}: the session has no thought {n}"
            )),
        };
    }
    // Thought 1 starts a new sequence; any other continues its line.
    let parent = if seq.number == 1 {
        None
    } else {
        line_tip(index, seq)?
    };
    Ok(Placement {
        parent,
        revises: None,
        branch: seq.branch.clone(),
        unresolved: None,
    })
}

/// The branch ids a session's sequential thoughts carry, in the order they first appeared.
pub fn branches(index: &ThoughtIndex, session: &str) -> Result<Vec<String>> {
    let mut stmt = index.conn.prepare_cached(
        "SELECT branch FROM thoughts WHERE session = ?1 AND branch IS NOT NULL
         GROUP BY branch ORDER BY min(rowid)",
    )?;
    let rows = stmt
        .query_map([session], |r| r.get(0))?
        .collect::<std::result::Result<_, _>>()?;
    Ok(rows)
}

const ADJECTIVES: [&str; 32] = [
    "amber", "bold", "brisk", "calm", "clear", "cool", "crisp", "deft", "eager", "even", "fair",
    "fine", "fleet", "fresh", "glad", "grand", "keen", "kind", "lucid", "merry", "mild", "neat",
    "noble", "plain", "quick", "quiet", "ready", "sharp", "steady", "sure", "swift", "warm",
];
const NOUNS: [&str; 32] = [
    "otter", "heron", "finch", "lynx", "maple", "cedar", "river", "delta", "comet", "harbor",
    "meadow", "falcon", "willow", "badger", "coral", "ember", "glacier", "lantern", "marten",
    "osprey", "pebble", "quartz", "raven", "spruce", "thistle", "tundra", "valley", "walrus",
    "yarrow", "zephyr", "beacon", "canyon",
];

/// A readable name for a new session: its start time (UTC, to the second) and two words drawn
/// from `entropy`, with four hex digits of it, e.g. `20250601-143005-brisk-heron-3fa2`.
pub fn session_name(now: jiff::Timestamp, entropy: u64) -> String {
    let at = now.strftime("%Y%m%d-%H%M%S");
    let adjective = ADJECTIVES[(entropy % 32) as usize];
    let noun = NOUNS[((entropy >> 5) % 32) as usize];
    format!("{at}-{adjective}-{noun}-{:04x}", (entropy >> 10) & 0xffff)
}
