//! The paths a memory names — its citations, and file paths written in its summary, body or
//! tags — kept in the index's `mentions` table, so a tool's use of a file finds the memories
//! about exactly that file (`src/a.rs` is not `src/data.rs`) by one indexed lookup.

use std::collections::BTreeSet;

use crate::model::Memory;

/// The longest path recorded (longer tokens are not paths worth matching).
const MAX_PATH: usize = 400;

/// The paths `m` names: every citation's, and every path-like word of its text.
pub fn paths_of(m: &Memory) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = m.citations.iter().map(|c| normalize(&c.path)).collect();
    for text in [m.summary.as_str(), m.body.as_str()]
        .into_iter()
        .chain(m.tags.iter().map(String::as_str))
    {
        out.extend(path_words(text));
    }
    out.retain(|p| !p.is_empty() && p.len() <= MAX_PATH);
    out
}

/// A path as an agent or a memory may write it, in the form the table keeps: `/` separators,
/// no leading `./`.
pub fn normalize(path: &str) -> String {
    let mut p = path.trim().replace('\\', "/");
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_string();
    }
    p
}

/// The words of `text` that look like file paths: they hold a `/` or end in an extension
/// (`name.ext`), once quotes, brackets, trailing punctuation and a `:line` suffix are cut off.
fn path_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '('
                    | ')'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '<'
                    | '>'
                    | ','
                    | ';'
                    | '"'
                    | '\''
                    | '|'
                    | '*'
            )
    })
    .filter_map(|word| {
        let word = word.trim_end_matches(['.', ':', '!', '?']);
        // `src/a.rs:12`, `src/a.rs:12-30`, `src/a.rs#L12`
        let word = match word.find('#') {
            Some(i) => &word[..i],
            None => word,
        };
        let word = match word.rsplit_once(':') {
            Some((head, tail))
                if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit() || c == '-') =>
            {
                head
            }
            _ => word,
        };
        let word = normalize(word);
        if word.contains("://") || !word.chars().any(char::is_alphanumeric) {
            return None;
        }
        let has_extension = word
            .rsplit('/')
            .next()
            .and_then(|name| name.rsplit_once('.'))
            .is_some_and(|(stem, ext)| {
                ext.len() <= 10
                    && ext.starts_with(|c: char| c.is_ascii_alphabetic())
                    && ext.chars().all(char::is_alphanumeric)
                    && !stem.is_empty()
            });
        (has_extension || (word.contains('/') && !word.ends_with('/'))).then_some(word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        path_words(text).collect()
    }

    #[test]
    fn path_words_are_cut_from_prose_and_markup() {
        assert_eq!(
            words("See `src/a.rs:12`, (docs/guide.md) and ./build.sh. Also crates/x/src/."),
            ["src/a.rs", "docs/guide.md", "build.sh"]
        );
        assert_eq!(
            words("src\\win\\path.rs#L3 https://example.com/x.html"),
            ["src/win/path.rs"]
        );
        assert!(words("e.g. version 1.2 is fine").iter().all(|w| w != "1.2"));
    }
}
