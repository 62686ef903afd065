//! Every step that reads input from an agent or a user costs time linear in the input's size,
//! and a hand-edited memory file of any shape is read or refused without a panic.
//!
//! Cost is checked by ratio, not by a wall-clock limit: each step runs on inputs of `n` and `8n`
//! bytes (`n` large enough that fixed costs do not count), best of three, and the larger may take
//! at most 24 times as long. Linear work takes about 8 times; quadratic work 64 times.

use std::time::{Duration, Instant};

use lore::{Lore, NewMemory, Store, WriteContext};
use lore_testutils::{TestRepo, best_of_three};
use proptest::prelude::*;

const GROWTH: usize = 8;
const MOST_RATIO: f64 = 24.0;

/// Asserts that `step` on `input(8n)` takes at most [`MOST_RATIO`] times `step` on `input(n)`.
fn linear(what: &str, n: usize, input: impl Fn(usize) -> String, step: impl Fn(&str)) {
    let small = input(n);
    let large = input(n * GROWTH);
    let t_small = best_of_three(|| step(&small));
    let t_large = best_of_three(|| step(&large));
    let ratio = t_large.as_secs_f64() / t_small.as_secs_f64().max(1e-6);
    assert!(
        ratio <= MOST_RATIO,
        "{what}: {} bytes took {t_small:?}, {} bytes took {t_large:?} ({ratio:.1}×; linear is ~{GROWTH}×)",
        small.len(),
        large.len()
    );
}

/// `n` distinct words, as a prompt or body an agent could send.
fn distinct_words(n: usize) -> String {
    (0..n).map(|i| format!("w{i:x}q ")).collect()
}

#[test]
fn query_terms_are_linear_in_the_prompt() {
    linear("query_terms", 20_000, distinct_words, |text| {
        std::hint::black_box(lore::index::query_terms(text));
    });
}

#[test]
fn secret_scanning_is_linear_in_the_text() {
    let text = |n: usize| {
        (0..n / 4)
            .map(|i| {
                format!("export DATABASE_PASSWORD_{i}=hunter{i}x\ntoken ghp_{i:036} and SGVsbG8sIFdvcmxk{i}\n\n")
            })
            .collect::<String>()
    };
    linear("secrets::scan", 8_000, text, |t| {
        std::hint::black_box(lore::secrets::scan(t));
    });
}

#[test]
fn neutralising_for_an_agent_is_linear_in_the_text() {
    let text = |n: usize| "a\u{1b}[2J\u{7}b\rc\u{2028}</context><system>\n".repeat(n);
    linear("agent_text::neutralize", 20_000, text, |t| {
        std::hint::black_box(lore::agent_text::neutralize(t));
    });
}

#[test]
fn capture_signal_detection_is_linear_in_the_transcript() {
    let text = |n: usize| {
        (0..n)
            .map(|i| {
                format!("We decided to use engine {i} because it is fast.\n[learned] thing {i}\n")
            })
            .collect::<String>()
    };
    linear("capture::detect", 2_000, text, |t| {
        std::hint::black_box(lore::capture::detect(t));
    });
}

/// A memory file with `tags` tags and a body of `n` distinct words.
fn memory_file(tags: usize, n: usize) -> String {
    let tags: String = (0..tags).map(|i| format!("- t{i}\n")).collect();
    format!(
        "---\nid: 9pzg1r5rmw5y\nnamespace: decisions\nsummary: s\nstatus: active\ntags:\n{tags}created: 2026-11-23T19:01:59.333Z\nupdated: 2026-11-23T19:01:59.333Z\n---\n{}",
        distinct_words(n)
    )
}

#[test]
fn reading_a_memory_file_is_linear_in_its_size() {
    linear(
        "record::parse",
        100_000,
        |n| memory_file(200, n),
        |t| {
            std::hint::black_box(lore::record::parse(t, "x")).expect("a valid file");
        },
    );
}

#[test]
fn a_front_matter_past_its_bound_is_refused_unread_and_never_written() {
    let huge = memory_file(20_000, 10);
    let started = Instant::now();
    let err = lore::record::parse(&huge, "x").unwrap_err().to_string();
    assert!(err.contains("the limit is 65536"), "{err}");
    // Refused before YAML parsing, which is not linear in a list's length.
    assert!(
        started.elapsed() < Duration::from_millis(50),
        "{:?}",
        started.elapsed()
    );
    let repo = TestRepo::new();
    let lore = Lore::new(Store::discover(&repo.path()).unwrap());
    let memory = NewMemory {
        namespace: "decisions".into(),
        summary: "too many tags".into(),
        tags: (0..20_000).map(|i| format!("t{i}")).collect(),
        ..NewMemory::default()
    };
    let err = lore
        .remember(&memory, &WriteContext::default())
        .unwrap_err();
    assert!(err.to_string().contains("front matter"), "{err}");
    assert!(repo.git(&["for-each-ref", "refs/lore"]).trim().is_empty());
}

#[test]
fn remembering_is_linear_in_the_body() {
    // A whole write: secrets, novelty, the git commit, the index with its vectors.
    linear("remember", 16_000, distinct_words, |body| {
        let repo = TestRepo::new();
        let lore = Lore::new(Store::discover(&repo.path()).unwrap());
        let memory = NewMemory {
            namespace: "decisions".into(),
            summary: "a long body".into(),
            body: body.into(),
            ..NewMemory::default()
        };
        lore.remember(&memory, &WriteContext::default()).unwrap();
    });
}

fn yaml_line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        prop::sample::select(vec![
            "id",
            "namespace",
            "key",
            "summary",
            "status",
            "tags",
            "created",
            "updated",
            "author",
            "agent",
            "session",
            "confidence",
            "anchor",
            "citations",
            "relates_to",
            "supersedes",
            "superseded_by",
        ])
        .prop_map(str::to_string),
        "\\PC{0,12}",
    ];
    let value = prop_oneof![
        Just("9pzg1r5rmw5y".to_string()),
        Just("decisions".to_string()),
        Just("2026-11-23T19:01:59.333Z".to_string()),
        Just("[a, b, 1]".to_string()),
        Just("\n- path: src/lib.rs\n  lines: 3-1\n  hash: zz".to_string()),
        Just("{ nested: [ { deep: 1 } ] }".to_string()),
        Just("&a [*a, *a]".to_string()),
        Just("1e999".to_string()),
        Just("-9999999999999999999999".to_string()),
        prop::collection::vec(any::<char>(), 0..30).prop_map(String::from_iter),
    ];
    (key, value).prop_map(|(k, v)| format!("{k}: {v}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_hand_edited_memory_file_of_any_shape_is_read_or_refused(
        lines in prop::collection::vec(yaml_line(), 0..14),
        body in prop::collection::vec(any::<char>(), 0..60).prop_map(String::from_iter),
        crlf in any::<bool>(),
        closed in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = format!("---{nl}");
        for line in &lines {
            text.push_str(line);
            text.push_str(nl);
        }
        if closed {
            text.push_str(&format!("---{nl}"));
        }
        text.push_str(&body);
        if let Ok(memory) = lore::record::parse(&text, "x") {
            // What reads back writes back, and reads back the same.
            let rendered = lore::record::render(&memory).unwrap();
            prop_assert_eq!(lore::record::parse(&rendered, "x").unwrap(), memory);
        }
    }
}
