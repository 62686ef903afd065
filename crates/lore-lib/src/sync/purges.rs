//! Purges across a sync: a purge record the remote has and this clone lacks removes the memory
//! from every memory chain here; a record this clone has and the remote lacks means the
//! remote's history may still hold the memory, so the fetched chain is rewritten by the same
//! rule before it is merged, and the result is pushed over the remote's copy with a lease.

use std::collections::BTreeSet;

use git2::Oid;

use crate::error::Result;
use crate::merge::purged::{purge_here, purged_chain};
use crate::model::MemoryId;
use crate::store::purged::{PurgeRecord, purge_records};
use crate::store::{MEMORY_REF, Store, ref_target};

/// How the memory chains stand after purges were settled with one remote's fetched chain.
pub(super) struct Settled {
    /// The fetched chain to merge and push over (rewritten when it held purged memories).
    pub tracked: Option<Oid>,
    /// Whether pushing must replace the remote's history (it held purged memories).
    pub replaces_remote: bool,
    /// Memories purged here because the remote's records named them.
    pub purged_here: Vec<MemoryId>,
}

/// Settles purges between the local memory chain and `fetched` (the remote's, as fetched into
/// `tracking_ref`). In a dry run nothing is rewritten; the purges that would happen are named.
pub(super) fn settle(
    store: &Store,
    tracking_ref: &str,
    fetched: Option<Oid>,
    dry_run: bool,
) -> Result<Settled> {
    let local = ref_target(store.repo(), MEMORY_REF)?;
    let ours = records_at(store, local)?;
    let theirs = records_at(store, fetched)?;
    let known: BTreeSet<&MemoryId> = ours.iter().map(|r| &r.id).collect();
    let arriving: Vec<PurgeRecord> = theirs
        .iter()
        .filter(|r| !known.contains(&r.id))
        .cloned()
        .collect();
    let mut settled = Settled {
        tracked: fetched,
        replaces_remote: false,
        purged_here: arriving.iter().map(|r| r.id.clone()).collect(),
    };
    if dry_run {
        return Ok(settled);
    }
    if !arriving.is_empty() {
        // Every chain here, the tracking copies included (the fetched one is clean already).
        purge_here(store, &arriving)?;
    }
    let on_remote: BTreeSet<&MemoryId> = theirs.iter().map(|r| &r.id).collect();
    let missing_there: Vec<PurgeRecord> = ours
        .into_iter()
        .filter(|r| !on_remote.contains(&r.id))
        .collect();
    if let (Some(tip), false) = (fetched, missing_there.is_empty()) {
        let clean = purged_chain(store, tip, &missing_there)?;
        if clean != tip {
            // The tracking copy must not keep the purged objects reachable either.
            store
                .repo()
                .reference(tracking_ref, clean, true, "lore sync: purged copy")?;
            if let Ok(log) = store.repo().reflog(tracking_ref)
                && !log.is_empty()
            {
                store.repo().reflog_delete(tracking_ref)?;
            }
            settled.tracked = Some(clean);
            settled.replaces_remote = true;
        }
    }
    Ok(settled)
}

fn records_at(store: &Store, tip: Option<Oid>) -> Result<Vec<PurgeRecord>> {
    match tip {
        Some(tip) => purge_records(&store.snapshot(Some(tip))?),
        None => Ok(Vec::new()),
    }
}
