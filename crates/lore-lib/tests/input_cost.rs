//! A hand-edited memory file of any shape is read or refused without a panic, and a front
//! matter past its bound is refused before it is parsed. How each step over input grows with
//! its size is measured by `lore bench input-cost`, and its answers at size are checked in
//! `crates/lore-bench/tests/input_cost.rs`.

use lore::{Lore, NewMemory, Store, WriteContext};
use lore_testutils::TestRepo;
use proptest::prelude::*;

/// A memory file with `tags` tags (the first `bad` of them unparseable YAML) and a short body.
fn memory_file(tags: usize, bad: bool) -> String {
    let tags: String = (0..tags).map(|i| format!("- t{i}\n")).collect();
    // An unclosed flow sequence: YAML that no parser reads, so only a check made before
    // parsing can answer with the bound.
    let broken = if bad { "  [unclosed, \n" } else { "" };
    format!(
        "---\nid: 9pzg1r5rmw5y\nnamespace: decisions\nsummary: s\nstatus: active\ntags:\n{broken}{tags}created: 2026-11-23T19:01:59.333Z\nupdated: 2026-11-23T19:01:59.333Z\n---\nbody\n"
    )
}

#[test]
fn a_front_matter_past_its_bound_is_refused_unread_and_never_written() {
    // Within the bound, the broken YAML is what the reader says.
    let small = lore::record::parse(&memory_file(10, true), "x").unwrap_err();
    assert!(!small.to_string().contains("the limit is 65536"), "{small}");
    // Past it, the bound is said, so the text was refused before the YAML parser saw it.
    let huge = memory_file(20_000, true);
    assert!(huge.len() > 65_536);
    let err = lore::record::parse(&huge, "x").unwrap_err().to_string();
    assert!(err.contains("the limit is 65536"), "{err}");
    let err = lore::record::parse(&memory_file(20_000, false), "x")
        .unwrap_err()
        .to_string();
    assert!(err.contains("the limit is 65536"), "{err}");
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
