//! The purge rule: what a purge removes from each commit of a memory chain, applied alike by the
//! clone that purges and by every clone (and remote copy) a purge record reaches, so purged text
//! never comes back through a merge.
//!
//! For each purged memory, in every commit: the files at the paths it lived at that hold one
//! of its versions (by blob id, or read as that memory) are removed; its tombstone is removed
//! (it names the summary); conflict records at those paths lose the sides and base that are
//! its versions (and are removed when nothing is left); a commit message that names it in a
//! `Lore-Memory` trailer keeps only its action and trailers. The rule is a function of the
//! commit alone, so history already clean is left exactly as it is.

use git2::{Oid, Repository};

use super::markers::ConflictRecord;
use crate::error::Result;
use crate::model::MemoryId;
use crate::record;
use crate::store::layout;
use crate::store::purge::PurgeReport;
use crate::store::purged::PurgeRecord;
use crate::store::{Edit, MEMORY_REF, Store, ref_target};

/// The refs that hold memory chains: lore's own, the copies fetched from remotes, a kept lost
/// ref and parked versions.
pub(crate) fn memory_chain_refs(repo: &Repository) -> Result<Vec<(String, Oid)>> {
    let mut out = Vec::new();
    if let Some(tip) = ref_target(repo, MEMORY_REF)? {
        out.push((MEMORY_REF.to_string(), tip));
    }
    for glob in [
        "refs/lore-remotes/*/memory",
        "refs/lore-parked/*/memory",
        "refs/lore-lost/memory",
    ] {
        for r in repo.references_glob(glob)? {
            let r = r?;
            if let (Ok(name), Some(target)) = (r.name(), r.target()) {
                out.push((name.to_string(), target));
            }
        }
    }
    Ok(out)
}

/// Removes the purged memories from every memory chain of this clone.
pub(crate) fn purge_here(store: &Store, records: &[PurgeRecord]) -> Result<PurgeReport> {
    let refs = memory_chain_refs(store.repo())?;
    store.rewrite_refs(&refs, &mut |tree, message| {
        commit_rule(store, records, tree, message)
    })
}

/// The chain ending at `tip` with the purged memories removed (the same commit when it held
/// none of them). Moves no ref.
pub(crate) fn purged_chain(store: &Store, tip: Oid, records: &[PurgeRecord]) -> Result<Oid> {
    let mapped = store.rewrite_commits(&[tip], &mut |tree, message| {
        commit_rule(store, records, tree, message)
    })?;
    Ok(mapped.get(&tip).copied().unwrap_or(tip))
}

/// What the purge rule does to one commit.
fn commit_rule(
    store: &Store,
    records: &[PurgeRecord],
    tree: &git2::Tree<'_>,
    message: &str,
) -> Result<(Vec<Edit>, Option<String>)> {
    let mut edits = Vec::new();
    let mut named = false;
    for r in records {
        tree_edits(store, r, tree, &mut edits)?;
        named |= names_memory(message, &r.id);
    }
    Ok((edits, named.then(|| scrubbed_message(message))))
}

fn blob_at(tree: &git2::Tree<'_>, path: &str) -> Result<Option<Oid>> {
    crate::store::blob_at(tree, path)
}

fn tree_edits(
    store: &Store,
    r: &PurgeRecord,
    tree: &git2::Tree<'_>,
    edits: &mut Vec<Edit>,
) -> Result<()> {
    let is_version = |blob: Oid, path: &str| -> Result<bool> {
        if r.holds_blob(blob) {
            return Ok(true);
        }
        let bytes = store.read_blob(blob)?;
        Ok(std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| record::parse(t, path).ok())
            .is_some_and(|m| m.id == r.id))
    };
    for path in &r.paths {
        if let Some(blob) = blob_at(tree, path)?
            && is_version(blob, path)?
        {
            edits.push(Edit::Remove { path: path.clone() });
        }
        let conflict = layout::conflict_path(path);
        if let Some(blob) = blob_at(tree, &conflict)? {
            let bytes = store.read_blob(blob)?;
            edits.extend(trimmed_conflict(&r.id, &conflict, &bytes));
        }
    }
    let tombstone = layout::tombstone_path(&r.id);
    if blob_at(tree, &tombstone)?.is_some() {
        edits.push(Edit::Remove { path: tombstone });
    }
    Ok(())
}

/// A conflict record less the purged memory's versions: none when it holds none of them, a
/// removal when nothing else is left (or it cannot be read but names the memory).
fn trimmed_conflict(id: &MemoryId, path: &str, bytes: &[u8]) -> Option<Edit> {
    let Ok(mut c) = ConflictRecord::parse(bytes, path) else {
        let names = String::from_utf8_lossy(bytes).contains(id.as_str());
        return names.then(|| Edit::Remove {
            path: path.to_string(),
        });
    };
    let is_it = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| record::parse(t, &c.path).ok())
            .is_some_and(|m| &m.id == id)
    };
    let before = (c.sides.len(), c.base.is_some(), c.live.clone());
    c.sides.retain(|s| &s.id != id);
    if is_it(&c.base) {
        c.base = None;
    }
    if c.live.as_ref() == Some(id) {
        c.live = None;
    }
    if (c.sides.len(), c.base.is_some(), c.live.clone()) == before {
        return None;
    }
    if c.sides.is_empty() {
        return Some(Edit::Remove {
            path: path.to_string(),
        });
    }
    c.render().ok().map(|content| Edit::Upsert {
        path: path.to_string(),
        content,
    })
}

/// Whether a commit message names the memory in a `Lore-Memory` trailer.
fn names_memory(message: &str, id: &MemoryId) -> bool {
    message
        .lines()
        .any(|l| l.strip_prefix("Lore-Memory: ").map(str::trim) == Some(id.as_str()))
}

/// A message that named a purged memory: its action and trailers only (the subject and body
/// may quote the memory's summary). Applied to its own output it gives the same text.
fn scrubbed_message(message: &str) -> String {
    let trailers: Vec<&str> = message
        .lines()
        .filter(|l| l.starts_with("Lore-") && l.contains(": "))
        .collect();
    let action = trailers
        .iter()
        .find_map(|l| l.strip_prefix("Lore-Action: "))
        .unwrap_or("write")
        .trim();
    format!("{action} [purged]\n\n{}\n", trailers.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Memory;

    #[test]
    fn a_scrubbed_message_keeps_trailers_and_is_stable() {
        let m = "remember decisions/db: the key is ghp_x\n\nbody\n\nLore-Action: remember\nLore-Memory: abcdefghjkmn\nLore-Agent: a\n";
        let s = scrubbed_message(m);
        assert_eq!(
            s,
            "remember [purged]\n\nLore-Action: remember\nLore-Memory: abcdefghjkmn\nLore-Agent: a\n"
        );
        assert_eq!(scrubbed_message(&s), s);
        let id = MemoryId::parse("abcdefghjkmn").unwrap();
        assert!(names_memory(m, &id));
        assert!(!names_memory("merge origin: 1 new\n", &id));
    }

    /// A conflict record at `path` whose live version is `live`, base `base`, and other
    /// versions `sides` (memories rendered as their files).
    fn conflict(live: &Memory, base: Option<&Memory>, sides: &[&Memory]) -> Vec<u8> {
        use super::super::markers::{ConflictKind, ConflictSide};
        ConflictRecord {
            path: "decisions/db-engine.md".into(),
            kind: ConflictKind::BothAdded,
            live: Some(live.id.clone()),
            live_commit: None,
            detected: jiff::Timestamp::UNIX_EPOCH,
            base: base.map(|m| record::render(m).unwrap()),
            sides: sides
                .iter()
                .map(|m| ConflictSide {
                    id: m.id.clone(),
                    commit: "c0ffee".into(),
                    text: Some(record::render(m).unwrap()),
                    forgotten: None,
                })
                .collect(),
        }
        .render()
        .unwrap()
    }

    fn memory(summary: &str) -> Memory {
        Memory::bare(
            MemoryId::generate().unwrap(),
            "decisions",
            summary,
            crate::model::Status::Active,
            jiff::Timestamp::UNIX_EPOCH,
        )
    }

    #[test]
    fn a_conflict_record_loses_exactly_the_purged_memorys_versions() {
        let path = ".conflicts/decisions/db-engine.md.yaml";
        let [x, y, z] = ["Use SQLite", "Use Postgres", "Use MySQL"].map(memory);
        // x is live and the base; y and z are other versions: purging x keeps y's and z's.
        let bytes = conflict(&x, Some(&x), &[&y, &z]);
        let Some(Edit::Upsert { content, .. }) = trimmed_conflict(&x.id, path, &bytes) else {
            panic!("the record was not rewritten");
        };
        let trimmed = ConflictRecord::parse(&content, path).unwrap();
        assert_eq!(trimmed.live, None);
        assert_eq!(trimmed.base, None);
        let ids: Vec<&MemoryId> = trimmed.sides.iter().map(|s| &s.id).collect();
        assert_eq!(ids, [&y.id, &z.id]);
        // Purging y takes its side only; a memory the record does not hold leaves it alone.
        let Some(Edit::Upsert { content, .. }) = trimmed_conflict(&y.id, path, &bytes) else {
            panic!("the record was not rewritten");
        };
        let trimmed = ConflictRecord::parse(&content, path).unwrap();
        assert_eq!(trimmed.live.as_ref(), Some(&x.id));
        assert!(trimmed.base.is_some());
        assert_eq!(trimmed.sides.len(), 1);
        assert!(trimmed_conflict(&MemoryId::generate().unwrap(), path, &bytes).is_none());
        // A record left with no other version goes; so does an unreadable one naming the memory.
        let only_y = conflict(&x, None, &[&y]);
        assert!(matches!(
            trimmed_conflict(&y.id, path, &only_y),
            Some(Edit::Remove { .. })
        ));
        let unreadable = format!("{{ not yaml {}", y.id);
        assert!(matches!(
            trimmed_conflict(&y.id, path, unreadable.as_bytes()),
            Some(Edit::Remove { .. })
        ));
        assert!(trimmed_conflict(&x.id, path, unreadable.as_bytes()).is_none());
    }
}
