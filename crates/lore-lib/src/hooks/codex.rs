//! Codex CLI's hooks (its generated schemas: `codex-rs/hooks/schema/generated/`): its event names
//! and the tools lore's tool hook matches. Every payload carries `session_id`, `transcript_path`
//! (nullable), `cwd`, `model` and, but for PreCompact, a required `permission_mode`; turn events
//! a `turn_id`. Edits arrive as `apply_patch` and shell commands as `Bash`, both with the text in
//! `tool_input.command` (read by [`super::tool_files`]). It runs hooks with `[features]
//! hooks = true` and, for a project's `.codex/`, only in a project the user trusts.

use super::Event;

/// Codex's names for lore's events (it has no SessionEnd).
pub(super) const EVENTS: &[(&str, Event)] = &[
    ("SessionStart", Event::SessionStart),
    ("UserPromptSubmit", Event::UserPromptSubmit),
    ("PostToolUse", Event::PostToolUse),
    ("PreCompact", Event::PreCompact),
    ("Stop", Event::Stop),
];

/// The tools lore's PostToolUse hook runs for: Codex names its edits `apply_patch` and its
/// shell `Bash` in hook payloads.
pub(super) const TOOL_MATCHER: &str = "apply_patch|Bash";
