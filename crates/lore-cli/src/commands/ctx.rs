//! `lore ctx …`: the context controller (roadmap, branches, commits, merges, the step log,
//! metadata, the four context-document tools, `.GCC/` export/import) and trajectory recall.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use lore::ctx::step::{NewStep, StepKind};
use lore::ctx::{Resolution, Workspace};
use lore::trajectory::Strategy;
use lore::{Lore, WriteContext};
use serde::Serialize;

use super::common::read_text;
use crate::cli::GlobalArgs;
use crate::error::{CmdResult, CommandError};
use crate::location;
use crate::ui::Ui;

/// The context controller: an agent's working context as versioned branches in refs/lore/ctx/*
/// (roadmap, commit entries, the step log, metadata), and retrieval over the logged steps.
#[derive(Args, Debug)]
pub struct CtxArgs {
    #[command(subcommand)]
    pub command: CtxCommand,
}

#[derive(Subcommand, Debug)]
pub enum CtxCommand {
    /// Start the context workspace: branch `main` with a roadmap (goal and to-do).
    Init(InitArgs),
    /// Create a branch from the current one (roadmap and metadata carried over, a fresh log)
    /// and switch to it.
    Branch(BranchArgs),
    /// Make another branch current (uncommitted steps stay with their branch).
    Switch(SwitchArgs),
    /// Append an observation–thought–action step; durable when the command returns.
    Log(LogArgs),
    /// The current branch, its summary and the steps not committed yet.
    Status(BranchOpt),
    /// Commit the logged steps with a contribution (the three-block entry in commit.md).
    Commit(CommitArgs),
    /// Merge a branch into the current one (shows that branch's context first).
    Merge(MergeArgs),
    /// CONTEXT: the roadmap and branches; or one branch's commits, one commit, the log, or
    /// metadata.
    Show(ShowArgs),
    /// Read or change metadata segments.
    Metadata(MetadataArgs),
    /// read_context: the current context document (the branch's roadmap).
    #[command(visible_alias = "read-context", alias = "read_context")]
    Read(BranchOpt),
    /// update_context(new, message): replace the context document, as one commit.
    #[command(visible_alias = "update-context", alias = "update_context")]
    Update(UpdateArgs),
    /// get_context_history: every version of the context document.
    #[command(visible_alias = "get-context-history", alias = "get_context_history")]
    History(BranchOpt),
    /// get_snapshot(version): the context document at a version (number or commit).
    #[command(visible_alias = "get-snapshot", alias = "get_snapshot")]
    Snapshot(SnapshotArgs),
    /// Retrieve logged steps for a query within a token budget.
    Recall(RecallArgs),
    /// Write the workspace in the .GCC/ layout (main.md, branches/NAME/...).
    Export(DirArgs),
    /// Read a .GCC/ directory into context branches.
    Import(ImportArgs),
}

#[derive(Args, Debug)]
pub struct BranchOpt {
    /// The branch (default: the current one).
    #[arg(long, short)]
    pub branch: Option<String>,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// What the work is for.
    #[arg(long)]
    pub goal: String,
    /// An initial to-do item (repeatable).
    #[arg(long = "todo", value_name = "ITEM")]
    pub todo: Vec<String>,
}

#[derive(Args, Debug)]
pub struct BranchArgs {
    /// The new branch's name.
    pub name: String,
    /// Why the branch exists.
    #[arg(long)]
    pub purpose: String,
    /// Branch from this branch instead of the current one.
    #[arg(long)]
    pub from: Option<String>,
    /// Stay on the current branch.
    #[arg(long)]
    pub no_switch: bool,
}

#[derive(Args, Debug)]
pub struct SwitchArgs {
    /// The branch.
    pub name: String,
}

#[derive(Args, Debug)]
pub struct LogArgs {
    /// The step in words (observation, thought or action).
    pub text: Option<String>,
    /// observation, thought or action.
    #[arg(long)]
    pub kind: Option<String>,
    /// The tool used.
    #[arg(long)]
    pub tool: Option<String>,
    /// The tool's arguments.
    #[arg(long = "args", value_name = "ARGS")]
    pub arguments: Option<String>,
    /// An excerpt of the result (cut at 2,000 characters).
    #[arg(long)]
    pub result: Option<String>,
    /// An entity the step is about (repeatable).
    #[arg(long = "entity", value_name = "NAME")]
    pub entities: Vec<String>,
    /// The subgoal being worked on.
    #[arg(long)]
    pub subgoal: Option<String>,
    /// A file touched or read (repeatable).
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub branch: BranchOpt,
}

#[derive(Args, Debug)]
pub struct CommitArgs {
    /// What this commit contributes.
    pub contribution: String,
    /// The updated progress summary (default: composed from the previous one and the
    /// contribution, at most 600 characters).
    #[arg(long)]
    pub summary: Option<String>,
    /// A new roadmap (main.md) from FILE, or - for stdin.
    #[arg(long, value_name = "FILE")]
    pub roadmap: Option<String>,
    #[command(flatten)]
    pub branch: BranchOpt,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The branch to merge.
    pub branch: String,
    /// Merge into this branch instead of the current one.
    #[arg(long)]
    pub into: Option<String>,
    /// Settle conflicting roadmap/metadata edits: ours (current branch) or theirs.
    #[arg(long, value_name = "SIDE", conflicts_with = "roadmap")]
    pub prefer: Option<String>,
    /// The merged roadmap from FILE (or - for stdin), when the roadmaps conflict.
    #[arg(long, value_name = "FILE")]
    pub roadmap: Option<String>,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// One branch's commits (a window of --window, newest first).
    #[arg(long, short)]
    pub branch: Option<String>,
    /// One commit in full.
    #[arg(long, value_name = "COMMIT", conflicts_with_all = ["log", "metadata"])]
    pub commit: Option<String>,
    /// The step log (a window of --window steps, newest first; default 20).
    #[arg(long, conflicts_with = "metadata")]
    pub log: bool,
    /// Metadata: one segment, or all without a name.
    #[arg(long, value_name = "SEGMENT", num_args = 0..=1, default_missing_value = "")]
    pub metadata: Option<String>,
    /// Window size: commits with --branch (default 1), steps with --log (default 20).
    #[arg(long, short = 'k', value_name = "K")]
    pub window: Option<usize>,
    /// Skip this many newer entries (scrolling).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
}

#[derive(Args, Debug)]
pub struct MetadataArgs {
    #[command(subcommand)]
    pub command: MetadataCommand,
}

#[derive(Subcommand, Debug)]
pub enum MetadataCommand {
    /// Print one segment (a.b reaches into nested mappings), or all.
    Get {
        /// The segment.
        segment: Option<String>,
        #[command(flatten)]
        branch: BranchOpt,
    },
    /// Set a segment to a YAML value (or plain text with --text).
    Set {
        /// The segment (letters, digits, '_' or '-').
        segment: String,
        /// The value (YAML), or - for stdin.
        value: String,
        /// Store the value as text, not YAML.
        #[arg(long)]
        text: bool,
        #[command(flatten)]
        branch: BranchOpt,
    },
    /// Remove a segment.
    Unset {
        /// The segment.
        segment: String,
        #[command(flatten)]
        branch: BranchOpt,
    },
}

#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// The new document, or - for stdin (or use --file).
    #[arg(required_unless_present = "file")]
    pub new: Option<String>,
    /// Read the new document from FILE.
    #[arg(long, conflicts_with = "new")]
    pub file: Option<String>,
    /// What changed (the commit message).
    #[arg(long, short)]
    pub message: String,
    #[command(flatten)]
    pub branch: BranchOpt,
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// A version number (from `lore ctx history`) or a commit id.
    pub version: String,
    #[command(flatten)]
    pub branch: BranchOpt,
}

#[derive(Args, Debug)]
pub struct RecallArgs {
    /// What to look for.
    pub query: String,
    /// Token budget of the packed steps.
    #[arg(long, default_value_t = 1000)]
    pub budget: usize,
    /// auto, osu, flat, recency, disjoint or tree.
    #[arg(long, default_value = "auto")]
    pub strategy: String,
    /// Search the steps of every branch (each step once).
    #[arg(long, conflicts_with = "branch")]
    pub all_branches: bool,
    #[command(flatten)]
    pub branch: BranchOpt,
}

#[derive(Args, Debug)]
pub struct DirArgs {
    /// The directory (e.g. .GCC).
    pub dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The directory (e.g. .GCC).
    pub dir: PathBuf,
    /// Replace branches that exist.
    #[arg(long)]
    pub force: bool,
}

#[derive(Serialize)]
struct Done<'a> {
    branch: &'a str,
    commit: Option<String>,
}

pub fn run(
    ui: &mut Ui,
    global: &GlobalArgs,
    lore: &mut Lore,
    ctx: &WriteContext,
    args: &CtxArgs,
) -> CmdResult {
    let ws = Workspace::new(lore.store()).with_secret_policy(lore.secret_policy().ok());
    let result = run_in(ui, global, &ws, ctx, args);
    for report in ws.take_secret_reports() {
        super::common::report_secrets(ui, Some(&report));
    }
    result
}

fn run_in(
    ui: &mut Ui,
    global: &GlobalArgs,
    ws: &Workspace<'_>,
    ctx: &WriteContext,
    args: &CtxArgs,
) -> CmdResult {
    match &args.command {
        CtxCommand::Init(a) => {
            let commit = ws.init(&a.goal, &a.todo, ctx)?;
            emit_commit(
                ui,
                "main",
                Some(commit.to_string()),
                "started the context workspace on branch main",
            );
        }
        CtxCommand::Branch(a) => {
            let commit = ws.branch(&a.name, &a.purpose, a.from.as_deref(), !a.no_switch, ctx)?;
            let note = if a.no_switch {
                ""
            } else {
                " and switched to it"
            };
            emit_commit(
                ui,
                &a.name,
                Some(commit.to_string()),
                &format!("created branch {}{note}", a.name),
            );
        }
        CtxCommand::Switch(a) => {
            let left = ws.switch(&a.name)?;
            if left > 0 {
                ui.warn(&format!(
                    "the branch left behind has {left} uncommitted steps (kept in its journal)"
                ));
            }
            ui.emit(
                &Done {
                    branch: &a.name,
                    commit: None,
                },
                |s| s.push_str(&format!("now on branch {}\n", a.name)),
            );
        }
        CtxCommand::Log(a) => {
            let kind = a.kind.as_deref().map(StepKind::parse).transpose()?;
            let (branch, step) = ws.log(
                a.branch.branch.as_deref(),
                NewStep {
                    kind,
                    tool: a.tool.clone(),
                    arguments: a.arguments.clone(),
                    result: a.result.clone(),
                    entities: a.entities.clone(),
                    subgoal: a.subgoal.clone(),
                    files: a.files.clone(),
                    text: a.text.clone(),
                    agent: ctx.agent.clone(),
                    session: ctx.session.clone(),
                    now: None,
                },
            )?;
            #[derive(Serialize)]
            struct Logged<'a> {
                branch: &'a str,
                step: &'a lore::ctx::step::Step,
            }
            ui.emit(
                &Logged {
                    branch: &branch,
                    step: &step,
                },
                |s| s.push_str(&format!("logged step {} on {branch}\n", step.id)),
            );
        }
        CtxCommand::Status(a) => {
            let status = ws.status(a.branch.as_deref())?;
            if status.damaged > 0 {
                ui.warn(&format!(
                    "{} unreadable line(s) in the journal of {} were skipped",
                    status.damaged, status.branch
                ));
            }
            ui.emit(&status, |s| {
                s.push_str(&format!(
                    "branch {} — {}\ncommits: {}, committed steps: {}, tip {}\n",
                    status.branch,
                    status.meta.purpose,
                    status.meta.commits,
                    status.committed_steps,
                    short(&status.tip)
                ));
                s.push_str(&format!(
                    "summary: {}\n",
                    if status.meta.summary.is_empty() {
                        "(none yet)"
                    } else {
                        &status.meta.summary
                    }
                ));
                if status.uncommitted.is_empty() {
                    s.push_str("no uncommitted steps\n");
                } else {
                    s.push_str(&format!(
                        "{} uncommitted steps (`lore ctx commit \"…\"` adds them):\n",
                        status.uncommitted.len()
                    ));
                    for step in &status.uncommitted {
                        s.push_str(&format!("  - {}\n", step.compact()));
                    }
                }
            });
        }
        CtxCommand::Commit(a) => {
            let roadmap = a.roadmap.as_deref().map(read_text).transpose()?;
            let out = ws.commit(
                a.branch.branch.as_deref(),
                &a.contribution,
                a.summary.as_deref(),
                roadmap.as_deref(),
                ctx,
            )?;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "committed {} on {} ({} steps)\nsummary: {}\n",
                    short(&out.commit),
                    out.branch,
                    out.entry.steps,
                    out.entry.summary
                ))
            });
        }
        CtxCommand::Merge(a) => {
            // The merged branch's context comes first, so its history is read before merging.
            let view = ws.branch_view(Some(&a.branch), 1, 0)?;
            let resolution = match (&a.prefer, &a.roadmap) {
                (Some(p), _) if p == "ours" => Resolution::Ours,
                (Some(p), _) if p == "theirs" => Resolution::Theirs,
                (Some(p), _) => {
                    return Err(CommandError::usage(format!(
                        "--prefer {p:?}: expected ours or theirs"
                    )));
                }
                (None, Some(file)) => Resolution::Roadmap(read_text(file)?),
                (None, None) => Resolution::Refuse,
            };
            ui.text(&format!("{}\n", view.render()));
            let out = ws.merge(&a.branch, a.into.as_deref(), &resolution, ctx)?;
            #[derive(Serialize)]
            struct Merged<'a> {
                context: &'a lore::ctx::view::BranchView,
                merge: &'a lore::ctx::MergeOutcome,
            }
            if out.uncommitted_left > 0 {
                ui.warn(&format!(
                    "{} has {} uncommitted steps that were not merged; commit them on it first",
                    out.from, out.uncommitted_left
                ));
            }
            ui.emit(
                &Merged {
                    context: &view,
                    merge: &out,
                },
                |s| match &out.commit {
                    Some(c) => {
                        s.push_str(&format!(
                            "merged {} into {} ({}; {} steps brought over)\n",
                            out.from,
                            out.into,
                            short(c),
                            out.steps
                        ));
                        for r in &out.resolved {
                            s.push_str(&format!("resolved: {r}\n"));
                        }
                        s.push_str(&format!("summary: {}\n", out.summary));
                    }
                    None => s.push_str(&format!(
                        "{} is already merged into {}; nothing to do\n",
                        out.from, out.into
                    )),
                },
            );
        }
        CtxCommand::Show(a) => show(ui, ws, a)?,
        CtxCommand::Metadata(a) => match &a.command {
            MetadataCommand::Get { segment, branch } => {
                let view = ws.metadata_view(branch.branch.as_deref(), segment.as_deref())?;
                ui.emit(&view, |s| s.push_str(&view.yaml));
            }
            MetadataCommand::Set {
                segment,
                value,
                text,
                branch,
            } => {
                let raw = if value == "-" {
                    read_text("-")?
                } else {
                    value.clone()
                };
                let parsed = lore::ctx::metadata_value(&raw, *text)?;
                let commit =
                    ws.metadata_set(branch.branch.as_deref(), segment, Some(parsed), ctx)?;
                let name = ws.resolve(branch.branch.as_deref())?;
                emit_commit(
                    ui,
                    &name,
                    Some(commit.to_string()),
                    &format!("set metadata segment {segment} on {name}"),
                );
            }
            MetadataCommand::Unset { segment, branch } => {
                let commit = ws.metadata_set(branch.branch.as_deref(), segment, None, ctx)?;
                let name = ws.resolve(branch.branch.as_deref())?;
                emit_commit(
                    ui,
                    &name,
                    Some(commit.to_string()),
                    &format!("removed metadata segment {segment} from {name}"),
                );
            }
        },
        CtxCommand::Read(a) => {
            let text = ws.read_context(a.branch.as_deref())?;
            #[derive(Serialize)]
            struct Doc<'a> {
                content: &'a str,
            }
            ui.emit(&Doc { content: &text }, |s| s.push_str(&text));
        }
        CtxCommand::Update(a) => {
            let new = match (&a.new, &a.file) {
                (Some(n), _) if n == "-" => read_text("-")?,
                (Some(n), _) => n.clone(),
                (None, Some(f)) => read_text(f)?,
                (None, None) => unreachable!("clap requires one of them"),
            };
            let commit = ws.update_context(a.branch.branch.as_deref(), &new, &a.message, ctx)?;
            let branch = ws.resolve(a.branch.branch.as_deref())?;
            let text = match commit {
                Some(_) => format!("updated the context on {branch}"),
                None => "the context is already that; nothing changed".to_string(),
            };
            emit_commit(ui, &branch, commit.map(|c| c.to_string()), &text);
        }
        CtxCommand::History(a) => {
            let versions = ws.context_history(a.branch.as_deref())?;
            ui.emit(&versions, |s| {
                for v in &versions {
                    s.push_str(&format!(
                        "{:>3}  {}  {}  {}\n",
                        v.version,
                        short(&v.commit),
                        v.time,
                        v.message
                    ));
                }
            });
        }
        CtxCommand::Snapshot(a) => {
            let (version, text) = ws.context_snapshot(a.branch.branch.as_deref(), &a.version)?;
            #[derive(Serialize)]
            struct Snap<'a> {
                version: &'a lore::ctx::ContextVersion,
                content: &'a str,
            }
            ui.emit(
                &Snap {
                    version: &version,
                    content: &text,
                },
                |s| s.push_str(&text),
            );
        }
        CtxCommand::Recall(a) => {
            let strategy = Strategy::parse(&a.strategy)?;
            let (got, searched) = ws.recall(
                &a.query,
                a.budget,
                strategy,
                a.branch.branch.as_deref(),
                a.all_branches,
                location::embedder(global)?,
            )?;
            ui.emit(&got, |s| {
                s.push_str(&format!(
                    "{} of {} steps, {} of {} tokens, strategy {}{}\n",
                    got.steps.len(),
                    searched,
                    got.tokens,
                    got.budget,
                    got.used.as_str(),
                    if got.strategy == Strategy::Auto {
                        " (auto)"
                    } else {
                        ""
                    }
                ));
                s.push_str(&got.render());
            });
        }
        CtxCommand::Export(a) => {
            let report = ws.export_gcc(&a.dir)?;
            ui.emit(&report, |s| {
                s.push_str(&format!(
                    "exported {} branches ({} committed steps) to {}\n",
                    report.branches.len(),
                    report.steps,
                    a.dir.display()
                ))
            });
        }
        CtxCommand::Import(a) => {
            let report = ws.import_gcc(&a.dir, a.force, ctx)?;
            ui.emit(&report, |s| {
                s.push_str(&format!(
                    "imported {} branches ({} steps): {}\n",
                    report.branches.len(),
                    report.steps,
                    report.branches.join(", ")
                ))
            });
        }
    }
    Ok(())
}

fn show(ui: &mut Ui, ws: &Workspace<'_>, a: &ShowArgs) -> CmdResult {
    let view = ws.show(&lore::ctx::view::ShowRequest {
        branch: a.branch.clone(),
        commit: a.commit.clone(),
        log: a.log,
        metadata: a.metadata.clone(),
        window: a.window,
        offset: a.offset,
    })?;
    ui.emit(&view, |s| s.push_str(&view.render()));
    Ok(())
}

/// Reports a write: the branch and commit as JSON, or `text` and the short commit id.
fn emit_commit(ui: &mut Ui, branch: &str, commit: Option<String>, text: &str) {
    ui.emit(
        &Done {
            branch,
            commit: commit.clone(),
        },
        |s| match &commit {
            Some(c) => s.push_str(&format!("{text} ({})\n", short(c))),
            None => s.push_str(&format!("{text}\n")),
        },
    );
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}
