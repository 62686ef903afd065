//! The hot-paths benchmark (`lore bench hot`): what an agent's calls cost as whole processes
//! (remember, recall, `ctx recall`, the hooks) and in process at 100,000 memories, each beside
//! its target and, given an earlier build (`--before`), the same processes timed with it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use lore::ops::{Effect, Env, Operation};
use lore::progress::{Progress, Throttle};
use lore::steps::{NewStep, StepKind};
use lore::workspace::Workspace;
use lore::{Citation, Error, ListFilter, Lore, Novelty, Result, WriteContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::corpus::{Corpus, Rng};
use super::process::{LoreProcess, Stats, machine, stats};
use crate::{PROGRESS_STEPS, embedder_name, require_binary, require_dir, scratch_handle};

/// Time the paths an agent hits on every call, as whole processes and in process.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BenchHot {
    /// Memories of the small store (default 10,000).
    pub small: usize,
    /// Memories of the large store (default 100,000; 0 skips its rows).
    pub large: usize,
    /// Timed whole-process runs per row (default 20).
    pub runs: usize,
    /// Timed in-process runs per row (default 200).
    pub in_process_runs: usize,
    /// Committed context steps for `ctx recall` (default 10,000).
    pub steps: usize,
    /// Size of the Stop hook's transcript in MB (default 20).
    pub transcript_mb: usize,
    /// Seed of the synthetic corpus (default 42).
    pub seed: u64,
    /// The `lore` binary timed: set by the front end.
    #[serde(skip)]
    pub lore_binary: PathBuf,
    /// An earlier `lore` build whose processes are timed on the same workloads, for the
    /// "before" column (none: no such column is measured): set by the front end.
    #[serde(skip)]
    pub before_binary: Option<PathBuf>,
    /// Arguments given to every timed run before its command: set by the front end.
    #[serde(skip)]
    pub lore_args: Vec<OsString>,
    /// Where the repositories are made: set by the front end.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

impl Default for BenchHot {
    fn default() -> BenchHot {
        BenchHot {
            small: 10_000,
            large: 100_000,
            runs: 20,
            in_process_runs: 200,
            steps: 10_000,
            transcript_mb: 20,
            seed: 42,
            lore_binary: PathBuf::new(),
            before_binary: None,
            lore_args: Vec::new(),
            work_dir: PathBuf::new(),
        }
    }
}

/// One measured path.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct HotRow {
    /// What was timed.
    pub path: String,
    /// The target.
    pub target: String,
    /// The same workload timed with the `--before` build, right after (none: in process, or no
    /// earlier build given).
    pub before: Option<Stats>,
    /// What this run measured.
    pub measured: Stats,
}

/// What the hot-paths benchmark measured.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct HotBenchReport {
    /// Processor, cores, operating system.
    pub machine: String,
    /// The embedder (`none` for lexical only).
    pub embedder: String,
    /// One row per path.
    pub rows: Vec<HotRow>,
}

impl Operation for BenchHot {
    const NAME: &'static str = "bench_hot";
    const TITLE: &'static str = "Benchmark the hot paths";
    const DESCRIPTION: &'static str = "Time what an agent's calls cost as whole lore processes \
        (remember, recall, ctx recall, the SessionStart, PostToolUse and Stop hooks) and in \
        process at 100,000 memories, each beside its target.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = HotBenchReport;

    fn run(self, env: &mut Env<'_>) -> Result<HotBenchReport> {
        if self.small == 0 || self.runs == 0 || self.in_process_runs == 0 {
            return Err(Error::Invalid {
                what: "benchmark size",
                value: format!(
                    "{} memories, {} runs, {} in-process runs",
                    self.small, self.runs, self.in_process_runs
                ),
                reason: "give a small store and at least one run of each kind".into(),
            });
        }
        let root = require_dir("work directory", &self.work_dir)?;
        require_binary(&self.lore_binary)?;
        if let Some(before) = &self.before_binary {
            require_binary(before)?;
        }
        let embedder = env.lore.embedder().cloned();
        let hot = Hot {
            request: &self,
            corpus: Corpus::new(),
            progress: &*env.progress,
            process: LoreProcess {
                binary: &self.lore_binary,
                args: &self.lore_args,
            },
            before: self.before_binary.as_ref().map(|binary| LoreProcess {
                binary,
                args: &self.lore_args,
            }),
        };
        let mut rows = hot.small_store(&root.join("small"), embedder.clone())?;
        if self.large > 0 {
            rows.extend(hot.large_store(&root.join("large"), embedder.clone())?);
        }
        Ok(HotBenchReport {
            machine: machine(),
            embedder: embedder_name(embedder.as_ref()),
            rows,
        })
    }
}

struct Hot<'a> {
    request: &'a BenchHot,
    corpus: Corpus,
    progress: &'a dyn Progress,
    process: LoreProcess<'a>,
    before: Option<LoreProcess<'a>>,
}

/// The files the small store's memories cite (a tenth of them each).
fn cited_file(i: usize) -> String {
    format!("src/module{}/file{}.rs", i % 97, i % 13)
}

fn row(path: &str, target: &str, (measured, before): (Stats, Option<Stats>)) -> HotRow {
    HotRow {
        path: path.into(),
        target: target.into(),
        before,
        measured,
    }
}

fn io_error(context: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Io {
        context: context.into(),
        source: e,
    }
}

impl Hot<'_> {
    /// Times `n` runs of `sample` after one untimed run (which pays what a first process
    /// pays once: an index of another schema rebuilt, a cache written).
    fn timed(
        &self,
        what: &str,
        n: usize,
        mut sample: impl FnMut() -> Result<std::time::Duration>,
    ) -> Result<Stats> {
        sample()?;
        let mut phase = Throttle::new(self.progress, what, n as u64, PROGRESS_STEPS);
        let mut samples = Vec::with_capacity(n);
        for done in 1..=n {
            samples.push(sample()?);
            phase.advance(done as u64);
        }
        Ok(stats(samples))
    }

    /// Times `n` runs of `sample` with this build's process, then, given an earlier build, as
    /// many with its process on the same (by then slightly grown) store.
    fn timed_processes(
        &self,
        what: &str,
        n: usize,
        mut sample: impl FnMut(&LoreProcess<'_>) -> Result<std::time::Duration>,
    ) -> Result<(Stats, Option<Stats>)> {
        let measured = self.timed(what, n, || sample(&self.process))?;
        let before = match &self.before {
            Some(before) => Some(self.timed(&format!("{what} (before)"), n, || sample(before))?),
            None => None,
        };
        Ok((measured, before))
    }

    /// Times an in-process path (only this build's library can run here).
    fn timed_in_process(
        &self,
        what: &str,
        n: usize,
        sample: impl FnMut() -> Result<std::time::Duration>,
    ) -> Result<(Stats, Option<Stats>)> {
        Ok((self.timed(what, n, sample)?, None))
    }

    /// A store of `size` memories (a tenth citing a file), written 1,000 per commit, its index
    /// caught up and its vector cache written.
    fn fill(
        &self,
        dir: &Path,
        size: usize,
        embedder: Option<lore::embed::SharedEmbedder>,
    ) -> Result<Lore> {
        let mut lore = scratch_handle(dir, embedder)?;
        let ctx = WriteContext::default();
        let mut rng = Rng::new(self.request.seed ^ size as u64);
        let mut filled = Throttle::new(
            self.progress,
            &format!("{size} memories written"),
            size as u64,
            PROGRESS_STEPS,
        );
        let mut done = 0;
        while done < size {
            let n = (size - done).min(1000);
            let batch = (done..done + n)
                .map(|i| {
                    let mut m = self.corpus.memory(&mut rng);
                    if i % 10 == 0 {
                        m.citations = vec![Citation {
                            path: cited_file(i),
                            lines: None,
                            blob: None,
                        }];
                    }
                    lore.prepare(&m, &ctx)
                })
                .collect::<Result<Vec<_>>>()?;
            lore.write_batch(&batch, &lore::BatchWrite::import("bench fill"), &ctx)?;
            done += n;
            filled.advance(done as u64);
        }
        // Left as `lore import` leaves a store: the index settled, the objects packed (folded
        // into one pack past 50) with a multi-pack index (without it, each object read searched
        // 100 packs' indexes in turn, and each process opened and freed them all).
        self.progress.phase("indexing", None);
        lore.settle_after_import()?;
        lore.recall("warm up the index and its vectors", &ListFilter::default())?;
        Ok(lore)
    }

    fn small_store(
        &self,
        dir: &Path,
        embedder: Option<lore::embed::SharedEmbedder>,
    ) -> Result<Vec<HotRow>> {
        let request = self.request;
        let lore = self.fill(dir, request.small, embedder)?;
        let mut rng = Rng::new(request.seed.wrapping_add(1));
        let mut rows = Vec::new();

        let remember = self.timed_processes("lore remember runs", request.runs, |process| {
            let m = self.corpus.memory(&mut rng);
            process.time_remember(dir, &m)
        })?;
        rows.push(row(
            &format!(
                "`lore remember` process, {} stored, novelty on",
                request.small
            ),
            "≤ 8 ms p50",
            remember,
        ));

        let hook = |process: &LoreProcess<'_>, event: &str, body: serde_json::Value| {
            time_hook(process, dir, event, body)
        };
        let session_start =
            self.timed_processes("lore hook SessionStart runs", request.runs, |process| {
                hook(
                    process,
                    "SessionStart",
                    serde_json::json!({ "session_id": "bench", "source": "startup" }),
                )
            })?;
        rows.push(row(
            &format!("SessionStart hook process, {} memories", request.small),
            "≤ 20 ms p50",
            session_start,
        ));

        let mut run = 0usize;
        let post_tool =
            self.timed_processes("lore hook PostToolUse runs", request.runs, |process| {
                run += 1;
                // A new session each run, so the memories found are injected every time.
                let file = dir.join(cited_file(run * 7));
                hook(
                    process,
                    "PostToolUse",
                    serde_json::json!({
                        "session_id": format!("bench-tool-{run}"),
                        "tool_name": "Edit",
                        "tool_input": { "file_path": file.display().to_string() },
                    }),
                )
            })?;
        rows.push(row(
            &format!(
                "PostToolUse hook process, {} memories with citations",
                request.small
            ),
            "≤ 10 ms p50",
            post_tool,
        ));

        rows.push(self.stop_row(dir, &mut rng)?);

        self.context_steps(&lore, &mut rng)?;
        let ctx_recall = self.timed_processes("lore ctx recall runs", request.runs, |process| {
            let q = self.corpus.query(&mut rng);
            process.time(dir, &["ctx", "recall", &q], None)
        })?;
        rows.push(row(
            &format!("`ctx recall` process at {} steps", request.steps),
            "≤ 15 ms p50",
            ctx_recall,
        ));
        Ok(rows)
    }

    /// The Stop hook over a transcript of `transcript_mb`: one untimed call reads it whole,
    /// then each timed call follows the agent's next turn.
    fn stop_row(&self, dir: &Path, rng: &mut Rng) -> Result<HotRow> {
        let request = self.request;
        let transcript = dir.join("transcript.jsonl");
        let mut text = String::new();
        let mut turns = 0usize;
        while text.len() < request.transcript_mb << 20 {
            text.push_str(&self.turn(rng, turns));
            turns += 1;
        }
        std::fs::write(&transcript, &text).map_err(io_error("writing a transcript"))?;
        let stop = |process: &LoreProcess<'_>, session: &str| {
            time_hook(
                process,
                dir,
                "Stop",
                serde_json::json!({
                    "session_id": session,
                    "transcript_path": transcript.display().to_string(),
                }),
            )
        };
        self.progress
            .phase("first Stop over the whole transcript", None);
        stop(&self.process, "bench-stop")?;
        let stop_again = self.timed_processes(
            "lore hook Stop runs (second call on)",
            request.runs,
            |process| {
                // The agent's next turn, then its Stop.
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&transcript)
                    .map_err(io_error("appending to the transcript"))?;
                std::io::Write::write_all(&mut file, self.turn(rng, turns).as_bytes())
                    .map_err(io_error("appending to the transcript"))?;
                turns += 1;
                stop(process, "bench-stop")
            },
        )?;
        Ok(row(
            &format!(
                "Stop hook process, {} MB transcript, second call",
                request.transcript_mb
            ),
            "≤ 20 ms p50",
            stop_again,
        ))
    }

    /// One transcript line: a turn of prose, one in two thousand marked as a decision (a few
    /// dozen in 20 MB; each is checked for novelty and written or queued).
    fn turn(&self, rng: &mut Rng, n: usize) -> String {
        let m = self.corpus.memory(rng);
        let text = if n.is_multiple_of(2000) {
            format!("[decision] {}\n\n{}", m.summary, m.body)
        } else {
            m.body
        };
        let role = if n.is_multiple_of(2) {
            "assistant"
        } else {
            "user"
        };
        let mut line =
            serde_json::json!({ "type": role, "message": { "role": role, "content": text } })
                .to_string();
        line.push('\n');
        line
    }

    /// A context branch with `steps` committed steps (500 per commit).
    fn context_steps(&self, lore: &Lore, rng: &mut Rng) -> Result<()> {
        let ws = Workspace::new(lore.store());
        let ctx = WriteContext::default();
        ws.init("benchmark the hot paths", &[], &ctx)?;
        let mut logged = Throttle::new(
            self.progress,
            "context steps logged",
            self.request.steps as u64,
            PROGRESS_STEPS,
        );
        for i in 0..self.request.steps {
            let m = self.corpus.memory(rng);
            let step = NewStep {
                kind: Some(StepKind::Action),
                tool: Some(["Edit", "Read", "Bash", "Grep"][i % 4].into()),
                files: vec![cited_file(i)],
                text: Some(format!("{} {}", m.summary, m.body)),
                ..NewStep::default()
            };
            ws.log(None, step)?;
            if (i + 1).is_multiple_of(500) || i + 1 == self.request.steps {
                ws.commit(None, &format!("steps up to {}", i + 1), None, None, &ctx)?;
            }
            logged.advance(i as u64 + 1);
        }
        Ok(())
    }

    fn large_store(
        &self,
        dir: &Path,
        embedder: Option<lore::embed::SharedEmbedder>,
    ) -> Result<Vec<HotRow>> {
        let request = self.request;
        let size = request.large;
        let mut lore = self.fill(dir, size, embedder)?;
        let mut rng = Rng::new(request.seed.wrapping_add(2));
        let ctx = WriteContext::default();
        let mut rows = Vec::new();

        // The corpus's invented words make most of its texts near-duplicates of some memory
        // to the static model, so most of these remembers supersede one: the label says how
        // many (timed runs only).
        let mut superseded = Vec::with_capacity(request.in_process_runs + 1);
        let remember =
            self.timed_in_process("remembers in process", request.in_process_runs, || {
                let m = self.corpus.memory(&mut rng);
                let t = Instant::now();
                let done = lore.remember_checked(&m, &ctx, Novelty::Upsert)?;
                let elapsed = t.elapsed();
                superseded.push(done.superseded.is_some());
                Ok(elapsed)
            })?;
        // The first run is untimed.
        let timed = &superseded[1..];
        let (superseding, timed) = (timed.iter().filter(|s| **s).count(), timed.len());
        rows.push(row(
            &format!(
                "remember in-process at {size} (ext4; {superseding} of {timed} superseded a \
                 near-duplicate)"
            ),
            "≤ 1.5 ms p50",
            remember,
        ));

        // Bring the index and the vector cache up to date before reading: this handle applied
        // the writes' changes to its matrix in memory, so the cache file still holds one
        // segment per write; it is written again as one here, as the first command would
        // start `lore upkeep` to do, so that no timed process runs beside that upkeep.
        lore.recall("warm up", &ListFilter::default())?;
        lore.upkeep()?;
        let recall = self.timed_processes("lore recall runs", request.runs, |process| {
            let q = self.corpus.query(&mut rng);
            process.time(dir, &["recall", &q], None)
        })?;
        rows.push(row(
            &format!("hybrid `recall` process at {size}"),
            "≤ 15 ms p50, ≤ 30 ms p95",
            recall,
        ));
        let after_write =
            self.timed_processes("lore recall runs after a write", request.runs, |process| {
                let m = self.corpus.memory(&mut rng);
                process.time_remember(dir, &m)?;
                let q = self.corpus.query(&mut rng);
                process.time(dir, &["recall", &q], None)
            })?;
        rows.push(row(
            &format!("hybrid `recall` process at {size}, right after a `lore remember`"),
            "≤ 15 ms p50, ≤ 30 ms p95",
            after_write,
        ));

        let filter = ListFilter {
            limit: Some(10),
            ..ListFilter::default()
        };
        let common = self.corpus.common_query();
        lore.index()?.recall(&common, &filter)?;
        let bm25 =
            self.timed_in_process("BM25 recalls in process", request.in_process_runs, || {
                let index = lore.index()?;
                let t = Instant::now();
                index.recall(&common, &filter)?;
                Ok(t.elapsed())
            })?;
        rows.push(row(
            &format!("BM25 recall in-process at {size}, common-word query ({common:?})"),
            "≤ 5 ms p95",
            bm25,
        ));
        Ok(rows)
    }
}

/// One hook event as an agent sends it: a new process, the payload (with the work directory
/// and the event's name added) on stdin.
fn time_hook(
    process: &LoreProcess<'_>,
    dir: &Path,
    event: &str,
    mut body: serde_json::Value,
) -> Result<std::time::Duration> {
    body["cwd"] = dir.display().to_string().into();
    body["hook_event_name"] = event.into();
    process.time(
        dir,
        &["hook", "claude", event],
        Some(body.to_string().as_bytes()),
    )
}
