//! One `lore mcp` server on stdio, driven line by line (JSON-RPC as an agent sends it).

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use lore_testutils::TestRepo;
use serde_json::{Value, json};

use super::lore_command;

/// One `lore mcp` process on stdio; its lines are read by a thread of their own, so a server
/// that stops answering fails the test instead of hanging it.
pub struct McpProcess {
    pub child: std::process::Child,
    pub stdin: std::process::ChildStdin,
    pub lines: std::sync::mpsc::Receiver<String>,
    pub next_id: u64,
    /// Every id answered so far, to catch a request answered twice.
    pub answered: std::collections::HashSet<String>,
}

impl McpProcess {
    pub fn start(repo: &TestRepo) -> McpProcess {
        McpProcess::start_with_stderr(repo, Stdio::null())
    }

    /// Like [`McpProcess::start`], with the server's stderr going to `stderr`.
    pub fn start_with_stderr(repo: &TestRepo, stderr: Stdio) -> McpProcess {
        let mut child = lore_command(&repo.path(), &repo.home(), &["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            loop {
                let mut line = String::new();
                match stdout.read_line(&mut line) {
                    Ok(n) if n > 0 && send.send(line).is_ok() => {}
                    _ => return,
                }
            }
        });
        let mut mcp = McpProcess {
            child,
            stdin,
            lines,
            next_id: 1_000_000,
            answered: Default::default(),
        };
        mcp.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}).to_string().as_bytes());
        let reply = mcp.read();
        assert_eq!(reply["result"]["serverInfo"]["name"], "lore", "{reply}");
        mcp.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        mcp
    }

    pub fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn read(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the MCP server stopped answering");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line:?}"))
    }

    /// Sends a `ping`, then returns every message up to the answers to it and to `expected`
    /// (requests may be answered in any order). Fails if an id is answered twice.
    pub fn until_ping(&mut self, expected: Option<u64>) -> Vec<Value> {
        self.next_id += 1;
        let ping = json!(self.next_id);
        let request = json!({"jsonrpc":"2.0","id":ping,"method":"ping"});
        self.send(request.to_string().as_bytes());
        let mut waiting: Vec<Value> = std::iter::once(ping)
            .chain(expected.map(|id| json!(id)))
            .collect();
        let mut messages = Vec::new();
        while !waiting.is_empty() {
            let message = self.read();
            let id = &message["id"];
            if !id.is_null() {
                assert!(
                    self.answered.insert(id.to_string()),
                    "answered twice: {message}"
                );
            }
            waiting.retain(|w| w != id);
            messages.push(message);
        }
        messages
    }
}
