//! `sequentialthinking` through `lore mcp` as agents set up for the official
//! sequential-thinking server use it: every case of that server's own test suite
//! (`src/sequentialthinking/__tests__/lib.test.ts` in modelcontextprotocol/servers), each on a
//! fresh repository and a fresh server, checked as that suite checks the official server; then
//! what persistence adds — a session per connection, calls pipelined on one connection applied
//! in order, references to missing thoughts written and flagged, the main line kept apart from
//! branches, and text content that is plain JSON.

mod common;

use common::mcp_stdio::McpProcess;
use lore_testutils::TestRepo;
use serde_json::{Value, json};

/// Sends one `tools/call` without waiting; returns its id.
fn send_call(mcp: &mut McpProcess, tool: &str, args: &Value) -> u64 {
    mcp.next_id += 1;
    let id = mcp.next_id;
    let request = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":tool,"arguments":args}});
    mcp.send(request.to_string().as_bytes());
    id
}

/// Reads messages until the answers to every id in `ids` came; returns the results in the
/// order of `ids`.
fn results(mcp: &mut McpProcess, ids: &[u64]) -> Vec<Value> {
    let mut got = std::collections::HashMap::new();
    while got.len() < ids.len() {
        let message = mcp.read();
        if let Some(id) = message["id"].as_u64().filter(|id| ids.contains(id)) {
            assert!(got.insert(id, message).is_none(), "answered twice");
        }
    }
    ids.iter()
        .map(|id| {
            let m = &got[id];
            assert!(m["error"].is_null(), "a protocol error: {m}");
            let result = m["result"].clone();
            check_plain_json(&result);
            result
        })
        .collect()
}

fn call(mcp: &mut McpProcess, tool: &str, args: Value) -> Value {
    let id = send_call(mcp, tool, &args);
    results(mcp, &[id]).remove(0)
}

/// The text of a successful result is plain JSON: it parses to the structured content.
fn check_plain_json(result: &Value) {
    if result["isError"] == true {
        return;
    }
    let text = result["content"][0]["text"].as_str().expect("a text block");
    let parsed: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("the text is not JSON ({e}): {text}"));
    assert_eq!(
        parsed, result["structuredContent"],
        "text and structured content differ"
    );
}

/// What the official server's tests read: `JSON.parse(result.content[0].text)`.
fn data(result: &Value) -> Value {
    assert_ne!(result["isError"], true, "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

fn think(mcp: &mut McpProcess, input: Value) -> Value {
    call(mcp, "sequentialthinking", input)
}

/// One case of the official suite: its inputs, in order, on a fresh repository and server;
/// `check` gets the last result.
fn case(name: &str, inputs: &[Value], check: impl Fn(&Value)) {
    let repo = TestRepo::new();
    let mut mcp = McpProcess::start(&repo);
    let mut last = Value::Null;
    for input in inputs {
        last = think(&mut mcp, input.clone());
    }
    eprintln!("case: {name}");
    check(&last);
}

fn no_error(result: &Value) {
    assert!(
        result.get("isError").is_none() || result["isError"] == false,
        "{result}"
    );
}

#[test]
fn the_official_suite_holds_through_the_mcp_tool() {
    let basic = |n: u32, total: u32, next: bool, text: &str| {
        json!({"thought": text, "thoughtNumber": n, "totalThoughts": total,
               "nextThoughtNeeded": next})
    };
    // processThought - valid inputs
    case(
        "should accept valid basic thought",
        &[basic(1, 3, true, "This is my first thought")],
        |r| {
            no_error(r);
            let d = data(r);
            assert_eq!(d["thoughtNumber"], 1);
            assert_eq!(d["totalThoughts"], 3);
            assert_eq!(d["nextThoughtNeeded"], true);
            assert_eq!(d["thoughtHistoryLength"], 1);
        },
    );
    case(
        "should accept thought with optional fields",
        &[
            json!({"thought": "Revising my earlier idea", "thoughtNumber": 2,
                  "totalThoughts": 3, "nextThoughtNeeded": true, "isRevision": true,
                  "revisesThought": 1, "needsMoreThoughts": false}),
        ],
        |r| {
            no_error(r);
            let d = data(r);
            assert_eq!(d["thoughtNumber"], 2);
            assert_eq!(d["thoughtHistoryLength"], 1);
        },
    );
    case(
        "should track multiple thoughts in history",
        &[
            basic(1, 3, true, "First thought"),
            basic(2, 3, true, "Second thought"),
            basic(3, 3, false, "Final thought"),
        ],
        |r| {
            let d = data(r);
            assert_eq!(d["thoughtHistoryLength"], 3);
            assert_eq!(d["nextThoughtNeeded"], false);
        },
    );
    case(
        "should auto-adjust totalThoughts if thoughtNumber exceeds it",
        &[basic(5, 3, true, "Thought 5")],
        |r| assert_eq!(data(r)["totalThoughts"], 5),
    );
    // processThought - branching
    let branch = |n: u32, next: bool, id: &str, text: &str| {
        json!({"thought": text, "thoughtNumber": n, "totalThoughts": 3,
               "nextThoughtNeeded": next, "branchFromThought": 1, "branchId": id})
    };
    case(
        "should track branches correctly",
        &[
            basic(1, 3, true, "Main thought"),
            branch(2, true, "branch-a", "Branch A thought"),
            branch(2, false, "branch-b", "Branch B thought"),
        ],
        |r| {
            let d = data(r);
            assert_eq!(d["branches"], json!(["branch-a", "branch-b"]));
            assert_eq!(d["thoughtHistoryLength"], 3);
        },
    );
    case(
        "should allow multiple thoughts in same branch",
        &[
            json!({"thought": "Branch thought 1", "thoughtNumber": 1, "totalThoughts": 2,
                   "nextThoughtNeeded": true, "branchFromThought": 1, "branchId": "branch-a"}),
            json!({"thought": "Branch thought 2", "thoughtNumber": 2, "totalThoughts": 2,
                   "nextThoughtNeeded": false, "branchFromThought": 1, "branchId": "branch-a"}),
        ],
        |r| assert_eq!(data(r)["branches"], json!(["branch-a"])),
    );
    // processThought - edge cases
    case(
        "should handle very long thought strings",
        &[basic(1, 1, false, &"a".repeat(10000))],
        no_error,
    );
    case(
        "should handle thoughtNumber = 1, totalThoughts = 1",
        &[basic(1, 1, false, "Only thought")],
        |r| {
            no_error(r);
            let d = data(r);
            assert_eq!(d["thoughtNumber"], 1);
            assert_eq!(d["totalThoughts"], 1);
        },
    );
    case(
        "should handle nextThoughtNeeded = false",
        &[basic(3, 3, false, "Final thought")],
        |r| assert_eq!(data(r)["nextThoughtNeeded"], false),
    );
    // processThought - response format
    case(
        "should return correct response structure on success",
        &[basic(1, 1, false, "Test thought")],
        |r| {
            let content = r["content"].as_array().expect("content is an array");
            assert_eq!(content.len(), 1, "{r}");
            assert_eq!(content[0]["type"], "text");
            assert!(content[0]["text"].is_string());
        },
    );
    case(
        "should return valid JSON in response",
        &[basic(1, 1, false, "Test thought")],
        |r| {
            serde_json::from_str::<Value>(r["content"][0]["text"].as_str().unwrap()).unwrap();
        },
    );
    // processThought - with logging enabled (the official server also prints a box on stderr;
    // lore keeps the thought instead: each case must still succeed)
    case(
        "should format and log regular thoughts",
        &[basic(1, 3, true, "Test thought with logging")],
        no_error,
    );
    case(
        "should format and log revision thoughts",
        &[
            json!({"thought": "Revised thought", "thoughtNumber": 2, "totalThoughts": 3,
                  "nextThoughtNeeded": true, "isRevision": true, "revisesThought": 1}),
        ],
        no_error,
    );
    case(
        "should format and log branch thoughts",
        &[branch(2, false, "branch-a", "Branch thought")],
        no_error,
    );
}

#[test]
fn inputs_are_read_as_the_official_schema_coerces_them() {
    let repo = TestRepo::new();
    let mut mcp = McpProcess::start(&repo);
    let r = think(
        &mut mcp,
        json!({"thought": "Strings for numbers", "thoughtNumber": "2", "totalThoughts": "1",
               "nextThoughtNeeded": "false", "isRevision": "false", "someday": "ignored"}),
    );
    let d = data(&r);
    assert_eq!(
        (d["thoughtNumber"].clone(), d["totalThoughts"].clone()),
        (json!(2), json!(2))
    );
    assert_eq!(d["nextThoughtNeeded"], false);
    // What the official schema refuses, lore refuses.
    for bad in [
        json!({"thought": "x", "thoughtNumber": 0, "totalThoughts": 1, "nextThoughtNeeded": true}),
        json!({"thought": "x", "thoughtNumber": "two", "totalThoughts": 1, "nextThoughtNeeded": true}),
        json!({"thought": "x", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": "maybe"}),
        json!({"thought": "x", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": true,
               "outcome": "best"}),
    ] {
        let r = think(&mut mcp, bad.clone());
        assert_eq!(r["isError"], true, "{bad}: {r}");
    }
    // `outcome` offers what a step may carry, and nothing else.
    let listed = {
        mcp.next_id += 1;
        let id = mcp.next_id;
        mcp.send(
            json!({"jsonrpc":"2.0","id":id,"method":"tools/list"})
                .to_string()
                .as_bytes(),
        );
        loop {
            let m = mcp.read();
            if m["id"] == id {
                break m;
            }
        }
    };
    let tool = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "sequentialthinking")
        .unwrap()
        .clone();
    let schema = tool["inputSchema"].to_string();
    assert!(
        schema.contains("\"success\"") && schema.contains("\"failed\""),
        "{schema}"
    );
    assert!(!schema.contains("\"best\""), "{schema}");
}

#[test]
fn calls_pipelined_on_one_connection_are_applied_in_order() {
    let repo = TestRepo::new();
    for _ in 0..5 {
        let mut mcp = McpProcess::start(&repo);
        let inputs = [
            json!({"thought": "Frame the question", "thoughtNumber": 1, "totalThoughts": 4,
                   "nextThoughtNeeded": true}),
            json!({"thought": "Try a hash map", "thoughtNumber": 2, "totalThoughts": 4,
                   "nextThoughtNeeded": true}),
            json!({"thought": "Try a sorted vector", "thoughtNumber": 2, "totalThoughts": 4,
                   "nextThoughtNeeded": true, "branchFromThought": 1, "branchId": "sorted"}),
            json!({"thought": "Binary search it", "thoughtNumber": 3, "totalThoughts": 4,
                   "nextThoughtNeeded": true, "branchId": "sorted"}),
            json!({"thought": "Measure the hash map", "thoughtNumber": 3, "totalThoughts": 4,
                   "nextThoughtNeeded": true}),
            json!({"thought": "Rethink the hash map", "thoughtNumber": 4, "totalThoughts": 4,
                   "nextThoughtNeeded": false, "isRevision": true, "revisesThought": 2}),
        ];
        let ids: Vec<u64> = inputs
            .iter()
            .map(|i| send_call(&mut mcp, "sequentialthinking", i))
            .collect();
        let out: Vec<Value> = results(&mut mcp, &ids).iter().map(data).collect();
        for (n, d) in out.iter().enumerate() {
            assert_eq!(
                d["thoughtHistoryLength"],
                n + 1,
                "applied out of order: {out:?}"
            );
            assert!(d.get("unresolved").is_none(), "{d}");
        }
        let id = |n: usize| out[n]["id"].clone();
        assert_eq!(out[0]["parent"], Value::Null);
        assert_eq!(out[1]["parent"], id(0));
        assert_eq!(out[2]["parent"], id(0), "the branch starts at thought 1");
        assert_eq!(out[3]["parent"], id(2), "the branch continues");
        assert_eq!(
            out[4]["parent"],
            id(1),
            "the main line continues, not the branch"
        );
        assert_eq!(
            out[5]["parent"],
            id(0),
            "a revision is a sibling of what it revises"
        );
        assert_eq!(out[5]["branches"], json!(["sorted"]));
    }
}

#[test]
fn two_connections_in_one_repository_are_two_sessions() {
    let repo = TestRepo::new();
    let mut a = McpProcess::start(&repo);
    let mut b = McpProcess::start(&repo);
    let step = |n: u32, text: &str| {
        json!({"thought": text, "thoughtNumber": n, "totalThoughts": 2,
               "nextThoughtNeeded": n < 2})
    };
    let a1 = data(&think(&mut a, step(1, "A starts")));
    let b1 = data(&think(&mut b, step(1, "B starts")));
    let a2 = data(&think(&mut a, step(2, "A goes on")));
    let b2 = data(&think(&mut b, step(2, "B goes on")));
    assert_ne!(a1["session"], b1["session"]);
    assert_eq!(a1["session"], a2["session"]);
    assert_eq!(a2["parent"], a1["id"]);
    assert_eq!(b2["parent"], b1["id"]);
    assert_eq!(a2["thoughtHistoryLength"], 2);
    assert_eq!(b2["thoughtHistoryLength"], 2);
    // A readable generated name: date, time and words.
    let name = a1["session"].as_str().unwrap();
    assert!(
        name.len() > 16 && name.chars().filter(|c| *c == '-').count() >= 3,
        "{name}"
    );
    // A client that names a session continues it, from any connection.
    let named = |n: u32, text: &str| {
        let mut s = step(n, text);
        s["session"] = a1["session"].clone();
        s
    };
    let a3 = data(&think(&mut b, named(3, "B helps A")));
    assert_eq!(a3["parent"], a2["id"]);
    assert_eq!(a3["thoughtHistoryLength"], 3);
}

#[test]
fn missing_references_are_written_and_flagged_and_replay_keeps_the_main_line() {
    let repo = TestRepo::new();
    let mut mcp = McpProcess::start(&repo);
    let step = |extra: Value| {
        let mut s = json!({"thoughtNumber": 1, "totalThoughts": 4, "nextThoughtNeeded": true});
        s.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        s
    };
    let one = data(&think(&mut mcp, step(json!({"thought": "Parse the log"}))));
    let two = data(&think(
        &mut mcp,
        step(json!({"thought": "Use a regex", "thoughtNumber": 2})),
    ));
    let side = data(&think(
        &mut mcp,
        step(
            json!({"thought": "Use a parser combinator", "thoughtNumber": 2,
                    "branchFromThought": 1, "branchId": "combinator"}),
        ),
    ));
    assert_eq!(side["parent"], one["id"]);
    let three = data(&think(
        &mut mcp,
        step(
            json!({"thought": "The regex handles every line", "thoughtNumber": 3,
                    "score": 0.9, "outcome": "success"}),
        ),
    ));
    assert_eq!(three["parent"], two["id"], "no branchId: the main line");
    // Replay of the success walks the main line only.
    let replay = call(&mut mcp, "think_replay", json!({"id": three["id"]}));
    let path: Vec<Value> = data(&replay)["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].clone())
        .collect();
    assert_eq!(
        path,
        vec![one["id"].clone(), two["id"].clone(), three["id"].clone()]
    );
    // A revision of a thought the session does not hold: written, on its line, flagged.
    let lost = data(&think(
        &mut mcp,
        step(json!({"thought": "Revisit thought 9", "thoughtNumber": 4,
                    "isRevision": true, "revisesThought": 9})),
    ));
    assert_eq!(lost["parent"], three["id"]);
    assert!(
        lost["unresolved"]
            .as_str()
            .unwrap()
            .contains("revisesThought 9"),
        "{lost}"
    );
    assert_eq!(lost["thoughtHistoryLength"], 5);
    let lost_branch = data(&think(
        &mut mcp,
        step(json!({"thought": "Branch from nowhere", "thoughtNumber": 5,
                    "branchFromThought": 7, "branchId": "elsewhere"})),
    ));
    assert_eq!(lost_branch["parent"], lost["id"]);
    assert!(lost_branch["unresolved"].is_string());
    assert_eq!(lost_branch["branches"], json!(["combinator", "elsewhere"]));
}
