//! `lore export`: write memories out as git-notes-memory notes, markdown files or JSONL.

use clap::Args;
use lore::ops::transfer as ops;

use super::common::{self, Session};
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

/// Export memories (all, or those matching the filters).
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The format.
    #[arg(value_enum)]
    pub format: common::TransferFormat,
    /// The directory (markdown) or file (jsonl; default standard output). Not used for notes.
    pub path: Option<String>,
    #[command(flatten)]
    pub filter: common::FilterArgs,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ExportArgs) -> CmdResult {
    let path = args.path.clone().filter(|p| p != "-");
    if path.is_none() && args.format == common::TransferFormat::Markdown {
        return Err(CommandError::usage("give the directory to export to"));
    }
    let out = session.run(
        ui,
        ops::Export {
            format: args.format.name().to_string(),
            path,
            filter: args.filter.filter(),
        },
    )?;
    if let (Some(data), false) = (&out.data, ui.json()) {
        // The data goes to stdout, and nothing else may.
        ui.raw(data);
        return Ok(());
    }
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Exported {} to {}\n",
            common::count(out.exported, "memory", "memories"),
            out.target.as_deref().unwrap_or("standard output")
        ));
        for k in &out.skipped {
            s.push_str(&format!("  skipped {k}\n"));
        }
    });
    Ok(())
}
