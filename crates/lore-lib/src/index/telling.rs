//! The memories that share a text's telling words, found at a cost bounded whatever the store's
//! size: what the write-time novelty check compares a new memory with.
//!
//! A near-duplicate repeats most of its original's words, so it holds the original's rare ones.
//! Of the text's longest distinct words (long words tend to be rare), each is looked up with a
//! capped read of its posting list: a word held by at most [`TELLING_POSTINGS`] memories is
//! telling, and that read already lists the memories holding it. Memories are ranked by the
//! summed rarity (`ln(N / df)`) of the telling words they share, and the best that pass the
//! filter are returned. No posting list is read past the cap and no common word is scored, so
//! the cost does not grow with the store (an exhaustive BM25 over a common word grows with it).

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::query::{self, ListFilter};
use crate::error::Result;
use crate::model::Memory;

/// A word held by at most this many memories is telling.
pub const TELLING_POSTINGS: usize = 48;
/// At most this many of the text's words are looked up.
const WORDS_LOOKED_UP: usize = 16;
/// At most this many of the best-ranked memories are checked against the filter.
const CANDIDATES_CHECKED: usize = 256;

/// The memories found (with their index rows), or the common words looked up.
pub type Telling = std::result::Result<Vec<(i64, Memory)>, Vec<String>>;

/// Up to `limit` memories (with their index rows) passing `filter` that share the most telling
/// words of `text`, best first. When none of the words looked up is telling, `Err` with those
/// words, longest first: the caller decides what a text made only of common words is compared
/// with.
pub fn sharing_telling_words(
    conn: &Connection,
    text: &str,
    filter: &ListFilter,
    limit: usize,
) -> Result<Telling> {
    let mut words = query::query_terms(text);
    words.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    words.truncate(WORDS_LOOKED_UP);
    let n = super::schema::read_doc_count(conn)?.max(1) as f64;
    let mut postings =
        conn.prepare_cached("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?1 LIMIT ?2")?;
    let mut shared: HashMap<i64, f64> = HashMap::new();
    let mut telling = false;
    for word in &words {
        let rows: Vec<i64> = postings
            .query_map(
                params![format!("\"{word}\""), TELLING_POSTINGS as i64 + 1],
                |r| r.get(0),
            )?
            .collect::<std::result::Result<_, _>>()?;
        if rows.is_empty() || rows.len() > TELLING_POSTINGS {
            continue;
        }
        telling = true;
        let rarity = (n / rows.len() as f64).ln().max(1e-6);
        for row in rows {
            *shared.entry(row).or_default() += rarity;
        }
    }
    if !telling {
        return Ok(Err(words));
    }
    let mut ranked: Vec<(i64, f64)> = shared.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut found = Vec::with_capacity(limit);
    for (rowid, _) in ranked.into_iter().take(CANDIDATES_CHECKED) {
        if found.len() == limit {
            break;
        }
        if let Some(memory) = query::memory_at(conn, rowid, filter)? {
            found.push((rowid, memory));
        }
    }
    Ok(Ok(found))
}
