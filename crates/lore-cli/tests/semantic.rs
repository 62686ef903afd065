//! Semantic recall through the CLI with the built-in static embedder: vectors find what words
//! miss, the novelty check refuses repeats (but not different numbers), and the embedder can be
//! switched without mixing vectors.

mod common;

use common::{json, ok, run};
use lore_testutils::TestRepo;

fn ids(hits: &serde_json::Value) -> Vec<String> {
    hits.as_array()
        .unwrap()
        .iter()
        .map(|h| h["memory"]["summary"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn vectors_find_a_paraphrase_that_shares_no_words() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "remember",
            "Unbounded caching of parsed templates caused the memory leak",
        ],
    );
    ok(
        &repo,
        &["remember", "Deploys happen every Tuesday afternoon"],
    );
    ok(
        &repo,
        &["remember", "She planted tomatoes and basil in the garden"],
    );
    let query = [
        "recall",
        "--explain",
        "why",
        "did",
        "the",
        "server",
        "run",
        "out",
        "of",
        "RAM?",
    ];
    let hybrid = json(&repo, &query)["hits"].clone();
    assert_eq!(
        ids(&hybrid).first().map(String::as_str),
        Some("Unbounded caching of parsed templates caused the memory leak"),
        "{hybrid:#}"
    );
    let explain = &hybrid[0]["explain"];
    assert!(explain["cosine"].as_f64().unwrap() > 0.3, "{explain}");
    assert!(explain.get("bm25").is_none(), "no word matched: {explain}");
    // Lexical-only recall cannot find it.
    let mut lexical = vec!["--embedder", "none"];
    lexical.extend_from_slice(&query);
    assert!(ids(&json(&repo, &lexical)["hits"]).is_empty());
}

#[test]
fn repeats_are_refused_but_different_numbers_are_not() {
    let repo = TestRepo::new();
    let first = json(&repo, &["remember", "The API server listens on port 8080"]);
    let id = first["memory"]["id"].as_str().unwrap().to_string();
    // The same text (case and spacing aside): refused with the existing id, nothing written.
    let out = run(
        &repo,
        &["remember", "the API server  listens on port 8080"],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(&id) && stderr.contains("same text"),
        "{stderr}"
    );
    // A near-duplicate paraphrase is refused too.
    ok(
        &repo,
        &[
            "remember",
            "-n",
            "decisions",
            "Use PostgreSQL for the main datastore",
        ],
    );
    let out = run(
        &repo,
        &[
            "remember",
            "-n",
            "decisions",
            "We use PostgreSQL as the main datastore",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("similarity"));
    // Different numbers are different facts.
    ok(&repo, &["remember", "The API server listens on port 9090"]);
    // The same text in another namespace is not a repeat.
    ok(
        &repo,
        &[
            "remember",
            "-n",
            "decisions",
            "The API server listens on port 8080",
        ],
    );
    assert_eq!(
        json(&repo, &["list"])["memories"].as_array().unwrap().len(),
        4
    );

    // --force keeps both; --upsert supersedes the existing one.
    ok(
        &repo,
        &["remember", "--force", "The API server listens on port 8080"],
    );
    let upserted = json(
        &repo,
        &[
            "remember",
            "--upsert",
            "-n",
            "decisions",
            "We use PostgreSQL as the main datastore",
        ],
    );
    let old = upserted["superseded"]["memory"].clone();
    assert_eq!(old["summary"], "Use PostgreSQL for the main datastore");
    assert_eq!(old["status"], "superseded");
    assert_eq!(
        json(&repo, &["list", "--status", "active"])["memories"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn switching_embedders_re_embeds_and_never_mixes_vectors() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &["remember", "Retry network calls with exponential backoff"],
    );
    let status = json(&repo, &["status"]);
    assert!(
        status["index"]["embedder"]
            .as_str()
            .unwrap()
            .starts_with("static:")
    );
    let none = json(&repo, &["--embedder", "none", "status"]);
    assert_eq!(none["index"]["embedder"], "none");
    // Written while lexical-only: the memory must still get a vector once static is back.
    ok(
        &repo,
        &[
            "--embedder",
            "none",
            "remember",
            "Unbounded caching of parsed templates caused the memory leak",
        ],
    );
    let hits = json(&repo, &["recall", "why did the server run out of RAM?"])["hits"].clone();
    assert_eq!(
        ids(&hits).first().map(String::as_str),
        Some("Unbounded caching of parsed templates caused the memory leak")
    );
    let out = run(&repo, &["--embedder", "bogus", "status"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("none, static, minilm or e5"));
}

#[test]
fn verify_marks_memories_whose_cited_lines_changed() {
    let repo = TestRepo::new();
    repo.write(
        "src/net.rs",
        "fn a() {}\nconst RETRIES: u32 = 5;\nconst BACKOFF_MS: u64 = 100;\n",
    );
    repo.git(&["add", "."]);
    repo.git(&["commit", "-qm", "net"]);
    ok(
        &repo,
        &[
            "remember",
            "Network retries are capped at five",
            "--cite",
            "src/net.rs:2-3",
        ],
    );
    ok(
        &repo,
        &[
            "remember",
            "The net module starts with fn a",
            "--cite",
            "src/net.rs:1",
        ],
    );
    let clean = json(&repo, &["verify"]);
    assert_eq!(clean["checked"], 2);
    assert!(clean["stale"].as_array().unwrap().is_empty());

    // Lines moved down but unchanged: still fresh. The cited constant changed: stale.
    repo.write(
        "src/net.rs",
        "// header\nfn a() {}\nconst RETRIES: u32 = 3;\nconst BACKOFF_MS: u64 = 100;\n",
    );
    let report = json(&repo, &["verify"]);
    let stale = report["stale"].as_array().unwrap();
    assert_eq!(stale.len(), 1, "{report:#}");
    assert_eq!(stale[0]["summary"], "Network retries are capped at five");
    assert!(
        stale[0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("src/net.rs:2-3 changed")
    );
    let hits = json(&repo, &["recall", "network retries"])["hits"].clone();
    assert!(
        hits[0]["stale"].as_str().unwrap().contains("changed"),
        "{hits:#}"
    );
    let context = ok(&repo, &["context", "--query", "network retries"]);
    assert!(
        context.contains("*stale: src/net.rs:2-3 changed*"),
        "{context}"
    );

    // Restored: verify clears the mark.
    repo.write(
        "src/net.rs",
        "fn a() {}\nconst RETRIES: u32 = 5;\nconst BACKOFF_MS: u64 = 100;\n",
    );
    assert!(
        json(&repo, &["verify"])["stale"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let hits = json(&repo, &["recall", "network retries"])["hits"].clone();
    assert!(hits[0].get("stale").is_none());
    std::fs::remove_file(repo.path().join("src/net.rs")).unwrap();
    let gone = json(&repo, &["verify"]);
    assert_eq!(gone["stale"].as_array().unwrap().len(), 2);
}

#[test]
fn context_respects_budgets_and_formats() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "remember",
            "-n",
            "blockers",
            "Staging deploy blocked on credentials",
            "--body",
            "Ask ops for new ones.",
        ],
    );
    ok(
        &repo,
        &[
            "remember",
            "-n",
            "decisions",
            "Use SQLite with FTS5 for recall",
        ],
    );
    let ctx = json(
        &repo,
        &[
            "context",
            "--budget",
            "120",
            "--query",
            "deploy credentials",
        ],
    );
    assert!(ctx["tokens"].as_u64().unwrap() <= 120);
    assert_eq!(
        ctx["items"][0]["summary"],
        "Staging deploy blocked on credentials"
    );
    let xml = ok(&repo, &["context", "--format", "xml"]);
    assert!(xml.starts_with("<lore-context"));
    let tiny = ok(&repo, &["context", "--budget", "5"]);
    assert!(tiny.chars().count() <= 20);
}

#[test]
fn eval_longmemeval_reaches_the_evaluation_with_each_embedder_and_refuses_a_missing_file() {
    // The protocol itself is tested on the operation (lore-bench/tests/longmemeval.rs): here,
    // that the command line passes the file and the embedder through and prints the report.
    let repo = TestRepo::new();
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../lore-bench/tests/data/longmemeval-mini.json"
    );
    for embedder in ["none", "static"] {
        let report = json(
            &repo,
            &["--embedder", embedder, "eval", "longmemeval", file],
        );
        assert_eq!(report["questions"], 2, "{embedder}: {report:#}");
        assert!(
            report["embedder"].as_str().unwrap().starts_with(embedder),
            "{report:#}"
        );
    }
    let out = run(&repo, &["eval", "longmemeval", "/no/such/file.json"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn locomo_scores_evidence_per_category_and_prints_a_table() {
    let repo = TestRepo::new();
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../lore-bench/tests/data/locomo-mini.json"
    );
    let report = json(&repo, &["eval", "locomo", file, "--threads", "1"]);
    assert_eq!(report["conversations"], 2, "{report:#}");
    assert_eq!(report["questions"], 5);
    assert_eq!(report["skipped"], 2);
    assert_eq!(report["threads"], 1);
    let categories: Vec<&str> = report["by_category"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["category"].as_str().unwrap())
        .collect();
    assert_eq!(
        categories,
        ["1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"]
    );
    let text = ok(&repo, &["eval", "locomo", file]);
    assert!(text.contains("per category"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("4 single-hop") && l.split_whitespace().nth(2) == Some("2")),
        "{text}"
    );
    let text = ok(
        &repo,
        &[
            "eval",
            "longmemeval",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../lore-bench/tests/data/longmemeval-mini.json"
            ),
        ],
    );
    assert!(text.contains("per question type"), "{text}");
    let out = run(&repo, &["eval", "locomo", "/no/such/file.json"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_grown_vector_cache_is_written_again_in_the_background() {
    use common::upkeep::{cache_inode, grow_cache, hold_cache_lock, wait_for_rewrite};
    use std::time::{Duration, Instant};
    let repo = TestRepo::new();
    let first = grow_cache(&repo);
    // A recall finds one segment too many while this test holds the cache's lock: a rewrite
    // inline would wait on it, a rewrite in the background waits instead of the recall.
    let lock = hold_cache_lock(&repo);
    let mut recall = common::lore_command(&repo.path(), &repo.home(), &["recall", "deploy"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = recall.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = recall.kill();
            panic!("the recall waited for the cache to be written again");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    assert_eq!(cache_inode(&repo), first);
    // Let go: the background `lore upkeep` writes the file again as one segment.
    drop(lock);
    wait_for_rewrite(&repo, first);
    let done = json(&repo, &["upkeep"]);
    assert_eq!(done["vectors_compacted"], false, "{done}");
    let found = json(&repo, &["recall", "deploy Tuesday"]);
    assert!(found["hits"].as_array().unwrap().len() >= 10, "{found}");
}
