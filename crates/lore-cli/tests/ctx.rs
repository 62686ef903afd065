//! The context controller through the real binary: every CONTEXT view (snapshots), concurrent
//! `ctx log` from many processes, merges with and without conflicts, `.GCC/` round trips and
//! trajectory recall.

mod common;

use std::path::Path;

use common::{json, ok, redact, run};
use insta::assert_snapshot;
use lore_testutils::TestRepo;

/// A workspace with two branches, committed and uncommitted steps, metadata and a merge.
fn workspace() -> TestRepo {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "ctx",
            "init",
            "--goal",
            "Make checkout fast",
            "--todo",
            "profile the cart",
            "--todo",
            "fix the N+1 query",
        ],
    );
    ok(
        &repo,
        &[
            "ctx",
            "log",
            "cart page takes 3s",
            "--kind",
            "observation",
            "--tool",
            "curl",
            "--args",
            "localhost:8080/cart",
            "--result",
            "3.1s",
            "--entity",
            "cart",
            "--subgoal",
            "profile the cart",
        ],
    );
    ok(
        &repo,
        &[
            "ctx",
            "log",
            "the ORM issues one query per item",
            "--kind",
            "thought",
            "--entity",
            "cart",
            "--entity",
            "orm",
        ],
    );
    ok(&repo, &["ctx", "commit", "Found the N+1 query in the cart"]);
    ok(
        &repo,
        &[
            "ctx",
            "branch",
            "fix-n1",
            "--purpose",
            "Batch the cart queries",
        ],
    );
    ok(
        &repo,
        &[
            "ctx",
            "log",
            "rewrote the loader with a join",
            "--kind",
            "action",
            "--tool",
            "edit",
            "--file",
            "src/cart.rs",
            "--entity",
            "cart",
        ],
    );
    ok(
        &repo,
        &["ctx", "metadata", "set", "dependencies", "[sqlx, axum]"],
    );
    ok(
        &repo,
        &[
            "ctx",
            "commit",
            "Batched the cart loader",
            "--summary",
            "The cart loads with one query.",
        ],
    );
    ok(&repo, &["ctx", "switch", "main"]);
    ok(&repo, &["ctx", "merge", "fix-n1"]);
    ok(
        &repo,
        &[
            "ctx",
            "log",
            "checkout p95 is 180 ms now",
            "--kind",
            "observation",
        ],
    );
    repo
}

#[test]
fn every_context_view_renders_as_expected() {
    let repo = workspace();
    let view = |args: &[&str]| redact(&ok(&repo, args), &repo);
    assert_snapshot!("ctx_overview", view(&["ctx", "show"]));
    assert_snapshot!(
        "ctx_branch_window",
        view(&["ctx", "show", "--branch", "main", "-k", "2"])
    );
    assert_snapshot!(
        "ctx_branch_scrolled",
        view(&["ctx", "show", "--branch", "main", "--offset", "2"])
    );
    assert_snapshot!("ctx_log", view(&["ctx", "show", "--log", "-k", "3"]));
    assert_snapshot!(
        "ctx_metadata",
        view(&[
            "ctx",
            "show",
            "--metadata",
            "dependencies",
            "--branch",
            "fix-n1"
        ])
    );
    assert_snapshot!("ctx_status", view(&["ctx", "status"]));
    let tip = repo.git(&["rev-parse", "refs/lore/ctx/main"]);
    assert_snapshot!("ctx_commit", view(&["ctx", "show", "--commit", tip.trim()]));
}

#[test]
fn commits_are_git_commits_recording_the_code_head() {
    let repo = workspace();
    let head = repo.git(&["rev-parse", "HEAD"]);
    let message = repo.git(&["log", "-1", "--format=%B", "refs/lore/ctx/main"]);
    assert!(
        message.contains(&format!("Lore-Code-Head: {}", head.trim())),
        "{message}"
    );
    // The merge has two parents: main's previous tip and fix-n1's tip.
    let parents = repo.git(&["rev-list", "--parents", "-n", "1", "refs/lore/ctx/main"]);
    assert_eq!(parents.split_whitespace().count(), 3, "{parents}");
    let fix = repo.git(&["rev-parse", "refs/lore/ctx/fix-n1"]);
    assert!(parents.contains(fix.trim()));
    // Stock git reads the workspace.
    let roadmap = repo.git(&["show", "refs/lore/ctx/main:main.md"]);
    assert!(roadmap.contains("- [ ] profile the cart"));
    let commit_md = repo.git(&["show", "refs/lore/ctx/main:commit.md"]);
    for block in [
        "### Branch purpose",
        "### Previous progress summary",
        "### This commit's contribution",
    ] {
        assert!(commit_md.contains(block), "{commit_md}");
    }
    // Merged steps carry their origin.
    let log = json(&repo, &["ctx", "show", "--log"]);
    let origins: Vec<&str> = log["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s[1]["step"]["origin"].as_str())
        .collect();
    assert_eq!(origins, ["fix-n1"]);
    // The user's branches, index and work tree are untouched.
    assert_eq!(repo.git(&["status", "--porcelain"]).trim(), "");
}

#[test]
fn uncommitted_steps_show_in_status_and_join_the_next_commit() {
    let repo = workspace();
    let status = json(&repo, &["ctx", "status"]);
    assert_eq!(status["uncommitted"].as_array().unwrap().len(), 1);
    let out = json(&repo, &["ctx", "commit", "Measured the fix"]);
    assert_eq!(out["entry"]["steps"], 1);
    // Composed summary: previous summary plus the contribution, bounded.
    let summary = out["entry"]["summary"].as_str().unwrap();
    assert!(summary.ends_with("Measured the fix"), "{summary}");
    assert!(summary.chars().count() <= 600);
    let status = json(&repo, &["ctx", "status"]);
    assert!(status["uncommitted"].as_array().unwrap().is_empty());
    assert_eq!(status["committed_steps"], 4);
}

#[test]
fn merges_surface_conflicting_roadmap_edits() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &["ctx", "init", "--goal", "Ship v2", "--todo", "write docs"],
    );
    ok(&repo, &["ctx", "branch", "a", "--purpose", "docs"]);
    ok(
        &repo,
        &[
            "ctx",
            "update",
            "-m",
            "a's roadmap",
            "# Roadmap\n\n- [x] write docs (a)\n",
        ],
    );
    ok(&repo, &["ctx", "switch", "main"]);
    ok(&repo, &["ctx", "branch", "b", "--purpose", "more docs"]);
    ok(
        &repo,
        &[
            "ctx",
            "update",
            "-m",
            "b's roadmap",
            "# Roadmap\n\n- [ ] write docs (b)\n",
        ],
    );
    let before = repo.git(&["rev-parse", "refs/lore/ctx/b"]);
    let out = run(&repo, &["ctx", "merge", "a"], None);
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("main.md"), "{stderr}");
    assert!(stderr.contains("write docs (a)") && stderr.contains("write docs (b)"));
    assert!(stderr.contains("--prefer"), "{stderr}");
    // Nothing was written.
    assert_eq!(repo.git(&["rev-parse", "refs/lore/ctx/b"]), before);
    // The merged branch's context was shown first.
    assert!(String::from_utf8_lossy(&out.stdout).contains("# Branch a"));
    // Settled explicitly: the merge goes through and says how.
    let merged = json(&repo, &["ctx", "merge", "a", "--prefer", "theirs"]);
    assert!(
        merged["merge"]["resolved"][0]
            .as_str()
            .unwrap()
            .contains("main.md")
    );
    assert!(ok(&repo, &["ctx", "read"]).contains("write docs (a)"));
    // Merging again has nothing to do.
    assert!(ok(&repo, &["ctx", "merge", "a"]).contains("already merged"));
}

#[test]
fn merges_without_conflicts_combine_roadmap_and_metadata() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "ctx",
            "init",
            "--goal",
            "Ship v2",
            "--todo",
            "one",
            "--todo",
            "keep",
            "--todo",
            "also keep",
            "--todo",
            "two",
        ],
    );
    ok(&repo, &["ctx", "branch", "a", "--purpose", "first"]);
    let roadmap = ok(&repo, &["ctx", "read"]).replace("- [ ] one", "- [x] one");
    ok(&repo, &["ctx", "update", "-m", "one done", &roadmap]);
    ok(
        &repo,
        &["ctx", "metadata", "set", "interfaces", "{http: 8080}"],
    );
    ok(&repo, &["ctx", "switch", "main"]);
    let roadmap = ok(&repo, &["ctx", "read"]).replace("- [ ] two", "- [x] two");
    ok(&repo, &["ctx", "update", "-m", "two done", &roadmap]);
    ok(
        &repo,
        &[
            "ctx",
            "metadata",
            "set",
            "env_config",
            "RUST_LOG=debug",
            "--text",
        ],
    );
    ok(&repo, &["ctx", "merge", "a"]);
    let merged = ok(&repo, &["ctx", "read"]);
    assert!(
        merged.contains("- [x] one") && merged.contains("- [x] two"),
        "{merged}"
    );
    let meta = json(&repo, &["ctx", "metadata", "get"]);
    assert!(meta["yaml"].as_str().unwrap().contains("http: 8080"));
    assert!(
        meta["yaml"]
            .as_str()
            .unwrap()
            .contains("env_config: RUST_LOG=debug")
    );
    // Conflicting metadata segments are surfaced too.
    ok(&repo, &["ctx", "branch", "c", "--purpose", "ports"]);
    ok(
        &repo,
        &["ctx", "metadata", "set", "interfaces", "{http: 9090}"],
    );
    ok(&repo, &["ctx", "switch", "main"]);
    ok(
        &repo,
        &["ctx", "metadata", "set", "interfaces", "{http: 7070}"],
    );
    let out = run(&repo, &["ctx", "merge", "c"], None);
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("segment interfaces"));
}

/// Every file under `dir`: its path relative to `dir`, and its text; sorted.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = lore_testutils::files(dir)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn export_then_import_round_trips() {
    let repo = workspace();
    ok(&repo, &["ctx", "commit", "Measured the fix"]);
    let first = repo.path().join("out1/.GCC");
    ok(&repo, &["ctx", "export", first.to_str().unwrap()]);
    let names: Vec<String> = files_under(&first).into_iter().map(|(n, _)| n).collect();
    for expected in [
        "main.md",
        "branches/main/commit.md",
        "branches/main/log.md",
        "branches/main/metadata.yaml",
        "branches/fix-n1/log.md",
    ] {
        assert!(names.contains(&expected.to_string()), "{names:?}");
    }
    let other = TestRepo::new();
    ok(&other, &["ctx", "import", first.to_str().unwrap()]);
    let second = other.path().join("out2/.GCC");
    ok(&other, &["ctx", "export", second.to_str().unwrap()]);
    let (a, b) = (files_under(&first), files_under(&second));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "{} differs after the round trip", x.0);
    }
    // Importing over existing branches needs --force.
    let again = run(&other, &["ctx", "import", first.to_str().unwrap()], None);
    assert_eq!(again.status.code(), Some(4));
    ok(
        &other,
        &["ctx", "import", "--force", first.to_str().unwrap()],
    );
}

#[test]
fn a_gcc_directory_from_another_tool_imports() {
    let repo = TestRepo::new();
    let dir = repo.path().join("foreign");
    std::fs::create_dir_all(dir.join("branches/main")).unwrap();
    std::fs::write(dir.join("main.md"), "# Goals\n- build it\n").unwrap();
    std::fs::write(
        dir.join("branches/main/commit.md"),
        "## Commit 1\n### Branch Purpose\nBuild it\n### Previous Progress Summary\nnothing\n### This Commit's Contribution\nWrote the parser\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("branches/main/log.md"),
        "# Log\n\n## Step\nread the spec\n\n## Step\nwrote parser.rs\n",
    )
    .unwrap();
    ok(&repo, &["ctx", "import", dir.to_str().unwrap()]);
    let status = json(&repo, &["ctx", "status"]);
    assert_eq!(status["meta"]["purpose"], "Build it");
    assert_eq!(status["meta"]["summary"], "Wrote the parser");
    assert_eq!(status["committed_steps"], 2);
    assert!(ok(&repo, &["ctx", "read"]).contains("build it"));
}

#[test]
fn the_blog_tools_read_update_list_and_snapshot() {
    let repo = TestRepo::new();
    ok(&repo, &["ctx", "init", "--goal", "v1"]);
    ok(
        &repo,
        &["ctx", "update-context", "-m", "second", "v2 notes"],
    );
    ok(&repo, &["ctx", "update", "-m", "third", "v3 notes"]);
    let unchanged = json(&repo, &["ctx", "update", "-m", "same", "v3 notes"]);
    assert!(unchanged["commit"].is_null());
    let history = json(&repo, &["ctx", "get-context-history"]);
    let versions = history["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 3);
    assert_eq!(ok(&repo, &["ctx", "get-snapshot", "2"]), "v2 notes\n");
    let commit = versions[2]["commit"].as_str().unwrap();
    assert_eq!(ok(&repo, &["ctx", "snapshot", &commit[..10]]), "v3 notes\n");
    assert_eq!(ok(&repo, &["ctx", "read-context"]), "v3 notes\n");
    let missing = run(&repo, &["ctx", "snapshot", "9"], None);
    assert_eq!(missing.status.code(), Some(3));
}

#[test]
fn trajectory_recall_finds_steps_within_the_budget() {
    let repo = workspace();
    for strategy in ["auto", "osu", "flat", "recency", "disjoint", "tree"] {
        let got = json(
            &repo,
            &[
                "ctx",
                "recall",
                "slow cart query",
                "--budget",
                "40",
                "--strategy",
                strategy,
            ],
        );
        assert!(got["tokens"].as_u64().unwrap() <= 40, "{strategy}: {got}");
        assert!(!got["steps"].as_array().unwrap().is_empty(), "{strategy}");
    }
    // Uncommitted steps are searched, and --all-branches reaches other branches' steps.
    let got = json(
        &repo,
        &["ctx", "recall", "checkout p95", "--strategy", "flat"],
    );
    assert!(got["steps"][0]["line"].as_str().unwrap().contains("180 ms"));
    ok(&repo, &["ctx", "switch", "fix-n1"]);
    let own = json(
        &repo,
        &["ctx", "recall", "ORM query per item", "--strategy", "flat"],
    );
    let all = json(
        &repo,
        &[
            "ctx",
            "recall",
            "ORM query per item",
            "--strategy",
            "flat",
            "--all-branches",
        ],
    );
    let has_orm = |v: &serde_json::Value| {
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["line"].as_str().unwrap().contains("ORM"))
    };
    assert!(!has_orm(&own));
    assert!(has_orm(&all));
}

#[test]
fn bad_ctx_input_gets_clear_errors() {
    let repo = TestRepo::new();
    let none = run(&repo, &["ctx", "show"], None);
    assert_eq!(none.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&none.stderr).contains("lore ctx init"));
    ok(&repo, &["ctx", "init", "--goal", "g"]);
    for (args, code) in [
        (vec!["ctx", "init", "--goal", "again"], 4),
        (vec!["ctx", "branch", "a/b", "--purpose", "p"], 2),
        (vec!["ctx", "branch", "x", "--purpose", " "], 2),
        (vec!["ctx", "switch", "nope"], 3),
        (vec!["ctx", "log"], 2),
        (vec!["ctx", "log", "x", "--kind", "dance"], 2),
        (vec!["ctx", "commit", " "], 2),
        (vec!["ctx", "merge", "main"], 2),
        (vec!["ctx", "recall", "q", "--strategy", "magic"], 2),
        (vec!["ctx", "metadata", "set", "a b", "1"], 2),
        (vec!["ctx", "metadata", "set", "seg", "{unclosed"], 2),
        (vec!["ctx", "show", "--metadata", "missing"], 3),
        (vec!["ctx", "show", "--commit", "deadbeef"], 3),
    ] {
        let out = run(&repo, &args, None);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    }
}
