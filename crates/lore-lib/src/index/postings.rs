//! BM25 scored in Rust from the index's own postings, its only full-text structure: the scores
//! SQLite FTS5's `bm25()` gives with the same tokenizer and weights (the tests check them
//! against an FTS5 table of the same memories), without FTS5's per-row auxiliary call and
//! document-size lookup, and without a second copy of every term. The thoughts index keeps the
//! same tables for its texts (each thought's text as the summary column, scored with
//! [`super::postings_scores::weighted_scores`] and weights `(1, 0, 0)`).
//!
//! **Postings.** `postings(term, block, data)`: for each stemmed term and each block of 1,024
//! row ids, the memories of the block holding the term, each as its row id's offset in the
//! block, its count of the term in summary, body and tags, and its length in tokens (all
//! columns), as varints with each offset a distance from the one before (about five bytes an
//! entry). Terms and lengths are FTS5's tokenizer's (`porter unicode61 remove_diacritics 2`):
//! made in Rust ([`super::fts_terms`]) where it answers, else by FTS5 itself (a temporary table
//! with that tokenizer and its `fts5vocab` instances). The totals FTS5's BM25
//! uses (memories, tokens) are kept in `meta`. A catch-up queues what it inserts and removes and
//! applies it at the end of its transaction.
//!
//! **The tail.** A small catch-up (a write's) does not rewrite the blocks of every term of the
//! memories it adds: their entries go to `postings_tail(term, rowid, data)`, one short row each,
//! and a term's postings are its blocks followed by its tail rows. New rows always have the
//! largest row ids, so the tail follows the blocks in row-id order. Once the tail holds
//! [`TAIL_FOLD_AT`] entries, or a catch-up adds [`DIRECT_FROM`] memories or more, the tail is
//! folded into the blocks (one rewrite per block touched, however many writes queued into it).
//! A removed memory's entries are deleted from the tail when they are there, else taken out of
//! their blocks.
//!
//! **Scoring** (in [`super::postings_scores`]) follows FTS5's `bm25()`: for each query phrase in
//! order, `idf · f·(k1 + 1) / (f + k1·(1 − b + b·D/avgdl))` with `f` the weighted count, `D` the
//! length, `idf = ln((N − n + 0.5)/(n + 0.5))` floored at 1e-6, `k1 = 1.2`, `b = 0.75`; reading a
//! common term is a few hundred blob rows instead of a b-tree lookup per memory.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::postings_block::{
    BLOCK_BITS, ENTRY_MAX, Entry, damaged_block, decode_block, each_entry, encode_list, entries_in,
};
use crate::error::Result;

/// The postings' tables (the totals are kept in the index's `meta`).
pub const TABLES: &str = "
CREATE TABLE postings (
    term  TEXT NOT NULL,
    block INTEGER NOT NULL,
    data  BLOB NOT NULL,
    PRIMARY KEY (term, block)
) WITHOUT ROWID;
CREATE TABLE postings_tail (
    term  TEXT NOT NULL,
    rowid INTEGER NOT NULL,
    data  BLOB NOT NULL,
    PRIMARY KEY (term, rowid)
) WITHOUT ROWID;
";

/// Memories tokenized per pass over the temporary table.
const BATCH: usize = 4_096;
/// Entries the tail may hold before a catch-up folds it into the blocks.
const TAIL_FOLD_AT: i64 = 65_536;
/// A catch-up adding at least this many memories writes their blocks directly.
const DIRECT_FROM: usize = 256;

/// A memory's text as the postings index it.
struct Text {
    summary: String,
    body: String,
    tags: String,
}

/// Changes to the postings queued by a catch-up.
#[derive(Default)]
pub struct PendingPostings {
    added: HashMap<i64, Text>,
    removed: Vec<(i64, Text)>,
}

impl PendingPostings {
    /// Queues a memory inserted at `rowid`.
    pub fn add(&mut self, rowid: i64, summary: &str, body: &str, tags: &str) {
        self.added.insert(
            rowid,
            Text {
                summary: summary.to_string(),
                body: body.to_string(),
                tags: tags.to_string(),
            },
        );
    }

    /// Queues the removal of the memory at `rowid` (with the text it was indexed with).
    pub fn remove(&mut self, rowid: i64, summary: String, body: String, tags: String) {
        // Inserted by this same catch-up: never applied, so nothing to take out.
        if self.added.remove(&rowid).is_none() {
            self.removed.push((
                rowid,
                Text {
                    summary,
                    body,
                    tags,
                },
            ));
        }
    }

    /// Whether anything is queued.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }

    /// Applies the queued changes (inside the catch-up's transaction).
    pub fn apply(&mut self, conn: &Connection) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let removed = std::mem::take(&mut self.removed);
        let mut added: Vec<(i64, Text)> = std::mem::take(&mut self.added).into_iter().collect();
        added.sort_by_key(|(rowid, _)| *rowid);
        let (mut docs, mut tokens) = totals(conn)?;
        let mut tail = tail_entries(conn)?;
        for batch in removed.chunks(BATCH) {
            let found = tokenize(conn, batch)?;
            for (_, length) in &found.lengths {
                docs -= 1;
                tokens -= *length as i64;
            }
            let in_blocks = take_from_tail(conn, found.entries, &mut tail)?;
            write_blocks(conn, in_blocks, true)?;
        }
        let direct = added.len() >= DIRECT_FROM;
        if direct && tail > 0 {
            fold_tail(conn)?;
            tail = 0;
        }
        for batch in added.chunks(BATCH) {
            let found = tokenize(conn, batch)?;
            for (_, length) in &found.lengths {
                docs += 1;
                tokens += *length as i64;
            }
            if direct {
                write_blocks(conn, found.entries, false)?;
            } else {
                tail += add_to_tail(conn, found.entries)?;
            }
        }
        if tail >= TAIL_FOLD_AT {
            fold_tail(conn)?;
            tail = 0;
        }
        super::schema::write_meta(conn, "postings_docs", &docs.to_string())?;
        super::schema::write_meta(conn, "postings_tokens", &tokens.to_string())?;
        super::schema::write_meta(conn, "postings_tail", &tail.to_string())?;
        Ok(())
    }
}

/// The number of entries in the tail.
fn tail_entries(conn: &Connection) -> Result<i64> {
    Ok(super::schema::read_meta(conn, "postings_tail")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// The row id of entry `e` of `block`.
fn rowid_of(block: i64, e: &Entry) -> i64 {
    (block << BLOCK_BITS) | e.offset as i64
}

/// Writes entries to the tail; returns how many.
fn add_to_tail(conn: &Connection, entries: HashMap<(String, i64), Vec<Entry>>) -> Result<i64> {
    let mut insert = conn.prepare_cached(
        "INSERT OR REPLACE INTO postings_tail (term, rowid, data) VALUES (?1, ?2, ?3)",
    )?;
    let mut n = 0;
    let mut bytes = Vec::with_capacity(ENTRY_MAX);
    for ((term, block), list) in entries {
        for e in list {
            bytes.clear();
            encode_list(std::slice::from_ref(&e), &mut bytes);
            insert.execute(params![term, rowid_of(block, &e), bytes])?;
            n += 1;
        }
    }
    Ok(n)
}

/// Deletes the removed entries that are in the tail (counting them off `tail`); returns the
/// others, which are in blocks.
fn take_from_tail(
    conn: &Connection,
    mut entries: HashMap<(String, i64), Vec<Entry>>,
    tail: &mut i64,
) -> Result<HashMap<(String, i64), Vec<Entry>>> {
    if *tail == 0 {
        return Ok(entries);
    }
    let mut delete =
        conn.prepare_cached("DELETE FROM postings_tail WHERE term = ?1 AND rowid = ?2")?;
    for ((term, block), list) in entries.iter_mut() {
        let mut kept = Vec::with_capacity(list.len());
        for e in list.drain(..) {
            if delete.execute(params![term, rowid_of(*block, &e)])? == 0 {
                kept.push(e);
            } else {
                *tail -= 1;
            }
        }
        *list = kept;
    }
    entries.retain(|_, list| !list.is_empty());
    Ok(entries)
}

/// Moves every tail entry into its block and empties the tail.
fn fold_tail(conn: &Connection) -> Result<()> {
    let mut entries: HashMap<(String, i64), Vec<Entry>> = HashMap::new();
    {
        let mut stmt = conn.prepare_cached("SELECT term, rowid, data FROM postings_tail")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let term: String = row.get(0)?;
            let rowid: i64 = row.get(1)?;
            let data: Vec<u8> = row.get(2)?;
            let [mut e] = decode_block(&data)?[..] else {
                return Err(damaged_block());
            };
            e.offset = (rowid & ((1 << BLOCK_BITS) - 1)) as u16;
            entries
                .entry((term, rowid >> BLOCK_BITS))
                .or_default()
                .push(e);
        }
    }
    write_blocks(conn, entries, false)?;
    conn.execute("DELETE FROM postings_tail", [])?;
    Ok(())
}

/// The memories and tokens the postings hold.
pub(super) fn totals(conn: &Connection) -> Result<(i64, i64)> {
    let read = |name: &str| -> Result<i64> {
        Ok(super::schema::read_meta(conn, name)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    };
    Ok((read("postings_docs")?, read("postings_tokens")?))
}

/// What tokenizing some memories found.
struct Tokenized {
    /// `(term, block)` → the block's entries for the term.
    entries: HashMap<(String, i64), Vec<Entry>>,
    /// Each memory's length in tokens.
    lengths: Vec<(i64, u32)>,
}

/// Makes the connection's temporary tables: one FTS5 table with the index's tokenizer and
/// columns, and its instances.
fn temp_tables(conn: &Connection) -> Result<()> {
    let exists: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM temp.sqlite_master WHERE name = 'lore_docs'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if exists.is_none() {
        conn.execute_batch(
            "CREATE VIRTUAL TABLE temp.lore_docs USING fts5(summary, body, tags, content = '',
                 tokenize = 'porter unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE temp.lore_docs_terms
                 USING fts5vocab(temp, lore_docs, 'instance');",
        )?;
    }
    Ok(())
}

/// Tokenizes memories as FTS5's tokenizer does: in Rust where [`fts_terms`] answers for
/// all of a memory's text, else through FTS5 itself.
///
/// [`fts_terms`]: super::fts_terms
fn tokenize(conn: &Connection, docs: &[(i64, Text)]) -> Result<Tokenized> {
    let mut entries: HashMap<(String, i64), Vec<Entry>> = HashMap::new();
    let mut lengths: HashMap<i64, u32> = docs.iter().map(|(r, _)| (*r, 0)).collect();
    let mut asked = Vec::new();
    let mut counts: HashMap<String, [u32; 3]> = HashMap::new();
    for doc in docs {
        match counted_in_rust(&doc.1, &mut counts) {
            Some(length) => {
                lengths.insert(doc.0, length);
                for (term, counts) in counts.drain() {
                    push_entry(&mut entries, term, doc.0, counts);
                }
            }
            None => asked.push(doc),
        }
    }
    if !asked.is_empty() {
        tokenize_with_fts5(conn, &asked, &mut entries, &mut lengths)?;
    }
    for ((_, block), list) in entries.iter_mut() {
        for e in list.iter_mut() {
            e.length = lengths[&((*block << BLOCK_BITS) | e.offset as i64)];
        }
    }
    let mut lengths: Vec<(i64, u32)> = lengths.into_iter().collect();
    lengths.sort_unstable();
    Ok(Tokenized { entries, lengths })
}

/// Counts each term of a memory per column into `counts` (left empty when it returns `None`)
/// and returns its length in tokens, or `None` when its text is FTS5's to tokenize.
fn counted_in_rust(text: &Text, counts: &mut HashMap<String, [u32; 3]>) -> Option<u32> {
    let mut length = 0u32;
    for (column, field) in [&text.summary, &text.body, &text.tags]
        .into_iter()
        .enumerate()
    {
        let answered = super::fts_terms::each_term(field, |term| {
            length += 1;
            match counts.get_mut(term) {
                Some(c) => c[column] += 1,
                None => {
                    let mut c = [0; 3];
                    c[column] = 1;
                    counts.insert(term.to_owned(), c);
                }
            }
        });
        if !answered {
            counts.clear();
            return None;
        }
    }
    Some(length)
}

/// Adds a memory's entry for `term` (its length filled in later).
fn push_entry(
    entries: &mut HashMap<(String, i64), Vec<Entry>>,
    term: String,
    doc: i64,
    counts: [u32; 3],
) {
    let block = doc >> BLOCK_BITS;
    entries.entry((term, block)).or_default().push(Entry {
        offset: (doc & ((1 << BLOCK_BITS) - 1)) as u16,
        counts: counts.map(|c| c.min(u16::MAX as u32) as u16),
        length: 0,
    });
}

/// Tokenizes memories through FTS5: a temporary table with the index's tokenizer, read back
/// through its instances.
///
/// The temporary table keeps no content (`content = ''`), so emptying it is one `delete-all`
/// rather than a delete of every row's terms; its instances come term by term, document by
/// document, so a term's text is copied once per document rather than once per occurrence.
fn tokenize_with_fts5(
    conn: &Connection,
    docs: &[&(i64, Text)],
    entries: &mut HashMap<(String, i64), Vec<Entry>>,
    lengths: &mut HashMap<i64, u32>,
) -> Result<()> {
    temp_tables(conn)?;
    let clear = "INSERT INTO temp.lore_docs (lore_docs) VALUES ('delete-all')";
    conn.prepare_cached(clear)?.execute([])?;
    {
        let mut insert = conn.prepare_cached(
            "INSERT INTO temp.lore_docs (rowid, summary, body, tags) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (rowid, text) in docs.iter().copied() {
            insert.execute(params![rowid, text.summary, text.body, text.tags])?;
        }
    }
    {
        let mut stmt = conn.prepare_cached("SELECT term, doc, col FROM temp.lore_docs_terms")?;
        let mut rows = stmt.query([])?;
        let mut current: Option<(String, i64, [u32; 3])> = None;
        let mut length_of = (0i64, 0u32);
        while let Some(row) = rows.next()? {
            let term = super::schema::text_at(row, 0)?;
            let doc: i64 = row.get(1)?;
            let column = match super::schema::text_at(row, 2)? {
                "summary" => 0,
                "body" => 1,
                _ => 2,
            };
            // Lengths summed per run of one document, written when the document changes.
            if length_of.0 != doc {
                if length_of.1 > 0 {
                    *lengths.entry(length_of.0).or_default() += length_of.1;
                }
                length_of = (doc, 0);
            }
            length_of.1 += 1;
            match &mut current {
                Some((t, d, counts)) if *d == doc && t == term => counts[column] += 1,
                _ => {
                    if let Some((t, d, counts)) = current.take() {
                        push_entry(entries, t, d, counts);
                    }
                    let mut counts = [0u32; 3];
                    counts[column] = 1;
                    current = Some((term.to_owned(), doc, counts));
                }
            }
        }
        if length_of.1 > 0 {
            *lengths.entry(length_of.0).or_default() += length_of.1;
        }
        if let Some((t, d, counts)) = current.take() {
            push_entry(entries, t, d, counts);
        }
    }
    conn.prepare_cached(clear)?.execute([])?;
    Ok(())
}

/// Merges entries into (or, when `remove`, takes them out of) their blocks, in term and block
/// order (each term's rows are written where the last one was). A term's stored blocks are read
/// in one range when the changed ones fill at least half of it (an import's), else one by one
/// (a write's few, which may lie far apart).
fn write_blocks(
    conn: &Connection,
    entries: HashMap<(String, i64), Vec<Entry>>,
    remove: bool,
) -> Result<()> {
    let mut read_one =
        conn.prepare_cached("SELECT data FROM postings WHERE term = ?1 AND block = ?2")?;
    let mut read_range = conn.prepare_cached(
        "SELECT block, data FROM postings WHERE term = ?1 AND block BETWEEN ?2 AND ?3",
    )?;
    let mut write = conn.prepare_cached(
        "INSERT INTO postings (term, block, data) VALUES (?1, ?2, ?3)
         ON CONFLICT (term, block) DO UPDATE SET data = excluded.data",
    )?;
    let mut delete = conn.prepare_cached("DELETE FROM postings WHERE term = ?1 AND block = ?2")?;
    let mut entries: Vec<((String, i64), Vec<Entry>)> = entries.into_iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for group in entries.chunk_by_mut(|a, b| a.0.0 == b.0.0) {
        let term = group[0].0.0.clone();
        let (lo, hi) = (group[0].0.1, group[group.len() - 1].0.1);
        let ranged = (hi - lo) < 2 * group.len() as i64;
        let mut stored: HashMap<i64, Vec<u8>> = HashMap::new();
        if ranged {
            let rows =
                read_range.query_map(params![term, lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))?;
            for row in rows {
                let (block, data) = row?;
                stored.insert(block, data);
            }
        }
        for ((_, block), changed) in group.iter_mut() {
            let data: Option<Vec<u8>> = match ranged {
                true => stored.remove(block),
                false => read_one
                    .query_row(params![term, *block], |r| r.get(0))
                    .optional()?,
            };
            let list = merged(data.as_deref(), std::mem::take(changed), remove)?;
            if list.is_empty() {
                delete.execute(params![term, *block])?;
            } else {
                let mut bytes = Vec::with_capacity(list.len() * ENTRY_MAX);
                encode_list(&list, &mut bytes);
                write.execute(params![term, *block, bytes])?;
            }
        }
    }
    Ok(())
}

/// A block's entries after `changed` replaced (or, when `remove`, took out) the stored ones at
/// their offsets, in offset order.
fn merged(stored: Option<&[u8]>, changed: Vec<Entry>, remove: bool) -> Result<Vec<Entry>> {
    let mut list = match stored {
        Some(data) => decode_block(data)?,
        None => Vec::new(),
    };
    let mut offsets: Vec<u16> = changed.iter().map(|c| c.offset).collect();
    offsets.sort_unstable();
    list.retain(|e| offsets.binary_search(&e.offset).is_err());
    if !remove {
        list.extend(changed);
    }
    list.sort_by_key(|e| e.offset);
    Ok(list)
}

/// Calls `f` with each entry of a row of postings and its row id: a block's (`block`, its
/// entries' offsets in it) or a tail row's (`tail`, its one entry); damage is an error.
fn each_posting(
    block: Option<i64>,
    tail: Option<i64>,
    data: &[u8],
    mut f: impl FnMut(i64, &Entry),
) -> Result<()> {
    each_entry(data, |e| match (block, tail) {
        (Some(block), _) => f(rowid_of(block, &e), &e),
        (None, Some(rowid)) => f(rowid, &e),
        (None, None) => {}
    })
}

/// One posting as [`dump`] gives it: the term, the memory's path, its counts and length.
pub type Posting = (String, String, [u16; 3], u32);

/// Every posting (blocks and tail) with its memory's path instead of its row id, sorted, and the
/// totals (memories, tokens): for comparing an index caught up write by write with a rebuild,
/// whose row ids differ.
pub fn dump(conn: &Connection) -> Result<(Vec<Posting>, (i64, i64))> {
    let paths: HashMap<i64, String> = conn
        .prepare("SELECT rowid, path FROM memories")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare(
        "SELECT term, block, NULL, data FROM postings
         UNION ALL SELECT term, NULL, rowid, data FROM postings_tail",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let term: String = row.get(0)?;
        let (block, tail): (Option<i64>, Option<i64>) = (row.get(1)?, row.get(2)?);
        let data: Vec<u8> = row.get(3)?;
        each_posting(block, tail, &data, |rowid, e| {
            let path = (paths.get(&rowid).cloned())
                .unwrap_or_else(|| format!("(no memory at row {rowid})"));
            out.push((term.clone(), path, e.counts, e.length));
        })?;
    }
    out.sort();
    Ok((out, totals(conn)?))
}

/// The statement reading a term's postings: blocks in block order, then the tail in row-id
/// order, in one statement so that a fold committed meanwhile by another process cannot hide
/// entries (each statement reads its own snapshot).
pub(super) const READ_TERM: &str = "SELECT block, NULL, data FROM postings WHERE term = ?1
     UNION ALL SELECT NULL, rowid, data FROM postings_tail WHERE term = ?1
     ORDER BY 1 NULLS LAST, 2";

/// The error for postings that do not hold every memory of the index (damage: a catch-up keeps
/// them whole, and rebuilds an index whose postings fall behind).
pub(super) fn behind() -> crate::error::Error {
    crate::error::Error::Index(rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Blob,
        "the BM25 postings do not hold every memory (reindexing rebuilds them)".into(),
    ))
}

/// The index's count of memories when the postings hold every one of them (they answer for
/// it); `None` for an index of no memory; the error of [`behind`] when they do not.
pub(super) fn covered_count(conn: &Connection) -> Result<Option<i64>> {
    let docs = super::schema::read_doc_count(conn)?;
    if docs == 0 {
        return Ok(None);
    }
    match covering_totals(conn, docs)? {
        Some(_) => Ok(Some(docs)),
        None => Err(behind()),
    }
}

/// The totals (memories, tokens) when the postings cover the index's `docs` memories.
pub(super) fn covering_totals(conn: &Connection, docs: i64) -> Result<Option<(i64, i64)>> {
    let (n, tokens) = totals(conn)?;
    Ok((n == docs && n > 0).then_some((n, tokens)))
}

/// The row ids of the memories holding `stem`, when at most `cap` memories do (`None` when more
/// do). Reading stops as soon as more than `cap` entries are seen, so a common term costs a block
/// or two, whatever the store's size; a block's entries are counted without decoding
/// ([`entries_in`]).
pub fn rows_holding_at_most(conn: &Connection, stem: &str, cap: usize) -> Result<Option<Vec<i64>>> {
    let mut read = conn.prepare_cached(READ_TERM)?;
    let mut rows = read.query(params![stem])?;
    let mut found = Vec::new();
    while let Some(row) = rows.next()? {
        let block: Option<i64> = row.get(0)?;
        let tail: Option<i64> = row.get(1)?;
        let data = super::schema::blob_at(row, 2)?;
        let entries = match block {
            Some(_) => entries_in(data),
            None => 1,
        };
        if found.len() + entries > cap {
            return Ok(None);
        }
        each_posting(block, tail, data, |rowid, _| found.push(rowid))?;
    }
    Ok(Some(found))
}
