//! Tests of BM25 recall: the postings' scores and rankings against SQLite FTS5's over the same
//! memories, and the blocks the scorer passes over.
use super::stored_memory::{COLUMNS, StoredMemory};
use super::*;
use crate::model::{MemoryId, Status};

/// A seeded generator, so the test is reproducible, with the draws it needs.
struct Rng(fastrand::Rng);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.u64(..)
    }
    /// Zipf–Mandelbrot draw in 0..n (offset 20, as `lore bench`'s corpus): low indices are common, with a long tail.
    fn skewed(&mut self, n: usize) -> usize {
        let u = self.0.f64();
        let q = 20.0;
        (q * ((n as f64 + q) / q).powf(u) - q)
            .floor()
            .clamp(0.0, n as f64 - 1.0) as usize
    }
}

/// A word only FTS5's own tokenizer reads (folded to `resume`).
const NON_ASCII: &str = "Résumé";

fn word(i: usize) -> String {
    const SYL: [&str; 8] = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo"];
    // Five syllables: 32,768 distinct words, enough for the 20,000-word vocabulary.
    (0..5).map(|k| SYL[(i >> (3 * k)) % 8]).collect()
}

/// A memory of 40 words drawn from a 20,000-word vocabulary (low indices common), with one of
/// 50 tags; `i` spreads its update time over seven seconds (many ties). Every fifth body ends
/// in a word with a non-ASCII letter (tokenized by FTS5 itself, the others in Rust).
fn memory(rng: &mut Rng, i: i64, namespace: &str, status: Status) -> Memory {
    let mut words: Vec<String> = (0..40).map(|_| word(rng.skewed(20_000))).collect();
    if i % 5 == 0 {
        words.push(NON_ASCII.to_string());
    }
    Memory {
        body: words[5..].join(" "),
        tags: vec![word(rng.skewed(50))],
        created: jiff::Timestamp::from_second(1_800_000_000).unwrap(),
        ..Memory::bare(
            MemoryId::generate().unwrap(),
            namespace,
            &words[..5].join(" "),
            status,
            jiff::Timestamp::from_second(1_800_000_000 + i % 7).unwrap(),
        )
    }
}

/// Makes (again) a temporary FTS5 table holding every memory's summary, body and tags with the
/// tokenizer the postings follow, for [`recall_by_fts5`].
fn fts5_reference(conn: &Connection) {
    conn.execute_batch(
        "DROP TABLE IF EXISTS temp.reference_fts;
         CREATE VIRTUAL TABLE temp.reference_fts USING fts5 (
             summary, body, tags, tokenize = 'porter unicode61 remove_diacritics 2');
         INSERT INTO temp.reference_fts (rowid, summary, body, tags)
             SELECT rowid, summary, body, tags FROM memories;",
    )
    .unwrap();
}

/// BM25 recall as SQLite's FTS5 computes it over [`fts5_reference`]: `bm25()` with the
/// postings' weights, every match joined to its row and filtered, ties broken by recency, then
/// id.
fn recall_by_fts5(conn: &Connection, text: &str, filter: &ListFilter) -> Vec<Hit> {
    use rusqlite::types::Value;
    let expr = query::query_terms(text)
        .iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(" OR ");
    let mut args = vec![Value::Text(expr)];
    let filters = filter.where_clause(&mut args);
    let (ws, wb, wt) = query::BM25_WEIGHTS;
    let sql = format!(
        "SELECT bm25(reference_fts, {ws}, {wb}, {wt}) AS rank, m.rowid, {COLUMNS}
         FROM temp.reference_fts JOIN memories m ON m.rowid = reference_fts.rowid
         WHERE reference_fts MATCH ?1{filters}
         ORDER BY rank, m.updated DESC, m.id LIMIT {}",
        filter.limit.unwrap_or(10)
    );
    let mut stmt = conn.prepare(&sql).unwrap();
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args.iter()), |r| {
            Ok((
                r.get::<_, f64>(0)?,
                r.get::<_, i64>(1)?,
                StoredMemory::read(r, 2)?,
            ))
        })
        .unwrap();
    rows.map(|row| {
        let (rank, rowid, stored) = row.unwrap();
        Hit::new(rowid, stored.decode().unwrap(), -rank)
    })
    .collect()
}

/// The same hits in the same order, with the same scores to the last bit.
fn assert_same(fast: &[Hit], slow: &[Hit], what: &str) {
    let show = |h: &[Hit]| {
        h.iter()
            .map(|h| (h.memory.id.to_string(), h.score.to_bits()))
            .collect::<Vec<_>>()
    };
    assert_eq!(show(fast), show(slow), "{what}");
}

fn path(i: i64) -> String {
    let ns = if i % 3 == 0 { "decisions" } else { "learnings" };
    format!("{ns}/{i}.md")
}

/// The entries in the postings' tail, checked against the count kept in `meta`.
fn tail_len(index: &Index) -> i64 {
    let rows: i64 = index
        .conn
        .query_row("SELECT count(*) FROM postings_tail", [], |r| r.get(0))
        .unwrap();
    let kept = schema::read_meta(&index.conn, "postings_tail").unwrap();
    assert_eq!(kept.unwrap_or_else(|| "0".into()), rows.to_string());
    rows
}

/// In one change: removes memories `before`, writes memories `range` (alternating namespaces
/// and statuses), then removes memories `after`.
fn change(
    index: &mut Index,
    rng: &mut Rng,
    before: &[i64],
    range: std::ops::Range<i64>,
    after: &[i64],
) {
    let tx = index.conn.transaction().unwrap();
    let docs: i64 = schema::read_meta(&tx, "docs")
        .unwrap()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut writer = schema::Writer::new(&tx).unwrap();
    for i in before {
        writer.remove_memory(&path(*i)).unwrap();
    }
    for i in range {
        let ns = if i % 3 == 0 { "decisions" } else { "learnings" };
        let status = if i % 5 == 0 {
            Status::Archived
        } else {
            Status::Active
        };
        let m = memory(rng, i, ns, status);
        writer.insert_memory(&path(i), Oid::ZERO_SHA1, &m).unwrap();
    }
    for i in after {
        writer.remove_memory(&path(*i)).unwrap();
    }
    writer.finish().unwrap();
    let delta = writer.delta;
    drop(writer);
    schema::write_doc_count(&tx, docs + delta).unwrap();
    tx.commit().unwrap();
}

/// One to four query words for query `q`: common ones (the first few of the vocabulary), rare
/// ones, and mixes.
fn query_words(rng: &mut Rng, q: usize) -> Vec<String> {
    let n = 1 + (rng.next() % 4) as usize;
    (0..n)
        .map(|k| match (q + k) % 3 {
            0 => word((rng.next() % 4) as usize),
            _ => word(rng.skewed(20_000)),
        })
        .collect()
}

#[test]
fn postings_rank_exactly_like_fts5_with_filters_and_after_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut index, _) = Index::open(&dir.path().join("i.sqlite3")).unwrap();
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    change(&mut index, &mut rng, &[], 0..3000, &[]);
    assert_eq!(index.doc_count().unwrap(), 3000);
    let filters = |rng: &mut Rng| -> ListFilter {
        let limit = Some([1, 3, 10, 25, 40][(rng.next() % 5) as usize]);
        match rng.next() % 5 {
            0 => ListFilter {
                limit,
                ..ListFilter::default()
            },
            1 => ListFilter {
                namespace: Some("decisions".into()),
                limit,
                ..ListFilter::default()
            },
            2 => ListFilter {
                tag: Some(word(rng.skewed(50))),
                limit,
                ..ListFilter::default()
            },
            3 => ListFilter {
                statuses: vec![Status::Archived],
                limit,
                ..ListFilter::default()
            },
            _ => ListFilter::default(),
        }
    };
    let check = |index: &Index, rng: &mut Rng, round: &str| {
        fts5_reference(&index.conn);
        for q in 0..150 {
            let mut words = query_words(rng, q);
            if q % 7 == 0 {
                words.push(NON_ASCII.to_string());
            }
            let text = words.join(" ");
            let filter = filters(rng);
            let stems = query_stems::query_stems(&index.conn, &query::query_terms(&text)).unwrap();
            let fast = query::recall_scored(&index.conn, &stems, &filter)
                .unwrap()
                .expect("the postings answer");
            let slow = recall_by_fts5(&index.conn, &text, &filter);
            assert_same(&fast, &slow, &format!("{round}: {text} {filter:?}"));
            assert_same(
                &index.recall(&text, &filter).unwrap(),
                &slow,
                &format!("{round}, through recall: {text}"),
            );
            // Ties at the cut come most recent first, then by id.
            let order = |h: &Hit| {
                (
                    h.score.to_bits(),
                    std::cmp::Reverse(h.memory.updated),
                    h.memory.id.to_string(),
                )
            };
            assert!(
                fast.windows(2)
                    .all(|w| w[0].score > w[1].score || order(&w[0]) <= order(&w[1])),
                "{text}"
            );
        }
    };
    check(&index, &mut rng, "as built");
    // Removed memories (some row ids reused by the new ones), new memories, a removal of a
    // memory inserted in the same change.
    let removed: Vec<i64> = (0..3000).filter(|i| i % 11 == 0 || *i > 2950).collect();
    change(&mut index, &mut rng, &removed, 3000..3300, &[]);
    change(&mut index, &mut rng, &[], 3300..3302, &[3300]);
    let expected = 3000 - removed.len() as i64 + 301;
    assert_eq!(index.doc_count().unwrap(), expected);
    check(&index, &mut rng, "after changes");
    // Small changes (a write's) go to the tail: the last one did; then new memories, then
    // removals of one in the tail and of one in the blocks.
    let after_one = tail_len(&index);
    assert!(after_one > 0);
    change(&mut index, &mut rng, &[], 3302..3340, &[]);
    assert!(tail_len(&index) > after_one);
    let after_one = tail_len(&index);
    change(&mut index, &mut rng, &[3310, 5], 3340..3350, &[]);
    assert!(tail_len(&index) > after_one);
    // An edit of the newest memory (its row id, the largest, is reused) and of another in the
    // tail.
    change(&mut index, &mut rng, &[3349, 3305], 3349..3350, &[]);
    change(&mut index, &mut rng, &[3306], 3306..3307, &[]);
    check(&index, &mut rng, "with a tail");
    // A large change folds the tail into the blocks first.
    change(&mut index, &mut rng, &[3320], 3350..3650, &[]);
    assert_eq!(tail_len(&index), 0);
    let expected = expected + 38 + 10 - 2 - 1 + 300 - 1;
    assert_eq!(index.doc_count().unwrap(), expected);
    check(&index, &mut rng, "after the tail folded");
    // Blocks far apart (0 and 4) are read one by one, not as the range between them.
    change(&mut index, &mut rng, &[], 3650..5200, &[]);
    change(&mut index, &mut rng, &[7, 5100], 5200..5200, &[]);
    change(&mut index, &mut rng, &[], 5200..5500, &[]);
    let expected = expected + 1550 - 2 + 300;
    assert_eq!(index.doc_count().unwrap(), expected);
    check(&index, &mut rng, "after far removals");
    // Postings that fall behind the index (another count) are not used: recall says the index
    // needs rebuilding, and the check a catch-up makes finds the rows not intact.
    schema::write_meta(&index.conn, "postings_docs", &(expected - 1).to_string()).unwrap();
    assert_eq!(index.doc_count().unwrap(), expected);
    let kalo = ["kalo".to_string()];
    assert!(
        query::recall_scored(&index.conn, &kalo, &ListFilter::default())
            .unwrap()
            .is_none()
    );
    let refused = index.recall("kalo", &ListFilter::default()).unwrap_err();
    assert!(
        refused.to_string().contains("reindexing rebuilds"),
        "{refused}"
    );
    assert!(!schema::rows_intact(&index.conn).unwrap());
}

/// Each query word's stem is its own: a word the tokenizer drops (a lone vowel sign) beside one
/// it splits in two (the sign inside a word) come out as two terms between them, which must not
/// be taken as the two words' stems, shifting the next word's stem onto them.
#[test]
fn a_word_dropped_beside_a_word_split_shifts_no_stem() {
    let conn = Connection::open_in_memory().unwrap();
    let words = ["\u{93e}", "\u{915}\u{93e}\u{930}", "caching"].map(String::from);
    assert!(words.iter().all(|w| w.chars().all(char::is_alphanumeric)));
    let stems = super::query_stems::stem_each(&conn, &words).unwrap();
    assert_eq!(stems, [None, None, Some("cach".to_string())]);
    // A query searches the parts of a word split and nothing for a word dropped.
    let searched = super::query_stems::query_stems(&conn, &words).unwrap();
    assert_eq!(searched, ["\u{915}", "\u{930}", "cach"]);
    // Parts are searched once, and not again beside a word that is one of them.
    let words = [
        "\u{915}\u{93e}\u{930}",
        "\u{915}\u{93e}\u{930}\u{940}",
        "\u{915}",
    ]
    .map(String::from);
    let searched = super::query_stems::query_stems(&conn, &words).unwrap();
    assert_eq!(searched, ["\u{930}", "\u{915}"]);
}

/// A query word the tokenizer splits finds the memory holding it, through the postings of its
/// parts.
#[test]
fn a_word_split_by_the_tokenizer_is_found_by_its_parts() {
    let dir = tempfile::tempdir().unwrap();
    let (mut index, _) = Index::open(&dir.path().join("i.sqlite3")).unwrap();
    let at = jiff::Timestamp::from_second(1_800_000_000).unwrap();
    let texts = [
        "the \u{915}\u{93e}\u{930} is parked",
        "nothing here",
        "caching rules",
    ];
    let memories = texts.iter().enumerate().map(|(i, text)| {
        let m = Memory::bare(
            MemoryId::generate().unwrap(),
            "learnings",
            text,
            Status::Active,
            at,
        );
        (format!("learnings/{i}.md"), m)
    });
    insert_for_test(&mut index, memories);
    let hits = index
        .recall("\u{915}\u{93e}\u{930}", &ListFilter::default())
        .unwrap();
    let found: Vec<&str> = hits.iter().map(|h| h.memory.summary.as_str()).collect();
    assert_eq!(found, [texts[0]]);
}

/// Keeps the best `limit` scores as recall does, counting the blocks the scorer passed over.
struct Counting {
    best: super::best::BestWithTies,
    left_out: usize,
}

impl super::postings_scores::Scores for Counting {
    fn add(&mut self, row: i64, score: f64) {
        self.best.add(row, score);
    }
    fn floor(&mut self) -> f64 {
        self.best.floor()
    }
    fn left_out(&mut self) {
        self.left_out += 1;
        super::postings_scores::Scores::left_out(&mut self.best);
    }
}

/// A scorer keeping the best few is spared the blocks of row ids where no memory can reach its
/// floor, and keeps exactly (to the last bit, ties at the cut included) what it keeps when every
/// matching memory is scored.
#[test]
fn blocks_passed_over_below_the_floor_change_nothing_kept() {
    use super::best::BestWithTies;
    use super::postings_scores::scores;
    let dir = tempfile::tempdir().unwrap();
    let (mut index, _) = Index::open(&dir.path().join("i.sqlite3")).unwrap();
    let mut rng = Rng::new(0x51_7cc1_b727_220a);
    // Four memories in five also hold a word in most memories (its idf floored at 10⁻⁶).
    let mut memories = |range: std::ops::Range<i64>| -> Vec<(String, Memory)> {
        (range.map(|i| {
            let mut m = memory(&mut rng, i, "learnings", Status::Active);
            if i % 5 != 0 {
                m.body.push_str(" everywhere");
            }
            (path(i), m)
        }))
        .collect()
    };
    let (base, small) = (memories(0..12_270), memories(12_270..12_300));
    insert_for_test(&mut index, base);
    // A small change: its entries stay in the postings' tail, across the boundary of a block
    // (row ids 12,271–12,300; the last block holds tail entries only).
    let tx = index.conn.transaction().unwrap();
    let mut writer = schema::Writer::new(&tx).unwrap();
    for (path, m) in &small {
        writer.insert_memory(path, Oid::ZERO_SHA1, m).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    schema::write_doc_count(&tx, 12_300).unwrap();
    tx.commit().unwrap();
    let count = |sql: &str| -> i64 { index.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert!(tail_len(&index) > 0);
    assert_eq!(
        count("SELECT count(DISTINCT rowid >> 10) FROM postings_tail"),
        2
    );
    assert_eq!(count("SELECT count(*) FROM postings WHERE block = 12"), 0);
    let docs = index.doc_count().unwrap();
    let (mut passed_over, mut queries_spared) = (0, 0);
    for q in 0..120 {
        let mut words = query_words(&mut rng, q);
        if q % 3 == 1 {
            words.push("everywhere".into());
        }
        let stems = super::query_stems::stems(&index.conn, &words)
            .unwrap()
            .unwrap();
        let limit = [1, 10, 40, 0][q % 4];
        let mut every = Vec::new();
        assert!(scores(&index.conn, &stems, docs, &mut |r, s| every.push((r, s))).unwrap());
        let mut expected = BestWithTies::new(limit);
        every.iter().for_each(|&(r, s)| expected.add(r, s));
        let mut pruned = Counting {
            best: BestWithTies::new(limit),
            left_out: 0,
        };
        assert!(scores(&index.conn, &stems, docs, &mut pruned).unwrap());
        let bits = |(mut kept, _): (Vec<(i64, f64)>, bool)| {
            kept.sort_by_key(|p| p.0);
            kept.into_iter()
                .map(|(r, s)| (r, s.to_bits()))
                .collect::<Vec<_>>()
        };
        let (kept, all) = pruned.best.finish();
        assert_eq!(
            bits((kept, all)),
            bits(expected.finish()),
            "{words:?} limit {limit}"
        );
        assert!(
            pruned.left_out == 0 || !all,
            "a ranking with blocks left out is not whole"
        );
        if limit == 0 {
            assert_eq!(
                pruned.left_out, 0,
                "nothing is left out when every score is kept"
            );
        }
        passed_over += pruned.left_out;
        queries_spared += usize::from(pruned.left_out > 0);
    }
    // The comparison means something only if blocks were passed over often.
    assert!(
        queries_spared >= 15 && passed_over >= 50,
        "blocks passed over in {queries_spared} of 120 queries ({passed_over} in all)"
    );
}

/// A read through `in_one_snapshot` sees one state of the index however many statements it
/// runs: a catch-up another connection commits between two of them (here, the memory count
/// raised) is not seen half, which would show the postings' count disagreeing with the
/// index's, taken for damage.
#[test]
fn one_snapshot_does_not_see_a_commit_made_between_its_statements() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i.sqlite3");
    let (mut index, _) = Index::open(&path).unwrap();
    let at = jiff::Timestamp::from_second(1_800_000_000).unwrap();
    let memories = (0..3).map(|i| {
        let text = format!("note {i}");
        let m = Memory::bare(
            MemoryId::generate().unwrap(),
            "learnings",
            &text,
            Status::Active,
            at,
        );
        (format!("learnings/{i}.md"), m)
    });
    insert_for_test(&mut index, memories);
    let other = Connection::open(&path).unwrap();
    let counts = |conn: &Connection| {
        let docs = schema::read_doc_count(conn).unwrap();
        other
            .execute("UPDATE meta SET value = value + 1 WHERE name = 'docs'", [])
            .unwrap();
        (docs, schema::read_doc_count(conn).unwrap())
    };
    let (first, second) = query::in_one_snapshot(&index.conn, || Ok(counts(&index.conn))).unwrap();
    assert_eq!(first, second, "a commit was seen between two statements");
    // Outside one snapshot each statement sees the latest commit.
    let (first, second) = counts(&index.conn);
    assert_eq!(second, first + 1);
}
