//! `lore bench` and `lore eval trajectories` end to end at tiny sizes: the whole-process runs
//! start this very binary, the JSON reports keep their fields, the text tables their columns,
//! and sizes too small to measure are usage errors.

mod common;

use common::{json, ok, run};
use lore_testutils::TestRepo;

const TINY_BENCH: [&str; 15] = [
    "bench",
    "--sizes",
    "20",
    "--writes",
    "2",
    "--cli-writes",
    "1",
    "--queries",
    "2",
    "--cli-queries",
    "1",
    "--hook-runs",
    "1",
    "--grep-queries",
    "1",
];

fn keys(value: &serde_json::Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn bench_times_this_binary_and_reports_every_measurement() {
    let repo = TestRepo::new();
    let mut args = vec!["--embedder", "none"];
    args.extend(TINY_BENCH);
    let report = json(&repo, &args);
    assert_eq!(
        keys(&report),
        ["machine", "embedder", "lore_version", "seed", "results"]
    );
    assert_eq!(report["embedder"], "none");
    let size = &report["results"][0];
    assert_eq!(
        keys(size),
        [
            "memories",
            "fill_seconds",
            "remember_in_process",
            "remember_cli",
            "recall",
            "recall_cli",
            "hook_session_start_cli",
            "hook_prompt_cli",
            "hook_stop_cli",
            "hook_long_prompt_cli",
            "reindex_seconds",
            "bytes_per_memory_after_gc",
            "baseline_git_notes_add",
            "baseline_git_log_grep",
        ]
    );
    assert_eq!(size["memories"], 20);
    for (what, n) in [
        ("remember_cli", 1),
        ("recall_cli", 1),
        ("hook_session_start_cli", 1),
        ("hook_prompt_cli", 1),
        ("hook_stop_cli", 1),
        ("hook_long_prompt_cli", 1),
        ("baseline_git_notes_add", 2),
        ("baseline_git_log_grep", 1),
    ] {
        assert_eq!(size[what]["n"], n, "{what}: {size:#}");
        assert!(size[what]["p50_ms"].as_f64().unwrap() > 0.0, "{what}");
    }
}

#[test]
fn bench_prints_its_table_and_keeps_repositories_when_asked() {
    let repo = TestRepo::new();
    let keep = repo.path().join("kept");
    let keep_arg = keep.display().to_string();
    let mut args = vec!["--embedder", "static"];
    args.extend(TINY_BENCH);
    args.extend(["--no-baseline", "--keep", &keep_arg]);
    let text = ok(&repo, &args);
    assert!(text.contains("embedder: static:"), "{text}");
    assert!(text.contains("short texts/s on one core"), "{text}");
    assert!(
        text.contains("| memories | remember p50/p95 (in-process) |"),
        "{text}"
    );
    let row = text.lines().find(|l| l.starts_with("| 20 |")).expect(&text);
    assert!(row.ends_with("| - | - |"), "no baseline: {row}");
    assert!(keep.join("20/repo/.git").is_dir());
}

#[test]
fn eval_trajectories_reports_every_query_set() {
    let repo = TestRepo::new();
    let small = [
        "eval",
        "trajectories",
        "--trajectories",
        "1",
        "--steps",
        "300",
        "--queries",
        "2",
    ];
    let mut args = vec!["--embedder", "none"];
    args.extend(small);
    let report = json(&repo, &args);
    assert_eq!(
        keys(&report),
        [
            "config", "embedder", "params", "budgets", "build_ms", "units", "kinds"
        ]
    );
    assert_eq!(
        report["config"],
        serde_json::json!({"seed": 7, "trajectories": 1, "steps": 300, "queries_per_kind": 2})
    );
    let kinds: Vec<&str> = report["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["shared", "heterogeneous", "mixed"]);
    let text = ok(&repo, &small);
    assert!(
        text.starts_with(
            "Trajectory retrieval: 1 trajectories x 300 steps, seed 7, embedder static:"
        ),
        "{text}"
    );
    assert_eq!(text.matches("strategy   Hit@2  R@64 ").count(), 3, "{text}");
}

/// `lore bench hot` at tiny sizes: every row is measured, and the kept stores are left as
/// `lore import` leaves one (packed, with a multi-pack index over its batches' packs), not with
/// a pack per batch that every timed process would search in turn.
#[test]
fn bench_hot_times_every_path_on_stores_left_as_an_import_leaves_them() {
    let repo = TestRepo::new();
    let keep = repo.path().join("kept");
    let keep_arg = keep.display().to_string();
    let text = ok(
        &repo,
        &[
            "bench",
            "hot",
            "--small",
            "1500",
            "--large",
            "2500",
            "--runs",
            "2",
            "--in-process-runs",
            "3",
            "--steps",
            "60",
            "--transcript-mb",
            "1",
            "--keep",
            &keep_arg,
        ],
    );
    for row in [
        "| `lore remember` process, 1500 stored",
        "| `ctx recall` process at 60 steps | 2 |",
        "| remember in-process at 2500 (ext4; ",
        " of 3 superseded a near-duplicate) | 3 |",
        "| hybrid `recall` process at 2500 | 2 |",
        "| BM25 recall in-process at 2500",
    ] {
        assert!(text.contains(row), "{row}: {text}");
    }
    for store in ["small", "large"] {
        let git_dir = keep.join(store).join(".git");
        let midx = git_dir.join("objects/pack/multi-pack-index");
        assert!(midx.is_file(), "{store}: no multi-pack index");
        let verify = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&git_dir)
            .args(["multi-pack-index", "verify"])
            .output()
            .unwrap();
        assert!(verify.status.success(), "{store}: {verify:?}");
    }
}

#[test]
fn sizes_too_small_to_measure_are_usage_errors() {
    let repo = TestRepo::new();
    for args in [
        &["eval", "trajectories", "--steps", "100"][..],
        &["bench", "--sizes", "10", "--writes", "0"][..],
    ] {
        let out = run(&repo, args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
}
