//! The merge experiment: two worker processes clone a central bare repository and keep
//! lessons on disjoint domains; the orchestrator syncs and merges them without a conflict. Then
//! both workers write contradictory lessons on the same topics three ways: as keyed lessons
//! (`lessons/<topic>`, one file per topic) the contradictions surface as conflicts; appended to
//! one markdown file merged by concatenation (git's union merge) they are all kept silently; as
//! unkeyed lessons (hashed file names) they coexist silently.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::Instant;

use lore::ops::{Effect, Env, Operation};
use lore::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bench::process::{LoreProcess, git};
use crate::require_dir;

/// Run the merge experiment with real `lore` processes and a central bare repository.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MergeExperiment {
    /// Lessons each worker keeps on its own domain (default 5).
    pub lessons_per_worker: usize,
    /// Topics both workers then contradict each other on (default 5).
    pub contradictions: usize,
    /// The `lore` binary the workers and the orchestrator run: set by the front end.
    #[serde(skip)]
    pub lore_binary: PathBuf,
    /// Where the repositories are made: set by the front end.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

impl Default for MergeExperiment {
    fn default() -> Self {
        MergeExperiment {
            lessons_per_worker: 5,
            contradictions: 5,
            lore_binary: PathBuf::new(),
            work_dir: PathBuf::new(),
        }
    }
}

/// One way of keeping lessons, after the orchestrator merged both workers.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MergeOutcome {
    /// Contradictory lessons written (one per topic by each worker).
    pub contradictions_injected: usize,
    /// Conflicts the merge surfaced.
    pub conflicts: usize,
    /// Entries on the contradicted topics the merged result holds side by side.
    pub entries_kept: usize,
}

/// What the experiment found.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MergeReport {
    /// Lessons in the orchestrator after merging the disjoint domains.
    pub disjoint_lessons: usize,
    /// Conflicts from merging the disjoint domains.
    pub disjoint_conflicts: usize,
    /// Keyed lessons (`lessons/<topic>`): contradictions surface.
    pub keyed: MergeOutcome,
    /// One markdown file merged by concatenation: contradictions kept silently.
    pub concatenation: MergeOutcome,
    /// Unkeyed lessons (hashed file names): contradictions coexist silently.
    pub hashed: MergeOutcome,
    /// How long it took.
    pub seconds: f64,
}

impl Operation for MergeExperiment {
    const NAME: &'static str = "bench_merge";
    const TITLE: &'static str = "Merge experiment";
    const DESCRIPTION: &'static str = "Two workers and an orchestrator over a central bare \
        repository: disjoint lessons merge cleanly; contradictory keyed lessons surface as \
        conflicts, while concatenation and hashed file names keep them silently.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = MergeReport;

    fn run(self, env: &mut Env<'_>) -> Result<MergeReport> {
        let root = require_dir("work directory", &self.work_dir)?.to_path_buf();
        let started = Instant::now();
        let progress = env.progress.clone();
        let lore = LoreProcess {
            binary: &self.lore_binary,
            args: &[],
        };
        progress.phase("merge: central repository and clones", None);
        let (a, b, orchestrator) = clones(&root)?;

        progress.phase("merge: workers keep lessons on disjoint domains", None);
        let n = self.lessons_per_worker;
        both_workers(&lore, &a, &b, |lore, dir, worker| {
            for i in 0..n {
                let problem = format!("Problem {i} of domain {worker}");
                let lesson = format!("In domain {worker}, check case {i} first.");
                let session = format!("{worker}-domain-{i}");
                let topic = format!("{worker}-topic-{i}");
                keep_lesson(lore, dir, &session, &problem, &topic, &lesson)?;
            }
            lore.json(dir, &["sync"])?;
            Ok(())
        })?;
        lore.json(&orchestrator, &["sync"])?;
        let disjoint_lessons = count_lessons(&lore, &orchestrator, None)?;
        let disjoint_conflicts = conflicts(&lore, &orchestrator)?;

        progress.phase("merge: contradictory keyed lessons", None);
        let k = self.contradictions;
        both_workers(&lore, &a, &b, |lore, dir, worker| {
            for i in 0..k {
                let session = format!("{worker}-shared-{i}");
                let topic = format!("shared-topic-{i}");
                let problem = format!("Shared problem {i}");
                keep_lesson(lore, dir, &session, &problem, &topic, &advice(worker, i))?;
            }
            Ok(())
        })?;
        for dir in [&a, &b, &orchestrator] {
            lore.json(dir, &["sync"])?;
        }
        let keyed = MergeOutcome {
            contradictions_injected: k,
            conflicts: conflicts(&lore, &orchestrator)?,
            entries_kept: count_lessons(&lore, &orchestrator, Some("shared-topic-"))?,
        };

        progress.phase("merge: concatenation control", None);
        let concatenation = concatenation(&root, k)?;

        progress.phase("merge: hashed (unkeyed) lessons", None);
        let hashed = hashed_lessons(&lore, [&a, &b, &orchestrator], k, keyed.conflicts)?;
        Ok(MergeReport {
            disjoint_lessons,
            disjoint_conflicts,
            keyed,
            concatenation,
            hashed,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// A worker's session on one problem, finished with a keyed lesson.
fn keep_lesson(
    lore: &LoreProcess<'_>,
    dir: &Path,
    session: &str,
    problem: &str,
    topic: &str,
    lesson: &str,
) -> Result<()> {
    let add = ["think", "add", problem, "--in", session, "--score", "0.9"];
    lore.json(dir, &add)?;
    let done = [
        "think", "done", "--in", session, "--topic", topic, "--lesson", lesson,
    ];
    lore.json(dir, &done)?;
    Ok(())
}

/// What worker `worker` says about shared topic `i`: the two workers disagree.
fn advice(worker: &str, i: usize) -> String {
    if worker == "a" {
        format!("For shared problem {i}, always retry before reporting.")
    } else {
        format!("For shared problem {i}, never retry; report at once.")
    }
}

/// Runs the same work in both workers at once (one thread each driving its processes).
fn both_workers(
    lore: &LoreProcess<'_>,
    a: &Path,
    b: &Path,
    work: impl Fn(&LoreProcess<'_>, &Path, &str) -> Result<()> + Sync,
) -> Result<()> {
    thread::scope(|s| {
        let first = s.spawn(|| work(lore, a, "a"));
        let second = s.spawn(|| work(lore, b, "b"));
        let joined = |h: thread::ScopedJoinHandle<'_, Result<()>>| {
            h.join().unwrap_or_else(|_| {
                Err(Error::Parse {
                    context: "merge experiment".into(),
                    message: "a worker panicked".into(),
                })
            })
        };
        joined(first)?;
        joined(second)
    })
}

fn conflicts(lore: &LoreProcess<'_>, dir: &Path) -> Result<usize> {
    let out = lore.json(dir, &["conflicts"])?;
    Ok(out["conflicts"].as_array().map_or(0, Vec::len))
}

fn lessons(lore: &LoreProcess<'_>, dir: &Path) -> Result<Vec<serde_json::Value>> {
    let out = lore.json(dir, &["list", "-n", "lessons", "--limit", "100000"])?;
    Ok(out["memories"].as_array().cloned().unwrap_or_default())
}

/// Keyed lessons (whose key starts with `prefix`, when given).
fn count_lessons(lore: &LoreProcess<'_>, dir: &Path, prefix: Option<&str>) -> Result<usize> {
    Ok(lessons(lore, dir)?
        .iter()
        .filter(|m| {
            m["key"]
                .as_str()
                .is_some_and(|k| prefix.is_none_or(|p| k.starts_with(p)))
        })
        .count())
}

fn count_tagged(lore: &LoreProcess<'_>, dir: &Path, prefix: &str) -> Result<usize> {
    Ok(lessons(lore, dir)?
        .iter()
        .filter(|m| {
            m["tags"].as_array().is_some_and(|t| {
                t.iter()
                    .any(|t| t.as_str().is_some_and(|t| t.starts_with(prefix)))
            })
        })
        .count())
}

/// The control: each worker appends its lessons to one markdown file on its branch, and git's
/// union merge concatenates them.
fn concatenation(root: &Path, k: usize) -> Result<MergeOutcome> {
    let dir = root.join("concatenation");
    std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
        context: dir.display().to_string(),
        source: e,
    })?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| Error::Io {
            context: name.to_string(),
            source: e,
        })
    };
    let commit = |message: &str| {
        git(&dir, &["add", "-A"])?;
        git(
            &dir,
            &[
                "-c",
                "user.name=lore",
                "-c",
                "user.email=lore@example.invalid",
                "commit",
                "-q",
                "-m",
                message,
            ],
        )
    };
    git(&dir, &["init", "-q", "-b", "main"])?;
    write(".gitattributes", "MEMORY.md merge=union\n")?;
    write("MEMORY.md", "# lessons\n")?;
    commit("start")?;
    for worker in ["a", "b"] {
        git(&dir, &["checkout", "-q", "-b", worker, "main"])?;
        let mut text = String::from("# lessons\n");
        for i in 0..k {
            text.push_str(&format!("- shared-topic-{i}: {}\n", advice(worker, i)));
        }
        write("MEMORY.md", &text)?;
        commit(&format!("lessons of {worker}"))?;
    }
    git(&dir, &["checkout", "-q", "a"])?;
    let merged = git(
        &dir,
        &[
            "-c",
            "user.name=lore",
            "-c",
            "user.email=lore@example.invalid",
            "merge",
            "-q",
            "--no-edit",
            "b",
        ],
    );
    let conflicts = usize::from(merged.is_err());
    let text = std::fs::read_to_string(dir.join("MEMORY.md")).map_err(|e| Error::Io {
        context: "MEMORY.md".into(),
        source: e,
    })?;
    Ok(MergeOutcome {
        contradictions_injected: k,
        conflicts,
        entries_kept: text
            .lines()
            .filter(|l| l.starts_with("- shared-topic-"))
            .count(),
    })
}

/// A central bare repository and three clones of it (two workers and an orchestrator), each
/// with its own git identity.
fn clones(root: &Path) -> Result<(PathBuf, PathBuf, PathBuf)> {
    git(root, &["init", "-q", "--bare", "-b", "main", "central.git"])?;
    let central = root.join("central.git").display().to_string();
    let clone = |name: &str| -> Result<PathBuf> {
        git(root, &["clone", "-q", &central, name])?;
        let dir = root.join(name);
        git(&dir, &["config", "user.name", name])?;
        git(
            &dir,
            &["config", "user.email", &format!("{name}@example.invalid")],
        )?;
        Ok(dir)
    };
    Ok((
        clone("worker-a")?,
        clone("worker-b")?,
        clone("orchestrator")?,
    ))
}

/// The control: both workers remember contradictory advice without a key (each under its own
/// hashed file name), then everyone syncs. Conflicts are counted past the `before` already open.
fn hashed_lessons(
    lore: &LoreProcess<'_>,
    [a, b, orchestrator]: [&Path; 3],
    k: usize,
    before: usize,
) -> Result<MergeOutcome> {
    both_workers(lore, a, b, |lore, dir, worker| {
        for i in 0..k {
            lore.json(
                dir,
                &[
                    "remember",
                    &advice(worker, i),
                    "-n",
                    "lessons",
                    "-t",
                    &format!("hashed-topic-{i}"),
                    "--force",
                ],
            )?;
        }
        lore.json(dir, &["sync"])?;
        Ok(())
    })?;
    lore.json(orchestrator, &["sync"])?;
    Ok(MergeOutcome {
        contradictions_injected: k,
        conflicts: conflicts(lore, orchestrator)?.saturating_sub(before),
        entries_kept: count_tagged(lore, orchestrator, "hashed-topic-")?,
    })
}
