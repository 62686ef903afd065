//! Expansion around strong hits before the ranking is cut to k: a candidate written just before
//! or after a strong hit in the same agent session (the turn that asked, the turn that answered)
//! takes a share of that hit's relevance, so evidence spread over neighbouring turns arrives
//! together.

use std::collections::HashMap;

use super::rank::Scored;
use super::{Index, query};
use crate::error::Result;

/// How many of the best hits are expanded.
const SEEDS: usize = 3;
/// How many turns on each side of a strong hit take a share (halved per further turn).
const PER_SIDE: usize = 2;

/// A hit whose neighbours take a share of its relevance.
struct Seed {
    id: String,
    session: String,
    created: jiff::Timestamp,
    rowid: i64,
    fused: f64,
    score: f64,
}

impl Index {
    /// Lifts the candidates written beside the best [`SEEDS`] hits (same session, up to
    /// [`PER_SIDE`] turns away in the session as written, whatever the query's filters) to at
    /// least `share × the hit's fused relevance` (halved per further turn) times their own
    /// recency, namespace, status and time weights, but never above that share of the hit's
    /// own score, then orders the ranking again.
    ///
    /// Only candidates are lifted: a memory that matched the query neither by its words nor
    /// among the vector candidates stays out, so an unrelated memory written in the same
    /// session never takes a place. A share of 0, or hits without a session, change nothing.
    pub(super) fn expand_beside(&self, ranked: &mut [Scored], share: f64) -> Result<()> {
        if share <= 0.0 {
            return Ok(());
        }
        let seeds: Vec<Seed> = ranked
            .iter()
            .take(SEEDS)
            .filter_map(|(c, score, why)| {
                Some(Seed {
                    id: c.memory.id.to_string(),
                    session: c.memory.session.clone()?,
                    created: c.memory.created,
                    rowid: c.rowid,
                    fused: why.fused,
                    score: *score,
                })
            })
            .collect();
        if seeds.is_empty() {
            return Ok(());
        }
        let at: HashMap<i64, usize> = ranked
            .iter()
            .enumerate()
            .map(|(i, (c, ..))| (c.rowid, i))
            .collect();
        let mut changed = false;
        for seed in seeds {
            let near = query::session_neighbours(
                &self.conn,
                &seed.session,
                seed.created,
                seed.rowid,
                PER_SIDE,
            )?;
            for (row, distance) in near {
                let Some(&slot) = at.get(&row) else {
                    continue;
                };
                let (_, score, why) = &mut ranked[slot];
                let part = share * 0.5f64.powi(distance as i32 - 1);
                let weights = why.recency * why.namespace * why.status * why.time.unwrap_or(1.0);
                // Never above the same share of the seed's own score: a neighbour of a
                // superseded or down-weighted hit stays below it (the share is under 1).
                let lifted = (part * seed.fused * weights).min(part * seed.score);
                // Above a score (never negative) only with weights above 0: the division holds.
                if lifted > *score {
                    *score = lifted;
                    why.fused = lifted / weights;
                    why.beside = Some(seed.id.clone());
                    changed = true;
                }
            }
        }
        if changed {
            super::rank::reorder(ranked);
        }
        Ok(())
    }
}
