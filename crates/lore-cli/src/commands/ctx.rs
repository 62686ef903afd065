//! `lore ctx …`: the context controller (roadmap, branches, commits, merges, the step log,
//! metadata, the four context-document tools, `.GCC/` export/import) and trajectory recall.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use lore::ops::ctx as ops;
use lore::trajectory::Strategy;

use super::common::{self, Session, read_text};
use crate::error::{CmdResult, CommandError};
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

pub fn run(ui: &mut Ui, session: &mut Session, args: &CtxArgs) -> CmdResult {
    match &args.command {
        CtxCommand::Init(a) => {
            let out = session.run(
                ui,
                ops::CtxInit {
                    goal: a.goal.clone(),
                    todo: a.todo.clone(),
                },
            )?;
            committed(ui, &out, "started the context workspace on branch main");
        }
        CtxCommand::Branch(a) => {
            let out = session.run(
                ui,
                ops::CtxBranch {
                    name: a.name.clone(),
                    purpose: a.purpose.clone(),
                    from: a.from.clone(),
                    no_switch: a.no_switch,
                },
            )?;
            let note = if a.no_switch {
                ""
            } else {
                " and switched to it"
            };
            committed(ui, &out, &format!("created branch {}{note}", a.name));
        }
        CtxCommand::Switch(a) => {
            let out = session.run(
                ui,
                ops::CtxSwitch {
                    name: a.name.clone(),
                },
            )?;
            if out.uncommitted_left > 0 {
                ui.warn(&format!(
                    "the branch left behind has {} (kept in its journal)",
                    common::count(
                        out.uncommitted_left,
                        "uncommitted step",
                        "uncommitted steps"
                    )
                ));
            }
            ui.emit(&out, |s| {
                s.push_str(&format!("now on branch {}\n", out.branch))
            });
        }
        CtxCommand::Log(a) => {
            let out = session.run(
                ui,
                ops::CtxLog {
                    text: a.text.clone(),
                    kind: a.kind.clone(),
                    tool: a.tool.clone(),
                    args: a.arguments.clone(),
                    result: a.result.clone(),
                    entities: a.entities.clone(),
                    subgoal: a.subgoal.clone(),
                    files: a.files.clone(),
                    branch: a.branch.branch.clone(),
                },
            )?;
            report(ui, &out.secrets);
            ui.emit(&out, |s| {
                s.push_str(&format!("logged step {} on {}\n", out.step.id, out.branch))
            });
        }
        CtxCommand::Status(a) => {
            let status = session.run(
                ui,
                ops::CtxStatus {
                    branch: a.branch.clone(),
                },
            )?;
            ui.emit(&status, |s| {
                s.push_str(&format!(
                    "branch {} — {}\ncommits: {}, committed steps: {}, tip {}\n",
                    status.branch,
                    status.meta.purpose,
                    status.meta.commits,
                    status.committed_steps,
                    common::short(&status.tip)
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
                        "{} (`lore ctx commit \"…\"` adds them):\n",
                        common::count(
                            status.uncommitted.len(),
                            "uncommitted step",
                            "uncommitted steps"
                        )
                    ));
                    for step in &status.uncommitted {
                        s.push_str(&format!("  - {}\n", step.compact()));
                    }
                }
            });
        }
        CtxCommand::Commit(a) => {
            let out = session.run(
                ui,
                ops::CtxCommit {
                    contribution: a.contribution.clone(),
                    summary: a.summary.clone(),
                    roadmap: a.roadmap.as_deref().map(read_text).transpose()?,
                    branch: a.branch.branch.clone(),
                },
            )?;
            report(ui, &out.secrets);
            let done = &out.outcome;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "committed {} on {} ({})\nsummary: {}\n",
                    common::short(&done.commit),
                    done.branch,
                    common::count(done.entry.steps, "step", "steps"),
                    done.entry.summary
                ))
            });
        }
        CtxCommand::Merge(a) => {
            if !ui.json() {
                // GCC's MERGE shows the merged branch's context first, whatever the merge does.
                let shown = session.run(
                    ui,
                    ops::CtxShow {
                        branch: Some(a.branch.clone()),
                        ..ops::CtxShow::default()
                    },
                )?;
                ui.text(&format!("{}\n", shown.text));
            }
            let out = session.run(
                ui,
                ops::CtxMerge {
                    branch: a.branch.clone(),
                    into: a.into.clone(),
                    prefer: a.prefer.clone(),
                    roadmap: a.roadmap.as_deref().map(read_text).transpose()?,
                },
            )?;
            report(ui, &out.secrets);
            let m = &out.merge;
            ui.emit(&out, |s| match &m.commit {
                Some(c) => {
                    s.push_str(&format!(
                        "merged {} into {} ({}; {} brought over)\n",
                        m.from,
                        m.into,
                        common::short(c),
                        common::count(m.steps, "step", "steps")
                    ));
                    for r in &m.resolved {
                        s.push_str(&format!("resolved: {r}\n"));
                    }
                    s.push_str(&format!("summary: {}\n", m.summary));
                }
                None => s.push_str(&format!(
                    "{} is already merged into {}; nothing to do\n",
                    m.from, m.into
                )),
            });
        }
        CtxCommand::Show(a) => {
            let out = session.run(
                ui,
                ops::CtxShow {
                    branch: a.branch.clone(),
                    commit: a.commit.clone(),
                    log: a.log,
                    metadata: a.metadata.clone(),
                    window: a.window,
                    offset: a.offset,
                },
            )?;
            ui.emit(&out, |s| s.push_str(&out.text));
        }
        CtxCommand::Metadata(a) => match &a.command {
            MetadataCommand::Get { segment, branch } => {
                let view = session.run(
                    ui,
                    ops::CtxMetadataGet {
                        segment: segment.clone(),
                        branch: branch.branch.clone(),
                    },
                )?;
                ui.emit(&view, |s| s.push_str(&view.yaml));
            }
            MetadataCommand::Set {
                segment,
                value,
                text,
                branch,
            } => {
                let value = if value == "-" {
                    read_text("-")?
                } else {
                    value.clone()
                };
                let out = session.run(
                    ui,
                    ops::CtxMetadataSet {
                        segment: segment.clone(),
                        value: Some(value),
                        text: *text,
                        branch: branch.branch.clone(),
                    },
                )?;
                let said = format!("set metadata segment {segment} on {}", out.branch);
                committed(ui, &out, &said);
            }
            MetadataCommand::Unset { segment, branch } => {
                let out = session.run(
                    ui,
                    ops::CtxMetadataSet {
                        segment: segment.clone(),
                        value: None,
                        text: false,
                        branch: branch.branch.clone(),
                    },
                )?;
                let said = format!("removed metadata segment {segment} from {}", out.branch);
                committed(ui, &out, &said);
            }
        },
        CtxCommand::Read(a) => {
            let out = session.run(
                ui,
                ops::CtxRead {
                    branch: a.branch.clone(),
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&lore::agent_text::neutralize(&out.content))
            });
        }
        CtxCommand::Update(a) => {
            let content = match (&a.new, &a.file) {
                (Some(n), _) if n == "-" => read_text("-")?,
                (Some(n), _) => n.clone(),
                (None, Some(f)) => read_text(f)?,
                (None, None) => {
                    return Err(CommandError::usage(
                        "give the new document, - for standard input, or --file",
                    ));
                }
            };
            let out = session.run(
                ui,
                ops::CtxUpdate {
                    content,
                    message: a.message.clone(),
                    branch: a.branch.branch.clone(),
                },
            )?;
            let said = match out.commit {
                Some(_) => format!("updated the context on {}", out.branch),
                None => "the context is already that; nothing changed".to_string(),
            };
            committed(ui, &out, &said);
        }
        CtxCommand::History(a) => {
            let out = session.run(
                ui,
                ops::CtxHistory {
                    branch: a.branch.clone(),
                },
            )?;
            ui.emit(&out, |s| {
                for v in &out.versions {
                    s.push_str(&format!(
                        "{:>3}  {}  {}  {}\n",
                        v.version,
                        common::short(&v.commit),
                        v.time,
                        v.message
                    ));
                }
            });
        }
        CtxCommand::Snapshot(a) => {
            let out = session.run(
                ui,
                ops::CtxSnapshot {
                    version: ops::Version::Text(a.version.clone()),
                    branch: a.branch.branch.clone(),
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&lore::agent_text::neutralize(&out.content))
            });
        }
        CtxCommand::Recall(a) => {
            let out = session.run(
                ui,
                ops::CtxRecall {
                    query: a.query.clone(),
                    budget: Some(a.budget),
                    strategy: Some(a.strategy.clone()),
                    branch: a.branch.branch.clone(),
                    all_branches: a.all_branches,
                },
            )?;
            let auto = out.recalled.strategy == Strategy::Auto;
            ui.emit(&out, |s| {
                s.push_str(&out.header());
                s.push_str(if auto { " (auto)\n" } else { "\n" });
                s.push_str(&out.text);
            });
        }
        CtxCommand::Export(a) => {
            let report = session.run(
                ui,
                ops::CtxExport {
                    dir: a.dir.display().to_string(),
                },
            )?;
            ui.emit(&report, |s| {
                s.push_str(&format!(
                    "exported {} ({} committed steps) to {}\n",
                    common::count(report.branches.len(), "branch", "branches"),
                    report.steps,
                    a.dir.display()
                ))
            });
        }
        CtxCommand::Import(a) => {
            let report = session.run(
                ui,
                ops::CtxImport {
                    dir: a.dir.display().to_string(),
                    force: a.force,
                },
            )?;
            ui.emit(&report, |s| {
                s.push_str(&format!(
                    "imported {} ({}): {}\n",
                    common::count(report.branches.len(), "branch", "branches"),
                    common::count(report.steps, "step", "steps"),
                    report.branches.join(", ")
                ))
            });
        }
    }
    Ok(())
}

fn report(ui: &mut Ui, reports: &[lore::secrets::SecretReport]) {
    for r in reports {
        common::report_secrets(ui, Some(r));
    }
}

/// Reports a context write: the result as JSON, or `text` and the short commit id.
fn committed(ui: &mut Ui, out: &ops::CtxCommitted, text: &str) {
    report(ui, &out.secrets);
    ui.emit(out, |s| match &out.commit {
        Some(c) => s.push_str(&format!("{text} ({})\n", common::short(c))),
        None => s.push_str(&format!("{text}\n")),
    });
}
