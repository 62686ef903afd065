//! `lore eval longmemeval` (the LongMemEval retrieval benchmark through lore's own recall),
//! `lore eval locomo` (LoCoMo evidence retrieval, one store per conversation) and
//! `lore eval trajectories` (trajectory retrieval strategies on seeded synthetic trajectories):
//! arguments to the `eval_longmemeval`, `eval_locomo` and `eval_trajectories` operations, and their reports
//! as text tables.

use std::path::Path;

use clap::{Args, Subcommand};
use lore::ops::Operation;
use lore::progress::SharedProgress;
use lore_bench::longmemeval::EvalReport;
use lore_bench::retrieval::{AtK, CategoryMetrics};
use lore_bench::trajectories::{EvalTrajectories, TrajectoryReport};
use lore_bench::{EvalLoCoMo, EvalLongMemEval, LoCoMoReport, run_measurement};

use super::common::RankArgs;
use crate::error::{CmdResult, CommandError};
use crate::global::GlobalArgs;
use crate::location;
use crate::ui::Ui;

/// Measure retrieval quality on a benchmark.
#[derive(Args, Debug)]
pub struct EvalArgs {
    #[command(subcommand)]
    pub benchmark: Benchmark,
}

#[derive(Subcommand, Debug)]
pub enum Benchmark {
    /// LongMemEval, official session-level retrieval protocol: each question's haystack sessions
    /// (user turns) become memories in a fresh store, and the question is recalled against them.
    Longmemeval(LongMemEvalArgs),
    /// LoCoMo evidence retrieval (the `locomo10.json` schema): each conversation's turns become
    /// memories in one fresh store, and each question (but the adversarial category 5) is
    /// recalled and scored by its evidence turns, per category.
    Locomo(LoCoMoArgs),
    /// Trajectory retrieval: every strategy of `lore ctx recall` on seeded long trajectories
    /// whose queries' evidence shares tools/entities, shares nothing, or a mix.
    Trajectories(TrajectoriesArgs),
}

/// Options of `lore eval trajectories`.
#[derive(Args, Debug)]
pub struct TrajectoriesArgs {
    /// The generator's seed.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Trajectories generated.
    #[arg(long, default_value_t = 3)]
    pub trajectories: usize,
    /// Steps per trajectory.
    #[arg(long, default_value_t = 10_000)]
    pub steps: usize,
    /// Queries of each kind per trajectory.
    #[arg(long, default_value_t = 20)]
    pub queries: usize,
}

/// Options of `lore eval longmemeval`.
#[derive(Args, Debug)]
pub struct LongMemEvalArgs {
    /// The questions: a JSON list in the official format, optionally gzip-compressed.
    pub file: std::path::PathBuf,
    /// Only the first N questions.
    #[arg(long, value_name = "N")]
    pub questions: Option<usize>,
    /// Questions evaluated at once (default: one per core; 1 for quiet latency figures).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// List the questions whose gold sessions are not all in the top 5, with the place of each.
    #[arg(long)]
    pub misses: bool,
    #[command(flatten)]
    pub rank: RankArgs,
}

/// Options of `lore eval locomo`.
#[derive(Args, Debug)]
pub struct LoCoMoArgs {
    /// The conversations: `locomo10.json` or a file in its schema, optionally gzip-compressed.
    pub file: std::path::PathBuf,
    /// Conversations evaluated at once (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub rank: RankArgs,
}

/// Runs `lore eval`, with a progress bar on a terminal (none with `--json`).
pub fn run(ui: &mut Ui, global: &GlobalArgs, args: &EvalArgs) -> CmdResult {
    let progress = crate::progress_bar::for_terminal(ui.json());
    run_with_progress(ui, global, args, progress)
}

/// Runs `lore eval`, reporting progress to `progress`.
pub fn run_with_progress(
    ui: &mut Ui,
    global: &GlobalArgs,
    args: &EvalArgs,
    progress: SharedProgress,
) -> CmdResult {
    let work = tempfile::tempdir()
        .map_err(|e| CommandError::usage(format!("cannot make a temporary directory: {e}")))?;
    let scratch = work.path().join("handle");
    match &args.benchmark {
        Benchmark::Longmemeval(args) => {
            let request = EvalLongMemEval {
                file: absolute(&args.file)?,
                questions: args.questions,
                threads: args.threads,
                ranking: args.rank.ranking()?,
                misses: args.misses,
                work_dir: work.path().to_path_buf(),
            };
            let report = measure(ui, global, request, &scratch, progress)?;
            ui.emit(&report, |s| longmemeval_text(s, &report));
        }
        Benchmark::Locomo(args) => {
            let request = EvalLoCoMo {
                file: absolute(&args.file)?,
                threads: args.threads,
                ranking: args.rank.ranking()?,
                work_dir: work.path().to_path_buf(),
            };
            let report = measure(ui, global, request, &scratch, progress)?;
            ui.emit(&report, |s| locomo_text(s, &report));
        }
        Benchmark::Trajectories(args) => {
            let request = EvalTrajectories {
                seed: args.seed,
                trajectories: args.trajectories,
                steps: args.steps,
                queries_per_kind: args.queries,
            };
            let report = measure(ui, global, request, &scratch, progress)?;
            ui.emit(&report, |s| trajectories_text(s, &report));
        }
    }
    Ok(())
}

/// The file named on the command line as an absolute path (the operation wants one).
fn absolute(file: &Path) -> CmdResult<std::path::PathBuf> {
    std::path::absolute(file)
        .map_err(|e| CommandError::usage(format!("cannot read {}: {e}", file.display())))
}

/// Runs a measurement with the embedder the global options ask for; its warnings go to stderr.
fn measure<O: Operation>(
    ui: &mut Ui,
    global: &GlobalArgs,
    request: O,
    scratch: &Path,
    progress: SharedProgress,
) -> CmdResult<O::Output> {
    let embedder = location::embedder(global)?;
    let (report, warnings) = run_measurement(request, scratch, embedder, progress)?;
    for w in warnings {
        ui.warn(&w);
    }
    Ok(report)
}

fn trajectories_text(s: &mut String, report: &TrajectoryReport) {
    let config = &report.config;
    s.push_str(&format!(
        "Trajectory retrieval: {} trajectories x {} steps, seed {}, embedder {}\n",
        config.trajectories, config.steps, config.seed, report.embedder
    ));
    s.push_str(&format!(
        "build {:.0} ms per trajectory (step by step); units per trajectory: {}\n",
        report.build_ms,
        report
            .units
            .iter()
            .map(|(v, n)| format!("{v} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for kind in &report.kinds {
        s.push_str(&format!(
            "\n{} evidence ({} queries; {} near, {} far evidence steps)\n",
            kind.kind.as_str(),
            kind.queries,
            kind.evidence_near,
            kind.evidence_far
        ));
        s.push_str("strategy   Hit@2");
        for b in &report.budgets {
            s.push_str(&format!("  R@{b:<5}"));
        }
        s.push_str("  near@1024 far@1024  p50 ms  p95 ms\n");
        for st in &kind.strategies {
            s.push_str(&format!("{:<9} {:>6.3}", st.strategy.as_str(), st.hit_at_2));
            for r in &st.recall {
                s.push_str(&format!("  {r:>7.3}"));
            }
            s.push_str(&format!(
                "  {:>9.3} {:>8.3}  {:>6.2}  {:>6.2}",
                st.recall_near.last().copied().unwrap_or(0.0),
                st.recall_far.last().copied().unwrap_or(0.0),
                st.query_p50_ms,
                st.query_p95_ms
            ));
            if let Some(share) = st.osu_share {
                s.push_str(&format!("  (osu for {:.0}%)", share * 100.0));
            }
            s.push('\n');
        }
    }
}

fn longmemeval_text(s: &mut String, report: &EvalReport) {
    s.push_str(&format!(
        "LongMemEval ({} questions scored, {} skipped), embedder {}\nranking: {}\n",
        report.questions, report.skipped, report.embedder, report.ranking
    ));
    // ndcg_any discounts a hit at rank r by 1/log2(r+1); ndcg_lme as LongMemEval's own
    // eval_utils.py does (ranks 1 and 2 count fully).
    s.push_str("  k   recall_any  recall_all  ndcg_any  ndcg_lme\n");
    for a in &report.at {
        s.push_str(&format!(
            "{:>3}   {:>10.3}  {:>10.3}  {:>8.3}  {:>8.3}\n",
            a.k, a.recall_any, a.recall_all, a.ndcg_any, a.ndcg_longmemeval
        ));
    }
    s.push_str(&format!(
        "loose R@5 (answer_session_ids as given, {} questions): {:.3}\n",
        report.loose_questions, report.loose_recall_any_at_5
    ));
    s.push_str(&format!(
        "indexing {:.1} s in total; query p50 {:.2} ms, p95 {:.2} ms ({} threads)\n",
        report.indexing_seconds, report.query_ms_p50, report.query_ms_p95, report.threads
    ));
    s.push_str("\nper question type\n");
    category_table(s, &report.by_type, "recall_any", |a| a.recall_any);
    if !report.misses.is_empty() {
        s.push_str(
            "\nquestions with a gold session outside the top 5 (places of the gold sessions)\n",
        );
        for m in &report.misses {
            let places: Vec<String> = m
                .gold_places
                .iter()
                .map(|p| p.map_or("-".into(), |p| p.to_string()))
                .collect();
            s.push_str(&format!(
                "  {} [{}] {} | asked {} | {}\n",
                m.question_id,
                m.question_type,
                places.join(","),
                m.question_date,
                lore::agent_text::neutralize_controls(&m.question)
            ));
        }
    }
}

fn locomo_text(s: &mut String, report: &LoCoMoReport) {
    s.push_str(&format!(
        "LoCoMo evidence retrieval ({} conversations, {} turns; {} questions scored, {} skipped), embedder {}\nranking: {}\n",
        report.conversations,
        report.turns,
        report.questions,
        report.skipped,
        report.embedder,
        report.ranking
    ));
    s.push_str("  k   recall  recall_any  recall_all  ndcg_any\n");
    for a in &report.at {
        s.push_str(&format!(
            "{:>3}   {:>6.3}  {:>10.3}  {:>10.3}  {:>8.3}\n",
            a.k, a.recall, a.recall_any, a.recall_all, a.ndcg_any
        ));
    }
    s.push_str(&format!(
        "indexing {:.1} s in total; query p50 {:.2} ms, p95 {:.2} ms ({} threads)\n",
        report.indexing_seconds, report.query_ms_p50, report.query_ms_p95, report.threads
    ));
    s.push_str("\nper category (recall = share of the evidence turns found)\n");
    category_table(s, &report.by_category, "recall", |a| a.recall);
}

/// One row per category: queries, then the metric's headline cut-offs and NDCG@10.
fn category_table(
    s: &mut String,
    rows: &[CategoryMetrics],
    recall_name: &str,
    recall: impl Fn(&AtK) -> f64,
) {
    let width = rows
        .iter()
        .map(|r| r.category.len())
        .max()
        .unwrap_or(0)
        .max(8);
    s.push_str(&format!(
        "{:<width$}  queries  {recall_name}@1  @5     @10    recall_all@5  ndcg@10\n",
        "category"
    ));
    for row in rows {
        s.push_str(&format!(
            "{:<width$}  {:>7}  {:>12.3}  {:.3}  {:.3}  {:>12.3}  {:>7.3}\n",
            row.category,
            row.queries,
            recall(&row.at(1)),
            recall(&row.at(5)),
            recall(&row.at(10)),
            row.at(5).recall_all,
            row.at(10).ndcg_any,
        ));
    }
}
