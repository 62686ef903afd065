//! The LongMemEval operation on a four-question fixture: the official protocol's scoring and
//! skips, with and without an embedder, progress per question, and a gzip-compressed file read
//! like a plain one.

mod common;

use std::io::Write;
use std::path::PathBuf;

use common::run_recorded;
use lore::ErrorClass;
use lore::embed::{Tier, load};
use lore_bench::{EvalLongMemEval, EvalReport};

fn fixture() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/longmemeval-mini.json"
    ))
}

fn at(report: &EvalReport, k: usize) -> &lore_bench::longmemeval::AtK {
    report.at.iter().find(|a| a.k == k).unwrap()
}

#[test]
fn the_official_protocol_scores_gold_sessions_and_skips_the_rest() {
    for tier in [Tier::None, Tier::Static] {
        let work = tempfile::tempdir().unwrap();
        let request = EvalLongMemEval {
            file: fixture(),
            work_dir: work.path().join("questions"),
            ..EvalLongMemEval::default()
        };
        let (report, progress) = run_recorded(
            request,
            &work.path().join("handle"),
            load(tier, None).unwrap(),
        );
        let report = report.unwrap();
        // q4 is an abstention; q3's gold has no user answer turn: both skipped by the strict
        // protocol, while the loose metric keeps every non-abstention question.
        assert_eq!(report.questions, 2, "{tier:?}: {report:#?}");
        assert_eq!(report.skipped, 2);
        assert_eq!(report.loose_questions, 3);
        // q1's single gold session ranks first; q2's two gold sessions are both in the top 3.
        assert_eq!(at(&report, 3).recall_all, 1.0, "{tier:?}: {report:#?}");
        assert_eq!(at(&report, 1).recall_any, 1.0);
        assert!(at(&report, 1).recall_all >= 0.5);
        assert!(at(&report, 10).ndcg_any > 0.9);
        assert!(report.query_ms_p50 > 0.0);
        assert_eq!(report.embedder == "none", tier == Tier::None);
        let phases = progress.phases();
        let questions = phases
            .iter()
            .find(|p| p.label == "questions evaluated")
            .expect("a phase per question");
        assert_eq!(questions.total, Some(4));
        assert_eq!(questions.advances, vec![1, 2, 3, 4]);
    }
}

#[test]
fn a_compressed_file_and_a_cut_off_read_like_the_plain_one() {
    let work = tempfile::tempdir().unwrap();
    let gz = work.path().join("questions.json.gz");
    let mut encoder =
        flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), Default::default());
    encoder
        .write_all(&std::fs::read(fixture()).unwrap())
        .unwrap();
    encoder.finish().unwrap();
    let request = EvalLongMemEval {
        file: gz,
        questions: Some(2),
        work_dir: work.path().join("questions"),
        ..EvalLongMemEval::default()
    };
    let (report, _) = run_recorded(request, &work.path().join("handle"), None);
    let report = report.unwrap();
    assert_eq!(report.questions + report.skipped, 2, "{report:#?}");
    assert_eq!(report.loose_questions, 2);
}

#[test]
fn an_unreadable_file_or_a_missing_work_directory_is_invalid_input() {
    let work = tempfile::tempdir().unwrap();
    let missing = EvalLongMemEval {
        file: work.path().join("no-such-file.json"),
        work_dir: work.path().join("questions"),
        ..EvalLongMemEval::default()
    };
    let (out, _) = run_recorded(missing, &work.path().join("handle"), None);
    let err = out.unwrap_err();
    assert_eq!(err.class(), ErrorClass::InvalidInput, "{err}");
    assert!(err.to_string().contains("no-such-file.json"), "{err}");

    let no_work_dir = EvalLongMemEval {
        file: fixture(),
        ..EvalLongMemEval::default()
    };
    let (out, _) = run_recorded(no_work_dir, &work.path().join("handle2"), None);
    assert_eq!(out.unwrap_err().class(), ErrorClass::InvalidInput);
}

#[test]
fn the_work_directory_is_not_taken_from_json_arguments() {
    let parsed: Result<EvalLongMemEval, _> = serde_json::from_value(serde_json::json!({
        "file": "/q.json",
        "work_dir": "/etc",
    }));
    assert!(
        parsed.is_err(),
        "work_dir must be refused as an unknown field"
    );
    let parsed: EvalLongMemEval =
        serde_json::from_value(serde_json::json!({ "file": "/q.json", "fusion": "rrf" })).unwrap();
    assert_eq!(
        parsed.ranking.fusion,
        Some(lore::ops::memory::FusionKind::Rrf)
    );
    assert!(parsed.work_dir.as_os_str().is_empty());
}

#[test]
fn a_question_date_that_does_not_read_is_an_error_never_the_clock() {
    let work = tempfile::tempdir().unwrap();
    let mut questions: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture()).unwrap()).unwrap();
    let id = questions[0]["question_id"].as_str().unwrap().to_string();
    questions[0]["question_date"] = "sometime last spring".into();
    let file = work.path().join("bad-date.json");
    std::fs::write(&file, questions.to_string()).unwrap();
    let request = EvalLongMemEval {
        file,
        work_dir: work.path().join("questions"),
        ..EvalLongMemEval::default()
    };
    let (out, _) = run_recorded(request, &work.path().join("handle"), None);
    let err = out.unwrap_err().to_string();
    assert!(
        err.contains(&id) && err.contains("sometime last spring"),
        "{err}"
    );
}
