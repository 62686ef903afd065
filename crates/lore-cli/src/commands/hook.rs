//! `lore hook AGENT EVENT`: a coding agent's hook. Reads the event payload on stdin, answers on
//! stdout in the agent's format, and never fails the agent's session: problems go to stderr and
//! the exit code is 0.

use std::io::Read;

use clap::Args;
use lore::hooks::{self, Agent, Event, HookInput, HookOptions};

use crate::commands::common;
use crate::global::GlobalArgs;
use crate::location;

/// Handle a coding agent's hook event (configured by `lore setup`).
///
/// AGENT is claude, codex, gemini or cursor; EVENT is the agent's own event name (SessionStart,
/// UserPromptSubmit, PostToolUse, PreCompact, Stop, SessionEnd; Gemini's BeforeAgent, AfterTool,
/// PreCompress, AfterAgent; Cursor's sessionStart, beforeSubmitPrompt, afterFileEdit, …). An
/// event lore does not handle produces no output. Always exits 0.
#[derive(Args, Debug)]
pub struct HookArgs {
    /// The agent: claude, codex, gemini or cursor.
    // Its own id: `agent` is the global --agent option's.
    #[arg(id = "agent_kind", value_name = "AGENT")]
    pub agent: String,
    /// The event, as the agent names it.
    pub event: String,
}

pub fn run(global: &GlobalArgs, args: &HookArgs) {
    if let Err(message) = handle(global, args) {
        eprintln!("lore hook: {message}");
    }
}

fn handle(global: &GlobalArgs, args: &HookArgs) -> Result<(), String> {
    let agent = Agent::parse(&args.agent).map_err(|e| e.to_string())?;
    let Some(event) = Event::parse(agent, &args.event) else {
        return Ok(());
    };
    let mut payload = String::new();
    std::io::stdin()
        .read_to_string(&mut payload)
        .map_err(|e| format!("cannot read the event from stdin: {e}"))?;
    let input = HookInput::parse(&payload).map_err(|e| e.to_string())?;
    let mut lore =
        location::open_from(global, input.cwd.as_deref()).map_err(|e| e.message.clone())?;
    let ctx = common::write_context(global);
    let outcome = hooks::handle(
        &mut lore,
        agent,
        event,
        &input,
        &HookOptions::default(),
        &ctx,
    )
    .map_err(|e| e.to_string())?;
    if let Some(capture) = &outcome.capture {
        for report in capture.secrets() {
            eprintln!("lore hook: secret scanner: {}", report.describe());
        }
    }
    if let Some(answer) = hooks::respond(agent, event, &outcome) {
        println!("{answer}");
    }
    Ok(())
}
