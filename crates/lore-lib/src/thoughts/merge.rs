//! Merging a reasoning session written on two clones: the ledger, the scores and the outcome
//! refs, each by a rule that gives the same content whichever clone merges first. `lore sync`
//! and bundle import call [`merge_ref`] for a ref of reasoning sessions that diverged.
//!
//! The ledger merge is a two-parent commit (ours, then theirs), so every thought of both sides
//! stays reachable. Its tree:
//! * `session.json`: the one that started earlier (`created`, then the smaller content);
//! * `done.json`: the newer finish (`finished`, then the greater best thought id), the same rule
//!   the `best` ref merges by; a session finished on either side is finished;
//! * any other file: the union, ours where both have it.

use git2::Oid;

use super::write::{DONE_FILE, Finished, SESSION_FILE};
use super::{OUTCOME_REF_PREFIX, SCORES_REF_PREFIX, SESSION_REF_PREFIX, SessionInfo, marks};
use crate::error::Result;
use crate::store::{Edit, Message, RefWrite, Snapshot, Store};

/// Whether `name` is a ref of reasoning sessions that merges (ledger, scores, outcome).
pub fn merges(name: &str) -> bool {
    [SESSION_REF_PREFIX, SCORES_REF_PREFIX, OUTCOME_REF_PREFIX]
        .iter()
        .any(|p| name.starts_with(p))
}

fn trailers(action: &str, from: &str) -> Vec<(String, String)> {
    vec![
        ("Lore-Action".into(), action.into()),
        ("Lore-Remote".into(), from.into()),
    ]
}

/// Merges `theirs` into the local ref `name` (a ref for which [`merges`] holds); `from` names
/// where theirs came from (a remote, a bundle). Returns false for any other ref.
pub fn merge_ref(store: &Store, name: &str, theirs: Oid, from: &str) -> Result<bool> {
    if let Some(session) = name.strip_prefix(SESSION_REF_PREFIX) {
        merge_ledger(store, session, theirs, from)?;
    } else if let Some(session) = name.strip_prefix(SCORES_REF_PREFIX) {
        // Versions are named by time and content: the union, and two contents at one path
        // (which lore's names never produce) keep the smaller blob id.
        let subject = format!("merge scores of {session} from {from}");
        let rule = |_: &Snapshot<'_>, _: &str, ours: Oid, theirs: Oid| Ok(theirs < ours);
        union_merge(store, name, theirs, subject, trailers("merge", from), rule)?;
    } else if name.starts_with(OUTCOME_REF_PREFIX) {
        marks::merge(store, name, theirs, trailers("merge", from))?;
    } else {
        return Ok(false);
    }
    Ok(true)
}

fn read_json<T: serde::de::DeserializeOwned>(
    snap: &Snapshot<'_>,
    blob: Option<Oid>,
) -> Result<Option<T>> {
    Ok(match blob {
        Some(b) => serde_json::from_slice(&snap.blob(b)?).ok(),
        None => None,
    })
}

/// Which of two versions of one ledger file the merge keeps: true for theirs.
fn take_theirs(snap: &Snapshot<'_>, path: &str, ours: Oid, theirs: Oid) -> Result<bool> {
    Ok(match path {
        SESSION_FILE => {
            let (o, t): (Option<SessionInfo>, Option<SessionInfo>) =
                (read_json(snap, Some(ours))?, read_json(snap, Some(theirs))?);
            match (o, t) {
                (Some(o), Some(t)) => (t.created, theirs) < (o.created, ours),
                (None, Some(_)) => true,
                _ => false,
            }
        }
        DONE_FILE => {
            let (o, t): (Option<Finished>, Option<Finished>) =
                (read_json(snap, Some(ours))?, read_json(snap, Some(theirs))?);
            match (o, t) {
                (Some(o), Some(t)) => (t.finished, &t.best) > (o.finished, &o.best),
                (None, Some(_)) => true,
                _ => false,
            }
        }
        _ => false,
    })
}

fn merge_ledger(store: &Store, session: &str, theirs: Oid, from: &str) -> Result<()> {
    let mut t = trailers("merge", from);
    t.push(("Lore-Thought-Session".into(), session.into()));
    let subject = format!("merge reasoning session {session} from {from}");
    union_merge(
        store,
        &super::session_ref(session),
        theirs,
        subject,
        t,
        take_theirs,
    )
}

/// Merges `theirs` into the ref `name` as a two-parent commit whose tree is ours plus every
/// file only theirs has; a file both have in different versions is theirs where `prefer`
/// says so (given the path, our blob and theirs).
fn union_merge(
    store: &Store,
    name: &str,
    theirs: Oid,
    subject: String,
    trailers: Vec<(String, String)>,
    prefer: impl Fn(&Snapshot<'_>, &str, Oid, Oid) -> Result<bool>,
) -> Result<()> {
    let repo = store.repo();
    store.transact_ref(name, |snap| {
        let Some(ours) = snap.commit() else {
            return Ok((RefWrite::default(), ()));
        };
        if ours == theirs || repo.graph_descendant_of(ours, theirs)? {
            return Ok((RefWrite::default(), ()));
        }
        let mut edits = Vec::new();
        for change in store.diff(Some(ours), Some(theirs))? {
            let take = match (change.old, change.new) {
                (None, Some(_)) => true,
                (Some(o), Some(t)) => prefer(snap, &change.path, o, t)?,
                _ => false,
            };
            if take && let Some(new) = change.new {
                edits.push(Edit::Upsert {
                    path: change.path.clone(),
                    content: snap.blob(new)?,
                });
            }
        }
        let message = Message {
            subject: subject.clone(),
            body: None,
            trailers: trailers.clone(),
        };
        let write = RefWrite {
            merge_parent: Some(theirs),
            ..RefWrite::on_tip(edits, message)
        };
        Ok((write, ()))
    })?;
    Ok(())
}
