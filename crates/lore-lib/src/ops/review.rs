//! Operations on the review queue: what capture suggested (signals of 0.70–0.95 confidence),
//! listed, accepted as memories, edited, or rejected.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation};
use crate::capture::{Capture, Suggestion, SuggestionEdit};
use crate::error::Result;
use crate::memory::Written;

/// List the suggestions waiting for review.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewList {}

/// The queue.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ReviewQueue {
    /// Suggestions, oldest first.
    pub suggestions: Vec<Suggestion>,
}

impl Operation for ReviewList {
    const NAME: &'static str = "review_list";
    const TITLE: &'static str = "Review queue";
    const DESCRIPTION: &'static str = "The capture suggestions waiting for review (signals of \
        0.70–0.95 confidence found in sessions): id, namespace, summary, confidence.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ReviewQueue;

    fn run(self, env: &mut Env<'_>) -> Result<ReviewQueue> {
        Ok(ReviewQueue {
            suggestions: Capture::new(env.lore).pending()?,
        })
    }
}

/// Changes to a suggestion before it is accepted or kept.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewChange {
    /// The suggestion's id (or a unique prefix).
    pub id: String,
    /// Another namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Another summary.
    #[serde(default)]
    pub summary: Option<String>,
    /// Another body.
    #[serde(default)]
    pub body: Option<String>,
}

impl ReviewChange {
    fn edit(&self) -> SuggestionEdit {
        SuggestionEdit {
            namespace: self.namespace.clone(),
            summary: self.summary.clone(),
            body: self.body.clone(),
        }
    }
}

/// Accept a suggestion: write it as a memory (edited if asked) and drop it from the queue.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewAccept {
    /// The suggestion and any changes.
    #[serde(flatten)]
    pub change: ReviewChange,
}

impl Operation for ReviewAccept {
    const NAME: &'static str = "review_accept";
    const TITLE: &'static str = "Accept a suggestion";
    const DESCRIPTION: &'static str = "Write a queued suggestion as a memory (with another \
        namespace, summary or body if given) and remove it from the queue.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = Written;

    fn run(self, env: &mut Env<'_>) -> Result<Written> {
        let write = env.write.clone();
        Capture::new(env.lore).accept(&self.change.id, &self.change.edit(), &write)
    }
}

/// Edit a suggestion and leave it queued.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewEdit {
    /// The suggestion and the changes.
    #[serde(flatten)]
    pub change: ReviewChange,
}

impl Operation for ReviewEdit {
    const NAME: &'static str = "review_edit";
    const TITLE: &'static str = "Edit a suggestion";
    const DESCRIPTION: &'static str = "Change a queued suggestion's namespace, summary or body \
        and leave it in the queue.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Suggestion;

    fn run(self, env: &mut Env<'_>) -> Result<Suggestion> {
        Capture::new(env.lore).edit(&self.change.id, &self.change.edit())
    }
}

/// Drop a suggestion.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewReject {
    /// The suggestion's id (or a unique prefix).
    pub id: String,
}

impl Operation for ReviewReject {
    const NAME: &'static str = "review_reject";
    const TITLE: &'static str = "Reject a suggestion";
    const DESCRIPTION: &'static str = "Drop a queued suggestion without writing it.";
    const EFFECT: Effect = Effect::Destructive { idempotent: false };
    type Output = Suggestion;

    fn run(self, env: &mut Env<'_>) -> Result<Suggestion> {
        Capture::new(env.lore).reject(&self.id)
    }
}
