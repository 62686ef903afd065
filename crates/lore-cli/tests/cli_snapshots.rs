//! Every command's text and JSON output, snapshotted: the operations table (every operation the
//! MCP server offers too) and the commands only people run (import, export, the .GCC/ layout),
//! each run twice on identical repositories — once as text, once with --json — with ids,
//! commits, times and paths masked.

mod common;

use std::path::Path;

use common::lore_command;
use common::table::{cases, masked, masked_text};
use lore_testutils::TestRepo;
use serde_json::Value;

/// Commands people run that agents are not offered; in order, after the table's.
const PEOPLE_ONLY: &[&[&str]] = &[
    &["export", "jsonl"],
    &["export", "jsonl", "out.jsonl"],
    &["export", "markdown", "md-out"],
    &["import", "jsonl", "out.jsonl", "--dry-run"],
    &["import", "jsonl", "out.jsonl"],
    &["import", "markdown", "md-out", "--replace"],
    &["export", "notes"],
    &["ctx", "export", "gcc-out"],
    &["ctx", "import", "gcc-out", "--force"],
    &["review", "reject", "nothing"],
    &["namespace"],
    &["gc", "--dry-run"],
    &["list", "-n", "decsions"],
    &["upkeep"],
];

/// The text a command prints (stdout, then stderr) and its exit code, masked.
fn text_run(repo: &TestRepo, args: &[&str]) -> String {
    let out = lore_command(&repo.path(), &repo.home(), args)
        .output()
        .expect("running lore");
    let stdout = masked_text(&String::from_utf8_lossy(&out.stdout), &repo.path());
    let stderr = masked_text(&String::from_utf8_lossy(&out.stderr), &repo.path());
    format!(
        "exit {}\n--- stdout\n{stdout}--- stderr\n{stderr}",
        out.status.code().unwrap_or(-1)
    )
}

fn json_run(repo: &TestRepo, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = lore_command(&repo.path(), &repo.home(), &all)
        .output()
        .expect("running lore");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // `export jsonl` without a file prints the memories as JSON lines, one document each.
    let docs: Vec<Value> = serde_json::Deserializer::from_str(&stdout)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("lore {args:?}: not JSON ({e}): {stdout}"));
    let doc = match docs.len() {
        1 => docs.into_iter().next().unwrap_or_default(),
        _ => Value::Array(docs),
    };
    masked(&doc, &repo.path())
}

fn name(i: usize, args: &[&str]) -> String {
    let words: Vec<&str> = args
        .iter()
        .take_while(|a| !a.starts_with('-') && !a.contains(' ') && a.len() < 20)
        .take(3)
        .copied()
        .collect();
    format!("{i:02}_{}", words.join("_"))
}

#[test]
fn every_command_prints_text_and_json_as_snapshotted() {
    let (text_repo, json_repo) = (TestRepo::new(), TestRepo::new());
    let table = cases();
    let runs = table
        .iter()
        .map(|c| c.cli)
        .chain(PEOPLE_ONLY.iter().copied());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path(Path::new("snapshots/commands"));
    settings.bind(|| {
        for (i, args) in runs.enumerate() {
            let text = text_run(&text_repo, args);
            let json = json_run(&json_repo, args);
            let shown = format!(
                "$ lore {}\n{text}--- json\n{}\n",
                args.join(" "),
                serde_json::to_string_pretty(&json).unwrap_or_default()
            );
            insta::assert_snapshot!(name(i, args), shown);
        }
    });
}
