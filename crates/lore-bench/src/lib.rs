//! Measurements of lore, kept out of the library that ships: the LongMemEval retrieval
//! evaluation ([`longmemeval`]), the seeded trajectory retrieval benchmark ([`trajectories`]),
//! the store benchmark beside the git-notes baseline ([`bench`](mod@bench)) and the comparison of
//! five memory substrates with lore's reasoning trees at scale ([`substrates`]).
//!
//! Each is an operation ([`lore::ops::Operation`]): a typed request, a typed report, progress
//! through the environment's [`lore::progress::Progress`]. They run in fresh repositories under
//! a directory the request names, never in the caller's store; the embedder measured is the
//! environment handle's (see [`run_measurement`] for front ends that have no store at hand).

#![warn(missing_docs)]

pub mod bench;
pub mod locomo;
pub mod longmemeval;
pub mod retrieval;
pub mod substrates;
pub mod trajectories;

use std::path::Path;

use lore::embed::SharedEmbedder;
use lore::ops::{Env, Operation};
use lore::progress::SharedProgress;
use lore::{Lore, Result, Store, WriteContext};

pub use bench::{Bench, BenchReport};
pub use locomo::{EvalLoCoMo, LoCoMoReport};
pub use longmemeval::{EvalLongMemEval, EvalReport};
pub use substrates::{BenchSubstrates, SubstratesReport};
pub use trajectories::{EvalTrajectories, TrajectoryReport};

/// Progress calls per phase at most (about): enough for a smooth bar, few enough to cost
/// nothing.
const PROGRESS_STEPS: u64 = 100;

/// A handle on a new, empty store at `dir` (created) using `embedder`.
pub fn scratch_handle(dir: &Path, embedder: Option<SharedEmbedder>) -> Result<Lore> {
    lore::store::init_repository(dir)?;
    let mut lore = Lore::new(Store::discover(dir)?);
    lore.set_embedder(embedder);
    Ok(lore)
}

/// Runs a measurement outside any store, for front ends that have none at hand: in an
/// environment over a scratch handle at `scratch` (created; the measurements never write to
/// it) using `embedder`, reporting to `progress`. Returns the report and the warnings gathered.
pub fn run_measurement<O: Operation>(
    request: O,
    scratch: &Path,
    embedder: Option<SharedEmbedder>,
    progress: SharedProgress,
) -> Result<(O::Output, Vec<String>)> {
    let mut lore = scratch_handle(scratch, embedder)?;
    let mut env = Env::new(&mut lore, WriteContext::default()).with_progress(progress);
    let report = env.run(request)?;
    Ok((report, env.take_warnings()))
}

/// The embedder's identity as the reports print it (`none` without one).
fn embedder_name(embedder: Option<&SharedEmbedder>) -> String {
    embedder
        .map(|e| e.id().to_string())
        .unwrap_or_else(|| "none".into())
}

/// The value at quantile `q` of ascending `sorted`, by nearest rank (the smallest value with at
/// least `q` of the samples at or below it), 0 when empty. The one percentile every report
/// uses; with fewer than 20 samples the 95th is the largest.
pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// A directory the request must name (the front end picks it), refused when empty.
/// The `lore` binary a measurement times, which the front end must name.
fn require_binary(binary: &Path) -> Result<()> {
    if binary.as_os_str().is_empty() {
        return Err(lore::Error::Invalid {
            what: "lore binary",
            value: String::new(),
            reason: "the front end must name the lore binary to time".into(),
        });
    }
    Ok(())
}

fn require_dir<'a>(what: &'static str, dir: &'a Path) -> Result<&'a Path> {
    if dir.as_os_str().is_empty() {
        return Err(lore::Error::Invalid {
            what,
            value: String::new(),
            reason: "the front end must give a directory to work in".into(),
        });
    }
    Ok(dir)
}
