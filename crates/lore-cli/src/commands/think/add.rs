//! `lore think add`: adds a thought to a session, with its scores and the trace that led to it.

use clap::Args;
use lore::ops::thoughts as ops;
use lore::thoughts::short;

use super::{ScoreArgs, text_arg};
use crate::commands::common::{Session, read_text};
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct AddArgs {
    /// The thought; `-` reads standard input.
    pub text: String,
    /// The session (default: the parent's, else --session, else `default`).
    #[arg(long = "in", value_name = "SESSION")]
    pub in_session: Option<String>,
    /// The parent thought (id or prefix); none starts a root thought.
    #[arg(long)]
    pub parent: Option<String>,
    #[command(flatten)]
    pub scores: ScoreArgs,
    /// A JSON-lines file (or `-`) of tool calls and observations that led to it.
    #[arg(long)]
    pub trace: Option<String>,
    /// The model behind the agent.
    #[arg(long)]
    pub model: Option<String>,
    /// How long producing it took, in milliseconds.
    #[arg(long)]
    pub elapsed_ms: Option<u64>,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &AddArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::ThinkAdd {
            session: args.in_session.clone(),
            parent: args.parent.clone(),
            text: text_arg(&args.text)?,
            score: args.scores.score,
            components: args.scores.components()?,
            trace: read_trace(&args.trace)?,
            model: args.model.clone(),
            elapsed_ms: args.elapsed_ms,
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Thought {} in {} (depth {}, score {:.2})\n",
            short(&out.id),
            out.session,
            out.depth,
            out.score
        ));
    });
    Ok(())
}

/// The trace's events: one JSON value per non-blank line of `source` (a file or `-`).
fn read_trace(source: &Option<String>) -> CmdResult<Vec<serde_json::Value>> {
    let Some(source) = source else {
        return Ok(Vec::new());
    };
    read_text(source)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(n, l)| {
            serde_json::from_str(l)
                .map_err(|e| CommandError::usage(format!("{source} line {}: not JSON: {e}", n + 1)))
        })
        .collect()
}
