//! Snapshots of the CLI's JSON and text output (ids, times, commits and paths redacted).

mod common;

use common::{json, ok, redact, redact_word};
use insta::{assert_json_snapshot, assert_snapshot};
use lore_testutils::TestRepo;

fn ids_in_text(
    value: insta::internals::Content,
    _: insta::internals::ContentPath<'_>,
) -> insta::internals::Content {
    match value.as_str() {
        Some(text) => text
            .split(' ')
            .map(redact_word)
            .collect::<Vec<_>>()
            .join(" ")
            .into(),
        None => value,
    }
}

fn id_if_present(
    value: insta::internals::Content,
    _: insta::internals::ContentPath<'_>,
) -> insta::internals::Content {
    if value.as_str().is_some() {
        "[id]".into()
    } else {
        value
    }
}

macro_rules! json_snapshot {
    ($value:expr) => {
        assert_json_snapshot!($value, {
            ".**.id" => "[id]",
            ".**.created" => "[time]",
            ".**.updated" => "[time]",
            ".**.time" => "[time]",
            ".**.commit" => "[commit]",
            ".**.anchor" => "[commit]",
            ".**.blob" => "[blob]",
            ".**.path" => insta::dynamic_redaction(|value, _| {
                // Fan-out paths contain the id; keyed paths are stable.
                let p = value.as_str().unwrap_or_default().to_string();
                if p.matches('/').count() == 3 { "[id path]".into() } else { value }
            }),
            ".**.supersedes" => insta::dynamic_redaction(id_if_present),
            ".**.superseded_by" => insta::dynamic_redaction(id_if_present),
            ".**.score" => insta::rounded_redaction(2),
            ".**.subject" => insta::dynamic_redaction(ids_in_text),
        })
    };
}

fn seeded() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "src/index.rs",
        "fn open() {}\nfn catch_up() {}\nfn rebuild() {}\n",
    );
    repo.git(&["add", "."]);
    repo.git(&["commit", "-q", "-m", "add index"]);
    ok(
        &repo,
        &[
            "--agent",
            "claude-code",
            "--session",
            "s-42",
            "remember",
            "Use SQLite with FTS5 for recall",
            "-n",
            "decisions",
            "-k",
            "index-engine",
            "-t",
            "db,search",
            "--cite",
            "src/index.rs:2-3",
            "--confidence",
            "0.9",
            "--body",
            "Embedded, no server; BM25 built in.",
        ],
    );
    ok(
        &repo,
        &[
            "remember",
            "Retries without jitter stampede the API",
            "-t",
            "perf",
        ],
    );
    ok(
        &repo,
        &[
            "remember",
            "The staging deploy is blocked on credentials",
            "-n",
            "blockers",
        ],
    );
    repo
}

#[test]
fn remember_json() {
    let repo = TestRepo::new();
    let v = json(
        &repo,
        &[
            "--agent",
            "codex",
            "remember",
            "Cache the parsed config",
            "-t",
            "Perf, config",
            "-b",
            "It is read on every request.",
        ],
    );
    json_snapshot!(v);
}

#[test]
fn show_json_at_each_level() {
    let repo = seeded();
    json_snapshot!(json(&repo, &["show", "index-engine", "--level", "summary"]));
    json_snapshot!(json(&repo, &["show", "decisions/index-engine"]));
    json_snapshot!(json(&repo, &["show", "index-engine", "--level", "files"]));
}

#[test]
fn list_and_recall_text() {
    let repo = seeded();
    assert_snapshot!(redact(&ok(&repo, &["list", "--sort", "namespace"]), &repo));
    assert_snapshot!(redact(
        &ok(&repo, &["list", "-n", "decisions", "-t", "db"]),
        &repo
    ));
    assert_snapshot!(redact(&ok(&repo, &["recall", "why", "sqlite?"]), &repo));
    assert_snapshot!(redact(&ok(&repo, &["show", "index-engine"]), &repo));
}

#[test]
fn recall_json_with_filters() {
    let repo = seeded();
    json_snapshot!(json(&repo, &["recall", "API jitter deploy", "--limit", "5"])["hits"]);
    json_snapshot!(json(&repo, &["recall", "API jitter deploy", "-n", "blockers"])["hits"]);
}

#[test]
fn status_json_and_text() {
    let repo = seeded();
    let mut v = json(&repo, &["status"]);
    for field in ["git_dir", "workdir", "project", "tip"] {
        v[field] = serde_json::Value::String(format!("[{field}]"));
    }
    v["index"]["path"] = "[index path]".into();
    // Sizes on disk change from run to run: their presence is what is checked.
    for field in ["derived_bytes", "packed_bytes", "loose_objects"] {
        assert!(v["disk"][field].is_u64(), "disk.{field}: {}", v["disk"]);
    }
    assert!(
        v["disk"]["derived_bytes"].as_u64() > Some(0),
        "the index takes room"
    );
    v["disk"] = "[disk]".into();
    json_snapshot!(v);
    assert_snapshot!(
        redact(&ok(&repo, &["status"]), &repo)
            .lines()
            .filter(|l| !l.starts_with("store:")
                && !l.starts_with("index:")
                && !l.starts_with("project:")
                && !l.starts_with("disk:"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn update_supersede_forget_and_history() {
    let repo = seeded();
    let upd = json(
        &repo,
        &[
            "update",
            "index-engine",
            "--status",
            "resolved",
            "--untag",
            "search",
            "-t",
            "storage",
        ],
    );
    json_snapshot!(upd);
    let sup = json(
        &repo,
        &[
            "supersede",
            "index-engine",
            "Use SQLite with WAL for recall",
        ],
    );
    json_snapshot!(sup);
    let old_id = sup["old"]["memory"]["id"].as_str().unwrap().to_string();
    let hist = json(&repo, &["history", &old_id]);
    json_snapshot!(hist);
    let gone = json(&repo, &["forget", "index-engine"]);
    assert_eq!(gone["memory"]["summary"], "Use SQLite with WAL for recall");
    let listed = json(&repo, &["list", "-n", "decisions"])["memories"].clone();
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "only the superseded one is left"
    );
}

#[test]
fn namespaces_text() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "namespace",
            "add",
            "runbooks",
            "-d",
            "how to operate things",
        ],
    );
    assert_snapshot!(ok(&repo, &["namespace", "list"]));
}
