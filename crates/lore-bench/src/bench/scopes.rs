//! `bench scopes` (`lore bench scopes`): what reading the personal store beside the project's
//! costs a whole `lore` process: `lore recall` and the SessionStart hook over a project store
//! and a personal store (a temporary `LORE_HOME`), timed project-only (`--scope project`) and
//! stacked (the default: project + personal), the two alternating run by run so both see the
//! same machine.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use lore::embed::SharedEmbedder;
use lore::ops::{Effect, Env, Operation};
use lore::progress::Throttle;
use lore::{Error, Lore, Result, Store, WriteContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::corpus::{Corpus, Rng};
use super::process::{LoreProcess, Stats, machine, stats};
use crate::{PROGRESS_STEPS, embedder_name, require_binary, require_dir, scratch_handle};

/// Time recall and SessionStart as whole processes, project-only and with the personal store.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BenchScopes {
    /// Memories of the project store (default 10,000).
    pub project: usize,
    /// Memories of the personal store (default 1,000).
    pub personal: usize,
    /// Timed runs of each kind (default 30).
    pub runs: usize,
    /// Seed of the synthetic corpus (default 42).
    pub seed: u64,
    /// The `lore` binary whose runs are timed: set by the front end.
    #[serde(skip)]
    pub lore_binary: PathBuf,
    /// Arguments given to every timed run before its command: set by the front end.
    #[serde(skip)]
    pub lore_args: Vec<OsString>,
    /// Where the stores are made: set by the front end.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

impl Default for BenchScopes {
    fn default() -> BenchScopes {
        BenchScopes {
            project: 10_000,
            personal: 1_000,
            runs: 30,
            seed: 42,
            lore_binary: PathBuf::new(),
            lore_args: Vec::new(),
            work_dir: PathBuf::new(),
        }
    }
}

/// The timings.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ScopesBenchReport {
    /// The machine.
    pub machine: String,
    /// The embedder.
    pub embedder: String,
    /// Memories of the project store.
    pub project: usize,
    /// Memories of the personal store.
    pub personal: usize,
    /// `lore --scope project recall …`.
    pub recall_project_only: Stats,
    /// `lore recall …` (project + personal).
    pub recall_stacked: Stats,
    /// The SessionStart hook with `--scope project`.
    pub session_start_project_only: Stats,
    /// The SessionStart hook reading project + personal.
    pub session_start_stacked: Stats,
}

impl Operation for BenchScopes {
    const NAME: &'static str = "bench_scopes";
    const TITLE: &'static str = "Benchmark scopes";
    const DESCRIPTION: &'static str = "Time `lore recall` and the SessionStart hook as whole \
        processes over a project store alone and with a personal store beside it.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ScopesBenchReport;

    fn run(self, env: &mut Env<'_>) -> Result<ScopesBenchReport> {
        if self.project == 0 || self.personal == 0 || self.runs == 0 {
            return Err(Error::Invalid {
                what: "benchmark size",
                value: format!(
                    "{} + {} memories, {} runs",
                    self.project, self.personal, self.runs
                ),
                reason: "give both stores some memories and at least one run".into(),
            });
        }
        let root = require_dir("work directory", &self.work_dir)?;
        require_binary(&self.lore_binary)?;
        let embedder = env.lore.embedder().cloned();
        let corpus = Corpus::new();
        let mut rng = Rng::new(self.seed);
        let (project_dir, lore_home) = self.stores(root, embedder.clone(), &corpus, &mut rng)?;
        let process = LoreProcess {
            binary: &self.lore_binary,
            args: &self.lore_args,
        };
        let vars: [(&str, &Path); 1] = [("LORE_HOME", &lore_home)];
        let mut timings = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        let hook = serde_json::json!({
            "session_id": "bench",
            "cwd": project_dir.display().to_string(),
            "hook_event_name": "SessionStart",
            "source": "startup",
        })
        .to_string();
        let mut phase = Throttle::new(
            &*env.progress,
            "scoped runs",
            self.runs as u64,
            PROGRESS_STEPS,
        );
        // One untimed round first: it pays what a first process pays once (caches written).
        for round in 0..=self.runs {
            let q = corpus.query(&mut rng);
            let runs: [(&[&str], Option<&[u8]>); 4] = [
                (&["--scope", "project", "recall", &q], None),
                (&["recall", &q], None),
                (
                    &["--scope", "project", "hook", "claude", "SessionStart"],
                    Some(hook.as_bytes()),
                ),
                (&["hook", "claude", "SessionStart"], Some(hook.as_bytes())),
            ];
            for (i, (args, stdin)) in runs.iter().enumerate() {
                let t = process.time_with(&project_dir, args, *stdin, &vars)?;
                if round > 0 {
                    timings[i].push(t);
                }
            }
            phase.advance(round as u64);
        }
        let [a, b, c, d] = timings;
        Ok(ScopesBenchReport {
            machine: machine(),
            embedder: embedder_name(embedder.as_ref()),
            project: self.project,
            personal: self.personal,
            recall_project_only: stats(a),
            recall_stacked: stats(b),
            session_start_project_only: stats(c),
            session_start_stacked: stats(d),
        })
    }
}

impl BenchScopes {
    /// The project store and a personal store beside it (under `lore-home`), filled and
    /// indexed as a working clone has them: the project's directory and the home.
    fn stores(
        &self,
        root: &Path,
        embedder: Option<SharedEmbedder>,
        corpus: &Corpus,
        rng: &mut Rng,
    ) -> Result<(PathBuf, PathBuf)> {
        let project_dir = root.join("project");
        let mut project = scratch_handle(&project_dir, embedder.clone())?;
        fill(&mut project, corpus, rng, self.project)?;
        let lore_home = root.join("lore-home");
        let personal_store = Store::open_personal(&lore_home.join("personal.git"))?;
        {
            let mut config = personal_store.repo().config()?;
            config.set_str("user.name", "lore bench")?;
            config.set_str("user.email", "bench@lore.invalid")?;
        }
        let mut personal = Lore::new(personal_store);
        personal.set_embedder(embedder.clone());
        fill(&mut personal, corpus, rng, self.personal)?;
        // Both indexes built before timing, as a working clone has them.
        project.index()?;
        personal.index()?;
        Ok((project_dir, lore_home))
    }
}

/// Writes `n` memories of the corpus in batches of 1,000.
fn fill(lore: &mut Lore, corpus: &Corpus, rng: &mut Rng, n: usize) -> Result<()> {
    let ctx = WriteContext {
        agent: Some("bench".into()),
        ..WriteContext::default()
    };
    let mut left = n;
    while left > 0 {
        let k = left.min(1000);
        let batch = (0..k)
            .map(|_| lore.prepare(&corpus.memory(rng), &ctx))
            .collect::<Result<Vec<_>>>()?;
        lore.write_batch(&batch, &lore::BatchWrite::import("bench fill"), &ctx)?;
        left -= k;
    }
    Ok(())
}
