//! `lore ctx metadata get|set|unset`: reads or changes a branch's metadata segments.

use clap::{Args, Subcommand};
use lore::ops::ctx as ops;

use super::{BranchOpt, committed};
use crate::commands::common::{Session, read_text};
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct MetadataArgs {
    #[command(subcommand)]
    pub command: MetadataCommand,
}

#[derive(Subcommand, Debug)]
pub enum MetadataCommand {
    /// Print one segment (a.b reaches into nested mappings), or all.
    Get {
        /// The segment.
        segment: Option<String>,
        #[command(flatten)]
        branch: BranchOpt,
    },
    /// Set a segment to a YAML value (or plain text with --text).
    Set {
        /// The segment (letters, digits, '_' or '-').
        segment: String,
        /// The value (YAML), or - for stdin.
        value: String,
        /// Store the value as text, not YAML.
        #[arg(long)]
        text: bool,
        #[command(flatten)]
        branch: BranchOpt,
    },
    /// Remove a segment.
    Unset {
        /// The segment.
        segment: String,
        #[command(flatten)]
        branch: BranchOpt,
    },
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &MetadataArgs) -> CmdResult {
    match &args.command {
        MetadataCommand::Get { segment, branch } => get(ui, session, segment, branch),
        MetadataCommand::Set {
            segment,
            value,
            text,
            branch,
        } => {
            let value = if value == "-" {
                read_text("-")?
            } else {
                value.clone()
            };
            write_segment(ui, session, segment, Some(value), *text, branch)
        }
        MetadataCommand::Unset { segment, branch } => {
            write_segment(ui, session, segment, None, false, branch)
        }
    }
}

fn get(
    ui: &mut Ui,
    session: &mut Session,
    segment: &Option<String>,
    branch: &BranchOpt,
) -> CmdResult {
    let view = session.run(
        ui,
        ops::CtxMetadataGet {
            segment: segment.clone(),
            branch: branch.branch.clone(),
        },
    )?;
    ui.emit(&view, |s| s.push_str(&view.yaml));
    Ok(())
}

/// Sets a segment to `value` (as text or YAML), or removes it when `value` is `None`.
fn write_segment(
    ui: &mut Ui,
    session: &mut Session,
    segment: &str,
    value: Option<String>,
    as_text: bool,
    branch: &BranchOpt,
) -> CmdResult {
    let removing = value.is_none();
    let out = session.run(
        ui,
        ops::CtxMetadataSet {
            segment: segment.to_string(),
            value,
            text: as_text,
            branch: branch.branch.clone(),
        },
    )?;
    let said = if removing {
        format!("removed metadata segment {segment} from {}", out.branch)
    } else {
        format!("set metadata segment {segment} on {}", out.branch)
    };
    committed(ui, &out, &said);
    Ok(())
}
