//! Reading coding agents' session transcripts: the user's and the assistant's prose, turn by
//! turn, from Claude Code, Codex CLI and Cursor JSONL files, Gemini CLI chat files (JSONL
//! `chats/session-*.jsonl`: a metadata line, then messages, `$set` and `$rewindTo` records; older
//! ones one JSON document) and anything shaped like them. Line types it does not know (summaries, snapshots, tool calls, new kinds) are
//! counted and skipped; a damaged line is counted, never fatal.

use serde::Serialize;
use serde_json::Value;

/// Who said it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The agent.
    Assistant,
}

/// One turn's prose.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Turn {
    /// Who said it.
    pub role: Role,
    /// The text (text blocks joined; tool calls, tool results and thinking left out).
    pub text: String,
    /// The 1-based line (or message number) it came from.
    pub line: usize,
}

/// A transcript as read.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Transcript {
    /// The turns with prose, in order.
    pub turns: Vec<Turn>,
    /// Lines or messages read in all.
    pub lines: usize,
    /// Lines of a kind that carries no prose (or one not known), skipped.
    pub skipped: usize,
    /// Lines that were not JSON.
    pub damaged: usize,
}

/// Parses a transcript: JSON lines, or one JSON document with a `messages` array. Only lines
/// after `from_line` (1-based lines already seen) are returned as turns.
pub fn parse(text: &str, from_line: usize) -> Transcript {
    let mut out = Transcript::default();
    let trimmed = text.trim_start();
    if trimmed.starts_with('{')
        && let Ok(doc) = serde_json::from_str::<Value>(trimmed)
        && let Some(messages) = doc.get("messages").and_then(Value::as_array)
    {
        for (i, m) in messages.iter().enumerate() {
            out.lines += 1;
            if i < from_line {
                continue;
            }
            push_turn(&mut out, m, i + 1);
        }
        return out;
    }
    parse_lines_into(&mut out, text, from_line);
    out
}

/// Whether `text` is one JSON document with a `messages` array (read whole, never by lines).
pub fn is_document(text: &str) -> bool {
    let trimmed = text.trim_start();
    trimmed.starts_with('{')
        && serde_json::from_str::<Value>(trimmed)
            .is_ok_and(|doc| doc.get("messages").is_some_and(Value::is_array))
}

/// Parses JSON lines only (new lines at a transcript's end, never a whole document).
pub fn parse_lines(text: &str) -> Transcript {
    let mut out = Transcript::default();
    parse_lines_into(&mut out, text, 0);
    out
}

fn parse_lines_into(out: &mut Transcript, text: &str, from_line: usize) {
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.lines += 1;
        if i < from_line {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => push_turn(out, &v, i + 1),
            Err(_) => out.damaged += 1,
        }
    }
}

fn push_turn(out: &mut Transcript, v: &Value, line: usize) {
    match turn_of(v) {
        Some((role, text)) if !text.trim().is_empty() => {
            // Some agents log a message twice (an item and an event); keep one.
            if out
                .turns
                .last()
                .is_some_and(|t| t.role == role && t.text == text)
            {
                return;
            }
            out.turns.push(Turn { role, text, line });
        }
        _ => out.skipped += 1,
    }
}

fn role_of(word: &str) -> Option<Role> {
    match word {
        "user" | "human" => Some(Role::User),
        "assistant" | "gemini" | "model" | "agent" => Some(Role::Assistant),
        _ => None,
    }
}

/// The role and prose of one line, if it is a message.
fn turn_of(v: &Value) -> Option<(Role, String)> {
    // Codex wraps items in {type: response_item, payload: {...}}; Claude Code in {message: ...}.
    let inner = v
        .get("payload")
        .filter(|_| v.get("type").and_then(Value::as_str) == Some("response_item"))
        .or_else(|| v.get("message").filter(|m| m.is_object()))
        .unwrap_or(v);
    if let Some(kind) = inner.get("type").and_then(Value::as_str)
        && !matches!(kind, "message" | "user" | "assistant" | "gemini" | "model")
    {
        return None;
    }
    let role = ["role", "type"]
        .iter()
        .filter_map(|k| inner.get(*k).and_then(Value::as_str))
        .chain(v.get("type").and_then(Value::as_str))
        // Cursor puts the role beside the message: {role, message: {content}}.
        .chain(v.get("role").and_then(Value::as_str))
        .find_map(role_of)?;
    let content = inner.get("content").or_else(|| inner.get("parts"))?;
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.as_str()),
                // Gemini marks its thought parts; they are not prose.
                Value::Object(_) if item.get("thought").and_then(Value::as_bool) == Some(true) => {
                    None
                }
                Value::Object(_) => {
                    let kind = item.get("type").and_then(Value::as_str).unwrap_or("text");
                    matches!(kind, "text" | "input_text" | "output_text")
                        .then(|| item.get("text").and_then(Value::as_str))
                        .flatten()
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    Some((role, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codex_and_unknown_lines() {
        let text = [
            r#"{"type":"summary","summary":"x"}"#,
            r#"{"type":"user","message":{"role":"user","content":"Please fix it"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Done."},{"type":"tool_use","name":"Edit","input":{}}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"From codex"}]}}"#,
            r#"{"type":"file-history-snapshot","snapshot":{}}"#,
            r#"{"type":"brand-new-kind","whatever":[1,2]}"#,
            "not json at all",
        ]
        .join("\n");
        let t = parse(&text, 0);
        let got: Vec<(Role, &str)> = t.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (Role::User, "Please fix it"),
                (Role::Assistant, "Done."),
                (Role::Assistant, "From codex")
            ]
        );
        assert_eq!((t.lines, t.skipped, t.damaged), (8, 4, 1));
        assert_eq!(parse(&text, 3).turns.len(), 1);
    }

    #[test]
    fn gemini_chat_documents() {
        let doc = r#"{"sessionId":"s","messages":[{"type":"user","content":"hi"},{"type":"gemini","content":"hello"},{"type":"info","content":"x"}]}"#;
        let t = parse(doc, 0);
        assert_eq!(t.turns.len(), 2);
        assert_eq!(t.turns[1].role, Role::Assistant);
        assert_eq!(t.skipped, 1);
    }

    #[test]
    fn cursor_lines_carry_the_role_beside_the_message() {
        let text = [
            r#"{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nFix the flaky test\n</user_query>"}]}}"#,
            r#"{"role":"assistant","message":{"content":[{"type":"text","text":"[decision] Retry the socket bind once"},{"type":"tool_use","name":"Edit","input":{}}]}}"#,
        ]
        .join("\n");
        let t = parse(&text, 0);
        assert_eq!(t.turns.len(), 2, "{:?}", t.turns);
        assert_eq!(t.turns[0].role, Role::User);
        assert_eq!(t.turns[1].text, "[decision] Retry the socket bind once");
    }

    #[test]
    fn gemini_jsonl_chats() {
        let text = [
            r#"{"sessionId":"s","projectHash":"h","startTime":"2026-11-20T11:00:00.000Z","lastUpdated":"2026-11-20T11:00:00.000Z","kind":"main"}"#,
            r#"{"id":"m1","timestamp":"2026-11-20T11:00:05.000Z","type":"user","content":[{"text":"Speed up recall"}]}"#,
            r#"{"id":"m2","timestamp":"2026-11-20T11:01:00.000Z","type":"gemini","content":[{"text":"thinking","thought":true},{"text":"Done."}],"model":"gemini-2.5-pro"}"#,
            r#"{"$set":{"lastUpdated":"2026-11-20T11:01:00.000Z"}}"#,
            r#"{"id":"m2","timestamp":"2026-11-20T11:01:00.000Z","type":"gemini","content":[{"text":"Done."}],"toolCalls":[]}"#,
            r#"{"$rewindTo":"m2"}"#,
        ]
        .join("\n");
        let t = parse(&text, 0);
        let got: Vec<(Role, &str)> = t.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
        assert_eq!(
            got,
            [(Role::User, "Speed up recall"), (Role::Assistant, "Done.")]
        );
        // The metadata line, `$set` and `$rewindTo`; the re-recorded message is kept once.
        assert_eq!(t.skipped, 3);
    }
}
