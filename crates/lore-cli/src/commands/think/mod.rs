//! `lore think`: reasoning trees — add thoughts, score them, mark outcomes, finish a session with
//! a lesson, search, replay, diff, bundle, and sequential-thinking steps. This module holds the
//! grammar, the options several subcommands share, and the dispatcher; each subcommand lives in
//! its own file.

mod add;
mod bundle;
mod diff;
mod done;
mod outcome;
mod replay;
mod score;
mod search;
mod step;
mod unbundle;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use lore::thoughts::Outcome;

use super::common::{Session, read_text};
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

/// Reasoning trees: every scored thought a commit under refs/lore/thoughts/<session>.
#[derive(Args, Debug)]
pub struct ThinkArgs {
    #[command(subcommand)]
    pub action: ThinkAction,
}

/// The score options of a thought.
#[derive(Args, Debug, Clone)]
pub struct ScoreArgs {
    /// The combined score, 0 to 1 (default: the mean of the components, else 0.5).
    #[arg(long)]
    pub score: Option<f64>,
    /// A score component as NAME=VALUE (repeatable), each 0 to 1.
    #[arg(long = "component", value_name = "NAME=VALUE")]
    pub components: Vec<String>,
}

impl ScoreArgs {
    fn components(&self) -> CmdResult<BTreeMap<String, f64>> {
        self.components
            .iter()
            .map(|c| {
                let (name, value) = c.split_once('=').ok_or_else(|| {
                    CommandError::usage(format!("--component {c:?}: use NAME=VALUE"))
                })?;
                let value: f64 = value.trim().parse().map_err(|_| {
                    CommandError::usage(format!("--component {c:?}: {value:?} is not a number"))
                })?;
                Ok((name.trim().to_string(), value))
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutcomeArg {
    Success,
    Failed,
}

impl From<OutcomeArg> for Outcome {
    fn from(arg: OutcomeArg) -> Outcome {
        match arg {
            OutcomeArg::Success => Outcome::Success,
            OutcomeArg::Failed => Outcome::Failed,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum ThinkAction {
    /// Add a thought (a commit whose parent is its parent thought).
    Add(add::AddArgs),
    /// Replace a thought's current scores (a new scored version; the newest counts).
    Score(score::ScoreCommandArgs),
    /// Mark a thought success or failed (a ref under refs/lore/outcomes/).
    Outcome(outcome::OutcomeArgs),
    /// Finish a session: merge the best path, set `best`, keep a lesson under a topic.
    Done(done::DoneArgs),
    /// Search earlier thoughts, ranked by ρ = 0.7·score + 0.2·outcome + 0.1·recency.
    Search(search::SearchArgs),
    /// The full state at a thought: the path from the root, scores, trace.
    Replay(replay::ReplayArgs),
    /// Compare two thoughts' reasoning line by line.
    Diff(diff::DiffArgs),
    /// Write sessions (all when none are named) into a git bundle.
    Bundle(bundle::BundleArgs),
    /// Read sessions from a git bundle of this project.
    Unbundle(unbundle::UnbundleArgs),
    /// One sequential-thinking step (numbered, revising or branching).
    Step(step::StepArgs),
}

/// Runs one `lore think` subcommand.
pub fn run(ui: &mut Ui, session: &mut Session, args: &ThinkArgs) -> CmdResult {
    match &args.action {
        ThinkAction::Add(a) => add::run(ui, session, a),
        ThinkAction::Score(a) => score::run(ui, session, a),
        ThinkAction::Outcome(a) => outcome::run(ui, session, a),
        ThinkAction::Done(a) => done::run(ui, session, a),
        ThinkAction::Search(a) => search::run(ui, session, a),
        ThinkAction::Replay(a) => replay::run(ui, session, a),
        ThinkAction::Diff(a) => diff::run(ui, session, a),
        ThinkAction::Bundle(a) => bundle::run(ui, session, a),
        ThinkAction::Unbundle(a) => unbundle::run(ui, session, a),
        ThinkAction::Step(a) => step::run(ui, session, a),
    }
}

/// A thought's text as given, or standard input for `-`.
fn text_arg(text: &str) -> CmdResult<String> {
    if text == "-" {
        read_text("-")
    } else {
        Ok(text.to_string())
    }
}

/// `path` made absolute against the current directory; as given when that fails.
fn absolute_path(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
