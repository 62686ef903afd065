//! lore against the real other side: contexa 1.1.2 reads a `.GCC/` workspace lore exported
//! (branches, commits, observation–thought–action records), and git-notes-memory 0.12.0's
//! memories move into lore and back with their bodies byte for byte. Both packages run in
//! `.tools/venv`, installed by scripts/setup-clients.sh; without them these tests fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{json, ok, tools_dir};
use lore_testutils::{TestRepo, make_hermetic};
use serde_json::Value;

/// The venv's Python, checked to hold both packages.
fn python() -> PathBuf {
    let python = tools_dir().join("venv/bin/python");
    let found = Command::new(&python)
        .args(["-c", "import contexa, git_notes_memory.sync, sqlite_vec"])
        .output();
    match found {
        Ok(out) if out.status.success() => python,
        Ok(out) => panic!(
            "contexa or git-notes-memory is missing from {}: run scripts/setup-clients.sh ({})",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => panic!(
            "{} cannot run ({e}): run scripts/setup-clients.sh",
            python.display()
        ),
    }
}

/// Runs the tests' script for the other side (`tests/clients/gcc_notes_tools.py`).
fn tool(repo: &TestRepo, args: &[&str], stdin: Option<&str>) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/gcc_notes_tools.py");
    let mut cmd = Command::new(python());
    cmd.arg(script)
        .args(args)
        .current_dir(repo.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    make_hermetic(&mut cmd, &repo.home());
    cmd.env("MEMORY_PLUGIN_DATA_DIR", repo.home().join("gnm-data"));
    let mut child = cmd.spawn().expect("running the tools' script");
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        input
            .write_all(stdin.unwrap_or("").as_bytes())
            .expect("writing stdin");
    }
    let out = child
        .wait_with_output()
        .expect("waiting for the tools' script");
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

#[test]
fn contexa_reads_the_branches_commits_and_records_lore_exported() {
    let repo = TestRepo::new();
    ok(&repo, &["init"]);
    ok(
        &repo,
        &["ctx", "init", "--goal", "Speed up the report page"],
    );
    let log = |args: &[&str]| ok(&repo, &[&["ctx", "log"], args].concat());
    log(&["--kind", "observation", "The report page takes 4 s"]);
    log(&[
        "--kind",
        "thought",
        "That is the N+1 pattern\n---\nor a missing index",
    ]);
    log(&[
        "--kind",
        "action",
        "--tool",
        "bash",
        "--args",
        "cargo test",
        "--result",
        "ok",
        "Ran the tests",
    ]);
    log(&["a step of no kind"]);
    ok(&repo, &["ctx", "commit", "Found the N+1 query"]);
    ok(
        &repo,
        &[
            "ctx",
            "branch",
            "batch",
            "--purpose",
            "Load all authors in one query",
        ],
    );
    log(&["--kind", "action", "Batched the author loads"]);
    ok(&repo, &["ctx", "commit", "Batched: 0.6 s"]);
    ok(&repo, &["ctx", "switch", "main"]);
    ok(&repo, &["ctx", "merge", "batch"]);
    let steps = json(&repo, &["ctx", "show", "--log", "-b", "main", "-k", "50"]);

    let out = repo.path().join("out");
    ok(
        &repo,
        &["ctx", "export", &out.join(".GCC").display().to_string()],
    );
    let read = tool(&repo, &["contexa-read", &out.display().to_string()], None);
    let branches = read["branches"].as_object().unwrap();
    assert_eq!(
        branches.keys().collect::<Vec<_>>(),
        ["batch", "main"],
        "{read}"
    );

    let main = &read["branches"]["main"];
    let contributions: Vec<&str> = main["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["contribution"].as_str().unwrap())
        .collect();
    assert_eq!(contributions.len(), 3, "{main}");
    assert!(contributions[0].starts_with("Started the context workspace"));
    assert_eq!(contributions[1], "Found the N+1 query");
    assert!(
        contributions[2].starts_with("Merged branch batch"),
        "{main}"
    );
    assert_eq!(main["commits"][1]["purpose"], "Speed up the report page");
    assert_eq!(main["metadata"]["name"], "main");
    assert_eq!(
        read["branches"]["batch"]["metadata"]["created_from"],
        "main"
    );
    assert_eq!(
        read["branches"]["batch"]["commits"][1]["contribution"],
        "Batched: 0.6 s"
    );

    // Every observation, thought or action is a record with its own time; the step of no
    // kind is not one.
    let records = main["records"].as_array().unwrap();
    assert_eq!(records.len(), 4, "{main}");
    assert_eq!(records[0]["observation"], "The report page takes 4 s");
    assert_eq!(records[0]["thought"], "");
    assert_eq!(
        records[1]["thought"], "That is the N+1 pattern\n---\nor a missing index",
        "a `---` line in a step stays inside its record"
    );
    assert_eq!(
        records[2]["action"],
        "Ran the tests\n`bash` `cargo test`\n→ ok"
    );
    assert_eq!(records[3]["action"], "Batched the author loads");
    let numbers: Vec<i64> = records
        .iter()
        .map(|r| r["step"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    // `ctx show --log` lists [ordinal, {step, …}] newest first.
    let mut times: Vec<&str> = steps["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("{steps}"))
        .iter()
        .map(|s| &s[1]["step"])
        .filter(|s| s["kind"].is_string())
        .map(|s| s["time"].as_str().unwrap())
        .collect();
    times.reverse();
    let read_times: Vec<&str> = records
        .iter()
        .map(|r| r["timestamp"].as_str().unwrap())
        .collect();
    assert_eq!(read_times, times);
    assert_eq!(
        read["branches"]["batch"]["records"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // lore still reads its own export back exactly.
    let other = TestRepo::new();
    ok(
        &other,
        &["ctx", "import", &out.join(".GCC").display().to_string()],
    );
    let again = json(&other, &["ctx", "show", "--log", "-b", "main", "-k", "50"]);
    assert_eq!(again, steps);
}

/// Memories for git-notes-memory to capture: bodies with headings, lists, blank lines.
const CAPTURED: &str = r###"[
 {"namespace": "decisions", "summary": "Use SQLite for the index",
  "content": "## Context\n\nWe need a local index.\n\n- no server\n- one file\n", "tags": ["db"]},
 {"namespace": "decisions", "summary": "Keep bodies exact",
  "content": "Line one\n\n  indented line\ntrailing words\n"},
 {"namespace": "learnings", "summary": "Notes append",
  "content": "`git notes append` adds a blank line between documents.\n"}
]"###;

#[test]
fn git_notes_memory_memories_import_and_export_with_their_bodies_byte_for_byte() {
    // Written by the package, imported by lore.
    let repo = TestRepo::new();
    ok(&repo, &["init"]);
    let captured = tool(
        &repo,
        &["notes-capture", &repo.path().display().to_string()],
        Some(CAPTURED),
    );
    let given: Vec<Value> = serde_json::from_str(CAPTURED).unwrap();
    assert_eq!(captured.as_array().unwrap().len(), 3, "{captured}");
    let imported = json(&repo, &["import", "notes"]);
    assert_eq!(imported["written"], 3, "{imported}");
    let listed = json(&repo, &["list"]);
    let memories = listed["memories"]
        .as_array()
        .or(listed["items"].as_array())
        .or(listed.as_array())
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    for g in &given {
        let summary = g["summary"].as_str().unwrap();
        let m = memories
            .iter()
            .find(|m| m["summary"] == summary)
            .unwrap_or_else(|| panic!("{summary} not imported: {listed}"));
        let shown = json(&repo, &["show", m["id"].as_str().unwrap()]);
        let body = shown["body"]
            .as_str()
            .or(shown["memory"]["body"].as_str())
            .unwrap_or_else(|| panic!("{shown}"));
        assert_eq!(body, g["content"].as_str().unwrap(), "{summary}");
    }

    // Written by lore, read by the package: its parser and its index after a reindex.
    let out = TestRepo::new();
    ok(&out, &["init"]);
    let bodies = [
        (
            "decisions",
            "Ship on Fridays",
            "## Why\n\nThe queue is empty then.\n\n- one\n- two",
        ),
        (
            "learnings",
            "Tests need hermetic git",
            "Set GIT_CONFIG_GLOBAL.\n  Indented.\nLast line",
        ),
    ];
    for (ns, summary, body) in bodies {
        ok(&out, &["remember", "-n", ns, "--body", body, summary]);
    }
    let exported = json(&out, &["export", "notes"]);
    assert_eq!(exported["exported"], 2, "{exported}");
    let read = tool(
        &out,
        &["notes-read", &out.path().display().to_string()],
        None,
    );
    assert_eq!(read["reindexed"], 2, "{read}");
    for (ns, summary, body) in bodies {
        let parsed = read["parsed"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["summary"] == summary)
            .unwrap_or_else(|| panic!("{summary} not parsed: {read}"));
        assert_eq!(parsed["namespace"], ns);
        assert_eq!(parsed["body"], body, "{summary}");
        let indexed = read["indexed"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["summary"] == summary)
            .unwrap_or_else(|| panic!("{summary} not indexed: {read}"));
        assert_eq!(indexed["content"], body, "{summary}");
    }
}
