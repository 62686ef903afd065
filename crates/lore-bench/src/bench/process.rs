//! Whole processes timed and run for the store benchmark (the `lore` binary, the git CLI), the
//! statistics of their timings, and the facts about the machine that go with a result.

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
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
        let spawn_failed = |e: std::io::Error| self.failed_to_run(e);
        let t = Instant::now();
        let mut child = self.spawn_with(dir, args, Stdio::piped(), Stdio::piped(), vars)?;
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

impl LoreProcess<'_> {
    /// Times one whole run at `dir` (no input, output discarded) and returns its peak resident
    /// memory in bytes beside the time: the kernel's high-water mark (`VmHWM`), read every
    /// 10 ms while the process runs, so growth in its last 10 ms may be missed.
    pub(crate) fn time_peak(&self, dir: &Path, args: &[&str]) -> Result<(Duration, u64)> {
        let failed_to = |e: std::io::Error| self.failed_to_run(e);
        let t = Instant::now();
        let mut child = self.spawn(dir, args, Stdio::null(), Stdio::null())?;
        let stderr = child.stderr.take();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = stderr {
                let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            }
            text
        });
        let status_file = format!("/proc/{}/status", child.id());
        let mut peak_kb = 0;
        let status = loop {
            if let Some(kb) = std::fs::read_to_string(&status_file)
                .ok()
                .and_then(|s| high_water_kb(&s))
            {
                peak_kb = peak_kb.max(kb);
            }
            if let Some(status) = child.try_wait().map_err(failed_to)? {
                break status;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let elapsed = t.elapsed();
        let stderr = reader.join().unwrap_or_default();
        if !status.success() {
            return Err(process_failed(
                format!("lore {} failed", args.first().unwrap_or(&"")),
                stderr,
            ));
        }
        Ok((elapsed, peak_kb * 1024))
    }
}

impl LoreProcess<'_> {
    /// Starts `lore --repo DIR <embedder args> ARGS` with these input and output, stderr piped.
    fn spawn(&self, dir: &Path, args: &[&str], stdin: Stdio, stdout: Stdio) -> Result<Child> {
        self.spawn_with(dir, args, stdin, stdout, &[])
    }

    /// [`LoreProcess::spawn`] with variables set for the run.
    fn spawn_with(
        &self,
        dir: &Path,
        args: &[&str],
        stdin: Stdio,
        stdout: Stdio,
        vars: &[(&str, &Path)],
    ) -> Result<Child> {
        Command::new(self.binary)
            .arg("--repo")
            .arg(dir)
            .args(self.args)
            .args(args)
            .envs(vars.iter().map(|(k, v)| (*k, *v)))
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.failed_to_run(e))
    }

    fn failed_to_run(&self, e: std::io::Error) -> Error {
        Error::Io {
            context: format!("running {}", self.binary.display()),
            source: e,
        }
    }
}

/// The `VmHWM` line of a `/proc/<pid>/status` text, in kB.
fn high_water_kb(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
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

/// Bytes the files under `path` take on disk, recursively, as `du` counts them (allocated
/// blocks: a loose object of 200 bytes takes a whole block).
pub(crate) fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(path) {
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => total += disk_usage(&e.path()),
                Ok(_) => total += e.metadata().map(|m| m.blocks() * 512).unwrap_or(0),
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

    #[test]
    fn high_water_mark_is_read_in_kb() {
        let status = "Name:\tlore\nVmPeak:\t  9000 kB\nVmHWM:\t    5120 kB\nVmRSS:\t 100 kB\n";
        assert_eq!(high_water_kb(status), Some(5120));
        assert_eq!(high_water_kb("Name:\tzombie\n"), None);
    }
}
