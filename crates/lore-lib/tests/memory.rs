//! Memory operations against real repositories: writes retried on a new tip (batch and checked
//! writes, the latter across two processes), the duplicate rules, supersede and its history,
//! citations, and the schemas of what operations return.

// A test process reads its own settings (worker roles, case counts) from the environment;
// the library it tests does not.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lore::{Error, Key, LineRange, ListFilter, Lore, NewMemory, Novelty, Store, WriteContext};
use lore_testutils::{TestRepo, hermetic_env};

fn open(repo: &TestRepo) -> Lore {
    Lore::new(Store::discover(&repo.path()).expect("discover"))
}

fn new(ns: &str, summary: &str, body: &str) -> NewMemory {
    NewMemory {
        namespace: ns.into(),
        summary: summary.into(),
        body: body.into(),
        ..NewMemory::default()
    }
}

fn ctx() -> WriteContext {
    WriteContext {
        agent: Some("test-agent".into()),
        ..WriteContext::default()
    }
}

fn all(lore: &mut Lore) -> Vec<lore::Memory> {
    lore.list(&ListFilter::default()).expect("list")
}

/// Runs `write` from another handle once, between this handle's commit and its ref update.
fn interleave(lore: &mut Lore, repo: &TestRepo, write: impl FnOnce(Lore) + Send + 'static) {
    let other = Arc::new(Mutex::new(Some((
        Store::discover(&repo.path()).expect("discover"),
        write,
    ))));
    lore.store_mut()
        .set_before_ref_update(Some(Box::new(move || {
            if let Some((store, write)) = other.lock().expect("lock").take() {
                write(Lore::new(store));
            }
        })));
}

#[test]
fn a_batch_retried_on_a_new_tip_finds_ids_written_meanwhile() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.remember(&new("learnings", "seed", ""), &ctx())
        .unwrap();
    lore.index().unwrap();
    let imported = lore
        .prepare(&new("learnings", "imported memory", "Body."), &ctx())
        .unwrap();
    // Meanwhile another import brings the same memory under a key.
    let mut keyed = imported.clone();
    keyed.key = Some(Key::parse("imported-topic").unwrap());
    interleave(&mut lore, &repo, move |mut other| {
        let done = other
            .write_batch(&[keyed], &lore::BatchWrite::import("other import"), &ctx())
            .unwrap();
        assert_eq!(done.written, 1);
    });
    let report = lore
        .write_batch(
            std::slice::from_ref(&imported),
            &lore::BatchWrite::import("import"),
            &ctx(),
        )
        .unwrap();
    lore.store_mut().set_before_ref_update(None);
    assert_eq!(report.written, 0, "{report:?}");
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    assert!(
        report.conflicts[0].contains("learnings/imported-topic.md"),
        "{report:?}"
    );
    let copies = all(&mut lore)
        .iter()
        .filter(|m| m.id == imported.id)
        .count();
    assert_eq!(copies, 1, "the memory must live at one path only");
}

#[test]
fn an_upsert_retried_on_a_new_tip_supersedes_the_repeat_written_meanwhile() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.remember(&new("learnings", "seed", ""), &ctx())
        .unwrap();
    lore.index().unwrap();
    interleave(&mut lore, &repo, |other| {
        other
            .remember(&new("decisions", "Cache with Redis", ""), &ctx())
            .unwrap();
    });
    let done = lore
        .remember_checked(
            &new("decisions", "cache  with redis", ""),
            &ctx(),
            Novelty::Upsert,
        )
        .unwrap();
    lore.store_mut().set_before_ref_update(None);
    let old = done
        .superseded
        .expect("the repeat written meanwhile is superseded");
    assert_eq!(old.memory.summary, "Cache with Redis");
    let active: Vec<_> = all(&mut lore)
        .into_iter()
        .filter(|m| m.namespace.as_str() == "decisions" && m.status == lore::Status::Active)
        .collect();
    assert_eq!(active.len(), 1, "{active:?}");
}

const SAME_TEXT_WRITER: &str = "LORE_TEST_SAME_TEXT_WRITER";
const LANDED: i32 = 10;
const REFUSED: i32 = 11;

#[test]
fn two_processes_remembering_the_same_text_land_once() {
    if let Ok(spec) = std::env::var(SAME_TEXT_WRITER) {
        same_text_writer(&spec);
    }
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.remember(&new("learnings", "seed", ""), &ctx())
        .unwrap();
    lore.index().unwrap();
    let barrier = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let writers: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            let mut cmd = Command::new(&exe);
            cmd.args([
                "--exact",
                "two_processes_remembering_the_same_text_land_once",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(
                SAME_TEXT_WRITER,
                format!(
                    "{}\n{}\n{name}",
                    repo.path().display(),
                    barrier.path().display()
                ),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            for (k, v) in hermetic_env(&repo.home()) {
                cmd.env(k, v);
            }
            cmd.spawn().expect("starting a writer process")
        })
        .collect();
    let mut outcomes: Vec<i32> = writers
        .into_iter()
        .map(|w| {
            let out = w.wait_with_output().expect("waiting for a writer");
            let code = out.status.code().unwrap_or(-1);
            if code != LANDED && code != REFUSED {
                panic!(
                    "writer failed ({code}):\n{}\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            code
        })
        .collect();
    outcomes.sort();
    assert_eq!(
        outcomes,
        [LANDED, REFUSED],
        "one lands, the other is refused"
    );
    let copies = all(&mut lore)
        .iter()
        .filter(|m| m.summary == "Deploy with Helm")
        .count();
    assert_eq!(copies, 1);
}

/// One writer process: both writers meet at a barrier after checking the index and building
/// their commit, just before moving the ref, so both checks run before either write lands.
fn same_text_writer(spec: &str) -> ! {
    let parts: Vec<&str> = spec.lines().collect();
    let (repo, barrier, name) = (parts[0], PathBuf::from(parts[1]), parts[2].to_string());
    let mut lore = Lore::new(Store::discover(Path::new(repo)).expect("discover"));
    lore.store_mut()
        .set_before_ref_update(Some(Box::new(move || meet(&barrier, &name, 2))));
    let text = new("decisions", "Deploy with Helm", "Charts live in deploy/.");
    let code = match lore.remember_checked(&text, &ctx(), Novelty::Check) {
        Ok(_) => LANDED,
        Err(Error::Duplicate { .. }) => REFUSED,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    };
    std::process::exit(code)
}

/// Marks `name` as arrived in `dir` and waits until `count` have arrived.
fn meet(dir: &Path, name: &str, count: usize) {
    std::fs::write(dir.join(name), "").expect("marking arrival");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_dir(dir).expect("reading the barrier").count() < count {
        assert!(Instant::now() < deadline, "the other writer never arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn repeats_are_refused_whatever_their_case_spacing_or_added_body() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let check = |lore: &mut Lore, m: NewMemory| lore.remember_checked(&m, &ctx(), Novelty::Check);
    check(&mut lore, new("decisions", "Use Postgres for storage", "")).unwrap();
    check(
        &mut lore,
        new("decisions", "Deploy with Helm", "Charts live in deploy/."),
    )
    .unwrap();
    let repeats = [
        // The same summary with a body that adds nothing specific.
        new("decisions", "Use Postgres for storage", "It is reliable."),
        new("decisions", "use  postgres for  STORAGE", ""),
        new(
            "decisions",
            "use postgres  for storage",
            "We like it a lot.",
        ),
        // The same text, other case and spacing.
        new(
            "decisions",
            "deploy  with HELM",
            "charts  live in\n deploy/.",
        ),
        // The same summary without the body.
        new("decisions", "Deploy with Helm", ""),
    ];
    for m in repeats {
        match check(&mut lore, m.clone()) {
            Err(Error::Duplicate { .. }) => {}
            other => panic!("{:?} / {:?} was not refused: {other:?}", m.summary, m.body),
        }
    }
    // A body with other specifics is news; so is another namespace.
    for m in [
        new("decisions", "Use Postgres for storage", "On port 5433."),
        new("learnings", "Use Postgres for storage", ""),
    ] {
        check(&mut lore, m).unwrap();
    }
    assert_eq!(all(&mut lore).len(), 4);
}

#[test]
fn with_an_embedder_the_same_summary_over_another_plain_body_is_a_repeat() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.set_embedder(lore::embed::load(lore::embed::Tier::Static, None).unwrap());
    let check = |lore: &mut Lore, m: NewMemory| lore.remember_checked(&m, &ctx(), Novelty::Check);
    check(
        &mut lore,
        new(
            "decisions",
            "Cache sessions in Redis",
            "It is fast and simple.",
        ),
    )
    .unwrap();
    check(
        &mut lore,
        new("decisions", "Keep build logs for a week", "Disk is cheap."),
    )
    .unwrap();
    match check(
        &mut lore,
        new(
            "decisions",
            "cache sessions in  redis",
            "Because the team knows it well.",
        ),
    ) {
        Err(Error::Duplicate { how, .. }) => assert!(how.contains("same summary"), "{how}"),
        other => panic!("not refused: {other:?}"),
    }
    match check(&mut lore, new("decisions", "Cache sessions in Redis", "")) {
        Err(Error::Duplicate { .. }) => {}
        other => panic!("not refused: {other:?}"),
    }
    check(
        &mut lore,
        new(
            "decisions",
            "Cache sessions in Redis",
            "Version 7.2, port 6380.",
        ),
    )
    .unwrap();
}

/// The refusal says which rule matched: the same text, or the same summary whose body adds
/// nothing (an empty body adds nothing even against a stored body full of specifics).
#[test]
fn a_refusal_names_the_rule_and_an_empty_body_repeats_a_specific_one() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let check = |lore: &mut Lore, m: NewMemory| lore.remember_checked(&m, &ctx(), Novelty::Check);
    check(
        &mut lore,
        new(
            "decisions",
            "Cache sessions in Redis",
            "Version 7.2, port 6380.",
        ),
    )
    .unwrap();
    let how = |r: lore::Result<lore::Remembered>| match r {
        Err(Error::Duplicate { how, .. }) => how,
        other => panic!("not refused: {other:?}"),
    };
    let exact = how(check(
        &mut lore,
        new(
            "decisions",
            "cache sessions in REDIS",
            "version 7.2,  port 6380.",
        ),
    ));
    assert!(exact.starts_with("same text: "), "{exact}");
    let bodiless = how(check(
        &mut lore,
        new("decisions", "Cache sessions in Redis", ""),
    ));
    assert!(bodiless.starts_with("same summary: "), "{bodiless}");
    assert_eq!(all(&mut lore).len(), 1);
}

/// Without an embedder a bodiless memory is compared with its namespace's best matches for its
/// summary: a store where other namespaces and longer summaries match it better still finds the
/// repeat.
#[test]
fn a_bodiless_repeat_is_found_among_better_matches_of_other_namespaces_and_summaries() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.remember(
        &new(
            "decisions",
            "Use SQLite for the index",
            "WAL mode keeps readers off the writer's back; checkpoints run on close.",
        ),
        &ctx(),
    )
    .unwrap();
    // Shorter texts with the same words rank above it: in another namespace, and in its own
    // (more than a recall's default ten).
    let mut batch: Vec<NewMemory> = (0..25)
        .map(|_| new("learnings", "Use SQLite for the index", ""))
        .collect();
    batch.extend((0..12).map(|i| new("decisions", &format!("Use SQLite for the index {i}"), "")));
    for m in &batch {
        lore.remember(m, &ctx()).unwrap();
    }
    lore.index().unwrap();
    match lore.remember_checked(
        &new("decisions", "use sqlite for the INDEX", ""),
        &ctx(),
        Novelty::Check,
    ) {
        Err(Error::Duplicate { how, .. }) => assert!(how.starts_with("same summary"), "{how}"),
        other => panic!("not refused: {other:?}"),
    }
}

/// A fresh writer that meets a damaged row in the index rebuilds the index and still refuses a
/// repeat (the damage is not the write's failure).
#[test]
fn a_repeat_checked_against_a_damaged_index_is_refused_after_a_rebuild() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let m = new(
        "decisions",
        "Use Postgres for storage",
        "Version 16 on port 5433.",
    );
    lore.remember(&m, &ctx()).unwrap();
    lore.index().unwrap();
    let path = lore::index::index_path(lore.store());
    drop(lore);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let damaged = conn
        .execute("UPDATE memories SET record = X'00ff'", [])
        .unwrap();
    assert_eq!(damaged, 1);
    drop(conn);
    let mut fresh = open(&repo);
    match fresh.remember_checked(&m, &ctx(), Novelty::Check) {
        Err(Error::Duplicate { how, .. }) => assert!(how.starts_with("same text"), "{how}"),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(all(&mut fresh).len(), 1);
}

#[test]
fn a_superseded_memory_is_no_repeat() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let old = lore
        .remember(&new("decisions", "Use Postgres", ""), &ctx())
        .unwrap();
    lore.supersede(old.memory.id.as_str(), &new("", "Use SQLite", ""), &ctx())
        .unwrap();
    lore.remember_checked(
        &new("decisions", "Use Postgres", ""),
        &ctx(),
        Novelty::Check,
    )
    .unwrap();
}

#[test]
fn supersede_carries_what_the_new_memory_leaves_empty() {
    let repo = TestRepo::new();
    repo.write("src/db.rs", "fn connect() {}\n");
    let mut lore = open(&repo);
    let cited = lore.cite("src/db.rs", None).unwrap();
    let old = lore
        .remember(
            &NewMemory {
                namespace: "decisions".into(),
                key: Some("db-engine".into()),
                summary: "Use Postgres".into(),
                body: "Because of JSONB.".into(),
                tags: vec!["db".into()],
                confidence: Some(0.7),
                citations: vec![cited.clone()],
                ..NewMemory::default()
            },
            &ctx(),
        )
        .unwrap();
    let done = lore
        .supersede(
            "decisions/db-engine",
            &new("", "Use Postgres 16", ""),
            &ctx(),
        )
        .unwrap();
    let fresh = &done.new.memory;
    assert_eq!(fresh.body, "Because of JSONB.");
    assert_eq!(fresh.tags, ["db"]);
    assert_eq!(fresh.citations, [cited]);
    assert_eq!(fresh.confidence, Some(0.7));
    assert_eq!(fresh.supersedes.as_ref(), Some(&old.memory.id));
    // What is given replaces what the old memory had.
    let given = NewMemory {
        tags: vec!["storage".into()],
        body: "Version 16 for MERGE.".into(),
        ..new("", "Use Postgres 16.2", "")
    };
    let again = lore
        .supersede("decisions/db-engine", &given, &ctx())
        .unwrap();
    assert_eq!(again.new.memory.tags, ["storage"]);
    assert_eq!(again.new.memory.body, "Version 16 for MERGE.");
    assert_eq!(again.new.memory.citations, fresh.citations);
}

#[test]
fn history_after_supersede_follows_the_chain() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let first = lore
        .remember(
            &NewMemory {
                key: Some("db-engine".into()),
                ..new("decisions", "Use MySQL", "")
            },
            &ctx(),
        )
        .unwrap();
    lore.update(
        "decisions/db-engine",
        &lore::Patch {
            body: Some("For replication.".into()),
            ..lore::Patch::default()
        },
        &ctx(),
    )
    .unwrap();
    let second = lore
        .supersede("decisions/db-engine", &new("", "Use Postgres", ""), &ctx())
        .unwrap();
    let third = lore
        .supersede("decisions/db-engine", &new("", "Use SQLite", ""), &ctx())
        .unwrap();
    let (memory, versions) = lore.history("decisions/db-engine").unwrap();
    assert_eq!(memory.id, third.new.memory.id);
    let owners: Vec<&str> = versions.iter().map(|v| v.id.as_str()).collect();
    let (a, b, c) = (
        first.memory.id.as_str(),
        second.new.memory.id.as_str(),
        third.new.memory.id.as_str(),
    );
    // Newest memory first; each memory's versions newest first: the superseding mark, then
    // its own writes.
    assert_eq!(owners, [c, b, b, a, a, a], "{versions:#?}");
    for v in &versions {
        let m = v.memory.as_ref().expect("no deletions here");
        assert_eq!(m.id.as_str(), v.id);
    }
    assert_eq!(
        versions[1].memory.as_ref().unwrap().status,
        lore::Status::Superseded
    );
    assert_eq!(versions[5].memory.as_ref().unwrap().summary, "Use MySQL");
    assert!(lore.take_warnings().is_empty());
}

#[test]
fn a_citation_beyond_the_files_end_is_refused() {
    let repo = TestRepo::new();
    let text: String = (1..=60).map(|n| format!("line {n}\n")).collect();
    repo.write("src/sixty.rs", &text);
    let lore = open(&repo);
    match lore.cite("src/sixty.rs", Some(LineRange::parse("50-99").unwrap())) {
        Err(e @ Error::Invalid { .. }) => {
            assert!(e.to_string().contains("has 60 lines"), "{e}");
        }
        other => panic!("a range past the end was accepted: {other:?}"),
    }
    let cited = lore
        .cite("src/sixty.rs", Some(LineRange::parse("50-60").unwrap()))
        .unwrap();
    assert_eq!(cited.lines.unwrap().to_string(), "50-60");
}

#[test]
fn output_schemas_describe_ids_and_ranges_as_strings() {
    let schema = serde_json::to_value(schemars::schema_for!(lore::Remembered)).unwrap();
    let defs = &schema["$defs"];
    for name in ["MemoryId", "Namespace", "Key", "LineRange"] {
        assert_eq!(defs[name]["type"], "string", "{name}: {}", defs[name]);
    }
    assert!(schema["properties"]["memory"].is_object(), "{schema:#}");
    for output in [
        serde_json::to_value(schemars::schema_for!(lore::StoreStatus)).unwrap(),
        serde_json::to_value(schemars::schema_for!(lore::MemoryVersion)).unwrap(),
        serde_json::to_value(schemars::schema_for!(lore::VerifyReport)).unwrap(),
        serde_json::to_value(schemars::schema_for!(lore::Hit)).unwrap(),
    ] {
        assert_eq!(output["type"], "object", "{output:#}");
    }
}

#[test]
fn a_file_finds_the_memories_about_exactly_that_file() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "fn a() {}\n");
    repo.write("src/data.rs", "fn data() {}\n");
    let mut lore = open(&repo);
    let cite = |lore: &mut Lore, path: &str, summary: &str| {
        let cited = lore.cite(path, None).unwrap();
        lore.remember(
            &NewMemory {
                citations: vec![cited],
                ..new("learnings", summary, "")
            },
            &ctx(),
        )
        .unwrap();
    };
    cite(&mut lore, "src/data.rs", "The data module caches rows");
    cite(&mut lore, "src/a.rs", "The a module is the entry point");
    lore.remember(
        &new(
            "learnings",
            "Named in prose",
            "Edit `src/a.rs:12` carefully; data.rs too.",
        ),
        &ctx(),
    )
    .unwrap();
    lore.remember(&new("learnings", "Names nothing", "no files here"), &ctx())
        .unwrap();
    let about = |lore: &mut Lore, path: &str| -> Vec<String> {
        let mut found: Vec<String> = lore
            .mentioning(path, 10)
            .unwrap()
            .into_iter()
            .map(|m| m.summary)
            .collect();
        found.sort();
        found
    };
    // `a.rs` is inside `data.rs`: a substring match gave both.
    assert_eq!(
        about(&mut lore, "src/a.rs"),
        ["Named in prose", "The a module is the entry point"]
    );
    assert_eq!(
        about(&mut lore, "./src/data.rs"),
        ["The data module caches rows"]
    );
    assert_eq!(about(&mut lore, "data.rs"), ["Named in prose"]);
    assert!(about(&mut lore, "a.rs").is_empty());
    assert!(about(&mut lore, "src").is_empty());
}

/// The novelty check reads only short posting lists; a near-duplicate is still found whether
/// it shares rare words with its original or, like the original, holds only common ones.
#[test]
fn near_duplicates_are_found_among_many_memories_sharing_common_words() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.set_embedder(lore::embed::load(lore::embed::Tier::Static, None).unwrap());
    let ctx = ctx();
    let fillers = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
    ];
    let batch: Vec<_> = (0..300)
        .map(|i| {
            let m = new(
                "decisions",
                &format!("Cache the sqlite index for {}", fillers[i % fillers.len()]),
                &format!(
                    "The sqlite index cache is rebuilt when the schema changes; {} owns it.",
                    fillers[(i / 7) % fillers.len()]
                ),
            );
            lore.prepare(&m, &ctx).unwrap()
        })
        .collect();
    lore.write_batch(&batch, &lore::BatchWrite::import("fill"), &ctx)
        .unwrap();
    let rare = new(
        "decisions",
        "Shard the telemetry ingestion by tenant",
        "Kafka partitions keyed by tenant keep the ingestion ordered per customer.",
    );
    lore.remember_checked(&rare, &ctx, Novelty::Check).unwrap();
    let common = new(
        "decisions",
        "Rebuild the sqlite index cache when the schema changes",
        "",
    );
    lore.remember_checked(&common, &ctx, Novelty::Check)
        .unwrap();
    for repeat in [
        new(
            "decisions",
            "Shard telemetry ingestion per tenant",
            "Kafka partitions keyed by tenant keep ingestion ordered for each customer.",
        ),
        new(
            "decisions",
            "When the schema changes, rebuild the sqlite index cache",
            "",
        ),
    ] {
        match lore.remember_checked(&repeat, &ctx, Novelty::Check) {
            Err(Error::Duplicate { how, .. }) => assert!(how.contains("similarity"), "{how}"),
            other => panic!("{:?} not refused: {other:?}", repeat.summary),
        }
    }
}

/// Past the capped reads: when every word of a text is held by more memories than they read,
/// the check falls back to ranking by its longest words, and a near-duplicate is still refused.
#[test]
fn near_duplicates_of_text_whose_every_word_is_very_common_are_found() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.set_embedder(lore::embed::load(lore::embed::Tier::Static, None).unwrap());
    let ctx = ctx();
    // Every memory holds six of these eight words, so each word is held by about 1,650 of
    // them: far more than the capped reads read.
    let pool = [
        "rebuild", "sqlite", "index", "cache", "schema", "changes", "restart", "workers",
    ];
    let batch: Vec<_> = (0..2_200)
        .map(|i| {
            let (skip_a, skip_b) = (i % 8, (i / 8 + 1 + i % 8) % 8);
            let words: Vec<&str> = (0..8)
                .map(|k| pool[(k + i / 64) % 8])
                .filter(|w| *w != pool[skip_a] && *w != pool[skip_b])
                .collect();
            let m = new("decisions", &words.join(" "), "");
            lore.prepare(&m, &ctx).unwrap()
        })
        .collect();
    lore.write_batch(&batch, &lore::BatchWrite::import("fill"), &ctx)
        .unwrap();
    let repeat = new(
        "decisions",
        "Rebuild the sqlite index cache when the schema changes",
        "",
    );
    match lore.remember_checked(&repeat, &ctx, Novelty::Check) {
        Err(Error::Duplicate { how, .. }) => assert!(how.contains("similarity"), "{how}"),
        other => panic!("not refused: {other:?}"),
    }
}

/// A fresh writing process asks the index as it is when it is only a few writes behind: a
/// repeat of what another handle wrote meanwhile is still refused, and the index is left behind.
#[test]
fn a_repeat_of_a_memory_the_index_has_not_seen_is_refused_without_a_catch_up() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.set_embedder(lore::embed::load(lore::embed::Tier::Static, None).unwrap());
    let ctx = ctx();
    let seen = new(
        "decisions",
        "Use Postgres for storage",
        "Version 16 on port 5433.",
    );
    lore.remember_checked(&seen, &ctx, Novelty::Check).unwrap();
    lore.index().unwrap();
    let other = open(&repo);
    // A fresh handle, as a new writing process has.
    let mut lore = open(&repo);
    lore.set_embedder(lore::embed::load(lore::embed::Tier::Static, None).unwrap());
    let unseen = new(
        "decisions",
        "Shard the telemetry ingestion by tenant",
        "Kafka partitions keyed by tenant keep the ingestion ordered per customer.",
    );
    other.remember(&unseen, &ctx).unwrap();
    for repeat in [
        seen,
        unseen,
        new(
            "decisions",
            "Shard telemetry ingestion per tenant",
            "Kafka partitions keyed by tenant keep ingestion ordered for each customer.",
        ),
    ] {
        match lore.remember_checked(&repeat, &ctx, Novelty::Check) {
            Err(Error::Duplicate { .. }) => {}
            other => panic!("{:?} not refused: {other:?}", repeat.summary),
        }
    }
    let mut fresh = open(&repo);
    assert!(
        !fresh.status().unwrap().index.was_current,
        "the checks caught the index up"
    );
}

/// A handle finds its time zone only when a query is read for time, and then once: finding the
/// system's zone reads the whole time zone database, which a write must not pay for.
#[test]
fn the_time_zone_is_found_only_when_a_query_is_read_for_time() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let asked = Arc::new(Mutex::new(0));
    let counter = asked.clone();
    lore.set_time_zone_with(move || {
        *counter.lock().unwrap() += 1;
        jiff::tz::TimeZone::fixed(jiff::tz::offset(-11))
    });
    lore.remember(&new("decisions", "Keep the parser cache", ""), &ctx())
        .unwrap();
    assert_eq!(*asked.lock().unwrap(), 0, "a write does not find the zone");
    let now: jiff::Timestamp = "2026-11-25T03:00:00Z".parse().unwrap();
    assert!(lore.time_window("the parser cache", Some(now)).is_none());
    let window = lore.time_window("what broke yesterday", Some(now)).unwrap();
    // 03:00 UTC on the 25th is 16:00 on the 24th at UTC-11: yesterday is the 23rd there.
    assert_eq!(window.start.to_string(), "2026-11-23T11:00:00Z");
    lore.time_window("and last week", Some(now)).unwrap();
    assert_eq!(*asked.lock().unwrap(), 1, "found once, then kept");
}
