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
//!
//! Where each part lives: `units.rs` (the views and their units), `index.rs` (building the index
//! step by step), `strategies.rs` (scoring a query, per strategy), `packing.rs` (filling the
//! budget and what a query returns), `persist.rs` (the index kept in a SQLite file and read
//! back part by part). The seeded benchmark is in the `lore-bench` crate.

mod index;
mod packing;
mod persist;
mod strategies;
mod units;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{Error, Result};

pub use index::{TrajectoryIndex, builtin_embedder};
pub use packing::{Packed, Recalled};
pub use persist::{KeptFile, KeptSet, is_kept_file_failure};
pub use units::View;

/// Retrieval strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
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

/// Retrieval parameters. The defaults are the documented ones (docs/trajectories.md).
#[derive(Clone, Debug, Serialize, JsonSchema)]
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
