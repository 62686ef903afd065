//! `lore think score`: replaces a thought's current scores.

use clap::Args;
use lore::ops::thoughts as ops;
use lore::thoughts::short;

use super::ScoreArgs;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct ScoreCommandArgs {
    /// The thought (id or prefix).
    pub id: String,
    #[command(flatten)]
    pub scores: ScoreArgs,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ScoreCommandArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::ThinkScore {
            id: args.id.clone(),
            score: args.scores.score,
            components: args.scores.components()?,
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Thought {} now scores {:.2}\n",
            short(&out.id),
            out.scores.combined
        ));
    });
    Ok(())
}
