//! Tests of vector search at 100,000 memories: the sketch shortlist against the exact scan, and
//! a matrix whose components stay in the cache file (equal results, damage detected), and its
//! sketches kept exactly when it is written again.

use super::vectors::tests::{exact, matrix};
use super::vectors::{Probe, SHORTLIST_FROM, VectorMatrix};
use super::{sketch, vector_cache};
use crate::embed::{Quantized, normalize};

/// A seeded generator, so the tests are reproducible, with the draws they need.
struct Rng(fastrand::Rng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.u64(..)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        self.0.f32() * 2.0 - 1.0
    }

    /// Zipf-like draw in 0..n: low indices are common, with a long tail.
    fn skewed(&mut self, n: usize) -> usize {
        let u = self.0.f64();
        let q = 20.0;
        (q * ((n as f64 + q) / q).powf(u) - q)
            .floor()
            .clamp(0.0, n as f64 - 1.0) as usize
    }
}

const DIMS: usize = 256;
const VOCABULARY: usize = 5_000;

/// Texts embedded as a static embedder does (the normalised mean of their words' rows), over
/// word rows that share a common direction, as real token rows do.
struct Words {
    rows: Vec<Vec<f32>>,
}

impl Words {
    fn new(rng: &mut Rng) -> Words {
        let common: Vec<f32> = (0..DIMS).map(|_| rng.unit()).collect();
        let rows = (0..VOCABULARY)
            .map(|_| {
                (0..DIMS)
                    .map(|i| rng.unit() + 0.8 * common[i])
                    .collect::<Vec<f32>>()
            })
            .collect();
        Words { rows }
    }

    fn embed(&self, words: &[usize]) -> Vec<f32> {
        let mut v = vec![0f32; DIMS];
        for &w in words {
            for (x, r) in v.iter_mut().zip(&self.rows[w]) {
                *x += r;
            }
        }
        normalize(&mut v);
        v
    }

    fn text(&self, rng: &mut Rng, n: usize) -> Vec<usize> {
        (0..n).map(|_| rng.skewed(VOCABULARY)).collect()
    }
}

/// 100,000 memories of one to three chunks.
fn store(rng: &mut Rng, words: &Words) -> VectorMatrix {
    store_of(rng, words, 100_000)
}

/// `n` memories of one to three chunks.
fn store_of(rng: &mut Rng, words: &Words, n: i64) -> VectorMatrix {
    let (mut memory, mut values, mut scales) = (Vec::new(), Vec::new(), Vec::new());
    for row in 1..=n {
        for _ in 0..1 + rng.next() % 3 {
            let n = 8 + (rng.next() % 24) as usize;
            let q = Quantized::new(&words.embed(&words.text(rng, n)));
            memory.push(row);
            values.extend(q.values.iter().map(|&x| x as u8));
            scales.push(q.scale);
        }
    }
    matrix(DIMS, memory, values, scales)
}

fn overlap(a: &[(i64, f32)], b: &[(i64, f32)]) -> f64 {
    let b: std::collections::HashSet<i64> = b.iter().map(|x| x.0).collect();
    a.iter().filter(|x| b.contains(&x.0)).count() as f64 / a.len().max(1) as f64
}

#[test]
fn the_sketch_shortlist_finds_the_exact_top_ten_at_100k() {
    let mut rng = Rng::new(0x51f1_5eed_0bad_cafe);
    let words = Words::new(&mut rng);
    let m = store(&mut rng, &words);
    assert!(m.len() >= SHORTLIST_FROM, "the shortlist path must run");
    let (mut total, mut identical) = (0.0, 0);
    let queries = 60;
    for i in 0..queries {
        let probe = Probe::new(&words.embed(&words.text(&mut rng, 2 + i % 4)));
        let fast = m.search(&probe, 10, |_| true).unwrap();
        let slow = exact(&m, &probe, 10, |_| true);
        assert_eq!(fast.len(), 10);
        // A memory the shortlist keeps has its exact score.
        for (row, score) in &fast {
            assert_eq!(m.best(*row, &probe).unwrap(), Some(*score));
        }
        total += overlap(&fast, &slow);
        identical += usize::from(fast == slow);
    }
    let mean = total / queries as f64;
    assert!(mean >= 0.95, "top-10 overlap with the exact scan {mean:.3}");
    assert!(
        identical > queries / 2,
        "{identical} of {queries} identical"
    );
    // The same holds under a filter.
    let keep = |row: i64| row % 3 == 0;
    let probe = Probe::new(&words.embed(&words.text(&mut rng, 3)));
    let fast = m.search(&probe, 10, keep).unwrap();
    assert!(fast.iter().all(|(row, _)| keep(*row)));
    assert!(overlap(&fast, &exact(&m, &probe, 10, keep)) >= 0.8);
}

#[test]
fn components_left_in_the_file_give_the_same_results_and_damage_is_caught() {
    let mut rng = Rng::new(0x0dd_ba11_f00d);
    let words = Words::new(&mut rng);
    let m = store(&mut rng, &words);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite3.vectors");
    vector_cache::write_whole(&path, &m, 7, "fake").unwrap();
    let stored = vector_cache::read(&path, 7, DIMS, "fake", false)
        .expect("the file holds stamp 7")
        .matrix;
    assert!(
        !stored.is_resident() && stored.is_listed(),
        "a large matrix leaves its lists and components in the file"
    );
    assert_eq!(stored.len(), m.len());
    let probe = Probe::new(&words.embed(&words.text(&mut rng, 3)));
    let in_memory = m.search(&probe, 40, |_| true).unwrap();
    // Every list read: the same chunks as in memory, so the same answer.
    assert_eq!(
        stored.search_everywhere(&probe, 40, |_| true).unwrap(),
        in_memory
    );
    // Every chunk back in row-id order, each memory's chunks in theirs (the lists part them).
    let everything = stored.probed(probe.unit_vector(), true).unwrap();
    assert_eq!(everything.memory, m.memory);
    assert_eq!(everything.scales(), m.scales());
    let whole = vector_cache::read(&path, 7, DIMS, "fake", true)
        .unwrap()
        .matrix;
    assert_eq!(whole.memory, m.memory);
    assert_eq!(
        whole.resident_values().unwrap(),
        m.resident_values().unwrap()
    );
    let chunks_of = |r: i64| m.memory.iter().filter(|&&x| x == r).count();
    let several: Vec<i64> = in_memory
        .iter()
        .map(|x| x.0)
        .filter(|&r| chunks_of(r) > 1)
        .collect();
    assert!(
        several.len() > 5,
        "memories of several chunks among the results"
    );
    for &r in &several {
        assert_eq!(
            everything.head(r).unwrap(),
            m.head(r).unwrap(),
            "the head chunk of {r} read from the file"
        );
    }
    let top = in_memory[0].0;

    // A flipped byte in the best memory's components: the search reports damage.
    let super::vectors::Values::Stored(components) = &everything.values else {
        panic!("components stay in the file");
    };
    let at = components.offsets[everything.memory.partition_point(|&r| r < top)] as usize;
    let original = std::fs::read(&path).unwrap();
    let mut bytes = original.clone();
    bytes[at + 3] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let stored = vector_cache::read(&path, 7, DIMS, "fake", false)
        .unwrap()
        .matrix;
    assert!(stored.search_everywhere(&probe, 40, |_| true).is_err());
    // Reading every component finds it too.
    assert!(vector_cache::read(&path, 7, DIMS, "fake", true).is_none());

    // A flipped byte in a list's head (a memory id): every search reading that list reports
    // damage, and so does a whole read.
    let lists = vector_cache::read(&path, 7, DIMS, "fake", false)
        .unwrap()
        .matrix
        .lists
        .unwrap();
    let mut bytes = original;
    bytes[lists.at[0].head_at as usize + 2] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let stored = vector_cache::read(&path, 7, DIMS, "fake", false)
        .expect("the directory is intact")
        .matrix;
    assert!(stored.search_everywhere(&probe, 40, |_| true).is_err());
    assert!(vector_cache::read(&path, 7, DIMS, "fake", true).is_none());
}

/// Memories in one of `topics` topics, each topic drawing most of its words from its own part
/// of the vocabulary (texts on a subject share words, so their vectors gather).
fn topical_store(
    rng: &mut Rng,
    words: &Words,
    n: i64,
    topics: usize,
) -> (VectorMatrix, Vec<Vec<usize>>) {
    let share = VOCABULARY / topics;
    let draw = |rng: &mut Rng, topic: usize, len: usize| -> Vec<usize> {
        (0..len)
            .map(|_| match rng.next() % 4 {
                0 => rng.skewed(VOCABULARY),
                _ => topic * share + rng.skewed(share),
            })
            .collect()
    };
    let (mut memory, mut values, mut scales) = (Vec::new(), Vec::new(), Vec::new());
    for row in 1..=n {
        let topic = (rng.next() % topics as u64) as usize;
        for _ in 0..1 + rng.next() % 3 {
            let len = 8 + (rng.next() % 24) as usize;
            let q = Quantized::new(&words.embed(&draw(rng, topic, len)));
            memory.push(row);
            values.extend(q.values.iter().map(|&x| x as u8));
            scales.push(q.scale);
        }
    }
    let queries = (0..60).map(|i| draw(rng, i % topics, 2 + i % 4)).collect();
    (matrix(DIMS, memory, values, scales), queries)
}

#[test]
fn a_search_of_the_nearest_lists_finds_the_exact_neighbours_of_topical_texts() {
    let mut rng = Rng::new(0x0115_750f_1157);
    let words = Words::new(&mut rng);
    let (m, queries) = topical_store(&mut rng, &words, 60_000, 200);
    assert!(m.len() >= super::vector_lists::LISTED_FROM);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v");
    vector_cache::write_whole(&path, &m, 3, "fake").unwrap();
    let stored = vector_cache::read(&path, 3, DIMS, "fake", false)
        .unwrap()
        .matrix;
    let lists = stored.lists.as_ref().expect("written as lists");
    assert!(lists.at.len() > 20, "{} lists", lists.at.len());
    let (mut total, mut read) = (0.0, 0);
    for words_of_query in &queries {
        let probe = Probe::new(&words.embed(words_of_query));
        let listed = stored.search(&probe, 10, |_| true).unwrap();
        total += overlap(&listed, &exact(&m, &probe, 10, |_| true));
        read += lists.probed(probe.unit_vector(), false).len();
        // Searching the lists as read (unordered) finds what searching them in row-id order
        // finds, a filter included.
        let ordered = stored.probed(probe.unit_vector(), false).unwrap();
        assert_eq!(listed, ordered.search(&probe, 10, |_| true).unwrap());
        let odd = |row: i64| row % 2 == 1;
        assert_eq!(
            stored.search(&probe, 10, odd).unwrap(),
            ordered.search(&probe, 10, odd).unwrap()
        );
        // A filter leaving fewer memories than the shortlist: every chunk read is estimated.
        let rare = |row: i64| row % 500 == 7;
        let found = stored.search(&probe, 10, rare).unwrap();
        assert_eq!(found.len(), 10);
        assert_eq!(found, ordered.search(&probe, 10, rare).unwrap());
    }
    let mean = total / queries.len() as f64;
    assert!(mean >= 0.9, "top-10 overlap with the exact scan {mean:.3}");
    assert!(
        read * 2 < lists.at.len() * queries.len(),
        "a search reads a part of the lists ({read} list reads)"
    );
}

#[test]
fn lists_in_the_file_honour_later_removals_and_additions_and_are_written_again_as_they_were() {
    let mut rng = Rng::new(0xadd5_0ff5);
    let words = Words::new(&mut rng);
    let m = store_of(&mut rng, &words, 40_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v");
    vector_cache::write_whole(&path, &m, 5, "fake").unwrap();
    // The best memories of a query removed, and a memory (the query's own text) added under
    // the first one's row id, as SQLite reuses a removed row id, and another under a new one.
    let text = words.text(&mut rng, 3);
    let probe = Probe::new(&words.embed(&text));
    let before = m.search(&probe, 5, |_| true).unwrap();
    let removed: Vec<i64> = before.iter().map(|x| x.0).collect();
    let reused = removed[0];
    let q = Quantized::new(&words.embed(&text));
    let added = vector_cache::Added {
        memory: vec![reused, 50_000],
        scales: vec![q.scale, q.scale],
        values: q.values.iter().chain(&q.values).map(|&x| x as u8).collect(),
    };
    let change = vector_cache::Change {
        parent: 5,
        stamp: 6,
        removed: removed.clone(),
        added: vec![reused, 50_000],
    };
    assert!(vector_cache::append(&path, &change, &added, DIMS, "fake").unwrap());
    let stored = vector_cache::read(&path, 6, DIMS, "fake", false)
        .unwrap()
        .matrix;
    assert!(stored.is_listed());
    for found in [
        stored.search(&probe, 10, |_| true).unwrap(),
        stored.search_everywhere(&probe, 10, |_| true).unwrap(),
    ] {
        let firsts: Vec<i64> = found[..2].iter().map(|x| x.0).collect();
        assert!(
            firsts.contains(&50_000) && firsts.contains(&reused),
            "{found:?}"
        );
        assert!(found[0].1 > 0.99 && found[1].1 > 0.99, "{found:?}");
        assert!(
            found[2..].iter().all(|x| !removed.contains(&x.0)),
            "{found:?}"
        );
    }
    // The reused row id holds its new chunk only: the base's chunks of the memory it named
    // before are gone, as are the other removed memories'.
    let everything = stored.probed(probe.unit_vector(), true).unwrap();
    assert_eq!(
        everything.memory.iter().filter(|&&r| r == reused).count(),
        1
    );
    assert!(removed[1..].iter().all(|r| !everything.memory.contains(r)));
    // Chunks of memories later segments added are known without reading any list.
    assert!(stored.best(50_000, &probe).unwrap().is_some());

    // Read whole and written again: each chunk stays in its list, and the new one joins the
    // list nearest it.
    let whole = vector_cache::read(&path, 6, DIMS, "fake", true)
        .unwrap()
        .matrix;
    let partition = whole.partition.clone().expect("read from lists");
    assert_eq!(
        partition.list_of.iter().filter(|&&l| l == u32::MAX).count(),
        2
    );
    let again = dir.path().join("again");
    vector_cache::write_whole(&again, &whole, 6, "fake").unwrap();
    let rewritten = vector_cache::read(&again, 6, DIMS, "fake", true)
        .unwrap()
        .matrix;
    let kept = rewritten.partition.expect("written as lists");
    assert_eq!(kept.centroids.len(), partition.centroids.len());
    let moved = (0..whole.len())
        .filter(|&c| partition.list_of[c] != u32::MAX && partition.list_of[c] != kept.list_of[c])
        .count();
    assert_eq!(moved, 0, "chunks keep their lists");
    assert_eq!(rewritten.memory, whole.memory);
}

#[test]
fn a_matrix_written_again_whole_keeps_its_sketches_exactly() {
    let mut rng = Rng::new(0x5ce7_c4e5);
    let words = Words::new(&mut rng);
    let m = store_of(&mut rng, &words, 2_000);
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("a.vectors"), dir.path().join("b.vectors"));
    vector_cache::write_whole(&first, &m, 9, "fake").unwrap();
    let read = vector_cache::read(&first, 9, DIMS, "fake", true)
        .expect("the file holds stamp 9")
        .matrix;
    let values = read.resident_values().unwrap();
    assert_eq!(
        read.sketches,
        sketch::sketches(&values, read.scales(), DIMS, &read.center),
        "the sketches read back are those of the components around the file's center"
    );
    // Written again from what was read (its sketches reused, not recomputed): the same bytes.
    vector_cache::write_whole(&second, &read, 9, "fake").unwrap();
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap()
    );
}
