//! Merging lore into a coding agent's configuration (hooks and the MCP server) without clobbering
//! what is there, and taking it out again.
//!
//! Pure functions over file contents: the front end decides where the files are (project or
//! user scope) and writes the results. lore's own entries are recognised by their command
//! (`<lore> hook …`, `<lore> mcp`), so re-running setup replaces them and `--remove` removes only
//! them. A file that does not parse is an error: lore never overwrites what it cannot read.

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::hooks::{Agent, Event};

/// The name lore's MCP server is registered under.
pub const MCP_SERVER_NAME: &str = "lore";

/// Which configuration file of an agent a change is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigFile {
    /// The JSON file that holds hooks.
    Hooks,
    /// The JSON file that registers MCP servers (`mcpServers`).
    McpJson,
    /// Codex's `config.toml` (MCP servers and the hooks feature flag).
    CodexToml,
}

fn parse_json(text: &str, what: &str) -> Result<Map<String, Value>> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::Parse {
            context: what.into(),
            message: "expected a JSON object at the top".into(),
        }),
        Err(e) => Err(Error::Parse {
            context: what.into(),
            message: format!("{e}; fix or move the file, lore will not overwrite it"),
        }),
    }
}

/// Whether a configuration file holds nothing (`{}`, or no TOML key): once lore's entries are
/// out of such a file, `setup --remove` removes it.
pub fn is_empty_config(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() {
        return true;
    }
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(t) {
        return map.is_empty();
    }
    t.parse::<toml_edit::DocumentMut>()
        .is_ok_and(|doc| doc.as_table().is_empty())
}

fn is_lore_command(command: &str, lore: &str) -> bool {
    let c = command.trim();
    if c.starts_with(&format!("{lore} hook ")) || c == format!("{lore} mcp") {
        return true;
    }
    // An entry an earlier setup wrote with another path to lore (an absolute one, say) is
    // lore's too, so a new setup replaces it rather than adding a second.
    let (program, rest) = c.split_once(' ').unwrap_or((c, ""));
    let named_lore = program.rsplit('/').next() == Some("lore");
    named_lore && (rest.starts_with("hook ") || rest == "mcp")
}

/// Whether an entry of an event's list (a matcher group, or Cursor's command) runs lore.
fn holds_lore_command(entry: &Value, lore: &str) -> bool {
    let own = |h: &Value| {
        h.get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| is_lore_command(c, lore))
    };
    own(entry)
        || entry
            .get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|hooks| hooks.iter().any(own))
}

/// Removes lore's entries from one event's list of matcher groups (Claude, Codex, Gemini) or
/// commands (Cursor); drops groups left empty.
fn strip_event(list: &mut Vec<Value>, lore: &str) {
    for group in list.iter_mut() {
        if let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) {
            hooks.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_lore_command(c, lore))
            });
        }
    }
    list.retain(|group| {
        let own = group
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| is_lore_command(c, lore));
        let empty = group
            .get("hooks")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty);
        !own && !empty
    });
}

/// The hooks file with lore's hooks merged in (or, with `remove`, taken out). `lore` is the
/// command that runs lore (`lore`, or a path).
pub fn merge_hooks(agent: Agent, existing: &str, lore: &str, remove: bool) -> Result<String> {
    let mut root = parse_json(existing, "the agent's hooks file")?;
    if agent == Agent::Cursor && !root.contains_key("version") {
        root.insert("version".into(), json!(1));
    }
    if agent == Agent::Gemini && !remove {
        // Gemini CLI runs hooks only when they are switched on (left on by --remove: other
        // hooks may need them).
        object_at(&mut root, "hooksConfig", "Gemini's settings")?
            .insert("enabled".into(), json!(true));
    }
    let hooks = object_at(&mut root, "hooks", "the agent's hooks file")?;
    // Where lore's entry stood in each event's list: a new one takes its place, so re-running
    // setup moves nobody's hook (Codex keys its per-hook trust by position in the list).
    let mut places = std::collections::HashMap::new();
    for (name, list) in hooks.iter_mut() {
        if let Some(list) = list.as_array_mut() {
            if let Some(at) = list
                .iter()
                .position(|entry| holds_lore_command(entry, lore))
            {
                places.insert(name.clone(), at);
            }
            strip_event(list, lore);
        } else {
            return Err(Error::Parse {
                context: "the agent's hooks file".into(),
                message: format!("`hooks.{name}` is not a list"),
            });
        }
    }
    if remove {
        hooks.retain(|_, list| list.as_array().is_some_and(|l| !l.is_empty()));
    }
    if !remove {
        let mut done = Vec::new();
        for (native, event) in agent.events() {
            let entry = hook_entry(agent, native, *event, lore);
            if done.contains(native) {
                continue;
            }
            done.push(*native);
            let list = hooks
                .entry(native.to_string())
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .expect("just checked or created as a list");
            let at = places.get(*native).copied().unwrap_or(list.len());
            list.insert(at.min(list.len()), entry);
        }
        hooks.retain(|_, list| list.as_array().is_some_and(|l| !l.is_empty()));
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    pretty(root, "writing the hooks file")
}

/// Lore's entry for one of the agent's events: the command `<lore> hook <agent> <event>`, in
/// the agent's shape (Cursor's bare command; the others' group with a matcher for tool events
/// and, for Gemini, a name).
fn hook_entry(agent: Agent, native: &str, event: Event, lore: &str) -> Value {
    let agent_arg = match agent {
        Agent::Claude => "claude",
        Agent::Codex => "codex",
        Agent::Gemini => "gemini",
        Agent::Cursor => "cursor",
    };
    let command = format!("{lore} hook {agent_arg} {native}");
    if agent == Agent::Cursor {
        return json!({ "command": command });
    }
    let mut group = Map::new();
    let matcher = match event {
        Event::PostToolUse => agent.tool_matcher(),
        _ => "",
    };
    if !matcher.is_empty() {
        group.insert("matcher".into(), json!(matcher));
    }
    let mut hook = json!({ "type": "command", "command": command });
    if agent == Agent::Gemini {
        hook["name"] = json!(format!("lore-{}", event.as_str()));
    }
    group.insert("hooks".into(), json!([hook]));
    Value::Object(group)
}

/// The object under `key` (created empty when missing); an error when it is something else.
fn object_at<'a>(
    root: &'a mut Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<&'a mut Map<String, Value>> {
    root.entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| Error::Parse {
            context: what.into(),
            message: format!("`{key}` is not an object"),
        })
}

/// A JSON object as its file text: pretty, with a final newline.
fn pretty(root: Map<String, Value>, what: &str) -> Result<String> {
    let mut text =
        serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| Error::Parse {
            context: what.into(),
            message: e.to_string(),
        })?;
    text.push('\n');
    Ok(text)
}

/// A JSON file with `mcpServers.lore` set (or removed).
pub fn merge_mcp_json(existing: &str, lore: &str, remove: bool) -> Result<String> {
    let mut root = parse_json(existing, "the agent's MCP configuration")?;
    let servers = object_at(&mut root, "mcpServers", "the agent's MCP configuration")?;
    if remove {
        servers.remove(MCP_SERVER_NAME);
    } else {
        servers.insert(
            MCP_SERVER_NAME.into(),
            json!({ "command": lore, "args": ["mcp"] }),
        );
    }
    if servers.is_empty() {
        root.remove("mcpServers");
    }
    pretty(root, "writing the MCP configuration")
}

/// Codex's `config.toml` with `[mcp_servers.lore]` and `features.hooks = true` (or the server
/// removed; the feature flag is left, as other hooks may need it). Comments, layout and key
/// order of the rest of the file are kept, the user's trust entries (`[projects.…]`,
/// `[hooks.state.…]`) with them.
pub fn merge_codex_toml(existing: &str, lore: &str, remove: bool) -> Result<String> {
    let mut doc: toml_edit::DocumentMut =
        existing
            .parse()
            .map_err(|e: toml_edit::TomlError| Error::Parse {
                context: "Codex's config.toml".into(),
                message: format!("{e}; fix it, lore will not overwrite it"),
            })?;
    let servers_missing = !doc.contains_key("mcp_servers");
    if remove {
        if let Some(servers) = doc
            .get_mut("mcp_servers")
            .and_then(|s| s.as_table_like_mut())
        {
            servers.remove(MCP_SERVER_NAME);
            if servers.is_empty() {
                doc.remove("mcp_servers");
            }
        }
        return Ok(doc.to_string());
    }
    if servers_missing {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        doc.insert("mcp_servers", toml_edit::Item::Table(t));
    }
    let servers = doc["mcp_servers"]
        .as_table_like_mut()
        .ok_or_else(|| Error::Parse {
            context: "Codex's config.toml".into(),
            message: "`mcp_servers` is not a table".into(),
        })?;
    let mut server = toml_edit::Table::new();
    server.insert("command", toml_edit::value(lore));
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    server.insert("args", toml_edit::value(args));
    servers.insert(MCP_SERVER_NAME, toml_edit::Item::Table(server));
    if !doc.contains_key("features") {
        doc.insert("features", toml_edit::Item::Table(toml_edit::Table::new()));
    }
    let features = doc["features"]
        .as_table_like_mut()
        .ok_or_else(|| Error::Parse {
            context: "Codex's config.toml".into(),
            message: "`features` is not a table".into(),
        })?;
    // `hooks` is the flag's name; `codex_hooks` its deprecated alias, replaced.
    features.remove("codex_hooks");
    if features.get("hooks").and_then(|v| v.as_bool()) != Some(true) {
        features.insert("hooks", toml_edit::value(true));
    }
    Ok(doc.to_string())
}

/// Whether Codex's user configuration (`~/.codex/config.toml`) trusts the project at `root`
/// (`[projects."<root>"] trust_level = "trusted"`): Codex reads a project's `.codex/` (its
/// hooks and settings) only then. A file that does not parse trusts nothing.
pub fn codex_trusts_project(user_config: &str, root: &str) -> bool {
    let Ok(doc) = user_config.parse::<toml_edit::DocumentMut>() else {
        return false;
    };
    doc.get("projects")
        .and_then(|p| p.get(root))
        .and_then(|p| p.get("trust_level"))
        .and_then(|t| t.as_str())
        == Some("trusted")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_hooks_merge_keeps_others_and_is_idempotent() {
        let existing = r#"{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}"#;
        let once = merge_hooks(Agent::Claude, existing, "lore", false).unwrap();
        let twice = merge_hooks(Agent::Claude, &once, "lore", false).unwrap();
        assert_eq!(once, twice);
        // The user's keys keep their order, and lore's hooks come after theirs.
        assert!(once.find("\"model\"") < once.find("\"hooks\""), "{once}");
        assert!(
            once.find("\"Stop\"") < once.find("\"SessionStart\""),
            "{once}"
        );
        let v: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "lore hook claude SessionStart"
        );
        let removed = merge_hooks(Agent::Claude, &once, "lore", true).unwrap();
        let v: Value = serde_json::from_str(&removed).unwrap();
        assert_eq!(v["hooks"].as_object().unwrap().len(), 1);
        assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "say done");
    }

    #[test]
    fn unreadable_files_are_refused() {
        assert!(merge_hooks(Agent::Claude, "{not json", "lore", false).is_err());
        assert!(merge_mcp_json("[1]", "lore", false).is_err());
        assert!(merge_codex_toml("x = = 1", "lore", false).is_err());
    }

    #[test]
    fn codex_toml_keeps_comments() {
        let existing = "# mine\nmodel = \"o4\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let merged = merge_codex_toml(existing, "lore", false).unwrap();
        assert!(merged.starts_with("# mine\nmodel = \"o4\""), "{merged}");
        assert!(merged.contains("[mcp_servers.lore]"), "{merged}");
        assert!(merged.contains("hooks = true"), "{merged}");
        assert!(merged.contains("[mcp_servers.other]"), "{merged}");
        let removed = merge_codex_toml(&merged, "lore", true).unwrap();
        assert!(!removed.contains("mcp_servers.lore"), "{removed}");
        assert!(removed.contains("[mcp_servers.other]"), "{removed}");
    }

    #[test]
    fn codex_toml_turns_the_alias_into_the_flag_and_keeps_trust_entries_in_order() {
        let existing = "model = \"gpt-5.4\"\n\n[features]\nweb_search = true\ncodex_hooks = true\n\n[projects.\"/w/app\"]\ntrust_level = \"trusted\"\n\n[projects.\"/w/other\"]\ntrust_level = \"untrusted\"\n\n[hooks.state.\"/w/app/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:abc\"\n";
        let merged = merge_codex_toml(existing, "lore", false).unwrap();
        assert!(!merged.contains("codex_hooks"), "{merged}");
        assert!(
            merged.contains("[features]\nweb_search = true\nhooks = true\n"),
            "{merged}"
        );
        let trust = "[projects.\"/w/app\"]\ntrust_level = \"trusted\"\n\n[projects.\"/w/other\"]\ntrust_level = \"untrusted\"\n\n[hooks.state.\"/w/app/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:abc\"\n";
        assert!(merged.contains(trust), "{merged}");
        assert_eq!(merge_codex_toml(&merged, "lore", false).unwrap(), merged);
        assert!(codex_trusts_project(existing, "/w/app"));
        assert!(!codex_trusts_project(existing, "/w/other"));
        assert!(!codex_trusts_project("x = = 1", "/w/app"));
    }

    #[test]
    fn rerunning_setup_keeps_every_hook_in_its_place() {
        // A user's hook after lore's: re-running setup (say with another lore path) must not
        // move either, as Codex keys trust by position.
        let first = merge_hooks(Agent::Codex, "", "lore", false).unwrap();
        let mut v: Value = serde_json::from_str(&first).unwrap();
        v["hooks"]["Stop"]
            .as_array_mut()
            .unwrap()
            .push(json!({"hooks":[{"type":"command","command":"say done"}]}));
        let with_user = serde_json::to_string_pretty(&v).unwrap();
        let again = merge_hooks(Agent::Codex, &with_user, "lore", false).unwrap();
        let v: Value = serde_json::from_str(&again).unwrap();
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            "lore hook codex Stop"
        );
        assert_eq!(v["hooks"]["Stop"][1]["hooks"][0]["command"], "say done");
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "apply_patch|Bash");
        let keys: Vec<&String> = v["hooks"].as_object().unwrap().keys().collect();
        let before: Vec<String> = serde_json::from_str::<Value>(&first).unwrap()["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, before.iter().collect::<Vec<_>>());
    }
}
