//! Context operations that read: the CONTEXT views, metadata, the context document and its
//! versions, and trajectory recall.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::in_workspace;
use crate::agent_text::neutralize;
use crate::error::{Error, Result};
use crate::ops::{Effect, Env, Operation};
use crate::trajectory::{self, Strategy};
use crate::workspace::ContextVersion;
use crate::workspace::view::{MetadataView, ShowRequest, View};

/// A CONTEXT view.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxShow {
    /// A branch's commit entries (a window, newest first; default window 1).
    #[serde(default)]
    pub branch: Option<String>,
    /// One commit in full.
    #[serde(default)]
    pub commit: Option<String>,
    /// The step log instead (default window 20).
    #[serde(default)]
    pub log: bool,
    /// Metadata: a segment name (`a.b`), or "" for all segments.
    #[serde(default)]
    pub metadata: Option<String>,
    /// Window size (entries or steps).
    #[serde(default)]
    pub window: Option<usize>,
    /// Skip this many newer entries (scrolling).
    #[serde(default)]
    pub offset: usize,
}

/// A view, as data and as markdown.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CtxShown {
    /// The view.
    #[serde(flatten)]
    pub view: View,
    /// The view rendered as markdown.
    pub text: String,
}

impl Operation for CtxShow {
    const NAME: &'static str = "ctx_show";
    const TITLE: &'static str = "Context: show";
    const DESCRIPTION: &'static str = "CONTEXT: the workspace's state. No arguments: the \
        roadmap and every branch with its latest summary. branch (+window, offset): a \
        scrolling window of its commit entries (K=1 by default); commit: one commit in full; \
        log: the step log (window 20); metadata: a segment (a.b) or \"\" for all.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = CtxShown;

    fn run(self, env: &mut Env<'_>) -> Result<CtxShown> {
        if self.commit.is_some() && (self.log || self.metadata.is_some()) {
            return Err(Error::Invalid {
                what: "view",
                value: String::new(),
                reason: "ask for one view: a commit, the log, or metadata".into(),
            });
        }
        let (view, _) = in_workspace(env, |ws, _| {
            ws.show(&ShowRequest {
                branch: self.branch,
                commit: self.commit,
                log: self.log,
                metadata: self.metadata,
                window: self.window,
                offset: self.offset,
            })
        })?;
        // A rendering for people and agents: stored text is neutralised, storage is not.
        let text = neutralize(&view.render()).into_owned();
        Ok(CtxShown { view, text })
    }
}

/// Read metadata.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxMetadataGet {
    /// The segment (`a.b` reaches into nested mappings); none: all of it.
    #[serde(default)]
    pub segment: Option<String>,
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

impl Operation for CtxMetadataGet {
    const NAME: &'static str = "ctx_metadata_get";
    const TITLE: &'static str = "Context: read metadata";
    const DESCRIPTION: &'static str = "A context branch's metadata (file structure, \
        environment, dependencies, interfaces): one segment or all, as YAML.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = MetadataView;

    fn run(self, env: &mut Env<'_>) -> Result<MetadataView> {
        let segment = self.segment.filter(|s| !s.is_empty());
        Ok(in_workspace(env, |ws, _| {
            ws.metadata_view(self.branch.as_deref(), segment.as_deref())
        })?
        .0)
    }
}

/// Read the context document.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxRead {
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

/// The context document.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ContextDocument {
    /// The branch.
    pub branch: String,
    /// The document (the branch's main.md).
    pub content: String,
}

impl Operation for CtxRead {
    const NAME: &'static str = "ctx_read";
    const TITLE: &'static str = "Context: read";
    const DESCRIPTION: &'static str = "read_context: the current context document (the \
        branch's main.md).";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ContextDocument;

    fn run(self, env: &mut Env<'_>) -> Result<ContextDocument> {
        let ((branch, content), _) = in_workspace(env, |ws, _| {
            let branch = ws.resolve(self.branch.as_deref())?;
            let content = ws.read_context(Some(&branch))?;
            Ok((branch, content))
        })?;
        Ok(ContextDocument { branch, content })
    }
}

/// Every version of the context document.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxHistory {
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

/// The document's versions.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ContextHistory {
    /// The branch.
    pub branch: String,
    /// Versions, newest first.
    pub versions: Vec<ContextVersion>,
}

impl Operation for CtxHistory {
    const NAME: &'static str = "ctx_history";
    const TITLE: &'static str = "Context: history";
    const DESCRIPTION: &'static str = "get_context_history: every version of the context \
        document, newest first (version number, commit, time, message).";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ContextHistory;

    fn run(self, env: &mut Env<'_>) -> Result<ContextHistory> {
        let ((branch, versions), _) = in_workspace(env, |ws, _| {
            let branch = ws.resolve(self.branch.as_deref())?;
            let versions = ws.context_history(Some(&branch))?;
            Ok((branch, versions))
        })?;
        Ok(ContextHistory { branch, versions })
    }
}

/// A version: a number, or a commit id (or a number given as text).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Version {
    /// A version number.
    Number(u64),
    /// A commit id, or a version number as text.
    Text(String),
}

impl Default for Version {
    fn default() -> Self {
        Version::Number(1)
    }
}

impl Version {
    fn as_text(&self) -> String {
        match self {
            Version::Number(n) => n.to_string(),
            Version::Text(t) => t.clone(),
        }
    }
}

/// The document at one version.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxSnapshot {
    /// A version number (from ctx_history) or a commit id.
    pub version: Version,
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

/// A version of the document.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ContextSnapshot {
    /// Which version.
    pub version: ContextVersion,
    /// The document then.
    pub content: String,
}

impl Operation for CtxSnapshot {
    const NAME: &'static str = "ctx_snapshot";
    const TITLE: &'static str = "Context: snapshot";
    const DESCRIPTION: &'static str = "get_snapshot(version): the context document as it was \
        at a version number (from ctx_history) or a commit.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ContextSnapshot;

    fn run(self, env: &mut Env<'_>) -> Result<ContextSnapshot> {
        let ((version, content), _) = in_workspace(env, |ws, _| {
            ws.context_snapshot(self.branch.as_deref(), &self.version.as_text())
        })?;
        Ok(ContextSnapshot { version, content })
    }
}

/// Find logged steps for a query.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxRecall {
    /// What to find in the logged steps.
    pub query: String,
    /// Token budget of the packed steps (default 1000).
    #[serde(default)]
    pub budget: Option<usize>,
    /// auto (default), osu, flat, recency, disjoint or tree.
    #[serde(default)]
    pub strategy: Option<String>,
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
    /// Search the steps of every branch (each step once).
    #[serde(default)]
    pub all_branches: bool,
}

/// Steps recalled.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CtxRecalled {
    /// Steps searched.
    pub searched: usize,
    /// What was packed.
    #[serde(flatten)]
    pub recalled: trajectory::Recalled,
    /// The packed steps as markdown, in trajectory order.
    pub text: String,
}

impl CtxRecalled {
    /// One line saying what was packed: steps found of searched, tokens of the budget, the
    /// strategy that ran.
    pub fn header(&self) -> String {
        format!(
            "{} of {} steps, {} of {} tokens, strategy {}",
            self.recalled.steps.len(),
            self.searched,
            self.recalled.tokens,
            self.recalled.budget,
            self.recalled.used.as_str()
        )
    }
}

/// Default budget of trajectory recall, in tokens.
pub const DEFAULT_STEP_BUDGET: usize = 1000;

impl Operation for CtxRecall {
    const NAME: &'static str = "ctx_recall";
    const TITLE: &'static str = "Context: recall steps";
    const DESCRIPTION: &'static str = "Trajectory recall: find the logged steps relevant to a \
        query and pack them into a token budget. Strategy auto picks per query between osu \
        (overlapping units by entity, tool, subgoal and similarity: best when evidence shares \
        tools or entities) and flat similarity; recency, disjoint and tree are baselines.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = CtxRecalled;

    fn run(self, env: &mut Env<'_>) -> Result<CtxRecalled> {
        if self.branch.is_some() && self.all_branches {
            return Err(Error::Invalid {
                what: "branch",
                value: self.branch.unwrap_or_default(),
                reason: "give a branch or all_branches, not both".into(),
            });
        }
        let strategy = Strategy::parse(self.strategy.as_deref().unwrap_or("auto"))?;
        let embedder = env.lore.embedder().cloned();
        let ((recalled, searched), _) = in_workspace(env, |ws, _| {
            ws.recall(
                &self.query,
                self.budget.unwrap_or(DEFAULT_STEP_BUDGET),
                strategy,
                self.branch.as_deref(),
                self.all_branches,
                embedder,
            )
        })?;
        let text = neutralize(&recalled.render()).into_owned();
        Ok(CtxRecalled {
            searched,
            recalled,
            text,
        })
    }
}
