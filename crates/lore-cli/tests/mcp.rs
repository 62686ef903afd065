//! `lore mcp` driven by real clients: the official Python SDK (both protocol eras, stdio and
//! HTTP) and the MCP Inspector CLI (stdio and HTTP), installed by scripts/setup-clients.sh.
//! Without them the tests fail and say how to install them: they never pass by skipping.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::{lore_bin, lore_command};
use lore_testutils::TestRepo;
use serde_json::Value;

/// How many tools the server offers (the parity test checks that each is covered).
const TOOLS: usize = 43;

fn python_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/python_client.py")
}

fn run_python(repo: &TestRepo, python: &Path, args: &[&str]) -> Value {
    let out = Command::new(python)
        .arg(python_script())
        .args(args)
        .current_dir(repo.path())
        .envs(lore_testutils::hermetic_env(&repo.home()))
        .output()
        .expect("running the Python client");
    assert!(
        out.status.success(),
        "python client {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Closing a session answers what the SDK expects (it logs anything but 200/204/405).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    serde_json::from_slice(&out.stdout).expect("the client's report")
}

/// A `lore mcp --http` server on a free loopback port; killed on drop.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(repo: &TestRepo, extra: &[&str]) -> HttpServer {
        let mut args = vec!["mcp", "--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = lore_command(&repo.path(), &repo.home(), &args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting lore mcp --http");
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        HttpServer { child, url }
    }

    /// Status code of a raw POST with the given extra headers.
    fn status(&self, headers: &[&str]) -> u16 {
        let rest = self.url.trim_start_matches("http://");
        let (host, path) = rest.split_once('/').unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let mut req = format!(
            "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        req.push_str(body);
        let mut s = TcpStream::connect(host).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status in {answer:?}"))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn python_sdk_over_stdio_in_both_protocol_eras() {
    let python = common::mcp_client("venv/bin/python");
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let repo = TestRepo::new();
        let report = run_python(
            &repo,
            &python,
            &[
                "stdio",
                lore_bin(),
                &repo.path().display().to_string(),
                mode,
            ],
        );
        assert_eq!(report["protocol"], protocol, "{report}");
        assert_eq!(report["server"], "lore");
        assert_eq!(report["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(report["tools"], TOOLS);
        // What the tools wrote is in git, under lore's refs, with the client as the agent.
        let log = repo.git(&["log", "--format=%s%n%b", "refs/lore/memory"]);
        assert!(log.contains("Lore-Agent: lore-test-python"), "{log}");
        let ctx_log = repo.git(&["log", "--format=%b", "refs/lore/ctx/main"]);
        assert!(
            ctx_log.contains("Lore-Agent: lore-test-python"),
            "{ctx_log}"
        );
    }
}

#[test]
fn python_sdk_over_http_with_token_origin_and_host_checks() {
    let python = common::mcp_client("venv/bin/python");
    let repo = TestRepo::new();
    let server = HttpServer::start(&repo, &["--token", "t0ken-for-tests"]);
    for mode in ["auto", "legacy"] {
        let report = run_python(
            &repo,
            &python,
            &["http", &server.url, mode, "t0ken-for-tests"],
        );
        assert_eq!(report["tools"], TOOLS, "{report}");
        // The second run starts over on the same store: clear what the first one made.
        repo.git(&["update-ref", "-d", "refs/lore/memory"]);
        for r in repo
            .git(&["for-each-ref", "--format=%(refname)", "refs/lore/ctx/"])
            .lines()
        {
            repo.git(&["update-ref", "-d", r]);
        }
        let _ = std::fs::remove_dir_all(repo.path().join(".git/lore/ctx"));
    }
    let bearer = "Authorization: Bearer t0ken-for-tests";
    assert_eq!(server.status(&[]), 401, "no token");
    assert_eq!(
        server.status(&["Authorization: Bearer wrong"]),
        401,
        "wrong token"
    );
    assert_eq!(server.status(&[bearer]), 200);
    assert_eq!(
        server.status(&[bearer, "Origin: https://evil.example"]),
        403,
        "foreign origin"
    );
    assert_eq!(
        server.status(&[bearer, "Origin: http://localhost:3000"]),
        200,
        "local origin"
    );
    drop(server);

    // Beyond loopback, a token is required.
    let out = lore_command(&repo.path(), &repo.home(), &["mcp", "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bearer token is required"));
}

fn inspector(repo: &TestRepo, target: &[&str], args: &[&str]) -> Value {
    let node_bin = common::tools_dir().join("npm/node_modules/node/bin");
    let path = format!(
        "{}:{}",
        node_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(common::tools_dir().join("npm/node_modules/.bin/mcp-inspector"))
        .arg("--cli")
        .args(target)
        .args(args)
        .current_dir(repo.path())
        .envs(lore_testutils::hermetic_env(&repo.home()))
        .env("PATH", path)
        .output()
        .expect("running the MCP Inspector");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    // The result is the first JSON document printed.
    let mut stream = serde_json::Deserializer::from_str(&stdout).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) => v,
        _ => panic!(
            "inspector {args:?}: no JSON result\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn call(repo: &TestRepo, target: &[&str], tool: &str, args: &[&str]) -> Value {
    let mut all = vec!["--method", "tools/call", "--tool-name", tool];
    for a in args {
        all.push("--tool-arg");
        all.push(a);
    }
    inspector(repo, target, &all)
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

/// Every tool through the Inspector, in an order that gives each something to work on.
fn every_tool(repo: &TestRepo, target: &[&str]) {
    let listed = inspector(repo, target, &["--method", "tools/list"]);
    let tools = listed["tools"].as_array().unwrap();
    assert_eq!(tools.len(), TOOLS, "{listed}");
    for t in tools {
        assert!(t["annotations"]["readOnlyHint"].is_boolean(), "{t}");
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
    let ok = |tool: &str, args: &[&str]| -> String {
        let r = call(repo, target, tool, args);
        assert_ne!(r["isError"], true, "{tool} {args:?}: {r}");
        text_of(&r).to_string()
    };
    let written: Value = serde_json::from_str(&ok(
        "remember",
        &[
            "namespace=decisions",
            "summary=Keep the index under .git",
            "tags=[\"index\"]",
        ],
    ))
    .unwrap();
    let id = written["memory"]["id"].as_str().unwrap().to_string();
    assert!(ok("recall", &["query=index git"]).contains(&id));
    assert!(ok("show", &[&format!("memory={id}"), "level=full"]).contains("Keep the index"));
    ok("update", &[&format!("memory={id}"), "status=resolved"]);
    ok(
        "supersede",
        &[
            &format!("memory={id}"),
            "summary=Keep the index under the git dir",
        ],
    );
    ok("context", &["budget=600"]);
    ok("ctx_init", &["goal=Ship the index"]);
    ok("ctx_log", &["text=measured rebuild time", "tool=bench"]);
    ok("ctx_commit", &["contribution=Measured"]);
    ok("ctx_branch", &["name=wal", "purpose=Try WAL mode"]);
    ok("ctx_log", &["text=WAL halves write latency"]);
    ok("ctx_commit", &["contribution=WAL tried"]);
    assert!(ok("ctx_show", &["log=true"]).contains("WAL halves"));
    assert!(ok("ctx_recall", &["query=write latency", "budget=200"]).contains("WAL"));
    ok("ctx_update", &["content=# Goal\nShip WAL", "message=focus"]);
    assert!(ok("ctx_read", &[]).contains("Ship WAL"));
    assert!(ok("ctx_history", &[]).contains("focus"));
    ok("ctx_snapshot", &["version=1"]);
    ok("ctx_merge", &["branch=wal", "into=main", "prefer=theirs"]);
    ok("review_list", &[]);
    ok("forget", &[&format!("memory={id}")]);
    let bad = call(repo, target, "show", &["memory=nothing-like-it"]);
    assert_eq!(bad["isError"], true, "{bad}");
    let bad = call(repo, target, "remember", &["namespace=decisions"]);
    assert_eq!(bad["isError"], true, "{bad}");
}

#[test]
fn inspector_cli_lists_and_calls_every_tool_over_stdio() {
    // The inspector must be installed: a missing client fails, it never skips.
    common::mcp_client("npm/node_modules/.bin/mcp-inspector");
    let repo = TestRepo::new();
    every_tool(&repo, &[lore_bin(), "mcp"]);
}

#[test]
fn a_recall_over_mcp_leaves_a_grown_vector_cache_to_a_background_upkeep() {
    use common::upkeep::{cache_inode, grow_cache, hold_cache_lock, wait_for_rewrite};
    common::mcp_client("npm/node_modules/.bin/mcp-inspector");
    let repo = TestRepo::new();
    let first = grow_cache(&repo);
    // The server answers while this test holds the cache's lock: it did not write the file
    // again itself (that would wait on the lock), it started `lore upkeep`, which waits.
    let lock = hold_cache_lock(&repo);
    let result = call(
        &repo,
        &[lore_bin(), "mcp"],
        "recall",
        &["query=deploy Tuesday"],
    );
    assert!(text_of(&result).contains("Deploy number"), "{result}");
    assert_eq!(cache_inode(&repo), first);
    drop(lock);
    wait_for_rewrite(&repo, first);
}

#[test]
fn inspector_cli_lists_and_calls_every_tool_over_http() {
    // The inspector must be installed: a missing client fails, it never skips.
    common::mcp_client("npm/node_modules/.bin/mcp-inspector");
    let repo = TestRepo::new();
    let server = HttpServer::start(&repo, &["--token", "abc123"]);
    every_tool(
        &repo,
        &[
            &server.url,
            "--transport",
            "http",
            "--header",
            "Authorization: Bearer abc123",
        ],
    );
}
