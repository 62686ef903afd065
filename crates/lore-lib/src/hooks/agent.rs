//! The coding agents lore has hooks for and lore's own hook events: each agent's names for its
//! events, mapped onto lore's six.

use serde::Serialize;

use crate::error::{Error, Result};

/// The coding agents lore has hooks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    /// Anthropic's Claude Code.
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// Cursor.
    Cursor,
}

/// lore's hook events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    /// A session starts (or resumes, or restarts after compaction).
    SessionStart,
    /// The user submitted a prompt.
    UserPromptSubmit,
    /// A tool ran.
    PostToolUse,
    /// The context is about to be compacted.
    PreCompact,
    /// The agent finished its turn.
    Stop,
    /// The session ended.
    SessionEnd,
}

impl Agent {
    /// Parses `claude`, `codex`, `gemini` or `cursor` (also `claude-code`, `gemini-cli`).
    pub fn parse(name: &str) -> Result<Agent> {
        match name.to_ascii_lowercase().as_str() {
            "claude" | "claude-code" => Ok(Agent::Claude),
            "codex" | "codex-cli" => Ok(Agent::Codex),
            "gemini" | "gemini-cli" => Ok(Agent::Gemini),
            "cursor" => Ok(Agent::Cursor),
            _ => Err(Error::Invalid {
                what: "agent",
                value: name.into(),
                reason: "expected claude, codex, gemini or cursor".into(),
            }),
        }
    }

    /// The agent's name as lore writes it (`claude-code`, …), recorded in memories.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini-cli",
            Agent::Cursor => "cursor",
        }
    }

    /// The agent's own event names for lore's events, as its hook configuration spells them.
    pub fn events(self) -> &'static [(&'static str, Event)] {
        use Event::*;
        match self {
            Agent::Claude => &[
                ("SessionStart", SessionStart),
                ("UserPromptSubmit", UserPromptSubmit),
                ("PostToolUse", PostToolUse),
                ("PreCompact", PreCompact),
                ("Stop", Stop),
                ("SessionEnd", SessionEnd),
            ],
            Agent::Codex => &[
                ("SessionStart", SessionStart),
                ("UserPromptSubmit", UserPromptSubmit),
                ("PostToolUse", PostToolUse),
                ("PreCompact", PreCompact),
                ("Stop", Stop),
            ],
            Agent::Gemini => &[
                ("SessionStart", SessionStart),
                ("BeforeAgent", UserPromptSubmit),
                ("AfterTool", PostToolUse),
                ("PreCompress", PreCompact),
                ("AfterAgent", Stop),
                ("SessionEnd", SessionEnd),
            ],
            Agent::Cursor => &[
                ("sessionStart", SessionStart),
                ("beforeSubmitPrompt", UserPromptSubmit),
                ("afterFileEdit", PostToolUse),
                ("postToolUse", PostToolUse),
                ("preCompact", PreCompact),
                ("stop", Stop),
                ("sessionEnd", SessionEnd),
            ],
        }
    }
}

fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl Event {
    /// lore's name for the event (`session-start`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Event::SessionStart => "session-start",
            Event::UserPromptSubmit => "user-prompt-submit",
            Event::PostToolUse => "post-tool-use",
            Event::PreCompact => "pre-compact",
            Event::Stop => "stop",
            Event::SessionEnd => "session-end",
        }
    }

    /// The event an agent's event name means, in its spelling or lore's (case, `-` and `_`
    /// ignored); `None` for an event lore does not handle.
    pub fn parse(agent: Agent, name: &str) -> Option<Event> {
        let want = fold(name);
        agent
            .events()
            .iter()
            .find(|(n, _)| fold(n) == want)
            .map(|(_, e)| *e)
            .or_else(|| {
                [
                    Event::SessionStart,
                    Event::UserPromptSubmit,
                    Event::PostToolUse,
                    Event::PreCompact,
                    Event::Stop,
                    Event::SessionEnd,
                ]
                .into_iter()
                .find(|e| fold(e.as_str()) == want)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_of_every_agent_map_to_lore_events() {
        assert_eq!(
            Event::parse(Agent::Claude, "SessionStart"),
            Some(Event::SessionStart)
        );
        assert_eq!(
            Event::parse(Agent::Claude, "session-start"),
            Some(Event::SessionStart)
        );
        assert_eq!(
            Event::parse(Agent::Gemini, "BeforeAgent"),
            Some(Event::UserPromptSubmit)
        );
        assert_eq!(
            Event::parse(Agent::Cursor, "afterFileEdit"),
            Some(Event::PostToolUse)
        );
        assert_eq!(Event::parse(Agent::Claude, "Notification"), None);
    }
}
