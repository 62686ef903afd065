//! Cursor's hooks: its event names and its own answer shape. Payloads carry `conversation_id`,
//! `generation_id`, `workspace_roots` (no `cwd`) and `transcript_path`; its transcript lines put
//! the role beside the message. It reads `additional_context` on sessionStart and postToolUse
//! (its IDE may drop the sessionStart one, a known race; the CLI keeps it) and waits for
//! `continue` on beforeSubmitPrompt; afterFileEdit takes no answer, so lore does not hook it.

use serde_json::{Value, json};

use super::{Event, HookOutcome};

/// Cursor's names for lore's events.
pub(super) const EVENTS: &[(&str, Event)] = &[
    ("sessionStart", Event::SessionStart),
    ("beforeSubmitPrompt", Event::UserPromptSubmit),
    ("postToolUse", Event::PostToolUse),
    ("preCompact", Event::PreCompact),
    ("stop", Event::Stop),
    ("sessionEnd", Event::SessionEnd),
];

/// Cursor's hook entries take no matcher: every tool use reaches lore.
pub(super) const TOOL_MATCHER: &str = "";

/// Cursor's answer to an event, if any.
pub(super) fn answer(event: Event, outcome: &HookOutcome) -> Option<Value> {
    match event {
        Event::SessionStart | Event::PostToolUse => outcome
            .context
            .as_ref()
            .map(|c| json!({ "additional_context": c })),
        // Cursor waits for an answer to a prompt and needs `continue`.
        Event::UserPromptSubmit => Some(json!({ "continue": true })),
        _ => None,
    }
}
