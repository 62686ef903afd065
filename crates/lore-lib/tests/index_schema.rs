//! The index's tables as lore writes them: an index of an earlier schema is brought forward in
//! place without indexing a memory twice, and a row rewritten in place keeps its vectors and
//! postings.

use lore::{BatchWrite, ListFilter, Lore, NewMemory, Store, WriteContext};
use lore_testutils::TestRepo;
use rusqlite::Connection;

fn bm25_only(repo: &TestRepo) -> Lore {
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    lore.set_embedder(None);
    lore
}

fn note(summary: &str) -> NewMemory {
    NewMemory {
        namespace: "learnings".into(),
        summary: summary.into(),
        body: format!("{summary}, written down for later."),
        ..NewMemory::default()
    }
}

/// Writes `n` memories as one batch (one commit, one catch-up).
fn write_batch(lore: &mut Lore, from: usize, n: usize) {
    let ctx = WriteContext::default();
    let memories: Vec<_> = (from..from + n)
        .map(|i| {
            lore.prepare(&note(&format!("imported fact {i} about word{i}")), &ctx)
                .unwrap()
        })
        .collect();
    lore.write_batch(&memories, &BatchWrite::import("test batch"), &ctx)
        .unwrap();
    lore.index().unwrap();
}

/// Whether the BM25 postings hold as many memories as the table has rows.
fn postings_whole(conn: &Connection) -> bool {
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let rows = count("SELECT count(*) FROM memories");
    let kept = count("SELECT CAST(value AS INTEGER) FROM meta WHERE name = 'postings_docs'");
    rows == kept
}

/// The names of the schema's objects of a type (`trigger`, `index`), in order.
fn named(conn: &Connection, kind: &str) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = ?1 AND sql IS NOT NULL ORDER BY name")
        .unwrap();
    stmt.query_map([kind], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Opens the index at `path` and checks it is of this schema (no insert trigger left, keys
/// indexed first, no FTS5 table), its postings hold the memory rows, and `memories` are
/// counted.
fn of_this_schema_and_whole(path: &std::path::Path, memories: i64) -> Connection {
    let conn = Connection::open(path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 12);
    assert_eq!(
        named(&conn, "trigger"),
        ["memories_ad", "memories_count_ad"]
    );
    let indexes = named(&conn, "index");
    assert!(
        indexes.contains(&"memories_key".to_string())
            && !indexes.contains(&"memories_ns_key".to_string()),
        "{indexes:?}"
    );
    let tables = named(&conn, "table");
    assert!(
        !tables.iter().any(|t| t.starts_with("memories_fts")),
        "{tables:?}"
    );
    assert!(
        postings_whole(&conn),
        "the postings count another number of memories than the table"
    );
    let counted: i64 = conn
        .query_row("SELECT sum(n) FROM counts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(counted, memories);
    conn
}

/// Sets the index's schema version to `version` and leaves a mark in it that a rebuild would
/// not keep.
fn mark_as_of_schema(conn: &Connection, version: i64) {
    conn.execute(
        "INSERT INTO meta (name, value) VALUES ('kept-through-the-migration', 'yes')",
        [],
    )
    .unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
}

/// Checks the mark [`mark_as_of_schema`] left is still there.
fn assert_not_rebuilt(conn: &Connection) {
    let kept: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE name = 'kept-through-the-migration'",
            [],
            |r| r.get(0),
        )
        .ok();
    assert_eq!(kept.as_deref(), Some("yes"), "the index was rebuilt");
}

/// An index of schema 9 (which indexed a memory's text and counted it by triggers) loses those
/// triggers in place: nothing is rebuilt, and a memory written afterwards is indexed and counted
/// once.
#[test]
fn an_index_of_schema_9_loses_its_insert_triggers_in_place() {
    let repo = TestRepo::new();
    let mut lore = bm25_only(&repo);
    for i in 0..3 {
        lore.remember(&note(&format!("first fact {i}")), &WriteContext::default())
            .unwrap();
    }
    lore.index().unwrap();
    let path = lore::index::index_path(lore.store());
    drop(lore);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(lore_testutils::FULL_TEXT_TABLE_OF_SCHEMA_11)
        .unwrap();
    conn.execute_batch(lore_testutils::INDEX_INSERT_TRIGGERS_OF_SCHEMA_9)
        .unwrap();
    mark_as_of_schema(&conn, 9);
    drop(conn);

    let mut lore = bm25_only(&repo);
    lore.remember(&note("zebra crossing rule"), &WriteContext::default())
        .unwrap();
    let hits = lore
        .search("zebra", &ListFilter::default(), &Default::default(), false)
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(lore.status().unwrap().total, 4);

    let conn = of_this_schema_and_whole(&path, 4);
    assert_not_rebuilt(&conn);
}

/// An older lore that rewrites the tables as its own schema while a handle of this one is open
/// (here: the schema-9 triggers put back and the version set to 9) does not make that handle
/// write this version's rows into them: its next write brings them forward first.
#[test]
fn a_live_handle_brings_tables_an_older_lore_rewrote_forward_before_writing() {
    let repo = TestRepo::new();
    let mut lore = bm25_only(&repo);
    lore.remember(&note("first fact"), &WriteContext::default())
        .unwrap();
    lore.index().unwrap();
    let path = lore::index::index_path(lore.store());
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(lore_testutils::FULL_TEXT_TABLE_OF_SCHEMA_11)
        .unwrap();
    conn.execute_batch(lore_testutils::INDEX_INSERT_TRIGGERS_OF_SCHEMA_9)
        .unwrap();
    conn.pragma_update(None, "user_version", 9).unwrap();
    drop(conn);

    lore.remember(&note("second fact"), &WriteContext::default())
        .unwrap();
    lore.index().unwrap();
    of_this_schema_and_whole(&path, 2);
}

fn pages(conn: &Connection) -> (i64, i64) {
    let count = |pragma| conn.pragma_query_value(None, pragma, |r| r.get(0)).unwrap();
    (count("page_count"), count("freelist_count"))
}

/// An index of schema 10 (whose `record` column held each memory whole, but for its body) is
/// brought forward in place: every record is rewritten to hold only what no other column
/// does, nothing is rebuilt, every memory reads back as it was, and the file is packed.
#[test]
fn an_index_of_schema_10_has_its_records_compacted_in_place() {
    const MEMORIES: usize = 300;
    let repo = TestRepo::new();
    let mut lore = bm25_only(&repo);
    let ctx = WriteContext {
        agent: Some("claude-code".into()),
        session: Some("s-42".into()),
        ..WriteContext::default()
    };
    let memories: Vec<_> = (0..MEMORIES)
        .map(|i| {
            let memory = NewMemory {
                key: (i % 2 == 0).then(|| format!("topic-{i}")),
                tags: vec!["storage".into(), format!("t{i}")],
                confidence: Some(0.5),
                ..note(&format!("fact {i} kept through the migration"))
            };
            lore.prepare(&memory, &ctx).unwrap()
        })
        .collect();
    lore.write_batch(&memories, &BatchWrite::import("test batch"), &ctx)
        .unwrap();
    lore.index().unwrap();
    let before = lore.list(&ListFilter::default()).unwrap();
    assert_eq!(before.len(), MEMORIES);
    let path = lore::index::index_path(lore.store());
    drop(lore);

    let conn = Connection::open(&path).unwrap();
    lore_testutils::write_records_whole(&conn, &before);
    conn.execute_batch(lore_testutils::FULL_TEXT_TABLE_OF_SCHEMA_11)
        .unwrap();
    conn.execute_batch(
        "DROP INDEX memories_key;
         CREATE INDEX memories_ns_key ON memories (namespace, key);",
    )
    .unwrap();
    mark_as_of_schema(&conn, 10);
    let (whole_pages, _) = pages(&conn);
    drop(conn);

    let mut lore = bm25_only(&repo);
    assert_eq!(lore.list(&ListFilter::default()).unwrap(), before);
    let conn = of_this_schema_and_whole(&path, MEMORIES as i64);
    let (packed_pages, free_pages) = pages(&conn);
    assert!(
        packed_pages < whole_pages && free_pages == 0,
        "{whole_pages} pages before, {packed_pages} after, {free_pages} free"
    );
    let repeating: Vec<String> = conn
        .prepare(
            "SELECT record FROM memories
             WHERE instr(record, id) OR instr(record, summary) OR instr(record, '\"status\"')",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        repeating,
        Vec::<String>::new(),
        "records still repeat their columns"
    );
    assert_not_rebuilt(&conn);
}

/// A live handle that only reads, after an older lore rewrote the tables as its own schema and
/// caught them up to the same tip, brings them forward before reading: its rows are not this
/// version's to decode.
#[test]
fn a_live_handle_brings_tables_an_older_lore_rewrote_forward_before_reading() {
    let repo = TestRepo::new();
    let mut lore = bm25_only(&repo);
    write_batch(&mut lore, 0, 20);
    let before = lore.list(&ListFilter::default()).unwrap();
    let path = lore::index::index_path(lore.store());
    let conn = Connection::open(&path).unwrap();
    lore_testutils::write_records_whole(&conn, &before);
    conn.execute_batch(lore_testutils::FULL_TEXT_TABLE_OF_SCHEMA_11)
        .unwrap();
    conn.pragma_update(None, "user_version", 10).unwrap();
    drop(conn);

    assert_eq!(lore.list(&ListFilter::default()).unwrap(), before);
    of_this_schema_and_whole(&path, 20);
}

/// An index of schema 11 (which kept an FTS5 table of every memory's text beside the BM25
/// postings) loses the table in place and is packed: nothing is rebuilt, recall finds what it
/// found, and a memory removed afterwards leaves through the new delete trigger.
#[test]
fn an_index_of_schema_11_loses_its_full_text_table_in_place() {
    let repo = TestRepo::new();
    let mut lore = bm25_only(&repo);
    write_batch(&mut lore, 0, 400);
    let everything = ListFilter {
        limit: Some(1_000),
        ..ListFilter::default()
    };
    let found = |lore: &mut Lore| -> Vec<String> {
        let hits = lore.recall("fact 7", &everything).unwrap();
        hits.into_iter().map(|h| h.memory.id.to_string()).collect()
    };
    let before = found(&mut lore);
    assert!(before.len() > 100, "{}", before.len());
    let path = lore::index::index_path(lore.store());
    drop(lore);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(lore_testutils::FULL_TEXT_TABLE_OF_SCHEMA_11)
        .unwrap();
    mark_as_of_schema(&conn, 11);
    let (with_table, _) = pages(&conn);
    drop(conn);

    let mut lore = bm25_only(&repo);
    assert_eq!(found(&mut lore), before);
    let conn = of_this_schema_and_whole(&path, 400);
    let (packed, free) = pages(&conn);
    assert!(
        packed < with_table && free == 0,
        "{with_table} pages before, {packed} after, {free} free"
    );
    assert_not_rebuilt(&conn);
    drop(conn);
    let gone = before[0].clone();
    lore.forget(&gone, &WriteContext::default()).unwrap();
    lore.index().unwrap();
    assert!(!found(&mut lore).contains(&gone));
    of_this_schema_and_whole(&path, 399);
}

/// The row id and the vectors of the memory `id`.
fn row_and_vectors(conn: &Connection, id: &str) -> (i64, Vec<Vec<u8>>) {
    let rowid: i64 = conn
        .query_row("SELECT rowid FROM memories WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    let mut stmt = conn
        .prepare("SELECT vector FROM chunks WHERE memory = ?1 ORDER BY ordinal")
        .unwrap();
    let vectors = stmt
        .query_map([rowid], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (rowid, vectors)
}

/// A change that leaves a memory's text as it was (its status, confidence, a citation added or
/// taken out) rewrites its row where it is: the same row id, so its postings, full-text row and
/// vectors stay as they were rather than being taken out and written again, while its count
/// follows the new status and the cited file finds it (or no longer does). A change of its text
/// (body or tags) takes it out and indexes it afresh.
#[test]
fn a_status_change_rewrites_the_row_in_place_and_a_text_change_reindexes_it() {
    let repo = TestRepo::new();
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    let embedder = lore::embed::StaticEmbedder::builtin().unwrap();
    lore.set_embedder(Some(std::sync::Arc::new(embedder)));
    let ctx = WriteContext::default();
    let kept = lore
        .remember(&note("cache eviction follows the clock hand"), &ctx)
        .unwrap()
        .memory;
    // Indexed before the next one, so that its row is not the last (whose id SQLite reuses).
    lore.index().unwrap();
    lore.remember(&note("retry budget is three attempts"), &ctx)
        .unwrap();
    lore.index().unwrap();
    let path = lore::index::index_path(lore.store());
    let id = kept.id.to_string();
    let before = row_and_vectors(&Connection::open(&path).unwrap(), &id);
    assert!(!before.1.is_empty(), "the memory has vectors");

    let cite = lore::Patch {
        confidence: Some(0.9),
        add_citations: vec![lore::Citation {
            path: "src/cache.rs".into(),
            lines: None,
            blob: None,
        }],
        ..lore::Patch::default()
    };
    lore.update(&id, &cite, &ctx).unwrap();
    let citing = |lore: &mut Lore| -> Vec<String> {
        let index = lore.index().unwrap();
        (index.mentioning("src/cache.rs", 10).unwrap().iter())
            .map(|m| m.id.to_string())
            .collect()
    };
    assert_eq!(citing(&mut lore), [id.as_str()]);
    // The citation taken out by hand (no command removes one), the text as it was: the file no
    // longer finds it.
    let (file, mut edited) = lore.resolve(&id).unwrap();
    edited.citations.clear();
    let content = lore::record::render(&edited).unwrap().into_bytes();
    let message = lore::store::Message {
        subject: "uncite".into(),
        ..lore::store::Message::default()
    };
    let edit = vec![lore::store::Edit::Upsert {
        path: file,
        content,
    }];
    lore.store()
        .transact(|_| Ok((edit.clone(), message.clone(), ())))
        .unwrap();
    assert!(citing(&mut lore).is_empty(), "the citation is gone");
    let resolve = lore::Patch {
        status: Some(lore::Status::Resolved),
        ..lore::Patch::default()
    };
    lore.update(&id, &resolve, &ctx).unwrap();
    let index = lore.index().unwrap();
    let counts = index.counts().unwrap();
    assert_eq!(
        counts,
        [
            ("learnings".to_string(), "active".to_string(), 1),
            ("learnings".to_string(), "resolved".to_string(), 1),
        ]
    );
    let all = ListFilter {
        limit: Some(10),
        ..ListFilter::default()
    };
    let hits = index.recall("eviction", &all).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].memory.status, lore::Status::Resolved);
    let conn = Connection::open(&path).unwrap();
    assert_eq!(
        row_and_vectors(&conn, &id).0,
        before.0,
        "rewritten where it was"
    );
    assert!(postings_whole(&conn));

    let patch = lore::Patch {
        body: Some("The hand sweeps lazily.".into()),
        ..lore::Patch::default()
    };
    lore.update(&id, &patch, &ctx).unwrap();
    let index = lore.index().unwrap();
    assert!(index.recall("eviction", &all).unwrap().len() == 1);
    assert!(index.recall("lazily", &all).unwrap().len() == 1);
    assert!(
        index.recall("written", &all).unwrap().len() == 1,
        "the old body is gone"
    );
    let after = row_and_vectors(&Connection::open(&path).unwrap(), &id);
    assert!(after.0 > before.0, "a new text is indexed afresh");
    assert_ne!(after.1, before.1, "and embedded again");

    // A tag is part of the text: a new one is found.
    let tag = lore::Patch {
        add_tags: vec!["pelican".into()],
        ..lore::Patch::default()
    };
    lore.update(&id, &tag, &ctx).unwrap();
    let index = lore.index().unwrap();
    assert_eq!(index.recall("pelican", &all).unwrap().len(), 1);
}
