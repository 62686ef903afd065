//! Where things live inside lore's memory tree, and how a path is recognised again.
//!
//! ```text
//! refs/lore/memory ─► commit ─► tree
//!   lore.yaml                         store metadata (format, project identity)
//!   <namespace>/.namespace.yaml       marks a user-registered namespace
//!   <namespace>/<key>.md              a keyed memory (stable, readable path)
//!   <namespace>/<c0>/<c1>/<id>.md     an unkeyed memory, fanned out by its id's first two chars
//!   .tombstones/<c0>/<c1>/<id>.yaml   a forgotten memory: deletion is explicit, never by absence
//!   .conflicts/<memory path>.yaml     a contradiction found by a merge: the versions not in force
//!   .purged/<c0>/<c1>/<id>.yaml       a purged memory: its id and digests, never its text
//! ```

use crate::model::{Key, Memory, MemoryId, Namespace};

/// The ref holding the memory commit chain.
pub const MEMORY_REF: &str = "refs/lore/memory";
/// The prefix of every ref lore owns.
pub const LORE_REF_PREFIX: &str = "refs/lore/";
/// Store metadata at the root of the memory tree.
pub const STORE_FILE: &str = "lore.yaml";
/// The marker file of a registered namespace.
pub const NAMESPACE_FILE: &str = ".namespace.yaml";
/// The extension of memory files.
pub const MEMORY_EXT: &str = ".md";
/// The directory of tombstones (one per forgotten memory).
pub const TOMBSTONE_DIR: &str = ".tombstones";
/// The directory of open contradictions (one file per contested memory path).
pub const CONFLICT_DIR: &str = ".conflicts";
/// The directory of purge records (one per purged memory).
pub const PURGE_DIR: &str = ".purged";
/// The extension of tombstones and conflict records.
pub const YAML_EXT: &str = ".yaml";

/// The tombstone path of a forgotten memory.
pub fn tombstone_path(id: &MemoryId) -> String {
    let s = id.as_str();
    format!("{TOMBSTONE_DIR}/{}/{}/{s}{YAML_EXT}", &s[..1], &s[1..2])
}

/// The purge record path of a purged memory.
pub fn purge_path(id: &MemoryId) -> String {
    let s = id.as_str();
    format!("{PURGE_DIR}/{}/{}/{s}{YAML_EXT}", &s[..1], &s[1..2])
}

/// The conflict record path of a contested memory path (`decisions/db.md` →
/// `.conflicts/decisions/db.yaml`).
pub fn conflict_path(memory_path: &str) -> String {
    let stem = memory_path.strip_suffix(MEMORY_EXT).unwrap_or(memory_path);
    format!("{CONFLICT_DIR}/{stem}{YAML_EXT}")
}

/// The memory path a conflict record is about (the inverse of [`conflict_path`]).
pub fn contested_path(conflict_path: &str) -> Option<String> {
    let stem = conflict_path
        .strip_prefix(CONFLICT_DIR)?
        .strip_prefix('/')?
        .strip_suffix(YAML_EXT)?;
    Some(format!("{stem}{MEMORY_EXT}"))
}

/// The path of a memory's file.
pub fn memory_path(namespace: &Namespace, key: Option<&Key>, id: &MemoryId) -> String {
    match key {
        Some(key) => format!("{namespace}/{key}{MEMORY_EXT}"),
        None => id_path(namespace, id),
    }
}

/// Where a memory lives: its key's path while it holds the key (keyed and not superseded),
/// else its id path. A superseded keyed memory keeps its `key` field for the record but
/// releases the path to its successor.
pub fn path_of(memory: &Memory) -> String {
    match (&memory.key, &memory.superseded_by) {
        (Some(key), None) => memory_path(&memory.namespace, Some(key), &memory.id),
        _ => id_path(&memory.namespace, &memory.id),
    }
}

/// The fan-out path an unkeyed memory (or a superseded keyed one) has.
pub fn id_path(namespace: &Namespace, id: &MemoryId) -> String {
    let s = id.as_str();
    format!("{namespace}/{}/{}/{s}{MEMORY_EXT}", &s[..1], &s[1..2])
}

/// The marker path of a registered namespace.
pub fn namespace_marker_path(namespace: &Namespace) -> String {
    format!("{namespace}/{NAMESPACE_FILE}")
}

/// What a path in the memory tree is.
#[derive(Debug, PartialEq, Eq)]
pub enum PathKind {
    /// A memory file (keyed or fanned out).
    Memory,
    /// A namespace marker of the given namespace.
    NamespaceMarker(String),
    /// The store metadata file.
    StoreFile,
    /// The tombstone of a forgotten memory.
    Tombstone,
    /// The record of an open contradiction.
    Conflict,
    /// The record of a purged memory.
    Purge,
    /// Anything else (ignored by lore).
    Other,
}

/// Classifies a path of the memory tree.
pub fn classify(path: &str) -> PathKind {
    if path == STORE_FILE {
        return PathKind::StoreFile;
    }
    for (dir, kind) in [
        (TOMBSTONE_DIR, PathKind::Tombstone),
        (PURGE_DIR, PathKind::Purge),
    ] {
        if let Some(rest) = path.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) {
            return match rest.split('/').collect::<Vec<_>>().as_slice() {
                [a, b, file] if a.len() == 1 && b.len() == 1 && file.ends_with(YAML_EXT) => kind,
                _ => PathKind::Other,
            };
        }
    }
    if contested_path(path).is_some() {
        return PathKind::Conflict;
    }
    let mut parts = path.split('/');
    let Some(ns) = parts.next() else {
        return PathKind::Other;
    };
    let rest: Vec<&str> = parts.collect();
    match rest.as_slice() {
        [NAMESPACE_FILE] => PathKind::NamespaceMarker(ns.to_string()),
        [file] if file.ends_with(MEMORY_EXT) => PathKind::Memory,
        [a, b, file] if a.len() == 1 && b.len() == 1 && file.ends_with(MEMORY_EXT) => {
            PathKind::Memory
        }
        _ => PathKind::Other,
    }
}

/// A guess at which memory a path holds (its id or key), for reporting unreadable files.
pub fn name_from_path(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(MEMORY_EXT).unwrap_or(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_classified_back() {
        let ns = Namespace::parse("decisions").unwrap();
        let id = MemoryId::parse("ab3def456789").unwrap();
        let key = Key::parse("db-engine").unwrap();
        assert_eq!(id_path(&ns, &id), "decisions/a/b/ab3def456789.md");
        assert_eq!(memory_path(&ns, Some(&key), &id), "decisions/db-engine.md");
        assert_eq!(classify("decisions/a/b/ab3def456789.md"), PathKind::Memory);
        assert_eq!(classify("decisions/db-engine.md"), PathKind::Memory);
        assert_eq!(
            classify("notes/.namespace.yaml"),
            PathKind::NamespaceMarker("notes".into())
        );
        assert_eq!(classify("lore.yaml"), PathKind::StoreFile);
        assert_eq!(classify("README"), PathKind::Other);
        assert_eq!(classify("decisions/ab/x.md"), PathKind::Other);
        assert_eq!(tombstone_path(&id), ".tombstones/a/b/ab3def456789.yaml");
        assert_eq!(classify(&tombstone_path(&id)), PathKind::Tombstone);
        assert_eq!(purge_path(&id), ".purged/a/b/ab3def456789.yaml");
        assert_eq!(classify(&purge_path(&id)), PathKind::Purge);
        let contested = conflict_path("decisions/db-engine.md");
        assert_eq!(contested, ".conflicts/decisions/db-engine.yaml");
        assert_eq!(classify(&contested), PathKind::Conflict);
        assert_eq!(
            contested_path(&contested).unwrap(),
            "decisions/db-engine.md"
        );
        assert_eq!(
            name_from_path("decisions/a/b/ab3def456789.md"),
            "ab3def456789"
        );
    }
}
