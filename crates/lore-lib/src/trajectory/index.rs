//! Building the index step by step: each step is embedded once and joins its units (entities and
//! files, tool, subgoal, a similarity unit), the lexical postings and the implicit summary tree.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use super::Params;
use super::units::{Unit, View};
use crate::embed::{Quantized, SharedEmbedder, StaticEmbedder, dot_i8};
use crate::error::Result;
use crate::steps::{Step, TrajectoryStep};
use crate::tokens::estimate_tokens;

/// A step as the index keeps it: parsed when it was pushed; when the index was read back from
/// its kept file, only its position there (its id, JSON and line are read when asked), or, once
/// the whole index was read back, its id, JSON and packed line as ranges of one shared text (the
/// JSON parsed only when the step is returned).
pub(super) enum StepEntry {
    /// Pushed in this process.
    Parsed {
        entry: Box<TrajectoryStep>,
        line: String,
    },
    /// Read back: committed on `branch`.
    Stored {
        text: Arc<str>,
        id: Range<usize>,
        json: Range<usize>,
        line: Range<usize>,
        branch: Arc<str>,
    },
    /// Read back, its texts still in the kept file: committed on `branch`.
    Kept { position: u32, branch: Arc<str> },
}

impl StepEntry {
    /// The step's id (`None` while it is in the kept file).
    pub(super) fn id(&self) -> Option<&str> {
        match self {
            StepEntry::Parsed { entry, .. } => Some(&entry.step.id),
            StepEntry::Stored { text, id, .. } => Some(&text[id.clone()]),
            StepEntry::Kept { .. } => None,
        }
    }

    /// The line packed for the step (`None` while it is in the kept file).
    pub(super) fn line(&self) -> Option<&str> {
        match self {
            StepEntry::Parsed { line, .. } => Some(line),
            StepEntry::Stored { text, line, .. } => Some(&text[line.clone()]),
            StepEntry::Kept { .. } => None,
        }
    }

    /// The step's JSON, as persisted (`None` while it is in the kept file).
    pub(super) fn json(&self) -> Option<Result<std::borrow::Cow<'_, str>>> {
        match self {
            StepEntry::Parsed { entry, .. } => Some(
                serde_json::to_string(&entry.step)
                    .map(std::borrow::Cow::Owned)
                    .map_err(|e| crate::error::Error::Parse {
                        context: "persisting a trajectory step".into(),
                        message: e.to_string(),
                    }),
            ),
            StepEntry::Stored { text, json, .. } => {
                Some(Ok(std::borrow::Cow::Borrowed(&text[json.clone()])))
            }
            StepEntry::Kept { .. } => None,
        }
    }
}

/// A committed step read back from its JSON.
fn stored_step(json: &str, branch: &str) -> Result<TrajectoryStep> {
    Ok(TrajectoryStep {
        step: serde_json::from_str(json).map_err(|e| crate::error::Error::Parse {
            context: "a persisted trajectory step".into(),
            message: e.to_string(),
        })?,
        branch: branch.to_string(),
        committed: true,
    })
}

pub(super) struct Indexed {
    pub(super) entry: StepEntry,
    pub(super) tokens: usize,
    pub(super) terms: Vec<u32>,
    pub(super) units: Vec<u32>,
}

/// The cost of a packed line: its characters and a newline, at four per token.
fn line_tokens(line: &str) -> usize {
    estimate_tokens(line) + 1
}

/// Lower-cased alphanumeric words of two or more characters.
pub(super) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(|w| w.to_lowercase())
}

/// The embedder trajectory retrieval uses when none is given: the static model compiled into
/// lore, opened once per process.
///
/// Retrieval cannot do without vectors: unit centroids, the similarity view, the novelty penalty
/// and dropping near-duplicates are all cosines, so a lexical-only path would be another
/// algorithm, not the same one with less. The static model is always present (no download, no
/// load pause), so `--embedder none`, which asks for lexical recall of memories, still gets real
/// trajectory retrieval.
pub fn builtin_embedder() -> SharedEmbedder {
    static BUILTIN: OnceLock<SharedEmbedder> = OnceLock::new();
    BUILTIN
        .get_or_init(|| {
            // The table is compiled in and checked by the static model's tests; it cannot be
            // missing or damaged at run time.
            Arc::new(StaticEmbedder::builtin().expect("the compiled-in static model opens"))
        })
        .clone()
}

/// A step's vector as the index keeps it: `values[i] * scale ≈ v[i]`.
#[derive(Clone, Copy)]
pub(super) struct StepVector<'a> {
    values: &'a [i8],
    scale: f32,
}

impl StepVector<'_> {
    /// The dot product with a quantised query.
    pub(super) fn dot(self, q: &Quantized) -> f32 {
        dot_i8(self.values, &q.values) as f32 * self.scale * q.scale
    }

    /// The dot product with another step's vector.
    pub(super) fn dot_step(self, other: StepVector<'_>) -> f32 {
        dot_i8(self.values, other.values) as f32 * self.scale * other.scale
    }
}

/// Steps, their units and the summary tree, built incrementally.
pub struct TrajectoryIndex {
    pub(super) embedder: SharedEmbedder,
    pub(super) params: Params,
    pub(super) steps: Vec<Indexed>,
    /// Each step's vector quantised to `i8`, `dims` components each, in step order, and its
    /// scale in `scales`: one allocation for them all (one each cost a third of a `ctx recall`),
    /// and a quarter of the bytes (faulting in 10 MB of `f32`s was most of what remained).
    pub(super) vectors: Vec<i8>,
    pub(super) scales: Vec<f32>,
    pub(super) units: Vec<Unit>,
    pub(super) unit_keys: HashMap<(View, String), u32>,
    pub(super) similarity_of: Vec<Option<u32>>,
    pub(super) vocab: HashMap<String, u32>,
    pub(super) df: Vec<u32>,
    pub(super) postings: Vec<Vec<u32>>,
    pub(super) tree: Vec<Vec<Vec<f32>>>,
    pub(super) total: Vec<f32>,
    /// The parts still in the kept file the index was read from (words, postings, tree, step
    /// texts), read when asked.
    pub(super) stored: Option<super::persist::Stored>,
}

impl TrajectoryIndex {
    /// Step `i`'s vector.
    pub(super) fn vector(&self, i: usize) -> StepVector<'_> {
        let dims = self.embedder.id().dims;
        StepVector {
            values: &self.vectors[i * dims..(i + 1) * dims],
            scale: self.scales[i],
        }
    }

    /// An empty index. Without an embedder, the static model compiled into lore makes the
    /// vectors ([`builtin_embedder`]).
    pub fn new(embedder: Option<SharedEmbedder>, params: Params) -> TrajectoryIndex {
        let embedder = embedder.unwrap_or_else(builtin_embedder);
        TrajectoryIndex {
            embedder,
            params,
            steps: Vec::new(),
            vectors: Vec::new(),
            scales: Vec::new(),
            units: Vec::new(),
            unit_keys: HashMap::new(),
            similarity_of: Vec::new(),
            vocab: HashMap::new(),
            df: Vec::new(),
            postings: Vec::new(),
            tree: Vec::new(),
            total: Vec::new(),
            stored: None,
        }
    }

    /// The embedder that made the vectors.
    pub fn embedder(&self) -> &SharedEmbedder {
        &self.embedder
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

    /// Whether a step with this id is indexed.
    pub fn contains(&self, id: &str) -> Result<bool> {
        Ok(self.steps.iter().any(|s| s.entry.id() == Some(id)) || self.kept_has(id)?)
    }

    /// The line packed for step `s`.
    pub(super) fn line_of(&self, s: u32) -> Result<std::borrow::Cow<'_, str>> {
        match self.steps[s as usize].entry.line() {
            Some(line) => Ok(std::borrow::Cow::Borrowed(line)),
            None => Ok(self.texts_of(s)?.2),
        }
    }

    /// Step `s` as retrieval returns it.
    pub(super) fn step_of(&self, s: u32) -> Result<TrajectoryStep> {
        match &self.steps[s as usize].entry {
            StepEntry::Parsed { entry, .. } => Ok((**entry).clone()),
            StepEntry::Stored { branch, .. } | StepEntry::Kept { branch, .. } => {
                stored_step(&self.texts_of(s)?.1, branch)
            }
        }
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
        if !steps.is_empty() {
            self.read_whole()?;
        }
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
        self.read_whole()?;
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
        let terms = self.index_terms(id, &entry.step.search_text());
        let cap = self.params.membership_cap.max(1);
        let mut units = self.keyed_units(&entry.step, cap);
        let sim_unit = self.similarity_unit(&vector);
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
        // Exactly `dims` components, whatever the embedder gave (a zero vector scores nothing).
        let dims = self.embedder.id().dims;
        let mut padded = vector;
        padded.resize(dims, 0.0);
        let scale = Quantized::append(&padded, &mut self.vectors);
        self.scales.push(scale);
        self.steps.push(Indexed {
            tokens: line_tokens(&line),
            terms,
            units,
            entry: StepEntry::Parsed {
                entry: Box::new(entry),
                line,
            },
        });
    }

    /// The distinct terms of step `id`'s text, for the lexical score, with the document
    /// frequencies and postings updated.
    fn index_terms(&mut self, id: u32, text: &str) -> Vec<u32> {
        let mut terms: Vec<u32> = Vec::new();
        for w in words(text) {
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
        terms
    }

    /// The units a step's own keys name, in priority order, leaving room under the membership
    /// cap for a similarity unit: entities and files, tool, subgoal.
    fn keyed_units(&mut self, step: &Step, cap: usize) -> Vec<u32> {
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
        units
    }

    /// The similarity unit a step with `vector` joins: the closest not-full unit among those of
    /// recent steps, when close enough, else a new one.
    fn similarity_unit(&mut self, vector: &[f32]) -> u32 {
        let from = self
            .similarity_of
            .len()
            .saturating_sub(self.params.similarity_window);
        let mut best: Option<(u32, f32)> = None;
        // Recent steps mostly share a few units: each is scored once (the first occurrence
        // decides ties, as before).
        let mut scored: Vec<u32> = Vec::with_capacity(8);
        for u in self.similarity_of[from..].iter().flatten() {
            if scored.contains(u) {
                continue;
            }
            scored.push(*u);
            let unit = &self.units[*u as usize];
            if unit.members.len() >= self.params.similarity_max {
                continue;
            }
            let c = unit.cosine(vector);
            if best.is_none_or(|(_, b)| c > b) {
                best = Some((*u, c));
            }
        }
        match best {
            Some((u, c)) if c >= self.params.similarity_join => u,
            _ => {
                let label = format!("cluster {}", self.units.len());
                self.unit_for(View::Similarity, &label)
            }
        }
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
}
