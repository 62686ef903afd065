//! `lore think replay`: the full state at a thought — the path from the root, its scores and
//! trace — optionally written into a directory.

use std::path::PathBuf;

use clap::Args;
use lore::ops::thoughts as ops;
use lore::thoughts::short;

use super::absolute_path;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The thought (id or prefix).
    pub id: String,
    /// Write the path into this (empty or new) directory.
    #[arg(long)]
    pub into: Option<PathBuf>,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ReplayArgs) -> CmdResult {
    let into = args.into.as_deref().map(absolute_path);
    let out = session.run(
        ui,
        ops::ThinkReplay {
            id: args.id.clone(),
            into,
        },
    )?;
    ui.emit(&out, |s| {
        for node in &out.path {
            s.push_str(&format!(
                "── {} depth {} score {:.2}\n{}\n",
                short(&node.id),
                node.metadata.depth,
                node.scores.combined,
                node.text.trim_end()
            ));
            for event in &node.trace {
                s.push_str(&format!("   trace: {event}\n"));
            }
        }
        for dir in &out.written {
            s.push_str(&format!("Wrote {dir}\n"));
        }
    });
    Ok(())
}
