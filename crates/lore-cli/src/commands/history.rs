//! `lore history`: the versions of one memory, from git.

use clap::Args;
use lore::ops::memory as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Show every version of a memory, newest first.
///
/// Versions come from refs/lore/memory. Works for a forgotten memory too, given its full id.
#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Id, id prefix, `namespace/key` or key.
    pub memory: String,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &HistoryArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::History {
            memory: args.memory.clone(),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!("{}  {}\n", out.memory.id, out.memory.summary));
        for v in &out.versions {
            let mut state = match &v.memory {
                Some(m) => format!("{:<10} {}", m.status, m.summary),
                None => "(deleted)".to_string(),
            };
            if v.id != out.memory.id.as_str() {
                state.push_str(&format!("  (of {})", v.id));
            }
            // A merge that made a version of its own says what it brought.
            let action = match &v.merge {
                Some(m) if m.fields.is_empty() => "merge brought its times".to_string(),
                Some(m) => format!("merge brought {}", m.fields.join(", ")),
                None => v.subject.split(':').next().unwrap_or("").to_string(),
            };
            s.push_str(&format!(
                "  {}  {}  {}  {}\n",
                common::short(&v.commit),
                common::short_time(v.time),
                action,
                state
            ));
        }
    });
    Ok(())
}
