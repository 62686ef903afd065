//! A `.GCC/` workspace written by contexa 1.1.2 (fixtures made by `scripts/gcc-fixture.py`,
//! committed so the tests need no Python) imported into lore and read through lore's own views:
//! every commit, purpose and observation–thought–action record is visible, with its own time.

mod common;

use std::path::PathBuf;

use common::{json, ok};
use lore_testutils::TestRepo;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gcc/contexa/.GCC")
}

#[test]
fn a_contexa_workspace_imports_with_its_commits_purposes_and_records() {
    let repo = TestRepo::new();
    ok(&repo, &["ctx", "import", &fixture().display().to_string()]);

    let overview = ok(&repo, &["ctx", "show"]);
    assert!(
        overview.contains("**batch-loads** — Try loading all authors in one query (1 commits)"),
        "{overview}"
    );
    assert!(
        overview.contains("**main** (current) — Primary reasoning trajectory (2 commits)"),
        "{overview}"
    );
    assert!(!overview.contains("imported branch"), "{overview}");

    let main = ok(&repo, &["ctx", "show", "-b", "main", "-k", "5"]);
    assert!(main.contains("Merged: batch-loads"), "{main}");
    assert!(
        main.contains("### merge 2 ·") && main.contains("### commit 1 ·"),
        "{main}"
    );
    assert!(
        main.contains("**This commit's contribution:** Found the N+1 query in the report loop."),
        "{main}"
    );
    assert!(
        main.contains("**Previous progress summary:** Initial state — no prior commits."),
        "{main}"
    );
    // Times are the workspace's, not the import's.
    let written = std::fs::read_to_string(fixture().join("branches/main/commit.md")).unwrap();
    let stamp = written
        .lines()
        .find_map(|l| l.strip_prefix("**Timestamp:** "))
        .unwrap();
    let stamp: jiff::Timestamp = stamp.parse().unwrap();
    let detail = json(&repo, &["ctx", "show", "-b", "main", "-k", "5"]);
    let entries = detail["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{detail}");
    assert_eq!(
        entries[1]["entry"]["time"]
            .as_str()
            .unwrap()
            .parse::<jiff::Timestamp>()
            .unwrap(),
        stamp
    );
    let side = ok(&repo, &["ctx", "show", "-b", "batch-loads"]);
    assert!(
        side.contains("Purpose: Try loading all authors in one query"),
        "{side}"
    );
    assert!(
        side.contains("Batched the author loads: page renders in 0.6 s."),
        "{side}"
    );

    // Every record, as structured steps with their own times; no merge header among them.
    let log = json(&repo, &["ctx", "show", "--log", "-b", "main", "-k", "50"]);
    let steps = log["steps"]
        .as_array()
        .or(log["items"].as_array())
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(steps.len(), 9, "{log}");
    let text = log.to_string();
    assert!(!text.contains("Merged from"), "{text}");
    for record in [
        "The report page takes 4 s to load",
        "That is the N+1 pattern",
        "Replace the per-row load with the batch",
    ] {
        assert!(text.contains(record), "{record}: {text}");
    }
    let log_md = std::fs::read_to_string(fixture().join("branches/main/log.md")).unwrap();
    let first: jiff::Timestamp = log_md
        .lines()
        .find_map(|l| l.strip_prefix("### Step 1 — "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        text.contains(&first.to_string()),
        "the record keeps its time: {text}"
    );

    let found = ok(
        &repo,
        &[
            "ctx",
            "recall",
            "Query log shows 300 selects per page",
            "--all-branches",
        ],
    );
    assert!(
        found.contains("[observation] Query log shows 300 selects per page"),
        "{found}"
    );

    // Exported back, commit.md is the file contexa wrote.
    let out = repo.home().join("export/.GCC");
    ok(&repo, &["ctx", "export", &out.display().to_string()]);
    assert_eq!(
        std::fs::read_to_string(out.join("branches/main/commit.md")).unwrap(),
        written
    );
    let meta = ok(
        &repo,
        &["ctx", "show", "--metadata", "status", "-b", "batch-loads"],
    );
    assert!(meta.contains("merged"), "{meta}");
}
