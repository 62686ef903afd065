//! One table of operations, run through `lore --json` in one repository and through the MCP
//! server (the official Python SDK over stdio) in an identical one: every tool the server offers
//! must return the same fields with the same values (after ids, commits, times and paths, which
//! differ between two repositories, are masked). Errors too: the same kind, code and message.

mod common;

use std::path::Path;
use std::process::Command;

use common::lore_command;
use common::table::{Case, cases, masked};
use lore_testutils::TestRepo;
use serde_json::{Value, json};

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
            // The text content is the same JSON as the structured content (what a client that
            // reads only text gets), never an escaped, rendered or abridged copy: for every tool.
            let first: Value = serde_json::from_str(r["first_text"].as_str().unwrap_or_default())
                .unwrap_or_else(|e| {
                    panic!("{}: the text content is not JSON ({e}): {r}", case.tool)
                });
            assert_eq!(
                first, structured,
                "{}: text and structured content differ",
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
        // A recall that did not ask for bodies answers hits without a `body` key: absent,
        // not an empty string that reads as an empty memory.
        if case.tool == "recall" && case.mcp.get("bodies").is_none() {
            let hits = from_mcp["hits"].as_array().expect("hits");
            assert!(!hits.is_empty(), "{from_mcp}");
            for hit in hits {
                assert!(hit["memory"].get("body").is_none(), "{hit}");
            }
        }
    }
    // The table exercises errors too (a duplicate, an unknown id, an unknown branch, no
    // remote, no contradiction; an out-of-range score, four unknown thoughts). A revision of
    // a thought the session does not hold is no error: it is written and flagged.
    assert_eq!(errors, 10, "{cli:#?}");
}
