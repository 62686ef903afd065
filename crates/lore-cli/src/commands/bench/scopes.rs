//! `lore bench scopes`: arguments to the scopes benchmark (recall and SessionStart as whole
//! processes, project-only and with the personal store) and its report as a markdown table.

use clap::Args;
use lore::progress::SharedProgress;
use lore_bench::bench::scopes::{BenchScopes, ScopesBenchReport};

use super::internal;
use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::location;
use crate::ui::Ui;

/// Time `lore recall` and the SessionStart hook as whole processes over a project store alone
/// (`--scope project`) and with a personal store beside it (the default scopes), alternating
/// run by run.
#[derive(Args, Debug)]
pub struct ScopesBenchArgs {
    /// Memories of the project store.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub project_memories: usize,
    /// Memories of the personal store.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub personal_memories: usize,
    /// Timed runs of each kind.
    #[arg(long, default_value_t = 30)]
    pub runs: usize,
    /// Seed of the synthetic corpus.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Keep the generated stores in this directory (for inspection) instead of deleting them.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<std::path::PathBuf>,
}

pub fn run(
    ui: &mut Ui,
    global: &GlobalArgs,
    args: &ScopesBenchArgs,
    progress: SharedProgress,
) -> CmdResult {
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let lore_binary = super::own_binary()?;
    let request = BenchScopes {
        project: args.project_memories,
        personal: args.personal_memories,
        runs: args.runs,
        seed: args.seed,
        lore_binary,
        lore_args: super::embedder_args(global),
        work_dir: args.keep.clone().unwrap_or_else(|| tmp.path().join("work")),
    };
    std::fs::create_dir_all(&request.work_dir)
        .map_err(|e| internal(format!("creating a work dir: {e}")))?;
    let embedder = location::embedder(global)?;
    super::measure_and_show(ui, request, tmp.path(), embedder, progress, table)
}

fn table(s: &mut String, out: &ScopesBenchReport) {
    s.push_str(&format!(
        "machine: {}\nembedder: {}\nstores: project {} memories, personal {} memories\n\n",
        out.machine, out.embedder, out.project, out.personal
    ));
    s.push_str(
        "| whole process | project only p50/p95 | project + personal p50/p95 | p50 difference |\n",
    );
    s.push_str("|---|---|---|---|\n");
    for (what, alone, stacked) in [
        ("lore recall", &out.recall_project_only, &out.recall_stacked),
        (
            "hook SessionStart",
            &out.session_start_project_only,
            &out.session_start_stacked,
        ),
    ] {
        s.push_str(&format!(
            "| {what} | {:.2} ms / {} | {:.2} ms / {} | {:+.2} ms |\n",
            alone.p50_ms,
            alone.p95_text(),
            stacked.p50_ms,
            stacked.p95_text(),
            stacked.p50_ms - alone.p50_ms
        ));
    }
}
