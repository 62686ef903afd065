//! `lore eval longmemeval` (the LongMemEval retrieval benchmark through lore's own recall) and
//! `lore eval trajectories` (trajectory retrieval strategies on seeded synthetic trajectories).

use std::io::{IsTerminal, Read, Write};

use clap::{Args, Subcommand};

use super::common::RankArgs;
use crate::cli::GlobalArgs;
use crate::error::{CmdResult, CommandError};
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
    #[command(flatten)]
    pub rank: RankArgs,
}

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: &EvalArgs) -> CmdResult {
    match &args.benchmark {
        Benchmark::Longmemeval(args) => longmemeval(ui, global, args),
        Benchmark::Trajectories(args) => trajectories(ui, global, args),
    }
}

fn trajectories(ui: &mut Ui, global: &GlobalArgs, args: &TrajectoriesArgs) -> CmdResult {
    use lore::trajectory::bench::{BUDGETS, BenchConfig, run};
    if args.steps < 200 || args.trajectories == 0 || args.queries == 0 {
        return Err(CommandError::usage(
            "use at least 200 steps, one trajectory and one query per kind",
        ));
    }
    let config = BenchConfig {
        seed: args.seed,
        trajectories: args.trajectories,
        steps: args.steps,
        queries_per_kind: args.queries,
    };
    let embedder = location::embedder(global)?;
    let report = run(&config, embedder, &lore::trajectory::Params::default())?;
    ui.emit(&report, |s| {
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
            for b in BUDGETS {
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
    });
    Ok(())
}

fn longmemeval(ui: &mut Ui, global: &GlobalArgs, args: &LongMemEvalArgs) -> CmdResult {
    let mut bytes = Vec::new();
    std::fs::File::open(&args.file)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| CommandError::usage(format!("cannot read {}: {e}", args.file.display())))?;
    let questions = if bytes.starts_with(&[0x1f, 0x8b]) {
        lore::eval::read_questions(flate2::read::GzDecoder::new(&bytes[..]))?
    } else {
        lore::eval::read_questions(&bytes[..])?
    };
    let questions = match args.questions {
        Some(n) => &questions[..n.min(questions.len())],
        None => &questions[..],
    };
    let embedder = location::embedder(global)?;
    let options = args.rank.options()?;
    let work = tempfile::tempdir()
        .map_err(|e| CommandError::usage(format!("cannot make a temporary directory: {e}")))?;
    let show_progress = std::io::stderr().is_terminal();
    let report =
        lore::eval::longmemeval(questions, embedder, &options, work.path(), |done, all| {
            if show_progress {
                let _ = write!(std::io::stderr(), "\r{done}/{all} questions");
                if done == all {
                    let _ = writeln!(std::io::stderr());
                }
            }
        })?;
    ui.emit(&report, |s| {
        s.push_str(&format!(
            "LongMemEval ({} questions scored, {} skipped), embedder {}\nranking: {}\n",
            report.questions, report.skipped, report.embedder, report.ranking
        ));
        s.push_str("  k   recall_any  recall_all  ndcg_any\n");
        for a in &report.at {
            s.push_str(&format!(
                "{:>3}   {:>10.3}  {:>10.3}  {:>8.3}\n",
                a.k, a.recall_any, a.recall_all, a.ndcg_any
            ));
        }
        s.push_str(&format!(
            "loose R@5 (answer_session_ids as given, {} questions): {:.3}\n",
            report.loose_questions, report.loose_recall_any_at_5
        ));
        s.push_str(&format!(
            "indexing {:.1} s in total; query p50 {:.2} ms, p95 {:.2} ms\n",
            report.indexing_seconds, report.query_ms_p50, report.query_ms_p95
        ));
        for (t, n, r) in &report.by_type {
            s.push_str(&format!("  {t:<28} {n:>4}  recall_all@5 {r:.3}\n"));
        }
    });
    Ok(())
}
