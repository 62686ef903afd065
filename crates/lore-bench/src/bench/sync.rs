//! The sync benchmark: whole `lore sync` runs between two clones of a local bare repository —
//! a sync with nothing to do, a merge of two clones that each added memories, and a sync that
//! brings many new memories with the index caught up.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use lore::ops::{Effect, Env, Operation};
use lore::progress::Throttle;
use lore::{Error, Lore, Result, Store, WriteContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::corpus::{Corpus, Rng};
use super::process::{LoreProcess, Stats, git, machine, stats};
use crate::{PROGRESS_STEPS, embedder_name, require_binary, require_dir};

/// Measure `lore sync` between two clones of a local bare repository.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BenchSync {
    /// Memories both clones share before the timed runs (default 1,000).
    pub base: usize,
    /// Timed no-op syncs (default 20).
    pub noop_runs: usize,
    /// Memories each clone adds before a timed merge (default 1,000).
    pub merge_each: usize,
    /// Timed merges (default 3).
    pub merge_runs: usize,
    /// Memories one clone adds before a timed sync brings them to the other (default 10,000).
    pub bring: usize,
    /// Timed syncs bringing `bring` memories (default 3).
    pub bring_runs: usize,
    /// Seed of the synthetic corpus (default 42).
    pub seed: u64,
    /// The `lore` binary timed: set by the front end.
    #[serde(skip)]
    pub lore_binary: PathBuf,
    /// Arguments given to every timed run before its command: set by the front end.
    #[serde(skip)]
    pub lore_args: Vec<OsString>,
    /// Where the repositories are made: set by the front end.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

impl Default for BenchSync {
    fn default() -> BenchSync {
        BenchSync {
            base: 1_000,
            noop_runs: 20,
            merge_each: 1_000,
            merge_runs: 3,
            bring: 10_000,
            bring_runs: 3,
            seed: 42,
            lore_binary: PathBuf::new(),
            lore_args: Vec::new(),
            work_dir: PathBuf::new(),
        }
    }
}

/// What the sync benchmark measured (whole `lore sync` processes).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SyncBenchReport {
    /// Processor, cores, operating system.
    pub machine: String,
    /// The embedder the index uses (`none` for lexical only).
    pub embedder: String,
    /// Memories shared before the timed runs.
    pub base: usize,
    /// A sync with nothing to fetch, merge or push.
    pub noop: Stats,
    /// Memories each clone added before a merge.
    pub merge_each: usize,
    /// A sync merging the other clone's additions into this clone's (and pushing).
    pub merge: Stats,
    /// Memories a sync brought.
    pub bring: usize,
    /// A sync bringing them, the index caught up.
    pub bring_new: Stats,
}

impl Operation for BenchSync {
    const NAME: &'static str = "bench_sync";
    const TITLE: &'static str = "Benchmark sync";
    const DESCRIPTION: &'static str = "Time whole `lore sync` runs between two clones of a \
        local bare repository: a no-op sync, a merge of two clones that each added memories, \
        and a sync bringing many new memories with the index caught up.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = SyncBenchReport;

    // Long: the benchmark's scenario in the order it runs (clones, then each timed case on
    // them); its phases share the clones and the timing loop.
    fn run(self, env: &mut Env<'_>) -> Result<SyncBenchReport> {
        let root = require_dir("work directory", &self.work_dir)?;
        require_binary(&self.lore_binary)?;
        let embedder = env.lore.embedder().cloned();
        let progress = &*env.progress;
        let corpus = Corpus::new();
        let mut rng = Rng::new(self.seed);
        let ctx = WriteContext {
            agent: Some("bench".into()),
            ..WriteContext::default()
        };
        let process = LoreProcess {
            binary: &self.lore_binary,
            args: &self.lore_args,
        };
        let root = root.join("sync");
        std::fs::create_dir_all(&root).map_err(|e| Error::Io {
            context: format!("creating {}", root.display()),
            source: e,
        })?;
        git(&root, &["init", "-q", "--bare", "central.git"])?;
        let clone = |name: &str| -> Result<PathBuf> {
            git(&root, &["clone", "-q", "central.git", name])?;
            let dir = root.join(name);
            git(&dir, &["config", "user.name", name])?;
            git(&dir, &["config", "user.email", "bench@example.com"])?;
            Ok(dir)
        };
        let (a, b) = (clone("a")?, clone("b")?);
        let open = |dir: &Path| -> Result<Lore> {
            let mut lore = Lore::new(Store::discover(dir)?);
            lore.set_embedder(embedder.clone());
            Ok(lore)
        };
        let (mut lore_a, mut lore_b) = (open(&a)?, open(&b)?);
        let fill = |lore: &mut Lore, n: usize, rng: &mut Rng| -> Result<()> {
            let mut left = n;
            while left > 0 {
                let k = left.min(1000);
                let batch = (0..k)
                    .map(|_| lore.prepare(&corpus.memory(rng), &ctx))
                    .collect::<Result<Vec<_>>>()?;
                lore.write_batch(&batch, &lore::BatchWrite::import("bench fill"), &ctx)?;
                left -= k;
            }
            // The writer's own index is current, so a timed sync only catches up what arrives.
            lore.index()?;
            Ok(())
        };

        progress.phase("sharing the base memories", None);
        fill(&mut lore_a, self.base, &mut rng)?;
        process.time(&a, &["sync"], None)?;
        process.time(&b, &["sync"], None)?;
        lore_b.index()?;

        // `runs` timed syncs of clone b, each after `before` (untimed).
        let timed_syncs = |what: &str, runs: usize, before: &mut dyn FnMut() -> Result<()>| {
            let mut phase = Throttle::new(progress, what, runs as u64, PROGRESS_STEPS);
            let mut samples = Vec::with_capacity(runs);
            for done in 1..=runs {
                before()?;
                samples.push(process.time(&b, &["sync"], None)?);
                phase.advance(done as u64);
            }
            Ok::<_, Error>(stats(samples))
        };
        let noop = timed_syncs("no-op syncs", self.noop_runs, &mut || Ok(()))?;
        let merge = timed_syncs("merges", self.merge_runs, &mut || {
            fill(&mut lore_a, self.merge_each, &mut rng)?;
            process.time(&a, &["sync"], None)?;
            fill(&mut lore_b, self.merge_each, &mut rng)
        })?;
        // Both clones at the same tip again.
        process.time(&a, &["sync"], None)?;
        lore_a.index()?;
        lore_b.index()?;
        let bring_new = timed_syncs("syncs bringing new memories", self.bring_runs, &mut || {
            fill(&mut lore_a, self.bring, &mut rng)?;
            process.time(&a, &["sync"], None).map(|_| ())
        })?;
        Ok(SyncBenchReport {
            machine: machine(),
            embedder: embedder_name(embedder.as_ref()),
            base: self.base,
            noop,
            merge_each: self.merge_each,
            merge,
            bring: self.bring,
            bring_new,
        })
    }
}
