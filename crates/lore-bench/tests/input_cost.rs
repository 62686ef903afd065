//! Each step over an agent's input gives whole answers on the large inputs `lore bench
//! input-cost` times (nothing dropped or cut short at size), and the benchmark reports every
//! step at both sizes. How the time grows is the benchmark's to show, not a test's.

use lore::{Lore, NewMemory, Store, WriteContext};
use lore_bench::bench::input_cost::{
    BenchInputCost, GROWTH, control_text, distinct_words, memory_file, secret_text, transcript,
};
use lore_testutils::TestRepo;

#[test]
fn query_terms_keep_a_bounded_set_of_a_long_prompt() {
    let terms = lore::index::query_terms(&distinct_words(20_000 * GROWTH));
    // A query searches for at most its first 256 distinct words.
    assert_eq!(terms.len(), 256, "{:?}", &terms[..3]);
    assert_eq!(terms[0], "w0q");
}

#[test]
fn secret_scanning_finds_in_a_long_text_what_it_finds_in_its_parts() {
    // Findings never cross a line, so scanning the whole finds what scanning its parts does:
    // nothing is dropped or cut short at size.
    let text = secret_text(8_000 * GROWTH);
    let whole = lore::secrets::scan(&text).len();
    let units: Vec<&str> = text.split_inclusive("\n\n").collect();
    let parts: usize = units
        .chunks(units.len().div_ceil(GROWTH))
        .map(|part| lore::secrets::scan(&part.concat()).len())
        .sum();
    assert!(whole > 1_000, "{whole} findings");
    assert_eq!(whole, parts);
}

#[test]
fn neutralising_a_long_text_is_neutralising_each_of_its_lines() {
    let line = control_text(1);
    let text = control_text(20_000 * GROWTH);
    let out = lore::agent_text::neutralize(&text);
    assert!(
        !out.chars()
            .any(|c| (c.is_control() && c != '\n') || c == '\u{2028}'),
        "a control character is left"
    );
    assert_eq!(
        out,
        lore::agent_text::neutralize(&line).repeat(20_000 * GROWTH)
    );
}

#[test]
fn capture_detects_every_signal_of_a_long_transcript() {
    let n = 2_000 * GROWTH;
    let found = lore::capture::detect(&transcript(n));
    assert!(found.len() >= n, "{} signals of {n} lines", found.len());
}

#[test]
fn a_long_memory_file_reads_whole() {
    let n = 100_000 * GROWTH;
    let memory = lore::record::parse(&memory_file(200, n), "x").expect("a valid file");
    assert_eq!(memory.tags.len(), 200);
    assert_eq!(memory.body.split_whitespace().count(), n);
}

#[test]
fn a_long_body_is_remembered_whole() {
    let repo = TestRepo::new();
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    let body = distinct_words(16_000 * GROWTH);
    let memory = NewMemory {
        namespace: "decisions".into(),
        summary: "a long body".into(),
        body: body.clone(),
        ..NewMemory::default()
    };
    let written = lore.remember(&memory, &WriteContext::default()).unwrap();
    let back = lore.get(written.memory.id.as_str()).unwrap();
    assert_eq!(back.body.trim_end(), body.trim_end());
}

#[test]
fn the_benchmark_reports_every_step_at_both_sizes() {
    let repo = TestRepo::new();
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    let work = tempfile::tempdir().unwrap();
    let report = lore::ops::Env::new(&mut lore, WriteContext::default())
        .run(BenchInputCost {
            work_dir: work.path().to_path_buf(),
        })
        .unwrap();
    let steps: Vec<&str> = report.rows.iter().map(|r| r.step.as_str()).collect();
    assert_eq!(steps.len(), 6, "{steps:?}");
    for r in &report.rows {
        assert!(r.large_bytes >= r.small_bytes * (GROWTH - 1), "{r:?}");
        assert!(r.small_ms > 0.0 && r.large_ms > 0.0, "{r:?}");
        assert!(
            (r.ratio - r.large_ms / r.small_ms).abs() < 1e-6 * r.ratio.max(1.0),
            "{r:?}"
        );
    }
}
