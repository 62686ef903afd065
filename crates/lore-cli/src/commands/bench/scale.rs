//! `lore bench scale`: arguments to the scale benchmark (stores built by a whole `lore import
//! jsonl` at growing sizes, then whole everyday processes) and its report as a markdown table.

use clap::Args;
use lore::progress::SharedProgress;
use lore_bench::bench::Stats;
use lore_bench::bench::scale::{BenchScale, ScaleReport};

use super::internal;
use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::ui::Ui;

/// Build stores by importing a generated JSONL (10k, 100k, 1M, …) and time whole processes:
/// the import, the first command after it, recall, remember, list and status; `.git` size and
/// peak resident memory.
#[derive(Args, Debug)]
pub struct ScaleBenchArgs {
    /// Store sizes (memories imported), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
    pub sizes: Vec<usize>,
    /// Timed whole-process runs of each everyday command per size.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
    /// Keep the generated repositories in this directory instead of deleting them.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<std::path::PathBuf>,
    /// Seed of the synthetic corpus.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

pub fn run(
    ui: &mut Ui,
    global: &GlobalArgs,
    args: &ScaleBenchArgs,
    progress: SharedProgress,
) -> CmdResult {
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let request = BenchScale {
        sizes: args.sizes.clone(),
        runs: args.runs,
        seed: args.seed,
        lore_binary: super::own_binary()?,
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

fn table(s: &mut String, out: &ScaleReport) {
    s.push_str(&format!(
        "machine: {}\nembedder: {}\n\n",
        out.machine, out.embedder
    ));
    s.push_str(
        "| memories | import | first command after import | recall p50 | remember p50 | list p50 | status p50 | `.git` size (index) |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mb = |b: u64| format!("{:.0} MB", b as f64 / 1e6);
    let ms = |st: &Stats| format!("{:.1} ms", st.p50_ms);
    for r in &out.rows {
        s.push_str(&format!(
            "| {} | {:.1} s ({} RSS) | {:.2} s ({} RSS) | {} | {} | {} | {} | {} ({}) |\n",
            r.memories,
            r.import_seconds,
            mb(r.import_peak_rss),
            r.first_command_seconds,
            mb(r.first_command_peak_rss),
            ms(&r.recall),
            ms(&r.remember),
            ms(&r.list),
            ms(&r.status),
            mb(r.git_dir_bytes),
            mb(r.derived_bytes),
        ));
    }
}
