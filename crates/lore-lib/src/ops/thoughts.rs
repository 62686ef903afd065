//! Operations on reasoning trees: add a thought, rescore it, mark its outcome, finish a session
//! (best path and lesson), search the history, replay a node, diff two, bundle sessions, and the
//! sequential-thinking interface.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation};
use crate::error::{Error, Result};
use crate::memory::Written;
use crate::secrets::SecretReport;
use crate::thoughts::bundle::{self, BundleReport};
use crate::thoughts::index::ThoughtIndex;
use crate::thoughts::read::{self, DiffLine};
use crate::thoughts::search::{self, OutcomeFilter, RankWeights, ThoughtHit, ThoughtQuery};
use crate::thoughts::write::{self, Lesson, NewThought};
use crate::thoughts::{Outcome, Scores, ThoughtNode, short};

/// The similarity at and above which a hit is flagged as a near-duplicate.
pub const DEFAULT_COPY_THRESHOLD: f64 = 0.8;

fn default_limit() -> usize {
    10
}

fn default_threshold() -> f64 {
    DEFAULT_COPY_THRESHOLD
}

fn default_band() -> f64 {
    0.25
}

/// How many free-text candidates (by BM25) a search considers.
const SEARCH_CANDIDATES: usize = 50;

/// The session a request names, else the writer's, else `default`.
fn session_of(env: &Env<'_>, given: Option<&str>, fallback: &str) -> String {
    given
        .map(str::to_string)
        .or_else(|| env.write.session.clone())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| fallback.to_string())
}

fn resolve(env: &Env<'_>, id: &str) -> Result<(ThoughtIndex, git2::Oid)> {
    let index = ThoughtIndex::open(env.lore.store())?;
    let oid = index.resolve(id)?;
    Ok((index, oid))
}

/// Add a thought to a reasoning tree.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkAdd {
    /// The reasoning session (default: the parent's, else the writer's session, else
    /// `default`).
    #[serde(default)]
    pub session: Option<String>,
    /// The parent thought's id or unique prefix (none: a root thought).
    #[serde(default)]
    pub parent: Option<String>,
    /// The thought.
    pub text: String,
    /// The combined score in 0..=1 (default: the mean of the components, else 0.5).
    #[serde(default)]
    pub score: Option<f64>,
    /// Named score components, each in 0..=1.
    #[serde(default)]
    pub components: BTreeMap<String, f64>,
    /// The tool calls and observations that led to it (any JSON values).
    #[serde(default)]
    pub trace: Vec<serde_json::Value>,
    /// The model behind the agent.
    #[serde(default)]
    pub model: Option<String>,
    /// How long producing it took, in milliseconds.
    #[serde(default)]
    pub elapsed_ms: Option<u64>,
}

/// A thought as written.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ThoughtAdded {
    /// The thought's id (its commit).
    pub id: String,
    /// Its session.
    pub session: String,
    /// Its parent.
    pub parent: Option<String>,
    /// Its depth.
    pub depth: u32,
    /// Its combined score.
    pub score: f64,
    /// The ledger commit that recorded it.
    pub ledger: String,
    /// What the secret scanner found in the thought and did, when it found anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<SecretReport>,
}

impl Operation for ThinkAdd {
    const NAME: &'static str = "think_add";
    const TITLE: &'static str = "Add a thought";
    const DESCRIPTION: &'static str = "Add a scored thought to a reasoning tree: a commit whose \
        parent is its parent thought (siblings are branches), holding the text, scores, trace \
        and metadata, recorded on refs/lore/thoughts/<session>.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = ThoughtAdded;

    fn run(self, env: &mut Env<'_>) -> Result<ThoughtAdded> {
        let scores = Scores::new(self.components, self.score)?;
        let parent = match &self.parent {
            Some(p) => Some(resolve(env, p)?.1),
            None => None,
        };
        let parent_session = match parent {
            Some(p) => Some(read::metadata(env.lore.store(), p)?.session),
            None => None,
        };
        let session = self
            .session
            .or(parent_session)
            .unwrap_or_else(|| session_of(env, None, "default"));
        let added = write::add_thought(
            env.lore.store(),
            &NewThought {
                session,
                parent,
                text: self.text,
                scores: scores.clone(),
                trace: self.trace,
                model: self.model,
                elapsed_ms: self.elapsed_ms,
                ..NewThought::default()
            },
            &env.write,
        )?;
        Ok(ThoughtAdded {
            id: added.id.to_string(),
            session: added.metadata.session,
            parent: parent.map(|p| p.to_string()),
            depth: added.metadata.depth,
            score: scores.combined,
            ledger: added.ledger.to_string(),
            secrets: added.secrets,
        })
    }
}

/// Rescore a thought.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkScore {
    /// The thought's id or unique prefix.
    pub id: String,
    /// The new combined score in 0..=1 (default: the mean of the components).
    #[serde(default)]
    pub score: Option<f64>,
    /// The new score components, each in 0..=1.
    #[serde(default)]
    pub components: BTreeMap<String, f64>,
}

/// A thought's new scores.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ThoughtScored {
    /// The thought's id.
    pub id: String,
    /// Its session.
    pub session: String,
    /// The scores now in force.
    pub scores: Scores,
}

impl Operation for ThinkScore {
    const NAME: &'static str = "think_score";
    const TITLE: &'static str = "Rescore a thought";
    const DESCRIPTION: &'static str = "Replace a thought's current scores: a new scored version \
        on refs/lore/scores/<session>, the newest in force (scores.json keeps the first).";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = ThoughtScored;

    fn run(self, env: &mut Env<'_>) -> Result<ThoughtScored> {
        let scores = Scores::new(self.components, self.score)?;
        let (_, id) = resolve(env, &self.id)?;
        let meta = write::rescore(env.lore.store(), id, &scores, &env.write)?;
        Ok(ThoughtScored {
            id: id.to_string(),
            session: meta.session,
            scores,
        })
    }
}

/// Mark a thought's outcome.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkOutcome {
    /// The thought's id or unique prefix.
    pub id: String,
    /// `success` or `failed`.
    pub outcome: Outcome,
}

/// The outcome as recorded.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct OutcomeMarked {
    /// The thought's id.
    pub id: String,
    /// Its session.
    pub session: String,
    /// The outcome.
    pub outcome: Outcome,
    /// The ref recording it.
    #[serde(rename = "ref")]
    pub refname: String,
}

impl Operation for ThinkOutcome {
    const NAME: &'static str = "think_outcome";
    const TITLE: &'static str = "Mark a thought's outcome";
    const DESCRIPTION: &'static str = "Mark a thought success or failed: a ref \
        refs/lore/outcomes/<session>/success_<id> or failed_<id> (the newer mark counts).";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = OutcomeMarked;

    fn run(self, env: &mut Env<'_>) -> Result<OutcomeMarked> {
        let (_, id) = resolve(env, &self.id)?;
        let (refname, meta) =
            write::mark_outcome_by(env.lore.store(), id, self.outcome, &env.write)?;
        Ok(OutcomeMarked {
            id: id.to_string(),
            session: meta.session,
            outcome: self.outcome,
            refname,
        })
    }
}

/// Finish a reasoning session.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkDone {
    /// The session (default: the writer's session, else `default`).
    #[serde(default)]
    pub session: Option<String>,
    /// The best thought (default: the best-scored success, else the best-scored leaf).
    #[serde(default)]
    pub best: Option<String>,
    /// The final answer, kept in done.json (and kept out of the lesson).
    #[serde(default)]
    pub answer: Option<String>,
    /// The lesson's topic: a key (`a-z 0-9 -`); one lesson per topic.
    #[serde(default)]
    pub topic: Option<String>,
    /// The lesson: answer-free advice for the next attempt at problems like this one.
    #[serde(default)]
    pub lesson: Option<String>,
}

/// A finished session.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SessionDone {
    /// The session.
    pub session: String,
    /// The best thought, now merged into the session's ledger and at `best`.
    pub best: String,
    /// The lesson as written (a keyed memory in `lessons`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lesson: Option<Written>,
}

impl Operation for ThinkDone {
    const NAME: &'static str = "think_done";
    const TITLE: &'static str = "Finish a reasoning session";
    const DESCRIPTION: &'static str = "Finish a session: merge the best path into its ledger, \
        point refs/lore/outcomes/<session>/best at it, and write an answer-free lesson as the \
        keyed memory lessons/<topic> (so contradictory lessons on one topic conflict on merge).";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = SessionDone;

    fn run(self, env: &mut Env<'_>) -> Result<SessionDone> {
        let session = session_of(env, self.session.as_deref(), "default");
        let index = ThoughtIndex::open(env.lore.store())?;
        let best = match &self.best {
            Some(b) => index.resolve(b)?,
            None => index.best_candidate(&session)?.ok_or_else(|| {
                Error::ThoughtNotFound(format!("reasoning session {session:?} has no thoughts"))
            })?,
        };
        let lesson = match (self.topic, self.lesson) {
            (Some(topic), Some(text)) => Some(Lesson { topic, text }),
            (None, None) => None,
            _ => {
                return Err(Error::Invalid {
                    what: "lesson",
                    value: String::new(),
                    reason: "a lesson needs both its topic and its text".into(),
                });
            }
        };
        let (finished, written) = write::finish(
            env.lore,
            &session,
            best,
            self.answer.as_deref(),
            lesson.as_ref(),
            &env.write.clone(),
        )?;
        Ok(SessionDone {
            session,
            best: finished.best,
            lesson: written,
        })
    }
}

/// Search the reasoning history.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkSearch {
    /// Free text: thoughts sharing its words are candidates, and each hit's similarity to it is
    /// shown.
    #[serde(default)]
    pub query: Option<String>,
    /// Keywords every hit must contain.
    #[serde(default)]
    pub grep: Option<String>,
    /// A string the hit added or removed relative to its parent (like `git log -S`).
    #[serde(default)]
    pub pickaxe: Option<String>,
    /// Only this outcome.
    #[serde(default)]
    pub outcome: Option<OutcomeFilter>,
    /// Only this session.
    #[serde(default)]
    pub session: Option<String>,
    /// Only the open frontier: leaves of unfinished sessions not marked failed.
    #[serde(default)]
    pub frontier: bool,
    /// How many hits (default 10).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// The ranking's weights (ρ = 0.7·score + 0.2·outcome + 0.1·recency by default).
    #[serde(default)]
    pub weights: Option<RankWeights>,
    /// The copyability threshold: a hit at least this similar is flagged (default 0.8).
    #[serde(default = "default_threshold")]
    pub copy_threshold: f64,
    /// With free text: how far below the most similar candidate a thought may be and still be
    /// ranked (default 0.25); the rest are not relevant enough.
    #[serde(default = "default_band")]
    pub relevance_band: f64,
}

impl Default for ThinkSearch {
    fn default() -> Self {
        ThinkSearch {
            query: None,
            grep: None,
            pickaxe: None,
            outcome: None,
            session: None,
            frontier: false,
            limit: default_limit(),
            weights: None,
            copy_threshold: DEFAULT_COPY_THRESHOLD,
            relevance_band: default_band(),
        }
    }
}

/// What a search found.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ThoughtHits {
    /// The hits, best ρ first.
    pub hits: Vec<ThoughtHit>,
    /// The copyability threshold used.
    pub copy_threshold: f64,
}

impl Operation for ThinkSearch {
    const NAME: &'static str = "think_search";
    const TITLE: &'static str = "Search reasoning history";
    const DESCRIPTION: &'static str = "Search earlier thoughts: free text, keywords (grep), \
        content added or removed (pickaxe), outcome, session, the open frontier; ranked by \
        ρ = 0.7·score + 0.2·outcome + 0.1·recency among the thoughts most similar to the \
        free text. Each hit shows its similarity to the query; \
        near_duplicate means the earlier answer may apply.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ThoughtHits;

    fn run(self, env: &mut Env<'_>) -> Result<ThoughtHits> {
        let threshold = self.copy_threshold;
        if !(threshold.is_finite() && (0.0..=1.0).contains(&threshold)) {
            return Err(Error::Invalid {
                what: "copy_threshold",
                value: threshold.to_string(),
                reason: "a similarity from 0 to 1".into(),
            });
        }
        let index = ThoughtIndex::open(env.lore.store())?;
        let query = ThoughtQuery {
            text: self.query.clone(),
            grep: self.grep.clone(),
            pickaxe: self.pickaxe,
            outcome: self.outcome,
            session: self.session,
            frontier: self.frontier,
            limit: self.limit,
            candidates: SEARCH_CANDIDATES,
            weights: self.weights.unwrap_or_default(),
            now: env.write.now,
        };
        let mut hits = index.search(&query)?;
        let embedder = env.lore.embedder();
        match (self.query, self.grep) {
            (Some(text), _) if !text.trim().is_empty() => {
                hits = search::rank_in_band(
                    hits,
                    &text,
                    embedder,
                    threshold,
                    self.relevance_band,
                    self.limit,
                )?;
            }
            (_, Some(words)) => search::with_similarity(&mut hits, &words, embedder, threshold)?,
            _ => {}
        }
        Ok(ThoughtHits {
            hits,
            copy_threshold: threshold,
        })
    }
}

/// Replay a thought: the full state at it, from its id alone.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkReplay {
    /// The thought's id or unique prefix.
    pub id: String,
    /// Also write the path into this (empty or new) directory: one directory per node.
    #[serde(default)]
    pub into: Option<PathBuf>,
}

/// The path from the root to a thought.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Replayed {
    /// The nodes, root first.
    pub path: Vec<ThoughtNode>,
    /// The directories written, when materialised.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<String>,
}

impl Operation for ThinkReplay {
    const NAME: &'static str = "think_replay";
    const TITLE: &'static str = "Replay a thought";
    const DESCRIPTION: &'static str = "The full state at a thought from its id alone: the path \
        from the root with each node's text, current scores, trace and metadata; optionally \
        written into a directory.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = Replayed;

    fn run(self, env: &mut Env<'_>) -> Result<Replayed> {
        let (_, id) = resolve(env, &self.id)?;
        let path = read::path(env.lore.store(), id)?;
        let written = match &self.into {
            Some(dir) => read::materialise(&path, dir)?,
            None => Vec::new(),
        };
        Ok(Replayed { path, written })
    }
}

/// Compare two thoughts' reasoning line by line.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkDiff {
    /// The first thought (id or prefix).
    pub from: String,
    /// The second thought (id or prefix).
    pub to: String,
}

/// The difference of two thoughts.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ThoughtDiff {
    /// The first thought's id.
    pub from: String,
    /// The second thought's id.
    pub to: String,
    /// The first thought's current scores.
    pub from_scores: Scores,
    /// The second thought's current scores.
    pub to_scores: Scores,
    /// `thought.md`, line by line (hunks of `-` from, `+` to, ` ` both).
    pub lines: Vec<DiffLine>,
}

impl Operation for ThinkDiff {
    const NAME: &'static str = "think_diff";
    const TITLE: &'static str = "Diff two thoughts";
    const DESCRIPTION: &'static str = "Compare two thoughts' reasoning (thought.md) line by \
        line, with both current scores: e.g. a success against a failure.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ThoughtDiff;

    fn run(self, env: &mut Env<'_>) -> Result<ThoughtDiff> {
        let (index, from) = resolve(env, &self.from)?;
        let to = index.resolve(&self.to)?;
        let store = env.lore.store();
        let score = |id| -> Result<Scores> {
            let meta = read::metadata(store, id)?;
            read::current_scores(store, &meta.session, id)
        };
        Ok(ThoughtDiff {
            from: from.to_string(),
            to: to.to_string(),
            from_scores: score(from)?,
            to_scores: score(to)?,
            lines: read::text_diff(store, from, to)?,
        })
    }
}

/// Write reasoning sessions into a git bundle.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkBundle {
    /// The sessions (none: all).
    #[serde(default)]
    pub sessions: Vec<String>,
    /// The bundle file to write.
    pub file: PathBuf,
}

impl Operation for ThinkBundle {
    const NAME: &'static str = "think_bundle";
    const TITLE: &'static str = "Bundle reasoning sessions";
    const DESCRIPTION: &'static str = "Write sessions (ledger, scores notes, outcome refs) into \
        a git bundle file.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = BundleReport;

    fn run(self, env: &mut Env<'_>) -> Result<BundleReport> {
        bundle::export(env.lore.store(), &self.sessions, &self.file)
    }
}

/// Read reasoning sessions from a git bundle.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkUnbundle {
    /// The bundle file.
    pub file: PathBuf,
}

impl Operation for ThinkUnbundle {
    const NAME: &'static str = "think_unbundle";
    const TITLE: &'static str = "Import a reasoning bundle";
    const DESCRIPTION: &'static str = "Read sessions from a bundle of this project: objects as \
        they are (ids unchanged), refs created, moved forward or merged, and the lessons it \
        carries written as memories.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = BundleReport;

    fn run(self, env: &mut Env<'_>) -> Result<BundleReport> {
        bundle::import(env.lore, &self.file, &env.write)
    }
}

pub use super::sequential::{SequentialThinking, SequentialThought};

/// A one-line summary of a hit for text front ends.
pub fn hit_line(hit: &ThoughtHit) -> String {
    let first = hit.text.lines().next().unwrap_or("");
    let similarity = hit
        .similarity
        .map(|s| format!(" sim {s:.2}"))
        .unwrap_or_default();
    let outcome = if hit.best {
        " best".to_string()
    } else {
        hit.outcome
            .as_deref()
            .map(|o| format!(" {o}"))
            .unwrap_or_default()
    };
    let flag = if hit.near_duplicate {
        "  near-duplicate — the earlier answer may apply"
    } else {
        ""
    };
    format!(
        "{} ρ {:.3} score {:.2}{outcome}{similarity} [{}] {first}{flag}",
        short(&hit.id),
        hit.rho,
        hit.score,
        hit.session
    )
}
