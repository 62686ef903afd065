//! Where the store is: the repository around the working directory, any of its worktrees, a
//! subdirectory, or `--repo`.

mod common;

use common::{json, json_at};
use lore_testutils::TestRepo;

#[test]
fn worktrees_and_subdirectories_share_one_store() {
    let repo = TestRepo::new();
    let wt = repo.path().parent().unwrap().join("second-worktree");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        wt.to_str().unwrap(),
        "-b",
        "feature",
    ]);
    json_at(
        &wt,
        &repo.home(),
        &["remember", "written from the worktree"],
    );
    std::fs::create_dir_all(repo.path().join("src/deep")).unwrap();
    let listed =
        json_at(&repo.path().join("src/deep"), &repo.home(), &["list"])["memories"].clone();
    assert_eq!(listed[0]["summary"], "written from the worktree");
    // One index, under the common git dir.
    assert!(repo.path().join(".git/lore/index.sqlite3").exists());
    // The worktree's branch and index are untouched.
    assert_eq!(
        repo.git(&["-C", wt.to_str().unwrap(), "status", "--porcelain"]),
        ""
    );
}

#[test]
fn repo_flag_points_elsewhere_and_init_is_optional_and_idempotent() {
    let repo = TestRepo::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let path = repo.path();
    let first = json_at(
        elsewhere.path(),
        &repo.home(),
        &["--repo", path.to_str().unwrap(), "init"],
    );
    assert_eq!(first["created"], true);
    let again = json(&repo, &["init"]);
    assert_eq!(again["created"], false);
    assert!(again["project"].as_str().unwrap().starts_with("file://"));
    // With an origin, the project identity is the normalised URL (recorded when the store is made).
    let other = TestRepo::new();
    other.git(&["remote", "add", "origin", "git@github.com:Owner/Repo.git"]);
    json(&other, &["remember", "first memory creates the store"]);
    assert_eq!(
        json(&other, &["status"])["project"],
        "github.com/Owner/Repo"
    );
    let meta = other.git(&["show", "refs/lore/memory:lore.yaml"]);
    assert!(meta.contains("project: github.com/Owner/Repo"), "{meta}");
}
