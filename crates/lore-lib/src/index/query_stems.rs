//! Query words stemmed as the index's tokenizer (FTS5's `porter unicode61 remove_diacritics 2`)
//! stems them: in Rust where [`super::fts_terms`] answers for them, else through an FTS5 table
//! of the connection's own, in memory (remembered for the process).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use rusqlite::{Connection, params};

use crate::error::Result;

/// Terms found in this process, by the query words (joined by spaces). The tokenizer is the
/// same for every index, so terms found on one connection hold for all: the second store of a
/// stacked recall makes no helper tables of its own. Cleared when it reaches [`STEMS_KEPT`]
/// entries.
static STEMS: LazyLock<Mutex<HashMap<String, Vec<Vec<String>>>>> = LazyLock::new(Default::default);

/// Most entries [`STEMS`] keeps (a long-lived server sees many queries).
const STEMS_KEPT: usize = 1_024;

/// Each query word's stem, when every word comes out as exactly one term (`None` otherwise).
pub(crate) fn stems(conn: &Connection, words: &[String]) -> Result<Option<Vec<String>>> {
    let terms = terms_of_each(conn, words)?;
    Ok(terms
        .iter()
        .all(|t| t.len() == 1)
        .then(|| terms.into_iter().flatten().collect()))
}

/// Each word's stem, or `None` for a word that does not come out as exactly one term.
pub(crate) fn stem_each(conn: &Connection, words: &[String]) -> Result<Vec<Option<String>>> {
    Ok(terms_of_each(conn, words)?
        .into_iter()
        .map(|mut t| match t.len() {
            1 => t.pop(),
            _ => None,
        })
        .collect())
}

/// The terms a query searches, in order: each word's stem, the parts of a word the tokenizer
/// splits (a sign inside it that it takes for a separator: the vowel signs of Devanagari,
/// Thai's, Hebrew's points) that no other term of the query is, nothing for a word it drops.
/// The parts match wherever they stand in a memory, not only side by side: the postings keep no
/// positions.
pub(crate) fn query_stems(conn: &Connection, words: &[String]) -> Result<Vec<String>> {
    let each = terms_of_each(conn, words)?;
    let mut searched: std::collections::HashSet<String> = each
        .iter()
        .filter(|terms| terms.len() == 1)
        .flatten()
        .cloned()
        .collect();
    let mut stems: Vec<String> = Vec::with_capacity(words.len());
    for terms in each {
        match terms.len() {
            1 => stems.extend(terms),
            _ => stems.extend(
                terms
                    .into_iter()
                    .filter(|part| searched.insert(part.clone())),
            ),
        }
    }
    Ok(stems)
}

/// The terms each word comes out as, in order.
fn terms_of_each(conn: &Connection, words: &[String]) -> Result<Vec<Vec<String>>> {
    if let Some(found) = terms_in_rust(words) {
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
    let found = terms_with_fts5(conn, words)?;
    if let Ok(mut known) = STEMS.lock() {
        if known.len() >= STEMS_KEPT {
            known.clear();
        }
        known.insert(text, found.clone());
    }
    Ok(found)
}

/// [`terms_of_each`] through an FTS5 table in the connection's temporary schema (made on first
/// use), each word its own row, so that a word the tokenizer drops or splits is seen as such.
fn terms_with_fts5(conn: &Connection, words: &[String]) -> Result<Vec<Vec<String>>> {
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
    {
        let mut insert =
            conn.prepare_cached("INSERT INTO temp.lore_query (rowid, q) VALUES (?1, ?2)")?;
        for (i, word) in words.iter().enumerate() {
            insert.execute(params![i as i64 + 1, word])?;
        }
    }
    let mut terms: Vec<(i64, i64, String)> = conn
        .prepare_cached("SELECT doc, offset, term FROM temp.lore_query_terms")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<std::result::Result<_, _>>()?;
    terms.sort();
    let mut each = vec![Vec::new(); words.len()];
    for (doc, _, term) in terms {
        if let Some(word) = usize::try_from(doc - 1).ok().and_then(|i| each.get_mut(i)) {
            word.push(term);
        }
    }
    Ok(each)
}

/// [`terms_of_each`] made in Rust ([`super::fts_terms`]); `None` when a word holds a character
/// only FTS5 can tokenize.
fn terms_in_rust(words: &[String]) -> Option<Vec<Vec<String>>> {
    let mut each = Vec::with_capacity(words.len());
    for word in words {
        let mut terms = Vec::new();
        if !super::fts_terms::each_term(word, |t| terms.push(t.to_owned())) {
            return None;
        }
        each.push(terms);
    }
    Some(each)
}
