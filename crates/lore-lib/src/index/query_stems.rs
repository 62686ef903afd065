//! Query words stemmed as the index's full-text tokenizer stems them: in Rust where
//! [`super::fts_terms`] answers for them, else through an FTS5 table of the connection's own
//! (remembered for the process).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use rusqlite::{Connection, params};

use crate::error::Result;

/// Stems found in this process, by the query words (joined by spaces). Every index makes its
/// full-text table with the same tokenizer (`porter unicode61 remove_diacritics 2`, as in
/// `schema.rs`), so stems found on one connection hold for all: the second store of a stacked
/// recall makes no helper tables of its own. Cleared when it reaches [`STEMS_KEPT`] entries.
static STEMS: LazyLock<Mutex<HashMap<String, Option<Vec<String>>>>> =
    LazyLock::new(Default::default);

/// Most entries [`STEMS`] keeps (a long-lived server sees many queries).
const STEMS_KEPT: usize = 1_024;

/// Each query word as the index's tokenizer stems it, via an FTS5 table of the connection's own
/// (`None` when a word does not come out as exactly one term); remembered for the process.
pub(crate) fn stems(conn: &Connection, words: &[String]) -> Result<Option<Vec<String>>> {
    if let Some(found) = stems_in_rust(words) {
        return Ok(found);
    }
    let text = words.join(" ");
    if let Some(found) = STEMS
        .lock()
        .ok()
        .and_then(|known| known.get(&text).cloned())
    {
        return Ok(found);
    }
    // The helper tables live in the connection's temp schema; make them on first use.
    let cleared = conn
        .prepare_cached("DELETE FROM temp.lore_query")
        .and_then(|mut s| s.execute([]));
    if cleared.is_err() {
        conn.execute_batch(
            "CREATE VIRTUAL TABLE temp.lore_query
                 USING fts5(q, tokenize = 'porter unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE temp.lore_query_terms
                 USING fts5vocab(temp, lore_query, 'instance');",
        )?;
    }
    // Each word its own row, so that a word the tokenizer drops or splits is seen as such (the
    // words asked together could come out as as many terms, one dropped beside one split).
    {
        let mut insert =
            conn.prepare_cached("INSERT INTO temp.lore_query (rowid, q) VALUES (?1, ?2)")?;
        for (i, word) in words.iter().enumerate() {
            insert.execute(params![i as i64 + 1, word])?;
        }
    }
    let mut terms: Vec<(i64, String)> = conn
        .prepare_cached("SELECT doc, term FROM temp.lore_query_terms")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<std::result::Result<_, _>>()?;
    terms.sort();
    // A word the tokenizer split or dropped: `None`, and FTS5 handles the query.
    let one_each = terms.len() == words.len()
        && (terms.iter().enumerate()).all(|(i, (doc, _))| *doc == i as i64 + 1);
    let found = one_each.then(|| terms.into_iter().map(|(_, stem)| stem).collect::<Vec<_>>());
    if let Ok(mut known) = STEMS.lock() {
        if known.len() >= STEMS_KEPT {
            known.clear();
        }
        known.insert(text, found.clone());
    }
    Ok(found)
}

/// The words' stems as [`stems`] gives them, made in Rust ([`super::fts_terms`]); `None` when
/// a word holds a character only FTS5 can tokenize.
fn stems_in_rust(words: &[String]) -> Option<Option<Vec<String>>> {
    let mut stems = Vec::with_capacity(words.len());
    let mut one_each = true;
    for word in words {
        let mut terms = 0;
        let answered = super::fts_terms::each_term(word, |t| {
            terms += 1;
            if terms == 1 {
                stems.push(t.to_owned());
            }
        });
        if !answered {
            return None;
        }
        one_each &= terms == 1;
    }
    Some(one_each.then_some(stems))
}

/// Each word's stem as the index's tokenizer makes it, or `None` for a word that does not come
/// out as exactly one term (asked together first, then one by one when one of them splits).
pub(crate) fn stem_each(conn: &Connection, words: &[String]) -> Result<Vec<Option<String>>> {
    if let Some(all) = stems(conn, words)? {
        return Ok(all.into_iter().map(Some).collect());
    }
    words
        .iter()
        .map(|w| Ok(stems(conn, std::slice::from_ref(w))?.and_then(|mut s| s.pop())))
        .collect()
}
