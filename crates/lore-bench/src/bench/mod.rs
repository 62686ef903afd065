//! `bench` (`lore bench`): reproducible measurements of lore's store and index at several sizes,
//! side by side with the papers' baseline (a loop of `git notes add` through the git CLI, and
//! reads as `git log --grep`). Everything runs in fresh repositories under the directory the
//! front end gives; nothing is downloaded. Whole-process timings run the `lore` binary the
//! front end names.

pub(crate) mod corpus;
pub mod hot;
pub mod input_cost;
pub(crate) mod process;
pub mod scale;
pub mod scopes;
pub mod sync;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use lore::embed::SharedEmbedder;
use lore::ops::{Effect, Env, Operation};
use lore::progress::{Progress, Throttle};
use lore::{Error, ListFilter, Novelty, Result, WriteContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{PROGRESS_STEPS, embedder_name, require_binary, require_dir, scratch_handle};
use corpus::{Corpus, Rng};
pub use process::Stats;
use process::{LoreProcess, dir_size, git, machine, process_failed, stats};

/// Measure remember, recall, hooks, reindex and storage size at several store sizes, beside
/// the git-notes baseline.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Bench {
    /// Store sizes to measure at (memories already stored; default 1,000, 10,000 and
    /// 100,000).
    pub sizes: Vec<usize>,
    /// Timed in-process remembers per size (default 200).
    pub writes: usize,
    /// Timed whole-process `lore remember` runs per size (default 50).
    pub cli_writes: usize,
    /// Timed recall queries per size (default 200).
    pub queries: usize,
    /// Timed whole-process `lore recall` runs per size (default 20).
    pub cli_queries: usize,
    /// Timed whole-process `lore hook claude …` runs per size, for each of SessionStart,
    /// UserPromptSubmit and Stop (default 50).
    pub hook_runs: usize,
    /// Timed baseline `git log --grep` reads per size (default 20).
    pub grep_queries: usize,
    /// Measure the git-notes baseline (default true).
    pub baseline: bool,
    /// Seed of the synthetic corpus (default 42).
    pub seed: u64,
    /// The `lore` binary whose whole runs are timed: set by the front end, never taken from a
    /// client's arguments.
    #[serde(skip)]
    pub lore_binary: PathBuf,
    /// Arguments given to every timed `lore` run before its command (the embedder, for one):
    /// set by the front end.
    #[serde(skip)]
    pub lore_args: Vec<OsString>,
    /// Where the repositories are made (left in place; the front end removes or keeps them):
    /// set by the front end.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

impl Default for Bench {
    fn default() -> Bench {
        Bench {
            sizes: vec![1_000, 10_000, 100_000],
            writes: 200,
            cli_writes: 50,
            queries: 200,
            cli_queries: 20,
            hook_runs: 50,
            grep_queries: 20,
            baseline: true,
            seed: 42,
            lore_binary: PathBuf::new(),
            lore_args: Vec::new(),
            work_dir: PathBuf::new(),
        }
    }
}

/// The hook processes' times of one size.
struct HookTimes {
    session_start: Stats,
    prompt: Stats,
    stop: Stats,
    long_prompt: Stats,
}

/// The measurements at one store size.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SizeResult {
    /// Memories stored before the timed operations.
    pub memories: usize,
    /// Seconds to write them (batches of 1,000 per commit).
    pub fill_seconds: f64,
    /// `remember` in process.
    pub remember_in_process: Stats,
    /// Whole-process `lore remember`.
    pub remember_cli: Stats,
    /// `recall` in process.
    pub recall: Stats,
    /// Whole-process `lore recall`.
    pub recall_cli: Stats,
    /// Whole-process `lore hook claude SessionStart` (context injection).
    pub hook_session_start_cli: Stats,
    /// Whole-process `lore hook claude UserPromptSubmit` (signal detection and recall).
    pub hook_prompt_cli: Stats,
    /// Whole-process `lore hook claude Stop` reading a 200-turn transcript (capture).
    pub hook_stop_cli: Stats,
    /// Whole-process `lore hook claude UserPromptSubmit` with a prompt of 100,000 distinct
    /// words (a pasted log or document: the cost of input size), a fifth as many runs.
    pub hook_long_prompt_cli: Stats,
    /// Seconds to rebuild the index from git.
    pub reindex_seconds: f64,
    /// Object storage per memory after `git gc`.
    pub bytes_per_memory_after_gc: f64,
    /// Baseline: `git notes add` through the git CLI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_git_notes_add: Option<Stats>,
    /// Baseline: `git log --grep` through the git CLI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_git_log_grep: Option<Stats>,
}

/// What a benchmark run measured.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct BenchReport {
    /// Processor, cores, operating system.
    pub machine: String,
    /// The embedder (`none` for lexical only).
    pub embedder: String,
    /// Short texts embedded per second on one core (corpus summaries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_texts_per_second: Option<f64>,
    /// The version of lore measured.
    pub lore_version: String,
    /// Seed of the synthetic corpus.
    pub seed: u64,
    /// One result per store size.
    pub results: Vec<SizeResult>,
}

impl Operation for Bench {
    const NAME: &'static str = "bench";
    const TITLE: &'static str = "Benchmark the store";
    const DESCRIPTION: &'static str = "Measure remember, recall, hooks, reindex and storage \
        size at several store sizes in temporary repositories (in process and as whole `lore` \
        runs), beside the git-notes baseline. Reproducible with the same seed on the same \
        machine.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = BenchReport;

    fn run(self, env: &mut Env<'_>) -> Result<BenchReport> {
        if self.sizes.is_empty() || self.writes == 0 || self.queries == 0 {
            return Err(Error::Invalid {
                what: "benchmark size",
                value: format!(
                    "sizes {:?}, {} writes, {} queries",
                    self.sizes, self.writes, self.queries
                ),
                reason: "give at least one size, write and query".into(),
            });
        }
        let root = require_dir("work directory", &self.work_dir)?;
        require_binary(&self.lore_binary)?;
        let corpus = Corpus::new();
        let embedder = env.lore.embedder().cloned();
        let progress = &*env.progress;
        progress.phase("measuring embedding throughput", None);
        let embed_texts_per_second = embedding_throughput(&embedder, &corpus, self.seed)?;
        let mut results = Vec::new();
        for &size in &self.sizes {
            let measure = Measure {
                request: &self,
                embedder: &embedder,
                corpus: &corpus,
                progress,
                size,
            };
            results.push(measure.run(root)?);
        }
        Ok(BenchReport {
            machine: machine(),
            embedder: embedder_name(embedder.as_ref()),
            embed_texts_per_second,
            lore_version: env!("CARGO_PKG_VERSION").into(),
            seed: self.seed,
            results,
        })
    }
}

/// The measurements at one size.
struct Measure<'a> {
    request: &'a Bench,
    embedder: &'a Option<SharedEmbedder>,
    corpus: &'a Corpus,
    progress: &'a dyn Progress,
    size: usize,
}

impl Measure<'_> {
    /// A phase of `total` steps at this size.
    fn phase(&self, what: &str, total: usize) -> Throttle<'_> {
        Throttle::new(
            self.progress,
            &format!("size {}: {what}", self.size),
            total as u64,
            PROGRESS_STEPS,
        )
    }

    /// A phase of unknown length at this size.
    fn step(&self, what: &str) {
        self.progress
            .phase(&format!("size {}: {what}", self.size), None);
    }

    /// Times `n` runs of `sample`, advancing a phase as they complete.
    fn timed(
        &self,
        what: &str,
        n: usize,
        mut sample: impl FnMut() -> Result<std::time::Duration>,
    ) -> Result<Stats> {
        let mut phase = self.phase(what, n);
        let mut samples = Vec::with_capacity(n);
        for done in 1..=n {
            samples.push(sample()?);
            phase.advance(done as u64);
        }
        Ok(stats(samples))
    }

    // Long: one size's scenario in the order it runs (fill, then each timed phase, then gc);
    // its phases share the store, the generator and the process runner.
    fn run(&self, root: &Path) -> Result<SizeResult> {
        let (request, corpus, size) = (self.request, self.corpus, self.size);
        let root = root.join(size.to_string());
        let dir = root.join("repo");
        let mut lore = scratch_handle(&dir, self.embedder.clone())?;
        let ctx = WriteContext {
            agent: Some("bench".into()),
            ..WriteContext::default()
        };
        let mut rng = Rng::new(request.seed ^ size as u64);
        let lore_process = LoreProcess {
            binary: &request.lore_binary,
            args: &request.lore_args,
        };

        let fill_seconds = self.fill(&mut lore, &ctx, &mut rng)?;

        let remember_in_process = self.timed("remembers in process", request.writes, || {
            let m = corpus.memory(&mut rng);
            let t = Instant::now();
            lore.remember_checked(&m, &ctx, Novelty::Upsert)?;
            Ok(t.elapsed())
        })?;

        let remember_cli = self.timed("lore remember runs", request.cli_writes, || {
            let m = corpus.memory(&mut rng);
            lore_process.time_remember(&dir, &m)
        })?;

        self.step("reindexing");
        let t = Instant::now();
        lore.reindex()?;
        let reindex_seconds = t.elapsed().as_secs_f64();

        let filter = ListFilter {
            limit: Some(10),
            ..ListFilter::default()
        };
        lore.recall("warm up", &filter)?;
        let recall = self.timed("recalls in process", request.queries, || {
            let q = corpus.query(&mut rng);
            let t = Instant::now();
            lore.recall(&q, &filter)?;
            Ok(t.elapsed())
        })?;

        let recall_cli = self.timed("lore recall runs", request.cli_queries, || {
            let q = corpus.query(&mut rng);
            lore_process.time(&dir, &["recall", &q], None)
        })?;

        let hooks = self.time_hooks(&root, &dir, &lore_process, &mut rng)?;

        let total = size + request.writes + request.cli_writes;
        drop(lore);
        self.step("git gc");
        git(&dir, &["gc", "-q"])?;
        let bytes_per_memory_after_gc =
            dir_size(&dir.join(".git").join("objects")) as f64 / total as f64;

        let (baseline_git_notes_add, baseline_git_log_grep) = if request.baseline {
            let (a, b) = self.baseline(&root.join("baseline"), &mut rng)?;
            (Some(a), Some(b))
        } else {
            (None, None)
        };
        Ok(SizeResult {
            memories: size,
            fill_seconds,
            remember_in_process,
            remember_cli,
            recall,
            recall_cli,
            hook_session_start_cli: hooks.session_start,
            hook_prompt_cli: hooks.prompt,
            hook_stop_cli: hooks.stop,
            hook_long_prompt_cli: hooks.long_prompt,
            reindex_seconds,
            bytes_per_memory_after_gc,
            baseline_git_notes_add,
            baseline_git_log_grep,
        })
    }

    /// Fills the store: batches of 1,000 memories per commit (the store's batch API). Returns
    /// the seconds it took.
    fn fill(&self, lore: &mut lore::Lore, ctx: &WriteContext, rng: &mut Rng) -> Result<f64> {
        let (corpus, size) = (self.corpus, self.size);
        let mut filled = self.phase("memories written", size);
        let started = Instant::now();
        let mut left = size;
        while left > 0 {
            let n = left.min(1000);
            let batch = (0..n)
                .map(|_| lore.prepare(&corpus.memory(rng), ctx))
                .collect::<Result<Vec<_>>>()?;
            lore.write_batch(&batch, &lore::BatchWrite::import("bench fill"), ctx)?;
            left -= n;
            filled.advance((size - left) as u64);
        }
        Ok(started.elapsed().as_secs_f64())
    }

    /// Times the hooks as an agent runs them: a new process per event, the payload on stdin;
    /// last, a prompt of 100,000 distinct words after a query (the cost of input size).
    fn time_hooks(
        &self,
        root: &Path,
        dir: &Path,
        lore_process: &LoreProcess,
        rng: &mut Rng,
    ) -> Result<HookTimes> {
        let (request, corpus) = (self.request, self.corpus);
        let transcript = root.join("transcript.jsonl");
        write_transcript(&transcript, corpus, rng)?;
        let transcript = transcript.display().to_string();
        // Hooks as an agent runs them: a new process per event, the payload on stdin.
        let cwd = dir.display().to_string();
        let mut time_hook = |event: &str, payload: &dyn Fn(&mut Rng) -> serde_json::Value| {
            let what = format!("lore hook {event} runs");
            self.timed(&what, request.hook_runs, || {
                let mut body = payload(rng);
                if body.get("session_id").is_none() {
                    body["session_id"] = "bench".into();
                }
                body["cwd"] = cwd.as_str().into();
                body["hook_event_name"] = event.into();
                lore_process.time(
                    dir,
                    &["hook", "claude", event],
                    Some(body.to_string().as_bytes()),
                )
            })
        };
        let hook_session_start_cli = time_hook(
            "SessionStart",
            &|_| serde_json::json!({ "transcript_path": "", "source": "startup" }),
        )?;
        let hook_prompt_cli = time_hook(
            "UserPromptSubmit",
            &|rng| serde_json::json!({ "prompt": corpus.query(rng) }),
        )?;
        let hook_stop_cli = time_hook("Stop", &|rng| {
            serde_json::json!({
                "session_id": format!("bench-stop-{}", rng.next()),
                "transcript_path": transcript,
            })
        })?;

        // A prompt of 100,000 distinct words after a query: the cost of input size.
        let mut prompt = corpus.query(rng);
        for i in 0..LONG_PROMPT_WORDS {
            prompt.push_str(&format!(" w{i:x}q"));
        }
        let long_prompt = serde_json::json!({
            "session_id": "bench-long-prompt",
            "cwd": cwd,
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        })
        .to_string();
        let hook_long_prompt_cli = self.timed(
            "lore hook UserPromptSubmit runs with a 100,000-word prompt",
            // A fifth of the hook runs, at least one when hooks are timed at all.
            request.hook_runs.div_ceil(5),
            || {
                lore_process.time(
                    dir,
                    &["hook", "claude", "UserPromptSubmit"],
                    Some(long_prompt.as_bytes()),
                )
            },
        )?;

        Ok(HookTimes {
            session_start: hook_session_start_cli,
            prompt: hook_prompt_cli,
            stop: hook_stop_cli,
            long_prompt: hook_long_prompt_cli,
        })
    }

    /// The papers' substrate: memories as commit messages (prefilled in-process), writes as
    /// `git notes add` through the git CLI, reads as `git log --grep`.
    fn baseline(&self, dir: &Path, rng: &mut Rng) -> Result<(Stats, Stats)> {
        let (request, corpus) = (self.request, self.corpus);
        let repo = lore::store::init_repository(dir)?;
        let commits = self.size.max(request.writes);
        let mut chained = self.phase("baseline commits written", commits);
        let targets = lore::store::bench_commit_chain(&repo, commits, |i| {
            chained.advance(i as u64 + 1);
            let m = corpus.memory(rng);
            format!("{}\n\n{}", m.summary, m.body)
        })?;
        drop(repo);
        let mut targets = targets.iter();
        let notes = self.timed("git notes add runs", request.writes, || {
            let target = targets
                .next()
                .ok_or_else(|| process_failed("git notes add".into(), "no commit left"))?;
            let m = corpus.memory(rng);
            let text = format!(
                "---\ntype: {}\nsummary: {}\n---\n{}",
                m.namespace, m.summary, m.body
            );
            let t = Instant::now();
            git(
                dir,
                &["notes", "--ref=mem/bench", "add", "-f", "-m", &text, target],
            )?;
            Ok(t.elapsed())
        })?;
        let grep = self.timed("git log --grep runs", request.grep_queries, || {
            let q = corpus.query(rng);
            let word = q.split(' ').next().unwrap_or("cache").to_string();
            let t = Instant::now();
            git(
                dir,
                &[
                    "log",
                    "--format=%H",
                    "-i",
                    &format!("--grep={word}"),
                    "-n",
                    "10",
                ],
            )?;
            Ok(t.elapsed())
        })?;
        Ok((notes, grep))
    }
}

/// A session's transcript read whole at Stop (a fresh session each run): 200 turns, one in
/// twenty marked with a tag, so each run detects 10 signals and checks them for novelty.
/// Distinct words in the long prompt the prompt hook is timed with.
const LONG_PROMPT_WORDS: usize = 100_000;

fn write_transcript(path: &Path, corpus: &Corpus, rng: &mut Rng) -> Result<()> {
    let mut lines = String::new();
    for turn in 0..200 {
        let m = corpus.memory(rng);
        let text = if turn % 20 == 0 {
            format!("[decision] {}\n\n{}", m.summary, m.body)
        } else {
            m.body
        };
        let (kind, role) = if turn % 2 == 0 {
            ("assistant", "assistant")
        } else {
            ("user", "user")
        };
        lines.push_str(
            &serde_json::json!({ "type": kind, "message": { "role": role, "content": text } })
                .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(path, lines).map_err(|e| Error::Io {
        context: "writing a transcript".into(),
        source: e,
    })
}

/// Short texts (corpus summaries) embedded per second on this thread.
fn embedding_throughput(
    embedder: &Option<SharedEmbedder>,
    corpus: &Corpus,
    seed: u64,
) -> Result<Option<f64>> {
    let Some(embedder) = embedder else {
        return Ok(None);
    };
    let mut rng = Rng::new(seed);
    let texts: Vec<String> = (0..20_000)
        .map(|_| corpus.memory(&mut rng).summary)
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    embedder.embed(&refs[..100])?;
    let t = Instant::now();
    let mut done = 0;
    for batch in refs.chunks(1000) {
        embedder.embed(batch)?;
        done += batch.len();
        if t.elapsed().as_secs_f64() > 5.0 {
            break;
        }
    }
    Ok(Some(done as f64 / t.elapsed().as_secs_f64()))
}
