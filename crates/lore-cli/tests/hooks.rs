//! `lore hook` with recorded payloads of each agent (tests/fixtures/hooks), `lore review` and
//! the secret scanner on the CLI's write paths.

mod common;

use std::path::Path;

use common::{json, ok, run};
use lore_testutils::TestRepo;
use serde_json::Value;

/// A fixture with REPO and TRANSCRIPT filled in.
fn fixture(repo: &TestRepo, name: &str, transcript: &Path) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks");
    std::fs::read_to_string(dir.join(name))
        .unwrap()
        .replace("TRANSCRIPT", &transcript.display().to_string())
        .replace("REPO", &repo.path().display().to_string())
}

fn hook(repo: &TestRepo, agent: &str, event: &str, payload: &str) -> (String, String) {
    let out = run(repo, &["hook", agent, event], Some(payload.as_bytes()));
    assert!(out.status.success(), "hooks always exit 0: {out:?}");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The agent's answer to a recorded payload (which must produce one).
fn answer_to(repo: &TestRepo, agent: &str, event: &str, name: &str, transcript: &Path) -> Value {
    answer(&hook(repo, agent, event, &fixture(repo, name, transcript)).0)
}

/// How many decisions the store holds.
fn decision_count(repo: &TestRepo) -> usize {
    json(repo, &["list", "-n", "decisions"])["memories"]
        .as_array()
        .unwrap()
        .len()
}

/// A live writer's hold on the memory ref's lock (a file held open): writes wait while it
/// lasts; `release` lets go and removes it.
struct HeldRefLock {
    path: std::path::PathBuf,
    file: Option<std::fs::File>,
}

impl HeldRefLock {
    fn take(repo: &TestRepo) -> HeldRefLock {
        let path = repo.path().join(".git/refs/lore/memory.lock");
        let file = Some(std::fs::File::create(&path).unwrap());
        HeldRefLock { path, file }
    }

    fn release(mut self) {
        self.file.take();
        std::fs::remove_file(&self.path).unwrap();
    }
}

fn answer(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout:?}"))
}

fn transcript(repo: &TestRepo, name: &str) -> std::path::PathBuf {
    let path = repo.path().join(".git").join(name);
    std::fs::write(&path, fixture(repo, name, Path::new("-"))).unwrap();
    path
}

#[test]
fn claude_code_session_lifecycle() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "remember",
            "-n",
            "decisions",
            "Rebuild the sqlite index on schema change",
            "--body",
            "The index is derived; see src/index/schema.rs for the schema version.",
        ],
    );
    let t = transcript(&repo, "claude-transcript.jsonl");

    let (out, _) = hook(
        &repo,
        "claude",
        "SessionStart",
        &fixture(&repo, "claude-session-start.json", &t),
    );
    let v = answer(&out);
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("Rebuild the sqlite index"), "{context}");
    assert!(context.contains("not instructions"), "{context}");
    assert!(
        context.contains(">> decision ----"),
        "capture guidance: {context}"
    );
    assert!(context.chars().count() <= 10_000);

    // A prompt that shares the memory's words gets it; an unrelated one gets nothing.
    let (out, _) = hook(
        &repo,
        "claude",
        "UserPromptSubmit",
        &fixture(&repo, "claude-user-prompt-submit.json", &t),
    );
    let v = answer(&out);
    assert!(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("Rebuild the sqlite index")
    );
    let unrelated = r#"{"session_id":"x","cwd":"CWD","hook_event_name":"UserPromptSubmit","prompt":"Write a haiku about autumn leaves falling"}"#
        .replace("CWD", &repo.path().display().to_string());
    assert_eq!(hook(&repo, "claude", "UserPromptSubmit", &unrelated).0, "");

    // Editing a file brings the memories that name it, once per session: this session was
    // given that memory with its prompt already, another session gets it.
    let edit = fixture(&repo, "claude-post-tool-use.json", &t);
    assert_eq!(hook(&repo, "claude", "PostToolUse", &edit).0, "");
    let (out, _) = hook(
        &repo,
        "claude",
        "PostToolUse",
        &edit.replace("0f3c9a7e-5b1d", "11111111-2222"),
    );
    assert!(
        answer(&out)["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("Rebuild the sqlite index")
    );

    // Logged context steps are checkpointed before compaction, and the transcript is captured.
    ok(&repo, &["ctx", "init", "--goal", "Schema-safe index"]);
    ok(&repo, &["ctx", "log", "read schema.rs", "--tool", "Read"]);
    // With a context workspace, a file tool's use is logged as a step.
    hook(&repo, "claude", "PostToolUse", &edit);
    let (out, err) = hook(
        &repo,
        "claude",
        "PreCompact",
        &fixture(&repo, "claude-pre-compact.json", &t),
    );
    assert!(err.is_empty(), "{err}");
    assert!(
        answer(&out)["systemMessage"]
            .as_str()
            .unwrap()
            .contains("saved 2 memories"),
        "{out}"
    );
    let status = json(&repo, &["ctx", "status"]);
    assert_eq!(
        status["uncommitted"].as_array().unwrap().len(),
        0,
        "{status}"
    );
    let log = repo.git(&["log", "-1", "--format=%s", "refs/lore/ctx/main"]);
    assert!(
        log.contains("Checkpoint before context compaction"),
        "{log}"
    );
    let steps = json(&repo, &["ctx", "show", "--log"]);
    let edit_step = steps["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| &pair[1])
        .find(|s| s["step"]["tool"] == "Edit")
        .unwrap_or_else(|| panic!("no Edit step: {steps}"));
    assert_eq!(
        edit_step["step"]["files"][0], "src/index/schema.rs",
        "{edit_step}"
    );
    assert_eq!(edit_step["step"]["agent"], "claude-code", "{edit_step}");
    assert!(
        edit_step["step"]["arguments"]
            .as_str()
            .unwrap()
            .contains("VERSION")
    );

    let decisions = json(&repo, &["list", "-n", "decisions"])["memories"].clone();
    let summaries: Vec<&str> = decisions
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["summary"].as_str().unwrap())
        .collect();
    assert!(
        summaries.contains(&"Rebuild the index from the refs when its schema version changes"),
        "{summaries:?}"
    );
    // File content quoted in a tool result is not a signal.
    assert!(
        !summaries.iter().any(|s| s.contains("file content")),
        "{summaries:?}"
    );
    let learnings = json(&repo, &["list", "-n", "learnings"])["memories"].clone();
    assert_eq!(learnings.as_array().unwrap().len(), 1, "{learnings}");
    // The pattern-level finding waits for review.
    let queue = json(&repo, &["review"]);
    let queued = queue["suggestions"].as_array().unwrap();
    assert_eq!(queued.len(), 1, "{queue}");
    assert!(
        queued[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("It turns out the WAL file")
    );

    // Stop and SessionEnd read on from where PreCompact stopped: nothing new, nothing twice.
    let (out, _) = hook(
        &repo,
        "claude",
        "Stop",
        &fixture(&repo, "claude-stop.json", &t),
    );
    assert_eq!(out, "");
    let (out, _) = hook(
        &repo,
        "claude",
        "SessionEnd",
        &fixture(&repo, "claude-session-end.json", &t),
    );
    assert_eq!(out, "");
    assert_eq!(
        json(&repo, &["review"])["suggestions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Review: edit in the queue (a bad namespace is refused), then accept with another edit.
    let id = queued[0]["id"].as_str().unwrap();
    let edited = json(&repo, &["review", "edit", id, "-n", "patterns"]);
    assert_eq!(edited["namespace"], "patterns", "{edited}");
    let out = run(&repo, &["review", "edit", id, "-n", "no such"], None);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&repo, &["review", "edit", "zzzz", "-s", "x"], None);
    assert_eq!(out.status.code(), Some(3));
    let accepted = json(
        &repo,
        &[
            "review",
            "accept",
            &id[..6],
            "--summary",
            "Remove the WAL file with the database on rebuild",
        ],
    );
    assert_eq!(accepted["memory"]["namespace"], "patterns");
    assert_eq!(accepted["memory"]["confidence"], 1.0);
    assert!(
        json(&repo, &["review"])["suggestions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn codex_gemini_and_cursor_payloads() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "remember",
            "-n",
            "decisions",
            "Schema version lives in src/index/schema.rs",
        ],
    );

    let t = transcript(&repo, "codex-transcript.jsonl");
    let v = answer_to(
        &repo,
        "codex",
        "SessionStart",
        "codex-session-start.json",
        &t,
    );
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let v = answer_to(&repo, "codex", "Stop", "codex-stop.json", &t);
    assert_eq!(v["systemMessage"], "lore: saved 1 memory");
    let d = json(&repo, &["list", "-n", "decisions"])["memories"].clone();
    assert!(
        d.as_array().unwrap().iter().any(|m| m["agent"] == "codex"),
        "{d}"
    );
    // An explicit --agent wins over the hook's agent name.
    let out = run(
        &repo,
        &["--agent", "my-bot", "hook", "gemini", "BeforeAgent"],
        Some(br#"{"session_id":"g","prompt":"[decision] Pin the toolchain to 1.95 for reproducible builds"}"#),
    );
    assert!(out.status.success());
    let d = json(&repo, &["list", "-n", "decisions"])["memories"].clone();
    assert!(
        d.as_array().unwrap().iter().any(|m| m["agent"] == "my-bot"),
        "{d}"
    );

    let t = transcript(&repo, "gemini-transcript.jsonl");
    let v = answer_to(
        &repo,
        "gemini",
        "SessionStart",
        "gemini-session-start.json",
        &t,
    );
    assert!(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("Schema version")
    );
    let v = answer_to(&repo, "gemini", "AfterAgent", "gemini-after-agent.json", &t);
    assert!(
        v["systemMessage"]
            .as_str()
            .unwrap()
            .contains("queued 1 suggestion"),
        "{v}"
    );

    let none = Path::new("-");
    let v = answer_to(
        &repo,
        "cursor",
        "sessionStart",
        "cursor-session-start.json",
        none,
    );
    assert!(
        v["additional_context"]
            .as_str()
            .unwrap()
            .contains("Schema version")
    );
    assert_eq!(
        hook(
            &repo,
            "cursor",
            "afterFileEdit",
            &fixture(&repo, "cursor-after-file-edit.json", none)
        )
        .0,
        ""
    );
    let v = answer_to(
        &repo,
        "cursor",
        "beforeSubmitPrompt",
        "cursor-before-submit-prompt.json",
        none,
    );
    assert_eq!(v, serde_json::json!({"continue": true}));
    let l = json(&repo, &["list", "-n", "learnings"])["memories"].clone();
    assert_eq!(
        l.as_array().unwrap().len(),
        1,
        "the [learned] prompt was captured: {l}"
    );
}

#[test]
fn unknown_events_and_bad_payloads_never_break_the_session() {
    let repo = TestRepo::new();
    let (out, err) = hook(&repo, "claude", "Notification", "{}");
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    for bad in ["", "{", "[1,2]", "null", "\u{0}\u{1}"] {
        let (out, err) = hook(&repo, "claude", "SessionStart", bad);
        assert_eq!(out, "");
        assert!(err.starts_with("lore hook: "), "{bad:?}: {err}");
    }
    let (out, err) = hook(&repo, "vim", "SessionStart", "{}");
    assert_eq!(out, "");
    assert!(
        err.contains("expected claude, codex, gemini or cursor"),
        "{err}"
    );
    // A transcript that does not exist is not an error; one full of junk is read around.
    let junk = repo.path().join(".git/junk.jsonl");
    std::fs::write(&junk, "garbage\n{\"type\":\"mystery\"}\n\u{feff}{}\n").unwrap();
    let payload = format!(
        r#"{{"session_id":"s","transcript_path":"{}"}}"#,
        junk.display()
    );
    assert_eq!(
        hook(&repo, "claude", "Stop", &payload),
        (String::new(), String::new())
    );
}

#[test]
fn secrets_are_redacted_blocked_or_reported_on_every_cli_write() {
    let repo = TestRepo::new();
    let written = json(
        &repo,
        &[
            "remember",
            "-n",
            "learnings",
            "Deploy key is AKIAQ7RZ3WJ5TXNB2KDM",
            "--body",
            "<private>home: 12 Elm St</private> then ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sAb",
        ],
    );
    assert_eq!(
        written["memory"]["summary"],
        "Deploy key is [REDACTED:aws-access-key-id]"
    );
    assert_eq!(
        written["memory"]["body"].as_str().unwrap().trim(),
        "[private] then [REDACTED:github-token]"
    );
    assert_eq!(written["secrets"]["decision"], "redacted");
    assert_eq!(written["secrets"]["findings"].as_array().unwrap().len(), 3);
    let id = written["memory"]["id"].as_str().unwrap().to_string();
    let stored = repo.git(&[
        "show",
        &format!("refs/lore/memory:{}", written["path"].as_str().unwrap()),
    ]);
    assert!(
        !stored.contains("AKIAQ7RZ3WJ5TXNB2KDM") && !stored.contains("Elm St"),
        "{stored}"
    );

    // Block: nothing is written; update and import are screened too.
    repo.git(&["config", "lore.secrets", "block"]);
    let out = run(
        &repo,
        &[
            "update",
            &id,
            "--body",
            "token xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("slack-token"));
    assert_eq!(
        json(&repo, &["show", &id])["memory"]["body"]
            .as_str()
            .unwrap()
            .trim(),
        "[private] then [REDACTED:github-token]"
    );
    repo.write(
        "in.jsonl",
        r#"{"namespace":"learnings","summary":"stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc"}"#,
    );
    let before = json(&repo, &["list"])["memories"].as_array().unwrap().len();
    let out = run(&repo, &["import", "jsonl", "in.jsonl"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stripe-key"),
        "{out:?}"
    );
    assert_eq!(
        json(&repo, &["list"])["memories"].as_array().unwrap().len(),
        before
    );
    repo.git(&["config", "lore.secrets", "nonsense"]);
    let out = run(
        &repo,
        &["remember", "-n", "learnings", "anything at all"],
        None,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("lore.secrets"),
        "{out:?}"
    );
    repo.git(&["config", "--unset", "lore.secrets"]);

    // Warn keeps the text, and `lore scan` finds it and points at purge.
    let warned = json(
        &repo,
        &[
            "--secrets",
            "warn",
            "remember",
            "-n",
            "learnings",
            "Old password = 'hunter2hunter2' for staging",
        ],
    );
    assert_eq!(warned["secrets"]["decision"], "warned");
    let scan = json(&repo, &["scan"]);
    assert_eq!(scan["clean"], false);
    assert_eq!(scan["memories"].as_array().unwrap().len(), 1, "{scan}");
    assert!(
        scan["next_step"]
            .as_str()
            .unwrap()
            .contains("forget --purge")
    );
    let bad = scan["memories"][0]["id"].as_str().unwrap().to_string();
    ok(&repo, &["forget", &bad]);
    assert_eq!(json(&repo, &["scan"])["clean"], true);
    assert_eq!(json(&repo, &["scan", "--history"])["clean"], false);
    ok(&repo, &["forget", "--purge", &bad]);
    assert_eq!(json(&repo, &["scan", "--history"])["clean"], true);

    // The context workspace is screened too: steps, contributions, the context document.
    ok(&repo, &["ctx", "init", "--goal", "Ship"]);
    let out = run(
        &repo,
        &[
            "ctx",
            "log",
            "exported GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sAb",
        ],
        None,
    );
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("secret scanner: redacted 1 secret (github-token"),
        "{out:?}"
    );
    let out = run(
        &repo,
        &[
            "ctx",
            "commit",
            "used sk_live_4eC39HqLyjWDarjtT1zdp7dc in tests",
        ],
        None,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stripe-key"),
        "{out:?}"
    );
    let everything = repo.git(&["log", "-p", "refs/lore/ctx/main"]);
    assert!(
        !everything.contains("ghp_R4nd0m") && !everything.contains("sk_live_4eC"),
        "{everything}"
    );
    assert!(everything.contains("[REDACTED:github-token]"));
    let out = run(
        &repo,
        &[
            "--secrets",
            "block",
            "ctx",
            "update",
            "-m",
            "keys",
            "AKIAQ7RZ3WJ5TXNB2KDM",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // A foreign .GCC directory is screened on import.
    repo.write(
        "gcc/main.md",
        "# Roadmap\n\nDeploy with AKIAQ7RZ3WJ5TXNB2KDM\n",
    );
    repo.write("gcc/branches/feature/commit.md", "## Branch Purpose\nTry it\n\n## This Commit's Contribution\nUsed xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx\n");
    repo.write(
        "gcc/branches/feature/log.md",
        "## Step 1\nexported password = 'Tr0ub4dor&3horse'\n",
    );
    let out = run(&repo, &["ctx", "import", "gcc"], None);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    for rule in ["aws-access-key-id", "slack-token", "password-assignment"] {
        assert!(said.contains(rule), "{rule}: {said}");
    }
    let everything = repo.git(&["log", "-p", "refs/lore/ctx/feature"]);
    for leaked in ["AKIAQ7RZ3WJ5TXNB2KDM", "xoxb-1234567890", "Tr0ub4dor"] {
        assert!(!everything.contains(leaked), "{leaked}");
    }
}

#[test]
fn a_hook_out_of_time_spools_its_event_and_the_next_hook_handles_it() {
    let repo = TestRepo::new();
    ok(&repo, &["init"]);
    repo.git(&["config", "lore.hookTimeoutMs", "1500"]);
    let t = transcript(&repo, "claude-transcript.jsonl");
    // A live writer holds the memory ref's lock: the capture's write waits past the budget.
    let held = HeldRefLock::take(&repo);
    let (out, err) = hook(
        &repo,
        "claude",
        "Stop",
        &fixture(&repo, "claude-stop.json", &t),
    );
    assert_eq!(out, "");
    assert!(
        err.contains("1 event(s) spooled for the next hook"),
        "{err}"
    );
    let spool = std::fs::read_to_string(repo.path().join(".git/lore/hooks/spool.jsonl")).unwrap();
    assert_eq!(spool.lines().count(), 1, "{spool}");
    held.release();
    assert_eq!(decision_count(&repo), 0);

    // The next hook, of any event, handles what was spooled first.
    hook(
        &repo,
        "claude",
        "SessionStart",
        &fixture(&repo, "claude-session-start.json", &t),
    );
    assert_eq!(decision_count(&repo), 1);
    let spool = std::fs::read_to_string(repo.path().join(".git/lore/hooks/spool.jsonl")).unwrap();
    assert_eq!(spool, "");
}

#[test]
fn a_tool_use_is_a_step_before_any_memory_exists() {
    let repo = TestRepo::new();
    ok(&repo, &["ctx", "init", "--goal", "Ship"]);
    let t = transcript(&repo, "codex-transcript.jsonl");
    hook(
        &repo,
        "codex",
        "PostToolUse",
        &fixture(&repo, "codex-post-tool-use-bash.json", &t),
    );
    let log = json(&repo, &["ctx", "show", "--log"]);
    let steps = log.to_string();
    assert!(steps.contains("src/index/schema.rs"), "{log}");
    assert_eq!(
        json(&repo, &["list"])["memories"].as_array().unwrap().len(),
        0
    );
}

#[test]
fn a_hook_killed_mid_write_loses_no_capture() {
    let repo = TestRepo::new();
    ok(&repo, &["init"]);
    let t = transcript(&repo, "claude-transcript.jsonl");
    let stop = fixture(&repo, "claude-stop.json", &t);
    // A live writer holds the memory ref's lock, so the capture's write waits; the agent kills
    // the hook meanwhile (as at its own timeout).
    let held = HeldRefLock::take(&repo);
    let mut child = common::lore_command(&repo.path(), &repo.home(), &["hook", "claude", "Stop"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stop.as_bytes())
            .unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(700));
    child.kill().unwrap();
    child.wait().unwrap();
    held.release();
    assert_eq!(decision_count(&repo), 0);
    // The killed hook saved no progress through the transcript: the next Stop reads it again.
    hook(&repo, "claude", "Stop", &stop);
    assert_eq!(decision_count(&repo), 1);
}
