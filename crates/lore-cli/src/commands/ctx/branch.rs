//! `lore ctx branch`: creates a context branch from the current one and, unless told not to,
//! switches to it.

use clap::Args;
use lore::ops::ctx as ops;

use super::committed;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

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

pub fn run(ui: &mut Ui, session: &mut Session, args: &BranchArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxBranch {
            name: args.name.clone(),
            purpose: args.purpose.clone(),
            from: args.from.clone(),
            no_switch: args.no_switch,
        },
    )?;
    let note = if args.no_switch {
        ""
    } else {
        " and switched to it"
    };
    committed(ui, &out, &format!("created branch {}{note}", args.name));
    Ok(())
}
