//! `lore bench input-cost`: how each step over an agent's input grows with the input's size,
//! as a markdown table.

use clap::Args;
use lore::progress::SharedProgress;
use lore_bench::bench::input_cost::{BenchInputCost, InputCostReport};

use super::internal;
use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::ui::Ui;

/// Time each step over an agent's input (query terms, secret scanning, neutralising, capture,
/// reading a memory file, a whole remember) at two sizes eight times apart: linear work takes
/// about 8 times as long on the larger, quadratic work 64 times.
#[derive(Args, Debug)]
pub struct InputCostBenchArgs {}

pub fn run(
    ui: &mut Ui,
    global: &GlobalArgs,
    _args: &InputCostBenchArgs,
    progress: SharedProgress,
) -> CmdResult {
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let work_dir = tmp.path().join("work");
    let request = BenchInputCost {
        work_dir: work_dir.clone(),
    };
    super::measure_in_work_dir(
        ui,
        global,
        (request, &work_dir),
        tmp.path(),
        progress,
        table,
    )
}

fn table(s: &mut String, out: &InputCostReport) {
    s.push_str(&format!(
        "machine: {}\nbest of three per size; linear ≈ {g}×, quadratic ≈ {}×\n\n",
        out.machine,
        out.growth * out.growth,
        g = out.growth
    ));
    s.push_str("| step | small input | time | large input | time | ratio |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|\n");
    for r in &out.rows {
        s.push_str(&format!(
            "| {} | {} B | {:.2} ms | {} B | {:.2} ms | {:.1}× |\n",
            r.step, r.small_bytes, r.small_ms, r.large_bytes, r.large_ms, r.ratio
        ));
    }
}
