//! `lore setup AGENT`: merge lore's hooks and MCP server into a coding agent's configuration,
//! in the project (default) or the user's home (`--global`); `--remove` takes them out.

use std::path::{Path, PathBuf};

use clap::Args;
use lore::hooks::Agent;
use lore::setup::{self, ConfigFile};
use serde::Serialize;

use crate::error::{CmdResult, CommandError};
use crate::global::GlobalArgs;
use crate::location;
use crate::ui::Ui;

/// Connect a coding agent to lore: its hooks and lore's MCP server.
///
/// Writes, merging with what is there (other hooks, servers and settings are kept):
///
///   claude  .claude/settings.json (hooks), .mcp.json (server)
///           --global: ~/.claude/settings.json, ~/.claude.json
///   codex   .codex/hooks.json, .codex/config.toml (server, `[features] hooks = true`)
///           --global: under ~/.codex; in a project, Codex runs them once it trusts it
///   gemini  .gemini/settings.json (hooks and server)
///           --global: ~/.gemini/settings.json
///   cursor  .cursor/hooks.json, .cursor/mcp.json
///           --global: under ~/.cursor
///
/// The agent runs lore by the path of this binary unless --command says otherwise (e.g.
/// `--command lore` when lore is on the agent's PATH). Running it again changes nothing;
/// --remove takes out only lore's entries.
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct SetupArgs {
    /// The agent: claude, codex, gemini or cursor.
    // Its own id: `agent` is the global --agent option's.
    #[arg(id = "agent_kind", value_name = "AGENT")]
    pub agent: String,
    /// Configure the agent for every project (the user's home) instead of this repository.
    #[arg(long)]
    pub global: bool,
    /// Take lore out of the configuration.
    #[arg(long)]
    pub remove: bool,
    /// The command that runs lore, as the agent should call it (default: this binary's path).
    #[arg(long, value_name = "PATH")]
    pub command: Option<String>,
}

/// What setup did to one file.
#[derive(Serialize)]
struct Changed {
    path: String,
    /// created, updated, removed from, or unchanged.
    action: &'static str,
    changed: bool,
}

/// What setup did.
#[derive(Serialize)]
struct SetupOutput {
    /// Each configuration file, in the order written.
    files: Vec<Changed>,
    /// Codex in a project: whether the user's Codex configuration trusts the project (Codex
    /// reads the project's `.codex/`, lore's hooks with it, only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    codex_project_trusted: Option<bool>,
}

/// The command agents should run: the one given, else this binary's own path (so an agent
/// finds it whether or not lore is on its PATH).
fn lore_command(given: &Option<String>) -> CmdResult<String> {
    if let Some(c) = given.as_deref().filter(|c| !c.trim().is_empty()) {
        return Ok(c.to_string());
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| {
            CommandError::usage(format!("cannot tell where this lore binary is: {e}"))
                .hint("pass --command PATH")
        })?;
    Ok(exe.display().to_string())
}

fn files(agent: Agent, base: &Path, global: bool) -> Vec<(PathBuf, ConfigFile)> {
    match agent {
        Agent::Claude => vec![
            (base.join(".claude/settings.json"), ConfigFile::Hooks),
            (
                if global {
                    base.join(".claude.json")
                } else {
                    base.join(".mcp.json")
                },
                ConfigFile::McpJson,
            ),
        ],
        Agent::Codex => vec![
            (base.join(".codex/hooks.json"), ConfigFile::Hooks),
            (base.join(".codex/config.toml"), ConfigFile::CodexToml),
        ],
        Agent::Gemini => vec![
            (base.join(".gemini/settings.json"), ConfigFile::Hooks),
            (base.join(".gemini/settings.json"), ConfigFile::McpJson),
        ],
        Agent::Cursor => vec![
            (base.join(".cursor/hooks.json"), ConfigFile::Hooks),
            (base.join(".cursor/mcp.json"), ConfigFile::McpJson),
        ],
    }
}

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: &SetupArgs) -> CmdResult {
    let agent = Agent::parse(&args.agent)?;
    let command = lore_command(&args.command)?;
    let base = if args.global {
        location::home_dir()?
    } else {
        let lore = location::open(global)?;
        lore.store()
            .workdir()
            .map(Path::to_path_buf)
            .ok_or_else(|| CommandError::usage("this store has no work tree; use --global"))?
    };
    let mut changed = Vec::new();
    for (path, kind) in files(agent, &base, args.global) {
        let mut existed = true;
        let existing = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                existed = false;
                String::new()
            }
            Err(e) => {
                return Err(CommandError::usage(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        let merged = match kind {
            ConfigFile::Hooks => setup::merge_hooks(agent, &existing, &command, args.remove),
            ConfigFile::McpJson => setup::merge_mcp_json(&existing, &command, args.remove),
            ConfigFile::CodexToml => setup::merge_codex_toml(&existing, &command, args.remove),
        }
        .map_err(|e| CommandError::from(e).hint(format!("in {}", path.display())))?;
        let is_change = merged != existing && !(existing.is_empty() && args.remove);
        if is_change {
            write_atomically(&path, &merged)?;
        }
        // Two entries of one agent can share a file (gemini): the first write created it.
        let created_now = !existed
            && !changed
                .iter()
                .any(|c: &Changed| c.path == path.display().to_string());
        let action = match (is_change, args.remove, created_now) {
            (false, _, _) => "unchanged",
            (true, true, _) => "removed from",
            (true, false, true) => "created",
            (true, false, false) => "updated",
        };
        changed.push(Changed {
            path: path.display().to_string(),
            action,
            changed: is_change,
        });
    }
    // Codex reads a project's .codex/ only when the user trusts the project.
    let codex_untrusted = agent == Agent::Codex && !args.global && !args.remove && {
        let user_config = location::home_dir()
            .ok()
            .and_then(|home| std::fs::read_to_string(home.join(".codex/config.toml")).ok())
            .unwrap_or_default();
        !setup::codex_trusts_project(&user_config, &base.display().to_string())
    };
    let out = SetupOutput {
        files: changed,
        codex_project_trusted: (agent == Agent::Codex && !args.global && !args.remove)
            .then_some(!codex_untrusted),
    };
    ui.emit(&out, |s| {
        for c in &out.files {
            s.push_str(&format!("{:<12} {}\n", c.action, c.path));
        }
        if !args.remove && agent == Agent::Codex {
            s.push_str("Codex asks you to trust new hooks once (Settings → Hooks, or /hooks).\n");
        }
        if codex_untrusted {
            s.push_str(&format!(
                "Codex reads .codex/ only in a trusted project: trust this one when Codex asks, \
                 or add [projects.\"{}\"] trust_level = \"trusted\" to ~/.codex/config.toml.\n",
                base.display()
            ));
        }
    });
    Ok(())
}

fn write_atomically(path: &Path, text: &str) -> CmdResult {
    let fail =
        |e: std::io::Error| CommandError::usage(format!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let tmp = path.with_extension("lore-tmp");
    std::fs::write(&tmp, text).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}
