//! Progress summaries and `commit.md`: the summary composed after a commit when none is given,
//! and the paper's three-block entry each commit appends.

use super::{Entry, SUMMARY_MAX_CHARS};

/// Splits text into sentences (at `.`, `!`, `?` followed by a space, and at line ends).
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut current = String::new();
        let chars: Vec<char> = line.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            current.push(*c);
            let ends =
                matches!(c, '.' | '!' | '?') && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
            if ends {
                let s = current.trim().to_string();
                if !s.is_empty() {
                    out.push(s);
                }
                current.clear();
            }
        }
        let s = current.trim().to_string();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// The sentences of `text` that `known` does not already state, in order, joined by spaces
/// (what a merged branch's summary adds to the summary of the branch it is merged into).
pub fn new_sentences(known: &str, text: &str) -> String {
    let known = sentences(known);
    let mut out: Vec<String> = Vec::new();
    for s in sentences(text) {
        if !known.contains(&s) && !out.contains(&s) {
            out.push(s);
        }
    }
    out.join(" ")
}

/// The progress summary after a commit when none is given: the newest sentences of the previous
/// summary followed by the contribution's, each stated once, at most [`SUMMARY_MAX_CHARS`];
/// older sentences go first, and a contribution longer than the bound is cut at a word.
pub fn compose_summary(previous: &str, contribution: &str) -> String {
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0usize;
    let fits = |used: usize, s: &str| used + s.chars().count() < SUMMARY_MAX_CHARS;
    let contribution = sentences(contribution);
    let previous = sentences(previous);
    for s in contribution.iter().rev().chain(previous.iter().rev()) {
        if kept.contains(s) {
            // Stated already (newer): a merge brings back what both branches knew.
            continue;
        }
        if !fits(used, s) {
            if kept.is_empty() {
                // Even the newest sentence is too long: keep its beginning.
                let mut cut = String::new();
                for word in s.split_whitespace() {
                    if cut.chars().count() + word.chars().count() + 2 > SUMMARY_MAX_CHARS {
                        break;
                    }
                    if !cut.is_empty() {
                        cut.push(' ');
                    }
                    cut.push_str(word);
                }
                cut.push('…');
                kept.push(cut);
            }
            break;
        }
        used += s.chars().count() + 1;
        kept.push(s.clone());
    }
    kept.reverse();
    let last = kept.len().saturating_sub(1);
    for (i, s) in kept.iter_mut().enumerate() {
        // Sentences run together in the summary: end each one that lacks punctuation.
        if i < last && !s.ends_with(['.', '!', '?', '…', ':']) {
            s.push('.');
        }
    }
    kept.join(" ")
}

/// One `commit.md` entry: the paper's three blocks under a heading.
pub fn commit_md_entry(branch: &str, existing: Option<&str>, entry: &Entry) -> String {
    let mut out = String::new();
    if existing.is_none_or(|e| e.trim().is_empty()) {
        out.push_str(&format!("# Commits — branch {branch}\n\n"));
    }
    let code = entry
        .code_head
        .as_deref()
        .map(|h| format!(" · code {}", crate::agent_text::prefix(h, 12)))
        .unwrap_or_default();
    out.push_str(&format!(
        "## {} {} · {}{code}\n\n### Branch purpose\n\n{}\n\n### Previous progress summary\n\n{}\n\n### This commit's contribution\n\n{}\n\n",
        entry.kind.as_str(),
        entry.seq,
        entry.time,
        entry.purpose,
        if entry.previous_summary.is_empty() {
            "(none yet)"
        } else {
            &entry.previous_summary
        },
        entry.contribution
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composed_summaries_are_bounded_and_keep_the_newest_sentences() {
        let mut summary = String::new();
        for i in 0..100 {
            summary = compose_summary(&summary, &format!("Did thing number {i}. It worked."));
            assert!(summary.chars().count() <= SUMMARY_MAX_CHARS, "{summary}");
        }
        assert!(summary.ends_with("Did thing number 99. It worked."));
        assert!(!summary.contains("number 1."));
        let long = compose_summary("old.", &"word ".repeat(400));
        assert!(long.chars().count() <= SUMMARY_MAX_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(compose_summary("", "First."), "First.");
    }

    #[test]
    fn a_sentence_is_stated_once() {
        let main = "Found the N+1 query.";
        let branch = compose_summary(main, "Batched the loads.");
        let added = new_sentences(main, &branch);
        assert_eq!(added, "Batched the loads.");
        let merged = compose_summary(main, &format!("Merged branch b (batch): {added}"));
        assert_eq!(merged.matches("Found the N+1 query").count(), 1, "{merged}");
        assert_eq!(
            compose_summary("A. B.", "B. C."),
            "A. B. C.",
            "the newer statement is kept"
        );
    }
}
