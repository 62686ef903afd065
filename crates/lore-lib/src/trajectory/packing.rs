//! Filling the token budget: greedy packing with a novelty penalty and a coverage bonus
//! (duplicates dropped), packing in order for recency, and what a query returns.

use schemars::JsonSchema;
use serde::Serialize;

use super::Strategy;
use super::index::TrajectoryIndex;
use crate::error::Result;
use crate::steps::TrajectoryStep;

/// A step chosen for the context.
#[derive(Clone, Debug, Serialize, JsonSchema)]
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
#[derive(Clone, Debug, Serialize, JsonSchema)]
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

impl TrajectoryIndex {
    /// Greedy packing: the best remaining candidate after a novelty penalty (cosine to what is
    /// packed) and a coverage bonus (query terms it adds); duplicates dropped; lines that do not
    /// fit skipped.
    pub(super) fn pack(
        &self,
        ranked: &[(u32, f32)],
        terms: &[(u32, f32)],
        budget: usize,
    ) -> Result<Vec<Packed>> {
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
                    red = red.max(self.vector(*c as usize).dot_step(self.vector(*s as usize)));
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
            let duplicate = red >= self.params.duplicate_cosine || {
                let line = self.line_of(s)?;
                chosen.iter().any(|c| c.line == line)
            };
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
            chosen.push(self.packed(s, score)?);
        }
        Ok(chosen)
    }

    /// Packs in the given order (recency): each line that fits.
    pub(super) fn pack_in_order(
        &self,
        ranked: &[(u32, f32)],
        budget: usize,
    ) -> Result<Vec<Packed>> {
        let mut left = budget;
        let mut out = Vec::new();
        for (s, score) in ranked {
            let step = &self.steps[*s as usize];
            if step.tokens <= left {
                left -= step.tokens;
                out.push(self.packed(*s, *score)?);
            }
            if left == 0 {
                break;
            }
        }
        Ok(out)
    }

    fn packed(&self, s: u32, score: f32) -> Result<Packed> {
        let step = &self.steps[s as usize];
        Ok(Packed {
            position: s as usize + 1,
            score,
            tokens: step.tokens,
            line: self.line_of(s)?.into_owned(),
            units: step
                .units
                .iter()
                .map(|u| {
                    let unit = &self.units[*u as usize];
                    format!("{}:{}", unit.view.as_str(), unit.label)
                })
                .collect(),
            step: self.step_of(s)?,
        })
    }
}
