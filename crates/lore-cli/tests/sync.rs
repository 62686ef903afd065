//! `lore sync` against real remotes: bare repositories in temp dirs and a `git daemon` on
//! 127.0.0.1; clones written by real `lore` processes, synced at random moments and at once.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::lore_command;
use common::net::Net;
use lore_testutils::make_hermetic;
use serde_json::Value;

#[test]
fn four_clones_of_three_writers_each_converge_on_every_memory() {
    let net = Net::new();
    let clones: Vec<PathBuf> = (0..4).map(|c| net.clone(&format!("c{c}"))).collect();
    const PER_WRITER: usize = 100;
    std::thread::scope(|scope| {
        for (c, clone) in clones.iter().enumerate() {
            for w in 0..3 {
                let net = &net;
                scope.spawn(move || {
                    let mut seed = (c * 7 + w * 13 + 1) as u64;
                    for i in 0..PER_WRITER {
                        let summary = format!("clone {c} writer {w} finding {i}: item{c}x{w}x{i}");
                        net.remember(clone, &summary, &["--namespace", "learnings"]);
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if seed.is_multiple_of(10) {
                            // Syncs race with this clone's other writers and other clones. On
                            // a loaded machine one may give up on a remote that kept moving
                            // (its documented answer, nothing lost): convergence is checked
                            // below.
                            let out = net.lore(clone, &["sync"]);
                            let stderr = String::from_utf8_lossy(&out.stderr);
                            assert!(
                                out.status.success() || stderr.contains("kept moving"),
                                "sync failed: {stderr}"
                            );
                        }
                    }
                });
            }
        }
    });
    for _ in 0..2 {
        for clone in &clones {
            net.sync(clone);
        }
    }
    let expected = 4 * 3 * PER_WRITER;
    let first = net.ids(&clones[0]);
    assert_eq!(first.len(), expected, "every acknowledged write arrived");
    let tip = net.tip(&clones[0]);
    for clone in &clones {
        assert_eq!(net.tip(clone), tip, "identical lore refs");
        assert_eq!(net.ids(clone), first);
        net.git(clone, &["fsck", "--no-progress"]);
        assert!(
            net.conflicts(clone).is_empty(),
            "unkeyed writes never conflict"
        );
        // The caught-up index equals a fresh rebuild.
        let before = net.json(clone, &["list", "--limit", "100000"]);
        net.ok(clone, &["reindex"]);
        assert_eq!(net.json(clone, &["list", "--limit", "100000"]), before);
    }
    assert_eq!(
        net.git(&net.central(), &["rev-parse", "refs/lore/memory"]),
        tip
    );
}

#[test]
fn contradictory_keyed_memories_surface_as_conflicts_and_resolving_clears_them_everywhere() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    for k in 0..5 {
        let key = format!("choice-{k}");
        net.remember(
            &a,
            &format!("Pick option A{k} for part {k}"),
            &["-n", "decisions", "--key", &key],
        );
        net.remember(
            &b,
            &format!("Pick option B{k} for part {k}"),
            &["-n", "decisions", "--key", &key, "--agent", "codex"],
        );
        net.remember(&a, &format!("unkeyed note a{k}"), &[]);
        net.remember(&b, &format!("unkeyed note b{k}"), &[]);
    }
    net.sync(&a);
    let report = net.sync(&b);
    assert_eq!(report["memories"]["conflicts"], 5, "{report}");
    assert_eq!(report["open_conflicts"], 5);
    let conflicts = net.conflicts(&b);
    assert_eq!(conflicts.len(), 5);
    for c in &conflicts {
        assert_eq!(c["kind"], "both_added");
        assert_eq!(c["live"]["agent"], "codex", "ours stays live");
        assert_eq!(c["others"].as_array().unwrap().len(), 1);
        assert!(
            c["others"][0]["summary"]
                .as_str()
                .unwrap()
                .starts_with("Pick option A")
        );
    }
    // The contested memories are flagged where agents read them.
    let recall = net.json(&b, &["recall", "Pick option part"]);
    let hits = recall["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter().all(|h| h["contradicted"].as_str().is_some()),
        "{recall}"
    );
    let context = net.ok(&b, &["context"]);
    assert!(context.contains("contradicted"), "{context}");

    // Both clones see them; resolving on one clears them everywhere.
    net.sync(&a);
    assert_eq!(net.conflicts(&a).len(), 5);
    net.ok(&a, &["resolve", "decisions/choice-0", "--ours"]);
    net.ok(&a, &["resolve", "choice-1", "--theirs"]);
    net.ok(&a, &["resolve", "decisions/choice-2", "--both"]);
    net.ok(
        &a,
        &[
            "resolve",
            "decisions/choice-3",
            "--edit",
            "--summary",
            "Pick option C3 for part 3",
        ],
    );
    net.ok(&a, &["resolve", "decisions/choice-4", "--theirs"]);
    assert!(net.conflicts(&a).is_empty());
    net.sync(&a);
    net.sync(&b);
    assert!(net.conflicts(&b).is_empty());
    assert_eq!(net.tip(&a), net.tip(&b));
    let show = |key: &str| {
        net.json(&b, &["show", key])["memory"]["summary"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(show("decisions/choice-0"), "Pick option B0 for part 0");
    assert_eq!(show("decisions/choice-1"), "Pick option A1 for part 1");
    assert_eq!(show("decisions/choice-3"), "Pick option C3 for part 3");
    // keep both: the other memory stays, without the key.
    let all = net.json(&b, &["list", "--limit", "1000"]);
    let summaries: Vec<&str> = all["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["summary"].as_str().unwrap())
        .collect();
    assert!(summaries.contains(&"Pick option A2 for part 2"));
    assert!(summaries.contains(&"Pick option B2 for part 2"));
    for k in 0..5 {
        assert!(summaries.contains(&format!("unkeyed note a{k}").as_str()));
        assert!(summaries.contains(&format!("unkeyed note b{k}").as_str()));
    }
    // The decision is in git with its trailers.
    let log = net.git(&b, &["log", "--format=%s%n%b", "refs/lore/memory"]);
    assert!(log.contains("resolve decisions/choice-1: theirs"));
    assert!(log.contains("Lore-Resolution: theirs"));
    net.git(&b, &["fsck", "--no-progress"]);
}

#[test]
fn forgetting_travels_as_a_tombstone_and_edit_against_forget_is_a_contradiction() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    let gone = net.remember(&a, "Deprecated build flag", &[]);
    let contested = net.remember(
        &a,
        "The API uses version 2",
        &["-n", "decisions", "--key", "api"],
    );
    net.sync(&a);
    net.sync(&b);
    net.ok(&a, &["forget", &gone]);
    net.ok(&a, &["forget", &contested]);
    net.ok(
        &b,
        &["update", &contested, "--summary", "The API uses version 3"],
    );
    net.sync(&a);
    let report = net.sync(&b);
    assert_eq!(report["memories"]["forgotten"], 1, "{report}");
    assert!(!net.ids(&b).contains(&gone), "the forget arrived");
    let conflicts = net.conflicts(&b);
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0]["kind"], "edit_forget");
    assert_eq!(
        conflicts[0]["live"]["summary"], "The API uses version 3",
        "the edit stays live"
    );
    assert_eq!(conflicts[0]["others"][0]["forgotten"], true);
    // Accepting the forget removes it everywhere.
    net.ok(&b, &["resolve", "decisions/api", "--theirs"]);
    net.sync(&b);
    net.sync(&a);
    assert!(!net.ids(&a).contains(&contested));
    assert!(net.conflicts(&a).is_empty());
}

#[test]
fn two_clones_pushing_at_once_both_land() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    for i in 0..10 {
        net.remember(&a, &format!("a wrote fact {i}"), &[]);
        net.remember(&b, &format!("b wrote fact {i}"), &[]);
    }
    std::thread::scope(|s| {
        for dir in [&a, &b] {
            let net = &net;
            s.spawn(move || {
                let out = net.lore(dir, &["sync"]);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.success() || stderr.contains("kept moving"),
                    "{stderr}"
                );
            });
        }
    });
    net.sync(&a);
    net.sync(&b);
    net.sync(&a);
    assert_eq!(net.ids(&a).len(), 20);
    assert_eq!(net.ids(&a), net.ids(&b));
    assert_eq!(net.tip(&a), net.tip(&b));
}

#[test]
fn a_remote_that_moves_during_the_merge_is_merged_again_not_overwritten() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    let c = net.clone("c");
    net.remember(&a, "a's first fact", &[]);
    net.remember(&b, "b's first fact", &[]);
    net.sync(&b);
    // c prepares a commit the remote will get while a merges.
    net.remember(&c, "c's racing fact", &[]);
    let c_dir = c.clone();
    let home = net.home();
    let store = lore::Store::discover(&a).unwrap();
    let mut lore_handle = lore::Lore::new(store);
    let fired = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let once = fired.clone();
    lore_handle
        .store_mut()
        .set_before_ref_update(Some(Box::new(move || {
            if !once.swap(true, std::sync::atomic::Ordering::SeqCst) {
                let out = lore_command(&c_dir, &home, &["sync"]).output().unwrap();
                assert!(out.status.success());
            }
        })));
    let report =
        lore::sync::sync(lore_handle.store(), &lore::sync::SyncOptions::default()).unwrap();
    assert!(fired.load(std::sync::atomic::Ordering::SeqCst));
    assert!(
        report.rounds >= 2,
        "the lease refused the first push: {report:?}"
    );
    net.sync(&b);
    net.sync(&c);
    for dir in [&a, &b, &c] {
        assert_eq!(net.ids(dir).len(), 3, "nothing of c's was overwritten");
    }
}

/// A `git-daemon` stopped when the test ends, however it ends.
struct Daemon(std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sync_through_git_daemon_on_loopback() {
    let net = Net::new();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    // git-daemon itself, not `git daemon` (which would leave it running when killed).
    let exec_path = net.git(net.dir.path(), &["--exec-path"]);
    let mut daemon = Command::new(Path::new(&exec_path).join("git-daemon"));
    daemon
        .args([
            "--export-all",
            "--enable=receive-pack",
            "--reuseaddr",
            "--listen=127.0.0.1",
            &format!("--port={port}"),
            &format!("--base-path={}", net.dir.path().display()),
        ])
        .arg(net.dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    make_hermetic(&mut daemon, &net.home());
    let daemon = Daemon(daemon.spawn().unwrap());
    let url = format!("git://127.0.0.1:{port}/central.git");
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed().as_secs() < 20, "git daemon did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let a = net.clone_from(&url, "a");
    let b = net.clone_from(&url, "b");
    net.remember(&a, "fact from a over git://", &[]);
    net.remember(&b, "fact from b over git://", &[]);
    net.sync(&a);
    net.sync(&b);
    net.sync(&a);
    drop(daemon);
    assert_eq!(net.ids(&a).len(), 2);
    assert_eq!(net.tip(&a), net.tip(&b));
}

#[test]
fn an_unreachable_or_missing_remote_is_a_clear_error_and_changes_nothing() {
    let net = Net::new();
    let a = net.clone("a");
    net.remember(&a, "something to keep", &[]);
    let tip = net.tip(&a);
    net.git(
        &a,
        &["remote", "set-url", "origin", "/nonexistent/remote.git"],
    );
    let out = net.lore(&a, &["--json", "sync"]);
    assert_eq!(out.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(err["error"]["code"], "remote_unreachable", "{err}");
    assert_eq!(net.tip(&a), tip);
    let out = net.lore(&a, &["sync", "nowhere"]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no remote \"nowhere\" (remotes: origin)"),
        "{stderr}"
    );
    // origin exists: the hint names the remotes, it does not say to add origin.
    assert!(
        stderr.contains("name one of the remotes listed") && !stderr.contains("git remote add"),
        "{stderr}"
    );
    assert_eq!(net.tip(&a), tip);
}

#[test]
fn a_remote_without_lore_refs_receives_them_and_dry_run_changes_nothing() {
    let net = Net::new();
    let a = net.clone("a");
    net.remember(&a, "first memory", &[]);
    let plan = net.json(&a, &["sync", "--dry-run"]);
    assert_eq!(plan["dry_run"], true);
    assert_eq!(plan["refs"][0]["action"], "ahead");
    let remote_refs = net.git(&net.central(), &["for-each-ref", "refs/lore/"]);
    assert!(remote_refs.is_empty(), "dry run pushed nothing");
    let report = net.sync(&a);
    assert_eq!(report["pushed"], 1);
    assert_eq!(
        net.git(&net.central(), &["rev-parse", "refs/lore/memory"]),
        net.tip(&a)
    );
    // Nothing of the user's moved or was configured.
    assert!(
        net.git(&net.central(), &["for-each-ref", "refs/heads/"])
            .is_empty()
    );
    let out = Command::new("git")
        .args(["config", "--get", "remote.origin.push"])
        .current_dir(&a)
        .output()
        .unwrap();
    assert!(!out.status.success(), "remote.origin.push is never set");
}

#[test]
fn after_setup_a_plain_git_fetch_brings_lore_refs_and_the_index_notices() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    let setup = net.json(&a, &["sync", "--setup"]);
    assert_eq!(setup["refspec_added"], true);
    assert_eq!(
        net.json(&a, &["sync", "--setup"])["refspec_added"],
        false,
        "idempotent"
    );
    net.remember(&b, "arrives by plain fetch", &[]);
    net.sync(&b);
    // Empty here, with a remote: the listing says how memory arrives.
    let empty = net.ok(&a, &["list"]);
    assert!(
        empty.contains("Hint:") && empty.contains("run `lore sync`"),
        "{empty}"
    );
    net.ids(&a); // an index exists before the ref moves
    net.git(&a, &["fetch", "-q", "origin"]);
    let tracked = net.git(&a, &["rev-parse", "refs/lore-remotes/origin/memory"]);
    assert_eq!(tracked, net.tip(&b));
    // Fetched by plain git, not merged: the hint names the remote and the command.
    let fetched = net.json(&a, &["list"]);
    assert!(
        fetched["hint"]
            .as_str()
            .is_some_and(|h| h.contains("origin has memory") && h.contains("lore sync origin")),
        "{fetched}"
    );
    // A ref moved by plain git is noticed on the next open.
    net.git(&a, &["update-ref", "refs/lore/memory", &tracked]);
    assert_eq!(net.ids(&a).len(), 1);
    let fetch = net.git(&a, &["config", "--get-all", "remote.origin.fetch"]);
    assert!(
        fetch.contains("+refs/heads/*:refs/remotes/origin/*"),
        "{fetch}"
    );
    assert!(
        fetch.contains("+refs/lore/*:refs/lore-remotes/origin/*"),
        "{fetch}"
    );
}

#[test]
fn the_pre_push_hook_syncs_lore_and_never_fails_the_push() {
    let net = Net::new();
    let a = net.clone("a");
    std::fs::write(a.join("f.txt"), "x").unwrap();
    net.git(&a, &["add", "f.txt"]);
    net.git(&a, &["commit", "-q", "-m", "code"]);
    let setup = net.json(&a, &["sync", "--setup", "--hook"]);
    assert_eq!(setup["hook_added"], true);
    net.remember(&a, "pushed along with the code", &[]);
    net.git(&a, &["push", "-q", "origin", "HEAD:main"]);
    assert_eq!(
        net.git(&net.central(), &["rev-parse", "refs/lore/memory"]),
        net.tip(&a),
        "the hook synced lore"
    );
    // A remote that refuses lore's refs must not fail the user's push.
    let hooks = net.central().join("hooks");
    std::fs::write(
        hooks.join("update"),
        "#!/bin/sh\ncase \"$1\" in refs/lore/*) exit 1;; esac\nexit 0\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(hooks.join("update"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    net.remember(&a, "refused by the remote", &[]);
    std::fs::write(a.join("f.txt"), "y").unwrap();
    net.git(&a, &["commit", "-q", "-am", "more code"]);
    net.git(&a, &["push", "-q", "origin", "HEAD:main"]);
}

#[test]
fn context_branches_merge_steps_and_entries_across_clones() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    net.ok(&a, &["ctx", "init", "--goal", "Ship sync"]);
    net.ok(&a, &["ctx", "commit", "Started"]);
    net.sync(&a);
    net.sync(&b);
    net.ok(&a, &["ctx", "log", "--tool", "Edit", "a edits merge.rs"]);
    net.ok(&a, &["ctx", "commit", "a merged memories"]);
    net.ok(&b, &["ctx", "log", "--tool", "Edit", "b edits push.rs"]);
    net.ok(&b, &["ctx", "commit", "b pushed with a lease"]);
    net.sync(&a);
    let report = net.sync(&b);
    let ctx_ref = report["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "refs/lore/ctx/main")
        .unwrap()
        .clone();
    assert_eq!(ctx_ref["action"], "merged", "{report}");
    net.sync(&a);
    let show = net.ok(&a, &["ctx", "show", "--branch", "main", "--window", "10"]);
    assert!(show.contains("a merged memories"), "{show}");
    assert!(show.contains("b pushed with a lease"), "{show}");
    let log = net.ok(&a, &["ctx", "show", "--log", "--window", "50"]);
    assert!(
        log.contains("a edits merge.rs") && log.contains("b edits push.rs"),
        "{log}"
    );
}

#[test]
fn hooks_sync_at_session_start_and_stop_when_auto_sync_is_on() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    net.remember(
        &b,
        "Written on the other machine about flaky tests",
        &["-n", "decisions"],
    );
    net.sync(&b);
    let hook = |dir: &Path, event: &str| -> String {
        let mut cmd = lore_command(dir, &net.home(), &["hook", "claude", event]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(br#"{"session_id":"s1","hook_event_name":"x"}"#)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Off by default: nothing travels.
    hook(&a, "SessionStart");
    assert!(net.ids(&a).is_empty());
    net.git(&a, &["config", "lore.sync.auto", "true"]);
    let started = hook(&a, "SessionStart");
    assert!(
        started.contains("flaky tests"),
        "fetched and merged before the context: {started}"
    );
    net.remember(&a, "Decided here, pushed at stop", &[]);
    hook(&a, "Stop");
    assert_eq!(
        net.git(&net.central(), &["rev-parse", "refs/lore/memory"]),
        net.tip(&a)
    );
    // Offline: silent, and the agent is not broken.
    net.git(
        &a,
        &["remote", "set-url", "origin", "/nonexistent/remote.git"],
    );
    hook(&a, "SessionStart");
}

#[test]
fn hosts_that_refuse_refs_outside_heads_work_with_the_heads_prefix() {
    let net = Net::new();
    let hooks = net.central().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("update"),
        "#!/bin/sh\ncase \"$1\" in refs/heads/*) exit 0;; esac\necho \"only branches here\" >&2\nexit 1\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(hooks.join("update"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    let a = net.clone("a");
    let b = net.clone("b");
    net.remember(&a, "kept under refs/heads/lore on the host", &[]);
    let refused = net.lore(&a, &["sync"]);
    assert_eq!(
        refused.status.code(),
        Some(1),
        "the host refuses refs/lore/*"
    );
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("only branches here"),
        "git's words reach the user: {said}"
    );
    for dir in [&a, &b] {
        net.git(dir, &["config", "lore.sync.remoteRefs", "heads"]);
    }
    net.sync(&a);
    assert_eq!(
        net.git(&net.central(), &["rev-parse", "refs/heads/lore/memory"]),
        net.tip(&a)
    );
    net.sync(&b);
    assert_eq!(net.ids(&b).len(), 1);
}

#[test]
fn gc_archives_stale_progress_and_expires_old_archived_memories_on_every_clone() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    // Written long ago: imported with their times (ids fixed so the test can name them).
    let (stale, archived) = ("st41e00000001".to_string(), "ar41e00000001".to_string());
    let (stale, archived) = (stale[..12].to_string(), archived[..12].to_string());
    let line = |id: &str, ns: &str, summary: &str, status: &str, when: &str| {
        serde_json::json!({"id": id, "namespace": ns, "summary": summary, "status": status,
            "created": when, "updated": when})
        .to_string()
    };
    let file = net.dir.path().join("old.jsonl");
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n",
            line(
                &stale,
                "progress",
                "Halfway through the parser rewrite",
                "active",
                "2026-01-01T00:00:00Z"
            ),
            line(
                &archived,
                "decisions",
                "An old plan nobody follows",
                "archived",
                "2025-01-01T00:00:00Z"
            ),
        ),
    )
    .unwrap();
    net.ok(&a, &["import", "jsonl", file.to_str().unwrap()]);
    let fresh = net.remember(&a, "Working on sync tests today", &["-n", "progress"]);
    net.sync(&a);
    net.sync(&b);
    let plan = net.json(&a, &["gc", "--dry-run"]);
    assert_eq!(plan["archived"], serde_json::json!([stale]));
    assert_eq!(plan["expired"], serde_json::json!([archived]));
    let done = net.json(&a, &["gc"]);
    assert_eq!(done["packed"], true);
    assert!(done["commit"].is_string());
    net.sync(&a);
    net.sync(&b);
    let shown = net.json(&b, &["show", &stale]);
    assert_eq!(shown["memory"]["status"], "archived");
    assert!(
        !net.ids(&b).contains(&archived),
        "expired on the other clone too"
    );
    assert!(net.ids(&b).contains(&fresh));
    let path = format!(
        "decisions/{}/{}/{archived}.md",
        &archived[..1],
        &archived[1..2]
    );
    let history = net.git(&b, &["log", "--format=%s", "refs/lore/memory", "--", &path]);
    assert!(history.lines().count() >= 2, "history kept: {history}");
    net.git(&a, &["config", "lore.decay.progress", "never"]);
    assert_eq!(
        net.json(&a, &["gc", "--dry-run"])["archived"],
        serde_json::json!([])
    );
}

#[test]
fn first_writes_in_fresh_clones_racing_to_create_the_index_all_land() {
    // Three writers at once in each of many fresh clones: the index is created by all of them
    // together, and none may fail ("database is locked" while switching it to WAL).
    let net = Net::new();
    let clones: Vec<PathBuf> = (0..24).map(|c| net.clone(&format!("f{c}"))).collect();
    std::thread::scope(|s| {
        for (c, clone) in clones.iter().enumerate() {
            for w in 0..3 {
                let net = &net;
                s.spawn(move || {
                    net.remember(clone, &format!("first write {w} in clone {c}"), &[]);
                });
            }
        }
    });
    for clone in &clones {
        assert_eq!(net.ids(clone).len(), 3);
    }
}
