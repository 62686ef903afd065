//! Capture against a real store: tiers, the novelty check, the per-session cap, and detection
//! that never panics on any text (the review queue under concurrent processes is in
//! `local_state.rs`).

use lore::capture::{Capture, Signal, Source, detect};
use lore::{ListFilter, Lore, Store, WriteContext};
use lore_testutils::TestRepo;
use proptest::prelude::*;

fn open(repo: &TestRepo) -> Lore {
    Lore::new(Store::discover(&repo.path()).unwrap())
}

fn ctx(session: &str) -> WriteContext {
    WriteContext {
        agent: Some("test".into()),
        session: Some(session.into()),
        ..WriteContext::default()
    }
}

fn signal(ns: &str, text: &str, confidence: f64) -> Signal {
    Signal {
        namespace: ns.into(),
        summary: text.into(),
        body: text.into(),
        confidence,
        source: Source::Tag,
    }
}

#[test]
fn tiers_novelty_and_the_session_cap() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let found = vec![
        signal("decisions", "Use WAL mode for the index database", 0.99),
        signal(
            "learnings",
            "FTS5 needs the bundled SQLite build here",
            0.95,
        ),
        signal(
            "blockers",
            "CI runner lacks network access to model hubs",
            0.97,
        ),
        signal("learnings", "Maybe the cache could be larger", 0.8),
        signal("decisions", "perhaps rename things", 0.4),
    ];
    let mut capture = Capture::new(&mut lore);
    capture.session_cap = 2;
    let report = capture.capture(&found, &ctx("s1")).unwrap();
    assert_eq!(report.written.len(), 2);
    assert_eq!(
        report.queued.len(),
        2,
        "the third AUTO one and the SUGGEST one"
    );
    let reasons: Vec<&str> = report.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "session cap reached: queued for review instead",
            "low confidence"
        ]
    );
    assert_eq!(capture.session_state("s1").auto_written, 2);

    // Another session has its own cap; repeats of stored memories and queued ones are dropped.
    let again = capture.capture(&found, &ctx("s2")).unwrap();
    assert!(again.written.is_empty(), "{:?}", again.written);
    let reasons: Vec<String> = again.skipped.iter().map(|s| s.reason.clone()).collect();
    assert!(reasons[0].starts_with("duplicate of "), "{reasons:?}");
    assert!(reasons[1].starts_with("duplicate of "), "{reasons:?}");
    assert_eq!(reasons[2], "already queued");
    assert_eq!(reasons[3], "already queued");
    assert_eq!(capture.pending().unwrap().len(), 2);
    let stored = lore.list(&ListFilter::default()).unwrap();
    assert_eq!(stored.len(), 2);
    assert!(stored.iter().all(|m| m.tags == ["captured"]));
}

/// A signal below the write tier that repeats a stored memory is dropped as a duplicate, not
/// queued for a reviewer to approve a second copy.
#[test]
fn a_suggested_repeat_of_a_stored_memory_is_not_queued() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let stored = signal("decisions", "Use WAL mode for the index database", 0.99);
    let mut capture = Capture::new(&mut lore);
    let first = capture.capture(&[stored], &ctx("s1")).unwrap();
    assert_eq!(first.written.len(), 1);
    let suggested = signal("decisions", "Use WAL mode for the index database", 0.8);
    let again = capture.capture(&[suggested], &ctx("s2")).unwrap();
    assert!(again.queued.is_empty(), "{:?}", again.queued);
    let reasons: Vec<&str> = again.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [format!("duplicate of {}", first.written[0].memory.id).as_str()]
    );
    assert!(capture.pending().unwrap().is_empty());
}

proptest! {
    #[test]
    fn detection_never_panics_and_summaries_fit(text in "\\PC{0,400}", marker in prop::sample::select(vec![">> decision ----\n", "[learned] ", "We decided to ", "----\n", "```\n", ""])) {
        let text = format!("{marker}{text}\n{marker}{text}");
        for s in detect(&text) {
            prop_assert!(s.summary.chars().count() <= 100);
            prop_assert!((0.0..=1.0).contains(&s.confidence));
            prop_assert!(!s.namespace.is_empty());
        }
    }
}
