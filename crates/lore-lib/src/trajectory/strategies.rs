//! Scoring a query: each step's relevance (cosine plus lexical), `auto`'s choice, and the
//! candidates of each strategy (flat, recency, units coarse to fine, the summary tree collapsed).

use std::collections::HashMap;

use super::Strategy;
use super::index::{TrajectoryIndex, words};
use super::packing::Recalled;
use super::units::View;
use crate::embed::{Quantized, dot};
use crate::error::Result;

/// The steps holding one term.
pub(super) type Postings = std::rc::Rc<Vec<u32>>;

/// A query's terms with their idf, and beside each its postings.
type QueryTerms = (Vec<(u32, f32)>, Vec<Postings>);

impl TrajectoryIndex {
    /// The query's terms with their idf, and beside each its postings (the steps holding it).
    pub(super) fn query_terms(&self, query: &str) -> Result<QueryTerms> {
        let n = self.steps.len() as f32;
        let mut out: Vec<(u32, f32)> = Vec::new();
        let mut lists = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for w in words(query) {
            if let Some((t, list)) = self.term_of(&w)?
                && seen.insert(t)
            {
                let df = self.df[t as usize] as f32;
                out.push((t, (1.0 + (n - df + 0.5) / (df + 0.5)).ln()));
                lists.push(list);
            }
        }
        Ok((out, lists))
    }

    /// Each step's relevance: cosine plus the normalised lexical score.
    fn relevance(&self, q: &[f32], terms: &[(u32, f32)], lists: &[Postings]) -> Vec<f32> {
        // Steps keep `i8` vectors: the query is quantised once, and each cosine is one integer
        // dot product.
        let probe = Quantized::new(q);
        let mut lexical = vec![0f32; self.steps.len()];
        for ((_, idf), list) in terms.iter().zip(lists) {
            for s in list.iter() {
                lexical[*s as usize] += idf;
            }
        }
        let max = lexical.iter().cloned().fold(0f32, f32::max);
        let w = if max > 0.0 {
            self.params.lexical_weight / max
        } else {
            0.0
        };
        (0..self.steps.len())
            .zip(&lexical)
            .map(|(s, l)| self.vector(s).dot(&probe) + w * l)
            .collect()
    }

    /// Retrieves steps for a query within a token budget.
    pub fn recall(&self, query: &str, budget: usize, strategy: Strategy) -> Result<Recalled> {
        let q = self
            .embedder
            .embed_queries(&[query])?
            .pop()
            .unwrap_or_default();
        let (terms, lists) = self.query_terms(query)?;
        let relevance = self.relevance(&q, &terms, &lists);
        let used = match strategy {
            Strategy::Auto => self.choose(&relevance, &terms),
            s => s,
        };
        let ranked: Vec<(u32, f32)> = match used {
            Strategy::Flat | Strategy::Auto => {
                let mut all: Vec<(u32, f32)> = relevance
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (i as u32, *r))
                    .collect();
                top_sorted(&mut all, (budget.max(64) / 2).saturating_add(64));
                all
            }
            Strategy::Recency => (0..self.steps.len() as u32)
                .rev()
                .map(|i| (i, relevance[i as usize]))
                .collect(),
            Strategy::Osu => self.unit_candidates(&q, &terms, &lists, &relevance, false),
            Strategy::Disjoint => self.unit_candidates(&q, &terms, &lists, &relevance, true),
            Strategy::Tree => self.tree_candidates(&q, &terms, &lists, &relevance)?,
        };
        let steps = if used == Strategy::Recency {
            self.pack_in_order(&ranked, budget)?
        } else {
            self.pack(&ranked, &terms, budget)?
        };
        Ok(Recalled {
            strategy,
            used,
            budget,
            tokens: steps.iter().map(|p| p.tokens).sum(),
            steps,
        })
    }

    /// `auto`: OSU when the likely evidence shares an entity or tool — when one of the flat
    /// ranking's top steps sits in a specific (small) entity or tool unit whose other members
    /// hold query terms the step lacks — else flat.
    fn choose(&self, relevance: &[f32], terms: &[(u32, f32)]) -> Strategy {
        let mut top: Vec<(u32, f32)> = relevance
            .iter()
            .enumerate()
            .map(|(i, r)| (i as u32, *r))
            .collect();
        top_sorted(&mut top, self.params.auto_inspect);
        let query_terms: std::collections::HashSet<u32> = terms.iter().map(|(t, _)| *t).collect();
        for (s, _) in &top {
            let step = &self.steps[*s as usize];
            for u in &step.units {
                let unit = &self.units[*u as usize];
                if !matches!(unit.view, View::Entity | View::Tool)
                    || unit.members.len() > self.params.auto_specific_max
                {
                    continue;
                }
                let adds = unit.members.iter().filter(|m| **m != *s).any(|m| {
                    self.steps[*m as usize]
                        .terms
                        .iter()
                        .any(|t| query_terms.contains(t) && !step.terms.contains(t))
                });
                if adds {
                    return Strategy::Osu;
                }
            }
        }
        Strategy::Flat
    }

    /// Coarse to fine: the top units by centroid (and by the query terms their members cover),
    /// their members scored by unit and step.
    fn unit_candidates(
        &self,
        q: &[f32],
        terms: &[(u32, f32)],
        lists: &[Postings],
        relevance: &[f32],
        disjoint: bool,
    ) -> Vec<(u32, f32)> {
        let n = self.steps.len().max(1) as f32;
        let mean: Vec<f32> = self.total.iter().map(|t| t / n).collect();
        let (q_m, mm) = (dot(q, &mean), dot(&mean, &mean));
        // Lexical coverage: the idf of each query term some member holds, over √|unit|.
        let mut coverage: HashMap<u32, f32> = HashMap::new();
        let mut marked: Vec<u32> = Vec::new();
        for ((_, idf), list) in terms.iter().zip(lists) {
            marked.clear();
            for s in list.iter() {
                marked.extend(&self.steps[*s as usize].units);
            }
            marked.sort_unstable();
            marked.dedup();
            for u in &marked {
                *coverage.entry(*u).or_insert(0.0) += idf;
            }
        }
        for (u, c) in coverage.iter_mut() {
            *c /= (self.units[*u as usize].members.len() as f32).sqrt();
        }
        let max_cov = coverage.values().cloned().fold(0f32, f32::max);
        let w = if max_cov > 0.0 {
            self.params.lexical_weight / max_cov
        } else {
            0.0
        };
        let mut scored: Vec<(u32, f32)> = self
            .units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.members.len() >= 2)
            .filter(|(_, u)| !disjoint || u.view == View::Similarity)
            .map(|(i, u)| {
                let lexical = coverage.get(&(i as u32)).copied().unwrap_or(0.0);
                (i as u32, u.centred_cosine(q, &mean, q_m, mm) + w * lexical)
            })
            .collect();
        top_sorted(&mut scored, self.params.top_units);
        self.expand(
            scored
                .iter()
                .map(|(u, score)| (self.units[*u as usize].members.clone(), *score)),
            relevance,
        )
    }

    /// Coarse to fine: each chosen group's best members by their own relevance, scored by the
    /// group's score and their own; a step in several groups keeps its best score.
    fn expand(
        &self,
        groups: impl Iterator<Item = (Vec<u32>, f32)>,
        relevance: &[f32],
    ) -> Vec<(u32, f32)> {
        let a = self.params.unit_weight;
        let mut best: HashMap<u32, f32> = HashMap::new();
        for (members, group_score) in groups {
            let mut members: Vec<(u32, f32)> = members
                .into_iter()
                .map(|m| (m, relevance[m as usize]))
                .collect();
            top_sorted(&mut members, self.params.expand_per_unit);
            for (m, r) in members {
                let s = a * group_score + (1.0 - a) * r;
                let e = best.entry(m).or_insert(f32::MIN);
                if s > *e {
                    *e = s;
                }
            }
        }
        let mut out: Vec<(u32, f32)> = best.into_iter().collect();
        let n = out.len();
        top_sorted(&mut out, n);
        out
    }

    /// The summary tree searched collapsed (as RAPTOR's better variant): every node of every
    /// level is scored like a unit (centred cosine of its mean plus the query terms its steps
    /// cover), the best `top_units` nodes are expanded into their steps, scored by node and step.
    fn tree_candidates(
        &self,
        q: &[f32],
        terms: &[(u32, f32)],
        lists: &[Postings],
        relevance: &[f32],
    ) -> Result<Vec<(u32, f32)>> {
        let tree = self.tree()?;
        let fanout = self.params.tree_fanout.max(2);
        let n = self.steps.len().max(1) as f32;
        let mean: Vec<f32> = self.total.iter().map(|t| t / n).collect();
        let (q_m, mm) = (dot(q, &mean), dot(&mean, &mean));
        // (level, node) → covered idf; a node of level L spans fanout^(L+1) steps.
        let mut coverage: HashMap<(usize, usize), f32> = HashMap::new();
        let mut marked: Vec<(usize, usize)> = Vec::new();
        for ((_, idf), list) in terms.iter().zip(lists) {
            marked.clear();
            for s in list.iter() {
                let mut span = fanout;
                for level in 0..tree.len() {
                    marked.push((level, *s as usize / span));
                    span *= fanout;
                }
            }
            marked.sort_unstable();
            marked.dedup();
            for key in &marked {
                *coverage.entry(*key).or_insert(0.0) += idf;
            }
        }
        let size = |level: usize, node: usize| {
            let span = fanout.pow(level as u32 + 1);
            let start = node * span;
            (start, (start + span).min(self.steps.len()))
        };
        let max_cov = coverage
            .iter()
            .map(|((l, i), c)| {
                let (a, b) = size(*l, *i);
                c / ((b - a).max(1) as f32).sqrt()
            })
            .fold(0f32, f32::max);
        let w = if max_cov > 0.0 {
            self.params.lexical_weight / max_cov
        } else {
            0.0
        };
        let mut scored: Vec<((usize, usize), f32)> = Vec::new();
        for (level, nodes) in tree.iter().enumerate() {
            if nodes.len() < 2 && level > 0 {
                continue;
            }
            for (i, sum) in nodes.iter().enumerate() {
                let (a, b) = size(level, i);
                let count = (b - a) as f32;
                let num = dot(sum, q) - count * q_m;
                let norm2 = dot(sum, sum) - 2.0 * count * dot(sum, &mean) + count * count * mm;
                let cos = if norm2 > 1e-12 {
                    num / norm2.sqrt()
                } else {
                    0.0
                };
                let lexical = coverage.get(&(level, i)).copied().unwrap_or(0.0) / count.sqrt();
                scored.push(((level, i), cos + w * lexical));
            }
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(self.params.top_units);
        Ok(self.expand(
            scored.into_iter().map(|((level, i), score)| {
                let (start, end) = size(level, i);
                ((start as u32..end as u32).collect(), score)
            }),
            relevance,
        ))
    }
}

/// Sorts by score (descending, ties by position) and keeps the best `k`.
fn top_sorted(items: &mut Vec<(u32, f32)>, k: usize) {
    let cmp = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if items.len() > k && k > 0 {
        items.select_nth_unstable_by(k - 1, cmp);
        items.truncate(k);
    }
    if k == 0 {
        items.clear();
    }
    items.sort_by(cmp);
}
