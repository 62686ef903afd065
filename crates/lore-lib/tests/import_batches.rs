//! A JSONL import landing in several commits: every record written once, the index current
//! when the import ends (the next command catches nothing up), a re-import adding nothing,
//! the loose objects packed, and the records grouped by the directory they land in.

use lore::ops::Env;
use lore::ops::transfer::{Import, Imported};
use lore::{ListFilter, Lore, Store, WriteContext};
use lore_testutils::TestRepo;

fn jsonl(n: usize) -> String {
    (0..n)
        .map(|i| {
            serde_json::json!({
                "namespace": "learnings",
                "summary": format!("imported fact number {i}"),
                "body": format!("The body of fact {i}, with words like cache and retry."),
            })
            .to_string()
                + "\n"
        })
        .collect()
}

fn import(lore: &mut Lore, data: &str) -> Imported {
    let mut env = Env::new(lore, WriteContext::default());
    env.run(Import {
        format: "jsonl".into(),
        data: Some(data.into()),
        batch: Some(4),
        ..Import::default()
    })
    .unwrap()
}

#[test]
fn a_batched_import_leaves_the_index_current_and_packs() {
    let repo = TestRepo::new();
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    let data = jsonl(10) + "not json\n";
    let out = import(&mut lore, &data);
    assert_eq!((out.read, out.report.written), (10, 10));
    assert!(out.warnings.iter().any(|w| w.contains("not JSON")));
    // Three batches of at most four records: three commits on the memory ref.
    let commits = repo.git(&["rev-list", "--count", "refs/lore/memory"]);
    assert_eq!(commits.trim(), "3");

    // A new handle (a new process) finds the index at the tip: nothing to catch up.
    let mut fresh = Lore::new(Store::discover(&repo.path()).unwrap());
    let status = fresh.status().unwrap();
    assert!(status.index.was_current, "the import left the index behind");
    assert_eq!(status.total, 10);
    let listed = fresh.list(&ListFilter::default()).unwrap();
    assert_eq!(listed.len(), 10);

    // Lore's objects are in a pack, none left loose but the unreachable ones of earlier
    // batches' trees (git's count-objects says how many are loose).
    let counted = repo.git(&["count-objects", "-v"]);
    let packed: usize = counted
        .lines()
        .find_map(|l| l.strip_prefix("in-pack: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(packed >= 10, "memories not packed: {counted}");
    // With a multi-pack index over the packs, which git finds sound.
    let pack_dir = repo.path().join(".git/objects/pack");
    assert!(pack_dir.join("multi-pack-index").exists());
    repo.git(&["multi-pack-index", "verify"]);

    // Importing the same data again adds nothing.
    let again = import(&mut fresh, &data);
    assert_eq!((again.report.written, again.report.unchanged), (0, 10));
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/lore/memory"])
            .trim(),
        "3"
    );
}

#[test]
fn a_record_the_write_refuses_in_a_later_batch_refuses_the_whole_import() {
    let repo = TestRepo::new();
    repo.git(&["config", "lore.maxBodyBytes", "200"]);
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    let long = serde_json::json!({
        "namespace": "learnings",
        "summary": "a record with a body over the limit",
        "body": "word ".repeat(100),
    });
    let data = jsonl(10) + &long.to_string() + "\n";
    let mut env = Env::new(&mut lore, WriteContext::default());
    let refused = env.run(Import {
        format: "jsonl".into(),
        data: Some(data),
        batch: Some(4),
        ..Import::default()
    });
    assert!(
        refused.is_err(),
        "the record over the limit was not refused"
    );
    let tip = repo
        .git_command(&["rev-parse", "--verify", "-q", "refs/lore/memory"])
        .output()
        .unwrap();
    assert!(!tip.status.success(), "an earlier batch was written");
}

/// The directories each commit on the memory ref changed, oldest commit first.
fn dirs_per_commit(repo: &TestRepo) -> Vec<std::collections::BTreeSet<String>> {
    let log = repo.git(&[
        "log",
        "--reverse",
        "--format=tformat:commit",
        "--name-only",
        "refs/lore/memory",
    ]);
    let mut out: Vec<std::collections::BTreeSet<String>> = Vec::new();
    for line in log.lines().filter(|l| !l.is_empty()) {
        match line {
            "commit" => out.push(Default::default()),
            path => {
                let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
                out.last_mut().unwrap().insert(dir.to_string());
            }
        }
    }
    out
}

#[test]
fn a_batched_import_writes_records_grouped_by_the_directory_they_land_in() {
    let repo = TestRepo::new();
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    // Keyed records of two namespaces, alternating: in input order every batch of four would
    // write to both namespaces' directories. A bad line and a dropped field in between.
    let mut data = String::new();
    for i in 0..8 {
        let ns = if i % 2 == 0 { "decisions" } else { "learnings" };
        let mut record = serde_json::json!({
            "namespace": ns,
            "key": format!("fact-{i}"),
            "summary": format!("fact {i} of {ns}"),
        });
        if i == 5 {
            record["citations"] = serde_json::json!("not a list");
        }
        data += &(record.to_string() + "\n");
        if i == 2 {
            data += "not json\n";
        }
    }
    let out = import(&mut lore, &data);
    assert_eq!((out.read, out.report.written), (8, 8));
    // Each warning once, naming the line it is about in the input.
    let bad: Vec<_> = out
        .warnings
        .iter()
        .filter(|w| w.contains("not JSON"))
        .collect();
    assert_eq!(bad.len(), 1, "{:?}", out.warnings);
    assert!(bad[0].contains(":4"), "{bad:?}");
    let dropped: Vec<_> = (out.warnings.iter())
        .filter(|w| w.contains("citations dropped"))
        .collect();
    assert_eq!(dropped.len(), 1, "{:?}", out.warnings);
    assert!(dropped[0].contains(":7"), "{dropped:?}");

    let commits = dirs_per_commit(&repo);
    let imports: Vec<_> = commits
        .iter()
        .filter(|dirs| dirs.iter().any(|d| d == "decisions" || d == "learnings"))
        .collect();
    assert_eq!(imports.len(), 2, "{commits:?}");
    for dirs in imports {
        let namespaces: Vec<_> = dirs
            .iter()
            .filter(|d| *d == "decisions" || *d == "learnings")
            .collect();
        assert_eq!(namespaces.len(), 1, "a batch wrote to both: {dirs:?}");
    }
    // Within a batch, records keep their input order: the last of each namespace is there.
    assert_eq!(
        lore.get("learnings/fact-7").unwrap().summary,
        "fact 7 of learnings"
    );
}

#[test]
fn an_input_naming_a_memory_twice_is_written_in_input_order() {
    let repo = TestRepo::new();
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    let record = |key: &str, summary: &str| {
        serde_json::json!({"namespace": "decisions", "key": key, "summary": summary}).to_string()
            + "\n"
    };
    // The same key twice, far apart: grouped by directory they would share a batch, and the
    // first would win.
    let mut data = record("kk", "the first version");
    data += &jsonl(5);
    data += &record("kk", "the second version");
    let mut env = Env::new(&mut lore, WriteContext::default());
    let out = env
        .run(Import {
            format: "jsonl".into(),
            data: Some(data),
            batch: Some(2),
            replace: true,
            ..Import::default()
        })
        .unwrap();
    assert_eq!(out.read, 7);
    assert_eq!(
        lore.get("decisions/kk").unwrap().summary,
        "the second version",
        "{out:?}"
    );
    assert_eq!(out.report.replaced, 1, "{out:?}");
}
