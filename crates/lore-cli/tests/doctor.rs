//! `lore doctor` puts a lost `refs/lore/memory` back at the newest memory commit this clone
//! still holds: commits written after the index last caught up included, found in the ref's
//! reflog or the object database, never a purged memory, and every other head named.

mod common;

use common::{json, ok};
use lore_testutils::TestRepo;
use serde_json::Value;

fn summaries(repo: &TestRepo) -> Vec<String> {
    let listed = json(repo, &["list", "--limit", "0"]);
    let mut out: Vec<String> = listed["memories"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|m| m["summary"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

fn tip(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "refs/lore/memory"])
        .trim()
        .to_string()
}

/// The restore point `doctor --restore` takes.
fn first_point(found: &Value) -> &Value {
    &found["restore_points"][0]
}

/// Writes three memories with no read in between (writes leave the index where the first one
/// built it); returns the commit the ref is then at.
fn write_three(repo: &TestRepo) -> String {
    for s in [
        "first memory alpha",
        "second memory beta",
        "third memory gamma",
    ] {
        ok(repo, &["remember", s]);
    }
    tip(repo)
}

/// A store with three memories written with no read in between, then its memory ref deleted;
/// and the commit the ref was at.
fn three_written_then_lost() -> (TestRepo, String) {
    let repo = TestRepo::new();
    let newest = write_three(&repo);
    repo.git(&["update-ref", "-d", "refs/lore/memory"]);
    (repo, newest)
}

#[test]
fn memories_written_after_the_index_last_caught_up_come_back() {
    let (repo, newest) = three_written_then_lost();

    // Without --restore: what it would restore, and how it was found.
    let found = json(&repo, &["doctor"]);
    assert_eq!(found["state"], "missing", "{found}");
    assert_eq!(first_point(&found)["commit"], newest.as_str(), "{found}");
    assert_eq!(first_point(&found)["memories"], 3, "{found}");
    assert!(found.get("restored").is_none(), "{found}");
    let text = ok(&repo, &["doctor"]);
    assert!(text.contains("object database"), "{text}");
    assert!(text.contains(&newest[..12]), "{text}");

    let fixed = json(&repo, &["doctor", "--restore"]);
    assert_eq!(fixed["restored"], newest.as_str(), "{fixed}");
    assert_eq!(tip(&repo), newest);
    assert_eq!(
        summaries(&repo),
        [
            "first memory alpha",
            "second memory beta",
            "third memory gamma"
        ]
    );
    repo.git(&["fsck", "--strict"]);
}

#[test]
fn a_read_after_the_loss_keeps_the_index_commit_and_the_newer_writes_still_come_back() {
    let (repo, newest) = three_written_then_lost();
    // The read keeps the index's commit under refs/lore-lost/memory and empties the index.
    assert!(summaries(&repo).is_empty());
    let found = json(&repo, &["doctor"]);
    assert_eq!(first_point(&found)["commit"], newest.as_str(), "{found}");
    assert_eq!(first_point(&found)["source"], "object database", "{found}");
    let kept = repo.git(&["rev-parse", "refs/lore-lost/memory"]);
    assert_eq!(first_point(&found)["descends_from"], kept.trim(), "{found}");
    ok(&repo, &["doctor", "--restore"]);
    assert_eq!(summaries(&repo).len(), 3);
}

/// A memory commit on `parent` whose tree is `parent`'s with `path` as it is at `from`: a
/// write made on `parent` that never reached the ref.
fn write_on(repo: &TestRepo, parent: &str, path: &str, from: &str, subject: &str) -> String {
    let blob = repo.git(&["rev-parse", &format!("{from}:{path}")]);
    let entry = format!("100644,{},{path}", blob.trim());
    let message = format!("{subject}\n\nLore-Action: remember\n");
    repo.commit_edited(parent, &[&["--add", "--cacheinfo", &entry]], &message)
}

#[test]
fn of_two_lines_of_writes_the_one_with_more_memories_comes_back_and_the_other_is_named() {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "shared memory alpha"]);
    assert_eq!(summaries(&repo).len(), 1); // the index catches up here
    let base = tip(&repo);
    ok(&repo, &["remember", "side line memory beta"]);
    let side = tip(&repo);
    // The ref is moved back by hand and two more writes go on from there.
    repo.git(&["update-ref", "refs/lore/memory", &base]);
    ok(&repo, &["remember", "main line memory gamma"]);
    ok(&repo, &["remember", "main line memory delta"]);
    let main = tip(&repo);
    repo.git(&["update-ref", "-d", "refs/lore/memory"]);

    let found = json(&repo, &["doctor"]);
    assert_eq!(first_point(&found)["commit"], main.as_str(), "{found}");
    assert_eq!(first_point(&found)["memories"], 3, "{found}");
    let others = found["other_heads"].as_array().unwrap();
    assert_eq!(others.len(), 1, "{found}");
    assert_eq!(others[0]["commit"], side.as_str(), "{found}");
    assert_eq!(others[0]["memories"], 2, "{found}");
    assert_eq!(others[0]["not_in_restore_point"], 1, "{found}");
    let text = ok(&repo, &["doctor", "--restore"]);
    assert!(text.contains(&side), "the other line is named: {text}");
    assert!(text.contains("1 other line of writes"), "{text}");
    assert_eq!(
        summaries(&repo),
        [
            "main line memory delta",
            "main line memory gamma",
            "shared memory alpha"
        ]
    );
}

#[test]
fn a_write_made_again_after_losing_a_race_is_not_what_comes_back() {
    let repo = TestRepo::new();
    let alpha = json(&repo, &["remember", "memory alpha"]);
    ok(&repo, &["remember", "memory beta"]);
    assert_eq!(summaries(&repo).len(), 2); // the index catches up here
    let base = tip(&repo);
    // One writer forgets alpha while another writes gamma: gamma's first attempt, made on the
    // old tip, loses the race and is made again on the forget.
    let id = alpha["memory"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{alpha}"));
    ok(&repo, &["forget", id]);
    let gamma = json(&repo, &["remember", "memory gamma"]);
    let path = gamma["path"].as_str().unwrap_or_else(|| panic!("{gamma}"));
    let newest = tip(&repo);
    let attempt = write_on(&repo, &base, path, &newest, "remember: memory gamma");
    repo.git(&["update-ref", "-d", "refs/lore/memory"]);

    // The attempt holds more memories (alpha is not forgotten there), but every write of it
    // is in the newest line.
    let found = json(&repo, &["doctor"]);
    assert_eq!(first_point(&found)["commit"], newest.as_str(), "{found}");
    let others = found["other_heads"].as_array().unwrap();
    assert_eq!(others.len(), 1, "{found}");
    assert_eq!(others[0]["commit"], attempt.as_str(), "{found}");
    assert_eq!(others[0]["memories"], 3, "{found}");
    assert_eq!(others[0]["not_in_restore_point"], 0, "{found}");
    let text = ok(&repo, &["doctor"]);
    assert!(text.contains("holds alike"), "{text}");
    ok(&repo, &["doctor", "--restore"]);
    assert_eq!(summaries(&repo), ["memory beta", "memory gamma"]);
}

#[test]
fn a_purged_memory_does_not_come_back_from_the_object_database() {
    let repo = TestRepo::new();
    let alpha = json(&repo, &["remember", "memory alpha"]);
    let leaked = json(&repo, &["remember", "memory beta to purge"]);
    let id = leaked["memory"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{leaked}"));
    ok(&repo, &["forget", "--purge", id]);
    // The chain before the purge (alpha and beta) is still in the object database and now
    // holds more memories than the chain after it.
    let id = alpha["memory"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{alpha}"));
    ok(&repo, &["forget", id]);
    ok(&repo, &["remember", "memory gamma"]);
    let newest = tip(&repo);
    repo.git(&["update-ref", "-d", "refs/lore/memory"]);

    let found = json(&repo, &["doctor", "--restore"]);
    assert_eq!(found["restored"], newest.as_str(), "{found}");
    assert!(found.get("other_heads").is_none(), "{found}");
    assert_eq!(summaries(&repo), ["memory gamma"]);
}

#[test]
fn a_damaged_ref_with_a_reflog_comes_back_at_its_last_entry() {
    let repo = TestRepo::new();
    // git keeps a reflog for refs outside refs/heads only when told to.
    repo.git(&["config", "core.logAllRefUpdates", "always"]);
    let newest = write_three(&repo);
    std::fs::write(repo.path().join(".git/refs/lore/memory"), "garbage\n").unwrap();

    let found = json(&repo, &["doctor"]);
    assert_eq!(found["state"], "damaged", "{found}");
    assert_eq!(first_point(&found)["commit"], newest.as_str(), "{found}");
    assert_eq!(
        first_point(&found)["source"],
        "reflog of refs/lore/memory",
        "{found}"
    );
    ok(&repo, &["doctor", "--restore"]);
    assert_eq!(summaries(&repo).len(), 3);
}
