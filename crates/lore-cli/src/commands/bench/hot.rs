//! `lore bench hot`: arguments to the hot-paths benchmark (what an agent's calls cost as whole
//! processes, and in process at 100,000 memories) and its report as a markdown table.

use clap::Args;
use lore::progress::SharedProgress;
use lore_bench::bench::hot::{BenchHot, HotBenchReport};

use super::internal;
use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::ui::Ui;

/// Time the paths an agent hits on every call: `lore remember`, `lore recall`, `ctx recall`
/// and the SessionStart, PostToolUse and Stop hooks as whole processes, remember and BM25
/// recall in process at 100,000 memories.
#[derive(Args, Debug)]
pub struct HotBenchArgs {
    /// Memories of the small store.
    #[arg(long, default_value_t = 10_000)]
    pub small: usize,
    /// Memories of the large store (0 skips its rows).
    #[arg(long, default_value_t = 100_000)]
    pub large: usize,
    /// Timed whole-process runs per row.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
    /// Timed in-process runs per row.
    #[arg(long, default_value_t = 200)]
    pub in_process_runs: usize,
    /// Committed context steps for `ctx recall`.
    #[arg(long, default_value_t = 10_000)]
    pub steps: usize,
    /// Size of the Stop hook's transcript, in MB.
    #[arg(long, default_value_t = 20)]
    pub transcript_mb: usize,
    /// Time this `lore` binary's processes instead of this one's.
    #[arg(long, value_name = "PATH")]
    pub binary: Option<std::path::PathBuf>,
    /// Also time an earlier `lore` build's processes on the same workloads: the "before" column.
    #[arg(long, value_name = "PATH")]
    pub before: Option<std::path::PathBuf>,
    /// Keep the generated repositories in this directory (for inspection) instead of deleting
    /// them.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<std::path::PathBuf>,
    /// Seed of the synthetic corpus.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

pub fn run(
    ui: &mut Ui,
    global: &GlobalArgs,
    args: &HotBenchArgs,
    progress: SharedProgress,
) -> CmdResult {
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let lore_binary = match &args.binary {
        Some(path) => path.clone(),
        None => super::own_binary()?,
    };
    let request = BenchHot {
        small: args.small,
        large: args.large,
        runs: args.runs,
        in_process_runs: args.in_process_runs,
        steps: args.steps,
        transcript_mb: args.transcript_mb,
        seed: args.seed,
        lore_binary,
        before_binary: args.before.clone(),
        lore_args: super::embedder_args(global),
        work_dir: args.keep.clone().unwrap_or_else(|| tmp.path().join("work")),
    };
    let work_dir = request.work_dir.clone();
    super::measure_in_work_dir(
        ui,
        global,
        (request, &work_dir),
        tmp.path(),
        progress,
        table,
    )
}

fn table(s: &mut String, out: &HotBenchReport) {
    s.push_str(&format!(
        "machine: {}\nembedder: {}\n\n",
        out.machine, out.embedder
    ));
    let with_before = out.rows.iter().any(|r| r.before.is_some());
    if with_before {
        s.push_str(
            "| path | runs | p50 | p95 | target | before p50 | before p95 |\n\
             |---|---:|---:|---:|---|---:|---:|\n",
        );
    } else {
        s.push_str("| path | runs | p50 | p95 | target |\n|---|---:|---:|---:|---|\n");
    }
    for r in &out.rows {
        let m = &r.measured;
        s.push_str(&format!(
            "| {} | {} | {:.2} ms | {} | {} |",
            r.path,
            m.n,
            m.p50_ms,
            m.p95_text(),
            r.target
        ));
        match (&r.before, with_before) {
            (Some(b), _) => s.push_str(&format!(" {:.2} ms | {} |", b.p50_ms, b.p95_text())),
            (None, true) => s.push_str(" in process: not measured | |"),
            (None, false) => {}
        }
        s.push('\n');
    }
}
