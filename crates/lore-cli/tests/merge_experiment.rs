//! The merge experiment end to end with real `lore` processes: two workers and an orchestrator
//! over a central bare repository. Disjoint lessons merge with no conflict; five contradictory
//! keyed lessons surface as five conflicts; the concatenation control keeps all five pairs
//! silently; unkeyed (hashed) lessons coexist silently.

mod common;

use common::lore_command;
use lore_testutils::TestRepo;
use serde_json::Value;

#[test]
fn keyed_lessons_surface_contradictions_that_concatenation_and_hashing_hide() {
    let repo = TestRepo::new();
    let out = lore_command(&repo.path(), &repo.home(), &["--json", "bench", "merge"])
        .output()
        .expect("running lore");
    assert!(
        out.status.success(),
        "lore bench merge failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["disjoint_lessons"], 10, "{report:#}");
    assert_eq!(report["disjoint_conflicts"], 0, "{report:#}");
    assert_eq!(report["keyed"]["conflicts"], 5, "{report:#}");
    assert_eq!(report["concatenation"]["conflicts"], 0, "{report:#}");
    assert_eq!(report["concatenation"]["entries_kept"], 10, "{report:#}");
    assert_eq!(report["hashed"]["conflicts"], 0, "{report:#}");
    assert_eq!(report["hashed"]["entries_kept"], 10, "{report:#}");
}
