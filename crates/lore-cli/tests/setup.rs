//! `lore setup`: merging lore's hooks and MCP server into agents' configurations without
//! clobbering, one action per file, `--remove` leaving no empty files, and a command a team can
//! commit (`lore` on PATH; an absolute path only when it is not, said so).

mod common;

use std::path::{Path, PathBuf};

use common::{json, lore_command, ok, run};
use lore_testutils::TestRepo;
use serde_json::Value;

#[test]
fn setup_merges_without_clobbering_and_removes_only_lore() {
    let repo = TestRepo::new();
    repo.write(".claude/settings.json", r#"{"permissions":{"allow":["Bash(ls)"]},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#);
    repo.write(".codex/config.toml", "# my codex\nmodel = \"gpt-5.4\"\n");
    let first = json(&repo, &["setup", "claude", "--command", "lore"]);
    let actions: Vec<&str> = first["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["updated", "created"], "{first}");
    assert_eq!(first["command"], "lore");
    for agent in ["claude", "codex", "gemini", "cursor"] {
        ok(&repo, &["setup", agent, "--command", "lore"]);
        let again = json(&repo, &["setup", agent, "--command", "lore"]);
        assert!(
            again["files"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["changed"] == false && c["action"] == "unchanged"),
            "{agent}: {again}"
        );
    }
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings["permissions"]["allow"][0], "Bash(ls)");
    assert_eq!(settings["hooks"]["Stop"].as_array().unwrap().len(), 2);
    assert_eq!(
        settings["hooks"]["PostToolUse"][0]["matcher"],
        "Read|Edit|MultiEdit|Write|NotebookEdit|Bash"
    );
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(mcp["mcpServers"]["lore"]["args"][0], "mcp");
    let toml = std::fs::read_to_string(repo.path().join(".codex/config.toml")).unwrap();
    assert!(
        toml.starts_with("# my codex\nmodel = \"gpt-5.4\""),
        "{toml}"
    );
    assert!(
        toml.contains("[mcp_servers.lore]") && toml.contains("[features]\nhooks = true"),
        "{toml}"
    );
    let cursor: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join(".cursor/hooks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(cursor["version"], 1);
    assert_eq!(
        cursor["hooks"]["sessionStart"][0]["command"],
        "lore hook cursor sessionStart"
    );
    let gemini: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join(".gemini/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["command"],
        "lore hook gemini BeforeAgent"
    );
    assert_eq!(gemini["mcpServers"]["lore"]["command"], "lore");
    assert_eq!(gemini["hooksConfig"]["enabled"], true);

    ok(&repo, &["setup", "claude", "--remove", "--command", "lore"]);
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        settings["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["Stop"]
    );
    assert_eq!(settings["permissions"]["allow"][0], "Bash(ls)");

    // A config lore cannot read is left alone.
    repo.write(".cursor/mcp.json", "{ oops");
    let out = run(&repo, &["setup", "cursor"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".cursor/mcp.json")).unwrap(),
        "{ oops"
    );
}

/// A directory holding a `lore` that runs the binary under test (a symlink), as an install
/// elsewhere on a teammate's machine would.
fn install_dir(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(common::lore_bin(), dir.join("lore")).unwrap();
    dir
}

/// `lore setup` run with exactly this PATH.
fn setup_with_path(repo: &TestRepo, path: &str, args: &[&str]) -> Value {
    let mut all = vec!["--json", "setup"];
    all.extend_from_slice(args);
    let out = lore_command(&repo.path(), &repo.home(), &all)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_committed_setup_runs_on_a_teammates_machine_with_lore_elsewhere_on_path() {
    let tmp = tempfile::tempdir().unwrap();
    let mine = install_dir(tmp.path(), "mine/bin");
    let theirs = install_dir(tmp.path(), "theirs/bin");
    let system = "/usr/local/bin:/usr/bin:/bin";
    let repo = TestRepo::new();
    let said = setup_with_path(&repo, &format!("{}:{system}", mine.display()), &["claude"]);
    assert_eq!(said["command"], "lore", "{said}");
    assert!(said.get("command_note").is_none(), "{said}");
    let settings = std::fs::read_to_string(repo.path().join(".claude/settings.json")).unwrap();
    assert!(!settings.contains(&*mine.to_string_lossy()), "{settings}");
    // The teammate's clone has the committed file; their lore is elsewhere on their PATH.
    let v: Value = serde_json::from_str(&settings).unwrap();
    let hook = v["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    let teammate = TestRepo::new();
    let out = std::process::Command::new("sh")
        .args(["-c", hook])
        .current_dir(teammate.path())
        .env("PATH", format!("{}:{system}", theirs.display()))
        .env("HOME", teammate.home())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{hook}: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Without lore on PATH: this binary's absolute path, and a note saying what that means.
    let other = TestRepo::new();
    let said = setup_with_path(&other, system, &["claude"]);
    let command = said["command"].as_str().unwrap();
    assert_eq!(
        Path::new(command),
        Path::new(common::lore_bin()).canonicalize().unwrap()
    );
    assert!(
        said["command_note"]
            .as_str()
            .unwrap()
            .contains("not on PATH"),
        "{said}"
    );
    // Setting up again with lore on PATH replaces the absolute entries instead of adding.
    setup_with_path(&other, &format!("{}:{system}", mine.display()), &["claude"]);
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(other.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let starts = v["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(starts.len(), 1, "{v}");
    assert_eq!(
        starts[0]["hooks"][0]["command"],
        "lore hook claude SessionStart"
    );
}

#[test]
fn one_action_per_file_and_remove_leaves_no_empty_files() {
    let repo = TestRepo::new();
    // Gemini keeps hooks and server in one file: reported once.
    let said = json(&repo, &["setup", "gemini", "--command", "lore"]);
    let files = said["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{said}");
    assert_eq!(files[0]["action"], "created");
    for agent in ["claude", "codex", "cursor"] {
        ok(&repo, &["setup", agent, "--command", "lore"]);
    }
    repo.write(
        ".cursor/mcp.json",
        r#"{"mcpServers":{"other":{"command":"x"}}}"#,
    );
    ok(&repo, &["setup", "cursor", "--command", "lore"]);
    for agent in ["claude", "codex", "gemini", "cursor"] {
        let removed = json(&repo, &["setup", agent, "--remove", "--command", "lore"]);
        for f in removed["files"].as_array().unwrap() {
            let path = Path::new(f["path"].as_str().unwrap());
            match f["action"].as_str().unwrap() {
                "removed" => assert!(!path.exists(), "{removed}"),
                "removed from" => {
                    let text = std::fs::read_to_string(path).unwrap();
                    assert!(!lore::setup::is_empty_config(&text), "{path:?}: {text}");
                    assert!(
                        !text.contains("lore hook") && !text.contains("\"lore\""),
                        "{text}"
                    );
                }
                other => panic!("{agent}: {other} for {path:?}"),
            }
        }
    }
    // What lore created is gone; the file with another server stays, without lore.
    assert!(!repo.path().join(".mcp.json").exists());
    assert!(!repo.path().join(".claude/settings.json").exists());
    let cursor = std::fs::read_to_string(repo.path().join(".cursor/mcp.json")).unwrap();
    assert!(
        cursor.contains("other") && !cursor.contains("lore"),
        "{cursor}"
    );
}

#[test]
fn the_help_of_command_names_the_default_setup_uses() {
    let repo = TestRepo::new();
    let out = lore_command(&repo.path(), &repo.home(), &["setup", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let option = help
        .split("\n\n")
        .find(|p| p.trim_start().starts_with("--command"))
        .unwrap_or_else(|| panic!("{help}"));
    let option = option.split_whitespace().collect::<Vec<_>>().join(" ");
    // What a_committed_setup_runs_on_a_teammates_machine_with_lore_elsewhere_on_path shows.
    assert!(
        option.contains("default: `lore` when lore is on PATH"),
        "{option}"
    );
    assert!(option.contains("absolute path"), "{option}");
}
