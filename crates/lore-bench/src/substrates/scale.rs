//! lore's reasoning trees at scale: a store filled with thoughts (one depth-50 path, the rest
//! shallow branches, loose objects packed as lore's writes pack them), then timed thought writes in process and as whole `lore think add`
//! processes, ρ-ranked retrieval with and without query text, and replay of the depth-50 node.

use std::time::{Duration, Instant};

use lore::ops::Env;
use lore::ops::thoughts::{ThinkReplay, ThinkSearch};
use lore::progress::{Progress, Throttle};
use lore::thoughts::Scores;
use lore::thoughts::index::ThoughtIndex;
use lore::thoughts::write::{NewThought, add_thought};
use lore::{Lore, Result, Store, WriteContext};
use schemars::JsonSchema;
use serde::Serialize;

use super::BenchSubstrates;
use crate::PROGRESS_STEPS;
use crate::bench::corpus::Rng;
use crate::bench::process::{LoreProcess, Stats, stats};

/// lore at scale.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ScaleResult {
    /// Thoughts stored before the timed operations.
    pub thoughts: usize,
    /// Seconds to write them.
    pub fill_seconds: f64,
    /// Seconds for the first index catch-up over all of them.
    pub index_seconds: f64,
    /// One thought written in process.
    pub write_in_process: Stats,
    /// One whole `lore think add` process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_cli: Option<Stats>,
    /// ρ-ranked retrieval with query text.
    pub search_query: Stats,
    /// ρ-ranked retrieval over everything (no text).
    pub search_all: Stats,
    /// Replay of a depth-50 node.
    pub replay_depth_50: Stats,
}

const TOPICS: [&str; 12] = [
    "parser", "cache", "schema", "deploy", "index", "retry", "budget", "lexer", "queue", "router",
    "backup", "sensor",
];

fn text(rng: &mut Rng, i: usize) -> String {
    let a = TOPICS[rng.below(TOPICS.len())];
    let b = TOPICS[rng.below(TOPICS.len())];
    format!(
        "Step {i}: try the {a} before the {b}; expect {} fewer calls.",
        rng.below(1000)
    )
}

/// Fills a store and times lore's operations on it.
// Long: each timed operation is a closure beside its label, in the order the report lists them.
pub fn measure(
    store: &Store,
    req: &BenchSubstrates,
    progress: &dyn Progress,
) -> Result<ScaleResult> {
    let mut rng = Rng::new(req.seed ^ 0x5ca1e);
    let ctx = WriteContext::default();
    let started = Instant::now();
    let deep = fill(store, req.scale, &mut rng, progress)?;
    let fill_seconds = started.elapsed().as_secs_f64();
    progress.phase("scale: indexing", None);
    let started = Instant::now();
    let index = ThoughtIndex::open(store)?;
    let index_seconds = started.elapsed().as_secs_f64();
    drop(index);

    let write_in_process = timed(
        progress,
        "scale: timed thought writes",
        req.timed,
        &mut |i| {
            let t = text(&mut rng, i);
            let started = Instant::now();
            add_thought(
                store,
                &NewThought {
                    session: "timed".into(),
                    text: t,
                    scores: Scores::new(Default::default(), Some(0.5))?,
                    ..NewThought::default()
                },
                &ctx,
            )?;
            Ok(started.elapsed())
        },
    )?;
    let mut lore = Lore::new(Store::discover(
        store.workdir().unwrap_or(&store.common_dir()),
    )?);
    // One search first so the timed ones find the index caught up.
    Env::new(&mut lore, ctx.clone()).run(ThinkSearch::default())?;
    let mut search = |query: Option<String>| -> Result<Duration> {
        let started = Instant::now();
        Env::new(&mut lore, ctx.clone()).run(ThinkSearch {
            query,
            ..ThinkSearch::default()
        })?;
        Ok(started.elapsed())
    };
    let label = "scale: ρ-ranked search with text";
    let search_query = timed(progress, label, req.timed, &mut |i| {
        search(Some(format!(
            "{} {}",
            TOPICS[i % 12],
            TOPICS[(i * 7 + 3) % 12]
        )))
    })?;
    let label = "scale: ρ-ranked search over all";
    let search_all = timed(progress, label, req.timed, &mut |_| search(None))?;
    let replay_depth_50 = match deep {
        None => Stats::default(),
        Some(deep) => timed(
            progress,
            "scale: replay at depth 50",
            req.timed,
            &mut |_| {
                let started = Instant::now();
                Env::new(&mut lore, ctx.clone()).run(ThinkReplay {
                    id: deep.clone(),
                    into: None,
                })?;
                Ok(started.elapsed())
            },
        )?,
    };
    Ok(ScaleResult {
        thoughts: req.scale,
        fill_seconds,
        index_seconds,
        write_in_process,
        write_cli: time_cli_writes(store, req, progress)?,
        search_query,
        search_all,
        replay_depth_50,
    })
}

/// Writes `n` thoughts: the first 51 form one path (depth 0..=50), the rest hang off it in
/// short branches, in sessions of 1,000 (branch parents kept within the current session).
/// Loose objects are packed when git's `gc.auto` says so, checked at each session's end, as
/// lore's write operations do after every write (the thoughts are written by the library here,
/// which does not). Returns the depth-50 thought's id.
fn fill(store: &Store, n: usize, rng: &mut Rng, progress: &dyn Progress) -> Result<Option<String>> {
    let ctx = WriteContext::default();
    let packer = Lore::new(Store::discover(
        store.workdir().unwrap_or(&store.common_dir()),
    )?);
    let mut phase = Throttle::new(
        progress,
        "scale: writing thoughts",
        n as u64,
        PROGRESS_STEPS,
    );
    let mut parent = None;
    let mut deep = None;
    let mut roots = Vec::new();
    for i in 0..n {
        let at = if i <= 50 {
            parent
        } else if i % 4 == 0 || roots.is_empty() {
            None
        } else {
            Some(roots[rng.below(roots.len())])
        };
        let added = add_thought(
            store,
            &NewThought {
                session: format!("s{}", i / 1000),
                parent: at,
                text: text(rng, i),
                scores: Scores::new(Default::default(), Some(rng.unit()))?,
                ..NewThought::default()
            },
            &ctx,
        )?;
        if i <= 50 {
            parent = Some(added.id);
            if i == 50 {
                deep = Some(added.id);
            }
        } else if i % 1000 == 0 {
            roots.clear();
            roots.push(added.id);
            packer.pack_if_due()?;
        } else if roots.len() < 64 {
            roots.push(added.id);
        }
        phase.advance(i as u64 + 1);
    }
    Ok(deep.map(|d| d.to_string()))
}

/// `n` samples of `sample`, with progress under `label`.
fn timed(
    progress: &dyn Progress,
    label: &str,
    n: usize,
    sample: &mut dyn FnMut(usize) -> Result<Duration>,
) -> Result<Stats> {
    let mut phase = Throttle::new(progress, label, n as u64, PROGRESS_STEPS);
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        samples.push(sample(i)?);
        phase.advance(i as u64 + 1);
    }
    Ok(stats(samples))
}

/// Whole `lore think add` processes, when a binary and a count are given.
fn time_cli_writes(
    store: &Store,
    req: &BenchSubstrates,
    progress: &dyn Progress,
) -> Result<Option<Stats>> {
    if req.lore_binary.as_os_str().is_empty() || req.cli_writes == 0 {
        return Ok(None);
    }
    let process = LoreProcess {
        binary: &req.lore_binary,
        args: &req.lore_args,
    };
    let dir = store.workdir().unwrap_or(&store.common_dir()).to_path_buf();
    let label = "scale: whole `lore think add` runs";
    let stats = timed(progress, label, req.cli_writes, &mut |i| {
        let text = format!("process thought {i}");
        let args = ["think", "add", &text, "--in", "cli", "--score", "0.5"];
        process.time(&dir, &args, None)
    })?;
    Ok(Some(stats))
}
