//! The secret scanner against its labelled corpus (`tests/data/secrets_corpus.tsv`): precision
//! and recall over every rule, and no finding at all on the decoys that must never trigger.

use std::collections::BTreeMap;

use lore::secrets::scan;

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

/// Precision and recall of each rule over the corpus, as the markdown table the README shows.
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
/// at least 100 secrets of at least 20 kinds and 100 look-alikes; the README's table is this
/// test's output (run with `--nocapture` to see it).
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
    let readme = include_str!("../../../README.md");
    assert!(
        readme.contains(&table),
        "README.md's secret scanner table is out of date; it should read:\n{table}"
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
                format!("xoxb-{}-{}", random(b"0123456789", 12), random(B62, 24)),
                "slack-token",
            ),
            (
                format!("sk-ant-api03-{}", random(B62, 90)),
                "anthropic-api-key",
            ),
            (format!("AIza{}", random(B62, 35)), "gcp-api-key"),
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
