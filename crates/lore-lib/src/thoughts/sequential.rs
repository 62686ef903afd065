//! Where a call of the sequential-thinking interface puts its thought in the tree: the next
//! thought continues the newest one of its branch (thought 1 starts a new root), a revision becomes a sibling of the thought it
//! revises, a branch starts from the thought it names.

use git2::Oid;

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
}

/// Places a sequential-thinking thought. A revision or branch pointing at itself or a later
/// number is a cycle; one pointing at a number the session does not have is not found.
pub fn place(index: &ThoughtIndex, seq: &Sequence) -> Result<Placement> {
    if seq.number == 0 {
        return Err(Error::Invalid {
            what: "thoughtNumber",
            value: "0".into(),
            reason: "thoughts are numbered from 1".into(),
        });
    }
    let earlier = |n: u32, what: &str| -> Result<Oid> {
        if n >= seq.number {
            return Err(Error::ThoughtCycle(format!(
                "thought {} cannot {what} thought {n}: only earlier thoughts can be",
                seq.number
            )));
        }
        index
            .by_number(&seq.session, n, seq.branch.as_deref())?
            .or(index.by_number(&seq.session, n, None)?)
            .ok_or_else(|| {
                Error::ThoughtNotFound(format!(
                    "session {:?} has no thought {n} to {what}",
                    seq.session
                ))
            })
    };
    if seq.is_revision || seq.revises.is_some() {
        let Some(n) = seq.revises else {
            return Err(Error::Invalid {
                what: "revisesThought",
                value: String::new(),
                reason: "a revision names the thought it revises".into(),
            });
        };
        let target = earlier(n, "revise")?;
        let parent = index.parent_of(target)?;
        return Ok(Placement {
            parent,
            revises: Some(target),
            branch: seq.branch.clone(),
        });
    }
    if let Some(n) = seq.branch_from {
        let base = earlier(n, "branch from")?;
        return Ok(Placement {
            parent: Some(base),
            revises: None,
            branch: Some(seq.branch.clone().unwrap_or_else(|| format!("from-{n}"))),
        });
    }
    // Thought 1 starts a new sequence; any other continues the newest of its branch.
    let parent = if seq.number == 1 {
        None
    } else {
        match index.latest(&seq.session, seq.branch.as_deref())? {
            Some(p) => Some(p),
            None => index.latest(&seq.session, None)?,
        }
    };
    Ok(Placement {
        parent,
        revises: None,
        branch: seq.branch.clone(),
    })
}
