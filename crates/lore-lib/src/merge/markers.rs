//! The two kinds of record a merge relies on, stored in the memory tree beside the memories:
//! tombstones (a memory was forgotten on purpose) and conflict records (a contradiction a merge
//! found, with every version not in force kept as data).

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{Memory, MemoryId};
use crate::record;

/// A forgotten memory. Deletion travels between clones only as a tombstone: a memory missing
/// from one side of a merge without one is kept, never dropped by absence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tombstone {
    /// The forgotten memory's id.
    pub id: MemoryId,
    /// Where it lived when it was forgotten.
    pub path: String,
    /// Its summary then, for the record.
    pub summary: String,
    /// When it was forgotten.
    pub forgotten: Timestamp,
    /// Who forgot it (`Name <email>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The agent that forgot it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// Why a merge could not decide between two versions of a memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConflictKind {
    /// Both sides changed the same memory's content differently.
    BothChanged,
    /// Both sides wrote a different memory under the same key.
    BothAdded,
    /// One side changed the memory, the other forgot it.
    EditForget,
}

impl ConflictKind {
    /// A short phrase for listings.
    pub fn describe(self) -> &'static str {
        match self {
            ConflictKind::BothChanged => "changed differently on both sides",
            ConflictKind::BothAdded => "written under the same key on both sides",
            ConflictKind::EditForget => "changed on one side, forgotten on the other",
        }
    }
}

/// One version of a contested memory that is not in force (or the tombstone that forgot it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConflictSide {
    /// The memory's id (the same as the live one when both sides changed one memory).
    pub id: MemoryId,
    /// The commit that wrote this version (or the tombstone).
    pub commit: String,
    /// The memory file as that side had it; none when that side forgot the memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tombstone, when that side forgot the memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten: Option<Tombstone>,
}

impl ConflictSide {
    /// The side's memory, parsed (none for a forgetting side or an unreadable text).
    pub fn memory(&self) -> Option<Memory> {
        self.text
            .as_deref()
            .and_then(|t| record::parse(t, self.id.as_str()).ok())
    }
}

/// An open contradiction on one memory path: the version in force stays live in the tree, every
/// other version is kept here until someone decides (`resolve`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConflictRecord {
    /// The contested memory path (`decisions/db-engine.md`).
    pub path: String,
    /// What kind of contradiction it is.
    pub kind: ConflictKind,
    /// The id of the version in force (none when the live side forgot it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<MemoryId>,
    /// The commit that wrote the version in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_commit: Option<String>,
    /// When the merge found it.
    pub detected: Timestamp,
    /// The memory file at the merge base, if it existed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The versions not in force.
    pub sides: Vec<ConflictSide>,
}

impl ConflictRecord {
    /// Parses a conflict record file.
    pub fn parse(bytes: &[u8], path: &str) -> Result<ConflictRecord> {
        from_yaml(bytes, path)
    }

    /// Renders the record as YAML.
    pub fn render(&self) -> Result<Vec<u8>> {
        yaml(self, &self.path)
    }

    /// Adds the sides of `other` this record does not hold yet (same id and text).
    pub fn absorb(&mut self, other: ConflictRecord) {
        for side in other.sides {
            let known = self
                .sides
                .iter()
                .any(|s| s.id == side.id && s.text == side.text && s.forgotten == side.forgotten);
            if !known {
                self.sides.push(side);
            }
        }
        if self.base.is_none() {
            self.base = other.base;
        }
    }

    /// The ids this record keeps out of the live tree (parked), other than the live one.
    pub fn parked_ids(&self) -> impl Iterator<Item = &MemoryId> {
        self.sides
            .iter()
            .filter(|s| s.text.is_some() && Some(&s.id) != self.live.as_ref())
            .map(|s| &s.id)
    }
}

impl Tombstone {
    /// The tombstone of `memory`, forgotten at `path`.
    pub fn of(
        memory: &Memory,
        path: &str,
        forgotten: Timestamp,
        by: (&Option<String>, &Option<String>, &Option<String>),
    ) -> Tombstone {
        // Who forgot, and the summary it names, are recorded less any secret they hold (a
        // tombstone is never the place for one).
        let unsecret = |v: &Option<String>| v.as_deref().map(crate::secrets::unsecret);
        Tombstone {
            id: memory.id.clone(),
            path: path.to_string(),
            summary: crate::secrets::unsecret(&memory.summary),
            forgotten,
            author: by.0.clone(),
            agent: unsecret(by.1),
            session: unsecret(by.2),
        }
    }

    /// Parses a tombstone file.
    pub fn parse(bytes: &[u8], path: &str) -> Result<Tombstone> {
        from_yaml(bytes, path)
    }

    /// Renders the tombstone as YAML.
    pub fn render(&self) -> Result<Vec<u8>> {
        yaml(self, &self.path)
    }
}

fn from_yaml<T: serde::de::DeserializeOwned>(bytes: &[u8], path: &str) -> Result<T> {
    serde_norway::from_slice(bytes).map_err(|e| Error::Record {
        path: path.to_string(),
        message: e.to_string(),
    })
}

fn yaml<T: Serialize>(value: &T, path: &str) -> Result<Vec<u8>> {
    serde_norway::to_string(value)
        .map(String::into_bytes)
        .map_err(|e| Error::Parse {
            context: format!("writing {path}"),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(id: &MemoryId, text: Option<&str>, forgotten: Option<&Tombstone>) -> ConflictSide {
        ConflictSide {
            id: id.clone(),
            commit: "c0ffee".into(),
            text: text.map(str::to_string),
            forgotten: forgotten.cloned(),
        }
    }

    fn record(sides: Vec<ConflictSide>, base: Option<&str>) -> ConflictRecord {
        ConflictRecord {
            path: "decisions/db-engine.md".into(),
            kind: ConflictKind::BothChanged,
            live: None,
            live_commit: None,
            detected: Timestamp::UNIX_EPOCH,
            base: base.map(str::to_string),
            sides,
        }
    }

    #[test]
    fn absorbing_adds_only_sides_not_held_and_a_missing_base() {
        let [x, y] = [(); 2].map(|_| MemoryId::generate().unwrap());
        let tomb = Tombstone {
            id: x.clone(),
            path: "decisions/db-engine.md".into(),
            summary: "Use SQLite".into(),
            forgotten: Timestamp::UNIX_EPOCH,
            author: None,
            agent: None,
            session: None,
        };
        let mut held = record(vec![side(&x, Some("one"), None)], None);
        let other = record(
            vec![
                side(&x, Some("one"), None),
                side(&x, Some("two"), None),
                side(&y, Some("one"), None),
                side(&x, None, Some(&tomb)),
            ],
            Some("base"),
        );
        held.absorb(other.clone());
        assert_eq!(held.sides, other.sides, "every new side once, in order");
        assert_eq!(held.base.as_deref(), Some("base"));
        let mut with_base = record(Vec::new(), Some("ours"));
        with_base.absorb(other);
        assert_eq!(with_base.base.as_deref(), Some("ours"), "a base held stays");
    }
}
