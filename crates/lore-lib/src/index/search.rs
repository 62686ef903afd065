//! Hybrid search: BM25 candidates and vector candidates gathered, fused (see [`rank`]),
//! collapsed where near-duplicates repeat each other, and returned as hits in rank order.

use std::cell::OnceCell;
use std::collections::HashMap;

use super::rank::{self, Explain, RankOptions};
use super::vectors::{self, VectorMatrix};
use super::{Hit, Index, ListFilter, query, time_window};
use crate::error::{Error, Result};

/// A hybrid search's request.
struct Query<'a> {
    text: &'a str,
    filter: &'a ListFilter,
    options: &'a RankOptions,
    explain: bool,
}

/// Candidates gathered so far, and where each row sits among them.
#[derive(Default)]
struct Candidates {
    list: Vec<rank::Candidate>,
    slot: HashMap<i64, usize>,
}

/// The fused ranking: each candidate with its score and why.
type Ranked = Vec<(rank::Candidate, f64, Explain)>;

/// A search over vectors that turned out damaged, or its value.
type Checked<T> = std::result::Result<T, vectors::Damaged>;

/// Chunks from which the vector search runs on a thread of its own beside BM25 (where both
/// read from disk, tens of milliseconds each at a million memories); below, a thread would
/// cost more than the overlap saves.
pub(super) const SIDE_BY_SIDE_FROM: usize = vectors::SHORTLIST_FROM;

/// With a filter, the vector search first takes the unfiltered best this many times the pool,
/// then checks them against the filter.
const WIDE: usize = 8;

/// The query's vector and the vector search's first pass (before any filter is applied),
/// found without the database, so that they may be found on another thread.
struct FirstPass {
    query: Vec<f32>,
    probe: vectors::Probe,
    found: Checked<Vec<(i64, f32)>>,
}

impl FirstPass {
    /// Embeds `text` and searches `matrix` for the best `pool` chunks' memories (`WIDE` times
    /// as many when `filtered`); `None` without an embedder, vectors or query text.
    fn find(
        embedder: Option<&dyn crate::embed::Embedder>,
        matrix: Option<&VectorMatrix>,
        text: &str,
        filtered: bool,
        pool: usize,
    ) -> Result<Option<FirstPass>> {
        let (Some(embedder), Some(matrix)) = (embedder, matrix) else {
            return Ok(None);
        };
        if matrix.is_empty() || text.trim().is_empty() {
            return Ok(None);
        }
        let query = embedder
            .embed_queries(&[text])?
            .pop()
            .expect("one vector per text");
        let probe = vectors::Probe::new(&query);
        let limit = if filtered { pool * WIDE } else { pool };
        let found = matrix.search(&probe, limit, |_| true);
        Ok(Some(FirstPass {
            query,
            probe,
            found,
        }))
    }
}

impl Index {
    /// Runs the vector side of a search on a thread of its own from `chunks` vectors on (by
    /// default from [`SIDE_BY_SIDE_FROM`]): 0 always, `usize::MAX` never. The ranking is the
    /// same either way; tests compare the two.
    #[doc(hidden)]
    pub fn set_side_by_side_from(&self, chunks: usize) {
        self.side_by_side_from.set(chunks);
    }

    /// Hybrid recall: BM25 and vector candidates fused, weighted, flagged and collapsed (see
    /// [`rank`]). Without an embedder it ranks by BM25 with the same weights.
    pub fn search(
        &self,
        text: &str,
        filter: &ListFilter,
        options: &RankOptions,
        explain: bool,
    ) -> Result<Vec<Hit>> {
        let query = Query {
            text,
            filter,
            options,
            explain,
        };
        match self.search_in(self.matrix()?, &query)? {
            Ok(hits) => Ok(hits),
            // A chunk of the cache file failed its check: search the table's vectors instead.
            Err(vectors::Damaged) => {
                self.search_in(self.reload_matrix()?, &query)?
                    .map_err(|_| Error::Io {
                        context: "reading vectors loaded from the index".into(),
                        source: std::io::Error::other("vectors in memory reported damage"),
                    })
            }
        }
    }

    /// [`Index::search`] over the vectors of `matrix`.
    fn search_in(&self, matrix: Option<&VectorMatrix>, query: &Query) -> Result<Checked<Vec<Hit>>> {
        let Query {
            text,
            filter,
            options,
            explain,
        } = *query;
        let limit = filter.limit.unwrap_or(10).max(1);
        let within = options
            .time_window
            .as_ref()
            .filter(|w| w.usage == time_window::WindowUse::Filter);
        // A window filters candidates after they are found: look further for them.
        let widen = if within.is_some() { 4 } else { 1 };
        let pool = options.candidates.max(limit * 3) * widen;
        let (mut found, first) = self.both_searches(matrix, text, filter, pool)?;
        let query_vector =
            match self.add_vector_candidates(matrix, first, filter, pool, &mut found)? {
                Ok(q) => q,
                Err(damaged) => return Ok(Err(damaged)),
            };
        let mut candidates = found.list;
        if let Some(w) = within {
            candidates.retain(|c| w.contains(c.memory.created) || w.contains(c.memory.updated));
        }
        let mut ranked = rank::fuse(candidates, options);
        self.expand_beside(&mut ranked, options.beside)?;
        let threshold = self.embedder.as_ref().map(|e| e.near_duplicate());
        // Head vectors are computed only for the pairs collapse compares.
        let matrix = if options.collapse { matrix } else { None };
        // A head a listed matrix does not hold is read from the table; the first error
        // reading it ends the search after collapsing.
        let table_error = std::cell::RefCell::new(None);
        let head = |rowid: i64| -> Checked<Option<Vec<f32>>> {
            let Some(m) = matrix else {
                return Ok(None);
            };
            match m.head(rowid)? {
                None if m.is_listed() => Ok(vectors::head_in_table(&self.conn, rowid, m.dims())
                    .unwrap_or_else(|e| {
                        table_error.borrow_mut().get_or_insert(e);
                        None
                    })),
                head => Ok(head),
            }
        };
        let groups = match collapse_groups(&ranked, limit, threshold, head) {
            Ok(groups) => groups,
            Err(damaged) => return Ok(Err(damaged)),
        };
        if let Some(e) = table_error.into_inner() {
            return Err(e);
        }
        let near = threshold.filter(|_| query_vector.is_some());
        let mut hits = hits_of_groups(ranked, groups, near, explain);
        self.mark_stale(&mut hits)?;
        Ok(Ok(hits))
    }

    /// The BM25 candidates and the vector search's first pass, side by side on two threads
    /// when the vectors are many ([`SIDE_BY_SIDE_FROM`]); the database is read on this one,
    /// whose connection may not be shared. One after the other otherwise, or when the system
    /// refuses a thread; then a BM25 error returns before the query is embedded. Side by side,
    /// BM25's error is the one returned when both fail (a panic on the other thread is passed
    /// on).
    fn both_searches(
        &self,
        matrix: Option<&VectorMatrix>,
        text: &str,
        filter: &ListFilter,
        pool: usize,
    ) -> Result<(Candidates, Option<FirstPass>)> {
        let embedder = self.embedder.as_deref();
        let filtered = query::restricts(filter);
        let first = move || FirstPass::find(embedder, matrix, text, filtered, pool);
        let beside = embedder.is_some()
            && !text.trim().is_empty()
            && matrix.is_some_and(|m| m.len() >= self.side_by_side_from.get());
        if beside {
            let both = std::thread::scope(|scope| {
                let vector = std::thread::Builder::new()
                    .name("lore-vectors".into())
                    .spawn_scoped(scope, first)
                    .ok()?;
                let lexical = self.lexical_candidates(text, filter, pool);
                let first = vector
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                Some((lexical, first))
            });
            if let Some((lexical, first)) = both {
                return Ok((lexical?, first?));
            }
        }
        let lexical = self.lexical_candidates(text, filter, pool)?;
        Ok((lexical, first()?))
    }

    /// The BM25 candidates: the best `pool` memories passing `filter`, in rank order.
    fn lexical_candidates(
        &self,
        text: &str,
        filter: &ListFilter,
        pool: usize,
    ) -> Result<Candidates> {
        let lexical_filter = ListFilter {
            limit: Some(pool),
            ..filter.clone()
        };
        let lexical = query::recall(&self.conn, text, &lexical_filter)?;
        let mut found = Candidates {
            list: Vec::with_capacity(pool * 2),
            slot: HashMap::new(),
        };
        for (i, hit) in lexical.into_iter().enumerate() {
            found.slot.insert(hit.rowid, found.list.len());
            found.list.push(rank::Candidate {
                rowid: hit.rowid,
                memory: hit.memory,
                lexical: Some((hit.score, i + 1)),
                cosine: None,
            });
        }
        Ok(found)
    }

    /// Adds the vector candidates (the best `pool` by cosine, above the embedder's relevance
    /// floor; `first` their unfiltered first pass) and gives every candidate its best chunk's
    /// cosine; returns the query's vector (`None` without an embedder, vectors or query text).
    fn add_vector_candidates(
        &self,
        matrix: Option<&VectorMatrix>,
        first: Option<FirstPass>,
        filter: &ListFilter,
        pool: usize,
        found: &mut Candidates,
    ) -> Result<Checked<Option<Vec<f32>>>> {
        let (Some(embedder), Some(matrix), Some(first)) = (&self.embedder, matrix, first) else {
            return Ok(Ok(None));
        };
        let FirstPass {
            query: q,
            probe,
            found: first,
        } = first;
        let by_vector = match self.vector_candidates(matrix, &probe, filter, pool, first)? {
            Ok(by_vector) => by_vector,
            Err(damaged) => return Ok(Err(damaged)),
        };
        let floor = embedder.relevance_floor();
        for (i, (rowid, cosine)) in by_vector.into_iter().enumerate() {
            match found.slot.get(&rowid) {
                Some(&at) => found.list[at].cosine = Some((cosine, Some(i + 1))),
                None if cosine < floor => {}
                None => {
                    if let Some(memory) = query::memory_at(&self.conn, rowid, filter)? {
                        found.slot.insert(rowid, found.list.len());
                        found.list.push(rank::Candidate {
                            rowid,
                            memory,
                            lexical: None,
                            cosine: Some((cosine, Some(i + 1))),
                        });
                    }
                }
            }
        }
        for c in found.list.iter_mut().filter(|c| c.cosine.is_none()) {
            let best = match matrix.best(c.rowid, &probe) {
                Ok(None) if matrix.is_listed() => {
                    vectors::best_in_table(&self.conn, c.rowid, matrix.dims(), &probe)?
                }
                Ok(best) => best,
                Err(damaged) => return Ok(Err(damaged)),
            };
            c.cosine = best.map(|s| (s, None));
        }
        Ok(Ok(Some(q)))
    }

    /// The `pool` memories passing `filter` whose best chunk is most similar to the probe,
    /// from the search's `first` pass. With a filter, that pass is the unfiltered top `WIDE ×
    /// pool`, checked row by row (exact whenever `pool` of them pass); only a selective filter
    /// pays for listing every row it allows.
    fn vector_candidates(
        &self,
        matrix: &VectorMatrix,
        probe: &vectors::Probe,
        filter: &ListFilter,
        pool: usize,
        first: Checked<Vec<(i64, f32)>>,
    ) -> Result<Checked<Vec<(i64, f32)>>> {
        let wide = match first {
            Ok(wide) => wide,
            Err(damaged) => return Ok(Err(damaged)),
        };
        if !query::restricts(filter) {
            return Ok(Ok(wide));
        }
        let wide_limit = pool * WIDE;
        // A listed matrix's search reads only the lists nearest the query.
        let scanned_all = wide.len() < wide_limit && !matrix.is_listed();
        let mut kept = Vec::with_capacity(pool);
        for (row, cosine) in wide {
            if query::passes(&self.conn, row, filter)? {
                kept.push((row, cosine));
                if kept.len() == pool {
                    return Ok(Ok(kept));
                }
            }
        }
        if scanned_all {
            return Ok(Ok(kept));
        }
        let allowed = query::allowed_rows(&self.conn, filter)?;
        Ok(matrix.search_everywhere(probe, pool, |row| {
            allowed.as_ref().is_none_or(|a| a.contains(&row))
        }))
    }
}

/// The ranking collapsed into groups of near-duplicates (see [`rank::collapse`]): two memories
/// are one when their head vectors (`head_of` a row id, asked only for the pairs compared) are
/// within `threshold` and their texts name the same specifics.
fn collapse_groups(
    ranked: &Ranked,
    limit: usize,
    threshold: Option<f32>,
    head_of: impl Fn(i64) -> Checked<Option<Vec<f32>>>,
) -> Checked<Vec<(usize, Vec<usize>)>> {
    let heads: Vec<OnceCell<Option<Vec<f32>>>> = vec![OnceCell::new(); ranked.len()];
    let damaged = std::cell::Cell::new(false);
    let head = |i: usize| {
        heads[i]
            .get_or_init(|| {
                head_of(ranked[i].0.rowid).unwrap_or_else(|_| {
                    damaged.set(true);
                    None
                })
            })
            .as_ref()
    };
    let text = |i: usize| {
        format!(
            "{}\n{}",
            ranked[i].0.memory.summary, ranked[i].0.memory.body
        )
    };
    let groups = rank::collapse(ranked.len(), limit, |a, b| {
        match (threshold, head(a), head(b)) {
            (Some(t), Some(x), Some(y)) => {
                crate::embed::dot(x, y) >= t.max(0.9)
                    && crate::specifics::same_specifics(&text(a), &text(b))
            }
            _ => false,
        }
    });
    if damaged.get() {
        return Err(vectors::Damaged);
    }
    Ok(groups)
}

/// One hit per group: its best in-force member, at the group's place and score, the others
/// named as its duplicates; flagged a near-duplicate of the query at cosine `near` and above.
fn hits_of_groups(
    ranked: Ranked,
    groups: Vec<(usize, Vec<usize>)>,
    near: Option<f32>,
    explain: bool,
) -> Vec<Hit> {
    let mut ranked: Vec<Option<(rank::Candidate, f64, Explain)>> =
        ranked.into_iter().map(Some).collect();
    let mut hits = Vec::with_capacity(groups.len());
    for (kept, folded) in groups {
        // The group keeps the place and score of its best-ranked member.
        let Some(group_score) = ranked[kept].as_ref().map(|r| r.1) else {
            continue;
        };
        let (kept, folded) = rank::in_force_first(kept, folded, |i| {
            ranked[i].as_ref().map(|(c, ..)| c.memory.status)
        });
        let Some((c, own_score, why)) = ranked[kept].take() else {
            continue;
        };
        let score = own_score.max(group_score);
        let mut hit = Hit::new(c.rowid, c.memory, score);
        hit.near_duplicate = match (near, why.cosine) {
            (Some(t), Some(cos)) => cos >= t,
            _ => false,
        };
        hit.duplicates = folded
            .iter()
            .filter_map(|&i| ranked[i].as_ref().map(|(c, ..)| c.memory.id.to_string()))
            .collect();
        if explain {
            hit.explain = Some(why);
        }
        hits.push(hit);
    }
    hits
}
