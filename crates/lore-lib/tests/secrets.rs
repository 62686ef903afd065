//! The secret scanner against its labelled corpus (`tests/data/secrets_corpus.tsv`): precision
//! and recall over every rule, and no finding at all on the decoys that must never trigger.

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

#[test]
fn precision_and_recall_on_the_labelled_corpus() {
    let cases = corpus();
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    for case in &cases {
        let found = scan(&case.text);
        if case.positive {
            if found.iter().any(|f| f.rule == case.label) {
                tp += 1;
                // Anything else found in a one-secret text is a false positive.
                fp += found.iter().filter(|f| f.rule != case.label).count();
                if found.len() > 1 {
                    misses.push(format!("extra finding in {:?}: {found:?}", case.text));
                }
            } else {
                fn_ += 1;
                fp += found.len();
                misses.push(format!(
                    "missed {} in {:?}: {found:?}",
                    case.label, case.text
                ));
            }
        } else if !found.is_empty() {
            fp += found.len();
            misses.push(format!(
                "false positive on {} {:?}: {found:?}",
                case.label, case.text
            ));
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    let positives = cases.iter().filter(|c| c.positive).count();
    println!(
        "secret scanner: {} cases ({positives} positive), precision {precision:.3}, recall {recall:.3}",
        cases.len()
    );
    assert!(misses.is_empty(), "{}", misses.join("\n"));
    assert_eq!((precision, recall), (1.0, 1.0));
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
