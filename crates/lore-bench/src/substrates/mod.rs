//! `bench substrates` (`lore bench substrates`): five memory substrates — none, a markdown
//! file, git (lore's reasoning trees), vectors, a spreading-activation graph — storing and
//! retrieving the same cases. It reports a cost table (write and read p50/p95, bytes per item,
//! replay, diff, merge, contradiction), retrieval per similarity tier on a seeded
//! recurring-problem workload (hit rate of the stored case, the similarity the flag reports and
//! how often it reaches the copyability threshold), and lore's own targets at scale (thought
//! writes in process and as a process, ρ-ranked retrieval and depth-50 replay at 100k thoughts).

pub mod backends;
pub mod merge;
mod scale;
pub mod workload;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

use lore::ops::thoughts::DEFAULT_COPY_THRESHOLD;
use lore::ops::{Effect, Env, Operation};
use lore::progress::Throttle;
use lore::{Result, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bench::process::{Stats, machine, stats};
use crate::{PROGRESS_STEPS, embedder_name, require_dir};
use backends::{
    ActivationGraph, Capabilities, GitThoughts, MarkdownFile, Nothing, Substrate, Vectors,
};
pub use scale::ScaleResult;
use workload::Tier;

/// Compare five memory substrates on one workload, and measure lore's reasoning trees at scale.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BenchSubstrates {
    /// Filler cases stored beside the recurring problems (default 1,000).
    pub fillers: usize,
    /// Queries per similarity tier (default 40).
    pub queries_per_tier: usize,
    /// Thoughts stored before lore's timed operations at scale (default 100,000; 0 skips).
    pub scale: usize,
    /// Timed operations of each kind at scale (default 200).
    pub timed: usize,
    /// Timed whole-process `lore think add` runs (default 20; needs the binary).
    pub cli_writes: usize,
    /// Seed of the workload (default 42).
    pub seed: u64,
    /// The `lore` binary whose whole runs are timed: set by the front end.
    #[serde(skip)]
    pub lore_binary: PathBuf,
    /// Arguments given to every timed `lore` run before its command: set by the front end.
    #[serde(skip)]
    pub lore_args: Vec<OsString>,
    /// Where the repositories and files are made: set by the front end.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

impl Default for BenchSubstrates {
    fn default() -> Self {
        BenchSubstrates {
            fillers: 1_000,
            queries_per_tier: 40,
            scale: 100_000,
            timed: 200,
            cli_writes: 20,
            seed: 42,
            lore_binary: PathBuf::new(),
            lore_args: Vec::new(),
            work_dir: PathBuf::new(),
        }
    }
}

/// One substrate's costs and abilities.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CostRow {
    /// The substrate.
    pub substrate: String,
    /// Storing one case.
    pub write: Stats,
    /// Retrieving the best case for one query.
    pub read: Stats,
    /// Bytes per stored case.
    pub bytes_per_item: f64,
    /// What it is built to do beyond store and retrieve (declared by its design, not measured).
    pub capabilities: Capabilities,
}

/// Retrieval in one similarity tier by one substrate.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TierRow {
    /// The substrate.
    pub substrate: String,
    /// The tier.
    pub tier: Tier,
    /// Share of queries whose best retrieved case is the one they were made from.
    pub hit_rate: f64,
    /// Mean similarity of the best retrieved case, as the flag reports it.
    pub mean_similarity: f64,
    /// Share of queries flagged near-duplicate (similarity at or above the threshold).
    pub flagged: f64,
}

/// What the substrates benchmark measured.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SubstratesReport {
    /// Processor, cores, operating system.
    pub machine: String,
    /// The embedder of the vector substrate and of lore's similarity.
    pub embedder: String,
    /// Cases stored in each substrate.
    pub cases: usize,
    /// The copyability threshold.
    pub copy_threshold: f64,
    /// One row per substrate.
    pub costs: Vec<CostRow>,
    /// One row per substrate and tier.
    pub retrieval: Vec<TierRow>,
    /// lore at scale, when measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleResult>,
}

impl Operation for BenchSubstrates {
    const NAME: &'static str = "bench_substrates";
    const TITLE: &'static str = "Compare memory substrates";
    const DESCRIPTION: &'static str = "Store and retrieve the same seeded cases in five \
        substrates (none, markdown file, git/lore, vector, spreading-activation graph): costs, \
        abilities, retrieval per similarity tier with the copyability flag; and lore's thought \
        writes, ρ-ranked retrieval and replay at scale.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = SubstratesReport;

    // Long: the benchmark's scenario in the order it runs, substrate by substrate on one
    // workload; each substrate's work is in its own module.
    fn run(self, env: &mut Env<'_>) -> Result<SubstratesReport> {
        let root = require_dir("work directory", &self.work_dir)?.to_path_buf();
        let embedder = env.lore.embedder().cloned();
        let progress = env.progress.clone();
        let load = workload::generate(self.seed, self.fillers, self.queries_per_tier);
        let mut costs = Vec::new();
        let mut retrieval = Vec::new();
        let git_dir = root.join("git-substrate");
        let mut git_lore = crate::scratch_handle(&git_dir, embedder.clone())?;
        let mut substrates: Vec<Box<dyn Substrate + '_>> = vec![
            Box::new(Nothing),
            Box::new(MarkdownFile::new(&root.join("MEMORY.md"))?),
            Box::new(GitThoughts::new(&mut git_lore, &git_dir)),
            Box::new(Vectors::new(embedder.clone())),
            Box::new(ActivationGraph::new()),
        ];
        for substrate in substrates.iter_mut() {
            let name = substrate.name();
            let mut phase = Throttle::new(
                &*progress,
                &format!("{name}: storing"),
                load.cases.len() as u64,
                PROGRESS_STEPS,
            );
            let mut writes = Vec::with_capacity(load.cases.len());
            for (i, case) in load.cases.iter().enumerate() {
                let started = Instant::now();
                substrate.put(case)?;
                writes.push(started.elapsed());
                phase.advance(i as u64 + 1);
            }
            let mut phase = Throttle::new(
                &*progress,
                &format!("{name}: retrieving"),
                load.queries.len() as u64,
                PROGRESS_STEPS,
            );
            let mut reads = Vec::with_capacity(load.queries.len());
            let mut per_tier: Vec<(usize, f64, usize, usize)> = vec![(0, 0.0, 0, 0); 5];
            for (i, (query, tier, source)) in load.queries.iter().enumerate() {
                let started = Instant::now();
                let found = substrate.get(query)?;
                reads.push(started.elapsed());
                let slot = &mut per_tier[Tier::ALL.iter().position(|t| t == tier).unwrap_or(0)];
                slot.3 += 1;
                if let Some((case, sim)) = found {
                    slot.0 += usize::from(case == *source);
                    slot.1 += sim;
                    slot.2 += usize::from(sim >= DEFAULT_COPY_THRESHOLD);
                }
                phase.advance(i as u64 + 1);
            }
            for (tier, (hits, sim, flagged, n)) in Tier::ALL.iter().zip(per_tier) {
                let n = n.max(1) as f64;
                retrieval.push(TierRow {
                    substrate: name.to_string(),
                    tier: *tier,
                    hit_rate: hits as f64 / n,
                    mean_similarity: sim / n,
                    flagged: flagged as f64 / n,
                });
            }
            costs.push(CostRow {
                substrate: name.to_string(),
                write: stats(writes),
                read: stats(reads),
                bytes_per_item: substrate.bytes() as f64 / load.cases.len().max(1) as f64,
                capabilities: substrate.capabilities(),
            });
        }
        drop(substrates);
        let scale = if self.scale > 0 {
            let dir = root.join("scale");
            lore::store::init_repository(&dir)?;
            let store = Store::discover(&dir)?;
            Some(scale::measure(&store, &self, &*progress)?)
        } else {
            None
        };
        Ok(SubstratesReport {
            machine: machine(),
            embedder: embedder_name(embedder.as_ref()),
            cases: load.cases.len(),
            copy_threshold: DEFAULT_COPY_THRESHOLD,
            costs,
            retrieval,
            scale,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_run_measures_every_substrate_and_tier() {
        let dir = tempfile::tempdir().unwrap();
        let request = BenchSubstrates {
            fillers: 20,
            queries_per_tier: 8,
            scale: 60,
            timed: 3,
            cli_writes: 0,
            work_dir: dir.path().join("work"),
            ..BenchSubstrates::default()
        };
        std::fs::create_dir_all(&request.work_dir).unwrap();
        let (report, _) = crate::run_measurement(
            request,
            &dir.path().join("handle"),
            None,
            lore::progress::silent(),
        )
        .unwrap();
        for r in &report.retrieval {
            eprintln!(
                "{} {:?} {} {} {}",
                r.substrate, r.tier, r.hit_rate, r.mean_similarity, r.flagged
            );
        }
        assert_eq!(report.costs.len(), 5);
        assert_eq!(report.retrieval.len(), 25);
        let row = |substrate: &str, tier: Tier| {
            report
                .retrieval
                .iter()
                .find(|r| r.substrate == substrate && r.tier == tier)
                .unwrap()
                .clone()
        };
        assert_eq!(row("none", Tier::Identical).hit_rate, 0.0);
        for substrate in [
            "markdown file",
            "git (lore)",
            "vector",
            "graph (spreading activation)",
        ] {
            let identical = row(substrate, Tier::Identical);
            assert_eq!(identical.hit_rate, 1.0, "{substrate}");
            assert_eq!(identical.flagged, 1.0, "{substrate}");
            assert_eq!(row(substrate, Tier::Unrelated).flagged, 0.0, "{substrate}");
        }
        let git = report
            .costs
            .iter()
            .find(|c| c.substrate == "git (lore)")
            .unwrap();
        assert!(git.capabilities.contradiction && git.capabilities.replay);
        let scale = report.scale.unwrap();
        assert_eq!(scale.thoughts, 60);
        assert_eq!(scale.replay_depth_50.n, 3);
    }
}
