//! Claude Code's hooks: its event names and the tools lore's tool hook matches. Payloads carry
//! `session_id`, `transcript_path` (the session's JSONL), `cwd` and `permission_mode`; file tools
//! name their file in `tool_input.file_path` (`notebook_path` for notebooks). It answers in the
//! shape Codex and Gemini share (`hookSpecificOutput.additionalContext`, `systemMessage`).

use super::Event;

/// Claude Code's names for lore's events.
pub(super) const EVENTS: &[(&str, Event)] = &[
    ("SessionStart", Event::SessionStart),
    ("UserPromptSubmit", Event::UserPromptSubmit),
    ("PostToolUse", Event::PostToolUse),
    ("PreCompact", Event::PreCompact),
    ("Stop", Event::Stop),
    ("SessionEnd", Event::SessionEnd),
];

/// The tools lore's PostToolUse hook runs for: the file tools, and the shell (the files its
/// command names).
pub(super) const TOOL_MATCHER: &str = "Read|Edit|MultiEdit|Write|NotebookEdit|Bash";
