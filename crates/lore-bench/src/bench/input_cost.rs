//! `bench input-cost` (`lore bench input-cost`): how each step over an agent's input grows with
//! the input's size. Every step runs on an input of `n` and of `8n` bytes (best of three each),
//! and the ratio of the two times is reported: linear work takes about 8 times as long,
//! quadratic work 64 times. Query terms, secret scanning, neutralising text for an agent,
//! capture's signal detection, reading a memory file and a whole `remember` are measured.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lore::ops::{Effect, Env, Operation};
use lore::{NewMemory, Result, WriteContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::process::machine;
use crate::{require_dir, scratch_handle};

/// How much larger the large input is than the small one.
pub const GROWTH: usize = 8;

/// Time each step over input at two sizes, `GROWTH` apart.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BenchInputCost {
    /// Where the stores of the `remember` step are made: set by the front end.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

/// One step at both sizes.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct InputCostRow {
    /// The step.
    pub step: String,
    /// Bytes of the small input.
    pub small_bytes: usize,
    /// Bytes of the large input.
    pub large_bytes: usize,
    /// Best of three on the small input, in milliseconds.
    pub small_ms: f64,
    /// Best of three on the large input, in milliseconds.
    pub large_ms: f64,
    /// `large_ms / small_ms`: about 8 when the step is linear, 64 when quadratic.
    pub ratio: f64,
}

/// The rows.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct InputCostReport {
    /// The machine.
    pub machine: String,
    /// How much larger the large input is.
    pub growth: usize,
    /// One row per step.
    pub rows: Vec<InputCostRow>,
}

impl Operation for BenchInputCost {
    const NAME: &'static str = "bench_input_cost";
    const TITLE: &'static str = "Benchmark input cost";
    const DESCRIPTION: &'static str = "Time each step over an agent's input at two sizes eight \
        times apart and report how its time grows.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = InputCostReport;

    fn run(self, env: &mut Env<'_>) -> Result<InputCostReport> {
        let root = require_dir("work directory", &self.work_dir)?;
        let embedder = env.lore.embedder().cloned();
        let mut rows = Vec::new();
        let mut measure = |step: &str, n: usize, input: &dyn Fn(usize) -> String, run: Run| {
            env.progress.phase(&format!("input cost: {step}"), None);
            rows.push(row(step, n, input, run)?);
            Ok::<(), lore::Error>(())
        };
        measure(
            "query terms of a prompt",
            20_000,
            &distinct_words,
            &mut |t| {
                std::hint::black_box(lore::index::query_terms(t));
                Ok(())
            },
        )?;
        measure("secret scanning", 8_000, &secret_text, &mut |t| {
            std::hint::black_box(lore::secrets::scan(t));
            Ok(())
        })?;
        measure(
            "neutralising text for an agent",
            20_000,
            &control_text,
            &mut |t| {
                std::hint::black_box(lore::agent_text::neutralize(t));
                Ok(())
            },
        )?;
        measure("capture's signal detection", 2_000, &transcript, &mut |t| {
            std::hint::black_box(lore::capture::detect(t));
            Ok(())
        })?;
        measure(
            "reading a memory file",
            100_000,
            &|n| memory_file(200, n),
            &mut |t| lore::record::parse(t, "x").map(|_| ()),
        )?;
        let mut store = 0usize;
        measure("a whole remember", 16_000, &distinct_words, &mut |body| {
            store += 1;
            remember_once(&root.join(format!("store-{store}")), &embedder, body)
        })?;
        Ok(InputCostReport {
            machine: machine(),
            growth: GROWTH,
            rows,
        })
    }
}

/// A step over one input.
type Run<'a> = &'a mut dyn FnMut(&str) -> Result<()>;

/// Times `run` (best of three) on `input(n)` and `input(GROWTH · n)`.
fn row(step: &str, n: usize, input: &dyn Fn(usize) -> String, run: Run) -> Result<InputCostRow> {
    let small = input(n);
    let large = input(n * GROWTH);
    let small_time = best_of_three(&small, run)?;
    let large_time = best_of_three(&large, run)?;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    Ok(InputCostRow {
        step: step.to_string(),
        small_bytes: small.len(),
        large_bytes: large.len(),
        small_ms: ms(small_time),
        large_ms: ms(large_time),
        ratio: large_time.as_secs_f64() / small_time.as_secs_f64().max(1e-9),
    })
}

/// The shortest of three runs: the time with the least of the machine's noise in it.
fn best_of_three(input: &str, run: Run) -> Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        run(input)?;
        best = best.min(started.elapsed());
    }
    Ok(best)
}

/// One `remember` of a memory with `body` into a new store at `dir` (a new store each time, so
/// no run finds the last one's memory a repeat).
fn remember_once(
    dir: &Path,
    embedder: &Option<lore::embed::SharedEmbedder>,
    body: &str,
) -> Result<()> {
    let lore = scratch_handle(dir, embedder.clone())?;
    let memory = NewMemory {
        namespace: "decisions".into(),
        summary: "a long body".into(),
        body: body.into(),
        ..NewMemory::default()
    };
    lore.remember(&memory, &WriteContext::default())?;
    Ok(())
}

/// `n` distinct words, as a prompt or body an agent could send.
pub fn distinct_words(n: usize) -> String {
    (0..n).map(|i| format!("w{i:x}q ")).collect()
}

/// Lines dense with what secret rules look for: assignments, tokens and base64.
pub fn secret_text(n: usize) -> String {
    (0..n / 4)
        .map(|i| {
            format!(
                "export DATABASE_PASSWORD_{i}=hunter{i}x\ntoken ghp_{i:036} and SGVsbG8sIFdvcmxk{i}\n\n"
            )
        })
        .collect()
}

/// Escape sequences, bells, carriage returns, line separators and tag lookalikes.
pub fn control_text(n: usize) -> String {
    "a\u{1b}[2J\u{7}b\rc\u{2028}</context><system>\n".repeat(n)
}

/// A transcript where every line is a capture signal.
pub fn transcript(n: usize) -> String {
    (0..n)
        .map(|i| format!("We decided to use engine {i} because it is fast.\n[learned] thing {i}\n"))
        .collect()
}

/// A memory file with `tags` tags and a body of `n` distinct words.
pub fn memory_file(tags: usize, n: usize) -> String {
    let tags: String = (0..tags).map(|i| format!("- t{i}\n")).collect();
    format!(
        "---\nid: 9pzg1r5rmw5y\nnamespace: decisions\nsummary: s\nstatus: active\ntags:\n{tags}\
         created: 2026-11-23T19:01:59.333Z\nupdated: 2026-11-23T19:01:59.333Z\n---\n{}",
        distinct_words(n)
    )
}
