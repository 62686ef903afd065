//! Signal detection: finds what in an agent's or user's text is worth remembering — block
//! markers, explicit tags, natural-language patterns — each with a confidence and the namespace
//! it belongs in.
//!
//! Confidence by source: a closed block marker 0.99 and an explicit tag 0.95 (both AUTO: the
//! writer asked for it), natural-language patterns 0.72–0.90 (SUGGEST: a person reviews them),
//! and weaker patterns below 0.70 (SKIP). Text inside code fences is never a signal.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::model::MAX_SUMMARY_CHARS;

/// How sure capture is that a signal should become a memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Confidence ≥ 0.95: written at once.
    Auto,
    /// Confidence 0.70–0.95: queued for `lore review`.
    Suggest,
    /// Below 0.70: ignored.
    Skip,
}

impl Tier {
    /// The tier of a confidence.
    pub fn of(confidence: f64) -> Tier {
        if confidence >= 0.95 {
            Tier::Auto
        } else if confidence >= 0.70 {
            Tier::Suggest
        } else {
            Tier::Skip
        }
    }
}

/// Where a signal came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A `>> decision ----` … closing-rule block.
    BlockMarker,
    /// An explicit `[decision]` tag.
    Tag,
    /// A natural-language pattern ("we decided to …").
    Pattern,
}

/// Something worth remembering, found in text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Signal {
    /// The namespace it belongs in (inferred from the marker, tag or pattern).
    pub namespace: String,
    /// One line, at most 100 characters.
    pub summary: String,
    /// The full text.
    pub body: String,
    /// 0..=1.
    pub confidence: f64,
    /// Where it came from.
    pub source: Source,
}

impl Signal {
    /// The signal's tier.
    pub fn tier(&self) -> Tier {
        Tier::of(self.confidence)
    }
}

/// The namespace a marker or tag word names (`decision` → `decisions`, `til` → `learnings`).
pub fn namespace_for(word: &str) -> Option<&'static str> {
    let w = word.trim().to_ascii_lowercase();
    Some(match w.as_str() {
        "decision" | "decisions" | "decided" | "adr" => "decisions",
        "learned" | "learning" | "learnings" | "lesson" | "til" | "insight" | "gotcha" => {
            "learnings"
        }
        "blocker" | "blockers" | "blocked" => "blockers",
        "progress" | "done" | "milestone" => "progress",
        "pattern" | "patterns" | "convention" => "patterns",
        "research" | "finding" => "research",
        "review" | "reviews" => "reviews",
        "retro" | "retrospective" => "retrospective",
        "inception" | "goal" => "inception",
        "elicitation" | "requirement" | "requirements" => "elicitation",
        _ => return None,
    })
}

static BLOCK_OPEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:>>|▶|»)\s*([A-Za-z][A-Za-z-]*)\s*(?:[-─—=]{3,}.*)?$").expect("valid")
});
static BLOCK_CLOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*[-─—=]{3,}\s*$").expect("valid"));
static TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[-*]\s+)?\[([A-Za-z][A-Za-z-]*)\]:?\s+(\S.*)$").expect("valid")
});

/// Natural-language patterns: (pattern, namespace, confidence).
static PATTERNS: LazyLock<Vec<(Regex, &'static str, f64)>> = LazyLock::new(|| {
    let p = |re: &str| Regex::new(&format!("(?i){re}")).expect("valid");
    vec![
        (
            p(r"\b(?:we|i)(?:'ve| have)? decided (?:to|that|on|against)\b"),
            "decisions",
            0.90,
        ),
        (p(r"\bthe decision (?:is|was) to\b"), "decisions", 0.90),
        (
            p(r"\b(?:we(?:'ll| will)|let's) go with\b"),
            "decisions",
            0.80,
        ),
        (
            p(r"\bwe chose\b|\bwe(?:'re| are) choosing\b"),
            "decisions",
            0.80,
        ),
        (
            p(r"\b(?:decided|opted) (?:to|for|against)\b"),
            "decisions",
            0.78,
        ),
        (
            p(r"\bturns out\b|\bturned out (?:that|to be)\b"),
            "learnings",
            0.82,
        ),
        (
            p(r"\bthe (?:root cause|real problem|culprit) (?:is|was)\b"),
            "learnings",
            0.88,
        ),
        (
            p(r"\b(?:i|we) (?:learned|realized|discovered) (?:that|how)\b"),
            "learnings",
            0.85,
        ),
        (p(r"\blesson(?:s)? learned\b|\btil\b"), "learnings", 0.85),
        (
            p(r"\bthe fix (?:is|was) to\b|\bfixed (?:it )?by\b"),
            "learnings",
            0.78,
        ),
        (p(r"\bgotcha:|\bnote to self\b"), "learnings", 0.80),
        (
            p(r"\b(?:we(?:'re| are)|i(?:'m| am)) blocked (?:on|by)\b"),
            "blockers",
            0.90,
        ),
        (
            p(r"\bblocker:|\bcan(?:'t|not) proceed (?:until|without)\b"),
            "blockers",
            0.85,
        ),
        (
            p(r"\bwaiting (?:on|for) .{3,40} before\b"),
            "blockers",
            0.72,
        ),
        (
            p(r"\b(?:always|never) (?:use|call|run|commit|push)\b"),
            "patterns",
            0.72,
        ),
        (p(r"\bthe convention (?:here )?is\b"), "patterns", 0.80),
        // Weak: mentioned, not stated. Reported as SKIP so tuning can see them.
        (p(r"\bmaybe we should\b|\bshould we\b"), "decisions", 0.40),
        (p(r"\bi think\b"), "learnings", 0.30),
    ]
});

/// The first line of `text`, cut to the summary limit at a word boundary.
pub fn summarize(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .trim_start_matches(['#', '-', '*', ' '])
        .trim();
    if line.chars().count() <= MAX_SUMMARY_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(MAX_SUMMARY_CHARS - 1).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > MAX_SUMMARY_CHARS / 2 => cut[..i].to_string(),
        _ => cut,
    };
    format!("{}…", cut.trim_end())
}

/// Sentences of a line of prose (split after `.`, `!` or `?` followed by a space).
fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for i in 0..bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?') && bytes.get(i + 1) == Some(&b' ') {
            out.push(line[start..=i].trim());
            start = i + 1;
        }
    }
    out.push(line[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// Every signal in `text`, in order. Block markers and tags are exact; patterns are matched per
/// sentence outside blocks, tags and code fences. A block left open at the end of the text is
/// not a signal (the writer has not finished it).
pub fn detect(text: &str) -> Vec<Signal> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut in_fence = false;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            i += 1;
            continue;
        }
        if in_fence {
            i += 1;
            continue;
        }
        if let Some(c) = BLOCK_OPEN.captures(line)
            && let Some(ns) = namespace_for(&c[1])
            && let Some(end) = (i + 1..lines.len()).find(|&j| BLOCK_CLOSE.is_match(lines[j]))
        {
            let body = lines[i + 1..end].join("\n").trim().to_string();
            if !body.is_empty() {
                out.push(Signal {
                    namespace: ns.into(),
                    summary: summarize(&body),
                    body,
                    confidence: 0.99,
                    source: Source::BlockMarker,
                });
            }
            i = end + 1;
            continue;
        }
        if let Some(c) = TAG.captures(line)
            && let Some(ns) = namespace_for(&c[1])
        {
            // The tagged text runs on to the next blank line.
            let mut body = vec![c[2].trim().to_string()];
            let mut j = i + 1;
            while j < lines.len() && !lines[j].trim().is_empty() && !TAG.is_match(lines[j]) {
                body.push(lines[j].trim().to_string());
                j += 1;
            }
            let body = body.join("\n");
            out.push(Signal {
                namespace: ns.into(),
                summary: summarize(&body),
                body,
                confidence: 0.95,
                source: Source::Tag,
            });
            i = j;
            continue;
        }
        for sentence in sentences(line.trim()) {
            let best = PATTERNS
                .iter()
                .filter(|(re, _, _)| re.is_match(sentence))
                .max_by(|a, b| a.2.total_cmp(&b.2));
            if let Some((_, ns, confidence)) = best {
                // A sentence too short to stand alone ("We decided to.") is worth less.
                let words = sentence.split_whitespace().count();
                let confidence = if words < 6 {
                    confidence - 0.2
                } else {
                    *confidence
                };
                out.push(Signal {
                    namespace: (*ns).into(),
                    summary: summarize(sentence),
                    body: sentence.to_string(),
                    confidence,
                    source: Source::Pattern,
                });
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_markers_tags_and_patterns_have_their_tiers() {
        let text = "Some chatter first.\n\
            >> decision ----------------\n\
            Use SQLite for the index\n\
            It is embedded and fast.\n\
            ----------------------------\n\
            [learned] libgit2 merge_file needs both sides' modes\n\
            \n\
            It turns out the CAS loop retries at most 8 times under contention.\n\
            Maybe we should rename it.\n\
            ```\n\
            [decision] inside a fence is code\n\
            ```\n";
        let found = detect(text);
        let got: Vec<(&str, Tier, Source)> = found
            .iter()
            .map(|s| (s.namespace.as_str(), s.tier(), s.source))
            .collect();
        assert_eq!(
            got,
            [
                ("decisions", Tier::Auto, Source::BlockMarker),
                ("learnings", Tier::Auto, Source::Tag),
                ("learnings", Tier::Suggest, Source::Pattern),
                ("decisions", Tier::Skip, Source::Pattern),
            ]
        );
        assert_eq!(found[0].summary, "Use SQLite for the index");
        assert_eq!(
            found[0].body,
            "Use SQLite for the index\nIt is embedded and fast."
        );
    }

    #[test]
    fn an_unclosed_block_and_unknown_tags_are_not_signals() {
        assert!(detect(">> decision ----\nhalf written").is_empty());
        assert!(detect("[note] not a namespace word\n[x] checkbox").is_empty());
    }

    #[test]
    fn summaries_fit() {
        let long = "word ".repeat(60);
        let s = summarize(&long);
        assert!(s.chars().count() <= MAX_SUMMARY_CHARS, "{s}");
        assert!(s.ends_with('…'));
    }
}
