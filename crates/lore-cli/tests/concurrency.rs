//! Many agent processes writing at once lose nothing: 8 processes × 250 `lore remember`, and
//! `lore ctx log` from six processes with a `ctx commit` landing while they append. Processes
//! killed mid-write lose no acknowledged write and wedge no one, and a killed sync takes its git
//! with it.

mod common;

use std::collections::HashSet;
use std::process::Stdio;
use std::sync::Barrier;

use common::{json, lore_command, ok, stdout_of};
use lore_testutils::TestRepo;

const WRITERS: usize = 8;
const EACH: usize = 250;

#[test]
fn eight_processes_times_250_remembers_make_exactly_2000_memories() {
    let repo = TestRepo::new();
    let path = repo.path();
    let home = repo.home();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (path, home) = (path.clone(), home.clone());
            std::thread::spawn(move || {
                for i in 0..EACH {
                    let summary = format!("writer {w} memory {i}");
                    let status = lore_command(
                        &path,
                        &home,
                        &[
                            "--agent",
                            &format!("w{w}"),
                            "remember",
                            &summary,
                            "-n",
                            "progress",
                        ],
                    )
                    .stdout(Stdio::null())
                    .stderr(Stdio::inherit())
                    .status()
                    .expect("spawning lore");
                    assert!(status.success(), "writer {w} write {i} failed");
                }
            })
        })
        .collect();
    // Readers run during the writes too: the index catches up concurrently.
    let reader = {
        let (path, home) = (path.clone(), home.clone());
        std::thread::spawn(move || {
            for _ in 0..20 {
                let out = lore_command(&path, &home, &["recall", "writer memory"])
                    .output()
                    .expect("spawning lore");
                stdout_of(out, "lore recall");
            }
        })
    };
    for w in writers {
        w.join().expect("writer thread");
    }
    reader.join().expect("reader thread");

    let listed = json(&repo, &["list", "--limit", "0"])["memories"].clone();
    let summaries: HashSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["summary"].as_str().unwrap().to_string())
        .collect();
    let in_git_count = repo
        .git(&[
            "ls-tree",
            "-r",
            "--name-only",
            "refs/lore/memory",
            "progress/",
        ])
        .lines()
        .count();
    assert_eq!(
        (summaries.len(), in_git_count),
        (WRITERS * EACH, WRITERS * EACH),
        "(index, git)"
    );
    for w in 0..WRITERS {
        for i in 0..EACH {
            assert!(summaries.contains(&format!("writer {w} memory {i}")));
        }
    }
    let in_git = repo.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        "refs/lore/memory",
        "progress/",
    ]);
    assert_eq!(
        in_git.lines().count(),
        WRITERS * EACH,
        "git and the index agree"
    );
    let status = json(&repo, &["status"]);
    assert_eq!(status["total"], WRITERS * EACH);
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/lore/memory"])
            .trim(),
        (WRITERS * EACH).to_string(),
        "one commit per write"
    );
    // A rebuild from scratch agrees with the incrementally maintained index.
    json(&repo, &["reindex"]);
    assert_eq!(json(&repo, &["status"])["total"], WRITERS * EACH);
    repo.git(&["fsck", "--strict"]);
}

const LOGGERS: usize = 6;
const STEPS: usize = 16;

fn step_text(writer: usize, step: usize) -> String {
    format!("writer {writer} step {step} {}", "x".repeat(3000))
}

#[test]
fn a_commit_among_concurrent_logs_from_many_processes_loses_and_repeats_no_step() {
    let repo = TestRepo::new();
    ok(&repo, &["ctx", "init", "--goal", "stress the journal"]);
    // Every writer logs half its steps, then all wait here with the commit: the commit starts
    // with at least half the steps in the journal while the writers append the rest.
    let halfway = Barrier::new(LOGGERS + 1);
    let committed = std::thread::scope(|scope| {
        for w in 0..LOGGERS {
            let (repo, halfway) = (&repo, &halfway);
            scope.spawn(move || {
                for s in 0..STEPS {
                    if s == STEPS / 2 {
                        halfway.wait();
                    }
                    ok(
                        repo,
                        &["ctx", "log", &step_text(w, s), "--entity", &format!("w{w}")],
                    );
                }
            });
        }
        halfway.wait();
        json(&repo, &["ctx", "commit", "halfway"])
    });
    let in_commit = committed["entry"]["steps"].as_u64().unwrap() as usize;
    assert!(
        (LOGGERS * STEPS / 2..=LOGGERS * STEPS).contains(&in_commit),
        "the commit took {in_commit} steps"
    );
    let status = json(&repo, &["ctx", "status"]);
    assert_eq!(status["damaged"], 0);
    assert_eq!(
        status["uncommitted"].as_array().unwrap().len(),
        LOGGERS * STEPS - in_commit,
        "steps logged after the commit wait in the journal"
    );
    let log = json(&repo, &["ctx", "show", "--log", "-k", "1000"]);
    let steps = log["steps"].as_array().unwrap();
    assert_eq!(steps.len(), LOGGERS * STEPS);
    let texts: HashSet<String> = steps
        .iter()
        .map(|s| s[1]["step"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts.len(), LOGGERS * STEPS, "a step was duplicated");
    for w in 0..LOGGERS {
        for s in 0..STEPS {
            assert!(texts.contains(&step_text(w, s)), "lost writer {w} step {s}");
        }
    }
}

/// One storm: `WRITERS_KILLED` writers × `EACH_KILLED` `lore remember`, `KILLS` of the processes
/// in flight killed with SIGKILL at random moments (seeded). Returns the summaries whose write
/// was acknowledged (exit 0) and how many kills landed.
fn kill_storm(repo: &TestRepo, seed: u64) -> (Vec<String>, usize) {
    use std::sync::{Arc, Mutex};
    const WRITERS_KILLED: usize = 4;
    const EACH_KILLED: usize = 100;
    const KILLS: usize = 45;
    let in_flight: Arc<Mutex<Vec<std::process::Child>>> = Arc::default();
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS_KILLED)
        .map(|w| {
            let (path, home) = (repo.path(), repo.home());
            let (in_flight, done) = (in_flight.clone(), done.clone());
            std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                for i in 0..EACH_KILLED {
                    let summary = format!("storm {seed} writer {w} memory {i}");
                    let child =
                        lore_command(&path, &home, &["remember", &summary, "-n", "progress"])
                            .stdout(Stdio::null())
                            .stderr(Stdio::null())
                            .spawn()
                            .expect("spawning lore");
                    let pid = child.id();
                    in_flight.lock().unwrap().push(child);
                    // Polled under the lock, so the killer never signals a reaped process.
                    let status = loop {
                        {
                            let mut all = in_flight.lock().unwrap();
                            let at = all.iter().position(|c| c.id() == pid).unwrap();
                            if all[at].try_wait().unwrap().is_some() {
                                // Reaped already: `wait` returns the status it kept.
                                break all.remove(at).wait().unwrap();
                            }
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    };
                    if status.success() {
                        acknowledged.push(summary);
                    }
                }
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                acknowledged
            })
        })
        .collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut kills = 0;
    while kills < KILLS && done.load(std::sync::atomic::Ordering::SeqCst) < WRITERS_KILLED {
        std::thread::sleep(std::time::Duration::from_millis(2 + rng.u64(0..25)));
        let mut all = in_flight.lock().unwrap();
        if all.is_empty() {
            continue;
        }
        let at = rng.usize(0..all.len());
        if all[at].try_wait().unwrap().is_none() && all[at].kill().is_ok() {
            kills += 1;
        }
    }
    let acknowledged = writers
        .into_iter()
        .flat_map(|w| w.join().expect("a writer panicked"))
        .collect();
    (acknowledged, kills)
}

#[test]
fn writers_killed_mid_write_lose_no_acknowledged_write_and_wedge_no_one() {
    for seed in [1u64, 2, 3] {
        let repo = TestRepo::new();
        ok(&repo, &["init"]);
        let (acknowledged, kills) = kill_storm(&repo, seed);
        assert!(kills >= 40, "seed {seed}: only {kills} kills landed");
        let listed = json(&repo, &["list", "--limit", "0", "-n", "progress"]);
        let stored: HashSet<&str> = listed["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["summary"].as_str().unwrap())
            .collect();
        let lost: Vec<&String> = acknowledged
            .iter()
            .filter(|s| !stored.contains(s.as_str()))
            .collect();
        assert!(
            lost.is_empty(),
            "seed {seed}: acknowledged and lost: {lost:?}"
        );
        assert!(
            repo.git_command(&["fsck", "--no-dangling"])
                .status()
                .unwrap()
                .success(),
            "seed {seed}: git fsck"
        );
        // The next write goes through on its own, whatever lock a killed writer left.
        ok(&repo, &["remember", "after the storm", "-n", "progress"]);
        assert!(!repo.path().join(".git/refs/lore/memory.lock").exists());
    }
}

/// The processes whose command line holds `needle` (read from /proc).
fn processes_holding(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(needle)
        {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_killed_sync_takes_its_git_with_it() {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "something to push"]);
    // A remote over ssh whose "ssh" hangs: git waits on it, under lore.
    repo.git(&["remote", "add", "origin", "ssh://lore.invalid/repo.git"]);
    repo.git(&["config", "core.sshCommand", "sleep 30 #"]);
    let mut lore = lore_command(&repo.path(), &repo.home(), &["sync"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let git_dir = repo.path().join(".git").display().to_string();
    let needle = format!("--git-dir\0{git_dir}");
    let started = std::time::Instant::now();
    // Until git itself runs: `setpriv` (which sets the parent-death signal, then becomes git)
    // holds the same arguments, and lore killed before it set the signal would leave git alive.
    let is_git = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "git")
    };
    loop {
        let found = processes_holding(&needle);
        if !found.is_empty() && found.iter().all(is_git) {
            break;
        }
        assert!(started.elapsed().as_secs() < 20, "git never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    lore.kill().unwrap();
    lore.wait().unwrap();
    let killed = std::time::Instant::now();
    while !processes_holding(&needle).is_empty() {
        assert!(
            killed.elapsed().as_secs() < 10,
            "git outlived the killed lore: {:?}",
            processes_holding(&needle)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
