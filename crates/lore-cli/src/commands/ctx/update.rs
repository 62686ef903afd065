//! `lore ctx update` (update_context): replaces a branch's context document as one commit.

use clap::Args;
use lore::ops::ctx as ops;

use super::{BranchOpt, committed};
use crate::commands::common::{Session, read_text};
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

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

pub fn run(ui: &mut Ui, session: &mut Session, args: &UpdateArgs) -> CmdResult {
    let content = match (&args.new, &args.file) {
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
            message: args.message.clone(),
            branch: args.branch.branch.clone(),
        },
    )?;
    let said = match out.commit {
        Some(_) => format!("updated the context on {}", out.branch),
        None => "the context is already that; nothing changed".to_string(),
    };
    committed(ui, &out, &said);
    Ok(())
}
