//! `lore ctx …`: the context controller (roadmap, branches, commits, merges, the step log,
//! metadata, the four context-document tools, `.GCC/` export/import) and trajectory recall.
//! This module holds the grammar and the dispatcher; each subcommand lives in its own file.

mod branch;
mod commit;
mod export;
mod history;
mod import;
mod init;
mod log;
mod merge;
mod metadata;
mod read;
mod recall;
mod show;
mod snapshot;
mod status;
mod switch;
mod update;

use clap::{Args, Subcommand};
use lore::ops::ctx as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
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
    Init(init::InitArgs),
    /// Create a branch from the current one (roadmap and metadata carried over, a fresh log)
    /// and switch to it.
    Branch(branch::BranchArgs),
    /// Make another branch current (uncommitted steps stay with their branch).
    Switch(switch::SwitchArgs),
    /// Append an observation–thought–action step; durable when the command returns.
    Log(log::LogArgs),
    /// The current branch, its summary and the steps not committed yet.
    Status(BranchOpt),
    /// Commit the logged steps with a contribution (the three-block entry in commit.md).
    Commit(commit::CommitArgs),
    /// Merge a branch into the current one (shows that branch's context first).
    Merge(merge::MergeArgs),
    /// CONTEXT: the roadmap and branches; or one branch's commits, one commit, the log, or
    /// metadata.
    Show(show::ShowArgs),
    /// Read or change metadata segments.
    Metadata(metadata::MetadataArgs),
    /// read_context: the current context document (the branch's roadmap).
    #[command(visible_alias = "read-context", alias = "read_context")]
    Read(BranchOpt),
    /// update_context(new, message): replace the context document, as one commit.
    #[command(visible_alias = "update-context", alias = "update_context")]
    Update(update::UpdateArgs),
    /// get_context_history: every version of the context document.
    #[command(visible_alias = "get-context-history", alias = "get_context_history")]
    History(BranchOpt),
    /// get_snapshot(version): the context document at a version (number or commit).
    #[command(visible_alias = "get-snapshot", alias = "get_snapshot")]
    Snapshot(snapshot::SnapshotArgs),
    /// Retrieve logged steps for a query within a token budget.
    Recall(recall::RecallArgs),
    /// Write the workspace in the .GCC/ layout (main.md, branches/NAME/...).
    Export(export::DirArgs),
    /// Read a .GCC/ directory into context branches.
    Import(import::ImportArgs),
}

#[derive(Args, Debug)]
pub struct BranchOpt {
    /// The branch (default: the current one).
    #[arg(long, short)]
    pub branch: Option<String>,
}

/// Runs one `lore ctx` subcommand.
pub fn run(ui: &mut Ui, session: &mut Session, args: &CtxArgs) -> CmdResult {
    match &args.command {
        CtxCommand::Init(a) => init::run(ui, session, a),
        CtxCommand::Branch(a) => branch::run(ui, session, a),
        CtxCommand::Switch(a) => switch::run(ui, session, a),
        CtxCommand::Log(a) => log::run(ui, session, a),
        CtxCommand::Status(a) => status::run(ui, session, a),
        CtxCommand::Commit(a) => commit::run(ui, session, a),
        CtxCommand::Merge(a) => merge::run(ui, session, a),
        CtxCommand::Show(a) => show::run(ui, session, a),
        CtxCommand::Metadata(a) => metadata::run(ui, session, a),
        CtxCommand::Read(a) => read::run(ui, session, a),
        CtxCommand::Update(a) => update::run(ui, session, a),
        CtxCommand::History(a) => history::run(ui, session, a),
        CtxCommand::Snapshot(a) => snapshot::run(ui, session, a),
        CtxCommand::Recall(a) => recall::run(ui, session, a),
        CtxCommand::Export(a) => export::run(ui, session, a),
        CtxCommand::Import(a) => import::run(ui, session, a),
    }
}

/// Warns about every secret a context write found and redacted.
fn report_secrets(ui: &mut Ui, reports: &[lore::secrets::SecretReport]) {
    for r in reports {
        common::report_secrets(ui, Some(r));
    }
}

/// Reports a context write: the result as JSON, or `text` and the short commit id.
fn committed(ui: &mut Ui, out: &ops::CtxCommitted, text: &str) {
    report_secrets(ui, &out.secrets);
    ui.emit(out, |s| match &out.commit {
        Some(c) => s.push_str(&format!("{text} ({})\n", common::short(c))),
        None => s.push_str(&format!("{text}\n")),
    });
}
