//! The index as bytes, so a process can read back what an earlier one built instead of
//! embedding every step and joining it to its units again: steps (their JSON, packed line,
//! vector, terms and units), units, the similarity history, the vocabulary with its document
//! frequencies and postings, the summary tree and the vector total. Read back, the index is the
//! same one (pushing more steps onto it gives what pushing them onto a fresh build gives).

use std::collections::HashMap;
use std::sync::Arc;

use super::Params;
use super::index::{Indexed, StepEntry, TrajectoryIndex};
use super::units::{Unit, View};
use crate::embed::SharedEmbedder;
use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"LORETRJ2";

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u32(n as u32);
    }
    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn text(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn u32s(&mut self, v: &[u32]) {
        self.len(v.len());
        for x in v {
            self.u32(*x);
        }
    }
    fn f32s(&mut self, v: &[f32]) {
        self.len(v.len());
        for x in v {
            self.f32(*x);
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

fn damaged(what: &str) -> Error {
    Error::Parse {
        context: "a persisted trajectory index".into(),
        message: format!("damaged or truncated at {what}"),
    }
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| damaged("a field"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn len(&mut self) -> Result<usize> {
        Ok(self.u32()? as usize)
    }
    fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_bits(self.u32()?))
    }
    fn text(&mut self) -> Result<&'a str> {
        let n = self.len()?;
        std::str::from_utf8(self.take(n)?).map_err(|_| damaged("a text"))
    }
    fn u32s(&mut self) -> Result<Vec<u32>> {
        let n = self.len()?;
        let b = self.take(n.checked_mul(4).ok_or_else(|| damaged("a list"))?)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    fn f32s(&mut self) -> Result<Vec<f32>> {
        let n = self.len()?;
        let b = self.take(n.checked_mul(4).ok_or_else(|| damaged("a vector"))?)?;
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

fn view_code(view: View) -> u32 {
    match view {
        View::Entity => 0,
        View::Tool => 1,
        View::Subgoal => 2,
        View::Similarity => 3,
    }
}

fn view_of(code: u32) -> Result<View> {
    Ok(match code {
        0 => View::Entity,
        1 => View::Tool,
        2 => View::Subgoal,
        3 => View::Similarity,
        _ => return Err(damaged("a unit's view")),
    })
}

impl TrajectoryIndex {
    /// The index as bytes ([`TrajectoryIndex::decode`] reads them back). Parameters and the
    /// embedder are not part of them: whoever keeps the bytes keys them by both.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut w = Writer(Vec::with_capacity(
            self.steps.len() * (self.embedder.id().dims * 4 + 512),
        ));
        w.0.extend_from_slice(MAGIC);
        w.len(self.steps.len());
        // The texts first, as one run (read back as one shared text), then each step's ends
        // of its id, JSON and line within it.
        let mut text = String::new();
        let mut ends: Vec<u32> = Vec::with_capacity(self.steps.len() * 3);
        for s in &self.steps {
            text.push_str(s.entry.id());
            ends.push(text.len() as u32);
            text.push_str(&s.entry.json()?);
            ends.push(text.len() as u32);
            text.push_str(s.entry.line());
            ends.push(text.len() as u32);
        }
        w.text(&text);
        w.u32s(&ends);
        for s in &self.steps {
            w.len(s.tokens);
            w.f32s(&s.vector);
            w.u32s(&s.terms);
            w.u32s(&s.units);
        }
        w.len(self.units.len());
        for u in &self.units {
            w.u32(view_code(u.view));
            w.text(&u.label);
            w.u32s(&u.members);
            w.f32s(&u.sum);
            w.f32(u.norm);
        }
        let similarity: Vec<u32> = self
            .similarity_of
            .iter()
            .map(|u| u.map_or(u32::MAX, |u| u))
            .collect();
        w.u32s(&similarity);
        let mut words: Vec<(&String, &u32)> = self.vocab.iter().collect();
        words.sort_by_key(|(_, t)| **t);
        w.len(words.len());
        for (word, _) in words {
            w.text(word);
        }
        w.u32s(&self.df);
        w.len(self.postings.len());
        for p in &self.postings {
            w.u32s(p);
        }
        w.len(self.tree.len());
        for level in &self.tree {
            w.len(level.len());
            for node in level {
                w.f32s(node);
            }
        }
        w.f32s(&self.total);
        Ok(w.0)
    }

    /// Reads back an index [`TrajectoryIndex::encode`] wrote with this embedder and these
    /// parameters; its steps are returned as committed on `branch`.
    pub fn decode(
        bytes: &[u8],
        embedder: Option<SharedEmbedder>,
        params: Params,
        branch: &str,
    ) -> Result<TrajectoryIndex> {
        let mut index = TrajectoryIndex::new(embedder, params);
        let mut r = Reader { bytes, at: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return Err(damaged("its header"));
        }
        let branch: Arc<str> = Arc::from(branch);
        let n = r.len()?;
        let text: Arc<str> = Arc::from(r.text()?);
        let ends = r.u32s()?;
        if ends.len() != n * 3
            || ends.windows(2).any(|w| w[0] > w[1])
            || ends.last().is_some_and(|e| *e as usize != text.len())
            || ends.iter().any(|e| !text.is_char_boundary(*e as usize))
        {
            return Err(damaged("the steps' texts"));
        }
        index.steps.reserve(n);
        let mut start = 0;
        for step_ends in ends.chunks_exact(3) {
            let [id, json, line] = [step_ends[0], step_ends[1], step_ends[2]].map(|e| e as usize);
            index.steps.push(Indexed {
                entry: StepEntry::Stored {
                    text: text.clone(),
                    id: start..id,
                    json: id..json,
                    line: json..line,
                    branch: branch.clone(),
                },
                tokens: r.len()?,
                vector: r.f32s()?,
                terms: r.u32s()?,
                units: r.u32s()?,
            });
            start = line;
        }
        let units = r.len()?;
        for id in 0..units {
            let view = view_of(r.u32()?)?;
            let label = r.text()?.to_string();
            index
                .unit_keys
                .insert((view, label.to_lowercase()), id as u32);
            index.units.push(Unit {
                view,
                label,
                members: r.u32s()?,
                sum: r.f32s()?,
                norm: r.f32()?,
            });
        }
        index.similarity_of = r
            .u32s()?
            .into_iter()
            .map(|u| (u != u32::MAX).then_some(u))
            .collect();
        let words = r.len()?;
        let mut vocab = HashMap::with_capacity(words.min(bytes.len()));
        for t in 0..words {
            vocab.insert(r.text()?.to_string(), t as u32);
        }
        index.vocab = vocab;
        index.df = r.u32s()?;
        let postings = r.len()?;
        for _ in 0..postings {
            index.postings.push(r.u32s()?);
        }
        let levels = r.len()?;
        for _ in 0..levels {
            let nodes = r.len()?;
            let mut level = Vec::with_capacity(nodes.min(bytes.len()));
            for _ in 0..nodes {
                level.push(r.f32s()?);
            }
            index.tree.push(level);
        }
        index.total = r.f32s()?;
        if r.at != bytes.len() || !index.is_consistent() {
            return Err(damaged("its end"));
        }
        Ok(index)
    }

    /// Whether every id the index refers to exists (what a damaged file would break first).
    fn is_consistent(&self) -> bool {
        let (steps, units, terms) = (
            self.steps.len() as u32,
            self.units.len() as u32,
            self.vocab.len() as u32,
        );
        self.df.len() == self.vocab.len()
            && self.postings.len() == self.vocab.len()
            && self.similarity_of.len() == self.steps.len()
            && self
                .steps
                .iter()
                .all(|s| s.units.iter().all(|u| *u < units) && s.terms.iter().all(|t| *t < terms))
            && self
                .units
                .iter()
                .all(|u| u.members.iter().all(|m| *m < steps))
            && self.postings.iter().flatten().all(|s| *s < steps)
            && self.similarity_of.iter().flatten().all(|u| *u < units)
    }
}
