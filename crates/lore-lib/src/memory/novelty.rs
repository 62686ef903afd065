//! The novelty check at write time: whether a new memory repeats one its namespace already
//! holds, and the checked write that refuses, supersedes or keeps a repeat.
//!
//! A repeat is the same summary (ignoring case and spacing) with a body that adds no different
//! specifics, or a vector near-duplicate with the same specifics (see [`crate::specifics`]).
//! The check runs against the index first; the write then re-checks, on the tip it lands on, the
//! memories written since the index's tip, so two writers of the same text never both land.

use std::collections::HashSet;

use git2::Oid;
use serde::Serialize;

use super::Lore;
use super::changes::changed_memories;
use super::write::{NewMemory, Written};
use crate::embed::{self, SharedEmbedder};
use crate::error::{Error, Result};
use crate::index::{Index, ListFilter, vectors};
use crate::model::{Memory, Status};
use crate::specifics::{normalized, same_specifics};
use crate::store::WriteContext;

/// What to do when a new memory repeats an existing one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Novelty {
    /// Refuse the write with [`Error::Duplicate`].
    #[default]
    Check,
    /// Supersede the existing memory with the new one.
    Upsert,
    /// Write it anyway.
    Force,
}

/// An existing memory that a new one repeats.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct DuplicateOf {
    /// The existing memory.
    pub memory: Memory,
    /// The same text, ignoring case and spacing (else the same summary with a body that adds
    /// no different specifics, or — with `similarity` — a near-duplicate).
    pub exact: bool,
    /// Cosine similarity of the two texts, for a near-duplicate found by vector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
}

/// The outcome of a checked write.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Remembered {
    /// The new memory.
    #[serde(flatten)]
    pub written: Written,
    /// The memory it superseded (with [`Novelty::Upsert`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<Written>,
}

/// Namespaces whose memories legitimately look alike (status notes): they need a closer match
/// to count as duplicates.
const STRICT_NOVELTY: &[(&str, f32)] = &[("progress", 0.97), ("reviews", 0.95)];

/// How many of the namespace's best BM25 matches for a bodiless memory's summary are compared
/// with it (without an embedder).
const SUMMARY_CANDIDATES: usize = 20;

/// How many of the namespace's memories nearest by vector are compared with the text.
const SIMILAR_CANDIDATES: usize = 20;

impl Lore {
    /// The existing memory a new one would repeat in its namespace, if any: the same summary
    /// (ignoring case and spacing) with a body that is empty, the same, or without different
    /// specifics; or vectors at or above the namespace's similarity threshold (the embedder's
    /// calibrated near-duplicate threshold, stricter for status-like namespaces) *with the same
    /// specifics* — numbers, names and identifiers (see [`crate::novelty`]). Superseded
    /// memories do not count.
    ///
    /// The check never scans the namespace: the same text, or the same summary without a body,
    /// is an indexed lookup; other bodies under the same summary are found among the memories
    /// the vector check compares (the namespace's 20 best BM25 matches for the text's rarest
    /// words), and without an embedder, for a new memory without a body, among the 20 best
    /// matches for its summary.
    pub fn find_duplicate(&mut self, new: &NewMemory) -> Result<Option<DuplicateOf>> {
        Ok(self.duplicate_in_index(new)?.0)
    }

    /// [`Lore::find_duplicate`] against the index, with the tip the index reflected before it
    /// was asked (the checked write compares what was written since that tip itself). In a
    /// handle that has not caught the index up yet (a fresh process), an index a few writes
    /// behind is asked as it is: catching it up in every writing process would cost more than
    /// the check; it is caught up first when it is far behind.
    fn duplicate_in_index(
        &mut self,
        new: &NewMemory,
    ) -> Result<(Option<DuplicateOf>, Option<Oid>)> {
        // A handle that has caught the index up already keeps it current: one write behind is
        // cheaper to index than to compare.
        let as_is = if self.last_catch_up.is_none() {
            self.duplicate_in_index_as_is(new)
        } else {
            Ok(None)
        };
        match as_is {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => {}
            // A damaged index is rebuilt by the read below.
            Err(e) if crate::index::is_corruption(&e) => {}
            Err(e) => return Err(e),
        }
        let embedder = self.embedder.clone();
        self.read(|i| duplicate_among_indexed(i, new, embedder.clone(), &|_| Ok(true)))
    }

    /// The check against the index without a catch-up, if it is at most
    /// [`UNINDEXED_CHANGES_ASKED_AS_IS`] memory files behind the store: a memory it holds whose
    /// file changed since is not taken as the repeat (the checked write compares the changed
    /// files themselves). `None`: the index must be caught up first.
    fn duplicate_in_index_as_is(
        &mut self,
        new: &NewMemory,
    ) -> Result<Option<(Option<DuplicateOf>, Option<Oid>)>> {
        let tip = self.store.tip()?;
        let embedder = self.embedder.clone();
        self.open_index()?;
        let store = &self.store;
        let Some(index) = self.index.as_ref() else {
            return Ok(None);
        };
        if !index.answers_for_its_tip()? {
            return Ok(None);
        }
        let indexed = index.indexed_tip()?;
        let changed: HashSet<String> = match indexed {
            _ if indexed == tip => HashSet::new(),
            Some(old) if store.has_commit(old) => {
                let changes = store.diff(Some(old), tip)?;
                if changes.len() > UNINDEXED_CHANGES_ASKED_AS_IS {
                    return Ok(None);
                }
                changes.into_iter().map(|c| c.path).collect()
            }
            _ => return Ok(None),
        };
        let unchanged = |m: &Memory| -> Result<bool> {
            if changed.is_empty() {
                return Ok(true);
            }
            let paths = index.paths_of(&[m.id.as_str()])?;
            Ok(paths.iter().all(|(_, path)| !changed.contains(path)))
        };
        duplicate_among_indexed(index, new, embedder, &unchanged).map(Some)
    }

    /// Remembers with the novelty check: a repeat of an existing memory is refused
    /// ([`Novelty::Check`]), supersedes it ([`Novelty::Upsert`]), or is written anyway
    /// ([`Novelty::Force`]). The check runs against the index, then again on the tip the write
    /// lands on for whatever was written since, so of two writers of the same text one lands
    /// and the other is refused (or supersedes it).
    pub fn remember_checked(
        &mut self,
        new: &NewMemory,
        ctx: &WriteContext,
        novelty: Novelty,
    ) -> Result<Remembered> {
        if novelty == Novelty::Force {
            return Ok(Remembered {
                written: self.remember(new, ctx)?,
                superseded: None,
            });
        }
        let (duplicate, indexed_tip) = self.duplicate_in_index(new)?;
        let outcome = match duplicate {
            Some(d) => Err(d),
            None => {
                let check = RepeatCheck::new(new, self.embedder.clone());
                self.remember_guarded(new, ctx, |snap| {
                    if snap.commit() == indexed_tip {
                        return Ok(None);
                    }
                    let changed = changed_memories(&self.store, indexed_tip, snap)?;
                    check.among(changed.into_iter().filter_map(|c| c.memory))
                })?
            }
        };
        match outcome {
            Ok(written) => Ok(Remembered {
                written,
                superseded: None,
            }),
            Err(d) if novelty == Novelty::Check => Err(duplicate_error(&d)),
            Err(d) => {
                // Found in the index as it is or among the files changed since: its path
                // follows from the record (the write re-reads it there, on the tip it lands on).
                let path = crate::store::layout::path_of(&d.memory);
                let done = self.supersede_at(path, d.memory, new, ctx)?;
                Ok(Remembered {
                    written: done.new,
                    superseded: Some(done.old),
                })
            }
        }
    }
}

/// How many memory files the index may be behind the store and still be asked as it is.
const UNINDEXED_CHANGES_ASKED_AS_IS: usize = 16;

/// The memory in `index` that `new` repeats (see [`Lore::find_duplicate`]), among those for
/// which `current` holds, with the tip the index reflects.
fn duplicate_among_indexed(
    index: &Index,
    new: &NewMemory,
    embedder: Option<SharedEmbedder>,
    current: &dyn Fn(&Memory) -> Result<bool>,
) -> Result<(Option<DuplicateOf>, Option<Oid>)> {
    let check = RepeatCheck::new(new, embedder.clone());
    let ns = new.namespace.as_str();
    let tip = index.indexed_tip()?;
    let first = |found: Vec<DuplicateOf>| -> Result<Option<DuplicateOf>> {
        for d in found {
            if current(&d.memory)? {
                return Ok(Some(d));
            }
        }
        Ok(None)
    };
    let mut same = index.same_content(ns, &new.summary, &new.body)?;
    if !check.body.is_empty() {
        same.extend(index.same_content(ns, &new.summary, "")?);
    }
    if let Some(d) = first(same.iter().filter_map(|m| check.same_text(m)).collect())? {
        return Ok((Some(d), tip));
    }
    if embedder.is_none() {
        if !check.body.is_empty() {
            return Ok((None, tip));
        }
        let filter = ListFilter {
            namespace: Some(ns.to_string()),
            limit: Some(SUMMARY_CANDIDATES),
            ..ListFilter::default()
        };
        let hits = index.recall(&new.summary, &filter)?;
        let found = first(
            hits.iter()
                .filter_map(|h| check.same_text(&h.memory))
                .collect(),
        )?;
        return Ok((found, tip));
    }
    let embedded = vectors::text_of(&new.summary, &new.tags, &new.body);
    let similar = index.similar(ns, &embedded, SIMILAR_CANDIDATES)?;
    let by_text = similar.iter().filter_map(|(m, _)| check.same_text(m));
    let by_vector = similar
        .iter()
        .filter_map(|(m, cos)| check.near_duplicate(m, *cos));
    Ok((first(by_text.chain(by_vector).collect())?, tip))
}

fn duplicate_error(d: &DuplicateOf) -> Error {
    Error::Duplicate {
        namespace: d.memory.namespace.to_string(),
        id: d.memory.id.to_string(),
        how: match d.similarity {
            Some(s) => format!("similarity {s:.2}: {:?}", d.memory.summary),
            None if d.exact => format!("same text: {:?}", d.memory.summary),
            None => format!("same summary: {:?}", d.memory.summary),
        },
    }
}

/// What a new memory is compared with, prepared once.
struct RepeatCheck<'a> {
    new: &'a NewMemory,
    summary: String,
    body: String,
    /// The text whose specifics must match for a near-duplicate.
    text: String,
    embedder: Option<SharedEmbedder>,
}

impl<'a> RepeatCheck<'a> {
    fn new(new: &'a NewMemory, embedder: Option<SharedEmbedder>) -> RepeatCheck<'a> {
        RepeatCheck {
            new,
            summary: normalized(&new.summary),
            body: normalized(&new.body),
            text: format!("{}\n{}", new.summary, new.body),
            embedder,
        }
    }

    fn counts(&self, m: &Memory) -> bool {
        m.namespace.as_str() == self.new.namespace && m.status != Status::Superseded
    }

    /// The text rule: the same summary, and a body that is the same, empty (it adds nothing),
    /// or carries the same specifics.
    fn same_text(&self, m: &Memory) -> Option<DuplicateOf> {
        if !self.counts(m) || normalized(&m.summary) != self.summary {
            return None;
        }
        let exact = normalized(&m.body) == self.body;
        let repeat = exact || self.body.is_empty() || same_specifics(&self.new.body, &m.body);
        repeat.then(|| DuplicateOf {
            memory: m.clone(),
            exact,
            similarity: None,
        })
    }

    /// The vector rule: similar at or above the namespace's threshold, with the same specifics.
    fn near_duplicate(&self, m: &Memory, cosine: f32) -> Option<DuplicateOf> {
        let embedder = self.embedder.as_ref()?;
        let near = self.counts(m)
            && cosine >= threshold(embedder, &self.new.namespace)
            && same_specifics(&self.text, &format!("{}\n{}", m.summary, m.body));
        near.then(|| DuplicateOf {
            memory: m.clone(),
            exact: false,
            similarity: Some(cosine),
        })
    }

    /// The first of `memories` (written since the index's tip) that this one repeats, by text,
    /// then by vector (best chunk, as the index compares).
    fn among(&self, memories: impl Iterator<Item = Memory>) -> Result<Option<DuplicateOf>> {
        let candidates: Vec<Memory> = memories.filter(|m| self.counts(m)).collect();
        if let Some(d) = candidates.iter().find_map(|m| self.same_text(m)) {
            return Ok(Some(d));
        }
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        if candidates.is_empty() {
            return Ok(None);
        }
        let text = vectors::text_of(&self.new.summary, &self.new.tags, &self.new.body);
        let probe = embedder
            .embed(&[text.as_str()])?
            .pop()
            .ok_or_else(|| Error::Embedder {
                message: "the embedder returned no vector".into(),
            })?;
        for m in candidates {
            let chunks = embed::chunks(&vectors::embedding_text(&m), embedder.chunking());
            let texts: Vec<&str> = chunks.iter().map(String::as_str).collect();
            let best = embedder
                .embed(&texts)?
                .iter()
                .map(|v| embed::dot(&probe, v))
                .fold(f32::MIN, f32::max);
            if let Some(d) = self.near_duplicate(&m, best) {
                return Ok(Some(d));
            }
        }
        Ok(None)
    }
}

/// The namespace's near-duplicate threshold: the embedder's, stricter for status-like
/// namespaces.
fn threshold(embedder: &SharedEmbedder, namespace: &str) -> f32 {
    STRICT_NOVELTY
        .iter()
        .find(|(n, _)| *n == namespace)
        .map(|(_, t)| t.max(embedder.near_duplicate()))
        .unwrap_or_else(|| embedder.near_duplicate())
}

#[cfg(test)]
mod tests {
    use super::threshold;

    #[test]
    fn status_like_namespaces_need_a_closer_match_to_count_as_duplicates() {
        let embedder = crate::trajectory::builtin_embedder();
        let calibrated = embedder.near_duplicate();
        assert!(calibrated < 0.95, "{calibrated}");
        assert_eq!(threshold(&embedder, "learnings"), calibrated);
        assert_eq!(threshold(&embedder, "decisions"), calibrated);
        assert_eq!(threshold(&embedder, "progress"), 0.97);
        assert_eq!(threshold(&embedder, "reviews"), 0.95);
    }
}
