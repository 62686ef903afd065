//! The views that group steps (entity, tool, subgoal, similarity) and their units: each unit
//! keeps the sum of its members' vectors, so its centroid is current without a rebuild.

use schemars::JsonSchema;
use serde::Serialize;

use crate::embed::dot;

/// The views that group steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
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

pub(super) struct Unit {
    pub(super) view: View,
    pub(super) label: String,
    pub(super) members: Vec<u32>,
    pub(super) sum: Vec<f32>,
    pub(super) norm: f32,
}

impl Unit {
    pub(super) fn add(&mut self, step: u32, vector: &[f32]) {
        self.members.push(step);
        for (s, v) in self.sum.iter_mut().zip(vector) {
            *s += v;
        }
        self.norm = self.sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    }

    pub(super) fn cosine(&self, q: &[f32]) -> f32 {
        if self.norm == 0.0 {
            return 0.0;
        }
        dot(&self.sum, q) / self.norm
    }

    /// Cosine between the query and the unit's members centred on the trajectory's mean `m`
    /// (`q_m` = q·m, `mm` = |m|²): what the unit says beyond what every step says.
    pub(super) fn centred_cosine(&self, q: &[f32], m: &[f32], q_m: f32, mm: f32) -> f32 {
        let n = self.members.len() as f32;
        let num = dot(&self.sum, q) - n * q_m;
        let norm2 = self.norm * self.norm - 2.0 * n * dot(&self.sum, m) + n * n * mm;
        if norm2 <= 1e-12 {
            return 0.0;
        }
        num / norm2.sqrt()
    }
}
