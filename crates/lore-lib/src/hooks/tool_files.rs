//! The files a tool's input names, whatever the agent: path fields (Claude Code, Gemini CLI,
//! Cursor), Gemini's `read_many_files` `include` list, and the `command` text Codex sends for
//! its edits (`apply_patch`, whose `*** Update File:` lines name the files) and shell commands.
//!
//! Every reading is one pass over the text and stops at [`MAX_FILES`], so a hostile or huge
//! payload costs time linear in its size and yields a bounded list.

use serde_json::Value;

/// The most files one tool use yields.
pub const MAX_FILES: usize = 32;

/// The longest word of a shell command taken for a path.
const MAX_PATH_CHARS: usize = 4096;

/// Tool names that run a shell command given in `tool_input.command`.
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "local_shell",
    "exec_command",
    "run_shell_command",
    "run_terminal_cmd",
];

/// The patch lines that name a file: added, updated, deleted, or the target of a move.
const PATCH_MARKERS: &[&str] = &[
    "*** Update File:",
    "*** Add File:",
    "*** Delete File:",
    "*** Move to:",
];

/// The files `tool_input` names for the tool `tool` (in order, each once).
pub fn files(tool: Option<&str>, tool_input: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["file_path", "path", "absolute_path", "notebook_path"] {
        if let Some(p) = tool_input.get(key).and_then(Value::as_str) {
            push(&mut out, p);
        }
    }
    for key in ["paths", "include"] {
        for p in tool_input
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|p| !is_glob(p))
        {
            push(&mut out, p);
        }
    }
    let command = match tool_input.get("command") {
        Some(Value::String(s)) => s.clone(),
        // Older Codex shells pass argv.
        Some(Value::Array(argv)) => argv
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    if !command.is_empty() {
        let shell = tool.is_some_and(|t| SHELL_TOOLS.contains(&t.to_ascii_lowercase().as_str()));
        if !patch_files(&command, &mut out) && shell {
            shell_files(&command, &mut out);
        }
    }
    out
}

fn push(out: &mut Vec<String>, path: &str) {
    let path = path.trim();
    if !path.is_empty() && out.len() < MAX_FILES && !out.iter().any(|p| p == path) {
        out.push(path.to_string());
    }
}

fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

/// Adds the files an `apply_patch` text names; false when the text holds no patch lines.
fn patch_files(text: &str, out: &mut Vec<String>) -> bool {
    let mut found = false;
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(path) = PATCH_MARKERS
            .iter()
            .find_map(|marker| line.strip_prefix(marker))
        {
            found = true;
            push(out, path);
        }
    }
    found
}

/// Adds the words of a shell command that look like paths: they hold a `/` or a `.` and a
/// letter, are neither options, globs, URLs nor assignments, and are not the program run.
fn shell_files(command: &str, out: &mut Vec<String>) {
    for (word, first) in shell_words(command) {
        if first || out.len() >= MAX_FILES {
            continue;
        }
        if looks_like_path(&word) {
            push(out, &word);
        }
    }
}

fn looks_like_path(word: &str) -> bool {
    word.len() <= MAX_PATH_CHARS
        && !word.starts_with('-')
        && (word.contains('/') || word.contains('.'))
        && word.chars().any(|c| c.is_ascii_alphabetic())
        && !word.contains("://")
        && !word.contains('=')
        && !is_glob(word)
        && !word.starts_with('$')
}

/// Splits a shell command into words (quotes and backslashes honoured), each with whether it
/// is the first word of its command (after `;`, `&&`, `|`, a newline …). Redirections end a
/// word; their targets are words too. One pass over the text.
fn shell_words(command: &str) -> Vec<(String, bool)> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut first = true;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    let mut end = |word: &mut String, in_word: &mut bool, first: &mut bool| {
        if *in_word {
            words.push((std::mem::take(word), *first));
            *first = false;
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                    in_word = true;
                }
            }
            (None, ';' | '&' | '|' | '\n' | '(' | ')') => {
                end(&mut word, &mut in_word, &mut first);
                first = true;
            }
            (None, '<' | '>') => end(&mut word, &mut in_word, &mut first),
            (None, c) if c.is_whitespace() => end(&mut word, &mut in_word, &mut first),
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end(&mut word, &mut in_word, &mut first);
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn codex_patches_name_every_file_they_touch() {
        let patch = "*** Begin Patch\n*** Update File: src/index/schema.rs\n@@\n-const VERSION: u32 = 3;\n+const VERSION: u32 = 4;\n*** Add File: docs/schema.md\n+# Schema\n*** Delete File: old.txt\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n*** End Patch\n";
        let got = files(Some("apply_patch"), &json!({ "command": patch }));
        assert_eq!(
            got,
            [
                "src/index/schema.rs",
                "docs/schema.md",
                "old.txt",
                "src/a.rs",
                "src/b.rs"
            ]
        );
        // A patch sent through the shell (a heredoc) is read the same way.
        let heredoc = format!("apply_patch <<'EOF'\n{patch}EOF\n");
        assert_eq!(files(Some("Bash"), &json!({ "command": heredoc })).len(), 5);
    }

    #[test]
    fn shell_commands_name_files_but_not_programs_options_or_urls() {
        let command = r#"cd /w && sed -n '1,40p' src/index/schema.rs | grep -v x > "out dir/notes.txt"; cargo test --manifest-path=Cargo.toml -p lore-lib; curl https://example.com/a.rs; ls *.rs; FOO=bar.rs echo 3.14"#;
        let got = files(Some("Bash"), &json!({ "command": command }));
        assert_eq!(got, ["/w", "src/index/schema.rs", "out dir/notes.txt"]);
        // Codex's older shell passes argv.
        let argv = json!({ "command": ["bash", "-lc", "cat README.md"] });
        assert_eq!(files(Some("shell"), &argv), ["README.md"]);
        // A command of a tool that is not a shell is not read for files.
        assert!(files(Some("mcp__db__query"), &json!({ "command": "cat a.rs" })).is_empty());
    }

    #[test]
    fn path_fields_and_gemini_include_lists() {
        let input =
            json!({ "include": ["src/a.rs", "src/**/*.ts", "README.md"], "file_path": "src/a.rs" });
        assert_eq!(
            files(Some("read_many_files"), &input),
            ["src/a.rs", "README.md"]
        );
    }

    #[test]
    fn huge_inputs_yield_a_bounded_list() {
        let patch: String = (0..10_000)
            .map(|i| format!("*** Add File: f{i}.rs\n"))
            .collect();
        assert_eq!(
            files(Some("apply_patch"), &json!({ "command": patch })).len(),
            MAX_FILES
        );
        let words = "cat ".to_string() + &"a/b.rs ".repeat(100_000);
        assert_eq!(
            files(Some("Bash"), &json!({ "command": words })),
            ["a/b.rs"]
        );
        let unterminated = format!("cat '{}", "x".repeat(100_000));
        assert!(files(Some("Bash"), &json!({ "command": unterminated })).is_empty());
    }
}
