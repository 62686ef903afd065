//! A memory as its row in the index's `memories` table holds it: each field the table has a
//! column for (id, namespace, key, summary, body, tags, status, times, session) read from that
//! column, and in the `record` column, as JSON, only the rest (author, agent, citations, …) with
//! unset fields left out.
//!
//! The record once held the whole memory as JSON, repeating every column and spelling out every
//! empty field: about 370 bytes a memory, a third of the table, for nothing a column did not
//! already say. A field a column cannot give back exactly (a timestamp finer than the
//! millisecond the time columns keep, tags the space-separated `tags` column would split
//! differently) is kept in the record as well, so decoding always gives back the memory that
//! was indexed.

use jiff::Timestamp;
use rusqlite::Row;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{Citation, Key, Memory, MemoryId, Namespace, Status};

/// The columns a stored memory is read from, in the order [`StoredMemory::read`] takes them,
/// for a query that names the `memories` table `m`.
pub const COLUMNS: &str = "m.record, m.body, m.id, m.namespace, m.key, m.summary, m.tags, \
                           m.status, m.created, m.updated, m.session";

/// What the `record` column holds: the fields no other column holds, each only when set, and
/// those a column would give back inexactly.
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    anchor: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    citations: Vec<Citation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    relates_to: Vec<MemoryId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    supersedes: Option<MemoryId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    superseded_by: Option<MemoryId>,
    /// The tags, when the `tags` column would not split back into them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tags: Option<Vec<String>>,
    /// The creation time, when it is finer than the millisecond the `created` column keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created: Option<Timestamp>,
    /// The update time, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    updated: Option<Timestamp>,
}

/// The `tags` column's text: space-separated, with a space at each end so that a tag matches
/// whole (the postings index it too).
pub fn tags_text(m: &Memory) -> String {
    if m.tags.is_empty() {
        String::new()
    } else {
        format!(" {} ", m.tags.join(" "))
    }
}

/// The tags the `tags` column's text gives back.
fn tags_from_text(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// The time a millisecond column gives back, if it is exactly `t`.
fn exact_in_millis(t: Timestamp) -> bool {
    Timestamp::from_millisecond(t.as_millisecond()).is_ok_and(|back| back == t)
}

/// The `record` column's JSON for a memory indexed at `path`.
pub fn record_json(path: &str, m: &Memory) -> Result<String> {
    let tags_kept = tags_from_text(&tags_text(m)) != m.tags;
    let rest = Rest {
        author: m.author.clone(),
        agent: m.agent.clone(),
        confidence: m.confidence,
        anchor: m.anchor.clone(),
        citations: m.citations.clone(),
        relates_to: m.relates_to.clone(),
        supersedes: m.supersedes.clone(),
        superseded_by: m.superseded_by.clone(),
        tags: tags_kept.then(|| m.tags.clone()),
        created: (!exact_in_millis(m.created)).then_some(m.created),
        updated: (!exact_in_millis(m.updated)).then_some(m.updated),
    };
    serde_json::to_string(&rest).map_err(|e| Error::Parse {
        context: format!("indexing {path}"),
        message: e.to_string(),
    })
}

/// Whether `text` reads as a `record` column [`record_json`] wrote (a record of an earlier
/// schema, the whole memory, does not: it holds fields this one leaves to the columns).
pub fn is_record_json(text: &str) -> bool {
    serde_json::from_str::<Rest>(text).is_ok()
}

/// A memory's columns as read from a row, decoded by [`StoredMemory::decode`] (reading happens
/// inside SQLite's row callback, whose errors are SQLite's; decoding reports lore's own).
pub struct StoredMemory {
    record: String,
    body: String,
    id: String,
    namespace: String,
    key: Option<String>,
    summary: String,
    tags: String,
    status: String,
    created: i64,
    updated: i64,
    session: Option<String>,
}

impl StoredMemory {
    /// Reads the [`COLUMNS`] starting at column `first` of `row`.
    pub fn read(row: &Row<'_>, first: usize) -> rusqlite::Result<StoredMemory> {
        Ok(StoredMemory {
            record: row.get(first)?,
            body: row.get(first + 1)?,
            id: row.get(first + 2)?,
            namespace: row.get(first + 3)?,
            key: row.get(first + 4)?,
            summary: row.get(first + 5)?,
            tags: row.get(first + 6)?,
            status: row.get(first + 7)?,
            created: row.get(first + 8)?,
            updated: row.get(first + 9)?,
            session: row.get(first + 10)?,
        })
    }

    /// The update time as its column holds it (milliseconds), for ordering before decoding.
    pub fn updated_millis(&self) -> i64 {
        self.updated
    }

    /// The memory these columns hold.
    pub fn decode(self) -> Result<Memory> {
        let damaged = |message: String| Error::Parse {
            context: "reading a memory from the index (reindexing rebuilds it)".into(),
            message,
        };
        let rest: Rest = serde_json::from_str(&self.record).map_err(|e| damaged(e.to_string()))?;
        let time = |kept: Option<Timestamp>, millis: i64| match kept {
            Some(t) => Ok(t),
            None => Timestamp::from_millisecond(millis).map_err(|e| damaged(e.to_string())),
        };
        Ok(Memory {
            id: MemoryId::parse(&self.id).map_err(|e| damaged(e.to_string()))?,
            namespace: Namespace::parse(&self.namespace).map_err(|e| damaged(e.to_string()))?,
            key: (self.key.as_deref().map(Key::parse).transpose())
                .map_err(|e| damaged(e.to_string()))?,
            summary: self.summary,
            body: self.body,
            tags: rest.tags.unwrap_or_else(|| tags_from_text(&self.tags)),
            status: (self.status.parse::<Status>()).map_err(|e| damaged(e.to_string()))?,
            created: time(rest.created, self.created)?,
            updated: time(rest.updated, self.updated)?,
            author: rest.author,
            agent: rest.agent,
            session: self.session,
            confidence: rest.confidence,
            anchor: rest.anchor,
            citations: rest.citations,
            relates_to: rest.relates_to,
            supersedes: rest.supersedes,
            superseded_by: rest.superseded_by,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::schema::{Writer, create};
    use proptest::prelude::*;
    use rusqlite::Connection;

    /// A memory with every field set.
    fn full() -> Memory {
        Memory {
            status: Status::Superseded,
            supersedes: Some(MemoryId::parse("aaaa00001111").unwrap()),
            superseded_by: Some(MemoryId::parse("bbbb00001111").unwrap()),
            ..Memory::sample()
        }
    }

    /// A memory with only what every memory has.
    fn bare() -> Memory {
        let m = full();
        Memory::bare(m.id, "decisions", &m.summary, Status::Active, m.updated)
    }

    /// Indexes `m` as a write does, reads its row back and decodes it; also returns the
    /// `record` column.
    fn through_a_row(m: &Memory) -> (Memory, String) {
        let conn = Connection::open_in_memory().unwrap();
        create(&conn).unwrap();
        let rowid = Writer::new(&conn)
            .unwrap()
            .insert_memory("decisions/x.md", git2::Oid::ZERO_SHA1, m)
            .unwrap();
        let (stored, record) = conn
            .query_row(
                &format!("SELECT {COLUMNS}, m.record FROM memories m WHERE m.rowid = ?1"),
                [rowid],
                |r| Ok((StoredMemory::read(r, 0)?, r.get::<_, String>(11)?)),
            )
            .unwrap();
        (stored.decode().unwrap(), record)
    }

    #[test]
    fn a_memory_comes_back_whole_and_its_record_holds_only_what_no_column_does() {
        let (back, record) = through_a_row(&full());
        assert_eq!(back, full());
        for repeated in [
            "abc123def456",
            "decisions",
            "index-engine",
            "SQLite",
            "\"tags\"",
            "\"yes\"",
            "\"status\"",
            "\"created\"",
            "s-1",
        ] {
            assert!(
                !record.contains(repeated),
                "{repeated} repeated in {record}"
            );
        }
        assert!(record.contains("ada@example.com") && record.contains("bbbb00001111"));

        let (back, record) = through_a_row(&bare());
        assert_eq!(back, bare());
        assert_eq!(record, "{}");
    }

    #[test]
    fn what_a_column_would_give_back_inexactly_is_kept_in_the_record() {
        let mut m = bare();
        m.created = "2026-11-21T10:00:00.123456789Z".parse().unwrap();
        m.tags = vec!["two words".into(), String::new()];
        let (back, record) = through_a_row(&m);
        assert_eq!(back, m);
        assert!(
            record.contains("two words") && record.contains("123456789"),
            "{record}"
        );
        assert!(!record.contains("\"updated\""), "{record}");
    }

    #[test]
    fn a_damaged_row_is_an_error_that_names_the_rebuild() {
        let conn = Connection::open_in_memory().unwrap();
        create(&conn).unwrap();
        Writer::new(&conn)
            .unwrap()
            .insert_memory("decisions/x.md", git2::Oid::ZERO_SHA1, &full())
            .unwrap();
        for damage in ["record = 'not json'", "status = 'lost'", "id = 'UPPER'"] {
            let sql = format!("UPDATE memories SET {damage}");
            conn.execute_batch(&format!("SAVEPOINT d; {sql};")).unwrap();
            let stored = conn
                .query_row(&format!("SELECT {COLUMNS} FROM memories m"), [], |r| {
                    StoredMemory::read(r, 0)
                })
                .unwrap();
            let err = stored.decode().unwrap_err().to_string();
            assert!(err.contains("reindexing rebuilds it"), "{damage}: {err}");
            conn.execute_batch("ROLLBACK TO d; RELEASE d;").unwrap();
        }
    }

    proptest! {
        #[test]
        fn any_memory_comes_back_whole(
            nanos in 0i64..4_000_000_000_000_000_000,
            coarse in any::<bool>(),
            tags in proptest::collection::vec("[ -~]{0,12}", 0..4),
            session in proptest::option::of("[ -~]{0,20}"),
            summary in "[ -~]{1,60}",
            body in "(?s).{0,80}",
        ) {
            let mut m = full();
            let t = Timestamp::from_nanosecond(i128::from(nanos)).unwrap();
            m.created = if coarse { crate::model::to_millis(t) } else { t };
            m.updated = t;
            m.tags = tags;
            m.session = session;
            m.summary = summary;
            m.body = body;
            prop_assert_eq!(through_a_row(&m).0, m);
        }
    }
}
