//! `lore review`: the capture suggestions waiting for a person — list, accept (optionally
//! edited) or reject them.

use clap::{Args, Subcommand};
use lore::ops::review as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Review what capture suggested (signals between 0.70 and 0.95 confidence).
///
/// Without a subcommand, lists the queue. `accept ID` writes a suggestion as a memory (with
/// --namespace, --summary or --body to edit it first); `edit ID` changes it and leaves it
/// queued; `reject ID` drops it. IDs may be shortened to a unique prefix.
#[derive(Args, Debug)]
pub struct ReviewArgs {
    #[command(subcommand)]
    pub action: Option<ReviewAction>,
}

#[derive(Subcommand, Debug)]
pub enum ReviewAction {
    /// List the queued suggestions (the default).
    List,
    /// Write a suggestion as a memory, edited if asked.
    Accept {
        /// The suggestion's id (or a unique prefix).
        id: String,
        #[command(flatten)]
        changes: Changes,
    },
    /// Change a suggestion and leave it in the queue.
    Edit {
        /// The suggestion's id (or a unique prefix).
        id: String,
        #[command(flatten)]
        changes: Changes,
    },
    /// Drop a suggestion.
    Reject {
        /// The suggestion's id (or a unique prefix).
        id: String,
    },
}

/// Changes to a suggestion's text or namespace.
#[derive(Args, Debug)]
pub struct Changes {
    /// Another namespace.
    #[arg(long, short)]
    namespace: Option<String>,
    /// Another summary.
    #[arg(long, short)]
    summary: Option<String>,
    /// Another body.
    #[arg(long, short)]
    body: Option<String>,
}

impl Changes {
    fn request(&self, id: &str) -> ops::ReviewChange {
        ops::ReviewChange {
            id: id.to_string(),
            namespace: self.namespace.clone(),
            summary: self.summary.clone(),
            body: self.body.clone(),
        }
    }
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ReviewArgs) -> CmdResult {
    match args.action.as_ref().unwrap_or(&ReviewAction::List) {
        ReviewAction::List => {
            let out = session.run(ui, ops::ReviewList {})?;
            ui.emit(&out, |s| {
                if out.suggestions.is_empty() {
                    s.push_str("Nothing to review.\n");
                }
                for p in &out.suggestions {
                    s.push_str(&format!(
                        "{}  {:<13} {:.2}  {}\n",
                        p.id, p.signal.namespace, p.signal.confidence, p.signal.summary
                    ));
                }
            });
        }
        ReviewAction::Accept { id, changes } => {
            let written = session.run(
                ui,
                ops::ReviewAccept {
                    change: changes.request(id),
                },
            )?;
            common::report_secrets(ui, written.secrets.as_ref());
            ui.emit(&written, |s| {
                s.push_str(&format!(
                    "Accepted: remembered {} in {}\n",
                    written.memory.id, written.memory.namespace
                ));
            });
        }
        ReviewAction::Edit { id, changes } => {
            let edited = session.run(
                ui,
                ops::ReviewEdit {
                    change: changes.request(id),
                },
            )?;
            ui.emit(&edited, |s| {
                s.push_str(&format!(
                    "Edited {}: {} ({})\n",
                    edited.id, edited.signal.summary, edited.signal.namespace
                ));
            });
        }
        ReviewAction::Reject { id } => {
            let dropped = session.run(ui, ops::ReviewReject { id: id.clone() })?;
            ui.emit(&dropped, |s| {
                s.push_str(&format!(
                    "Rejected {}: {}\n",
                    dropped.id, dropped.signal.summary
                ));
            });
        }
    }
    Ok(())
}
