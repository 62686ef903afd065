//! `lore import`: bring memories in from git-notes-memory notes, markdown files or JSONL.

use clap::Args;
use lore::ops::transfer as ops;

use super::common::{self, Session};
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

/// Import memories from notes, markdown files or JSONL.
///
/// One commit. Re-importing the same data changes nothing; a memory whose id exists with other
/// content is reported and skipped unless --replace.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The format.
    #[arg(value_enum)]
    pub format: common::TransferFormat,
    /// The directory (markdown) or file (jsonl; `-` for standard input). Not used for notes.
    pub path: Option<String>,
    /// Overwrite memories whose id exists with other content.
    #[arg(long)]
    pub replace: bool,
    /// Check and report without writing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ImportArgs) -> CmdResult {
    let (path, data) = match args.path.as_deref() {
        Some("-") => (None, Some(common::read_bulk("-")?)),
        other => (other.map(String::from), None),
    };
    if path.is_none() && data.is_none() && args.format != common::TransferFormat::Notes {
        return Err(CommandError::usage("give the path to import from"));
    }
    let out = session.run(
        ui,
        ops::Import {
            format: args.format.name().to_string(),
            path,
            data,
            replace: args.replace,
            dry_run: args.dry_run,
            batch: None,
        },
    )?;
    if !ui.json() {
        for (id, secrets) in &out.report.secrets {
            ui.warn(&format!(
                "memory {id}: secret scanner: {}",
                secrets.describe()
            ));
        }
        for w in &out.warnings {
            ui.warn(w);
        }
    }
    ui.emit(&out, |s| {
        let r = &out.report;
        if out.dry_run {
            s.push_str(&format!(
                "Read {} (dry run: nothing written)\n",
                common::count(out.read, "memory", "memories")
            ));
        } else {
            s.push_str(&format!(
                "Read {}: {} written, {} replaced, {} unchanged, {} skipped\n",
                out.read,
                r.written,
                r.replaced,
                r.unchanged,
                r.conflicts.len()
            ));
        }
        for c in &r.conflicts {
            s.push_str(&format!("  skipped {c}\n"));
        }
    });
    Ok(())
}
