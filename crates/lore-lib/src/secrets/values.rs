//! What only looks like a secret, and what a value is: placeholders, references and code,
//! entropy, encoded text, public key material and digests.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// Candidate tokens for the high-entropy detector (`=` only as base64 padding, so the value of
/// `NAME=value` is a token of its own).
pub(super) static TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_\-]{24,}={0,2}").expect("token pattern is valid"));

/// What documented placeholders and examples hold (`AKIAIOSFODNN7EXAMPLE`, `sk-your-key-here`,
/// `ghp_xxxx…`), compared in lower case. A random credential holds none of them: the shortest,
/// five characters with a separator, turns up by chance about once in ten million keys.
pub(super) const PLACEHOLDER_MARKERS: &[&str] = &[
    "example",
    "placeholder",
    "your-",
    "your_",
    "yourkey",
    "yourtoken",
    "yoursecret",
    "yourpassword",
    "-here",
    "_here",
    "xxxxxx",
    "dummy",
    "changeme",
    "redacted",
    "sample",
];

pub(super) fn has_placeholder_marker(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    PLACEHOLDER_MARKERS.iter().any(|m| lower.contains(m))
}

/// Whether a generated credential's random part (its last 16 characters; a format's fixed
/// prefix comes first) has fewer than 5 distinct characters: a mask or a pattern
/// (`XXXXXXXX`, `00000000`, `abababab`). Sixteen random hex digits are that alike about once in
/// two million keys.
pub(super) fn has_little_variety(value: &str) -> bool {
    let mut tail: Vec<char> = value.chars().rev().take(16).collect();
    tail.sort_unstable();
    tail.dedup();
    tail.len() < 5
}

/// Whether a match of a generated format is a documented placeholder rather than a credential.
pub(super) fn is_made_up(value: &str) -> bool {
    has_placeholder_marker(value) || has_little_variety(value)
}

/// Words of which a key holding a credential names one (`TWILIO_AUTH_TOKEN`, `algolia api key`,
/// `sonar.login`), so that `datadog_trace_id: …` is not read as one.
pub(super) const CREDENTIAL_WORDS: &[&str] = &[
    "key", "token", "secret", "pass", "pwd", "auth", "cred", "api", "access", "login", "license",
];

pub(super) fn names_a_credential(caps: &Captures<'_>) -> bool {
    let key = caps
        .name("key")
        .map_or(String::new(), |k| k.as_str().to_ascii_lowercase());
    CREDENTIAL_WORDS.iter().any(|w| key.contains(w))
}

pub(super) fn mixes_letters_and_digits(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_digit()) && value.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Values that stand for a secret rather than being one: references to where it lives,
/// placeholder words, masks, elisions, earlier redactions.
pub(super) fn is_reference_or_placeholder(value: &str) -> bool {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    // References to where the secret really lives: `${DB_PASSWORD}`, `{token}` in a template,
    // `<your key>`, `os.environ["KEY"]`, `process.env.TOKEN`, `$TOKEN`, a vault path.
    let starts = ["${", "$(", "{", "<", "%", "env[", "env."];
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
        "password",
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
        "todo",
    ];
    if words.contains(&lower.as_str()) || has_placeholder_marker(v) {
        return true;
    }
    // An elided value (`sk-...`, `ghp_…`) shows a key's shape, not a key.
    if v.ends_with("...") || v.ends_with('…') {
        return true;
    }
    // Masks and repeated characters (`********`, `xxxxxxxx`), and earlier redactions.
    let first = v.chars().next().unwrap_or(' ');
    v.chars().all(|c| c == first) || lower.contains("[redacted")
}

/// Values of a password assignment that are references, placeholders or code, not secrets.
pub(super) fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    // A function call or attribute access is code, not a literal.
    is_reference_or_placeholder(v)
        || v.contains('(')
        || (v.contains('.')
            && v.chars()
                .all(|c| c.is_alphanumeric() || c == '.' || c == '_'))
}

/// An unquoted value that is a word, an identifier or a type (`token: Option<String>`,
/// `secret: rewrite …`), not a literal secret: letters only, or type syntax.
pub(super) fn is_code_or_word(value: &str) -> bool {
    is_word(value) || is_type_syntax(value)
}

pub(super) fn is_word(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_alphabetic() || c == '_' || c == '-')
}

pub(super) fn is_type_syntax(value: &str) -> bool {
    value.contains(['<', '>']) || value.contains("::") || value.starts_with('&')
}

/// An identifier in camel case (`apiKey`, `dbPassword`): letters (no digits) with a lower-case
/// letter right before an upper-case one.
pub(super) fn is_camel_case_identifier(value: &str) -> bool {
    value.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
        && value
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// How a password assignment is written, which says whether a bare word is its value.
pub(super) enum AssignmentStyle {
    /// An environment variable set in a shell or `.env` file: an upper-case name right against
    /// `=`, as in `export DB_PASSWORD=` and a word.
    Environment,
    /// An environment variable in YAML, as in a compose file: an upper-case name, then `:`,
    /// as in `POSTGRES_PASSWORD:` and a word.
    EnvironmentInYaml,
    /// Anything else: code, prose, configuration keys in lower case.
    Other,
}

pub(super) fn assignment_style(caps: &Captures<'_>) -> AssignmentStyle {
    let key = caps.name("key").map_or("", |k| k.as_str());
    let sep = caps.name("sep").map_or("", |s| s.as_str());
    let upper = key
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    match (upper, sep) {
        (true, "=") => AssignmentStyle::Environment,
        (true, sep) if sep.starts_with(':') && sep.trim() == ":" => {
            AssignmentStyle::EnvironmentInYaml
        }
        _ => AssignmentStyle::Other,
    }
}

/// Whether the value of a password, secret or token assignment is a literal secret: not a
/// placeholder or code, and, when unquoted, not a word, an identifier or a type, unless the key
/// is an environment variable's ([`AssignmentStyle`]; in YAML a camel-case identifier is still
/// code).
pub(super) fn is_assigned_literal(caps: &Captures<'_>, value: &str) -> bool {
    if is_placeholder(value) {
        return false;
    }
    if caps.name("bare").is_none() {
        return true;
    }
    // `NAME: Type = …` declares a constant or a field: the bare word is its type.
    if caps.name("typed").is_some() {
        return false;
    }
    match assignment_style(caps) {
        AssignmentStyle::Environment => true,
        AssignmentStyle::EnvironmentInYaml => {
            !is_type_syntax(value) && !is_camel_case_identifier(value)
        }
        AssignmentStyle::Other => !is_code_or_word(value),
    }
}

/// Whether a private-key block's body is key material: at least 8 distinct lower-case letters,
/// digits, `+` and `/` (the armour's words are upper case; `xxxx…` or `...` is a placeholder).
pub(super) fn holds_key_material(block: &str) -> bool {
    let mut seen = [false; 128];
    for b in block.bytes() {
        if b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'+' || b == b'/' {
            seen[usize::from(b)] = true;
        }
    }
    seen.iter().filter(|&&s| s).count() >= 8
}

/// Whether base64 text decodes to a PEM private key.
pub(super) fn decodes_to_a_private_key(token: &str) -> bool {
    decode_base64(token).is_some_and(|bytes| bytes.windows(11).any(|w| w == b"PRIVATE KEY"))
}

/// Whether a Discord bot token's first part is a user id (17 to 20 decimal digits) in base64.
pub(super) fn starts_with_an_encoded_user_id(token: &str) -> bool {
    let first = token.split('.').next().unwrap_or("");
    decode_base64(first)
        .is_some_and(|id| (17..=20).contains(&id.len()) && id.iter().all(u8::is_ascii_digit))
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

/// Digest prefixes whose following token is a content hash, not a secret (`h1:` is a Go
/// module's, in `go.sum`).
pub(super) const HASH_PREFIXES: &[&str] = &[
    "sha1-", "sha256-", "sha384-", "sha512-", "sha1:", "sha256:", "sha384:", "sha512:", "h1:",
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

/// An armoured block (PEM or SSH2): its `BEGIN` line, header lines, then lines of base64 (each
/// maybe indented, as in YAML), on real or `\n`-escaped line ends. A block whose label does not
/// say `PRIVATE` is public (certificates, public keys, signatures).
pub(super) static ARMOURED_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-{4,5} ?BEGIN (?P<label>[A-Z0-9 ]+?) ?-{4,5}(?:(?:\r?\n|\\n)[ \t]*[A-Za-z-]+: [^\r\n\\]*)*(?:(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/=]*)*")
        .expect("armoured block pattern is valid")
});

/// The byte ranges of public armoured blocks in `text`, in order.
pub(super) fn public_blocks(text: &str) -> Vec<(usize, usize)> {
    if !text.contains("BEGIN ") {
        return Vec::new();
    }
    ARMOURED_BLOCK
        .captures_iter(text)
        .filter(|caps| !caps["label"].contains("PRIVATE"))
        .filter_map(|caps| caps.get(0).map(|m| (m.start(), m.end())))
        .collect()
}

/// Whether a token is the body of an SSH public key, however it is quoted or spaced: base64 of
/// a length and a key type (`ssh-…`, `ecdsa-…`, `sk-…`).
pub(super) fn is_ssh_public_key_body(token: &str) -> bool {
    if !token.starts_with("AAAA") || token.len() < 24 {
        return false;
    }
    decode_base64(&token[..24]).is_some_and(|bytes| {
        let kind = &bytes[4..];
        [&b"ssh-"[..], b"ecdsa-", b"sk-"]
            .iter()
            .any(|p| kind.starts_with(p))
    })
}

/// Whether the token starting after `before` is a content hash or public key material.
pub(super) fn is_digest_or_public(before: &str, token: &str) -> bool {
    HASH_PREFIXES
        .iter()
        .any(|p| before.ends_with(p) || token.starts_with(p))
        || PUBLIC_PREFIXES.iter().any(|p| before.ends_with(p))
        || is_ssh_public_key_body(token)
}

/// The byte ranges the generic detector reports: high-entropy tokens that are not hashes,
/// public keys or certificates, encoded text or images, nor documented placeholders.
pub(super) fn high_entropy_spans(text: &str) -> Vec<(usize, usize)> {
    if !has_token_run(text) {
        return Vec::new();
    }
    let public = public_blocks(text);
    let mut blocks = public.iter().peekable();
    let mut spans = Vec::new();
    for m in TOKEN.find_iter(text) {
        while blocks.next_if(|&&(_, end)| end <= m.start()).is_some() {}
        let in_public_block = blocks.peek().is_some_and(|&&(start, _)| start <= m.start());
        let token = m.as_str();
        if in_public_block || is_digest_or_public(&text[..m.start()], token) {
            continue;
        }
        if is_high_entropy(token) && !is_encoded_text_or_image(token) && !is_made_up(token) {
            spans.push((m.start(), m.end()));
        }
    }
    spans
}
