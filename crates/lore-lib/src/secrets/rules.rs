//! The secret scanner's rules: each credential format with its needles and pattern (compiled
//! on first need), and the tests that tell a random secret from strings that only look random
//! (placeholders, code, hashes, encoded text and images).

use std::sync::{LazyLock, OnceLock};

use regex::Regex;

/// A rule: a name and a pattern whose `secret` group (or whole match) is the secret. The
/// pattern is compiled the first time a text could match it: every match holds one of its
/// needles (and `:` or `=` when it is an assignment), so most texts never pay for compiling
/// most rules.
pub(super) struct Rule {
    pub(super) name: &'static str,
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
    pub(super) fn may_match(&self, text: &str, lower: &std::cell::OnceCell<String>) -> bool {
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

    pub(super) fn pattern(&self) -> &Regex {
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
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
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
pub(super) static TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_\-]{24,}={0,2}").expect("token pattern is valid"));

/// Values of a password assignment that are references or placeholders, not secrets.
pub(super) fn is_placeholder(value: &str) -> bool {
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
pub(super) fn is_code_or_word(value: &str) -> bool {
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
pub(super) fn is_environment_assignment(caps: &regex::Captures<'_>) -> bool {
    let key = caps.name("key").map_or("", |k| k.as_str());
    let sep = caps.name("sep").map_or("", |s| s.as_str());
    sep == "="
        && key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Decodes standard or URL-safe base64 (padding optional); `None` if it is not base64.
pub(super) fn decode_base64(token: &str) -> Option<Vec<u8>> {
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
pub(super) fn is_encoded_text_or_image(token: &str) -> bool {
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
pub(super) fn entropy(s: &str) -> f64 {
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
pub(super) const HASH_PREFIXES: &[&str] = &[
    "sha1-", "sha256-", "sha384-", "sha512-", "sha256:", "sha512:",
];

/// Whether `text` holds a run of 24 characters [`TOKEN`] could start with (checked before the
/// pattern is compiled).
pub(super) fn has_token_run(text: &str) -> bool {
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
pub(super) const PUBLIC_PREFIXES: &[&str] = &[
    "ssh-ed25519 ",
    "ssh-rsa ",
    "ssh-dss ",
    "ecdsa-sha2-nistp256 ",
    "ecdsa-sha2-nistp384 ",
    "ecdsa-sha2-nistp521 ",
    ";base64,",
];
