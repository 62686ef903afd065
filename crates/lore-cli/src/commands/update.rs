//! `lore update`: change a memory in place (a new version at the same path).

use clap::Args;
use lore::ops::memory as ops;

use super::common::{self, Session};
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

pub fn run(ui: &mut Ui, session: &mut Session, args: &UpdateArgs) -> CmdResult {
    let request = ops::Update {
        memory: args.memory.clone(),
        summary: args.summary.clone(),
        body: common::body_from(&args.body, &args.body_file)?,
        add_tags: args.add_tags.clone(),
        remove_tags: args.remove_tags.clone(),
        status: args.status.clone(),
        confidence: args.confidence,
        add_cites: common::cite_specs(&session.lore, &args.cites)?,
        add_relates_to: args.relates_to.clone(),
    };
    let written = session.run(ui, request)?;
    common::report_secrets(ui, written.secrets.as_ref());
    ui.emit(&written, |s| {
        s.push_str(&format!(
            "Updated {} ({}) at {}\n",
            written.memory.id,
            written.path,
            common::short(&written.commit)
        ));
    });
    Ok(())
}
