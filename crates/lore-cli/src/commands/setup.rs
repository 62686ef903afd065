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
/// The agent runs `lore` (found on its PATH, so a committed configuration works on every
/// teammate's machine) when lore is on PATH; otherwise this binary's absolute path, and setup
/// says so. --command sets the command. Running it again changes nothing; --remove takes out
/// only lore's entries, and a file left empty by that.
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
    /// The command that runs lore, as the agent should call it (default: `lore` when lore is on
    /// PATH, else this binary's absolute path, which setup then says).
    #[arg(long, value_name = "COMMAND")]
    pub command: Option<String>,
}

/// What setup did to one file.
#[derive(Serialize)]
struct Changed {
    path: String,
    /// created, updated, removed from, removed (left empty), or unchanged.
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
    /// The command the agent runs lore by.
    command: String,
    /// When the command is an absolute path: why, and what it means for a committed setup.
    #[serde(skip_serializing_if = "Option::is_none")]
    command_note: Option<String>,
    /// The scopes the hooks and the MCP server read here (`None` for a user-wide setup: each
    /// project's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    scopes: Option<Vec<String>>,
}

/// The command agents should run, and a note when it is not the plain `lore` a teammate's
/// machine also runs: the one given; else `lore` when a `lore` is on PATH (so a committed
/// configuration works on every machine that has lore installed anywhere on its PATH); else this
/// binary's absolute path, which only works where lore sits at the same place.
fn lore_command(given: &Option<String>) -> CmdResult<(String, Option<String>)> {
    if let Some(c) = given.as_deref().filter(|c| !c.trim().is_empty()) {
        return Ok((c.to_string(), None));
    }
    if on_path("lore") {
        return Ok(("lore".to_string(), None));
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| {
            CommandError::usage(format!("cannot tell where this lore binary is: {e}"))
                .hint("pass --command PATH")
        })?;
    let note = format!(
        "lore is not on PATH, so the agent runs it by this absolute path ({}): a committed \
         configuration works only where lore is at that same place; put lore on PATH and run \
         setup again (or pass --command lore)",
        exe.display()
    );
    Ok((exe.display().to_string(), Some(note)))
}

/// Whether an executable file `name` is in a directory of `PATH`.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
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
    let (command, command_note) = lore_command(&args.command)?;
    let mut scopes = None;
    let base = if args.global {
        location::home_dir()?
    } else {
        let lore = location::open(global)?;
        scopes = lore
            .scopes_read(None)
            .ok()
            .map(|s| s.iter().map(lore::context::scope_name).collect());
        lore.store()
            .workdir()
            .map(Path::to_path_buf)
            .ok_or_else(|| CommandError::usage("this store has no work tree; use --global"))?
    };
    let mut changed = Vec::new();
    for (path, original, merged) in merged_files(agent, &base, args, &command)? {
        let action = apply(&path, original.as_deref(), &merged, args.remove)?;
        changed.push(Changed {
            path: path.display().to_string(),
            action,
            changed: action != "unchanged",
        });
    }
    // Codex reads a project's .codex/ only when the user trusts the project.
    let codex_untrusted =
        agent == Agent::Codex && !args.global && !args.remove && !codex_trusts(&base);
    let out = SetupOutput {
        files: changed,
        codex_project_trusted: (agent == Agent::Codex && !args.global && !args.remove)
            .then_some(!codex_untrusted),
        command: command.clone(),
        command_note: command_note.filter(|_| !args.remove),
        scopes: scopes.filter(|_| !args.remove),
    };
    ui.emit(&out, |s| {
        for c in &out.files {
            s.push_str(&format!("{:<12} {}\n", c.action, c.path));
        }
        if let Some(note) = &out.command_note {
            s.push_str(&format!("Note: {note}\n"));
        }
        if let Some(scopes) = &out.scopes {
            s.push_str(&format!(
                "Hooks and the MCP server read these scopes here: {} (see `lore scope list`).\n",
                scopes.join(", ")
            ));
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

/// Every file the agent's setup touches, each read once and given every entry of the agent
/// (two can share a file), in order: its path, its text before (none when absent) and after.
fn merged_files(
    agent: Agent,
    base: &Path,
    args: &SetupArgs,
    command: &str,
) -> CmdResult<Vec<(PathBuf, Option<String>, String)>> {
    let mut out: Vec<(PathBuf, Option<String>, String)> = Vec::new();
    for (path, kind) in files(agent, base, args.global) {
        let at = match out.iter().position(|(p, _, _)| *p == path) {
            Some(at) => at,
            None => {
                let original = match std::fs::read_to_string(&path) {
                    Ok(t) => Some(t),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => {
                        return Err(CommandError::usage(format!(
                            "cannot read {}: {e}",
                            path.display()
                        )));
                    }
                };
                let current = original.clone().unwrap_or_default();
                out.push((path.clone(), original, current));
                out.len() - 1
            }
        };
        let current = &out[at].2;
        let merged = match kind {
            ConfigFile::Hooks => setup::merge_hooks(agent, current, command, args.remove),
            ConfigFile::McpJson => setup::merge_mcp_json(current, command, args.remove),
            ConfigFile::CodexToml => setup::merge_codex_toml(current, command, args.remove),
        }
        .map_err(|e| CommandError::from(e).hint(format!("in {}", path.display())))?;
        out[at].2 = merged;
    }
    Ok(out)
}

/// Writes (or removes) one file and says what happened to it.
fn apply(
    path: &Path,
    original: Option<&str>,
    merged: &str,
    remove: bool,
) -> CmdResult<&'static str> {
    Ok(match original {
        // Removing from a file lore's entries leave empty removes the file.
        Some(_) if remove && setup::is_empty_config(merged) => {
            std::fs::remove_file(path).map_err(|e| {
                CommandError::usage(format!("cannot remove {}: {e}", path.display()))
            })?;
            if let Some(dir) = path.parent() {
                // Only an empty directory goes (remove_dir refuses any other).
                let _ = std::fs::remove_dir(dir);
            }
            "removed"
        }
        Some(text) if text == merged => "unchanged",
        None if remove => "unchanged",
        Some(_) => {
            write_atomically(path, merged)?;
            if remove { "removed from" } else { "updated" }
        }
        None => {
            write_atomically(path, merged)?;
            "created"
        }
    })
}

/// Whether the user's Codex configuration trusts the project at `base` (Codex keys trust by
/// the project's canonical path).
fn codex_trusts(base: &Path) -> bool {
    let user_config = location::home_dir()
        .ok()
        .and_then(|home| std::fs::read_to_string(home.join(".codex/config.toml")).ok())
        .unwrap_or_default();
    let root = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
    let root = root.display().to_string();
    setup::codex_trusts_project(&user_config, root.trim_end_matches('/'))
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
