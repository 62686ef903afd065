//! `lore context`: the budgeted context an agent should start a session with.

use clap::Args;
use lore::ops::memory as ops;

use super::common::Session;

use crate::error::CmdResult;
use crate::ui::Ui;

/// Print what an agent should know now: near-duplicates of the task, open blockers, recent
/// decisions, work in progress, then related memories, within a token budget (chars/4).
/// Recalled text is quoted reference data with provenance (id, author, date, commit).
#[derive(Args, Debug)]
pub struct ContextArgs {
    /// Token budget (default: 500/1000/2000/3500 for <10/10–50/50–200/>200 memories).
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,
    /// What the session is about (adds semantic matches).
    #[arg(long, short = 'q')]
    pub query: Option<String>,
    /// Output format.
    #[arg(long, default_value = "markdown", value_parser = ["markdown", "xml", "json"])]
    pub format: String,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ContextArgs) -> CmdResult {
    let context = session.run(
        ui,
        ops::Context {
            budget: args.budget,
            query: args.query.clone(),
            format: Some(args.format.clone()),
            scope: None,
        },
    )?;
    ui.emit(&context, |s| s.push_str(&context.text));
    Ok(())
}
