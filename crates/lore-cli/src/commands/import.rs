//! `lore import`: bring memories in from git-notes-memory notes, markdown files or JSONL.

use std::io::BufReader;

use clap::{Args, ValueEnum};
use jiff::Timestamp;
use lore::{BatchReport, Lore, WriteContext};
use serde::Serialize;

use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// git-notes-memory's refs/notes/mem/<namespace> in this repository.
    Notes,
    /// A directory of markdown files with YAML front matter.
    Markdown,
    /// JSON lines (a file, or `-` for standard input).
    Jsonl,
}

/// Import memories from notes, markdown files or JSONL.
///
/// One commit. Re-importing the same data changes nothing; a memory whose id exists with other
/// content is reported and skipped unless --replace.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The format.
    #[arg(value_enum)]
    pub format: Format,
    /// The directory (markdown) or file (jsonl; `-` for standard input). Not used for notes.
    pub path: Option<String>,
    /// Overwrite memories whose id exists with other content.
    #[arg(long)]
    pub replace: bool,
    /// Check and report without writing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Serialize)]
struct ImportOutput {
    read: usize,
    #[serde(flatten)]
    report: BatchReport,
    warnings: Vec<String>,
    dry_run: bool,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, ctx: &WriteContext, args: &ImportArgs) -> CmdResult {
    let now = lore::model::to_millis(Timestamp::now());
    let path = || {
        args.path
            .clone()
            .ok_or_else(|| CommandError::usage("give the path to import from"))
    };
    let converted = match args.format {
        Format::Notes => lore::interop::notes::import(lore.store(), now)?,
        Format::Markdown => {
            lore::interop::markdown_dir::import(std::path::Path::new(&path()?), now)?
        }
        Format::Jsonl => {
            let p = path()?;
            if p == "-" {
                let stdin = std::io::stdin();
                lore::interop::jsonl::import(&mut stdin.lock(), "stdin", now)?
            } else {
                let file = std::fs::File::open(&p)
                    .map_err(|e| CommandError::usage(format!("cannot read {p}: {e}")))?;
                lore::interop::jsonl::import(&mut BufReader::new(file), &p, now)?
            }
        }
    };
    let read = converted.memories.len();
    let report = if args.dry_run || converted.memories.is_empty() {
        BatchReport::default()
    } else {
        let subject = format!("import {:?}", args.format).to_lowercase();
        lore.write_batch(&converted.memories, &subject, args.replace, ctx)?
    };
    let out = ImportOutput {
        read,
        report,
        warnings: converted.warnings,
        dry_run: args.dry_run,
    };
    for (id, secrets) in &out.report.secrets {
        if !ui.json() {
            ui.warn(&format!(
                "memory {id}: secret scanner: {}",
                secrets.describe()
            ));
        }
    }
    for w in &out.warnings {
        if !ui.json() {
            ui.warn(w);
        }
    }
    ui.emit(&out, |s| {
        let r = &out.report;
        if out.dry_run {
            s.push_str(&format!(
                "Read {} memories (dry run: nothing written)\n",
                out.read
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
