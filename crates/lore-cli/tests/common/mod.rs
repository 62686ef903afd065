//! Running the real `lore` binary against a hermetic temporary repository.

#![allow(dead_code)]

pub mod mcp_stdio;
pub mod net;
pub mod table;
pub mod upkeep;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use lore_testutils::{TestRepo, make_hermetic};

/// The binary under test.
pub fn lore_bin() -> &'static str {
    env!("CARGO_BIN_EXE_lore")
}

/// Variables of the caller's environment that choose what lore does; hermetic commands remove
/// them.
pub const LORE_VARIABLES: &[&str] = &[
    "LORE_AGENT",
    "LORE_SESSION",
    "LORE_HOME",
    "LORE_EMBEDDER",
    "LORE_MINILM_DIR",
    "LORE_E5_DIR",
];

/// Makes `cmd` (lore, or anything that runs lore) hermetic at `home`: none of the caller's lore
/// or git variables, git's configuration and `HOME` inside `home`.
pub fn isolate(cmd: &mut Command, home: &Path) {
    for name in LORE_VARIABLES {
        cmd.env_remove(name);
    }
    // Days and weeks in queries are read in the user's time zone: the same one everywhere.
    cmd.env("TZ", "UTC");
    make_hermetic(cmd, home);
}

/// A `lore` command in `dir`, with a hermetic environment rooted at `home`.
pub fn lore_command(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(lore_bin());
    cmd.args(args).current_dir(dir);
    isolate(&mut cmd, home);
    cmd
}

/// Runs lore in the repository, with optional stdin bytes.
pub fn run(repo: &TestRepo, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = lore_command(&repo.path(), &repo.home(), args);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawning lore");
    {
        let mut pipe = child.stdin.take().expect("stdin");
        if let Some(bytes) = stdin {
            // lore may refuse the command before reading its input: a closed pipe is fine.
            match pipe.write_all(bytes) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => panic!("writing stdin: {e}"),
            }
        }
    }
    child.wait_with_output().expect("waiting for lore")
}

/// Insists that a finished process succeeded (showing its stderr if not); returns its stdout.
pub fn stdout_of(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs lore and insists on success; returns stdout.
pub fn ok(repo: &TestRepo, args: &[&str]) -> String {
    stdout_of(run(repo, args, None), &format!("lore {args:?}"))
}

/// Runs `lore --json ARGS` in `dir` with the hermetic environment at `home`, insists on success
/// and parses the output.
pub fn json_at(dir: &Path, home: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = lore_command(dir, home, &all)
        .output()
        .expect("spawning lore");
    serde_json::from_str(&stdout_of(out, &format!("lore {args:?}"))).expect("JSON output")
}

/// Runs lore with `--json` and parses the output.
pub fn json(repo: &TestRepo, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(repo, &all)).expect("JSON output")
}

const ID_ALPHABET: &str = "0123456789abcdefghjkmnpqrstvwxyz";

/// Replaces the run-specific parts of text output: ids and commit prefixes (12 characters of
/// the id alphabet) become `[ID]`, longer hex runs `[HEX]`, dates and times placeholders.
pub fn redact(text: &str, repo: &TestRepo) -> String {
    let out = text.replace(&repo.path().display().to_string(), "[WORK]");
    let mut cleaned = String::new();
    for word in out.split_inclusive(|c: char| c.is_whitespace() || c == '(' || c == ')') {
        let core = word.trim_end_matches(|c: char| c.is_whitespace() || c == '(' || c == ')');
        let tail = &word[core.len()..];
        cleaned.push_str(&redact_word(core));
        cleaned.push_str(tail);
    }
    cleaned
}

pub fn redact_word(word: &str) -> String {
    let core = word.trim_end_matches([':', ',', '.']);
    let punct = &word[core.len()..];
    let is_id = core.len() == 12 && core.chars().all(|c| ID_ALPHABET.contains(c));
    let is_hex = core.len() > 12 && core.chars().all(|c| c.is_ascii_hexdigit());
    let is_date = core.len() == 10
        && core.as_bytes().get(4) == Some(&b'-')
        && core.as_bytes().get(7) == Some(&b'-');
    let is_clock = core.len() == 5 && core.as_bytes().get(2) == Some(&b':');
    let is_stamp = core.len() >= 20 && core.contains('T') && core.ends_with('Z');
    let replaced = match (is_id, is_hex, is_date, is_clock, is_stamp) {
        (true, ..) => "[ID]",
        (_, true, ..) => "[HEX]",
        (_, _, true, ..) => "[DATE]",
        (_, _, _, true, _) => "[TIME]",
        (.., true) => "[TIMESTAMP]",
        _ => return word.to_string(),
    };
    format!("{replaced}{punct}")
}

/// Where scripts/setup-clients.sh installs the real MCP clients.
pub fn tools_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools")
}

/// A real MCP client installed by scripts/setup-clients.sh. Missing, the test fails and says how
/// to install it: MCP tests never pass by skipping.
pub fn mcp_client(rel: &str) -> std::path::PathBuf {
    let path = tools_dir().join(rel);
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup-clients.sh (scripts/test does)",
        path.display()
    );
    path
}

/// The names of the tools `lore mcp` offers, sorted, as the Python SDK lists them.
pub fn mcp_tool_names(repo: &TestRepo) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/parity_client.py");
    let mut cmd = Command::new(mcp_client("venv/bin/python"));
    cmd.arg(script)
        .arg(lore_bin())
        .arg(repo.path())
        .arg("--list")
        .current_dir(repo.path());
    make_hermetic(&mut cmd, &repo.home());
    let out = cmd.output().expect("running the Python MCP client");
    assert!(
        out.status.success(),
        "listing tools failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = serde_json::from_slice(&out.stdout).expect("a JSON list");
    names.sort();
    names
}
