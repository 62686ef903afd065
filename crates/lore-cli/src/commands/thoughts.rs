//! `lore think`: reasoning trees — add thoughts, score them, mark outcomes, finish a session with
//! a lesson, search, replay, diff, bundle, and sequential-thinking steps.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use lore::ops::sequential::SequentialThinking;
use lore::ops::thoughts as ops;
use lore::thoughts::search::{OutcomeFilter, RankWeights};
use lore::thoughts::{Outcome, short};

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

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutcomeFilterArg {
    Success,
    Failed,
    Best,
    Unmarked,
}

#[derive(Subcommand, Debug)]
pub enum ThinkAction {
    /// Add a thought (a commit whose parent is its parent thought).
    Add {
        /// The thought; `-` reads standard input.
        text: String,
        /// The session (default: the parent's, else --session, else `default`).
        #[arg(long = "in", value_name = "SESSION")]
        in_session: Option<String>,
        /// The parent thought (id or prefix); none starts a root thought.
        #[arg(long)]
        parent: Option<String>,
        #[command(flatten)]
        scores: ScoreArgs,
        /// A JSON-lines file (or `-`) of tool calls and observations that led to it.
        #[arg(long)]
        trace: Option<String>,
        /// The model behind the agent.
        #[arg(long)]
        model: Option<String>,
        /// How long producing it took, in milliseconds.
        #[arg(long)]
        elapsed_ms: Option<u64>,
    },
    /// Replace a thought's current scores (a new version of its note).
    Score {
        /// The thought (id or prefix).
        id: String,
        #[command(flatten)]
        scores: ScoreArgs,
    },
    /// Mark a thought success or failed (a ref under refs/lore/outcomes/).
    Outcome {
        /// The thought (id or prefix).
        id: String,
        /// The outcome.
        #[arg(value_enum)]
        outcome: OutcomeArg,
    },
    /// Finish a session: merge the best path, set `best`, keep a lesson under a topic.
    Done {
        /// The session (default: --session, else `default`).
        #[arg(long = "in", value_name = "SESSION")]
        in_session: Option<String>,
        /// The best thought (default: the best-scored success, else the best-scored leaf).
        #[arg(long)]
        best: Option<String>,
        /// The final answer (kept in done.json, refused inside the lesson).
        #[arg(long)]
        answer: Option<String>,
        /// The lesson's topic (a key: a-z, 0-9, '-').
        #[arg(long, requires = "lesson")]
        topic: Option<String>,
        /// The lesson: answer-free advice for next time.
        #[arg(long, requires = "topic")]
        lesson: Option<String>,
    },
    /// Search earlier thoughts, ranked by ρ = 0.7·score + 0.2·outcome + 0.1·recency.
    Search {
        /// Free text; each hit shows its similarity to it.
        query: Option<String>,
        /// Keywords every hit must contain.
        #[arg(long)]
        grep: Option<String>,
        /// A string the thought added or removed relative to its parent.
        #[arg(short = 'S', long = "pickaxe")]
        pickaxe: Option<String>,
        /// Only this outcome.
        #[arg(long, value_enum)]
        outcome: Option<OutcomeFilterArg>,
        /// Only this session.
        #[arg(long = "in", value_name = "SESSION")]
        in_session: Option<String>,
        /// Only the open frontier (leaves of unfinished sessions not marked failed).
        #[arg(long)]
        frontier: bool,
        /// How many hits.
        #[arg(long, short = 'n', default_value_t = 10)]
        limit: usize,
        /// Weights of score, outcome and recency, e.g. 0.7,0.2,0.1.
        #[arg(long, value_name = "S,O,R")]
        weights: Option<String>,
        /// The copyability threshold (similarity flagged as a near-duplicate).
        #[arg(long, default_value_t = ops::DEFAULT_COPY_THRESHOLD)]
        copy_threshold: f64,
        /// With free text: how far below the most similar thought others may be and still rank.
        #[arg(long, default_value_t = 0.25)]
        relevance_band: f64,
    },
    /// The full state at a thought: the path from the root, scores, trace.
    Replay {
        /// The thought (id or prefix).
        id: String,
        /// Write the path into this (empty or new) directory.
        #[arg(long)]
        into: Option<PathBuf>,
    },
    /// Compare two thoughts' reasoning line by line.
    Diff {
        /// The first thought.
        from: String,
        /// The second thought.
        to: String,
    },
    /// Write sessions (all when none are named) into a git bundle.
    Bundle {
        /// The bundle file.
        file: PathBuf,
        /// The sessions.
        sessions: Vec<String>,
    },
    /// Read sessions from a git bundle of this project.
    Unbundle {
        /// The bundle file.
        file: PathBuf,
    },
    /// One sequential-thinking step (numbered, revising or branching).
    Step {
        /// The thought; `-` reads standard input.
        text: String,
        /// Its number (1-based).
        #[arg(long)]
        number: u32,
        /// The estimated total.
        #[arg(long)]
        total: u32,
        /// This is the last thought.
        #[arg(long)]
        last: bool,
        /// It revises thought N.
        #[arg(long, value_name = "N")]
        revises: Option<u32>,
        /// It branches from thought N.
        #[arg(long, value_name = "N")]
        branch_from: Option<u32>,
        /// The branch id.
        #[arg(long)]
        branch: Option<String>,
        /// The session (default: --session, else `sequential`).
        #[arg(long = "in", value_name = "SESSION")]
        in_session: Option<String>,
        #[command(flatten)]
        scores: ScoreArgs,
        /// The outcome.
        #[arg(long, value_enum)]
        outcome: Option<OutcomeArg>,
    },
}

fn text_arg(text: &str) -> CmdResult<String> {
    if text == "-" {
        read_text("-")
    } else {
        Ok(text.to_string())
    }
}

fn outcome(arg: OutcomeArg) -> Outcome {
    match arg {
        OutcomeArg::Success => Outcome::Success,
        OutcomeArg::Failed => Outcome::Failed,
    }
}

fn weights(value: &str) -> CmdResult<RankWeights> {
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

fn trace(source: &Option<String>) -> CmdResult<Vec<serde_json::Value>> {
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

pub fn run(ui: &mut Ui, session: &mut Session, args: &ThinkArgs) -> CmdResult {
    match &args.action {
        ThinkAction::Add {
            text,
            in_session,
            parent,
            scores,
            trace: trace_file,
            model,
            elapsed_ms,
        } => {
            let out = session.run(
                ui,
                ops::ThinkAdd {
                    session: in_session.clone(),
                    parent: parent.clone(),
                    text: text_arg(text)?,
                    score: scores.score,
                    components: scores.components()?,
                    trace: trace(trace_file)?,
                    model: model.clone(),
                    elapsed_ms: *elapsed_ms,
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
        }
        ThinkAction::Score { id, scores } => {
            let out = session.run(
                ui,
                ops::ThinkScore {
                    id: id.clone(),
                    score: scores.score,
                    components: scores.components()?,
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "Thought {} now scores {:.2}\n",
                    short(&out.id),
                    out.scores.combined
                ));
            });
        }
        ThinkAction::Outcome { id, outcome: o } => {
            let out = session.run(
                ui,
                ops::ThinkOutcome {
                    id: id.clone(),
                    outcome: outcome(*o),
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&format!("Marked {} ({})\n", short(&out.id), out.refname));
            });
        }
        ThinkAction::Done {
            in_session,
            best,
            answer,
            topic,
            lesson,
        } => {
            let out = session.run(
                ui,
                ops::ThinkDone {
                    session: in_session.clone(),
                    best: best.clone(),
                    answer: answer.clone(),
                    topic: topic.clone(),
                    lesson: lesson.clone(),
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "Finished {}: best thought {}\n",
                    out.session,
                    short(&out.best)
                ));
                if let Some(lesson) = &out.lesson {
                    s.push_str(&format!("Lesson kept at {}\n", lesson.path));
                }
            });
        }
        ThinkAction::Search {
            query,
            grep,
            pickaxe,
            outcome,
            in_session,
            frontier,
            limit,
            weights: w,
            copy_threshold,
            relevance_band,
        } => {
            let out = session.run(
                ui,
                ops::ThinkSearch {
                    query: query.clone(),
                    grep: grep.clone(),
                    pickaxe: pickaxe.clone(),
                    outcome: outcome.map(|o| match o {
                        OutcomeFilterArg::Success => OutcomeFilter::Success,
                        OutcomeFilterArg::Failed => OutcomeFilter::Failed,
                        OutcomeFilterArg::Best => OutcomeFilter::Best,
                        OutcomeFilterArg::Unmarked => OutcomeFilter::Unmarked,
                    }),
                    session: in_session.clone(),
                    frontier: *frontier,
                    limit: *limit,
                    weights: w.as_deref().map(weights).transpose()?,
                    copy_threshold: *copy_threshold,
                    relevance_band: *relevance_band,
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
        }
        ThinkAction::Replay { id, into } => {
            let into = into
                .as_ref()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()));
            let out = session.run(
                ui,
                ops::ThinkReplay {
                    id: id.clone(),
                    into,
                },
            )?;
            ui.emit(&out, |s| {
                for node in &out.path {
                    s.push_str(&format!(
                        "── {} depth {} score {:.2}\n{}\n",
                        short(&node.id),
                        node.metadata.depth,
                        node.scores.combined,
                        node.text.trim_end()
                    ));
                    for event in &node.trace {
                        s.push_str(&format!("   trace: {event}\n"));
                    }
                }
                for dir in &out.written {
                    s.push_str(&format!("Wrote {dir}\n"));
                }
            });
        }
        ThinkAction::Diff { from, to } => {
            let out = session.run(
                ui,
                ops::ThinkDiff {
                    from: from.clone(),
                    to: to.clone(),
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "--- {} score {:.2}\n+++ {} score {:.2}\n",
                    short(&out.from),
                    out.from_scores.combined,
                    short(&out.to),
                    out.to_scores.combined
                ));
                for line in &out.lines {
                    match line.origin {
                        '@' => s.push_str(&format!("{}\n", line.text)),
                        o => s.push_str(&format!("{o}{}\n", line.text)),
                    }
                }
            });
        }
        ThinkAction::Bundle { file, sessions } => {
            let out = session.run(
                ui,
                ops::ThinkBundle {
                    sessions: sessions.clone(),
                    file: std::path::absolute(file).unwrap_or_else(|_| file.clone()),
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "Bundled {} ({} refs, {} bytes) into {}\n",
                    out.sessions.join(", "),
                    out.refs.len(),
                    out.bytes,
                    out.path
                ));
            });
        }
        ThinkAction::Unbundle { file } => {
            let out = session.run(
                ui,
                ops::ThinkUnbundle {
                    file: std::path::absolute(file).unwrap_or_else(|_| file.clone()),
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "Imported {}: {} refs updated\n",
                    out.sessions.join(", "),
                    out.updated.len()
                ));
            });
        }
        ThinkAction::Step {
            text,
            number,
            total,
            last,
            revises,
            branch_from,
            branch,
            in_session,
            scores,
            outcome: o,
        } => {
            let out = session.run(
                ui,
                SequentialThinking {
                    thought: text_arg(text)?,
                    thought_number: *number,
                    total_thoughts: *total,
                    next_thought_needed: !*last,
                    is_revision: revises.map(|_| true),
                    revises_thought: *revises,
                    branch_from_thought: *branch_from,
                    branch_id: branch.clone(),
                    needs_more_thoughts: None,
                    session: in_session.clone(),
                    score: scores.score,
                    components: scores.components()?,
                    outcome: o.map(outcome),
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
            });
        }
    }
    Ok(())
}
