//! Each agent's hook payloads, as fixtures written to each agent's own description of them:
//! every fixture in tests/fixtures/hooks validates against its agent's schema
//! (tests/fixtures/hooks/schemas: Codex's as it publishes them; for Claude Code, Gemini CLI and
//! Cursor, which publish none, schemas written here from their SDK types, source or
//! documentation — see the folder's README), and every event of every agent is run through
//! `lore hook` from those fixtures — file memories injected on Codex's and Cursor's edits,
//! transcripts of every format captured, nothing on stderr.

mod common;

use std::path::{Path, PathBuf};

use common::{json, ok, run};
use lore_testutils::TestRepo;
use serde_json::Value;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks")
}

/// Each payload fixture and the schema it must satisfy.
const FIXTURE_SCHEMAS: &[(&str, &str)] = &[
    (
        "claude-session-start.json",
        "claude/session-start.schema.json",
    ),
    (
        "claude-user-prompt-submit.json",
        "claude/user-prompt-submit.schema.json",
    ),
    (
        "claude-post-tool-use.json",
        "claude/post-tool-use.schema.json",
    ),
    ("claude-pre-compact.json", "claude/pre-compact.schema.json"),
    ("claude-stop.json", "claude/stop.schema.json"),
    ("claude-session-end.json", "claude/session-end.schema.json"),
    (
        "codex-session-start.json",
        "codex/session-start.command.input.schema.json",
    ),
    (
        "codex-user-prompt-submit.json",
        "codex/user-prompt-submit.command.input.schema.json",
    ),
    (
        "codex-post-tool-use-apply-patch.json",
        "codex/post-tool-use.command.input.schema.json",
    ),
    (
        "codex-post-tool-use-bash.json",
        "codex/post-tool-use.command.input.schema.json",
    ),
    (
        "codex-pre-compact.json",
        "codex/pre-compact.command.input.schema.json",
    ),
    ("codex-stop.json", "codex/stop.command.input.schema.json"),
    (
        "gemini-session-start.json",
        "gemini/session-start.schema.json",
    ),
    (
        "gemini-before-agent.json",
        "gemini/before-agent.schema.json",
    ),
    ("gemini-after-tool.json", "gemini/after-tool.schema.json"),
    (
        "gemini-pre-compress.json",
        "gemini/pre-compress.schema.json",
    ),
    ("gemini-after-agent.json", "gemini/after-agent.schema.json"),
    ("gemini-session-end.json", "gemini/session-end.schema.json"),
    (
        "cursor-session-start.json",
        "cursor/session-start.schema.json",
    ),
    (
        "cursor-before-submit-prompt.json",
        "cursor/before-submit-prompt.schema.json",
    ),
    (
        "cursor-after-file-edit.json",
        "cursor/after-file-edit.schema.json",
    ),
    (
        "cursor-post-tool-use.json",
        "cursor/post-tool-use.schema.json",
    ),
    ("cursor-pre-compact.json", "cursor/pre-compact.schema.json"),
    ("cursor-stop.json", "cursor/stop.schema.json"),
    ("cursor-session-end.json", "cursor/session-end.schema.json"),
];

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fixture with REPO and TRANSCRIPT filled in.
fn fixture(name: &str, repo: &Path, transcript: &Path) -> String {
    read(&fixtures_dir().join(name))
        .replace("TRANSCRIPT", &transcript.display().to_string())
        .replace("REPO", &repo.display().to_string())
}

fn validator(schema: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&read(&fixtures_dir().join("schemas").join(schema)))
        .unwrap_or_else(|e| panic!("{schema}: {e}"));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{e}"))
}

fn violations(validator: &jsonschema::Validator, payload: &Value) -> Vec<String> {
    validator
        .iter_errors(payload)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn every_fixture_validates_against_its_agents_published_schema() {
    let repo = Path::new("/work/repo");
    let transcript = Path::new("/work/repo/.git/transcript.jsonl");
    for (name, schema) in FIXTURE_SCHEMAS {
        let payload: Value = serde_json::from_str(&fixture(name, repo, transcript))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let errors = violations(&validator(schema), &payload);
        assert!(errors.is_empty(), "{name} against {schema}: {errors:?}");
    }
    // Every payload fixture is checked: a new one must name its schema above.
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") {
            assert!(
                FIXTURE_SCHEMAS.iter().any(|(f, _)| *f == name),
                "{name} has no schema"
            );
        }
    }
    // Drift is caught: Codex requires permission_mode and names every field it sends.
    let codex = validator("codex/stop.command.input.schema.json");
    let mut payload: Value =
        serde_json::from_str(&fixture("codex-stop.json", repo, transcript)).unwrap();
    payload.as_object_mut().unwrap().remove("permission_mode");
    assert!(!violations(&codex, &payload).is_empty());
    payload["permission_mode"] = "default".into();
    payload["workspace_roots"] = serde_json::json!(["/w"]);
    assert!(!violations(&codex, &payload).is_empty());
}

/// Runs a hook; hooks always exit 0, and say nothing on stderr when all is well.
fn hook(repo: &TestRepo, agent: &str, event: &str, payload: &str) -> Option<Value> {
    let out = run(repo, &["hook", agent, event], Some(payload.as_bytes()));
    assert!(out.status.success(), "hooks always exit 0: {out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr, "", "{agent} {event}: stderr");
    let stdout = String::from_utf8(out.stdout).unwrap();
    (!stdout.trim().is_empty())
        .then(|| serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout:?}")))
}

/// The context a Claude-shaped answer (Claude Code, Codex, Gemini) gives, if any.
fn additional_context(answer: &Option<Value>) -> String {
    answer
        .as_ref()
        .and_then(|v| v["hookSpecificOutput"]["additionalContext"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn system_message(answer: &Option<Value>) -> String {
    answer
        .as_ref()
        .and_then(|v| v["systemMessage"].as_str())
        .unwrap_or_default()
        .to_string()
}

const MEMORY: &str = "Schema version lives in src/index/schema.rs";

fn repo_with_memory() -> TestRepo {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "-n", "decisions", MEMORY]);
    repo
}

/// Copies a transcript fixture into the repository's .git, REPO filled in.
fn transcript(repo: &TestRepo, name: &str) -> PathBuf {
    let path = repo.path().join(".git").join(name);
    std::fs::write(&path, fixture(name, &repo.path(), Path::new("-"))).unwrap();
    path
}

fn memories(repo: &TestRepo, namespace: &str) -> Vec<Value> {
    json(repo, &["list", "-n", namespace])["memories"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn codex_events_inject_file_memories_on_patches_and_shell_commands() {
    let repo = repo_with_memory();
    let t = transcript(&repo, "codex-transcript.jsonl");
    let payload = |name: &str| fixture(name, &repo.path(), &t);

    let start = hook(
        &repo,
        "codex",
        "SessionStart",
        &payload("codex-session-start.json"),
    );
    assert!(additional_context(&start).contains(MEMORY), "{start:?}");
    // The edit Codex sends as apply_patch names the file in its patch text.
    let patched = hook(
        &repo,
        "codex",
        "PostToolUse",
        &payload("codex-post-tool-use-apply-patch.json"),
    );
    assert_eq!(
        patched.as_ref().unwrap()["hookSpecificOutput"]["hookEventName"],
        "PostToolUse"
    );
    assert!(additional_context(&patched).contains(MEMORY), "{patched:?}");
    // A shell command naming the file, in another session (one session gets a memory once).
    let shell = payload("codex-post-tool-use-bash.json")
        .replace("019a2b3c-4d5e-7f60", "019a2b3c-ffff-7f60");
    let read = hook(&repo, "codex", "PostToolUse", &shell);
    assert!(additional_context(&read).contains(MEMORY), "{read:?}");
    // The prompt event runs (the memory was given to this session already).
    let prompt = hook(
        &repo,
        "codex",
        "UserPromptSubmit",
        &payload("codex-user-prompt-submit.json"),
    );
    assert!(!additional_context(&prompt).contains(MEMORY), "{prompt:?}");
    // Compaction captures the transcript; Stop then finds nothing new.
    let compact = hook(
        &repo,
        "codex",
        "PreCompact",
        &payload("codex-pre-compact.json"),
    );
    assert_eq!(system_message(&compact), "lore: saved 1 memory");
    assert_eq!(
        hook(&repo, "codex", "Stop", &payload("codex-stop.json")),
        None
    );
    assert!(
        memories(&repo, "decisions")
            .iter()
            .any(|m| m["agent"] == "codex" && m["summary"].as_str().unwrap().contains("Exit codes"))
    );
}

#[test]
fn cursor_events_inject_on_edits_and_capture_their_transcripts() {
    let repo = repo_with_memory();
    let t = transcript(&repo, "cursor-transcript.jsonl");
    let payload = |name: &str| fixture(name, &repo.path(), &t);

    let start = hook(
        &repo,
        "cursor",
        "sessionStart",
        &payload("cursor-session-start.json"),
    );
    assert!(
        start.as_ref().unwrap()["additional_context"]
            .as_str()
            .unwrap()
            .contains(MEMORY)
    );
    // Cursor takes context on postToolUse (an edit here); afterFileEdit takes no answer.
    assert_eq!(
        hook(
            &repo,
            "cursor",
            "afterFileEdit",
            &payload("cursor-after-file-edit.json")
        ),
        None
    );
    let edited = hook(
        &repo,
        "cursor",
        "postToolUse",
        &payload("cursor-post-tool-use.json"),
    );
    assert!(
        edited.as_ref().unwrap()["additional_context"]
            .as_str()
            .unwrap()
            .contains(MEMORY),
        "{edited:?}"
    );
    let prompt = hook(
        &repo,
        "cursor",
        "beforeSubmitPrompt",
        &payload("cursor-before-submit-prompt.json"),
    );
    assert_eq!(prompt, Some(serde_json::json!({ "continue": true })));
    assert_eq!(memories(&repo, "learnings").len(), 1);
    // Cursor's transcript lines carry the role beside the message: its decision is captured.
    assert_eq!(
        hook(
            &repo,
            "cursor",
            "preCompact",
            &payload("cursor-pre-compact.json")
        ),
        None
    );
    assert!(
        memories(&repo, "decisions")
            .iter()
            .any(|m| m["agent"] == "cursor"
                && m["summary"]
                    .as_str()
                    .unwrap()
                    .starts_with("Bump the index schema version")),
        "{:?}",
        memories(&repo, "decisions")
    );
    assert_eq!(
        hook(&repo, "cursor", "stop", &payload("cursor-stop.json")),
        None
    );
    assert_eq!(
        hook(
            &repo,
            "cursor",
            "sessionEnd",
            &payload("cursor-session-end.json")
        ),
        None
    );
}

#[test]
fn gemini_events_read_jsonl_chats_and_keep_stderr_quiet() {
    let repo = repo_with_memory();
    let t = transcript(&repo, "gemini-transcript.jsonl");
    let payload = |name: &str| fixture(name, &repo.path(), &t);

    let start = hook(
        &repo,
        "gemini",
        "SessionStart",
        &payload("gemini-session-start.json"),
    );
    assert!(additional_context(&start).contains(MEMORY));
    // read_many_files names its files in an `include` list.
    let read = hook(
        &repo,
        "gemini",
        "AfterTool",
        &payload("gemini-after-tool.json"),
    );
    assert!(additional_context(&read).contains(MEMORY), "{read:?}");
    assert_eq!(
        hook(
            &repo,
            "gemini",
            "BeforeAgent",
            &payload("gemini-before-agent.json")
        ),
        None
    );
    // The JSONL chat is read: the blocker waits for review.
    let compress = hook(
        &repo,
        "gemini",
        "PreCompress",
        &payload("gemini-pre-compress.json"),
    );
    assert!(
        system_message(&compress).contains("queued 1 suggestion"),
        "{compress:?}"
    );
    assert_eq!(
        hook(
            &repo,
            "gemini",
            "AfterAgent",
            &payload("gemini-after-agent.json")
        ),
        None
    );
    assert_eq!(
        hook(
            &repo,
            "gemini",
            "SessionEnd",
            &payload("gemini-session-end.json")
        ),
        None
    );
    // A payload lore cannot read is said in the answer, never on stderr (Gemini shows stderr
    // as a message whenever stdout is empty).
    let bad = hook(&repo, "gemini", "SessionStart", "{");
    assert!(system_message(&bad).starts_with("lore hook: "), "{bad:?}");
}

#[test]
fn claude_events_answer_from_their_fixtures() {
    let repo = repo_with_memory();
    let t = transcript(&repo, "claude-transcript.jsonl");
    let payload = |name: &str| fixture(name, &repo.path(), &t);
    let start = hook(
        &repo,
        "claude",
        "SessionStart",
        &payload("claude-session-start.json"),
    );
    assert!(additional_context(&start).contains(MEMORY));
    let edit = hook(
        &repo,
        "claude",
        "PostToolUse",
        &payload("claude-post-tool-use.json"),
    );
    assert!(additional_context(&edit).contains(MEMORY));
    hook(
        &repo,
        "claude",
        "UserPromptSubmit",
        &payload("claude-user-prompt-submit.json"),
    );
    let compact = hook(
        &repo,
        "claude",
        "PreCompact",
        &payload("claude-pre-compact.json"),
    );
    assert!(
        system_message(&compact).contains("saved 2 memories"),
        "{compact:?}"
    );
    assert_eq!(
        hook(&repo, "claude", "Stop", &payload("claude-stop.json")),
        None
    );
    assert_eq!(
        hook(
            &repo,
            "claude",
            "SessionEnd",
            &payload("claude-session-end.json")
        ),
        None
    );
}

#[test]
fn codex_setup_says_whether_codex_trusts_the_project_and_keeps_user_trust_entries() {
    let repo = TestRepo::new();
    let said = json(&repo, &["setup", "codex", "--command", "lore"]);
    assert_eq!(said["codex_project_trusted"], false, "{said}");
    let root = repo.path().canonicalize().unwrap().display().to_string();
    let user_config = format!(
        "model = \"gpt-5.4\"\n\n[features]\ncodex_hooks = true\n\n[projects.\"{root}\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"{root}/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:abc\"\n"
    );
    let config = repo.home().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, &user_config).unwrap();
    let said = json(&repo, &["setup", "codex", "--command", "lore"]);
    assert_eq!(said["codex_project_trusted"], true, "{said}");
    let toml = read(&repo.path().join(".codex/config.toml"));
    assert!(toml.contains("[features]\nhooks = true"), "{toml}");

    // In the user's own configuration, the trust entries stay as and where they were.
    ok(&repo, &["setup", "codex", "--global", "--command", "lore"]);
    ok(&repo, &["setup", "codex", "--global", "--command", "lore"]);
    let after = read(&config);
    let trust = user_config.split_once("[projects.").unwrap().1;
    assert!(after.contains(trust), "{after}");
    assert!(
        after.starts_with("model = \"gpt-5.4\"\n\n[features]\nhooks = true\n"),
        "{after}"
    );
}
