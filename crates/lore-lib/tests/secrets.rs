//! The secret scanner against its labelled corpus (`tests/data/secrets_corpus.tsv`): precision
//! and recall over every rule, and no finding at all on the decoys that must never trigger.

use std::collections::BTreeMap;

use lore::secrets::{redact, scan};

struct Case {
    positive: bool,
    label: String,
    text: String,
}

fn corpus() -> Vec<Case> {
    include_str!("data/secrets_corpus.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut parts = l.splitn(3, '\t');
            let sign = parts.next().unwrap();
            let label = parts.next().expect("a label").to_string();
            let text = parts.next().expect("a text").replace("\\n", "\n");
            Case {
                positive: sign == "+",
                label,
                text,
            }
        })
        .collect()
}

/// Counts for one rule over the corpus.
#[derive(Default)]
struct Tally {
    found: usize,
    missed: usize,
    wrong: usize,
}

impl Tally {
    fn precision(&self) -> f64 {
        self.found as f64 / (self.found + self.wrong).max(1) as f64
    }

    fn recall(&self) -> f64 {
        self.found as f64 / (self.found + self.missed).max(1) as f64
    }
}

/// Precision and recall of each rule over the corpus, as the markdown table
/// docs/secrets-and-bounds.md shows.
fn per_kind_table(cases: &[Case]) -> (String, BTreeMap<String, Tally>, Vec<String>) {
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    for case in cases {
        let found = scan(&case.text);
        if case.positive {
            let tally = tallies.entry(case.label.clone()).or_default();
            if found.iter().any(|f| f.rule == case.label) {
                tally.found += 1;
            } else {
                tally.missed += 1;
                misses.push(format!(
                    "missed {} in {:?}: {found:?}",
                    case.label, case.text
                ));
            }
        }
        for f in found
            .iter()
            .filter(|f| !case.positive || f.rule != case.label)
        {
            tallies.entry(f.rule.to_string()).or_default().wrong += 1;
            misses.push(format!(
                "{} found in {} {:?}: {f:?}",
                f.rule, case.label, case.text
            ));
        }
    }
    let positives = cases.iter().filter(|c| c.positive).count();
    let mut table = String::from(
        "| kind | secrets | found | false alarms | precision | recall |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for (kind, t) in &tallies {
        table.push_str(&format!(
            "| {kind} | {} | {} | {} | {:.2} | {:.2} |\n",
            t.found + t.missed,
            t.found,
            t.wrong,
            t.precision(),
            t.recall()
        ));
    }
    table.push_str(&format!(
        "\n{} texts: {positives} holding one secret each, {} look-alikes holding none.\n",
        cases.len(),
        cases.len() - positives
    ));
    (table, tallies, misses)
}

/// Every rule finds at least 95% of its secrets and at least 95% of what it finds is one, over
/// at least 100 secrets of at least 20 kinds and 100 look-alikes; the table in
/// docs/secrets-and-bounds.md is this test's output (run with `--nocapture` to see it).
#[test]
fn precision_and_recall_per_kind_on_the_labelled_corpus() {
    let cases = corpus();
    let (table, tallies, misses) = per_kind_table(&cases);
    println!("{table}");
    let positives = cases.iter().filter(|c| c.positive).count();
    assert!(
        positives >= 100 && cases.len() - positives >= 100,
        "{positives} of {}",
        cases.len()
    );
    let kinds = tallies.values().filter(|t| t.found + t.missed > 0).count();
    assert!(kinds >= 20, "{kinds} kinds");
    for (kind, t) in &tallies {
        assert!(
            t.precision() >= 0.95 && t.recall() >= 0.95,
            "{kind}: precision {:.2}, recall {:.2}\n{}",
            t.precision(),
            t.recall(),
            misses.join("\n")
        );
    }
    let page = include_str!("../../../docs/secrets-and-bounds.md");
    assert!(
        page.contains(&table),
        "docs/secrets-and-bounds.md's secret scanner table is out of date; it should read:\n{table}"
    );
}

#[test]
fn uuids_shas_and_hashes_never_trigger() {
    let mut decoys = Vec::new();
    // Many fresh random values of each shape, not just the corpus's handful.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..500 {
        let hex: String = (0..64).map(|_| format!("{:x}", next() % 16)).collect();
        decoys.push(hex[..40].to_string());
        decoys.push(hex.clone());
        decoys.push(format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        ));
        decoys.push(hex.to_uppercase());
        let id: String = (0..26)
            .map(|_| b"0123456789abcdefghjkmnpqrstvwxyz"[(next() % 32) as usize] as char)
            .collect();
        decoys.push(id);
    }
    for d in &decoys {
        let found = scan(&format!("value {d} here"));
        assert!(found.is_empty(), "{d}: {found:?}");
    }
}

/// Fresh random credentials the corpus never saw: provider formats filled with random
/// characters, and bare random strings for the generic detector. Prints the detection rates.
#[test]
fn generated_credentials_are_found() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    const B62: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const UPPER32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    const HEX: &[u8] = b"0123456789abcdef";
    const DIGITS: &[u8] = b"0123456789";
    const BECH32: &[u8] = b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
    let mut random = |alphabet: &[u8], n: usize| -> String {
        (0..n)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
            .collect()
    };
    let mut formats = 0;
    let mut generic_found = 0;
    let rounds = 200;
    for _ in 0..rounds {
        let samples = [
            (format!("AKIA{}", random(UPPER32, 16)), "aws-access-key-id"),
            (format!("ghp_{}", random(B62, 36)), "github-token"),
            (format!("glpat-{}", random(B62, 20)), "gitlab-token"),
            (format!("sk_live_{}", random(B62, 24)), "stripe-key"),
            (
                format!("xoxb-{}-{}", random(DIGITS, 12), random(B62, 24)),
                "slack-token",
            ),
            (
                format!("sk-ant-api03-{}", random(B62, 90)),
                "anthropic-api-key",
            ),
            (format!("AIza{}", random(B62, 35)), "gcp-api-key"),
            (format!("SK{}", random(HEX, 32)), "twilio-api-key"),
            (format!("key-{}", random(HEX, 32)), "mailgun-api-key"),
            (format!("lin_api_{}", random(B62, 40)), "linear-api-key"),
            (format!("dp.pt.{}", random(B62, 43)), "doppler-token"),
            (format!("hvs.{}", random(B62, 90)), "vault-token"),
            (format!("HRKU-AA{}", random(B62, 58)), "heroku-api-key"),
            (
                format!("AGE-SECRET-KEY-1{}", random(BECH32, 58)),
                "age-secret-key",
            ),
            (
                format!("{}:AA{}", random(DIGITS, 10), random(B62, 33)),
                "telegram-bot-token",
            ),
            (
                format!("{}8Q~{}", random(B62, 3), random(B62, 31)),
                "azure-client-secret",
            ),
            (
                format!("https://{}@o1.ingest.sentry.io/2", random(HEX, 32)),
                "sentry-dsn",
            ),
            (
                format!("TWILIO_AUTH_TOKEN={}", random(HEX, 32)),
                "twilio-auth-token",
            ),
            (format!("DD_API_KEY={}", random(HEX, 32)), "datadog-api-key"),
        ];
        for (secret, rule) in &samples {
            let found = scan(&format!("the value {secret} was pasted"));
            assert_eq!(found.len(), 1, "{secret}: {found:?}");
            assert_eq!(found[0].rule, *rule, "{secret}");
            formats += 1;
        }
        let bare = random(B62, 32);
        if scan(&format!("cookie {bare} leaked"))
            .iter()
            .any(|f| f.rule == "high-entropy-string")
        {
            generic_found += 1;
        }
    }
    let generic = generic_found as f64 / rounds as f64;
    println!(
        "generated: {formats} provider-format credentials all found; bare random 32-character strings: {generic:.3} found"
    );
    assert!(
        generic >= 0.9,
        "the generic detector found only {generic:.3}"
    );
}

/// A key at the end of a line is not assigned what the next line holds: `token:` followed by a
/// blank line once took `users:` as its value, redacted it, and kept the real token below.
#[test]
fn a_key_at_a_line_end_takes_nothing_from_the_next_line() {
    let text = "apiVersion: v1\nkind: Config\ncontexts:\n- name: prod\n  token:\n\nusers:\n- name: ci\n  user:\n    token: abcdef.0123456789abcdef\n";
    let found = scan(text);
    assert_eq!(
        redact(text, &found),
        "apiVersion: v1\nkind: Config\ncontexts:\n- name: prod\n  token:\n\nusers:\n- name: ci\n  user:\n    token: [REDACTED:kubeconfig-token]\n",
        "{found:?}"
    );
    let keys_at_line_ends = [
        "password:",
        "secret =",
        "api_key:",
        "token =>",
        "DB_PASSWORD=",
        "POSTGRES_PASSWORD:",
        "TWILIO_AUTH_TOKEN=",
        "DD_API_KEY:",
        "heroku api key is",
        "aws_secret_access_key =",
        "AZURE_CLIENT_SECRET:",
        "AccountKey=",
        "Authorization: Bearer",
        "machine db.internal login app password",
        "mysql -u root -p",
        "curl -u admin:",
        "\"private_key_id\":",
    ];
    let next_lines = [
        "users:",
        "0f3c9a1be24d5f6a7b8c9d0e1f2a3b4c",
        "wa6EcihWsarFyd6Q7LYlTkyJ829Doe-K_nskjHSk",
        "123e4567-e89b-42d3-a456-426614174000",
    ];
    // Scanning the lines together finds what scanning each alone finds, no more.
    let found_in = |text: &str, offset: usize| -> Vec<(&'static str, usize, usize)> {
        scan(text)
            .into_iter()
            .map(|f| (f.rule, f.span.0 + offset, f.span.1 + offset))
            .collect()
    };
    for key in keys_at_line_ends {
        for next in next_lines {
            for gap in ["\n", "\n\n", "\r\n", " \n\t"] {
                let text = format!("{key}{gap}{next}");
                let mut apart = found_in(key, 0);
                apart.extend(found_in(next, key.len() + gap.len()));
                assert_eq!(found_in(&text, 0), apart, "{text:?}");
            }
        }
    }
}

/// Only private-key blocks and `<private>` spans run over several lines; every other secret is
/// within one line, in the corpus and wherever its lines are joined.
#[test]
fn no_other_value_crosses_a_line_end() {
    let cases = corpus();
    let joined: String = cases.iter().map(|c| format!("{}\n\n", c.text)).collect();
    let texts = cases
        .iter()
        .map(|c| c.text.as_str())
        .chain([joined.as_str()]);
    for text in texts {
        for f in scan(text) {
            let value = &text[f.span.0..f.span.1];
            assert!(
                !value.contains('\n') || ["private-key", "private-span"].contains(&f.rule),
                "{} crosses a line end in {text:?}: {value:?}",
                f.rule
            );
        }
    }
}

/// The examples providers document (AWS's key pair, Slack's webhook) and the placeholders docs
/// and templates use are not secrets, wherever they stand.
#[test]
fn documented_examples_and_placeholders_are_not_findings() {
    let examples = [
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "sk-your-key-here",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
        "xoxb-your-bot-token-here",
        "AIzaxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ];
    for example in examples {
        for text in [
            example.to_string(),
            format!("export AWS_ACCESS_KEY_ID={example}"),
            format!("aws_secret_access_key = {example}"),
            format!("OPENAI_API_KEY={example}"),
            format!("token: \"{example}\""),
            format!("see {example} in the docs"),
        ] {
            let found = scan(&text);
            assert!(found.is_empty(), "{text:?}: {found:?}");
        }
    }
}

/// Certificates, public keys and signatures in any armour, SSH public keys however they are
/// quoted or spaced, and Go module hashes are public: no finding.
#[test]
fn public_key_material_and_module_hashes_are_not_findings() {
    let body = "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\nRTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD";
    let ssh_rsa = "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA8F0xK2Lm9Pq4Rt7Wy1Ac5De8Fg2Hk6Mn9Qs3Uv7Xz0Bd4Gh8Kl2Np6Sr0Tw4Yx8Ab2Ef6Ij0Mo4Qu8Vy2Cz5Fh9Lk3Pn7St";
    let texts = [
        format!("-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----"),
        format!("-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----"),
        format!("-----BEGIN RSA PUBLIC KEY-----\n{body}\n-----END RSA PUBLIC KEY-----"),
        format!(
            "-----BEGIN CERTIFICATE REQUEST-----\r\n{body}\r\n-----END CERTIFICATE REQUEST-----"
        ),
        format!(
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\nVersion: GnuPG v2\n\n{body}\n=Xy8a\n-----END PGP PUBLIC KEY BLOCK-----"
        ),
        format!(
            "---- BEGIN SSH2 PUBLIC KEY ----\nComment: \"deploy\"\n{body}\n---- END SSH2 PUBLIC KEY ----"
        ),
        format!(
            "\"ca.crt\": \"-----BEGIN CERTIFICATE-----\\n{}\\n-----END CERTIFICATE-----\\n\"",
            body.replace('\n', "\\n")
        ),
        format!(
            "  ca: |\n    -----BEGIN CERTIFICATE-----\n    {}\n    -----END CERTIFICATE-----",
            body.replace('\n', "\n    ")
        ),
        format!("ssh-rsa {ssh_rsa} alice@laptop"),
        format!("ssh-rsa\t\t{ssh_rsa}"),
        format!("authorized_keys: [\"ssh-rsa  {ssh_rsa} deploy\"]"),
        format!("command=\"/usr/bin/backup\",no-pty {ssh_rsa} backup@host"),
        "github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=".to_string(),
        "github.com/pkg/errors v0.9.1/go.mod h1:bwawxfHBFNV+L2hUp1rHADufV3IMtnDRdf1r5NINEl0="
            .to_string(),
    ];
    for text in &texts {
        let found = scan(text);
        assert!(found.is_empty(), "{text:?}: {found:?}");
    }
    // A private key next to a certificate is still found, also in JSON's escapes.
    let key = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7vbqajDhA8F0x";
    let bundle = format!(
        "{}\n-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----",
        texts[0]
    );
    let service_account = format!(
        "{{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{key}\\n-----END PRIVATE KEY-----\\n\"}}"
    );
    for text in [bundle, service_account] {
        let rules: Vec<&str> = scan(&text).iter().map(|f| f.rule).collect();
        assert_eq!(rules, ["private-key"], "{text:?}");
    }
}

/// Scanning time grows with the text, not its square, also on text made to hold many almost
/// matches of the rules that look further than one token (key words, config lines, armour).
#[test]
fn scanning_adversarial_text_is_linear() {
    let pieces = [
        "twilio auth token datadog api key heroku ",
        "machine a login b account c ",
        "curl -H x curl -X y mysql -u z mysql ",
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC ",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0 ",
        "a:1:b:c:\ntoken:\n\nusers:\n",
        "Authorization: Bearer Authorization: ",
        "sk-ant-api03- ghp_ xoxb- AKIA eyJ.eyJ. ",
        "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ. s.abc ",
        "PuTTY-User-Key-File-3: Private-Lines: 1\n",
    ];
    for piece in pieces {
        let small = piece.repeat(150);
        let large = piece.repeat(150 * 8);
        scan(&small);
        let time = |text: &str| {
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    std::hint::black_box(scan(text));
                    start.elapsed()
                })
                .min()
                .unwrap()
                .as_secs_f64()
        };
        let ratio = time(&large) / time(&small).max(1e-6);
        assert!(
            ratio <= 24.0,
            "{piece:?}: 8× the text took {ratio:.1}× the time"
        );
    }
}
