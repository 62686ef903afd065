//! Every write an agent can make, with a secret in every string field, through real `lore`
//! processes (one MCP server on stdio; every hook event of every agent): afterwards no git
//! object (reachable or not), no file of lore's local state (journals, index, review queue,
//! capture state) and no stderr line holds the secret. The writes come from the shared table
//! of operations and the server's own tool list: a write tool the table has no case for fails
//! the test.

mod common;

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use common::mcp_stdio::McpProcess;
use common::table::cases;
use common::{lore_command, ok};
use lore_testutils::TestRepo;

/// A GitHub token of the real shape (the scanner knows the format).
const SECRET: &str = "ghp_R8fK2mQ9vT4xW7bN1cZ5hJ3pL6sD0gY8aE2u";
/// What must never be found: the token's random part (its prefix alone is not a secret).
const SECRET_CORE: &str = "R8fK2mQ9vT4xW7bN1cZ5hJ3pL6sD0gY8aE2u";

/// One variant of `value` per string in it (array elements and object values, at any depth),
/// that string followed by the secret.
fn with_secret_in_each_string(value: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    match value {
        Value::String(s) => out.push(Value::String(format!("{s} {SECRET}"))),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                for variant in with_secret_in_each_string(item) {
                    let mut copy = items.clone();
                    copy[i] = variant;
                    out.push(Value::Array(copy));
                }
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                for variant in with_secret_in_each_string(item) {
                    let mut copy = map.clone();
                    copy.insert(key.clone(), variant);
                    out.push(Value::Object(copy));
                }
            }
        }
        _ => {}
    }
    out
}

/// Every place under `dir` holding `needle`, as `path` (recursively; bytes compared).
fn files_holding(dir: &Path, needle: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_holding(&path, needle, out);
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        {
            out.push(path.display().to_string());
        }
    }
}

/// Every git object of the repository (unreachable ones too) that holds the secret.
fn objects_holding_the_secret(repo: &TestRepo) -> Vec<String> {
    let all = repo.git(&[
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname)",
    ]);
    let mut found = Vec::new();
    for id in all.lines() {
        let out = repo.git_command(&["cat-file", "-p", id]).output().unwrap();
        if out
            .stdout
            .windows(SECRET_CORE.len())
            .any(|w| w == SECRET_CORE.as_bytes())
        {
            found.push(format!(
                "{id}: {}",
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .find(|l| l.contains(SECRET_CORE))
                    .unwrap_or("")
            ));
        }
    }
    found
}

fn assert_nothing_holds_the_secret(repo: &TestRepo, stderr: &str, what: &str) {
    let objects = objects_holding_the_secret(repo);
    assert!(
        objects.is_empty(),
        "{what}: git objects hold it: {objects:#?}"
    );
    let mut files = Vec::new();
    files_holding(&repo.path().join(".git/lore"), SECRET_CORE, &mut files);
    assert!(files.is_empty(), "{what}: lore's files hold it: {files:#?}");
    assert!(
        !stderr.contains(SECRET_CORE),
        "{what}: stderr holds it: {stderr}"
    );
}

fn call(mcp: &mut McpProcess, tool: &str, arguments: &Value) -> Value {
    mcp.next_id += 1;
    let id = mcp.next_id;
    let request = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":tool,"arguments":arguments}});
    mcp.send(request.to_string().as_bytes());
    mcp.until_ping(Some(id))
        .into_iter()
        .find(|m| m["id"] == json!(id))
        .expect("an answer")
}

#[test]
fn no_write_tool_stores_a_secret_given_in_any_string_field() {
    let repo = TestRepo::new();
    repo.write("README.md", "# Demo\n");
    repo.git(&["add", "README.md"]);
    repo.git(&["commit", "-qm", "readme"]);
    let stderr_path = repo.home().join("mcp-stderr.log");
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    let mut mcp = McpProcess::start_with_stderr(&repo, Stdio::from(stderr));
    mcp.send(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let listed = mcp.read();
    let writes: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["annotations"]["readOnlyHint"] != json!(true))
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let table = cases();
    let missing: Vec<&String> = writes
        .iter()
        .filter(|w| !table.iter().any(|c| c.tool == w.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "write tools without a case in tests/common/table.rs: {missing:?}"
    );
    let mut variants = 0;
    for case in &table {
        if writes.contains(&case.tool.to_string()) {
            for arguments in with_secret_in_each_string(&case.mcp) {
                let answer = call(&mut mcp, case.tool, &arguments);
                assert!(
                    answer.get("result").is_some() || answer.get("error").is_some(),
                    "{answer}"
                );
                variants += 1;
            }
        }
        // The case as it is, so the next ones find what they work on.
        call(&mut mcp, case.tool, &case.mcp);
    }
    assert!(variants >= 50, "only {variants} variants ran");
    drop(mcp);
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert_nothing_holds_the_secret(&repo, &stderr, "MCP writes");
}

/// A fixture's text with REPO and TRANSCRIPT filled in.
fn fixture(name: &str, repo: &TestRepo, transcript: &Path) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks");
    std::fs::read_to_string(dir.join(name))
        .unwrap()
        .replace("REPO", &repo.path().display().to_string())
        .replace("TRANSCRIPT", &transcript.display().to_string())
}

/// Every string of free text (a space in it) in a JSON value, followed by the secret.
fn secret_in_free_text(value: &mut Value) {
    match value {
        Value::String(s) if s.contains(' ') => s.push_str(&format!(" {SECRET}")),
        Value::Array(items) => items.iter_mut().for_each(secret_in_free_text),
        Value::Object(map) => map.values_mut().for_each(secret_in_free_text),
        _ => {}
    }
}

#[test]
fn no_hook_event_stores_a_secret_from_its_payload_or_transcript() {
    let repo = TestRepo::new();
    ok(&repo, &["init"]);
    ok(&repo, &["ctx", "init", "--goal", "Ship"]);
    ok(
        &repo,
        &["remember", "-n", "learnings", "Seed memory for the hooks"],
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks");
    let mut stderr = String::new();
    let mut runs = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        let (agent_prefix, _) = stem.split_once('-').unwrap();
        let agent = match agent_prefix {
            "claude" => "claude-code",
            other => other,
        };
        // The agent's transcript, its free text carrying the secret.
        let transcript = repo.home().join(format!("{agent_prefix}-transcript.jsonl"));
        let source = fixture(
            &format!("{agent_prefix}-transcript.jsonl"),
            &repo,
            &transcript,
        );
        let lines: Vec<String> = source
            .lines()
            .map(|l| match serde_json::from_str::<Value>(l) {
                Ok(mut v) => {
                    secret_in_free_text(&mut v);
                    v.to_string()
                }
                Err(_) => l.to_string(),
            })
            .collect();
        std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
        let payload: Value = serde_json::from_str(&fixture(&name, &repo, &transcript)).unwrap();
        let event = payload["hook_event_name"]
            .as_str()
            .or(payload["event"].as_str())
            .unwrap_or("")
            .to_string();
        for variant in with_secret_in_each_string(&payload) {
            // An event lore does not handle is answered before its payload is read: a closed
            // pipe is fine (`run` allows it).
            let payload = variant.to_string();
            let out = common::run(&repo, &["hook", agent, &event], Some(payload.as_bytes()));
            assert!(out.status.success(), "{name}: {out:?}");
            stderr.push_str(&String::from_utf8_lossy(&out.stderr));
            runs += 1;
        }
    }
    assert!(runs > 100, "only {runs} hook runs");
    assert_nothing_holds_the_secret(&repo, &stderr, "hook events");
}

#[test]
fn scan_finds_a_secret_kept_under_warn_in_a_reasoning_session_and_a_context_branch() {
    let repo = TestRepo::new();
    ok(&repo, &["init"]);
    assert_eq!(common::json(&repo, &["scan"])["clean"], true);
    let text = format!("call the API with {SECRET}");
    ok(
        &repo,
        &[
            "--secrets",
            "warn",
            "think",
            "add",
            &text,
            "--in",
            "s1",
            "--score",
            "0.5",
        ],
    );
    ok(&repo, &["ctx", "init", "--goal", "Ship"]);
    ok(&repo, &["--secrets", "warn", "ctx", "log", &text]);
    ok(
        &repo,
        &["--secrets", "warn", "ctx", "commit", "logged the call"],
    );
    let scan = common::json(&repo, &["scan"]);
    assert_eq!(scan["clean"], false, "{scan}");
    let refs: Vec<&str> = scan["refs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["refname"].as_str().unwrap())
        .collect();
    assert!(refs.contains(&"refs/lore/thoughts/s1"), "{scan}");
    assert!(refs.contains(&"refs/lore/ctx/main"), "{scan}");
    assert!(
        scan["next_step"]
            .as_str()
            .unwrap()
            .contains("context branch"),
        "{scan}"
    );
    // The text said nothing of the secret itself.
    assert!(!scan.to_string().contains(SECRET_CORE), "{scan}");
}

#[test]
fn no_write_the_command_line_alone_offers_stores_a_secret() {
    // A repository that keeps secrets on purpose (`warn`) is the source of what is imported.
    let source = TestRepo::new();
    ok(&source, &["init"]);
    let text = format!("deploy with {SECRET}");
    let warn = |args: &[&str]| {
        let mut all = vec!["--secrets", "warn"];
        all.extend_from_slice(args);
        ok(&source, &all);
    };
    warn(&[
        "remember",
        "-n",
        "learnings",
        &text,
        "-b",
        &text,
        "-t",
        "deploy",
    ]);
    warn(&["ctx", "init", "--goal", &text]);
    warn(&["ctx", "log", &text]);
    warn(&["ctx", "commit", &text]);
    let gcc = source.path().join("export/.GCC");
    ok(&source, &["ctx", "export", gcc.to_str().unwrap()]);
    let markdown = source.path().join("export/md");
    ok(&source, &["export", "markdown", markdown.to_str().unwrap()]);

    // The repository under test keeps the default policy (redact).
    let repo = TestRepo::new();
    ok(&repo, &["init"]);
    let mut stderr = String::new();
    let mut run_here = |args: &[&str]| {
        let out = common::run(&repo, args, None);
        stderr.push_str(&String::from_utf8_lossy(&out.stderr));
        out
    };
    // JSONL import: the secret in each string field of a record, one record a field.
    let record = json!({"namespace": "learnings", "key": "deploy", "summary": "How we deploy",
        "body": "Tag, then push.", "tags": ["deploy"], "author": "Dev", "agent": "bot",
        "session": "s1", "status": "active"});
    let lines: Vec<String> = with_secret_in_each_string(&record)
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut v = v.clone();
            v["key"] = json!(format!("deploy-{i}"));
            v.to_string()
        })
        .collect();
    std::fs::write(repo.path().join("in.jsonl"), lines.join("\n") + "\n").unwrap();
    run_here(&["import", "jsonl", "in.jsonl"]);
    run_here(&["import", "markdown", markdown.to_str().unwrap()]);
    run_here(&["ctx", "import", gcc.to_str().unwrap()]);
    // Review: a suggestion edited and accepted with the secret in its new text.
    let transcript = repo.path().join(".git/claude-transcript.jsonl");
    std::fs::write(
        &transcript,
        fixture("claude-transcript.jsonl", &repo, Path::new("-")),
    )
    .unwrap();
    let stop = fixture("claude-stop.json", &repo, &transcript);
    let out = lore_command(&repo.path(), &repo.home(), &["hook", "claude", "Stop"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(stop.as_bytes())?;
            child.wait()
        })
        .unwrap();
    assert!(out.success());
    let queue = common::json(&repo, &["review"]);
    let id = queue["suggestions"][0]["id"].as_str().unwrap().to_string();
    run_here(&["review", "edit", &id, "--body", &text]);
    run_here(&["review", "accept", &id, "--summary", &text]);
    assert!(
        common::json(&repo, &["list"])["memories"]
            .as_array()
            .unwrap()
            .len()
            > 5,
        "the imports landed: {stderr}"
    );
    assert_nothing_holds_the_secret(&repo, &stderr, "command-line writes");
}
