//! `lore export`: write memories out as git-notes-memory notes, markdown files or JSONL.

use clap::Args;
use lore::{ListFilter, Lore};
use serde::Serialize;

use super::import::Format;
use super::list::FilterArgs;
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

/// Export memories (all, or those matching the filters).
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The format.
    #[arg(value_enum)]
    pub format: Format,
    /// The directory (markdown) or file (jsonl; default standard output). Not used for notes.
    pub path: Option<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

#[derive(Serialize)]
struct ExportOutput {
    exported: usize,
    target: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skipped: Vec<String>,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, args: &ExportArgs) -> CmdResult {
    let filter = ListFilter {
        sort: lore::SortBy::CreatedAsc,
        ..args.filter.to_filter()?
    };
    let memories = lore.list(&filter)?;
    let out = match args.format {
        Format::Jsonl => {
            match args.path.as_deref() {
                None | Some("-") => {
                    let stdout = std::io::stdout();
                    lore::interop::jsonl::export(&memories, &mut stdout.lock())?;
                    // The data went to stdout; nothing else may.
                    return Ok(());
                }
                Some(p) => {
                    let mut file = std::fs::File::create(p)
                        .map_err(|e| CommandError::usage(format!("cannot write {p}: {e}")))?;
                    lore::interop::jsonl::export(&memories, &mut file)?;
                    ExportOutput {
                        exported: memories.len(),
                        target: p.to_string(),
                        skipped: Vec::new(),
                    }
                }
            }
        }
        Format::Markdown => {
            let dir = args
                .path
                .clone()
                .ok_or_else(|| CommandError::usage("give the directory to export to"))?;
            let n = lore::interop::markdown_dir::export(&memories, std::path::Path::new(&dir))?;
            ExportOutput {
                exported: n,
                target: dir,
                skipped: Vec::new(),
            }
        }
        Format::Notes => {
            let report = lore::interop::notes::export(lore.store(), &memories)?;
            ExportOutput {
                exported: report.exported,
                target: report.refs.join(", "),
                skipped: report.skipped,
            }
        }
    };
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Exported {} memories to {}\n",
            out.exported, out.target
        ));
        for k in &out.skipped {
            s.push_str(&format!("  skipped {k}\n"));
        }
    });
    Ok(())
}
