//! The LoCoMo operation on a two-conversation fixture in the official schema: one store per
//! conversation, evidence scored by `dia_id` (multi-id entries split), category 5 and questions
//! whose evidence is missing skipped, per-category metrics, progress per conversation.

mod common;

use std::path::PathBuf;

use common::run_recorded;
use lore::ErrorClass;
use lore::embed::{Tier, load};
use lore_bench::EvalLoCoMo;

fn fixture() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/locomo-mini.json"
    ))
}

#[test]
fn each_question_is_scored_by_its_evidence_turns_per_category() {
    for tier in [Tier::None, Tier::Static] {
        let work = tempfile::tempdir().unwrap();
        let request = EvalLoCoMo {
            file: fixture(),
            work_dir: work.path().join("conversations"),
            ..EvalLoCoMo::default()
        };
        let (report, progress) = run_recorded(
            request,
            &work.path().join("handle"),
            load(tier, None).unwrap(),
        );
        let report = report.unwrap();
        assert_eq!(report.conversations, 2, "{tier:?}: {report:#?}");
        assert_eq!(report.turns, 10);
        // The adversarial question and the one whose evidence is not in its conversation.
        assert_eq!(report.skipped, 2, "{report:#?}");
        assert_eq!(report.questions, 5);
        let at = |k: usize| report.at.iter().find(|a| a.k == k).unwrap().clone();
        // Every question's evidence is found in the top 5 (two turns for the multi-hop one),
        // and the single-evidence ones rank their turn first.
        assert_eq!(at(5).recall, 1.0, "{tier:?}: {report:#?}");
        assert_eq!(at(5).recall_all, 1.0);
        assert!(at(1).recall_any >= 0.8, "{tier:?}: {report:#?}");
        let categories: Vec<(&str, usize)> = report
            .by_category
            .iter()
            .map(|c| (c.category.as_str(), c.queries))
            .collect();
        assert_eq!(
            categories,
            [
                ("1 multi-hop", 1),
                ("2 temporal", 1),
                ("3 open-domain", 1),
                ("4 single-hop", 2)
            ]
        );
        // The multi-hop question has two evidence turns: at k = 1 at most half is found.
        let multi = &report.by_category[0];
        assert!(multi.at(1).recall <= 0.5);
        assert_eq!(multi.at(1).recall_all, 0.0);
        assert!(report.query_ms_p50 > 0.0);
        let phases = progress.phases();
        let done = phases
            .iter()
            .find(|p| p.label == "conversations evaluated")
            .expect("a phase per conversation");
        assert_eq!(done.total, Some(2));
        assert_eq!(done.advances, vec![1, 2]);
    }
}

#[test]
fn a_file_not_in_the_schema_or_missing_is_invalid_input_saying_so() {
    let work = tempfile::tempdir().unwrap();
    let bad = work.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"[{"conversation": {"session_1": [{"text": "no id"}]}}]"#,
    )
    .unwrap();
    for (file, says) in [
        (bad, "reading LoCoMo"),
        (work.path().join("missing.json"), "missing.json"),
    ] {
        let request = EvalLoCoMo {
            file,
            work_dir: work.path().join("conversations"),
            ..EvalLoCoMo::default()
        };
        let (out, _) = run_recorded(request, &work.path().join("handle"), None);
        let err = out.unwrap_err();
        assert_eq!(err.class(), ErrorClass::InvalidInput, "{err}");
        assert!(err.to_string().contains(says), "{err}");
    }
}

/// `scripts/locomo-like.py` (LoCoMo-shaped data made from a LongMemEval file, docs/evaluation.md)
/// writes a file this operation reads whole: every question kept, its evidence naming turns that
/// exist, multi-session questions as multi-hop ones. Needs `python3` (fails without it).
#[test]
fn the_generated_locomo_shaped_file_is_read_and_scored_whole() {
    let work = tempfile::tempdir().unwrap();
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let out = work.path().join("locomo-like.json");
    let made = std::process::Command::new("python3")
        .arg(root.join("scripts/locomo-like.py"))
        .arg(root.join("crates/lore-bench/tests/data/longmemeval-mini.json"))
        .arg(&out)
        .args(["--conversations", "2"])
        .output()
        .expect("python3 runs (scripts/setup.sh installs it)");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&made.stdout).trim(),
        "2 conversations, 10 turns, 3 questions"
    );
    let request = EvalLoCoMo {
        file: out,
        work_dir: work.path().join("conversations"),
        ..EvalLoCoMo::default()
    };
    let (report, _) = run_recorded(
        request,
        &work.path().join("handle"),
        load(Tier::Static, None).unwrap(),
    );
    let report = report.unwrap();
    assert_eq!(
        (
            report.conversations,
            report.turns,
            report.questions,
            report.skipped
        ),
        (2, 10, 3, 0),
        "{report:#?}"
    );
    let categories: Vec<(&str, usize)> = report
        .by_category
        .iter()
        .map(|c| (c.category.as_str(), c.queries))
        .collect();
    assert_eq!(categories, [("1 multi-hop", 1), ("4 single-hop", 2)]);
}
