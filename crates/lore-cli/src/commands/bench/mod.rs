//! `lore bench`: arguments to the `bench` operation (reproducible measurements of lore's store
//! and index at several sizes, beside the git-notes baseline), and its report as a markdown
//! table.

mod hot;
mod input_cost;
mod scale;
mod scopes;
mod substrates;
mod sync;

use std::ffi::OsString;

use clap::Args;
use lore::progress::SharedProgress;
use lore_bench::bench::{Bench, BenchReport, Stats};
use lore_bench::run_measurement;

use crate::error::{CmdResult, CommandError};
use crate::global::GlobalArgs;
use crate::location;
use crate::ui::Ui;

/// Measure remember, recall, reindex and storage size.
///
/// At several store sizes, beside the git-notes baseline. Prints a table (or JSON); reproducible
/// with the same --seed on the same machine. Repositories are made under $TMPDIR.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: Option<BenchWhat>,
    /// Store sizes to measure at (memories already stored), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    pub sizes: Vec<usize>,
    /// Timed in-process remembers per size.
    #[arg(long, default_value_t = 200)]
    pub writes: usize,
    /// Timed whole-process `lore remember` runs per size.
    #[arg(long, default_value_t = 50)]
    pub cli_writes: usize,
    /// Timed recall queries per size.
    #[arg(long, default_value_t = 200)]
    pub queries: usize,
    /// Timed whole-process `lore recall` runs per size.
    #[arg(long, default_value_t = 20)]
    pub cli_queries: usize,
    /// Timed whole-process `lore hook claude …` runs per size (SessionStart, UserPromptSubmit
    /// and Stop, each).
    #[arg(long, default_value_t = 50)]
    pub hook_runs: usize,
    /// Timed baseline `git log --grep` reads per size.
    #[arg(long, default_value_t = 20)]
    pub grep_queries: usize,
    /// Skip the git-notes baseline.
    #[arg(long)]
    pub no_baseline: bool,
    /// Keep the generated repositories in this directory (for inspection) instead of deleting them.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<std::path::PathBuf>,
    /// Seed of the synthetic corpus.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// Other measurements than the store benchmark.
#[derive(clap::Subcommand, Debug)]
pub enum BenchWhat {
    Substrates(substrates::SubstratesArgs),
    Merge(substrates::MergeArgs),
    Sync(sync::SyncBenchArgs),
    Hot(hot::HotBenchArgs),
    Scale(scale::ScaleBenchArgs),
    Scopes(scopes::ScopesBenchArgs),
    InputCost(input_cost::InputCostBenchArgs),
}

/// Runs `lore bench`, with a progress bar on a terminal (none with `--json`).
pub fn run(ui: &mut Ui, global: &GlobalArgs, args: &BenchArgs) -> CmdResult {
    let progress = crate::progress_bar::for_terminal(ui.json());
    match &args.what {
        Some(BenchWhat::Substrates(sub)) => return substrates::run(ui, global, sub, progress),
        Some(BenchWhat::Merge(merge)) => return substrates::run_merge(ui, merge, progress),
        Some(BenchWhat::Sync(sync_args)) => return sync::run(ui, global, sync_args, progress),
        Some(BenchWhat::Hot(hot_args)) => return hot::run(ui, global, hot_args, progress),
        Some(BenchWhat::Scale(scale_args)) => return scale::run(ui, global, scale_args, progress),
        Some(BenchWhat::Scopes(scopes_args)) => {
            return scopes::run(ui, global, scopes_args, progress);
        }
        Some(BenchWhat::InputCost(cost_args)) => {
            return input_cost::run(ui, global, cost_args, progress);
        }
        None => {}
    }
    run_with_progress(ui, global, args, progress)
}

/// Runs `lore bench`, reporting progress to `progress`.
pub fn run_with_progress(
    ui: &mut Ui,
    global: &GlobalArgs,
    args: &BenchArgs,
    progress: SharedProgress,
) -> CmdResult {
    // One directory for the whole run, removed at the end: deleting a large repository between
    // sizes would slow the next size's file creation (ext4 skips recently freed inodes).
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let lore_binary = own_binary()?;
    // The timed runs use the same embedder as the in-process measurements.
    let lore_args = embedder_args(global);
    let request = Bench {
        sizes: args.sizes.clone(),
        writes: args.writes,
        cli_writes: args.cli_writes,
        queries: args.queries,
        cli_queries: args.cli_queries,
        hook_runs: args.hook_runs,
        grep_queries: args.grep_queries,
        baseline: !args.no_baseline,
        seed: args.seed,
        lore_binary,
        lore_args,
        work_dir: args
            .keep
            .clone()
            .unwrap_or_else(|| tmp.path().to_path_buf()),
    };
    // Loaded once: the minilm tier reads a 90 MB model.
    let embedder = location::embedder(global)?;
    measure_and_show(ui, request, tmp.path(), embedder, progress, table)
}

/// A failure of the machinery around a measurement (a temp dir, finding lore's own binary).
pub(super) fn internal(message: String) -> CommandError {
    CommandError {
        class: lore::ErrorClass::Internal,
        code: None,
        message,
        hints: Vec::new(),
    }
}

/// The arguments that give timed `lore` runs the embedder of the in-process measurements.
pub(super) fn embedder_args(global: &GlobalArgs) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["--embedder".into(), global.embedder.clone().into()];
    if let Some(dir) = location::given_model(global) {
        args.extend(["--model-dir".into(), dir.into_os_string()]);
    }
    args
}

/// Runs a measurement over a scratch handle under `tmp`, shows its warnings and its report
/// (drawn by `draw`, or as JSON).
pub(super) fn measure_and_show<O: lore::ops::Operation>(
    ui: &mut Ui,
    request: O,
    tmp: &std::path::Path,
    embedder: Option<lore::embed::SharedEmbedder>,
    progress: SharedProgress,
    draw: fn(&mut String, &O::Output),
) -> CmdResult {
    let (out, warnings) = run_measurement(request, &tmp.join("handle"), embedder, progress)?;
    for w in warnings {
        ui.warn(&w);
    }
    ui.emit(&out, |s| draw(s, &out));
    Ok(())
}

/// [`measure_and_show`] for a request whose work directory (`work_dir`) is made first.
pub(super) fn measure_in_work_dir<O: lore::ops::Operation>(
    ui: &mut Ui,
    global: &GlobalArgs,
    (request, work_dir): (O, &std::path::Path),
    tmp: &std::path::Path,
    progress: SharedProgress,
    draw: fn(&mut String, &O::Output),
) -> CmdResult {
    std::fs::create_dir_all(work_dir).map_err(|e| internal(format!("creating a work dir: {e}")))?;
    let embedder = location::embedder(global)?;
    measure_and_show(ui, request, tmp, embedder, progress, draw)
}

/// The report as a markdown table, one row per size.
fn table(s: &mut String, out: &BenchReport) {
    s.push_str(&format!(
        "machine: {}\nembedder: {}\n",
        out.machine, out.embedder
    ));
    if let Some(rate) = out.embed_texts_per_second {
        s.push_str(&format!("embedding: {rate:.0} short texts/s on one core\n"));
    }
    s.push('\n');
    s.push_str("| memories | remember p50/p95 (in-process) | remember p50/p95 (CLI) | recall p50/p95 (in-process) | recall p50/p95 (CLI) | hook SessionStart p50/p95 | hook UserPromptSubmit p50/p95 | hook Stop (capture) p50/p95 | hook UserPromptSubmit, 100k-word prompt p50/p95 | reindex | bytes/memory after gc | git notes add p50/p95 | git log --grep p50 |\n");
    s.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in &out.results {
        let pair = |st: &Stats| format!("{:.2} ms / {}", st.p50_ms, st.p95_text());
        let base = |st: &Option<Stats>, both: bool| match st {
            Some(st) if both => pair(st),
            Some(st) => format!("{:.1} ms", st.p50_ms),
            None => "-".into(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} s | {:.0} | {} | {} |\n",
            r.memories,
            pair(&r.remember_in_process),
            pair(&r.remember_cli),
            pair(&r.recall),
            pair(&r.recall_cli),
            pair(&r.hook_session_start_cli),
            pair(&r.hook_prompt_cli),
            pair(&r.hook_stop_cli),
            pair(&r.hook_long_prompt_cli),
            r.reindex_seconds,
            r.bytes_per_memory_after_gc,
            base(&r.baseline_git_notes_add, true),
            base(&r.baseline_git_log_grep, false),
        ));
    }
}

/// This `lore` binary: the one the benchmarks time as whole processes.
pub(super) fn own_binary() -> CmdResult<std::path::PathBuf> {
    std::env::current_exe().map_err(|e| internal(format!("finding lore's own binary: {e}")))
}
