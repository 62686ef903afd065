//! The secret scanner's rules: each credential format with its needles and pattern (compiled
//! on first need) and what a match's value must also be to count, and the tests that tell a
//! random secret from strings that only look random (placeholders, code, hashes, public keys
//! and certificates, encoded text and images).

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::{Captures, Match, Regex};

use super::formats::{FORMATS, KEYED};
use super::values::*;

/// A rule: a name and a pattern whose `secret` group (or `dq`, `sq` or `bare` group, or whole
/// match) is the secret, and what that value must be to count. The pattern is compiled the
/// first time a text could match it: every match holds one of its needles (and `:` or `=` when
/// it is an assignment), so most texts never pay for compiling most rules.
pub(super) struct Rule {
    pub(super) name: &'static str,
    needles: Needles,
    assignment: bool,
    source: Cow<'static, str>,
    value: Value,
    pattern: OnceLock<Regex>,
}

/// Strings one of which every match of a rule contains.
enum Needles {
    /// As written.
    Exact(&'static [&'static str]),
    /// Ignoring case (lower-case needles, for `(?i)` rules), looked for in [`fold_case`]'s copy
    /// of the text.
    Folded(&'static [&'static str]),
}

/// What the value of a match must also be to count as a secret.
#[derive(Clone, Copy)]
enum Value {
    /// Whatever the pattern matched (`<private>` spans).
    Any,
    /// A generated credential: not a documented placeholder, and with a random part's variety.
    Generated,
    /// A generated credential that also passes its format's own check.
    Shaped(fn(&str) -> bool),
    /// A generated credential found by the key it is assigned to: the key names a credential
    /// and the value mixes letters and digits.
    Keyed,
    /// A secret someone chose (a password): not a reference to one, nor a placeholder.
    Chosen,
    /// A pasted token: not a reference, a placeholder, code, nor a bare word.
    Token,
    /// The value of a password, secret or token assignment ([`is_assigned_literal`]).
    Assigned,
    /// A private-key block: its body holds key material, not a placeholder.
    KeyBlock,
}

impl Rule {
    pub(super) fn pattern(&self) -> &Regex {
        self.pattern
            .get_or_init(|| Regex::new(&self.source).expect("secret rule patterns are valid"))
    }

    /// The secret in one match of the pattern, or `None` when its value does not count.
    pub(super) fn secret<'t>(&self, caps: &Captures<'t>) -> Option<Match<'t>> {
        let secret = ["secret", "dq", "sq", "bare"]
            .iter()
            .find_map(|g| caps.name(g))
            .or_else(|| caps.get(0))?;
        let value = secret.as_str();
        let counts = match self.value {
            Value::Any => true,
            Value::Generated => !is_made_up(value),
            Value::Shaped(check) => !is_made_up(value) && check(value),
            Value::Keyed => {
                !is_made_up(value) && names_a_credential(caps) && mixes_letters_and_digits(value)
            }
            Value::Chosen => !is_reference_or_placeholder(value),
            Value::Token => !is_placeholder(value) && !is_code_or_word(value),
            Value::Assigned => is_assigned_literal(caps, value),
            Value::KeyBlock => holds_key_material(value),
        };
        counts.then_some(secret)
    }
}

/// `text` in lower case as `(?i)` patterns see it: ASCII letters lowered, and the two other
/// letters that fold to ASCII ones (`ſ`, the Kelvin sign) read as `s` and `k`.
fn fold_case(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.chars()
        .map(|c| match c {
            'ſ' => 's',
            '\u{212A}' => 'k',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Every rule's needles in two automatons (as written, and folded), so that one pass over a
/// text (and one over its folded copy) tells which rules may match it, instead of a search for
/// each needle of each rule.
struct NeedleIndex {
    exact: AhoCorasick,
    /// The rule of each exact needle, by the needle's pattern number.
    exact_rule: Vec<usize>,
    folded: AhoCorasick,
    folded_rule: Vec<usize>,
}

static NEEDLES: LazyLock<NeedleIndex> = LazyLock::new(|| {
    let (mut exact, mut exact_rule, mut folded, mut folded_rule) = (vec![], vec![], vec![], vec![]);
    for (i, rule) in RULES.iter().enumerate() {
        let (needles, rules) = match rule.needles {
            Needles::Exact(n) => ((n, &mut exact), &mut exact_rule),
            Needles::Folded(n) => ((n, &mut folded), &mut folded_rule),
        };
        for needle in needles.0 {
            needles.1.push(*needle);
            rules.push(i);
        }
    }
    // A contiguous NFA: built in a fraction of a DFA's time, which every process that writes
    // pays once, and as quick over the short texts screened.
    let automaton = |needles: &[&str]| {
        AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(needles)
            .expect("secret rule needles build an automaton")
    };
    NeedleIndex {
        exact: automaton(&exact),
        exact_rule,
        folded: automaton(&folded),
        folded_rule,
    }
});

/// Which of [`RULES`] may match `text` (by position): a needle of the rule occurs in it, and a
/// rule that only matches assignments finds a `:` or `=`.
pub(super) fn candidates(text: &str) -> Vec<bool> {
    let mut found = vec![false; RULES.len()];
    for m in NEEDLES.exact.find_overlapping_iter(text) {
        found[NEEDLES.exact_rule[m.pattern().as_usize()]] = true;
    }
    for m in NEEDLES.folded.find_overlapping_iter(&fold_case(text)) {
        found[NEEDLES.folded_rule[m.pattern().as_usize()]] = true;
    }
    if !text.contains([':', '=']) {
        for (rule, may) in RULES.iter().zip(&mut found) {
            *may &= !rule.assignment;
        }
    }
    found
}

/// The rule name used for `<private>…</private>` spans.
pub const PRIVATE_RULE: &str = "private-span";
/// The rule name used for the generic high-entropy detector.
pub const HIGH_ENTROPY_RULE: &str = "high-entropy-string";

/// What may follow a generated token: the end of the text or a character no token holds.
const TOKEN_END: &str = r"(?:$|[^A-Za-z0-9_-])";

/// What may follow a value found by its key: the end of the text, a character no value holds,
/// or a full stop ending the sentence.
const VALUE_END: &str = r"(?:$|[^A-Za-z0-9_~+/=.-]|\.(?:[ \t\r\n]|$))";

fn rule(
    name: &'static str,
    needles: Needles,
    assignment: bool,
    source: impl Into<Cow<'static, str>>,
    value: Value,
) -> Rule {
    Rule {
        name,
        needles,
        assignment,
        source: source.into(),
        value,
        pattern: OnceLock::new(),
    }
}

/// A rule for a generated credential known by its prefix or shape: `pattern` from a word
/// boundary to the end of the token. The whole of it is the secret unless it names a `secret`
/// group.
fn generated(
    name: &'static str,
    needles: &'static [&'static str],
    pattern: &str,
    value: Value,
) -> Rule {
    let source = if pattern.contains("(?P<secret>") {
        format!(r"\b(?:{pattern}){TOKEN_END}")
    } else {
        format!(r"\b(?P<secret>{pattern}){TOKEN_END}")
    };
    rule(name, Needles::Exact(needles), false, source, value)
}

/// A rule for a credential known by the service its key names (`TWILIO_AUTH_TOKEN=…`,
/// `"algolia_api_key": "…"`, `heroku api key is …`): one of `services` (lower case) starting the
/// key, at most three more words, `=`, `:`, `=>`, `:=` or `is`, then `value` (matched ignoring
/// case), all on one line.
fn keyed(name: &'static str, services: &'static [&'static str], value: &str) -> Rule {
    let names: Vec<String> = services.iter().map(|s| regex::escape(s)).collect();
    let source = format!(
        r#"(?i)(?:\b|_)(?P<key>(?:{})[A-Za-z0-9_.-]*(?:[ \t]+[A-Za-z0-9_.-]+){{0,3}}?)["']?[ \t]*(?:=>|:=|[:=]|[ \t]is)[ \t]*["'`]?(?P<secret>{value}){VALUE_END}"#,
        names.join("|")
    );
    rule(name, Needles::Folded(services), false, source, Value::Keyed)
}

/// Provider formats first, then generic ones: the order is the precedence on overlap.
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let mut rules = private_rules();
    rules.extend(cloud_rules());
    rules.extend(
        FORMATS
            .iter()
            .map(|&(name, needles, pattern)| generated(name, needles, pattern, Value::Generated)),
    );
    rules.extend(shaped_rules());
    rules.extend(
        KEYED
            .iter()
            .map(|&(name, services, value)| keyed(name, services, value)),
    );
    rules.extend(config_file_rules());
    rules.extend(generic_rules());
    rules
});

/// `<private>` spans and private keys in every armour: PEM (any kind, also with `\n` escapes as
/// in JSON), SSH2, PuTTY, and PEM encoded again in base64 (a kubeconfig's `client-key-data`).
fn private_rules() -> Vec<Rule> {
    vec![
        rule(
            PRIVATE_RULE,
            Needles::Folded(&["<private>"]),
            false,
            r"(?is)<private>.*?(?:</private>|\z)",
            Value::Any,
        ),
        rule(
            "private-key",
            Needles::Exact(&["-----BEGIN"]),
            false,
            r"-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----(?:\s|\\[nr])*(?:[A-Za-z-]+:[^\r\n\\]*(?:\s|\\[nr])+)*[A-Za-z0-9+/=]{20}(?s:.*?)(?:-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            Value::KeyBlock,
        ),
        rule(
            "private-key",
            Needles::Exact(&["---- BEGIN SSH2"]),
            false,
            r"---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----(?:\s+[A-Za-z-]+:[^\r\n]*)*\s+[A-Za-z0-9+/=]{20}(?s:.*?)(?:---- END SSH2 (?:ENCRYPTED )?PRIVATE KEY ----|\z)",
            Value::KeyBlock,
        ),
        rule(
            "private-key",
            Needles::Exact(&["PuTTY-User-Key-File-"]),
            false,
            r"PuTTY-User-Key-File-[0-9]:(?s:.*?)Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n(?:[A-Za-z0-9+/=]+[ \t]*(?:\r?\n|\z))+",
            Value::KeyBlock,
        ),
        generated(
            "private-key",
            &["LS0tLS1CRUdJTi"],
            r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}",
            Value::Shaped(decodes_to_a_private_key),
        ),
    ]
}

/// Cloud credentials whose formats need more than a prefix: AWS secret keys and GCP key ids by
/// their key, Azure storage keys in connection strings, Azure client secrets by key or shape.
fn cloud_rules() -> Vec<Rule> {
    vec![
        rule(
            "aws-secret-access-key",
            Needles::Folded(&["aws"]),
            true,
            r#"(?i)\baws_?(?:secret_?(?:access_?)?key|secret)\b["']?[ \t]*[:=][ \t]*["']?(?P<secret>[A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])"#,
            Value::Generated,
        ),
        rule(
            "gcp-service-account-key-id",
            Needles::Exact(&["\"private_key_id\""]),
            true,
            r#""private_key_id"[ \t]*:[ \t]*"(?P<secret>[0-9a-f]{40})""#,
            Value::Generated,
        ),
        rule(
            "azure-storage-key",
            Needles::Folded(&["accountkey", "sharedaccesskey"]),
            true,
            r"(?i)\b(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{40,88}={0,2})",
            Value::Generated,
        ),
        rule(
            "azure-client-secret",
            Needles::Folded(&["secret"]),
            true,
            r#"(?i)\b(?:azure|az)_?(?:client_?)?secret\b["']?[ \t]*[:=][ \t]*["']?(?P<secret>[A-Za-z0-9~._\-]{32,44})"#,
            Value::Generated,
        ),
        // Entra ID client secrets: three characters, a digit, `Q~`, then 31 to 34 more.
        rule(
            "azure-client-secret",
            Needles::Exact(&["Q~"]),
            false,
            r"(?:^|[^A-Za-z0-9_~.-])(?P<secret>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])",
            Value::Generated,
        ),
    ]
}

/// Generated formats with a check of their own: Discord bot tokens (their first part is a user
/// id in base64) and Vault's legacy `s.` tokens (letters and digits).
fn shaped_rules() -> Vec<Rule> {
    vec![
        generated(
            "discord-token",
            &["MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"],
            r"(?:M[Tjz]|N[DTjz]|O[DT])[A-Za-z0-9_-]{21,23}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
            Value::Shaped(starts_with_an_encoded_user_id),
        ),
        generated(
            "vault-token",
            &["s."],
            r"s\.[A-Za-z0-9]{24}",
            Value::Shaped(mixes_letters_and_digits),
        ),
    ]
}

/// Credentials in the files and commands that hold them: `.netrc`, `.pgpass`, `mysql -p`,
/// kubeconfig tokens, NuGet and Sidekiq configuration.
fn config_file_rules() -> Vec<Rule> {
    vec![
        rule(
            "kubeconfig-token",
            Needles::Exact(&["token"]),
            true,
            r#"(?m)^[ \t]*(?:-[ \t]+)?(?:token|access-token|id-token|refresh-token|access_token|refresh_token|id_token)[ \t]*:[ \t]*["']?(?P<secret>[A-Za-z0-9._~+/=:-]{16,})["']?[ \t\r]*$"#,
            Value::Shaped(mixes_letters_and_digits),
        ),
        rule(
            "netrc-password",
            Needles::Exact(&["password"]),
            false,
            r"(?:\bmachine[ \t]+\S+|\bdefault)(?:\s+(?:login|account|port)[ \t]+\S+)*\s+password[ \t]+(?P<bare>\S+)",
            Value::Chosen,
        ),
        // host:port:database:user:password, a whole line.
        rule(
            "pgpass-password",
            Needles::Exact(&[":"]),
            false,
            r"(?m)^(?:\*|[A-Za-z0-9-]*[A-Za-z][A-Za-z0-9.-]*|[0-9]{1,3}(?:\.[0-9]{1,3}){3}):(?:[0-9]{1,5}|\*):[A-Za-z0-9_.*-]+:[A-Za-z0-9_.@*-]+:(?P<bare>(?:[^:\s\\]|\\.){4,})[ \t\r]*$",
            Value::Chosen,
        ),
        rule(
            "mysql-password",
            Needles::Exact(&["mysql", "mariadb"]),
            false,
            r#"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mariadb|mariadb-dump)\b[^\r\n|;&]*?[ \t](?:-p|--password=)(?:"(?P<dq>[^"\r\n]+)"|'(?P<sq>[^'\r\n]+)'|(?P<bare>[^\s"'`|;&<>(),]{3,}))"#,
            Value::Chosen,
        ),
        rule(
            "nuget-config-password",
            Needles::Folded(&["password"]),
            true,
            r#"(?i)<add[ \t]+key[ \t]*=[ \t]*"(?:ClearText)?Password"[ \t]+value[ \t]*=[ \t]*"(?P<dq>[^"\r\n]+)""#,
            Value::Chosen,
        ),
        rule(
            "sidekiq-secret",
            Needles::Folded(&["contribsys"]),
            true,
            r#"(?i)\bBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM["']?[ \t]*[:=][ \t]*["']?(?P<secret>[a-f0-9]{8}:[a-f0-9]{8})\b"#,
            Value::Generated,
        ),
    ]
}

/// Credentials by where they stand rather than what they look like: in a URL, an HTTP
/// `Authorization` header, `curl -u`, or assigned to a password, secret or token key.
fn generic_rules() -> Vec<Rule> {
    vec![
        rule(
            "url-credentials",
            Needles::Exact(&["://"]),
            false,
            r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<secret>[^\s@/]{6,})@[^\s/]+",
            Value::Chosen,
        ),
        rule(
            "authorization-header",
            Needles::Folded(&["authorization"]),
            true,
            r#"(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:basic|bearer|token|apikey|sso-key)[ \t]+)?(?P<secret>[A-Za-z0-9+/=._~-]{8,})"#,
            Value::Token,
        ),
        rule(
            "curl-credentials",
            Needles::Exact(&["curl"]),
            false,
            r#"\bcurl\b[^\r\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)["']?[^\s:"']+:(?:"(?P<dq>[^"\r\n]+)"|(?P<bare>[^\s"']+))"#,
            Value::Chosen,
        ),
        rule(
            "password-assignment",
            Needles::Folded(&["pass", "pwd", "secret", "key", "token"]),
            true,
            r#"(?i)\b(?P<key>(?:[a-z0-9]+_)*(?:[a-z0-9]*(?:password|passwd|passphrase)|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key|secret[_-]?key|token))\b["']?(?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*)(?:"(?P<dq>[^"\r\n]{6,})"|'(?P<sq>[^'\r\n]{6,})'|(?P<bare>[^\s"'`,;)\]}]{6,}))(?P<typed>[ \t]*=(?:[^=>]|$))?"#,
            Value::Assigned,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The labelled corpus: lines of `+` or `-`, a rule (or a look-alike's class), a text.
    const CORPUS: &str = include_str!("../../tests/data/secrets_corpus.tsv");

    #[test]
    fn every_kind_has_a_secret_and_a_look_alike_in_the_corpus() {
        for rule in RULES.iter() {
            for sign in ['+', '-'] {
                let label = format!("{sign}\t{}\t", rule.name);
                assert!(
                    CORPUS.lines().any(|l| l.starts_with(&label)),
                    "no line {label:?} in the corpus"
                );
            }
        }
    }

    #[test]
    fn needles_never_skip_a_rule_that_matches() {
        let mut texts: Vec<String> = CORPUS
            .lines()
            .filter_map(|l| l.splitn(3, '\t').nth(2))
            .map(|text| text.replace("\\n", "\n"))
            .collect();
        texts.push("aws_ſecret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYab".into());
        texts.push("TWILIO_AUTH_TOKEN=0f3c9a1be24d5f6a7b8c9d0e1f2a3b4c — ſeen".into());
        for text in &texts {
            let candidates = candidates(text);
            for (i, rule) in RULES.iter().enumerate() {
                if rule.pattern().is_match(text) {
                    assert!(candidates[i], "{} skipped on {text:?}", rule.name);
                }
            }
        }
    }

    #[test]
    fn placeholders_masks_and_patterns_are_made_up() {
        for made_up in [
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "sk-your-key-here",
            "sk_live_0000000000000000000000000",
            "xoxb-1234-abababababababababab",
        ] {
            assert!(is_made_up(made_up), "{made_up}");
        }
        for real in [
            "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sAb",
            "AKIAM4LTJ7P2WVH7RSRT",
            "0f3c9a1be24d5f6a7b8c9d0e1f2a3b4c",
        ] {
            assert!(!is_made_up(real), "{real}");
        }
    }

    #[test]
    fn ssh_public_key_bodies_are_known_by_their_key_type() {
        for body in [
            "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA8F0xK2Lm9Pq4Rt7Wy1Ac5De8",
            "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
            "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT",
        ] {
            assert!(is_ssh_public_key_body(body), "{body}");
        }
        assert!(!is_ssh_public_key_body(
            "AAAAQm9sZGx5R29pbmdXaGVyZU5vMW9uZUhhc0dvbmVCZWZvcmU2"
        ));
    }

    #[test]
    fn case_folding_reads_the_letters_that_fold_to_ascii() {
        assert_eq!(fold_case("AWS_ſECRET \u{212A}EY"), "aws_secret key");
    }
}
