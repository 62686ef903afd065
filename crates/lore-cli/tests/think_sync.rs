//! Reasoning trees across clones, through real `lore` and `git` processes and a bare remote: one
//! session written on two clones merges into one tree (thoughts, scores, outcomes, best path),
//! and a bundle of a finished session lands its lesson on the receiving clone.

mod common;

use std::path::Path;

use common::net::Net;
use serde_json::Value;

/// What these tests ask of a clone's reasoning trees, on the shared test network.
trait Trees {
    fn add(&self, dir: &Path, text: &str, parent: Option<&str>, score: &str) -> String;
    fn tree(&self, dir: &Path) -> Vec<(String, String, Value, bool)>;
}

impl Trees for Net {
    fn add(&self, dir: &Path, text: &str, parent: Option<&str>, score: &str) -> String {
        let mut args = vec!["think", "add", text, "--in", "s1", "--score", score];
        if let Some(p) = parent {
            args.extend(["--parent", p]);
        }
        self.json(dir, &args)["id"].as_str().unwrap().to_string()
    }

    /// Every thought of s1 as (id, score, outcome, best), sorted by id.
    fn tree(&self, dir: &Path) -> Vec<(String, String, Value, bool)> {
        let hits = self.json(dir, &["think", "search", "--in", "s1", "-n", "100"]);
        let mut out: Vec<_> = hits["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["id"].as_str().unwrap().to_string(),
                    format!("{:.4}", h["score"].as_f64().unwrap()),
                    h["outcome"].clone(),
                    h["best"].as_bool().unwrap(),
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

#[test]
fn one_session_written_on_two_clones_merges_into_one_tree_with_the_same_best_path() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    let root = net.add(&a, "Split the problem by input size", None, "0.5");
    net.sync(&a);
    net.sync(&b);
    // Both clones write the same session at once: different thoughts, the same one re-scored
    // differently (b later), an outcome and a finish on each.
    let on_a = net.add(&a, "Try a hash map of sizes", Some(&root), "0.6");
    let on_b = net.add(&b, "Sort the inputs first", Some(&root), "0.7");
    net.json(&a, &["think", "score", &root[..12], "--score", "0.2"]);
    net.json(&a, &["think", "outcome", &on_a[..12], "failed"]);
    net.json(&a, &["think", "done", "--in", "s1", "--best", &on_a[..12]]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    net.json(&b, &["think", "score", &root[..12], "--score", "0.9"]);
    net.json(&b, &["think", "outcome", &on_b[..12], "success"]);
    net.json(&b, &["think", "done", "--in", "s1", "--best", &on_b[..12]]);
    for dir in [&a, &b, &a] {
        let report = net.sync(dir);
        for r in report["refs"].as_array().unwrap() {
            assert_ne!(r["action"], "parked", "{report}");
        }
    }
    let tree_a = net.tree(&a);
    assert_eq!(tree_a, net.tree(&b), "both clones show one tree");
    let ids: Vec<&str> = tree_a.iter().map(|t| t.0.as_str()).collect();
    for id in [&root, &on_a, &on_b] {
        assert!(ids.contains(&id.as_str()), "{id} missing from {ids:?}");
    }
    let of = |id: &str| tree_a.iter().find(|t| t.0 == id).unwrap().clone();
    assert_eq!(of(&root).1, "0.9000", "the newer re-score is current");
    assert_eq!(of(&on_a).2, "failed");
    assert_eq!(of(&on_b).2, "success");
    assert!(of(&on_b).3 && !of(&on_a).3, "the newer finish is best");
    // Every ref of the session is the same on both clones; nothing is parked.
    for dir in [&a, &b] {
        let parked = net.git(dir, &["for-each-ref", "refs/lore-parked"]);
        assert!(parked.trim().is_empty(), "{parked}");
    }
    let refs = |dir: &Path| {
        net.git(
            dir,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/lore/",
            ],
        )
    };
    assert_eq!(refs(&a), refs(&b));
    // The losing score is kept as data: both versions are listed on the scores ref.
    let dir = format!("refs/lore/scores/s1:{}/{}", &root[..2], &root[2..]);
    let versions = net.git(&a, &["ls-tree", "--name-only", &dir]);
    assert!(versions.lines().count() >= 3, "{versions}");
    // Replaying the best thought gives the same path on both clones.
    let best = net.git(&a, &["rev-parse", "refs/lore/outcomes/s1/best^1"]);
    let replay = |dir: &Path| net.json(dir, &["think", "replay", best.trim()])["path"].clone();
    let path_a = replay(&a);
    assert_eq!(path_a, replay(&b));
    let path: Vec<&str> = path_a
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert_eq!(path, [root.as_str(), on_b.as_str()]);
    assert_eq!(path_a[0]["scores"]["combined"], 0.9);
    let fsck = net.git(&a, &["fsck", "--strict", "--no-dangling"]);
    assert!(!fsck.contains("error"), "{fsck}");
}

#[test]
fn a_bundle_of_a_finished_session_lands_its_lesson_through_the_memory_write_path() {
    let net = Net::new();
    let a = net.clone("a");
    let b = net.clone("b");
    let c = net.clone("c");
    // Share the project identity (lore.yaml) before the clones diverge.
    net.json(&a, &["remember", "The project builds with cargo"]);
    net.sync(&a);
    net.sync(&b);
    net.sync(&c);
    let root = net.add(&a, "Measure before choosing a cache", None, "0.8");
    let lesson = "Profile the hot path before adding a cache layer";
    net.json(
        &a,
        &[
            "think",
            "done",
            "--in",
            "s1",
            "--best",
            &root[..12],
            "--topic",
            "caching",
            "--lesson",
            lesson,
        ],
    );
    let file = net.dir.path().join("s1.bundle");
    let file = file.to_str().unwrap();
    net.json(&a, &["think", "bundle", file, "s1"]);
    // A clone without the lesson: it is written as the keyed memory.
    let landed = net.json(&b, &["think", "unbundle", file]);
    assert_eq!(landed["lessons"][0]["action"], "written", "{landed}");
    let shown = net.json(&b, &["show", "lessons/caching"]);
    assert!(shown.to_string().contains(lesson), "{shown}");
    // Imported again: unchanged, nothing written twice.
    let again = net.json(&b, &["think", "unbundle", file]);
    assert_eq!(again["lessons"][0]["action"], "unchanged", "{again}");
    // A clone with a different lesson on the topic (from a session of its own) keeps its own
    // in force; the bundle's is written beside it, related to it.
    let own = net.json(&c, &["think", "add", "Cache per request", "--in", "s2"])["id"]
        .as_str()
        .unwrap()
        .to_string();
    net.json(
        &c,
        &[
            "think",
            "done",
            "--in",
            "s2",
            "--best",
            &own[..12],
            "--topic",
            "caching",
            "--lesson",
            "Keep caches small and measured",
        ],
    );
    let beside = net.json(&c, &["think", "unbundle", file]);
    let landed = &beside["lessons"][0];
    assert_eq!(landed["action"], "beside", "{beside}");
    let theirs = landed["memory"].as_str().unwrap();
    let kept = net.json(&c, &["show", "lessons/caching"]);
    assert!(kept.to_string().contains("Keep caches small"), "{kept}");
    let other = net.json(&c, &["show", theirs]);
    assert!(other.to_string().contains(lesson), "{other}");
}
