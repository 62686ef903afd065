//! The secret scanner every memory write goes through: finds credentials and `<private>` spans
//! in text and applies the configured policy (block, redact, warn), reporting each decision.
//!
//! Rules are ordered from specific (a provider's token format) to generic (a password assignment,
//! a high-entropy string); where matches overlap the more specific rule wins. Strings that are
//! random but not secret — UUIDs, git object names, content hashes (hex or `sha256-` base64),
//! lore's own ids — are excluded from the generic rule by construction (see [`is_high_entropy`]).

use std::sync::{LazyLock, OnceLock};

use regex::Regex;
use serde::Serialize;

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

/// The policy a store is configured with: `git config lore.secrets`, else redact. A configured
/// value that is not a policy is an error, so a typo never silently weakens protection.
pub fn configured_policy(store: &crate::store::Store) -> Result<SecretPolicy> {
    match store.config_string(POLICY_CONFIG) {
        None => Ok(SecretPolicy::default()),
        Some(v) => SecretPolicy::parse(&v).map_err(|_| Error::Invalid {
            what: "git config lore.secrets",
            value: v,
            reason: "expected block, redact or warn".into(),
        }),
    }
}

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

/// A rule: a name and a pattern whose `secret` group (or whole match) is the secret. The
/// pattern is compiled the first time a text could match it: every match holds one of its
/// needles (and `:` or `=` when it is an assignment), so most texts never pay for compiling
/// most rules.
struct Rule {
    name: &'static str,
    needles: Needles,
    assignment: bool,
    source: &'static str,
    pattern: OnceLock<Regex>,
}

/// Strings one of which every match of a rule contains.
enum Needles {
    /// As written.
    Exact(&'static [&'static str]),
    /// Ignoring ASCII case (lower-case needles, for `(?i)` rules). A text with other than ASCII
    /// characters is always scanned, since Unicode case folding maps some of them to ASCII
    /// letters (`ſ`, the Kelvin sign).
    Folded(&'static [&'static str]),
}

impl Rule {
    fn may_match(&self, text: &str, lower: &std::cell::OnceCell<String>) -> bool {
        if self.assignment && !text.contains([':', '=']) {
            return false;
        }
        match self.needles {
            Needles::Exact(needles) => needles.iter().any(|n| text.contains(n)),
            Needles::Folded(needles) => {
                !text.is_ascii() || {
                    let lower = lower.get_or_init(|| text.to_ascii_lowercase());
                    needles.iter().any(|n| lower.contains(n))
                }
            }
        }
    }

    fn pattern(&self) -> &Regex {
        self.pattern
            .get_or_init(|| Regex::new(self.source).expect("secret rule patterns are valid"))
    }
}

/// The rule name used for `<private>…</private>` spans.
pub const PRIVATE_RULE: &str = "private-span";
/// The rule name used for the generic high-entropy detector.
pub const HIGH_ENTROPY_RULE: &str = "high-entropy-string";

fn rule(name: &'static str, needles: Needles, assignment: bool, source: &'static str) -> Rule {
    Rule {
        name,
        needles,
        assignment,
        source,
        pattern: OnceLock::new(),
    }
}

/// Provider formats first, then generic ones: the order is the precedence on overlap.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
        rule(
            PRIVATE_RULE,
            Needles::Folded(&["<private>"]),
            false,
            r"(?is)<private>.*?(?:</private>|\z)",
        ),
        rule(
            "private-key",
            Needles::Exact(&["-----BEGIN "]),
            false,
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)",
        ),
        rule(
            "aws-access-key-id",
            Needles::Exact(&["AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA"]),
            false,
            r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[A-Z2-7]{16}\b",
        ),
        rule(
            "aws-secret-access-key",
            Needles::Folded(&["aws"]),
            true,
            r#"(?i)\baws_?(?:secret_?(?:access_?)?key|secret)\b["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+]{40})\b"#,
        ),
        rule(
            "gcp-api-key",
            Needles::Exact(&["AIza"]),
            false,
            r"\bAIza[0-9A-Za-z_\-]{35}(?:\b|$)",
        ),
        rule(
            "gcp-service-account-key-id",
            Needles::Exact(&["\"private_key_id\""]),
            true,
            r#""private_key_id"\s*:\s*"(?P<secret>[0-9a-f]{40})""#,
        ),
        rule(
            "azure-storage-key",
            Needles::Folded(&["accountkey", "sharedaccesskey"]),
            true,
            r"(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{40,88}={0,2})",
        ),
        rule(
            "azure-client-secret",
            Needles::Folded(&["secret"]),
            true,
            r#"(?i)\b(?:azure|az)_?(?:client_?)?secret\b["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9~._\-]{32,44})"#,
        ),
        rule(
            "anthropic-api-key",
            Needles::Exact(&["sk-ant-"]),
            false,
            r"\bsk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_\-]{32,}",
        ),
        rule(
            "openai-api-key",
            Needles::Exact(&["sk-"]),
            false,
            r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|\bsk-[A-Za-z0-9]{48}\b",
        ),
        rule(
            "github-token",
            Needles::Exact(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]),
            false,
            r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b",
        ),
        rule(
            "github-fine-grained-token",
            Needles::Exact(&["github_pat_"]),
            false,
            r"\bgithub_pat_[A-Za-z0-9_]{50,255}\b",
        ),
        rule(
            "gitlab-token",
            Needles::Exact(&["gl"]),
            false,
            r"\bgl(?:pat|dt|ptt|rt|oas|cbt|imt|soat|ffct|agent)-[A-Za-z0-9_\-]{20,}",
        ),
        rule(
            "slack-token",
            Needles::Exact(&["xox"]),
            false,
            r"\bxox[abposr]-(?:[0-9]+-)*[A-Za-z0-9-]{10,}",
        ),
        rule(
            "slack-webhook",
            Needles::Exact(&["https://hooks.slack.com/"]),
            false,
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}",
        ),
        rule(
            "stripe-key",
            Needles::Exact(&["_live_", "_test_"]),
            false,
            r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}\b",
        ),
        rule(
            "npm-token",
            Needles::Exact(&["npm_"]),
            false,
            r"\bnpm_[A-Za-z0-9]{36}\b",
        ),
        rule(
            "huggingface-token",
            Needles::Exact(&["hf_"]),
            false,
            r"\bhf_[A-Za-z]{34}\b",
        ),
        rule(
            "sendgrid-api-key",
            Needles::Exact(&["SG."]),
            false,
            r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        ),
        rule(
            "pypi-token",
            Needles::Exact(&["pypi-AgEIcHlwaS5vcmc"]),
            false,
            r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}",
        ),
        rule(
            "shopify-token",
            Needles::Exact(&["shpat_", "shpss_", "shpca_", "shppa_"]),
            false,
            r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b",
        ),
        rule(
            "digitalocean-token",
            Needles::Exact(&["_v1_"]),
            false,
            r"\bdo[por]_v1_[a-f0-9]{64}\b",
        ),
        rule(
            "jwt",
            Needles::Exact(&["eyJ"]),
            false,
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        ),
        rule(
            "url-credentials",
            Needles::Exact(&["://"]),
            false,
            r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<secret>[^\s@/]{6,})@[^\s/]+",
        ),
        rule(
            "password-assignment",
            Needles::Folded(&["pass", "pwd", "secret", "key", "token"]),
            true,
            r#"(?i)\b(?P<key>(?:[a-z0-9]+_)*(?:[a-z0-9]*(?:password|passwd|passphrase)|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key|secret[_-]?key|token))\b["']?(?P<sep>\s*(?::=|=>|[:=])\s*)(?:"(?P<dq>[^"\r\n]{6,})"|'(?P<sq>[^'\r\n]{6,})'|(?P<bare>[^\s"',;)\]}]{6,}))"#,
        ),
    ]
});

/// Candidate tokens for the high-entropy detector (`=` only as base64 padding, so the value of
/// `NAME=value` is a token of its own).
static TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_\-]{24,}={0,2}").expect("token pattern is valid"));

/// Values of a password assignment that are references or placeholders, not secrets.
fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    // References to where the secret really lives: `${DB_PASSWORD}`, `<your key>`,
    // `os.environ["KEY"]`, `process.env.TOKEN`, `$TOKEN`, a vault path.
    let starts = ["${", "$(", "{{", "<", "%", "env[", "env."];
    let mentions = ["environ", "process.env", "getenv", "secrets.", "vault"];
    if starts.iter().any(|p| lower.starts_with(p))
        || mentions.iter().any(|m| lower.contains(m))
        || (v.starts_with('$')
            && v[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return true;
    }
    // Words that stand for a value rather than being one.
    let words = [
        "changeme",
        "password",
        "placeholder",
        "redacted",
        "example",
        "your_password",
        "yourpassword",
        "none",
        "null",
        "undefined",
        "required",
        "optional",
        "string",
        "hidden",
        "secret",
        "not_set",
        "notset",
        "dummy",
        "sample",
        "todo",
    ];
    if words.contains(&lower.as_str()) || lower.starts_with("your-") || lower.starts_with("your_") {
        return true;
    }
    // An elided value (`sk-...`, `ghp_…`) shows a key's shape, not a key.
    if v.ends_with("...") || v.ends_with('…') {
        return true;
    }
    // Masks and repeated characters (`********`, `xxxxxxxx`), and earlier redactions.
    let first = v.chars().next().unwrap_or(' ');
    if v.chars().all(|c| c == first) || lower.contains("[redacted") {
        return true;
    }
    // A function call or attribute access is code, not a literal.
    v.contains('(')
        || (v.contains('.')
            && v.chars()
                .all(|c| c.is_alphanumeric() || c == '.' || c == '_'))
}

/// An unquoted value that is a word, an identifier or a type (`token: Option<String>`,
/// `secret: rewrite …`), not a literal secret: letters only, or type syntax.
fn is_code_or_word(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_alphabetic() || c == '_' || c == '-')
        || value.contains(['<', '>'])
        || value.contains("::")
        || value.starts_with('&')
}

/// Whether a password assignment is an environment variable's (`DB_PASSWORD=hunter`, as in
/// `export` lines and `.env` files): an upper-case name right against `=`. Its bare value is a
/// literal even when it is one word.
fn is_environment_assignment(caps: &regex::Captures<'_>) -> bool {
    let key = caps.name("key").map_or("", |k| k.as_str());
    let sep = caps.name("sep").map_or("", |s| s.as_str());
    sep == "="
        && key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Decodes standard or URL-safe base64 (padding optional); `None` if it is not base64.
fn decode_base64(token: &str) -> Option<Vec<u8>> {
    let core = token.trim_end_matches('=');
    let mut bits = 0u32;
    let mut count = 0u32;
    let mut out = Vec::with_capacity(core.len() * 3 / 4);
    for b in core.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

/// Whether a token is base64 of something plainly not a credential: prose or JSON (printable
/// text with spaces or brackets), or an image (PNG, JPEG, GIF, WebP magic numbers).
fn is_encoded_text_or_image(token: &str) -> bool {
    let Some(bytes) = decode_base64(token) else {
        return false;
    };
    let images: [&[u8]; 4] = [b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF"];
    if images.iter().any(|m| bytes.starts_with(m)) {
        return true;
    }
    let printable = bytes
        .iter()
        .filter(|b| b.is_ascii_graphic() || **b == b' ')
        .count();
    bytes.len() >= 12
        && printable * 100 >= bytes.len() * 95
        && (bytes.contains(&b' ') || bytes.starts_with(b"{") || bytes.starts_with(b"["))
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether a token looks like a random credential: long, mixing upper case, lower case and
/// digits, with high entropy. Hex strings (git object names, hashes, UUIDs) never qualify, nor
/// do lower-case ids, identifiers in camel or snake case, or paths.
pub fn is_high_entropy(token: &str) -> bool {
    let core = token.trim_end_matches('=');
    if core.len() < 24 {
        return false;
    }
    if core.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return false;
    }
    let upper = core.chars().filter(char::is_ascii_uppercase).count();
    let lower = core.chars().filter(char::is_ascii_lowercase).count();
    let digits = core.chars().filter(char::is_ascii_digit).count();
    if upper < 2 || lower < 2 || digits < 2 {
        return false;
    }
    // Paths and identifiers: segments separated by `/`, `_` or `-` that are words.
    let segments: Vec<&str> = core
        .split(['/', '_', '-', '.'])
        .filter(|s| !s.is_empty())
        .collect();
    if segments.len() > 1 && segments.iter().all(|s| s.len() < 12) {
        return false;
    }
    // In a random string letters of one case come in runs of about 1.5; an identifier in camel
    // case is made of words, runs of 3 or more.
    let (mut runs, mut letters, mut prev): (usize, usize, Option<bool>) = (0, 0, None);
    for c in core.chars() {
        let case = c.is_ascii_alphabetic().then(|| c.is_ascii_uppercase());
        if let Some(upper) = case {
            letters += 1;
            if prev != Some(upper) {
                runs += 1;
            }
        }
        prev = case;
    }
    if runs == 0 || letters as f64 / runs as f64 >= 2.6 {
        return false;
    }
    let threshold = if core.len() >= 40 { 4.3 } else { 4.0 };
    entropy(core) >= threshold
}

/// Digest prefixes whose following token is a content hash, not a secret.
const HASH_PREFIXES: &[&str] = &[
    "sha1-", "sha256-", "sha384-", "sha512-", "sha256:", "sha512:",
];

/// Whether `text` holds a run of 24 characters [`TOKEN`] could start with (checked before the
/// pattern is compiled).
fn has_token_run(text: &str) -> bool {
    let mut run = 0;
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-') {
            run += 1;
            if run >= 24 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// What precedes a token that is public by nature: an SSH public key, a data URI's payload.
const PUBLIC_PREFIXES: &[&str] = &[
    "ssh-ed25519 ",
    "ssh-rsa ",
    "ssh-dss ",
    "ecdsa-sha2-nistp256 ",
    "ecdsa-sha2-nistp384 ",
    "ecdsa-sha2-nistp521 ",
    ";base64,",
];

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
    let lower = std::cell::OnceCell::new();
    for (priority, r) in RULES.iter().enumerate() {
        if !r.may_match(text, &lower) {
            continue;
        }
        for caps in r.pattern().captures_iter(text) {
            let whole = caps.get(0).expect("group 0 always exists");
            let secret = ["secret", "dq", "sq", "bare"]
                .iter()
                .find_map(|g| caps.name(g))
                .unwrap_or(whole);
            if r.name == "password-assignment"
                && (is_placeholder(secret.as_str())
                    || (caps.name("bare").is_some()
                        && !is_environment_assignment(&caps)
                        && is_code_or_word(secret.as_str())))
            {
                continue;
            }
            spans.push((secret.start(), secret.end(), r.name, priority));
        }
    }
    let tokens = has_token_run(text).then(|| TOKEN.find_iter(text));
    for m in tokens.into_iter().flatten() {
        let before = &text[..m.start()];
        if HASH_PREFIXES
            .iter()
            .any(|p| before.ends_with(p) || m.as_str().starts_with(p))
            || PUBLIC_PREFIXES.iter().any(|p| before.ends_with(p))
        {
            continue;
        }
        if is_high_entropy(m.as_str()) && !is_encoded_text_or_image(m.as_str()) {
            spans.push((m.start(), m.end(), HIGH_ENTROPY_RULE, RULES.len()));
        }
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
            for rule in RULES.iter() {
                if rule.pattern().is_match(text) {
                    let lower = std::cell::OnceCell::new();
                    assert!(
                        rule.may_match(text, &lower),
                        "{} skipped on {text:?}",
                        rule.name
                    );
                }
            }
            assert_eq!(has_token_run(text), TOKEN.is_match(text), "{text:?}");
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
        let secret = "key AKIAIOSFODNN7EXAMPLE here";
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
