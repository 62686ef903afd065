//! `lore update`: change a memory in place (a new version at the same path).

use clap::Args;
use lore::{Lore, Patch, Status, WriteContext};

use super::common;
use crate::error::CmdResult;
use crate::ui::Ui;

/// Update a memory: summary, body, tags, status, confidence, citations, relations.
#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// Id, id prefix, `namespace/key` or key.
    pub memory: String,
    /// New summary.
    #[arg(long, short = 's')]
    pub summary: Option<String>,
    /// New body.
    #[arg(long, short = 'b')]
    pub body: Option<String>,
    /// Read the new body from a file (`-` for standard input).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<String>,
    /// Add tags (repeat, or separate with commas).
    #[arg(long = "tag", short = 't', value_name = "TAG")]
    pub add_tags: Vec<String>,
    /// Remove tags.
    #[arg(long = "untag", value_name = "TAG")]
    pub remove_tags: Vec<String>,
    /// New status: active, resolved, superseded, archived.
    #[arg(long)]
    pub status: Option<String>,
    /// New confidence, between 0 and 1.
    #[arg(long)]
    pub confidence: Option<f64>,
    /// Add a citation: `src/a.rs:10-20`.
    #[arg(long = "cite", value_name = "PATH[:LINES]")]
    pub cites: Vec<String>,
    /// Add a related memory id.
    #[arg(long = "relates-to", value_name = "ID")]
    pub relates_to: Vec<String>,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, ctx: &WriteContext, args: &UpdateArgs) -> CmdResult {
    let patch = Patch {
        summary: args.summary.clone(),
        body: common::body_from(&args.body, &args.body_file)?,
        add_tags: common::split_tags(&args.add_tags),
        remove_tags: common::split_tags(&args.remove_tags),
        status: args
            .status
            .as_deref()
            .map(str::parse::<Status>)
            .transpose()?,
        confidence: args.confidence,
        add_citations: common::parse_citations(lore, &args.cites)?,
        add_relates_to: args.relates_to.clone(),
    };
    let written = lore.update(&args.memory, &patch, ctx)?;
    common::report_secrets(ui, written.secrets.as_ref());
    ui.emit(&written, |s| {
        s.push_str(&format!(
            "Updated {} ({}) at {}\n",
            written.memory.id,
            written.path,
            &written.commit[..written.commit.len().min(12)]
        ));
    });
    Ok(())
}
