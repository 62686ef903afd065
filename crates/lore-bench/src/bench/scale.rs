//! The scale benchmark (`lore bench scale`): how a store grows to a million memories, each
//! number a whole `lore` process — `lore import jsonl` of a generated file, the first command
//! after it, then the everyday commands (recall, remember, list, status), the size of `.git`
//! and the peak resident memory of the import and the first command.

use std::ffi::OsString;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use lore::ops::{Effect, Env, Operation};
use lore::progress::{Progress, Throttle};
use lore::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::corpus::{Corpus, Rng};
use super::process::{LoreProcess, Stats, disk_usage, git, machine, stats};
use crate::{PROGRESS_STEPS, embedder_name, require_binary, require_dir};

/// Build stores of growing size by importing a generated JSONL and time whole processes on
/// each.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BenchScale {
    /// Store sizes (memories imported), ascending (default 10,000 and 100,000).
    pub sizes: Vec<usize>,
    /// Timed whole-process runs of each everyday command per size (default 20).
    pub runs: usize,
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

impl Default for BenchScale {
    fn default() -> BenchScale {
        BenchScale {
            sizes: vec![10_000, 100_000],
            runs: 20,
            seed: 42,
            lore_binary: PathBuf::new(),
            lore_args: Vec::new(),
            work_dir: PathBuf::new(),
        }
    }
}

/// What the scale benchmark measured at one size.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ScaleRow {
    /// Memories imported.
    pub memories: usize,
    /// The whole `lore import jsonl` process, in seconds.
    pub import_seconds: f64,
    /// Its peak resident memory, in bytes.
    pub import_peak_rss: u64,
    /// The first `lore recall` after the import, in seconds.
    pub first_command_seconds: f64,
    /// Its peak resident memory, in bytes.
    pub first_command_peak_rss: u64,
    /// Whole `lore recall` processes.
    pub recall: Stats,
    /// Whole `lore remember` processes (a new memory each).
    pub remember: Stats,
    /// Whole `lore list` processes.
    pub list: Stats,
    /// Whole `lore status` processes.
    pub status: Stats,
    /// Bytes the whole `.git` directory takes on disk at the end, as `du` counts them (the
    /// index included).
    pub git_dir_bytes: u64,
    /// Of which lore's derived files (`.git/lore`: the index, its vector cache).
    pub derived_bytes: u64,
}

/// What the scale benchmark measured.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ScaleReport {
    /// Processor, cores, operating system.
    pub machine: String,
    /// The embedder (`none` for lexical only).
    pub embedder: String,
    /// One row per size.
    pub rows: Vec<ScaleRow>,
}

impl Operation for BenchScale {
    const NAME: &'static str = "bench_scale";
    const TITLE: &'static str = "Benchmark store growth";
    const DESCRIPTION: &'static str = "Import a generated JSONL of each size with a whole \
        `lore import jsonl`, time the first command after it, then whole recall, remember, \
        list and status processes; report `.git` size and peak resident memory.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ScaleReport;

    fn run(self, env: &mut Env<'_>) -> Result<ScaleReport> {
        if self.sizes.is_empty() || self.runs == 0 {
            return Err(Error::Invalid {
                what: "benchmark size",
                value: format!("{:?} memories, {} runs", self.sizes, self.runs),
                reason: "give at least one size and one run".into(),
            });
        }
        let root = require_dir("work directory", &self.work_dir)?;
        require_binary(&self.lore_binary)?;
        let process = LoreProcess {
            binary: &self.lore_binary,
            args: &self.lore_args,
        };
        let mut rows = Vec::new();
        for &n in &self.sizes {
            rows.push(self.one_size(&process, root, n, &*env.progress)?);
        }
        Ok(ScaleReport {
            machine: machine(),
            embedder: embedder_name(env.lore.embedder()),
            rows,
        })
    }
}

impl BenchScale {
    /// Builds a store of `n` memories under `root` and measures it.
    fn one_size(
        &self,
        process: &LoreProcess<'_>,
        root: &Path,
        n: usize,
        progress: &dyn Progress,
    ) -> Result<ScaleRow> {
        let corpus = Corpus::new();
        let mut rng = Rng::new(self.seed);
        let dir = root.join(format!("scale-{n}"));
        lore::store::init_repository(&dir)?;
        let jsonl = root.join(format!("scale-{n}.jsonl"));
        let samples = write_jsonl(&jsonl, &corpus, &mut rng, n, progress)?;
        let jsonl_arg = jsonl.to_string_lossy().into_owned();

        progress.phase(&format!("importing {n} memories"), None);
        let import = process.time_peak(&dir, &["import", "jsonl", &jsonl_arg])?;
        let _ = std::fs::remove_file(&jsonl);
        progress.phase("the first command after the import", None);
        let first_query = corpus.query(&mut rng);
        let first = process.time_peak(&dir, &["recall", &first_query])?;
        progress.phase("checking the store", None);
        check_store(process, &dir, n, &samples)?;

        let runs = self.runs;
        let mut timed = |what: &str, run: &mut dyn FnMut(&mut Rng) -> Result<_>| {
            let mut phase = Throttle::new(progress, what, runs as u64, PROGRESS_STEPS);
            let mut samples = Vec::with_capacity(runs);
            for done in 1..=runs {
                samples.push(run(&mut rng)?);
                phase.advance(done as u64);
            }
            Ok::<_, Error>(stats(samples))
        };
        let recall = timed("recall", &mut |rng| {
            process.time(&dir, &["recall", &corpus.query(rng)], None)
        })?;
        let remember = timed("remember", &mut |rng| {
            process.time_remember(&dir, &corpus.memory(rng))
        })?;
        let list = timed("list", &mut |_| process.time(&dir, &["list"], None))?;
        let status = timed("status", &mut |_| process.time(&dir, &["status"], None))?;
        let git_dir = dir.join(".git");
        Ok(ScaleRow {
            memories: n,
            import_seconds: import.0.as_secs_f64(),
            import_peak_rss: import.1,
            first_command_seconds: first.0.as_secs_f64(),
            first_command_peak_rss: first.1,
            recall,
            remember,
            list,
            status,
            git_dir_bytes: disk_usage(&git_dir),
            derived_bytes: disk_usage(&git_dir.join("lore")),
        })
    }
}

/// Checks the imported store before anything is timed on it: the index counts `n` memories,
/// as many as the memory ref's tree holds, and each sampled record is found by its own summary. A store that fails is an error, not a figure.
fn check_store(process: &LoreProcess<'_>, dir: &Path, n: usize, samples: &[String]) -> Result<()> {
    let broken = |what: String| Error::Invalid {
        what: "store after import",
        value: format!("{n} memories at {}", dir.display()),
        reason: what,
    };
    let status = process.json(dir, &["status"])?;
    let counted = status["total"].as_u64().unwrap_or(0);
    if counted != n as u64 {
        return Err(broken(format!("the index counts {counted} memories")));
    }
    let tree = git(dir, &["ls-tree", "-r", "--name-only", "refs/lore/memory"])?;
    let files = String::from_utf8_lossy(&tree.stdout)
        .lines()
        .filter(|p| p.ends_with(".md") && !p.split('/').any(|part| part.starts_with('.')))
        .count();
    if files != n {
        return Err(broken(format!(
            "refs/lore/memory holds {files} memory files"
        )));
    }
    for summary in samples {
        let found = process.json(dir, &["recall", "--no-collapse", "--limit", "10", summary])?;
        let hits = found["hits"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if !hits
            .iter()
            .any(|h| h["memory"]["summary"] == summary.as_str())
        {
            return Err(broken(format!("recall of {summary:?} does not find it")));
        }
    }
    Ok(())
}

/// Writes `n` generated memories to `path` as JSON lines, one at a time; returns the summaries
/// of the first, the middle and the last, for [`check_store`].
fn write_jsonl(
    path: &Path,
    corpus: &Corpus,
    rng: &mut Rng,
    n: usize,
    progress: &dyn Progress,
) -> Result<Vec<String>> {
    let io = |e: std::io::Error| Error::Io {
        context: format!("writing {}", path.display()),
        source: e,
    };
    let mut out = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    let mut phase = Throttle::new(progress, "generating memories", n as u64, PROGRESS_STEPS);
    let mut samples = Vec::new();
    for done in 1..=n {
        let m = corpus.memory(rng);
        if done == 1 || done == n.div_ceil(2) || done == n {
            samples.push(m.summary.clone());
        }
        let line = serde_json::json!({
            "namespace": m.namespace,
            "summary": m.summary,
            "body": m.body,
            "tags": m.tags,
        });
        writeln!(out, "{line}").map_err(io)?;
        phase.advance(done as u64);
    }
    out.flush().map_err(io)?;
    samples.dedup();
    Ok(samples)
}
