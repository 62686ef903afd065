//! The answer a hook prints for its agent: Claude Code, Codex CLI and Gemini CLI share one shape
//! (`hookSpecificOutput.additionalContext`, `systemMessage`); Cursor has its own.

use serde_json::{Value, json};

use super::{Agent, Event, HookOutcome};

/// The answer to print on stdout for the agent, if any.
pub fn respond(agent: Agent, event: Event, outcome: &HookOutcome) -> Option<String> {
    let native = agent
        .events()
        .iter()
        .find(|(_, e)| *e == event)
        .map(|(n, _)| *n)
        .unwrap_or(event.as_str());
    let value = match agent {
        Agent::Cursor => match event {
            Event::SessionStart => outcome
                .context
                .as_ref()
                .map(|c| json!({ "additional_context": c })),
            // Cursor waits for an answer to a prompt and needs `continue`.
            Event::UserPromptSubmit => Some(json!({ "continue": true })),
            _ => None,
        },
        Agent::Claude | Agent::Codex | Agent::Gemini => {
            let mut v = serde_json::Map::new();
            let injectable = matches!(
                event,
                Event::SessionStart | Event::UserPromptSubmit | Event::PostToolUse
            );
            if injectable && let Some(c) = &outcome.context {
                v.insert(
                    "hookSpecificOutput".into(),
                    json!({ "hookEventName": native, "additionalContext": c }),
                );
            }
            if let Some(m) = &outcome.message {
                v.insert("systemMessage".into(), Value::String(m.clone()));
            }
            (!v.is_empty()).then_some(Value::Object(v))
        }
    };
    value.map(|v| v.to_string())
}
