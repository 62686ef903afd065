//! Read queries over the index: lookups, filtered listings and BM25 recall.

use jiff::Timestamp;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::query_stems::query_stems;
use super::stored_memory::{COLUMNS, StoredMemory};
use serde::Serialize;

use crate::error::Result;
use crate::model::{Memory, Status};
use crate::store::layout;

/// Field weights for BM25: summary, body, tags.
pub const BM25_WEIGHTS: (f64, f64, f64) = (3.0, 1.0, 2.0);

/// Words too common to help a query (they only make posting lists long).
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no",
    "not", "of", "on", "or", "our", "so", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "you", "your",
];

/// Whether `word` (lower case) is too common to help a query.
pub fn is_stop_word(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// How listings are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    /// Newest version first.
    #[default]
    Updated,
    /// Newest memory first.
    Created,
    /// Oldest memory first.
    CreatedAsc,
    /// By namespace, then newest first.
    Namespace,
}

/// Filters shared by `list` and `recall`.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only memories with this tag.
    pub tag: Option<String>,
    /// Only these statuses (empty: all).
    pub statuses: Vec<Status>,
    /// Only memories updated at or after this time.
    pub since: Option<Timestamp>,
    /// Only memories updated before this time.
    pub until: Option<Timestamp>,
    /// Ordering (ignored by recall, which ranks).
    pub sort: SortBy,
    /// At most this many results.
    pub limit: Option<usize>,
}

/// A recall result.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Hit {
    /// The memory.
    pub memory: Memory,
    /// Relevance (higher is better): BM25 for lexical queries, the fused and weighted score
    /// for hybrid recall.
    pub score: f64,
    /// The memory is a near-duplicate of the query (cosine at or above the embedder's
    /// copyability threshold).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub near_duplicate: bool,
    /// Lower-ranked memories folded into this one as its near-duplicates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub duplicates: Vec<String>,
    /// Why the cited content no longer matches (set by `lore verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<String>,
    /// The ranking's components (when asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<super::rank::Explain>,
    /// The name of the open contradiction this memory is in: another clone holds a different
    /// version, kept beside it until someone resolves it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contradicted: Option<String>,
    /// The scope the memory belongs to: `project`, `personal` or a team store's name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scope: String,
    /// For a memory of another project on this machine: that project's path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Index row (internal).
    #[serde(skip)]
    pub(crate) rowid: i64,
}

impl Hit {
    /// A hit without ranking details.
    pub fn new(rowid: i64, memory: Memory, score: f64) -> Hit {
        Hit {
            memory,
            score,
            near_duplicate: false,
            duplicates: Vec::new(),
            stale: None,
            explain: None,
            contradicted: None,
            scope: String::new(),
            project: None,
            rowid,
        }
    }
}

impl ListFilter {
    pub(super) fn where_clause(&self, args: &mut Vec<Value>) -> String {
        let mut clauses = Vec::new();
        if let Some(ns) = &self.namespace {
            args.push(Value::Text(ns.clone()));
            clauses.push(format!("m.namespace = ?{}", args.len()));
        }
        if let Some(tag) = &self.tag {
            args.push(Value::Text(format!(" {} ", tag.to_lowercase())));
            clauses.push(format!("instr(m.tags, ?{}) > 0", args.len()));
        }
        if !self.statuses.is_empty() {
            let mut marks = Vec::new();
            for st in &self.statuses {
                args.push(Value::Text(st.as_str().to_string()));
                marks.push(format!("?{}", args.len()));
            }
            clauses.push(format!("m.status IN ({})", marks.join(", ")));
        }
        if let Some(t) = self.since {
            args.push(Value::Integer(t.as_millisecond()));
            clauses.push(format!("m.updated >= ?{}", args.len()));
        }
        if let Some(t) = self.until {
            args.push(Value::Integer(t.as_millisecond()));
            clauses.push(format!("m.updated < ?{}", args.len()));
        }
        if clauses.is_empty() {
            String::new()
        } else {
            format!(" AND {}", clauses.join(" AND "))
        }
    }
}

/// The memories, with their paths, of the rows `from` selects (`FROM memories m …`).
fn rows_with_paths(conn: &Connection, from: &str, args: &[Value]) -> Result<Vec<(String, Memory)>> {
    let sql = format!("SELECT m.path, {COLUMNS} {from}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args.iter()), |r| {
        Ok((r.get::<_, String>(0)?, StoredMemory::read(r, 1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (path, stored) = row?;
        out.push((path, stored.decode()?));
    }
    Ok(out)
}

pub fn find_by_id_prefix(conn: &Connection, prefix: &str) -> Result<Vec<(String, Memory)>> {
    // Ids use only [0-9a-z], so a range scan is an exact prefix match.
    let upper = format!("{prefix}\u{7f}");
    rows_with_paths(
        conn,
        "FROM memories m WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 20",
        &[Value::Text(prefix.to_string()), Value::Text(upper)],
    )
}

/// The rows of a key in a namespace, and of a key in any namespace (both read the index on
/// `(key, namespace)` of keyed rows).
const IN_NAMESPACE_BY_KEY: &str = "FROM memories m WHERE namespace = ?1 AND key = ?2";
const BY_KEY: &str = "FROM memories m WHERE key = ?1";

pub fn find_by_key(
    conn: &Connection,
    namespace: Option<&str>,
    key: &str,
) -> Result<Vec<(String, Memory)>> {
    let mut rows = match namespace {
        Some(ns) => rows_with_paths(
            conn,
            IN_NAMESPACE_BY_KEY,
            &[Value::Text(ns.into()), Value::Text(key.into())],
        )?,
        None => rows_with_paths(conn, BY_KEY, &[Value::Text(key.into())])?,
    };
    // The memory at the key's own path holds the key; superseded ones moved to id paths.
    rows.sort_by_key(|(path, m)| {
        (
            layout::name_from_path(path) != key,
            m.namespace.clone(),
            std::cmp::Reverse(m.updated),
        )
    });
    Ok(rows)
}

pub fn list(conn: &Connection, filter: &ListFilter) -> Result<Vec<Memory>> {
    let mut args = Vec::new();
    let mut sql = format!(
        "FROM memories m WHERE 1 = 1{}",
        filter.where_clause(&mut args)
    );
    sql.push_str(match filter.sort {
        SortBy::Updated => " ORDER BY m.updated DESC, m.id",
        SortBy::Created => " ORDER BY m.created DESC, m.id",
        SortBy::CreatedAsc => " ORDER BY m.created ASC, m.id",
        SortBy::Namespace => " ORDER BY m.namespace, m.updated DESC, m.id",
    });
    if let Some(limit) = filter.limit {
        sql.push_str(&format!(" LIMIT {limit}"));
    }
    Ok(rows_with_paths(conn, &sql, &args)?
        .into_iter()
        .map(|(_, m)| m)
        .collect())
}

/// The most distinct words a query searches for: a longer text (a pasted log, a whole document)
/// is searched by its first this many.
pub const MAX_QUERY_TERMS: usize = 256;

/// The search terms of a free-text query: lower-case alphanumeric words, stop words dropped
/// (unless nothing else is left), duplicates removed, at most [`MAX_QUERY_TERMS`] of them.
/// One pass over the text whatever its length.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut content: Vec<String> = Vec::new();
    let mut stop: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = word.to_lowercase();
        if !seen.insert(w.clone()) {
            continue;
        }
        if STOPWORDS.contains(&w.as_str()) {
            if stop.len() < MAX_QUERY_TERMS {
                stop.push(w);
            }
        } else {
            content.push(w);
            if content.len() == MAX_QUERY_TERMS {
                break;
            }
        }
    }
    if content.is_empty() { stop } else { content }
}

/// BM25 recall from the index's postings (see [`super::postings`]): the best `limit` (10 by
/// default) that pass the filter, scored as FTS5's `bm25()` scores them, ties at the cut broken
/// by recency, then id. Each query word is stemmed as the index's tokenizer stems it; a word the
/// tokenizer splits (a sign inside it that it takes for a separator) is searched as its parts,
/// and one it drops is not searched. Postings that do not hold every memory are rebuilt by the
/// next catch-up (see [`super::schema::rows_intact`]); met here, they are an error naming the
/// rebuild. All of it reads one snapshot of the index.
pub fn recall(conn: &Connection, text: &str, filter: &ListFilter) -> Result<Vec<Hit>> {
    let stems = query_stems(conn, &query_terms(text))?;
    if stems.is_empty() {
        return Ok(Vec::new());
    }
    in_one_snapshot(conn, || match super::postings::covered_count(conn)? {
        None => Ok(Vec::new()),
        Some(_) => recall_scored(conn, &stems, filter)?.ok_or_else(super::postings::behind),
    })
}

/// Runs `read` in one read transaction of `conn`, or in the caller's when one is open: every
/// statement sees the same state of the index. Statements outside a transaction each see the
/// latest, so a catch-up another process commits between two of them would show memory counts
/// that disagree with the postings' (taken for damage) or scores from two states.
pub(super) fn in_one_snapshot<T>(conn: &Connection, read: impl FnOnce() -> Result<T>) -> Result<T> {
    if !conn.is_autocommit() {
        return read();
    }
    let snapshot = conn.unchecked_transaction()?;
    let value = read()?;
    snapshot.commit()?;
    Ok(value)
}

/// Rows checked one by one against a filter before the rows it allows are listed at once.
const FILTER_CHECKS: usize = 2_000;

/// [`recall`] for the query's stems, in query order. `None` when the postings do not cover the
/// index.
pub(crate) fn recall_scored(
    conn: &Connection,
    stems: &[String],
    filter: &ListFilter,
) -> Result<Option<Vec<Hit>>> {
    let docs = super::schema::read_doc_count(conn)?;
    let limit = filter.limit.unwrap_or(10);
    let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1);
    // The best `wide` scored rows, best first, and whether they are every scored row.
    type Ranked = (Vec<(i64, f64)>, bool);
    let best = |wide: usize| -> Result<Option<Ranked>> {
        let mut best = super::best::BestWithTies::new(wide);
        let covered = super::postings_scores::scores(conn, stems, docs, &mut best)?;
        Ok(covered.then(|| {
            let (mut ranked, every) = best.finish();
            ranked.sort_unstable_by(order);
            (ranked, every)
        }))
    };
    let kept = if restricts(filter) {
        // The best few hundred first (ties kept): most filters let `limit` of them through. One
        // that lets fewer through scores again, keeping every row.
        let Some((ranked, every)) = best(limit.saturating_mul(32).max(1_024))? else {
            return Ok(None);
        };
        match passing(conn, &ranked, filter, limit, every)? {
            Some(kept) => kept,
            None => match best(0)? {
                Some((ranked, _)) => {
                    (passing(conn, &ranked, filter, limit, true)?).unwrap_or_default()
                }
                None => return Ok(None),
            },
        }
    } else {
        match best(limit)? {
            Some((ranked, _)) => ranked,
            None => return Ok(None),
        }
    };
    Ok(Some(hits_by_score(conn, kept, limit)?))
}

/// The first `limit` of `ranked` (best first) that pass `filter`, and every one tied with the last
/// of them (every one that passes when `limit` is 0). `ranked` is every scored row when
/// `complete`; otherwise the best of them with every tie of its last, and `None` is returned
/// when they do not settle the answer (fewer than `limit` of them pass).
fn passing(
    conn: &Connection,
    ranked: &[(i64, f64)],
    filter: &ListFilter,
    limit: usize,
    complete: bool,
) -> Result<Option<Vec<(i64, f64)>>> {
    let mut kept: Vec<(i64, f64)> = Vec::new();
    let mut allowed: Option<std::collections::HashSet<i64>> = None;
    for (checked, &(rowid, score)) in ranked.iter().enumerate() {
        if kept.len() >= limit && kept.last().is_some_and(|&(_, s)| s != score) {
            return Ok(Some(kept));
        }
        if checked == FILTER_CHECKS {
            allowed = allowed_rows(conn, filter)?;
        }
        let passes = match &allowed {
            Some(rows) => rows.contains(&rowid),
            None => passes(conn, rowid, filter)?,
        };
        if passes {
            kept.push((rowid, score));
        }
    }
    // Rows beyond an incomplete ranking score below all of it, so they neither pass in place
    // of these nor tie with them.
    Ok((complete || (limit > 0 && kept.len() >= limit)).then_some(kept))
}

/// The `limit` best of `ranked` (row, score) as hits, ties broken as the exhaustive query
/// breaks them: by recency, then id.
fn hits_by_score(conn: &Connection, ranked: Vec<(i64, f64)>, limit: usize) -> Result<Vec<Hit>> {
    let mut fetch = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memories m WHERE m.rowid = ?1"
    ))?;
    let mut hits: Vec<(f64, i64, Memory, i64)> = Vec::with_capacity(ranked.len());
    for (rowid, score) in ranked {
        let stored = fetch.query_row(params![rowid], |r| StoredMemory::read(r, 0))?;
        hits.push((score, stored.updated_millis(), stored.decode()?, rowid));
    }
    hits.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then_with(|| a.2.id.cmp(&b.2.id))
    });
    Ok(hits
        .into_iter()
        .take(limit)
        .map(|(score, _, memory, rowid)| Hit::new(rowid, memory, score))
        .collect())
}

/// The rows written just before and just after `(created, rowid)` in the same agent session:
/// up to `per_side` on each side, each with its distance in turns (1 = next to it). Reads the
/// `(session, created)` index, `2 × per_side` rows at most; filters are the caller's to apply.
pub fn session_neighbours(
    conn: &Connection,
    session: &str,
    created: Timestamp,
    rowid: i64,
    per_side: usize,
) -> Result<Vec<(i64, usize)>> {
    let mut found = Vec::with_capacity(per_side * 2);
    for sql in [
        "SELECT rowid FROM memories WHERE session = ?1 AND (created, rowid) < (?2, ?3) \
         ORDER BY created DESC, rowid DESC LIMIT ?4",
        "SELECT rowid FROM memories WHERE session = ?1 AND (created, rowid) > (?2, ?3) \
         ORDER BY created ASC, rowid ASC LIMIT ?4",
    ] {
        let mut stmt = conn.prepare_cached(sql)?;
        let rows = stmt.query_map(
            params![session, created.as_millisecond(), rowid, per_side as i64],
            |r| r.get::<_, i64>(0),
        )?;
        for (i, row) in rows.enumerate() {
            found.push((row?, i + 1));
        }
    }
    Ok(found)
}

/// Decodes the memory at an index row, if it passes `filter` (namespace, tag, status, time).
pub fn memory_at(conn: &Connection, rowid: i64, filter: &ListFilter) -> Result<Option<Memory>> {
    let mut args = vec![Value::Integer(rowid)];
    let sql = format!(
        "SELECT {COLUMNS} FROM memories m WHERE m.rowid = ?1{}",
        filter.where_clause(&mut args)
    );
    let stored = conn
        .prepare_cached(&sql)?
        .query_row(params_from_iter(args.iter()), |r| StoredMemory::read(r, 0))
        .optional()?;
    stored.map(StoredMemory::decode).transpose()
}

/// Whether the filter restricts anything (namespace, tag, status, time).
pub fn restricts(filter: &ListFilter) -> bool {
    !filter.where_clause(&mut Vec::new()).is_empty()
}

/// Whether the memory at an index row passes the filter (without decoding it).
pub fn passes(conn: &Connection, rowid: i64, filter: &ListFilter) -> Result<bool> {
    let mut args = vec![Value::Integer(rowid)];
    let sql = format!(
        "SELECT 1 FROM memories m WHERE m.rowid = ?1{}",
        filter.where_clause(&mut args)
    );
    let found: Option<i64> = conn
        .prepare_cached(&sql)?
        .query_row(params_from_iter(args.iter()), |r| r.get(0))
        .optional()?;
    Ok(found.is_some())
}

/// The rows passing a filter (`None` when the filter lets everything through).
pub fn allowed_rows(
    conn: &Connection,
    filter: &ListFilter,
) -> Result<Option<std::collections::HashSet<i64>>> {
    let mut args = Vec::new();
    let clause = filter.where_clause(&mut args);
    if clause.is_empty() {
        return Ok(None);
    }
    let sql = format!("SELECT m.rowid FROM memories m WHERE 1 = 1{clause}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args.iter()), |r| r.get::<_, i64>(0))?;
    Ok(Some(rows.collect::<std::result::Result<_, _>>()?))
}

#[cfg(test)]
mod tests {
    use super::query_terms;

    /// A key is looked up through an index, with its namespace or without: not by reading
    /// every row (a million at scale).
    #[test]
    fn a_key_is_found_through_an_index_with_or_without_its_namespace() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::index::schema::prepare(&conn).unwrap();
        for from in [super::IN_NAMESPACE_BY_KEY, super::BY_KEY] {
            let plan: Vec<String> = conn
                .prepare(&format!("EXPLAIN QUERY PLAN SELECT m.path {from}"))
                .unwrap()
                .query_map(
                    rusqlite::params_from_iter(&["a", "b"][..from.matches('?').count()]),
                    |r| r.get(3),
                )
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(
                plan.len() == 1 && plan[0].starts_with("SEARCH m USING INDEX memories_key (key=?"),
                "{from}: {plan:?}"
            );
        }
    }

    #[test]
    fn query_terms_drop_stop_words_and_punctuation() {
        assert_eq!(
            query_terms("Why did we pick SQLite?"),
            vec!["pick", "sqlite"]
        );
        assert_eq!(query_terms("the"), vec!["the"]);
        assert_eq!(query_terms("\"x\" OR y*"), vec!["x", "y"]);
        assert!(query_terms("  ?! ").is_empty());
    }

    /// Distinct words: a quadratic duplicate check would take minutes here.
    fn distinct_words(n: usize) -> String {
        (0..n).map(|i| format!("w{i:x}q ")).collect()
    }

    #[test]
    fn query_terms_cost_is_linear_and_their_number_bounded() {
        let text = distinct_words(200_000);
        let started = std::time::Instant::now();
        let terms = query_terms(&text);
        // A generous budget of 2 µs per byte (the linear pass takes a small fraction of it).
        let budget = std::time::Duration::from_micros(2 * text.len() as u64);
        assert!(
            started.elapsed() < budget,
            "{:?} for {} bytes",
            started.elapsed(),
            text.len()
        );
        assert_eq!(terms.len(), super::MAX_QUERY_TERMS);
        assert_eq!(terms[0], "w0q");
    }
}
