//! Reading an agent's event payload (stdin JSON) into what lore needs from it: every agent's
//! field names folded together (Claude Code's and Codex's `session_id`, Cursor's
//! `conversation_id` and `workspace_roots`, …).

use std::path::PathBuf;

use serde_json::Value;

use crate::error::{Error, Result};

/// What lore reads from an event payload (every agent's field names folded together).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookInput {
    /// The session (`session_id`; Cursor's `conversation_id`).
    pub session: Option<String>,
    /// The session transcript, when the agent gives one.
    pub transcript: Option<PathBuf>,
    /// The working directory (`cwd`; Cursor's first workspace root).
    pub cwd: Option<PathBuf>,
    /// The prompt (prompt events).
    pub prompt: Option<String>,
    /// The tool that ran (tool events).
    pub tool: Option<String>,
    /// The tool's input, as compact JSON (tool events).
    pub tool_input: Option<String>,
    /// Files the tool read or wrote.
    pub files: Vec<String>,
    /// Why the session started (`startup`, `resume`, `clear`, `compact`).
    pub source: Option<String>,
}

fn text_at<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
}

impl HookInput {
    /// Reads a payload. Anything that is not a JSON object is an error (the caller reports it
    /// and lets the agent go on).
    pub fn parse(payload: &str) -> Result<HookInput> {
        let v: Value = serde_json::from_str(payload).map_err(|e| Error::Parse {
            context: "the hook's event payload (stdin)".into(),
            message: e.to_string(),
        })?;
        if !v.is_object() {
            return Err(Error::Parse {
                context: "the hook's event payload (stdin)".into(),
                message: "expected a JSON object".into(),
            });
        }
        let tool_input = v.get("tool_input").unwrap_or(&Value::Null);
        let tool = text_at(&v, &["tool_name"]);
        let mut files = super::tool_files::files(tool, tool_input);
        // Cursor's afterFileEdit names its file at the top.
        if let Some(edited) = text_at(&v, &["file_path"])
            && !files.iter().any(|f| f == edited)
        {
            files.push(edited.to_string());
        }
        Ok(HookInput {
            session: text_at(&v, &["session_id", "conversation_id", "sessionId"]).map(Into::into),
            transcript: text_at(&v, &["transcript_path", "transcriptPath"]).map(PathBuf::from),
            cwd: text_at(&v, &["cwd"]).map(PathBuf::from).or_else(|| {
                v.get("workspace_roots")
                    .and_then(Value::as_array)
                    .and_then(|r| r.first())
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
            }),
            prompt: text_at(&v, &["prompt", "user_prompt"]).map(Into::into),
            tool: tool.map(Into::into),
            tool_input: Some(tool_input)
                .filter(|t| t.is_object())
                .map(|t| t.to_string()),
            files,
            source: text_at(&v, &["source", "trigger"]).map(Into::into),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::relative;
    use std::path::Path;

    #[test]
    fn payload_fields_of_every_agent() {
        let cursor = r#"{"conversation_id":"c1","workspace_roots":["/w"],"hook_event_name":"afterFileEdit","file_path":"/w/src/a.rs"}"#;
        let i = HookInput::parse(cursor).unwrap();
        assert_eq!(i.session.as_deref(), Some("c1"));
        assert_eq!(i.cwd.as_deref(), Some(Path::new("/w")));
        assert_eq!(i.files, ["/w/src/a.rs"]);
        assert_eq!(
            relative("/w/src/a.rs", Some(Path::new("/w")), None),
            "src/a.rs"
        );
        assert!(HookInput::parse("[1]").is_err());
        assert!(HookInput::parse("{").is_err());
    }
}
