//! `lore think outcome`: marks a thought success or failed.

use clap::Args;
use lore::ops::thoughts as ops;
use lore::thoughts::short;

use super::OutcomeArg;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct OutcomeArgs {
    /// The thought (id or prefix).
    pub id: String,
    /// The outcome.
    #[arg(value_enum)]
    pub outcome: OutcomeArg,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &OutcomeArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::ThinkOutcome {
            id: args.id.clone(),
            outcome: args.outcome.into(),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!("Marked {} ({})\n", short(&out.id), out.refname));
    });
    Ok(())
}
