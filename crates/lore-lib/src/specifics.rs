//! What makes two texts the same memory: the specifics guard of the novelty check.
//!
//! Embeddings place "the API listens on port 8080" and "… port 9090" almost on top of each other,
//! yet they are different facts. Two texts count as near-duplicates only if they are similar
//! *and* carry the same specifics: numbers, names (capitalised words past a sentence start),
//! identifiers and paths (words with `_ . / : -` or inner capitals), quoted strings.

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

/// The specific tokens of a text (lower-cased), in order: "writer 0 memory 1" and
/// "writer 1 memory 0" differ.
pub fn specifics(text: &str) -> Vec<String> {
    let mut out = Vec::new();
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
                out.push(word.to_lowercase());
            }
        }
        sentence_start = ends_sentence;
    }
    let mut quoted: Vec<String> = quoted_spans(text)
        .into_iter()
        .map(|q| format!("\"{}\"", q.to_lowercase()))
        .collect();
    quoted.sort();
    out.extend(quoted);
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

/// A text as the exact half of the novelty check compares it: case-folded, with every run of
/// white space made one space and none at either end.
pub fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// Whether two texts could be the same memory: the same specifics, in the same order (repeats
/// aside, and ignoring order when both are reworded around the same set).
pub fn same_specifics(a: &str, b: &str) -> bool {
    let (mut x, mut y) = (specifics(a), specifics(b));
    x.dedup();
    y.dedup();
    if x == y {
        return true;
    }
    // Rewording may reorder names ("PostgreSQL for storage" / "storage in PostgreSQL"), but
    // numbers keep their roles only in order.
    let numeric = |v: &[String]| -> Vec<String> {
        v.iter()
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()) || NUMBER_WORDS.contains(&w.as_str()))
            .cloned()
            .collect()
    };
    let (mut sx, mut sy) = (x.clone(), y.clone());
    sx.sort();
    sx.dedup();
    sy.sort();
    sy.dedup();
    sx == sy && numeric(&x) == numeric(&y)
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
    fn normalising_folds_case_and_spacing() {
        assert_eq!(
            normalized("  Use  Postgres\tFOR storage\n"),
            "use postgres for storage"
        );
        assert_ne!(normalized("Use Postgres."), normalized("Use Postgres"));
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
