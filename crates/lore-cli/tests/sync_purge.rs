//! A purge travels: a secret written on one clone, synced to two others, purged on the first,
//! is gone from every clone and the bare remote after any order of syncs (no object holds it
//! after `git gc --prune=now`), never comes back, and no other memory is lost on the way.

mod common;

use std::path::Path;

use common::net::Net;

const SECRET: &str = "ghp_R8x2LmQ4vT9wZ1kJ7nB3cY6pH0sD5fG2aE4u";

fn assert_clean(net: &Net, dir: &Path, what: &str) {
    net.git(dir, &["gc", "-q", "--prune=now"]);
    // Every object, as text (what `git cat-file --batch-all-objects` reads).
    let objects = net.git(dir, &["cat-file", "--batch-all-objects", "--batch"]);
    assert!(objects.contains(" commit "), "{what}: no objects read");
    assert!(
        !objects.contains(SECRET),
        "{what}: an object still holds the purged secret"
    );
}

#[test]
fn a_purge_reaches_every_clone_and_the_remote_and_the_memory_never_comes_back() {
    let net = Net::new();
    let (a, b, c) = (net.clone("a"), net.clone("b"), net.clone("c"));
    for dir in [&a, &b, &c] {
        // The secret must be stored as written for the purge to have something to remove.
        net.git(dir, &["config", "lore.secrets", "warn"]);
    }
    let secret = net.remember(
        &a,
        &format!("Deploy token is {SECRET}"),
        &["-n", "decisions", "--key", "deploy-token"],
    );
    let mut kept = vec![net.remember(&a, "Builds run on the self-hosted runner", &[])];
    net.sync(&a);
    net.sync(&b);
    net.sync(&c);
    assert!(net.ids(&c).contains(&secret), "the secret reached c");
    // An export made before the purge holds the memory (and a copy with its text renamed).
    let exported = net.dir.path().join("before-purge.jsonl");
    net.ok(&b, &["export", "jsonl", exported.to_str().unwrap()]);
    // b edits the memory before it hears of the purge: the edit must not bring it back.
    net.ok(&b, &["update", &secret, "--tag", "ops"]);
    kept.push(net.remember(&b, "Releases are cut on Thursdays", &[]));

    let purged = net.json(&a, &["forget", "--purge", &secret]);
    assert_eq!(purged["purged"], true, "{purged}");
    // Until the remote has the purge and gc ran, status says where the text may still be.
    let status = net.json(&a, &["status"]);
    assert_eq!(status["purges"]["records"], 1, "{status}");
    assert!(
        status["purges"]["objects_here"].as_u64() > Some(0),
        "{status}"
    );
    assert_eq!(status["purges"]["remotes_behind"][0], "origin", "{status}");
    kept.push(net.remember(&c, "Staging resets every night", &[]));

    // Any order: c first (it has not heard), then a (pushes the purge over the remote's
    // history), then b and c.
    net.sync(&c);
    let pushed = net.sync(&a);
    assert_eq!(pushed["replaced_remote_history"], true, "{pushed}");
    let arrived = net.sync(&b);
    assert_eq!(arrived["purged"][0], secret.as_str(), "{arrived}");
    net.sync(&c);
    net.sync(&a);
    for round in 0..3 {
        for (name, dir) in [("a", &a), ("b", &b), ("c", &c)] {
            kept.push(net.remember(dir, &format!("Round {round} note from {name}"), &[]));
            net.sync(dir);
        }
    }
    for dir in [&a, &b, &c] {
        net.sync(dir);
    }
    kept.sort();
    for (name, dir) in [("a", &a), ("b", &b), ("c", &c)] {
        let ids = net.ids(dir);
        assert!(
            !ids.contains(&secret),
            "{name}: the purged memory came back"
        );
        for id in &kept {
            assert!(ids.contains(id), "{name}: lost {id}");
        }
        let scan = net.json(dir, &["scan", "--history"]);
        assert_eq!(scan["clean"], true, "{name}: {scan}");
        assert_clean(&net, dir, name);
        let index = std::fs::read(dir.join(".git/lore/index.sqlite3")).unwrap();
        assert!(
            !String::from_utf8_lossy(&index).contains(SECRET),
            "{name}: the index still holds the secret"
        );
    }
    assert_clean(&net, &net.central(), "the remote");
    let status = net.json(&a, &["status"]);
    assert_eq!(status["purges"]["objects_here"], 0, "{status}");
    assert_eq!(
        status["purges"]["remotes_behind"],
        serde_json::json!([]),
        "{status}"
    );

    // Importing the old export does not bring it back (by id), nor does the same text under a
    // new id; the other records import.
    let text = std::fs::read_to_string(&exported).unwrap();
    let renamed: String = text
        .lines()
        .filter(|l| l.contains(secret.as_str()))
        .map(|l| l.replace(secret.as_str(), "zzzzzzzzzzzz") + "\n")
        .collect();
    std::fs::write(&exported, format!("{text}{renamed}")).unwrap();
    let imported = net.json(&c, &["import", "jsonl", exported.to_str().unwrap()]);
    let warnings = imported["warnings"].to_string();
    assert!(
        warnings.contains("2 record(s) are memories purged"),
        "{imported}"
    );
    assert!(!net.ids(&c).contains(&secret));
    assert!(!net.ids(&c).contains(&"zzzzzzzzzzzz".to_string()));

    // Writing the purged text again is refused, under any id.
    let again = net.lore(
        &c,
        &[
            "--json",
            "remember",
            &format!("Deploy token is {SECRET}"),
            "-n",
            "decisions",
            "--key",
            "deploy-token",
        ],
    );
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("\"purged\""),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
}
