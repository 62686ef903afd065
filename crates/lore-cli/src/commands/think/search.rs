//! `lore think search`: searches earlier thoughts by text, keywords, pickaxe, outcome or
//! session, ranked by score, outcome and recency.

use clap::{Args, ValueEnum};
use lore::ops::thoughts as ops;
use lore::thoughts::search::{OutcomeFilter, RankWeights};

use crate::commands::common::Session;
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutcomeFilterArg {
    Success,
    Failed,
    Best,
    Unmarked,
}

impl From<OutcomeFilterArg> for OutcomeFilter {
    fn from(arg: OutcomeFilterArg) -> OutcomeFilter {
        match arg {
            OutcomeFilterArg::Success => OutcomeFilter::Success,
            OutcomeFilterArg::Failed => OutcomeFilter::Failed,
            OutcomeFilterArg::Best => OutcomeFilter::Best,
            OutcomeFilterArg::Unmarked => OutcomeFilter::Unmarked,
        }
    }
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Free text; each hit shows its similarity to it.
    pub query: Option<String>,
    /// Keywords every hit must contain.
    #[arg(long)]
    pub grep: Option<String>,
    /// A string the thought added or removed relative to its parent.
    #[arg(short = 'S', long = "pickaxe")]
    pub pickaxe: Option<String>,
    /// Only this outcome.
    #[arg(long, value_enum)]
    pub outcome: Option<OutcomeFilterArg>,
    /// Only this session.
    #[arg(long = "in", value_name = "SESSION")]
    pub in_session: Option<String>,
    /// Only the open frontier (leaves of unfinished sessions not marked failed).
    #[arg(long)]
    pub frontier: bool,
    /// How many hits.
    #[arg(long, short = 'n', default_value_t = 10)]
    pub limit: usize,
    /// Weights of score, outcome and recency, e.g. 0.7,0.2,0.1.
    #[arg(long, value_name = "S,O,R")]
    pub weights: Option<String>,
    /// The copyability threshold (similarity flagged as a near-duplicate).
    #[arg(long, default_value_t = ops::DEFAULT_COPY_THRESHOLD)]
    pub copy_threshold: f64,
    /// With free text: how far below the most similar thought others may be and still rank.
    #[arg(long, default_value_t = 0.25)]
    pub relevance_band: f64,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &SearchArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::ThinkSearch {
            query: args.query.clone(),
            grep: args.grep.clone(),
            pickaxe: args.pickaxe.clone(),
            outcome: args.outcome.map(OutcomeFilter::from),
            session: args.in_session.clone(),
            frontier: args.frontier,
            limit: args.limit,
            weights: args.weights.as_deref().map(rank_weights).transpose()?,
            copy_threshold: args.copy_threshold,
            relevance_band: args.relevance_band,
        },
    )?;
    ui.emit(&out, |s| {
        if out.hits.is_empty() {
            s.push_str("No thoughts found\n");
        }
        for hit in &out.hits {
            s.push_str(&ops::hit_line(hit));
            s.push('\n');
        }
    });
    Ok(())
}

/// Parses `--weights S,O,R` into the ranking's weights of score, outcome and recency.
fn rank_weights(value: &str) -> CmdResult<RankWeights> {
    let parts: Vec<f64> = value
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| CommandError::usage(format!("--weights {value:?}: three numbers, S,O,R")))?;
    match parts.as_slice() {
        [score, outcome, recency] => Ok(RankWeights {
            score: *score,
            outcome: *outcome,
            recency: *recency,
            ..RankWeights::default()
        }),
        _ => Err(CommandError::usage(format!(
            "--weights {value:?}: three numbers, S,O,R"
        ))),
    }
}
