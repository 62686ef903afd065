//! `lore hook AGENT EVENT`: a coding agent's hook. Reads the event payload on stdin, answers on
//! stdout in the agent's format, and never fails the agent's session: problems go to stderr and
//! the exit code is 0. The work runs within a time budget (`git config lore.hookTimeoutMs`);
//! past it, or should the work panic, the hook answers nothing and lets the agent go on.

use std::io::Read;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use jiff::Timestamp;

use clap::Args;
use lore::hooks::spool::{self, SpooledEvent};
use lore::hooks::{self, Agent, Event, HookInput, HookOptions};

use crate::commands::common;
use crate::global::GlobalArgs;
use crate::location;

/// Handle a coding agent's hook event (configured by `lore setup`).
///
/// AGENT is claude, codex, gemini or cursor; EVENT is the agent's own event name (SessionStart,
/// UserPromptSubmit, PostToolUse, PreCompact, Stop, SessionEnd; Gemini's BeforeAgent, AfterTool,
/// PreCompress, AfterAgent; Cursor's sessionStart, beforeSubmitPrompt, afterFileEdit, …). An
/// event lore does not handle produces no output. Always exits 0, within the time budget
/// (`git config lore.hookTimeoutMs`, default 10000).
#[derive(Args, Debug, Clone)]
pub struct HookArgs {
    /// The agent: claude, codex, gemini or cursor.
    // Its own id: `agent` is the global --agent option's.
    #[arg(id = "agent_kind", value_name = "AGENT")]
    pub agent: String,
    /// The event, as the agent names it.
    pub event: String,
}

/// What the hook's worker reports to the waiting front end.
enum Report {
    /// The store is open and says how long the hook may take.
    Budget(Duration),
    /// The event as read (agent, event, payload, directory), before the store is open: spooled
    /// should the budget run out before it is handled.
    Read(Box<ReadEvent>),
    /// The repository's common git directory, and the events earlier hooks spooled that the
    /// work took: spooled again should the budget run out before they are handled.
    InHand(PathBuf, Vec<SpooledEvent>),
    /// The first `n` earlier events are handled.
    Handled(usize),
    /// This event is handled: its answer for stdout, if any (given even should the budget run
    /// out while spooled events are handled after it).
    HandledThis(Option<String>),
    /// The work is done: the answer for stdout, if any, or what went wrong; and whether it
    /// panicked (then what it had in hand is spooled).
    Done(Result<Option<String>, String>, bool),
}

/// An event as the hook read it, kept raw (it is redacted only if it must be spooled).
struct ReadEvent {
    agent: String,
    event: String,
    payload: String,
    cwd: Option<PathBuf>,
}

/// The largest event payload read (a tool's whole output can be large; an agent never sends
/// this much in one event).
const MAX_PAYLOAD_BYTES: u64 = 64 << 20;

pub fn run(global: &GlobalArgs, args: &HookArgs) {
    let agent = Agent::parse(&args.agent).ok();
    let (global, args) = (global.clone(), args.clone());
    let answer = within_budget(hooks::DEFAULT_TIME_BUDGET, move |report| {
        handle(&global, &args, report)
    });
    match answer {
        Ok(Some(answer)) => println!("{answer}"),
        Ok(None) => {}
        // Gemini CLI shows a hook's stderr as a message whenever its stdout is empty: what lore
        // has to say goes in its answer instead, and stderr stays quiet.
        Err(message) if agent == Some(Agent::Gemini) => println!(
            "{}",
            serde_json::json!({
                "systemMessage": format!("lore hook: {}", lore::secrets::scrubbed_message(&message))
            })
        ),
        Err(message) => eprintln!("lore hook: {}", lore::secrets::scrubbed_message(&message)),
    }
}

/// Runs `work` on its own thread and waits for its answer at most the budget (the default until
/// the work reports the configured one). A panic or an overrun is an error message, never an
/// answer: the agent gets nothing on stdout and goes on.
fn within_budget<F>(default: Duration, work: F) -> Result<Option<String>, String>
where
    F: FnOnce(&dyn Fn(Report)) -> Result<Option<String>, String> + Send + 'static,
{
    let started = Instant::now();
    let (send, receive) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("lore-hook".into())
        .spawn(move || {
            let report = |r: Report| {
                let _ = send.send(r);
            };
            let (done, panicked) =
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&report))) {
                    Ok(done) => (done, false),
                    Err(panic) => (Err(format!("internal error: {}", panic_text(&panic))), true),
                };
            report(Report::Done(done, panicked));
        });
    if let Err(e) = spawned {
        return Err(format!("cannot start the hook's work: {e}"));
    }
    let mut budget = default;
    let mut in_hand: Option<(PathBuf, Vec<SpooledEvent>)> = None;
    let mut this: Option<Box<ReadEvent>> = None;
    let mut answer: Option<Option<String>> = None;
    loop {
        let left = budget.saturating_sub(started.elapsed());
        match receive.recv_timeout(left) {
            Ok(Report::Budget(configured)) => budget = configured,
            Ok(Report::Read(event)) => this = Some(event),
            Ok(Report::InHand(dir, events)) => in_hand = Some((dir, events)),
            Ok(Report::Handled(n)) => {
                if let Some((_, events)) = in_hand.as_mut() {
                    events.drain(..n.min(events.len()));
                }
            }
            Ok(Report::HandledThis(given)) => {
                this = None;
                answer = Some(given);
            }
            Ok(Report::Done(done, false)) => return done,
            Ok(Report::Done(done, true)) => {
                let kept = spool_what_is_left(in_hand, this);
                return done.map_err(|e| format!("{e}{kept}"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => break,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("internal error: the hook's work ended without an answer".into());
            }
        }
        if started.elapsed() >= budget {
            break;
        }
    }
    let kept = spool_what_is_left(in_hand, this);
    match answer {
        // This event was answered; only spooled ones were left, and are spooled again.
        Some(given) => Ok(given),
        None => Err(format!(
            "gave up after {} ms (the time budget, git config {}); nothing was given to the \
             agent{kept}",
            budget.as_millis(),
            hooks::TIME_BUDGET_CONFIG,
        )),
    }
}

/// Keeps what the work had not handled for the next hook, rather than dropping it with this
/// process; says what became of it.
fn spool_what_is_left(
    in_hand: Option<(PathBuf, Vec<SpooledEvent>)>,
    this: Option<Box<ReadEvent>>,
) -> String {
    let this = this.and_then(|read| {
        let spooled =
            SpooledEvent::new(&read.agent, &read.event, &read.payload, Timestamp::now()).ok()?;
        Some((read.cwd, spooled))
    });
    let (dir, mut events) = match in_hand {
        Some((dir, events)) => (Some(dir), events),
        None => (None, Vec::new()),
    };
    // Where the store was still opening, the event's directory says where its repository is.
    let dir = dir.or_else(|| {
        let (cwd, _) = this.as_ref()?;
        let cwd = cwd.clone().or_else(|| std::env::current_dir().ok())?;
        Some(lore::Store::discover(&cwd).ok()?.common_dir())
    });
    events.extend(this.map(|(_, event)| event));
    match dir {
        Some(dir) if !events.is_empty() => match spool::save(&dir, &events) {
            Ok(()) => format!("; {} event(s) spooled for the next hook", events.len()),
            Err(e) => format!("; spooling the event failed: {e}"),
        },
        _ => String::new(),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

fn handle(
    global: &GlobalArgs,
    args: &HookArgs,
    report: &dyn Fn(Report),
) -> Result<Option<String>, String> {
    let agent = Agent::parse(&args.agent).map_err(|e| e.to_string())?;
    let Some(event) = Event::parse(agent, &args.event) else {
        return Ok(None);
    };
    let mut payload = String::new();
    std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_string(&mut payload)
        .map_err(|e| format!("cannot read the event from stdin: {e}"))?;
    if payload.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(format!(
            "the event is over {MAX_PAYLOAD_BYTES} bytes; it was not read further"
        ));
    }
    let input = HookInput::parse(&payload).map_err(|e| e.to_string())?;
    // A session start only answers the agent now: nothing to keep for later.
    if event != Event::SessionStart {
        report(Report::Read(Box::new(ReadEvent {
            agent: args.agent.clone(),
            event: args.event.clone(),
            payload: payload.clone(),
            cwd: input.cwd.clone(),
        })));
    }
    let mut lore =
        location::open_from(global, input.cwd.as_deref()).map_err(|e| e.message.clone())?;
    // An agent waits on the hook: upkeep a read finds due runs apart.
    lore.defer_upkeep();
    report(Report::Budget(hooks::time_budget(lore.store())));
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
    // Gemini's answer already says how many were redacted (see `run` on its stderr).
    if let Some(capture) = outcome.capture.as_ref().filter(|_| agent != Agent::Gemini) {
        for report in capture.secrets() {
            eprintln!("lore hook: secret scanner: {}", report.describe());
        }
    }
    let answer = hooks::respond(agent, event, &outcome);
    report(Report::HandledThis(answer.clone()));
    replay_spooled(&mut lore, &ctx, report);
    crate::upkeep_start::start_if_wanted(&mut lore, global);
    Ok(answer)
}

/// Handles, after this hook's own event, what earlier hooks spooled: each taken with one more
/// attempt counted (spooled again should this hook's budget run out), dropped with a warning
/// once [`spool::MAX_ATTEMPTS`] hooks could not finish it.
fn replay_spooled(lore: &mut lore::Lore, ctx: &lore::WriteContext, report: &dyn Fn(Report)) {
    let dir = lore.store().common_dir();
    let say = |what: String| eprintln!("lore hook: {}", lore::secrets::scrubbed_message(&what));
    let mut earlier = spool::take(&dir).unwrap_or_else(|e| {
        say(format!("the spool could not be read: {e}"));
        Vec::new()
    });
    earlier.retain(|spooled| {
        let keep = spooled.attempts < spool::MAX_ATTEMPTS;
        if !keep {
            say(format!(
                "a spooled {} event of {} was dropped: {} hooks could not finish it",
                spooled.event, spooled.spooled, spooled.attempts
            ));
        }
        keep
    });
    for spooled in earlier.iter_mut() {
        spooled.attempts += 1;
    }
    report(Report::InHand(dir, earlier.clone()));
    for (handled, spooled) in earlier.iter().enumerate() {
        if let Err(e) = handle_spooled(lore, spooled, ctx) {
            say(format!("a spooled {} event: {e}", spooled.event));
        }
        report(Report::Handled(handled + 1));
    }
}

/// Handles an event an earlier hook spooled (its answer has no one to go to).
fn handle_spooled(
    lore: &mut lore::Lore,
    spooled: &SpooledEvent,
    ctx: &lore::WriteContext,
) -> Result<(), String> {
    let agent = Agent::parse(&spooled.agent).map_err(|e| e.to_string())?;
    let Some(event) = Event::parse(agent, &spooled.event) else {
        return Ok(());
    };
    let input = HookInput::parse(&spooled.payload).map_err(|e| e.to_string())?;
    // No sync here: its network time would come out of the live hook's budget.
    let options = HookOptions {
        auto_sync: false,
        ..HookOptions::default()
    };
    hooks::handle(lore, agent, event, &input, &options, ctx)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_the_work_gives_no_answer_and_says_why() {
        let answer = within_budget(Duration::from_secs(5), |_| -> Result<_, String> {
            panic!("slice index out of range")
        });
        let message = answer.unwrap_err();
        assert!(
            message.contains("internal error: slice index out of range"),
            "{message}"
        );
    }

    #[test]
    fn work_past_the_budget_gives_no_answer() {
        let answer = within_budget(Duration::from_secs(5), |report| {
            report(Report::Budget(Duration::from_millis(20)));
            std::thread::sleep(Duration::from_secs(2));
            Ok(Some("too late".into()))
        });
        assert!(answer.unwrap_err().contains("gave up after 20 ms"));
        let answer = within_budget(Duration::from_secs(5), |_| Ok(Some("in time".into())));
        assert_eq!(answer.unwrap().as_deref(), Some("in time"));
    }
}
