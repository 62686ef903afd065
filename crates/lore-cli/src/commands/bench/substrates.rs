//! `lore bench substrates` and `lore bench merge`: arguments to the substrates benchmark (five
//! memory substrates on one seeded workload, and lore's reasoning trees at scale) and to the merge
//! experiment (keyed lessons against concatenation and hashed file names), and their reports as
//! markdown tables.

use clap::Args;
use lore::progress::SharedProgress;
use lore_bench::bench::Stats;
use lore_bench::substrates::merge::{MergeExperiment, MergeOutcome, MergeReport};
use lore_bench::substrates::{BenchSubstrates, SubstratesReport};

use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::location;
use crate::ui::Ui;

/// Compare five memory substrates (none, markdown file, git/lore, vector, graph) on one seeded
/// workload, and measure lore's reasoning trees at scale.
#[derive(Args, Debug)]
pub struct SubstratesArgs {
    /// Filler cases stored beside the recurring problems.
    #[arg(long, default_value_t = 1000)]
    pub fillers: usize,
    /// Queries per similarity tier.
    #[arg(long, default_value_t = 40)]
    pub queries_per_tier: usize,
    /// Thoughts stored before lore's timed operations at scale (0 skips that part).
    #[arg(long, default_value_t = 100_000)]
    pub scale: usize,
    /// Timed operations of each kind at scale.
    #[arg(long, default_value_t = 200)]
    pub timed: usize,
    /// Timed whole-process `lore think add` runs.
    #[arg(long, default_value_t = 20)]
    pub cli_writes: usize,
    /// Seed of the workload.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Keep the generated repositories in this directory (for inspection) instead of deleting
    /// them.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<std::path::PathBuf>,
}

/// Two worker processes and an orchestrator over a central bare repository: disjoint lessons
/// merge cleanly; contradictory keyed lessons surface as conflicts, while concatenation and
/// hashed file names keep them silently.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Lessons each worker keeps on its own domain.
    #[arg(long, default_value_t = 5)]
    pub lessons_per_worker: usize,
    /// Topics both workers contradict each other on.
    #[arg(long, default_value_t = 5)]
    pub contradictions: usize,
}

use super::internal;

/// Runs the merge experiment in a temporary directory.
pub fn run_merge(ui: &mut Ui, args: &MergeArgs, progress: SharedProgress) -> CmdResult {
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let request = MergeExperiment {
        lessons_per_worker: args.lessons_per_worker,
        contradictions: args.contradictions,
        lore_binary: super::own_binary()?,
        work_dir: tmp.path().join("work"),
    };
    std::fs::create_dir_all(&request.work_dir)
        .map_err(|e| internal(format!("creating a work dir: {e}")))?;
    super::measure_and_show(ui, request, tmp.path(), None, progress, merge_table)
}

fn merge_table(s: &mut String, out: &MergeReport) {
    s.push_str(&format!(
        "disjoint domains: {} lessons merged, {} conflicts

",
        out.disjoint_lessons, out.disjoint_conflicts
    ));
    s.push_str(
        "| layout | contradictions injected | conflicts surfaced | entries kept side by side |
",
    );
    s.push_str(
        "|---|---:|---:|---:|
",
    );
    let row = |s: &mut String, name: &str, o: &MergeOutcome| {
        s.push_str(&format!(
            "| {name} | {} | {} | {} |
",
            o.contradictions_injected, o.conflicts, o.entries_kept
        ));
    };
    row(s, "keyed lessons (lessons/<topic>)", &out.keyed);
    row(s, "one markdown file, concatenated", &out.concatenation);
    row(s, "hashed file names (unkeyed)", &out.hashed);
    s.push_str(&format!(
        "
{:.1} s
",
        out.seconds
    ));
}

/// Runs the substrates benchmark in a temporary directory.
pub fn run(
    ui: &mut Ui,
    global: &GlobalArgs,
    args: &SubstratesArgs,
    progress: SharedProgress,
) -> CmdResult {
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let lore_binary = super::own_binary()?;
    let lore_args = super::embedder_args(global);
    let request = BenchSubstrates {
        fillers: args.fillers,
        queries_per_tier: args.queries_per_tier,
        scale: args.scale,
        timed: args.timed,
        cli_writes: args.cli_writes,
        seed: args.seed,
        lore_binary,
        lore_args,
        work_dir: args.keep.clone().unwrap_or_else(|| tmp.path().join("work")),
    };
    std::fs::create_dir_all(&request.work_dir)
        .map_err(|e| internal(format!("creating a work dir: {e}")))?;
    let embedder = location::embedder(global)?;
    super::measure_and_show(ui, request, tmp.path(), embedder, progress, tables)
}

fn pair(st: &Stats) -> String {
    format!("{:.2} ms / {}", st.p50_ms, st.p95_text())
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn tables(s: &mut String, out: &SubstratesReport) {
    costs_table(s, out);
    retrieval_table(s, out);
    if let Some(sc) = &out.scale {
        scale_table(s, sc);
    }
}

/// Each substrate's measured costs beside what it is built to do (declared, not measured).
fn costs_table(s: &mut String, out: &SubstratesReport) {
    s.push_str(&format!(
        "machine: {}\nembedder: {}\ncases stored: {}\n\n",
        out.machine, out.embedder, out.cases
    ));
    s.push_str("| substrate | write p50/p95 | read p50/p95 | bytes/item | replay (declared) | diff (declared) | merge (declared) | contradiction surfaces (declared) |\n");
    s.push_str("|---|---:|---:|---:|---|---|---|---|\n");
    for r in &out.costs {
        let c = &r.capabilities;
        s.push_str(&format!(
            "| {} | {} | {} | {:.0} | {} | {} | {} | {} |\n",
            r.substrate,
            pair(&r.write),
            pair(&r.read),
            r.bytes_per_item,
            yes(c.replay),
            yes(c.diff),
            c.merge,
            yes(c.contradiction)
        ));
    }
    s.push('\n');
    s.push_str(
        "Times and sizes are measured. The four columns marked \"declared\" say what each \
         substrate is built to do, not a measurement; lore's merge and contradiction are measured by `lore bench merge` \
         and tested (`lore-cli/tests/sync*.rs`).\n\n",
    );
}

/// Retrieval per similarity tier and substrate.
fn retrieval_table(s: &mut String, out: &SubstratesReport) {
    s.push_str(&format!(
        "Retrieval per tier: hit rate of the stored case / mean similarity / share flagged \
         near-duplicate (≥ {:.2})\n\n",
        out.copy_threshold
    ));
    let mut substrates: Vec<&str> = Vec::new();
    for r in &out.retrieval {
        if !substrates.contains(&r.substrate.as_str()) {
            substrates.push(&r.substrate);
        }
    }
    s.push_str("| tier |");
    for name in &substrates {
        s.push_str(&format!(" {name} |"));
    }
    s.push_str("\n|---|");
    s.push_str(&"---:|".repeat(substrates.len()));
    s.push('\n');
    for tier in lore_bench::substrates::workload::Tier::ALL {
        s.push_str(&format!("| {} |", tier.name()));
        for name in &substrates {
            let cell = out
                .retrieval
                .iter()
                .find(|r| r.tier == tier && r.substrate == *name)
                .map(|r| {
                    format!(
                        " {:.0}% / {:.2} / {:.0}% |",
                        r.hit_rate * 100.0,
                        r.mean_similarity,
                        r.flagged * 100.0
                    )
                })
                .unwrap_or_else(|| " - |".into());
            s.push_str(&cell);
        }
        s.push('\n');
    }
}

/// lore's reasoning trees at scale, each operation beside its target.
fn scale_table(s: &mut String, sc: &lore_bench::substrates::ScaleResult) {
    s.push_str(&format!(
        "\nlore at {} thoughts (written in {:.1} s, indexed in {:.1} s)\n\n",
        sc.thoughts, sc.fill_seconds, sc.index_seconds
    ));
    s.push_str("| operation | p50 / p95 | target |\n|---|---:|---|\n");
    s.push_str(&format!(
        "| thought write, in process | {} | ≤ 2 ms |\n",
        pair(&sc.write_in_process)
    ));
    if let Some(cli) = &sc.write_cli {
        s.push_str(&format!(
            "| thought write, `lore think add` process | {} | ≤ 10 ms |\n",
            pair(cli)
        ));
    }
    s.push_str(&format!(
        "| ρ-ranked retrieval with text | {} | ≤ 10 ms p50 |\n",
        pair(&sc.search_query)
    ));
    s.push_str(&format!(
        "| ρ-ranked retrieval over all | {} | ≤ 10 ms p50 |\n",
        pair(&sc.search_all)
    ));
    s.push_str(&format!(
        "| replay of a depth-50 node | {} | ≤ 20 ms |\n",
        pair(&sc.replay_depth_50)
    ));
}
