//! Scopes through real processes: two repositories and one personal store (a temporary
//! LORE_HOME) read together, labelled, narrowed and widened; nothing of another repository or of
//! the personal store reaching where it should not (recall, context, a pushed remote); a team
//! store on a bare remote shared by two users' repositories; moving a memory between scopes.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{isolate, lore_bin, stdout_of};
use lore_testutils::{TestRepo, git_in};
use serde_json::Value;

const PREFERENCE: &str = "I always want small commits and no unwrap in library code";
const A_DECISION: &str = "Orders live in Postgres with logical replication to the warehouse";
const B_NOTE: &str = "Deploys go through the blue green pipeline with a canary stage";
const TEAM_LESSON: &str = "Pin the protobuf compiler to the version recorded in tools.lock";

/// One user: a home and a lore data directory shared by every repository they work in.
struct User {
    home: tempfile::TempDir,
}

impl User {
    fn new() -> User {
        User {
            home: tempfile::tempdir().expect("temp home"),
        }
    }

    fn lore_home(&self) -> PathBuf {
        self.home.path().join("lore-data")
    }

    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(lore_bin());
        cmd.args(args).current_dir(dir);
        isolate(&mut cmd, self.home.path());
        cmd.env("LORE_HOME", self.lore_home());
        cmd
    }

    fn run(&self, dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = self.command(dir, args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawning lore");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(text.as_bytes())
                .expect("writing stdin");
        }
        drop(child.stdin.take());
        child.wait_with_output().expect("waiting for lore")
    }

    fn ok(&self, dir: &Path, args: &[&str]) -> String {
        stdout_of(self.run(dir, args, None), &format!("lore {args:?}"))
    }

    fn json(&self, dir: &Path, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(dir, &all)).expect("JSON output")
    }

    /// The memories recall finds for `query` in `dir`, as (scope, project, summary).
    fn recall(&self, dir: &Path, extra: &[&str], query: &str) -> Vec<(String, String, String)> {
        let mut args = extra.to_vec();
        args.extend(["recall", query]);
        let out = self.json(dir, &args);
        out["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| {
                (
                    h["scope"].as_str().unwrap_or_default().to_string(),
                    h["project"].as_str().unwrap_or_default().to_string(),
                    h["memory"]["summary"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect()
    }

    /// The context a SessionStart hook injects in `dir`.
    fn session_start(&self, dir: &Path) -> String {
        let payload = format!(
            r#"{{"session_id":"s1","cwd":{},"hook_event_name":"SessionStart","source":"startup"}}"#,
            serde_json::to_string(&dir.display().to_string()).unwrap()
        );
        let out = self.run(dir, &["hook", "claude", "SessionStart"], Some(&payload));
        let text = stdout_of(out, "lore hook claude SessionStart");
        let v: Value = serde_json::from_str(&text).expect("hook answer");
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

fn canonical(p: &Path) -> String {
    p.canonicalize().unwrap().display().to_string()
}

/// Every object of a (bare) repository, contents included, as one text.
fn all_objects(git_dir: &Path, home: &Path) -> String {
    let mut cmd = Command::new("git");
    cmd.args(["cat-file", "--batch-all-objects", "--batch"])
        .current_dir(git_dir);
    lore_testutils::make_hermetic(&mut cmd, home);
    let out = cmd.output().expect("git cat-file");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn bare_remote(parent: &Path, name: &str, home: &Path) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git_in(&dir, home, &["init", "-q", "--bare"]);
    dir
}

#[test]
fn personal_memory_follows_to_every_project_and_nothing_leaks_between_them() {
    let user = User::new();
    let (a, b) = (TestRepo::new(), TestRepo::new());
    let (a_dir, b_dir) = (a.path(), b.path());
    user.ok(&b_dir, &["--scope", "personal", "remember", PREFERENCE]);
    user.ok(&a_dir, &["remember", "-n", "decisions", A_DECISION]);
    user.ok(&b_dir, &["remember", B_NOTE]);

    for dir in [&a_dir, &b_dir] {
        let hits = user.recall(dir, &[], "small commits unwrap library code");
        assert!(
            hits.iter()
                .any(|(scope, _, s)| scope == "personal" && s == PREFERENCE),
            "{hits:?}"
        );
        let start = user.session_start(dir);
        assert!(start.contains(PREFERENCE), "{start}");
        assert!(start.contains("(personal, id "), "{start}");
        // Narrowed to the project, the preference is gone.
        let hits = user.recall(
            dir,
            &["--scope", "project"],
            "small commits unwrap library code",
        );
        assert!(hits.iter().all(|(_, _, s)| s != PREFERENCE), "{hits:?}");
    }
    // The project's own hits are labelled too.
    let hits = user.recall(&a_dir, &[], "Postgres logical replication");
    assert!(
        hits.iter()
            .any(|(scope, p, s)| scope == "project" && p.is_empty() && s == A_DECISION),
        "{hits:?}"
    );

    // A's memory never reaches B: not by default, not in B's context or SessionStart.
    let hits = user.recall(&b_dir, &[], "Postgres logical replication warehouse");
    assert!(hits.iter().all(|(_, _, s)| s != A_DECISION), "{hits:?}");
    let context = user.ok(
        &b_dir,
        &["context", "--query", "Postgres logical replication"],
    );
    assert!(!context.contains(A_DECISION), "{context}");
    assert!(!user.session_start(&b_dir).contains(A_DECISION));
    let hits = user.recall(
        &b_dir,
        &["--scope", "project,personal"],
        "Postgres replication",
    );
    assert!(hits.iter().all(|(_, _, s)| s != A_DECISION), "{hits:?}");
    // With all, it is there, naming A.
    let hits = user.recall(
        &b_dir,
        &["--scope", "all"],
        "Postgres logical replication warehouse",
    );
    assert!(
        hits.iter()
            .any(|(scope, p, s)| scope == "project" && *p == canonical(&a_dir) && s == A_DECISION),
        "{hits:?}"
    );
    let text = user.ok(
        &b_dir,
        &["--scope", "all", "recall", "Postgres logical replication"],
    );
    assert!(
        text.contains(&format!("[project {}]", canonical(&a_dir))),
        "{text}"
    );

    // B's sync pushes B's store only: the personal memory is in no object of the remote.
    let remotes = tempfile::tempdir().unwrap();
    let remote = bare_remote(remotes.path(), "b.git", &b.home());
    b.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    user.ok(&b_dir, &["sync"]);
    let objects = all_objects(&remote, &b.home());
    assert!(objects.contains(B_NOTE), "the remote holds B's memory");
    assert!(
        !objects.contains(PREFERENCE),
        "the personal memory reached the remote"
    );
    assert!(
        !objects.contains("small commits"),
        "the personal memory reached the remote"
    );
    assert!(
        !objects.contains(A_DECISION),
        "A's memory reached B's remote"
    );

    // Status says what it reads.
    let status = user.ok(&b_dir, &["status"]);
    assert!(status.contains("scopes:   project, personal\n"), "{status}");
}

#[test]
fn a_team_store_carries_a_lesson_between_two_repositories() {
    let remotes = tempfile::tempdir().unwrap();
    let (alice, bob) = (User::new(), User::new());
    let (a, b) = (TestRepo::new(), TestRepo::new());
    let team = bare_remote(remotes.path(), "platform.git", &a.home());
    for (repo, name) in [(&a, "a.git"), (&b, "b.git")] {
        let remote = bare_remote(remotes.path(), name, &repo.home());
        repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    }
    let url = team.to_str().unwrap();
    alice.ok(&a.path(), &["scope", "add", "platform", url]);
    bob.ok(&b.path(), &["scope", "add", "platform", url]);
    let listed = bob.json(&b.path(), &["scope", "list"]);
    assert_eq!(listed["read"], serde_json::json!(["project", "platform"]));

    alice.ok(
        &a.path(),
        &[
            "--scope",
            "platform",
            "remember",
            "-n",
            "learnings",
            TEAM_LESSON,
        ],
    );
    alice.ok(
        &a.path(),
        &["remember", "Alice's project keeps its own notes here"],
    );
    alice.ok(&a.path(), &["sync"]);
    let before = bob.recall(&b.path(), &[], "protobuf compiler tools.lock");
    assert!(
        before.iter().all(|(_, _, s)| s != TEAM_LESSON),
        "{before:?}"
    );
    let synced = bob.json(&b.path(), &["sync"]);
    assert_eq!(synced["teams"][0]["name"], "platform", "{synced}");
    let hits = bob.recall(&b.path(), &[], "protobuf compiler tools.lock");
    assert!(
        hits.iter()
            .any(|(scope, _, s)| scope == "platform" && s == TEAM_LESSON),
        "{hits:?}"
    );
    let text = bob.ok(&b.path(), &["recall", "protobuf compiler"]);
    assert!(text.contains("[platform]"), "{text}");
    // The lesson went to the team's remote only, never to a project's.
    let a_remote = all_objects(&remotes.path().join("a.git"), &a.home());
    assert!(
        !a_remote.contains(TEAM_LESSON),
        "the team lesson reached A's project remote"
    );
    assert!(all_objects(&team, &a.home()).contains(TEAM_LESSON));
    assert!(!all_objects(&team, &a.home()).contains("Alice's project"));

    // A team the committed .lore names but this machine never added is left out of reads
    // (and listed as missing), never an error.
    b.write(
        ".lore",
        "teams:\n  - platform\n  - name: security\n    url: /nowhere/security.git\n",
    );
    let hits = bob.recall(&b.path(), &[], "protobuf compiler tools.lock");
    assert!(
        hits.iter().any(|(scope, _, _)| scope == "platform"),
        "{hits:?}"
    );
    let listed = bob.json(&b.path(), &["scope", "list"]);
    assert_eq!(
        listed["missing_teams"],
        serde_json::json!(["security"]),
        "{listed}"
    );
    assert_eq!(listed["teams"][0]["named_by_project"], true, "{listed}");
    // A lesson written into the team store and not yet pushed keeps it from being removed.
    bob.ok(
        &b.path(),
        &[
            "--scope",
            "platform",
            "remember",
            "Pin the toolchain per repository",
        ],
    );
    let refused = bob.run(&b.path(), &["scope", "remove", "platform"], None);
    assert!(!refused.status.success(), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("lore sync"), "{said}");
    bob.ok(&b.path(), &["sync"]);
    // Removing it stops reading it.
    bob.ok(&b.path(), &["scope", "remove", "platform"]);
    let hits = bob.recall(&b.path(), &[], "protobuf compiler tools.lock");
    assert!(hits.iter().all(|(_, _, s)| s != TEAM_LESSON), "{hits:?}");
}

#[test]
fn moving_a_memory_rescreens_it_and_leaves_a_tombstone() {
    let user = User::new();
    let repo = TestRepo::new();
    let dir = repo.path();
    let secret = "AKIAQ7RZ3WJ5TXNB2KDM";
    let written = user.json(
        &dir,
        &[
            "--secrets",
            "warn",
            "remember",
            &format!("Prefer ripgrep over grep for code search, key {secret}"),
        ],
    );
    let id = written["memory"]["id"].as_str().unwrap().to_string();
    let moved = user.json(&dir, &["move", &id, "--to", "personal"]);
    assert_eq!(moved["to"], "personal");
    assert_eq!(moved["memory"]["id"], id.as_str());
    let summary = moved["memory"]["summary"].as_str().unwrap();
    assert!(!summary.contains(secret), "{summary}");
    // Gone from the project (a tombstone), found in personal, history kept.
    let hits = user.recall(&dir, &["--scope", "project"], "ripgrep code search");
    assert!(hits.is_empty(), "{hits:?}");
    let hits = user.recall(&dir, &[], "ripgrep code search");
    assert!(
        hits.iter().any(|(scope, _, _)| scope == "personal"),
        "{hits:?}"
    );
    let tree = repo.git(&["ls-tree", "-r", "--name-only", "refs/lore/memory"]);
    assert!(tree.contains(&format!("{id}.yaml")), "{tree}");
    let history = user.ok(&dir, &["history", &id]);
    assert!(history.contains("Prefer ripgrep"), "{history}");
    // The personal store records the write as a move, not an import.
    let personal = user.lore_home().join("personal.git");
    let message = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&personal)
        .args(["log", "-1", "--format=%B", "refs/lore/memory"])
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&message.stdout);
    assert!(message.contains("Lore-Action: move"), "{message}");

    // `--secrets` holds in the store written to, not only in this one: block refuses the move
    // where the personal store's own policy (redact) would have let it through.
    let other = user.json(
        &dir,
        &[
            "--secrets",
            "warn",
            "remember",
            &format!("Use the staging bucket, key {secret}"),
        ],
    );
    let other = other["memory"]["id"].as_str().unwrap().to_string();
    let blocked = user.run(
        &dir,
        &["--secrets", "block", "move", &other, "--to", "personal"],
        None,
    );
    assert!(!blocked.status.success(), "{blocked:?}");
    let hits = user.recall(&dir, &["--scope", "personal"], "staging bucket");
    assert!(hits.is_empty(), "{hits:?}");

    // Bad scope names and URLs are clear errors, never a panic.
    for args in [
        vec!["move", id.as_str(), "--to", "../etc"],
        vec!["--scope", "Bad Name", "recall", "x"],
        vec!["--scope", "nosuchteam", "recall", "x"],
        vec!["scope", "add", "all", "/tmp/x.git"],
        vec!["scope", "add", "ok-name", "--upload-pack=touch"],
        vec!["scope", "add", "other", "/no/such/remote.git"],
    ] {
        let out = user.run(&dir, &args, None);
        let code = out.status.code().unwrap_or(-1);
        // Input refused: 2–4; a remote git cannot reach: 1, as `lore sync` says it.
        assert!((1..=4).contains(&code), "{args:?}: {out:?}");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{out:?}"
        );
    }
    // The benchmark's options do not clash with the global ones.
    user.ok(&dir, &["bench", "scopes", "--help"]);
    // A team store whose first sync failed is not left behind.
    let listed = user.json(&dir, &["scope", "list"]);
    assert_eq!(listed["teams"], serde_json::json!([]), "{listed}");
}

#[test]
fn a_damaged_personal_store_costs_its_own_hits_only() {
    let user = User::new();
    let repo = TestRepo::new();
    let dir = repo.path();
    user.ok(&dir, &["--scope", "personal", "remember", PREFERENCE]);
    user.ok(&dir, &["remember", "-n", "decisions", A_DECISION]);
    // The personal store's memory ref now names no object.
    let personal = user.lore_home().join("personal.git");
    std::fs::write(
        personal.join("refs").join("lore").join("memory"),
        "0123456789012345678901234567890123456789\n",
    )
    .unwrap();
    let out = user.run(&dir, &["recall", "Postgres logical replication"], None);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(A_DECISION), "{text}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("personal: left out of this read"), "{said}");
    // SessionStart still gives the project's context.
    assert!(user.session_start(&dir).contains(A_DECISION));
    // Asked for the personal store alone, the failure is the answer.
    let alone = user.run(
        &dir,
        &["--scope", "personal", "recall", "small commits"],
        None,
    );
    assert!(!alone.status.success(), "{alone:?}");
}

#[test]
fn a_recall_over_every_scope_leaves_the_personal_store_to_an_upkeep_of_its_own() {
    use common::upkeep::{grow_cache_with, hold_lock_of, inode, wait_for_replaced};
    let user = User::new();
    let repo = TestRepo::new();
    let dir = repo.path();
    user.ok(&dir, &["remember", A_DECISION]);
    let cache = user
        .lore_home()
        .join("personal.git/lore/index.sqlite3.vectors");
    let personal = |args: &[&str]| {
        let mut all = vec!["--scope", "personal"];
        all.extend_from_slice(args);
        user.json(&dir, &all)
    };
    let first = grow_cache_with(&personal, &cache);
    // A recall of every scope reads the personal store's grown cache while this test holds
    // its lock: a rewrite inline would wait on it.
    let lock = hold_lock_of(&cache);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let _ = tx.send(user.recall(&dir, &["--scope", "all"], "deploy Tuesday"));
        });
        let found = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the recall waited for the personal cache to be written again");
        assert!(
            found.iter().any(|(scope, _, _)| scope == "personal"),
            "{found:?}"
        );
        assert_eq!(inode(&cache), first);
        drop(lock);
    });
    // Let go: an upkeep of the personal store writes it again, and leaves the projects as
    // they were (the personal store is not one of them, and nothing is read twice).
    wait_for_replaced(&cache, first);
    let listed = user.json(&dir, &["scope", "list"]);
    assert_eq!(listed["projects"].as_array().unwrap().len(), 1, "{listed}");
    let found = user.recall(&dir, &["--scope", "all"], "parser caches every template");
    let parser: Vec<_> = found
        .iter()
        .filter(|(_, _, s)| s.contains("parser caches"))
        .collect();
    assert_eq!(parser.len(), 1, "{found:?}");
}
