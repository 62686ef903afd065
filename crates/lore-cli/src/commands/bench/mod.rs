//! `lore bench`: reproducible measurements of lore's store and index at several sizes, side by
//! side with the papers' baseline (a loop of `git notes add` through the git CLI, and reads as
//! `git log --grep`). Everything runs in temporary repositories; nothing is downloaded.

mod corpus;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Args;
use lore::embed::SharedEmbedder;
use lore::{ListFilter, Lore, Novelty, Store, WriteContext};
use serde::Serialize;

use crate::cli::GlobalArgs;
use crate::error::{CmdResult, CommandError};
use crate::location;
use crate::ui::Ui;
use corpus::{Corpus, Rng};

/// Measure remember, recall, reindex and storage size.
///
/// At several store sizes, beside the git-notes baseline. Prints a table (or JSON); reproducible
/// with the same --seed on the same machine. Repositories are made under $TMPDIR.
#[derive(Args, Debug)]
pub struct BenchArgs {
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
    /// Timed whole-process `lore hook claude …` runs per size (SessionStart and
    /// UserPromptSubmit, each).
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

/// Median and 95th percentile, in milliseconds.
#[derive(Serialize, Clone, Copy, Default)]
pub struct Stats {
    pub n: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    if samples.is_empty() {
        return Stats::default();
    }
    samples.sort();
    let at = |q: f64| {
        let i = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1;
        samples[i].as_secs_f64() * 1000.0
    };
    Stats {
        n: samples.len(),
        p50_ms: at(0.5),
        p95_ms: at(0.95),
    }
}

#[derive(Serialize)]
struct SizeResult {
    memories: usize,
    fill_seconds: f64,
    remember_in_process: Stats,
    remember_cli: Stats,
    recall: Stats,
    recall_cli: Stats,
    /// Whole-process `lore hook claude SessionStart` (context injection).
    hook_session_start_cli: Stats,
    /// Whole-process `lore hook claude UserPromptSubmit` (signal detection and recall).
    hook_prompt_cli: Stats,
    /// Whole-process `lore hook claude Stop` reading a 200-turn transcript (capture).
    hook_stop_cli: Stats,
    reindex_seconds: f64,
    bytes_per_memory_after_gc: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_git_notes_add: Option<Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_git_log_grep: Option<Stats>,
}

#[derive(Serialize)]
struct BenchOutput {
    machine: String,
    embedder: String,
    /// Short texts embedded per second on one core (corpus summaries).
    #[serde(skip_serializing_if = "Option::is_none")]
    embed_texts_per_second: Option<f64>,
    lore_version: &'static str,
    seed: u64,
    results: Vec<SizeResult>,
}

fn internal(message: String) -> CommandError {
    CommandError {
        class: lore::ErrorClass::Internal,
        code: None,
        message,
        hints: Vec::new(),
    }
}

fn git(dir: &Path, args: &[&str]) -> CmdResult<std::process::Output> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|e| internal(format!("running git: {e}")))?;
    if !out.status.success() {
        return Err(internal(format!(
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(out)
}

fn new_repo(dir: &Path) -> CmdResult<()> {
    let repo = lore::store::init_repository(dir)?;
    drop(repo);
    Ok(())
}

fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(path) {
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => total += dir_size(&e.path()),
                Ok(_) => total += e.metadata().map(|m| m.len()).unwrap_or(0),
                Err(_) => {}
            }
        }
    }
    total
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!("{cpu}, {cores} cores, {}", std::env::consts::OS)
}

/// Times one whole `lore` process run against the repository at `dir`.
fn time_cli(exe: &Path, dir: &Path, global: &GlobalArgs, args: &[&str]) -> CmdResult<Duration> {
    time_cli_with(exe, dir, global, args, None)
}

/// Times one whole `lore` process run, with `stdin` as its input when given.
fn time_cli_with(
    exe: &Path,
    dir: &Path,
    global: &GlobalArgs,
    args: &[&str],
    stdin: Option<&[u8]>,
) -> CmdResult<Duration> {
    use std::io::Write as _;
    use std::process::Stdio;
    let t = Instant::now();
    let mut child = Command::new(exe)
        .arg("--repo")
        .arg(dir)
        .args(["--embedder", &global.embedder])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| internal(format!("running lore: {e}")))?;
    if let Some(mut pipe) = child.stdin.take() {
        pipe.write_all(stdin.unwrap_or_default())
            .map_err(|e| internal(format!("writing lore's input: {e}")))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| internal(format!("running lore: {e}")))?;
    let elapsed = t.elapsed();
    let failed = !out.status.success() || (args.first() == Some(&"hook") && !out.stderr.is_empty());
    if failed {
        return Err(internal(format!(
            "lore {} failed: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(elapsed)
}

fn measure_size(
    args: &BenchArgs,
    global: &GlobalArgs,
    embedder: &Option<SharedEmbedder>,
    corpus: &Corpus,
    size: usize,
    root: &Path,
    ui: &mut Ui,
) -> CmdResult<SizeResult> {
    let root = root.join(size.to_string());
    let dir = root.join("repo");
    new_repo(&dir)?;
    let mut lore = Lore::new(Store::discover(&dir)?);
    lore.set_embedder(embedder.clone());
    let ctx = WriteContext {
        agent: Some("bench".into()),
        ..WriteContext::default()
    };
    let mut rng = Rng::new(args.seed ^ size as u64);

    // Fill: batches of 1,000 memories per commit (the store's batch API).
    let started = Instant::now();
    let mut left = size;
    while left > 0 {
        let n = left.min(1000);
        let batch = (0..n)
            .map(|_| lore.prepare(&corpus.memory(&mut rng), &ctx))
            .collect::<lore::Result<Vec<_>>>()?;
        lore.write_batch(&batch, "bench fill", false, &ctx)?;
        left -= n;
    }
    let fill_seconds = started.elapsed().as_secs_f64();
    ui.warn(&format!("{size}: filled in {fill_seconds:.1}s"));

    let mut samples = Vec::with_capacity(args.writes);
    for _ in 0..args.writes {
        let m = corpus.memory(&mut rng);
        let t = Instant::now();
        lore.remember_checked(&m, &ctx, Novelty::Upsert)?;
        samples.push(t.elapsed());
    }
    let remember_in_process = stats(samples);

    let exe =
        std::env::current_exe().map_err(|e| internal(format!("finding lore's own binary: {e}")))?;
    let mut samples = Vec::with_capacity(args.cli_writes);
    for _ in 0..args.cli_writes {
        let m = corpus.memory(&mut rng);
        let ns = m.namespace.clone();
        samples.push(time_cli(
            &exe,
            &dir,
            global,
            &[
                "remember", "--upsert", &m.summary, "--body", &m.body, "-n", &ns,
            ],
        )?);
    }
    let remember_cli = stats(samples);

    let t = Instant::now();
    lore.reindex()?;
    let reindex_seconds = t.elapsed().as_secs_f64();
    ui.warn(&format!("{size}: reindexed in {reindex_seconds:.1}s"));

    let filter = ListFilter {
        limit: Some(10),
        ..ListFilter::default()
    };
    lore.recall("warm up", &filter)?;
    let mut samples = Vec::with_capacity(args.queries);
    for _ in 0..args.queries {
        let q = corpus.query(&mut rng);
        let t = Instant::now();
        lore.recall(&q, &filter)?;
        samples.push(t.elapsed());
    }
    let recall = stats(samples);

    let mut samples = Vec::with_capacity(args.cli_queries);
    for _ in 0..args.cli_queries {
        let q = corpus.query(&mut rng);
        samples.push(time_cli(&exe, &dir, global, &["recall", &q])?);
    }
    let recall_cli = stats(samples);

    // A session's transcript read whole at Stop (a fresh session each run): 200 turns, one in
    // twenty marked with a tag, so each run detects 10 signals and checks them for novelty.
    let transcript = root.join("transcript.jsonl");
    let mut lines = String::new();
    for turn in 0..200 {
        let m = corpus.memory(&mut rng);
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
    std::fs::write(&transcript, lines)
        .map_err(|e| internal(format!("writing a transcript: {e}")))?;
    let transcript = transcript.display().to_string();
    // Hooks as an agent runs them: a new process per event, the payload on stdin.
    let cwd = dir.display().to_string();
    let mut time_hook = |event: &str, payload: &dyn Fn(&mut Rng) -> serde_json::Value| {
        let mut samples = Vec::with_capacity(args.hook_runs);
        for _ in 0..args.hook_runs {
            let mut body = payload(&mut rng);
            if body.get("session_id").is_none() {
                body["session_id"] = "bench".into();
            }
            body["cwd"] = cwd.as_str().into();
            body["hook_event_name"] = event.into();
            samples.push(time_cli_with(
                &exe,
                &dir,
                global,
                &["hook", "claude", event],
                Some(body.to_string().as_bytes()),
            )?);
        }
        Ok::<_, CommandError>(stats(samples))
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

    let total = size + args.writes + args.cli_writes;
    drop(lore);
    git(&dir, &["gc", "-q"])?;
    let bytes_per_memory_after_gc =
        dir_size(&dir.join(".git").join("objects")) as f64 / total as f64;

    let (baseline_git_notes_add, baseline_git_log_grep) = if args.no_baseline {
        (None, None)
    } else {
        let (a, b) = baseline(args, corpus, size, &root.join("baseline"), &mut rng)?;
        (Some(a), Some(b))
    };
    Ok(SizeResult {
        memories: size,
        fill_seconds,
        remember_in_process,
        remember_cli,
        recall,
        recall_cli,
        hook_session_start_cli,
        hook_prompt_cli,
        hook_stop_cli,
        reindex_seconds,
        bytes_per_memory_after_gc,
        baseline_git_notes_add,
        baseline_git_log_grep,
    })
}

/// The papers' substrate: memories as commit messages (prefilled in-process), writes as
/// `git notes add` through the git CLI, reads as `git log --grep`.
fn baseline(
    args: &BenchArgs,
    corpus: &Corpus,
    size: usize,
    dir: &Path,
    rng: &mut Rng,
) -> CmdResult<(Stats, Stats)> {
    let repo = lore::store::init_repository(dir)?;
    let targets = lore::store::bench_commit_chain(&repo, size.max(args.writes), |_| {
        let m = corpus.memory(rng);
        format!("{}\n\n{}", m.summary, m.body)
    })?;
    drop(repo);
    let mut samples = Vec::new();
    for target in targets.iter().take(args.writes) {
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
        samples.push(t.elapsed());
    }
    let notes = stats(samples);
    let mut samples = Vec::new();
    for _ in 0..args.grep_queries {
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
        samples.push(t.elapsed());
    }
    Ok((notes, stats(samples)))
}

/// Short texts (corpus summaries) embedded per second on this thread.
fn embedding_throughput(
    embedder: &Option<SharedEmbedder>,
    corpus: &Corpus,
    seed: u64,
) -> CmdResult<Option<f64>> {
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

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: &BenchArgs) -> CmdResult {
    if args.sizes.is_empty() || args.writes == 0 || args.queries == 0 {
        return Err(CommandError::usage(
            "give at least one size, write and query",
        ));
    }
    let corpus = Corpus::new();
    // One directory for the whole run, removed at the end: deleting a large repository between
    // sizes would slow the next size's file creation (ext4 skips recently freed inodes).
    let tmp = tempfile::tempdir().map_err(|e| internal(format!("creating a temp dir: {e}")))?;
    let root = args
        .keep
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    // Loaded once: the minilm tier reads a 90 MB model.
    let embedder = location::embedder(global)?;
    let embed_texts_per_second = embedding_throughput(&embedder, &corpus, args.seed)?;
    let mut results = Vec::new();
    for &size in &args.sizes {
        results.push(measure_size(
            args, global, &embedder, &corpus, size, &root, ui,
        )?);
    }
    let out = BenchOutput {
        machine: machine(),
        embedder: embedder
            .as_ref()
            .map(|e| e.id().to_string())
            .unwrap_or_else(|| "none".into()),
        embed_texts_per_second,
        lore_version: env!("CARGO_PKG_VERSION"),
        seed: args.seed,
        results,
    };
    ui.emit(&out, |s| {
        s.push_str(&format!("machine: {}\nembedder: {}\n", out.machine, out.embedder));
        if let Some(rate) = out.embed_texts_per_second {
            s.push_str(&format!("embedding: {rate:.0} short texts/s on one core\n"));
        }
        s.push('\n');
        s.push_str("| memories | remember p50/p95 (in-process) | remember p50/p95 (CLI) | recall p50/p95 (in-process) | recall p50/p95 (CLI) | hook SessionStart p50/p95 | hook UserPromptSubmit p50/p95 | hook Stop (capture) p50/p95 | reindex | bytes/memory after gc | git notes add p50/p95 | git log --grep p50 |\n");
        s.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for r in &out.results {
            let pair = |st: &Stats| format!("{:.2} / {:.2} ms", st.p50_ms, st.p95_ms);
            let base = |st: &Option<Stats>, both: bool| match st {
                Some(st) if both => pair(st),
                Some(st) => format!("{:.1} ms", st.p50_ms),
                None => "-".into(),
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2} s | {:.0} | {} | {} |\n",
                r.memories,
                pair(&r.remember_in_process),
                pair(&r.remember_cli),
                pair(&r.recall),
                pair(&r.recall_cli),
                pair(&r.hook_session_start_cli),
                pair(&r.hook_prompt_cli),
                pair(&r.hook_stop_cli),
                r.reindex_seconds,
                r.bytes_per_memory_after_gc,
                base(&r.baseline_git_notes_add, true),
                base(&r.baseline_git_log_grep, false),
            ));
        }
    });
    Ok(())
}
