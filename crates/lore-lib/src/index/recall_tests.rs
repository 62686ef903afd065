//! Tests of BM25 recall: the MaxScore shortcut and the postings' scores against FTS5 scoring
//! every match.
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

#[test]
fn pruned_recall_ranks_exactly_like_scoring_every_match() {
    let dir = tempfile::tempdir().unwrap();
    let (mut index, _) = Index::open(&dir.path().join("i.sqlite3")).unwrap();
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let memories = (0..3000).map(|i| {
        let m = memory(&mut rng, i, "learnings", Status::Active);
        (format!("learnings/{i}.md"), m)
    });
    insert_for_test(&mut index, memories);
    assert_eq!(index.doc_count().unwrap(), 3000);
    let mut pruned_taken = 0;
    for _ in 0..300 {
        let n = 2 + (rng.next() % 3) as usize;
        let q: Vec<String> = (0..n).map(|_| word(rng.skewed(20_000))).collect();
        let q = q.join(" ");
        let filter = ListFilter::default();
        let fast = query::recall_tuned(&index.conn, &q, &filter, 0).unwrap();
        let slow = index.recall_exhaustive(&q, &filter).unwrap();
        assert_eq!(fast.len(), slow.len(), "{q}");
        for (a, b) in fast.iter().zip(&slow) {
            assert!(
                (a.score - b.score).abs() < 1e-9,
                "{q}: {} vs {}",
                a.score,
                b.score
            );
        }
        let ids = |h: &[Hit]| {
            h.iter()
                .map(|h| (h.memory.id.to_string(), (h.score * 1e6).round() as i64))
                .collect::<std::collections::BTreeSet<_>>()
        };
        // Same memories at the same scores (ties at equal scores may come in either order).
        let cut = slow.last().map(|h| h.score).unwrap_or(0.0);
        let strict = |h: &[Hit]| {
            ids(&h
                .iter()
                .filter(|x| x.score > cut + 1e-9)
                .cloned()
                .collect::<Vec<_>>())
        };
        assert_eq!(strict(&fast), strict(&slow), "{q}");
        if query::recall_pruned_applies(&index.conn, &q, 10).unwrap() {
            pruned_taken += 1;
        }
    }
    // The comparison means something only if the pruned path ran often (an eighth of the
    // queries at least: a query whose terms are all rare is scored whole).
    assert!(
        pruned_taken * 8 > 300,
        "the pruned path ran for only {pruned_taken} of 300 queries"
    );
}

/// The same scores to the last bit, and the same hits in the same order; only when the
/// exhaustive query ranks inside FTS5 first (no filter) may the memories tied at the last
/// score differ: it keeps 16 more than the limit before breaking ties, the postings keep all.
fn assert_same(fast: &[Hit], slow: &[Hit], filtered: bool, what: &str) {
    let show = |h: &[Hit], cut: Option<u64>| {
        h.iter()
            .map(|h| {
                let bits = h.score.to_bits();
                let id = if Some(bits) == cut {
                    String::new()
                } else {
                    h.memory.id.to_string()
                };
                (id, bits)
            })
            .collect::<Vec<_>>()
    };
    let cut = if filtered {
        None
    } else {
        slow.last().map(|h| h.score.to_bits())
    };
    assert_eq!(show(fast, cut), show(slow, cut), "{what}");
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
        for q in 0..150 {
            let mut words = query_words(rng, q);
            if q % 7 == 0 {
                words.push(NON_ASCII.to_string());
            }
            let text = words.join(" ");
            let filter = filters(rng);
            let terms = query::query_terms(&text);
            let fast = query::recall_scored(&index.conn, &terms, &filter)
                .unwrap()
                .expect("the postings answer");
            let slow = query::recall_exhaustive(&index.conn, &text, &filter).unwrap();
            let filtered = query::restricts(&filter);
            assert_same(
                &fast,
                &slow,
                filtered,
                &format!("{round}: {text} {filter:?}"),
            );
            assert_same(
                &index.recall(&text, &filter).unwrap(),
                &slow,
                filtered,
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
    // Postings that fall behind the index (another count) are not used.
    schema::write_doc_count(&index.conn, expected + 1).unwrap();
    assert!(
        query::recall_scored(&index.conn, &["kalo".to_string()], &ListFilter::default())
            .unwrap()
            .is_none()
    );
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
