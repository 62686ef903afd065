//! Outcomes as marks: an outcome ref (`success_<id>`, `failed_<id>`, `best`) points at a mark
//! commit whose first parent is the thought it marks and whose tree is that thought's, so
//! `git diff success_X failed_Y -- thought.md` reads as before. A mark records when it was made
//! (`Lore-Marked: <ms>`) and which thought it marks (`Lore-Thought`); its other parents are the
//! marks it replaces, so every mark a ref ever held stays in its history.
//!
//! Rules, the same on every clone whatever the order of merges:
//! * one ref diverged between clones merges into a mark of the newer side's thought (time, then
//!   the thought id), with both sides as parents, so it is a fast-forward for everyone;
//! * a thought marked both `success` and `failed` has the outcome of the newer mark (time; a tie
//!   is `failed`): marks are never deleted, because a deleted ref would come back from a remote;
//! * `best` is the newest finish (time, then thought id), the same rule `done.json` merges by.
//!
//! A new mark is stamped at least one millisecond after the marks it supersedes on its clone, so
//! a re-mark always wins where it was made. A ref that points at a thought itself (the older
//! layout) is a mark of that thought at time 0.

use std::collections::BTreeMap;

use git2::{Oid, Repository, Signature, Time};

use super::{THOUGHT_TRAILER, short};
use crate::error::{Error, Result};
use crate::retry::Backoff;
use crate::store::{Message, Store, ref_target};
use std::time::Duration;

/// The trailer holding a mark's time in milliseconds.
pub const MARKED_TRAILER: &str = "Lore-Marked";

/// What an outcome ref marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    /// The thought.
    pub thought: Oid,
    /// When it was marked (ms since the epoch; 0 for the older layout).
    pub at_ms: i64,
}

fn trailer<'a>(message: &'a str, key: &str) -> Option<&'a str> {
    message
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
        .map(str::trim)
}

/// Reads what the commit an outcome ref points at marks.
pub fn read_mark(repo: &Repository, commit: Oid) -> Result<Mark> {
    let c = repo.find_commit(commit)?;
    let message = c.message_raw().unwrap_or("");
    let at = trailer(message, MARKED_TRAILER).and_then(|t| t.parse::<i64>().ok());
    let thought = trailer(message, THOUGHT_TRAILER).and_then(|t| Oid::from_str(t).ok());
    match (at, thought) {
        (Some(at_ms), Some(thought)) if c.parent_id(0).ok() == Some(thought) => {
            Ok(Mark { thought, at_ms })
        }
        _ => Ok(Mark {
            thought: commit,
            at_ms: 0,
        }),
    }
}

/// What a ref marks now, if it exists.
fn mark_at(store: &Store, name: &str) -> Result<Option<(Oid, Mark)>> {
    match ref_target(store.repo(), name)? {
        Some(tip) => Ok(Some((tip, read_mark(store.repo(), tip)?))),
        None => Ok(None),
    }
}

fn mark_commit(
    store: &Store,
    mark: Mark,
    replaces: &[Oid],
    subject: String,
    mut trailers: Vec<(String, String)>,
) -> Result<Oid> {
    let repo = store.repo();
    let thought = repo.find_commit(mark.thought)?;
    let mut parents = vec![thought.clone()];
    for r in replaces {
        if !parents.iter().any(|p| p.id() == *r) {
            parents.push(repo.find_commit(*r)?);
        }
    }
    trailers.push((THOUGHT_TRAILER.into(), mark.thought.to_string()));
    trailers.push((MARKED_TRAILER.into(), mark.at_ms.to_string()));
    let text = Message {
        subject,
        body: None,
        trailers,
    }
    .render();
    store.guard("the mark's commit message", text.as_bytes())?;
    let (name, email) = store.identity();
    let sig = Signature::new(name, email, &Time::new(mark.at_ms.div_euclid(1000), 0))?;
    let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
    Ok(repo.commit(None, &sig, &sig, &text, &thought.tree()?, &parents)?)
}

/// Moves `name` by compare-and-swap to what `next` builds from its current tip, retrying on a
/// lost race for up to ten seconds.
fn move_ref(
    store: &Store,
    name: &str,
    mut next: impl FnMut(Option<(Oid, Mark)>) -> Result<Option<Oid>>,
) -> Result<()> {
    let mut backoff = Backoff::new(
        Duration::from_millis(2),
        Duration::from_millis(16),
        Duration::from_secs(10),
    );
    loop {
        let current = mark_at(store, name)?;
        let expected = current.map(|(tip, _)| tip);
        let Some(target) = next(current)? else {
            return Ok(());
        };
        match store.compare_and_swap(name, expected, target, &format!("mark {name}")) {
            Ok(()) => return Ok(()),
            Err(e)
                if matches!(
                    e.code(),
                    git2::ErrorCode::Modified | git2::ErrorCode::Locked | git2::ErrorCode::Exists
                ) && backoff.wait() => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Points `name` at a new mark of `thought`, stamped `now_ms` or one millisecond after the
/// newest mark of `name` and of `supersedes` (the opposite outcome). Returns the stamp.
pub fn set(
    store: &Store,
    name: &str,
    thought: Oid,
    now_ms: i64,
    supersedes: &[String],
    trailers: Vec<(String, String)>,
) -> Result<i64> {
    let mut floor = now_ms;
    for other in supersedes {
        if let Some((_, m)) = mark_at(store, other)? {
            floor = floor.max(m.at_ms + 1);
        }
    }
    let mut stamped = floor;
    move_ref(store, name, |current| {
        let at_ms = current.map_or(floor, |(_, m)| floor.max(m.at_ms + 1));
        stamped = at_ms;
        let replaces: Vec<Oid> = current.map(|(tip, _)| tip).into_iter().collect();
        let subject = format!("mark {} {}", short_name(name), short(&thought.to_string()));
        let mark = Mark { thought, at_ms };
        mark_commit(store, mark, &replaces, subject, trailers.clone()).map(Some)
    })?;
    Ok(stamped)
}

fn short_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Whether mark `a` wins over mark `b` as one ref's value: the newer, then the greater thought.
fn newer(a: Mark, b: Mark) -> bool {
    (a.at_ms, a.thought) > (b.at_ms, b.thought)
}

/// Merges the other side's value of an outcome ref into ours: a mark of the winning side's
/// thought with both sides as parents (nothing when ours already contains theirs).
pub fn merge(
    store: &Store,
    name: &str,
    theirs: Oid,
    trailers: Vec<(String, String)>,
) -> Result<()> {
    let repo = store.repo();
    let their_mark = read_mark(repo, theirs)?;
    move_ref(store, name, |current| {
        let Some((ours, our_mark)) = current else {
            return Ok(Some(theirs));
        };
        if ours == theirs || repo.graph_descendant_of(ours, theirs)? {
            return Ok(None);
        }
        if repo.graph_descendant_of(theirs, ours)? {
            return Ok(Some(theirs));
        }
        let winner = if newer(their_mark, our_mark) {
            their_mark
        } else {
            our_mark
        };
        let subject = format!(
            "merge {} {}",
            short_name(name),
            short(&winner.thought.to_string())
        );
        mark_commit(store, winner, &[ours, theirs], subject, trailers.clone()).map(Some)
    })
}

/// A session's outcomes from its outcome refs (name under the session → target): each marked
/// thought's current outcome (`success` or `failed`) and the best thought.
pub fn outcomes(
    repo: &Repository,
    refs: &[(String, Oid)],
) -> Result<(BTreeMap<Oid, &'static str>, Option<Oid>)> {
    let mut newest: BTreeMap<Oid, (i64, u8)> = BTreeMap::new();
    let mut best = None;
    for (name, target) in refs {
        let mark = read_mark(repo, *target)?;
        let rank = match name.split_once('_').map(|(kind, _)| kind) {
            _ if name == "best" => {
                best = Some(mark.thought);
                continue;
            }
            Some("success") => 0,
            Some("failed") => 1,
            _ => continue,
        };
        let entry = newest.entry(mark.thought).or_insert((mark.at_ms, rank));
        if (mark.at_ms, rank) > *entry {
            *entry = (mark.at_ms, rank);
        }
    }
    let current = newest
        .into_iter()
        .map(|(id, (_, rank))| (id, if rank == 1 { "failed" } else { "success" }))
        .collect();
    Ok((current, best))
}

/// The thought an outcome ref marks (for readers holding a ref's target).
pub fn thought_of(store: &Store, target: Oid) -> Result<Oid> {
    read_mark(store.repo(), target)
        .map(|m| m.thought)
        .map_err(|_| Error::ThoughtNotFound(format!("no mark {target}")))
}
