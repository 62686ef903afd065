//! Gemini CLI's hooks (`packages/core/src/hooks/types.ts`): its event names and the tools lore's
//! tool hook matches. Payloads carry `session_id`, `transcript_path` (the chat file,
//! `chats/session-*.jsonl`), `cwd`, `hook_event_name` and `timestamp`; `read_many_files` names
//! its files in an `include` list. Gemini shows a hook's stderr as a message whenever its stdout
//! is empty, so lore says what it has to say in its answer.

use super::Event;

/// Gemini CLI's names for lore's events.
pub(super) const EVENTS: &[(&str, Event)] = &[
    ("SessionStart", Event::SessionStart),
    ("BeforeAgent", Event::UserPromptSubmit),
    ("AfterTool", Event::PostToolUse),
    ("PreCompress", Event::PreCompact),
    ("AfterAgent", Event::Stop),
    ("SessionEnd", Event::SessionEnd),
];

/// The file tools lore's AfterTool hook runs for.
pub(super) const TOOL_MATCHER: &str = "read_file|read_many_files|write_file|replace";
