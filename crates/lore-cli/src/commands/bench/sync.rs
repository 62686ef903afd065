//! `lore bench sync`: arguments to the sync benchmark (whole `lore sync` runs between two clones
//! of a local bare repository) and its report as a markdown table.

use clap::Args;
use lore::progress::SharedProgress;
use lore_bench::bench::Stats;
use lore_bench::bench::sync::{BenchSync, SyncBenchReport};

use super::internal;
use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::ui::Ui;

/// Time whole `lore sync` runs: a no-op sync, a merge of two clones that each added memories,
/// and a sync bringing many new memories (index caught up).
#[derive(Args, Debug)]
pub struct SyncBenchArgs {
    /// Memories both clones share before the timed runs.
    #[arg(long, default_value_t = 1000)]
    pub base: usize,
    /// Timed no-op syncs.
    #[arg(long, default_value_t = 20)]
    pub noop_runs: usize,
    /// Memories each clone adds before a timed merge.
    #[arg(long, default_value_t = 1000)]
    pub merge_each: usize,
    /// Timed merges.
    #[arg(long, default_value_t = 3)]
    pub merge_runs: usize,
    /// Memories a timed sync brings from the other clone.
    #[arg(long, default_value_t = 10_000)]
    pub bring: usize,
    /// Timed syncs bringing them.
    #[arg(long, default_value_t = 3)]
    pub bring_runs: usize,
    /// Seed of the synthetic corpus.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

pub fn run(
    ui: &mut Ui,
    global: &GlobalArgs,
    args: &SyncBenchArgs,
    progress: SharedProgress,
) -> CmdResult {
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let request = BenchSync {
        base: args.base,
        noop_runs: args.noop_runs,
        merge_each: args.merge_each,
        merge_runs: args.merge_runs,
        bring: args.bring,
        bring_runs: args.bring_runs,
        seed: args.seed,
        lore_binary: super::own_binary()?,
        lore_args: super::embedder_args(global),
        work_dir: tmp.path().join("work"),
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

fn table(s: &mut String, out: &SyncBenchReport) {
    s.push_str(&format!(
        "machine: {}\nembedder: {}\n\n",
        out.machine, out.embedder
    ));
    s.push_str(
        "| whole `lore sync` process | runs | p50 | p95 | target |\n|---|---:|---:|---:|---:|\n",
    );
    let row = |s: &mut String, what: String, st: &Stats, target: &str| {
        s.push_str(&format!(
            "| {what} | {} | {:.0} ms | {} | {target} |\n",
            st.n,
            st.p50_ms,
            st.p95_text()
        ));
    };
    row(
        s,
        format!("no-op ({} memories shared)", out.base),
        &out.noop,
        "≤ 150 ms",
    );
    row(
        s,
        format!("merge: each clone added {}", out.merge_each),
        &out.merge,
        "≤ 1 s",
    );
    row(
        s,
        format!("bring {} new memories, index caught up", out.bring),
        &out.bring_new,
        "≤ 5 s",
    );
}
