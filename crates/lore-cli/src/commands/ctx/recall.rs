//! `lore ctx recall`: retrieves logged steps for a query, packed within a token budget.

use clap::Args;
use lore::ops::ctx as ops;
use lore::trajectory::Strategy;

use super::BranchOpt;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

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

pub fn run(ui: &mut Ui, session: &mut Session, args: &RecallArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxRecall {
            query: args.query.clone(),
            budget: Some(args.budget),
            strategy: Some(args.strategy.clone()),
            branch: args.branch.branch.clone(),
            all_branches: args.all_branches,
        },
    )?;
    let auto = out.recalled.strategy == Strategy::Auto;
    ui.emit(&out, |s| {
        s.push_str(&out.header());
        s.push_str(if auto { " (auto)\n" } else { "\n" });
        s.push_str(&out.text);
    });
    Ok(())
}
