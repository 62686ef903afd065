//! Per-clone local state under real concurrency: several OS processes (this test binary run
//! again as workers) append to and rewrite line files, queue suggestions, save session state and
//! accept suggestions at once, and open the index while another process holds it.
//!
//! A test that needs workers runs itself again, once per worker, with `LORE_TEST_WORKER` set to
//! the worker's number. Every worker says it is ready on stdout and then waits for a shared lock on a
//! gate file the test holds exclusively, so all workers start their work at the same moment.

// A test process reads its own settings (worker roles, case counts) from the environment;
// the library it tests does not.
#![allow(clippy::disallowed_methods)]

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use lore::capture::{Capture, SessionState, Signal, Source, SuggestionEdit};
use lore::linefile::LineFile;
use lore::{IndexNotice, ListFilter, Lore, NewMemory, Store, WriteContext};
use lore_testutils::TestRepo;

const WORKER: &str = "LORE_TEST_WORKER";
const SHARED_DIR: &str = "LORE_TEST_DIR";
const READY: &str = "worker ready";
const RESULT: &str = "worker result: ";

/// The worker's number when this process is a worker.
fn worker_number() -> Option<usize> {
    std::env::var(WORKER)
        .ok()
        .map(|n| n.parse().expect("worker number"))
}

/// The directory the test shares with its workers.
fn shared_dir() -> PathBuf {
    PathBuf::from(std::env::var_os(SHARED_DIR).expect("the shared directory"))
}

/// In a worker: says it is ready, then waits until the test opens the gate.
fn wait_at_gate() {
    println!("{READY}");
    let gate = File::open(shared_dir().join("gate")).expect("the gate file");
    gate.lock_shared().expect("waiting at the gate");
}

/// Runs the test named `test` as `workers` processes at once (all released together) and
/// returns what each printed once ready. Panics if a worker fails.
fn run_workers(test: &str, workers: usize, dir: &Path) -> Vec<String> {
    run_workers_with(test, workers, dir, || {})
}

/// Like [`run_workers`], running `meanwhile` once every worker is ready and before any goes on.
fn run_workers_with(
    test: &str,
    workers: usize,
    dir: &Path,
    meanwhile: impl FnOnce(),
) -> Vec<String> {
    let gate = File::create(dir.join("gate")).expect("creating the gate");
    gate.lock().expect("closing the gate");
    let exe = std::env::current_exe().expect("this test binary");
    let mut children: Vec<(Child, BufReader<std::process::ChildStdout>)> = (0..workers)
        .map(|n| {
            let mut child = Command::new(&exe)
                .args([test, "--exact", "--nocapture", "--test-threads=1"])
                .env(WORKER, n.to_string())
                .env(SHARED_DIR, dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("starting a worker");
            let stdout = BufReader::new(child.stdout.take().expect("worker stdout"));
            (child, stdout)
        })
        .collect();
    for (_, stdout) in &mut children {
        let mut line = String::new();
        loop {
            line.clear();
            let n = stdout.read_line(&mut line).expect("reading a worker");
            assert!(n > 0, "a worker ended before it was ready");
            // The test harness may have begun the line with the test's name.
            if line.trim_end().ends_with(READY) {
                break;
            }
        }
    }
    meanwhile();
    gate.unlock().expect("opening the gate");
    children
        .into_iter()
        .map(|(mut child, mut stdout)| {
            let mut rest = String::new();
            stdout.read_to_string(&mut rest).expect("reading a worker");
            let status = child.wait().expect("waiting for a worker");
            assert!(status.success(), "a worker failed: {rest}");
            rest
        })
        .collect()
}

/// What a worker printed as its results.
fn results(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|l| l.split_once(RESULT))
        .map(|(_, r)| r.to_string())
        .collect()
}

fn ctx(session: &str) -> WriteContext {
    WriteContext {
        agent: Some("test".into()),
        session: Some(session.into()),
        ..WriteContext::default()
    }
}

fn suggestion(text: &str) -> Signal {
    Signal {
        namespace: "learnings".into(),
        summary: text.into(),
        body: text.into(),
        confidence: 0.8,
        source: Source::Tag,
    }
}

fn open(path: &Path) -> Lore {
    Lore::new(Store::discover(path).expect("discover"))
}

const LINE_WORKERS: usize = 6;
const LINE_ROUNDS: usize = 40;

#[test]
fn appends_and_rewrites_from_many_processes_lose_nothing() {
    if let Some(n) = worker_number() {
        let file: LineFile<String> = LineFile::new(&shared_dir(), "items");
        wait_at_gate();
        for i in 0..LINE_ROUNDS {
            file.append(&format!("appended {n} {i}")).unwrap();
            file.rewrite(|items| {
                items.push(format!("rewritten {n} {i}"));
                Ok(())
            })
            .unwrap();
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    run_workers(
        "appends_and_rewrites_from_many_processes_lose_nothing",
        LINE_WORKERS,
        dir.path(),
    );
    let file: LineFile<String> = LineFile::new(dir.path(), "items");
    let read = file.read().unwrap();
    assert_eq!(read.damaged, 0);
    let mut items = read.items;
    items.sort();
    let mut expected: Vec<String> = (0..LINE_WORKERS)
        .flat_map(|n| {
            (0..LINE_ROUNDS)
                .flat_map(move |i| [format!("appended {n} {i}"), format!("rewritten {n} {i}")])
        })
        .collect();
    expected.sort();
    assert_eq!(items.len(), expected.len(), "updates were lost");
    assert_eq!(items, expected);
}

#[test]
fn one_suggestion_queued_by_many_processes_at_once_is_queued_once() {
    if worker_number().is_some() {
        let mut lore = open(&shared_dir().join("work"));
        lore.index().unwrap();
        let mut capture = Capture::new(&mut lore);
        wait_at_gate();
        let report = capture
            .capture(&[suggestion("The bench needs a quiet machine")], &ctx("s"))
            .unwrap();
        println!("{RESULT}queued {}", report.queued.len());
        return;
    }
    let repo = TestRepo::new();
    {
        // The index exists before the workers start, so they race on the queue alone.
        let mut lore = open(&repo.path());
        lore.remember(
            &NewMemory {
                namespace: "learnings".into(),
                summary: "an unrelated lesson".into(),
                ..NewMemory::default()
            },
            &ctx("setup"),
        )
        .unwrap();
        lore.index().unwrap();
    }
    let outputs = run_workers(
        "one_suggestion_queued_by_many_processes_at_once_is_queued_once",
        6,
        repo.path().parent().unwrap(),
    );
    let queued: usize = outputs
        .iter()
        .flat_map(|o| results(o))
        .map(|r| r.trim_start_matches("queued ").parse::<usize>().unwrap())
        .sum();
    let mut lore = open(&repo.path());
    let pending = Capture::new(&mut lore).pending().unwrap();
    assert_eq!(pending.len(), 1, "{pending:#?}");
    assert_eq!(queued, 1, "each worker reports what it queued");
}

const SESSION_WORKERS: usize = 6;
const SESSION_ROUNDS: usize = 60;

#[test]
fn session_state_saved_by_many_processes_at_once_stays_whole() {
    if let Some(n) = worker_number() {
        let mut lore = open(&shared_dir().join("work"));
        let capture = Capture::new(&mut lore);
        wait_at_gate();
        for i in 0..SESSION_ROUNDS {
            let state = SessionState {
                auto_written: n * 1000 + i,
                transcript_lines: i,
                injected: (0..50).map(|k| format!("memory-{n}-{k}")).collect(),
                ..SessionState::default()
            };
            capture.save_session_state("shared", &state).unwrap();
        }
        return;
    }
    let repo = TestRepo::new();
    run_workers(
        "session_state_saved_by_many_processes_at_once_stays_whole",
        SESSION_WORKERS,
        repo.path().parent().unwrap(),
    );
    let mut lore = open(&repo.path());
    let state = Capture::new(&mut lore).session_state("shared");
    assert_eq!(state.transcript_lines, SESSION_ROUNDS - 1, "{state:?}");
    assert_eq!(state.injected.len(), 50);
    let sessions = lore.store().common_dir().join("lore/capture/sessions");
    let names: Vec<String> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert_eq!(names, ["shared.json"], "temporary files were left behind");
}

#[test]
fn session_state_changed_by_many_processes_at_once_loses_no_change() {
    if let Some(n) = worker_number() {
        let mut lore = open(&shared_dir().join("work"));
        let capture = Capture::new(&mut lore);
        wait_at_gate();
        for i in 0..SESSION_ROUNDS {
            capture
                .update_session_state("shared", |s| {
                    s.injected.push(format!("memory-{n}-{i}"));
                    s.transcript_lines += 1;
                })
                .unwrap();
        }
        return;
    }
    let repo = TestRepo::new();
    run_workers(
        "session_state_changed_by_many_processes_at_once_loses_no_change",
        SESSION_WORKERS,
        repo.path().parent().unwrap(),
    );
    let mut lore = open(&repo.path());
    let state = Capture::new(&mut lore).session_state("shared");
    assert_eq!(state.transcript_lines, SESSION_WORKERS * SESSION_ROUNDS);
    let mut injected = state.injected;
    injected.sort();
    injected.dedup();
    assert_eq!(injected.len(), SESSION_WORKERS * SESSION_ROUNDS);
    assert!(lore.store().take_warnings().is_empty());
}

#[test]
fn an_unreadable_session_state_is_a_warning_and_capture_goes_on() {
    let repo = TestRepo::new();
    let mut lore = open(&repo.path());
    let sessions = lore.store().common_dir().join("lore/capture/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("s.json"), b"{\"auto_written\": tru").unwrap();
    let mut capture = Capture::new(&mut lore);
    assert_eq!(capture.session_state("s").auto_written, 0);
    let report = capture
        .capture(
            &[Signal {
                confidence: 0.99,
                ..suggestion("Use WAL mode for the index database")
            }],
            &ctx("s"),
        )
        .unwrap();
    assert_eq!(report.written.len(), 1);
    assert_eq!(capture.session_state("s").auto_written, 1, "saved afresh");
    let warnings = lore.store().take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("could not be read"), "{warnings:?}");
}

#[test]
fn concurrent_reviewers_accept_a_suggestion_once() {
    if worker_number().is_some() {
        let id = std::fs::read_to_string(shared_dir().join("id")).unwrap();
        let mut lore = open(&shared_dir().join("work"));
        lore.index().unwrap();
        let mut capture = Capture::new(&mut lore);
        wait_at_gate();
        match capture.accept(&id, &SuggestionEdit::default(), &ctx("r")) {
            Ok(w) => println!("{RESULT}accepted {}", w.memory.id),
            Err(lore::Error::NotFound(_)) => println!("{RESULT}not found"),
            Err(e) => panic!("accepting: {e}"),
        }
        return;
    }
    let repo = TestRepo::new();
    let id = {
        let mut lore = open(&repo.path());
        let mut capture = Capture::new(&mut lore);
        let report = capture
            .capture(&[suggestion("The bench needs a quiet machine")], &ctx("s"))
            .unwrap();
        assert_eq!(report.queued.len(), 1);
        report.queued[0].id.clone()
    };
    let dir = repo.path().parent().unwrap().to_path_buf();
    std::fs::write(dir.join("id"), &id).unwrap();
    let outputs = run_workers("concurrent_reviewers_accept_a_suggestion_once", 4, &dir);
    let mut answers: Vec<String> = outputs.iter().flat_map(|o| results(o)).collect();
    answers.sort();
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert!(answers[0].starts_with("accepted "), "{answers:?}");
    assert_eq!(answers[1..], ["not found", "not found", "not found"]);
    let mut lore = open(&repo.path());
    assert_eq!(lore.list(&ListFilter::default()).unwrap().len(), 1);
    assert!(Capture::new(&mut lore).pending().unwrap().is_empty());
}

/// The files of the index at `index` (database, WAL, shared memory).
fn index_files(index: &Path) -> Vec<PathBuf> {
    ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| PathBuf::from(format!("{}{suffix}", index.display())))
        .collect()
}

#[test]
fn an_index_rebuild_leaves_the_files_a_live_reader_holds() {
    if worker_number().is_some() {
        // The live reader: its index stays open across the other process's rebuild.
        let mut lore = open(&shared_dir().join("work"));
        let before = lore.list(&ListFilter::default()).unwrap().len();
        wait_at_gate();
        let after = lore.list(&ListFilter::default()).unwrap().len();
        println!("{RESULT}{before} {after}");
        return;
    }
    let repo = TestRepo::new();
    let index = {
        let mut lore = open(&repo.path());
        for i in 0..5 {
            lore.remember(
                &NewMemory {
                    namespace: "learnings".into(),
                    summary: format!("lesson {i} about the cache"),
                    ..NewMemory::default()
                },
                &ctx("setup"),
            )
            .unwrap();
        }
        lore.list(&ListFilter::default()).unwrap();
        lore::index::index_path(lore.store())
    };
    let dir = repo.path().parent().unwrap().to_path_buf();
    let rebuild_under_the_reader = || {
        let held = index_files(&index);
        // Each file the reader holds gets a second name: a deleted file shows as one link.
        let links: Vec<PathBuf> = held
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let link = dir.join(format!("held-{i}"));
                std::fs::hard_link(p, &link).unwrap();
                link
            })
            .collect();
        // A newer lore's schema: this lore rebuilds the index.
        {
            let conn = rusqlite::Connection::open(&index).unwrap();
            conn.pragma_update(None, "user_version", 999).unwrap();
        }
        let mut lore = open(&repo.path());
        assert_eq!(lore.list(&ListFilter::default()).unwrap().len(), 5);
        assert!(
            matches!(lore.take_notices()[..], [IndexNotice::Rebuilt { .. }]),
            "the index was rebuilt"
        );
        for (file, link) in held.iter().zip(&links) {
            use std::os::unix::fs::MetadataExt;
            let meta = std::fs::metadata(link).unwrap();
            assert_eq!(
                meta.nlink(),
                2,
                "{} was removed under the live reader",
                file.display()
            );
            assert_eq!(meta.ino(), std::fs::metadata(file).unwrap().ino());
        }
    };
    let outputs = run_workers_with(
        "an_index_rebuild_leaves_the_files_a_live_reader_holds",
        1,
        &dir,
        rebuild_under_the_reader,
    );
    assert_eq!(results(&outputs[0]), ["5 5"]);
}

#[test]
fn an_index_that_cannot_be_opened_is_reported_not_deleted() {
    let repo = TestRepo::new();
    let index = {
        let mut lore = open(&repo.path());
        lore.remember(
            &NewMemory {
                namespace: "learnings".into(),
                summary: "a lesson worth keeping indexed".into(),
                ..NewMemory::default()
            },
            &ctx("setup"),
        )
        .unwrap();
        lore.list(&ListFilter::default()).unwrap();
        lore::index::index_path(lore.store())
    };
    let before = std::fs::read(&index).unwrap();
    // The write-ahead log cannot be opened: opening fails with an I/O error, which says
    // nothing about the index's content.
    std::fs::create_dir(format!("{}-wal", index.display())).unwrap();
    let mut lore = open(&repo.path());
    let err = lore.list(&ListFilter::default()).err();
    assert!(err.is_some(), "the open error is reported");
    assert!(lore.take_notices().is_empty(), "nothing was rebuilt");
    assert_eq!(std::fs::read(&index).unwrap(), before, "the index is kept");
}
