//! Finding memories: one by id, id prefix or key; listings; ranked recall; memories that mention
//! a file. Every read goes through the caught-up index.

use super::Lore;
use crate::error::{Error, Result};
use crate::index::{Hit, ListFilter, RankOptions};
use crate::model::{Key, Memory, MemoryId};
use crate::store::layout;

impl Lore {
    /// Finds one memory by id, unique id prefix (≥ 4 characters), `namespace/key` or key.
    pub fn resolve(&mut self, query: &str) -> Result<(String, Memory)> {
        let query = query.trim();
        let mut found = Vec::new();
        if query.len() >= 4 && MemoryId::is_prefix_like(query) {
            found = self.read(|i| i.find_by_id_prefix(query))?;
            if found.len() > 1
                && let Some(exact) = found.iter().position(|(_, m)| m.id.as_str() == query)
            {
                found = vec![found.swap_remove(exact)];
            }
        }
        if found.is_empty() {
            let (ns, key) = match query.split_once('/') {
                Some((ns, key)) => (Some(ns), key),
                None => (None, query),
            };
            if Key::parse(key).is_ok() {
                let rows = self.read(|i| i.find_by_key(ns, key))?;
                // Keep only the holders of the key path when there are any.
                let holders: Vec<_> = rows
                    .iter()
                    .filter(|(p, _)| layout::name_from_path(p) == key)
                    .cloned()
                    .collect();
                found = if holders.is_empty() { rows } else { holders };
            }
        }
        match found.len() {
            0 => Err(Error::NotFound(query.to_string())),
            1 => Ok(found.remove(0)),
            _ => Err(Error::Ambiguous {
                query: query.to_string(),
                candidates: found
                    .iter()
                    .map(|(p, m)| format!("{} ({p})", m.id))
                    .collect(),
            }),
        }
    }

    /// [`Lore::resolve`], falling back to lore's history for the full id of a memory that is no
    /// longer at the tip (forgotten).
    pub(super) fn resolve_or_forgotten(&mut self, query: &str) -> Result<(String, Memory)> {
        match self.resolve(query) {
            Ok(found) => Ok(found),
            Err(Error::NotFound(q)) => self.find_forgotten(&q),
            Err(e) => Err(e),
        }
    }

    /// One memory.
    pub fn get(&mut self, query: &str) -> Result<Memory> {
        Ok(self.resolve(query)?.1)
    }

    /// Memories matching a filter.
    pub fn list(&mut self, filter: &ListFilter) -> Result<Vec<Memory>> {
        self.read(|i| i.list(filter))
    }

    /// Memories relevant to a query, ranked with the default options (hybrid when an embedder
    /// is set, else BM25; recency, namespace and status weights; near-duplicates collapsed).
    pub fn recall(&mut self, text: &str, filter: &ListFilter) -> Result<Vec<Hit>> {
        self.search(text, filter, &RankOptions::default(), false)
    }

    /// [`Lore::recall`] with explicit ranking options; `explain` fills in each hit's components.
    pub fn search(
        &mut self,
        text: &str,
        filter: &ListFilter,
        options: &RankOptions,
        explain: bool,
    ) -> Result<Vec<Hit>> {
        let read;
        let options = if options.read_time && options.time_window.is_none() {
            read = RankOptions {
                time_window: self.time_window(text, options.now),
                ..options.clone()
            };
            &read
        } else {
            options
        };
        let mut hits = self.read(|i| i.search(text, filter, options, explain))?;
        self.mark_contradicted(&mut hits)?;
        for h in &mut hits {
            h.scope = self.own_scope.label();
            h.project = self.own_scope.project();
        }
        Ok(hits)
    }

    /// Active memories that cite `path` or name it in their text, newest first.
    pub fn mentioning(&mut self, path: &str, limit: usize) -> Result<Vec<Memory>> {
        self.read(|i| i.mentioning(path, limit))
    }
}
