//! The store benchmark operation at a small size: in-process timings, storage and the git
//! baseline without spawning lore (no whole-process runs asked), a failing lore binary
//! surfacing as an error, and the execution details never taken from JSON arguments.

mod common;

use std::path::PathBuf;

use common::run_recorded;
use lore::ErrorClass;
use lore_bench::Bench;

fn tiny(work: &std::path::Path) -> Bench {
    Bench {
        sizes: vec![30],
        writes: 3,
        cli_writes: 0,
        queries: 4,
        cli_queries: 0,
        hook_runs: 0,
        grep_queries: 2,
        baseline: true,
        seed: 42,
        // Never started: no whole-process runs are asked for.
        lore_binary: PathBuf::from("/nonexistent/lore"),
        lore_args: Vec::new(),
        work_dir: work.join("repos"),
    }
}

#[test]
fn a_small_size_is_measured_in_process_and_against_the_git_baseline() {
    let work = tempfile::tempdir().unwrap();
    let (report, progress) = run_recorded(tiny(work.path()), &work.path().join("handle"), None);
    let report = report.unwrap();
    assert_eq!(report.embedder, "none");
    assert_eq!(report.embed_texts_per_second, None);
    assert_eq!(report.seed, 42);
    let [r] = &report.results[..] else {
        panic!("one size: {report:#?}")
    };
    assert_eq!(r.memories, 30);
    assert_eq!(r.remember_in_process.n, 3);
    assert_eq!(r.recall.n, 4);
    assert_eq!(r.remember_cli.n, 0);
    assert!(r.recall.p50_ms > 0.0 && r.recall.p50_ms <= r.recall.p95_ms);
    assert!(r.bytes_per_memory_after_gc > 0.0);
    assert_eq!(r.baseline_git_notes_add.unwrap().n, 3);
    assert_eq!(r.baseline_git_log_grep.unwrap().n, 2);
    // The repositories stay where the front end asked (it removes or keeps them).
    assert!(work.path().join("repos/30/repo/.git").is_dir());

    let phases = progress.phases();
    let total = |label: &str| {
        phases
            .iter()
            .find(|p| p.label == label)
            .unwrap_or_else(|| panic!("no phase {label:?} in {phases:#?}"))
            .total
    };
    assert_eq!(total("size 30: memories written"), Some(30));
    assert_eq!(total("size 30: remembers in process"), Some(3));
    assert_eq!(total("size 30: recalls in process"), Some(4));
    assert_eq!(total("size 30: baseline commits written"), Some(30));
    assert_eq!(total("size 30: git notes add runs"), Some(3));
    assert_eq!(total("size 30: reindexing"), None);
}

#[test]
fn a_failing_lore_run_fails_the_benchmark() {
    let work = tempfile::tempdir().unwrap();
    let request = Bench {
        cli_queries: 1,
        baseline: false,
        lore_binary: PathBuf::from("/bin/false"),
        ..tiny(work.path())
    };
    let (out, _) = run_recorded(request, &work.path().join("handle"), None);
    let err = out.unwrap_err();
    assert_eq!(err.class(), ErrorClass::Internal, "{err}");
    assert!(err.to_string().contains("lore recall failed"), "{err}");
}

#[test]
fn sizes_writes_and_queries_are_required() {
    let work = tempfile::tempdir().unwrap();
    for request in [
        Bench {
            sizes: Vec::new(),
            ..tiny(work.path())
        },
        Bench {
            writes: 0,
            ..tiny(work.path())
        },
        Bench {
            queries: 0,
            ..tiny(work.path())
        },
    ] {
        let (out, _) = run_recorded(request, &work.path().join("handle"), None);
        assert_eq!(out.unwrap_err().class(), ErrorClass::InvalidInput);
    }
}

#[test]
fn what_runs_and_where_is_never_taken_from_json_arguments() {
    for field in ["lore_binary", "lore_args", "work_dir"] {
        let args = serde_json::json!({ field: "/tmp/x" });
        assert!(
            serde_json::from_value::<Bench>(args).is_err(),
            "{field} must be refused"
        );
    }
    let parsed: Bench = serde_json::from_value(serde_json::json!({ "sizes": [10] })).unwrap();
    assert_eq!(parsed.sizes, vec![10]);
    assert_eq!(parsed.writes, 200);
    assert!(parsed.baseline);
    assert!(parsed.lore_binary.as_os_str().is_empty());
}
