//! Tests of the Rust tokenizer against SQLite's FTS5 itself: a whole English vocabulary,
//! generated words and texts, and every non-ASCII character taken as a separator.

use proptest::prelude::*;
use rusqlite::Connection;

use super::{each_term, is_plain_separator};

/// A connection with an FTS5 table using the index's tokenizer, and its instances.
fn fts5() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
    )
    .unwrap();
    conn
}

/// The terms of `text` (see [`each_term`]), or `None` where FTS5 must be asked.
fn terms(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    each_term(text, |t| out.push(t.to_owned())).then_some(out)
}

/// FTS5's terms of `text`, in order.
fn fts5_terms(conn: &Connection, text: &str) -> Vec<String> {
    conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?1)", [text])
        .unwrap();
    let mut terms: Vec<(i64, String)> = conn
        .prepare("SELECT offset, term FROM v")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    conn.execute("DELETE FROM t", []).unwrap();
    terms.sort();
    terms.into_iter().map(|(_, t)| t).collect()
}

#[test]
fn a_whole_vocabulary_stems_as_fts5_stems_it() {
    // The built-in model's 30,000 word pieces: English words of every shape Porter's rules
    // name, word pieces (`##ing`), numbers and punctuation; as written and capitalised.
    let model = crate::embed::static_model::StaticEmbedder::builtin().unwrap();
    let words: Vec<String> = model
        .tokens()
        .filter(|t| t.is_ascii())
        .flat_map(|t| {
            let mut upper = t.to_owned();
            upper[..1].make_ascii_uppercase();
            [t.to_owned(), upper]
        })
        .collect();
    assert!(words.len() > 40_000, "{} words", words.len());
    let conn = fts5();
    let text = words.join(" ");
    let ours = terms(&text).unwrap();
    let theirs = fts5_terms(&conn, &text);
    assert_eq!(ours.len(), theirs.len());
    let differ: Vec<_> = ours.iter().zip(&theirs).filter(|(a, b)| a != b).collect();
    assert!(
        differ.is_empty(),
        "{} differ, first: {:?}",
        differ.len(),
        &differ[..5.min(differ.len())]
    );
}

#[test]
fn every_character_taken_as_a_separator_is_one_to_fts5() {
    let conn = fts5();
    let separators: Vec<char> = (0x80..0x20000u32)
        .filter_map(char::from_u32)
        .filter(|c| is_plain_separator(*c))
        .collect();
    assert!(separators.len() > 2_000, "{}", separators.len());
    for c in separators {
        let text = format!("ab{c}cd");
        assert_eq!(fts5_terms(&conn, &text), ["ab", "cd"], "U+{:04X}", c as u32);
        assert_eq!(terms(&text).unwrap(), ["ab", "cd"]);
    }
}

#[test]
fn text_with_other_characters_is_left_to_fts5() {
    // Letters, numbers, and characters assigned after Unicode 6.1 (token characters to FTS5).
    for text in [
        "café",
        "naïve",
        "日本語",
        "Ωmega",
        "x²",
        "µs",
        "½ cup",
        "ºC",
        "➀",
        "🤖 ok",
    ] {
        let mut called = false;
        assert!(!each_term(text, |_| called = true), "{text}");
        assert!(!called);
    }
    assert_eq!(terms("").unwrap(), Vec::<String>::new());
    assert_eq!(terms(" — → ✅ ").unwrap(), Vec::<String>::new());
}

#[test]
fn examples_from_the_rules() {
    let cases = [
        (
            "caresses ponies ties caress cats",
            "caress poni ti caress cat",
        ),
        (
            "feed agreed plastered bled motoring sing",
            "feed agre plaster bled motor sing",
        ),
        (
            "conflated troubled sized hopping tanned falling hissing fizzed",
            "conflat troubl size hop tan fall hiss fizz",
        ),
        ("failing filing happy sky", "fail file happi sky"),
        (
            "relational conditional rational valenci hesitanci digitizer",
            "relat condit ration valenc hesit digit",
        ),
        ("generalizations oscillators", "gener oscil"),
        (
            "Indexing SQLite's WAL-mode; 2026-11-29 x86_64",
            "index sqlite s wal mode 2026 11 29 x86 64",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(terms(text).unwrap().join(" "), expected, "{text}");
        assert_eq!(
            fts5_terms(&fts5(), text).join(" "),
            expected,
            "FTS5: {text}"
        );
    }
}

#[test]
fn words_at_the_stemming_and_term_size_limits_come_out_as_fts5_makes_them() {
    // Porter stems 3 to 64 bytes; FTS5 keeps at most 32,768 bytes of a term.
    let conn = fts5();
    for n in [2, 3, 4, 62, 63, 64, 65, 66, 32_767, 32_768, 32_769, 40_000] {
        let word = format!("b{}ting", "a".repeat(n - 5.min(n)));
        let word = &word[word.len() - n..];
        let text = format!("{word} {word}ational x");
        assert_eq!(terms(&text).unwrap(), fts5_terms(&conn, &text), "{n} bytes");
    }
}

/// Pieces words are built from: stems, and the suffixes Porter's steps look for.
const PIECES: &[&str] = &[
    "a", "e", "i", "o", "u", "y", "b", "c", "d", "l", "n", "r", "s", "t", "w", "x", "z", "ss",
    "ll", "tr", "ee", "oa", "at", "bl", "iz", "ed", "eed", "ing", "ies", "sses", "ational",
    "tional", "enci", "anci", "izer", "logi", "bli", "alli", "entli", "eli", "ousli", "ization",
    "ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "ical",
    "ness", "icate", "iciti", "ful", "ative", "alize", "al", "ance", "ence", "er", "ic", "able",
    "ible", "ant", "ement", "ment", "ent", "sion", "tion", "ion", "ou", "ism", "ate", "iti", "ous",
    "ive", "ize", "E", "Y", "ING", "7", "0",
];

/// Characters between words.
const BETWEEN: &[&str] = &[
    " ", "  ", "-", "_", "'", ".", ",\n", "\t", "/", "—", "→", "✅", "\u{a0}", "\0",
];

fn word() -> impl Strategy<Value = String> {
    proptest::collection::vec(0..PIECES.len(), 1..6)
        .prop_map(|ix| ix.into_iter().map(|i| PIECES[i]).collect())
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec((word(), 0..BETWEEN.len()), 1..12).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(w, b)| format!("{w}{}", BETWEEN[b]))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]
    #[test]
    fn generated_texts_tokenize_as_fts5_tokenizes_them(text in text()) {
        let conn = fts5();
        prop_assert_eq!(terms(&text).unwrap(), fts5_terms(&conn, &text));
    }

    #[test]
    fn long_and_arbitrary_ascii_tokenizes_as_fts5_tokenizes_it(text in "[ -~\n\t]{0,200}") {
        let conn = fts5();
        prop_assert_eq!(terms(&text).unwrap(), fts5_terms(&conn, &text));
    }
}
