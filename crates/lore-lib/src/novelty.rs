//! What makes two texts the same memory: the specifics guard of the novelty check.
//!
//! Embeddings place "the API listens on port 8080" and "… port 9090" almost on top of each other,
//! yet they are different facts. Two texts count as near-duplicates only if they are similar
//! *and* carry the same specifics: numbers, names (capitalised words past a sentence start),
//! identifiers and paths (words with `_ . / : -` or inner capitals), quoted strings.

use std::collections::BTreeSet;

/// Number words: "ten percent" and "fifty percent" are different facts too.
const NUMBER_WORDS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "billion",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "half",
    "quarter",
    "double",
    "twice",
    "once",
    "none",
    "all",
    "never",
    "always",
];

/// The specific tokens of a text (lower-cased), as a set.
pub fn specifics(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '/');
        let ends_sentence = raw.ends_with(['.', '!', '?', ':']) || raw.ends_with(".\"");
        if !word.is_empty() {
            let has_digit = word.chars().any(|c| c.is_ascii_digit());
            let inner = word.trim_matches(|c: char| !c.is_alphanumeric());
            let code_like = inner.contains(['_', '.', '/', ':', '-', '@', '='])
                || inner.chars().skip(1).any(char::is_uppercase);
            let name = !sentence_start
                && word.chars().count() > 1
                && word.chars().next().is_some_and(char::is_uppercase);
            let number = NUMBER_WORDS.contains(&word.to_lowercase().as_str());
            if has_digit || code_like || name || number {
                out.insert(word.to_lowercase());
            }
        }
        sentence_start = ends_sentence;
    }
    for quoted in quoted_spans(text) {
        out.insert(format!("\"{}\"", quoted.to_lowercase()));
    }
    out
}

fn quoted_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for quote in ['"', '`'] {
        let parts: Vec<&str> = text.split(quote).collect();
        // Odd parts are inside quotes when a closing quote follows them.
        for i in (1..parts.len().saturating_sub(1)).step_by(2) {
            if !parts[i].is_empty() && parts[i].len() <= 200 {
                out.push(parts[i]);
            }
        }
    }
    out
}

/// Whether two texts could be the same memory: equal specifics.
pub fn same_specifics(a: &str, b: &str) -> bool {
    specifics(a) == specifics(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_differ() {
        assert!(!same_specifics(
            "The API server listens on port 8080",
            "The API server listens on port 9090"
        ));
        assert!(!same_specifics(
            "Deploy to the cluster run by Alice",
            "Deploy to the cluster run by Bob"
        ));
        assert!(!same_specifics(
            "Config lives in src/config.rs",
            "Config lives in src/settings.rs"
        ));
        assert!(!same_specifics(
            "Set `retries` to high",
            "Set `timeout` to high"
        ));
        assert!(!same_specifics(
            "The flag is enabled for ten percent of users",
            "The flag is enabled for fifty percent of users"
        ));
    }

    #[test]
    fn wording_alone_does_not() {
        assert!(same_specifics(
            "We chose PostgreSQL for storage.",
            "For storage we chose PostgreSQL"
        ));
        assert!(same_specifics(
            "How do I reset the staging database?",
            "Steps I use to reset the staging database"
        ));
    }
}
