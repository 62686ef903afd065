//! The transformer tier against an independent reference, and the static tier's tokenizer
//! against the reference tokenizer (needs `--features minilm` and `LORE_MINILM_DIR`).

// A test process reads its own settings (worker roles, case counts) from the environment;
// the library it tests does not.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "minilm")]

use std::path::PathBuf;

use lore::embed::minilm::MiniLm;
use lore::embed::{Embedder, StaticEmbedder, dot};

fn model_dir() -> PathBuf {
    let root = std::env::var_os("LORE_MINILM_DIR").expect(
        "set LORE_MINILM_DIR to an all-MiniLM-L6-v2 directory (scripts/fetch-minilm.sh fetches one)",
    );
    lore::embed::locate_model(&PathBuf::from(&root))
        .unwrap_or_else(|| panic!("no model under {}", PathBuf::from(root).display()))
}

#[derive(serde::Deserialize)]
struct Reference {
    sentences: Vec<Sentence>,
}

#[derive(serde::Deserialize)]
struct Sentence {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn reference() -> Reference {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/minilm-reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn transformer_vectors_match_the_independent_reference() {
    let model = MiniLm::load(&model_dir()).unwrap();
    let reference = reference();
    assert!(reference.sentences.len() >= 15);
    let texts: Vec<&str> = reference
        .sentences
        .iter()
        .map(|s| s.text.as_str())
        .collect();
    let vectors = model.embed(&texts).unwrap();
    for (s, v) in reference.sentences.iter().zip(&vectors) {
        assert_eq!(
            model.token_ids(&s.text).unwrap(),
            s.ids,
            "token ids of {:?}",
            s.text
        );
        let cosine = dot(v, &s.vector);
        assert!(cosine >= 0.999, "cosine {cosine} for {:?}", s.text);
    }
}

#[test]
fn static_tokenizer_agrees_with_the_reference_tokenizer() {
    let model = MiniLm::load(&model_dir()).unwrap();
    let fast = StaticEmbedder::builtin().unwrap();
    let mut texts: Vec<String> = reference().sentences.into_iter().map(|s| s.text).collect();
    let pairs = include_str!("../assets/calibration-pairs.tsv");
    texts.extend(
        pairs
            .lines()
            .filter(|l| !l.starts_with('#'))
            .flat_map(|l| l.split('\t').map(str::to_string).collect::<Vec<_>>()),
    );
    for text in &texts {
        let expected = model
            .tokenizer()
            .encode(text.as_str(), false)
            .unwrap()
            .get_ids()
            .to_vec();
        let got = fast.tokenizer().encode(text);
        // The reference truncates; compare what it kept.
        assert_eq!(
            &got[..expected.len().min(got.len())],
            &expected[..],
            "{text:?}"
        );
    }
}

#[test]
fn static_vectors_track_the_transformer() {
    let model = MiniLm::load(&model_dir()).unwrap();
    let fast = StaticEmbedder::builtin().unwrap();
    let pairs: Vec<(&str, &str)> = include_str!("../assets/calibration-pairs.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .collect();
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for (a, b) in &pairs {
        let full = model.embed(&[a, b]).unwrap();
        let cheap = fast.embed(&[a, b]).unwrap();
        xs.push(dot(&full[0], &full[1]) as f64);
        ys.push(dot(&cheap[0], &cheap[1]) as f64);
    }
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let syy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    let r = sxy / (sxx * syy).sqrt();
    assert!(
        r > 0.8,
        "static and transformer similarities correlate only at r = {r}"
    );
}
