//! `lore namespace`: list namespaces and register new ones.

use clap::{Args, Subcommand};
use lore::ops::store as ops;

use super::common::Session;
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

pub fn run(ui: &mut Ui, session: &mut Session, args: &NamespaceArgs) -> CmdResult {
    match &args.action {
        None | Some(NamespaceAction::List) => {
            let out = session.run(ui, ops::Namespaces {})?;
            ui.emit(&out, |s| {
                for n in &out.namespaces {
                    let origin = if n.builtin { "built in" } else { "registered" };
                    s.push_str(&format!("{:<16} {origin}\n", n.name));
                }
            });
        }
        Some(NamespaceAction::Add { name, description }) => {
            let out = session.run(
                ui,
                ops::NamespaceAdd {
                    name: name.clone(),
                    description: description.clone(),
                },
            )?;
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
