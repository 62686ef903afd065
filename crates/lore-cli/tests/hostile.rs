//! Hostile and careless input through the front ends: bounded work, no raw control characters
//! in what agents read, JSON-RPC answers to garbage, read-only use of a read-only repository.

mod common;

use common::{json, ok, run};
use lore_testutils::TestRepo;

fn hook(repo: &TestRepo, event: &str, payload: &str) -> (String, String) {
    let out = run(repo, &["hook", "claude", event], Some(payload.as_bytes()));
    assert!(out.status.success(), "hooks always exit 0: {out:?}");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn prompt_payload(repo: &TestRepo, prompt: &str) -> String {
    serde_json::json!({
        "session_id": "s1",
        "cwd": repo.path().display().to_string(),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    })
    .to_string()
}

#[test]
fn a_hook_past_its_time_budget_answers_nothing_and_exits_0() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "remember",
            "-n",
            "decisions",
            "sqlite index for embedded recall",
        ],
    );
    let payload = prompt_payload(&repo, "why the sqlite index for embedded recall?");
    let (out, _) = hook(&repo, "UserPromptSubmit", &payload);
    assert!(out.contains("sqlite index"), "{out}");
    repo.git(&["config", "lore.hookTimeoutMs", "0"]);
    let (out, err) = hook(&repo, "UserPromptSubmit", &payload);
    assert_eq!(out, "");
    assert!(err.contains("gave up after 0 ms"), "{err}");
}
