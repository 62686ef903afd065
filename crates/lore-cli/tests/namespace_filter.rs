//! A read filtered by a namespace that is neither built in nor registered is refused as bad
//! input (exit 2) with the suggestion `remember` makes, instead of answering "nothing matches";
//! a registered namespace, and one that only memories name, are read as before.

mod common;

use common::{json, ok, run};
use lore_testutils::TestRepo;

fn refused(repo: &TestRepo, args: &[&str]) -> String {
    let out = run(repo, args, None);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "lore {args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn reads_refuse_an_unknown_namespace_with_the_suggestion_remember_makes() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &["remember", "-n", "decisions", "Use SQLite for the index"],
    );
    let wrote = refused(&repo, &["remember", "-n", "decsions", "another"]);
    assert!(wrote.contains("did you mean \"decisions\""), "{wrote}");
    for args in [
        &["list", "-n", "decsions"][..],
        &["recall", "-n", "decsions", "sqlite"],
        &["export", "jsonl", "-n", "decsions"],
    ] {
        let stderr = refused(&repo, args);
        assert!(
            stderr.contains("unknown namespace \"decsions\" (did you mean \"decisions\"?)"),
            "lore {args:?}: {stderr}"
        );
    }
    // The same through --json: the error object, with its code.
    let out = run(&repo, &["--json", "list", "-n", "decsions"], None);
    assert_eq!(out.status.code(), Some(2));
    let error: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["error"]["code"], "unknown_namespace", "{error}");
    // A name no namespace can have is refused as one.
    refused(&repo, &["list", "-n", "../x"]);
    // Known namespaces read as before, with or without memories.
    let listed = json(&repo, &["list", "-n", "decisions"]);
    assert_eq!(listed["memories"].as_array().unwrap().len(), 1, "{listed}");
    assert!(ok(&repo, &["list", "-n", "blockers"]).contains("No memories match"));
    ok(&repo, &["namespace", "add", "experiments"]);
    assert!(ok(&repo, &["list", "-n", "experiments"]).contains("No memories match"));
    // A registered namespace close to the typo is suggested too.
    for args in [
        &["list", "-n", "experiment"][..],
        &["remember", "-n", "experiment", "Try the new allocator"],
    ] {
        let stderr = refused(&repo, args);
        assert!(stderr.contains("did you mean \"experiments\""), "{stderr}");
    }
}

#[test]
fn a_namespace_that_only_its_memories_name_is_still_read() {
    let repo = TestRepo::new();
    // Memories whose namespace has no marker (written by hand into the memory tree).
    let record = r#"{"namespace": "handmade", "summary": "Written under a namespace of its own"}"#;
    let out = run(&repo, &["import", "jsonl", "-"], Some(record.as_bytes()));
    assert!(out.status.success(), "{out:?}");
    let tip = repo.git(&["rev-parse", "refs/lore/memory"]);
    let commit = repo.commit_edited(
        tip.trim(),
        &[&["--force-remove", "handmade/.namespace.yaml"]],
        "drop the marker\n\nLore-Action: edit\n",
    );
    repo.git(&["update-ref", "refs/lore/memory", &commit]);
    let listed = json(&repo, &["list", "-n", "handmade"]);
    assert_eq!(listed["memories"].as_array().unwrap().len(), 1, "{listed}");
}
