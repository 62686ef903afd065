//! Retrieval over an agent's own reasoning history, served from the thoughts index: keyword
//! (`grep`), content added or removed (pickaxe), outcome filters, the open frontier, ranked by
//! ρ = w_score·score + w_outcome·outcome + w_recency·recency, each hit with its similarity to the
//! query and whether it reaches the copyability threshold.

use std::collections::BTreeMap;

use jiff::Timestamp;
use rusqlite::types::Value;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::index::ThoughtIndex;
use crate::embed::SharedEmbedder;
use crate::error::Result;

/// The weights of the ranking ρ and how fast recency fades.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RankWeights {
    /// Weight of the thought's combined score (default 0.7).
    #[serde(default = "default_score")]
    pub score: f64,
    /// Weight of the outcome: success or best 1, failed 0, unknown 0.5 (default 0.2).
    #[serde(default = "default_outcome")]
    pub outcome: f64,
    /// Weight of recency, 1 / (1 + age / half-life) (default 0.1).
    #[serde(default = "default_recency")]
    pub recency: f64,
    /// The age in days at which recency is one half (default 7).
    #[serde(default = "default_half_life")]
    pub half_life_days: f64,
}

fn default_score() -> f64 {
    0.7
}
fn default_outcome() -> f64 {
    0.2
}
fn default_recency() -> f64 {
    0.1
}
fn default_half_life() -> f64 {
    7.0
}

impl Default for RankWeights {
    fn default() -> Self {
        RankWeights {
            score: default_score(),
            outcome: default_outcome(),
            recency: default_recency(),
            half_life_days: default_half_life(),
        }
    }
}

/// Which outcome a hit must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeFilter {
    /// Marked success (or chosen best).
    Success,
    /// Marked failed.
    Failed,
    /// Chosen best by finishing its session.
    Best,
    /// No outcome yet.
    Unmarked,
}

/// What to look for.
#[derive(Clone, Debug, Default)]
pub struct ThoughtQuery {
    /// Free text: candidates are the thoughts sharing words with it (BM25), and each hit's
    /// similarity is measured against it.
    pub text: Option<String>,
    /// Keywords every hit must contain.
    pub grep: Option<String>,
    /// A string whose number of occurrences differs between a hit and its parent (added or
    /// removed by that thought), like `git log -S`.
    pub pickaxe: Option<String>,
    /// Only this outcome.
    pub outcome: Option<OutcomeFilter>,
    /// Only this session.
    pub session: Option<String>,
    /// Only the open frontier: leaves of unfinished sessions not marked failed.
    pub frontier: bool,
    /// How many hits.
    pub limit: usize,
    /// How many free-text candidates (by BM25) are considered.
    pub candidates: usize,
    /// The ranking's weights.
    pub weights: RankWeights,
    /// The time recency is measured from.
    pub now: Option<Timestamp>,
}

/// One hit.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ThoughtHit {
    /// The thought's id.
    pub id: String,
    /// Its session.
    pub session: String,
    /// Its parent thought.
    pub parent: Option<String>,
    /// Its depth.
    pub depth: u32,
    /// Its text.
    pub text: String,
    /// Its current combined score.
    pub score: f64,
    /// `success` or `failed`, when marked.
    pub outcome: Option<String>,
    /// Whether it is its session's best thought.
    pub best: bool,
    /// When it was written.
    pub created: Timestamp,
    /// Its rank value ρ.
    pub rho: f64,
    /// Similarity of its text to the query text, 0..=1 (none without query text).
    pub similarity: Option<f64>,
    /// Whether the similarity reaches the copyability threshold: a near-duplicate, so the
    /// earlier answer may apply.
    pub near_duplicate: bool,
}

/// The words of a text, lower-cased, sorted and each once.
fn words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// The words of a text for full-text queries, quoted.
fn fts_terms(text: &str) -> Vec<String> {
    words(text).iter().map(|w| format!("\"{w}\"")).collect()
}

impl ThoughtIndex {
    /// Runs a query: filters in SQL, candidates by BM25 when there is text, ordered by ρ.
    /// Similarity is left for [`with_similarity`].
    pub fn search(&self, q: &ThoughtQuery) -> Result<Vec<ThoughtHit>> {
        // One read transaction: the candidates, the sorted lists and the hits read from one
        // snapshot, though another process's catch-up commits between the statements.
        let snapshot = self.conn.unchecked_transaction()?;
        let hits = self.search_with(q, true)?;
        snapshot.commit()?;
        Ok(hits)
    }

    /// [`search`](Self::search), with free text's BM25 candidates from the index's postings
    /// when `postings` (and they can answer), else from FTS5's `bm25()` over every match.
    fn search_with(&self, q: &ThoughtQuery, postings: bool) -> Result<Vec<ThoughtHit>> {
        // One clock for ρ and for the bound on what is unread (read twice, a later bound
        // could fall below ρ).
        let q = &ThoughtQuery {
            now: Some(q.now.unwrap_or_else(Timestamp::now)),
            ..q.clone()
        };
        let mut params = Params::default();
        let rho = rho_sql(q, &mut params);
        let mut filters = filter_sql(q, &mut params);
        let limit = q.limit.max(1);
        let words = q.text.as_deref().map(words).unwrap_or_default();
        let keywords = q.grep.as_deref().is_some_and(|g| !fts_terms(g).is_empty());
        if postings && !words.is_empty() && !keywords {
            let candidates = q.candidates.max(limit);
            if let Some(rows) = self.bm25_candidates(&words, candidates)? {
                let rows = params.bind(Value::Text(format!("{rows:?}")));
                filters.push(format!("t.rowid IN (SELECT value FROM json_each({rows}))"));
                // Free text returns every candidate: [`rank_in_band`] keeps the relevant ones.
                return self.top_by_scan(&rho, &filters, params, candidates);
            }
        }
        let query_terms = q.text.as_deref().map(fts_terms).unwrap_or_default();
        let grep_terms = q.grep.as_deref().map(fts_terms).unwrap_or_default();
        let mut matches: Vec<String> = Vec::new();
        if !query_terms.is_empty() {
            matches.push(format!("({})", query_terms.join(" OR ")));
        }
        matches.extend(grep_terms);
        let limit = if matches.is_empty() {
            limit
        } else {
            let m = params.bind(Value::Text(matches.join(" AND ")));
            // Free text ranks its best BM25 candidates; keywords alone admit every match.
            if query_terms.is_empty() {
                filters.push(format!(
                    "t.rowid IN (SELECT rowid FROM thoughts_fts WHERE thoughts_fts MATCH {m})"
                ));
                limit
            } else {
                let candidates = params.bind(Value::Integer(q.candidates.max(limit) as i64));
                filters.push(format!(
                    "t.rowid IN (SELECT rowid FROM thoughts_fts WHERE thoughts_fts MATCH {m} \
                     ORDER BY rank LIMIT {candidates})"
                ));
                // Free text returns every candidate: [`rank_in_band`] keeps the relevant ones.
                q.candidates.max(limit)
            }
        };
        if matches.is_empty()
            && q.pickaxe.is_none()
            && q.session.is_none()
            && limit <= BOUNDED_LIMIT
            && monotone(&q.weights)
        {
            return self.top_by_bound(q, &rho, &filters, params, limit);
        }
        self.top_by_scan(&rho, &filters, params, limit)
    }

    /// The row ids of the `n` thoughts of highest BM25 for `words` (each a query phrase, as
    /// FTS5's `bm25()` scores the text, ties to the newer row), from the index's postings; `None`
    /// when a word does not stem to one term or no thought is indexed (FTS5 answers then).
    /// Reading the postings is one pass over the words' entries, where FTS5 looks up each
    /// matching thought's length.
    fn bm25_candidates(&self, words: &[String], n: usize) -> Result<Option<Vec<i64>>> {
        let Some(stems) = crate::index::query_stems::stems(&self.conn, words)? else {
            return Ok(None);
        };
        // The postings are written in the transaction that writes the thoughts, so they hold
        // every thought: their own count is the count they must cover.
        let docs = crate::index::schema::read_meta(&self.conn, "postings_docs")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut scored: Vec<(f64, i64)> = Vec::new();
        let weights = (1.0, 0.0, 0.0);
        let covered = crate::index::postings_scores::weighted_scores(
            &self.conn,
            &stems,
            docs,
            weights,
            &mut |rowid, score| scored.push((score, rowid)),
        )?;
        if !covered {
            return Ok(None);
        }
        let order = |a: &(f64, i64), b: &(f64, i64)| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1));
        if scored.len() > n {
            scored.select_nth_unstable_by(n, order);
            scored.truncate(n);
        }
        Ok(Some(scored.into_iter().map(|(_, rowid)| rowid).collect()))
    }

    /// The `limit` thoughts of highest ρ among those the filters admit, by ordering them all.
    fn top_by_scan(
        &self,
        rho: &str,
        filters: &[String],
        mut params: Params,
        limit: usize,
    ) -> Result<Vec<ThoughtHit>> {
        let limit = params.bind(Value::Integer(limit as i64));
        let filters = if filters.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", filters.join(" AND "))
        };
        let sql = format!(
            "SELECT {HIT_COLUMNS}, {rho} AS rho FROM thoughts t {filters} \
             ORDER BY rho DESC, t.rowid DESC LIMIT {limit}"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(params.0.iter()), |r| {
            hit_from_row(r)
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The `limit` thoughts of highest ρ without reading every thought: a thresholded top-k
    /// over sorted accesses. The thoughts fall into three classes by the value their outcome
    /// gives ρ (1, ½, 0: [`OUTCOME_VALUES`]); each class is read by score and by creation
    /// time, both indexed. ρ grows with score and creation time, so a thought of class `v` not
    /// yet read from either of its lists has ρ at most `ws·(last score read) + wo·v +
    /// wr·recency(last creation time read)`; a class is done once the `limit`-th best ρ read is
    /// above its bound (or a list of it is read to its end). Batches double, so a selective
    /// filter costs at most about two passes. The result is the same, order and ties included,
    /// as ordering every thought by ρ (`ORDER BY rho DESC, rowid DESC`): ρ is computed by the
    /// same SQL expression, and a tie with the bound reads on.
    fn top_by_bound(
        &self,
        q: &ThoughtQuery,
        rho: &str,
        filters: &[String],
        mut params: Params,
        limit: usize,
    ) -> Result<Vec<ThoughtHit>> {
        let top = self.bounded_top(q, rho, filters, &mut params, limit)?;
        // The lists read ρ and keys only; the hits are read whole once, ρ by the same
        // expression and clock.
        let mut params = Params::default();
        let rho = rho_sql(q, &mut params);
        let rows = params.bind(Value::Text(format!("{:?}", top.rowids())));
        let filter = format!("t.rowid IN (SELECT value FROM json_each({rows}))");
        self.top_by_scan(&rho, &[filter], params, limit)
    }

    /// The row ids [`top_by_bound`](Self::top_by_bound) returns, with how many rows it read.
    fn bounded_top(
        &self,
        q: &ThoughtQuery,
        rho: &str,
        filters: &[String],
        params: &mut Params,
        limit: usize,
    ) -> Result<TopK> {
        let class = params.bind(Value::Real(0.0));
        let after_key = params.bind(Value::Null);
        let after_rowid = params.bind(Value::Integer(i64::MAX));
        let batch = params.bind(Value::Integer(0));
        let slots = [&class, &after_key, &after_rowid, &batch]
            .map(|placeholder| placeholder[1..].parse::<usize>().unwrap_or(1) - 1);
        // Each list's rows: ρ, the row id, the list's key (score or creation time, both read
        // as reals: SQLite compares them with the integer column by value).
        let list = |key: &str| {
            let mut conditions = filters.to_vec();
            conditions.push(format!("t.outcome_value = {class}"));
            conditions.push(format!("({key}, t.rowid) < ({after_key}, {after_rowid})"));
            format!(
                "SELECT {rho}, t.rowid, {key} FROM thoughts t \
                 WHERE {} ORDER BY {key} DESC, t.rowid DESC LIMIT {batch}",
                conditions.join(" AND ")
            )
        };
        let mut lists = [
            self.conn.prepare(&list("t.score"))?,
            self.conn.prepare(&list("t.created"))?,
        ];
        let w = q.weights;
        let (now, half_life_ms) = recency_clock(q);
        let mut top = TopK::new(limit);
        for value in outcome_values(q) {
            // Where each list has read to: (key, row id), the key above every value.
            let mut from = [(f64::INFINITY, i64::MAX); 2];
            let mut size = limit.saturating_mul(BATCH_PER_HIT).max(FIRST_BATCH);
            'class: loop {
                for (list, (key, rowid)) in lists.iter_mut().zip(from.iter_mut()) {
                    params.0[slots[0]] = Value::Real(value);
                    params.0[slots[1]] = Value::Real(*key);
                    params.0[slots[2]] = Value::Integer(*rowid);
                    params.0[slots[3]] = Value::Integer(i64::try_from(size).unwrap_or(i64::MAX));
                    let mut read = 0;
                    let mut rows = list.query(rusqlite::params_from_iter(params.0.iter()))?;
                    while let Some(r) = rows.next()? {
                        let rho: f64 = r.get(0)?;
                        (*rowid, *key) = (r.get(1)?, r.get(2)?);
                        top.offer(rho, *rowid);
                        read += 1;
                    }
                    if read < size {
                        break 'class;
                    }
                }
                let [(score, _), (created, _)] = from;
                let recency = 1.0 / (1.0 + (now - created).max(0.0) / half_life_ms);
                let bound = w.score * score + w.outcome * value + w.recency * recency;
                if top.kth_above(bound + 1e-9 * (1.0 + bound.abs())) {
                    break;
                }
                size = size.saturating_mul(2);
            }
        }
        Ok(top)
    }
}

/// The value an outcome gives ρ: best or success 1, none ½, failed 0 (the generated column
/// `outcome_value` of the thoughts index).
const OUTCOME_VALUES: [f64; 3] = [1.0, 0.5, 0.0];

/// The classes of [`OUTCOME_VALUES`] a query's filters can admit: an outcome filter admits
/// one (failed two: a failed thought chosen best counts as best), the frontier (never best,
/// never failed) two; reading the others would scan them whole to find nothing.
fn outcome_values(q: &ThoughtQuery) -> Vec<f64> {
    let admits = |value: f64| match q.outcome {
        Some(OutcomeFilter::Success | OutcomeFilter::Best) => value == 1.0,
        Some(OutcomeFilter::Failed) => value != 0.5,
        Some(OutcomeFilter::Unmarked) => value == 0.5,
        None => !(q.frontier && value == 0.0),
    };
    OUTCOME_VALUES.into_iter().filter(|v| admits(*v)).collect()
}

/// The most hits [`ThoughtIndex::top_by_bound`] is asked for: it keeps them sorted as it reads,
/// and a sort of every thought is cheaper for more.
const BOUNDED_LIMIT: usize = 1_000;

/// The fewest rows [`ThoughtIndex::top_by_bound`] reads from each list at first (tests start
/// small, so that their few hundred thoughts take many rounds).
const FIRST_BATCH: usize = if cfg!(test) { 2 } else { 64 };
/// Rows read from each list at first per hit asked for.
const BATCH_PER_HIT: usize = if cfg!(test) { 1 } else { 4 };

/// The columns of a hit, read by [`hit_from_row`] (ρ follows them).
const HIT_COLUMNS: &str =
    "t.id, t.session, t.parent, t.depth, t.text, t.score, t.outcome, t.best, t.created";

/// A hit from a row of [`HIT_COLUMNS`] and ρ.
fn hit_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ThoughtHit> {
    let created: i64 = r.get(8)?;
    Ok(ThoughtHit {
        id: r.get(0)?,
        session: r.get(1)?,
        parent: r.get(2)?,
        depth: r.get(3)?,
        text: r.get(4)?,
        score: r.get(5)?,
        outcome: r.get(6)?,
        best: r.get::<_, i64>(7)? == 1,
        created: Timestamp::from_millisecond(created).unwrap_or(Timestamp::UNIX_EPOCH),
        rho: r.get(9)?,
        similarity: None,
        near_duplicate: false,
    })
}

/// Whether ρ grows with score, outcome and creation time under these weights (finite and not
/// negative), so that [`ThoughtIndex::top_by_bound`] may stop early.
fn monotone(w: &RankWeights) -> bool {
    [w.score, w.outcome, w.recency]
        .iter()
        .all(|x| x.is_finite() && *x >= 0.0)
        && w.half_life_days.is_finite()
}

/// The best `k` rows offered, ordered by ρ then row id, both descending; each row counted
/// once.
struct TopK {
    k: usize,
    seen: std::collections::HashSet<i64>,
    best: Vec<(f64, i64)>,
}

impl TopK {
    fn new(k: usize) -> TopK {
        TopK {
            k,
            seen: Default::default(),
            // A limit asked for is not memory to reserve: hits are fewer than thoughts.
            best: Vec::with_capacity(k.min(1024) + 1),
        }
    }

    fn offer(&mut self, rho: f64, rowid: i64) {
        if !self.seen.insert(rowid) {
            return;
        }
        let at = self.best.partition_point(|kept| *kept > (rho, rowid));
        if at < self.k {
            self.best.insert(at, (rho, rowid));
            self.best.truncate(self.k);
        }
    }

    /// Whether `k` rows are held and the last of them has ρ above `bound`.
    fn kth_above(&self, bound: f64) -> bool {
        self.best.len() == self.k && self.best.last().is_some_and(|(rho, _)| *rho > bound)
    }

    fn rowids(&self) -> Vec<i64> {
        self.best.iter().map(|(_, rowid)| *rowid).collect()
    }
}

/// A statement's positional parameters: binding a value returns its placeholder.
#[derive(Default)]
struct Params(Vec<Value>);

impl Params {
    fn bind(&mut self, value: Value) -> String {
        self.0.push(value);
        format!("?{}", self.0.len())
    }
}

/// ρ as SQL: the weighted score, outcome (best or success 1, failed 0, else ½) and recency
/// (halving over the half-life) of a thought `t`.
fn rho_sql(q: &ThoughtQuery, params: &mut Params) -> String {
    let w = q.weights;
    let (now, half_life_ms) = recency_clock(q);
    format!(
        "({ws} * t.score + {wo} * t.outcome_value + {wr} / (1.0 + max(0.0, {now} - \
         t.created) / {hl}))",
        ws = params.bind(Value::Real(w.score)),
        wo = params.bind(Value::Real(w.outcome)),
        wr = params.bind(Value::Real(w.recency)),
        now = params.bind(Value::Real(now)),
        hl = params.bind(Value::Real(half_life_ms)),
    )
}

/// The time recency is measured from and its half-life, in milliseconds.
fn recency_clock(q: &ThoughtQuery) -> (f64, f64) {
    let now = q.now.unwrap_or_else(Timestamp::now).as_millisecond() as f64;
    (now, q.weights.half_life_days.max(1e-6) * 86_400_000.0)
}

/// The query's filters as SQL conditions on a thought `t`: session, outcome, the frontier
/// (open leaves of unfinished sessions) and the pickaxe (thoughts that changed how often a
/// string occurs against their parent).
fn filter_sql(q: &ThoughtQuery, params: &mut Params) -> Vec<String> {
    let mut filters: Vec<String> = Vec::new();
    if let Some(session) = &q.session {
        let session = params.bind(Value::Text(session.clone()));
        filters.push(format!("t.session = {session}"));
    }
    match q.outcome {
        Some(OutcomeFilter::Success) => {
            filters.push("(t.outcome = 'success' OR t.best = 1)".into())
        }
        Some(OutcomeFilter::Failed) => filters.push("t.outcome = 'failed'".into()),
        Some(OutcomeFilter::Best) => filters.push("t.best = 1".into()),
        Some(OutcomeFilter::Unmarked) => filters.push("t.outcome IS NULL AND t.best = 0".into()),
        None => {}
    }
    if q.frontier {
        filters.push(
            "t.children = 0 AND t.best = 0 AND t.outcome IS NOT 'failed' AND \
             t.session NOT IN (SELECT session FROM sessions WHERE finished = 1)"
                .into(),
        );
    }
    if let Some(s) = q.pickaxe.as_deref().filter(|s| !s.is_empty()) {
        let s = params.bind(Value::Text(s.to_string()));
        let count = |col: &str| {
            format!("((length({col}) - length(replace({col}, {s}, ''))) / length({s}))")
        };
        filters.push(format!(
            "{} != coalesce((SELECT {} FROM thoughts p WHERE p.id = t.parent), 0)",
            count("t.text"),
            count("p.text")
        ));
    }
    filters
}

/// Ranks free-text candidates: each gets its similarity to `query`; those within `band` of the
/// most similar one are relevant, and these are ordered by ρ and cut to `limit`. So a
/// near-duplicate is never crowded out by newer, better-scored thoughts that merely share a
/// word, and among equally relevant thoughts ρ decides.
pub fn rank_in_band(
    mut hits: Vec<ThoughtHit>,
    query: &str,
    embedder: Option<&SharedEmbedder>,
    threshold: f64,
    band: f64,
    limit: usize,
) -> Result<Vec<ThoughtHit>> {
    with_similarity(&mut hits, query, embedder, threshold)?;
    let best = hits
        .iter()
        .filter_map(|h| h.similarity)
        .fold(0.0_f64, f64::max);
    hits.retain(|h| h.similarity.unwrap_or(0.0) >= best - band);
    hits.sort_by(|a, b| b.rho.total_cmp(&a.rho));
    hits.truncate(limit.max(1));
    Ok(hits)
}

/// Fills in each hit's similarity to `query` (the embedder's cosine, else the cosine of word
/// counts) and flags those at or above `threshold`.
pub fn with_similarity(
    hits: &mut [ThoughtHit],
    query: &str,
    embedder: Option<&SharedEmbedder>,
    threshold: f64,
) -> Result<()> {
    if hits.is_empty() {
        return Ok(());
    }
    let texts: Vec<&str> = hits.iter().map(|h| h.text.as_str()).collect();
    let sims = similarities(query, &texts, embedder)?;
    for (hit, sim) in hits.iter_mut().zip(sims) {
        hit.similarity = Some(sim);
        hit.near_duplicate = sim >= threshold;
    }
    Ok(())
}

/// The similarity of `query` to each text, 0..=1.
pub fn similarities(
    query: &str,
    texts: &[&str],
    embedder: Option<&SharedEmbedder>,
) -> Result<Vec<f64>> {
    match embedder {
        Some(e) => {
            let q = e.embed_queries(&[query])?.pop().unwrap_or_default();
            Ok(e.embed(texts)?
                .iter()
                .map(|v| f64::from(crate::embed::dot(&q, v)).clamp(0.0, 1.0))
                .collect())
        }
        None => {
            let q = word_counts(query);
            Ok(texts.iter().map(|t| cosine(&q, &word_counts(t))).collect())
        }
    }
}

fn word_counts(text: &str) -> BTreeMap<String, f64> {
    let mut counts = BTreeMap::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        *counts.entry(w.to_lowercase()).or_insert(0.0) += 1.0;
    }
    counts
}

fn cosine(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> f64 {
    let dot: f64 = a.iter().filter_map(|(k, x)| b.get(k).map(|y| x * y)).sum();
    let norm = |m: &BTreeMap<String, f64>| m.values().map(|v| v * v).sum::<f64>().sqrt();
    let d = norm(a) * norm(b);
    if d == 0.0 {
        0.0
    } else {
        (dot / d).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
