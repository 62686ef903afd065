//! Operations of the context controller: the workspace's branches, commits and merges, the step
//! log, metadata, the CONTEXT views, the four context-document tools, trajectory recall, and
//! the `.GCC/` directory layout. This file holds the writes; `read` the views and recall, `gcc`
//! the directory layout.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation, one_of};
use crate::error::{Error, Result};
use crate::memory::WriteContext;
use crate::secrets::SecretReport;
use crate::workspace::log_md::{NewStep, Step, StepKind};
use crate::workspace::view::BranchView;
use crate::workspace::{CommitOutcome, MergeOutcome, Resolution, Workspace};

mod gcc;
mod read;

pub use gcc::{CtxExport, CtxImport};
pub use read::{
    ContextDocument, ContextHistory, ContextSnapshot, CtxHistory, CtxMetadataGet, CtxRead,
    CtxRecall, CtxRecalled, CtxShow, CtxShown, CtxSnapshot, DEFAULT_STEP_BUDGET, Version,
};

/// Runs `f` on the context workspace under the handle's secret policy; returns what it gave and
/// what the secret scanner did. A policy that cannot be read is an error (a typo in
/// `lore.secrets` never weakens protection).
pub(super) fn in_workspace<T>(
    env: &mut Env<'_>,
    f: impl FnOnce(&Workspace<'_>, &WriteContext) -> Result<T>,
) -> Result<(T, Vec<SecretReport>)> {
    let policy = env.lore.secret_policy()?;
    let write = env.write.clone();
    let ws = Workspace::new(env.lore.store()).with_secret_policy(Some(policy));
    let out = f(&ws, &write);
    let reports = ws.take_secret_reports();
    let warnings = ws.take_warnings();
    drop(ws);
    for w in warnings {
        env.warn(w);
    }
    Ok((out?, reports))
}

/// A context write that made (or did not need) one commit.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CtxCommitted {
    /// The branch written.
    pub branch: String,
    /// The commit (none: nothing changed).
    pub commit: Option<String>,
    /// What the secret scanner found and did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretReport>,
}

/// Start the context workspace.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxInit {
    /// The overall goal (the roadmap's first section).
    pub goal: String,
    /// To-do items.
    #[serde(default)]
    pub todo: Vec<String>,
}

impl Operation for CtxInit {
    const NAME: &'static str = "ctx_init";
    const TITLE: &'static str = "Context: init";
    const DESCRIPTION: &'static str = "Start the context workspace (GCC): branch main with a \
        roadmap (main.md) holding the goal and to-do items. Needed once per repository before \
        the other ctx operations.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = CtxCommitted;

    fn run(self, env: &mut Env<'_>) -> Result<CtxCommitted> {
        let (commit, secrets) = in_workspace(env, |ws, w| ws.init(&self.goal, &self.todo, w))?;
        Ok(CtxCommitted {
            branch: "main".into(),
            commit: Some(commit.to_string()),
            secrets,
        })
    }
}

/// Start a branch.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxBranch {
    /// The new branch's name.
    pub name: String,
    /// What the branch is for.
    pub purpose: String,
    /// Branch from this one (default: the current one).
    #[serde(default)]
    pub from: Option<String>,
    /// Stay on the current branch (default: switch to the new one).
    #[serde(default)]
    pub no_switch: bool,
}

impl Operation for CtxBranch {
    const NAME: &'static str = "ctx_branch";
    const TITLE: &'static str = "Context: branch";
    const DESCRIPTION: &'static str = "BRANCH: start a context branch for a line of work (with \
        its purpose), carrying over the roadmap and metadata with a fresh log; it becomes \
        current unless no_switch.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = CtxCommitted;

    fn run(self, env: &mut Env<'_>) -> Result<CtxCommitted> {
        let (commit, secrets) = in_workspace(env, |ws, w| {
            ws.branch(
                &self.name,
                &self.purpose,
                self.from.as_deref(),
                !self.no_switch,
                w,
            )
        })?;
        Ok(CtxCommitted {
            branch: self.name,
            commit: Some(commit.to_string()),
            secrets,
        })
    }
}

/// Make another branch current.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxSwitch {
    /// The branch.
    pub name: String,
}

/// The branch switched to.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Switched {
    /// Now current.
    pub branch: String,
    /// Uncommitted steps on the branch left behind (kept in its journal).
    pub uncommitted_left: usize,
}

impl Operation for CtxSwitch {
    const NAME: &'static str = "ctx_switch";
    const TITLE: &'static str = "Context: switch";
    const DESCRIPTION: &'static str = "Make another context branch current (uncommitted steps \
        stay with their branch).";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Switched;

    fn run(self, env: &mut Env<'_>) -> Result<Switched> {
        let (left, _) = in_workspace(env, |ws, _| ws.switch(&self.name))?;
        Ok(Switched {
            branch: self.name,
            uncommitted_left: left,
        })
    }
}

/// Log one step.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxLog {
    /// What happened, in words.
    #[serde(default)]
    pub text: Option<String>,
    /// observation, thought or action.
    #[serde(default)]
    pub kind: Option<String>,
    /// The tool used.
    #[serde(default)]
    pub tool: Option<String>,
    /// The tool's arguments.
    #[serde(default)]
    pub args: Option<String>,
    /// What it returned (cut at 2,000 characters).
    #[serde(default)]
    pub result: Option<String>,
    /// Entities involved (names, ids).
    #[serde(default)]
    pub entities: Vec<String>,
    /// The subgoal it serves.
    #[serde(default)]
    pub subgoal: Option<String>,
    /// Files touched or read.
    #[serde(default)]
    pub files: Vec<String>,
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

/// A logged step.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Logged {
    /// The branch it was logged on.
    pub branch: String,
    /// The step as stored.
    pub step: Step,
    /// What the secret scanner found and did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretReport>,
}

impl Operation for CtxLog {
    const NAME: &'static str = "ctx_log";
    const TITLE: &'static str = "Context: log step";
    const DESCRIPTION: &'static str = "Log one step (observation, thought or action) to a \
        context branch: appended at once, durable, committed with the next ctx_commit. Give \
        text and/or the tool, its args and result, entities, subgoal and files (these feed \
        trajectory recall).";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = Logged;

    fn run(self, env: &mut Env<'_>) -> Result<Logged> {
        let kind = self.kind.as_deref().map(StepKind::parse).transpose()?;
        let ((branch, step), secrets) = in_workspace(env, |ws, w| {
            ws.log(
                self.branch.as_deref(),
                NewStep {
                    kind,
                    tool: self.tool,
                    arguments: self.args,
                    result: self.result,
                    entities: self.entities,
                    subgoal: self.subgoal,
                    files: self.files,
                    text: self.text,
                    agent: w.agent.clone(),
                    session: w.session.clone(),
                    now: w.now,
                },
            )
        })?;
        Ok(Logged {
            branch,
            step,
            secrets,
        })
    }
}

/// A branch's state: summary and uncommitted steps.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxStatus {
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

impl Operation for CtxStatus {
    const NAME: &'static str = "ctx_status";
    const TITLE: &'static str = "Context: status";
    const DESCRIPTION: &'static str = "A context branch's state: purpose, summary, commit and \
        step counts, and the steps not committed yet.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = crate::workspace::Status;

    fn run(self, env: &mut Env<'_>) -> Result<crate::workspace::Status> {
        let (status, _) = in_workspace(env, |ws, _| ws.status(self.branch.as_deref()))?;
        if status.damaged > 0 {
            env.warn(format!(
                "{} unreadable line(s) in the journal of {} were skipped",
                status.damaged, status.branch
            ));
        }
        Ok(status)
    }
}

/// Commit the logged steps.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxCommit {
    /// What this commit contributes (its third block in commit.md).
    pub contribution: String,
    /// The branch's progress summary so far (default: composed from the previous summary and
    /// the contribution, at most 600 characters).
    #[serde(default)]
    pub summary: Option<String>,
    /// A new roadmap (main.md) to commit with it.
    #[serde(default)]
    pub roadmap: Option<String>,
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

/// A context commit.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CtxCommitDone {
    /// The commit and its entry.
    #[serde(flatten)]
    pub outcome: CommitOutcome,
    /// What the secret scanner found and did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretReport>,
}

impl Operation for CtxCommit {
    const NAME: &'static str = "ctx_commit";
    const TITLE: &'static str = "Context: commit";
    const DESCRIPTION: &'static str = "COMMIT: record progress on a context branch — its logged \
        steps, this contribution, an updated summary and optionally a new roadmap — as one git \
        commit.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = CtxCommitDone;

    fn run(self, env: &mut Env<'_>) -> Result<CtxCommitDone> {
        let (outcome, secrets) = in_workspace(env, |ws, w| {
            ws.commit(
                self.branch.as_deref(),
                &self.contribution,
                self.summary.as_deref(),
                self.roadmap.as_deref(),
                w,
            )
        })?;
        Ok(CtxCommitDone { outcome, secrets })
    }
}

/// Merge a branch.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxMerge {
    /// The branch to merge (its context is shown first).
    pub branch: String,
    /// Merge into this branch (default: the current one).
    #[serde(default)]
    pub into: Option<String>,
    /// Settle conflicting roadmap/metadata edits: ours or theirs (default: refuse and list
    /// them).
    #[serde(default)]
    pub prefer: Option<String>,
    /// The merged roadmap, when the roadmaps conflict.
    #[serde(default)]
    pub roadmap: Option<String>,
}

/// A merge, with the merged branch's context as it was before.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CtxMerged {
    /// The merged branch's latest commit entry (shown first, as GCC's MERGE does).
    pub context: BranchView,
    /// That entry rendered as markdown (stored text neutralised), as `ctx_show` renders a view.
    pub text: String,
    /// What the merge did.
    pub merge: MergeOutcome,
    /// What the secret scanner found and did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretReport>,
}

impl Operation for CtxMerge {
    const NAME: &'static str = "ctx_merge";
    const TITLE: &'static str = "Context: merge";
    const DESCRIPTION: &'static str = "MERGE: merge a context branch into the current one (or \
        `into`): roadmap three-way, metadata by segment, steps with their origin, summaries \
        combined; a two-parent commit. Conflicts refuse the merge and are listed, unless \
        prefer (ours|theirs) or roadmap settles them. The result starts with the merged \
        branch's context.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = CtxMerged;

    fn run(self, env: &mut Env<'_>) -> Result<CtxMerged> {
        let resolution = match (self.prefer.as_deref(), self.roadmap) {
            (Some(_), Some(_)) => {
                return Err(Error::Invalid {
                    what: "prefer",
                    value: String::new(),
                    reason: "give prefer or roadmap, not both".into(),
                });
            }
            (None, Some(r)) => Resolution::Roadmap(r),
            (Some(side), None) => {
                if one_of("prefer", side, &[("ours", true), ("theirs", false)])? {
                    Resolution::Ours
                } else {
                    Resolution::Theirs
                }
            }
            (None, None) => Resolution::Refuse,
        };
        let ((context, merge), secrets) = in_workspace(env, |ws, w| {
            // Read before merging: the merged branch's context as the merge found it.
            let context = ws.branch_view(Some(&self.branch), 1, 0)?;
            let merge = ws.merge(&self.branch, self.into.as_deref(), &resolution, w)?;
            Ok((context, merge))
        })?;
        if merge.uncommitted_left > 0 {
            env.warn(format!(
                "{} has {} uncommitted steps that were not merged; commit them on it first",
                merge.from, merge.uncommitted_left
            ));
        }
        // A rendering for people and agents: stored text is neutralised, storage is not.
        let text = crate::agent_text::neutralize(&context.render()).into_owned();
        Ok(CtxMerged {
            context,
            text,
            merge,
            secrets,
        })
    }
}

/// Set or remove a metadata segment.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxMetadataSet {
    /// The segment (letters, digits, '_' or '-'; `a.b` reaches into nested mappings).
    pub segment: String,
    /// The value as YAML (or plain text with `text`); none removes the segment.
    #[serde(default)]
    pub value: Option<String>,
    /// Store the value as text, not YAML.
    #[serde(default)]
    pub text: bool,
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

impl Operation for CtxMetadataSet {
    const NAME: &'static str = "ctx_metadata_set";
    const TITLE: &'static str = "Context: set metadata";
    const DESCRIPTION: &'static str = "Set a metadata segment of a context branch to a YAML \
        value (or text), or remove it when no value is given; one commit.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = CtxCommitted;

    fn run(self, env: &mut Env<'_>) -> Result<CtxCommitted> {
        let value = self
            .value
            .as_deref()
            .map(|v| crate::workspace::metadata_value(v, self.text))
            .transpose()?;
        let ((branch, commit), secrets) = in_workspace(env, |ws, w| {
            let commit = ws.metadata_set(self.branch.as_deref(), &self.segment, value, w)?;
            Ok((ws.resolve(self.branch.as_deref())?, commit))
        })?;
        Ok(CtxCommitted {
            branch,
            commit: Some(commit.to_string()),
            secrets,
        })
    }
}

/// Replace the context document.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxUpdate {
    /// The new context document (the branch's main.md), whole.
    pub content: String,
    /// What changed and why (the commit message).
    pub message: String,
    /// The branch (default: the current one).
    #[serde(default)]
    pub branch: Option<String>,
}

impl Operation for CtxUpdate {
    const NAME: &'static str = "ctx_update";
    const TITLE: &'static str = "Context: update";
    const DESCRIPTION: &'static str = "update_context(new, message): replace the context \
        document (main.md) with `content`, committed with `message`. No change, no commit.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = CtxCommitted;

    fn run(self, env: &mut Env<'_>) -> Result<CtxCommitted> {
        let ((branch, commit), secrets) = in_workspace(env, |ws, w| {
            let commit =
                ws.update_context(self.branch.as_deref(), &self.content, &self.message, w)?;
            Ok((ws.resolve(self.branch.as_deref())?, commit))
        })?;
        Ok(CtxCommitted {
            branch,
            commit: commit.map(|c| c.to_string()),
            secrets,
        })
    }
}
