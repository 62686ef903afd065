//! The merge preview: what merging one context branch into another would do (the roadmap and
//! metadata merged three-way, the conflicts, the steps that would come over), without writing.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::Serialize;

use super::files::{read_segments, text_of};
use super::merge::{merge_base, merge_metadata, merge_roadmap};
use super::{METADATA_FILE, ROADMAP_FILE, Resolution, Workspace};
use crate::error::Result;

/// What a merge of `from` into `into` would do.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MergePreview {
    /// The branch merged into.
    pub into: String,
    /// The branch merged.
    pub from: String,
    /// Nothing to merge: `into` already has everything `from` has.
    pub up_to_date: bool,
    /// Whether the branches share history (without it, every difference conflicts).
    pub shared_history: bool,
    /// The roadmap as the merge would write it (with conflict markers where it conflicts).
    pub roadmap: String,
    /// The metadata as the merge would write it (the current side where it conflicts).
    pub metadata: String,
    /// The conflicts that would refuse the merge.
    pub conflicts: Vec<String>,
    /// Committed steps of `from` that `into` does not have.
    pub incoming_steps: usize,
    /// Steps logged on `from` but not committed (they would not come over).
    pub uncommitted_left: usize,
}

impl Workspace<'_> {
    /// Previews merging `source` into the current (or given) branch.
    pub fn merge_preview(&self, source: &str, into: Option<&str>) -> Result<MergePreview> {
        let (source, target, source_tip) = self.merge_branches(source, into)?;
        let target_tip = self
            .tip(&target)?
            .ok_or_else(|| self.unknown_branch(&target))?;
        let repo = self.store.repo();
        let source_snap = self.store.snapshot(Some(source_tip))?;
        let target_snap = self.store.snapshot(Some(target_tip))?;
        let uncommitted_left = self.uncommitted(&source)?.items.len();
        let up_to_date =
            target_tip == source_tip || repo.graph_descendant_of(target_tip, source_tip)?;
        let base = merge_base(repo, target_tip, source_tip)?;
        let base_snap = self.store.snapshot(base)?;
        let mut conflicts = Vec::new();
        let mut resolved = Vec::new();
        let ours_roadmap = text_of(&target_snap, ROADMAP_FILE)?;
        let ours_metadata = text_of(&target_snap, METADATA_FILE)?;
        let (roadmap, metadata) = if up_to_date {
            (ours_roadmap, ours_metadata)
        } else {
            (
                merge_roadmap(
                    &text_of(&base_snap, ROADMAP_FILE)?,
                    &ours_roadmap,
                    &text_of(&source_snap, ROADMAP_FILE)?,
                    &Resolution::Refuse,
                    &mut conflicts,
                    &mut resolved,
                )?,
                merge_metadata(
                    &text_of(&base_snap, METADATA_FILE)?,
                    &ours_metadata,
                    &text_of(&source_snap, METADATA_FILE)?,
                    &Resolution::Refuse,
                    &mut conflicts,
                    &mut resolved,
                )?,
            )
        };
        let have: HashSet<String> = read_segments(&target_snap)?
            .into_iter()
            .map(|s| s.id)
            .collect();
        let incoming_steps = if up_to_date {
            0
        } else {
            read_segments(&source_snap)?
                .iter()
                .filter(|s| !have.contains(&s.id))
                .count()
        };
        Ok(MergePreview {
            into: target,
            from: source,
            up_to_date,
            shared_history: base.is_some(),
            roadmap,
            metadata,
            conflicts,
            incoming_steps,
            uncommitted_left,
        })
    }
}
