//! `lore ctx log`: appends one observation–thought–action step to a branch's journal.

use clap::Args;
use lore::ops::ctx as ops;

use super::{BranchOpt, report_secrets};
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

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

pub fn run(ui: &mut Ui, session: &mut Session, args: &LogArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxLog {
            text: args.text.clone(),
            kind: args.kind.clone(),
            tool: args.tool.clone(),
            args: args.arguments.clone(),
            result: args.result.clone(),
            entities: args.entities.clone(),
            subgoal: args.subgoal.clone(),
            files: args.files.clone(),
            branch: args.branch.branch.clone(),
        },
    )?;
    report_secrets(ui, &out.secrets);
    ui.emit(&out, |s| {
        s.push_str(&format!("logged step {} on {}\n", out.step.id, out.branch))
    });
    Ok(())
}
