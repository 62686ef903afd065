//! The table of operations the parity and snapshot tests share: each as CLI arguments and as an
//! MCP call, in an order that gives each something to work on; and the masking of what differs
//! between two runs (ids, commits, times, paths).

use std::path::Path;

use serde_json::{Value, json};

/// One operation: its MCP tool and arguments, and the same request as CLI arguments.
pub struct Case {
    pub tool: &'static str,
    pub cli: &'static [&'static str],
    pub mcp: Value,
}

pub fn cases() -> Vec<Case> {
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
        c("conflicts", &["conflicts"], json!({})),
        // No remote here, nothing contradicted: the errors must agree too.
        c("sync", &["sync"], json!({})),
        c(
            "resolve",
            &["resolve", "decisions/index-engine", "--ours"],
            json!({"conflict": "decisions/index-engine", "keep": "ours"}),
        ),
        c(
            "sequentialthinking",
            &[
                "think",
                "step",
                "Split the parser from the lexer",
                "--number",
                "1",
                "--total",
                "3",
            ],
            json!({"thought": "Split the parser from the lexer", "thoughtNumber": 1,
                   "totalThoughts": 3, "nextThoughtNeeded": true, "session": "sequential"}),
        ),
        c(
            "sequentialthinking",
            &[
                "think",
                "step",
                "Lex with a hand-written scanner",
                "--number",
                "2",
                "--total",
                "3",
                "--score",
                "0.8",
                "--outcome",
                "success",
            ],
            json!({"thought": "Lex with a hand-written scanner", "thoughtNumber": 2,
                   "totalThoughts": 3, "nextThoughtNeeded": true, "score": 0.8,
                   "outcome": "success", "session": "sequential"}),
        ),
        c(
            "sequentialthinking",
            &[
                "think",
                "step",
                "Reconsider",
                "--number",
                "3",
                "--total",
                "3",
                "--revises",
                "7",
            ],
            json!({"thought": "Reconsider", "thoughtNumber": 3, "totalThoughts": 3,
                   "nextThoughtNeeded": true, "isRevision": true, "revisesThought": 7,
                   "session": "sequential"}),
        ),
        c(
            "think_add",
            &[
                "think",
                "add",
                "Cache the token stream",
                "--in",
                "perf",
                "--score",
                "0.6",
            ],
            json!({"session": "perf", "text": "Cache the token stream", "score": 0.6}),
        ),
        c(
            "think_add",
            &[
                "think",
                "add",
                "Out of range",
                "--in",
                "perf",
                "--score",
                "1.5",
            ],
            json!({"session": "perf", "text": "Out of range", "score": 1.5}),
        ),
        c(
            "think_search",
            &["think", "search", "lexer scanner"],
            json!({"query": "lexer scanner"}),
        ),
        c(
            "think_search",
            &[
                "think",
                "search",
                "--outcome",
                "success",
                "--in",
                "sequential",
            ],
            json!({"outcome": "success", "session": "sequential"}),
        ),
        c(
            "think_done",
            &[
                "think",
                "done",
                "--in",
                "sequential",
                "--topic",
                "parsing",
                "--lesson",
                "Keep lexing and parsing apart.",
            ],
            json!({"session": "sequential", "topic": "parsing",
                   "lesson": "Keep lexing and parsing apart."}),
        ),
        c(
            "think_replay",
            &["think", "replay", "0000"],
            json!({"id": "0000"}),
        ),
        c(
            "think_score",
            &["think", "score", "00000000", "--score", "0.5"],
            json!({"id": "00000000", "score": 0.5}),
        ),
        c(
            "think_outcome",
            &["think", "outcome", "00000000", "failed"],
            json!({"id": "00000000", "outcome": "failed"}),
        ),
        c(
            "think_diff",
            &["think", "diff", "00000000", "11111111"],
            json!({"from": "00000000", "to": "11111111"}),
        ),
    ]
}

/// What differs between two repositories doing the same thing: ids, commits, times and dates,
/// paths and run times; and the advice in errors, which is worded for each front end.
pub fn masked(value: &Value, repo: &Path) -> Value {
    let id = regex_lite(r"\b[0-9a-hjkmnp-tv-z]{12}\b");
    let hex = regex_lite(r"\b[0-9a-f]{7,40}\b");
    let shard = regex_lite(r"/[0-9a-z]/[0-9a-z]/\[ID\]");
    let time = regex_lite(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?");
    let date = regex_lite(r"\b\d{4}-\d\d-\d\d\b");
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
                    // Times, hints and sizes on disk change from run to run.
                    .filter(|(k, _)| !matches!(k.as_str(), "seconds" | "hints" | "disk"))
                    .map(|(k, x)| (k.clone(), walk(x, f)))
                    .collect(),
            ),
            _ => v.clone(),
        }
    }
    walk(value, &|s: &str| {
        let s = s.replace(&root, "[REPO]");
        let s = time.replace_all(&s, "[TIME]");
        let s = date.replace_all(&s, "[DATE]");
        let s = id.replace_all(&s, "[ID]");
        let s = hex.replace_all(&s, "[HEX]");
        shard.replace_all(&s, "/[SHARD]/[ID]").into_owned()
    })
}

pub fn regex_lite(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a valid pattern")
}

/// [`masked`] for text output.
pub fn masked_text(text: &str, repo: &Path) -> String {
    let seconds = regex_lite(r"\d+\.\d+s\b");
    let text = seconds.replace_all(text, "[SECONDS]");
    let sizes = regex_lite(r"\d+\.\d MB|about \d+ loose");
    let text = sizes.replace_all(&text, "[SIZE]");
    masked(&Value::String(text.into_owned()), repo)
        .as_str()
        .unwrap_or_default()
        .to_string()
}
