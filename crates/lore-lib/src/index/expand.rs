//! Expansion around strong hits before the ranking is cut to k: a memory written just before or
//! after a strong hit in the same agent session (the turn that asked, the turn that answered)
//! takes a share of that hit's score, so evidence spread over neighbouring turns arrives together.

use std::collections::HashMap;

use super::rank::{Candidate, Scored, Scorer};
use super::vectors::{self, VectorMatrix};
use super::{Index, ListFilter, query};
use crate::error::Result;
use crate::model::Memory;

/// How many of the best hits are expanded.
const SEEDS: usize = 3;
/// How many turns on each side of a strong hit take a share.
const PER_SIDE: usize = 1;

/// The vectors a newly found neighbour's cosine is read from, and the query's probe.
pub(super) type Vectors<'a> = Option<(&'a VectorMatrix, &'a vectors::Probe)>;

impl Index {
    /// Lifts the memories written beside the best `SEEDS` hits (same session, up to `PER_SIDE`
    /// turns away, passing `filter` and `keep`) to at least `share × the hit's score` (halved
    /// per further turn, times their own status weight), adds those not yet ranked, and orders
    /// the ranking again. A share of 0, or hits without a session, change nothing.
    pub(super) fn expand_beside(
        &self,
        scorer: &Scorer,
        ranked: &mut Vec<Scored>,
        filter: &ListFilter,
        keep: impl Fn(&Memory) -> bool,
        vectors: Vectors,
        share: f64,
    ) -> Result<Result<(), vectors::Damaged>> {
        if share <= 0.0 {
            return Ok(Ok(()));
        }
        let seeds: Vec<(String, String, jiff::Timestamp, i64, f64)> = ranked
            .iter()
            .take(SEEDS)
            .filter_map(|(c, score, _)| {
                let session = c.memory.session.clone()?;
                Some((
                    c.memory.id.to_string(),
                    session,
                    c.memory.created,
                    c.rowid,
                    *score,
                ))
            })
            .collect();
        if seeds.is_empty() {
            return Ok(Ok(()));
        }
        let mut at: HashMap<i64, usize> = ranked
            .iter()
            .enumerate()
            .map(|(i, (c, ..))| (c.rowid, i))
            .collect();
        let mut changed = false;
        for (id, session, created, rowid, score) in seeds {
            let near =
                query::session_neighbours(&self.conn, &session, created, rowid, filter, PER_SIDE)?;
            for (row, distance) in near {
                let lift = share * score * 0.5f64.powi(distance as i32 - 1);
                let slot = match at.get(&row) {
                    Some(&slot) => slot,
                    None => {
                        let Some(memory) = query::memory_at(&self.conn, row, filter)? else {
                            continue;
                        };
                        if !keep(&memory) {
                            continue;
                        }
                        let cosine = match vectors {
                            Some((matrix, probe)) => match matrix.best(row, probe) {
                                Ok(best) => best.map(|s| (s, None)),
                                Err(damaged) => return Ok(Err(damaged)),
                            },
                            None => None,
                        };
                        ranked.push(scorer.score(Candidate {
                            rowid: row,
                            memory,
                            lexical: None,
                            cosine,
                        }));
                        at.insert(row, ranked.len() - 1);
                        changed = true;
                        ranked.len() - 1
                    }
                };
                let (_, own, why) = &mut ranked[slot];
                let lifted = lift * why.status;
                if lifted > *own {
                    *own = lifted;
                    why.beside = Some(id.clone());
                    changed = true;
                }
            }
        }
        if changed {
            super::rank::reorder(ranked);
        }
        Ok(Ok(()))
    }
}
