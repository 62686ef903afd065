//! `lore namespace`: list namespaces and register new ones.

use clap::{Args, Subcommand};
use lore::{Lore, WriteContext};
use serde::Serialize;

use crate::error::CmdResult;
use crate::ui::Ui;

/// List namespaces, or register one of your own.
#[derive(Args, Debug)]
pub struct NamespaceArgs {
    #[command(subcommand)]
    pub action: Option<NamespaceAction>,
}

#[derive(Subcommand, Debug)]
pub enum NamespaceAction {
    /// List built-in and registered namespaces.
    List,
    /// Register a namespace (lower-case letters, digits, '-' and '_').
    Add {
        /// The name.
        name: String,
        /// What belongs in it.
        #[arg(long, short = 'd', default_value = "")]
        description: String,
    },
}

#[derive(Serialize)]
struct NamespaceEntry {
    name: String,
    builtin: bool,
}

#[derive(Serialize)]
struct AddOutput {
    name: String,
    added: bool,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, ctx: &WriteContext, args: &NamespaceArgs) -> CmdResult {
    match &args.action {
        None | Some(NamespaceAction::List) => {
            let list: Vec<NamespaceEntry> = lore
                .namespaces()?
                .into_iter()
                .map(|(name, builtin)| NamespaceEntry { name, builtin })
                .collect();
            ui.emit(&list, |s| {
                for n in &list {
                    let origin = if n.builtin { "built in" } else { "registered" };
                    s.push_str(&format!("{:<16} {origin}\n", n.name));
                }
            });
        }
        Some(NamespaceAction::Add { name, description }) => {
            let added = lore.add_namespace(name, description, ctx)?;
            let out = AddOutput {
                name: name.clone(),
                added,
            };
            ui.emit(&out, |s| {
                if out.added {
                    s.push_str(&format!("Registered namespace {}\n", out.name));
                } else {
                    s.push_str(&format!("Namespace {} already exists\n", out.name));
                }
            });
        }
    }
    Ok(())
}
