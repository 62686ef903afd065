//! `lore scope`: the scopes read here, and team stores (add, list, remove).

use clap::{Args, Subcommand};
use lore::ops::scope as ops;

use super::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

/// Scopes: which stores recall and context read here, and team stores shared across
/// repositories (kept under lore's data directory, synced by `lore sync`).
#[derive(Args, Debug)]
pub struct ScopeArgs {
    #[command(subcommand)]
    pub action: Option<ScopeAction>,
}

#[derive(Subcommand, Debug)]
pub enum ScopeAction {
    /// List the scopes read here, the team stores on this machine and the registered projects.
    List,
    /// Make a team store from a git remote and read it in every project (or, with --project,
    /// in the repositories whose committed .lore names it).
    Add {
        /// The team store's name (lower-case letters, digits, '-' and '_').
        name: String,
        /// Its git remote: a URL or a path (default: the URL this project's .lore gives).
        url: Option<String>,
        /// Name it in this repository's .lore (commit the file) instead of your own
        /// configuration.
        #[arg(long)]
        project: bool,
        /// Time limit of each network call, in seconds.
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
    },
    /// Remove a team store from this machine (what was synced stays on its remote).
    Remove {
        /// The team store's name.
        name: String,
    },
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ScopeArgs) -> CmdResult {
    match &args.action {
        None | Some(ScopeAction::List) => list(ui, session),
        Some(ScopeAction::Add {
            name,
            url,
            project,
            timeout,
        }) => {
            let out = session.run(
                ui,
                ops::ScopeAdd {
                    name: name.clone(),
                    url: url.clone(),
                    project: *project,
                    timeout_secs: *timeout,
                },
            )?;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "Added team store {} ({} memories) at {}, named in {}\n",
                    out.store.name,
                    out.stored,
                    out.store.path.display(),
                    out.named_in.display()
                ));
            });
            Ok(())
        }
        Some(ScopeAction::Remove { name }) => {
            let out = session.run(ui, ops::ScopeRemove { name: name.clone() })?;
            ui.emit(&out, |s| {
                s.push_str(&format!(
                    "Removed team store {} ({})\n",
                    out.name,
                    out.path.display()
                ));
                if out.named_by_project {
                    s.push_str(
                        "  this repository's .lore still names it: edit and commit the file\n",
                    );
                }
            });
            Ok(())
        }
    }
}

fn list(ui: &mut Ui, session: &mut Session) -> CmdResult {
    let out = session.run(ui, ops::ScopeList {})?;
    let safe = lore::agent_text::neutralize_controls;
    ui.emit(&out, |s| {
        s.push_str(&format!("this store: {}\n", out.this));
        s.push_str(&format!("read here: {}\n", out.read.join(", ")));
        if let Some(p) = &out.personal {
            s.push_str(&format!("personal store: {}\n", p.display()));
        }
        if out.teams.is_empty() {
            s.push_str("team stores: none\n");
        }
        for t in &out.teams {
            let named = match (t.named_by_project, t.named_by_user) {
                (true, true) => "named by this project and by you",
                (true, false) => "named by this project",
                (false, true) => "named by you",
                (false, false) => "named nowhere: read only with --scope",
            };
            s.push_str(&format!(
                "team {}  {}  ({named})\n",
                t.store.name,
                safe(t.store.url.as_deref().unwrap_or("no remote"))
            ));
        }
        for name in &out.missing_teams {
            s.push_str(&format!(
                "team {name}  not added here (lore scope add {name} URL)\n"
            ));
        }
        for p in &out.projects {
            s.push_str(&format!("project {}\n", p.display()));
        }
    });
    Ok(())
}
