//! `lore think step`: one sequential-thinking step (numbered, revising or branching).

use clap::Args;
use lore::ops::sequential::{SequentialThinking, StepOutcome};
use lore::thoughts::short;

use super::{OutcomeArg, ScoreArgs, text_arg};
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct StepArgs {
    /// The thought; `-` reads standard input.
    pub text: String,
    /// Its number (1-based).
    #[arg(long)]
    pub number: u32,
    /// The estimated total.
    #[arg(long)]
    pub total: u32,
    /// This is the last thought.
    #[arg(long)]
    pub last: bool,
    /// It revises thought N.
    #[arg(long, value_name = "N")]
    pub revises: Option<u32>,
    /// It branches from thought N.
    #[arg(long, value_name = "N")]
    pub branch_from: Option<u32>,
    /// The branch id.
    #[arg(long)]
    pub branch: Option<String>,
    /// The session (default: --session, else `sequential`).
    #[arg(long = "in", value_name = "SESSION")]
    pub in_session: Option<String>,
    #[command(flatten)]
    pub scores: ScoreArgs,
    /// The outcome.
    #[arg(long, value_enum)]
    pub outcome: Option<OutcomeArg>,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &StepArgs) -> CmdResult {
    let out = session.run(
        ui,
        SequentialThinking {
            thought: text_arg(&args.text)?,
            thought_number: args.number,
            total_thoughts: args.total,
            next_thought_needed: !args.last,
            is_revision: args.revises.map(|_| true),
            revises_thought: args.revises,
            branch_from_thought: args.branch_from,
            branch_id: args.branch.clone(),
            needs_more_thoughts: None,
            session: args.in_session.clone(),
            score: args.scores.score,
            components: args.scores.components()?,
            outcome: args.outcome.map(|o| match o {
                OutcomeArg::Success => StepOutcome::Success,
                OutcomeArg::Failed => StepOutcome::Failed,
            }),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Thought {}/{} {} in {} (depth {})\n",
            out.thought_number,
            out.total_thoughts,
            short(&out.id),
            out.session,
            out.depth
        ));
        if let Some(unresolved) = &out.unresolved {
            s.push_str(&format!(
                "  {}; attached to its line\n",
                lore::agent_text::neutralize(unresolved)
            ));
        }
    });
    Ok(())
}
