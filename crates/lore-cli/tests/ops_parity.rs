//! One table of operations, run through `lore --json` in one repository and through the MCP
//! server (the official Python SDK over stdio) in an identical one: every tool the server offers
//! must return the same fields with the same values (after ids, commits, times and paths, which
//! differ between two repositories, are masked). Errors too: the same kind, code and message.

mod common;

use std::path::Path;
use std::process::Command;

use common::lore_command;
use lore_testutils::TestRepo;
use serde_json::{Value, json};

/// One operation: its MCP tool and arguments, and the same request as CLI arguments.
struct Case {
    tool: &'static str,
    cli: &'static [&'static str],
    mcp: Value,
}

fn cases() -> Vec<Case> {
    let c = |tool, cli, mcp| Case { tool, cli, mcp };
    vec![
        c("init", &["init"], json!({})),
        c(
            "namespace_add",
            &["namespace", "add", "ops", "-d", "runbooks"],
            json!({"name": "ops", "description": "runbooks"}),
        ),
        c("namespaces", &["namespace", "list"], json!({})),
        c(
            "remember",
            &[
                "remember",
                "Use SQLite for the index",
                "-n",
                "decisions",
                "-k",
                "index-engine",
                "-b",
                "Bundled, no server.",
                "-t",
                "db,storage",
                "--cite",
                "README.md:1",
            ],
            json!({"namespace": "decisions", "key": "index-engine",
                   "summary": "Use SQLite for the index", "body": "Bundled, no server.\n",
                   "tags": ["db,storage"], "cites": ["README.md:1"]}),
        ),
        c(
            "remember",
            &[
                "remember",
                "Retries need jitter",
                "-n",
                "learnings",
                "-k",
                "retries",
            ],
            json!({"namespace": "learnings", "key": "retries", "summary": "Retries need jitter"}),
        ),
        c(
            "remember",
            &["remember", "Retries need jitter", "-n", "learnings"],
            json!({"namespace": "learnings", "summary": "Retries need jitter"}),
        ),
        c(
            "show",
            &["show", "decisions/index-engine"],
            json!({"memory": "decisions/index-engine"}),
        ),
        c(
            "show",
            &["show", "index-engine", "--level", "summary"],
            json!({"memory": "index-engine", "level": "summary"}),
        ),
        c("show", &["show", "zzzzzzzz"], json!({"memory": "zzzzzzzz"})),
        c("list", &["list"], json!({})),
        c(
            "list",
            &["list", "-n", "decisions", "--status", "active"],
            json!({"namespace": "decisions", "status": ["active"]}),
        ),
        c(
            "recall",
            &["recall", "sqlite index"],
            json!({"query": "sqlite index"}),
        ),
        c(
            "recall",
            &["recall", "jitter", "--explain", "--limit", "3"],
            json!({"query": "jitter", "explain": true, "limit": 3}),
        ),
        c(
            "update",
            &[
                "update",
                "learnings/retries",
                "-t",
                "backoff",
                "--status",
                "resolved",
            ],
            json!({"memory": "learnings/retries", "add_tags": ["backoff"], "status": "resolved"}),
        ),
        c(
            "supersede",
            &[
                "supersede",
                "decisions/index-engine",
                "Use SQLite with WAL for the index",
            ],
            json!({"memory": "decisions/index-engine",
                   "summary": "Use SQLite with WAL for the index"}),
        ),
        c(
            "history",
            &["history", "decisions/index-engine"],
            json!({"memory": "decisions/index-engine"}),
        ),
        c(
            "context",
            &["context", "-q", "sqlite"],
            json!({"query": "sqlite"}),
        ),
        c("status", &["status"], json!({})),
        c("verify", &["verify"], json!({})),
        c("scan", &["scan", "--history"], json!({"history": true})),
        c("reindex", &["reindex"], json!({})),
        c("review_list", &["review"], json!({})),
        c(
            "forget",
            &["forget", "learnings/retries"],
            json!({"memory": "learnings/retries"}),
        ),
        c(
            "ctx_init",
            &["ctx", "init", "--goal", "Fast recall", "--todo", "measure"],
            json!({"goal": "Fast recall", "todo": ["measure"]}),
        ),
        c(
            "ctx_log",
            &[
                "ctx",
                "log",
                "ran the benchmark",
                "--tool",
                "bench",
                "--entity",
                "fts5",
            ],
            json!({"text": "ran the benchmark", "tool": "bench", "entities": ["fts5"]}),
        ),
        c("ctx_status", &["ctx", "status"], json!({})),
        c(
            "ctx_commit",
            &["ctx", "commit", "Measured recall"],
            json!({"contribution": "Measured recall"}),
        ),
        c(
            "ctx_branch",
            &["ctx", "branch", "trigram", "--purpose", "Try trigrams"],
            json!({"name": "trigram", "purpose": "Try trigrams"}),
        ),
        c(
            "ctx_log",
            &[
                "ctx",
                "log",
                "trigram index is 3x larger",
                "--entity",
                "fts5",
            ],
            json!({"text": "trigram index is 3x larger", "entities": ["fts5"]}),
        ),
        c(
            "ctx_commit",
            &["ctx", "commit", "Sized the trigram index"],
            json!({"contribution": "Sized the trigram index"}),
        ),
        c(
            "ctx_switch",
            &["ctx", "switch", "main"],
            json!({"name": "main"}),
        ),
        c(
            "ctx_metadata_set",
            &["ctx", "metadata", "set", "env", "python: '3.11'"],
            json!({"segment": "env", "value": "python: '3.11'"}),
        ),
        c(
            "ctx_metadata_get",
            &["ctx", "metadata", "get", "env"],
            json!({"segment": "env"}),
        ),
        c(
            "ctx_update",
            &["ctx", "update", "-m", "refocus", "# Goal\nFast recall\n"],
            json!({"content": "# Goal\nFast recall\n", "message": "refocus"}),
        ),
        c("ctx_read", &["ctx", "read"], json!({})),
        c("ctx_history", &["ctx", "history"], json!({})),
        c(
            "ctx_snapshot",
            &["ctx", "snapshot", "1"],
            json!({"version": "1"}),
        ),
        c(
            "ctx_merge",
            &["ctx", "merge", "trigram", "--prefer", "theirs"],
            json!({"branch": "trigram", "prefer": "theirs"}),
        ),
        c(
            "ctx_merge",
            &["ctx", "merge", "nope"],
            json!({"branch": "nope"}),
        ),
        c("ctx_show", &["ctx", "show"], json!({})),
        c(
            "ctx_show",
            &["ctx", "show", "--log", "-k", "5"],
            json!({"log": true, "window": 5}),
        ),
        c(
            "ctx_show",
            &["ctx", "show", "--branch", "trigram"],
            json!({"branch": "trigram"}),
        ),
        c(
            "ctx_recall",
            &["ctx", "recall", "benchmark", "--all-branches"],
            json!({"query": "benchmark", "all_branches": true}),
        ),
    ]
}

/// What differs between two repositories doing the same thing: ids, commits, times, paths and
/// run times; and the advice in errors, which is worded for each front end.
fn masked(value: &Value, repo: &Path) -> Value {
    let id = regex_lite(r"\b[0-9a-hjkmnp-tv-z]{12}\b");
    let hex = regex_lite(r"\b[0-9a-f]{7,40}\b");
    let shard = regex_lite(r"/[0-9a-z]/[0-9a-z]/\[ID\]");
    let time = regex_lite(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?");
    let root = repo.display().to_string();
    fn walk(v: &Value, f: &dyn Fn(&str) -> String) -> Value {
        match v {
            Value::String(s) => Value::String(f(s)),
            Value::Number(n) => match n.as_f64() {
                Some(x) if !n.is_i64() && !n.is_u64() => json!((x * 1e4).round() / 1e4),
                _ => v.clone(),
            },
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, f)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "seconds" | "hints"))
                    .map(|(k, x)| (k.clone(), walk(x, f)))
                    .collect(),
            ),
            _ => v.clone(),
        }
    }
    walk(value, &|s: &str| {
        let s = s.replace(&root, "[REPO]");
        let s = time.replace_all(&s, "[TIME]");
        let s = id.replace_all(&s, "[ID]");
        let s = hex.replace_all(&s, "[HEX]");
        shard.replace_all(&s, "/[SHARD]/[ID]").into_owned()
    })
}

fn regex_lite(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a valid pattern")
}

fn cli_side(repo: &TestRepo, cases: &[Case]) -> Vec<Value> {
    cases
        .iter()
        .map(|case| {
            let mut args = vec!["--json", "--agent", "parity"];
            args.extend_from_slice(case.cli);
            let out = lore_command(&repo.path(), &repo.home(), &args)
                .output()
                .expect("running lore");
            let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                panic!(
                    "lore {:?}: not one JSON document ({e}):\n{}\n{}",
                    case.cli,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                )
            });
            assert_eq!(
                out.status.success(),
                value.get("error").is_none(),
                "lore {:?}: exit status and output disagree: {value}",
                case.cli
            );
            value
        })
        .collect()
}

fn mcp_side(repo: &TestRepo, cases: &[Case]) -> Vec<Value> {
    let python = common::mcp_client("venv/bin/python");
    let calls: Vec<Value> = cases
        .iter()
        .map(|c| json!({"tool": c.tool, "arguments": c.mcp}))
        .collect();
    let file = repo.home().join("calls.json");
    std::fs::write(&file, serde_json::to_vec(&calls).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/parity_client.py");
    let out = Command::new(python)
        .arg(script)
        .arg(common::lore_bin())
        .arg(repo.path())
        .arg(&file)
        .current_dir(repo.path())
        .env_remove("LORE_AGENT")
        .env_remove("LORE_EMBEDDER")
        .envs(lore_testutils::hermetic_env(&repo.home()))
        .output()
        .expect("running the Python MCP client");
    assert!(
        out.status.success(),
        "parity client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replies: Vec<Value> = serde_json::from_slice(&out.stdout).expect("the client's report");
    replies
        .into_iter()
        .zip(cases)
        .map(|(r, case)| {
            let structured = r["structured"].clone();
            assert!(
                structured.is_object(),
                "{}: no structured content: {r}",
                case.tool
            );
            assert_eq!(
                r["is_error"].as_bool().unwrap(),
                structured.get("error").is_some(),
                "{}: isError and the result disagree: {r}",
                case.tool
            );
            structured
        })
        .collect()
}

#[test]
fn every_tool_returns_the_same_fields_through_the_cli_and_mcp() {
    let cases = cases();
    let (a, b) = (TestRepo::new(), TestRepo::new());
    let cli = cli_side(&a, &cases);
    let mcp = mcp_side(&b, &cases);
    let mut covered: Vec<&str> = cases.iter().map(|c| c.tool).collect();
    covered.sort();
    covered.dedup();
    let offered = common::mcp_tool_names(&b);
    assert_eq!(
        covered, offered,
        "the table must cover every tool the MCP server offers"
    );
    let mut errors = 0;
    for ((case, from_cli), from_mcp) in cases.iter().zip(&cli).zip(&mcp) {
        let (x, y) = (masked(from_cli, &a.path()), masked(from_mcp, &b.path()));
        assert_eq!(
            x, y,
            "{} differs:\nCLI {:?}: {x:#}\nMCP {}: {y:#}",
            case.tool, case.cli, case.mcp
        );
        errors += usize::from(from_cli.get("error").is_some());
    }
    // The table exercises errors too (a duplicate, an unknown id, an unknown branch).
    assert_eq!(errors, 3, "{cli:#?}");
}
