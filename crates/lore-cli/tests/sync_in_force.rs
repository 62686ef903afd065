//! Contradictions settle the same everywhere: five keyed memories changed differently on three
//! clones, synced in several orders, leave the same version in force on every clone (the one
//! updated last, ties by blob id), and `lore conflicts` credits each version to the clone and
//! commit that wrote it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::net::Net;
use serde_json::Value;

const KEYS: usize = 5;

/// Which summary is in force for each key, and the conflict listing, on one clone.
fn in_force(net: &Net, dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for i in 0..KEYS {
        let m = net.json(dir, &["show", &format!("decisions/k{i}")]);
        out.insert(
            format!("k{i}"),
            m["memory"]["summary"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
    }
    out
}

/// The clone whose summary a version carries (`k2 by b`).
fn writer_of(version: &Value) -> String {
    let summary = version["summary"].as_str().unwrap();
    summary.rsplit(' ').next().unwrap().to_string()
}

fn run(order: &[usize]) -> Vec<BTreeMap<String, String>> {
    let net = Net::new();
    let clones: Vec<PathBuf> = ["a", "b", "c"].iter().map(|n| net.clone(n)).collect();
    for i in 0..KEYS {
        net.remember(
            &clones[0],
            &format!("k{i} first version"),
            &["-n", "decisions", "--key", &format!("k{i}")],
        );
    }
    for dir in &clones {
        net.sync(dir);
    }
    // Key i is changed by two or three clones, each differently.
    for i in 0..KEYS {
        for (n, dir) in clones.iter().enumerate() {
            if i % 3 == n && i > 2 {
                continue;
            }
            let name = ["a", "b", "c"][n];
            net.ok(
                dir,
                &[
                    "update",
                    &format!("decisions/k{i}"),
                    "--summary",
                    &format!("k{i} by {name}"),
                ],
            );
        }
    }
    for _ in 0..2 {
        for &n in order {
            net.sync(&clones[n]);
        }
    }
    let views: Vec<BTreeMap<String, String>> =
        clones.iter().map(|dir| in_force(&net, dir)).collect();
    for (n, dir) in clones.iter().enumerate() {
        let conflicts = net.json(dir, &["conflicts"])["conflicts"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(conflicts.len(), KEYS, "clone {n}: {conflicts:?}");
        for c in &conflicts {
            let live = &c["live"];
            let mut versions = vec![live.clone()];
            versions.extend(c["others"].as_array().unwrap().iter().cloned());
            for v in &versions {
                // Credited to whoever wrote this version, by the commit that wrote it.
                let writer = writer_of(v);
                let expected = format!("{writer} <{writer}@example.com>");
                assert_eq!(v["author"], expected.as_str(), "clone {n}: {c}");
                let commit = v["commit"]
                    .as_str()
                    .expect("every version names its commit");
                let author = net.git(dir, &["log", "-1", "--format=%an", commit]);
                assert_eq!(author.trim(), writer, "clone {n}: {c}");
            }
            // The version in force is the one updated last.
            let date =
                |v: &Value| -> jiff::Timestamp { v["date"].as_str().unwrap().parse().unwrap() };
            let newest = versions.iter().map(date).max().unwrap();
            assert_eq!(date(live), newest, "clone {n}: {c}");
        }
    }
    views
}

#[test]
fn every_clone_keeps_the_same_version_in_force_whatever_the_order_of_syncs() {
    let mut seen: Option<Vec<String>> = None;
    for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
        let views = run(&order);
        for v in &views[1..] {
            assert_eq!(v, &views[0], "order {order:?}: clones disagree");
        }
        // Which clone's version wins does not depend on the order either: the last update.
        let winners: Vec<String> = views[0]
            .values()
            .map(|s| s.rsplit(' ').next().unwrap().to_string())
            .collect();
        match &seen {
            None => seen = Some(winners),
            Some(first) => assert_eq!(&winners, first, "order {order:?}"),
        }
    }
}
