//! The memories that share a text's telling words, found at a cost bounded whatever the store's
//! size: what the write-time novelty check compares a new memory with.
//!
//! A near-duplicate repeats most of its original's words, so it holds the original's rare ones.
//! Of the text's longest distinct words (long words tend to be rare), each is looked up with a
//! capped read of its postings: a word held by at most [`TELLING_POSTINGS`] memories is telling,
//! and that read already lists the memories holding it. In a large store every word of a text may
//! be held by more (a million memories of everyday words); then the words held by at most
//! [`WIDER_POSTINGS`] are taken instead. Memories are ranked by the summed rarity (`ln(N / df)`)
//! of the telling words they share, and the best that pass the filter are returned, every one
//! tied for the best sum among them (a repeat holds all the telling words, so it is among
//! those; when too many tie, the words do not tell it apart and the next pass, or the caller,
//! decides). No postings
//! are read past the cap and no common word is scored, so the cost does not grow with the store
//! (an exhaustive BM25 over a common word grows with it). The index's own postings are read
//! (a block of 1,024 row ids at a time, counted without decoding).

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::query::{self, ListFilter};
use crate::error::Result;
use crate::model::Memory;

/// A word held by at most this many memories is telling.
pub const TELLING_POSTINGS: usize = 48;
/// When none of the words looked up is telling, a word held by at most this many memories is.
pub const WIDER_POSTINGS: usize = 1_024;
/// At most this many of the text's words are looked up.
const WORDS_LOOKED_UP: usize = 16;
/// At most this many of the best-ranked memories are checked against the filter.
const CANDIDATES_CHECKED: usize = 256;

/// The memories found (with their index rows), or the common words looked up.
pub type Telling = std::result::Result<Vec<(i64, Memory)>, Vec<String>>;

/// The memories (with their index rows) passing `filter` that share the most telling words of
/// `text`, best first: every one tied for the best, then more up to `limit` in all. When none of
/// the words looked up is telling (or too many memories tie for the best), `Err` with those
/// words, longest first: the caller decides what the text is compared with.
pub fn sharing_telling_words(
    conn: &Connection,
    text: &str,
    filter: &ListFilter,
    limit: usize,
) -> Result<Telling> {
    let mut words = query::query_terms(text);
    words.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    words.truncate(WORDS_LOOKED_UP);
    // Two words of one stem are one term: read (and weighed) once. A word that is not one term
    // is not looked up.
    let mut seen = HashSet::new();
    let stems: Vec<Option<String>> = super::query_stems::stem_each(conn, &words)?
        .into_iter()
        .map(|s| s.filter(|s| seen.insert(s.clone())))
        .collect();
    query::in_one_snapshot(conn, || {
        sharing_in_snapshot(conn, words, &stems, filter, limit)
    })
}

/// [`sharing_telling_words`] once the words are stemmed, inside one snapshot of the index.
fn sharing_in_snapshot(
    conn: &Connection,
    words: Vec<String>,
    stems: &[Option<String>],
    filter: &ListFilter,
    limit: usize,
) -> Result<Telling> {
    let Some(n) = super::postings::covered_count(conn)? else {
        // No memory holds a word: none is telling.
        return Ok(Err(words));
    };
    for cap in [TELLING_POSTINGS, WIDER_POSTINGS] {
        let mut shared: HashMap<i64, f64> = HashMap::new();
        let mut telling = false;
        for stem in stems.iter().flatten() {
            let rows = match super::postings::rows_holding_at_most(conn, stem, cap)? {
                Some(rows) if !rows.is_empty() => rows,
                _ => continue,
            };
            telling = true;
            let rarity = (n as f64 / rows.len() as f64).ln().max(1e-6);
            for row in rows {
                *shared.entry(row).or_default() += rarity;
            }
        }
        // No telling word in this pass, or too many memories tie for the best: try the next.
        if telling && let Some(found) = best_passing(conn, shared, filter, limit)? {
            return Ok(Ok(found));
        }
    }
    Ok(Err(words))
}

/// The memories in `shared` (row → summed rarity) that pass `filter`, best first: every one
/// sharing the best sum, then more up to `limit` in all; at most [`CANDIDATES_CHECKED`] are
/// checked. A repeat of the text holds its telling words, so it shares the best sum: `None`
/// when more than [`CANDIDATES_CHECKED`] memories share it (the words do not tell it apart).
/// An empty list is an answer: no memory the filter lets through holds a telling word, so none
/// repeats the text.
fn best_passing(
    conn: &Connection,
    shared: HashMap<i64, f64>,
    filter: &ListFilter,
    limit: usize,
) -> Result<Option<Vec<(i64, Memory)>>> {
    let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut ranked: Vec<(i64, f64)> = shared.into_iter().collect();
    let best = ranked.iter().map(|r| r.1).fold(f64::MIN, f64::max);
    if ranked.len() > CANDIDATES_CHECKED {
        ranked.select_nth_unstable_by(CANDIDATES_CHECKED, order);
        if ranked[CANDIDATES_CHECKED].1 == best {
            return Ok(None);
        }
        ranked.truncate(CANDIDATES_CHECKED);
    }
    ranked.sort_unstable_by(order);
    let mut found = Vec::with_capacity(limit);
    for (rowid, sum) in ranked {
        if found.len() >= limit && sum < best {
            break;
        }
        if let Some(memory) = query::memory_at(conn, rowid, filter)? {
            found.push((rowid, memory));
        }
    }
    Ok(Some(found))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Index, schema};
    use crate::model::{Memory, MemoryId, Status};

    /// One bodiless memory in `learnings` per text, at paths and times numbered from `from`.
    fn memories(texts: &[String], from: usize) -> impl Iterator<Item = (String, Memory)> + '_ {
        texts.iter().enumerate().map(move |(i, text)| {
            let i = from + i;
            let at = jiff::Timestamp::from_second(1_800_000_000 + i as i64).unwrap();
            let id = MemoryId::generate().unwrap();
            let m = Memory::bare(id, "learnings", text, Status::Active, at);
            (format!("learnings/{i}.md"), m)
        })
    }

    /// An index of `texts` (one memory each, in `learnings`, bodiless), with its totals kept.
    fn index_of(texts: &[String]) -> (tempfile::TempDir, Index) {
        let dir = tempfile::tempdir().unwrap();
        let (mut index, _) = Index::open(&dir.path().join("i.sqlite3")).unwrap();
        crate::index::insert_for_test(&mut index, memories(texts, 0));
        (dir, index)
    }

    fn found(index: &Index, text: &str) -> Telling {
        let filter = ListFilter {
            namespace: Some("learnings".into()),
            ..ListFilter::default()
        };
        sharing_telling_words(&index.conn, text, &filter, 5).unwrap()
    }

    fn summaries(t: &Telling) -> Vec<String> {
        t.as_ref()
            .unwrap()
            .iter()
            .map(|(_, m)| m.summary.clone())
            .collect()
    }

    /// Each of `words` in 60 memories of its own (more than [`TELLING_POSTINGS`]), one memory
    /// holding all of them, and `common` in 1,100 others (more than [`WIDER_POSTINGS`]).
    fn store_of_wide_words(words: &[&str], common: &str) -> Vec<String> {
        let mut texts = vec![format!("original {}", words.join(" "))];
        for (w, word) in words.iter().enumerate() {
            texts.extend((0..60).map(|i| format!("{word} filler{w}x{i}")));
        }
        texts.extend((0..1_100).map(|i| format!("{common} other{i}")));
        texts
    }

    /// `common` in 1,100 memories, `word` in `holders` (the last written, newest, also holding
    /// `common`): the text `"{common} {word}"` has one telling word, held by them all.
    fn store_of_one_telling_word(common: &str, word: &str, holders: usize) -> Vec<String> {
        let mut texts: Vec<String> = (0..1_100).map(|i| format!("{common} other{i}")).collect();
        texts.extend((1..holders).map(|i| format!("{word} filler{i}")));
        texts.push(format!("{common} {word}"));
        texts
    }

    #[test]
    fn words_all_held_widely_still_find_the_memory_sharing_them() {
        let words = ["quixotic", "zeppelin", "marmalade"];
        let (_dir, index) = index_of(&store_of_wide_words(&words, "everywhere"));
        // No word is in 48 memories or fewer: the wider pass finds the one sharing all three.
        let probe = "quixotic zeppelin marmalade everywhere";
        let by_postings = found(&index, probe);
        assert_eq!(
            summaries(&by_postings)[0],
            "original quixotic zeppelin marmalade"
        );
        // Postings that do not cover the index are not read: the caller hears it needs
        // rebuilding.
        schema::write_meta(&index.conn, "postings_docs", "0").unwrap();
        let filter = ListFilter::default();
        let refused = sharing_telling_words(&index.conn, probe, &filter, 5).unwrap_err();
        assert!(
            refused.to_string().contains("reindexing rebuilds"),
            "{refused}"
        );
    }

    #[test]
    fn a_rare_word_is_preferred_and_only_common_words_are_handed_back() {
        let mut texts = store_of_wide_words(&["quixotic"], "everywhere");
        texts.push("quixotic everywhere unusual".into());
        let (_dir, index) = index_of(&texts);
        // `unusual` (one memory) is telling at the first cap: the wide word is not read.
        assert_eq!(
            summaries(&found(&index, "quixotic unusual")),
            ["quixotic everywhere unusual"]
        );
        // A word in more than 1,024 memories is never telling: the caller gets the words back.
        assert_eq!(found(&index, "everywhere").unwrap_err(), ["everywhere"]);
    }

    #[test]
    fn every_memory_tied_for_the_best_is_compared_or_none_is() {
        // 200 memories hold the one telling word alike: all are handed on (not the five
        // oldest), so the repeat written last is among them.
        let (_dir, index) = index_of(&store_of_one_telling_word("everywhere", "quixotic", 200));
        let tied = summaries(&found(&index, "everywhere quixotic"));
        assert_eq!(tied.len(), 200);
        assert!(tied.contains(&"everywhere quixotic".to_string()));
        // 300 tie: more than are checked, so the words do not tell the repeat apart and the
        // caller compares the text another way.
        let (_dir, index) = index_of(&store_of_one_telling_word("everywhere", "quixotic", 300));
        assert!(found(&index, "everywhere quixotic").is_err());
    }

    #[test]
    fn capped_reads_count_blocks_and_tail_exactly() {
        let mut texts: Vec<String> = (0..260).map(|i| format!("beta{i}")).collect();
        texts.extend((0..40).map(|i| format!("alpha gamma{i}")));
        let (_dir, mut index) = index_of(&texts);
        // A small catch-up's postings go to the tail.
        let later: Vec<String> = (0..10).map(|i| format!("alpha delta{i}")).collect();
        crate::index::insert_for_test(&mut index, memories(&later, texts.len()));
        let conn = &index.conn;
        let in_tail: i64 = conn
            .query_row(
                "SELECT count(*) FROM postings_tail WHERE term = 'alpha'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(in_tail, 10);
        let mut holding: Vec<i64> = conn
            .prepare("SELECT rowid FROM memories WHERE summary || ' ' || body LIKE '%alpha%'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        holding.sort_unstable();
        assert_eq!(holding.len(), 50);
        let read = |cap| crate::index::postings::rows_holding_at_most(conn, "alpha", cap).unwrap();
        assert_eq!(read(50), Some(holding));
        assert_eq!(read(49), None);
        assert_eq!(read(9), None);
    }

    #[test]
    fn two_words_of_one_stem_weigh_as_one() {
        let mut texts: Vec<String> = ["connected one", "connected two", "connected three"]
            .map(String::from)
            .into();
        texts.extend(["zebrafish one", "zebrafish two"].map(String::from));
        texts.extend((0..5).map(|i| format!("filler{i}")));
        let (_dir, index) = index_of(&texts);
        // `connect` (3 memories) counted twice would outweigh `zebrafish` (2 memories).
        let best = summaries(&found(&index, "connected connection zebrafish"));
        assert!(best[0].starts_with("zebrafish"), "{best:?}");
    }
}
