//! Whole processes timed and run for the store benchmark (the `lore` binary, the git CLI), the
//! statistics of their timings, and the facts about the machine that go with a result.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use lore::{Error, Result};
use schemars::JsonSchema;
use serde::Serialize;

/// Median and 95th percentile, in milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize, JsonSchema)]
pub struct Stats {
    /// Samples.
    pub n: usize,
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
}

impl Stats {
    /// The 95th percentile as reports print it: "max" where fewer than 20 samples make it the
    /// largest.
    pub fn p95_text(&self) -> String {
        if self.n < 20 {
            format!("{:.2} ms (max)", self.p95_ms)
        } else {
            format!("{:.2} ms", self.p95_ms)
        }
    }
}

/// The statistics of `samples` ([`crate::percentile`]: with fewer than 20 samples the 95th
/// percentile is the largest, and reports say "max").
pub(crate) fn stats(samples: Vec<Duration>) -> Stats {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    Stats {
        n: ms.len(),
        p50_ms: crate::percentile(&ms, 0.5),
        p95_ms: crate::percentile(&ms, 0.95),
    }
}

/// An error for a process that could not run or did not succeed.
pub(crate) fn process_failed(context: String, detail: impl Into<String>) -> Error {
    Error::Io {
        context,
        source: std::io::Error::other(detail.into()),
    }
}

/// Runs the git CLI in `dir` (without the system configuration); fails unless it succeeds.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<Output> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|e| Error::Io {
            context: "running git".into(),
            source: e,
        })?;
    if !out.status.success() {
        return Err(process_failed(
            format!("git {args:?} failed"),
            String::from_utf8_lossy(&out.stderr),
        ));
    }
    Ok(out)
}

/// How to start the `lore` binary under measurement.
pub(crate) struct LoreProcess<'a> {
    /// The binary.
    pub(crate) binary: &'a Path,
    /// Arguments given before the command (the embedder, for one).
    pub(crate) args: &'a [std::ffi::OsString],
}

impl LoreProcess<'_> {
    /// Times one whole run against the repository at `dir`, with `stdin` as its input when
    /// given. A hook run fails if it says anything on stderr (hooks must stay quiet).
    pub(crate) fn time(&self, dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Result<Duration> {
        self.time_with(dir, args, stdin, &[])
    }

    /// [`LoreProcess::time`] with variables set for the run (`LORE_HOME`, for one).
    pub(crate) fn time_with(
        &self,
        dir: &Path,
        args: &[&str],
        stdin: Option<&[u8]>,
        vars: &[(&str, &Path)],
    ) -> Result<Duration> {
        let spawn_failed = |e: std::io::Error| Error::Io {
            context: format!("running {}", self.binary.display()),
            source: e,
        };
        let t = Instant::now();
        let mut child = Command::new(self.binary)
            .arg("--repo")
            .arg(dir)
            .args(self.args)
            .args(args)
            .envs(vars.iter().map(|(k, v)| (*k, *v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_failed)?;
        if let Some(mut pipe) = child.stdin.take() {
            pipe.write_all(stdin.unwrap_or_default())
                .map_err(|e| Error::Io {
                    context: "writing lore's input".into(),
                    source: e,
                })?;
        }
        let out = child.wait_with_output().map_err(spawn_failed)?;
        let elapsed = t.elapsed();
        let failed =
            !out.status.success() || (args.first() == Some(&"hook") && !out.stderr.is_empty());
        if failed {
            return Err(process_failed(
                format!("lore {} failed", args.first().unwrap_or(&"")),
                String::from_utf8_lossy(&out.stderr),
            ));
        }
        Ok(elapsed)
    }
}

impl LoreProcess<'_> {
    /// Times one `lore remember --upsert` of `memory` (summary, body, namespace) at `dir`.
    pub(crate) fn time_remember(&self, dir: &Path, memory: &lore::NewMemory) -> Result<Duration> {
        let args = [
            "remember",
            "--upsert",
            &memory.summary,
            "--body",
            &memory.body,
            "-n",
            &memory.namespace,
        ];
        self.time(dir, &args, None)
    }

    /// Runs `lore --json ARGS` against the repository at `dir` and returns its output; fails
    /// unless it succeeds.
    pub(crate) fn json(&self, dir: &Path, args: &[&str]) -> Result<serde_json::Value> {
        let out = Command::new(self.binary)
            .arg("--repo")
            .arg(dir)
            .arg("--json")
            .args(self.args)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::Io {
                context: format!("running {}", self.binary.display()),
                source: e,
            })?;
        if !out.status.success() {
            return Err(process_failed(
                format!("lore {args:?} failed"),
                String::from_utf8_lossy(&out.stdout).into_owned()
                    + &String::from_utf8_lossy(&out.stderr),
            ));
        }
        serde_json::from_slice(&out.stdout)
            .map_err(|e| process_failed(format!("lore {args:?} printed no JSON"), e.to_string()))
    }
}

/// Bytes of the files under `path`, recursively.
pub(crate) fn dir_size(path: &Path) -> u64 {
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

/// The processor, its cores and the operating system.
pub(crate) fn machine() -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_take_ranks_rounded_up() {
        let ms = |v: &[u64]| v.iter().map(|m| Duration::from_millis(*m)).collect();
        let s = stats(ms(&[40, 10, 30, 20]));
        assert_eq!(s.n, 4);
        assert_eq!(s.p50_ms, 20.0);
        assert_eq!(s.p95_ms, 40.0);
        assert_eq!(stats(Vec::new()).n, 0);
    }
}
