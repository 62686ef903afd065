//! `lore ctx init`: starts the context workspace on branch `main` with a goal and to-do list.

use clap::Args;
use lore::ops::ctx as ops;

use super::committed;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct InitArgs {
    /// What the work is for.
    #[arg(long)]
    pub goal: String,
    /// An initial to-do item (repeatable).
    #[arg(long = "todo", value_name = "ITEM")]
    pub todo: Vec<String>,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &InitArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxInit {
            goal: args.goal.clone(),
            todo: args.todo.clone(),
        },
    )?;
    committed(ui, &out, "started the context workspace on branch main");
    Ok(())
}
