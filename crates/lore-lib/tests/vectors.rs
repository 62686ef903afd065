//! The vector matrix cache: used when it matches the index, rebuilt when stale or damaged.

use std::sync::Arc;

use lore::index::{index_path, vectors_cache_path};
use lore::{ListFilter, Lore, NewMemory, Store, WriteContext};
use lore_testutils::{FakeEmbedder, TestRepo};

fn open(repo: &TestRepo) -> Lore {
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    lore.set_embedder(Some(Arc::new(FakeEmbedder::new(32))));
    lore
}

fn remember(lore: &Lore, summary: &str) {
    let new = NewMemory {
        namespace: "learnings".into(),
        summary: summary.into(),
        ..NewMemory::default()
    };
    lore.remember(&new, &WriteContext::default()).unwrap();
}

/// Writes `n` memories in one batch, memory `i`'s summary `summary(i)` and its namespace
/// "decisions" when `i` is a multiple of `decisions_every` (a selective namespace), else
/// "learnings".
fn fill(lore: &mut Lore, n: usize, decisions_every: usize, summary: impl Fn(usize) -> String) {
    let ctx = WriteContext::default();
    let memories: Vec<lore::Memory> = (0..n)
        .map(|i| {
            let ns = if i % decisions_every == 0 {
                "decisions"
            } else {
                "learnings"
            };
            let new = NewMemory {
                namespace: ns.into(),
                summary: summary(i),
                ..NewMemory::default()
            };
            lore.prepare(&new, &ctx).unwrap()
        })
        .collect();
    lore.write_batch(&memories, &lore::BatchWrite::import("fill"), &ctx)
        .unwrap();
}

fn top(lore: &mut Lore, q: &str) -> Vec<String> {
    lore.recall(q, &ListFilter::default())
        .unwrap()
        .into_iter()
        .map(|h| h.memory.summary)
        .collect()
}

#[test]
fn the_cache_follows_the_index_and_survives_damage() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    remember(&lore, "alpha beta gamma");
    remember(&lore, "delta epsilon zeta");
    assert_eq!(top(&mut lore, "gamma alpha")[0], "alpha beta gamma");
    let cache = vectors_cache_path(&index_path(lore.store()));
    assert!(cache.exists());

    // A new handle reads the cache; a write makes it stale, and the next search sees the new
    // memory.
    let mut second = open(&repo);
    assert_eq!(top(&mut second, "zeta delta")[0], "delta epsilon zeta");
    remember(&second, "eta theta iota");
    let mut third = open(&repo);
    assert_eq!(top(&mut third, "iota theta")[0], "eta theta iota");

    // Garbage in the cache file is ignored and replaced.
    std::fs::write(&cache, b"LOREVEC1 not really").unwrap();
    let mut fourth = open(&repo);
    assert_eq!(top(&mut fourth, "iota theta")[0], "eta theta iota");
    assert!(std::fs::read(&cache).unwrap().len() > 100);
}

#[test]
fn filtered_vector_search_equals_filtering_the_full_ranking() {
    use lore::index::{Fusion, RankOptions};
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    const WORDS: &[&str] = &[
        "cache", "deploy", "retry", "schema", "token", "index", "branch", "merge", "build",
        "queue", "parser", "config", "latency", "socket", "thread", "lock",
    ];
    // A selective namespace (5 memories) and a broad one.
    fill(&mut lore, 400, 80, |i| {
        let words: Vec<&str> = (0..6)
            .map(|k| WORDS[(i * 7 + k * 3 + i / 5) % 16])
            .collect();
        format!("{} {i}", words.join(" "))
    });
    // Vector order only: no BM25 weight, no recency.
    let options = RankOptions {
        fusion: Fusion::Score { lexical: 0.0 },
        half_life_days: None,
        collapse: false,
        ..RankOptions::default()
    };
    let query = "socket lock thread latency";
    let everything = lore
        .search(
            query,
            &ListFilter {
                limit: Some(400),
                ..ListFilter::default()
            },
            &options,
            false,
        )
        .unwrap();
    for ns in ["decisions", "learnings"] {
        let expected: Vec<String> = everything
            .iter()
            .filter(|h| h.memory.namespace.as_str() == ns)
            .take(3)
            .map(|h| h.memory.summary.clone())
            .collect();
        let filter = ListFilter {
            namespace: Some(ns.into()),
            limit: Some(3),
            ..ListFilter::default()
        };
        let got: Vec<String> = lore
            .search(query, &filter, &options, false)
            .unwrap()
            .into_iter()
            .map(|h| h.memory.summary)
            .collect();
        assert_eq!(got, expected, "{ns}");
        assert!(!got.is_empty());
    }
}

fn forget_first(lore: &mut Lore, summary: &str) {
    let hits = lore.recall(summary, &ListFilter::default()).unwrap();
    let hit = hits.iter().find(|h| h.memory.summary == summary).unwrap();
    lore.forget(hit.memory.id.as_str(), &WriteContext::default())
        .unwrap();
}

/// The cache's segments up to the index's vectors, from a new handle (a new process).
fn segments(repo: &TestRepo) -> Option<usize> {
    let mut lore = open(repo);
    lore.index().unwrap().vector_cache_segments().unwrap()
}

fn agrees(lore: &mut Lore) -> bool {
    lore.index().unwrap().vectors_agree_with_table().unwrap()
}

#[test]
fn the_cache_is_extended_per_write_and_equals_a_rebuild() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    for i in 0..4 {
        remember(&lore, &format!("seed memory {i} about caches"));
    }
    top(&mut lore, "caches");
    assert_eq!(segments(&repo), Some(1));
    let cache = vectors_cache_path(&index_path(lore.store()));
    let written = std::fs::metadata(&cache).unwrap().len();
    // Each write by a new process, each search by another: the file grows by a segment per
    // catch-up, and what it gives equals the table every time.
    for i in 0..10 {
        let mut writer = open(&repo);
        remember(&writer, &format!("written later {i} kappa lambda"));
        if i % 3 == 2 {
            forget_first(
                &mut writer,
                &format!("written later {} kappa lambda", i - 1),
            );
        }
        let mut reader = open(&repo);
        assert!(agrees(&mut reader), "after write {i}");
        assert!(segments(&repo).unwrap() > 1);
    }
    assert!(std::fs::metadata(&cache).unwrap().len() > written);
    // The long-lived handle brings its matrix forward too, over several catch-ups (removals
    // among them) applied at its next search.
    remember(&lore, "mu nu xi omicron");
    assert_eq!(top(&mut lore, "omicron xi")[0], "mu nu xi omicron");
    assert!(agrees(&mut lore));
    for i in 0..3 {
        remember(&lore, &format!("held {i} upsilon"));
        lore.index().unwrap();
    }
    forget_first(&mut lore, "held 1 upsilon");
    remember(&lore, "held 3 upsilon");
    assert!(agrees(&mut lore));
    assert_eq!(top(&mut lore, "held 3 upsilon")[0], "held 3 upsilon");
    // Many segments are folded into one by the next reader.
    for i in 0..20 {
        remember(&open(&repo), &format!("more {i} pi rho"));
        let mut reader = open(&repo);
        top(&mut reader, "rho pi");
        assert!(agrees(&mut reader));
    }
    assert!(segments(&repo).unwrap() <= 17);
}

#[test]
fn a_torn_or_damaged_cache_is_detected_and_rebuilt() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    for i in 0..6 {
        remember(&lore, &format!("torn test {i} sigma tau"));
    }
    top(&mut lore, "sigma");
    remember(&open(&repo), "one more upsilon phi");
    assert_eq!(segments(&repo), Some(2));
    let cache = vectors_cache_path(&index_path(lore.store()));
    let whole = std::fs::read(&cache).unwrap();

    // A crash mid-append: the last segment is cut short.
    std::fs::write(&cache, &whole[..whole.len() - 7]).unwrap();
    assert_eq!(segments(&repo), None);
    let mut reader = open(&repo);
    assert_eq!(top(&mut reader, "upsilon phi")[0], "one more upsilon phi");
    assert!(agrees(&mut reader));
    assert_eq!(segments(&repo), Some(1), "rebuilt as one segment");

    // A flipped byte inside the vectors.
    let mut damaged = std::fs::read(&cache).unwrap();
    let at = damaged.len() - 60;
    damaged[at] ^= 0x40;
    std::fs::write(&cache, &damaged).unwrap();
    assert_eq!(segments(&repo), None);
    let mut reader = open(&repo);
    assert!(agrees(&mut reader));
    assert_eq!(segments(&repo), Some(1));

    // Zeros where a segment should be (a file extended but its data never written).
    let mut zeroed = std::fs::read(&cache).unwrap();
    let len = zeroed.len();
    zeroed[len - 40..].fill(0);
    std::fs::write(&cache, &zeroed).unwrap();
    assert_eq!(segments(&repo), None);
    // A write onto a torn file appends nothing; readers still rebuild.
    remember(&open(&repo), "written onto a torn file chi psi");
    let mut reader = open(&repo);
    assert_eq!(
        top(&mut reader, "chi psi")[0],
        "written onto a torn file chi psi"
    );
    assert!(agrees(&mut reader));
}

#[test]
fn concurrent_writers_leave_a_cache_equal_to_the_table() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    remember(&lore, "first omega");
    top(&mut lore, "omega");
    let path = repo.path();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..8 {
                    let mut lore = Lore::new(Store::discover(&path).unwrap());
                    lore.set_embedder(Some(Arc::new(FakeEmbedder::new(32))));
                    remember(&lore, &format!("thread {t} write {i} omega"));
                    lore.recall("omega", &ListFilter::default()).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Every reader now, the long-lived one and new ones, sees the table's vectors.
    assert!(agrees(&mut lore));
    let mut reader = open(&repo);
    assert!(agrees(&mut reader));
    assert_eq!(reader.index().unwrap().doc_count().unwrap(), 33);
    assert!(segments(&repo).is_some());
}

#[test]
fn a_cache_that_cannot_be_written_is_said_not_dropped() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    remember(&lore, "retry the upload with backoff");
    let cache = vectors_cache_path(&index_path(lore.store()));
    // A directory where the cache file goes: the file cannot be renamed into place.
    std::fs::create_dir_all(cache.join("occupied")).unwrap();
    assert_eq!(top(&mut lore, "upload"), ["retry the upload with backoff"]);
    let warnings = lore.take_warnings();
    assert!(
        warnings.iter().any(|w| w.contains("vector cache")
            && w.contains("could not be written")
            && w.contains("every process will load")),
        "{warnings:?}"
    );
    // Searches still answer, from the vectors the index holds.
    let mut again = open(&repo);
    assert_eq!(top(&mut again, "upload"), ["retry the upload with backoff"]);
}

/// A store of four memories whose vector cache is written (one search), and its handle.
fn seeded(repo: &TestRepo) -> Lore {
    let mut lore = open(repo);
    for i in 0..4 {
        remember(&lore, &format!("seed memory {i} about sigma"));
    }
    top(&mut lore, "sigma");
    lore
}

/// `catch_ups` writes, each caught up by a new process appending a segment to the cache (past
/// the compaction point); returns the segments the cache then holds.
fn grow(repo: &TestRepo, catch_ups: usize) -> usize {
    for i in 0..catch_ups {
        let mut writer = open(repo);
        remember(&writer, &format!("later {i} tau phi"));
        writer.index().unwrap();
    }
    let grown = segments(repo).unwrap();
    assert!(grown > 17, "{grown}");
    grown
}

/// Appends part of a segment to the cache, as a catch-up killed while appending leaves it;
/// returns the file's length.
fn tear(cache: &std::path::Path) -> u64 {
    let mut bytes = std::fs::read(cache).unwrap();
    let tail = bytes[bytes.len() - 300..].to_vec();
    bytes.extend_from_slice(&tail[..200]);
    std::fs::write(cache, &bytes).unwrap();
    bytes.len() as u64
}

#[test]
fn a_deferring_handle_leaves_compaction_to_upkeep() {
    let repo = TestRepo::new();
    seeded(&repo);
    let before = grow(&repo, 24);
    // A deferring reader searches as any other, says upkeep is due (once), and leaves the file.
    let mut reader = open(&repo);
    reader.defer_upkeep();
    let expected = top(&mut reader, "tau phi");
    assert!(
        expected.iter().any(|s| s.contains("tau phi")),
        "{expected:?}"
    );
    assert!(agrees(&mut reader));
    assert_eq!(reader.take_wanted_upkeep(), [reader.store().common_dir()]);
    assert!(reader.take_wanted_upkeep().is_empty());
    assert_eq!(segments(&repo), Some(before));
    // One upkeep at a time: while another process runs one, this one returns at once.
    let cache = vectors_cache_path(&index_path(reader.store()));
    let running = lore::localstate::FileLock::exclusive(
        &cache.with_file_name("index.sqlite3.vectors.upkeep"),
    )
    .unwrap();
    assert!(!open(&repo).upkeep().unwrap());
    assert_eq!(segments(&repo), Some(before));
    drop(running);
    // The upkeep writes it again as one segment, equal to the table; a second has nothing to do.
    let mut upkeep = open(&repo);
    assert!(upkeep.upkeep().unwrap());
    assert_eq!(segments(&repo), Some(1));
    assert!(!open(&repo).upkeep().unwrap());
    let mut after = open(&repo);
    assert!(agrees(&mut after));
    assert_eq!(top(&mut after, "tau phi"), expected);
    assert!(after.take_wanted_upkeep().is_empty());
}

/// The index's files (the database, and its write-ahead log and shared memory when present),
/// read so that they can be put back.
fn saved_index(lore: &Lore) -> Vec<(std::path::PathBuf, Option<Vec<u8>>)> {
    let index = index_path(lore.store());
    ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let mut path = index.clone().into_os_string();
            path.push(suffix);
            let path = std::path::PathBuf::from(path);
            let bytes = std::fs::read(&path).ok();
            (path, bytes)
        })
        .collect()
}

fn put_back(saved: &[(std::path::PathBuf, Option<Vec<u8>>)]) {
    for (path, bytes) in saved {
        match bytes {
            Some(bytes) => std::fs::write(path, bytes).unwrap(),
            None => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

#[test]
fn a_segment_a_catch_up_left_without_committing_is_dropped_by_the_next_append() {
    let repo = TestRepo::new();
    let lore = seeded(&repo);
    let saved = saved_index(&lore);
    drop(lore);
    // A catch-up appends its segment, then its commit is lost (the index put back as it was
    // before): the process was killed between the two.
    let mut writer = open(&repo);
    remember(&writer, "the lost commit of rho");
    writer.index().unwrap();
    drop(writer);
    assert_eq!(segments(&repo), Some(2));
    put_back(&saved);
    // The next catch-up indexes the memory again, from the state the file's dead segment
    // follows: it drops that segment and appends its own.
    let mut after = open(&repo);
    after.index().unwrap();
    assert_eq!(segments(&repo), Some(2), "extended, not left for a rebuild");
    assert!(agrees(&mut after));
    assert_eq!(top(&mut after, "rho lost")[0], "the lost commit of rho");
    drop(after);
    // Killed while appending: part of a segment after the last committed one. The next
    // catch-up cuts it off too.
    tear(&vectors_cache_path(&index_path(
        &Store::discover(&repo.path()).unwrap(),
    )));
    let mut writer = open(&repo);
    remember(&writer, "after the torn append of upsilon");
    writer.index().unwrap();
    assert_eq!(segments(&repo), Some(3), "extended, not left for a rebuild");
    assert!(agrees(&mut writer));
}

#[test]
fn a_torn_segment_after_the_index_state_does_not_stop_compaction() {
    let repo = TestRepo::new();
    let lore = seeded(&repo);
    let before = grow(&repo, 20);
    // A catch-up killed while appending: part of a segment after the last committed one.
    let cache = vectors_cache_path(&index_path(lore.store()));
    let torn = tear(&cache);
    assert_eq!(segments(&repo), Some(before), "readers stop at their state");
    let mut reader = open(&repo);
    reader.defer_upkeep();
    let expected = top(&mut reader, "tau phi");
    assert_eq!(reader.take_wanted_upkeep().len(), 1);
    // The upkeep writes the file again as one segment, the torn part gone.
    assert!(open(&repo).upkeep().unwrap());
    assert_eq!(segments(&repo), Some(1));
    assert!(std::fs::metadata(&cache).unwrap().len() < torn);
    let mut after = open(&repo);
    after.defer_upkeep();
    assert_eq!(top(&mut after, "tau phi"), expected);
    assert!(after.take_wanted_upkeep().is_empty());
    assert!(!open(&repo).upkeep().unwrap());
}

/// The index's stored vectors: how many chunks, and whose embedder they are.
fn stored_vectors(repo: &TestRepo) -> (i64, String) {
    let lore = open(repo);
    let conn = rusqlite::Connection::open(index_path(lore.store())).unwrap();
    let chunks = conn
        .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
        .unwrap();
    let embedder = conn
        .query_row("SELECT value FROM meta WHERE name = 'embedder'", [], |r| {
            r.get(0)
        })
        .unwrap();
    (chunks, embedder)
}

fn lexical(repo: &TestRepo) -> Lore {
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    lore.set_embedder(None);
    lore
}

#[test]
fn a_lexical_read_leaves_another_tiers_vectors_and_a_lexical_write_drops_them() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    remember(&lore, "alpha beta gamma");
    remember(&lore, "delta epsilon zeta");
    assert_eq!(top(&mut lore, "gamma alpha")[0], "alpha beta gamma");
    let (chunks, embedder) = stored_vectors(&repo);
    assert!(chunks >= 2 && !embedder.is_empty(), "{chunks} {embedder:?}");

    // A lexical-only read (`--embedder none`) finds by BM25 and leaves the vectors as they are,
    // so the tier's next command has nothing to embed again.
    let mut reader = lexical(&repo);
    assert_eq!(top(&mut reader, "zeta delta")[0], "delta epsilon zeta");
    assert_eq!(stored_vectors(&repo), (chunks, embedder.clone()));
    let mut again = open(&repo);
    assert_eq!(top(&mut again, "gamma alpha")[0], "alpha beta gamma");
    assert!(agrees(&mut again));

    // A lexical write adds a row without vectors: the vectors are dropped, and the tier's next
    // handle embeds every memory again, the new one too.
    let writer = lexical(&repo);
    remember(&writer, "eta theta iota");
    let mut reader = lexical(&repo);
    assert_eq!(top(&mut reader, "iota")[0], "eta theta iota");
    assert_eq!(stored_vectors(&repo).0, 0);
    let mut embedding = open(&repo);
    assert_eq!(top(&mut embedding, "theta eta")[0], "eta theta iota");
    assert!(agrees(&mut embedding));
    assert_eq!(stored_vectors(&repo), (chunks + 1, embedder));
}

/// [`FakeEmbedder`] noting the thread each query is embedded on.
struct ThreadNoting {
    inner: FakeEmbedder,
    query_threads: std::sync::Mutex<Vec<std::thread::ThreadId>>,
}

impl lore::embed::Embedder for ThreadNoting {
    fn id(&self) -> &lore::embed::EmbedderId {
        self.inner.id()
    }

    fn embed(&self, texts: &[&str]) -> lore::Result<Vec<Vec<f32>>> {
        self.inner.embed(texts)
    }

    fn embed_queries(&self, texts: &[&str]) -> lore::Result<Vec<Vec<f32>>> {
        let mut threads = self.query_threads.lock().unwrap();
        threads.push(std::thread::current().id());
        self.inner.embed_queries(texts)
    }

    fn chunking(&self) -> lore::embed::ChunkPolicy {
        self.inner.chunking()
    }

    fn near_duplicate(&self) -> f32 {
        self.inner.near_duplicate()
    }

    fn relevance_floor(&self) -> f32 {
        self.inner.relevance_floor()
    }
}

#[test]
fn the_vector_search_beside_bm25_ranks_as_the_one_after_it() {
    use lore::index::RankOptions;
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let noting = Arc::new(ThreadNoting {
        inner: FakeEmbedder::new(32),
        query_threads: std::sync::Mutex::new(Vec::new()),
    });
    lore.set_embedder(Some(noting.clone()));
    const WORDS: &[&str] = &[
        "cache", "deploy", "retry", "schema", "token", "index", "branch", "merge", "build",
        "queue", "parser", "config", "latency", "socket", "thread", "lock", "vector", "sketch",
    ];
    fill(&mut lore, 600, 40, |i| {
        let words: Vec<&str> = (0..5)
            .map(|k| WORDS[(i * 5 + k * 7 + i / 3) % WORDS.len()])
            .collect();
        format!("{} {i}", words.join(" "))
    });
    let filters = [
        ListFilter::default(),
        ListFilter {
            namespace: Some("decisions".into()),
            limit: Some(5),
            ..ListFilter::default()
        },
        ListFilter {
            namespace: Some("learnings".into()),
            limit: Some(20),
            ..ListFilter::default()
        },
    ];
    // No recency: the two searches run at different instants.
    let options = RankOptions {
        half_life_days: None,
        ..RankOptions::default()
    };
    // Each ranking with the thread its query was embedded on.
    let ranked = |lore: &mut Lore, q: &str, f: &ListFilter, from: usize| {
        lore.index().unwrap().set_side_by_side_from(from);
        let hits = lore.search(q, f, &options, true).unwrap();
        assert!(
            hits.iter()
                .any(|h| h.explain.as_ref().is_some_and(|e| e.cosine.is_some())),
            "{q}: the vectors took part"
        );
        let ranking: Vec<_> = (hits.into_iter())
            .map(|h| (h.memory.summary, h.score.to_bits()))
            .collect();
        let thread = noting.query_threads.lock().unwrap().pop();
        (ranking, thread.expect("the query was embedded"))
    };
    let here = std::thread::current().id();
    for q in [
        "socket lock thread",
        "vector sketch 17",
        "deploy",
        "merge the config",
    ] {
        for f in &filters {
            let (after, on) = ranked(&mut lore, q, f, usize::MAX);
            assert_eq!(on, here, "{q}: embedded on the caller's thread");
            let (beside, on) = ranked(&mut lore, q, f, 0);
            assert_ne!(on, here, "{q}: embedded on a thread of its own");
            assert!(!after.is_empty(), "{q}");
            assert_eq!(beside, after, "{q} {f:?}");
        }
    }
}

/// `gc` packs the index's file once expiry has taken rows out of it, and the vector cache,
/// which names memories by row id, still answers for the memories left.
#[test]
fn gc_packs_the_index_and_the_vectors_still_answer() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let long_ago = WriteContext {
        now: Some("2025-01-01T00:00:00Z".parse().unwrap()),
        ..WriteContext::default()
    };
    let archived: Vec<lore::Memory> = (0..400)
        .map(|i| {
            let new = NewMemory {
                namespace: "learnings".into(),
                summary: format!("archived note {i} about subject{i}"),
                body: format!("a body long enough to take room, word{i} repeated word{i}"),
                status: Some(lore::Status::Archived),
                ..NewMemory::default()
            };
            lore.prepare(&new, &long_ago).unwrap()
        })
        .collect();
    lore.write_batch(&archived, &lore::BatchWrite::import("old"), &long_ago)
        .unwrap();
    for summary in ["kettle descaling schedule", "bicycle chain lubrication"] {
        remember(&lore, summary);
    }
    let asked = |lore: &mut Lore| {
        let hits =
            (lore.search("kettle", &ListFilter::default(), &Default::default(), true)).unwrap();
        let cosine = hits[0].explain.as_ref().and_then(|e| e.cosine);
        (hits[0].memory.summary.clone(), cosine.is_some())
    };
    let before = asked(&mut lore);
    assert_eq!(before, ("kettle descaling schedule".to_string(), true));

    let report = lore.gc(false, &WriteContext::default()).unwrap();
    assert_eq!(report.expired.len(), 400);
    let packed = report.index_packed.expect("the index was packed");
    assert!(
        packed.after_bytes < packed.before_bytes,
        "{packed:?}: the expired rows' room is still in the file"
    );
    let on_disk = std::fs::metadata(index_path(lore.store())).unwrap().len();
    assert_eq!(on_disk, packed.after_bytes);
    assert_eq!(asked(&mut lore), before);
    assert_eq!(asked(&mut open(&repo)), before);
}
