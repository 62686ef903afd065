//! `lore eval longmemeval`: the LongMemEval retrieval benchmark through lore's own recall.

use std::io::{IsTerminal, Read, Write};

use clap::{Args, Subcommand};

use super::recall::RankArgs;
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
    let Benchmark::Longmemeval(args) = &args.benchmark;
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
