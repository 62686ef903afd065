//! Trajectory retrieval over context-log steps: overlapping semantic units (OSU) and the
//! baselines it is compared with (flat, recency, disjoint units, a summary tree), packed into a
//! token budget.
//!
//! Every step is embedded once and joins units as it arrives ([`TrajectoryIndex::push`]):
//! one per entity or file it names, one for its tool, one for its subgoal, and one similarity
//! unit (leader clustering against the units of recent steps) — at most
//! [`Params::membership_cap`] of them. A unit keeps the sum of its members' vectors, so its
//! centroid is current without a rebuild. A query embeds once, scores every unit's centroid,
//! expands the top [`Params::top_units`] units into their members (coarse), scores each member
//! by its unit and by itself (fine), and packs greedily with a novelty penalty and a coverage
//! bonus, dropping near-duplicates. `auto` uses OSU when the query's likely evidence shares a
//! specific entity or tool (a top flat-ranked step is in a small entity or tool unit whose
//! other members hold query terms it lacks), and the flat ranking otherwise.

use std::collections::HashMap;

use serde::Serialize;

use crate::context::estimate_tokens;
use crate::ctx::TrajectoryStep;
use crate::embed::SharedEmbedder;
use crate::error::{Error, Result};

/// Retrieval strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// OSU when the likely evidence shares an entity or tool, else flat.
    Auto,
    /// Overlapping semantic units.
    Osu,
    /// Steps ranked directly.
    Flat,
    /// The newest steps that fit.
    Recency,
    /// Units without overlap (the similarity view alone).
    Disjoint,
    /// Hierarchical summaries (RAPTOR-like): nodes over runs of steps, searched collapsed.
    Tree,
}

impl Strategy {
    /// Every strategy, in report order.
    pub const ALL: [Strategy; 6] = [
        Strategy::Auto,
        Strategy::Osu,
        Strategy::Flat,
        Strategy::Recency,
        Strategy::Disjoint,
        Strategy::Tree,
    ];

    /// Parses a strategy name.
    pub fn parse(value: &str) -> Result<Strategy> {
        Strategy::ALL
            .into_iter()
            .find(|s| s.as_str() == value.trim().to_ascii_lowercase())
            .ok_or_else(|| Error::Invalid {
                what: "strategy",
                value: value.to_string(),
                reason: "expected auto, osu, flat, recency, disjoint or tree".into(),
            })
    }

    /// The strategy's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Auto => "auto",
            Strategy::Osu => "osu",
            Strategy::Flat => "flat",
            Strategy::Recency => "recency",
            Strategy::Disjoint => "disjoint",
            Strategy::Tree => "tree",
        }
    }
}

/// Retrieval parameters. The defaults are the documented ones (README, "Trajectory recall").
#[derive(Clone, Debug, Serialize)]
pub struct Params {
    /// Units taken from the centroid ranking (K).
    pub top_units: usize,
    /// Most units a step belongs to.
    pub membership_cap: usize,
    /// Cosine to a similarity unit's centroid at which a step joins it (else it starts one).
    pub similarity_join: f32,
    /// Recent steps whose similarity units a new step is compared with.
    pub similarity_window: usize,
    /// Largest similarity unit.
    pub similarity_max: usize,
    /// Weight of the lexical score (normalised to the best match) next to the cosine.
    pub lexical_weight: f32,
    /// Weight of the unit's score in a member's score (the rest is the step's own).
    pub unit_weight: f32,
    /// Members of one unit considered after expansion, best first.
    pub expand_per_unit: usize,
    /// Novelty: penalty × the cosine to the most similar step already packed.
    pub novelty_penalty: f32,
    /// Coverage: bonus × the share of the query's terms a step adds to what is packed.
    pub coverage_bonus: f32,
    /// Cosine at which a step counts as a duplicate of one packed (dropped).
    pub duplicate_cosine: f32,
    /// `auto`: flat-ranked steps inspected for a shared specific entity or tool.
    pub auto_inspect: usize,
    /// `auto`: an entity or tool unit is specific when it has at most this many steps.
    pub auto_specific_max: usize,
    /// `tree`: children per node.
    pub tree_fanout: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            top_units: 4,
            membership_cap: 4,
            similarity_join: 0.6,
            similarity_window: 64,
            similarity_max: 64,
            lexical_weight: 0.5,
            unit_weight: 0.5,
            expand_per_unit: 24,
            novelty_penalty: 0.2,
            coverage_bonus: 0.1,
            duplicate_cosine: 0.97,
            auto_inspect: 10,
            auto_specific_max: 12,
            tree_fanout: 8,
        }
    }
}

/// The views that group steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum View {
    /// Steps naming one entity (or file).
    Entity,
    /// Steps using one tool.
    Tool,
    /// Steps under one subgoal.
    Subgoal,
    /// Steps whose vectors are close.
    Similarity,
}

impl View {
    /// The view's name.
    pub fn as_str(self) -> &'static str {
        match self {
            View::Entity => "entity",
            View::Tool => "tool",
            View::Subgoal => "subgoal",
            View::Similarity => "similarity",
        }
    }
}

struct Unit {
    view: View,
    label: String,
    members: Vec<u32>,
    sum: Vec<f32>,
    norm: f32,
}

impl Unit {
    fn add(&mut self, step: u32, vector: &[f32]) {
        self.members.push(step);
        for (s, v) in self.sum.iter_mut().zip(vector) {
            *s += v;
        }
        self.norm = self.sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    }

    fn cosine(&self, q: &[f32]) -> f32 {
        if self.norm == 0.0 {
            return 0.0;
        }
        dot(&self.sum, q) / self.norm
    }

    /// Cosine between the query and the unit's members centred on the trajectory's mean `m`
    /// (`q_m` = q·m, `mm` = |m|²): what the unit says beyond what every step says.
    fn centred_cosine(&self, q: &[f32], m: &[f32], q_m: f32, mm: f32) -> f32 {
        let n = self.members.len() as f32;
        let num = dot(&self.sum, q) - n * q_m;
        let norm2 = self.norm * self.norm - 2.0 * n * dot(&self.sum, m) + n * n * mm;
        if norm2 <= 1e-12 {
            return 0.0;
        }
        num / norm2.sqrt()
    }
}

struct Indexed {
    entry: TrajectoryStep,
    line: String,
    tokens: usize,
    vector: Vec<f32>,
    terms: Vec<u32>,
    units: Vec<u32>,
}

/// A step chosen for the context.
#[derive(Clone, Debug, Serialize)]
pub struct Packed {
    /// Position in the trajectory (1 = oldest).
    pub position: usize,
    /// Score at the moment it was chosen.
    pub score: f32,
    /// Estimated tokens of its line.
    pub tokens: usize,
    /// The line packed.
    pub line: String,
    /// The units the step belongs to (`view:label`).
    pub units: Vec<String>,
    /// The step.
    pub step: TrajectoryStep,
}

/// What a trajectory query returned.
#[derive(Clone, Debug, Serialize)]
pub struct Recalled {
    /// The strategy asked for.
    pub strategy: Strategy,
    /// The strategy that ran (`auto` resolves to `osu` or `flat`).
    pub used: Strategy,
    /// The budget.
    pub budget: usize,
    /// Tokens used.
    pub tokens: usize,
    /// Steps in the order they were chosen (best first).
    pub steps: Vec<Packed>,
}

impl Recalled {
    /// The packed context as markdown lines, in trajectory order, within the budget.
    pub fn render(&self) -> String {
        let mut steps: Vec<&Packed> = self.steps.iter().collect();
        steps.sort_by_key(|p| p.position);
        let mut out = String::new();
        for p in steps {
            out.push_str(&p.line);
            out.push('\n');
        }
        out
    }
}

/// The cost of a packed line: its characters and a newline, at four per token.
fn line_tokens(line: &str) -> usize {
    estimate_tokens(line) + 1
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Lower-cased alphanumeric words of two or more characters.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(|w| w.to_lowercase())
}

/// Steps, their units and the summary tree, built incrementally.
pub struct TrajectoryIndex {
    embedder: SharedEmbedder,
    params: Params,
    steps: Vec<Indexed>,
    units: Vec<Unit>,
    unit_keys: HashMap<(View, String), u32>,
    similarity_of: Vec<Option<u32>>,
    vocab: HashMap<String, u32>,
    df: Vec<u32>,
    postings: Vec<Vec<u32>>,
    tree: Vec<Vec<Vec<f32>>>,
    total: Vec<f32>,
}

impl TrajectoryIndex {
    /// An empty index. Without an embedder the vectors are hashed bags of words.
    pub fn new(embedder: Option<SharedEmbedder>, params: Params) -> TrajectoryIndex {
        let embedder: SharedEmbedder =
            embedder.unwrap_or_else(|| std::sync::Arc::new(crate::embed::FakeEmbedder::new(256)));
        TrajectoryIndex {
            embedder,
            params,
            steps: Vec::new(),
            units: Vec::new(),
            unit_keys: HashMap::new(),
            similarity_of: Vec::new(),
            vocab: HashMap::new(),
            df: Vec::new(),
            postings: Vec::new(),
            tree: Vec::new(),
            total: Vec::new(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// How many steps are indexed.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether no step is indexed.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// How many units exist, by view.
    pub fn unit_counts(&self) -> HashMap<View, usize> {
        let mut out = HashMap::new();
        for u in &self.units {
            *out.entry(u.view).or_insert(0) += 1;
        }
        out
    }

    /// Adds steps (embedded in one batch) in order.
    pub fn extend(&mut self, steps: Vec<TrajectoryStep>) -> Result<()> {
        for batch in steps.chunks(512) {
            let texts: Vec<String> = batch.iter().map(|s| s.step.search_text()).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = self.embedder.embed(&refs)?;
            for (s, v) in batch.iter().zip(vectors) {
                self.push_embedded(s.clone(), v);
            }
        }
        Ok(())
    }

    /// Adds one step.
    pub fn push(&mut self, step: TrajectoryStep) -> Result<()> {
        let v = self
            .embedder
            .embed(&[&step.step.search_text()])?
            .pop()
            .unwrap_or_default();
        self.push_embedded(step, v);
        Ok(())
    }

    fn unit_for(&mut self, view: View, label: &str) -> u32 {
        let key = (view, label.to_lowercase());
        if let Some(u) = self.unit_keys.get(&key) {
            return *u;
        }
        let id = self.units.len() as u32;
        self.units.push(Unit {
            view,
            label: label.to_string(),
            members: Vec::new(),
            sum: vec![0.0; self.embedder.id().dims],
            norm: 0.0,
        });
        self.unit_keys.insert(key, id);
        id
    }

    fn push_embedded(&mut self, entry: TrajectoryStep, vector: Vec<f32>) {
        let id = self.steps.len() as u32;
        let step = &entry.step;
        // Terms, for the lexical score.
        let mut terms: Vec<u32> = Vec::new();
        for w in words(&step.search_text()) {
            let next = self.vocab.len() as u32;
            let t = *self.vocab.entry(w).or_insert(next);
            if t as usize == self.df.len() {
                self.df.push(0);
                self.postings.push(Vec::new());
            }
            if !terms.contains(&t) {
                terms.push(t);
                self.df[t as usize] += 1;
                self.postings[t as usize].push(id);
            }
        }
        // Units, in priority order, up to the membership cap: entities and files, tool,
        // subgoal, then a similarity unit.
        let cap = self.params.membership_cap.max(1);
        let mut keys: Vec<(View, String)> = Vec::new();
        for e in step.entities.iter().chain(&step.files) {
            keys.push((View::Entity, e.clone()));
        }
        keys.truncate(cap.saturating_sub(1).max(1));
        if let Some(t) = &step.tool {
            keys.push((View::Tool, t.clone()));
        }
        if let Some(s) = &step.subgoal {
            keys.push((View::Subgoal, s.clone()));
        }
        keys.truncate(cap.saturating_sub(1).max(1));
        let mut units: Vec<u32> = keys
            .iter()
            .map(|(view, label)| self.unit_for(*view, label))
            .collect();
        units.dedup();
        // Similarity view: join the closest unit among those of recent steps, else start one.
        let from = self
            .similarity_of
            .len()
            .saturating_sub(self.params.similarity_window);
        let mut best: Option<(u32, f32)> = None;
        for u in self.similarity_of[from..].iter().flatten() {
            let unit = &self.units[*u as usize];
            if unit.members.len() >= self.params.similarity_max {
                continue;
            }
            let c = unit.cosine(&vector);
            if best.is_none_or(|(_, b)| c > b) {
                best = Some((*u, c));
            }
        }
        let sim_unit = match best {
            Some((u, c)) if c >= self.params.similarity_join => u,
            _ => {
                let label = format!("cluster {}", self.units.len());
                self.unit_for(View::Similarity, &label)
            }
        };
        if units.len() < cap {
            units.push(sim_unit);
        }
        self.similarity_of.push(Some(sim_unit));
        for u in &units {
            self.units[*u as usize].add(id, &vector);
        }
        self.add_to_tree(id, &vector);
        if self.total.len() != vector.len() {
            self.total = vec![0.0; vector.len()];
        }
        for (t, v) in self.total.iter_mut().zip(&vector) {
            *t += v;
        }
        let line = format!("- {}", entry.step.compact());
        self.steps.push(Indexed {
            tokens: line_tokens(&line),
            line,
            vector,
            terms,
            units,
            entry,
        });
    }

    /// The summary tree is implicit: node `n` of level 0 sums steps `n·F ..`, node `n` of
    /// level `L` sums nodes `n·F ..` of level `L-1`. A step adds its vector to one node per
    /// level; a level appears (summed from the one below) when the top holds two nodes.
    fn add_to_tree(&mut self, leaf: u32, vector: &[f32]) {
        let fanout = self.params.tree_fanout.max(2);
        let dims = vector.len();
        let mut span = fanout;
        let mut level = 0;
        loop {
            let created = self.tree.len() == level;
            if created {
                let nodes: Vec<Vec<f32>> = if level == 0 {
                    Vec::new()
                } else {
                    self.tree[level - 1]
                        .chunks(fanout)
                        .map(|chunk| {
                            let mut sum = vec![0.0; dims];
                            for n in chunk {
                                for (s, v) in sum.iter_mut().zip(n) {
                                    *s += v;
                                }
                            }
                            sum
                        })
                        .collect()
                };
                self.tree.push(nodes);
            }
            if !created || level == 0 {
                let idx = leaf as usize / span;
                while self.tree[level].len() <= idx {
                    self.tree[level].push(vec![0.0; dims]);
                }
                for (s, v) in self.tree[level][idx].iter_mut().zip(vector) {
                    *s += v;
                }
            }
            if self.tree[level].len() <= 1 {
                break;
            }
            level += 1;
            span *= fanout;
        }
    }

    fn query_terms(&self, query: &str) -> Vec<(u32, f32)> {
        let n = self.steps.len() as f32;
        let mut out: Vec<(u32, f32)> = Vec::new();
        for w in words(query) {
            if let Some(t) = self.vocab.get(&w)
                && !out.iter().any(|(x, _)| x == t)
            {
                let df = self.df[*t as usize] as f32;
                out.push((*t, (1.0 + (n - df + 0.5) / (df + 0.5)).ln()));
            }
        }
        out
    }

    /// Each step's relevance: cosine plus the normalised lexical score.
    fn relevance(&self, q: &[f32], terms: &[(u32, f32)]) -> Vec<f32> {
        let mut lexical = vec![0f32; self.steps.len()];
        for (t, idf) in terms {
            for s in &self.postings[*t as usize] {
                lexical[*s as usize] += idf;
            }
        }
        let max = lexical.iter().cloned().fold(0f32, f32::max);
        let w = if max > 0.0 {
            self.params.lexical_weight / max
        } else {
            0.0
        };
        self.steps
            .iter()
            .zip(&lexical)
            .map(|(s, l)| dot(&s.vector, q) + w * l)
            .collect()
    }

    /// Retrieves steps for a query within a token budget.
    pub fn recall(&self, query: &str, budget: usize, strategy: Strategy) -> Result<Recalled> {
        let q = self.embedder.embed(&[query])?.pop().unwrap_or_default();
        let terms = self.query_terms(query);
        let relevance = self.relevance(&q, &terms);
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
                top_sorted(&mut all, 4 * budget.max(64) / 8 + 64);
                all
            }
            Strategy::Recency => (0..self.steps.len() as u32)
                .rev()
                .map(|i| (i, relevance[i as usize]))
                .collect(),
            Strategy::Osu => self.unit_candidates(&q, &terms, &relevance, false),
            Strategy::Disjoint => self.unit_candidates(&q, &terms, &relevance, true),
            Strategy::Tree => self.tree_candidates(&q, &terms, &relevance),
        };
        let steps = if used == Strategy::Recency {
            self.pack_in_order(&ranked, budget)
        } else {
            self.pack(&ranked, &terms, budget)
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
        let query_terms: Vec<u32> = terms.iter().map(|(t, _)| *t).collect();
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
        relevance: &[f32],
        disjoint: bool,
    ) -> Vec<(u32, f32)> {
        let n = self.steps.len().max(1) as f32;
        let mean: Vec<f32> = self.total.iter().map(|t| t / n).collect();
        let (q_m, mm) = (dot(q, &mean), dot(&mean, &mean));
        // Lexical coverage: the idf of each query term some member holds, over √|unit|.
        let mut coverage: HashMap<u32, f32> = HashMap::new();
        let mut marked: Vec<u32> = Vec::new();
        for (t, idf) in terms {
            marked.clear();
            for s in &self.postings[*t as usize] {
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
        relevance: &[f32],
    ) -> Vec<(u32, f32)> {
        let fanout = self.params.tree_fanout.max(2);
        let n = self.steps.len().max(1) as f32;
        let mean: Vec<f32> = self.total.iter().map(|t| t / n).collect();
        let (q_m, mm) = (dot(q, &mean), dot(&mean, &mean));
        // (level, node) → covered idf; a node of level L spans fanout^(L+1) steps.
        let mut coverage: HashMap<(usize, usize), f32> = HashMap::new();
        let mut marked: Vec<(usize, usize)> = Vec::new();
        for (t, idf) in terms {
            marked.clear();
            for s in &self.postings[*t as usize] {
                let mut span = fanout;
                for level in 0..self.tree.len() {
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
        for (level, nodes) in self.tree.iter().enumerate() {
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
        self.expand(
            scored.into_iter().map(|((level, i), score)| {
                let (start, end) = size(level, i);
                ((start as u32..end as u32).collect(), score)
            }),
            relevance,
        )
    }

    /// Greedy packing: the best remaining candidate after a novelty penalty (cosine to what is
    /// packed) and a coverage bonus (query terms it adds); duplicates dropped; lines that do not
    /// fit skipped.
    fn pack(&self, ranked: &[(u32, f32)], terms: &[(u32, f32)], budget: usize) -> Vec<Packed> {
        let mut chosen: Vec<Packed> = Vec::new();
        let mut chosen_ids: Vec<u32> = Vec::new();
        let mut left = budget;
        let mut covered: Vec<u32> = Vec::new();
        let total_terms = terms.len().max(1) as f32;
        let mut pool: Vec<(u32, f32)> = ranked
            .iter()
            .filter(|(s, _)| self.steps[*s as usize].tokens <= budget)
            .cloned()
            .collect();
        // Each candidate's cosine to the closest packed step, brought up to date lazily: only
        // against the steps packed since the candidate was last looked at.
        let mut redundancy: Vec<(f32, usize)> = vec![(0.0, 0); pool.len()];
        while !pool.is_empty() && left > 0 {
            let mut best: Option<(usize, f32, f32)> = None;
            for (i, (s, base)) in pool.iter().enumerate() {
                let step = &self.steps[*s as usize];
                if step.tokens > left {
                    continue;
                }
                let (mut red, seen) = redundancy[i];
                for c in &chosen_ids[seen..] {
                    red = red.max(dot(&self.steps[*c as usize].vector, &step.vector));
                }
                redundancy[i] = (red, chosen_ids.len());
                let gain = terms
                    .iter()
                    .filter(|(t, _)| step.terms.contains(t) && !covered.contains(t))
                    .count() as f32
                    / total_terms;
                let score =
                    base - self.params.novelty_penalty * red + self.params.coverage_bonus * gain;
                if best.is_none_or(|(_, b, _)| score > b) {
                    best = Some((i, score, red));
                }
                // Candidates are sorted; once the base alone cannot win, stop looking.
                if let Some((_, b, _)) = best
                    && base + self.params.coverage_bonus < b
                {
                    break;
                }
            }
            let Some((i, score, red)) = best else {
                break;
            };
            let (s, _) = pool.remove(i);
            redundancy.remove(i);
            let step = &self.steps[s as usize];
            let duplicate =
                red >= self.params.duplicate_cosine || chosen.iter().any(|c| c.line == step.line);
            if duplicate {
                continue;
            }
            left -= step.tokens;
            for t in &step.terms {
                if !covered.contains(t) {
                    covered.push(*t);
                }
            }
            chosen_ids.push(s);
            chosen.push(self.packed(s, score));
        }
        chosen
    }

    /// Packs in the given order (recency): each line that fits.
    fn pack_in_order(&self, ranked: &[(u32, f32)], budget: usize) -> Vec<Packed> {
        let mut left = budget;
        let mut out = Vec::new();
        for (s, score) in ranked {
            let step = &self.steps[*s as usize];
            if step.tokens <= left {
                left -= step.tokens;
                out.push(self.packed(*s, *score));
            }
            if left == 0 {
                break;
            }
        }
        out
    }

    fn packed(&self, s: u32, score: f32) -> Packed {
        let step = &self.steps[s as usize];
        Packed {
            position: s as usize + 1,
            score,
            tokens: step.tokens,
            line: step.line.clone(),
            units: step
                .units
                .iter()
                .map(|u| {
                    let unit = &self.units[*u as usize];
                    format!("{}:{}", unit.view.as_str(), unit.label)
                })
                .collect(),
            step: step.entry.clone(),
        }
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
