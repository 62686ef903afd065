//! The index's FTS5 tokenizer (`porter unicode61 remove_diacritics 2`) in Rust, for the text it
//! answers for exactly: words of ASCII letters and digits, between ASCII characters that are not
//! letters or digits and the non-ASCII separators of [`is_plain_separator`]. Other text (a word
//! with a non-ASCII letter) is left to FTS5's own tokenizer: callers fall back to it when
//! [`each_term`] says no.
//!
//! Why: the postings, the novelty check and the query's stems all need FTS5's terms. Asking
//! FTS5 for them means inserting the text into a temporary FTS5 table and reading its
//! `fts5vocab` instances back — a seventh of an import and of the novelty check. The rules here
//! are unicode61's for ASCII (a letter or digit is a token character, every other ASCII
//! character separates, capitals fold to small) and SQLite's Porter stemmer (`fts5_porter.c`:
//! tokens of 3 to 64 bytes stemmed, others passed through), checked against FTS5 itself on a
//! whole vocabulary, on generated words and on every separator (`fts_terms_tests.rs`).

/// Calls `term` with each term of `text` in order, as the index's FTS5 tokenizer makes them,
/// and returns true; returns false, without calling `term`, when `text` holds a character this
/// module does not answer for.
pub fn each_term(text: &str, mut term: impl FnMut(&str)) -> bool {
    if !answers_for(text) {
        return false;
    }
    let mut word: Vec<u8> = Vec::with_capacity(32);
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() {
            word.push(b.to_ascii_lowercase());
            i += 1;
            continue;
        }
        if !word.is_empty() {
            emit(&mut word, &mut term);
        }
        // A separator: one byte, or a whole non-ASCII character (all of them separate here).
        i += if b < 0x80 { 1 } else { utf8_len(b) };
    }
    if !word.is_empty() {
        emit(&mut word, &mut term);
    }
    true
}

/// Whether every character of `text` is one [`each_term`] handles.
fn answers_for(text: &str) -> bool {
    text.is_ascii() || text.chars().all(|c| c.is_ascii() || is_plain_separator(c))
}

/// Non-ASCII characters that unicode61 takes as separators: Latin-1's signs and punctuation
/// (not its ordinal indicators, superscript digits, micro sign or fractions, which are letters
/// and numbers), general punctuation and spaces, arrows, mathematical and technical signs, box
/// drawing, shapes, dingbats (not the circled numbers), variation selectors and the emoji and
/// pictographs of Unicode 6.1. unicode61's tables are Unicode 6.1's: characters assigned since
/// (the gaps in the ranges here, `🤖` among them) are token characters to it. Each one is
/// checked against FTS5 in the tests.
pub(crate) fn is_plain_separator(c: char) -> bool {
    matches!(c as u32,
        0xA0..=0xA9 | 0xAB..=0xB1 | 0xB4 | 0xB6..=0xB8 | 0xBB | 0xBF | 0xD7 | 0xF7
        | 0x2000..=0x2064 | 0x206A..=0x206F
        | 0x2190..=0x23F3
        | 0x2500..=0x26FF | 0x2701..=0x2775 | 0x2794..=0x27BF
        | 0xFE00..=0xFE0F
        | 0x1F300..=0x1F320 | 0x1F330..=0x1F335 | 0x1F337..=0x1F37C | 0x1F380..=0x1F393
        | 0x1F3A0..=0x1F3C4 | 0x1F3C6..=0x1F3CA | 0x1F3E0..=0x1F3F0 | 0x1F400..=0x1F43E
        | 0x1F440 | 0x1F442..=0x1F4F7 | 0x1F4F9..=0x1F4FC | 0x1F500..=0x1F53D
        | 0x1F540..=0x1F543 | 0x1F550..=0x1F567 | 0x1F5FB..=0x1F640 | 0x1F645..=0x1F64F
        | 0x1F680..=0x1F6C5 | 0x1F700..=0x1F773)
}

/// The length of a UTF-8 sequence from its first byte.
fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        _ => 2,
    }
}

/// Stems the (lowercase ASCII) `word`, hands it to `term` and empties it.
fn emit(word: &mut Vec<u8>, term: &mut impl FnMut(&str)) {
    if (3..=PORTER_MAX_TOKEN).contains(&word.len()) {
        porter(word);
    }
    // FTS5 keeps (and looks up) at most this much of a term.
    word.truncate(MAX_TERM_BYTES);
    term(std::str::from_utf8(word).expect("ASCII"));
    word.clear();
}

/// Tokens longer than this many bytes are not stemmed (`FTS5_PORTER_MAX_TOKEN`).
const PORTER_MAX_TOKEN: usize = 64;

/// FTS5 cuts every term to this many bytes, in what it indexes and in queries
/// (`FTS5_MAX_TOKEN_SIZE`).
const MAX_TERM_BYTES: usize = 32_768;

/// SQLite's Porter stemmer, step by step as `fts5_porter.c` takes them, on a lowercase ASCII
/// word of 3 to [`PORTER_MAX_TOKEN`] bytes.
fn porter(w: &mut Vec<u8>) {
    step_1a(w);
    if step_1b(w) && !replace_first(w, STEP_1B2) {
        let n = w.len();
        let c = w[n - 1];
        if !is_vowel(c, false) && !matches!(c, b'l' | b's' | b'z') && n >= 2 && c == w[n - 2] {
            w.pop();
        } else if m_eq_1(w) && ends_cvc(w) {
            w.push(b'e');
        }
    }
    // Step 1c.
    let n = w.len();
    if w[n - 1] == b'y' && has_vowel(&w[..n - 1]) {
        w[n - 1] = b'i';
    }
    replace_first(w, STEP_2);
    replace_first(w, STEP_3);
    replace_first(w, STEP_4);
    // Step 5a.
    let n = w.len();
    if w[n - 1] == b'e' {
        let stem = &w[..n - 1];
        if m_gt_1(stem) || (m_eq_1(stem) && !ends_cvc(stem)) {
            w.pop();
        }
    }
    // Step 5b.
    let n = w.len();
    if n > 1 && w[n - 1] == b'l' && w[n - 2] == b'l' && m_gt_1(&w[..n - 1]) {
        w.pop();
    }
}

/// Step 1a: plurals.
fn step_1a(w: &mut Vec<u8>) {
    let n = w.len();
    if w[n - 1] != b's' {
        return;
    }
    if w[n - 2] == b'e' {
        let sses = n > 4 && w[n - 4] == b's' && w[n - 3] == b's';
        let ies = n > 3 && w[n - 3] == b'i';
        w.truncate(if sses || ies { n - 2 } else { n - 1 });
    } else if w[n - 2] != b's' {
        w.truncate(n - 1);
    }
}

/// Step 1b: `eed`, `ed`, `ing`. True when `ed` or `ing` was taken off.
fn step_1b(w: &mut Vec<u8>) -> bool {
    let n = w.len();
    if n > 3 && w.ends_with(b"eed") {
        if m_gt_0(&w[..n - 3]) {
            w.truncate(n - 1);
        }
        return false;
    }
    for suffix in [&b"ed"[..], b"ing"] {
        if n > suffix.len() && w.ends_with(suffix) {
            let stem = n - suffix.len();
            if has_vowel(&w[..stem]) {
                w.truncate(stem);
                return true;
            }
            return false;
        }
    }
    false
}

/// When a rule's condition holds of the stem left without the suffix.
#[derive(Clone, Copy)]
enum Condition {
    /// None (the suffix is always replaced).
    Always,
    /// `m > 0`.
    MGt0,
    /// `m > 1`.
    MGt1,
    /// `m > 1` and the stem ends in `s` or `t`.
    MGt1EndsSOrT,
}

/// A suffix, its replacement, and when it applies.
type Rule = (&'static [u8], &'static [u8], Condition);

/// Applies the first rule of `rules` whose suffix ends the word (and is shorter than it), if
/// its condition holds; later rules are not tried once one suffix matched. True when a rule of
/// [`Condition::Always`] matched (step 1b2's signal).
fn replace_first(w: &mut Vec<u8>, rules: &[Rule]) -> bool {
    let n = w.len();
    for &(suffix, replacement, condition) in rules {
        if n > suffix.len() && w.ends_with(suffix) {
            let stem = n - suffix.len();
            let holds = match condition {
                Condition::Always => true,
                Condition::MGt0 => m_gt_0(&w[..stem]),
                Condition::MGt1 => m_gt_1(&w[..stem]),
                Condition::MGt1EndsSOrT => matches!(w[stem - 1], b's' | b't') && m_gt_1(&w[..stem]),
            };
            if holds {
                w.truncate(stem);
                w.extend_from_slice(replacement);
            }
            return matches!(condition, Condition::Always);
        }
    }
    false
}

const STEP_1B2: &[Rule] = &[
    (b"at", b"ate", Condition::Always),
    (b"bl", b"ble", Condition::Always),
    (b"iz", b"ize", Condition::Always),
];

// In each list, rules whose suffixes share their next-to-last letter keep `fts5_porter.c`'s
// order: the first of them that ends the word is the only one tried.
const STEP_2: &[Rule] = &[
    (b"ational", b"ate", Condition::MGt0),
    (b"tional", b"tion", Condition::MGt0),
    (b"enci", b"ence", Condition::MGt0),
    (b"anci", b"ance", Condition::MGt0),
    (b"izer", b"ize", Condition::MGt0),
    (b"logi", b"log", Condition::MGt0),
    (b"bli", b"ble", Condition::MGt0),
    (b"alli", b"al", Condition::MGt0),
    (b"entli", b"ent", Condition::MGt0),
    (b"eli", b"e", Condition::MGt0),
    (b"ousli", b"ous", Condition::MGt0),
    (b"ization", b"ize", Condition::MGt0),
    (b"ation", b"ate", Condition::MGt0),
    (b"ator", b"ate", Condition::MGt0),
    (b"alism", b"al", Condition::MGt0),
    (b"iveness", b"ive", Condition::MGt0),
    (b"fulness", b"ful", Condition::MGt0),
    (b"ousness", b"ous", Condition::MGt0),
    (b"aliti", b"al", Condition::MGt0),
    (b"iviti", b"ive", Condition::MGt0),
    (b"biliti", b"ble", Condition::MGt0),
];

const STEP_3: &[Rule] = &[
    (b"ical", b"ic", Condition::MGt0),
    (b"ness", b"", Condition::MGt0),
    (b"icate", b"ic", Condition::MGt0),
    (b"iciti", b"ic", Condition::MGt0),
    (b"ful", b"", Condition::MGt0),
    (b"ative", b"", Condition::MGt0),
    (b"alize", b"al", Condition::MGt0),
];

const STEP_4: &[Rule] = &[
    (b"al", b"", Condition::MGt1),
    (b"ance", b"", Condition::MGt1),
    (b"ence", b"", Condition::MGt1),
    (b"er", b"", Condition::MGt1),
    (b"ic", b"", Condition::MGt1),
    (b"able", b"", Condition::MGt1),
    (b"ible", b"", Condition::MGt1),
    (b"ant", b"", Condition::MGt1),
    (b"ement", b"", Condition::MGt1),
    (b"ment", b"", Condition::MGt1),
    (b"ent", b"", Condition::MGt1),
    (b"ion", b"", Condition::MGt1EndsSOrT),
    (b"ou", b"", Condition::MGt1),
    (b"ism", b"", Condition::MGt1),
    (b"ate", b"", Condition::MGt1),
    (b"iti", b"", Condition::MGt1),
    (b"ous", b"", Condition::MGt1),
    (b"ive", b"", Condition::MGt1),
    (b"ize", b"", Condition::MGt1),
];

/// A vowel: `a e i o u`, and `y` after a consonant.
fn is_vowel(c: u8, after_consonant: bool) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u') || (after_consonant && c == b'y')
}

/// The length of the stem's first vowels-then-consonant run (`[C]VC`), or 0 when it has none.
fn gobble_vc(stem: &[u8], after_consonant: bool) -> usize {
    let mut consonant = after_consonant;
    let mut i = 0;
    while i < stem.len() {
        consonant = !is_vowel(stem[i], consonant);
        if !consonant {
            break;
        }
        i += 1;
    }
    i += 1;
    while i < stem.len() {
        consonant = !is_vowel(stem[i], consonant);
        if consonant {
            return i + 1;
        }
        i += 1;
    }
    0
}

/// `m > 0`: the stem holds a vowel followed by a consonant.
fn m_gt_0(stem: &[u8]) -> bool {
    gobble_vc(stem, false) > 0
}

/// `m > 1`.
fn m_gt_1(stem: &[u8]) -> bool {
    let n = gobble_vc(stem, false);
    n > 0 && gobble_vc(&stem[n..], true) > 0
}

/// `m = 1`.
fn m_eq_1(stem: &[u8]) -> bool {
    let n = gobble_vc(stem, false);
    n > 0 && gobble_vc(&stem[n..], true) == 0
}

/// `*o`: the stem ends consonant, vowel, consonant, the last not `w`, `x` or `y`.
fn ends_cvc(stem: &[u8]) -> bool {
    if matches!(stem.last(), Some(b'w' | b'x' | b'y') | None) {
        return false;
    }
    let mut mask = 0u8;
    let mut consonant = false;
    for &c in stem {
        consonant = !is_vowel(c, consonant);
        mask = ((mask << 1) | consonant as u8) & 0b111;
    }
    mask == 0b101
}

/// `*v*`: the stem holds a vowel (`y` counting as one anywhere but first).
fn has_vowel(stem: &[u8]) -> bool {
    stem.iter().enumerate().any(|(i, &c)| is_vowel(c, i > 0))
}

#[cfg(test)]
#[path = "fts_terms_tests.rs"]
mod tests;
