//! Exporting a store and importing the export into the same store changes nothing, in every
//! format: each memory is reported unchanged and no commit is written.

mod common;

use common::{json, ok, run};
use lore_testutils::TestRepo;

/// A store with memories of every shape the formats must carry: keyed, superseded, tags in an
/// order of their own (spec and phase tags among them), citations, confidence, agent, a body
/// with a rule and one ending in blank lines, an empty body, no anchor and a body without a
/// final newline.
fn seeded() -> TestRepo {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "remember",
            "Keyed decision",
            "-n",
            "decisions",
            "-k",
            "topic",
            "-t",
            "phase:build,zeta,spec:auth,alpha",
            "-b",
            "body\n\n---\nwith a rule\n",
            "--cite",
            "README.md:1",
            "--confidence",
            "0.7",
            "--agent",
            "test-agent",
        ],
    );
    ok(&repo, &["supersede", "topic", "Second decision"]);
    ok(
        &repo,
        &[
            "remember",
            "Resolved blocker",
            "-n",
            "blockers",
            "--status",
            "resolved",
        ],
    );
    ok(
        &repo,
        &["remember", "Trailing blank lines", "-b", "text\n\n\n"],
    );
    let record = r#"{"namespace": "research", "summary": "Imported without an anchor", "body": "no final newline"}"#;
    let out = run(&repo, &["import", "jsonl", "-"], Some(record.as_bytes()));
    assert!(out.status.success(), "{out:?}");
    repo
}

fn tip(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "refs/lore/memory"])
}

/// Exports in `format` and imports the export back into the same store.
fn round_trip(format: &str) {
    let repo = seeded();
    let count = json(
        &repo,
        &[
            "list",
            "--limit",
            "0",
            "--status",
            "active,resolved,superseded,archived",
        ],
    )["memories"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(count, 5);
    let before = tip(&repo);
    let path = repo.path().join("exported");
    let path = path.to_str().unwrap();
    let (export, import): (Vec<&str>, Vec<&str>) = match format {
        "notes" => (vec!["export", "notes"], vec!["import", "notes"]),
        other => (vec!["export", other, path], vec!["import", other, path]),
    };
    ok(&repo, &export);
    let report = json(&repo, &import);
    assert_eq!(report["unchanged"], count, "{format}: {report}");
    assert_eq!(report["written"], 0, "{format}: {report}");
    assert_eq!(report["replaced"], 0, "{format}: {report}");
    assert_eq!(
        report["conflicts"].as_array().map_or(0, Vec::len),
        0,
        "{format}: {report}"
    );
    assert_eq!(tip(&repo), before, "{format}: the import wrote a commit");
}

#[test]
fn jsonl_round_trips_unchanged() {
    round_trip("jsonl");
}

#[test]
fn markdown_round_trips_unchanged() {
    round_trip("markdown");
}

#[test]
fn notes_round_trip_unchanged() {
    round_trip("notes");
}

/// Each memory of a JSONL export, by id, less its body.
fn without_bodies(jsonl: &str) -> Vec<(String, serde_json::Value)> {
    let mut out: Vec<(String, serde_json::Value)> = jsonl
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("body");
            (v["id"].as_str().unwrap().to_string(), v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn notes_carry_every_field_of_a_memory_to_another_store() {
    let repo = seeded();
    ok(&repo, &["export", "notes"]);
    let other = TestRepo::new();
    let from = repo.path();
    other.git(&[
        "fetch",
        "-q",
        from.to_str().unwrap(),
        "refs/notes/mem/*:refs/notes/mem/*",
    ]);
    let report = json(&other, &["import", "notes"]);
    assert_eq!(report["written"], 5, "{report}");
    let theirs = ok(&repo, &["export", "jsonl"]);
    let ours = ok(&other, &["export", "jsonl"]);
    assert_eq!(without_bodies(&ours), without_bodies(&theirs));
    let body = |jsonl: &str, summary: &str| -> serde_json::Value {
        jsonl
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|v| v["summary"] == summary)
            .unwrap()["body"]
            .clone()
    };
    for summary in ["Keyed decision", "Second decision", "Resolved blocker"] {
        assert_eq!(body(&ours, summary), body(&theirs, summary), "{summary}");
    }
    // A note frames a body as git-notes-memory does: ending in one newline.
    assert_eq!(body(&ours, "Trailing blank lines"), "text\n");
    assert_eq!(
        body(&ours, "Imported without an anchor"),
        "no final newline\n"
    );
}
