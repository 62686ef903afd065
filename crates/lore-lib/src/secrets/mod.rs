//! The secret scanner every memory write goes through: finds credentials and `<private>` spans
//! in text and applies the configured policy (block, redact, warn), reporting each decision.
//!
//! Rules are ordered from specific (a provider's token format) to generic (a password assignment,
//! a high-entropy string); where matches overlap the more specific rule wins. Strings that are
//! random but not secret — UUIDs, git object names, content hashes (hex or `sha256-` base64),
//! lore's own ids — are excluded from the generic rule by construction (see [`rules`]).

mod formats;
mod rules;
mod values;

use serde::Serialize;

use rules::RULES;
pub use rules::{HIGH_ENTROPY_RULE, PRIVATE_RULE};
use values::high_entropy_spans;
pub use values::is_high_entropy;

use crate::error::{Error, Result};

/// What a write does when its text contains a secret.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SecretPolicy {
    /// Refuse the write.
    Block,
    /// Replace each secret with `[REDACTED:<rule>]` and write (the default).
    #[default]
    Redact,
    /// Write the text unchanged and report what was found.
    Warn,
}

impl SecretPolicy {
    /// Parses `block`, `redact` or `warn`.
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "block" => Ok(Self::Block),
            "redact" => Ok(Self::Redact),
            "warn" => Ok(Self::Warn),
            _ => Err(Error::Invalid {
                what: "secret policy",
                value: value.into(),
                reason: "expected block, redact or warn".into(),
            }),
        }
    }

    /// The policy's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Block => "block",
            Self::Redact => "redact",
            Self::Warn => "warn",
        }
    }
}

/// The git configuration key that sets the secret policy (`block`, `redact` or `warn`).
pub const POLICY_CONFIG: &str = "lore.secrets";

/// One secret found in a text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// The rule that matched (e.g. `aws-access-key-id`).
    pub rule: &'static str,
    /// Which field of the record it is in (`summary`, `body`, …); empty for bare text.
    pub field: String,
    /// 1-based line of the match within the field.
    pub line: usize,
    /// Byte range of the secret within the field's text.
    #[serde(skip)]
    pub span: (usize, usize),
    /// The secret masked for display: its first four characters and its length.
    pub masked: String,
}

/// What was done about the secrets in one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Secrets were replaced by placeholders.
    Redacted,
    /// Secrets were written as they were, with a warning.
    Warned,
    /// The write was refused.
    Blocked,
}

/// The scanner's report for one write: the policy applied, what was done and what was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SecretReport {
    /// The policy in force.
    pub policy: SecretPolicy,
    /// What was done.
    pub decision: Decision,
    /// Every secret found.
    pub findings: Vec<Finding>,
}

impl SecretReport {
    /// A one-line account of the report for people, e.g.
    /// `redacted 2 secrets (aws-access-key-id in body line 3, jwt in summary)`.
    pub fn describe(&self) -> String {
        let what = match self.decision {
            Decision::Redacted => "redacted",
            Decision::Warned => "kept (policy warn)",
            Decision::Blocked => "blocked the write for",
        };
        let n = self.findings.len();
        let list: Vec<String> = self.findings.iter().map(Finding::describe).collect();
        format!(
            "{what} {n} secret{} ({})",
            if n == 1 { "" } else { "s" },
            list.join(", ")
        )
    }
}

impl Finding {
    /// `rule in field line N: masked`.
    pub fn describe(&self) -> String {
        let field = if self.field.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.field)
        };
        format!("{}{field} line {}: {}", self.rule, self.line, self.masked)
    }
}

fn mask(secret: &str) -> String {
    let shown: String = secret.chars().take(4).collect();
    format!("{shown}… ({} chars)", secret.chars().count())
}

/// Every secret in `text`, in order, without overlaps.
pub fn scan(text: &str) -> Vec<Finding> {
    scan_field(text, "")
}

/// Like [`scan`], naming the field the text came from.
pub fn scan_field(text: &str, field: &str) -> Vec<Finding> {
    let mut spans: Vec<(usize, usize, &'static str, usize)> = Vec::new();
    let candidates = rules::candidates(text);
    for (priority, r) in RULES.iter().enumerate() {
        if !candidates[priority] {
            continue;
        }
        for caps in r.pattern().captures_iter(text) {
            if let Some(secret) = r.secret(&caps) {
                spans.push((secret.start(), secret.end(), r.name, priority));
            }
        }
    }
    for (start, end) in high_entropy_spans(text) {
        spans.push((start, end, HIGH_ENTROPY_RULE, RULES.len()));
    }
    // Precedence: the more specific rule, then the earlier and longer match. Kept spans never
    // overlap, so a new one overlaps a kept one only if the last kept span starting before its
    // end reaches past its start.
    spans.sort_by_key(|&(start, end, _, priority)| (priority, start, std::cmp::Reverse(end)));
    let mut kept: std::collections::BTreeMap<usize, (usize, &'static str)> = Default::default();
    for (start, end, name, _) in spans {
        let overlaps = kept
            .range(..end)
            .next_back()
            .is_some_and(|(_, &(e, _))| e > start);
        if !overlaps {
            kept.insert(start, (end, name));
        }
    }
    let mut line = 1;
    let mut counted = 0;
    kept.into_iter()
        .map(|(start, (end, rule))| {
            line += text[counted..start].matches('\n').count();
            counted = start;
            Finding {
                rule,
                field: field.to_string(),
                line,
                span: (start, end),
                masked: if rule == PRIVATE_RULE {
                    format!("<private> span ({} chars)", end - start)
                } else {
                    mask(&text[start..end])
                },
            }
        })
        .collect()
}

/// `text` with each finding replaced by `[REDACTED:<rule>]` (a private span by `[private]`).
pub fn redact(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in findings {
        let (start, end) = f.span;
        if start < at || end > text.len() {
            continue;
        }
        out.push_str(&text[at..start]);
        if f.rule == PRIVATE_RULE {
            out.push_str("[private]");
        } else {
            out.push_str(&format!("[REDACTED:{}]", f.rule));
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// Screens the named text fields of one write under `policy`: returns the report (None when
/// nothing was found), having rewritten the fields when the policy redacts. `<private>` spans
/// are always removed, whatever the policy: the writer asked for it. Under `block`, any other
/// finding is an [`Error::SecretBlocked`] and nothing is changed.
pub fn screen(
    fields: &mut [(&str, &mut String)],
    policy: SecretPolicy,
) -> Result<Option<SecretReport>> {
    let mut all = Vec::new();
    for (name, text) in fields.iter() {
        all.extend(scan_field(text, name));
    }
    if all.is_empty() {
        return Ok(None);
    }
    let only_private = all.iter().all(|f| f.rule == PRIVATE_RULE);
    let decision = match policy {
        SecretPolicy::Block if !only_private => {
            let report = SecretReport {
                policy,
                decision: Decision::Blocked,
                findings: all,
            };
            return Err(Error::SecretBlocked(report.describe()));
        }
        SecretPolicy::Warn if !only_private => Decision::Warned,
        _ => Decision::Redacted,
    };
    for (name, text) in fields.iter_mut() {
        let here: Vec<Finding> = all
            .iter()
            .filter(|f| f.field == *name)
            .filter(|f| decision == Decision::Redacted || f.rule == PRIVATE_RULE)
            .cloned()
            .collect();
        if !here.is_empty() {
            **text = redact(text, &here);
        }
    }
    Ok(Some(SecretReport {
        policy,
        decision,
        findings: all,
    }))
}

/// A name or label (an agent, a session, who forgot) as lore records it: every secret in it
/// redacted, whatever the policy, since a name is never the place for one.
pub fn unsecret(text: &str) -> String {
    redact(text, &scan(text))
}

/// The longest error or warning message lore shows; the rest is cut (with its length said).
pub const MAX_MESSAGE_CHARS: usize = 2_000;

/// A message fit to show on stderr or send back to an agent: every secret in it redacted
/// (whatever the policy: a message is never the place for one, and it may quote the input), and
/// cut to [`MAX_MESSAGE_CHARS`].
pub fn scrubbed_message(text: &str) -> String {
    // `<private>` is kept: a message may name the marker itself (the advice on a refusal).
    let found: Vec<Finding> = scan(text)
        .into_iter()
        .filter(|f| f.rule != PRIVATE_RULE)
        .collect();
    let text = redact(text, &found);
    let total = text.chars().count();
    if total <= MAX_MESSAGE_CHARS {
        return text;
    }
    let kept: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    format!("{kept}… ({} more characters)", total - MAX_MESSAGE_CHARS)
}

/// What in `text` `policy` would not let be stored: under block or redact any secret, under
/// every policy a `<private>` span. This is the check at the point where lore writes objects
/// and journal lines, after each field was screened: a finding here means a path did not
/// screen (or its redaction left a secret).
pub fn surviving(text: &str, what: &str, policy: SecretPolicy) -> Vec<Finding> {
    scan_field(text, what)
        .into_iter()
        .filter(|f| policy != SecretPolicy::Warn || f.rule == PRIVATE_RULE)
        .collect()
}

/// The refusal of a write that still holds `findings`.
pub fn refusal(findings: Vec<Finding>, policy: SecretPolicy) -> Error {
    let report = SecretReport {
        policy,
        decision: Decision::Blocked,
        findings,
    };
    Error::SecretBlocked(format!(
        "{} still held after screening; nothing was written",
        report.describe()
    ))
}

/// Refuses `text` when anything in it [`surviving`]s.
pub fn refuse_surviving(text: &str, what: &str, policy: SecretPolicy) -> Result<()> {
    let found = surviving(text, what, policy);
    if found.is_empty() {
        Ok(())
    } else {
        Err(refusal(found, policy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_skipped_by_its_needles_could_not_have_matched() {
        let texts = [
            "key AKIAIOSFODNN7EXAMPLE here",
            "AWS_Secret_Access_Key = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYab\"",
            "aws_ſecret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYab",
            "AccountKey=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN0123==",
            "token: ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
            "DB_PASSWORD=hunter2hunter2 and api-key: 'abcdefgh'",
            "<PRIVATE>hidden</private> postgres://user:s3cretpass@db/x",
            "-----BEGIN RSA PRIVATE KEY-----\nabc",
            "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK sk_live_abcdefghijklmnopqrstuvwx",
            "nothing to see here at all",
        ];
        for text in texts {
            let candidates = rules::candidates(text);
            for (i, rule) in RULES.iter().enumerate() {
                if rule.pattern().is_match(text) {
                    assert!(candidates[i], "{} skipped on {text:?}", rule.name);
                }
            }
            assert_eq!(
                values::has_token_run(text),
                values::TOKEN.is_match(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn redaction_replaces_only_the_secret() {
        let text = "db password = \"hunter2hunter2\" and more";
        let found = scan(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "password-assignment");
        assert_eq!(
            redact(text, &found),
            "db password = \"[REDACTED:password-assignment]\" and more"
        );
    }

    #[test]
    fn specific_rules_win_over_generic_ones() {
        let text = "token: ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij";
        let found = scan(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "github-token");
    }

    #[test]
    fn private_spans_are_removed_under_every_policy() {
        for policy in [
            SecretPolicy::Block,
            SecretPolicy::Redact,
            SecretPolicy::Warn,
        ] {
            let mut body = "keep <private>my home address</private> this".to_string();
            let report = screen(&mut [("body", &mut body)], policy).unwrap().unwrap();
            assert_eq!(body, "keep [private] this");
            assert_eq!(report.decision, Decision::Redacted);
        }
    }

    #[test]
    fn block_refuses_and_warn_keeps_the_text() {
        let secret = "key AKIAM4LTJ7P2WVH7RSRT here";
        let mut body = secret.to_string();
        let err = screen(&mut [("body", &mut body)], SecretPolicy::Block).unwrap_err();
        assert!(err.to_string().contains("aws-access-key-id"), "{err}");
        assert_eq!(body, secret);
        let report = screen(&mut [("body", &mut body)], SecretPolicy::Warn)
            .unwrap()
            .unwrap();
        assert_eq!(report.decision, Decision::Warned);
        assert_eq!(body, secret);
        assert!(report.describe().contains("AKIA… (20 chars)"));
    }

    #[test]
    fn policies_parse() {
        assert_eq!(SecretPolicy::parse("BLOCK").unwrap(), SecretPolicy::Block);
        assert!(SecretPolicy::parse("maybe").is_err());
    }
}
