//! Many agent processes writing at once lose nothing: 8 processes × 250 `lore remember`.

mod common;

use std::collections::HashSet;
use std::process::Stdio;

use common::{json, lore_command, stdout_of};
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
